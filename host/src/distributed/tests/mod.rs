//! Tests of the two machines together: a [`Cluster`] runs a primary and its secondaries
//! with a toy driver (secondaries answer with their performers' state, the primary follows a
//! script of level memberships) over a network, checking the protocol's invariants as it
//! goes.

mod machines;
mod properties;
mod trace;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use plugin_api::msgs::{SerializedComponent, SerializedEntityMap, SerializedStateMap};

use super::messages::ForwardedCommand;
use super::simnet::{Delivery, LinkConfig, Node, Rng, SimNet};
use super::*;

/// What carries the messages: the simulated network, or a recorded trace being replayed.
pub(super) trait Net {
    fn send(&mut self, now: Duration, from: Node, t: &Transmit);
    fn deliver_due(&mut self, now: Duration) -> Vec<Delivery>;
    fn add_secondary(&mut self, id: &str, link: LinkConfig) -> Node;
    /// Cuts secondary node i from the primary (a replay has no links to cut).
    fn partition(&mut self, _i: usize) {}
}

impl Net for SimNet {
    fn send(&mut self, now: Duration, from: Node, t: &Transmit) {
        SimNet::send(self, now, from, t)
    }
    fn deliver_due(&mut self, now: Duration) -> Vec<Delivery> {
        SimNet::deliver_due(self, now)
    }
    fn add_secondary(&mut self, id: &str, link: LinkConfig) -> Node {
        SimNet::add_secondary(self, id, link)
    }
    fn partition(&mut self, i: usize) {
        SimNet::partition(self, i, true)
    }
}

pub(super) const TICK: Duration = Duration::from_millis(10);
pub(super) const FINGERPRINT: u64 = 0x7e57_f00d;

pub(super) fn timing() -> Timing {
    Timing {
        heartbeat_interval: Duration::from_millis(100),
        peer_timeout: Duration::from_secs(2),
        step_timeout: Duration::from_secs(2),
        retransmit_interval: Duration::from_millis(100),
        join_timeout: None,
    }
}

pub(super) fn peer(role: messages::Role, id: &str) -> PeerRef {
    PeerRef { role, id: id.to_owned(), address: format!("sim://{id}") }
}

pub(super) fn secondary_config(id: &str) -> SecondaryConfig {
    SecondaryConfig { me: peer(messages::Role::Secondary, id), world_fingerprint: FINGERPRINT, timing: timing() }
}

/// Something done to the run at a time: the faults the properties are about.
#[derive(Debug, Clone)]
pub(super) enum Action {
    /// Cut secondary node i from the primary.
    Partition(usize),
    /// A new secondary (with this id) joins.
    LateJoin(String),
    /// Secondary node i leaves on its own.
    Leave(usize),
}

/// A primary, its secondaries and the toy driver around them.
pub(super) struct Cluster<N: Net> {
    pub now: Duration,
    pub net: N,
    pub rng: Rng,
    pub primary: Primary,
    pub secondaries: Vec<Secondary>,
    pub ids: Vec<String>,
    pub link: LinkConfig,
    /// The membership the primary sees before step k is `script[k - 1]` (the last one after).
    pub script: Vec<Membership>,
    /// The primary asks for a stop once this step completed.
    pub stop_after: Option<u64>,
    /// Longest a secondary takes to run a step, in ticks.
    pub max_compute_ticks: u64,
    pub actions: Vec<(Duration, Action)>,
    pending: Vec<(Duration, usize, u64)>,
    // What happened, for the checks.
    pub completed: Vec<u64>,
    pub owned_at: Vec<BTreeMap<u64, BTreeSet<PerformerId>>>,
    /// The levels each secondary held in each step it ran (its `StepOrder::levels`).
    pub levels_at: Vec<BTreeMap<u64, BTreeSet<LevelId>>>,
    /// Levels gained or lost by a secondary after step 1, summed.
    pub level_moves: usize,
    pub runs: BTreeMap<(usize, u64), u32>,
    pub handovers: Vec<(u64, PerformerId, String)>,
    pub violations: Vec<String>,
    ever_owned: BTreeSet<PerformerId>,
    pub primary_outcome: Option<Outcome>,
    pub secondary_outcomes: Vec<Option<Outcome>>,
    pub trace: Option<Vec<String>>,
}

impl<N: Net> Cluster<N> {
    /// `n` secondaries named s1..sn, all on `link`.
    pub fn new(mut net: N, seed: u64, n: usize, link: LinkConfig, script: Vec<Membership>) -> Self {
        let now = Duration::ZERO;
        let cfg = PrimaryConfig {
            me: peer(messages::Role::Primary, "p"),
            secondaries: n,
            world_fingerprint: FINGERPRINT,
            timing: timing(),
        };
        let primary = Primary::new(cfg, now);
        let ids: Vec<String> = (1..=n).map(|i| format!("s{i}")).collect();
        let secondaries = ids
            .iter()
            .map(|id| {
                net.add_secondary(id, link);
                Secondary::new(secondary_config(id), now)
            })
            .collect();
        Cluster {
            now,
            net,
            rng: Rng::new(seed ^ 0xC1A5_7E55),
            primary,
            secondaries,
            owned_at: vec![BTreeMap::new(); n],
            levels_at: vec![BTreeMap::new(); n],
            level_moves: 0,
            secondary_outcomes: vec![None; n],
            ids,
            link,
            script,
            stop_after: None,
            max_compute_ticks: 0,
            actions: Vec::new(),
            pending: Vec::new(),
            completed: Vec::new(),
            runs: BTreeMap::new(),
            handovers: Vec::new(),
            violations: Vec::new(),
            ever_owned: BTreeSet::new(),
            primary_outcome: None,
            trace: None,
        }
    }

    fn all_ended(&self) -> bool {
        self.primary_outcome.is_some() && self.secondary_outcomes.iter().all(Option::is_some)
    }

    /// Runs until every machine ended or `limit` (simulated time) passed; true if all ended.
    pub fn run(&mut self, limit: Duration) -> bool {
        self.flush();
        while !self.all_ended() && self.now < limit {
            self.now += TICK;
            let now = self.now;
            let due: Vec<Action> =
                self.actions.iter().filter(|(t, _)| *t <= now && *t > now - TICK).map(|(_, a)| a.clone()).collect();
            for a in due {
                self.act(a);
            }
            for d in self.net.deliver_due(now) {
                if let Some(tr) = &mut self.trace {
                    tr.push(trace::line(d.at, "recv", d.from, d.to, &d.msg));
                }
                match d.to {
                    Node::Primary => self.primary.handle_message(now, d.msg),
                    Node::Secondary(i) => self.secondaries[i].handle_message(now, d.msg),
                }
            }
            let ready: Vec<(usize, u64)> = self.pending.iter().filter(|p| p.0 <= now).map(|p| (p.1, p.2)).collect();
            self.pending.retain(|p| p.0 > now);
            for (i, seq) in ready {
                let state = self.answer_state(i, seq);
                // A machine that ended meanwhile refuses; that is fine.
                let _ = self.secondaries[i].complete_step(seq, state, Vec::new());
            }
            self.primary.handle_tick(now);
            for s in &mut self.secondaries {
                s.handle_tick(now);
            }
            self.flush();
        }
        self.all_ended()
    }

    fn act(&mut self, a: Action) {
        match a {
            Action::Partition(i) => self.net.partition(i),
            Action::LateJoin(id) => {
                self.net.add_secondary(&id, self.link);
                self.secondaries.push(Secondary::new(secondary_config(&id), self.now));
                self.ids.push(id);
                self.owned_at.push(BTreeMap::new());
                self.levels_at.push(BTreeMap::new());
                self.secondary_outcomes.push(None);
            }
            Action::Leave(i) => self.secondaries[i].leave("asked to leave by the test"),
        }
    }

    fn answer_state(&self, i: usize, seq: u64) -> SerializedStateMap {
        let mut state = SerializedStateMap::default();
        for &p in self.secondaries[i].owned() {
            let comp = SerializedComponent { r#type: 1, component: seq.to_le_bytes().to_vec(), remove: false };
            state.entities.insert(p, SerializedEntityMap { id: p, components: [(1, comp)].into(), remove: false });
        }
        state
    }

    fn membership(&self, seq: u64) -> Membership {
        let k = (seq as usize).saturating_sub(1).min(self.script.len().saturating_sub(1));
        self.script.get(k).cloned().unwrap_or_default()
    }

    /// Moves every event and transmit out of the machines, reacting as a driver would.
    fn flush(&mut self) {
        loop {
            let mut busy = false;
            while let Some(ev) = self.primary.poll_event() {
                busy = true;
                self.on_primary_event(ev);
            }
            for i in 0..self.secondaries.len() {
                while let Some(ev) = self.secondaries[i].poll_event() {
                    busy = true;
                    self.on_secondary_event(i, ev);
                }
            }
            while let Some(t) = self.primary.poll_transmit() {
                busy = true;
                self.send(Node::Primary, t);
            }
            for i in 0..self.secondaries.len() {
                while let Some(t) = self.secondaries[i].poll_transmit() {
                    busy = true;
                    self.send(Node::Secondary(i), t);
                }
            }
            if !busy {
                break;
            }
        }
    }

    fn send(&mut self, from: Node, t: Transmit) {
        if let Some(tr) = &mut self.trace {
            let to = match &t.to {
                Destination::Primary => "primary".to_owned(),
                Destination::Secondary(id) => id.clone(),
                Destination::AllSecondaries => "all".to_owned(),
            };
            tr.push(format!("{} send {} {} {}", self.now.as_micros(), trace::node(from), to, trace::text(&t.msg)));
        }
        self.net.send(self.now, from, &t);
    }

    fn begin(&mut self, seq: u64) {
        // No step before every secondary answered the previous one.
        for (i, s) in self.secondaries.iter().enumerate() {
            if self.secondary_outcomes[i].is_none()
                && i < self.primary.secondaries().len()
                && s.answered_seq() + 1 < seq
            {
                self.violations.push(format!(
                    "step {seq} begun while {} answered only {}",
                    self.ids[i],
                    s.answered_seq()
                ));
            }
        }
        let paused = self.rng.chance(0.1);
        let input = StepInput {
            iteration: seq,
            sim_time: Duration::from_millis(seq),
            dt: if paused { Duration::ZERO } else { Duration::from_millis(1) },
            paused,
            commands: vec![ForwardedCommand { kind: "test/seq".into(), payload: seq.to_le_bytes().to_vec() }],
        };
        let membership = self.membership(seq);
        let res = self.primary.begin_step(self.now, input, &membership, |moving| {
            let mut state = SerializedStateMap::default();
            for &p in moving {
                state.entities.insert(p, SerializedEntityMap { id: p, components: BTreeMap::new(), remove: false });
            }
            state
        });
        if let Err(e) = res {
            self.violations.push(format!("begin_step({seq}) refused: {e}"));
        }
    }

    fn on_primary_event(&mut self, ev: PrimaryEvent) {
        match ev {
            PrimaryEvent::Ready(peers) => {
                if peers.len() != self.primary.secondaries().len() {
                    self.violations.push("ready with the wrong count".into());
                }
                self.begin(1);
            }
            PrimaryEvent::StepComplete { seq, answers, .. } => {
                self.check_complete(seq, &answers);
                self.completed.push(seq);
                if self.stop_after == Some(seq) {
                    self.primary.request_stop(self.now);
                } else if self.primary.outcome().is_none() {
                    // (A run that ended in the same batch of messages takes no more steps.)
                    self.begin(seq + 1);
                }
            }
            PrimaryEvent::Warning(_) => {}
            PrimaryEvent::Ended(o) => self.primary_outcome = Some(o),
        }
    }

    fn check_complete(&mut self, seq: u64, answers: &[(PeerRef, SerializedStateMap)]) {
        if self.completed.last().map_or(1, |l| l + 1) != seq {
            self.violations.push(format!("step {seq} completed after {:?}", self.completed.last()));
        }
        let distinct: BTreeSet<&str> = answers.iter().map(|(p, _)| p.id.as_str()).collect();
        if distinct.len() != answers.len() || answers.len() != self.primary.secondaries().len() {
            self.violations.push(format!("step {seq}: {} answers from {} peers", answers.len(), distinct.len()));
        }
        // Each answer is this step's and holds exactly its sender's performers.
        for (p, state) in answers {
            let i = self.ids.iter().position(|id| *id == p.id).expect("known");
            let owned = self.owned_at[i].get(&seq).cloned().unwrap_or_default();
            let got: BTreeSet<PerformerId> = state.entities.keys().copied().collect();
            if got != owned {
                self.violations.push(format!("step {seq}: {} answered for {got:?}, owns {owned:?}", p.id));
            }
            for e in state.entities.values() {
                if e.components.get(&1).map(|c| c.component.clone()) != Some(seq.to_le_bytes().to_vec()) {
                    self.violations.push(format!("step {seq}: {} answer carries another step's state", p.id));
                }
            }
        }
        // Exactly one owner per performer, and it is the primary's choice.
        let ordered: Vec<String> = self.primary.secondaries().into_iter().map(|p| p.id).collect();
        for p in self.membership(seq).keys() {
            let owners: Vec<usize> =
                (0..self.ids.len()).filter(|&i| self.owned_at[i].get(&seq).is_some_and(|o| o.contains(p))).collect();
            if owners.len() != 1 {
                self.violations.push(format!("step {seq}: performer {p} owned by {owners:?}"));
                continue;
            }
            let want = self.primary.owners().get(p).map(|&s| ordered[s].clone());
            if want.as_deref() != Some(self.ids[owners[0]].as_str()) {
                self.violations
                    .push(format!("step {seq}: performer {p} on {}, primary says {want:?}", self.ids[owners[0]]));
            }
        }
        self.check_levels(seq);
    }

    /// Every level with a performer is held by exactly one secondary, the one simulating
    /// every performer in it; a level with no performer by none.
    fn check_levels(&mut self, seq: u64) {
        let membership = self.membership(seq);
        let mut with_performers: BTreeSet<LevelId> = BTreeSet::new();
        for levels in membership.values() {
            with_performers.extend(levels);
        }
        let holders = |l: LevelId| -> Vec<usize> {
            (0..self.ids.len()).filter(|&i| self.levels_at[i].get(&seq).is_some_and(|h| h.contains(&l))).collect()
        };
        for &l in &with_performers {
            let held = holders(l);
            if held.len() != 1 {
                self.violations.push(format!("step {seq}: level {l} held by {held:?}"));
                continue;
            }
            for (p, levels) in &membership {
                let owned = self.owned_at[held[0]].get(&seq).is_some_and(|o| o.contains(p));
                if levels.contains(&l) && !owned {
                    self.violations
                        .push(format!("step {seq}: level {l} on {}, its performer {p} elsewhere", self.ids[held[0]]));
                }
            }
        }
        let all: BTreeSet<LevelId> = self.levels_at.iter().filter_map(|m| m.get(&seq)).flatten().copied().collect();
        for l in all.difference(&with_performers) {
            self.violations.push(format!("step {seq}: level {l} has no performer and is held by {:?}", holders(*l)));
        }
    }

    fn on_secondary_event(&mut self, i: usize, ev: SecondaryEvent) {
        match ev {
            SecondaryEvent::Enabled { .. } => {}
            SecondaryEvent::Step(order) => {
                *self.runs.entry((i, order.seq)).or_default() += 1;
                if self.runs[&(i, order.seq)] > 1 {
                    self.violations.push(format!("{} ran step {} twice", self.ids[i], order.seq));
                }
                if order.commands.first().map(|c| c.payload.clone()) != Some(order.seq.to_le_bytes().to_vec()) {
                    self.violations.push(format!("{} step {}: forwarded command lost", self.ids[i], order.seq));
                }
                for &p in &order.take {
                    if self.ever_owned.contains(&p) {
                        self.handovers.push((order.seq, p, self.ids[i].clone()));
                        if !order.handover_state.entities.contains_key(&p) {
                            self.violations
                                .push(format!("step {}: {p} handed to {} without its state", order.seq, self.ids[i]));
                        }
                    }
                    self.ever_owned.insert(p);
                }
                self.owned_at[i].insert(order.seq, self.secondaries[i].owned().clone());
                self.check_level_order(i, &order);
                self.levels_at[i].insert(order.seq, order.levels.clone());
                let ticks = if self.max_compute_ticks == 0 { 0 } else { self.rng.below(self.max_compute_ticks + 1) };
                self.pending.push((self.now + TICK * ticks as u32, i, order.seq));
            }
            SecondaryEvent::Ended(o) => self.secondary_outcomes[i] = Some(o),
        }
    }
}

impl<N: Net> Cluster<N> {
    /// The order's level set is the machine's, and its gains and losses are the difference
    /// from the previous step this secondary ran.
    fn check_level_order(&mut self, i: usize, order: &StepOrder) {
        let who = format!("{} step {}", self.ids[i], order.seq);
        if &order.levels != self.secondaries[i].levels() {
            self.violations.push(format!(
                "{who}: order levels {:?}, machine {:?}",
                order.levels,
                self.secondaries[i].levels()
            ));
        }
        let before = self.levels_at[i].get(&(order.seq - 1)).cloned().unwrap_or_default();
        let gained: Vec<LevelId> = order.levels.difference(&before).copied().collect();
        let lost: Vec<LevelId> = before.difference(&order.levels).copied().collect();
        if order.seq > 1 {
            self.level_moves += gained.len() + lost.len();
        }
        if (gained.as_slice(), lost.as_slice()) != (order.levels_gained.as_slice(), order.levels_lost.as_slice()) {
            self.violations.push(format!(
                "{who}: gained {:?} lost {:?}, expected {gained:?} {lost:?}",
                order.levels_gained, order.levels_lost
            ));
        }
    }
}

/// A membership from (performer, levels) pairs.
pub(super) fn membership(entries: &[(PerformerId, &[LevelId])]) -> Membership {
    entries.iter().map(|(p, ls)| (*p, ls.iter().copied().collect())).collect()
}
