//! Sample counts, pausing, and repeatable noise.

use crate::common::*;
use plugin_api::msgs::{Altimeter, Imu};

#[test]
fn over_ten_seconds_each_sensor_samples_rate_times_ten_and_nothing_while_paused() {
    let sensors =
        [1.0, 30.0, 60.0, 250.0, 1000.0].iter().map(|r| sensor(&format!("imu{r}"), "imu", *r, "")).collect::<String>();
    let mut f = load(&world("", &ball("probe", "0 0 1 0 0 0", 0.1, true, &sensors)));
    let subs: Vec<_> = [1.0, 30.0, 60.0, 250.0, 1000.0]
        .iter()
        .map(|r| (*r, subscribe(&mut f, &topic("probe", "link", &format!("imu{r}"), "imu"), "gz.msgs.IMU")))
        .collect();
    f.run(10_000).unwrap();
    for (rate, sub) in &subs {
        let got: Vec<Imu> = take(sub);
        assert_eq!(got.len() as f64, rate * 10.0, "{rate} Hz over 10 s");
        let stamp = got[0].header.as_ref().unwrap().stamp.unwrap();
        let first_ns = stamp.sec * 1_000_000_000 + stamp.nsec as i64;
        assert!(
            first_ns as f64 >= 1e9 / rate - 1e6 && first_ns as f64 <= 1e9 / rate + 1e6,
            "{rate} Hz: first sample at one period, not {first_ns} ns"
        );
    }
    f.runner_mut().clock.paused = true;
    f.run(500).unwrap();
    for (rate, sub) in &subs {
        assert!(take::<Imu>(sub).is_empty(), "{rate} Hz: no samples while paused");
    }
}

#[test]
fn noise_repeats_with_the_seed() {
    let noisy = sensor(
        "alt",
        "altimeter",
        100.0,
        "<altimeter><vertical_position><noise type=\"gaussian\"><mean>0</mean><stddev>0.5</stddev></noise></vertical_position></altimeter>",
    );
    let sdf = world("", &ball("probe", "0 0 1 0 0 0", 0.1, true, &noisy));
    let run = || {
        let mut f = load(&sdf);
        let sub = subscribe(&mut f, &topic("probe", "link", "alt", "altimeter"), "gz.msgs.Altimeter");
        run_and_take::<Altimeter>(&mut f, &sub, 1000).iter().map(|m| m.vertical_position).collect::<Vec<_>>()
    };
    let (a, b) = (run(), run());
    assert_eq!(a.len(), 100);
    assert_eq!(a, b, "same seed, same noise");
    let mean = a.iter().sum::<f64>() / 100.0;
    let sd = (a.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 100.0).sqrt();
    assert!(sd > 0.3 && sd < 0.7, "stddev 0.5 applied: {sd}");
}
