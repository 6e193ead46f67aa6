//! Frame semantics: `relative_to`, `<frame attached_to>`, scoped names, and their errors.
//! Expected poses are computed by hand (the comments of `worlds/test/frames.sdf` show how).

use super::*;
use plugin_api::math::{Pose, Quat};
use std::f64::consts::{FRAC_PI_2, PI};
use std::path::Path;

fn parse(text: &str) -> SdfDocument {
    parse_str_with(text, "t.sdf", &ModelPaths::default()).unwrap_or_else(|e| panic!("unexpected error: {e}"))
}

fn error(text: &str) -> String {
    match parse_str_with(text, "bad.sdf", &ModelPaths::default()) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// `pose` is `x y z roll pitch yaw` (the rotation compared as a quaternion, either sign).
#[track_caller]
fn assert_pose(what: &str, pose: Pose, expected: [f64; 6]) {
    let [x, y, z, r, p, yaw] = expected;
    let q = Quat::from_rpy(r, p, yaw);
    let d = pose.position;
    let close = (d.x - x).abs() < 1e-9 && (d.y - y).abs() < 1e-9 && (d.z - z).abs() < 1e-9;
    let rot = pose.rotation;
    let dot = rot.w * q.w + rot.x * q.x + rot.y * q.y + rot.z * q.z;
    assert!(close && dot.abs() > 1.0 - 1e-9, "{what}: got {pose:?}, expected {expected:?}");
}

#[test]
fn frames_world_resolves_every_kind_of_element() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../worlds/test/frames.sdf");
    let d = parse_file_with(&path, &ModelPaths::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    let w = &d.worlds[0];
    assert_pose("lamp", w.lights[0].pose, [10.0, 1.0, 2.0, 0.0, 0.0, PI]);
    let robot = &w.models[0];
    assert_pose("robot", robot.pose, [10.0, 1.0, 0.0, 0.0, 0.0, PI]);
    let link = |n: &str| robot.links.iter().find(|l| l.name == n).unwrap_or_else(|| panic!("no link {n}"));
    let joint = |n: &str| robot.joints.iter().find(|j| j.name == n).unwrap_or_else(|| panic!("no joint {n}"));
    let base = link("base");
    assert_pose("base", base.pose, [0.0, 0.0, 0.1, 0.0, 0.0, 0.0]);
    assert_pose("base_collision", base.collisions[0].pose, [0.0, 0.0, 0.5, 0.0, 0.0, 0.0]);
    assert_pose("base_visual", base.visuals[0].pose, [1.0, 0.0, -0.1, 0.0, 0.0, 0.0]);
    assert_pose("imu", base.sensors[0].pose, [0.0, 0.0, 1.5, FRAC_PI_2, 0.0, 0.0]);
    assert_pose("arm", link("arm").pose, [0.0, 0.0, 0.6, FRAC_PI_2, 0.0, 0.0]);
    assert_pose("shoulder", joint("shoulder").pose, [0.0, 0.0, 0.2, 0.0, 0.0, 0.0]);
    assert_pose("elbow", joint("elbow").pose, [0.0, 0.5, 0.0, -FRAC_PI_2, 0.0, 0.0]);
    let gripper = &robot.models[0];
    assert_pose("gripper", gripper.pose, [0.0, -0.3, 0.6, FRAC_PI_2, 0.0, 0.0]);
    assert_pose("finger", gripper.links[0].pose, [0.1, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert_pose("tool", link("tool").pose, [0.1, -0.35, 0.6, 0.0, 0.0, 0.0]);
    assert_pose("wrist", joint("wrist").pose, [0.0; 6]);
    assert_pose("tool_mount", joint("tool_mount").pose, [-0.1, 0.05, 0.0, FRAC_PI_2, 0.0, 0.0]);
    assert_pose("marker", w.models[1].pose, [10.0, 2.0, 0.6, FRAC_PI_2, 0.0, PI]);
    // Frames keep their pose in the enclosing model frame (or the world).
    let frame = |n: &str| robot.frames.iter().find(|f| f.name == n).map(|f| f.pose);
    assert_pose("mount", frame("mount").unwrap_or_default(), [0.0, 0.0, 0.6, 0.0, 0.0, 0.0]);
    assert_pose("tip", frame("tip").unwrap_or_default(), [0.1, -0.35, 0.6, FRAC_PI_2, 0.0, 0.0]);
    assert_pose("site", w.frames[0].pose, [10.0, 0.0, 0.0, 0.0, 0.0, FRAC_PI_2]);
    assert_pose("on_arm", w.frames[1].pose, [10.0, 2.0, 0.6, FRAC_PI_2, 0.0, PI]);
    // The pose as written is kept next to the resolved one.
    assert_eq!(link("tool").raw_pose.relative_to, "tip");
    assert_eq!(link("tool").raw_pose.origin.line, 82);
    // Frames are not entities: 1 world, lamp, robot, base + 3, arm, 2 joints, gripper,
    // finger, tool, 2 joints, marker, body.
    assert_eq!(d.entity_count, 17);
}

#[test]
fn poses_in_the_default_frame_are_kept_exactly() {
    let d = parse(
        "<sdf version='1.9'><world name='w'><model name='m'><pose>0.1 0.2 0.3 0.4 0.5 0.6</pose>\
         <link name='l'><pose>1.1 2.2 3.3 0.3 0.2 0.1</pose></link></model></world></sdf>",
    );
    let m = &d.worlds[0].models[0];
    assert_eq!(m.pose, Pose::from_xyz_rpy(0.1, 0.2, 0.3, 0.4, 0.5, 0.6));
    assert_eq!(m.links[0].pose, Pose::from_xyz_rpy(1.1, 2.2, 3.3, 0.3, 0.2, 0.1));
}

#[test]
fn relative_to_the_default_frame_by_name_gives_the_same_pose() {
    let d = parse(
        "<sdf version='1.9'><model name='m'><link name='a'><pose>1 0 0 0 0 0.5</pose></link>\
         <link name='b'><pose relative_to='__model__'>0 2 0 0 0 0</pose>\
         <collision name='c'><pose relative_to='b'>0 0 3 0 0 0</pose></collision></link></model></sdf>",
    );
    let b = &d.models[0].links[1];
    assert_pose("b", b.pose, [0.0, 2.0, 0.0, 0.0, 0.0, 0.0]);
    assert_pose("c", b.collisions[0].pose, [0.0, 0.0, 3.0, 0.0, 0.0, 0.0]);
}

#[test]
fn unknown_frame_names_are_errors_with_element_name_and_line() {
    let e = error(
        "<sdf version='1.9'><world name='w'>\n<model name='m'>\n<link name='l'>\n\
         <pose relative_to='nowhere'>1 0 0 0 0 0</pose></link></model></world></sdf>",
    );
    assert_eq!(
        e,
        "bad.sdf:4: <link name=\"l\"> has <pose relative_to=\"nowhere\">, but model \"m\" has no \
         frame named \"nowhere\" (it has: __model__, l)"
    );
    // `world` is not a frame inside a model.
    let e = error(
        "<sdf version='1.9'><world name='w'><model name='m'>\n<frame name='f' attached_to='world'/>\
         </model></world></sdf>",
    );
    assert!(
        e.starts_with(
            "bad.sdf:2: <frame name=\"f\"> has attached_to=\"world\", but model \"m\" has no frame named \"world\""
        ),
        "{e}"
    );
    let e = error(
        "<sdf version='1.9'><model name='m'><link name='l'/>\n<joint name='j' type='fixed'>\
         <parent>l</parent><child>ghost</child></joint></model></sdf>",
    );
    assert!(
        e.starts_with(
            "bad.sdf:2: <joint name=\"j\"> has <child>ghost</child>, but model \"m\" has no frame named \"ghost\""
        ),
        "{e}"
    );
    // A scoped name into a nested model that lacks the frame.
    let e = error(
        "<sdf version='1.9'><model name='m'><model name='n'><link name='a'/></model>\n\
         <link name='l'><pose relative_to='n::b'/></link></model></sdf>",
    );
    assert!(e.starts_with("bad.sdf:2: <link name=\"l\"> has <pose relative_to=\"n::b\">"), "{e}");
}

#[test]
fn cycles_are_errors_naming_the_frames() {
    let e = error(
        "<sdf version='1.9'><model name='m'>\n<link name='a'><pose relative_to='b'/></link>\n\
         <link name='b'><pose relative_to='a'/></link></model></sdf>",
    );
    assert_eq!(
        e,
        "bad.sdf:2: <link name=\"a\"> is relative_to a cycle of frames: <link name=\"a\"> -> \
         <link name=\"b\"> -> <link name=\"a\">"
    );
    let e = error("<sdf version='1.9'><model name='m'>\n<link name='a'><pose relative_to='a'/></link></model></sdf>");
    assert!(e.starts_with("bad.sdf:2: <link name=\"a\"> is relative_to a cycle"), "{e}");
    // Frames attached to each other form a cycle whatever their poses say.
    let e = error(
        "<sdf version='1.9'><model name='m'><link name='l'/>\n<frame name='f' attached_to='g'>\
         <pose relative_to='l'/></frame>\n<frame name='g' attached_to='f'><pose relative_to='l'/>\
         </frame></model></sdf>",
    );
    assert_eq!(
        e,
        "bad.sdf:2: <frame name=\"f\"> is attached_to a cycle of frames: <frame name=\"f\"> -> \
         <frame name=\"g\"> -> <frame name=\"f\">"
    );
}

#[test]
fn placement_frame_warns_with_file_and_line() {
    let d = parse(
        "<sdf version='1.9'><world name='w'>\n<model name='m' placement_frame='l'>\
         <link name='l'/></model></world></sdf>",
    );
    assert_eq!(d.warnings, ["t.sdf:2: <model placement_frame> is not supported yet; the pose places the model frame"]);
}

#[test]
fn joint_axes_written_in_other_frames_are_stored_in_the_joint_frame() {
    // The joint frame is the child link's: turned 90 degrees about z in the model. A vector
    // written in the model frame is turned by -90 degrees into it: x -> -y, y -> x.
    let d = parse(
        "<sdf version='1.9'><model name='m'><link name='base'/>\
         <link name='arm'><pose>1 2 3 0 0 1.5707963267948966</pose></link>\
         <joint name='u' type='universal'><parent>base</parent><child>arm</child>\
           <axis><xyz expressed_in='__model__'>1 0 0</xyz></axis>\
           <axis2><xyz expressed_in='base'>0 1 0</xyz></axis2></joint>\
         <joint name='old' type='revolute'><parent>base</parent><child>arm</child>\
           <axis><use_parent_model_frame>true</use_parent_model_frame><xyz>0 1 0</xyz></axis></joint>\
         <joint name='plain' type='revolute'><parent>base</parent><child>arm</child>\
           <axis><xyz>0.6 0 0.8</xyz></axis></joint></model></sdf>",
    );
    let m = &d.models[0];
    let close = |v: plugin_api::math::Vec3, e: [f64; 3]| {
        (v.x - e[0]).abs() < 1e-12 && (v.y - e[1]).abs() < 1e-12 && (v.z - e[2]).abs() < 1e-12
    };
    let xyz = |j: usize, second: bool| {
        let a = if second { m.joints[j].axis2 } else { m.joints[j].axis };
        a.map(|a| a.xyz).unwrap_or_default()
    };
    assert!(close(xyz(0, false), [0.0, -1.0, 0.0]), "{:?}", xyz(0, false));
    assert!(close(xyz(0, true), [1.0, 0.0, 0.0]), "{:?}", xyz(0, true));
    assert!(close(xyz(1, false), [1.0, 0.0, 0.0]), "use_parent_model_frame: {:?}", xyz(1, false));
    assert_eq!(xyz(2, false), plugin_api::math::Vec3::new(0.6, 0.0, 0.8), "the joint frame: kept exactly");
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    let e = error(
        "<sdf version='1.9'><model name='m'><link name='l'/>\n<joint name='j' type='revolute'>\
         <parent>l</parent><child>l</child><axis><xyz expressed_in='nope'>1 0 0</xyz></axis>\
         </joint></model></sdf>",
    );
    assert!(e.starts_with("bad.sdf:2: <joint name=\"j\"> has an axis <xyz expressed_in=\"nope\">, but model \"m\" has no frame named \"nope\""), "{e}");
}
