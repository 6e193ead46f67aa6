//! Numbers out of range: refused at start with exit 2 (world files, `-z`) or by the service
//! with the reason while the world goes on (`set_physics`, `control`), never a panic or a
//! hang; a slowly paced run still stops promptly on a signal. Files named by a user or a
//! client that are devices, pipes or too large are refused before they are read.

use crate::harness::{call, ok, world_sdf, TestDir, Troupe, UNPACED};
use std::time::Duration;

const USER_COMMANDS: &str =
    "    <plugin filename=\"gz-sim-user-commands-system\" name=\"gz::sim::systems::UserCommands\"/>";

/// Asserts the service answered false.
fn refused(out: crate::output::Output) {
    assert_eq!(out.code(), Some(1), "{out}");
    assert!(out.stderr.contains("answered false"), "{out}");
}

/// `<max_step_size>1e300</max_step_size>` overflowed the clock on the first step; a NaN pose
/// or gravity went into the physics. Each is now an error at load naming file and line.
#[test]
fn out_of_range_world_values_are_errors_at_load() {
    let tmp = TestDir::new("limits_sdf");
    let cases = [
        (
            "step.sdf",
            "    <physics name=\"p\">\n      <max_step_size>1e300</max_step_size>\n    </physics>",
            5,
            "max_step_size 1e300 s is out of range",
        ),
        (
            "pose.sdf",
            "    <model name=\"m\">\n      <pose>0 0 nan 0 0 0</pose>\n    </model>",
            5,
            "<pose>: \"nan\" is not a finite number",
        ),
        ("gravity.sdf", "    <gravity>0 0 NaN</gravity>", 4, "<gravity>: \"NaN\" is not a finite number"),
    ];
    for (name, body, line, why) in cases {
        let file = tmp.write(name, &world_sdf("w", body));
        let out = Troupe::sim(&tmp).args(["-r", "--iterations", "5"]).arg(&file).run();
        out.assert_error(2, &[&format!("{}:{line}: ", file.display()), why]);
        out.assert_stderr_lacks("panicked");
    }
}

/// A `set_physics` step size the clock cannot take (1e300 s panicked the server at the next
/// step) is refused with the reason; the world then runs on with its own step size.
#[test]
fn set_physics_out_of_range_is_refused_and_the_world_goes_on() {
    let dir = TestDir::new("limits_set_physics");
    let world = dir.write("w.sdf", &world_sdf("w", &format!("{UNPACED}\n{USER_COMMANDS}")));
    let mut srv = Troupe::sim(&dir).args(["--iterations", "20"]).arg(world).spawn();
    srv.wait_for_stderr("running world(s) w");
    refused(call(&dir, "/world/w/set_physics/blocking", "gz.msgs.Physics", "max_step_size: 1e300"));
    srv.wait_for_stderr("/world/w/set_physics: max_step_size 1e300 s is out of range");
    ok(call(&dir, "/world/w/control", "gz.msgs.WorldControl", "pause: false"));
    let out = srv.wait();
    out.assert_code(0).assert_stderr_lacks("panicked");
    assert_eq!(out.summary_iterations(), 20, "{out}");
    assert_eq!(out.summary_values("sim time:"), [0.02], "the step size stayed 1 ms\n{out}");
}

/// `run_to_sim_time { sec: i64::MAX }` overflowed on the simulation thread; it is refused
/// with the reason, and the world then runs when asked.
#[test]
fn run_to_sim_time_past_the_clock_is_refused_and_the_world_goes_on() {
    let dir = TestDir::new("limits_run_to");
    let world = dir.write("w.sdf", &world_sdf("w", UNPACED));
    let mut srv = Troupe::sim(&dir).args(["--iterations", "20"]).arg(world).spawn();
    srv.wait_for_stderr("running world(s) w");
    let req = "pause: false, run_to_sim_time { sec: 9223372036854775807 }";
    refused(call(&dir, "/world/w/control", "gz.msgs.WorldControl", req));
    srv.wait_for_stderr("run_to_sim_time { sec: 9223372036854775807, nsec: 0 } does not fit the clock");
    ok(call(&dir, "/world/w/control", "gz.msgs.WorldControl", "pause: false"));
    let out = srv.wait();
    out.assert_code(0).assert_stderr_lacks("panicked");
    assert_eq!(out.summary_iterations(), 20, "{out}");
}

/// `-z 1e-300` panicked (its period overflows a `Duration`) and `-z 1e-12` slept for
/// millennia: a rate slower than one step a day cannot start (exit 2, saying why).
#[test]
fn update_rates_slower_than_one_step_a_day_cannot_start() {
    let tmp = TestDir::new("limits_slow_rate");
    let file = tmp.write("w.sdf", &world_sdf("w", UNPACED));
    for rate in ["1e-300", "1e-12"] {
        let out = Troupe::sim(&tmp).args(["-r", "--iterations", "2", "-z", rate]).arg(&file).run();
        out.assert_error(2, &[&format!("-z {rate}: an update rate below"), "one step a day"]);
        out.assert_stderr_lacks("panicked");
    }
}

/// `-z 0` and `-z nan` mean what they mean to gz-sim (no rate: the world's own pace), with
/// one warning saying so.
#[test]
fn zero_negative_and_nan_update_rates_are_ignored_with_one_warning() {
    let tmp = TestDir::new("limits_nan_rate");
    let file = tmp.write("w.sdf", &world_sdf("w", UNPACED));
    // A negative rate is a value, not a flag (`-z -5` was refused as an unknown option).
    for (rate, shown) in [("0", "-z 0.0"), ("nan", "-z NaN"), ("-5", "-z -5.0")] {
        let out = Troupe::sim(&tmp).args(["-r", "--iterations", "5", "-z", rate]).arg(&file).run();
        out.assert_code(0);
        assert_eq!(out.summary_iterations(), 5, "{out}");
        let warnings = out.stderr_lines_with(shown);
        assert_eq!(warnings.len(), 1, "one warning for -z {rate}\n{out}");
        assert!(warnings[0].contains("ignored"), "{out}");
    }
}

/// At `-z 0.1` the runner waited 10 s between steps in one sleep and saw SIGTERM only after
/// it. SIGTERM and SIGINT now end such a run well within 5 s (the bound is loose on purpose:
/// a loaded machine is slow; the run itself reacts within milliseconds).
#[test]
fn a_slowly_paced_run_stops_promptly_on_signals() {
    let tmp = TestDir::new("limits_slow_signal");
    let file = tmp.write("w.sdf", &world_sdf("w", UNPACED));
    for signal in ["TERM", "INT"] {
        let mut running = Troupe::sim(&tmp).args(["-r", "-z", "0.1"]).arg(&file).spawn();
        running.wait_for_stderr("troupe: running world(s) w");
        // Into the first 10-second wait.
        std::thread::sleep(Duration::from_millis(500));
        running.signal(signal);
        let out = running.wait_within(Duration::from_secs(5));
        out.assert_code(0).assert_stderr_lacks("panicked");
        assert!(out.summary_iterations() <= 1, "SIG{signal}: one step at most, then the wait\n{out}");
    }
}

/// How long a refused start may take on a loaded machine (it takes milliseconds; reading
/// `/dev/zero` grew to 10 GB and ignored SIGTERM).
const REFUSAL_BOUND: Duration = Duration::from_secs(10);

/// `/dev/zero`, a pipe, or a file past the 256 MiB bound as the world, an included model, the
/// server config or a log to play back: exit 2 at once, naming the file and why.
#[test]
fn devices_pipes_and_huge_files_named_as_inputs_cannot_start() {
    let tmp = TestDir::new("limits_files");
    let fifo = tmp.join("fifo.sdf");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", fifo.display());
    // Sparse: 257 MiB that take no room.
    let huge = tmp.join("huge.sdf");
    std::fs::File::create(&huge).and_then(|f| f.set_len(257 << 20)).expect("a sparse file");
    let include = tmp.write("include.sdf", &world_sdf("w", "    <include><uri>/dev/zero</uri></include>"));
    let world = tmp.write("w.sdf", &world_sdf("w", UNPACED));
    let (fifo, huge) = (fifo.display().to_string(), huge.display().to_string());
    let include_at = format!("{}:4: <include> of /dev/zero", include.display());
    let cases: [(Vec<String>, Vec<&str>); 6] = [
        (vec!["/dev/zero".into()], vec!["/dev/zero", "a character device, not a regular file"]),
        (vec![fifo.clone()], vec![&fifo, "a pipe (FIFO), not a regular file"]),
        (vec![huge.clone()], vec![&huge, "larger than the 256 MiB"]),
        (vec![include.display().to_string()], vec![&include_at, "a character device"]),
        (
            vec!["--config".into(), "/dev/zero".into(), world.display().to_string()],
            vec!["/dev/zero", "a character device"],
        ),
        (vec!["--playback".into(), fifo.clone()], vec![&fifo, "a pipe (FIFO)"]),
    ];
    for (args, needles) in cases {
        let out = Troupe::sim(&tmp).args(["-r", "--iterations", "2"]).args(&args).spawn().wait_within(REFUSAL_BOUND);
        out.assert_error(2, &needles);
        out.assert_stderr_lacks("panicked");
    }
}

/// `create` of a model that includes `/dev/zero` is refused naming it; the world goes on.
#[test]
fn create_including_dev_zero_is_refused_and_the_world_goes_on() {
    let dir = TestDir::new("limits_create_file");
    let world = dir.write("w.sdf", &world_sdf("w", &format!("{UNPACED}\n{USER_COMMANDS}")));
    let mut srv = Troupe::sim(&dir).args(["--iterations", "5"]).arg(world).spawn();
    srv.wait_for_stderr("running world(s) w");
    let req = r#"sdf: "<sdf version=\"1.9\"><model name=\"m\"><include><uri>/dev/zero</uri></include></model></sdf>""#;
    refused(call(&dir, "/world/w/create/blocking", "gz.msgs.EntityFactory", req));
    srv.wait_for_stderr("/dev/zero: it is a character device");
    ok(call(&dir, "/world/w/control", "gz.msgs.WorldControl", "pause: false"));
    let out = srv.wait();
    out.assert_code(0).assert_stderr_lacks("panicked");
    assert_eq!(out.summary_iterations(), 5, "{out}");
}
