//! set_pose and set_pose_vector, with and without a physics system: applied exactly once.

use crate::support::*;
use plugin_api::components::WorldPoseCmd;
use plugin_api::math::{Pose, Quat, Vec3};
use plugin_api::msgs;
use plugin_api::{Change, EcmRead};
use std::sync::{Arc, Mutex};

fn pose_msg(id: u64, name: &str, x: f64, y: f64, z: f64) -> msgs::Pose {
    msgs::Pose {
        id: id as u32,
        name: name.into(),
        position: Some(msgs::Vector3d { x, y, z, ..Default::default() }),
        orientation: Some(msgs::Quaternion { w: 1.0, ..Default::default() }),
        ..Default::default()
    }
}

fn at(x: f64, y: f64, z: f64) -> Pose {
    Pose { position: Vec3::new(x, y, z), rotation: Quat::IDENTITY }
}

#[test]
fn without_physics_the_pose_is_applied_once_the_blocking_call_answers() {
    let mut f = fixture(BOX_WORLD);
    f.runner_mut().clock.paused = true;
    let it = f.runner().clock.iterations();
    let called = call(&mut f, "set_pose/blocking", &pose_msg(0, "box", 1.0, 2.0, 3.0));
    assert!(called.ok());
    let b = find(f.ecm(), "box").unwrap();
    assert_eq!(f.ecm().get::<Pose>(b).unwrap(), at(1.0, 2.0, 3.0));
    assert!(f.ecm().get::<WorldPoseCmd>(b).is_none(), "the command is consumed");
    assert_eq!(f.runner().clock.iterations(), it, "paused: applied without advancing time");
    // By id, the light too (written directly: no physics body consumes a light's command).
    let lamp = find(f.ecm(), "lamp").unwrap();
    assert!(call(&mut f, "set_pose/blocking", &pose_msg(lamp.0, "", 0.0, 0.0, 9.0)).ok());
    assert_eq!(f.ecm().get::<Pose>(lamp).unwrap(), at(0.0, 0.0, 9.0));
}

#[test]
fn with_physics_the_physics_system_applies_it_and_user_commands_does_not_again() {
    // A system after physics (priority 0 > -64) sees the commanded pose in the step physics
    // applied it and then moves the box elsewhere; a second application by user commands
    // in the next step would undo that.
    let seen = Arc::new(Mutex::new(Vec::<(bool, Pose)>::new()));
    let log = seen.clone();
    let mut f = troupe::fixture::TestFixture::from_sdf(PHYSICS_WORLD)
        .unwrap()
        .on_update(move |_info, ecm| {
            let b = ecm
                .entities_with(&[])
                .into_iter()
                .find(|e| ecm.get::<plugin_api::components::Name>(*e).is_some_and(|n| n.0 == "box"))
                .unwrap();
            let pose = ecm.get::<Pose>(b).unwrap();
            log.lock().unwrap().push((ecm.has::<WorldPoseCmd>(b), pose));
            if pose == at(1.0, 2.0, 3.0) {
                ecm.set(b, &at(7.0, 7.0, 7.0), Change::OneTime)?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    f.runner_mut().clock.paused = true;
    assert!(call(&mut f, "set_pose/blocking", &pose_msg(0, "box", 1.0, 2.0, 3.0)).ok());
    f.run(3).unwrap();
    let seen = seen.lock().unwrap();
    assert!(seen.iter().all(|(cmd, _)| !cmd), "physics consumed the command before update of later systems: {seen:?}");
    assert_eq!(seen.iter().filter(|(_, p)| *p == at(1.0, 2.0, 3.0)).count(), 1, "{seen:?}");
    let b = find(f.ecm(), "box").unwrap();
    assert_eq!(f.ecm().get::<Pose>(b).unwrap(), at(7.0, 7.0, 7.0), "applied once, not again");
}

#[test]
fn set_pose_vector_moves_each_and_bad_entries_answer_false() {
    let mut f = fixture(BOX_WORLD);
    let lamp = find(f.ecm(), "lamp").unwrap();
    let v = msgs::PoseV {
        pose: vec![pose_msg(0, "box", 5.0, 0.0, 0.0), pose_msg(lamp.0, "", 0.0, 5.0, 0.0)],
        ..Default::default()
    };
    assert!(call(&mut f, "set_pose_vector/blocking", &v).ok());
    let b = find(f.ecm(), "box").unwrap();
    assert_eq!(f.ecm().get::<Pose>(b).unwrap(), at(5.0, 0.0, 0.0));
    assert_eq!(f.ecm().get::<Pose>(lamp).unwrap(), at(0.0, 5.0, 0.0));
    let v = msgs::PoseV {
        pose: vec![pose_msg(0, "box", 6.0, 0.0, 0.0), pose_msg(0, "ghost", 0.0, 0.0, 0.0)],
        ..Default::default()
    };
    assert!(!call(&mut f, "set_pose_vector/blocking", &v).ok(), "ghost does not exist");
    assert_eq!(f.ecm().get::<Pose>(b).unwrap(), at(6.0, 0.0, 0.0), "the good entry is still carried out");
}

#[test]
fn set_pose_refuses_unknown_entities_the_world_and_numbers_that_are_not_finite() {
    let mut f = fixture(BOX_WORLD);
    let w = world(f.ecm());
    let b = find(f.ecm(), "box").unwrap();
    let before = f.ecm().get::<Pose>(b).unwrap();
    for req in [
        pose_msg(0, "ghost", 1.0, 1.0, 1.0),
        pose_msg(999_999, "", 1.0, 1.0, 1.0),
        pose_msg(w.0, "", 1.0, 1.0, 1.0),
        pose_msg(0, "", 1.0, 1.0, 1.0),
        pose_msg(0, "box", f64::NAN, 1.0, 1.0),
        pose_msg(0, "box", f64::INFINITY, 1.0, 1.0),
    ] {
        assert!(!call(&mut f, "set_pose/blocking", &req).ok(), "{req:?} was accepted");
    }
    f.run(2).unwrap();
    assert_eq!(f.ecm().get::<Pose>(b).unwrap(), before);
    assert!(f.ecm().get::<WorldPoseCmd>(b).is_none());
}
