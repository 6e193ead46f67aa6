//! Which systems run where, seen from outside: a one-command local run (1 + 1) with the
//! default server config logs, per process, the systems its role skips and why, and runs.

use crate::harness::{default_config, world_sdf, TestDir, Troupe, UNPACED};

#[test]
fn each_role_logs_the_systems_it_skips_and_the_run_ends_cleanly() {
    let dir = TestDir::new("roles_log");
    let body = format!(
        "{UNPACED}\n<model name=\"box\"><pose>0 0 1 0 0 0</pose><link name=\"l\">\
         <collision name=\"c\"><geometry><box><size>1 1 1</size></box></geometry></collision></link>\
         <plugin filename=\"troupe_testing\" name=\"testing::Noop\"/></model>"
    );
    let world = dir.write("w.sdf", &world_sdf("w", &body));
    let out = Troupe::sim(&dir)
        .args(["-r", "-v", "3", "--iterations", "20", "--distributed", "1", "--network-auto-performers", "--config"])
        .arg(default_config())
        .arg(&world)
        .run();
    out.assert_code(0).assert_stderr_has(&[
        // The primary: physics and the box's system.
        "world \"w\" (primary): 2 system(s) not run in this role",
        "gz::sim::systems::Physics (troupe_physics_rapier, ",
        "by default: physics runs where performers are simulated",
        "testing::Noop (troupe_testing, ",
        "by default: a system attached to a model or sensor runs where its model is simulated",
        // The secondary: the user-facing systems.
        "world \"w\" (secondary): 2 system(s) not run in this role",
        "gz::sim::systems::UserCommands (troupe_user_commands, ",
        "by default: user commands go to the primary",
        "gz::sim::systems::SceneBroadcaster (troupe_scene_broadcaster, ",
    ]);
}
