//! The primary: waits for exactly N secondaries, enables them, orders steps in lockstep,
//! assigns performers, and ends the run, cleanly or naming the peer that broke it.
//!
//! Phases: `Joining` (collecting Join announcements) → `Enabling` (PeerControl sent, waiting
//! for every echo) → `Ready` ⇄ `Stepping` (one step in flight, waiting for every answer) →
//! `Stopping` (Stop sent, waiting for every Leave{STOPPED}) → ended. Any error ends the run
//! from any phase, and the primary tells every secondary why (PeerError naming the peer).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use plugin_api::msgs::SerializedStateMap;

use super::assignment::{self, LevelId, Membership, Owners, PerformerId};
use super::messages::{self, envelope::Body, Envelope, LeaveCause, Role};
use super::outcome::{Cause, Outcome, RunError};
use super::peer::{envelope, sender, Destination, PeerRef, Timing, Transmit};
use super::PROTOCOL_VERSION;

/// What the primary needs to know about itself.
#[derive(Debug, Clone)]
pub struct PrimaryConfig {
    /// Its own id and address (role primary).
    pub me: PeerRef,
    /// How many secondaries must join before the run starts (at least 1).
    pub secondaries: usize,
    /// The fingerprint of the world it loaded; secondaries must have the same.
    pub world_fingerprint: u64,
    /// Heartbeats, timeouts, retransmission.
    pub timing: Timing,
}

/// The clock of one step, as the primary's runner computed it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepInput {
    /// The simulation's iteration (does not advance while paused).
    pub iteration: u64,
    /// Simulation time after the step.
    pub sim_time: Duration,
    /// Step size (zero while paused).
    pub dt: Duration,
    /// Whether the world is paused.
    pub paused: bool,
    /// Commands received by the primary since the last step, forwarded to every secondary.
    pub commands: Vec<messages::ForwardedCommand>,
}

/// Why [`Primary::begin_step`] refused to start a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StepRefused {
    /// The handshake is not finished.
    #[error("the secondaries are not all enabled yet")]
    NotReady,
    /// The previous step has not been answered by every secondary.
    #[error("step {0} is still waiting for answers")]
    InFlight(u64),
    /// A stop was requested or the run ended.
    #[error("the run is stopping or has ended")]
    Ending,
}

/// What the primary tells its driver.
#[derive(Debug, Clone, PartialEq)]
pub enum PrimaryEvent {
    /// Every secondary is enabled: the driver may begin step 1. Secondaries by index.
    Ready(Vec<PeerRef>),
    /// Every secondary answered step `seq`: apply the answers (secondary index order), run
    /// the primary's own step, then begin the next.
    StepComplete {
        /// The step.
        seq: u64,
        /// Each secondary's answer, in secondary index order.
        answers: Vec<(PeerRef, SerializedStateMap)>,
        /// The topics the secondaries' systems advertised since their previous answers
        /// (each once, in secondary index order), for every secondary to keep advertised.
        topics: Vec<messages::Topic>,
    },
    /// Something the log should show that does not end the run.
    Warning(String),
    /// The run ended; the machine ignores everything from now on.
    Ended(Outcome),
}

#[derive(Debug)]
struct Peer {
    info: PeerRef,
    last_heard: Duration,
}

#[derive(Debug)]
enum Phase {
    Joining {
        since: Duration,
    },
    Enabling {
        since: Duration,
        last_sent: Duration,
        acked: BTreeSet<String>,
    },
    Ready,
    Stepping {
        step: messages::Step,
        since: Duration,
        last_sent: Duration,
        answers: BTreeMap<String, (SerializedStateMap, Vec<messages::Topic>)>,
    },
    Stopping {
        after_seq: u64,
        since: Duration,
        last_sent: Duration,
        acked: BTreeSet<String>,
    },
    Ended,
}

/// The primary's state machine. Feed it [`handle_message`](Self::handle_message) and
/// [`handle_tick`](Self::handle_tick) (at least every retransmit interval), send what
/// [`poll_transmit`](Self::poll_transmit) returns, act on [`poll_event`](Self::poll_event).
#[derive(Debug)]
pub struct Primary {
    cfg: PrimaryConfig,
    phase: Phase,
    /// Joined secondaries by id; the sorted order gives their index.
    secondaries: BTreeMap<String, Peer>,
    /// The last step every secondary answered.
    completed_seq: u64,
    membership: Membership,
    owners: Owners,
    /// Each level's secondary index as of the last step begun (levels with a performer).
    levels: BTreeMap<LevelId, usize>,
    stop_requested: bool,
    last_heartbeat: Option<Duration>,
    duplicates: u64,
    outbox: VecDeque<Transmit>,
    events: VecDeque<PrimaryEvent>,
    outcome: Option<Outcome>,
    /// After the end, what any peer still talking to us is told again (the Stop or the
    /// PeerError), so a secondary that lost the first copy learns soon.
    final_message: Option<Envelope>,
}

impl Primary {
    /// A primary starting at `now`, waiting for `config.secondaries` secondaries.
    pub fn new(config: PrimaryConfig, now: Duration) -> Self {
        assert!(config.secondaries > 0, "a primary needs at least one secondary");
        let mut p = Primary {
            cfg: config,
            phase: Phase::Joining { since: now },
            secondaries: BTreeMap::new(),
            completed_seq: 0,
            membership: Membership::new(),
            owners: Owners::new(),
            levels: BTreeMap::new(),
            stop_requested: false,
            last_heartbeat: None,
            duplicates: 0,
            outbox: VecDeque::new(),
            events: VecDeque::new(),
            outcome: None,
            final_message: None,
        };
        p.heartbeat(now);
        p
    }

    /// The next message to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.outbox.pop_front()
    }

    /// The next event for the driver.
    pub fn poll_event(&mut self) -> Option<PrimaryEvent> {
        self.events.pop_front()
    }

    /// How the run ended, once it has.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// The last step every secondary answered (0 before the first).
    pub fn completed_seq(&self) -> u64 {
        self.completed_seq
    }

    /// Each performer's secondary index as of the last step begun.
    pub fn owners(&self) -> &Owners {
        &self.owners
    }

    /// Each level's secondary index as of the last step begun: the levels some performer is
    /// in, on its group's secondary ([`assignment::level_secondaries`]).
    pub fn level_owners(&self) -> &BTreeMap<LevelId, usize> {
        &self.levels
    }

    /// The joined secondaries, by index.
    pub fn secondaries(&self) -> Vec<PeerRef> {
        self.secondaries.values().map(|p| p.info.clone()).collect()
    }

    /// How many answers (and other repeated messages) arrived twice and were ignored.
    pub fn duplicates_ignored(&self) -> u64 {
        self.duplicates
    }

    /// Takes one message from the network.
    pub fn handle_message(&mut self, now: Duration, msg: Envelope) {
        if matches!(self.phase, Phase::Ended) {
            // Answer whoever still talks with the run's last word, so it does not have to
            // wait for its peer timeout; never to a Leave (that peer is done).
            if let (Some(info), Some(last)) = (sender(&msg), &self.final_message) {
                if !matches!(msg.body, Some(Body::Leave(_)) | Some(Body::Error(_))) {
                    self.outbox.push_back(Transmit { to: Destination::Secondary(info.id.clone()), msg: last.clone() });
                }
            }
            return;
        }
        let from = sender(&msg).map(|i| PeerRef::from_info(Some(i), Role::Secondary));
        if msg.protocol_version != PROTOCOL_VERSION {
            let peer = from.unwrap_or_else(|| PeerRef::from_info(None, Role::Unspecified));
            let detail = format!("it speaks version {}, this primary {}", msg.protocol_version, PROTOCOL_VERSION);
            return self.fail(now, RunError { peer, cause: Cause::VersionMismatch, detail, reported_by: None });
        }
        if let Some(peer) = from.as_ref().and_then(|f| self.secondaries.get_mut(&f.id)) {
            peer.last_heard = now;
        }
        let Some(body) = msg.body else { return };
        match body {
            Body::Join(join) => self.on_join(now, join),
            Body::Leave(leave) => self.on_leave(now, leave),
            Body::Heartbeat(_) => {}
            Body::Control(c) => self.on_control(now, c),
            Body::Answer(a) => self.on_answer(now, a),
            Body::Error(e) => {
                let by = PeerRef::from_info(e.peer.as_ref(), Role::Secondary);
                // The secondary names the peer at fault; when that is this primary, name the
                // secondary that refused it instead (an error about oneself helps no one).
                let about = e.about.as_ref().map(|a| PeerRef::from_info(Some(a), Role::Unspecified));
                let peer = about.filter(|a| a.id != self.cfg.me.id).unwrap_or_else(|| by.clone());
                let err = RunError { peer, cause: Cause::from_wire(e.cause), detail: e.detail, reported_by: Some(by) };
                self.fail(now, err);
            }
            Body::Step(_) | Body::Stop(_) => {
                let detail = String::from("received a step or stop: another primary is in this partition");
                let peer = PeerRef { role: Role::Primary, id: String::from("?"), address: String::new() };
                self.fail(now, RunError { peer, cause: Cause::ProtocolViolation, detail, reported_by: None });
            }
        }
    }

    fn on_join(&mut self, now: Duration, join: messages::Join) {
        let peer = PeerRef::from_info(join.peer.as_ref(), Role::Secondary);
        if self.secondaries.contains_key(&peer.id) {
            // A repeated announcement; while enabling, the echo may have been lost.
            if let Phase::Enabling { acked, .. } = &self.phase {
                if !acked.contains(&peer.id) {
                    self.send_control(&peer.id);
                }
            }
            return;
        }
        if matches!(self.phase, Phase::Stopping { .. }) {
            // A stop decided during the handshake also reached this joiner; it will leave.
            return;
        }
        if !matches!(self.phase, Phase::Joining { .. }) {
            let detail = format!("{} secondaries were expected and the run has started", self.cfg.secondaries);
            return self.fail(now, RunError { peer, cause: Cause::LateJoin, detail, reported_by: None });
        }
        if join.world_fingerprint != self.cfg.world_fingerprint {
            let detail = format!(
                "its world fingerprint is {:#018x}, the primary's {:#018x}",
                join.world_fingerprint, self.cfg.world_fingerprint
            );
            return self.fail(now, RunError { peer, cause: Cause::FingerprintMismatch, detail, reported_by: None });
        }
        self.secondaries.insert(peer.id.clone(), Peer { info: peer, last_heard: now });
        if self.secondaries.len() == self.cfg.secondaries {
            self.phase = Phase::Enabling { since: now, last_sent: now, acked: BTreeSet::new() };
            let ids: Vec<String> = self.secondaries.keys().cloned().collect();
            for id in ids {
                self.send_control(&id);
            }
        }
    }

    fn send_control(&mut self, id: &str) {
        let index = self.secondaries.keys().position(|k| k == id).unwrap_or(0);
        let body = Body::Control(messages::PeerControl {
            peer: Some(self.cfg.me.info()),
            enable_sim: true,
            secondary_index: index as u32,
            secondaries: self.cfg.secondaries as u32,
            world_fingerprint: self.cfg.world_fingerprint,
        });
        self.outbox.push_back(Transmit { to: Destination::Secondary(id.to_owned()), msg: envelope(body) });
    }

    fn on_leave(&mut self, now: Duration, leave: messages::Leave) {
        let peer = PeerRef::from_info(leave.peer.as_ref(), Role::Secondary);
        let Some(known) = self.secondaries.get(&peer.id).map(|p| p.info.clone()) else { return };
        if let Phase::Stopping { acked, .. } = &mut self.phase {
            if leave.cause == LeaveCause::Stopped as i32 {
                if !acked.insert(peer.id) {
                    self.duplicates += 1;
                }
                return self.check_stopped(now);
            }
        }
        let detail = if leave.detail.is_empty() { String::from("it announced it is leaving") } else { leave.detail };
        self.fail(now, RunError { peer: known, cause: Cause::PeerLeft, detail, reported_by: None });
    }

    fn on_control(&mut self, now: Duration, c: messages::PeerControl) {
        let id = c.peer.map(|p| p.id).unwrap_or_default();
        if !self.secondaries.contains_key(&id) || !c.enable_sim {
            return;
        }
        let Phase::Enabling { acked, .. } = &mut self.phase else {
            self.duplicates += 1;
            return;
        };
        if !acked.insert(id) {
            self.duplicates += 1;
        }
        if acked.len() == self.secondaries.len() {
            self.phase = Phase::Ready;
            self.events.push_back(PrimaryEvent::Ready(self.secondaries()));
            if self.stop_requested {
                self.start_stopping(now);
            }
        }
    }

    fn on_answer(&mut self, now: Duration, a: messages::StepAnswer) {
        let id = a.peer.map(|p| p.id).unwrap_or_default();
        if !self.secondaries.contains_key(&id) {
            return;
        }
        let Phase::Stepping { step, answers, .. } = &mut self.phase else {
            self.duplicates += 1;
            return;
        };
        if a.seq != step.seq || answers.contains_key(&id) {
            // An answer to an older step, or this step's answer again: applied once only.
            self.duplicates += 1;
            return;
        }
        answers.insert(id, (a.state.unwrap_or_default(), a.topics));
        if answers.len() < self.secondaries.len() {
            return;
        }
        let seq = step.seq;
        let mut answers = std::mem::take(answers);
        self.completed_seq = seq;
        self.phase = Phase::Ready;
        let mut topics: Vec<messages::Topic> = Vec::new();
        let mut ordered = Vec::with_capacity(answers.len());
        for (id, p) in &self.secondaries {
            let (state, advertised) = answers.remove(id).unwrap_or_default();
            for t in advertised {
                if !topics.contains(&t) {
                    topics.push(t);
                }
            }
            ordered.push((p.info.clone(), state));
        }
        self.events.push_back(PrimaryEvent::StepComplete { seq, answers: ordered, topics });
        if self.stop_requested {
            self.start_stopping(now);
        }
    }

    /// Advances the machine's clock: heartbeats, retransmissions and timeouts.
    pub fn handle_tick(&mut self, now: Duration) {
        if matches!(self.phase, Phase::Ended) {
            return;
        }
        let t = self.cfg.timing;
        if self.last_heartbeat.is_none_or(|h| now.saturating_sub(h) >= t.heartbeat_interval) {
            self.heartbeat(now);
        }
        // Lost peers, in index order so the same loss is always named the same way. While
        // stopping, secondaries that confirmed fall silent; the stop timeout bounds that phase.
        let stopping = matches!(self.phase, Phase::Stopping { .. });
        if let Some(lost) =
            self.secondaries.values().find(|p| !stopping && now.saturating_sub(p.last_heard) > t.peer_timeout)
        {
            let detail = format!("nothing heard for {:.1} s", now.saturating_sub(lost.last_heard).as_secs_f64());
            let peer = lost.info.clone();
            return self.fail(now, RunError { peer, cause: Cause::HeartbeatTimeout, detail, reported_by: None });
        }
        match &mut self.phase {
            Phase::Joining { since } => {
                if t.join_timeout.is_some_and(|j| now.saturating_sub(*since) > j) {
                    let detail = format!("{} of {} secondaries joined", self.secondaries.len(), self.cfg.secondaries);
                    let peer = self.cfg.me.clone();
                    self.fail(now, RunError { peer, cause: Cause::JoinTimeout, detail, reported_by: None });
                }
            }
            Phase::Enabling { since, last_sent, acked } => {
                let missing: Vec<String> = self.secondaries.keys().filter(|id| !acked.contains(*id)).cloned().collect();
                if now.saturating_sub(*since) > t.step_timeout {
                    let detail = String::from("did not confirm the handshake");
                    return self.fail_missing(now, &missing, detail);
                }
                if now.saturating_sub(*last_sent) >= t.retransmit_interval {
                    *last_sent = now;
                    for id in missing {
                        self.send_control(&id);
                    }
                }
            }
            Phase::Stepping { step, since, last_sent, answers } => {
                let missing: Vec<String> =
                    self.secondaries.keys().filter(|id| !answers.contains_key(*id)).cloned().collect();
                if now.saturating_sub(*since) > t.step_timeout {
                    let detail = format!(
                        "step {} answered by {} of {} secondaries",
                        step.seq,
                        answers.len(),
                        self.secondaries.len()
                    );
                    return self.fail_missing(now, &missing, detail);
                }
                if now.saturating_sub(*last_sent) >= t.retransmit_interval {
                    *last_sent = now;
                    let msg = envelope(Body::Step(step.clone()));
                    for id in missing {
                        self.outbox.push_back(Transmit { to: Destination::Secondary(id), msg: msg.clone() });
                    }
                }
            }
            Phase::Stopping { after_seq, since, last_sent, acked } => {
                let missing: Vec<String> = self.secondaries.keys().filter(|id| !acked.contains(*id)).cloned().collect();
                let after_seq = *after_seq;
                if now.saturating_sub(*since) > t.step_timeout {
                    // The stop was decided at a step boundary; a secondary that did not
                    // confirm it will find the primary gone and end on its own.
                    self.events
                        .push_back(PrimaryEvent::Warning(format!("stop not confirmed by {}", missing.join(", "))));
                    return self.end(Outcome::Stopped { after_seq });
                }
                if now.saturating_sub(*last_sent) >= t.retransmit_interval {
                    *last_sent = now;
                    for id in missing {
                        let msg = envelope(Body::Stop(messages::Stop { after_seq }));
                        self.outbox.push_back(Transmit { to: Destination::Secondary(id), msg });
                    }
                }
            }
            Phase::Ready | Phase::Ended => {}
        }
    }

    /// Starts step `completed_seq + 1`: computes the assignment for `membership` (the levels
    /// each performer is in after the last step), asks `handover` for the state of the
    /// performers changing secondary, and sends the step to every secondary, with the
    /// performers and the levels whose secondary changed. Returns its seq.
    pub fn begin_step(
        &mut self,
        now: Duration,
        input: StepInput,
        membership: &Membership,
        handover: impl FnOnce(&[PerformerId]) -> SerializedStateMap,
    ) -> Result<u64, StepRefused> {
        match &self.phase {
            _ if self.stop_requested => return Err(StepRefused::Ending),
            Phase::Ready => {}
            Phase::Stepping { step, .. } => return Err(StepRefused::InFlight(step.seq)),
            Phase::Joining { .. } | Phase::Enabling { .. } => return Err(StepRefused::NotReady),
            Phase::Stopping { .. } | Phase::Ended => return Err(StepRefused::Ending),
        }
        let ids: Vec<String> = self.secondaries.keys().cloned().collect();
        // The rule keeps an assignment it made for the same membership (no move, every
        // criterion met already), so an unchanged membership, as in most steps, changes
        // nothing (a unit test checks this on random cases).
        let (changes, handover_state, level_changes) = if *membership == self.membership {
            (Vec::new(), None, Vec::new())
        } else {
            let owners = assignment::assign(membership, &self.membership, &self.owners, ids.len());
            let changes = assignment::changes(&self.owners, &owners);
            // State goes down for a performer changing secondary, and for one that appeared
            // after the first step (spawned through the primary: no secondary has it yet).
            let first = self.completed_seq == 0;
            let moving: Vec<PerformerId> =
                changes.iter().filter(|(p, _)| self.owners.contains_key(p) || !first).map(|(p, _)| *p).collect();
            let handover_state = if moving.is_empty() { None } else { Some(handover(&moving)) };
            let levels = assignment::level_secondaries(membership, &owners);
            let level_changes = assignment::level_changes(&self.levels, &levels);
            self.membership = membership.clone();
            self.owners = owners;
            self.levels = levels;
            (changes, handover_state, level_changes)
        };
        let step = messages::Step {
            seq: self.completed_seq + 1,
            iteration: input.iteration,
            sim_time_ns: input.sim_time.as_nanos() as u64,
            dt_ns: input.dt.as_nanos() as u64,
            paused: input.paused,
            affinity: changes
                .iter()
                .map(|&(p, s)| messages::PerformerAffinity { performer: p, secondary_id: ids[s].clone() })
                .collect(),
            handover_state,
            commands: input.commands,
            levels: level_changes
                .iter()
                .map(|&(l, s)| messages::LevelAffinity {
                    level: l,
                    secondary_id: s.map(|s| ids[s].clone()).unwrap_or_default(),
                })
                .collect(),
        };
        let seq = step.seq;
        self.outbox.push_back(Transmit { to: Destination::AllSecondaries, msg: envelope(Body::Step(step.clone())) });
        self.phase = Phase::Stepping { step, since: now, last_sent: now, answers: BTreeMap::new() };
        Ok(seq)
    }

    /// Asks for a normal stop. It happens at the next step boundary: at once between steps,
    /// else when every secondary answered the step in flight (which still completes).
    pub fn request_stop(&mut self, now: Duration) {
        if self.stop_requested || matches!(self.phase, Phase::Ended) {
            return;
        }
        self.stop_requested = true;
        if !matches!(self.phase, Phase::Stepping { .. }) {
            self.start_stopping(now);
        }
    }

    /// Ends the run because of a failure on the primary itself (e.g. a system failed),
    /// telling every secondary.
    pub fn abort(&mut self, now: Duration, detail: impl Into<String>) {
        let peer = self.cfg.me.clone();
        self.fail(now, RunError { peer, cause: Cause::Aborted, detail: detail.into(), reported_by: None });
    }

    /// Ends the run with an error the driver found (a connection closed, a secondary too
    /// many), telling every secondary. Ignored once the run has ended.
    pub fn end_with(&mut self, now: Duration, err: RunError) {
        if !matches!(self.phase, Phase::Ended) {
            self.fail(now, err);
        }
    }

    /// Whether the run has started (every secondary enabled); a join from then on is late.
    pub fn started(&self) -> bool {
        matches!(self.phase, Phase::Ready | Phase::Stepping { .. } | Phase::Stopping { .. } | Phase::Ended)
    }

    fn start_stopping(&mut self, now: Duration) {
        let after_seq = self.completed_seq;
        if self.secondaries.is_empty() {
            return self.end(Outcome::Stopped { after_seq });
        }
        let msg = envelope(Body::Stop(messages::Stop { after_seq }));
        self.final_message = Some(msg.clone());
        self.outbox.push_back(Transmit { to: Destination::AllSecondaries, msg });
        self.phase = Phase::Stopping { after_seq, since: now, last_sent: now, acked: BTreeSet::new() };
    }

    fn check_stopped(&mut self, _now: Duration) {
        if let Phase::Stopping { after_seq, acked, .. } = &self.phase {
            if acked.len() == self.secondaries.len() {
                let after_seq = *after_seq;
                self.end(Outcome::Stopped { after_seq });
            }
        }
    }

    fn heartbeat(&mut self, now: Duration) {
        self.last_heartbeat = Some(now);
        let msg = envelope(Body::Heartbeat(messages::Heartbeat { peer: Some(self.cfg.me.info()) }));
        self.outbox.push_back(Transmit { to: Destination::AllSecondaries, msg });
    }

    fn fail_missing(&mut self, now: Duration, missing: &[String], detail: String) {
        let peer = missing
            .first()
            .and_then(|id| self.secondaries.get(id))
            .map(|p| p.info.clone())
            .unwrap_or_else(|| self.cfg.me.clone());
        let detail =
            if missing.len() > 1 { format!("{detail}; also missing: {}", missing[1..].join(", ")) } else { detail };
        self.fail(now, RunError { peer, cause: Cause::StepAnswerTimeout, detail, reported_by: None });
    }

    /// Ends the run with `err`, telling every secondary (and a peer that is not one, like a
    /// late joiner) why.
    fn fail(&mut self, _now: Duration, err: RunError) {
        let msg = envelope(Body::Error(messages::PeerError {
            peer: Some(self.cfg.me.info()),
            cause: err.cause.to_wire() as i32,
            about: Some(err.peer.info()),
            detail: err.detail.clone(),
        }));
        self.final_message = Some(msg.clone());
        self.outbox.push_back(Transmit { to: Destination::AllSecondaries, msg });
        self.end(Outcome::Failed(err));
    }

    fn end(&mut self, outcome: Outcome) {
        self.phase = Phase::Ended;
        self.outcome = Some(outcome.clone());
        self.events.push_back(PrimaryEvent::Ended(outcome));
    }
}
