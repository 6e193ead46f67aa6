//! Velocity commands: bodies move by exactly v·t and turn by ω·t, in their own frame.

use crate::support::{angle_between, find, find_in, motion, near, world_pose};
use plugin_api::components::{AngularVelocityCmd, LinearVelocityCmd, WorldAngularVelocity, WorldLinearVelocity};
use plugin_api::math::{Pose, Quat, Vec3};
use plugin_api::Change;

/// Rounding of 1000 additions of ~1e-3 to coordinates of ~5: a few 1e-13 m.
const FLOAT: f64 = 1e-12;

fn sim_time(f: &troupe::fixture::TestFixture) -> f64 {
    f.runner().clock.info().sim_time()
}

#[test]
fn a_model_with_a_linear_velocity_command_moves_v_t() {
    let v = Vec3::new(1.0, -0.5, 0.25);
    let mut f = motion()
        .on_configure(move |ctx| {
            let rover = find_in(&ctx.ecm, "rover");
            ctx.ecm.set(rover, &LinearVelocityCmd(v), Change::OneTime).map(|_| ())?;
            Ok(())
        })
        .finalize()
        .unwrap();
    let (rover, chassis) = (find(f.ecm(), "rover"), find(f.ecm(), "rover/chassis"));
    let p0 = f.ecm().get::<Pose>(rover).unwrap();
    let link_rel = f.ecm().get::<Pose>(chassis).unwrap();
    f.run(1000).unwrap();
    let t = sim_time(&f);
    assert_eq!(t, 1.0);

    let p = f.ecm().get::<Pose>(rover).unwrap();
    // v is in the model's frame, which is turned 0.3 rad about z.
    let expected = p0.position + p0.rotation.rotate(v).scale(t);
    assert!(near(p.position, expected, FLOAT), "{:?} != {expected:?}", p.position);
    assert_eq!(p.rotation, p0.rotation, "a linear velocity turned the model");
    // The link rides along: its pose relative to the model is untouched.
    assert_eq!(f.ecm().get::<Pose>(chassis), Some(link_rel));
    let velocity = f.ecm().get::<WorldLinearVelocity>(rover).unwrap().0;
    assert!(near(velocity, p0.rotation.rotate(v), 1e-15), "{velocity:?}");
    assert!(near(f.ecm().get::<WorldLinearVelocity>(chassis).unwrap().0, velocity, 1e-15));
    assert_eq!(f.ecm().get::<WorldAngularVelocity>(rover).map(|w| w.0), Some(Vec3::ZERO));
}

#[test]
fn a_link_with_a_linear_velocity_command_moves_v_t_and_its_model_stays() {
    let v = Vec3::new(0.3, 0.0, -0.2);
    let mut f = motion()
        .on_configure(move |ctx| {
            let tip = find_in(&ctx.ecm, "arm/tip");
            ctx.ecm.set(tip, &LinearVelocityCmd(v), Change::OneTime).map(|_| ())?;
            Ok(())
        })
        .finalize()
        .unwrap();
    let (arm, tip) = (find(f.ecm(), "arm"), find(f.ecm(), "arm/tip"));
    let arm0 = f.ecm().get::<Pose>(arm).unwrap();
    let w0 = world_pose(f.ecm(), tip);
    f.run(500).unwrap();

    let w = world_pose(f.ecm(), tip);
    // The link is pitched 0.2 rad: v is in its frame.
    let expected = w0.position + w0.rotation.rotate(v).scale(sim_time(&f));
    assert!(near(w.position, expected, FLOAT), "{:?} != {expected:?}", w.position);
    assert!(angle_between(w.rotation, w0.rotation) < FLOAT);
    assert_eq!(f.ecm().get::<Pose>(arm), Some(arm0), "the model moved with its link");
    assert!(near(f.ecm().get::<WorldLinearVelocity>(tip).unwrap().0, w0.rotation.rotate(v), 1e-15));
}

#[test]
fn an_angular_velocity_command_turns_a_model_about_its_own_axis() {
    let omega = 0.5;
    let mut f = motion()
        .on_configure(move |ctx| {
            let rover = find_in(&ctx.ecm, "rover");
            ctx.ecm.set(rover, &AngularVelocityCmd(Vec3::new(0.0, 0.0, omega)), Change::OneTime).map(|_| ())?;
            Ok(())
        })
        .finalize()
        .unwrap();
    let (rover, chassis) = (find(f.ecm(), "rover"), find(f.ecm(), "rover/chassis"));
    let p0 = f.ecm().get::<Pose>(rover).unwrap();
    f.run(2000).unwrap();
    let t = sim_time(&f);

    let p = f.ecm().get::<Pose>(rover).unwrap();
    assert_eq!(p.position, p0.position, "turning on the spot moved the model");
    let [roll, pitch, yaw] = p.rotation.to_rpy();
    assert!(roll.abs() < FLOAT && pitch.abs() < FLOAT, "{roll} {pitch}");
    assert!((yaw - (0.3 + omega * t)).abs() < FLOAT, "yaw {yaw}, expected {}", 0.3 + omega * t);
    assert!(near(f.ecm().get::<WorldAngularVelocity>(rover).unwrap().0, Vec3::new(0.0, 0.0, omega), 1e-15));

    // The link 0.1 m ahead of the model origin swings round it, at ω × r.
    let r = Vec3::new(0.1 * yaw.cos(), 0.1 * yaw.sin(), 0.0);
    let link = world_pose(f.ecm(), chassis);
    assert!(near(link.position, p0.position + r, FLOAT), "{:?}", link.position);
    let v = f.ecm().get::<WorldLinearVelocity>(chassis).unwrap().0;
    assert!(near(v, Vec3::new(0.0, 0.0, omega).cross(r), 1e-12), "{v:?}");
}

#[test]
fn an_angular_velocity_command_on_a_tilted_link_turns_about_the_link_axis() {
    let mut f = motion()
        .on_configure(|ctx| {
            let tip = find_in(&ctx.ecm, "arm/tip");
            ctx.ecm.set(tip, &AngularVelocityCmd(Vec3::new(1.0, 0.0, 0.0)), Change::OneTime).map(|_| ())?;
            Ok(())
        })
        .finalize()
        .unwrap();
    let tip = find(f.ecm(), "arm/tip");
    let w0 = world_pose(f.ecm(), tip);
    f.run(700).unwrap();

    let w = world_pose(f.ecm(), tip);
    let expected = w0.rotation * Quat::from_rpy(0.7, 0.0, 0.0);
    assert!(angle_between(w.rotation, expected) < FLOAT, "{:?} != {expected:?}", w.rotation);
    assert!(near(w.position, w0.position, FLOAT));
    // World angular velocity: the link's x axis.
    let omega = f.ecm().get::<WorldAngularVelocity>(tip).unwrap().0;
    assert!(near(omega, w0.rotation.rotate(Vec3::new(1.0, 0.0, 0.0)), 1e-12), "{omega:?}");
}

#[test]
fn forward_and_turn_commands_drive_a_circle() {
    // 1 m/s forward and 1 rad/s yaw, both in the model frame: an arc of radius 1.
    let mut f = motion()
        .on_configure(|ctx| {
            let rover = find_in(&ctx.ecm, "rover");
            ctx.ecm.set(rover, &LinearVelocityCmd(Vec3::new(1.0, 0.0, 0.0)), Change::OneTime)?;
            ctx.ecm.set(rover, &AngularVelocityCmd(Vec3::new(0.0, 0.0, 1.0)), Change::OneTime)?;
            Ok(())
        })
        .finalize()
        .unwrap();
    let rover = find(f.ecm(), "rover");
    let p0 = f.ecm().get::<Pose>(rover).unwrap();
    f.run(1000).unwrap();

    let p = f.ecm().get::<Pose>(rover).unwrap();
    let along_arc = Vec3::new(1f64.sin(), 1.0 - 1f64.cos(), 0.0);
    let expected = p0.position + p0.rotation.rotate(along_arc);
    assert!(near(p.position, expected, FLOAT), "{:?} != {expected:?}", p.position);
    assert!((p.rotation.to_rpy()[2] - 1.3).abs() < FLOAT);
}

#[test]
fn without_its_command_a_model_keeps_its_velocity_and_a_link_rejoins_its_model() {
    let v = Vec3::new(0.0, 1.0, 0.0);
    let mut f = motion()
        .on_configure(move |ctx| {
            for path in ["rover", "arm/tip"] {
                let e = find_in(&ctx.ecm, path);
                ctx.ecm.set(e, &LinearVelocityCmd(v), Change::OneTime)?;
            }
            Ok(())
        })
        .on_pre_update(|info, ecm| {
            if info.iterations == 501 {
                for path in ["rover", "arm/tip"] {
                    let e = find_in(ecm, path);
                    assert!(ecm.remove::<LinearVelocityCmd>(e));
                }
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    let (rover, tip) = (find(f.ecm(), "rover"), find(f.ecm(), "arm/tip"));
    let (r0, t0) = (f.ecm().get::<Pose>(rover).unwrap(), world_pose(f.ecm(), tip));
    f.run(1000).unwrap();

    let r = f.ecm().get::<Pose>(rover).unwrap();
    assert!(near(r.position, r0.position + r0.rotation.rotate(v), FLOAT), "{:?}", r.position);
    let t = world_pose(f.ecm(), tip);
    assert!(near(t.position, t0.position + t0.rotation.rotate(v).scale(0.5), FLOAT), "{:?}", t.position);
    assert_eq!(f.ecm().get::<WorldLinearVelocity>(tip).map(|v| v.0), Some(Vec3::ZERO));
}

#[test]
fn a_static_model_ignores_velocity_commands() {
    let mut f = motion()
        .on_configure(|ctx| {
            let post = find_in(&ctx.ecm, "post");
            ctx.ecm.set(post, &LinearVelocityCmd(Vec3::new(1.0, 0.0, 0.0)), Change::OneTime)?;
            ctx.ecm.set(post, &AngularVelocityCmd(Vec3::new(0.0, 0.0, 1.0)), Change::OneTime)?;
            Ok(())
        })
        .finalize()
        .unwrap();
    let post = find(f.ecm(), "post");
    let p0 = f.ecm().get::<Pose>(post).unwrap();
    f.run(100).unwrap();
    assert_eq!(f.ecm().get::<Pose>(post), Some(p0));
    assert!(f.ecm().get::<WorldLinearVelocity>(post).is_none(), "static models get no velocity");
}

#[test]
fn a_nested_model_rides_with_its_parent_and_moves_on_its_own_when_commanded() {
    // The carrier turns at 1 rad/s; its rider is carried round, until the rider is given
    // a velocity of its own at 0.5 s: from then on it moves straight up, whatever the
    // carrier does.
    let mut f = motion()
        .on_configure(|ctx| {
            let carrier = find_in(&ctx.ecm, "carrier");
            ctx.ecm.set(carrier, &AngularVelocityCmd(Vec3::new(0.0, 0.0, 1.0)), Change::OneTime).map(|_| ())?;
            Ok(())
        })
        .on_pre_update(|info, ecm| {
            if info.iterations == 501 {
                let rider = find_in(ecm, "carrier/rider");
                ecm.set(rider, &LinearVelocityCmd(Vec3::new(0.0, 0.0, 1.0)), Change::OneTime)?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    let (carrier, rider, seat) =
        (find(f.ecm(), "carrier"), find(f.ecm(), "carrier/rider"), find(f.ecm(), "carrier/rider/seat"));
    let c0 = f.ecm().get::<Pose>(carrier).unwrap();
    let rider_rel = f.ecm().get::<Pose>(rider).unwrap();
    f.run(500).unwrap();
    // Carried: its pose relative to the carrier is untouched, its world pose turned 0.5 rad.
    assert_eq!(f.ecm().get::<Pose>(rider), Some(rider_rel));
    let turned = |angle: f64| c0.position + Quat::from_rpy(0.0, 0.0, angle).rotate(rider_rel.position);
    let at_half = world_pose(f.ecm(), seat).position;
    assert!(near(at_half, turned(0.5), FLOAT), "{at_half:?}");
    f.run(500).unwrap();
    // On its own for 0.5 s: 0.5 m up from where it was let go, not turned further.
    let at_end = world_pose(f.ecm(), seat).position;
    assert!(near(at_end, at_half + Vec3::new(0.0, 0.0, 0.5), FLOAT), "{at_end:?}");
    assert!((f.ecm().get::<Pose>(carrier).unwrap().rotation.to_rpy()[2] - 1.0).abs() < FLOAT);
}
