//! Free fall, and bit-identical results run to run.

use crate::common::*;
use plugin_api::math::Pose;

/// Rapier integrates with symplectic (semi-implicit) Euler over `n` substeps of `h = dt/n`
/// per step (`IntegrationParameters::num_solver_iterations`, 4 by default): each substep
/// `v -= g h`, then `z += v h`. After `k` substeps from rest, `z = z0 - g h² k(k+1)/2`.
fn discrete_fall(z0: f64, dt: f64, substeps: u32, steps: u32) -> f64 {
    let h = dt / substeps as f64;
    let k = (steps * substeps) as f64;
    z0 - G * h * h * k * (k + 1.0) / 2.0
}

fn fall_trace(steps: u64) -> Vec<f64> {
    let sdf = world(&sphere("ball", "0 0 100 0 0 0", 0.1, 1.0, ""));
    let (mut f, trace) = traced(&sdf, |ecm| model_pose(ecm, "ball").position.z);
    f.run(steps).unwrap();
    let t = trace.lock().unwrap().clone();
    assert_eq!(t.len() as u64, steps);
    t
}

#[test]
fn free_fall_first_20_steps_follow_z0_minus_half_g_t_squared() {
    let zs = fall_trace(20);
    for (i, z) in zs.iter().enumerate() {
        let t = (i + 1) as f64 * 0.001;
        let analytic = 100.0 - 0.5 * G * t * t;
        assert!((z - analytic).abs() < 1e-4, "step {}: z {z} vs analytic {analytic}", i + 1);
    }
    // And it did fall: the first step moves it (no frozen body passes the bound above at
    // this scale by accident: after 20 steps the drop is 1.96 mm, well above 1e-4).
    assert!(100.0 - zs[19] > 1.9e-3, "{}", zs[19]);
}

#[test]
fn free_fall_over_one_second_is_the_integrators_discrete_solution() {
    let zs = fall_trace(1000);
    for (i, z) in zs.iter().enumerate().step_by(50) {
        let expect = discrete_fall(100.0, 0.001, 4, i as u32 + 1);
        assert!((z - expect).abs() < 1e-5, "step {}: z {z} vs symplectic Euler {expect}", i + 1);
    }
    let last = zs[999];
    let expect = discrete_fall(100.0, 0.001, 4, 1000);
    assert!((last - expect).abs() < 1e-5, "after 1 s: z {last} vs symplectic Euler {expect}");
    // Against the continuous solution the difference is the integrator's O(dt) error.
    assert!((last - (100.0 - G / 2.0)).abs() < 2e-3);
}

/// 27 tilted boxes dropped in a pile on a floor.
fn pile_body() -> String {
    let mut body = ground("");
    for i in 0..27 {
        let (x, y, z) = ((i % 3) as f64 * 0.45, ((i / 3) % 3) as f64 * 0.45, 0.3 + (i / 9) as f64 * 0.45);
        body += &cube(&format!("b{i}"), &format!("{x} {y} {z} 0.1 0.2 0.3"), [0.4, 0.4, 0.4], 1.0, "");
    }
    body
}

/// The pile, run twice in this process: every pose is bit-identical.
#[test]
fn the_same_world_gives_bit_identical_poses_run_to_run() {
    let body = pile_body();
    let run = || {
        let mut f = load(&world(&body));
        f.run(700).unwrap();
        (0..27).map(|i| pose(&f, &format!("b{i}"))).collect::<Vec<Pose>>()
    };
    let (a, b) = (run(), run());
    let bits = |p: &Pose| {
        [p.position.x, p.position.y, p.position.z, p.rotation.w, p.rotation.x, p.rotation.y, p.rotation.z]
            .map(f64::to_bits)
    };
    for (i, (pa, pb)) in a.iter().zip(&b).enumerate() {
        assert_eq!(bits(pa), bits(pb), "box b{i}: {pa:?} vs {pb:?}");
    }
    // The pile did something: the top layer came down.
    assert!(a[26].position.z < 1.2, "{:?}", a[26]);
}

/// Velocity and acceleration components, on a link that carries them, for a body thrown
/// sideways: world and link-frame velocities agree with v0 - g t, the acceleration is g.
#[test]
fn links_carrying_velocity_and_acceleration_components_get_them_written() {
    use plugin_api::components::{LinearVelocity, WorldLinearAcceleration, WorldLinearVelocity};
    use plugin_api::math::Vec3;
    use plugin_api::{Change, EcmRead};
    // The model is turned 90° about z, so the link's x axis is the world's y.
    let sdf = world(&sphere("ball", "0 0 100 0 0 1.5707963267948966", 0.1, 1.0, ""));
    let mut f = troupe::fixture::TestFixture::from_sdf(&sdf)
        .unwrap()
        .on_configure(|ctx| {
            let link = ctx.ecm.child_by_name(ctx.ecm.entity_by_name("ball").unwrap(), "link").unwrap();
            ctx.ecm.set(link, &WorldLinearVelocity(Vec3::new(0.0, 2.0, 0.0)), Change::OneTime)?;
            ctx.ecm.set(link, &LinearVelocity(Vec3::ZERO), Change::OneTime)?;
            ctx.ecm.set(link, &WorldLinearAcceleration(Vec3::ZERO), Change::OneTime)?;
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(500).unwrap();
    let link = id(&f, "link");
    let ecm = f.ecm();
    let v = ecm.get::<WorldLinearVelocity>(link).unwrap().0;
    let local = ecm.get::<LinearVelocity>(link).unwrap().0;
    let a = ecm.get::<WorldLinearAcceleration>(link).unwrap().0;
    assert!(v.x.abs() < 1e-12 && (v.y - 2.0).abs() < 1e-12 && (v.z + G * 0.5).abs() < 1e-9, "world velocity {v:?}");
    assert!(
        (local.x - 2.0).abs() < 1e-9 && local.y.abs() < 1e-9 && (local.z + G * 0.5).abs() < 1e-9,
        "link-frame velocity {local:?}"
    );
    assert!(a.x.abs() < 1e-9 && a.y.abs() < 1e-9 && (a.z + G).abs() < 1e-9, "acceleration {a:?}");
    // It started from the velocity its component gave: 1 m sideways in 0.5 s.
    assert!((pose(&f, "ball").position.y - 1.0).abs() < 1e-9);
}

/// The world's `<max_step_size>` is the step: with 2 ms steps, 500 steps are 1 s of fall,
/// on the integrator's solution for that step.
#[test]
fn the_worlds_max_step_size_sets_the_step() {
    let sdf = world_with(0.002, "", &sphere("ball", "0 0 100 0 0 0", 0.1, 1.0, ""));
    let mut f = load(&sdf);
    f.run(500).unwrap();
    let z = pose(&f, "ball").position.z;
    let expect = discrete_fall(100.0, 0.002, 4, 500);
    assert!((z - expect).abs() < 1e-5, "z {z} vs {expect}");
    assert!((f.runner().clock.info().sim_time() - 1.0).abs() < 1e-12);
}

/// The pile, run by the `troupe` binary in two processes and recorded: `troupe log diff`
/// finds no difference in any of the 700 steps.
#[test]
fn two_processes_record_bit_identical_runs() {
    let dir = std::env::temp_dir().join(format!("troupe-physics-determinism-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pile.sdf"), world(&pile_body())).unwrap();
    let troupe = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_troupe"))
            .args(args)
            .current_dir(&dir)
            .env("GZ_SIM_SERVER_CONFIG_PATH", "")
            .env_remove("TROUPE_SYSTEM_PLUGIN_PATH")
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
    };
    for log in ["a.tlog", "b.tlog"] {
        let (code, out) = troupe(&["sim", "-r", "--iterations", "700", "--record-path", log, "pile.sdf"]);
        assert_eq!(code, Some(0), "{out}");
    }
    let (code, out) = troupe(&["log", "diff", "a.tlog", "b.tlog"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("no difference: the initial state and 700 steps match"), "{out}");
}
