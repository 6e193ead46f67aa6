//! JointStatePublisher against physics: two discs on vertical axles (no gravity torque,
//! I = 0.045 kg·m² about the axle), one held at 2 rad/s by a velocity command, one spun up
//! by a 0.09 N·m joint torque (α = 2 rad/s²). The published positions, velocities and forces
//! follow those known motions.

use crate::support::*;
use plugin_api::components::{JointForceCmd, JointVelocityCmd};
use plugin_api::msgs::Model;
use plugin_api::{Change, EcmRead};
use troupe::fixture::TestFixture;

fn disc(name: &str, x: f64) -> String {
    format!(
        r#"<link name="{name}"><pose>{x} 0 0 0 0 0</pose>
      <inertial><mass>1</mass><inertia><ixx>0.02</ixx><iyy>0.02</iyy><izz>0.045</izz></inertia></inertial>
      <collision name="c"><geometry><cylinder><radius>0.3</radius><length>0.05</length></cylinder></geometry></collision>
    </link>"#
    )
}

fn world(params: &str) -> String {
    physics_world(
        "0.001",
        &format!(
            r#"  <model name="robot"><pose>0 0 1 0 0 0</pose>
    {}{}
    <joint name="axle_a" type="revolute"><parent>world</parent><child>disc_a</child><axis><xyz>0 0 1</xyz></axis></joint>
    <joint name="axle_b" type="revolute"><parent>world</parent><child>disc_b</child><axis><xyz>0 0 1</xyz>
      <limit><lower>-100</lower><upper>100</upper></limit></axis></joint>
    <plugin filename="gz-sim-joint-state-publisher-system" name="gz::sim::systems::JointStatePublisher">{params}</plugin>
  </model>"#,
            disc("disc_a", 0.0),
            disc("disc_b", 1.0)
        ),
    )
}

/// Loads the world with the motions: axle_a at 2 rad/s, axle_b pushed by 0.09 N·m.
fn load(params: &str) -> TestFixture {
    no_default_config();
    TestFixture::from_sdf(&world(params))
        .unwrap()
        .on_pre_update(|_, ecm| {
            let model = ecm.entity_by_name("robot").unwrap();
            let (a, b) = (ecm.child_by_name(model, "axle_a").unwrap(), ecm.child_by_name(model, "axle_b").unwrap());
            ecm.set(a, &JointVelocityCmd(vec![2.0]), Change::Periodic)?;
            ecm.set(b, &JointForceCmd(vec![0.09]), Change::Periodic)?;
            Ok(())
        })
        .finalize()
        .unwrap()
}

fn stamp(m: &Model) -> f64 {
    let t = m.header.as_ref().unwrap().stamp.as_ref().unwrap();
    t.sec as f64 + t.nsec as f64 * 1e-9
}

#[test]
fn every_joint_every_step_following_the_known_motions() {
    let mut f = load("");
    let sub = subscribe::<Model>(&mut f, "/world/w/model/robot/joint_state");
    f.run(2000).unwrap();
    let msgs = take::<Model>(&sub);
    assert_eq!(msgs.len(), 2000, "one message per step");
    for m in &msgs {
        let t = stamp(m);
        assert_eq!(m.name, "robot");
        let names: Vec<&str> = m.joint.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["axle_a", "axle_b"], "every joint of the model, ascending by id");
        let a = m.joint[0].axis1.as_ref().unwrap();
        // Held at 2 rad/s from the first step: the angle is 2·t, past π without wrapping.
        assert!((a.velocity - 2.0).abs() < 1e-3, "axle_a velocity {} at {t}", a.velocity);
        assert!((a.position - 2.0 * t).abs() < 5e-3, "axle_a position {} at {t}, expected {}", a.position, 2.0 * t);
        assert_eq!(a.force, 0.0, "nothing pushes axle_a");
        let b = m.joint[1].axis1.as_ref().unwrap();
        // α = 0.09 / 0.045 = 2 rad/s²: ω = 2t, θ = t².
        assert!((b.velocity - 2.0 * t).abs() < 5e-3, "axle_b velocity {} at {t}", b.velocity);
        assert!((b.position - t * t).abs() < 5e-3, "axle_b position {} at {t}, expected {}", b.position, t * t);
        assert!((b.force - 0.09).abs() < 1e-12, "axle_b force {}", b.force);
        assert_eq!((b.limit_lower, b.limit_upper), (-100.0, 100.0));
        assert_eq!(b.xyz.as_ref().map(|v| v.z), Some(1.0));
        assert_eq!((m.joint[1].parent.as_str(), m.joint[1].child.as_str()), ("world", "disc_b"));
    }
    let last = msgs.last().unwrap();
    assert!((stamp(last) - 2.0).abs() < 1e-9);
    assert!(
        last.joint[0].axis1.as_ref().unwrap().position > std::f64::consts::PI,
        "the accumulated angle, not wrapped"
    );
}

#[test]
fn named_joints_on_a_chosen_topic_at_a_rate() {
    let mut f = load("<joint_name>axle_b</joint_name><topic>robot_joints</topic><update_rate>50</update_rate>");
    let sub = subscribe::<Model>(&mut f, "/robot_joints");
    let default = subscribe::<Model>(&mut f, "/world/w/model/robot/joint_state");
    f.run(2000).unwrap();
    let msgs = take::<Model>(&sub);
    // 50 Hz of sim time over 2 s: at 0.02, 0.04, ... 2.00.
    assert_eq!(msgs.len(), 100);
    for (k, m) in msgs.iter().enumerate() {
        assert!((stamp(m) - 0.02 * (k + 1) as f64).abs() < 1e-9, "message {k} at {}", stamp(m));
        assert_eq!(m.joint.len(), 1);
        assert_eq!(m.joint[0].name, "axle_b");
    }
    assert!(take::<Model>(&default).is_empty(), "nothing on the default topic when <topic> is given");
}

#[test]
fn unknown_joints_and_bad_numbers_are_reported_naming_the_element() {
    no_default_config();
    let e = load_error(&world("<joint_name>elbow</joint_name><update_rate>fast</update_rate><topic>a b</topic>"));
    assert_mentions(
        &e,
        &[
            "JointStatePublisher on model \"robot\"",
            "<joint_name> \"elbow\": the model has no joint of that name",
            "<update_rate> must be a number, found \"fast\"",
            "<topic>: \"a b\" is not a valid topic name",
        ],
    );
    let e = load_error(&world("<update_rate>-5</update_rate>"));
    assert!(e.contains("<update_rate> must be 0 (every step) or more, found -5"), "{e}");
}
