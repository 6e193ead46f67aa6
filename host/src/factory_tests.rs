//! The entity factory on the test worlds: every SDF element that has a component lands on
//! the right entity with the values written, or SDFormat's defaults when not written.

use super::*;
use crate::ecm::Ecm;
use crate::sdf::{parse_file_with, parse_str_with, ModelPaths};
use plugin_api::math::Vec3;
use std::path::Path;

/// The ECM of the first world of `worlds/test/<file>`.
fn load(file: &str) -> Ecm {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../worlds/test").join(file);
    let doc = parse_file_with(&path, &ModelPaths::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
    ecm_of(&doc)
}

fn ecm_of(doc: &sdf::SdfDocument) -> Ecm {
    let mut ecm = Ecm::new();
    create_world(&mut ecm, &doc.worlds[0], doc.entity_count, Levels::Off).unwrap_or_else(|e| panic!("{}", e.message));
    ecm
}

/// The entity named `path` (`model/link/...`) under the world (entity 1).
fn find(ecm: &Ecm, path: &str) -> EntityId {
    let mut at = EntityId(1);
    for name in path.split('/') {
        at = ecm
            .children(at)
            .find(|c| ecm.get::<Name>(*c).is_some_and(|n| n.0 == name))
            .unwrap_or_else(|| panic!("no entity {name} in {path}"));
    }
    at
}

#[track_caller]
fn get<C: Component>(ecm: &Ecm, path: &str) -> C {
    let id = find(ecm, path);
    ecm.get::<C>(id).unwrap_or_else(|| panic!("{path} has no {}", C::NAME))
}

#[test]
fn surfaces_land_on_collisions_with_sdformat_defaults() {
    let ecm = load("surfaces.sdf");
    let d: Surface = get(&ecm, "flags/plain/default_surface");
    assert_eq!((d.mu, d.mu2, d.restitution, d.bounce_threshold, d.collide_bitmask), (1.0, 1.0, 0.0, 100_000.0, 0xffff));
    let ode: Surface = get(&ecm, "flags/plain/ode_surface");
    assert_eq!(
        (ode.mu, ode.mu2, ode.restitution, ode.bounce_threshold, ode.collide_bitmask),
        (0.25, 0.5, 0.75, 0.01, 1)
    );
    let bullet: Surface = get(&ecm, "flags/plain/bullet_surface");
    assert_eq!((bullet.mu, bullet.mu2, bullet.restitution, bullet.collide_bitmask), (0.6, 0.7, 0.0, 6));
    // Visuals have no surface; collisions no material.
    assert!(!ecm.has::<Surface>(find(&ecm, "flags/plain/painted")));
    assert!(!ecm.has::<Material>(find(&ecm, "flags/plain/ode_surface")));
}

#[test]
fn materials_land_on_visuals_that_write_one() {
    let ecm = load("surfaces.sdf");
    let m: Material = get(&ecm, "flags/plain/painted");
    assert_eq!(m.ambient, [0.1, 0.2, 0.3, 1.0]);
    assert_eq!(m.diffuse, [0.4, 0.5, 0.6, 1.0], "three numbers: alpha 1");
    assert_eq!(m.specular, [0.7, 0.8, 0.9, 0.5]);
    assert_eq!(m.emissive, [0.0, 0.0, 1.0, 1.0]);
    assert!(!m.lighting && m.double_sided);
    assert!(!ecm.has::<Material>(find(&ecm, "flags/plain/bare")));
}

#[test]
fn model_and_link_flags_with_inheritance_and_defaults() {
    let ecm = load("surfaces.sdf");
    assert_eq!(get::<SelfCollide>(&ecm, "flags"), SelfCollide(true));
    assert_eq!(get::<WindMode>(&ecm, "flags"), WindMode(true));
    // A link that says nothing takes its model's self_collide and enable_wind.
    assert_eq!(get::<SelfCollide>(&ecm, "flags/plain"), SelfCollide(true));
    assert_eq!(get::<WindMode>(&ecm, "flags/plain"), WindMode(true));
    assert_eq!(get::<GravityEnabled>(&ecm, "flags/plain"), GravityEnabled(true));
    assert_eq!(get::<Kinematic>(&ecm, "flags/plain"), Kinematic(false));
    // A link that says otherwise wins.
    assert_eq!(get::<SelfCollide>(&ecm, "flags/special"), SelfCollide(false));
    assert_eq!(get::<WindMode>(&ecm, "flags/special"), WindMode(false));
    assert_eq!(get::<GravityEnabled>(&ecm, "flags/special"), GravityEnabled(false));
    assert_eq!(get::<Kinematic>(&ecm, "flags/special"), Kinematic(true));
    // Defaults everywhere.
    assert_eq!(get::<SelfCollide>(&ecm, "defaults"), SelfCollide(false));
    assert_eq!(get::<WindMode>(&ecm, "defaults"), WindMode(false));
    assert_eq!(get::<SelfCollide>(&ecm, "defaults/link"), SelfCollide(false));
    assert_eq!(get::<WindMode>(&ecm, "defaults/link"), WindMode(false));
    assert_eq!(get::<GravityEnabled>(&ecm, "defaults/link"), GravityEnabled(true));
    assert_eq!(get::<Kinematic>(&ecm, "defaults/link"), Kinematic(false));
}

#[test]
fn joint_axes_carry_limits_and_dynamics() {
    let ecm = load("surfaces.sdf");
    let a = get::<JointAxis>(&ecm, "flags/hinge").0;
    assert_eq!(a.xyz, Vec3::new(0.0, 1.0, 0.0));
    assert_eq!((a.lower, a.upper, a.effort, a.velocity), (-0.5, 1.5, 30.0, 2.0));
    assert_eq!((a.damping, a.friction, a.spring_reference, a.spring_stiffness), (0.2, 0.3, 0.4, 5.0));
    let d = get::<JointAxis>(&ecm, "flags/slider").0;
    assert_eq!(d.xyz, Vec3::new(0.0, 0.0, 1.0));
    assert_eq!((d.lower, d.upper, d.effort, d.velocity), (-1e16, 1e16, -1.0, -1.0));
    assert_eq!((d.damping, d.friction, d.spring_reference, d.spring_stiffness), (0.0, 0.0, 0.0, 0.0));
    assert!(!ecm.has::<JointAxis2>(find(&ecm, "flags/hinge")));
}

#[test]
fn sensors_are_entities_with_their_settings_and_xml() {
    let ecm = load("surfaces.sdf");
    let imu = find(&ecm, "flags/special/imu");
    assert!(ecm.has::<Sensor>(imu));
    let s: plugin_api::components::SensorSdf = get(&ecm, "flags/special/imu");
    assert_eq!((s.kind.as_str(), s.update_rate, s.always_on, s.topic.as_str()), ("imu", 100.0, true, "/imu/data"));
    assert!(s.xml.starts_with("<sensor ") && s.xml.ends_with("</sensor>"), "{}", s.xml);
    assert!(
        s.xml.contains("<imu><angular_velocity /></imu>") || s.xml.contains("<imu><angular_velocity/></imu>"),
        "{}",
        s.xml
    );
    let q: plugin_api::components::SensorSdf = get(&ecm, "flags/special/quiet");
    assert_eq!((q.kind.as_str(), q.update_rate, q.always_on, q.topic.as_str()), ("altimeter", 0.0, false, ""));
    assert!(!ecm.has::<SensorTopic>(imu), "the sensors system sets the resolved topic");
}

#[test]
fn lights_read_every_child_with_defaults() {
    let ecm = load("surfaces.sdf");
    let s: Light = get(&ecm, "flags/special/spot");
    assert_eq!(s.kind, LightKind::Spot);
    assert!(s.cast_shadows);
    assert_eq!(s.intensity, 2.5);
    assert_eq!((s.diffuse, s.specular), ([0.9, 0.8, 0.7, 1.0], [0.2, 0.3, 0.4, 1.0]));
    assert_eq!(s.direction, Vec3::new(0.0, 1.0, -1.0));
    assert_eq!((s.range, s.attenuation), (20.0, [0.5, 0.25, 0.125]));
    assert_eq!(s.spot, [0.1, 0.6, 1.5]);
    assert!(!s.on && !s.visualize);
    let b: Light = get(&ecm, "flags/special/bulb");
    assert_eq!(b.kind, LightKind::Point);
    assert!(!b.cast_shadows);
    assert_eq!(b.intensity, 1.0);
    assert_eq!((b.diffuse, b.specular), ([1.0; 4], [0.1, 0.1, 0.1, 1.0]));
    assert_eq!(b.direction, Vec3::new(0.0, 0.0, -1.0));
    assert_eq!((b.range, b.attenuation), (10.0, [1.0, 1.0, 0.0]));
    assert_eq!(b.spot, [0.0, 0.0, 0.0]);
    assert!(b.on && b.visualize, "SDFormat's defaults");
}

#[test]
fn world_environment_components() {
    let ecm = load("world_props.sdf");
    let w = EntityId(1);
    let sc = ecm.get::<SphericalCoordinates>(w).unwrap_or_default();
    assert_eq!((sc.surface_model.as_str(), sc.world_frame_orientation.as_str()), ("MOON_SCS", "ENU"));
    assert_eq!((sc.latitude_deg, sc.longitude_deg, sc.elevation, sc.heading_deg), (-35.5, 149.25, 577.5, 12.0));
    assert_eq!(ecm.get::<MagneticField>(w), Some(MagneticField(Vec3::new(1e-5, 2e-5, -3e-5))));
    let a = ecm.get::<Atmosphere>(w).unwrap_or_default();
    assert_eq!(
        (a.kind.as_str(), a.temperature, a.pressure, a.temperature_gradient),
        ("adiabatic", 300.0, 90000.0, -0.005)
    );
    assert_eq!(ecm.get::<WindVelocity>(w), Some(WindVelocity(Vec3::new(3.0, -1.0, 0.5))));
    let s = ecm.get::<Scene>(w).unwrap_or_default();
    assert_eq!((s.ambient, s.background), ([0.1, 0.1, 0.1, 1.0], [0.0, 0.0, 0.2, 1.0]));
    assert!(!s.shadows && !s.grid && !s.origin_visual);
}

#[test]
fn world_environment_defaults_are_sdformats() {
    let doc = parse_str_with("<sdf version='1.11'><world name='w'/></sdf>", "w.sdf", &ModelPaths::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let ecm = ecm_of(&doc);
    let w = EntityId(1);
    let sc = ecm.get::<SphericalCoordinates>(w).unwrap_or_default();
    assert_eq!((sc.surface_model.as_str(), sc.world_frame_orientation.as_str()), ("EARTH_WGS84", "ENU"));
    assert_eq!((sc.latitude_deg, sc.longitude_deg, sc.elevation, sc.heading_deg), (0.0, 0.0, 0.0, 0.0));
    assert_eq!(ecm.get::<MagneticField>(w), Some(MagneticField(Vec3::new(5.5645e-6, 22.8758e-6, -42.3884e-6))));
    let a = ecm.get::<Atmosphere>(w).unwrap_or_default();
    assert_eq!(
        (a.kind.as_str(), a.temperature, a.pressure, a.temperature_gradient),
        ("adiabatic", 288.15, 101325.0, -0.0065)
    );
    assert_eq!(ecm.get::<WindVelocity>(w), Some(WindVelocity(Vec3::ZERO)));
    let s = ecm.get::<Scene>(w).unwrap_or_default();
    assert_eq!((s.ambient, s.background), ([0.4, 0.4, 0.4, 1.0], [0.7, 0.7, 0.7, 1.0]));
    assert!(s.shadows && s.grid && s.origin_visual);
}

#[test]
fn bad_environment_values_are_errors_with_line() {
    let bad = |body: &str| {
        let text = format!("<sdf version='1.11'><world name='w'>\n{body}</world></sdf>");
        parse_str_with(&text, "bad.sdf", &ModelPaths::default())
            .map(|_| ())
            .map_err(|e| e.to_string())
            .err()
            .unwrap_or_default()
    };
    assert_eq!(
        bad("<spherical_coordinates><surface_model>MARS</surface_model></spherical_coordinates>"),
        "bad.sdf:2: unknown <surface_model> \"MARS\" (expected one of EARTH_WGS84, MOON_SCS, CUSTOM_SURFACE)"
    );
    assert_eq!(
        bad("<atmosphere type='isothermal'/>"),
        "bad.sdf:2: unknown <atmosphere type=\"isothermal\"> (SDFormat defines only adiabatic)"
    );
    assert_eq!(
        bad("<magnetic_field>1 2</magnetic_field>"),
        "bad.sdf:2: <magnetic_field> needs three numbers, found \"1 2\""
    );
    assert_eq!(
        bad("<model name='m'><link name='l'><collision name='c'><surface><contact>\
             <collide_bitmask>-1</collide_bitmask></contact></surface></collision></link></model>"),
        "bad.sdf:2: <collide_bitmask> needs an unsigned integer (decimal or 0x hex), found \"-1\""
    );
}

const LEVELS: &str = r#"<sdf version="1.9"><world name="w">
  <light name="sun" type="directional"/>
  <model name="robot"><link name="l"><collision name="c"><geometry><box/></geometry></collision></link></model>
  <model name="inside"><link name="l"><visual name="v"><geometry><box/></geometry></visual></link>
    <plugin filename="some_lib" name="some::System"/></model>
  <model name="global"><link name="l"/></model>
  <plugin name="gz::sim" filename="dummy">
    <performer name="p"><ref>robot</ref></performer>
    <level name="lv"><pose>1 2 3 0 0 0</pose><geometry><box><size>4 5 6</size></box></geometry>
      <buffer>0.5</buffer><ref>inside</ref><ref>sun</ref></level>
  </plugin>
</world></sdf>"#;

#[test]
fn levels_on_creates_the_default_level_and_performers_only() {
    let doc = parse_str_with(LEVELS, "levels.sdf", &ModelPaths::default()).unwrap();
    let w = &doc.worlds[0];
    let mut ecm = Ecm::new();
    let (_, plugins) = create_world(&mut ecm, w, doc.entity_count, Levels::On).unwrap();
    let top: Vec<String> = ecm.children(EntityId(1)).filter_map(|e| ecm.get::<Name>(e).map(|n| n.0)).collect();
    assert_eq!(top, ["robot", "global", "lv", "default"], "no sun, no inside; the performer is below its model");
    assert!(plugins.is_empty(), "inside's system waits for its level");
    let lv = find(&ecm, "lv");
    assert_eq!(lv.0, w.levels[0].ordinal);
    assert_eq!(ecm.get::<LevelEntityNames>(lv).unwrap().0, ["inside", "sun"]);
    assert_eq!(ecm.get::<LevelBuffer>(lv), Some(LevelBuffer(0.5)));
    assert_eq!(ecm.get::<Geometry>(lv), Some(Geometry::Box { size: Vec3::new(4.0, 5.0, 6.0) }));
    assert_eq!(ecm.get::<LevelLoaded>(lv), Some(LevelLoaded(false)));
    let default = find(&ecm, "default");
    assert_eq!(default.0, doc.entity_count + 1, "the first run-time id");
    assert!(ecm.get::<DefaultLevel>(default).is_some());
    assert_eq!(ecm.get::<LevelEntityNames>(default).unwrap().0, ["global", "robot"]);
    // The performer hangs below its model.
    let p = EntityId(w.performers[0].ordinal);
    assert_eq!(ecm.parent(p), Some(find(&ecm, "robot")));
    assert_eq!(ecm.get::<PerformerRef>(p), Some(PerformerRef("robot".into())));

    // Loading "inside" by name gives it its file ids and its system; twice is refused.
    let (top, plugins) = create_world_entity(&mut ecm, w, "inside").unwrap();
    assert_eq!(top.0, w.models[1].ordinal);
    assert_eq!(ecm.children(top).next().map(|l| l.0), Some(w.models[1].links[0].ordinal));
    assert_eq!(plugins.len(), 1);
    assert!(create_world_entity(&mut ecm, w, "inside").unwrap_err().contains("loaded already"));
    assert!(create_world_entity(&mut ecm, w, "nope")
        .unwrap_err()
        .contains("no top-level model, light or joint named \"nope\""));
    let (sun, _) = create_world_entity(&mut ecm, w, "sun").unwrap();
    assert_eq!(sun.0, w.lights[0].ordinal);
}

#[test]
fn levels_off_creates_everything_and_marks_levels_loaded() {
    let doc = parse_str_with(LEVELS, "levels.sdf", &ModelPaths::default()).unwrap();
    let ecm = ecm_of(&doc);
    for name in ["sun", "robot", "inside", "global"] {
        find(&ecm, name);
    }
    assert_eq!(ecm.get::<LevelLoaded>(find(&ecm, "lv")), Some(LevelLoaded(true)));
}
