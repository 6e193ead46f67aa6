//! Shared helpers: the test world, service calls while the world steps, topic messages,
//! captured log lines.

use plugin_api::prost::Message;
use std::time::{Duration, Instant};
use troupe::fixture::TestFixture;
use troupe::server::ServerOptions;
use troupe::transport::{Answer, Received, Subscription};

/// A world with scene properties, a directional light, a static ground, and a cart with two
/// links (one carrying a lamp) and a nested model. `params` goes inside the broadcaster's
/// `<plugin>`.
pub fn world(params: &str) -> String {
    format!(
        r#"<sdf version="1.9"><world name="w">
  <plugin filename="gz-sim-scene-broadcaster-system" name="gz::sim::systems::SceneBroadcaster">{params}</plugin>
  <scene><ambient>0.1 0.2 0.3 1</ambient><grid>false</grid></scene>
  <light type="directional" name="sun">
    <pose>0 0 10 0 0 0</pose>
    <cast_shadows>true</cast_shadows>
    <direction>0.5 0.1 -0.9</direction>
  </light>
  <model name="ground">
    <static>true</static>
    <link name="ground_link">
      <visual name="ground_visual"><geometry><box><size>10 10 0.1</size></box></geometry></visual>
    </link>
  </model>
  <model name="cart">
    <pose>1 2 0.5 0 0 0</pose>
    <link name="chassis">
      <pose>0 0 0.1 0 0 0</pose>
      <light type="point" name="headlamp"><pose>0.5 0 0 0 0 0</pose></light>
    </link>
    <link name="wheel"><pose>0.3 0 0 0 0 0</pose></link>
    <model name="mast"><pose>0 0 1 0 0 0</pose><link name="mast_link"/></model>
  </model>
</world></sdf>"#
    )
}

/// A model to spawn while running.
pub const SPAWNED: &str = r#"<model name="spawned"><pose>4 5 6 0 0 0</pose><link name="body"/></model>"#;

/// The test world loaded and running, with plugin logs from warnings up.
pub fn fixture(params: &str) -> TestFixture {
    troupe::fixture::capture_log();
    // Without the default config's systems: its physics would move the models these tests
    // read poses of. (nextest runs each test in a process of its own.)
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
    TestFixture::with_options(ServerOptions {
        world_text: Some((world(params), "<scene test world>".into())),
        run: true,
        log_level: 3,
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("the scene test world does not load: {e}"))
}

/// Calls `service` with an empty request from another thread while the world steps (systems
/// answer in post_update), and decodes the answer as `M`.
pub fn call<M: Message + Default>(f: &mut TestFixture, service: &str) -> M {
    let node = f.server().node().clone();
    let name = service.to_string();
    let caller = std::thread::spawn(move || node.call(&name, &[], Duration::from_secs(20)));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !caller.is_finished() {
        assert!(Instant::now() < deadline, "{service} never answered");
        f.run(1).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    match caller.join().unwrap() {
        Ok(Answer::Ok(bytes)) => {
            M::decode(bytes.as_slice()).unwrap_or_else(|e| panic!("{service}: the answer does not decode: {e}"))
        }
        other => panic!("{service} answered {other:?}"),
    }
}

/// Subscribes to a topic of the fixture's node.
pub fn subscribe(f: &mut TestFixture, topic: &str, msg_type: &str) -> Subscription {
    f.server().node().subscribe(topic, msg_type).unwrap_or_else(|e| panic!("{topic}: {e}"))
}

/// Decodes received messages as `M`.
pub fn decode<M: Message + Default>(received: &[Received]) -> Vec<M> {
    received.iter().map(|r| M::decode(r.payload.as_slice()).unwrap_or_else(|e| panic!("{}: {e}", r.topic))).collect()
}

/// Runs steps with a short pause between them until `done` holds for the messages taken so
/// far (which are returned), failing after 20 s of wall time.
pub fn run_until(f: &mut TestFixture, sub: &Subscription, mut done: impl FnMut(&[Received]) -> bool) -> Vec<Received> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        got.extend(sub.take());
        if done(&got) {
            return got;
        }
        assert!(Instant::now() < deadline, "waited 20 s; got {} messages", got.len());
        f.run(1).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The log lines captured so far (see [`troupe::fixture::captured_log`]).
pub fn log_lines() -> Vec<String> {
    troupe::fixture::captured_log()
}
