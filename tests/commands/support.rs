//! Calling the services while the fixture steps, and finding entities.

use plugin_api::components::{Name, World};
use plugin_api::msgs::Boolean;
use plugin_api::prost::Message;
use plugin_api::{Component, EntityId, Which};
use std::time::{Duration, Instant};
use troupe::ecm::Ecm;
use troupe::fixture::TestFixture;
use troupe::transport::Answer;

/// A world `w` with user commands, one model `box` at z = 1 with a link, and a light.
pub const BOX_WORLD: &str = r#"<sdf version="1.9"><world name="w">
  <plugin filename="gz-sim-user-commands-system" name="gz::sim::systems::UserCommands"/>
  <model name="box"><pose>0 0 1 0 0 0</pose><link name="link"/>
    <model name="inner"><link name="l"/></model>
  </model>
  <light name="lamp" type="point"><pose>0 0 5 0 0 0</pose></light>
</world></sdf>"#;

/// The same world with the kinematic physics system.
pub const PHYSICS_WORLD: &str = r#"<sdf version="1.9"><world name="w">
  <plugin filename="gz-sim-user-commands-system" name="gz::sim::systems::UserCommands"/>
  <plugin filename="troupe_physics_kinematic" name="troupe::KinematicPhysics"/>
  <model name="box"><pose>0 0 1 0 0 0</pose><link name="link"/></model>
</world></sdf>"#;

/// Loads `sdf` and finalizes the fixture, without the default config's systems (its
/// physics would make the models fall; these tests are about the commands).
pub fn fixture(sdf: &str) -> TestFixture {
    // nextest runs each test in a process of its own.
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
    TestFixture::from_sdf(sdf).unwrap().finalize().unwrap()
}

/// What a call came back with.
pub struct Called {
    pub answer: Answer,
}

impl Called {
    /// Whether the service answered true (and its `Boolean` says so too).
    pub fn ok(&self) -> bool {
        match &self.answer {
            Answer::Ok(bytes) => {
                assert!(Boolean::decode(bytes.as_slice()).unwrap().data, "answered true with data false");
                true
            }
            Answer::Failed(_) => false,
            Answer::Error(e) => panic!("the call was not served: {e}"),
        }
    }
}

/// Calls `service` with raw bytes from another thread, stepping the fixture until it
/// answers.
pub fn call_raw(f: &mut TestFixture, service: &str, bytes: Vec<u8>) -> Called {
    let node = f.server().node().clone();
    let name = service.to_string();
    let handle = std::thread::spawn(move || node.call(&name, &bytes, Duration::from_secs(20)));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !handle.is_finished() {
        assert!(Instant::now() < deadline, "{service} never answered");
        f.run(1).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    Called { answer: handle.join().unwrap().unwrap_or_else(|e| panic!("{service}: {e}")) }
}

/// Calls `/world/w/<service>` with a message.
pub fn call(f: &mut TestFixture, service: &str, msg: &impl Message) -> Called {
    call_raw(f, &format!("/world/w/{service}"), msg.encode_to_vec())
}

/// The world entity.
pub fn world(ecm: &Ecm) -> EntityId {
    ecm.query(Which::ALL, &[World::ID])[0]
}

/// The entity at `path` (`model/link`) below the world, if any.
pub fn find(ecm: &Ecm, path: &str) -> Option<EntityId> {
    let mut current = world(ecm);
    for part in path.split('/') {
        current = ecm.children(current).find(|c| ecm.get::<Name>(*c).is_some_and(|n| n.0 == part))?;
    }
    Some(current)
}

/// Names of the world's children, ascending by id.
pub fn top_level_names(ecm: &Ecm) -> Vec<String> {
    ecm.children(world(ecm)).filter_map(|c| ecm.get::<Name>(c).map(|n| n.0)).collect()
}
