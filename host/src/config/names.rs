//! The name table: gz-sim system libraries and class names → Troupe system libraries.
//!
//! SDF files and server configs name gz-sim systems by library (`filename`, e.g.
//! `gz-sim-physics-system`) and class (`name`, e.g. `gz::sim::systems::Physics`). Troupe
//! implements some of them under its own library names, knows the rest by name so it can
//! say "not implemented" instead of "library not found", and passes every other name
//! through as the user's own library.
//!
//! Spellings are normalised before lookup: a leading `lib` and a trailing `.so` (also
//! `.so.N…`) are dropped, directories are ignored, `ignition-gazebo-`,
//! `ignition-gazebo6-`, `gz-sim8-` … become `gz-sim-`, `_` and `-` compare equal in gz
//! library names, and class names may be written `gz::sim::systems::X`,
//! `gz::sim::vN::systems::X` or `ignition::gazebo::systems::X`.

/// What a plugin's `filename`/`name` pair refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemName {
    /// A gz-sim system that Troupe implements in this library (searched on the plugin
    /// path like any other library).
    Troupe {
        /// The Troupe library, e.g. `troupe_physics_rapier`.
        library: &'static str,
    },
    /// A real gz-sim system that Troupe does not implement.
    KnownUnimplemented {
        /// Its gz-sim library name, e.g. `gz-sim-buoyancy-system`.
        gz: &'static str,
    },
    /// Not a gz-sim system name: the user's own library.
    NotGz,
}

/// gz-sim libraries Troupe implements, with their classes and the Troupe library.
const IMPLEMENTED: &[(&str, &[&str], &str)] = &[
    ("gz-sim-physics-system", &["Physics"], "troupe_physics_rapier"),
    ("gz-sim-user-commands-system", &["UserCommands"], "troupe_user_commands"),
    ("gz-sim-scene-broadcaster-system", &["SceneBroadcaster"], "troupe_scene_broadcaster"),
    ("gz-sim-sensors-system", &["Sensors"], "troupe_sensors"),
    ("gz-sim-imu-system", &["Imu"], "troupe_sensors"),
    ("gz-sim-magnetometer-system", &["Magnetometer"], "troupe_sensors"),
    ("gz-sim-contact-system", &["Contact"], "troupe_sensors"),
    ("gz-sim-altimeter-system", &["Altimeter"], "troupe_sensors"),
    ("gz-sim-air-pressure-system", &["AirPressure"], "troupe_sensors"),
    ("gz-sim-navsat-system", &["NavSat"], "troupe_sensors"),
    ("gz-sim-forcetorque-system", &["ForceTorque"], "troupe_sensors"),
    ("gz-sim-logical-camera-system", &["LogicalCamera"], "troupe_sensors"),
    ("gz-sim-diff-drive-system", &["DiffDrive"], "troupe_diff_drive"),
    ("gz-sim-joint-controller-system", &["JointController"], "troupe_joint_controller"),
    ("gz-sim-joint-position-controller-system", &["JointPositionController"], "troupe_joint_position_controller"),
    ("gz-sim-joint-state-publisher-system", &["JointStatePublisher"], "troupe_joint_state_publisher"),
    ("gz-sim-pose-publisher-system", &["PosePublisher"], "troupe_pose_publisher"),
    ("gz-sim-apply-link-wrench-system", &["ApplyLinkWrench"], "troupe_apply_link_wrench"),
    ("gz-sim-velocity-control-system", &["VelocityControl"], "troupe_velocity_control"),
];

/// Real gz-sim system libraries (Ionic, plus a few newer ones) that Troupe does not
/// implement, with the classes they register (empty where not needed for lookup).
const UNIMPLEMENTED: &[(&str, &[&str])] = &[
    ("gz-sim-ackermann-steering-system", &["AckermannSteering"]),
    ("gz-sim-acoustic-comms-system", &["AcousticComms"]),
    ("gz-sim-advanced-lift-drag-system", &["AdvancedLiftDrag"]),
    ("gz-sim-air-speed-system", &["AirSpeed"]),
    ("gz-sim-apply-joint-force-system", &["ApplyJointForce"]),
    ("gz-sim-breadcrumbs-system", &["Breadcrumbs"]),
    ("gz-sim-buoyancy-system", &["Buoyancy"]),
    ("gz-sim-buoyancy-engine-system", &["BuoyancyEngine"]),
    ("gz-sim-camera-video-recorder-system", &["CameraVideoRecorder"]),
    ("gz-sim-collada-world-exporter-system", &["ColladaWorldExporter"]),
    ("gz-sim-comms-endpoint-system", &["CommsEndpoint"]),
    ("gz-sim-detachable-joint-system", &["DetachableJoint"]),
    ("gz-sim-drive-to-pose-controller-system", &["DriveToPoseController"]),
    ("gz-sim-dvl-system", &["DopplerVelocityLogSystem"]),
    ("gz-sim-elevator-system", &["Elevator"]),
    ("gz-sim-entity-semantics-system", &[]),
    ("gz-sim-environment-preload-system", &["EnvironmentPreload"]),
    ("gz-sim-environmental-sensor-system", &["EnvironmentalSystem"]),
    ("gz-sim-follow-actor-system", &["FollowActor"]),
    ("gz-sim-free-space-explorer-system", &[]),
    ("gz-sim-hydrodynamics-system", &["Hydrodynamics"]),
    ("gz-sim-joint-trajectory-controller-system", &["JointTrajectoryController"]),
    ("gz-sim-kinetic-energy-monitor-system", &["KineticEnergyMonitor"]),
    ("gz-sim-label-system", &["Label"]),
    ("gz-sim-lens-flare-system", &["LensFlare"]),
    ("gz-sim-lift-drag-system", &["LiftDrag"]),
    ("gz-sim-lighter_than_air_dynamics-system", &["LighterThanAirDynamics"]),
    ("gz-sim-linearbatteryplugin-system", &["LinearBatteryPlugin"]),
    ("gz-sim-log-system", &["LogRecord", "LogPlayback"]),
    ("gz-sim-log-video-recorder-system", &["LogVideoRecorder"]),
    ("gz-sim-logicalaudiosensorplugin-system", &["LogicalAudioSensorPlugin"]),
    ("gz-sim-lookup-wheel-slip-system", &[]),
    ("gz-sim-mecanum-drive-system", &["MecanumDrive"]),
    ("gz-sim-model-photo-shoot-system", &["ModelPhotoShoot"]),
    ("gz-sim-multicopter-control-system", &["MulticopterVelocityControl"]),
    ("gz-sim-multicopter-motor-model-system", &["MulticopterMotorModel"]),
    ("gz-sim-odometry-publisher-system", &["OdometryPublisher"]),
    ("gz-sim-opticaltactileplugin-system", &["OpticalTactilePlugin"]),
    ("gz-sim-particle-emitter-system", &["ParticleEmitter"]),
    ("gz-sim-perfect-comms-system", &["PerfectComms"]),
    ("gz-sim-performer-detector-system", &["PerformerDetector"]),
    ("gz-sim-python-system-loader-system", &["PythonSystemLoader"]),
    ("gz-sim-rf-comms-system", &["RFComms"]),
    ("gz-sim-shader-param-system", &["ShaderParam"]),
    ("gz-sim-spacecraft-thruster-model-system", &["SpacecraftThrusterModel"]),
    ("gz-sim-thermal-system", &["Thermal"]),
    ("gz-sim-thermal-sensor-system", &["ThermalSensor"]),
    ("gz-sim-thruster-system", &["Thruster"]),
    ("gz-sim-touchplugin-system", &["TouchPlugin"]),
    ("gz-sim-track-controller-system", &["TrackController"]),
    ("gz-sim-tracked-vehicle-system", &["TrackedVehicle"]),
    ("gz-sim-trajectory-follower-system", &["TrajectoryFollower"]),
    ("gz-sim-triggered-publisher-system", &["TriggeredPublisher"]),
    ("gz-sim-wheel-slip-system", &["WheelSlip"]),
    ("gz-sim-wind-effects-system", &["WindEffects"]),
];

/// The same libraries as `UNIMPLEMENTED`, names only (for documentation).
const UNIMPLEMENTED_NAMES: &[&str] = &[
    "gz-sim-ackermann-steering-system",
    "gz-sim-acoustic-comms-system",
    "gz-sim-advanced-lift-drag-system",
    "gz-sim-air-speed-system",
    "gz-sim-apply-joint-force-system",
    "gz-sim-breadcrumbs-system",
    "gz-sim-buoyancy-system",
    "gz-sim-buoyancy-engine-system",
    "gz-sim-camera-video-recorder-system",
    "gz-sim-collada-world-exporter-system",
    "gz-sim-comms-endpoint-system",
    "gz-sim-detachable-joint-system",
    "gz-sim-drive-to-pose-controller-system",
    "gz-sim-dvl-system",
    "gz-sim-elevator-system",
    "gz-sim-entity-semantics-system",
    "gz-sim-environment-preload-system",
    "gz-sim-environmental-sensor-system",
    "gz-sim-follow-actor-system",
    "gz-sim-free-space-explorer-system",
    "gz-sim-hydrodynamics-system",
    "gz-sim-joint-trajectory-controller-system",
    "gz-sim-kinetic-energy-monitor-system",
    "gz-sim-label-system",
    "gz-sim-lens-flare-system",
    "gz-sim-lift-drag-system",
    "gz-sim-lighter_than_air_dynamics-system",
    "gz-sim-linearbatteryplugin-system",
    "gz-sim-log-system",
    "gz-sim-log-video-recorder-system",
    "gz-sim-logicalaudiosensorplugin-system",
    "gz-sim-lookup-wheel-slip-system",
    "gz-sim-mecanum-drive-system",
    "gz-sim-model-photo-shoot-system",
    "gz-sim-multicopter-control-system",
    "gz-sim-multicopter-motor-model-system",
    "gz-sim-odometry-publisher-system",
    "gz-sim-opticaltactileplugin-system",
    "gz-sim-particle-emitter-system",
    "gz-sim-perfect-comms-system",
    "gz-sim-performer-detector-system",
    "gz-sim-python-system-loader-system",
    "gz-sim-rf-comms-system",
    "gz-sim-shader-param-system",
    "gz-sim-spacecraft-thruster-model-system",
    "gz-sim-thermal-system",
    "gz-sim-thermal-sensor-system",
    "gz-sim-thruster-system",
    "gz-sim-touchplugin-system",
    "gz-sim-track-controller-system",
    "gz-sim-tracked-vehicle-system",
    "gz-sim-trajectory-follower-system",
    "gz-sim-triggered-publisher-system",
    "gz-sim-wheel-slip-system",
    "gz-sim-wind-effects-system",
];

/// gz-sim system libraries Troupe knows but does not implement, for documentation.
pub fn unimplemented_gz_systems() -> &'static [&'static str] {
    UNIMPLEMENTED_NAMES
}

/// The gz-sim libraries Troupe implements, each with its Troupe library.
pub fn implemented_gz_systems() -> impl Iterator<Item = (&'static str, &'static str)> {
    IMPLEMENTED.iter().map(|&(gz, _, troupe)| (gz, troupe))
}

/// Classifies a plugin's `filename`/`name` pair.
///
/// The library (`filename`) decides. The class (`name`) is consulted only when the
/// filename does not pin a library down: when it is empty, a `static://CLASS` reference,
/// or a `gz-sim…` name that is not in the table. A user library exporting a class in the
/// `gz::sim::systems` namespace therefore stays the user's library.
pub fn map_system(filename: &str, name: &str) -> SystemName {
    let stem = normalise_gz_spelling(&library_stem(file_part(filename)));
    if let Some(found) = lookup_library(&stem) {
        return found;
    }
    let trimmed = filename.trim();
    let (class, class_allowed) = match trimmed.strip_prefix("static://") {
        Some(class) => (class, true),
        None => (name, stem.is_empty() || stem == "gz-sim" || stem.starts_with("gz-sim-")),
    };
    if class_allowed {
        if let Some(found) = gz_class_local(class).and_then(lookup_class) {
            return found;
        }
    }
    SystemName::NotGz
}

/// The key under which two plugin references count as the same system: the Troupe
/// library for names Troupe implements, the gz-sim library name for known unimplemented
/// ones, else the normalised filename (see the module docs).
pub fn canonical_library(filename: &str, name: &str) -> String {
    match map_system(filename, name) {
        SystemName::Troupe { library } => library.to_string(),
        SystemName::KnownUnimplemented { gz } => gz.to_string(),
        SystemName::NotGz => normalise_gz_spelling(&normalise_library(filename)),
    }
}

/// The library name to search for a user library: `filename` with a leading `lib` and a
/// trailing `.so` (or `.so.N…`) removed from its last path component, the rest kept
/// (`libmy_plugin.so` → `my_plugin`, `/opt/p/libx.so` → `/opt/p/x`).
pub fn normalise_library(filename: &str) -> String {
    let trimmed = filename.trim();
    if trimmed.contains('/') {
        // A path names one file; keep it as written (it may be versioned, `libx.so.2`).
        return trimmed.to_string();
    }
    library_stem(file_part(trimmed))
}

/// A gz class name in its current spelling: `ignition::gazebo::` becomes `gz::sim::`,
/// a version namespace (`v8::`) and a leading `::` are dropped. Other names are
/// returned trimmed but otherwise unchanged.
pub fn normalise_class(name: &str) -> String {
    match gz_class_local(name) {
        Some(local) => format!("gz::sim::systems::{local}"),
        None => name.trim().to_string(),
    }
}

/// The last path component of `filename` (after `/` or `\`).
fn file_part(filename: &str) -> &str {
    let trimmed = filename.trim();
    trimmed.rsplit(['/', '\\']).next().unwrap_or(trimmed)
}

/// `libX.so` / `libX.so.9` / `X.so` / `libX` → `X`.
fn library_stem(file: &str) -> String {
    let mut stem = file.trim();
    if let Some(s) = stem.strip_suffix(".so") {
        stem = s;
    } else if let Some(i) = stem.rfind(".so.") {
        let version = &stem[i + 4..];
        if !version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.') {
            stem = &stem[..i];
        }
    }
    let stem = stem.strip_prefix("lib").filter(|s| !s.is_empty()).unwrap_or(stem);
    stem.to_string()
}

/// `ignition-gazebo-`, `ignition-gazeboN-`, `gz-simN-` → `gz-sim-`; `gz-simN` → `gz-sim`.
fn normalise_gz_spelling(stem: &str) -> String {
    for old in ["ignition-gazebo", "gz-sim"] {
        if let Some(rest) = stem.strip_prefix(old) {
            let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            if rest.is_empty() {
                return "gz-sim".to_string();
            }
            if let Some(tail) = rest.strip_prefix('-') {
                return format!("gz-sim-{tail}");
            }
        }
    }
    stem.to_string()
}

/// `_` and `-` are the same in gz library names (`lighter_than_air_dynamics`).
fn same_gz_library(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes().zip(b.bytes()).all(|(x, y)| {
            let f = |c: u8| if c == b'_' { b'-' } else { c };
            f(x) == f(y)
        })
}

fn lookup_library(stem: &str) -> Option<SystemName> {
    if !stem.starts_with("gz-sim-") {
        return None;
    }
    if let Some(&(_, _, library)) = IMPLEMENTED.iter().find(|(gz, _, _)| same_gz_library(gz, stem)) {
        return Some(SystemName::Troupe { library });
    }
    UNIMPLEMENTED.iter().find(|(gz, _)| same_gz_library(gz, stem)).map(|&(gz, _)| SystemName::KnownUnimplemented { gz })
}

fn lookup_class(local: &str) -> Option<SystemName> {
    if let Some(&(_, _, library)) = IMPLEMENTED.iter().find(|(_, c, _)| c.contains(&local)) {
        return Some(SystemName::Troupe { library });
    }
    UNIMPLEMENTED.iter().find(|(_, c)| c.contains(&local)).map(|&(gz, _)| SystemName::KnownUnimplemented { gz })
}

/// `X` from `gz::sim::systems::X`, `gz::sim::v8::systems::X`,
/// `ignition::gazebo::systems::X` (a leading `::` allowed).
fn gz_class_local(name: &str) -> Option<&str> {
    let name = name.trim();
    let name = name.strip_prefix("::").unwrap_or(name);
    let parts: Vec<&str> = name.split("::").collect();
    let rest = match parts.as_slice() {
        ["gz", "sim", rest @ ..] | ["ignition", "gazebo", rest @ ..] => rest,
        _ => return None,
    };
    let is_version = |v: &str| v.len() > 1 && v.starts_with('v') && v[1..].chars().all(|c| c.is_ascii_digit());
    let rest = match rest {
        [v, rest @ ..] if is_version(v) => rest,
        _ => rest,
    };
    match rest {
        ["systems", local] if !local.is_empty() => Some(local),
        _ => None,
    }
}

#[cfg(test)]
mod table_tests {
    use super::*;

    #[test]
    fn unimplemented_names_match_table() {
        let table: Vec<&str> = UNIMPLEMENTED.iter().map(|(gz, _)| *gz).collect();
        assert_eq!(table, UNIMPLEMENTED_NAMES);
        for (gz, _, _) in IMPLEMENTED {
            assert!(!table.contains(gz), "{gz} is in both tables");
        }
    }
}

#[cfg(test)]
mod docs_tests {
    /// docs/gz-systems.md must name every gz-sim system the table knows.
    #[test]
    fn the_systems_doc_lists_every_known_gz_system() {
        let doc = include_str!("../../../docs/gz-systems.md");
        let missing: Vec<&str> = super::unimplemented_gz_systems()
            .iter()
            .copied()
            .chain(super::implemented_gz_systems().map(|(gz, _)| gz))
            .filter(|name| !doc.contains(&format!("`{name}`")))
            .collect();
        assert!(missing.is_empty(), "docs/gz-systems.md does not list: {missing:?}");
    }
}

/// The library to load for a `<plugin>` (`filename`, `name`) of a model or sensor: the Troupe
/// library of a gz-sim system, else the filename as a library name; `None`, with one
/// warning per system, for a gz-sim system Troupe does not implement.
pub fn library_of_plugin(filename: &str, name: &str, origin: &str) -> Option<String> {
    match map_system(filename, name) {
        SystemName::Troupe { library } => Some(library.to_string()),
        SystemName::KnownUnimplemented { gz } => {
            warn_once(gz, &format!("{origin}: gz-sim system {gz} is not implemented by Troupe; skipped"));
            None
        }
        SystemName::NotGz => Some(normalise_library(filename)),
    }
}

/// Logs `message` as a warning the first time `key` is seen in this process.
pub fn warn_once(key: &str, message: &str) {
    static WARNED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<String>>> =
        std::sync::OnceLock::new();
    let mut warned = WARNED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if warned.insert(key.to_string()) {
        log::warn!("{message}");
    }
}
