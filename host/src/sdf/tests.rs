//! Tests on inline documents: ordinals, values, warnings and error messages.

use super::*;
use crate::xml::{read, walk};
use plugin_api::components::{Geometry, JointType, LightKind};

fn parse(text: &str) -> SdfDocument {
    match parse_str(text, "t.sdf") {
        Ok(d) => d,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

fn error(text: &str) -> String {
    match parse_str(text, "bad.sdf") {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

const ORDINALS: &str = r#"<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <gui><plugin name="g" filename="gui"/></gui>
    <light name="sun" type="directional"/>
    <model name="m">
      <link name="l">
        <visual name="v"><geometry><box><size>1 1 1</size></box></geometry></visual>
        <collision name="c"><geometry><sphere/></geometry></collision>
        <sensor name="s" type="imu"><plugin name="p" filename="f"/></sensor>
      </link>
      <joint name="j" type="revolute">
        <parent>world</parent><child>l</child>
        <sensor name="ft" type="force_torque"/>
      </joint>
      <model name="inner">
        <link name="il"/>
      </model>
    </model>
    <actor name="a"><link name="not_numbered"/></actor>
    <plugin name="gz::sim" filename="dummy">
      <performer name="p1"><ref>m</ref></performer>
      <level name="lv1"><geometry><box><size>1 1 1</size></box></geometry></level>
      <performer name="p2"><ref>last</ref><geometry><box/></geometry></performer>
    </plugin>
    <model name="last"/>
    <plugin name="gz::sim::systems::Physics" filename="gz-sim-physics-system"/>
  </world>
</sdf>
"#;

#[test]
fn ordinals_follow_document_order() {
    let d = parse(ORDINALS);
    let w = &d.worlds[0];
    assert_eq!(w.ordinal, 1);
    assert_eq!(w.lights[0].ordinal, 2);
    let m = &w.models[0];
    assert_eq!(m.ordinal, 3);
    let l = &m.links[0];
    assert_eq!(l.ordinal, 4);
    assert_eq!(l.visuals[0].ordinal, 5, "visual written before the collision");
    assert_eq!(l.collisions[0].ordinal, 6);
    assert_eq!(l.sensors[0].ordinal, 7);
    assert_eq!(m.joints[0].ordinal, 8);
    assert_eq!(m.joints[0].sensors[0].ordinal, 9);
    assert_eq!(m.models[0].ordinal, 10);
    assert_eq!(m.models[0].links[0].ordinal, 11);
    let perf: Vec<_> = w.performers.iter().map(|p| (p.name.as_str(), p.ordinal)).collect();
    assert_eq!(perf, [("p1", 12), ("p2", 14)]);
    assert_eq!(w.levels[0].name, "lv1");
    assert_eq!(w.levels[0].ordinal, 13);
    assert_eq!(w.models[1].ordinal, 15);
    assert_eq!(d.entity_count, 15);
    // The levels plugin and <gui> plugins are not systems.
    let names: Vec<_> = w.plugins.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["gz::sim::systems::Physics"]);
    assert_eq!(w.levels_plugin.as_ref().map(|p| p.name.as_str()), Some("gz::sim"));
    assert_eq!(l.sensors[0].plugins[0].name, "p");
    assert_eq!(m.joints[0].kind, JointType::Revolute);
    assert_eq!(w.lights[0].light.kind, LightKind::Directional);
    // Unsupported elements are warned about with their line; nothing else warns.
    assert_eq!(d.warnings, ["t.sdf:20: <actor> is not supported yet, ignored"]);
}

/// Elements of `text` in depth-first order with their line and column.
fn element_positions(text: &str) -> Vec<(String, u32, u32)> {
    let doc = read(text).unwrap_or_else(|e| panic!("{}: {}", e.pos.line, e.message));
    assert!(doc.exact, "the start tag scan disagrees with xml-rs on {text:?}");
    let mut order = Vec::new();
    walk(&doc.root, &mut order);
    order.iter().map(|e| (e.name.clone(), doc.pos(e).line, doc.pos(e).column)).collect()
}

#[test]
fn positions_match_depth_first_order() {
    let text = "<?xml version=\"1.0\"?>\n<!DOCTYPE a [ <!ENTITY e \"<z>\"> ]>\n<!-- <fake/> -->\n<a>\n  \
                <b><![CDATA[<c/>]]></b>\n  <c x=\">\" y='-->'/><d>\n<e/></d>\n  <?pi <f/>?>\n  \
                <!-- <g/> --><f/>\n</a>\n";
    let expect = [("a", 4, 1), ("b", 5, 3), ("c", 6, 3), ("d", 6, 21), ("e", 7, 1), ("f", 9, 16)];
    let got = element_positions(text);
    assert_eq!(got, expect.map(|(n, l, c)| (n.to_string(), l, c)));
    // No XML declaration, a comment first: xml-rs itself would misplace these.
    let got = element_positions("<!-- c -->\n<r a='1'><x/><!-- y --><y/></r>");
    assert_eq!(got, [("r", 2, 1), ("x", 2, 10), ("y", 2, 24)].map(|(n, l, c)| (n.into(), l, c)));
    // Undeclared prefixes get a declaration on the root tag; positions stay those of the text.
    let got = element_positions("<r a='1'><gz:x/><y/></r>");
    assert_eq!(got, [("r", 1, 1), ("x", 1, 10), ("y", 1, 17)].map(|(n, l, c)| (n.into(), l, c)));
    let e = error("<sdf version='1.6'><gz:x/><y>");
    assert_eq!(e, "bad.sdf:1:30: malformed XML: unexpected end of document: <y> opened at line 1 is not closed");
}

#[test]
fn values_and_defaults() {
    let d = parse(
        r#"<sdf version="1.11"><world name="w">
        <physics name="p" type="bullet"><max_step_size>0.004</max_step_size></physics>
        <gravity>0 0 -1</gravity>
        <model name="m"><static>1</static>
          <pose degrees="true">1 2 3 0 0 90</pose>
          <link name="l">
            <inertial><mass>2</mass><inertia><ixx>3</ixx></inertia></inertial>
            <collision name="c"><pose rotation_format="quat_xyzw">0 0 0 0 0 1 0</pose>
              <geometry><cylinder><radius>0.5</radius></cylinder></geometry></collision>
            <visual name="v"><pose/><geometry><mesh><uri>m.dae</uri>
              <submesh><name>s</name></submesh></mesh></geometry></visual>
            <collision name="p"><geometry><plane><size>5 6</size></plane></geometry></collision>
            <light name="lamp" type="spot"><diffuse>0.5 0.5 0.5</diffuse>
              <spot><falloff>2</falloff></spot></light>
          </link>
          <joint name="j" type="universal"><parent>l</parent><child>l</child>
            <axis><xyz>1 0 0</xyz><limit><lower>-1</lower></limit></axis>
            <axis2><dynamics><damping>0.3</damping></dynamics></axis2></joint>
        </model>
        <gz:policies><include_server_config_plugins>false</include_server_config_plugins></gz:policies>
        </world></sdf>"#,
    );
    let w = &d.worlds[0];
    assert_eq!((w.physics.name.as_str(), w.physics.engine.as_str()), ("p", "bullet"));
    assert_eq!((w.physics.max_step_size, w.physics.real_time_factor), (0.004, 1.0));
    assert_eq!(w.physics.max_contacts, 20);
    assert_eq!(w.gravity.z, -1.0);
    assert!(!w.include_server_config_plugins);
    let m = &w.models[0];
    assert!(m.is_static);
    let [_, _, yaw] = m.pose.rotation.to_rpy();
    assert!((yaw - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
    let l = &m.links[0];
    assert_eq!(l.inertial.mass, 2.0);
    assert_eq!(l.inertial.inertia, [3.0, 0.0, 0.0, 1.0, 0.0, 1.0]);
    assert_eq!(l.collisions[0].geometry, Geometry::Cylinder { radius: 0.5, length: 1.0 });
    assert!((l.collisions[0].pose.rotation.z - 1.0).abs() < 1e-12, "quat_xyzw: qz = 1");
    let mesh =
        Geometry::Mesh { uri: "m.dae".into(), scale: plugin_api::math::Vec3::new(1.0, 1.0, 1.0), submesh: "s".into() };
    assert_eq!(l.visuals[0].geometry, mesh);
    assert!(matches!(l.collisions[1].geometry, Geometry::Plane { size: [5.0, 6.0], .. }));
    let lamp = &l.lights[0].light;
    assert_eq!(lamp.diffuse, [0.5, 0.5, 0.5, 1.0]);
    assert_eq!(lamp.spot, [0.0, 0.0, 2.0]);
    assert_eq!(lamp.attenuation, [1.0, 1.0, 0.0], "SDFormat's linear default is 1");
    let j = &m.joints[0];
    let (a1, a2) = (j.axis.unwrap_or_default(), j.axis2.unwrap_or_default());
    assert_eq!((a1.xyz.x, a1.lower, a1.upper, a1.effort), (1.0, -1.0, 1e16, -1.0));
    assert_eq!((a2.xyz.z, a2.damping), (1.0, 0.3));
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
}

#[test]
fn unknown_elements_and_unsupported_features_warn() {
    let d = parse(
        "<sdf version='1.6'>\n<world name='w'>\n<foo/>\n<model name='m'>\n<link name='l'>\n\
         <visual name='v'><geometry><heightmap/></geometry>\n<plugin name='x' filename='y'/>\
         </visual>\n<bar/>\n</link><pose frame='other'>1 0 0 0 0 0</pose></model>\n\
         <gz:custom/>\n</world></sdf>",
    );
    assert_eq!(
        d.warnings,
        [
            "t.sdf:3: unknown element <foo> in <world>, ignored",
            "t.sdf:6: <heightmap> geometry is not supported yet; it is empty",
            "t.sdf:7: <plugin> in <visual> (a visual plugin) is ignored",
            "t.sdf:8: unknown element <bar> in <link>, ignored",
            "t.sdf:9: <pose frame> (SDFormat 1.5/1.6) is not supported; the pose is taken \
             relative to the default frame (use relative_to)",
        ]
    );
    assert_eq!(d.worlds[0].models[0].pose.position.x, 1.0);
}

#[test]
fn snippets_fill_top_level_lists() {
    let d = parse("<sdf version='1.8'><model name='a'><link name='l'/></model><light name='s'/></sdf>");
    assert!(d.worlds.is_empty());
    assert_eq!((d.models[0].ordinal, d.models[0].links[0].ordinal, d.lights[0].ordinal), (1, 2, 3));
    assert_eq!(d.entity_count, 3);
    let bare = parse("<model name='b'><pose>1 2 3 0 0 0</pose></model>");
    assert_eq!(bare.models[0].pose.position.y, 2.0);
}

#[test]
fn plugin_xml_is_the_whole_element() {
    let d = parse(
        "<sdf version='1.6'><world name='w'><plugin name='n' filename='f'>\
         <gz:system_priority>3</gz:system_priority><a b='1 &amp; 2'>x &lt; y</a></plugin>\
         </world></sdf>",
    );
    let xml = &d.worlds[0].plugins[0].xml;
    assert!(xml.starts_with("<plugin xmlns:gz="), "{xml}");
    assert!(
        xml.ends_with(
            " filename=\"f\" name=\"n\"><gz:system_priority>3</gz:system_priority>\
         <a b=\"1 &amp; 2\">x &lt; y</a></plugin>"
        ),
        "{xml}"
    );
    let again = read(xml).map_err(|e| e.message);
    assert_eq!(again.map(|d| d.root.name.clone()), Ok("plugin".to_string()));
}

#[test]
fn malformed_xml_names_line_and_column() {
    let e = error("<sdf version='1.6'>\n  <world name='w'>\n    <model name='m'>\n  </world>\n</sdf>");
    assert!(e.starts_with("bad.sdf:4:"), "{e}");
    assert!(e.contains("malformed XML"), "{e}");
    let e = error("<sdf version='1.6'>\n  <world name='w'>\n    <model name='m'>\n");
    assert!(e.starts_with("bad.sdf:4:1: malformed XML: unexpected end of document"), "{e}");
    assert!(e.contains("<model> opened at line 3 is not closed"), "{e}");
}

#[test]
fn bad_number_names_line_element_and_text() {
    let e = error(
        "<sdf version='1.6'><world name='w'>\n<model name='m'>\n<pose>1 2 x 0 0 0</pose>\n\
         </model></world></sdf>",
    );
    assert_eq!(e, "bad.sdf:3: <pose>: \"x\" is not a number (in \"1 2 x 0 0 0\")");
    let e = error(
        "<sdf version='1.6'><model name='m'><link name='l'><collision name='c'><geometry>\n\
         <box><size>1 2</size></box></geometry></collision></link></model></sdf>",
    );
    assert_eq!(e, "bad.sdf:2: <box> needs a <size> of three numbers, found \"1 2\"");
}

/// A NaN or infinite pose or gravity would spread through the physics: an error at load.
#[test]
fn non_finite_pose_and_gravity_are_errors() {
    let e = error(
        "<sdf version='1.6'><world name='w'>\n<model name='m'>\n<pose>nan 0 0 0 0 0</pose></model></world></sdf>",
    );
    assert_eq!(e, "bad.sdf:3: <pose>: \"nan\" is not a finite number (in \"nan 0 0 0 0 0\")");
    let e = error(
        "<sdf version='1.6'><model name='m'><link name='l'>\n\n<pose rotation_format='quat_xyzw'>0 inf 0 0 0 0 1</pose>\
         </link></model></sdf>",
    );
    assert_eq!(e, "bad.sdf:3: <pose>: \"inf\" is not a finite number (in \"0 inf 0 0 0 0 1\")");
    let e = error("<sdf version='1.6'><world name='w'>\n<gravity>0 0 NaN</gravity></world></sdf>");
    assert_eq!(e, "bad.sdf:2: <gravity>: \"NaN\" is not a finite number (in \"0 0 NaN\")");
}

/// The clock steps by `<max_step_size>`: one that would overflow it (1e300) or stand still
/// (below 1 ns) is an error at load, as is a real-time factor that cannot pace a run.
#[test]
fn out_of_range_physics_is_an_error() {
    let physics =
        |inner: &str| format!("<sdf version='1.6'><world name='w'>\n<physics>\n{inner}</physics></world></sdf>");
    for bad in ["1e300", "0", "-0.001", "1e-12", "nan", "inf"] {
        let e = error(&physics(&format!("<max_step_size>{bad}</max_step_size>")));
        assert!(e.starts_with("bad.sdf:3: <max_step_size>: max_step_size "), "{bad}: {e}");
        assert!(e.contains("out of range"), "{bad}: {e}");
    }
    for bad in ["-1", "nan", "inf"] {
        let e = error(&physics(&format!("<real_time_factor>{bad}</real_time_factor>")));
        assert!(e.starts_with("bad.sdf:3: <real_time_factor>: real_time_factor "), "{bad}: {e}");
    }
    let d = parse(&physics("<max_step_size>86400</max_step_size><real_time_factor>0</real_time_factor>"));
    assert_eq!((d.worlds[0].physics.max_step_size, d.worlds[0].physics.real_time_factor), (86400.0, 0.0));
}

#[test]
fn unknown_joint_type_is_an_error() {
    let e = error(
        "<sdf version='1.6'><model name='m'>\n\n<joint name='j' type='hinge'>\
         <parent>a</parent><child>b</child></joint></model></sdf>",
    );
    assert!(e.starts_with("bad.sdf:3: unknown joint type \"hinge\""), "{e}");
    let e = error("<sdf version='1.6'><light name='l' type='area'/></sdf>");
    assert!(e.starts_with("bad.sdf:1: unknown light type \"area\""), "{e}");
}

#[test]
fn missing_sdf_root_and_missing_file() {
    let e = error("<?xml version='1.0'?>\n<world name='w'/>");
    assert_eq!(e, "bad.sdf:2: expected the root element <sdf>, found <world>");
    let e = error("");
    assert!(e.starts_with("bad.sdf:1:1: malformed XML"), "{e}");
    let path = std::path::Path::new("/nonexistent/troupe/missing.sdf");
    let e = parse_file(path).map(|_| ()).map_err(|e| e.to_string());
    let e = e.err().unwrap_or_default();
    assert!(e.starts_with("/nonexistent/troupe/missing.sdf: cannot read the file: "), "{e}");
    assert!(e.contains("No such file"), "{e}");
}

#[test]
fn missing_plugin_attribute_is_an_error() {
    let e = error("<sdf version='1.6'><world name='w'>\n<plugin name='x'/></world></sdf>");
    assert_eq!(e, "bad.sdf:2: <plugin> needs a `filename` attribute");
}

#[test]
fn garbage_never_panics() {
    let inputs = [
        "<",
        "<sdf",
        "<sdf version='1.6'><world/></sdf>",
        "<a:b/>",
        "<sdf><world name='w'>\
         <model name='m'><link name='l'><inertial><mass>nan</mass></inertial></link></model>\
         </world></sdf>",
        "\u{feff}<sdf version='1.6'/>",
        "<x:sdf xmlns:x='u'/>",
        "<sdf version='1.6' \
         x:y='1'/>",
        "<!-- c",
        "<sdf version='1.6'><world name='w'><gravity>1e999 0</gravity>\
         </world></sdf>",
        "<sdf\u{e9}/>",
    ];
    for i in inputs {
        let _ = parse_str(i, "g.sdf");
    }
    let deep = "<a>".repeat(100_000);
    let e = parse_str(&deep, "deep.sdf").map(|_| ()).map_err(|e| e.to_string());
    assert_eq!(e, Err("deep.sdf:1:769: malformed XML: elements are nested more than 256 deep".into()));
    // Every prefix of a real document fails cleanly.
    for n in 0..ORDINALS.len() {
        if ORDINALS.is_char_boundary(n) {
            let _ = parse_str(&ORDINALS[..n], "g.sdf");
        }
    }
}

#[test]
fn misplaced_repeated_and_ambiguous_elements_warn() {
    let d = parse(
        "<sdf version='1.11'><world name='w'>\n<wind/>\n<wind/>\n<model name='m'>\n\
         <kinematic>true</kinematic>\n<link name='x'>\n<visual name='v'><surface/><geometry/></visual>\n\
         <collision name='c'><material/><geometry/></collision></link>\n<frame name='x'/>\n\
         <joint name='x' type='fixed'><parent>x</parent><child>x</child></joint></model></world></sdf>",
    );
    assert_eq!(
        d.warnings,
        [
            "t.sdf:3: a second <wind> in <world> is ignored",
            "t.sdf:5: <kinematic> is a <link> element in SDFormat; ignored on a <model>",
            "t.sdf:7: <surface> in <visual> is ignored",
            "t.sdf:8: <material> in <collision> is ignored",
            // Links win a clash with joints and frames, whatever the order.
            "t.sdf:10: <joint name=\"x\"> has the name of <link name=\"x\"> (t.sdf:6) in model \"m\"; \
             the name refers to the <link name=\"x\">",
            "t.sdf:9: <frame name=\"x\"> has the name of <link name=\"x\"> (t.sdf:6) in model \"m\"; \
             the name refers to the <link name=\"x\">",
        ]
    );
}
