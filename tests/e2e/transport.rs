//! The transport from outside: a `troupe sim` server driven by the `troupe topic` and
//! `troupe service` tools and by Debian's `nngcat`, a client we did not write.

use crate::harness::{world_sdf, TestDir, Troupe};
use std::process::Command;
use std::time::{Duration, Instant};

const MODEL: &str = r#"<model name="box"><pose>0 0 1 0 0 0</pose><link name="link"/></model>"#;

/// Starts a server on world `w` (running if `run`), waiting until it serves.
fn server(dir: &TestDir, run: bool) -> crate::harness::Running {
    let world = dir.write("w.sdf", &world_sdf("w", MODEL));
    let mut sim = Troupe::sim(dir).arg(world).arg("-v").arg("3");
    if run {
        sim = sim.arg("-r");
    }
    let mut running = sim.spawn();
    running.wait_for_stderr("running world(s) w");
    running
}

fn call(dir: &TestDir, service: &str, req_type: &str, rep_type: &str, req: &str) -> crate::output::Output {
    Troupe::service(dir)
        .args(["-s", service, "--reqtype", req_type, "--reptype", rep_type, "--timeout", "10000", "--req", req])
        .run()
}

fn stop(dir: &TestDir, server: crate::harness::Running) -> crate::output::Output {
    let out = call(dir, "/server_control", "gz.msgs.ServerControl", "gz.msgs.Boolean", "stop: true");
    out.assert_code(0);
    assert!(out.stdout.contains("data: true"), "{out}");
    server.wait()
}

/// A field's value in the first message of text-format output: `iterations: 10` -> "10".
fn field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines().find_map(|l| l.trim().strip_prefix(&format!("{name}: ")))
}

#[test]
fn pause_step_and_stats_through_the_control_service() {
    let dir = TestDir::new("transport-control");
    let srv = server(&dir, false);
    let listed = Troupe::service(&dir).arg("-l").run();
    listed.assert_code(0);
    for s in ["/world/w/control", "/gazebo/worlds", "/server_control", "/gazebo/resource_paths/get"] {
        assert!(listed.stdout.lines().any(|l| l == s), "{s} is not listed:\n{listed}");
    }
    let topics = Troupe::topic(&dir).arg("-l").run();
    for t in ["/world/w/stats", "/world/w/clock", "/stats", "/clock"] {
        assert!(topics.stdout.lines().any(|l| l == t), "{t} is not listed:\n{topics}");
    }
    // Started paused: ten steps on request, then paused again.
    let out = call(&dir, "/world/w/control", "gz.msgs.WorldControl", "gz.msgs.Boolean", "pause: true, multi_step: 10");
    out.assert_code(0);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let stats = Troupe::topic(&dir).args(["-e", "-t", "/world/w/stats", "-n", "1", "--duration", "20"]).run();
        stats.assert_code(0);
        if field(&stats.stdout, "iterations") == Some("10") {
            assert_eq!(field(&stats.stdout, "paused"), Some("true"), "{stats}");
            assert!(stats.stdout.contains("sim_time {\n  nsec: 10000000\n}"), "10 steps of 1 ms:\n{stats}");
            break;
        }
        assert!(Instant::now() < deadline, "the world never reached 10 iterations:\n{stats}");
    }
    let worlds = call(&dir, "/gazebo/worlds", "gz.msgs.Empty", "gz.msgs.StringMsg_V", "");
    assert_eq!(worlds.stdout.trim(), "data: \"w\"", "{worlds}");
    let end = stop(&dir, srv);
    end.assert_code(0);
    assert!(end.stdout.contains("iterations: 10 "), "{end}");
}

#[test]
fn bad_requests_are_answered_and_the_server_keeps_running() {
    let dir = TestDir::new("transport-bad");
    let srv = server(&dir, true);
    // Wrong types for the service: refused by the tool, naming both.
    let out = call(&dir, "/world/w/control", "gz.msgs.Pose", "gz.msgs.Boolean", "");
    assert_eq!(out.code(), Some(2), "{out}");
    assert!(out.stderr.contains("takes gz.msgs.WorldControl"), "{out}");
    // Text that is not the type.
    let out = call(&dir, "/world/w/control", "gz.msgs.WorldControl", "gz.msgs.Boolean", "pose: 3");
    assert_eq!(out.code(), Some(2), "{out}");
    assert!(out.stderr.contains("gz.msgs.WorldControl") && out.stderr.contains("pose"), "{out}");
    // A service nobody offers.
    let out = call(&dir, "/world/w/nothing", "gz.msgs.Empty", "gz.msgs.Empty", "");
    assert_eq!(out.code(), Some(1), "{out}");
    assert!(out.stderr.contains("offers service \"/world/w/nothing\""), "{out}");
    // An unknown message type.
    let out = call(&dir, "/world/w/control", "gz.msgs.Nope", "gz.msgs.Boolean", "");
    assert_eq!(out.code(), Some(2), "{out}");
    assert!(out.stderr.contains("unknown message type \"gz.msgs.Nope\""), "{out}");
    // Garbage bytes straight to the socket: the server answers false and carries on.
    if let Some(addr) = rep_address(&dir, "/world/w/control") {
        if nngcat_available() {
            let req = dir.write("garbage.bin", "");
            std::fs::write(&req, b"/world/w/control\0\xff\xff\xff").unwrap();
            let out = nngcat(&[
                "--req",
                "--dial",
                &addr,
                "--file",
                req.to_str().unwrap(),
                "--quoted",
                "--recv-timeout",
                "10",
            ]);
            assert!(out.starts_with("\"0"), "a malformed WorldControl is answered false: {out}");
        }
    }
    // A second server with the same world name in the partition is refused.
    let second = Troupe::sim(&dir).arg(dir.join("w.sdf")).arg("--iterations").arg("1").run();
    assert_eq!(second.code(), Some(2), "{second}");
    assert!(second.stderr.contains("another world named \"w\" is running in partition"), "{second}");
    stop(&dir, srv).assert_code(0);
}

#[test]
fn topics_published_by_one_tool_reach_another() {
    let dir = TestDir::new("transport-pubsub");
    let echo = Troupe::topic(&dir).args(["-e", "-t", "/chat", "-n", "1", "--duration", "60"]).spawn();
    // The echo's subscription is up once its node file is in the rendezvous directory; a
    // message published before it connects is lost, so publish until it has one.
    let deadline = Instant::now() + Duration::from_secs(60);
    let out = loop {
        let p = Troupe::topic(&dir).args(["-t", "/chat", "-m", "gz.msgs.StringMsg", "-p", "data: \"hello\""]).run();
        p.assert_code(0);
        if echo_done(&echo) || Instant::now() > deadline {
            break echo.wait();
        }
    };
    out.assert_code(0);
    assert_eq!(out.stdout.trim(), "data: \"hello\"", "{out}");
}

/// `troupe topic -e ... | head`: once head has its lines and leaves, the echo ends with 0 at
/// its next message (it panicked on the broken pipe, exit 101).
#[test]
fn an_echo_whose_reader_leaves_ends_quietly() {
    let dir = TestDir::new("transport-echo-head");
    let srv = server(&dir, true);
    // The clock is published every step: the echo writes on until it meets the closed pipe,
    // long before its own 60 s end.
    let out = Troupe::topic(&dir)
        .args(["-e", "-t", "/world/w/clock", "--duration", "60"])
        .piped_into_head(3)
        .spawn()
        .wait_within(Duration::from_secs(40));
    out.assert_code(0);
    assert_eq!(out.stdout.lines().count(), 3, "head's three lines\n{out}");
    assert!(!out.stderr.contains("panicked"), "{out}");
    stop(&dir, srv).assert_code(0);
}

fn echo_done(echo: &crate::harness::Running) -> bool {
    echo.stdout_so_far().contains("hello")
}

/// The address of the node offering `service`, from `troupe service -i`.
fn rep_address(dir: &TestDir, service: &str) -> Option<String> {
    let info = Troupe::service(dir).args(["-i", "-s", service]).run();
    info.assert_code(0);
    field(&info.stdout, "Address").map(str::to_string)
}

fn nngcat_available() -> bool {
    troupe_test_machine::program("nngcat", "nng-utils")
}

fn nngcat(args: &[&str]) -> String {
    let out = Command::new("nngcat").args(args).output().expect("nngcat runs");
    if !out.status.success() {
        eprintln!("nngcat {args:?}: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn nngcat_calls_a_service_and_subscribes_to_a_topic() {
    if !nngcat_available() {
        return;
    }
    let dir = TestDir::new("transport-nngcat");
    let srv = server(&dir, true);
    // A service: its name, a NUL, the request bytes (an empty gz.msgs.Empty); the reply is
    // '1' and a StringMsg_V whose field 2 holds "w" (bytes 0x12 0x01 'w').
    let addr = rep_address(&dir, "/gazebo/worlds").expect("the server's address is listed");
    let req = dir.write("worlds.bin", "");
    std::fs::write(&req, b"/gazebo/worlds\0").unwrap();
    let reply =
        nngcat(&["--req", "--dial", &addr, "--file", req.to_str().unwrap(), "--quoted", "--recv-timeout", "10"]);
    assert_eq!(reply.trim(), "\"1\\x12\\x01w\"", "nngcat's view of the reply");
    // A topic: subscribe to the clock's prefix and take one message.
    let info = Troupe::topic(&dir).args(["-i", "-t", "/world/w/clock"]).run();
    let pub_addr =
        info.stdout.lines().skip(1).find_map(|l| l.split(", ").nth(1)).expect("a publisher address").to_string();
    let msg = nngcat(&[
        "--sub",
        "--dial",
        &pub_addr,
        "--subscribe",
        "/world/w/clock",
        "--count",
        "1",
        "--quoted",
        "--recv-timeout",
        "20",
    ]);
    assert!(msg.starts_with("\"/world/w/clock\\x00gz.msgs.Clock\\x00"), "a clock message as nngcat prints it: {msg}");
    stop(&dir, srv).assert_code(0);
}

/// The `host:port` a server started with `--transport-host` tells other machines to use.
fn announced_peer(server: &mut crate::harness::Running) -> String {
    server.wait_for_stderr("reach this server with --peer ");
    let err = server.stderr_so_far();
    let line =
        err.lines().find_map(|l| l.split_once("reach this server with --peer ").map(|(_, a)| a.trim().to_string()));
    line.expect("the announcement names an address")
}

#[test]
fn tools_of_another_machine_reach_a_server_by_its_address() {
    // Two test directories are two partitions: as far as discovery goes, two machines.
    let here = TestDir::new("transport-remote-server");
    let there = TestDir::new("transport-remote-tool");
    let world = here.write("w.sdf", &world_sdf("w", MODEL));
    let mut server = Troupe::sim(&here).arg(world).args(["-r", "--transport-host", "127.0.0.1"]).spawn();
    let peer = announced_peer(&mut server);

    let alone = Troupe::service(&there).arg("-l").run();
    alone.assert_code(0);
    assert!(!alone.stdout.contains("/world/w/control"), "without --peer the other partition sees nothing\n{alone}");
    let listed = Troupe::service(&there).args(["-l", "--peer", &peer]).run();
    listed.assert_code(0);
    assert!(listed.stdout.contains("/world/w/control"), "{listed}");
    let topics = Troupe::topic(&there).args(["-l"]).env("TROUPE_PEERS", &peer).run();
    assert!(topics.stdout.contains("/world/w/stats"), "TROUPE_PEERS works as --peer does\n{topics}");
    let echo = Troupe::topic(&there).args(["-e", "-t", "/world/w/stats", "-n", "1", "--peer", &peer]).run();
    echo.assert_code(0);
    assert!(field(&echo.stdout, "iterations").is_some(), "{echo}");

    let out = Troupe::service(&there)
        .args(["-s", "/server_control", "--reqtype", "gz.msgs.ServerControl", "--reptype", "gz.msgs.Boolean"])
        .args(["--timeout", "10000", "--req", "stop: true", "--peer", &peer])
        .run();
    out.assert_code(0);
    assert!(out.stdout.contains("data: true"), "{out}");
    server.wait().assert_code(0);
}

#[test]
fn bad_and_silent_peers_are_named() {
    let dir = TestDir::new("transport-bad-peer");
    Troupe::service(&dir)
        .args(["-l", "--peer", "robot.local"])
        .run()
        .assert_code(2)
        .assert_stderr_has(&["robot.local", "has no port"]);
    Troupe::topic(&dir)
        .arg("-l")
        .env("TROUPE_PEERS", "ipc:///tmp/x")
        .run()
        .assert_code(2)
        .assert_stderr_has(&["TROUPE_PEERS", "only tcp://"]);
    Troupe::sim(&dir).args(["--transport-port", "7000"]).run().assert_code(2).assert_stderr_has(&["--transport-host"]);
    // A port nobody listens on: taken from the system, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = Troupe::service(&dir)
        .args(["-s", "/world/w/control", "--reqtype", "gz.msgs.WorldControl", "--reptype", "gz.msgs.Boolean"])
        .args(["--req", "pause: true", "--peer", &format!("127.0.0.1:{port}")])
        .run();
    out.assert_stderr_has(&[&format!("peer tcp://127.0.0.1:{port} did not answer")]);
    assert_ne!(out.code(), Some(0), "{out}");
}
