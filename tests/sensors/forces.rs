//! Contact and force-torque against rapier's contacts and joint wrenches.

use crate::common::*;
use plugin_api::msgs::{Contacts, Wrench};

#[test]
fn a_sphere_on_a_box_reports_the_contact_with_names_and_normal() {
    // Dropped from 0.3 m above the box's top: it lands after about 0.25 s and rests there.
    let s = sensor("touch", "contact", 1000.0, "<contact><collision>col</collision></contact>");
    let body = block("table", "0 0 0.5 0 0 0", "2 2 1") + &ball("ball", "0 0 1.5 0 0 0", 0.2, false, &s);
    let mut f = load(&world("", &body));
    let sub = subscribe(&mut f, &topic("ball", "link", "touch", "contact"), "gz.msgs.Contacts");
    let got: Vec<Contacts> = run_and_take(&mut f, &sub, 1000);
    assert!(!got.is_empty(), "the ball touches the table");
    assert!(got.len() > 500, "from landing on, every sample reports the contact: {} of 1000", got.len());
    let first = got.last().unwrap();
    let c = &first.contact[0];
    assert_eq!(c.collision1.as_ref().unwrap().name, "ball::link::col");
    assert_eq!(c.collision2.as_ref().unwrap().name, "table::link::col");
    let n = &c.normal[0];
    assert!(
        n.x.abs() < 1e-6 && n.y.abs() < 1e-6 && (n.z - 1.0).abs() < 1e-6,
        "normal from the table up to the ball: {n:?}"
    );
    let p = &c.position[0];
    assert!(p.x.abs() < 1e-3 && p.y.abs() < 1e-3 && (p.z - 1.0).abs() < 5e-3, "touching at the table's top: {p:?}");
    assert_eq!(first.header.as_ref().unwrap().stamp.unwrap().sec, 1, "still at the last step");
}

/// A 2 kg bob hanging from a hinge to the world, with a force-torque sensor in the joint.
fn hanging(ft: &str) -> String {
    format!(
        r#"<model name="pendulum"><link name="bob"><pose>0 0 1 0 0 0</pose>{}
  <collision name="col"><geometry><sphere><radius>0.05</radius></sphere></geometry></collision></link>
  <joint name="hinge" type="revolute"><parent>world</parent><child>bob</child><pose>0 0 1 0 0 0</pose>
    <axis><xyz>0 1 0</xyz></axis>{ft}</joint></model>"#,
        inertial(2.0, 1e-4)
    )
}

#[test]
fn force_torque_under_a_hanging_mass_reads_its_weight_in_the_asked_direction() {
    let child_to_parent = sensor("ft", "force_torque", 10.0, "");
    let parent_to_child = sensor(
        "ft2",
        "force_torque",
        10.0,
        "<force_torque><frame>sensor</frame><measure_direction>parent_to_child</measure_direction></force_torque>",
    );
    let mut f = load(&world("", &hanging(&(child_to_parent + &parent_to_child))));
    let a = subscribe(&mut f, "/world/w/model/pendulum/joint/hinge/sensor/ft/forcetorque", "gz.msgs.Wrench");
    let b = subscribe(&mut f, "/world/w/model/pendulum/joint/hinge/sensor/ft2/forcetorque", "gz.msgs.Wrench");
    f.run(1000).unwrap();
    let (a, b): (Vec<Wrench>, Vec<Wrench>) = (take(&a), take(&b));
    assert_eq!((a.len(), b.len()), (10, 10));
    let weight = 2.0 * G;
    let fa = a.last().unwrap().force.clone().unwrap();
    assert!(
        fa.x.abs() < 1e-3 && fa.y.abs() < 1e-3 && (fa.z + weight).abs() < 0.01 * weight,
        "child on parent: the bob pulls down {fa:?}"
    );
    let fb = b.last().unwrap().force.clone().unwrap();
    assert!((fb.z - weight).abs() < 0.01 * weight, "parent on child: the hinge holds it up {fb:?}");
}

#[test]
fn force_torque_on_a_backend_without_joint_wrenches_warns_once_and_reports_nothing() {
    let sdf = world("", &hanging(&sensor("ft", "force_torque", 10.0, ""))).replace(
        r#"<plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>"#,
        r#"<plugin filename="troupe_physics_kinematic" name="gz::sim::systems::Physics"/>"#,
    );
    let mut f = load(&sdf);
    let sub = subscribe(&mut f, "/world/w/model/pendulum/joint/hinge/sensor/ft/forcetorque", "gz.msgs.Wrench");
    let got: Vec<Wrench> = run_and_take(&mut f, &sub, 500);
    assert!(got.is_empty(), "{got:?}");
    let warnings: Vec<String> =
        log_lines().into_iter().filter(|l| l.contains("does not report joint wrenches")).collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("\"ft\""), "{warnings:?}");
}
