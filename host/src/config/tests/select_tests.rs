//! System selection (world file + config set) and priorities.

use crate::config::{
    parse_server_config_str, priority_from_xml, select_systems, PluginSpec, RequestedPlugin, Selection, Target,
    DEFAULT_SERVER_CONFIG,
};

fn sdf(filename: &str, name: &str, target: Target, line: u32) -> RequestedPlugin {
    RequestedPlugin {
        filename: filename.into(),
        name: name.into(),
        xml: format!("<plugin filename=\"{filename}\" name=\"{name}\"/>"),
        origin: format!("world.sdf:{line}"),
        target,
        roles: None,
    }
}

fn defaults() -> Vec<PluginSpec> {
    parse_server_config_str(DEFAULT_SERVER_CONFIG, "server.config").unwrap().plugins
}

fn libraries(s: &Selection) -> Vec<(&str, bool)> {
    s.load.iter().map(|x| (x.library.as_str(), x.from_config)).collect()
}

#[test]
fn sdf_physics_plus_config_defaults_loads_physics_once() {
    let world = [sdf("libgz-sim-physics-system.so", "gz::sim::systems::Physics", Target::World, 5)];
    let s = select_systems(&world, &defaults(), true);
    assert_eq!(
        libraries(&s),
        [("troupe_physics_rapier", false), ("troupe_user_commands", true), ("troupe_scene_broadcaster", true)]
    );
    assert_eq!(s.load[0].origin, "world.sdf:5");
    assert_eq!(s.load[0].xml, world[0].xml);
    assert_eq!(s.load[1].name, "gz::sim::systems::UserCommands");
    assert!(s.load[1].xml.contains("gz-sim-user-commands-system"));
    assert!(s.load.iter().all(|x| x.target == Target::World && x.world_name.is_none()));
    assert!(s.notes.iter().any(|n| n.contains("already loads troupe_physics_rapier at world.sdf:5")), "{:?}", s.notes);
    assert!(s.skipped_unimplemented.is_empty());
}

#[test]
fn policy_false_with_world_plugins_skips_the_config() {
    let world = [sdf("gz-sim-physics-system", "gz::sim::systems::Physics", Target::World, 5)];
    let s = select_systems(&world, &defaults(), false);
    assert_eq!(libraries(&s), [("troupe_physics_rapier", false)]);
    assert!(s.notes.iter().any(|n| n.contains("include_server_config_plugins is false")), "{:?}", s.notes);
}

#[test]
fn no_world_plugins_means_the_config_applies_even_with_policy_false() {
    let model_only = [sdf("libmy_plugin.so", "my::Plugin", Target::Model("box".into()), 9)];
    for world in [&[][..], &model_only[..]] {
        let s = select_systems(world, &defaults(), false);
        let config: Vec<&str> = s.load.iter().filter(|x| x.from_config).map(|x| x.library.as_str()).collect();
        assert_eq!(config, ["troupe_physics_rapier", "troupe_user_commands", "troupe_scene_broadcaster"]);
        assert!(s.notes.iter().any(|n| n.contains("no systems loaded from the world file")));
    }
}

#[test]
fn user_library_and_order_sdf_first_then_config() {
    let world = [
        sdf("libmy_plugin.so", "my::Plugin", Target::Model("box".into()), 7),
        sdf("gz-sim-diff-drive-system", "gz::sim::systems::DiffDrive", Target::Model("car".into()), 8),
    ];
    let config = parse_server_config_str(
        r#"<server_config><plugins>
             <plugin entity_name="box" entity_type="model" filename="libother.so" name="o::O"/>
             <plugin entity_name="default::box::link::imu" entity_type="sensor" filename="gz-sim-imu-system" name="gz::sim::systems::Imu"/>
             <plugin entity_name="other_world" entity_type="world" filename="gz-sim8-pose-publisher-system" name="x"/>
           </plugins></server_config>"#,
        "c.config",
    )
    .unwrap()
    .plugins;
    let s = select_systems(&world, &config, true);
    assert_eq!(
        libraries(&s),
        [
            ("my_plugin", false),
            ("troupe_diff_drive", false),
            ("other", true),
            ("troupe_sensors", true),
            ("troupe_pose_publisher", true),
        ]
    );
    assert_eq!(s.load[0].name, "my::Plugin");
    assert_eq!(s.load[0].target, Target::Model("box".into()));
    assert_eq!(s.load[2].target, Target::Model("box".into()));
    assert_eq!(s.load[3].target, Target::Sensor("default::box::link::imu".into()));
    assert_eq!(s.load[3].origin, "c.config:3");
    assert_eq!(s.load[4].target, Target::World);
    assert_eq!(s.load[4].world_name.as_deref(), Some("other_world"));
}

#[test]
fn unimplemented_gz_systems_are_skipped_once_with_origin() {
    let world = [
        sdf("gz-sim-physics-system", "gz::sim::systems::Physics", Target::World, 3),
        sdf("gz-sim-buoyancy-system", "gz::sim::systems::Buoyancy", Target::World, 4),
        sdf("ignition-gazebo-thruster-system", "ignition::gazebo::systems::Thruster", Target::Model("sub".into()), 10),
        sdf("gz-sim-thruster-system", "gz::sim::systems::Thruster", Target::Model("sub2".into()), 20),
    ];
    let s = select_systems(&world, &defaults(), true);
    assert_eq!(
        s.skipped_unimplemented,
        [
            ("gz-sim-buoyancy-system".to_string(), "world.sdf:4".to_string()),
            ("gz-sim-thruster-system".to_string(), "world.sdf:10".to_string()),
        ]
    );
    assert_eq!(
        libraries(&s),
        [("troupe_physics_rapier", false), ("troupe_user_commands", true), ("troupe_scene_broadcaster", true)]
    );
}

#[test]
fn sensors_sharing_a_library_get_a_note() {
    let world = [
        sdf("gz-sim-sensors-system", "gz::sim::systems::Sensors", Target::World, 3),
        sdf("gz-sim-imu-system", "gz::sim::systems::Imu", Target::World, 4),
    ];
    let s = select_systems(&world, &[], true);
    assert_eq!(libraries(&s), [("troupe_sensors", false), ("troupe_sensors", false)]);
    assert!(s.notes.iter().any(|n| n.contains("troupe_sensors is selected 2 times")), "{:?}", s.notes);
}

#[test]
fn priorities() {
    let p = |x: &str| priority_from_xml(x);
    assert_eq!(p("<plugin filename='a' name='b'><gz:system_priority>-64</gz:system_priority></plugin>"), Ok(Some(-64)));
    assert_eq!(p("<plugin><gz:system_priority> 12 </gz:system_priority><x/></plugin>"), Ok(Some(12)));
    assert_eq!(p("<plugin xmlns:gz='http://gazebosim.org/schema'><gz:system_priority>-2147483648</gz:system_priority></plugin>"), Ok(Some(i32::MIN)));
    assert_eq!(p("<plugin><other>1</other></plugin>"), Ok(None));
    assert_eq!(p("<plugin><system_priority>5</system_priority></plugin>"), Ok(None));
    assert_eq!(p("<plugin><x><gz:system_priority>5</gz:system_priority></x></plugin>"), Ok(None));
    assert_eq!(p(""), Ok(None));
    let err = p("<plugin><gz:system_priority>high</gz:system_priority></plugin>").unwrap_err();
    assert!(err.contains("\"high\""), "{err}");
    let err = p("<plugin><gz:system_priority>2147483648</gz:system_priority></plugin>").unwrap_err();
    assert!(err.contains("2147483648"), "{err}");
    assert!(p("<plugin><gz:system_priority></gz:system_priority></plugin>").is_err());
    assert!(p("<plugin><gz:system_priority>1</plugin>").is_err());
}
