//! Part 7, levels and performers: the server's step (`Server::step_once`) with the level
//! manager loaded as a plugin, on square grids of 10 m levels each holding one static model.
//!
//! * A world with many levels and performers, the performers walking across the grid so
//!   levels load and unload.
//! * Everything loaded: levels on (one performer whose volume covers the grid) against
//!   levels off (bookkeeping only), and against the same world without levels at all.
//! * The level update's cost as the number of levels grows (performers still).

use super::{best_of_interleaved, ns_per};
use plugin_api::components::{LevelLoaded, Model, Name};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{Change, Component, EntityId, Which};
use std::time::{Duration, Instant};
use troupe::server::{Server, ServerOptions};

/// Edge of a level, m.
const CELL: f64 = 10.0;

/// A `side` x `side` grid of levels (buffer 1 m), one static box model in each, and
/// `performers` robots (1 m boxes) on the grid's diagonal. `big` adds a performer whose
/// volume covers the whole grid; `plugin` false leaves out the levels element.
fn world_sdf(side: usize, performers: usize, big: bool, plugin: bool) -> String {
    let mut s = String::from(
        r#"<sdf version="1.9"><world name="levels">
<physics><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
"#,
    );
    let body =
        "<link name=\"l\"><collision name=\"c\"><geometry><box><size>1 1 1</size></box></geometry></collision></link>";
    for i in 0..side * side {
        let (x, y) = ((i % side) as f64 * CELL, (i / side) as f64 * CELL);
        s += &format!("<model name=\"m{i}\"><static>true</static><pose>{x} {y} 0 0 0 0</pose>{body}</model>\n");
    }
    for p in 0..performers {
        let at = (p % side) as f64 * CELL;
        s += &format!("<model name=\"r{p}\"><pose>{at} {at} 0 0 0 0</pose>{body}</model>\n");
    }
    if big {
        s += &format!(
            "<model name=\"giant\"><pose>{0} {0} 0 0 0 0</pose>{body}</model>\n",
            (side as f64 - 1.0) * CELL / 2.0
        );
    }
    if !plugin {
        return s + "</world></sdf>";
    }
    s += "<plugin name=\"gz::sim\" filename=\"dummy\">\n";
    for p in 0..performers {
        s += &format!("<performer name=\"p{p}\"><ref>r{p}</ref></performer>\n");
    }
    if big {
        let span = side as f64 * CELL;
        s += &format!("<performer name=\"pg\"><ref>giant</ref><geometry><box><size>{span} {span} 10</size></box></geometry></performer>\n");
    }
    for i in 0..side * side {
        let (x, y) = ((i % side) as f64 * CELL, (i / side) as f64 * CELL);
        s += &format!(
            "<level name=\"L{i}\"><pose>{x} {y} 0 0 0 0</pose><geometry><box><size>{CELL} {CELL} 10</size></box></geometry>\
             <buffer>1</buffer><ref>m{i}</ref></level>\n"
        );
    }
    s + "</plugin></world></sdf>"
}

fn load(text: String, levels: bool) -> Result<Server, String> {
    let opts =
        ServerOptions { world_text: Some((text, "<bench levels>".into())), run: true, levels, ..Default::default() };
    let mut server = Server::load(&opts).map_err(|e| format!("loading the levels world: {e}"))?;
    server.step_once(Duration::ZERO).map_err(|e| e.to_string())?;
    Ok(server)
}

fn loaded_levels(server: &Server) -> usize {
    let ecm = &server.runners()[0].ecm;
    ecm.query(Which::ALL, &[LevelLoaded::ID])
        .into_iter()
        .filter(|l| ecm.get::<LevelLoaded>(*l).is_some_and(|v| v.0))
        .count()
}

fn robots(server: &Server) -> Vec<EntityId> {
    let ecm = &server.runners()[0].ecm;
    ecm.query(Which::ALL, &[Model::ID])
        .into_iter()
        .filter(|m| ecm.get::<Name>(*m).is_some_and(|n| n.0.starts_with('r')))
        .collect()
}

/// Steps `steps` times; answers the time per step.
fn time_steps(server: &mut Server, steps: u64) -> Result<Duration, String> {
    let start = Instant::now();
    for _ in 0..steps {
        server.step_once(Duration::ZERO).map_err(|e| e.to_string())?;
    }
    Ok(start.elapsed() / steps as u32)
}

/// Runs part 8.
pub fn bench(quick: bool, reps: usize) -> Result<(), String> {
    // Only the level manager: no physics, no broadcaster.
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
    println!("7. Levels and performers (the level manager plugin; Server::step_once, no other system).");

    // (a) Many levels and performers, walking.
    let (side, performers, steps) = if quick { (10, 10, 200u64) } else { (30, 50, 1000u64) };
    let mut server = load(world_sdf(side, performers, false, true), true)?;
    let walkers = robots(&server);
    let (mut loads, mut before) = (0usize, loaded_levels(&server));
    let start = Instant::now();
    for k in 0..steps {
        // Every robot advances 5 cm a step along x, wrapping around the grid.
        let ecm = &mut server.runners_mut()[0].ecm;
        for (i, &r) in walkers.iter().enumerate() {
            let x = ((k as f64 * 0.05) + i as f64 * CELL) % (side as f64 * CELL);
            let y = (i % side) as f64 * CELL;
            ecm.set(r, &Pose { position: Vec3::new(x, y, 0.0), ..Pose::IDENTITY }, Change::OneTime)
                .map_err(|e| e.to_string())?;
        }
        server.step_once(Duration::ZERO).map_err(|e| e.to_string())?;
        let now = loaded_levels(&server);
        loads += now.abs_diff(before);
        before = now;
    }
    let walking = start.elapsed();
    println!(
        "   {} levels, {performers} walking performers: {:.1} us/step over {steps} steps ({loads} level loads + unloads; \
         the loop's own pose writes and level counting included)",
        side * side,
        ns_per(walking, steps) / 1000.0
    );

    // (b) Everything loaded: levels on vs off vs no levels element.
    let side_b = if quick { 10 } else { 30 };
    let steps_b = if quick { 200 } else { 2000 };
    let mut on = load(world_sdf(side_b, 10, true, true), true)?;
    let mut off = load(world_sdf(side_b, 10, true, true), false)?;
    let mut none = load(world_sdf(side_b, 10, true, false), false)?;
    let n_levels = side_b * side_b;
    // The default level counts too.
    if loaded_levels(&on) != n_levels + 1 || loaded_levels(&off) != n_levels + 1 {
        return Err(format!(
            "expected all {n_levels} levels and the default loaded: on {}, off {}",
            loaded_levels(&on),
            loaded_levels(&off)
        ));
    }
    let mut m_on = || time_steps(&mut on, steps_b);
    let mut m_off = || time_steps(&mut off, steps_b);
    let mut m_none = || time_steps(&mut none, steps_b);
    let [t_on, t_off, t_none] = best_of_interleaved(reps, [&mut m_on, &mut m_off, &mut m_none])?;
    println!(
        "   everything loaded ({n_levels} levels, 11 performers): levels on {:.2} us/step, off {:.2} us/step: \
         on/off = {:.3}x (goal <= 1.05x); without a levels element {:.2} us/step",
        t_on.as_nanos() as f64 / 1000.0,
        t_off.as_nanos() as f64 / 1000.0,
        t_on.as_secs_f64() / t_off.as_secs_f64(),
        t_none.as_nanos() as f64 / 1000.0
    );

    // (c) Level update cost as the number of levels grows: still performers, so each step
    // is the rule alone (performers x levels box tests). Net of the step without levels.
    let sides: &[usize] = if quick { &[4, 8, 16] } else { &[8, 16, 32, 64] };
    let steps_c = if quick { 200 } else { 1000 };
    let mut first: Option<f64> = None;
    for &s in sides {
        let mut with = load(world_sdf(s, 10, false, true), true)?;
        let mut without = load(world_sdf(s, 10, false, false), false)?;
        let mut m_with = || time_steps(&mut with, steps_c);
        let mut m_without = || time_steps(&mut without, steps_c);
        let [t_with, t_without] = best_of_interleaved(reps, [&mut m_with, &mut m_without])?;
        let update = (t_with.as_secs_f64() - t_without.as_secs_f64()).max(0.0) * 1e9;
        let levels = (s * s) as f64;
        let per_level = update / levels;
        let base = *first.get_or_insert(per_level);
        println!(
            "   {:>5} levels, 10 performers: level update {:.2} us/step, {:.1} ns per level ({:.2}x the smallest grid's per-level cost)",
            s * s,
            update / 1000.0,
            per_level,
            per_level / base
        );
    }
    Ok(())
}
