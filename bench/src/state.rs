//! Part 3: Lossless state: an ECM to `gz.msgs.SerializedStateMap` bytes and back, full and
//! changed-only, against prost doing the same protobuf work on data it is handed directly.
//!
//! The world is a "shapes" world of N models, each with one link holding a box collision
//! and a box visual with a material, loaded from SDF by the real parser and factory (so the
//! components are those a loaded world has). Changed-only means: every link's pose written
//! and flagged periodic, as physics does each step.
//!
//! | line | Troupe | baseline |
//! |---|---|---|
//! | serialize full | `state::full_state` + `encode_to_vec` | a `SerializedStateMap` built from `Vec`s of (entity, [(type, bytes)]) the bench holds, + `encode_to_vec` |
//! | deserialize full | `state::decode_state` + `state::apply_state` onto an empty ECM | `SerializedStateMap::decode` + moving every component's bytes into `Vec`s |
//! | serialize changed | `state::changed_state` + `encode_to_vec` | the same map built from the link poses' bytes, + `encode_to_vec` |
//! | deserialize changed | `decode_state` + `apply_state` onto the loaded world (sets every link pose) | `decode` + moving the bytes out |
//!
//! The baselines do no ECM work at all, so the ratio is the price of reading and writing the
//! ECM around the protobuf encoding.

use plugin_api::components::Link;
use plugin_api::math::Pose;
use plugin_api::msgs::{SerializedComponent, SerializedEntityMap, SerializedStateMap};
use plugin_api::prost::Message;
use plugin_api::{Change, Component, EntityId, Which};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};
use troupe::ecm::Ecm;
use troupe::state::{self, Stamp};

/// Component bytes per entity, as the baseline holds them.
type Plain = Vec<(u64, Vec<(u64, Vec<u8>)>)>;

fn shapes_world(models: usize) -> String {
    let mut sdf = String::from(r#"<sdf version="1.9"><world name="shapes">"#);
    for i in 0..models {
        let (x, y) = ((i % 60) as f64 * 2.0, (i / 60) as f64 * 2.0);
        sdf.push_str(&format!(
            r#"<model name="box_{i}"><pose>{x} {y} 0.5 0 0 0</pose><link name="link">
            <inertial><mass>1</mass><inertia><ixx>0.16</ixx><iyy>0.16</iyy><izz>0.16</izz></inertia></inertial>
            <collision name="collision"><geometry><box><size>1 1 1</size></box></geometry></collision>
            <visual name="visual"><geometry><box><size>1 1 1</size></box></geometry>
            <material><ambient>1 0 0 1</ambient><diffuse>1 0 0 1</diffuse><specular>1 0 0 1</specular></material></visual>
            </link></model>"#
        ));
    }
    sdf.push_str("</world></sdf>");
    sdf
}

fn load(models: usize) -> Result<Ecm, String> {
    let doc = troupe::sdf::parse_str(&shapes_world(models), "<bench shapes world>").map_err(|e| e.to_string())?;
    let world = doc.worlds.first().ok_or("the shapes world has no <world>")?;
    let mut ecm = Ecm::new();
    troupe::factory::create_world(&mut ecm, world, doc.entity_count, troupe::factory::Levels::Off)
        .map_err(|e| e.message.to_string())?;
    ecm.end_step();
    Ok(ecm)
}

fn plain_of(map: &SerializedStateMap) -> Plain {
    map.entities
        .iter()
        .map(|(id, e)| (*id, e.components.iter().map(|(ty, c)| (*ty, c.component.clone())).collect()))
        .collect()
}

fn map_of(plain: &Plain) -> SerializedStateMap {
    let entities = plain
        .iter()
        .map(|(id, comps)| {
            let components = comps
                .iter()
                .map(|(ty, bytes)| (*ty, SerializedComponent { r#type: *ty, component: bytes.clone(), remove: false }))
                .collect();
            (*id, SerializedEntityMap { id: *id, components, remove: false })
        })
        .collect::<BTreeMap<_, _>>();
    SerializedStateMap { header: None, entities, has_one_time_component_changes: true }
}

fn decode_plain(bytes: &[u8]) -> Result<Plain, String> {
    let map = SerializedStateMap::decode(bytes).map_err(|e| e.to_string())?;
    Ok(map
        .entities
        .into_iter()
        .map(|(id, e)| (id, e.components.into_iter().map(|(ty, c)| (ty, c.component)).collect()))
        .collect())
}

/// Flags every link's pose periodic with a new value (what physics does each step).
fn move_links(ecm: &mut Ecm, links: &[EntityId], round: u64) -> Result<(), String> {
    let mut pose = Pose::IDENTITY;
    for &l in links {
        pose.position.z = round as f64 * 0.001;
        ecm.set(l, &pose, Change::Periodic).map_err(|e| e.message.to_string())?;
    }
    Ok(())
}

fn best<const K: usize>(
    reps: usize,
    mut runs: [&mut dyn FnMut() -> Result<Duration, String>; K],
) -> Result<[Duration; K], String> {
    let mut out = [Duration::MAX; K];
    for _ in 0..reps {
        for (b, run) in out.iter_mut().zip(runs.iter_mut()) {
            *b = (*b).min(run()?);
        }
    }
    Ok(out)
}

fn line(what: &str, bytes: usize, ours: Duration, base: Duration) {
    let mbps = |d: Duration| bytes as f64 / d.as_secs_f64() / 1e6;
    println!(
        "   {what:<22} troupe {:>8.2} ms ({:>6.0} MB/s)   prost alone {:>8.2} ms ({:>6.0} MB/s)   ratio {:>5.2}x",
        ours.as_secs_f64() * 1e3,
        mbps(ours),
        base.as_secs_f64() * 1e3,
        mbps(base),
        ours.as_secs_f64() / base.as_secs_f64()
    );
}

/// Runs part 3; `quick` uses a smaller world.
pub fn bench(quick: bool, reps: usize) -> Result<(), String> {
    let models = if quick { 500 } else { 3000 };
    println!(
        "3. Lossless state of a {models}-model shapes world (model, link, box collision, box visual with material):"
    );
    println!(
        "   troupe = ECM -> SerializedStateMap -> bytes and back; prost alone = the same protobuf work on plain Vecs."
    );
    let started = Instant::now();
    let mut ecm = load(models)?;
    let links = ecm.query(Which::ALL, &[Link::ID]);
    let stamp = Stamp { sim_time_ns: 1_000_000, iteration: 1 };

    // Full state.
    let full = state::full_state(&ecm, stamp);
    let full_bytes = full.encode_to_vec();
    let plain = plain_of(&full);
    let components: usize = plain.iter().map(|e| e.1.len()).sum();
    println!(
        "   full state: {} entities, {components} components, {} bytes (loaded in {:.0} ms)",
        plain.len(),
        full_bytes.len(),
        started.elapsed().as_secs_f64() * 1e3
    );
    let [ours, base] = best(
        reps,
        [
            &mut || {
                let t = Instant::now();
                let bytes = state::full_state(black_box(&ecm), stamp).encode_to_vec();
                let d = t.elapsed();
                if bytes != full_bytes {
                    return Err("full state bytes changed between runs".into());
                }
                Ok(d)
            },
            &mut || {
                let t = Instant::now();
                black_box(map_of(black_box(&plain)).encode_to_vec());
                Ok(t.elapsed())
            },
        ],
    )?;
    line("serialize full", full_bytes.len(), ours, base);
    let [ours, base] = best(
        reps,
        [
            &mut || {
                let mut fresh = Ecm::new();
                let t = Instant::now();
                let map = state::decode_state(black_box(&full_bytes)).map_err(|e| e.to_string())?;
                state::apply_state(&mut fresh, &map).map_err(|e| e.to_string())?;
                let d = t.elapsed();
                if fresh.entity_count() != plain.len() {
                    return Err(format!("{} entities applied, {} expected", fresh.entity_count(), plain.len()));
                }
                Ok(d)
            },
            &mut || {
                let t = Instant::now();
                black_box(decode_plain(black_box(&full_bytes))?);
                Ok(t.elapsed())
            },
        ],
    )?;
    line("deserialize full", full_bytes.len(), ours, base);

    // Changed-only: every link pose, periodic.
    move_links(&mut ecm, &links, 1)?;
    let changed = state::changed_state(&ecm, stamp);
    let changed_bytes = changed.encode_to_vec();
    let changed_plain = plain_of(&changed);
    if changed_plain.len() != links.len() || changed_plain.iter().any(|e| e.1.len() != 1 || e.1[0].0 != Pose::ID.0) {
        return Err(format!("the changed state should hold exactly the {} link poses", links.len()));
    }
    println!("   changed state: {} link poses flagged periodic, {} bytes", links.len(), changed_bytes.len());
    let [ours, base] = best(
        reps,
        [
            &mut || {
                let t = Instant::now();
                let bytes = state::changed_state(black_box(&ecm), stamp).encode_to_vec();
                let d = t.elapsed();
                if bytes != changed_bytes {
                    return Err("changed state bytes changed between runs".into());
                }
                Ok(d)
            },
            &mut || {
                let t = Instant::now();
                black_box(map_of(black_box(&changed_plain)).encode_to_vec());
                Ok(t.elapsed())
            },
        ],
    )?;
    line("serialize changed", changed_bytes.len(), ours, base);
    let mut target = load(models)?;
    let [ours, base] = best(
        reps,
        [
            &mut || {
                target.end_step();
                let t = Instant::now();
                let map = state::decode_state(black_box(&changed_bytes)).map_err(|e| e.to_string())?;
                let done = state::apply_state(&mut target, &map).map_err(|e| e.to_string())?;
                let d = t.elapsed();
                if done.set != links.len() {
                    return Err(format!("{} poses applied, {} expected", done.set, links.len()));
                }
                Ok(d)
            },
            &mut || {
                let t = Instant::now();
                black_box(decode_plain(black_box(&changed_bytes))?);
                Ok(t.elapsed())
            },
        ],
    )?;
    line("deserialize changed", changed_bytes.len(), ours, base);
    Ok(())
}
