//! JointPositionController against physics: a 1 kg, 1 m bar on a vertical hinge (no gravity
//! torque, I = m·L²/3 ≈ 0.333 kg·m² about the hinge) driven to a target by the PID on force
//! and by velocity commands.

use crate::support::*;
use plugin_api::components::JointPosition;
use plugin_api::msgs::Double;
use plugin_api::EcmRead;
use std::sync::{Arc, Mutex};
use troupe::fixture::TestFixture;

fn world(params: &str) -> String {
    physics_world(
        "0.001",
        &format!(
            r#"  <model name="arm"><pose>0 0 1 0 0 0</pose>
    <link name="bar"><pose>0.5 0 0 0 0 0</pose>
      <inertial><mass>1</mass><inertia><ixx>0.001</ixx><iyy>0.0834</iyy><izz>0.0834</izz></inertia></inertial>
      <collision name="c"><geometry><box><size>1 0.05 0.05</size></box></geometry></collision>
    </link>
    <joint name="hinge" type="revolute"><pose>-0.5 0 0 0 0 0</pose><parent>world</parent><child>bar</child>
      <axis><xyz>0 0 1</xyz></axis></joint>
    <plugin filename="gz-sim-joint-position-controller-system" name="gz::sim::systems::JointPositionController">
      <joint_name>hinge</joint_name>{params}
    </plugin>
  </model>"#
        ),
    )
}

/// Loads the world, records the hinge angle every step.
fn run(params: &str, target: f64, steps: u64) -> Vec<(f64, f64)> {
    no_default_config();
    let angles: Arc<Mutex<Vec<(f64, f64)>>> = Arc::default();
    let a = angles.clone();
    let mut f = TestFixture::from_sdf(&world(params))
        .unwrap()
        .on_post_update(move |info, ecm| {
            let model = ecm.entity_by_name("arm").unwrap();
            let hinge = ecm.child_by_name(model, "hinge").unwrap();
            if let Some(p) = ecm.get::<JointPosition>(hinge) {
                a.lock().unwrap().push((info.sim_time(), p.0[0]));
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(1).unwrap();
    publish(&mut f, "/model/arm/joint/hinge/0/cmd_pos", &Double { data: target, ..Default::default() });
    f.run(steps).unwrap();
    let out = angles.lock().unwrap().clone();
    out
}

/// Overshoot past the target (fraction of the step), and the time after which the angle
/// stays within `band` of the target.
fn response(angles: &[(f64, f64)], target: f64, band: f64) -> (f64, f64) {
    let overshoot = angles.iter().map(|(_, q)| (q - target) / target).fold(0.0, f64::max);
    let settle = angles.iter().rev().find(|(_, q)| (q - target).abs() > band).map_or(0.0, |(t, _)| *t);
    (overshoot, settle)
}

#[test]
fn the_pid_settles_at_the_target_within_time_and_overshoot() {
    // p = 10, d = 3 on I ≈ 0.333: ω ≈ 5.5 rad/s, damping ratio ≈ 0.8, so about 1.5 %
    // overshoot and a 2 % settling time near 1 s (the small integral gain adds a little).
    let target = 1.0;
    let angles = run("<p_gain>10</p_gain><i_gain>0.1</i_gain><d_gain>3</d_gain>", target, 4000);
    let (overshoot, settle) = response(&angles, target, 0.02);
    let last = angles.last().unwrap().1;
    eprintln!("PID: overshoot {:.2} %, settled within 2 % after {settle:.3} s, final {last:.5}", overshoot * 100.0);
    assert!(overshoot < 0.05, "overshoot {overshoot}");
    assert!(settle < 2.0, "settled only after {settle} s");
    assert!((last - target).abs() < 0.005, "final angle {last}");
}

#[test]
fn the_pid_reaches_a_target_past_pi() {
    // 4 rad is past π: physics reports the accumulated angle, so the error shrinks all the
    // way instead of flipping sign where a wrapped angle would jump to −π.
    let target = 4.0;
    let angles = run("<p_gain>10</p_gain><i_gain>0.1</i_gain><d_gain>3</d_gain>", target, 4000);
    let (overshoot, settle) = response(&angles, target, 0.02 * target);
    let last = angles.last().unwrap().1;
    eprintln!("PID to 4 rad: overshoot {:.2} %, within 2 % after {settle:.3} s, final {last:.5}", overshoot * 100.0);
    assert!(angles.iter().any(|(_, q)| *q > std::f64::consts::PI), "the angle never passed π");
    assert!(overshoot < 0.05, "overshoot {overshoot}");
    assert!(settle < 2.0, "settled only after {settle} s");
    assert!((last - target).abs() < 0.02, "final angle {last}");
}

#[test]
fn velocity_commands_move_at_the_clamped_speed_and_stop_on_the_target() {
    let target = 1.0;
    let angles = run(
        "<use_velocity_commands>true</use_velocity_commands><cmd_max>2</cmd_max><cmd_min>-2</cmd_min>",
        target,
        1000,
    );
    let (overshoot, settle) = response(&angles, target, 0.01);
    eprintln!("direct: overshoot {:.3} %, within 1 % after {settle:.3} s", overshoot * 100.0);
    // At 2 rad/s the 1 rad takes 0.5 s.
    let at = |t: f64| angles.iter().find(|(s, _)| *s >= t).unwrap().1;
    assert!((at(0.25) - 0.5).abs() < 0.02, "halfway at 0.25 s: {}", at(0.25));
    assert!(overshoot < 0.01, "overshoot {overshoot}");
    assert!(settle < 0.55, "settled after {settle} s");
}

#[test]
fn unknown_joints_and_bad_numbers_are_reported_naming_the_element() {
    no_default_config();
    let e = load_error(&world(
        "<joint_name>elbow</joint_name><joint_index>1</joint_index><p_gain>fast</p_gain><i_min>2</i_min>",
    ));
    assert_mentions(
        &e,
        &[
            "JointPositionController on model \"arm\"",
            "<joint_name> \"elbow\": the model has no joint of that name",
            "<joint_index> 1: joint \"hinge\" (revolute) has 1 degree(s) of freedom",
            "<p_gain> must be a number, found \"fast\"",
            "<i_min> 2 is above <i_max> 1",
        ],
    );
}
