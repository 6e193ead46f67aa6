//! Numbers out of range: refused at start with exit 2 (world files, `-z`) or by the service
//! with the reason while the world goes on (`set_physics`, `control`), never a panic or a
//! hang; a slowly paced run still stops promptly on a signal.

use crate::harness::{call, ok, world_sdf, TestDir, Troupe, UNPACED};

const USER_COMMANDS: &str =
    "    <plugin filename=\"gz-sim-user-commands-system\" name=\"gz::sim::systems::UserCommands\"/>";

/// Asserts the service answered false.
fn refused(out: crate::output::Output) {
    assert_eq!(out.code(), Some(1), "{out}");
    assert!(out.stderr.contains("answered false"), "{out}");
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
