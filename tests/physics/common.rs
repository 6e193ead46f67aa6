//! World text builders and readers shared by the physics tests.

use plugin_api::components::Name;
use plugin_api::math::Pose;
use plugin_api::{Component, EcmRead, EntityId, Which};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use troupe::fixture::TestFixture;

/// Standard gravity as SDFormat's default world has it.
pub const G: f64 = 9.8;

/// A world with a 1 ms step and the physics plugin named explicitly (with `plugin_xml`
/// inside it), holding `body`.
pub fn world_with(step: f64, plugin_xml: &str, body: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<sdf version="1.9"><world name="physics_test">
  <physics name="p" type="ode"><max_step_size>{step}</max_step_size><real_time_factor>0</real_time_factor></physics>
  <plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics">{plugin_xml}</plugin>
  {body}
</world></sdf>"#
    )
}

/// [`world_with`] with a 1 ms step and default physics parameters.
pub fn world(body: &str) -> String {
    world_with(0.001, "", body)
}

/// Loads a world, finalised without callbacks.
pub fn load(sdf: &str) -> TestFixture {
    TestFixture::from_sdf(sdf).expect("world loads").finalize().expect("finalize")
}

/// The `<inertial>` of a solid of `mass` with principal moments `i`.
pub fn inertial(mass: f64, i: [f64; 3]) -> String {
    format!(
        "<inertial><mass>{mass}</mass><inertia><ixx>{}</ixx><iyy>{}</iyy><izz>{}</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>",
        i[0], i[1], i[2]
    )
}

/// A `<surface>` with friction `mu` and restitution `e`.
pub fn surface(mu: f64, e: f64) -> String {
    format!(
        "<surface><friction><ode><mu>{mu}</mu><mu2>{mu}</mu2></ode></friction><bounce><restitution_coefficient>{e}</restitution_coefficient><threshold>0</threshold></bounce></surface>"
    )
}

/// A dynamic sphere model `name` (link `link`, collision `col`) of radius `r`, mass `m`.
pub fn sphere(name: &str, pose: &str, r: f64, m: f64, surf: &str) -> String {
    let i = 0.4 * m * r * r;
    format!(
        r#"<model name="{name}"><pose>{pose}</pose><link name="link">{}
  <collision name="col"><geometry><sphere><radius>{r}</radius></sphere></geometry>{surf}</collision></link></model>"#,
        inertial(m, [i, i, i])
    )
}

/// A dynamic box model of full size `s`, mass `m`.
pub fn cube(name: &str, pose: &str, s: [f64; 3], m: f64, surf: &str) -> String {
    let i = |a: f64, b: f64| m * (a * a + b * b) / 12.0;
    format!(
        r#"<model name="{name}"><pose>{pose}</pose><link name="link">{}
  <collision name="col"><geometry><box><size>{} {} {}</size></box></geometry>{surf}</collision></link></model>"#,
        inertial(m, [i(s[1], s[2]), i(s[0], s[2]), i(s[0], s[1])]),
        s[0],
        s[1],
        s[2]
    )
}

/// A static ground plane through the origin, normal +z.
pub fn ground(surf: &str) -> String {
    format!(
        r#"<model name="ground"><static>true</static><link name="link"><collision name="col">
  <geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>{surf}</collision></link></model>"#
    )
}

/// The entity named `name` (the first, lowest id).
pub fn id(f: &TestFixture, name: &str) -> EntityId {
    let ecm = f.ecm();
    ecm.query(Which::ALL, &[Name::ID])
        .into_iter()
        .find(|e| ecm.get::<Name>(*e).is_some_and(|n| n.0 == name))
        .unwrap_or_else(|| panic!("no entity named {name}"))
}

/// The `Pose` component of the entity named `name` (a top-level model's is its world pose).
pub fn pose(f: &TestFixture, name: &str) -> Pose {
    f.ecm().get::<Pose>(id(f, name)).expect("has a pose")
}

/// Records, after every step, `read(ecm)`; returns the fixture and the shared record.
pub fn traced<T: Send + 'static>(
    sdf: &str,
    mut read: impl FnMut(&plugin_api::EcmView<'_>) -> T + Send + 'static,
) -> (TestFixture, Arc<Mutex<Vec<T>>>) {
    let trace = Arc::new(Mutex::new(Vec::new()));
    let sink = trace.clone();
    let f = TestFixture::from_sdf(sdf)
        .expect("world loads")
        .on_post_update(move |info, ecm| {
            if !info.paused {
                sink.lock().unwrap().push(read(ecm));
            }
            Ok(())
        })
        .finalize()
        .expect("finalize");
    (f, trace)
}

/// The pose of the model named `name`, from inside a callback.
pub fn model_pose(ecm: &impl EcmRead, name: &str) -> Pose {
    let e = ecm.entity_by_name(name).unwrap_or_else(|| panic!("no entity named {name}"));
    ecm.get::<Pose>(e).expect("pose")
}

/// The project's test worlds and meshes.
pub fn test_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../worlds/test/physics")
}

/// A path under [`test_dir`] as a string for a `<uri>`.
pub fn asset(rel: &str) -> String {
    test_dir().join(rel).canonicalize().unwrap_or_else(|e| panic!("{rel}: {e}")).display().to_string()
}
