//! IMU and altimeter against rapier's motion.

use crate::common::*;
use plugin_api::components::{Model, Name};
use plugin_api::math::Pose;
use plugin_api::msgs::{Altimeter, Imu};
use plugin_api::{Component, Which};

fn vec(v: &Option<plugin_api::msgs::Vector3d>) -> [f64; 3] {
    let v = v.as_ref().expect("vector set");
    [v.x, v.y, v.z]
}

#[test]
fn an_imu_reads_zero_in_free_fall_and_minus_gravity_at_rest_in_its_own_frame() {
    let imu = sensor("imu", "imu", 100.0, "");
    // Turned by 90° about x: its y axis is the world's up.
    let turned = sensor("turned", "imu", 100.0, "<pose>0 0 0 1.5707963267948966 0 0</pose>");
    let body = ball("faller", "0 0 100 0 0 0", 0.1, false, &imu)
        + &block("ground", "5 0 -0.5 0 0 0", "4 4 1")
        + &ball("rester", "5 0 0.1 0 0 0", 0.1, false, &(imu.clone() + &turned));
    let mut f = load(&world("", &body));
    let falling = subscribe(&mut f, &topic("faller", "link", "imu", "imu"), "gz.msgs.IMU");
    let resting = subscribe(&mut f, &topic("rester", "link", "imu", "imu"), "gz.msgs.IMU");
    let turned = subscribe(&mut f, &topic("rester", "link", "turned", "imu"), "gz.msgs.IMU");
    f.run(2000).unwrap();
    let falling: Vec<Imu> = take(&falling);
    let (resting, turned): (Vec<Imu>, Vec<Imu>) = (take(&resting), take(&turned));
    assert_eq!(falling.len(), 200, "100 Hz for 2 s");
    for m in &falling[1..] {
        let a = vec(&m.linear_acceleration);
        assert!(a.iter().all(|x| x.abs() < 1e-6), "free fall reads no specific force: {a:?}");
    }
    let a = vec(&resting.last().unwrap().linear_acceleration);
    assert!(
        a[0].abs() < 1e-3 && a[1].abs() < 1e-3 && (a[2] - G).abs() < 1e-2,
        "at rest the IMU reads -g = (0, 0, {G}): {a:?}"
    );
    let a = vec(&turned.last().unwrap().linear_acceleration);
    assert!(
        a[0].abs() < 1e-3 && (a[1] - G).abs() < 1e-2 && a[2].abs() < 1e-3,
        "turned 90° about x, up is its +y: {a:?}"
    );
    let q = turned.last().unwrap().orientation.clone().unwrap();
    let half = std::f64::consts::FRAC_PI_4;
    assert!((q.w - half.cos()).abs() < 1e-6 && (q.x - half.sin()).abs() < 1e-6, "orientation {q:?}");
    assert!(vec(&resting.last().unwrap().angular_velocity).iter().all(|w| w.abs() < 1e-3));
}

#[test]
fn an_altimeter_reads_the_height_and_speed_of_a_known_fall() {
    let body = ball("faller", "0 0 50 0 0 0", 0.1, false, &sensor("alt", "altimeter", 10.0, ""));
    let mut f = load(&world("", &body));
    let sub = subscribe(&mut f, &topic("faller", "link", "alt", "altimeter"), "gz.msgs.Altimeter");
    let got: Vec<Altimeter> = run_and_take(&mut f, &sub, 1000);
    assert_eq!(got.len(), 10);
    let last = got.last().unwrap();
    // The last sample is of the last step: the height physics left in the ECM.
    let ecm = f.ecm();
    let ball = ecm
        .query(Which::ALL, &[Model::ID])
        .into_iter()
        .find(|e| ecm.get::<Name>(*e).is_some_and(|n| n.0 == "faller"))
        .unwrap();
    let z = ecm.get::<Pose>(ball).unwrap().position.z;
    assert!((last.vertical_reference - 50.0).abs() < 1e-9, "{last:?}");
    assert!(
        (last.vertical_position - (z - 50.0)).abs() < 1e-9,
        "read {} m, the ECM says {}",
        last.vertical_position,
        z - 50.0
    );
    // Velocity grows by g dt every step, exactly: -g t after 1 s.
    assert!((last.vertical_velocity + G).abs() < 1e-6, "{last:?}");
    // Continuous check: ½ g t² within the integrator's error.
    assert!((last.vertical_position + 0.5 * G).abs() < 0.01);
}
