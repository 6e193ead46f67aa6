//! `<troupe:roles>` and the default roles of each kind of system.

use crate::config::{parse_roles, parse_server_config_str, place, ConfigError, DefaultRoles, Placement, RoleSet};
use plugin_api::{NetworkRole, SystemInfo};

const PRIMARY: NetworkRole = NetworkRole::PRIMARY;
const SECONDARY: NetworkRole = NetworkRole::SECONDARY;
const STANDALONE: NetworkRole = NetworkRole::STANDALONE;

#[test]
fn role_lists_parse_in_any_case_with_spaces_or_commas() {
    assert_eq!(parse_roles("primary").unwrap(), RoleSet::PRIMARY);
    assert_eq!(parse_roles(" Secondary,STANDALONE ").unwrap(), RoleSet::SIMULATING);
    assert_eq!(parse_roles("primary\n  secondary standalone").unwrap(), RoleSet::ALL);
    assert_eq!(parse_roles("all").unwrap(), RoleSet::ALL);
    assert_eq!(RoleSet::SECONDARY.union(RoleSet::PRIMARY).to_string(), "primary secondary");
    assert!(!parse_roles("primary").unwrap().contains(NetworkRole::STANDALONE));
}

#[test]
fn a_bad_role_list_names_the_value_and_the_allowed_roles() {
    let err = parse_roles("primary primery").unwrap_err();
    assert!(err.contains("\"primery\"") && err.contains("primary, secondary, standalone or all"), "{err}");
    let err = parse_roles("  ").unwrap_err();
    assert!(err.contains("empty") && err.contains("primary, secondary, standalone"), "{err}");
    let err = parse_roles("secondary standalone secondary").unwrap_err();
    assert!(err.contains("\"secondary\" twice"), "{err}");
    let err = parse_roles("all primary").unwrap_err();
    assert!(err.contains("\"primary\" twice"), "{err}");
}

/// (default, runs on the primary, on a secondary, standalone)
const DEFAULTS: [(DefaultRoles, bool, bool, bool); 7] = [
    (DefaultRoles::Declared(SystemInfo::PHYSICS), false, true, true),
    (DefaultRoles::Declared(SystemInfo::SENSORS), false, true, true),
    (DefaultRoles::Declared(SystemInfo::SCENE_BROADCASTER), true, false, true),
    (DefaultRoles::Declared(SystemInfo::USER_COMMANDS), true, false, true),
    (DefaultRoles::Declared(SystemInfo::LEVEL_MANAGER), true, true, true),
    (DefaultRoles::Attached, false, true, true),
    (DefaultRoles::Declared(SystemInfo::OTHER), true, true, true),
];

#[test]
fn each_kind_has_its_default_roles() {
    for (default, primary, secondary, standalone) in DEFAULTS {
        for (role, expected) in [(PRIMARY, primary), (SECONDARY, secondary), (STANDALONE, standalone)] {
            let placed = place(default, None, role);
            assert_eq!(placed == Placement::Runs, expected, "{default:?} on {role}: {placed:?}");
            if let Placement::Skipped(why) = placed {
                assert!(why.starts_with("by default: "), "{why}");
            }
        }
    }
}

#[test]
fn explicit_roles_replace_the_default_in_both_directions() {
    // Physics asked for on the primary runs there; a user system limited to the primary
    // does not run standalone.
    assert_eq!(place(DefaultRoles::Declared(SystemInfo::PHYSICS), Some(RoleSet::ALL), PRIMARY), Placement::Runs);
    let only_primary = Some(RoleSet::PRIMARY);
    let other = DefaultRoles::Declared(SystemInfo::OTHER);
    assert_eq!(place(other, only_primary, PRIMARY), Placement::Runs);
    match place(other, only_primary, STANDALONE) {
        Placement::Skipped(why) => assert_eq!(why, "its <troupe:roles> says primary"),
        Placement::Runs => panic!("a primary-only system ran standalone"),
    }
    assert!(matches!(
        place(DefaultRoles::Declared(SystemInfo::SCENE_BROADCASTER), Some(RoleSet::SECONDARY), PRIMARY),
        Placement::Skipped(_)
    ));
}

const CONFIG: &str = r#"<?xml version="1.0"?>
<server_config>
  <plugins>
    <plugin entity_name="*" entity_type="world"
            filename="gz-sim-physics-system" name="gz::sim::systems::Physics">
      <troupe:roles>primary secondary</troupe:roles>
    </plugin>
    <plugin entity_name="*" entity_type="world"
            filename="my_logger" name="my::Logger"/>
  </plugins>
</server_config>
"#;

#[test]
fn the_server_config_reads_roles_per_plugin() {
    let file = parse_server_config_str(CONFIG, "run.config").unwrap();
    assert_eq!(file.plugins[0].roles, Some(RoleSet::PRIMARY.union(RoleSet::SECONDARY)));
    assert_eq!(file.plugins[1].roles, None);
    // The element stays in the XML the system gets, as <gz:system_priority> does.
    assert!(file.plugins[0].xml.contains("<troupe:roles>"));
}

fn config_problems(text: &str) -> Vec<String> {
    match parse_server_config_str(text, "run.config") {
        Err(ConfigError::Invalid { problems }) => problems.iter().map(ToString::to_string).collect(),
        other => panic!("expected problems, got {other:?}"),
    }
}

#[test]
fn a_bad_role_in_the_server_config_is_an_error_at_its_line() {
    let bad = CONFIG.replace("primary secondary", "primary backup");
    let problems = config_problems(&bad);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("run.config:6: <troupe:roles> names \"backup\""), "{problems:?}");
    assert!(problems[0].contains("primary, secondary, standalone or all"), "{problems:?}");

    let twice = CONFIG.replace(
        "<troupe:roles>primary secondary</troupe:roles>",
        "<troupe:roles>primary</troupe:roles>\n      <troupe:roles>secondary</troupe:roles>",
    );
    assert_eq!(config_problems(&twice), ["run.config:7: a second <troupe:roles> in one <plugin>"]);

    let misspelt = CONFIG.replace("troupe:roles>", "troupe:role>");
    let problems = config_problems(&misspelt);
    assert!(problems[0].starts_with("run.config:6: unknown element <troupe:role> in <plugin>"), "{problems:?}");
}

fn world(plugins: &str, model_plugins: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    {plugins}
    <model name="m">
      <link name="l"/>
      {model_plugins}
    </model>
  </world>
</sdf>"#
    )
}

#[test]
fn world_file_plugins_carry_their_roles() {
    let text = world(
        r#"<plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"><troupe:roles>all</troupe:roles></plugin>
    <plugin filename="gz-sim-user-commands-system" name="gz::sim::systems::UserCommands"/>"#,
        r#"<plugin filename="my_model_system" name="my::Sys"><troupe:roles>primary</troupe:roles></plugin>"#,
    );
    let doc = crate::sdf::parse_str(&text, "w.sdf").unwrap();
    let w = &doc.worlds[0];
    assert_eq!(w.plugins[0].roles, Some(RoleSet::ALL));
    assert_eq!(w.plugins[1].roles, None);
    assert_eq!(w.models[0].plugins[0].roles, Some(RoleSet::PRIMARY));
    // Systems still read their XML (the prefix is declared for them).
    let xml = plugin_api::xml::PluginXml::parse(&w.models[0].plugins[0].xml).unwrap();
    assert_eq!(xml.attribute("name"), Some("my::Sys"));
}

#[test]
fn a_bad_role_in_a_world_file_is_an_error_at_its_line() {
    let text = world("", "<plugin filename=\"x\" name=\"y\">\n        <troupe:roles>secondary, everywhere</troupe:roles>\n      </plugin>");
    let err = crate::sdf::parse_str(&text, "w.sdf").unwrap_err().to_string();
    assert!(err.starts_with("w.sdf:8: <troupe:roles> names \"everywhere\""), "{err}");
    assert!(err.contains("primary, secondary, standalone or all"), "{err}");
}
