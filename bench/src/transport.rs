//! Part 6: Transport: a service round trip and a topic's publish-to-receive latency through
//! Troupe next to bare nng ping-pong between two processes, and the step rate of a world
//! answering a flood of service calls next to its unloaded rate.
//!
//! The peer is this benchmark's own executable started again with `--transport-peer KIND`
//! (see [`peer_main`]); it is killed when the measurement ends.

use nng::options::protocol::pubsub::Subscribe;
use nng::options::{Options, RecvBufferSize, SendBufferSize};
use nng::{Protocol, Socket};
use plugin_api::msgs::StringMsg;
use plugin_api::prost::Message;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use troupe::server::{Server, ServerOptions};
use troupe::transport::{Answer, Bind, Node, TopicOptions};

const WAIT: Duration = Duration::from_secs(20);

/// A child process killed on drop.
struct Peer(Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_peer(args: &[&str], partition: &str) -> Result<Peer, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the executable: {e}"))?;
    let child = Command::new(exe)
        .arg("--transport-peer")
        .args(args)
        .env("TROUPE_PARTITION", partition)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the benchmark's peer process: {e}"))?;
    Ok(Peer(child))
}

/// The peer side, run by `troupe-bench --transport-peer KIND ARGS...`; never returns
/// normally (the parent kills it).
pub fn peer_main(args: &[String]) -> Result<(), String> {
    let nng = |e: nng::Error| e.to_string();
    match args {
        [kind, url] if kind == "bare-rep" => {
            let rep = Socket::new(Protocol::Rep0).map_err(nng)?;
            rep.listen(url).map_err(nng)?;
            loop {
                let m = rep.recv().map_err(nng)?;
                rep.send(m).map_err(|(_, e)| e.to_string())?;
            }
        }
        [kind, ping, pong] if kind == "bare-echo" => {
            let sub = Socket::new(Protocol::Sub0).map_err(nng)?;
            sub.set_opt::<RecvBufferSize>(1024).map_err(nng)?;
            sub.set_opt::<Subscribe>(Vec::new()).map_err(nng)?;
            let publ = Socket::new(Protocol::Pub0).map_err(nng)?;
            publ.set_opt::<SendBufferSize>(1024).map_err(nng)?;
            publ.listen(pong).map_err(nng)?;
            sub.dial_async(ping).map_err(nng)?;
            loop {
                let m = sub.recv().map_err(nng)?;
                publ.send(m).map_err(|(_, e)| e.to_string())?;
            }
        }
        [kind] if kind == "troupe" => {
            let node = Node::open(&troupe::transport::registry::partition(), &Bind::Ipc).map_err(|e| e.to_string())?;
            node.offer_direct(
                "/bench/echo",
                "gz.msgs.StringMsg",
                "gz.msgs.StringMsg",
                Arc::new(|r: &[u8]| Answer::Ok(r.to_vec())),
            )
            .map_err(|e| e.to_string())?;
            let pong = node
                .advertise("/bench/pong", "gz.msgs.StringMsg", TopicOptions::default())
                .map_err(|e| e.to_string())?;
            let ping = node.subscribe("/bench/ping", "gz.msgs.StringMsg").map_err(|e| e.to_string())?;
            loop {
                if let Some(m) = ping.recv_timeout(Duration::from_secs(1)) {
                    node.publish(pong, &m.payload).map_err(|e| e.to_string())?;
                }
            }
        }
        _ => Err(format!("unknown --transport-peer arguments {args:?}")),
    }
}

fn mean_us(total: Duration, n: u64) -> f64 {
    total.as_secs_f64() * 1e6 / n as f64
}

/// Bare nng REQ/REP between two processes: the mean round trip.
fn bare_service(n: u64, tag: &str) -> Result<f64, String> {
    let url = format!("ipc://{}/troupe-bench-{tag}.rep", std::env::temp_dir().display());
    let _peer = spawn_peer(&["bare-rep", &url], tag)?;
    let req = Socket::new(Protocol::Req0).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + WAIT;
    while req.dial(&url).is_err() {
        if Instant::now() > deadline {
            return Err(format!("the bare REP peer never listened on {url}"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let payload = StringMsg { data: "ping".into(), ..Default::default() }.encode_to_vec();
    let round = || -> Result<(), String> {
        req.send(payload.as_slice()).map_err(|(_, e)| e.to_string())?;
        req.recv().map_err(|e| e.to_string()).map(drop)
    };
    for _ in 0..50 {
        round()?;
    }
    let start = Instant::now();
    for _ in 0..n {
        round()?;
    }
    Ok(mean_us(start.elapsed(), n))
}

/// Bare nng PUB/SUB both ways between two processes: half the mean round trip.
fn bare_topic(n: u64, tag: &str) -> Result<f64, String> {
    let dir = std::env::temp_dir();
    let ping_url = format!("ipc://{}/troupe-bench-{tag}.ping", dir.display());
    let pong_url = format!("ipc://{}/troupe-bench-{tag}.pong", dir.display());
    let publ = Socket::new(Protocol::Pub0).map_err(|e| e.to_string())?;
    publ.listen(&ping_url).map_err(|e| e.to_string())?;
    let _peer = spawn_peer(&["bare-echo", &ping_url, &pong_url], tag)?;
    let sub = Socket::new(Protocol::Sub0).map_err(|e| e.to_string())?;
    sub.set_opt::<Subscribe>(Vec::new()).map_err(|e| e.to_string())?;
    sub.set_opt::<nng::options::RecvTimeout>(Some(Duration::from_millis(20))).map_err(|e| e.to_string())?;
    sub.dial_async(&pong_url).map_err(|e| e.to_string())?;
    ping_pong(n, || publ.send(&b"ping"[..]).map_err(|(_, e)| e.to_string()), || sub.recv().is_ok())
}

/// Sends pings until one comes back (both connections up), then times `n` round trips;
/// answers half the mean round trip.
fn ping_pong(
    n: u64,
    mut send: impl FnMut() -> Result<(), String>,
    mut recv: impl FnMut() -> bool,
) -> Result<f64, String> {
    let deadline = Instant::now() + WAIT;
    loop {
        send()?;
        if recv() {
            break;
        }
        if Instant::now() > deadline {
            return Err("the echo peer never answered a ping".into());
        }
    }
    // Drain pongs of pings sent while connecting.
    while recv() {}
    let start = Instant::now();
    for _ in 0..n {
        send()?;
        let mut tries = 0;
        while !recv() {
            tries += 1;
            if tries > 500 {
                return Err("a pong was lost after the connection was up".into());
            }
        }
    }
    Ok(mean_us(start.elapsed(), n) / 2.0)
}

/// Troupe service and topic through a peer node in `partition`: (service round trip,
/// topic latency).
fn troupe_pair(n: u64, partition: &str) -> Result<(f64, f64), String> {
    let _peer = spawn_peer(&["troupe"], partition)?;
    let node = Node::open(partition, &Bind::Ipc).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + WAIT;
    while !node.services().iter().any(|(s, _, _)| s == "/bench/echo") {
        if Instant::now() > deadline {
            return Err("the Troupe peer never offered /bench/echo".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let payload = StringMsg { data: "ping".into(), ..Default::default() }.encode_to_vec();
    let call = || match node.call("/bench/echo", &payload, WAIT) {
        Ok(Answer::Ok(_)) => Ok(()),
        other => Err(format!("/bench/echo answered {other:?}")),
    };
    for _ in 0..50 {
        call()?;
    }
    let start = Instant::now();
    for _ in 0..n {
        call()?;
    }
    let service = mean_us(start.elapsed(), n);
    let ping =
        node.advertise("/bench/ping", "gz.msgs.StringMsg", TopicOptions::default()).map_err(|e| e.to_string())?;
    let pong = node.subscribe("/bench/pong", "gz.msgs.StringMsg").map_err(|e| e.to_string())?;
    let topic = ping_pong(
        n,
        || node.publish(ping, &payload).map(drop).map_err(|e| e.to_string()),
        || pong.recv_timeout(Duration::from_millis(20)).is_some(),
    )?;
    node.close_for_exit();
    Ok((service, topic))
}

const FLOOD_WORLD: &str = r#"<sdf version="1.9"><world name="flood">
  <physics><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
  <plugin filename="troupe_testing" name="testing::Echo">
    <service>/world/flood/shout</service><input>/flood/in</input><output>/flood/out</output>
  </plugin>
</world></sdf>"#;

/// Steps per second of a world whose system answers service calls in its pre_update, with
/// no calls and under `callers` threads calling without pause, all in `partition`:
/// (unloaded, flooded, calls answered, calls made).
fn flood(window: Duration, callers: usize, partition: &str) -> Result<(f64, f64, u64, u64), String> {
    // Read by Server::load and the callers' nodes; the peers of earlier parts got theirs
    // through their own environment.
    std::env::set_var("TROUPE_PARTITION", partition);
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
    let opts = ServerOptions {
        world_text: Some((FLOOD_WORLD.into(), "<flood world>".into())),
        run: true,
        transport: Some(Bind::Ipc),
        ..Default::default()
    };
    let mut server = Server::load(&opts).map_err(|e| e.to_string())?;
    let rate = |server: &mut Server| -> Result<f64, String> {
        let start = Instant::now();
        let mut steps = 0u64;
        while start.elapsed() < window {
            for _ in 0..100 {
                server.step_once(Duration::ZERO).map_err(|e| e.to_string())?;
            }
            steps += 100;
        }
        Ok(steps as f64 / start.elapsed().as_secs_f64())
    };
    rate(&mut server)?;
    let unloaded = rate(&mut server)?;
    let stop = Arc::new(AtomicBool::new(false));
    let (made, answered) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut threads = Vec::new();
    for _ in 0..callers {
        let node = Node::open(partition, &Bind::Ipc).map_err(|e| e.to_string())?;
        let (stop, made, answered) = (stop.clone(), made.clone(), answered.clone());
        threads.push(std::thread::spawn(move || {
            let req = StringMsg { data: "flood".into(), ..Default::default() }.encode_to_vec();
            while !stop.load(Ordering::Relaxed) {
                made.fetch_add(1, Ordering::Relaxed);
                if let Ok(Answer::Ok(_)) = node.call("/world/flood/shout", &req, WAIT) {
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            }
            node.close_for_exit();
        }));
    }
    // Let the callers find the service before timing.
    let deadline = Instant::now() + WAIT;
    while answered.load(Ordering::Relaxed) == 0 {
        server.step_once(Duration::ZERO).map_err(|e| e.to_string())?;
        if Instant::now() > deadline {
            return Err("no flood call was answered".into());
        }
    }
    let flooded = rate(&mut server)?;
    stop.store(true, Ordering::Relaxed);
    // The callers' last requests are answered by further steps.
    while threads.iter().any(|t| !t.is_finished()) {
        server.step_once(Duration::ZERO).map_err(|e| e.to_string())?;
    }
    for t in threads {
        t.join().map_err(|_| "a caller thread panicked".to_string())?;
    }
    Ok((unloaded, flooded, answered.load(Ordering::Relaxed), made.load(Ordering::Relaxed)))
}

/// Runs part 6.
pub fn bench(quick: bool) -> Result<(), String> {
    let n = if quick { 200 } else { 3000 };
    let tag = std::process::id().to_string();
    println!(
        "6. Transport between two processes on this machine (IPC sockets), {n} round trips each, mean per operation:"
    );
    let bare_rep = bare_service(n, &format!("{tag}-rep"))?;
    let bare_pub = bare_topic(n, &format!("{tag}-pub"))?;
    // Each Troupe measurement's partition is its own; its rendezvous directory goes after it.
    let done_with = |partition: &str| {
        let _ = std::fs::remove_dir_all(troupe::transport::registry::rendezvous_dir(partition));
    };
    let pair_partition = format!("troupe-bench-{tag}");
    let (service, topic) = troupe_pair(n, &pair_partition)?;
    done_with(&pair_partition);
    println!(
        "   service round trip   Troupe {service:8.1} µs   bare nng REQ/REP  {bare_rep:8.1} µs   ratio {:5.2}x (Troupe opens a connection per call)",
        service / bare_rep
    );
    println!(
        "   topic latency        Troupe {topic:8.1} µs   bare nng PUB/SUB  {bare_pub:8.1} µs   ratio {:5.2}x (half a ping-pong round trip)",
        topic / bare_pub
    );
    let window = Duration::from_millis(if quick { 300 } else { 3000 });
    let flood_partition = format!("troupe-bench-flood-{tag}");
    let (unloaded, flooded, answered, made) = flood(window, 2, &flood_partition)?;
    done_with(&flood_partition);
    println!(
        "   step rate of a world answering calls in pre_update: unloaded {unloaded:9.0} steps/s   under a flood from 2 callers {flooded:9.0} steps/s ({:.2}x)",
        flooded / unloaded
    );
    println!(
        "   flood calls answered: {answered} of {made} over {:.1} s of stepping{}",
        window.as_secs_f64(),
        if answered == made { "" } else { "  (SOME CALLS WERE NOT ANSWERED)" }
    );
    if answered != made {
        return Err(format!("{} of {made} flood calls were not answered", made - answered));
    }
    Ok(())
}
