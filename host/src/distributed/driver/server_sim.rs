//! The driver's [`Simulation`] over a loaded [`Server`] (one world), and
//! [`Server::run_distributed`].

use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use plugin_api::msgs::SerializedStateMap;
use plugin_api::prost::Message;
use plugin_api::EntityId;

use super::{run_primary, run_secondary, DriverConfig, DriverError, Simulation};
use crate::distributed::messages::{ForwardedCommand, Topic, TopicList};
use crate::distributed::split::{self, Forward, SplitOwnership};
use crate::distributed::LevelId;
use crate::distributed::{fingerprint, Membership, Outcome, PeerRef, PerformerId, StepInput, StepOrder};
use crate::server::{RunSummary, Server};
use crate::state::{apply_state, decode_state, Stamp};
use plugin_api::NetworkRole;

/// Forwarded command kinds (`ForwardedCommand::kind`).
const RESET: &str = "troupe.reset";
const REWIND: &str = "troupe.rewind";
const SHARED_STATE: &str = "troupe.state";
const PERFORMER_STATE: &str = "troupe.performer_state";
/// Systems attached to an entity the primary created (payload: a gz `EntityPlugin_V`).
const SYSTEMS: &str = "troupe.systems";
/// Topics a secondary's systems advertised after the first step (payload: a `TopicList`).
const TOPICS: &str = "troupe.topics";

/// A server stepped by the driver.
struct ServerSim<'a> {
    server: &'a mut Server,
    target: Option<u64>,
    start_iterations: u64,
    last: Instant,
    ownership: Arc<SplitOwnership>,
    /// Secondary: the performers simulated here.
    owned: BTreeSet<PerformerId>,
    /// Secondary: the performers not owned were dropped (after the first step's affinities).
    split_done: bool,
    /// Secondary: the entities simulated here (owned performers, levels held) and the
    /// levels' part of them, as of the last [`ServerSim::refresh_ownership`].
    mine: HashSet<EntityId>,
    mine_levels: BTreeSet<EntityId>,
    /// Secondary: entities came or went since `mine` was computed.
    mine_stale: bool,
    /// Secondary: the levels last marked assigned, and the ECM's structure version just
    /// after: while both stay the same, the marks are still right.
    levels_marked: Option<(BTreeSet<LevelId>, u64)>,
    /// Secondary: the topics of the first step are kept advertised (see `secondary_step`).
    topics_kept: bool,
    /// Secondary: the topics advertised here (by its systems, or kept for another
    /// secondary's), and the node's advertisement count when they were last listed.
    topics_known: HashSet<(String, String)>,
    advertisements_seen: u64,
    /// Secondary: the systems attached to performers' entities at load, and to entities the
    /// primary created since (forwarded), by entity: they start where a performer is taken.
    performer_systems: Vec<(EntityId, plugin_api::msgs::Plugin)>,
    /// Primary: what its own systems changed at its last step, for the next step order.
    forward: Forward,
    /// Primary: the systems attached to entities created at its last step, which run on
    /// the secondaries (see [`crate::runner::WorldRunner::take_withheld_systems`]).
    forward_systems: Vec<(EntityId, plugin_api::msgs::Plugin)>,
    /// Primary: topics the secondaries advertised since the last step order, for all of them.
    forward_topics: Vec<Topic>,
    /// Primary: every entity seen as a level's content (never forwarded).
    level_entities: HashSet<EntityId>,
    /// Primary: the iteration after its last step (a rewind goes below it).
    last_iteration: u64,
    /// When the first step began and the last one ended: the summary's wall time, which
    /// leaves out the wait for the other processes and the linger at the end.
    first_step: Option<Instant>,
    last_step_end: Option<Instant>,
}

impl<'a> ServerSim<'a> {
    fn new(server: &'a mut Server, target: Option<u64>, ownership: Arc<SplitOwnership>) -> ServerSim<'a> {
        let start_iterations = server.runners[0].clock.iterations();
        ServerSim {
            server,
            target,
            start_iterations,
            last: Instant::now(),
            ownership,
            owned: BTreeSet::new(),
            split_done: false,
            performer_systems: Vec::new(),
            topics_kept: false,
            topics_known: HashSet::new(),
            advertisements_seen: 0,
            forward_topics: Vec::new(),
            mine: HashSet::new(),
            mine_levels: BTreeSet::new(),
            mine_stale: true,
            levels_marked: None,
            forward: Forward::default(),
            forward_systems: Vec::new(),
            level_entities: HashSet::new(),
            last_iteration: start_iterations,
            first_step: None,
            last_step_end: None,
        }
    }

    /// Wall time from the start of the first step to the end of the last, if one ran.
    fn stepping_time(&self) -> Option<Duration> {
        Some(self.last_step_end? - self.first_step?)
    }

    fn wall(&mut self) -> Duration {
        let now = Instant::now();
        let wall = now - self.last;
        self.last = now;
        wall
    }

    fn stamp(&self) -> Stamp {
        let info = self.server.runners[0].clock.info();
        Stamp { sim_time_ns: info.sim_time_ns, iteration: info.iterations }
    }

    /// Secondary: drops every performer not owned here, as the protocol's secondaries do (docs/distributed.md): each
    /// performer exists on exactly one secondary.
    fn drop_unowned(&mut self) {
        let runner = &mut self.server.runners[0];
        if self.performer_systems.is_empty() {
            // Every secondary loaded every performer with its systems: keep what they were,
            // to configure them afresh where a performer is handed over.
            let models = split::performer_models(&runner.ecm);
            let entities: HashSet<EntityId> = models.values().flat_map(|&m| runner.ecm.descendants(m)).collect();
            self.performer_systems = runner.plugins().into_iter().filter(|(e, _)| entities.contains(e)).collect();
        }
        let ecm = &mut runner.ecm;
        let mut split_entities = Vec::new();
        for (p, model) in split::performer_models(ecm) {
            split_entities.extend(ecm.descendants(model));
            if !self.owned.contains(&p) {
                ecm.request_remove(model, true);
            }
        }
        self.ownership.update(HashSet::new(), split_entities);
    }

    /// Secondary: recomputes the entities simulated here (owned performers, levels held)
    /// for the answers and the ownership systems see. Only needed when entities came or went.
    fn refresh_ownership(&mut self) {
        let runner = &self.server.runners[0];
        let ecm = &runner.ecm;
        let models = split::performer_models(ecm);
        let mut mine: HashSet<EntityId> = self
            .owned
            .iter()
            .filter_map(|p| models.get(p))
            .flat_map(|&m| ecm.descendants(m))
            .filter(|e| !ecm.is_marked_for_removal(*e))
            .collect();
        let levels = split::level_content(ecm, runner.world_entity());
        mine.extend(levels.iter().copied());
        let all: Vec<EntityId> =
            models.values().flat_map(|&m| ecm.descendants(m)).chain(levels.iter().copied()).collect();
        self.ownership.update(mine.clone(), all);
        self.mine = mine;
        self.mine_levels = levels;
        self.mine_stale = false;
    }

    /// Secondary: starts `systems` (attached to entities present here); `why` says how
    /// they came, for their origin.
    fn start_systems(&mut self, systems: &[(EntityId, plugin_api::msgs::Plugin)], why: &str) -> Result<(), String> {
        for (entity, plugin) in systems {
            let origin = format!("{why}: entity {entity}");
            if let Some(req) =
                crate::server::request_for(&plugin.filename, &plugin.name, plugin.innerxml.clone(), origin, *entity)
            {
                let s = &mut *self.server;
                s.runners[0]
                    .add_system(&mut s.loader, req)
                    .map_err(|e| format!("a system of entity {entity} ({why}): {e}"))?;
            }
        }
        Ok(())
    }

    /// Secondary: keeps advertised the topics another secondary's systems advertised (the
    /// primary passes them on), so their subscribers are connected here too when their
    /// publisher is handed over to this secondary later.
    fn keep_topics(&mut self, order: &StepOrder) -> Result<(), String> {
        for c in order.commands.iter().filter(|c| c.kind == TOPICS) {
            let list =
                TopicList::decode(c.payload.as_slice()).map_err(|e| format!("the primary's forwarded topics: {e}"))?;
            let node = self.server.runners[0].node();
            for t in list.topics {
                if self.topics_known.insert((t.name.clone(), t.msg_type.clone())) {
                    if let Err(e) = node.advertise(&t.name, &t.msg_type, crate::transport::TopicOptions::default()) {
                        log::warn!("distributed: keeping topic {} advertised: {e}", t.name);
                    }
                }
            }
        }
        Ok(())
    }

    /// Secondary: applies what the primary's systems changed (see [`split::primary_changes`]).
    /// Answers whether it applied anything.
    fn apply_forwarded(&mut self, order: &StepOrder) -> Result<bool, String> {
        let mut applied = false;
        for c in &order.commands {
            let performer = match c.kind.as_str() {
                SHARED_STATE => None,
                k if k.starts_with(PERFORMER_STATE) => match k[PERFORMER_STATE.len()..].trim().parse::<PerformerId>() {
                    Ok(p) => Some(p),
                    Err(_) => return Err(format!("a forwarded command of unknown kind {k:?}")),
                },
                _ => continue,
            };
            if performer.is_some_and(|p| !self.owned.contains(&p)) {
                continue;
            }
            let map =
                decode_state(&c.payload).map_err(|e| format!("the primary's forwarded state {:?}: {e}", c.kind))?;
            let runner = &mut self.server.runners[0];
            let world = runner.world_entity();
            let created: Vec<EntityId> =
                split::new_top_level(&map, world).into_iter().filter(|&e| !runner.ecm.has_entity(e)).collect();
            apply_state(&mut runner.ecm, &map).map_err(|e| format!("applying the primary's forwarded state: {e}"))?;
            if !created.is_empty() {
                let names: Vec<String> = created
                    .iter()
                    .map(|&e| runner.ecm.get::<plugin_api::components::Name>(e).map_or_else(|| e.to_string(), |n| n.0))
                    .collect();
                log::info!(
                    "distributed: step {}: created {} from the primary's forwarded state",
                    order.seq,
                    names.join(", ")
                );
            }
            applied = true;
        }
        Ok(applied)
    }
}

fn command(kind: impl Into<String>, payload: Vec<u8>) -> ForwardedCommand {
    ForwardedCommand { kind: kind.into(), payload }
}

impl Simulation for ServerSim<'_> {
    fn listing(&self) -> Vec<String> {
        let r = &self.server.runners[0];
        fingerprint::listing(&r.ecm, r.world_entity())
    }

    fn next_step(&mut self) -> StepInput {
        self.first_step.get_or_insert_with(Instant::now);
        let (runner, transport) = (&mut self.server.runners[0], &mut self.server.transports[0]);
        transport.before_step(runner);
        let mut commands = Vec::new();
        if !self.forward_topics.is_empty() {
            let list = TopicList { topics: std::mem::take(&mut self.forward_topics) };
            commands.push(command(TOPICS, list.encode_to_vec()));
        }
        let forward = std::mem::take(&mut self.forward);
        if runner.reset_pending() {
            // The primary resets in its step; the secondaries in theirs, to the same clock.
            commands.push(command(RESET, Vec::new()));
            return StepInput {
                iteration: 0,
                sim_time: Duration::ZERO,
                dt: Duration::ZERO,
                paused: runner.clock.paused,
                commands,
            };
        }
        let paused = runner.clock.paused;
        let info = runner.clock.info();
        if info.iterations < self.last_iteration {
            commands.push(command(REWIND, Vec::new()));
        }
        if !forward.shared.entities.is_empty() {
            commands.push(command(SHARED_STATE, forward.shared.encode_to_vec()));
        }
        for (p, map) in &forward.performers {
            commands.push(command(format!("{PERFORMER_STATE} {p}"), map.encode_to_vec()));
        }
        for (entity, plugin) in std::mem::take(&mut self.forward_systems) {
            let msg = plugin_api::msgs::EntityPluginV {
                entity: Some(plugin_api::msgs::Entity { id: entity.0, ..Default::default() }),
                plugins: vec![plugin],
                ..Default::default()
            };
            commands.push(command(SYSTEMS, msg.encode_to_vec()));
        }
        let dt = if paused { 0 } else { runner.clock.step_ns.max(0) as u64 };
        StepInput {
            iteration: info.iterations + u64::from(!paused),
            sim_time: Duration::from_nanos(info.sim_time_ns.max(0) as u64 + dt),
            dt: Duration::from_nanos(dt),
            paused,
            commands,
        }
    }

    fn membership(&self) -> Membership {
        crate::distributed::levels::membership(&self.server.runners[0].ecm)
    }

    fn topics_advertised(&mut self, topics: Vec<Topic>) {
        self.forward_topics.extend(topics);
    }

    fn new_topics(&mut self) -> Vec<Topic> {
        let node = self.server.runners[0].node();
        let count = node.advertisements();
        if !self.topics_kept || count == self.advertisements_seen {
            return Vec::new();
        }
        self.advertisements_seen = count;
        let known = &mut self.topics_known;
        node.own_topics()
            .into_iter()
            .filter(|t| known.insert(t.clone()))
            .map(|(name, msg_type)| Topic { name, msg_type })
            .collect()
    }

    fn handover(&self, moving: &[PerformerId]) -> SerializedStateMap {
        split::handover_state(&self.server.runners[0].ecm, moving, self.stamp())
    }

    fn primary_step(&mut self, answers: &[(PeerRef, SerializedStateMap)]) -> Result<(), String> {
        let wall = self.wall();
        let s = &mut *self.server;
        let (runner, transport) = (&mut s.runners[0], &mut s.transports[0]);
        // The secondaries' results first, so the primary's systems, topics and log see the
        // whole world at this step (docs/distributed.md).
        let mut taken = Vec::with_capacity(answers.len());
        let mut answered_by: std::collections::HashMap<u64, &PeerRef> = std::collections::HashMap::new();
        for (peer, answer) in answers {
            // Each entity is simulated in one place: two answers for one entity mean two
            // secondaries simulate it, and the world would be interpolated between them.
            for &id in answer.entities.keys() {
                if let Some(first) = answered_by.insert(id, peer) {
                    return Err(format!(
                        "entity {id} was answered by both {first} and {peer}: two secondaries simulate it"
                    ));
                }
            }
            // An entity the primary does not have (made by a secondary's system) is not
            // taken: its id was allocated on that secondary alone.
            let ecm = &runner.ecm;
            let answer = if answer.entities.keys().all(|&id| ecm.has_entity(EntityId(id))) {
                Cow::Borrowed(answer)
            } else {
                let mut kept = answer.clone();
                split::retain_entities(&mut kept, |id| ecm.has_entity(EntityId(id)));
                log::debug!(
                    "distributed: {} entities of {peer}'s answer are unknown here; skipped",
                    answer.entities.len() - kept.entities.len()
                );
                Cow::Owned(kept)
            };
            apply_state(&mut runner.ecm, &answer).map_err(|e| format!("applying the answer of {peer}: {e}"))?;
            taken.push(answer);
        }
        let mut applied = split::Applied::new();
        for answer in &taken {
            split::note_applied(&mut applied, answer);
        }
        let world = runner.world_entity();
        runner.step(&mut s.loader, wall).map_err(|e| e.to_string())?;
        transport.after_step(runner, wall);
        self.last_iteration = runner.clock.iterations();
        self.last_step_end = Some(Instant::now());
        let Some(changes) = runner.take_changes() else { return Ok(()) };
        // Models that appeared this step: a level's (loaded by the level manager, never
        // forwarded), or spawned through the primary.
        let new_top = split::new_top_level(&changes, world);
        if !new_top.is_empty() {
            self.level_entities.extend(split::level_content(&runner.ecm, world));
        }
        // A dynamic model spawned through the primary becomes a performer, assigned at the
        // next step like any other; its state goes down to its owner only (with the
        // hand-over), so no other secondary holds a copy of it.
        for model in split::unsplit_among(&runner.ecm, world, &new_top) {
            let p = split::make_performer(&mut runner.ecm, model)
                .map_err(|e| format!("making a spawned model a performer: {e}"))?;
            log::info!("distributed: spawned dynamic model {model} is performer {p}");
        }
        self.forward = split::primary_changes(&changes, &applied, &runner.ecm, world, &self.level_entities);
        // The systems attached to what was spawned, for the secondaries: in the same step
        // order as the spawned model, as standalone starts them at the next step.
        runner.activate_queued(&mut s.loader).map_err(|e| e.to_string())?;
        self.forward_systems = runner.take_withheld_systems();
        Ok(())
    }

    fn secondary_step(&mut self, order: &StepOrder) -> Result<SerializedStateMap, String> {
        self.first_step.get_or_insert_with(Instant::now);
        let wall = self.wall();
        if !order.take.is_empty() || !order.drop.is_empty() {
            log::info!("distributed: step {}: takes performers {:?}, drops {:?}", order.seq, order.take, order.drop);
        }
        let reset = order.commands.iter().any(|c| c.kind == RESET);
        // Systems attached to what the primary created: kept for a later hand-over, started
        // below where their entity is simulated (a taken performer's with the hand-over).
        let mut forwarded_systems = Vec::new();
        for c in order.commands.iter().filter(|c| c.kind == SYSTEMS) {
            let msg = plugin_api::msgs::EntityPluginV::decode(c.payload.as_slice())
                .map_err(|e| format!("the primary's forwarded systems: {e}"))?;
            let entity = EntityId(msg.entity.map_or(0, |e| e.id));
            forwarded_systems.extend(msg.plugins.into_iter().map(|p| (entity, p)));
        }
        self.performer_systems.extend(forwarded_systems.iter().cloned());
        self.keep_topics(order)?;
        if reset {
            self.server.runners[0].request_reset();
        } else if order.commands.iter().any(|c| c.kind == REWIND) {
            self.server.runners[0].clock.rewind();
        }
        // Affinities: the old owner removes at the end of this step, the new owner creates
        // the performer now, from the state the primary sent, before its systems run.
        let mut taken: HashSet<EntityId> = HashSet::new();
        if !order.drop.is_empty() || !order.take.is_empty() {
            let ecm = &mut self.server.runners[0].ecm;
            let models = split::performer_models(ecm);
            for p in &order.drop {
                self.owned.remove(p);
                if let Some(&m) = models.get(p) {
                    ecm.request_remove(m, true);
                }
            }
            for &p in &order.take {
                self.owned.insert(p);
                if let Some(model) = split::model_in_map(&order.handover_state, p) {
                    let state = split::subtree_of(&order.handover_state, model);
                    apply_state(ecm, &state).map_err(|e| format!("creating performer {p} handed over: {e}"))?;
                    taken.extend(state.entities.keys().map(|&k| EntityId(k)));
                }
            }
        }
        // The systems of a handed-over performer start afresh here (their state is not
        // carried: docs/distributed.md).
        let handed: Vec<_> = self.performer_systems.iter().filter(|(e, _)| taken.contains(e)).cloned().collect();
        self.start_systems(&handed, "hand-over")?;
        if !self.split_done {
            self.split_done = true;
            self.drop_unowned();
            self.mine_stale = true;
        }
        if !order.take.is_empty() || !order.drop.is_empty() || self.apply_forwarded(order)? {
            self.mine_stale = true;
        }
        let ecm = &self.server.runners[0].ecm;
        forwarded_systems.retain(|(e, _)| !taken.contains(e) && ecm.has_entity(*e));
        self.start_systems(&forwarded_systems, "created through the primary")?;
        // The levels of the groups assigned here, for the level manager of this step.
        let ecm = &mut self.server.runners[0].ecm;
        if self
            .levels_marked
            .as_ref()
            .is_none_or(|(levels, version)| *levels != order.levels || *version != ecm.structure_version())
        {
            crate::distributed::levels::mark_assigned_levels(ecm, &order.levels)
                .map_err(|e| format!("the step's levels: {}", e.message))?;
            self.levels_marked = Some((order.levels.clone(), ecm.structure_version()));
        }
        if self.mine_stale {
            self.refresh_ownership();
        }
        let s = &mut *self.server;
        let runner = &mut s.runners[0];
        runner.clock.paused = order.paused;
        if !order.paused {
            runner.clock.step_ns = order.dt.as_nanos() as i64;
        }
        runner.step(&mut s.loader, wall).map_err(|e| e.to_string())?;
        let info = runner.clock.info();
        if info.iterations != order.iteration || info.sim_time_ns as u128 != order.sim_time.as_nanos() {
            return Err(format!(
                "its clock left the primary's: after step {} it is at iteration {} and {} ns, the primary at {} and {} ns",
                order.seq,
                info.iterations,
                info.sim_time_ns,
                order.iteration,
                order.sim_time.as_nanos()
            ));
        }
        if !self.topics_kept {
            // Every secondary's systems advertised every performer's topics at the first
            // step; the performers not owned here are gone at its end. Keeping those topics
            // advertised keeps subscribers connected to this process, so when a performer is
            // handed over here its sensors' first messages reach them (no gap).
            // Topics advertised later are passed to every secondary (`new_topics`).
            self.topics_kept = true;
            let node = runner.node().clone();
            for (topic, ty) in node.own_topics() {
                match node.advertise(&topic, &ty, crate::transport::TopicOptions::default()) {
                    Ok(_) => {}
                    Err(e) => log::warn!("distributed: keeping topic {topic} advertised: {e}"),
                }
                self.topics_known.insert((topic, ty));
            }
            self.advertisements_seen = node.advertisements();
        }
        let mut answer = runner.take_changes().unwrap_or_default();
        if reset {
            // The reset restored every performer: drop those simulated elsewhere again. What
            // was created since the start is gone, and so are its systems.
            let ecm = &self.server.runners[0].ecm;
            self.performer_systems.retain(|(e, _)| ecm.has_entity(*e));
            self.drop_unowned();
        }
        // Entities came or went in the step (a level loaded or unloaded, a system's doing):
        // what is simulated here is computed again; the usual step changes only values.
        let came_or_went =
            reset || answer.entities.iter().any(|(&id, e)| e.remove || !self.mine.contains(&EntityId(id)));
        let before = if came_or_went {
            let before = (std::mem::take(&mut self.mine), std::mem::take(&mut self.mine_levels));
            self.refresh_ownership();
            Some(before)
        } else {
            None
        };
        // What this secondary simulates after the step, and the removals its systems made in
        // its performers (a level it stopped holding is the new holder's to answer).
        let removed: HashSet<u64> = if before.is_some() {
            answer.entities.iter().filter(|(_, e)| e.remove).map(|(&id, _)| id).collect()
        } else {
            HashSet::new()
        };
        let mine = &self.mine;
        split::retain_entities(&mut answer, |id| {
            let id = EntityId(id);
            mine.contains(&id)
                || before.as_ref().is_some_and(|(b, levels)| b.contains(&id) && !levels.contains(&id))
                    && removed.contains(&id.0)
        });
        self.last_step_end = Some(Instant::now());
        Ok(answer)
    }

    fn enabled(&mut self, index: usize, _count: usize) {
        // Secondary 0 also owns the shared world (see `SplitOwnership`).
        self.ownership.set_rest(index == 0);
    }

    fn should_stop(&self) -> bool {
        let r = &self.server.runners[0];
        r.stop_requested() || self.target.is_some_and(|n| r.clock.iterations() - self.start_iterations >= n)
    }

    fn period(&self) -> Duration {
        if self.server.runners[0].clock.paused {
            Duration::from_millis(1)
        } else {
            self.server.step_period().unwrap_or_default()
        }
    }

    fn finish(&mut self) -> Result<(), String> {
        self.server.runners[0].shutdown().map_err(|e| e.to_string())
    }
}

impl Server {
    /// Runs this server's part of a distributed run (see [`Server::network`]) until it
    /// ends: the primary until `iterations` unpaused iterations (0 or `None`: until
    /// stopped), a secondary until the primary stops it. The outcome says whether the run
    /// ended cleanly and, if not, names the lost peer and the cause.
    pub fn run_distributed(
        &mut self,
        iterations: Option<u64>,
        mut progress: impl FnMut(u64),
    ) -> Result<(RunSummary, Outcome), DriverError> {
        let Some(settings) = self.network().cloned() else {
            return Err(DriverError::Setup(String::from("this server has no --network-role")));
        };
        let cfg = DriverConfig::from_env(settings.clone());
        let stop = self.stop_flag();
        let started = Instant::now();
        let start_iterations = self.runners[0].clock.iterations();
        let runner = &mut self.runners[0];
        let unsplit = split::unsplit_dynamic_models(&runner.ecm, runner.world_entity());
        if settings.auto_performers {
            for &m in &unsplit {
                let p = split::make_performer(&mut runner.ecm, m)
                    .map_err(|e| DriverError::Setup(format!("making model {m} a performer: {e}")))?;
                log::info!("distributed: dynamic model {m} made performer {p} (auto performers)");
            }
            if !unsplit.is_empty() {
                // A reset returns to the world with these performers.
                runner.finish_load();
            }
        } else if !unsplit.is_empty() {
            let names: Vec<String> = unsplit
                .iter()
                .map(|&m| {
                    runner
                        .ecm
                        .get::<plugin_api::components::Name>(m)
                        .map_or_else(|| m.to_string(), |n| format!("{:?}", n.0))
                })
                .collect();
            return Err(DriverError::Setup(format!(
                "world {:?}: dynamic model{} {} {} not a performer and in no level: every secondary would simulate its own copy; \
                 make {} a performer (<performer> in the world's <plugin name=\"gz::sim\">) or static, \
                 or let every such model be one (--network-auto-performers, <auto_performers>true</auto_performers> in <network>)",
                runner.name(),
                if names.len() == 1 { "" } else { "s" },
                names.join(", "),
                if names.len() == 1 { "is" } else { "are" },
                if names.len() == 1 { "it" } else { "each" },
            )));
        }
        let ownership = runner
            .split_ownership()
            .ok_or_else(|| DriverError::Setup(String::from("the world was not loaded for a network role")))?;
        let mut sim = ServerSim::new(self, iterations.filter(|n| *n > 0), ownership);
        let stop_flag: &AtomicBool = &stop;
        let outcome = match cfg.settings.role {
            NetworkRole::PRIMARY => run_primary(&mut sim, &cfg, stop_flag, &mut |_seq: u64| {})?,
            // Settings hold primary or secondary only (settings::parse_role).
            _ => run_secondary(&mut sim, &cfg, stop_flag)?,
        };
        // As standalone, the steps' time: not the wait for the other processes, nor the
        // linger that delivers the last word.
        let wall = sim.stepping_time().unwrap_or_else(|| started.elapsed());
        let first = &self.runners[0];
        progress(first.clock.iterations() - start_iterations);
        let summary = RunSummary {
            iterations: first.clock.iterations() - start_iterations,
            sim_time: first.clock.info().sim_time(),
            wall_time: wall.as_secs_f64(),
        };
        Ok((summary, outcome))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distributed::settings::NetworkArgs;
    use crate::server::ServerOptions;

    fn secondary() -> Server {
        // nextest runs each test in a process of its own.
        std::env::set_var(crate::config::SERVER_CONFIG_ENV, "");
        let world = r#"<?xml version="1.0"?><sdf version="1.9"><world name="w"></world></sdf>"#;
        let network = NetworkArgs { role: Some("secondary".into()), ..Default::default() };
        let opts = ServerOptions {
            world_text: Some((world.into(), "<test>".into())),
            run: true,
            network,
            ..Default::default()
        };
        Server::load(&opts).unwrap_or_else(|e| panic!("{e}"))
    }

    fn order(kind: &str, payload: Vec<u8>) -> StepOrder {
        StepOrder {
            seq: 1,
            iteration: 1,
            sim_time: Duration::from_millis(1),
            dt: Duration::from_millis(1),
            paused: false,
            take: Vec::new(),
            drop: Vec::new(),
            handover_state: SerializedStateMap::default(),
            commands: vec![command(kind, payload)],
            levels: BTreeSet::new(),
            levels_gained: Vec::new(),
            levels_lost: Vec::new(),
        }
    }

    #[test]
    fn a_forwarded_command_that_does_not_decode_fails_the_step_naming_it() {
        // A truncated varint: no protobuf message decodes from it.
        let garbage = vec![0xff, 0xff];
        for (kind, named) in [
            (SHARED_STATE, "the primary's forwarded state \"troupe.state\""),
            (SYSTEMS, "the primary's forwarded systems"),
            (TOPICS, "the primary's forwarded topics"),
            ("troupe.performer_state x", "a forwarded command of unknown kind \"troupe.performer_state x\""),
        ] {
            let mut server = secondary();
            let ownership = server.runners[0].split_ownership().expect("loaded as a secondary");
            let mut sim = ServerSim::new(&mut server, None, ownership);
            let err = sim.secondary_step(&order(kind, garbage.clone())).expect_err(kind);
            assert!(err.contains(named), "{kind}: {err}");
        }
    }

    #[test]
    fn forwarded_topics_are_kept_advertised_once_and_not_reported_back() {
        let mut server = secondary();
        let ownership = server.runners[0].split_ownership().expect("loaded as a secondary");
        let mut sim = ServerSim::new(&mut server, None, ownership);
        sim.secondary_step(&order("none", Vec::new())).unwrap();
        assert!(sim.new_topics().is_empty(), "the first step's topics are not reported");
        let imu = Topic { name: "/imu_c".into(), msg_type: "gz.msgs.IMU".into() };
        let list = TopicList { topics: vec![imu.clone(), imu.clone()] }.encode_to_vec();
        let mut second = order(TOPICS, list);
        (second.seq, second.iteration, second.sim_time) = (2, 2, Duration::from_millis(2));
        sim.secondary_step(&second).unwrap();
        let node = sim.server.runners[0].node().clone();
        assert!(node.own_topics().contains(&(imu.name.clone(), imu.msg_type.clone())));
        assert_eq!(node.advertisements(), 1, "advertised once");
        assert!(sim.new_topics().is_empty(), "a kept topic is not reported back to the primary");
        // A topic a system of its own advertises is reported once.
        node.advertise("/pose_c", "gz.msgs.Pose", crate::transport::TopicOptions::default()).unwrap();
        assert_eq!(sim.new_topics(), [Topic { name: "/pose_c".into(), msg_type: "gz.msgs.Pose".into() }]);
        assert!(sim.new_topics().is_empty());
    }
}
