//! PosePublisher: exactly the frames its options ask for, at its rate, counted over 10 s of
//! sim time. The robot: a canonical `base` and an `arm` turning on the revolute `elbow`,
//! each with a visual and a collision, a sensor on the arm, and a nested model `tool` with
//! a link `tip` welded to the arm. No gravity; a 10 ms step.

use crate::support::*;
use plugin_api::components::{JointVelocityCmd, Name};
use plugin_api::math::Pose;
use plugin_api::msgs::{Pose as PoseMsg, PoseV};
use plugin_api::{Change, Component, EcmRead, Which};
use std::collections::BTreeMap;
use troupe::fixture::TestFixture;

fn link(name: &str, pose: &str, inner: &str) -> String {
    format!(
        r#"<link name="{name}"><pose>{pose}</pose>
      <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
      <collision name="collision"><geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision>
      <visual name="visual"><geometry><box><size>0.1 0.1 0.1</size></box></geometry></visual>{inner}
    </link>"#
    )
}

fn world(params: &str) -> String {
    physics_world(
        "0.01",
        &format!(
            r#"  <gravity>0 0 0</gravity>
  <model name="robot"><pose>0 0 1 0 0 0</pose>
    {}{}
    <joint name="anchor" type="fixed"><parent>world</parent><child>base</child></joint>
    <joint name="elbow" type="revolute"><parent>base</parent><child>arm</child><axis><xyz>0 0 1</xyz></axis></joint>
    <model name="tool"><pose>1 0 0 0 0 0</pose>{}</model>
    <joint name="grip" type="fixed"><parent>arm</parent><child>tool::tip</child></joint>
    <plugin filename="gz-sim-pose-publisher-system" name="gz::sim::systems::PosePublisher">{params}</plugin>
  </model>"#,
            link("base", "0 0 0 0 0 0", ""),
            link("arm", "0.5 0 0 0 0 0", r#"<sensor name="imu" type="imu"><update_rate>10</update_rate></sensor>"#),
            link("tip", "0 0 0 0 0 0", "")
        ),
    )
}

/// Loads the world with the elbow turning at 1 rad/s.
fn load(params: &str) -> TestFixture {
    no_default_config();
    TestFixture::from_sdf(&world(params))
        .unwrap()
        .on_pre_update(|_, ecm| {
            let model = ecm.entity_by_name("robot").unwrap();
            let elbow = ecm.child_by_name(model, "elbow").unwrap();
            ecm.set(elbow, &JointVelocityCmd(vec![1.0]), Change::Periodic)?;
            Ok(())
        })
        .finalize()
        .unwrap()
}

fn frame(m: &PoseMsg, key: &str) -> String {
    m.header.as_ref().unwrap().data.iter().find(|d| d.key == key).map(|d| d.value[0].clone()).unwrap_or_default()
}

/// child_frame_id → (frame_id, how many times published).
fn tally(msgs: &[PoseMsg]) -> BTreeMap<String, (String, usize)> {
    let mut out: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for m in msgs {
        assert_eq!(m.name, frame(m, "child_frame_id"), "a pose is named by its child frame");
        out.entry(m.name.clone()).or_insert_with(|| (frame(m, "frame_id"), 0)).1 += 1;
    }
    out
}

/// Each (child frame, parent frame) published `n` times.
fn expect<C: ToString, P: ToString>(
    pairs: impl IntoIterator<Item = (C, P)>,
    n: usize,
) -> BTreeMap<String, (String, usize)> {
    pairs.into_iter().map(|(child, parent)| (child.to_string(), (parent.to_string(), n))).collect()
}

const LINKS: [(&str, &str); 3] =
    [("robot::base", "robot"), ("robot::arm", "robot"), ("robot::tool::tip", "robot::tool")];

#[test]
fn by_default_every_link_every_step_as_single_poses() {
    let mut f = load("");
    let sub = subscribe::<PoseMsg>(&mut f, "/model/robot/pose");
    f.run(100).unwrap();
    let msgs = take::<PoseMsg>(&sub);
    assert_eq!(tally(&msgs), expect(LINKS, 100));
    // The last arm pose published is the arm's pose after the last step, relative to the
    // model: turned about the elbow.
    let arm = msgs.iter().rev().find(|m| m.name == "robot::arm").unwrap();
    let ecm = f.ecm();
    let e = ecm
        .query(Which::ALL, &[Name::ID])
        .into_iter()
        .find(|e| ecm.get::<Name>(*e).is_some_and(|n| n.0 == "arm"))
        .unwrap();
    let truth = ecm.get::<Pose>(e).unwrap();
    let q = arm.orientation.as_ref().unwrap();
    assert_eq!((q.x, q.y, q.z, q.w), (truth.rotation.x, truth.rotation.y, truth.rotation.z, truth.rotation.w));
    let turned = 2.0 * truth.rotation.z.asin();
    assert!(turned > 0.5, "the arm turned on the elbow (commanded 1 rad/s for 1 s): {turned} rad");
}

#[test]
fn every_frame_option_at_ten_hertz_in_pose_vectors_over_ten_seconds() {
    let mut f = load(
        "<publish_link_pose>true</publish_link_pose><publish_visual_pose>true</publish_visual_pose>\
         <publish_collision_pose>true</publish_collision_pose><publish_sensor_pose>true</publish_sensor_pose>\
         <publish_nested_model_pose>true</publish_nested_model_pose><use_pose_vector_msg>true</use_pose_vector_msg>\
         <update_frequency>10</update_frequency>",
    );
    let sub = subscribe::<PoseV>(&mut f, "/model/robot/pose");
    f.run(1000).unwrap();
    let msgs = take::<PoseV>(&sub);
    assert_eq!(msgs.len(), 100, "10 Hz over 10 s of sim time");
    let all: Vec<PoseMsg> = msgs.iter().flat_map(|m| m.pose.clone()).collect();
    let mut want: Vec<(String, String)> = [("robot", "w"), ("robot::tool", "robot"), ("robot::arm::imu", "robot::arm")]
        .map(|(c, p)| (c.into(), p.into()))
        .into();
    for (l, parent) in LINKS {
        want.push((l.into(), parent.into()));
        want.push((format!("{l}::visual"), l.into()));
        want.push((format!("{l}::collision"), l.into()));
    }
    assert_eq!(tally(&all), expect(want, 100));
    // Depth first from the model, children ascending by id: the model, then the base and
    // what it holds.
    let names: Vec<&str> = msgs[0].pose.iter().take(4).map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["robot", "robot::base", "robot::base::collision", "robot::base::visual"]);
}

#[test]
fn publishing_the_model_itself_can_be_turned_off() {
    let mut f = load("<publish_link_pose>false</publish_link_pose><publish_nested_model_pose>true</publish_nested_model_pose><publish_model_pose>false</publish_model_pose>");
    let sub = subscribe::<PoseMsg>(&mut f, "/model/robot/pose");
    f.run(10).unwrap();
    assert_eq!(tally(&take::<PoseMsg>(&sub)), expect([("robot::tool", "robot")], 10));
}

#[test]
fn a_static_publisher_splits_moving_links_from_the_rest_each_at_its_rate() {
    let mut f = load("<static_publisher>true</static_publisher><update_frequency>10</update_frequency><static_update_frequency>1</static_update_frequency>");
    let dynamic = subscribe::<PoseMsg>(&mut f, "/model/robot/pose");
    let fixed = subscribe::<PoseMsg>(&mut f, "/model/robot/pose_static");
    f.run(1000).unwrap();
    // The arm is the elbow's child and not canonical: the only dynamic frame.
    assert_eq!(tally(&take::<PoseMsg>(&dynamic)), expect([("robot::arm", "robot")], 100));
    assert_eq!(
        tally(&take::<PoseMsg>(&fixed)),
        expect([("robot::base", "robot"), ("robot::tool::tip", "robot::tool")], 10)
    );
}

#[test]
fn bad_options_are_reported_naming_the_element() {
    no_default_config();
    let e = load_error(&world("<publish_link_pose>maybe</publish_link_pose><update_frequency>0</update_frequency><static_update_frequency>x</static_update_frequency>"));
    assert_mentions(
        &e,
        &[
            "PosePublisher on model \"robot\"",
            "<publish_link_pose> must be a boolean",
            "<update_frequency> must not be 0",
            "<static_update_frequency> must be a number, found \"x\"",
        ],
    );
}
