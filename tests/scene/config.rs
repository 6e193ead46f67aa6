//! The broadcaster's XML options.

use crate::support::{decode, fixture, log_lines, subscribe};
use plugin_api::msgs::PoseV;
use std::time::{Duration, Instant};

#[test]
fn bad_rates_warn_naming_the_value_and_keep_the_defaults() {
    let mut f =
        fixture("<state_hertz>-5</state_hertz><dynamic_pose_hertz>fast</dynamic_pose_hertz>").finalize().unwrap();
    let lines = log_lines();
    let warned = |needle: &str| lines.iter().any(|l| l.starts_with("[WARN]") && l.contains(needle));
    assert!(warned("<state_hertz> is \"-5\", not a positive number; using the default 60"), "{lines:#?}");
    assert!(warned("<dynamic_pose_hertz> is \"fast\", not a number; using the default 60"), "{lines:#?}");
    // The server runs, and dynamic_pose/info keeps gz's 60 a second.
    let sub = subscribe(&mut f, "/world/w/dynamic_pose/info", "gz.msgs.Pose_V");
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(500) {
        f.run(1).unwrap();
    }
    let n = decode::<PoseV>(&sub.take()).len();
    let elapsed = start.elapsed().as_secs_f64();
    assert!(n >= 2 && n as f64 <= 60.0 * elapsed + 1.0, "{n} messages in {elapsed:.2} s");
}

#[test]
fn good_rates_are_quiet() {
    let mut f = fixture("<state_hertz>10</state_hertz><dynamic_pose_hertz>30</dynamic_pose_hertz>").finalize().unwrap();
    f.run(5).unwrap();
    let lines = log_lines();
    assert!(lines.iter().all(|l| !l.contains("scene broadcaster")), "{lines:#?}");
}
