//! Which systems run where (docs/distributed.md): one world loaded by the real host as a
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

/// Every library Troupe ships says what its systems are; the host names none of them to
/// place them.
#[test]
fn every_shipped_library_says_what_its_systems_are() {
    use plugin_api::SystemInfo;
    use troupe::plugin::{PluginLoader, SearchPath};
    let mut loader = PluginLoader::new(SearchPath::new(None, &[]), 0);
    let simulating = SystemInfo::OTHER.simulating();
    for (library, class, declared) in [
        ("troupe_physics_rapier", "gz::sim::systems::Physics", SystemInfo::PHYSICS),
        ("troupe_physics_kinematic", "", SystemInfo::PHYSICS),
        ("troupe_sensors", "gz::sim::systems::Imu", SystemInfo::SENSORS),
        ("troupe_scene_broadcaster", "", SystemInfo::SCENE_BROADCASTER),
        ("troupe_user_commands", "", SystemInfo::USER_COMMANDS),
        ("troupe_level_manager", "", SystemInfo::LEVEL_MANAGER),
        ("troupe_diff_drive", "", simulating),
        ("troupe_apply_link_wrench", "", simulating),
        ("troupe_velocity_control", "", simulating),
        ("troupe_joint_controller", "", simulating),
        ("troupe_joint_position_controller", "", simulating),
        ("troupe_joint_state_publisher", "", SystemInfo::OTHER),
        ("troupe_pose_publisher", "", SystemInfo::OTHER),
        ("troupe_template", "", SystemInfo::OTHER),
    ] {
        let lib = loader.load(library).unwrap_or_else(|e| panic!("{library}: {e}"));
        assert_eq!(lib.system_info(class), Some(declared), "{library} {class:?}");
    }
    let lib = loader.load("troupe_physics_rapier").unwrap();
    assert_eq!(lib.system_info("no::Such"), None, "a name the library does not have");
}

/// A library no table of the host's names, declaring itself a physics system, is what the
/// built-in backends are: `--physics-engine` swaps it in for the world's physics, it runs
/// standalone and on secondaries, and the primary keeps it off.
#[test]
fn a_third_party_physics_system_is_swapped_in_and_kept_off_the_primary() {
    let load_with_engine = |role: Option<&str>| {
        let opts = ServerOptions {
            physics_engine: Some("troupe_testing_physics".into()),
            ..options(role, WORLD, default_config())
        };
        Server::load(&opts).unwrap_or_else(|e| panic!("loading as {role:?}: {e}"))
    };
    let has = |server: &Server, needle: &str| server.runners()[0].system_labels().iter().any(|l| l.contains(needle));

    let mut standalone = load_with_engine(None);
    assert!(has(&standalone, "troupe_testing_physics"), "{:?}", standalone.runners()[0].system_labels());
    assert!(!has(&standalone, "troupe_physics_rapier"), "replaced, not added beside");
    standalone.runners_mut()[0].clock.paused = false;
    for _ in 0..3 {
        standalone.step_once(std::time::Duration::ZERO).unwrap();
    }
    let runner = &standalone.runners()[0];
    let mut steps = Vec::new();
    let counted = runner.ecm.get_raw(
        runner.world_entity(),
        plugin_api::ComponentTypeId::of_name("troupe_testing_physics.Steps"),
        &mut steps,
    );
    assert!(counted && steps == 3u64.to_le_bytes(), "it stepped the world: {steps:?}");

    let secondary = load_with_engine(Some("secondary"));
    assert!(has(&secondary, "troupe_testing_physics"), "{:?}", secondary.runners()[0].system_labels());
    let primary = load_with_engine(Some("primary"));
    assert!(!has(&primary, "troupe_testing_physics"), "{:?}", primary.runners()[0].system_labels());
    assert!(!has(&primary, "troupe_physics_rapier"));
}

/// The host lists the plugin crates it ships in its Cargo.toml only so that `cargo run` builds
/// their libraries; its code never uses one (systems are loaded at run time, never linked).
#[test]
fn host_code_uses_no_plugin_crate() {
    let host = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(host.join("Cargo.toml")).unwrap();
    let crates: Vec<String> = manifest
        .lines()
        .filter(|l| l.contains("path = \"../plugins/"))
        .filter_map(|l| l.split_whitespace().next())
        .map(|name| name.replace('-', "_"))
        .collect();
    assert!(crates.len() > 10 && crates.contains(&"troupe_physics_rapier".to_string()), "{crates:?}");
    let offences = lines_matching(&host.join("src"), |line| {
        crates
            .iter()
            .any(|krate| line.contains(&format!("{krate}::")) || line.contains(&format!("extern crate {krate}")))
    });
    assert!(offences.is_empty(), "host code uses plugin crates:\n{}", offences.join("\n"));
}

/// One type says which part a process plays: `plugin_api::NetworkRole`. The wire protocol's
/// generated `Role` is converted at the edge and lives in the build's output, not in src/.
#[test]
fn the_host_and_the_plugin_api_define_one_role_type() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let defines_a_role = |line: &str| {
        let line = line.trim_start();
        ["pub enum ", "enum ", "pub struct ", "struct ", "pub(crate) enum ", "pub(crate) struct "].iter().any(|start| {
            line.strip_prefix(start).is_some_and(|rest| {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                name.ends_with("Role")
            })
        })
    };
    let mut found = lines_matching(&root.join("host/src"), defines_a_role);
    found.extend(lines_matching(&root.join("plugin-api/src"), defines_a_role));
    assert_eq!(found.len(), 1, "role types:\n{}", found.join("\n"));
    assert!(found[0].contains("pub struct NetworkRole("), "{found:?}");
}

/// `file:line: text` of every line of the Rust files under `dir` that `matches`.
fn lines_matching(dir: &Path, matches: impl Fn(&str) -> bool) -> Vec<String> {
    let mut files = vec![dir.to_path_buf()];
    let mut found = Vec::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            if matches(line) {
                found.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
            }
        }
    }
    found
}
