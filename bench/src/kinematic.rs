//! Part 4, the kinematic physics backend on a many-robot world: the server's step
//! (`Server::step_once` with `troupe_physics_kinematic` loaded as a plugin) against the bare
//! engine (`troupe_kinematic_engine::World`, linked in) stepping the identical scene with
//! no ECM.

use super::{best_of_interleaved, ns_per};
use plugin_api::components::{AngularVelocityCmd, Geometry, LinearVelocityCmd, Model, Name, WatchContacts};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{Change, Component, EntityId, Which};
use std::hint::black_box;
use std::time::{Duration, Instant};
use troupe::server::{Server, ServerOptions};
use troupe_kinematic_engine::{shapes, to_iso, to_vector, Kind, NewBody, Twist, World};

/// Grid spacing of the robots, m.
const SPACING: f64 = 2.0;
/// Every robot drives forward at this speed (m/s) and turns at this rate (rad/s): circles of
/// radius 2.5 m, so neighbours cross each other's paths and touch.
const FORWARD: f64 = 0.5;
const TURN: f64 = 0.2;

const CHASSIS: Geometry = Geometry::Box { size: Vec3::new(0.4, 0.3, 0.1) };
const WHEEL: Geometry = Geometry::Cylinder { radius: 0.05, length: 0.04 };
/// Link poses in the robot: the chassis, then two wheels turned so their axis is y.
fn link_poses() -> [Pose; 3] {
    let quarter = std::f64::consts::FRAC_PI_2;
    [
        Pose::from_xyz_rpy(0.0, 0.0, 0.1, 0.0, 0.0, 0.0),
        Pose::from_xyz_rpy(0.0, 0.17, 0.05, quarter, 0.0, 0.0),
        Pose::from_xyz_rpy(0.0, -0.17, 0.05, quarter, 0.0, 0.0),
    ]
}

fn robot_pose(i: usize, n: usize) -> Pose {
    let side = (n as f64).sqrt().ceil() as usize;
    Pose::from_xyz_rpy((i % side) as f64 * SPACING, (i / side) as f64 * SPACING, 0.0, 0.0, 0.0, 0.0)
}

fn geometry_sdf(g: &Geometry) -> String {
    match g {
        Geometry::Box { size } => format!("<box><size>{} {} {}</size></box>", size.x, size.y, size.z),
        Geometry::Cylinder { radius, length } => {
            format!("<cylinder><radius>{radius}</radius><length>{length}</length></cylinder>")
        }
        _ => unreachable!("the bench uses boxes and cylinders"),
    }
}

fn pose_sdf(p: Pose) -> String {
    let [r, pi, y] = p.rotation.to_rpy();
    format!("<pose>{} {} {} {r} {pi} {y}</pose>", p.position.x, p.position.y, p.position.z)
}

/// `n` robots of three links (chassis box, two wheel cylinders) on a static ground plane.
fn world_sdf(n: usize) -> String {
    let mut s = String::from(
        r#"<sdf version="1.9"><world name="robots">
<gz:policies><include_server_config_plugins>false</include_server_config_plugins></gz:policies>
<physics><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
<plugin filename="troupe_physics_kinematic" name="gz::sim::systems::Physics"/>
<model name="ground"><static>true</static><link name="link"><collision name="plane">
<geometry><plane><normal>0 0 1</normal><size>1000 1000</size></plane></geometry></collision></link></model>
"#,
    );
    let names = ["chassis", "wheel_left", "wheel_right"];
    for i in 0..n {
        s += &format!("<model name=\"robot_{i}\">{}", pose_sdf(robot_pose(i, n)));
        for ((name, pose), g) in names.iter().zip(link_poses()).zip([&CHASSIS, &WHEEL, &WHEEL]) {
            s += &format!(
                "<link name=\"{name}\">{}<collision name=\"c\"><geometry>{}</geometry></collision></link>",
                pose_sdf(pose),
                geometry_sdf(g)
            );
        }
        s += "</model>\n";
    }
    s + "</world></sdf>"
}

/// The server with the robots commanded (and their chassis watched if `watch`).
fn load_server(n: usize, watch: bool) -> Result<Server, String> {
    let opts =
        ServerOptions { world_text: Some((world_sdf(n), "<bench robots>".into())), run: true, ..Default::default() };
    let mut server = Server::load(&opts).map_err(|e| format!("loading the robots world: {e}"))?;
    let labels = server.runners()[0].system_labels();
    if labels.len() != 1 || !labels[0].contains("troupe_physics_kinematic") {
        return Err(format!("expected troupe_physics_kinematic alone, got {labels:?}"));
    }
    let ecm = &mut server.runners_mut()[0].ecm;
    let robots: Vec<EntityId> = ecm
        .query(Which::ALL, &[Model::ID])
        .into_iter()
        .filter(|m| ecm.get::<Name>(*m).is_some_and(|n| n.0.starts_with("robot_")))
        .collect();
    if robots.len() != n {
        return Err(format!("{} robots loaded, expected {n}", robots.len()));
    }
    for &r in &robots {
        let set = |e| format!("commanding robot {r}: {e}");
        ecm.set(r, &LinearVelocityCmd(Vec3::new(FORWARD, 0.0, 0.0)), Change::OneTime).map_err(set)?;
        ecm.set(r, &AngularVelocityCmd(Vec3::new(0.0, 0.0, TURN)), Change::OneTime).map_err(set)?;
        if watch {
            let chassis = ecm.children(r).next().ok_or("a robot without links")?;
            let collision = ecm.children(chassis).next().ok_or("a chassis without a collision")?;
            ecm.set(collision, &WatchContacts, Change::OneTime).map_err(|e| e.to_string())?;
        }
    }
    Ok(server)
}

/// The identical scene in the bare engine, ids as the server numbers them.
fn load_bare(n: usize, watch: bool) -> Result<World, String> {
    let mut w = World::default();
    let shape = |g: &Geometry| match shapes::build(g) {
        Ok(shapes::Built::Shape(s)) => Ok(s),
        _ => Err(format!("{g:?} is not a shape")),
    };
    let mut id = 1000u64;
    let mut next = || {
        id += 1;
        EntityId(id)
    };
    let ground = next();
    let ground_link = next();
    w.add_body(NewBody { is_static: true, ..NewBody::new(ground, Kind::Model, None, to_iso(&Pose::IDENTITY)) });
    w.add_body(NewBody::new(ground_link, Kind::Link, Some(ground), to_iso(&Pose::IDENTITY)));
    let plane = Geometry::Plane { normal: Vec3::new(0.0, 0.0, 1.0), size: [1000.0, 1000.0] };
    w.add_collision(next(), ground_link, to_iso(&Pose::IDENTITY), shape(&plane)?, 0xffff);
    let twist =
        Twist { linear: to_vector(Vec3::new(FORWARD, 0.0, 0.0)), angular: to_vector(Vec3::new(0.0, 0.0, TURN)) };
    let mut watched = Vec::new();
    for i in 0..n {
        let model = next();
        w.add_body(NewBody { twist: Some(twist), ..NewBody::new(model, Kind::Model, None, to_iso(&robot_pose(i, n))) });
        for (k, (pose, g)) in link_poses().into_iter().zip([&CHASSIS, &WHEEL, &WHEEL]).enumerate() {
            let link = next();
            w.add_body(NewBody::new(link, Kind::Link, Some(model), to_iso(&pose)));
            let c = next();
            w.add_collision(c, link, to_iso(&Pose::IDENTITY), shape(g)?, 0xffff);
            if k == 0 {
                watched.push(c);
            }
        }
    }
    if watch {
        w.set_watched(&watched);
    }
    Ok(w)
}

/// Steps of the bare engine as the plugin takes them: clear the flags, step, contacts.
fn bare_steps(w: &mut World, steps: u64) -> Duration {
    let t = Instant::now();
    let mut touching = 0;
    for _ in 0..steps {
        let w = black_box(&mut *w);
        w.begin_step();
        w.step(0.001);
        touching += w.contacts().len();
    }
    let d = t.elapsed();
    black_box(touching);
    d
}

pub(crate) fn bench(quick: bool, reps: usize) -> Result<(), String> {
    let (n, steps) = if quick { (100, 100) } else { (1000, 200) };
    println!("4. Kinematic physics (troupe_physics_kinematic), {n} robots of 3 links (a box and two cylinders) on a ground plane,");
    println!(
        "   each driving a circle ({FORWARD} m/s, {TURN} rad/s); {steps} steps of 1 ms per repetition. Server::step_once with \
         the plugin loaded against the bare engine (troupe_kinematic_engine::World linked in, no ECM) on the identical scene."
    );
    for watch in [false, true] {
        let mut server = load_server(n, watch)?;
        let mut bare = load_bare(n, watch)?;
        let start = server.runners()[0].clock.iterations();
        let mut troupe = || {
            let t = Instant::now();
            for _ in 0..steps {
                server.step_once(black_box(Duration::ZERO)).map_err(|e| e.to_string())?;
            }
            Ok(t.elapsed())
        };
        let mut baseline = || Ok(bare_steps(&mut bare, steps));
        troupe()?;
        baseline()?;
        let [d_troupe, d_bare] = best_of_interleaved(reps, [&mut troupe, &mut baseline])?;
        let done = server.runners()[0].clock.iterations() - start;
        if done != steps * (reps as u64 + 1) {
            return Err(format!("the server simulated {done} iterations, expected {}", steps * (reps as u64 + 1)));
        }
        // The first robot has really driven: it is where the bare engine's is.
        let ecm = &server.runners()[0].ecm;
        let first = ecm
            .query(Which::ALL, &[Model::ID])
            .into_iter()
            .find(|m| ecm.get::<Name>(*m).is_some_and(|n| n.0 == "robot_0"))
            .and_then(|m| ecm.get::<Pose>(m))
            .ok_or("robot_0 has no pose")?;
        let bare_first =
            bare.bodies().iter().find(|b| b.kind == Kind::Model && b.twist.is_some()).map(|b| b.world.translation);
        let same =
            bare_first.is_some_and(|p| (p.x - first.position.x).abs() < 1e-9 && (p.y - first.position.y).abs() < 1e-9);
        if !same || first.position.length() == 0.0 {
            return Err(format!("robot_0 at {:?} on the server, {bare_first:?} in the bare engine", first.position));
        }
        let (t, b) = (ns_per(d_troupe, steps), ns_per(d_bare, steps));
        println!(
            "   {:<28} server {:>9.1} µs/step {:>7.0} steps/s   bare engine {:>9.1} µs/step   ratio {:>5.2}x (no goal stated)",
            if watch { "every chassis watched:" } else { "no contacts watched:" },
            t / 1e3,
            1e9 / t,
            b / 1e3,
            t / b
        );
    }
    Ok(())
}
