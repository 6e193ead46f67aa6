//! Loading worlds, talking to the systems' topics while the world steps, reading poses.

use plugin_api::components::World;
use plugin_api::math::Pose;
use plugin_api::prost::{Message, Name as MsgName};
use plugin_api::Component;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use troupe::fixture::TestFixture;
use troupe::transport::{Subscription, TopicOptions};

/// A file of the workspace's `worlds/` folder.
pub fn world_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../worlds").join(name)
}

/// Only the systems the world names (the default config would add its own physics to
/// worlds that name none). nextest runs each test in a process of its own.
pub fn no_default_config() {
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
}

/// A world `w` that rapier steps every `step` seconds, as fast as it can (real-time factor
/// 0), holding `body`: the frame every model-system test world shares.
pub fn physics_world(step: &str, body: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics name="p" type="ode"><max_step_size>{step}</max_step_size><real_time_factor>0</real_time_factor></physics>
  <plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>
{body}
</world></sdf>"#
    )
}

/// Publishes `msg` on `topic` from the fixture's own node.
pub fn publish<M: Message + MsgName>(f: &mut TestFixture, topic: &str, msg: &M) {
    let node = f.server().node().clone();
    let p = node.advertise(topic, &M::full_name(), TopicOptions::default()).unwrap();
    node.publish(p, &msg.encode_to_vec()).unwrap();
}

/// Subscribes to a topic of the fixture's node.
pub fn subscribe<M: MsgName>(f: &mut TestFixture, topic: &str) -> Subscription {
    f.server().node().subscribe(topic, &M::full_name()).unwrap_or_else(|e| panic!("{topic}: {e}"))
}

/// The messages received so far, decoded.
pub fn take<M: Message + Default>(sub: &Subscription) -> Vec<M> {
    sub.take().iter().map(|r| M::decode(r.payload.as_slice()).unwrap_or_else(|e| panic!("{}: {e}", r.topic))).collect()
}

/// Sim time (s) and a pose, recorded every step.
pub type Track = Arc<Mutex<Vec<(f64, Pose)>>>;

/// A fixture on `sdf` whose post-update records the pose of entity `path` each step.
pub fn tracking(fixture: TestFixture, path: &'static str) -> (TestFixture, Track) {
    let track: Track = Arc::default();
    let t = track.clone();
    let mut entity = None;
    let f = fixture
        .on_post_update(move |info, ecm| {
            use plugin_api::EcmRead;
            let e = *entity.get_or_insert_with(|| {
                let mut cur = ecm.entities_with(&[World::ID])[0];
                for part in path.split('/') {
                    cur = ecm.child_by_name(cur, part).expect("tracked entity exists");
                }
                cur
            });
            t.lock().unwrap().push((info.sim_time(), ecm.get::<Pose>(e).expect("tracked entity has a pose")));
            Ok(())
        })
        .finalize()
        .expect("finalize");
    (f, track)
}

/// The error a world fails to load with.
pub fn load_error(sdf: &str) -> String {
    match TestFixture::from_sdf(sdf) {
        Ok(_) => panic!("the world loaded; expected an error"),
        Err(e) => e.to_string(),
    }
}

/// Fails unless the error text `e` contains every one of `parts`.
pub fn assert_mentions(e: &str, parts: &[&str]) {
    for part in parts {
        assert!(e.contains(part), "the error lacks {part:?}:\n{e}");
    }
}
