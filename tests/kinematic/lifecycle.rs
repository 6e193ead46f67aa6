//! Pose commands while paused, entities created and removed while running, reset, and
//! bit-identical runs.

use crate::support::{find, find_in, motion, watch, world_pose};
use plugin_api::components::{AngularVelocityCmd, ContactSensorData, LinearVelocityCmd, Name, WorldPoseCmd};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{Change, Component, EcmRead, EntityId, Which};
use std::sync::{Arc, Mutex};

#[test]
fn pose_commands_apply_while_paused_to_static_models_too() {
    let to_rover = Pose::from_xyz_rpy(3.0, -1.0, 2.0, 0.1, 0.2, 0.3);
    let to_post = Pose::from_xyz_rpy(0.0, -6.0, 0.5, 0.0, 0.0, 1.0);
    let mut f = motion()
        .on_pre_update(move |info, ecm| {
            assert!(info.paused);
            if !ecm.entities_with(&[WorldPoseCmd::ID]).is_empty() {
                panic!("a pose command was not consumed");
            }
            ecm.set(find_in(ecm, "rover"), &WorldPoseCmd(to_rover), Change::OneTime)?;
            ecm.set(find_in(ecm, "post"), &WorldPoseCmd(to_post), Change::OneTime)?;
            Ok(())
        })
        .finalize()
        .unwrap();
    f.runner_mut().clock.paused = true;
    f.run(2).unwrap();
    assert_eq!(f.runner().clock.iterations(), 0);
    let (rover, post) = (find(f.ecm(), "rover"), find(f.ecm(), "post"));
    assert_eq!(f.ecm().get::<Pose>(rover), Some(to_rover));
    assert_eq!(f.ecm().get::<Pose>(post), Some(to_post));
    assert!(!f.ecm().has::<WorldPoseCmd>(rover) && !f.ecm().has::<WorldPoseCmd>(post));
    // The link comes along.
    let chassis = find(f.ecm(), "rover/chassis");
    let link_rel = f.ecm().get::<Pose>(chassis).unwrap();
    assert_eq!(world_pose(f.ecm(), chassis), to_rover * link_rel);
}

const NEW_BOX: &str = r#"<model name="new_box">
  <pose>-0.5 10 1.45 0 0 0</pose>
  <link name="link">
    <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision>
  </link>
</model>"#;

#[test]
fn a_model_created_before_update_moves_and_touches_in_that_step() {
    let mut f = motion()
        .on_configure(|ctx| watch(&mut ctx.ecm, &["box_a/link/c"]))
        .on_pre_update(|info, ecm| {
            if info.iterations == 10 {
                let world = ecm.entities_with(&[plugin_api::components::World::ID])[0];
                let m = ecm.create_from_sdf(NEW_BOX, world)?;
                ecm.set(m, &LinearVelocityCmd(Vec3::new(0.0, 0.0, 1.0)), Change::OneTime)?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(9).unwrap();
    let (a, b) = (find(f.ecm(), "box_a/link/c"), find(f.ecm(), "box_b/link/c"));
    let others = |f: &troupe::fixture::TestFixture| -> Vec<EntityId> {
        f.ecm().get::<ContactSensorData>(a).unwrap().0.iter().map(|c| c.collision2).collect()
    };
    assert_eq!(others(&f), vec![b]);
    f.run(1).unwrap();
    let (model, c) = (find(f.ecm(), "new_box"), find(f.ecm(), "new_box/link/c"));
    let z = f.ecm().get::<Pose>(model).unwrap().position.z;
    assert!((z - 1.451).abs() < 1e-12, "not moved in its first step: z = {z}");
    assert_eq!(others(&f), vec![b, c]);
    // It overlapped box_a (top at 1) by 0.05 m, and rose 1 mm first.
    let touching = f.ecm().get::<ContactSensorData>(a).unwrap().0;
    assert!(touching[1].depths.iter().all(|d| (d - 0.049).abs() < 1e-9), "{touching:?}");
}

#[test]
fn a_removed_model_leaves_in_the_step_its_removal_is_requested() {
    let seen: Arc<Mutex<Vec<(u64, usize)>>> = Arc::default();
    let log = seen.clone();
    let mut f = motion()
        .on_configure(|ctx| watch(&mut ctx.ecm, &["box_a/link/c"]))
        .on_pre_update(|info, ecm| {
            if info.iterations == 5 {
                assert!(ecm.request_remove(find_in(ecm, "box_b")));
            }
            Ok(())
        })
        .on_post_update(move |info, ecm| {
            let a = find_in(ecm, "box_a/link/c");
            let n = ecm.get::<ContactSensorData>(a).map(|c| c.0.len()).unwrap_or(99);
            // box_a touches box_b, and nothing else.
            log.lock().unwrap().push((info.iterations, n));
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(6).unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![(1, 1), (2, 1), (3, 1), (4, 1), (5, 0), (6, 0)]);
}

#[test]
fn reset_returns_bodies_to_their_initial_poses_and_the_run_repeats() {
    let mut f = motion()
        .on_configure(|ctx| {
            let rover = find_in(&ctx.ecm, "rover");
            ctx.ecm.set(rover, &LinearVelocityCmd(Vec3::new(1.0, 0.0, 0.0)), Change::OneTime)?;
            ctx.ecm.set(rover, &AngularVelocityCmd(Vec3::new(0.0, 0.0, 0.5)), Change::OneTime)?;
            let tip = find_in(&ctx.ecm, "arm/tip");
            ctx.ecm.set(tip, &LinearVelocityCmd(Vec3::new(0.0, 0.0, 1.0)), Change::OneTime)?;
            Ok(())
        })
        .finalize()
        .unwrap();
    let (rover, tip) = (find(f.ecm(), "rover"), find(f.ecm(), "arm/tip"));
    let initial = (f.ecm().get::<Pose>(rover).unwrap(), f.ecm().get::<Pose>(tip).unwrap());
    f.run(300).unwrap();
    let after = (f.ecm().get::<Pose>(rover).unwrap(), f.ecm().get::<Pose>(tip).unwrap());
    assert_ne!(after.0, initial.0);
    assert_ne!(after.1, initial.1);

    f.runner_mut().request_reset();
    f.run(1).unwrap();
    assert_eq!((f.ecm().get::<Pose>(rover).unwrap(), f.ecm().get::<Pose>(tip).unwrap()), initial);
    f.run(300).unwrap();
    assert_eq!((f.ecm().get::<Pose>(rover).unwrap(), f.ecm().get::<Pose>(tip).unwrap()), after);
}

/// Every entity's name, Pose and contacts, as bytes.
fn state(ecm: &troupe::ecm::Ecm) -> Vec<(String, Vec<u8>, Vec<u8>)> {
    ecm.query(Which::ALL, &[Name::ID])
        .into_iter()
        .map(|e: EntityId| {
            (
                ecm.get::<Name>(e).unwrap().0,
                ecm.get::<Pose>(e).map(|p| p.to_bytes()).unwrap_or_default(),
                ecm.get::<ContactSensorData>(e).map(|c| c.to_bytes()).unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn two_runs_are_bit_identical() {
    let run = || {
        let mut f = motion()
            .on_configure(|ctx| {
                watch(&mut ctx.ecm, &["box_a/link/c", "box_b/link/c", "box_c/link/c", "rover/chassis/body"])?;
                let rover = find_in(&ctx.ecm, "rover");
                ctx.ecm.set(rover, &LinearVelocityCmd(Vec3::new(0.7, 0.1, 0.0)), Change::OneTime)?;
                ctx.ecm.set(rover, &AngularVelocityCmd(Vec3::new(0.1, -0.2, 0.3)), Change::OneTime)?;
                let tip = find_in(&ctx.ecm, "arm/tip");
                ctx.ecm.set(tip, &AngularVelocityCmd(Vec3::new(2.0, 1.0, 0.0)), Change::OneTime)?;
                let c = find_in(&ctx.ecm, "box_c");
                ctx.ecm.set(c, &LinearVelocityCmd(Vec3::new(-1.3, 0.01, 0.0)), Change::OneTime)?;
                Ok(())
            })
            .finalize()
            .unwrap();
        f.run(1500).unwrap();
        state(f.ecm())
    };
    let (first, second) = (run(), run());
    let touching = first.iter().filter(|(_, _, c)| c.len() > 4).count();
    assert!(touching >= 2, "the run should end with box_c inside box_b or box_a: {touching} collisions touching");
    assert_eq!(first, second);
}

#[test]
fn a_pose_command_on_a_link_moves_it_relative_to_its_model() {
    let to = Pose::from_xyz_rpy(0.0, 0.0, 0.3, 0.0, 0.5, 0.0);
    let mut f = motion()
        .on_pre_update(move |info, ecm| {
            if info.iterations == 2 {
                ecm.set(find_in(ecm, "rover/chassis"), &WorldPoseCmd(to), Change::OneTime)?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    let (rover, chassis) = (find(f.ecm(), "rover"), find(f.ecm(), "rover/chassis"));
    let model = f.ecm().get::<Pose>(rover).unwrap();
    f.run(2).unwrap();
    assert_eq!(f.ecm().get::<Pose>(chassis), Some(to));
    assert_eq!(f.ecm().get::<Pose>(rover), Some(model), "the model moved with its link");
}

#[test]
fn a_model_created_with_a_velocity_starts_moving_at_it() {
    let mut f = motion()
        .on_pre_update(|info, ecm| {
            if info.iterations == 1 {
                let world = ecm.entities_with(&[plugin_api::components::World::ID])[0];
                let m = ecm.create_from_sdf(NEW_BOX, world)?;
                ecm.set(m, &plugin_api::components::LinearVelocity(Vec3::new(2.0, 0.0, 0.0)), Change::OneTime)?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(100).unwrap();
    let x = f.ecm().get::<Pose>(find(f.ecm(), "new_box")).unwrap().position.x;
    assert!((x - (-0.5 + 2.0 * 0.1)).abs() < 1e-12, "x = {x}");
}
