//! Which systems run where (issue 9, item 1): one world loaded by the real host as a
//! distributed primary, as a secondary and standalone, with the project's
//! `config/server.config` and real plugin libraries. Loading does not connect to any peer
//! (the distributed driver does that later), so each role is loaded in-process and the
//! runner's systems are inspected; models created while the world runs are stepped in.

use std::path::{Path, PathBuf};
use troupe::distributed::settings::NetworkArgs;
use troupe::server::{Server, ServerError, ServerOptions};

/// A world with: a world system for every role (`testing::Order`), one limited to the
/// primary (`testing::Noop`), a spawner that creates a model with a system of its own at
/// iteration 2, and a model with an IMU and an attached system (`testing::Stopper`, far
/// in the future).
const WORLD: &str = r#"<?xml version="1.0"?>
<sdf version="1.9">
  <world name="roles">
    <plugin filename="troupe_testing" name="testing::Order"><label>o</label></plugin>
    <plugin filename="troupe_testing" name="testing::Noop">
      <troupe:roles>primary</troupe:roles>
    </plugin>
    <plugin filename="troupe_testing" name="testing::Spawner">
      <at>2</at>
      <sdf>&lt;sdf version="1.9"&gt;&lt;model name="spawned"&gt;&lt;link name="l"/&gt;&lt;plugin filename="troupe_testing" name="testing::Fail"&gt;&lt;phase&gt;reset&lt;/phase&gt;&lt;/plugin&gt;&lt;/model&gt;&lt;/sdf&gt;</sdf>
    </plugin>
    <model name="robot">
      <link name="body">
        <sensor name="imu" type="imu"><always_on>1</always_on><update_rate>100</update_rate></sensor>
      </link>
      <plugin filename="troupe_testing" name="testing::Stopper"><at>100000</at></plugin>
    </model>
  </world>
</sdf>"#;

fn default_config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/server.config")
}

fn options(role: Option<&str>, world: &str, config: PathBuf) -> ServerOptions {
    let network = NetworkArgs {
        role: role.map(str::to_string),
        secondaries: (role == Some("primary")).then_some(2),
        ..Default::default()
    };
    ServerOptions {
        world_text: Some((world.to_string(), "roles.sdf".into())),
        config: Some(config),
        network,
        ..Default::default()
    }
}

fn load(role: Option<&str>) -> Server {
    Server::load(&options(role, WORLD, default_config())).unwrap_or_else(|e| panic!("loading as {role:?}: {e}"))
}

/// Which of the systems of interest the runner has, as short names.
fn systems(server: &Server) -> Vec<&'static str> {
    let labels = server.runners()[0].system_labels();
    let has = |needle: &str| labels.iter().any(|l| l.contains(needle));
    let known = [
        ("physics", "troupe_physics_rapier"),
        ("user-commands", "troupe_user_commands"),
        ("scene", "troupe_scene_broadcaster"),
        ("sensors", "troupe_sensors"),
        ("levels", "troupe_level_manager"),
        ("order", "testing::Order "),
        ("noop", "testing::Noop "),
        ("spawner", "testing::Spawner "),
        ("model-system", "testing::Stopper "),
        ("spawned-system", "testing::Fail "),
    ];
    known.iter().filter(|(_, needle)| has(needle)).map(|(short, _)| *short).collect()
}

/// Steps past the spawner's iteration, so the spawned model's system is loaded or skipped.
fn step_past_spawn(server: &mut Server) {
    for runner in server.runners_mut() {
        runner.clock.paused = false;
    }
    for _ in 0..4 {
        server.step_once(std::time::Duration::ZERO).unwrap();
    }
    let ecm = &server.runners()[0].ecm;
    let spawned = ecm
        .query(plugin_api::Which::ALL, &[<plugin_api::components::Name as plugin_api::Component>::ID])
        .into_iter()
        .any(|e| ecm.get::<plugin_api::components::Name>(e).is_some_and(|n| n.0 == "spawned"));
    assert!(spawned, "the spawner did not create its model");
}

#[test]
fn standalone_runs_every_default_system_and_skips_a_primary_only_one() {
    let mut server = load(None);
    assert_eq!(systems(&server), ["physics", "user-commands", "scene", "sensors", "order", "spawner", "model-system"]);
    step_past_spawn(&mut server);
    assert!(systems(&server).contains(&"spawned-system"), "{:?}", server.runners()[0].system_labels());
}

#[test]
fn the_primary_runs_no_physics_no_sensors_and_no_model_systems() {
    let mut server = load(Some("primary"));
    assert_eq!(systems(&server), ["user-commands", "scene", "levels", "order", "noop", "spawner"]);
    // A model created while running gets no systems on the primary either.
    step_past_spawn(&mut server);
    assert!(!systems(&server).contains(&"spawned-system"), "{:?}", server.runners()[0].system_labels());
}

#[test]
fn a_secondary_runs_physics_sensors_and_model_systems_but_not_the_users_systems() {
    let mut server = load(Some("secondary"));
    assert_eq!(systems(&server), ["physics", "sensors", "levels", "order", "spawner", "model-system"]);
    step_past_spawn(&mut server);
    assert!(systems(&server).contains(&"spawned-system"), "{:?}", server.runners()[0].system_labels());
}

/// A server config that asks for physics on every role and the scene broadcaster nowhere
/// but the secondaries.
const CONFIG: &str = r#"<server_config>
  <plugins>
    <plugin entity_name="*" entity_type="world" filename="gz-sim-physics-system" name="gz::sim::systems::Physics">
      <troupe:roles>all</troupe:roles>
    </plugin>
    <plugin entity_name="*" entity_type="world" filename="gz-sim-scene-broadcaster-system" name="gz::sim::systems::SceneBroadcaster">
      <troupe:roles>secondary</troupe:roles>
    </plugin>
  </plugins>
</server_config>
"#;

fn write_config(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("troupe-roles-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.config");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn roles_in_the_server_config_replace_the_defaults() {
    let config = write_config("explicit", CONFIG);
    let load = |role| {
        let server = Server::load(&options(role, WORLD, config.clone())).unwrap();
        systems(&server).into_iter().filter(|s| ["physics", "scene"].contains(s)).collect::<Vec<_>>()
    };
    assert_eq!(load(Some("primary")), ["physics"]);
    assert_eq!(load(Some("secondary")), ["physics", "scene"]);
    assert_eq!(load(None), ["physics"]);
}

#[test]
fn a_world_file_role_wins_over_the_default_for_a_world_file_system() {
    // gz-sim's distributed_secondary.sdf names physics in the world file; given roles, a
    // world-file physics runs on the primary too.
    let world = WORLD.replace(
        "<model name=\"robot\">",
        "<plugin filename=\"gz-sim-physics-system\" name=\"gz::sim::systems::Physics\"><troupe:roles>primary</troupe:roles></plugin>\n    <model name=\"robot\">",
    );
    let server = Server::load(&options(Some("primary"), &world, default_config())).unwrap();
    assert!(systems(&server).contains(&"physics"));
    let server = Server::load(&options(Some("secondary"), &world, default_config())).unwrap();
    assert!(!systems(&server).contains(&"physics"), "the world file limits physics to the primary");
}

#[test]
fn a_bad_role_stops_loading_with_file_and_line() {
    let world = WORLD.replace("<troupe:roles>primary</troupe:roles>", "<troupe:roles>primary main</troupe:roles>");
    match Server::load(&options(None, &world, default_config())) {
        Err(e @ ServerError::Sdf(_)) => {
            let text = e.to_string();
            assert!(text.starts_with("roles.sdf:6: <troupe:roles> names \"main\""), "{text}");
            assert!(text.contains("primary, secondary, standalone or all"), "{text}");
        }
        Err(other) => panic!("expected an SDF error, got {other}"),
        Ok(_) => panic!("a bad role was accepted"),
    }
    let config = write_config(
        "bad",
        &CONFIG.replace("<troupe:roles>all</troupe:roles>", "<troupe:roles>everyone</troupe:roles>"),
    );
    match Server::load(&options(Some("secondary"), WORLD, config.clone())) {
        Err(e @ ServerError::Config(_)) => {
            let text = e.to_string();
            assert!(text.contains(&format!("{}:4: <troupe:roles> names \"everyone\"", config.display())), "{text}");
        }
        Err(other) => panic!("expected a config error, got {other}"),
        Ok(_) => panic!("a bad role was accepted"),
    }
}
