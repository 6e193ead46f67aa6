//! JointController against physics: a disc on a vertical axle (I = 0.045 kg·m² about it)
//! with joint damping 0.05 N·m·s/rad (0.25 N·m at 5 rad/s), driven by velocity commands
//! (which replace the damping, so a persistent torque is their load) and by the PID on
//! force (which the damping loads).

use crate::support::*;
use plugin_api::components::JointVelocity;
use plugin_api::msgs::Double;
use plugin_api::EcmRead;
use std::sync::{Arc, Mutex};
use troupe::fixture::TestFixture;

fn world(params: &str) -> String {
    world_with(params, "", "")
}

/// The world with `extra` (more joints) in the model and `outside` (more systems) in the
/// world.
fn world_with(params: &str, extra: &str, outside: &str) -> String {
    physics_world(
        "0.001",
        &format!(
            r#"  {outside}
  <model name="wheel"><pose>0 0 1 0 0 0</pose>
    <link name="disc">
      <inertial><mass>1</mass><inertia><ixx>0.02</ixx><iyy>0.02</iyy><izz>0.045</izz></inertia></inertial>
      <collision name="c"><geometry><cylinder><radius>0.3</radius><length>0.05</length></cylinder></geometry></collision>
    </link>
    <joint name="axle" type="revolute"><parent>world</parent><child>disc</child>
      <axis><xyz>0 0 1</xyz><dynamics><damping>0.05</damping></dynamics></axis></joint>
    {extra}
    <plugin filename="gz-sim-joint-controller-system" name="gz::sim::systems::JointController">
      <joint_name>axle</joint_name>{params}
    </plugin>
  </model>"#
        ),
    )
}

/// (sim time, axle velocity) every step.
type Trace = Arc<Mutex<Vec<(f64, f64)>>>;

fn load(params: &str) -> (TestFixture, Trace) {
    load_world(&world(params))
}

fn load_world(sdf: &str) -> (TestFixture, Trace) {
    no_default_config();
    let trace: Trace = Arc::default();
    let t = trace.clone();
    let f = TestFixture::from_sdf(sdf)
        .unwrap()
        .on_post_update(move |info, ecm| {
            let axle = ecm.child_by_name(ecm.entity_by_name("wheel").unwrap(), "axle").unwrap();
            if let Some(v) = ecm.get::<JointVelocity>(axle) {
                t.lock().unwrap().push((info.sim_time(), v.0[0]));
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    (f, trace)
}

fn command(f: &mut TestFixture, v: f64) {
    publish(f, "/model/wheel/joint/axle/cmd_vel", &Double { data: v, ..Default::default() });
}

/// The largest deviation from `target` of the velocities recorded after `from` s.
fn worst_after(trace: &Trace, from: f64, target: f64) -> f64 {
    trace.lock().unwrap().iter().filter(|(t, _)| *t >= from).map(|(_, v)| (v - target).abs()).fold(0.0, f64::max)
}

/// A persistent 0.5 N·m against the spin, applied to the disc by ApplyLinkWrench.
const LOAD: &str = r#"<plugin filename="gz-sim-apply-link-wrench-system" name="gz::sim::systems::ApplyLinkWrench">
    <persistent><entity_name>wheel::disc</entity_name><entity_type>link</entity_type><force>0 0 0</force><torque>0 0 -0.5</torque></persistent>
    <verbose>false</verbose>
  </plugin>"#;

#[test]
fn velocity_mode_holds_the_commanded_velocity_under_load() {
    let (mut f, trace) = load_world(&world_with("<initial_velocity>1</initial_velocity>", "", LOAD));
    f.run(500).unwrap();
    let worst = worst_after(&trace, 0.0, 1.0);
    assert!(worst < 0.01, "initial velocity 1 rad/s held within {worst}");
    command(&mut f, 5.0);
    f.run(1500).unwrap();
    // Physics drives the joint with a velocity motor solved with the step's forces, so the
    // 0.5 N·m load is taken up within the step (measured: no deviation to 1e-4 rad/s).
    let worst = worst_after(&trace, 0.6, 5.0);
    eprintln!("velocity mode: within {worst:.4} rad/s of 5 under a 0.5 N·m load");
    assert!(worst < 5.0 * 0.01, "5 rad/s held within {worst} (1 % allowed)");
}

#[test]
fn force_mode_pid_reaches_the_commanded_velocity_within_a_second() {
    // p = 0.5 on I = 0.045: a time constant of 0.09 s; the integral takes up the 0.25 N·m
    // the damping costs at 5 rad/s.
    let (mut f, trace) = load("<use_force_commands>true</use_force_commands><p_gain>0.5</p_gain><i_gain>2</i_gain>");
    f.run(1).unwrap();
    command(&mut f, 5.0);
    f.run(3000).unwrap();
    let t = trace.lock().unwrap().clone();
    let start = t[0].0;
    let reached =
        t.iter().find(|(_, v)| (v - 5.0).abs() < 0.1).map(|(s, _)| s - start).expect("reached 5 rad/s within 2 %");
    let settled = t.iter().rev().find(|(_, v)| (v - 5.0).abs() > 0.1).map_or(0.0, |(s, _)| s - start);
    let last = t.last().unwrap().1;
    eprintln!("force mode: within 2 % after {reached:.3} s, stays within after {settled:.3} s, final {last:.4}");
    assert!(settled < 1.0, "settled within 2 % only after {settled} s");
    assert!((last - 5.0).abs() < 0.01, "final velocity {last}: the integral removes the steady error");
}

#[test]
fn disable_braking_lets_a_fast_joint_freewheel_down() {
    let params =
        "<use_force_commands>true</use_force_commands><p_gain>0.5</p_gain><i_gain>0</i_gain><cmd_offset>0</cmd_offset>";
    let mut at = Vec::new();
    for extra in ["", "<disable_braking>true</disable_braking>"] {
        let (mut f, trace) = load(&format!("{params}{extra}<initial_velocity>5</initial_velocity>"));
        f.run(2000).unwrap();
        command(&mut f, 1.0);
        f.run(500).unwrap();
        at.push(trace.lock().unwrap().last().unwrap().1);
    }
    eprintln!("0.5 s after slowing to 1 rad/s: braking {:.3}, freewheeling {:.3}", at[0], at[1]);
    // Without an integral the PID holds about 4.5 rad/s of the 5 (0.5 · 0.5 N·m against
    // 0.05 · 4.5 of damping). Braking: p = 0.5 pulls it to about 1.1 rad/s within a few
    // 0.09 s time constants. Freewheeling: only the damping slows it, with time constant
    // I / c = 0.9 s: about 2.6 rad/s after 0.5 s.
    assert!(at[0] < 1.3, "the PID brakes to the target: {}", at[0]);
    assert!(at[1] > 2.0, "without braking the joint freewheels: {}", at[1]);
}

#[test]
fn unknown_joints_and_bad_numbers_are_reported_naming_the_element() {
    no_default_config();
    let e = load_error(&world_with(
        "<joint_name>elbow</joint_name><joint_name>weld</joint_name><p_gain>fast</p_gain><cmd_min>2000</cmd_min><use_actuator_msg>true</use_actuator_msg>",
        r#"<joint name="weld" type="fixed"><parent>world</parent><child>disc</child></joint>"#,
        "",
    ));
    assert_mentions(
        &e,
        &[
            "JointController on model \"wheel\"",
            "<joint_name> \"elbow\": the model has no joint of that name",
            "<joint_name> \"weld\": a fixed joint has no axis to drive",
            "<p_gain> must be a number, found \"fast\"",
            "<cmd_min> 2000 is above <cmd_max> 1000",
            "<use_actuator_msg>",
        ],
    );
}
