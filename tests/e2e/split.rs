//! One world split across processes (docs/distributed.md): the primary mirrors what the secondaries
//! simulate, so its state log compares with a standalone run's (`troupe log diff
//! --performers`), and what a user asks of the primary (pause, step, set a pose, spawn,
//! remove, reset) reaches the secondaries as it would a standalone server.

use crate::harness::{self, server_config, world_sdf, Running, TestDir, Troupe, UNPACED};
use crate::output::Output;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const BOUND: Duration = Duration::from_secs(60);

fn secondary(dir: &TestDir, world: &Path) -> Troupe {
    Troupe::sim(dir).args(["--network-role", "secondary", "-v", "3"]).arg(world)
}

fn primary(dir: &TestDir, world: &Path, n: u32) -> Troupe {
    Troupe::sim(dir).args(["--network-role", "primary", "--network-secondaries", &n.to_string()]).arg(world)
}

/// Whether a secondary's log line says it took performers (created them here).
fn took(line: &str) -> bool {
    line.contains("takes performers [") && !line.contains("takes performers []")
}

/// `troupe log diff` of two logs with `flags`.
fn diff(dir: &TestDir, flags: &[&str], a: &Path, b: &Path) -> Output {
    Troupe::log(dir).arg("diff").args(flags).arg(a).arg(b).run()
}

#[test]
fn the_gz_distributed_world_as_1_plus_3_logs_every_performer_as_standalone_bit_for_bit() {
    let Some(worlds) = troupe_test_machine::gz_worlds() else { return };
    let dir = TestDir::new("split_gz_1p3");
    let secondaries: Vec<Running> =
        (0..3).map(|_| secondary(&dir, &worlds.join("distributed_secondary.sdf")).spawn()).collect();
    let p = primary(&dir, &worlds.join("distributed_primary.sdf"), 3)
        .args(["-r", "--iterations", "400", "--record-path"])
        .arg(dir.join("primary.tlog"))
        .run();
    p.assert_code(0);
    let mut takers = 0;
    for s in secondaries {
        let out = s.wait_within(BOUND);
        out.assert_code(0).assert_stderr_lacks("error");
        takers += usize::from(out.stderr.lines().any(took));
    }
    assert_eq!(takers, 3, "each secondary simulates one of the three shapes");
    let alone = Troupe::sim(&dir)
        .args(["-r", "--iterations", "400", "--record-path"])
        .arg(dir.join("standalone.tlog"))
        .arg(worlds.join("distributed_standalone.sdf"))
        .run();
    alone.assert_code(0);
    let d = diff(&dir, &["--performers"], &dir.join("primary.tlog"), &dir.join("standalone.tlog"));
    d.assert_code(0);
    assert!(d.stdout.contains("no difference: the initial state and 400 steps match"), "{d}");
    // The comparison can fail: the whole worlds differ (gz's primary file sizes its ground
    // plane differently).
    let whole = diff(&dir, &[], &dir.join("primary.tlog"), &dir.join("standalone.tlog"));
    assert_eq!(whole.code(), Some(1), "{whole}");
    assert!(whole.stdout.contains("ground_plane"), "{whole}");
}

/// Two performer boxes on a ground plane; no world plugins: each role's config says which
/// systems it runs.
fn boxes_world(dir: &TestDir) -> PathBuf {
    let shape = |name: &str, x: f64| {
        format!(
            "<model name=\"{name}\"><pose>{x} 0 0.5 0 0 0</pose><link name=\"l\"><inertial><mass>1</mass></inertial>\
             <collision name=\"c\"><geometry><box><size>1 1 1</size></box></geometry></collision></link></model>"
        )
    };
    let body = format!(
        "{UNPACED}\n<model name=\"ground\"><static>true</static><link name=\"l\"><collision name=\"c\"><geometry>\
         <plane><normal>0 0 1</normal><size>100 100</size></plane></geometry></collision></link></model>\n{}\n{}\n\
         <plugin name=\"gz::sim\" filename=\"dummy\"><performer name=\"pa\"><ref>a</ref></performer>\
         <performer name=\"pb\"><ref>b</ref></performer></plugin>",
        shape("a", 0.0),
        shape("b", 5.0)
    );
    dir.write("boxes.sdf", &world_sdf("w", &body))
}

const PHYSICS: &str = r#"<plugin entity_name="*" entity_type="world" filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>"#;
const COMMANDS: &str = r#"<plugin entity_name="*" entity_type="world" filename="gz-sim-user-commands-system" name="gz::sim::systems::UserCommands"/>
<plugin entity_name="*" entity_type="world" filename="gz-sim-scene-broadcaster-system" name="gz::sim::systems::SceneBroadcaster"/>"#;

/// Calls `service` and asserts it answered true.
fn call(dir: &TestDir, service: &str, req_type: &str, req: &str) {
    harness::ok(harness::call(dir, service, req_type, req));
}

/// Waits until the world's statistics say an iteration `done` accepts.
fn wait_for_iteration(dir: &TestDir, what: &str, done: impl Fn(u64) -> bool) {
    let deadline = Instant::now() + BOUND;
    loop {
        let (at, stats) = stats_iteration(dir);
        if at.is_some_and(&done) {
            return;
        }
        assert!(Instant::now() < deadline, "the world never reached iteration {what}:\n{stats}");
    }
}

/// The iteration of world `w`'s next statistics message, and the echo that read it.
fn stats_iteration(dir: &TestDir) -> (Option<u64>, Output) {
    let stats = Troupe::topic(dir).args(["-e", "-t", "/world/w/stats", "-n", "1", "--duration", "20"]).run();
    // Protobuf text leaves out zero fields: a message without the line is at 0.
    let at = match stats.stdout.lines().find_map(|l| l.trim().strip_prefix("iterations: ")) {
        Some(v) => v.parse::<u64>().ok(),
        None if stats.stdout.contains("paused") => Some(0),
        None => None,
    };
    (at, stats)
}

/// Waits until the world's statistics say `iterations`.
fn wait_iterations(dir: &TestDir, iterations: u64) {
    wait_for_iteration(dir, &iterations.to_string(), |i| i == iterations);
}

fn step(dir: &TestDir, n: u32, then: u64) {
    call(dir, "/world/w/control", "gz.msgs.WorldControl", &format!("pause: true, multi_step: {n}"));
    wait_iterations(dir, then);
}

/// The z of model `name` in one `/world/w/pose/info` message.
fn z_of(dir: &TestDir, name: &str) -> f64 {
    let out = Troupe::topic(dir).args(["-e", "-t", "/world/w/pose/info", "-n", "1", "--duration", "20"]).run();
    out.assert_code(0);
    let text = out.stdout;
    let at = text.find(&format!("name: \"{name}\"")).unwrap_or_else(|| panic!("no pose of {name} in:\n{text}"));
    let rest = &text[at..];
    let pos = rest.find("position {").expect("a position");
    let block = &rest[pos..rest[pos..].find('}').map_or(rest.len(), |e| pos + e)];
    block.lines().find_map(|l| l.trim().strip_prefix("z: ")).and_then(|v| v.parse().ok()).unwrap_or(0.0)
}

/// The same user session against the server of `dir` (started paused): steps, a pose set on
/// a performer, a static model spawned and removed, a reset, then a stop.
fn session(dir: &TestDir) {
    step(dir, 10, 10);
    call(dir, "/world/w/set_pose/blocking", "gz.msgs.Pose", "name: \"a\", position { x: 0, y: 0, z: 3 }");
    step(dir, 10, 20);
    let z = z_of(dir, "a");
    assert!(z > 2.9 && z < 3.0, "a was put at 3 m and fell for 10 ms: z = {z}");
    call(
        dir,
        "/world/w/create/blocking",
        "gz.msgs.EntityFactory",
        r#"sdf: "<model name=\"wall\"><static>true</static><pose>10 0 1 0 0 0</pose><link name=\"l\"><collision name=\"c\"><geometry><box><size>1 1 2</size></box></geometry></collision></link></model>""#,
    );
    step(dir, 10, 30);
    call(dir, "/world/w/remove/blocking", "gz.msgs.Entity", "name: \"wall\", type: MODEL");
    step(dir, 10, 40);
    call(dir, "/world/w/control", "gz.msgs.WorldControl", "pause: true, reset { all: true }");
    wait_iterations(dir, 0);
    step(dir, 10, 10);
    let z = z_of(dir, "a");
    assert!(z < 0.6, "the reset put a back on the ground: z = {z}");
    call(dir, "/server_control", "gz.msgs.ServerControl", "stop: true");
}

#[test]
fn pause_step_set_pose_spawn_remove_and_reset_through_the_primary_do_what_they_do_standalone() {
    let dir = TestDir::new("split_session");
    let world = boxes_world(&dir);
    let phys = dir.write("physics.config", &server_config(PHYSICS));
    let commands = dir.write("commands.config", &server_config(COMMANDS));
    let both = dir.write("both.config", &server_config(&format!("{PHYSICS}\n{COMMANDS}")));

    // Standalone.
    let mut alone = Troupe::sim(&dir)
        .arg("--config")
        .arg(&both)
        .arg("--record-path")
        .arg(dir.join("standalone.tlog"))
        .arg(&world)
        .spawn();
    alone.wait_for_stderr("running world(s) w");
    session(&dir);
    alone.wait_within(BOUND).assert_code(0);

    // 1 + 2: the same session, talking to the primary only.
    let secondaries: Vec<Running> =
        (0..2).map(|_| secondary(&dir, &world).arg("--config").arg(&phys).spawn()).collect();
    let mut p = primary(&dir, &world, 2)
        .arg("--config")
        .arg(&commands)
        .arg("--record-path")
        .arg(dir.join("primary.tlog"))
        .spawn();
    p.wait_for_stderr("stepping");
    session(&dir);
    p.wait_within(BOUND).assert_code(0);
    for s in secondaries {
        s.wait_within(BOUND).assert_code(0).assert_stderr_lacks("error");
    }

    // Every iteration ends in the same state: the performers bit for bit...
    let d = diff(&dir, &["--by-iteration", "--performers"], &dir.join("primary.tlog"), &dir.join("standalone.tlog"));
    d.assert_code(0);
    assert!(d.stdout.contains("no difference"), "{d}");
    // ...and the whole world too (the spawned wall came and went at the same iterations).
    let whole = diff(&dir, &["--by-iteration"], &dir.join("primary.tlog"), &dir.join("standalone.tlog"));
    whole.assert_code(0);
}

#[test]
fn a_dynamic_model_spawned_through_the_primary_becomes_a_performer_one_secondary_simulates_with_its_systems() {
    let dir = TestDir::new("split_spawn");
    let world = boxes_world(&dir);
    let phys = dir.write("physics.config", &server_config(PHYSICS));
    let commands = dir.write("commands.config", &server_config(COMMANDS));
    let secondaries: Vec<Running> =
        (0..2).map(|_| secondary(&dir, &world).arg("--config").arg(&phys).spawn()).collect();
    let mut p = primary(&dir, &world, 2).arg("--config").arg(&commands).spawn();
    p.wait_for_stderr("stepping");
    // The ball carries a system: only the primary reads this SDF, and the system must run
    // where the ball is simulated (it publishes the ball's own pose).
    call(
        &dir,
        "/world/w/create/blocking",
        "gz.msgs.EntityFactory",
        r#"sdf: "<model name=\"ball\"><pose>20 0 5 0 0 0</pose><link name=\"l\"><inertial><mass>1</mass></inertial><collision name=\"c\"><geometry><sphere><radius>0.5</radius></sphere></geometry></collision></link><plugin filename=\"gz-sim-pose-publisher-system\" name=\"gz::sim::systems::PosePublisher\"><publish_link_pose>false</publish_link_pose><publish_nested_model_pose>true</publish_nested_model_pose><publish_model_pose>true</publish_model_pose></plugin></model>""#,
    );
    step(&dir, 100, 100);
    let z = z_of(&dir, "ball");
    assert!(z < 4.97, "the ball falls on a secondary and the primary shows it: z = {z}");
    // The echo connects to the secondary that publishes; steps go on until a pose came.
    let echo = Troupe::topic(&dir).args(["-e", "-t", "/model/ball/pose", "-n", "1", "--duration", "60"]).spawn();
    let deadline = Instant::now() + BOUND;
    let mut at = 100;
    while !echo.stdout_so_far().contains("position") {
        assert!(
            Instant::now() < deadline,
            "nothing on /model/ball/pose from the ball's system:\n{}",
            echo.stderr_so_far()
        );
        at += 10;
        step(&dir, 10, at);
    }
    let got = echo.wait();
    let pose_z = got
        .stdout
        .split("position {")
        .nth(1)
        .and_then(|b| b.lines().find_map(|l| l.trim().strip_prefix("z: ")))
        .and_then(|v| v.parse::<f64>().ok());
    assert!(pose_z.is_some_and(|z| z < 4.97), "the ball's system publishes its falling pose:\n{}", got.stdout);
    call(&dir, "/server_control", "gz.msgs.ServerControl", "stop: true");
    p.wait_within(BOUND).assert_code(0);
    let mut takes = 0;
    for s in secondaries {
        let out = s.wait_within(BOUND);
        out.assert_code(0);
        takes += out.stderr.lines().filter(|l| took(l) && !l.contains("step 1:")).count();
        // The ball's state goes to its owner with the hand-over only: no secondary holds a
        // copy it does not simulate.
        let copied = out.stderr.lines().any(|l| l.contains("from the primary's forwarded state") && l.contains("ball"));
        assert!(!copied, "a secondary created the ball from the state for everyone:\n{}", out.stderr);
    }
    assert_eq!(takes, 1, "exactly one secondary took the spawned ball");
}

#[test]
fn a_dynamic_model_that_is_not_a_performer_is_refused_unless_auto_performers() {
    let dir = TestDir::new("split_unsplit");
    let body = format!("{UNPACED}\n<model name=\"loose\"><pose>0 0 1 0 0 0</pose><link name=\"l\"/></model>");
    let world = dir.write("w.sdf", &world_sdf("w", &body));
    let out = primary(&dir, &world, 1).run();
    out.assert_code(1);
    out.assert_stderr_has(&["dynamic model \"loose\" is not a performer", "--network-auto-performers"]);
    let out = secondary(&dir, &world).run();
    out.assert_code(1);
    out.assert_stderr_has(&["\"loose\""]);
    // With auto performers it becomes one and the run goes.
    let s = secondary(&dir, &world).arg("--network-auto-performers").spawn();
    let p = primary(&dir, &world, 1).args(["-r", "--iterations", "20", "--network-auto-performers"]).run();
    p.assert_code(0);
    s.wait_within(BOUND).assert_code(0);
}

/// The first step at which `troupe log diff` found a difference, if any.
fn first_difference(out: &Output) -> Option<u64> {
    let rest = out.stdout.split("first difference at step ").nth(1)?;
    rest.split(' ').next()?.parse().ok()
}

#[test]
fn the_gz_levels_world_as_1_plus_2_hands_shapes_over_and_stays_with_standalone() {
    let Some(worlds) = troupe_test_machine::gz_worlds() else { return };
    let dir = TestDir::new("split_gz_levels");
    // 11 s of simulated time: the two shapes roll down through levels and meet in one (one
    // is handed over to the other's secondary, at step 9539).
    let n = "11000";
    let secondaries: Vec<Running> =
        (0..2).map(|_| secondary(&dir, &worlds.join("distributed_levels_secondary.sdf")).spawn()).collect();
    let p = primary(&dir, &worlds.join("distributed_levels_primary.sdf"), 2)
        .args(["-r", "--iterations", n, "--record-path"])
        .arg(dir.join("primary.tlog"))
        .run();
    p.assert_code(0);
    let mut handovers = Vec::new();
    for s in secondaries {
        let out = s.wait_within(BOUND);
        out.assert_code(0).assert_stderr_lacks("error");
        for line in out.stderr.lines().filter(|l| took(l) && !l.contains("step 1:")) {
            let step: u64 = line
                .split("step ")
                .nth(1)
                .and_then(|r| r.split(':').next())
                .and_then(|v| v.parse().ok())
                .expect("a step");
            handovers.push(step);
        }
    }
    handovers.sort();
    // They meet once and stay in touching levels to the end: one hand-over, no ping-pong.
    assert_eq!(
        handovers.len(),
        1,
        "the shapes meet in one level: exactly one hand-over, got them at steps {handovers:?}"
    );
    let alone = Troupe::sim(&dir)
        .args(["-r", "--iterations", n, "--record-path"])
        .arg(dir.join("standalone.tlog"))
        .arg(worlds.join("distributed_levels_standalone.sdf"))
        .run();
    alone.assert_code(0);
    let (a, b) = (dir.join("primary.tlog"), dir.join("standalone.tlog"));
    // Bit for bit up to the first hand-over (the physics engine's contact cache does not
    // travel with a performer, so it may differ from there on)...
    let exact = diff(&dir, &["--performers"], &a, &b);
    if let Some(step) = first_difference(&exact) {
        assert!(
            step >= handovers[0],
            "the logs differ at step {step}, before the first hand-over at {}:\n{exact}",
            handovers[0]
        );
    }
    // ...and the poses stay within 1 mm (and 0.001 per quaternion component) to the end.
    let poses = diff(&dir, &["--performers", "--component", "Pose", "--tolerance", "0.001"], &a, &b);
    poses.assert_code(0);
}

/// Two levels 20 m apart, a performer resting in each; `a` carries an IMU.
fn imu_world(dir: &TestDir) -> PathBuf {
    let shape = |name: &str, x: f64, sensor: &str| {
        format!(
            "<model name=\"{name}\"><pose>{x} 0 0.5 0 0 0</pose><link name=\"l\"><inertial><mass>1</mass></inertial>\
             <collision name=\"c\"><geometry><box><size>1 1 1</size></box></geometry></collision>{sensor}</link></model>"
        )
    };
    let level = |name: &str, x: f64, block: &str| {
        format!(
            "<level name=\"{name}\"><pose>{x} 0 0 0 0 0</pose><geometry><box><size>4 4 4</size></box></geometry>\
             <buffer>0.5</buffer><ref>{block}</ref></level>"
        )
    };
    let block = |name: &str, x: f64| {
        format!("<model name=\"{name}\"><static>true</static><pose>{x} 1.5 0.25 0 0 0</pose><link name=\"l\"/></model>")
    };
    let body = format!(
        "<physics name=\"rt\" type=\"ode\"><max_step_size>0.001</max_step_size><real_time_factor>1</real_time_factor></physics>\n\
         <plugin filename=\"gz-sim-physics-system\" name=\"gz::sim::systems::Physics\"/>\n\
         <plugin filename=\"gz-sim-user-commands-system\" name=\"gz::sim::systems::UserCommands\"/>\n\
         <plugin filename=\"gz-sim-imu-system\" name=\"gz::sim::systems::Imu\"/>\n\
         <model name=\"ground\"><static>true</static><link name=\"l\"><collision name=\"c\"><geometry>\
         <plane><normal>0 0 1</normal><size>100 100</size></plane></geometry></collision></link></model>\n{}\n{}\n{}\n{}\n\
         <plugin name=\"gz::sim\" filename=\"dummy\"><performer name=\"pa\"><ref>a</ref></performer>\
         <performer name=\"pb\"><ref>b</ref></performer>{}{}</plugin>",
        shape("a", 0.0, "<sensor name=\"imu\" type=\"imu\"><update_rate>100</update_rate><topic>/imu_a</topic></sensor>"),
        shape("b", 19.0, ""),
        block("block1", 0.0),
        block("block2", 20.0),
        level("l1", 0.0, "block1"),
        level("l2", 20.0, "block2"),
    );
    dir.write("imu.sdf", &world_sdf("w", &body))
}

/// The sim times (ns) of the header stamps in an echo of IMU messages.
fn stamps(text: &str) -> Vec<i64> {
    text.split("stamp {")
        .skip(1)
        .map(|chunk| {
            let block = chunk.split('}').next().unwrap_or_default();
            let field = |name: &str| {
                block
                    .lines()
                    .find_map(|l| l.trim().strip_prefix(name))
                    .and_then(|v| v.trim().parse::<i64>().ok())
                    .unwrap_or(0)
            };
            field("sec:") * 1_000_000_000 + field("nsec:")
        })
        .collect()
}

/// Ends an echo of 100 Hz IMU messages; asserts it got over a second of them with no gap or
/// repeat in their sim-time stamps.
fn assert_imu_without_gap(echo: Running) {
    std::thread::sleep(Duration::from_millis(500));
    echo.signal("TERM");
    let got = echo.wait();
    let t = stamps(&got.stdout);
    assert!(t.len() >= 100, "about 100 samples a second for over a second: {}", t.len());
    for w in t.windows(2) {
        assert!(
            w[1] > w[0] && w[1] - w[0] <= 10_000_000,
            "a gap or a repeat in sim time: {} ns then {} ns",
            w[0],
            w[1]
        );
    }
}

/// Two secondaries and a primary of `world`, once stepping.
fn start_imu_run(dir: &TestDir, world: &Path) -> (Running, Vec<Running>) {
    let secondaries: Vec<Running> = (0..2).map(|_| secondary(dir, world).spawn()).collect();
    let mut p = primary(dir, world, 2).spawn();
    p.wait_for_stderr("stepping");
    (p, secondaries)
}

/// Stops the run through the primary; every process exits 0. Answers each performer take
/// after the first step, with the index of the secondary that logged it.
fn stop_and_collect_takes(dir: &TestDir, p: Running, secondaries: Vec<Running>) -> Vec<(usize, String)> {
    call(dir, "/server_control", "gz.msgs.ServerControl", "stop: true");
    p.wait_within(BOUND).assert_code(0);
    let mut takes = Vec::new();
    for (i, s) in secondaries.into_iter().enumerate() {
        let out = s.wait_within(BOUND);
        out.assert_code(0);
        takes.extend(out.stderr.lines().filter(|l| took(l) && !l.contains("step 1:")).map(|l| (i, l.to_string())));
    }
    takes
}

#[test]
fn an_imu_on_a_performer_handed_over_keeps_publishing_under_its_topic_without_a_gap() {
    let dir = TestDir::new("split_imu");
    let world = imu_world(&dir);
    // Paused at first: the steps still go (paused), so every secondary has advertised.
    let (p, secondaries) = start_imu_run(&dir, &world);
    let echo = Troupe::topic(&dir).args(["-e", "-t", "/imu_a", "--duration", "120"]).spawn();
    let deadline = Instant::now() + BOUND;
    while !echo.stdout_so_far().contains("marker") {
        assert!(Instant::now() < deadline, "the echo never connected:\n{}", echo.stderr_so_far());
        Troupe::topic(&dir)
            .args(["-t", "/imu_a", "-m", "gz.msgs.IMU", "-p", "entity_name: \"marker\""])
            .run()
            .assert_code(0);
    }
    call(&dir, "/world/w/control", "gz.msgs.WorldControl", "pause: false");
    wait_until_iteration_at_least(&dir, 500);
    // Teleport a into b's level: the two are grouped and a is handed over to b's secondary.
    call(&dir, "/world/w/set_pose", "gz.msgs.Pose", "name: \"a\", position { x: 21.5, y: 0, z: 0.5 }");
    wait_until_iteration_at_least(&dir, 1500);
    let takes = stop_and_collect_takes(&dir, p, secondaries);
    assert_eq!(takes.len(), 1, "a was handed over once: {takes:?}");
    assert_imu_without_gap(echo);
}

#[test]
fn an_imu_on_a_spawned_performer_keeps_publishing_without_a_gap_when_it_is_handed_over() {
    let dir = TestDir::new("split_spawned_imu");
    let world = imu_world(&dir);
    let (p, secondaries) = start_imu_run(&dir, &world);
    // Spawned into a's level, so a's secondary simulates it; only that secondary's IMU
    // system advertises /imu_c, and the others learn the topic from its answer.
    call(
        &dir,
        "/world/w/create/blocking",
        "gz.msgs.EntityFactory",
        r#"sdf: "<model name=\"c\"><pose>-1.3 -1.3 0.5 0 0 0</pose><link name=\"l\"><inertial><mass>1</mass></inertial><collision name=\"c\"><geometry><box><size>1 1 1</size></box></geometry></collision><sensor name=\"imu\" type=\"imu\"><update_rate>100</update_rate><topic>/imu_c</topic></sensor></link></model>""#,
    );
    let echo = Troupe::topic(&dir).args(["-e", "-t", "/imu_c", "--duration", "120"]).spawn();
    call(&dir, "/world/w/control", "gz.msgs.WorldControl", "pause: false");
    let deadline = Instant::now() + BOUND;
    while !echo.stdout_so_far().contains("stamp") {
        assert!(Instant::now() < deadline, "nothing on /imu_c:\n{}", echo.stderr_so_far());
        std::thread::sleep(Duration::from_millis(50));
    }
    // Half a second more (at real time), for the echo to find every secondary's /imu_c.
    let now = match stats_iteration(&dir) {
        (Some(at), _) => at,
        (None, stats) => panic!("no statistics from the primary:\n{stats}"),
    };
    wait_until_iteration_at_least(&dir, now + 500);
    // Into b's level: c joins b's group and is handed over to b's secondary.
    call(&dir, "/world/w/set_pose", "gz.msgs.Pose", "name: \"c\", position { x: 21.5, y: 0, z: 0.5 }");
    wait_until_iteration_at_least(&dir, now + 1500);
    let takers = stop_and_collect_takes(&dir, p, secondaries);
    // c is taken twice: when spawned, and by the other secondary when handed over.
    assert!(
        takers.len() == 2 && takers[0].0 != takers[1].0,
        "c spawned on one secondary, handed over to the other: {takers:?}"
    );
    assert_imu_without_gap(echo);
}

/// Waits until the world's statistics say at least `iterations`.
fn wait_until_iteration_at_least(dir: &TestDir, iterations: u64) {
    wait_for_iteration(dir, &format!(">= {iterations}"), |i| i >= iterations);
}
