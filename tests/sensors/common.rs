//! World builders, message capture and log capture shared by the sensor tests.

use plugin_api::prost::Message;
use troupe::fixture::TestFixture;
use troupe::server::ServerOptions;
use troupe::transport::Subscription;

/// Standard gravity as SDFormat's default world has it.
pub const G: f64 = 9.8;

/// Every gz-sim sensor system name, each loading the one `troupe_sensors` instance.
pub const ALL_SENSOR_SYSTEMS: &str = r#"
  <plugin filename="gz-sim-imu-system" name="gz::sim::systems::Imu"/>
  <plugin filename="gz-sim-altimeter-system" name="gz::sim::systems::Altimeter"/>
  <plugin filename="gz-sim-air-pressure-system" name="gz::sim::systems::AirPressure"/>
  <plugin filename="gz-sim-magnetometer-system" name="gz::sim::systems::Magnetometer"/>
  <plugin filename="gz-sim-navsat-system" name="gz::sim::systems::NavSat"/>
  <plugin filename="gz-sim-contact-system" name="gz::sim::systems::Contact"/>
  <plugin filename="gz-sim-forcetorque-system" name="gz::sim::systems::ForceTorque"/>
  <plugin filename="gz-sim-logical-camera-system" name="gz::sim::systems::LogicalCamera"/>
  <plugin filename="gz-sim-sensors-system" name="gz::sim::systems::Sensors"/>"#;

/// A world `w` with a 1 ms step, rapier physics, every sensor system, `extra` world
/// elements (gravity, magnetic field...) and `body`.
pub fn world(extra: &str, body: &str) -> String {
    world_on("gz-sim-physics-system", "", extra, body)
}

/// [`world`] with physics library `physics` and `sensors_xml` inside the sensors system's
/// `<plugin>` element.
pub fn world_on(physics: &str, sensors_xml: &str, extra: &str, body: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics name="p" type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
  <plugin filename="{physics}" name="gz::sim::systems::Physics"/>{ALL_SENSOR_SYSTEMS}
  <plugin filename="gz-sim-sensors-system" name="gz::sim::systems::Sensors">{sensors_xml}</plugin>
  {extra}
  {body}
</world></sdf>"#
    )
}

/// The `<inertial>` of a solid of `mass` with equal principal moments `i`.
pub fn inertial(mass: f64, i: f64) -> String {
    format!("<inertial><mass>{mass}</mass><inertia><ixx>{i}</ixx><iyy>{i}</iyy><izz>{i}</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>")
}

/// A model `name` at `pose` with one link `link` holding a sphere collision `col` of
/// radius `r` (mass 1) and `sensors` (static when `fixed`).
pub fn ball(name: &str, pose: &str, r: f64, fixed: bool, sensors: &str) -> String {
    format!(
        r#"<model name="{name}"><pose>{pose}</pose><static>{fixed}</static><link name="link">{}
  <collision name="col"><geometry><sphere><radius>{r}</radius></sphere></geometry></collision>{sensors}</link></model>"#,
        inertial(1.0, 0.4 * r * r)
    )
}

/// A static box model `name` (link `link`, collision `col`) of full `size` at `pose`.
pub fn block(name: &str, pose: &str, size: &str) -> String {
    format!(
        r#"<model name="{name}"><static>true</static><pose>{pose}</pose><link name="link">
  <collision name="col"><geometry><box><size>{size}</size></box></geometry></collision></link></model>"#
    )
}

/// A `<sensor>` of `kind` named `name` at `rate` Hz with `inner` XML.
pub fn sensor(name: &str, kind: &str, rate: f64, inner: &str) -> String {
    format!(r#"<sensor name="{name}" type="{kind}"><update_rate>{rate}</update_rate>{inner}</sensor>"#)
}

/// Loads a world with the default server config's systems off.
pub fn load(sdf: &str) -> TestFixture {
    troupe::fixture::capture_log();
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
    TestFixture::with_options(ServerOptions {
        world_text: Some((sdf.to_string(), "<sensors test world>".into())),
        run: true,
        log_level: 3,
        seed: 7,
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("the test world does not load: {e}"))
    .finalize()
    .expect("finalize")
}

/// Subscribes to a topic of the fixture's node.
pub fn subscribe(f: &mut TestFixture, topic: &str, msg_type: &str) -> Subscription {
    f.server().node().subscribe(topic, msg_type).unwrap_or_else(|e| panic!("{topic}: {e}"))
}

/// The messages received so far, decoded.
pub fn take<M: Message + Default>(sub: &Subscription) -> Vec<M> {
    sub.take().iter().map(|r| M::decode(r.payload.as_slice()).unwrap_or_else(|e| panic!("{}: {e}", r.topic))).collect()
}

/// Runs `steps` and answers the messages received on the way.
pub fn run_and_take<M: Message + Default>(f: &mut TestFixture, sub: &Subscription, steps: u64) -> Vec<M> {
    f.run(steps).unwrap();
    take(sub)
}

/// The default topic of sensor `sensor` on `model::link`.
pub fn topic(model: &str, link: &str, sensor: &str, suffix: &str) -> String {
    format!("/world/w/model/{model}/link/{link}/sensor/{sensor}/{suffix}")
}

/// The log lines captured so far (see [`troupe::fixture::captured_log`]).
pub fn log_lines() -> Vec<String> {
    troupe::fixture::captured_log()
}
