//! The model systems from outside: `worlds/diff_drive.sdf` run by `troupe sim`, driven with
//! `troupe topic -p` on gz-sim's topic names and watched through its odometry.

use crate::harness::{repo_file, TestDir, Troupe};
use std::time::{Duration, Instant};

/// `x: <value>` inside the `position { ... }` block of a text-format Odometry.
fn odometry_x(text: &str) -> Option<f64> {
    let block = &text[text.find("position {")?..];
    let block = &block[..block.find('}')?];
    block.lines().find_map(|l| l.trim().strip_prefix("x: ")).and_then(|v| v.parse().ok())
}

#[test]
fn cmd_vel_published_with_the_tool_moves_the_vehicle_odometry() {
    let dir = TestDir::new("model-systems-diff-drive");
    let mut server = Troupe::sim(&dir).arg(repo_file("worlds/diff_drive.sdf")).args(["-r", "-v", "3"]).spawn();
    server.wait_for_stderr("running world(s) diff_drive");
    // The odometry is published from the start, at zero.
    let first =
        Troupe::topic(&dir).args(["-e", "-t", "/model/vehicle_blue/odometry", "-n", "1", "--duration", "60"]).run();
    first.assert_code(0);
    assert!(first.stdout.contains("key: \"frame_id\"") && first.stdout.contains("vehicle_blue/odom"), "{first}");
    // A message published before the server's subscriber connects is lost: publish until the
    // odometry shows the vehicle moving forward.
    let deadline = Instant::now() + Duration::from_secs(90);
    let moved = loop {
        let p = Troupe::topic(&dir)
            .args(["-t", "/model/vehicle_blue/cmd_vel", "-m", "gz.msgs.Twist", "-p", "linear: {x: 1.0}"])
            .run();
        p.assert_code(0);
        let echo =
            Troupe::topic(&dir).args(["-e", "-t", "/model/vehicle_blue/odometry", "-n", "1", "--duration", "30"]).run();
        echo.assert_code(0);
        let x = odometry_x(&echo.stdout).unwrap_or(0.0);
        if x > 0.05 {
            break x;
        }
        assert!(
            Instant::now() < deadline,
            "the odometry never moved; last:\n{echo}\nserver stderr:\n{}",
            server.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    eprintln!("odometry x reached {moved}");
    let stop = Troupe::service(&dir)
        .args([
            "-s",
            "/server_control",
            "--reqtype",
            "gz.msgs.ServerControl",
            "--reptype",
            "gz.msgs.Boolean",
            "--timeout",
            "10000",
            "--req",
            "stop: true",
        ])
        .run();
    stop.assert_code(0);
    let out = server.wait();
    out.assert_code(0);
    assert!(!out.stderr.contains("not available yet"), "every system of the world loaded:\n{out}");
}
