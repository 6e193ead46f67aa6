//! Part 9, distributed lockstep: Troupe's driver (the primary here, N secondaries as processes,
//! no simulation work) against a bare nng broadcast-and-collect between the same number of
//! processes (the same executable started with `--distributed-peer`), per-step time and
//! its p99, with 1, 2 and 4 secondaries. Then the time from kill -9 of a secondary to the
//! primary ending the run, against the 1 s goal.

use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use nng::options::{Options, RecvTimeout};
use nng::{Protocol, Socket};
use plugin_api::msgs::SerializedStateMap;
use plugin_api::NetworkRole;
use troupe::distributed::driver::{run_primary, run_secondary, DriverConfig, Simulation};
use troupe::distributed::settings::NetworkSettings;
use troupe::distributed::{Outcome, PeerRef, StepInput, StepOrder, Timing};

/// A child process killed on drop.
struct Peer(Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(args: &[&str], partition: &str) -> Result<Peer, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the executable: {e}"))?;
    Command::new(exe)
        .arg("--distributed-peer")
        .args(args)
        .env("TROUPE_PARTITION", partition)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(Peer)
        .map_err(|e| format!("cannot start a peer process: {e}"))
}

fn settings(role: NetworkRole, secondaries: u32) -> NetworkSettings {
    let timing = Timing {
        peer_timeout: Duration::from_secs(3),
        join_timeout: Some(Duration::from_secs(30)),
        ..Timing::default()
    };
    NetworkSettings {
        role,
        secondaries,
        token: None,
        primary: None,
        listen: None,
        timing,
        discovery_timeout: Duration::from_secs(30),
        auto_performers: false,
    }
}

fn partition(tag: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("troupe-bench-dist-{tag}-{}-{nanos}", std::process::id())
}

/// No simulation: the primary counts steps and times them.
struct Null {
    steps: u64,
    stamps: Vec<Instant>,
    ended_at: Option<Instant>,
}

impl Simulation for Null {
    fn listing(&self) -> Vec<String> {
        vec![String::from("1 world bench")]
    }
    fn next_step(&mut self) -> StepInput {
        StepInput { iteration: self.stamps.len() as u64 + 1, dt: Duration::from_millis(1), ..StepInput::default() }
    }
    fn primary_step(&mut self, _: &[(PeerRef, SerializedStateMap)]) -> Result<(), String> {
        self.stamps.push(Instant::now());
        Ok(())
    }
    fn secondary_step(&mut self, _: &StepOrder) -> Result<SerializedStateMap, String> {
        Ok(SerializedStateMap::default())
    }
    fn should_stop(&self) -> bool {
        self.stamps.len() as u64 >= self.steps
    }
    fn period(&self) -> Duration {
        Duration::ZERO
    }
    fn finish(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn ended(&mut self, _: &Outcome) {
        self.ended_at = Some(Instant::now());
    }
}

/// The peer side (`troupe-bench --distributed-peer ...`).
pub fn peer_main(args: &[String]) -> Result<(), String> {
    match args {
        [kind] if kind == "secondary" => {
            let cfg = DriverConfig::from_env(settings(NetworkRole::SECONDARY, 0));
            let mut sim = Null { steps: 0, stamps: Vec::new(), ended_at: None };
            let outcome = run_secondary(&mut sim, &cfg, &AtomicBool::new(false)).map_err(|e| e.to_string())?;
            if outcome.is_clean() {
                Ok(())
            } else {
                Err(format!("{outcome:?}"))
            }
        }
        [kind, url] if kind == "bare-echo" => {
            let sock = Socket::new(Protocol::Pair0).map_err(|e| e.to_string())?;
            sock.dial(url).map_err(|e| e.to_string())?;
            loop {
                let m = sock.recv().map_err(|e| e.to_string())?;
                sock.send(m).map_err(|(_, e)| e.to_string())?;
            }
        }
        _ => Err(format!("unknown peer arguments {args:?}")),
    }
}

/// Per-step durations from step completion stamps (the first `skip` dropped as warm-up).
fn intervals(stamps: &[Instant], skip: usize) -> Vec<f64> {
    stamps.windows(2).skip(skip).map(|w| (w[1] - w[0]).as_secs_f64() * 1e6).collect()
}

fn mean_p99(mut v: Vec<f64>) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    v.sort_by(f64::total_cmp);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let p99 = v[((v.len() as f64 * 0.99) as usize).min(v.len() - 1)];
    (mean, p99)
}

fn lockstep(n: u32, steps: u64) -> Result<Vec<f64>, String> {
    let part = partition(&format!("lock{n}"));
    let _peers: Vec<Peer> = (0..n).map(|_| spawn(&["secondary"], &part)).collect::<Result<_, _>>()?;
    let mut cfg = DriverConfig::from_env(settings(NetworkRole::PRIMARY, n));
    cfg.partition = part.clone();
    cfg.dir = troupe::transport::registry::rendezvous_dir(&part);
    let mut sim = Null { steps, stamps: Vec::new(), ended_at: None };
    let outcome = run_primary(&mut sim, &cfg, &AtomicBool::new(false), &mut |_| {}).map_err(|e| e.to_string())?;
    if !outcome.is_clean() {
        return Err(format!("the lockstep run with {n} secondaries failed: {outcome:?}"));
    }
    let _ = std::fs::remove_dir_all(&cfg.dir);
    Ok(intervals(&sim.stamps, 10))
}

pub(crate) fn bare(n: u32, steps: u64) -> Result<Vec<f64>, String> {
    let part = partition(&format!("bare{n}"));
    let dir = troupe::transport::registry::rendezvous_dir(&part);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut socks = Vec::new();
    let mut peers = Vec::new();
    for i in 0..n {
        let sock = Socket::new(Protocol::Pair0).map_err(|e| e.to_string())?;
        sock.set_opt::<RecvTimeout>(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
        let url = format!("ipc://{}/bare-{i}", dir.display());
        sock.listen(&url).map_err(|e| e.to_string())?;
        peers.push(spawn(&["bare-echo", &url], &part)?);
        socks.push(sock);
    }
    // A step message of the protocol's size (an encoded Step envelope is about 30 bytes).
    let msg = [7u8; 32];
    let mut stamps = Vec::with_capacity(steps as usize + 1);
    stamps.push(Instant::now());
    for _ in 0..steps {
        for s in &socks {
            s.send(&msg[..]).map_err(|(_, e)| e.to_string())?;
        }
        for s in &socks {
            s.recv().map_err(|e| format!("bare collect: {e}"))?;
        }
        stamps.push(Instant::now());
    }
    drop(peers);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(intervals(&stamps, 10))
}

fn kill_detection() -> Result<Duration, String> {
    let part = partition("kill");
    let mut victim = spawn(&["secondary"], &part)?;
    let mut cfg = DriverConfig::from_env(settings(NetworkRole::PRIMARY, 1));
    cfg.partition = part.clone();
    cfg.dir = troupe::transport::registry::rendezvous_dir(&part);
    // The primary runs in a thread; the victim is killed once steps flow.
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let mut sim = Null { steps: u64::MAX, stamps: Vec::new(), ended_at: None };
        let outcome = run_primary(&mut sim, &cfg, &AtomicBool::new(false), &mut |seq| {
            if seq == 200 {
                let _ = tx.send(());
            }
        });
        let _ = std::fs::remove_dir_all(&cfg.dir);
        (outcome.map_err(|e| e.to_string()), sim.ended_at)
    });
    rx.recv_timeout(Duration::from_secs(30))
        .map_err(|_| String::from("the kill-detection run never reached step 200"))?;
    let killed_at = Instant::now();
    victim.0.kill().map_err(|e| format!("kill -9: {e}"))?;
    let (outcome, ended_at) = handle.join().map_err(|_| String::from("the primary thread panicked"))?;
    match outcome? {
        Outcome::Failed(_) => {}
        other => return Err(format!("the run did not fail after kill -9: {other:?}")),
    }
    let ended_at = ended_at.ok_or("the primary never reported the end")?;
    Ok(ended_at.saturating_duration_since(killed_at))
}

/// (mean, p99) of Troupe's lockstep and of the bare baseline, measured back to back.
type Pair = ((f64, f64), (f64, f64));

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Runs the distributed part.
pub fn bench(quick: bool) -> Result<(), String> {
    let steps = if quick { 300 } else { 3000 };
    let reps = if quick { 3 } else { 5 };
    println!("9. Distributed lockstep, no simulation work ({steps} steps, {reps} alternating repetitions; per-step time in µs, mean / p99):");
    println!(
        "   The machine is shared: each side's best repetition, and the ratios as best/best and as the median of the"
    );
    println!("   ratios of back-to-back pairs (load changing between repetitions moves one ratio, not the median).");
    println!("   secondaries | Troupe lockstep   | bare nng broadcast+collect | ratio best, median (goal <= 1.5) | p99 ratio best, median (goal <= 2)");
    for n in [1u32, 2, 4] {
        let mut pairs: Vec<Pair> = Vec::new();
        for _ in 0..reps {
            pairs.push((mean_p99(lockstep(n, steps)?), mean_p99(bare(n, steps)?)));
        }
        let best = |side: fn(&Pair) -> (f64, f64)| {
            pairs.iter().map(side).fold((f64::INFINITY, f64::NAN), |b, x| if x.0 < b.0 { x } else { b })
        };
        let (t, tp) = best(|p| p.0);
        let (b, bp) = best(|p| p.1);
        let ratio = median(pairs.iter().map(|(l, b)| l.0 / b.0).collect());
        let p99_ratio = median(pairs.iter().map(|(l, b)| l.1 / b.1).collect());
        println!(
            "   {n:>11} | {t:>7.1} / {tp:>7.1} | {b:>11.1} / {bp:>11.1}   | {:>14.2}, {ratio:>5.2}            | {:>12.2}, {p99_ratio:>5.2}",
            t / b,
            tp / bp
        );
    }
    let d = kill_detection()?;
    println!(
        "   kill -9 of a secondary detected by the primary in {:.1} ms (goal: under 1 s; {:.3} of it)",
        d.as_secs_f64() * 1e3,
        d.as_secs_f64()
    );
    Ok(())
}
