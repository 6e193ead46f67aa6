//! The driver: carries the [`Primary`] and [`Secondary`] machines over nng between real
//! processes, and runs the simulation steps they order.
//!
//! * Discovery: a primary listens on a join socket (an IPC socket listed in the partition's
//!   rendezvous directory, or `--network-listen` / `<listen>` on TCP for other machines);
//!   a secondary finds it there, or is given it (`--network-primary` / `<primary>`).
//! * Admission ([`net::ask_to_join`]): partition, cluster token, protocol version and world
//!   fingerprint are checked before a secondary is let in. A peer failing any of them is
//!   refused (it is told why and exits non-zero), logged by the primary, and the run goes
//!   on. An admitted secondary gets its own PAIR connection ([`net::Link`]).
//! * Lockstep: the machines' messages travel on the PAIR connections; the primary's
//!   simulation runs its step after every secondary answered, the secondaries run each step
//!   when ordered.
//! * Faults: a PAIR connection closing (crash, kill -9) ends the run at once naming that
//!   peer; silence is left to the machines' heartbeat timeout.
//!
//! The simulation itself is behind [`Simulation`], so the driver runs a real server
//! ([`server_sim`]) or a bare stepping loop (the benchmark).

pub mod net;
pub mod rendezvous;
pub mod server_sim;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use plugin_api::msgs::SerializedStateMap;
use plugin_api::prost::Message;

use self::net::{Inbound, InboundTx, JoinServer, Link};
use super::messages::{Envelope, ErrorCause, Hello, Role as WireRole, Topic, Welcome};
use super::settings::NetworkSettings;
use super::{
    fingerprint, Cause, Destination, Membership, Outcome, PeerRef, PerformerId, Primary, PrimaryConfig, PrimaryEvent,
    RunError, Secondary, SecondaryConfig, SecondaryEvent, StepInput, StepOrder, Transmit, PROTOCOL_VERSION,
};
use plugin_api::NetworkRole;

/// What the driver needs from the simulation it steps.
pub trait Simulation {
    /// The world's listing ([`fingerprint::listing`]).
    fn listing(&self) -> Vec<String>;
    /// Primary: takes the control requests that arrived and says what the next step is.
    fn next_step(&mut self) -> StepInput;
    /// Primary: runs its own step once every secondary answered (`answers` in secondary
    /// index order), applying them first.
    fn primary_step(&mut self, answers: &[(PeerRef, SerializedStateMap)]) -> Result<(), String>;
    /// Primary: the levels each performer is in now (the assignment's input).
    fn membership(&self) -> Membership {
        Membership::new()
    }
    /// Primary: the whole state of the performers changing secondary at the next step.
    fn handover(&self, _moving: &[PerformerId]) -> SerializedStateMap {
        SerializedStateMap::default()
    }
    /// Secondary: the primary enabled this secondary as `index` of `count`.
    fn enabled(&mut self, _index: usize, _count: usize) {}
    /// Secondary: runs the ordered step and answers the changed state.
    fn secondary_step(&mut self, order: &StepOrder) -> Result<SerializedStateMap, String>;
    /// Secondary, after each step: the topics its systems advertised since the last call
    /// (the first step's excepted), sent with the answer.
    fn new_topics(&mut self) -> Vec<Topic> {
        Vec::new()
    }
    /// Primary: topics the secondaries' systems advertised (from their answers), to pass on
    /// to every secondary.
    fn topics_advertised(&mut self, _topics: Vec<Topic>) {}
    /// Primary: whether the run should end normally now (iterations reached, a stop
    /// request).
    fn should_stop(&self) -> bool;
    /// Primary: how long after the previous step the next may start (real-time pacing);
    /// zero runs free.
    fn period(&self) -> Duration;
    /// End of the run (clean or not): flush logs, tell systems.
    fn finish(&mut self) -> Result<(), String>;
    /// The machine decided how the run ends (before the linger and [`finish`](Self::finish));
    /// the benchmark times fault detection with it.
    fn ended(&mut self, _outcome: &Outcome) {}
}

/// Where and how a driver runs.
#[derive(Clone, Debug)]
pub struct DriverConfig {
    /// The resolved settings.
    pub settings: NetworkSettings,
    /// The partition (only peers of the same one are admitted).
    pub partition: String,
    /// The partition's rendezvous directory.
    pub dir: PathBuf,
}

impl DriverConfig {
    /// The settings in the partition of this process's environment.
    pub fn from_env(settings: NetworkSettings) -> DriverConfig {
        let partition = crate::transport::registry::partition();
        let dir = crate::transport::registry::rendezvous_dir(&partition);
        DriverConfig { settings, partition, dir }
    }
}

/// Why a run could not take place at all (before any outcome).
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// Sockets, files.
    #[error("distributed: {0}")]
    Setup(String),
    /// Discovery failed: timeout, two primaries, refused.
    #[error("distributed: {0}")]
    Discovery(String),
}

/// FNV-1a 64 of the cluster token (0 without one); only the digest travels.
pub fn token_digest(token: Option<&str>) -> u64 {
    token.map_or(0, |t| fingerprint::hash(&[t.to_string()]))
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

/// A peer id unique per process run: role, host, pid and start time.
fn peer_id(role: NetworkRole) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{}-{}-{}-{:05x}", &role.as_str()[..1], hostname(), std::process::id(), nanos >> 12)
}

fn ipc_or_loopback(dir: &std::path::Path, name: &str) -> String {
    let url = format!("ipc://{}/{}-{name}", dir.display(), std::process::id());
    // A Unix socket path is limited to 107 bytes.
    if url.len() <= 100 {
        url
    } else {
        String::from("tcp://127.0.0.1:0")
    }
}

/// How long a process keeps its connections after its run ended, so the last word (Stop,
/// PeerError, Leave) reaches everyone.
fn linger(settings: &NetworkSettings) -> Duration {
    (settings.timing.heartbeat_interval * 3).max(Duration::from_millis(300))
}

/// A connection closing is only a loss if the machine did not end the run cleanly within
/// this grace (the goodbye may be read after the close is noticed).
const CLOSE_GRACE: Duration = Duration::from_millis(50);

const POLL: Duration = Duration::from_millis(5);

/// How long the primary's loop may wait for a message: a poll interval, or less when its next
/// paced step falls due sooner (`step_due`, when nothing but the time holds that step back).
/// Waiting the whole interval made a paced run miss its step times: a world at real-time
/// factor 1 ran at about 0.46.
fn wait_budget(step_due: Option<Instant>, now: Instant) -> Duration {
    step_due.map_or(POLL, |at| at.saturating_duration_since(now).min(POLL))
}

fn decode(bytes: &[u8]) -> Option<Envelope> {
    match Envelope::decode(bytes) {
        Ok(e) => Some(e),
        Err(e) => {
            log::warn!("distributed: a message that is not a protocol Envelope was ignored: {e}");
            None
        }
    }
}

struct Admitted {
    peer: PeerRef,
    link: Link,
    closed_at: Option<Instant>,
}

/// Runs the primary until the run ends; the outcome says how. `stop` is the server's stop
/// flag (signals, `/server_control`). `progress` gets each completed step's seq.
pub fn run_primary(
    sim: &mut dyn Simulation,
    cfg: &DriverConfig,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64),
) -> Result<Outcome, DriverError> {
    let s = &cfg.settings;
    let start = Instant::now();
    let now = || start.elapsed();
    let (tx, rx) = net::channel();
    let join_url = s.listen.clone().unwrap_or_else(|| ipc_or_loopback(&cfg.dir, "join"));
    crate::transport::registry::prepare_dir(&cfg.dir)
        .map_err(|e| DriverError::Setup(format!("{}: {e}", cfg.dir.display())))?;
    let join = JoinServer::listen(&join_url, tx.clone()).map_err(DriverError::Setup)?;
    let me = PeerRef { role: WireRole::Primary, id: peer_id(NetworkRole::PRIMARY), address: join.addr.clone() };
    let _listed = rendezvous::Listing::create(&cfg.dir, "primary", &me.id, &join.addr)
        .map_err(|e| DriverError::Setup(format!("writing to {}: {e}", cfg.dir.display())))?;
    let others: Vec<String> = rendezvous::scan(&cfg.dir, "primary")
        .into_iter()
        .filter(|l| l.pid != std::process::id())
        .map(|l| l.to_string())
        .collect();
    if !others.is_empty() {
        join.close();
        return Err(DriverError::Discovery(format!(
            "a second primary in partition {:?}: this one, {me} (pid {}), and {}",
            cfg.partition,
            std::process::id(),
            others.join(", ")
        )));
    }
    let listing = sim.listing();
    let world_fingerprint = fingerprint::hash(&listing);
    crate::status!(
        "troupe: primary {} waiting for {} secondaries (partition {:?}, join address {})",
        me.id,
        s.secondaries,
        cfg.partition,
        join.addr
    );
    let mut p = PrimaryDriver {
        machine: Primary::new(
            PrimaryConfig { me: me.clone(), secondaries: s.secondaries as usize, world_fingerprint, timing: s.timing },
            now(),
        ),
        cfg,
        me,
        listing,
        world_fingerprint,
        token: token_digest(s.token.as_ref().map(|t| t.0.as_str())),
        admitted: Vec::new(),
        tx,
        join_is_ipc: join.addr.starts_with("ipc://"),
        join_host: host_of(&join.addr),
    };
    let mut in_flight = false;
    let mut ready = false;
    let mut stop_sent = false;
    let mut next_at = Instant::now();
    let mut ended: Option<(Outcome, Instant)> = None;
    loop {
        // Waiting only for a paced step's time: wake when it is due, not a poll later.
        let step_due = (ready && !in_flight && !stop_sent && ended.is_none()).then_some(next_at);
        p.pump(&rx, now(), wait_budget(step_due, Instant::now()));
        p.machine.handle_tick(now());
        p.flush();
        while let Some(ev) = p.machine.poll_event() {
            match ev {
                PrimaryEvent::Ready(list) => {
                    ready = true;
                    next_at = Instant::now();
                    let names: Vec<String> = list.iter().map(|r| r.to_string()).collect();
                    crate::status!("troupe: all {} secondaries joined: {}; stepping", list.len(), names.join(", "));
                }
                PrimaryEvent::StepComplete { seq, answers, topics } => {
                    in_flight = false;
                    if !topics.is_empty() {
                        sim.topics_advertised(topics);
                    }
                    if let Err(e) = sim.primary_step(&answers) {
                        p.machine.abort(now(), format!("the primary's own step failed: {e}"));
                    }
                    progress(seq);
                    let period = sim.period();
                    next_at =
                        if period.is_zero() { Instant::now() } else { (next_at + period).max(Instant::now() - period) };
                }
                PrimaryEvent::Warning(w) => log::warn!("distributed: {w}"),
                PrimaryEvent::Ended(outcome) => {
                    sim.ended(&outcome);
                    // With no secondary admitted there is no last word to deliver.
                    let linger = if p.admitted.is_empty() { Duration::ZERO } else { linger(s) };
                    ended = Some((p.explain(outcome), Instant::now() + linger));
                }
            }
        }
        p.flush();
        if let Some((outcome, until)) = &ended {
            if Instant::now() >= *until {
                let outcome = outcome.clone();
                join.close();
                for a in &p.admitted {
                    a.link.close();
                }
                sim.finish().map_err(|e| DriverError::Setup(format!("finishing the run: {e}")))?;
                return Ok(outcome);
            }
            continue;
        }
        if !ready && !stop_sent && stop.load(Ordering::SeqCst) {
            // Stopped before the start: the admitted secondaries are told to stop (they exit 0
            // as in a stop once running) and this primary ends at once, not after the join
            // timeout.
            stop_sent = true;
            crate::status!(
                "troupe: primary {} stopped (SIGINT, SIGTERM or a /server_control stop) while waiting for its \
                 secondaries: {} of {} joined; the run did not start",
                p.me.id,
                p.admitted.len(),
                s.secondaries
            );
            p.machine.request_stop(now());
            p.flush();
            continue;
        }
        if !ready || in_flight {
            continue;
        }
        if stop.load(Ordering::SeqCst) || sim.should_stop() {
            if !stop_sent {
                stop_sent = true;
                p.machine.request_stop(now());
            }
            continue;
        }
        if Instant::now() < next_at {
            continue;
        }
        let input = sim.next_step();
        let membership = sim.membership();
        match p.machine.begin_step(now(), input, &membership, |moving| sim.handover(moving)) {
            Ok(_) => in_flight = true,
            Err(e) => {
                // The machine is ending the run (an aborted step): look again a poll later
                // rather than at once.
                log::debug!("distributed: step not begun: {e}");
                next_at = Instant::now() + POLL;
            }
        }
        p.flush();
    }
}

fn host_of(url: &str) -> String {
    url.strip_prefix("tcp://")
        .and_then(|r| r.rsplit_once(':'))
        .map_or_else(|| String::from("127.0.0.1"), |(h, _)| h.to_string())
}

struct PrimaryDriver<'a> {
    machine: Primary,
    cfg: &'a DriverConfig,
    me: PeerRef,
    listing: Vec<String>,
    world_fingerprint: u64,
    token: u64,
    admitted: Vec<Admitted>,
    tx: InboundTx,
    join_is_ipc: bool,
    join_host: String,
}

impl PrimaryDriver<'_> {
    /// Takes everything that arrived (waiting up to `wait` for the first).
    fn pump(&mut self, rx: &Receiver<Inbound>, now: Duration, wait: Duration) {
        let mut next = match rx.recv_timeout(wait) {
            Ok(ev) => Some(ev),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        };
        while let Some(ev) = next {
            match ev {
                Inbound::Msg { link, bytes } => {
                    if let Some(env) = decode(&bytes) {
                        self.check_sender(link, &env);
                        self.learn_address(link, &env);
                        self.machine.handle_message(now, env);
                    }
                }
                Inbound::Closed { link } => {
                    if let Some(a) = self.admitted.get_mut(link) {
                        a.closed_at.get_or_insert_with(Instant::now);
                    }
                }
                Inbound::Hello { hello, reply } => {
                    let w = self.on_hello(now, *hello);
                    let _ = reply.send(w);
                }
            }
            next = rx.try_recv().ok();
        }
        // Connections closed without the run ending cleanly: the peer crashed or was killed.
        let lost = self
            .admitted
            .iter()
            .find(|a| a.closed_at.is_some_and(|t| t.elapsed() >= CLOSE_GRACE))
            .map(|a| a.peer.clone());
        if let Some(peer) = lost {
            if self.machine.outcome().is_none() {
                let detail =
                    String::from("its connection closed without a goodbye (the process crashed or was killed)");
                self.machine.end_with(now, RunError { peer, cause: Cause::PeerLeft, detail, reported_by: None });
            }
        }
    }

    /// A join timeout names who joined and how many are missing.
    fn explain(&self, outcome: Outcome) -> Outcome {
        match outcome {
            Outcome::Failed(mut e) if e.cause == Cause::JoinTimeout => {
                let expected = self.cfg.settings.secondaries as usize;
                let joined: Vec<String> = self.admitted.iter().map(|a| a.peer.to_string()).collect();
                let enabled = self.machine.secondaries().len();
                e.detail = format!(
                    "waited {:.1} s for {expected} secondaries; missing: {} secondar{}; admitted: {}{}",
                    self.cfg.settings.discovery_timeout.as_secs_f64(),
                    expected - joined.len().min(expected),
                    if expected - joined.len().min(expected) == 1 { "y" } else { "ies" },
                    if joined.is_empty() { String::from("none") } else { joined.join(", ") },
                    if enabled < joined.len() {
                        format!(" ({} of them joined the protocol)", enabled)
                    } else {
                        String::new()
                    }
                );
                Outcome::Failed(e)
            }
            other => other,
        }
    }

    /// A message on a secondary's connection must come from that secondary.
    fn check_sender(&self, link: usize, env: &Envelope) {
        let named = super::peer::sender(env).map(|i| i.id.as_str());
        if let (Some(named), Some(a)) = (named, self.admitted.get(link)) {
            if named != a.peer.id {
                log::warn!("distributed: a message on {}'s connection names {named}", a.peer);
            }
        }
    }

    /// A secondary's messages carry its address as connected (its Hello could only give
    /// its host and pid); the driver's own messages about it use that from then on.
    fn learn_address(&mut self, link: usize, env: &Envelope) {
        let Some(info) = super::peer::sender(env) else { return };
        if let Some(a) = self.admitted.get_mut(link) {
            if info.id == a.peer.id && !info.address.is_empty() && info.address != a.peer.address {
                a.peer.address = info.address.clone();
            }
        }
    }

    fn refuse(&self, peer: &PeerRef, cause: ErrorCause, reason: String) -> Welcome {
        log::warn!("distributed: refused {peer}: {reason}; the run goes on");
        Welcome {
            accepted: false,
            reason,
            pair_address: String::new(),
            primary: Some(self.me.info()),
            cause: cause as i32,
        }
    }

    fn on_hello(&mut self, now: Duration, hello: Hello) -> Welcome {
        let peer = PeerRef::from_info(hello.peer.as_ref(), WireRole::Secondary);
        if hello.protocol_version != PROTOCOL_VERSION {
            let reason =
                format!("it speaks protocol version {}, this primary {PROTOCOL_VERSION}", hello.protocol_version);
            return self.refuse(&peer, ErrorCause::VersionMismatch, reason);
        }
        if hello.partition != self.cfg.partition {
            let reason = format!("it is in partition {:?}, this primary in {:?}", hello.partition, self.cfg.partition);
            return self.refuse(&peer, ErrorCause::ProtocolViolation, reason);
        }
        if hello.token_digest != self.token {
            let reason = String::from("its cluster token differs from this primary's (TROUPE_CLUSTER_TOKEN / <token>)");
            return self.refuse(&peer, ErrorCause::ProtocolViolation, reason);
        }
        if hello.world_fingerprint != self.world_fingerprint {
            let diff = fingerprint::first_difference(&self.listing, &hello.world_listing).unwrap_or_default();
            let reason = format!(
                "world fingerprint mismatch (its {:#018x}, the primary's {:#018x}): {diff}",
                hello.world_fingerprint, self.world_fingerprint
            );
            return self.refuse(&peer, ErrorCause::FingerprintMismatch, reason);
        }
        if let Some(a) = self.admitted.iter().find(|a| a.peer.id == peer.id) {
            // Its first Welcome was lost: the same connection again.
            return Welcome {
                accepted: true,
                pair_address: a.link.addr.clone(),
                primary: Some(self.me.info()),
                ..Welcome::default()
            };
        }
        if let Some(outcome) = self.machine.outcome() {
            // The run is over (it lingers to deliver its last word): nothing to join, and
            // nothing left to end.
            let reason = format!("the run has ended: {}", describe(outcome));
            log::warn!("distributed: refused {peer}: {reason}");
            return Welcome {
                accepted: false,
                reason,
                primary: Some(self.me.info()),
                cause: ErrorCause::Aborted as i32,
                ..Welcome::default()
            };
        }
        let expected = self.cfg.settings.secondaries as usize;
        if self.admitted.len() >= expected {
            let mut all: Vec<String> = self.admitted.iter().map(|a| a.peer.to_string()).collect();
            all.push(peer.to_string());
            if self.machine.started() {
                // Seed 001: a secondary joining after the start ends the run.
                let detail = format!(
                    "{expected} secondaries were expected and the run has started; secondaries: {}",
                    all.join(", ")
                );
                self.machine.end_with(
                    now,
                    RunError { peer: peer.clone(), cause: Cause::LateJoin, detail: detail.clone(), reported_by: None },
                );
                log::error!("distributed: {peer} joined after the start: the run ends");
                return Welcome {
                    accepted: false,
                    reason: format!("late join: {detail}; the run ends"),
                    primary: Some(self.me.info()),
                    cause: ErrorCause::LateJoin as i32,
                    ..Welcome::default()
                };
            }
            let detail = format!("more than the {expected} expected secondaries asked to join: {}", all.join(", "));
            self.machine.end_with(
                now,
                RunError {
                    peer: peer.clone(),
                    cause: Cause::ProtocolViolation,
                    detail: detail.clone(),
                    reported_by: None,
                },
            );
            return Welcome {
                accepted: false,
                reason: detail,
                primary: Some(self.me.info()),
                cause: ErrorCause::ProtocolViolation as i32,
                ..Welcome::default()
            };
        }
        let index = self.admitted.len();
        let url = if self.join_is_ipc {
            ipc_or_loopback(&self.cfg.dir, &format!("pair-{index}"))
        } else {
            format!("tcp://{}:0", self.join_host)
        };
        let link = match Link::listen(index, &url, &self.tx) {
            Ok(l) => l,
            Err(e) => {
                return self.refuse(
                    &peer,
                    ErrorCause::Aborted,
                    format!("the primary could not open its connection: {e}"),
                )
            }
        };
        log::info!("distributed: admitted {peer} on {}", link.addr);
        let w = Welcome {
            accepted: true,
            pair_address: link.addr.clone(),
            primary: Some(self.me.info()),
            ..Welcome::default()
        };
        self.admitted.push(Admitted { peer, link, closed_at: None });
        w
    }

    fn flush(&mut self) {
        while let Some(Transmit { to, msg }) = self.machine.poll_transmit() {
            let bytes = msg.encode_to_vec();
            let send = |a: &Admitted| {
                if let Err(e) = a.link.send(&bytes) {
                    log::warn!("distributed: to {}: {e}", a.peer);
                }
            };
            match to {
                Destination::AllSecondaries => self.admitted.iter().filter(|a| a.closed_at.is_none()).for_each(send),
                Destination::Secondary(id) => {
                    self.admitted.iter().filter(|a| a.peer.id == id && a.closed_at.is_none()).for_each(send)
                }
                Destination::Primary => {}
            }
        }
    }
}

/// Runs a secondary: finds the primary, is admitted, then runs every step ordered until the
/// run ends. `stop` (signals) makes it leave, which ends the run for everyone.
pub fn run_secondary(sim: &mut dyn Simulation, cfg: &DriverConfig, stop: &AtomicBool) -> Result<Outcome, DriverError> {
    let s = &cfg.settings;
    let start = Instant::now();
    let now = || start.elapsed();
    // Until connected (and on IPC, where a dialer has no address of its own) a secondary is
    // addressed by its host and pid.
    let mut me = PeerRef {
        role: WireRole::Secondary,
        id: peer_id(NetworkRole::SECONDARY),
        address: format!("{} pid {}", hostname(), std::process::id()),
    };
    let _listed = rendezvous::Listing::create(&cfg.dir, "secondary", &me.id, "")
        .map_err(|e| DriverError::Setup(format!("writing to {}: {e}", cfg.dir.display())))?;
    let listing = sim.listing();
    let world_fingerprint = fingerprint::hash(&listing);
    let hello = Hello {
        protocol_version: PROTOCOL_VERSION,
        peer: Some(me.info()),
        partition: cfg.partition.clone(),
        token_digest: token_digest(s.token.as_ref().map(|t| t.0.as_str())),
        world_fingerprint,
        world_listing: listing,
    };
    let (join_url, welcome) = discover(cfg, &hello, stop)?;
    let mut pair = welcome.pair_address.clone();
    if let Some(rest) = pair.strip_prefix("tcp://0.0.0.0:") {
        pair = format!("tcp://{}:{rest}", host_of(&join_url));
    }
    let primary = PeerRef::from_info(welcome.primary.as_ref(), WireRole::Primary);
    let (tx, rx) = net::channel();
    let link = Link::dial(0, &pair, &tx).map_err(DriverError::Setup)?;
    if let Some(addr) = link.local_tcp_addr() {
        // Across machines: the address the primary sees this connection come from.
        me.address = addr;
    }
    crate::status!("troupe: secondary {} admitted by {primary}; waiting for the start", me.id);
    let mut machine = Secondary::new(SecondaryConfig { me: me.clone(), world_fingerprint, timing: s.timing }, now());
    let mut closed_at: Option<Instant> = None;
    let mut ended: Option<(Outcome, Instant)> = None;
    let mut left = false;
    loop {
        let mut next = rx.recv_timeout(POLL).ok();
        while let Some(ev) = next {
            match ev {
                Inbound::Msg { bytes, .. } => {
                    if let Some(env) = decode(&bytes) {
                        machine.handle_message(now(), env);
                    }
                }
                Inbound::Closed { .. } => {
                    closed_at.get_or_insert_with(Instant::now);
                }
                Inbound::Hello { .. } => {}
            }
            next = rx.try_recv().ok();
        }
        if closed_at.is_some_and(|t| t.elapsed() >= CLOSE_GRACE) {
            machine.lose_primary(format!(
                "{primary}: its connection closed without a goodbye (the process crashed or was killed)"
            ));
        }
        if stop.load(Ordering::SeqCst) && !left {
            left = true;
            machine.leave("the secondary was stopped by a signal");
        }
        machine.handle_tick(now());
        let mut steps = Vec::new();
        loop {
            while let Some(Transmit { msg, .. }) = machine.poll_transmit() {
                if closed_at.is_none() {
                    if let Err(e) = link.send(&msg.encode_to_vec()) {
                        log::warn!("distributed: to {primary}: {e}");
                    }
                }
            }
            match machine.poll_event() {
                Some(SecondaryEvent::Enabled { primary, index, count }) => {
                    crate::status!("troupe: secondary {} enabled by {primary}: index {index} of {count}", me.id);
                    sim.enabled(index, count);
                }
                Some(SecondaryEvent::Step(order)) => steps.push(order),
                Some(SecondaryEvent::Ended(outcome)) => {
                    sim.ended(&outcome);
                    ended = Some((outcome, Instant::now() + linger(s)));
                }
                None => {
                    if steps.is_empty() {
                        break;
                    }
                    let order = steps.remove(0);
                    match sim.secondary_step(&order) {
                        Ok(state) => {
                            if let Err(e) = machine.complete_step(order.seq, state, sim.new_topics()) {
                                log::warn!("distributed: {e}");
                            }
                        }
                        Err(e) => machine.leave(format!("its step {} failed: {e}", order.seq)),
                    }
                }
            }
        }
        if let Some((outcome, until)) = &ended {
            if Instant::now() >= *until || closed_at.is_some() {
                let outcome = outcome.clone();
                link.close();
                sim.finish().map_err(|e| DriverError::Setup(format!("finishing the run: {e}")))?;
                return Ok(outcome);
            }
        }
    }
}

/// Finds the primary (given, or in the rendezvous directory) and asks to join until
/// admitted, refused, or the discovery timeout.
fn discover(cfg: &DriverConfig, hello: &Hello, stop: &AtomicBool) -> Result<(String, Welcome), DriverError> {
    let s = &cfg.settings;
    let deadline = Instant::now() + s.discovery_timeout;
    let mut last_problem = String::new();
    let mut asked: Option<String> = None;
    let me = hello.peer.as_ref().map_or("?", |p| p.id.as_str());
    let where_ = match &s.primary {
        Some(u) => format!("at {u}"),
        None => format!("in partition {:?} (rendezvous directory {})", cfg.partition, cfg.dir.display()),
    };
    crate::status!("troupe: secondary {me} waiting for its primary {where_}");
    loop {
        if stop.load(Ordering::SeqCst) {
            return Err(DriverError::Discovery(format!(
                "secondary {me} stopped by a signal while waiting for its primary {where_}; it joined no run"
            )));
        }
        let url = match &s.primary {
            Some(u) => Some(u.clone()),
            None => {
                let found = rendezvous::scan(&cfg.dir, "primary");
                if found.len() > 1 {
                    let all: Vec<String> = found.iter().map(|l| format!("primary {l}")).collect();
                    return Err(DriverError::Discovery(format!(
                        "more than one primary in partition {:?}: {}",
                        cfg.partition,
                        all.join(", ")
                    )));
                }
                found.into_iter().next().map(|l| l.join)
            }
        };
        if let Some(url) = url {
            if asked.as_ref() != Some(&url) {
                crate::status!("troupe: secondary {me} asking the primary at {url} to join");
                asked = Some(url.clone());
            }
            match net::ask_to_join(&url, hello, Duration::from_millis(1000)) {
                Ok(w) if w.accepted => return Ok((url, w)),
                Ok(w) => {
                    let by = PeerRef::from_info(w.primary.as_ref(), WireRole::Primary);
                    return Err(DriverError::Discovery(format!("{by} refused this secondary: {}", w.reason)));
                }
                Err(e) => last_problem = e,
            }
        } else {
            std::thread::sleep(Duration::from_millis(100));
        }
        if Instant::now() >= deadline {
            let why = if last_problem.is_empty() { String::new() } else { format!("; last attempt: {last_problem}") };
            return Err(DriverError::Discovery(format!(
                "missing: the primary; none answered {where_} within the discovery timeout of {:.1} s{why}",
                s.discovery_timeout.as_secs_f64()
            )));
        }
    }
}

/// The message a failed run ends with: `lost peer: cause (detail)`.
pub fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Stopped { after_seq } => format!("stopped after step {after_seq}"),
        Outcome::Failed(e) => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_primary_waits_until_its_paced_step_is_due_and_no_longer_than_a_poll() {
        let now = Instant::now();
        assert_eq!(wait_budget(None, now), POLL, "nothing due: a whole poll interval");
        assert_eq!(wait_budget(Some(now + Duration::from_micros(700)), now), Duration::from_micros(700));
        assert_eq!(wait_budget(Some(now + POLL * 3), now), POLL, "a step due later than a poll: one poll");
        assert_eq!(wait_budget(Some(now - Duration::from_millis(1)), now), Duration::ZERO, "overdue: no wait");
    }
}
