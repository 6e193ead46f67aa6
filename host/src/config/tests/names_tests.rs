//! The gz-sim → Troupe name table.

use crate::config::names::{normalise_class, normalise_library};
use crate::config::{canonical_library, map_system, unimplemented_gz_systems, SystemName};

const PHYSICS: SystemName = SystemName::Troupe { library: "troupe_physics_rapier" };

#[test]
fn physics_in_every_spelling() {
    for filename in [
        "gz-sim-physics-system",
        "libgz-sim-physics-system.so",
        "ignition-gazebo-physics-system",
        "libignition-gazebo-physics-system.so",
        "ignition-gazebo6-physics-system",
        "gz-sim8-physics-system",
        "libgz-sim9-physics-system.so",
        "libgz-sim-physics-system.so.9",
        "/usr/lib/x86_64-linux-gnu/gz-sim-9/plugins/libgz-sim-physics-system.so",
        "  gz-sim-physics-system  ",
    ] {
        assert_eq!(map_system(filename, "gz::sim::systems::Physics"), PHYSICS, "{filename}");
        assert_eq!(canonical_library(filename, "whatever"), "troupe_physics_rapier", "{filename}");
    }
}

#[test]
fn class_name_forms() {
    for class in [
        "gz::sim::systems::Physics",
        "ignition::gazebo::systems::Physics",
        "gz::sim::v9::systems::Physics",
        "::gz::sim::systems::Physics",
    ] {
        assert_eq!(normalise_class(class), "gz::sim::systems::Physics", "{class}");
        // The class decides only when the filename does not name a library.
        assert_eq!(map_system("", class), PHYSICS, "{class}");
        assert_eq!(map_system(&format!("static://{class}"), ""), PHYSICS, "{class}");
        assert_eq!(map_system("gz-sim-unknown-system", class), PHYSICS, "{class}");
        assert_eq!(map_system("libmy_plugin.so", class), SystemName::NotGz, "{class}");
    }
    assert_eq!(normalise_class(" my::Plugin "), "my::Plugin");
    assert_eq!(
        map_system("", "gz::sim::systems::Buoyancy"),
        SystemName::KnownUnimplemented { gz: "gz-sim-buoyancy-system" }
    );
    assert_eq!(map_system("", "my::Thing"), SystemName::NotGz);
}

#[test]
fn implemented_systems_use_the_agreed_library_names() {
    let cases = [
        ("gz-sim-user-commands-system", "troupe_user_commands"),
        ("gz-sim-scene-broadcaster-system", "troupe_scene_broadcaster"),
        ("gz-sim-sensors-system", "troupe_sensors"),
        ("gz-sim-imu-system", "troupe_sensors"),
        ("gz-sim-magnetometer-system", "troupe_sensors"),
        ("gz-sim-contact-system", "troupe_sensors"),
        ("gz-sim-altimeter-system", "troupe_sensors"),
        ("gz-sim-air-pressure-system", "troupe_sensors"),
        ("gz-sim-navsat-system", "troupe_sensors"),
        ("gz-sim-forcetorque-system", "troupe_sensors"),
        ("gz-sim-logical-camera-system", "troupe_sensors"),
        ("gz-sim-diff-drive-system", "troupe_diff_drive"),
        ("gz-sim-joint-controller-system", "troupe_joint_controller"),
        ("gz-sim-joint-position-controller-system", "troupe_joint_position_controller"),
        ("gz-sim-joint-state-publisher-system", "troupe_joint_state_publisher"),
        ("gz-sim-pose-publisher-system", "troupe_pose_publisher"),
        ("gz-sim-apply-link-wrench-system", "troupe_apply_link_wrench"),
        ("gz-sim-velocity-control-system", "troupe_velocity_control"),
    ];
    for (gz, troupe) in cases {
        assert_eq!(map_system(gz, ""), SystemName::Troupe { library: troupe }, "{gz}");
        let ign = gz.replace("gz-sim-", "libignition-gazebo-") + ".so";
        assert_eq!(map_system(&ign, ""), SystemName::Troupe { library: troupe }, "{ign}");
    }
}

#[test]
fn known_unimplemented_systems() {
    for gz in [
        "gz-sim-buoyancy-system",
        "gz-sim-log-system",
        "gz-sim-thruster-system",
        "gz-sim-linearbatteryplugin-system",
        "gz-sim-wind-effects-system",
    ] {
        assert_eq!(map_system(gz, ""), SystemName::KnownUnimplemented { gz }, "{gz}");
        assert!(unimplemented_gz_systems().contains(&gz));
    }
    assert_eq!(
        map_system("libignition-gazebo6-lift-drag-system.so", ""),
        SystemName::KnownUnimplemented { gz: "gz-sim-lift-drag-system" }
    );
    // `_` and `-` are the same in gz library names.
    assert_eq!(
        map_system("gz-sim-lighter-than-air-dynamics-system", ""),
        SystemName::KnownUnimplemented { gz: "gz-sim-lighter_than_air_dynamics-system" }
    );
    assert_eq!(canonical_library("libgz-sim-buoyancy-system.so", ""), "gz-sim-buoyancy-system");
    for gz in unimplemented_gz_systems() {
        assert!(matches!(map_system(gz, ""), SystemName::KnownUnimplemented { .. }), "{gz}");
    }
}

#[test]
fn user_libraries_are_not_gz() {
    for (filename, library) in [
        ("libmy_plugin.so", "my_plugin"),
        ("my_plugin", "my_plugin"),
        ("libmy_plugin.so.1.2", "my_plugin"),
        ("/opt/plugins/libfoo.so", "/opt/plugins/libfoo.so"),
        ("gz-sim-not-a-real-system", "gz-sim-not-a-real-system"),
        ("lib", "lib"),
        ("my.sound.so", "my.sound"),
    ] {
        assert_eq!(map_system(filename, "my::Plugin"), SystemName::NotGz, "{filename}");
        assert_eq!(normalise_library(filename), library, "{filename}");
        assert_eq!(canonical_library(filename, "my::Plugin"), library, "{filename}");
    }
    // The canonical key also normalises old gz spellings of unknown names.
    assert_eq!(canonical_library("libignition-gazebo6-foo-system.so", ""), "gz-sim-foo-system");
}
