//! The user-commands services from outside: a `troupe sim` server driven by
//! `troupe service`. What the world holds is read from the log lines of the template
//! system (`<every>1</every>`: on every unpaused step, how many models and which is
//! highest), so these tests do not depend on the scene broadcaster.

use crate::harness::{call, ok, world_sdf, TestDir, Troupe};

const BODY: &str = r#"    <plugin filename="gz-sim-user-commands-system" name="gz::sim::systems::UserCommands"/>
    <plugin filename="troupe_template" name="troupe::Template"><every>1</every><label>tpl</label></plugin>
    <model name="box"><pose>0 0 1 0 0 0</pose><link name="link"/></model>"#;

/// Asserts the service answered false.
fn refused(out: crate::output::Output) {
    assert_eq!(out.code(), Some(1), "{out}");
    assert!(out.stderr.contains("answered false"), "{out}");
}

fn step(dir: &TestDir) {
    ok(call(dir, "/world/w/control", "gz.msgs.WorldControl", "pause: true, multi_step: 1"));
}

const BALL: &str = r#"sdf: "<model name=\"ball\"><pose>0 0 5 0 0 0</pose><link name=\"l\"/></model>""#;

#[test]
fn spawn_move_and_reset_through_the_services() {
    let dir = TestDir::new("commands-e2e");
    let world = dir.write("w.sdf", &world_sdf("w", BODY));
    let mut srv = Troupe::sim(&dir).arg(world).arg("-v").arg("3").spawn();
    srv.wait_for_stderr("running world(s) w");
    let listed = Troupe::service(&dir).arg("-l").run();
    for s in [
        "/world/w/create",
        "/world/w/create/blocking",
        "/world/w/remove/blocking",
        "/world/w/set_pose/blocking",
        "/world/w/set_physics",
    ] {
        assert!(listed.stdout.lines().any(|l| l == s), "{s} is not listed:\n{listed}");
    }

    // Spawn while paused; the name is then taken.
    ok(call(&dir, "/world/w/create/blocking", "gz.msgs.EntityFactory", BALL));
    srv.wait_for_stderr("/world/w/create: created entity");
    refused(call(&dir, "/world/w/create/blocking", "gz.msgs.EntityFactory", BALL));
    srv.wait_for_stderr("an entity named \"ball\" already exists");
    step(&dir);
    srv.wait_for_stderr("2 models, highest Some((\"ball\", 5.0))");

    // Move it while paused: seen after one step.
    ok(call(&dir, "/world/w/set_pose/blocking", "gz.msgs.Pose", "name: \"ball\", position { z: 7 }"));
    step(&dir);
    srv.wait_for_stderr("2 models, highest Some((\"ball\", 7.0))");

    // Malformed SDF is refused with the reason, and the server carries on.
    refused(call(&dir, "/world/w/create/blocking", "gz.msgs.EntityFactory", r#"sdf: "<model name=\"x\"><link>""#));
    srv.wait_for_stderr("/world/w/create: the sdf string: <create_from_sdf>:1:23: malformed XML");

    // Reset (staying paused: every control request sets the pause state): the spawned
    // model is gone.
    ok(call(&dir, "/world/w/control", "gz.msgs.WorldControl", "pause: true, reset { all: true }"));
    step(&dir);
    srv.wait_for_stderr("1 models, highest Some((\"box\", 1.0))");
    refused(call(&dir, "/world/w/remove/blocking", "gz.msgs.Entity", "name: \"ball\", type: MODEL"));
    ok(call(&dir, "/world/w/remove/blocking", "gz.msgs.Entity", "name: \"box\", type: MODEL"));

    let out = call(&dir, "/server_control", "gz.msgs.ServerControl", "stop: true");
    ok(out);
    let end = srv.wait();
    end.assert_code(0);
    end.assert_stderr_lacks("panicked");
}
