//! How runs end and how fast they go: `--iterations`, the stop event, signals, pacing.

use crate::harness::{world_sdf, Recorded, TestDir, Troupe, UNPACED};

const RECORDER: &str =
    "    <plugin filename=\"troupe_testing\" name=\"testing::Recorder\"><output>recorded.txt</output></plugin>";

/// `--iterations N` stops at exactly N: the summary says N and the Recorder saw N.
#[test]
fn iterations_stops_at_exactly_n() {
    let tmp = TestDir::new("iterations_exact");
    let file = tmp.write("w.sdf", &world_sdf("w", &format!("{UNPACED}\n{RECORDER}")));
    for n in [1u64, 37, 250] {
        let out = Troupe::sim(&tmp).args(["-r", "--iterations", &n.to_string()]).arg(&file).run();
        out.assert_code(0);
        assert_eq!(out.summary_iterations(), n, "{out}");
        let rec = Recorded::read(&tmp, "recorded.txt", &out);
        assert_eq!((rec.world.as_str(), rec.iterations), ("w", n), "{out}");
        let sim_time: f64 = tmp
            .read("recorded.txt")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("sim_time "))
            .and_then(|v| v.trim().parse().ok())
            .expect("sim_time line");
        assert!((sim_time - n as f64 * 0.001).abs() < 1e-9, "sim time {sim_time} after {n} steps of 1 ms");
    }
}

/// `testing::Stopper` emitting the stop event at iteration 7 ends the run cleanly after 7
/// iterations (no `--iterations`).
#[test]
fn stop_event_ends_the_run() {
    let tmp = TestDir::new("stopper");
    let stopper = "    <plugin filename=\"troupe_testing\" name=\"testing::Stopper\"><at>7</at></plugin>";
    let file = tmp.write("w.sdf", &world_sdf("w", &format!("{stopper}\n{RECORDER}")));
    let out = Troupe::sim(&tmp).arg("-r").arg(&file).run();
    out.assert_code(0);
    assert_eq!(out.summary_iterations(), 7, "{out}");
    assert_eq!(Recorded::read(&tmp, "recorded.txt", &out).iterations, 7);
}

/// SIGTERM and SIGINT end a run that has no iteration limit with exit 0, and the stop
/// event reaches the systems (the Recorder writes its file).
#[test]
fn sigterm_and_sigint_stop_cleanly() {
    let tmp = TestDir::new("signals");
    let file = tmp.write("w.sdf", &world_sdf("w", RECORDER));
    for signal in ["TERM", "INT"] {
        let _ = std::fs::remove_file(tmp.join("recorded.txt"));
        let mut running = Troupe::sim(&tmp).arg("-r").arg(&file).spawn();
        running.wait_for_stderr("troupe: running world(s) w");
        std::thread::sleep(std::time::Duration::from_millis(200));
        running.signal(signal);
        let out = running.wait();
        out.assert_code(0);
        let iterations = out.summary_iterations();
        assert!(iterations > 0, "SIG{signal}: no iteration ran in 200 ms\n{out}");
        let rec = Recorded::read(&tmp, "recorded.txt", &out);
        assert_eq!(rec.iterations, iterations, "SIG{signal}: the Recorder saw another count than the summary");
    }
}

/// A paused server (no `-r`) also stops on a signal, having run no iteration.
#[test]
fn paused_server_stops_on_signal() {
    let tmp = TestDir::new("paused_signal");
    let file = tmp.write("w.sdf", &world_sdf("w", RECORDER));
    let mut running = Troupe::sim(&tmp).arg(&file).spawn();
    running.wait_for_stderr("troupe: running world(s) w");
    running.signal("INT");
    let out = running.wait();
    out.assert_code(0).assert_stderr_has(&["starting paused"]);
    assert_eq!(out.summary_iterations(), 0, "{out}");
    assert!(tmp.read("recorded.txt").is_some(), "the stop event did not reach the Recorder\n{out}");
}

/// `-z 1000` paces an otherwise unpaced world: 200 iterations take about 0.2 s (loose
/// lower bound 0.15 s; no upper bound).
#[test]
fn update_rate_paces_the_run() {
    let tmp = TestDir::new("pacing");
    let file = tmp.write("w.sdf", &world_sdf("w", UNPACED));
    let out = Troupe::sim(&tmp).args(["-r", "-z", "1000", "--iterations", "200"]).arg(&file).run();
    out.assert_code(0);
    assert_eq!(out.summary_iterations(), 200, "{out}");
    let wall = out.summary_wall_time();
    assert!(wall >= 0.15, "200 iterations at 1000 Hz took {wall} s by the summary\n{out}");
    assert!(out.elapsed.as_secs_f64() >= 0.15, "the process lived {:?}\n{out}", out.elapsed);
}

/// `-s` (server only) and `--seed` are accepted and change nothing visible here.
#[test]
fn server_only_and_seed_are_accepted() {
    let tmp = TestDir::new("s_and_seed");
    let file = tmp.write("w.sdf", &world_sdf("w", UNPACED));
    let out = Troupe::sim(&tmp).args(["-s", "-r", "--seed", "42", "--iterations", "10"]).arg(&file).run();
    out.assert_code(0);
    assert_eq!(out.summary_iterations(), 10, "{out}");
}

/// No world file: an empty world named `default`.
#[test]
fn no_file_runs_the_empty_default_world() {
    let tmp = TestDir::new("no_file");
    let out = Troupe::sim(&tmp).args(["-r", "--iterations", "5"]).run();
    out.assert_code(0).assert_stderr_has(&["troupe: running world(s) default"]);
    assert_eq!(out.summary_iterations(), 5, "{out}");
}
