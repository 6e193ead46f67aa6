//! `troupe sim --levels` on the levels design's example world (`worlds/levels_seed000.sdf`), driven
//! from outside: `troupe service` moves a model, makes it a performer through
//! `/world/default/level/set_performer`, and steps; the level manager's log lines say what
//! it loads. Bad levels input stops the start with the file and line.

use crate::harness::{call, ok, repo_file, server_config, world_sdf, TestDir, Troupe};

fn step(dir: &TestDir, n: u32) {
    ok(call(dir, "/world/default/control", "gz.msgs.WorldControl", &format!("pause: true, multi_step: {n}")));
}

#[test]
fn levels_load_as_a_runtime_performer_moves() {
    let dir = TestDir::new("levels-e2e");
    // User commands (to move a model) and no physics: nothing falls while we look.
    let config = dir.write(
        "levels.config",
        &server_config(
            r#"    <plugin entity_name="*" entity_type="world" filename="gz-sim-user-commands-system" name="gz::sim::systems::UserCommands"/>"#,
        ),
    );
    let mut srv = Troupe::sim(&dir)
        .args(["--levels", "-v", "3", "--config"])
        .arg(config)
        .arg(repo_file("worlds/levels_seed000.sdf"))
        .spawn();
    srv.wait_for_stderr("running world(s) default");
    let listed = Troupe::service(&dir).arg("-l").run();
    assert!(listed.stdout.lines().any(|l| l == "/world/default/level/set_performer"), "{listed}");

    // The first step loads what R1, R2 (L1) and R3 (L2) touch; L3 stays unloaded.
    step(&dir, 1);
    srv.wait_for_stderr("loaded level \"L1\"");
    srv.wait_for_stderr("loaded level \"L2\"");

    // R4 is an ordinary model: moving it into L3 loads nothing until it is a performer.
    ok(call(&dir, "/world/default/set_pose/blocking", "gz.msgs.Pose", "name: \"R4\", position { x: -5, y: -5 }"));
    ok(call(&dir, "/world/default/level/set_performer", "gz.msgs.StringMsg", "data: \"R4\""));
    srv.wait_for_stderr("model \"R4\" is now a performer");
    step(&dir, 2);
    srv.wait_for_stderr("loaded level \"L3\"");

    // A name that does not exist is answered false at once, not retried.
    let refused = call(&dir, "/world/default/level/set_performer", "gz.msgs.StringMsg", "data: \"nobody\"");
    assert_eq!(refused.code(), Some(1), "{refused}");
    assert!(refused.stderr.contains("answered false"), "{refused}");
    srv.signal("TERM");
    let out = srv.wait();
    out.assert_code(0);
    out.assert_stderr_lacks("unloaded level \"L3\"");
}

#[test]
fn bad_levels_input_stops_the_start_with_file_and_line() {
    let dir = TestDir::new("levels-e2e-bad");
    let body = r#"    <model name="m"><link name="l"/></model>
    <plugin name="gz::sim" filename="dummy">
      <level name="broken"><ref>m</ref></level>
    </plugin>"#;
    let text = world_sdf("w", body);
    let line = 1 + text.lines().position(|l| l.contains("broken")).unwrap();
    let world = dir.write("bad.sdf", &text);
    let out = Troupe::sim(&dir).arg("--levels").arg(&world).run();
    out.assert_error(2, &[&format!("bad.sdf:{line}:"), "<level name=\"broken\"> has no <geometry><box>"]);
}
