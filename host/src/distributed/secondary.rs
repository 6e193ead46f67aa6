//! The secondary: announces itself until the primary enables it, then runs every step the
//! primary orders exactly once, answers it (again, if the primary asks again), and ends when
//! the primary stops the run, reports an error, or goes silent.
//!
//! Phases: `Joining` (Join sent every retransmit interval) → `Enabled` (steps; at most one
//! in progress in the driver) → ended.

use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

use plugin_api::msgs::SerializedStateMap;

use super::assignment::{LevelId, PerformerId};
use super::messages::{self, envelope::Body, Envelope, LeaveCause, Role};
use super::outcome::{Cause, Outcome, RunError};
use super::peer::{envelope, sender, Destination, PeerRef, Timing, Transmit};
use super::PROTOCOL_VERSION;

/// What a secondary needs to know about itself.
#[derive(Debug, Clone)]
pub struct SecondaryConfig {
    /// Its own id and address (role secondary).
    pub me: PeerRef,
    /// The fingerprint of the world it loaded.
    pub world_fingerprint: u64,
    /// Heartbeats, timeouts, retransmission.
    pub timing: Timing,
}

/// A step the driver must run, then report with [`Secondary::complete_step`].
#[derive(Debug, Clone, PartialEq)]
pub struct StepOrder {
    /// The protocol step (pass it back to `complete_step`).
    pub seq: u64,
    /// The simulation's iteration.
    pub iteration: u64,
    /// Simulation time after the step.
    pub sim_time: Duration,
    /// Step size (zero while paused).
    pub dt: Duration,
    /// Whether the world is paused.
    pub paused: bool,
    /// Performers this secondary simulates from this step on (new to it).
    pub take: Vec<PerformerId>,
    /// Performers it no longer simulates (unload them before stepping).
    pub drop: Vec<PerformerId>,
    /// The state of performers changing secondary (apply before stepping).
    pub handover_state: SerializedStateMap,
    /// Commands forwarded by the primary, in the order it received them.
    pub commands: Vec<messages::ForwardedCommand>,
    /// Every level this secondary must hold in this step (the full set, not the changes):
    /// the levels its performers are in. Mark them before the step runs
    /// (`distributed::levels::mark_assigned_levels`) so the level manager loads exactly these.
    pub levels: BTreeSet<LevelId>,
    /// Levels in `levels` that were not at the previous step.
    pub levels_gained: Vec<LevelId>,
    /// Levels held at the previous step that are not any more.
    pub levels_lost: Vec<LevelId>,
}

/// What the secondary tells its driver.
#[derive(Debug, Clone, PartialEq)]
pub enum SecondaryEvent {
    /// The primary enabled this secondary: its index among `count` secondaries.
    Enabled {
        /// The primary.
        primary: PeerRef,
        /// This secondary's index (secondaries sorted by id).
        index: usize,
        /// How many secondaries the run has.
        count: usize,
    },
    /// Run this step, then call [`Secondary::complete_step`].
    Step(StepOrder),
    /// The run ended; the machine only answers repeated Stops from now on.
    Ended(Outcome),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Joining,
    Enabled,
    Ended,
}

/// The secondary's state machine (same driving contract as [`Primary`](super::Primary)).
#[derive(Debug)]
pub struct Secondary {
    cfg: SecondaryConfig,
    phase: Phase,
    primary: Option<PeerRef>,
    last_heard: Option<Duration>,
    last_join: Duration,
    last_heartbeat: Duration,
    owned: BTreeSet<PerformerId>,
    levels: BTreeSet<LevelId>,
    /// The last step answered, and the step the driver is running.
    answered_seq: u64,
    in_progress: Option<u64>,
    last_answer: Option<Envelope>,
    outbox: VecDeque<Transmit>,
    events: VecDeque<SecondaryEvent>,
    outcome: Option<Outcome>,
}

impl Secondary {
    /// A secondary starting at `now`; its first Join is queued at once.
    pub fn new(config: SecondaryConfig, now: Duration) -> Self {
        let mut s = Secondary {
            cfg: config,
            phase: Phase::Joining,
            primary: None,
            last_heard: None,
            last_join: now,
            last_heartbeat: now,
            owned: BTreeSet::new(),
            levels: BTreeSet::new(),
            answered_seq: 0,
            in_progress: None,
            last_answer: None,
            outbox: VecDeque::new(),
            events: VecDeque::new(),
            outcome: None,
        };
        s.send_join();
        s
    }

    /// The next message to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.outbox.pop_front()
    }

    /// The next event for the driver.
    pub fn poll_event(&mut self) -> Option<SecondaryEvent> {
        self.events.pop_front()
    }

    /// How the run ended, once it has.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// The performers this secondary simulates (after the last step it received).
    pub fn owned(&self) -> &BTreeSet<PerformerId> {
        &self.owned
    }

    /// The levels this secondary holds (after the last step it received).
    pub fn levels(&self) -> &BTreeSet<LevelId> {
        &self.levels
    }

    /// This secondary as errors name it.
    pub fn peer(&self) -> &PeerRef {
        &self.cfg.me
    }

    /// The last step answered.
    pub fn answered_seq(&self) -> u64 {
        self.answered_seq
    }

    fn me(&self) -> messages::PeerInfo {
        self.cfg.me.info()
    }

    fn primary_ref(&self) -> PeerRef {
        self.primary.clone().unwrap_or_else(|| PeerRef {
            role: Role::Primary,
            id: String::from("?"),
            address: String::new(),
        })
    }

    fn send(&mut self, body: Body) {
        self.outbox.push_back(Transmit { to: Destination::Primary, msg: envelope(body) });
    }

    fn send_join(&mut self) {
        let body = Body::Join(messages::Join { peer: Some(self.me()), world_fingerprint: self.cfg.world_fingerprint });
        self.send(body);
    }

    /// Takes one message from the network (secondaries only hear the primary).
    pub fn handle_message(&mut self, now: Duration, msg: Envelope) {
        if self.phase == Phase::Ended {
            // A Stop repeated because our Leave was lost: confirm again.
            if matches!(msg.body, Some(Body::Stop(_))) && self.outcome.as_ref().is_some_and(Outcome::is_clean) {
                self.send_leave(LeaveCause::Stopped, "stopped");
            }
            return;
        }
        if let Some(info) = sender(&msg) {
            if info.role == Role::Primary as i32 {
                self.primary = Some(PeerRef::from_info(Some(info), Role::Primary));
            }
        }
        if msg.protocol_version != PROTOCOL_VERSION {
            let detail = format!("it speaks version {}, this secondary {}", msg.protocol_version, PROTOCOL_VERSION);
            return self.fail(
                RunError { peer: self.primary_ref(), cause: Cause::VersionMismatch, detail, reported_by: None },
                true,
            );
        }
        self.last_heard = Some(now);
        let Some(body) = msg.body else { return };
        match body {
            Body::Heartbeat(_) => {}
            Body::Control(c) => self.on_control(c),
            Body::Step(step) => self.on_step(step),
            Body::Stop(stop) => {
                if self.in_progress.is_some() {
                    let detail =
                        format!("stop after step {} while step {:?} was running", stop.after_seq, self.in_progress);
                    return self.fail(
                        RunError {
                            peer: self.primary_ref(),
                            cause: Cause::ProtocolViolation,
                            detail,
                            reported_by: None,
                        },
                        true,
                    );
                }
                self.send_leave(LeaveCause::Stopped, "stopped");
                self.end(Outcome::Stopped { after_seq: stop.after_seq });
            }
            Body::Error(e) => {
                let by = PeerRef::from_info(e.peer.as_ref(), Role::Primary);
                let about = e
                    .about
                    .as_ref()
                    .map(|a| PeerRef::from_info(Some(a), Role::Unspecified))
                    .unwrap_or_else(|| by.clone());
                let err =
                    RunError { peer: about, cause: Cause::from_wire(e.cause), detail: e.detail, reported_by: Some(by) };
                self.fail(err, false);
            }
            Body::Leave(l) => {
                let peer = PeerRef::from_info(l.peer.as_ref(), Role::Primary);
                if peer.role == Role::Primary {
                    self.fail(RunError { peer, cause: Cause::PeerLeft, detail: l.detail, reported_by: None }, false);
                }
            }
            // Other secondaries' traffic, should a driver let us see it.
            Body::Join(_) | Body::Answer(_) => {}
        }
    }

    fn on_control(&mut self, c: messages::PeerControl) {
        if !c.enable_sim {
            return;
        }
        if c.world_fingerprint != self.cfg.world_fingerprint {
            let detail = format!(
                "its world fingerprint is {:#018x}, this secondary's {:#018x}",
                c.world_fingerprint, self.cfg.world_fingerprint
            );
            return self.fail(
                RunError { peer: self.primary_ref(), cause: Cause::FingerprintMismatch, detail, reported_by: None },
                true,
            );
        }
        if self.phase == Phase::Joining {
            self.phase = Phase::Enabled;
            self.events.push_back(SecondaryEvent::Enabled {
                primary: self.primary_ref(),
                index: c.secondary_index as usize,
                count: c.secondaries as usize,
            });
        }
        // Echo, also for a repeated request (our first echo may have been lost).
        self.send(Body::Control(messages::PeerControl {
            peer: Some(self.me()),
            enable_sim: true,
            ..Default::default()
        }));
    }

    fn on_step(&mut self, step: messages::Step) {
        if self.phase != Phase::Enabled {
            // A late joiner hears the steps of a run it is not part of.
            return;
        }
        if self.in_progress == Some(step.seq) || step.seq < self.answered_seq {
            return; // being run, or long answered
        }
        if step.seq == self.answered_seq {
            // The primary did not get our answer: send it again, never run the step again.
            if let Some(answer) = self.last_answer.clone() {
                self.outbox.push_back(Transmit { to: Destination::Primary, msg: answer });
            }
            return;
        }
        if step.seq != self.answered_seq + 1 || self.in_progress.is_some() {
            let detail = format!("step {} ordered after step {} was answered", step.seq, self.answered_seq);
            return self.fail(
                RunError { peer: self.primary_ref(), cause: Cause::ProtocolViolation, detail, reported_by: None },
                true,
            );
        }
        let me = self.cfg.me.id.clone();
        let mut take = Vec::new();
        let mut drop = Vec::new();
        for a in &step.affinity {
            if a.secondary_id == me {
                if self.owned.insert(a.performer) {
                    take.push(a.performer);
                }
            } else if self.owned.remove(&a.performer) {
                drop.push(a.performer);
            }
        }
        let mut levels_gained = Vec::new();
        let mut levels_lost = Vec::new();
        for a in &step.levels {
            if a.secondary_id == me {
                if self.levels.insert(a.level) {
                    levels_gained.push(a.level);
                }
            } else if self.levels.remove(&a.level) {
                levels_lost.push(a.level);
            }
        }
        self.in_progress = Some(step.seq);
        self.events.push_back(SecondaryEvent::Step(StepOrder {
            seq: step.seq,
            iteration: step.iteration,
            sim_time: Duration::from_nanos(step.sim_time_ns),
            dt: Duration::from_nanos(step.dt_ns),
            paused: step.paused,
            take,
            drop,
            handover_state: step.handover_state.unwrap_or_default(),
            commands: step.commands,
            levels: self.levels.clone(),
            levels_gained,
            levels_lost,
        }));
    }

    /// Reports that the driver ran step `seq`; `state` is the changed state of the
    /// performers this secondary owns, `topics` those its systems advertised since its
    /// previous answer. Errors if `seq` is not the step in progress.
    pub fn complete_step(
        &mut self,
        seq: u64,
        state: SerializedStateMap,
        topics: Vec<messages::Topic>,
    ) -> Result<(), String> {
        if self.phase != Phase::Enabled || self.in_progress != Some(seq) {
            return Err(format!("step {seq} is not in progress (in progress: {:?})", self.in_progress));
        }
        let msg =
            envelope(Body::Answer(messages::StepAnswer { peer: Some(self.me()), seq, state: Some(state), topics }));
        self.last_answer = Some(msg.clone());
        self.in_progress = None;
        self.answered_seq = seq;
        self.outbox.push_back(Transmit { to: Destination::Primary, msg });
        Ok(())
    }

    /// Advances the machine's clock: Join retransmission, heartbeats, primary timeout.
    pub fn handle_tick(&mut self, now: Duration) {
        let t = self.cfg.timing;
        match self.phase {
            Phase::Ended => return,
            Phase::Joining => {
                if now.saturating_sub(self.last_join) >= t.retransmit_interval {
                    self.last_join = now;
                    self.send_join();
                }
            }
            Phase::Enabled => {
                if now.saturating_sub(self.last_heartbeat) >= t.heartbeat_interval {
                    self.last_heartbeat = now;
                    self.send(Body::Heartbeat(messages::Heartbeat { peer: Some(self.me()) }));
                }
            }
        }
        // A primary once heard and now silent is lost; one never heard is waited for.
        if let Some(last) = self.last_heard {
            if now.saturating_sub(last) > t.peer_timeout {
                let detail = format!("nothing heard for {:.1} s", now.saturating_sub(last).as_secs_f64());
                self.fail(
                    RunError { peer: self.primary_ref(), cause: Cause::HeartbeatTimeout, detail, reported_by: None },
                    false,
                );
            }
        }
    }

    /// Leaves the run on this secondary's own account (signal, local failure): tells the
    /// primary, which ends the run for everyone.
    pub fn leave(&mut self, detail: impl Into<String>) {
        if self.phase == Phase::Ended {
            return;
        }
        let detail = detail.into();
        self.send_leave(LeaveCause::Shutdown, &detail);
        let err = RunError { peer: self.cfg.me.clone(), cause: Cause::Aborted, detail, reported_by: None };
        self.end(Outcome::Failed(err));
    }

    /// Ends the run because the driver lost the primary (its connection closed). The
    /// primary cannot be told. Ignored once the run has ended.
    pub fn lose_primary(&mut self, detail: impl Into<String>) {
        if self.phase != Phase::Ended {
            let err =
                RunError { peer: self.primary_ref(), cause: Cause::PeerLeft, detail: detail.into(), reported_by: None };
            self.fail(err, false);
        }
    }

    /// Whether the run has ended.
    pub fn ended(&self) -> bool {
        self.phase == Phase::Ended
    }

    fn send_leave(&mut self, cause: LeaveCause, detail: &str) {
        self.send(Body::Leave(messages::Leave {
            peer: Some(self.me()),
            cause: cause as i32,
            detail: detail.to_owned(),
        }));
    }

    /// Ends with `err`; `tell` sends the primary a PeerError naming it (when this
    /// secondary found the problem and the primary can still hear it).
    fn fail(&mut self, err: RunError, tell: bool) {
        if tell {
            self.send(Body::Error(messages::PeerError {
                peer: Some(self.me()),
                cause: err.cause.to_wire() as i32,
                about: Some(err.peer.info()),
                detail: err.detail.clone(),
            }));
        }
        self.end(Outcome::Failed(err));
    }

    fn end(&mut self, outcome: Outcome) {
        self.phase = Phase::Ended;
        self.in_progress = None;
        self.outcome = Some(outcome.clone());
        self.events.push_back(SecondaryEvent::Ended(outcome));
    }
}
