//! State logs: `troupe sim --record-path` (or `<record>` in the server config) writes them,
//! `troupe log diff` compares them.

use crate::harness::{server_config, world_sdf, TestDir, Troupe, UNPACED};

/// A world with one box whose Spawner adds a model at iteration `at` and removes it at
/// `remove_at`: the state changes while running, so the logs have something to compare.
fn world(box_z: f64, at: u64, remove_at: u64) -> String {
    let body = format!(
        "{UNPACED}\n    <model name=\"box\"><pose>0 0 {box_z} 0 0 0</pose><link name=\"link\"><collision name=\"c\"><geometry><box><size>1 1 1</size></box></geometry></collision></link></model>\n    \
         <plugin filename=\"troupe_testing\" name=\"testing::Spawner\"><at>{at}</at><remove_at>{remove_at}</remove_at>\n      \
         <sdf><![CDATA[<model name=\"spawned\"><pose>1 2 3 0 0 0</pose><link name=\"body\"/></model>]]></sdf></plugin>"
    );
    world_sdf("logged", &body)
}

fn record(dir: &TestDir, world_file: &str, log: &str, iterations: u64) {
    let out = Troupe::sim(dir)
        .args(["-r", "--iterations", &iterations.to_string(), "--record-path", log])
        .arg(dir.join(world_file))
        .run();
    out.assert_code(0);
    assert!(dir.join(log).is_file(), "no log written\n{out}");
}

fn diff(dir: &TestDir, a: &str, b: &str, extra: &[&str]) -> crate::harness::Output {
    Troupe::log(dir).arg("diff").arg(dir.join(a)).arg(dir.join(b)).args(extra).run()
}

/// Two runs of the same world record the same states, step by step.
#[test]
fn two_runs_of_one_world_do_not_differ() {
    let tmp = TestDir::new("log_same");
    tmp.write("w.sdf", &world(0.5, 3, 7));
    record(&tmp, "w.sdf", "a.tlog", 10);
    record(&tmp, "w.sdf", "b.tlog", 10);
    let out = diff(&tmp, "a.tlog", "b.tlog", &[]);
    out.assert_code(0);
    assert!(out.stdout.contains("no difference: the initial state and 10 steps match"), "{out}");
}

/// Worlds that differ in one pose differ from step 0, at that entity and component, with
/// both values; a tolerance does not hide a 0.25 m difference but does hide a tiny one.
#[test]
fn different_worlds_report_the_first_difference() {
    let tmp = TestDir::new("log_worlds");
    tmp.write("a.sdf", &world(0.5, 3, 7));
    tmp.write("b.sdf", &world(0.75, 3, 7));
    tmp.write("c.sdf", &world(0.5 + 1e-9, 3, 7));
    record(&tmp, "a.sdf", "a.tlog", 5);
    record(&tmp, "b.sdf", "b.tlog", 5);
    record(&tmp, "c.sdf", "c.tlog", 5);
    let out = diff(&tmp, "a.tlog", "b.tlog", &["--tolerance", "0.1"]);
    out.assert_code(1);
    for needle in [
        "note: the loaded worlds differ: fingerprint A ",
        "first difference at step 0 (iteration 0, sim time 0.000000000 s)",
        "entity 2 (logged::box), component gz_sim_components.Pose",
        "A: Pose { position: Vec3 { x: 0.0, y: 0.0, z: 0.5 }",
        "B: Pose { position: Vec3 { x: 0.0, y: 0.0, z: 0.75 }",
    ] {
        assert!(out.stdout.contains(needle), "stdout lacks {needle:?}\n{out}");
    }
    diff(&tmp, "a.tlog", "c.tlog", &[]).assert_code(1);
    let close = diff(&tmp, "a.tlog", "c.tlog", &["--tolerance", "1e-6"]);
    close.assert_code(0);
}

/// A model spawned at different iterations: the first difference is the step where one
/// run has the new entity and the other does not.
#[test]
fn a_run_time_difference_is_found_at_its_step() {
    let tmp = TestDir::new("log_spawn");
    tmp.write("early.sdf", &world(0.5, 3, 7));
    tmp.write("late.sdf", &world(0.5, 5, 7));
    record(&tmp, "early.sdf", "early.tlog", 10);
    record(&tmp, "late.sdf", "late.tlog", 10);
    let out = diff(&tmp, "early.tlog", "late.tlog", &[]);
    out.assert_code(1);
    assert!(out.stdout.contains("first difference at step 3 (iteration 3, sim time 0.003000000 s)"), "{out}");
    assert!(out.stdout.contains("(logged::spawned) exists only in A"), "{out}");
}

/// A shorter log is reported as such (exit 1).
#[test]
fn a_shorter_log_is_reported() {
    let tmp = TestDir::new("log_short");
    tmp.write("w.sdf", &world(0.5, 3, 7));
    record(&tmp, "w.sdf", "short.tlog", 4);
    record(&tmp, "w.sdf", "long.tlog", 9);
    let out = diff(&tmp, "long.tlog", "short.tlog", &[]);
    out.assert_code(1);
    assert!(out.stdout.contains("log B is shorter: it ends after step 4, the other goes on to step 9"), "{out}");
}

/// A log cut short (a killed recorder) is read up to its last complete record with a
/// warning; a corrupt one and a file that is no log are errors naming the file (exit 2).
#[test]
fn truncated_and_corrupt_logs() {
    let tmp = TestDir::new("log_bad");
    tmp.write("w.sdf", &world(0.5, 3, 7));
    record(&tmp, "w.sdf", "a.tlog", 6);
    let bytes = std::fs::read(tmp.join("a.tlog")).unwrap();
    std::fs::write(tmp.join("cut.tlog"), &bytes[..bytes.len() - 3]).unwrap();
    let out = diff(&tmp, "a.tlog", "cut.tlog", &[]);
    out.assert_code(1);
    out.assert_stderr_has(&["cut.tlog: truncated: record 6 at byte", "read up to the last complete record"]);
    assert!(out.stdout.contains("log B is shorter: it ends after step 5"), "{out}");

    let mut corrupt = bytes.clone();
    let at = bytes.len() - 5;
    corrupt[at] ^= 0x55;
    std::fs::write(tmp.join("corrupt.tlog"), &corrupt).unwrap();
    let out = diff(&tmp, "a.tlog", "corrupt.tlog", &[]);
    let msg = out.assert_error(2, &["corrupt.tlog: record 6 at byte ", "checksum mismatch"]);
    assert!(!msg.contains("a.tlog:"), "{msg}");

    let out = diff(&tmp, "w.sdf", "a.tlog", &[]);
    out.assert_error(2, &["w.sdf: not a Troupe state log"]);
    let out = diff(&tmp, "missing.tlog", "a.tlog", &[]);
    out.assert_error(2, &["missing.tlog: "]);
}

/// A log that cannot be created stops the start (exit 2), naming the path.
#[test]
fn an_unwritable_record_path_is_an_error() {
    let tmp = TestDir::new("log_unwritable");
    tmp.write("w.sdf", &world(0.5, 3, 7));
    let out = Troupe::sim(&tmp)
        .args(["-r", "--iterations", "5", "--record-path", "no/such/dir/a.tlog"])
        .arg(tmp.join("w.sdf"))
        .run();
    out.assert_error(2, &["cannot record: no/such/dir/a.tlog: "]);
    out.assert_stderr_lacks("troupe: running world(s)");
}

/// `<record>` in the server config records too; SIGTERM ends the run with the log flushed.
#[test]
fn config_record_and_sigterm_leave_a_readable_log() {
    let tmp = TestDir::new("log_config");
    tmp.write("w.sdf", &world(0.5, 3, 7));
    let config = tmp.write(
        "rec.config",
        &server_config("").replace("</server_config>", "  <record><record_path>cfg.tlog</record_path><keyframe_interval>2</keyframe_interval></record>\n</server_config>"),
    );
    let mut running = Troupe::sim(&tmp).args(["-r", "-v", "3", "--config"]).arg(&config).arg(tmp.join("w.sdf")).spawn();
    running.wait_for_stderr("recording world \"logged\"");
    std::thread::sleep(std::time::Duration::from_millis(300));
    running.signal("TERM");
    let out = running.wait();
    out.assert_code(0);
    let steps = out.summary_iterations();
    assert!(steps > 0, "{out}");
    let same = diff(&tmp, "cfg.tlog", "cfg.tlog", &[]);
    same.assert_code(0);
    assert!(same.stdout.contains(&format!("the initial state and {steps} steps match")), "{same}");
    same.assert_stderr_lacks("truncated");
}

/// `troupe sim --playback` replays a recorded log to its end without the world file, and
/// refuses a world file given with it.
#[test]
fn playback_replays_a_log_to_its_end() {
    let tmp = TestDir::new("log_playback");
    tmp.write("w.sdf", &world(0.5, 3, 7));
    record(&tmp, "w.sdf", "a.tlog", 10);
    std::fs::remove_file(tmp.join("w.sdf")).unwrap();
    let out = Troupe::sim(&tmp).args(["-r", "-v", "3", "--playback"]).arg(tmp.join("a.tlog")).run();
    out.assert_code(0);
    assert!(out.stdout.contains("iterations: 10 "), "plays all 10 recorded steps\n{out}");
    assert!(out.stderr.contains("the log ends at iteration 10; playback stops"), "{out}");

    tmp.write("w.sdf", &world(0.5, 3, 7));
    let out = Troupe::sim(&tmp).arg(tmp.join("w.sdf")).arg("--playback").arg(tmp.join("a.tlog")).run();
    out.assert_code(2);
    assert!(out.stderr.contains("--playback"), "{out}");
}
