//! ApplyLinkWrench against physics: momentum changes by F·dt for a one-shot wrench, a
//! persistent wrench accelerates at F/m until cleared, bad input is reported.

use crate::support::*;
use plugin_api::msgs::{entity::Type, Entity, EntityWrench, Vector3d, Wrench};
use troupe::fixture::TestFixture;

/// No gravity, a 1 ms step, two free 2 kg boxes (`a`, `b`), and the wrench system with
/// `params`.
pub fn world(params: &str) -> String {
    physics_world(
        "0.001",
        &format!(
            r#"  <gravity>0 0 0</gravity>
  <plugin filename="gz-sim-apply-link-wrench-system" name="gz::sim::systems::ApplyLinkWrench">{params}</plugin>
  <model name="a"><pose>0 0 1 0 0 0</pose><link name="link">
    <inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
    <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision></link></model>
  <model name="b"><pose>0 5 1 0 0 0</pose><link name="link">
    <inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
    <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision></link></model>"#
        ),
    )
}

const PERSISTENT: &str = "<persistent><entity_name>b::link</entity_name><entity_type>link</entity_type><force>-2 0 0</force></persistent><verbose>false</verbose>";

fn wrench_on(name: &str, kind: Type, force: [f64; 3]) -> EntityWrench {
    EntityWrench {
        entity: Some(Entity { name: name.into(), r#type: kind as i32, ..Default::default() }),
        wrench: Some(Wrench {
            force: Some(Vector3d { x: force[0], y: force[1], z: force[2], ..Default::default() }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Mean x velocity of a track between two of its indices.
fn vx(t: &[(f64, plugin_api::math::Pose)], i: usize, j: usize) -> f64 {
    (t[j].1.position.x - t[i].1.position.x) / (t[j].0 - t[i].0)
}

#[test]
fn a_one_shot_wrench_changes_momentum_by_force_times_step() {
    no_default_config();
    let (mut f, track) = tracking(TestFixture::from_sdf(&world("")).unwrap(), "a");
    f.run(10).unwrap();
    // 10 N for one 1 ms step on 2 kg: Δp = 0.01 N·s, Δv = 0.005 m/s, then it coasts.
    publish(&mut f, "/world/w/wrench", &wrench_on("a::link", Type::Link, [10.0, 0.0, 0.0]));
    f.run(300).unwrap();
    let t = track.lock().unwrap();
    let n = t.len();
    let (early, late) = (vx(&t, n - 250, n - 150), vx(&t, n - 100, n - 1));
    let momentum = 2.0 * late;
    eprintln!("momentum after the one-shot wrench: {momentum:.6} N·s (F·dt = 0.01)");
    assert!((momentum - 0.01).abs() < 0.01 * 0.01, "Δp = {momentum}, expected 0.01 within 1 %");
    assert!((early - late).abs() < 1e-9, "the wrench acted for more than one step: {early} then {late}");
    drop(t);
    // By model name: the model's canonical link; the same impulse again doubles it.
    publish(&mut f, "/world/w/wrench", &wrench_on("a", Type::Model, [10.0, 0.0, 0.0]));
    f.run(200).unwrap();
    let t = track.lock().unwrap();
    let n = t.len();
    let momentum = 2.0 * vx(&t, n - 100, n - 1);
    assert!((momentum - 0.02).abs() < 0.02 * 0.01, "Δp = {momentum}, expected 0.02");
}

#[test]
fn a_persistent_wrench_accelerates_until_cleared() {
    no_default_config();
    let (mut f, track) = tracking(TestFixture::from_sdf(&world(PERSISTENT)).unwrap(), "b");
    f.run(1000).unwrap();
    {
        // −2 N on 2 kg from the start: a = −1 m/s², x = −t²/2 after 1 s → −0.5 m.
        let t = track.lock().unwrap();
        let (time, pose) = t.last().unwrap();
        let expected = -0.5 * time * time;
        eprintln!("persistent: x = {:.5} after {time} s (expected {expected:.5})", pose.position.x);
        assert!(
            (pose.position.x - expected).abs() < 0.01 * expected.abs(),
            "x = {}, expected {expected}",
            pose.position.x
        );
    }
    publish(
        &mut f,
        "/world/w/wrench/clear",
        &Entity { name: "b".into(), r#type: Type::Model as i32, ..Default::default() },
    );
    f.run(300).unwrap();
    let t = track.lock().unwrap();
    let n = t.len();
    let (v1, v2) = (vx(&t, n - 250, n - 150), vx(&t, n - 100, n - 1));
    assert!((v1 - v2).abs() < 1e-9, "still accelerating after the clear: {v1} then {v2}");
    assert!((v2 - -1.0).abs() < 0.02, "coasts at about −1 m/s: {v2}");
}

#[test]
fn messages_naming_nothing_are_skipped_and_the_world_goes_on() {
    no_default_config();
    let (mut f, track) = tracking(TestFixture::from_sdf(&world("")).unwrap(), "a");
    publish(&mut f, "/world/w/wrench", &wrench_on("nope::link", Type::Link, [10.0, 0.0, 0.0]));
    publish(&mut f, "/world/w/wrench", &wrench_on("a::link", Type::Visual, [10.0, 0.0, 0.0]));
    publish(&mut f, "/world/w/wrench", &wrench_on("a::link", Type::Link, [f64::NAN, 0.0, 0.0]));
    f.run(100).unwrap();
    let t = track.lock().unwrap();
    assert_eq!(t.last().unwrap().1.position.x, 0.0, "nothing was pushed");
}

#[test]
fn bad_persistent_blocks_are_errors_naming_the_block() {
    no_default_config();
    let e = load_error(&world(
        "<persistent><entity_name>ghost</entity_name><entity_type>link</entity_type></persistent>\
         <persistent><entity_name>a</entity_name><entity_type>joint</entity_type></persistent>\
         <persistent><entity_name>a</entity_name><entity_type>model</entity_type><force>1 two 3</force></persistent>\
         <persistent><force>1 0 0</force></persistent>",
    ));
    assert_mentions(
        &e,
        &[
            "ApplyLinkWrench",
            "<persistent> #1: <entity_name>: no link named \"ghost\"",
            "<persistent> #2: <entity_type> must be link or model, found \"joint\"",
            "<persistent> #3: <force> must be three finite numbers",
            "<persistent> #4: <entity_name> and <entity_type> are required",
        ],
    );
}
