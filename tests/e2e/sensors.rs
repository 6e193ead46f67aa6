//! The sensors system in a real `troupe sim` at real-time factor 1: a real subscriber (the
//! `troupe topic` tool, another process) receives every sample.

use crate::harness::{world_sdf, TestDir, Troupe};
use std::time::{Duration, Instant};

const TOPIC: &str = "/world/w/model/probe/link/link/sensor/imu/imu";

fn body() -> String {
    r#"    <physics name="rt" type="ode"><max_step_size>0.001</max_step_size><real_time_factor>1</real_time_factor></physics>
    <plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>
    <plugin filename="gz-sim-imu-system" name="gz::sim::systems::Imu"/>
    <model name="probe"><static>true</static><link name="link">
      <sensor name="imu" type="imu"><update_rate>50</update_rate></sensor>
    </link></model>"#
        .to_string()
}

#[test]
fn a_subscriber_at_real_time_receives_every_sample_of_two_seconds() {
    let dir = TestDir::new("sensors-rt");
    let world = dir.write("w.sdf", &world_sdf("w", &body()));
    // Paused until the subscriber is connected; 2000 iterations of 1 ms, then it exits.
    let mut srv = Troupe::sim(&dir).arg(world).args(["-v", "3", "--iterations", "2000"]).spawn();
    srv.wait_for_stderr("running world(s) w");
    let echo = Troupe::topic(&dir).args(["-e", "-t", TOPIC, "--duration", "120"]).spawn();
    // The echo is connected once it receives a marker published by another tool process.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !echo.stdout_so_far().contains("marker") {
        assert!(Instant::now() < deadline, "the echo never connected:\n{}", echo.stderr_so_far());
        Troupe::topic(&dir)
            .args(["-t", TOPIC, "-m", "gz.msgs.IMU", "-p", "entity_name: \"marker\""])
            .run()
            .assert_code(0);
    }
    // The server's publisher was found before the marker's (it was up first); run.
    let out = Troupe::service(&dir)
        .args([
            "-s",
            "/world/w/control",
            "--reqtype",
            "gz.msgs.WorldControl",
            "--reptype",
            "gz.msgs.Boolean",
            "--timeout",
            "10000",
            "--req",
            "pause: false",
        ])
        .run();
    out.assert_code(0);
    srv.wait().assert_code(0);
    std::thread::sleep(Duration::from_millis(500));
    echo.signal("TERM");
    let got = echo.wait();
    let text = &got.stdout;
    let samples = text.matches("entity_name: \"probe::link::imu\"").count();
    assert_eq!(samples, 100, "50 Hz for 2 s of sim time:\n{}", got.stderr);
    // Sequence numbers 1..=100, in order: none lost.
    let seqs: Vec<u64> = text
        .split("key: \"seq\"")
        .skip(1)
        .filter_map(|rest| rest.split("value: \"").nth(1)?.split('"').next()?.parse().ok())
        .collect();
    assert_eq!(seqs, (1..=100).collect::<Vec<u64>>());
    assert!(!got.stderr.contains("missed"), "{}", got.stderr);
}
