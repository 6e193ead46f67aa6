//! Commands physics consumes, and entities that come, go, and reset.

use crate::common::*;
use plugin_api::components::{ExternalWorldWrenchCmd, LinearVelocityCmd, WorldPoseCmd, Wrench};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{events, Change, EcmRead, Host};
use std::sync::{Arc, Mutex};
use troupe::fixture::TestFixture;
use troupe::server::ServerOptions;

/// A link without gravity, so commands alone move it.
fn floating(name: &str, pose: &str, kinematic: bool) -> String {
    format!(
        r#"<model name="{name}"><pose>{pose}</pose><link name="link"><gravity>false</gravity><kinematic>{kinematic}</kinematic>{}
  <collision name="col"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision></link></model>"#,
        inertial(1.0, [0.004, 0.004, 0.004])
    )
}

#[test]
fn a_velocity_command_moves_a_model_v_t_dynamic_or_kinematic() {
    for kinematic in [false, true] {
        let sdf = world(&floating("probe", "0 0 1 0 0 1.5707963267948966", kinematic));
        let mut f = TestFixture::from_sdf(&sdf)
            .unwrap()
            .on_pre_update(|info, ecm| {
                if info.iterations == 1 {
                    let m = ecm.entity_by_name("probe").unwrap();
                    // In the model frame, which is turned 90° about z: +x there is +y in the world.
                    ecm.set(m, &LinearVelocityCmd(Vec3::new(0.5, 0.0, 0.0)), Change::OneTime)?;
                }
                Ok(())
            })
            .finalize()
            .unwrap();
        f.run(1000).unwrap();
        let p = pose(&f, "probe").position;
        assert!(
            p.x.abs() < 1e-9 && (p.y - 0.5).abs() < 1e-9 && (p.z - 1.0).abs() < 1e-9,
            "kinematic {kinematic}: {p:?}"
        );
    }
}

/// Physics keeps its per-step query answers while the ECM's structure stays the same: a
/// command that appears after many steps without one is still taken in its first step, and
/// one that stays while its value changes is taken with each new value.
#[test]
fn a_command_appearing_late_and_changing_value_in_place_is_taken_every_step() {
    let sdf = world(&floating("probe", "0 0 1 0 0 0", false));
    let mut f = TestFixture::from_sdf(&sdf)
        .unwrap()
        .on_pre_update(|info, ecm| {
            let m = ecm.entity_by_name("probe").unwrap();
            match info.iterations {
                201 => ecm.set(m, &LinearVelocityCmd(Vec3::new(0.5, 0.0, 0.0)), Change::OneTime).map(|_| ())?,
                701 => ecm.set(m, &LinearVelocityCmd(Vec3::new(-0.5, 0.0, 0.0)), Change::OneTime).map(|_| ())?,
                _ => {}
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(200).unwrap();
    assert_eq!(pose(&f, "probe").position.x, 0.0, "no command yet");
    f.run(800).unwrap();
    // 500 steps at +0.5 m/s (201-700), then 300 at -0.5 m/s (701-1000).
    let x = pose(&f, "probe").position.x;
    assert!((x - 0.1).abs() < 1e-9, "x {x}");
}

#[test]
fn a_world_wrench_accelerates_a_link_by_f_over_m() {
    let sdf = world(&floating("probe", "0 0 1 0 0 0", false));
    let mut f = TestFixture::from_sdf(&sdf)
        .unwrap()
        .on_pre_update(|_, ecm| {
            // A wrench acts for one step: written every step for a sustained force.
            let link = ecm.child_by_name(ecm.entity_by_name("probe").unwrap(), "link").unwrap();
            let w = Wrench { force: Vec3::new(2.0, 0.0, 0.0), torque: Vec3::ZERO };
            ecm.set(link, &ExternalWorldWrenchCmd(w), Change::OneTime)?;
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(1000).unwrap();
    let x = pose(&f, "probe").position.x;
    // 2 N on 1 kg for 1 s: x = a t²/2 = 1 m (symplectic Euler adds a t dt / 2 = 1 mm).
    assert!((x - 1.0).abs() < 2e-3, "x {x}");
    // Consumed: the command does not linger.
    let link = id(&f, "link");
    assert!(!f.ecm().has::<ExternalWorldWrenchCmd>(link));
}

/// A static table teleported while paused; a ball then dropped onto its new place rests on it.
#[test]
fn world_pose_commands_move_static_models_even_while_paused() {
    let table = r#"<model name="table"><static>true</static><pose>0 0 0.5 0 0 0</pose><link name="link">
  <collision name="col"><geometry><box><size>1 1 1</size></box></geometry></collision></link></model>"#;
    let sdf = world(&format!("{table}{}", sphere("ball", "5 0 2 0 0 0", 0.1, 1.0, "")));
    let host: Arc<Mutex<Option<Host>>> = Arc::default();
    let host_in = host.clone();
    let steps = Arc::new(Mutex::new(0u32));
    let mut f = TestFixture::with_options(ServerOptions {
        world_text: Some((sdf, "<test>".into())),
        run: false,
        ..Default::default()
    })
    .unwrap()
    .on_configure(move |ctx| {
        *host_in.lock().unwrap() = Some(ctx.host.clone());
        Ok(())
    })
    .on_pre_update(move |info, ecm| {
        let mut n = steps.lock().unwrap();
        *n += 1;
        if *n == 3 {
            assert!(info.paused);
            let table = ecm.entity_by_name("table").unwrap();
            ecm.set(table, &WorldPoseCmd(Pose::from_xyz_rpy(5.0, 0.0, 0.5, 0.0, 0.0, 0.0)), Change::OneTime)?;
        }
        if *n == 6 {
            host.lock().unwrap().as_ref().unwrap().emit(events::PAUSE, &[0]);
        }
        Ok(())
    })
    .finalize()
    .unwrap();
    f.run(5).unwrap();
    // Paused: the ball has not moved, the table has.
    assert_eq!(pose(&f, "ball").position.z, 2.0);
    assert_eq!(pose(&f, "table").position.x, 5.0);
    assert!(!f.ecm().has::<WorldPoseCmd>(id(&f, "table")), "the command is consumed");
    f.run(2000).unwrap();
    let ball = pose(&f, "ball").position;
    assert!((ball.z - 1.1).abs() < 2e-3, "the ball rests on the moved table: {ball:?}");
}

#[test]
fn a_model_created_before_update_falls_in_that_same_step() {
    let sdf = world(&ground(""));
    let seen: Arc<Mutex<Vec<(u64, f64)>>> = Arc::default();
    let seen_in = seen.clone();
    let mut f = TestFixture::from_sdf(&sdf)
        .unwrap()
        .on_pre_update(|info, ecm| {
            if info.iterations == 10 {
                let w = ecm.entities_with(&[<plugin_api::components::World as plugin_api::Component>::ID])[0];
                ecm.create_from_sdf(&sphere("late", "0 0 3 0 0 0", 0.1, 1.0, ""), w)?;
            }
            Ok(())
        })
        .on_post_update(move |info, ecm| {
            if let Some(m) = ecm.entity_by_name("late") {
                seen_in.lock().unwrap().push((info.iterations, ecm.get::<Pose>(m).unwrap().position.z));
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(12).unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].0, 10, "{seen:?}");
    assert!(seen[0].1 < 3.0, "not simulated in the step that created it: {seen:?}");
}

#[test]
fn a_removed_support_lets_what_it_held_fall_from_that_step() {
    let shelf = r#"<model name="shelf"><static>true</static><pose>0 0 0.5 0 0 0</pose><link name="link">
  <collision name="col"><geometry><box><size>1 1 1</size></box></geometry></collision></link></model>"#;
    let sdf = world(&format!("{}{shelf}{}", ground(""), cube("crate", "0 0 1.1 0 0 0", [0.2, 0.2, 0.2], 1.0, "")));
    let (mut f, trace) = traced(&sdf, |ecm| model_pose(ecm, "crate").position.z);
    f.run(500).unwrap();
    let resting = *trace.lock().unwrap().last().unwrap();
    assert!((resting - 1.1).abs() < 2e-3, "{resting}");
    let shelf = id(&f, "shelf");
    f.runner_mut().ecm.request_remove(shelf, true);
    f.run(600).unwrap();
    let t = trace.lock().unwrap();
    assert!(t[500] < resting, "still held the step the shelf was removed: {} vs {resting}", t[500]);
    assert!((t[t.len() - 1] - 0.1).abs() < 2e-3, "ends on the ground: {}", t[t.len() - 1]);
}

#[test]
fn reset_returns_every_body_to_its_initial_state_and_replays_identically() {
    let sdf = world(&(ground("") + &cube("crate", "0 0 2 0.3 0.2 0.1", [0.3, 0.2, 0.1], 1.0, "")));
    let mut f = load(&sdf);
    let initial = pose(&f, "crate");
    f.run(800).unwrap();
    let first = pose(&f, "crate");
    assert!(first.position.z < 1.0, "{first:?}");
    // The host resets in an iteration of its own, which does not step.
    f.runner_mut().request_reset();
    f.run(1).unwrap();
    assert_eq!(pose(&f, "crate"), initial);
    f.run(800).unwrap();
    assert_eq!(pose(&f, "crate"), first, "the run after reset differs");
}

/// A nested model's pose is written relative to its parent model: composing the written
/// poses gives where its link physically is. Here a ball in a nested model lands on its
/// parent model's deck, and a pose command on the parent carries the nested model along.
#[test]
fn nested_models_are_written_relative_to_their_parent_and_move_with_it() {
    let sdf = world(&format!(
        r#"{}<model name="carrier"><pose>0 0 1 0 0 0</pose>
  <link name="deck">{}<collision name="c"><geometry><box><size>2 2 0.1</size></box></geometry></collision></link>
  <model name="rider"><pose>0.5 0 0.5 0 0 0</pose>
    <link name="seat">{}<collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision></link>
  </model></model>"#,
        ground(""),
        inertial(4.0, [1.3, 1.3, 2.6]),
        inertial(1.0, [0.004, 0.004, 0.004])
    ));
    let mut f = TestFixture::from_sdf(&sdf)
        .unwrap()
        .on_pre_update(|info, ecm| {
            if info.iterations == 2001 {
                let carrier = ecm.entity_by_name("carrier").unwrap();
                ecm.set(carrier, &WorldPoseCmd(Pose::from_xyz_rpy(10.0, 0.0, 3.0, 0.0, 0.0, 0.0)), Change::OneTime)?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    let seat_world = |f: &TestFixture| {
        let (carrier, rider, seat) = (pose(f, "carrier"), pose(f, "rider"), pose(f, "seat"));
        carrier.transform_point(rider.transform_point(seat.position))
    };
    f.run(2000).unwrap();
    let deck_z = pose(&f, "carrier").transform_point(pose(&f, "deck").position).z;
    assert!((deck_z - 0.05).abs() < 2e-3, "deck at {deck_z}");
    let seat = seat_world(&f);
    assert!((seat.z - 0.2).abs() < 2e-3 && (seat.x - 0.5).abs() < 0.05, "the ball is not on the deck: {seat:?}");
    // Teleport the carrier 10 m along x and up: the rider comes along, same place on the deck.
    f.run(1).unwrap();
    let moved = seat_world(&f);
    assert!((moved.x - (seat.x + 10.0)).abs() < 1e-3 && moved.z > 2.9, "the rider stayed behind: {moved:?}");
}

/// A removal requested after physics ran in a step (by a later system's `update`) is carried
/// out by the host at the end of that step, before physics sees it as pending: physics still
/// drops the body at its next update instead of keeping a ghost that holds things up.
#[test]
fn a_support_removed_after_physics_ran_does_not_linger_as_a_ghost() {
    let shelf = r#"<model name="shelf"><static>true</static><pose>0 0 0.5 0 0 0</pose><link name="link">
  <collision name="col"><geometry><box><size>1 1 1</size></box></geometry></collision></link></model>"#;
    let sdf = world(&format!("{}{shelf}{}", ground(""), cube("crate", "0 0 1.1 0 0 0", [0.2, 0.2, 0.2], 1.0, "")));
    let mut f = TestFixture::from_sdf(&sdf)
        .unwrap()
        .on_update(|info, ecm| {
            if info.iterations == 500 {
                let shelf = ecm.entity_by_name("shelf").unwrap();
                ecm.request_remove(shelf);
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(500).unwrap();
    assert!((pose(&f, "crate").position.z - 1.1).abs() < 2e-3);
    f.run(600).unwrap();
    let z = pose(&f, "crate").position.z;
    assert!((z - 0.1).abs() < 2e-3, "the crate is still held by the removed shelf: z {z}");
}
