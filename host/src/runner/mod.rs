//! The simulation runner of one world: its ECM, clock, event bus and systems, stepped one
//! iteration at a time.

mod clock;
mod event_bus;
mod host_services;
mod systems;

pub use clock::Clock;
pub use event_bus::{Event, EventBus, Ownership, OwnsAll};
pub use host_services::{RayCasterSlot, SystemHost};
pub use systems::{Phase, PhaseOrder, Source, SystemFailure, SystemSlot};

use crate::config::{self, DefaultRoles, Placement};
use crate::ecm::{Ecm, EcmAccess, EcmSnapshot};
use crate::factory::{AttachedPlugin, QueueingSpawner};
use crate::plugin::{LoadError, PluginLoader};
use crate::state::log::{LogError, RecordOptions, Recorder};
use crate::state::playback::{PlaybackError, Player};
use crate::state::Stamp;
use crate::transport::Node;
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::RArc;
use plugin_api::components::Physics;
use plugin_api::events;
use plugin_api::ffi::{Hooks, HostObj, HostServices_TO, NetworkRole, SystemObj};
use plugin_api::{Component, EntityId, ResetOutcome};
use std::sync::Arc;
use std::time::Duration;

/// A system to add: which library and class, its XML, and what it attaches to.
#[derive(Clone, Debug)]
pub struct SystemRequest {
    /// The library to find on the plugin path.
    pub library: String,
    /// The class name (the `<plugin name>`).
    pub class: String,
    /// The `<plugin>` element.
    pub xml: String,
    /// Where it was requested (`file:line`).
    pub origin: String,
    /// The entity it attaches to.
    pub entity: EntityId,
}

/// Why a runner could not go on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A plugin library could not be loaded.
    #[error("{origin}: system {class:?}: {source}")]
    Load {
        /// Where the system was requested.
        origin: String,
        /// Its class.
        class: String,
        /// Why (boxed: it is the largest variant's payload, and every step returns this type).
        source: Box<LoadError>,
    },
    /// The library has no such system.
    #[error("{origin}: {message}")]
    UnknownSystem {
        /// Where the system was requested.
        origin: String,
        /// The library's answer.
        message: String,
    },
    /// A system failed or panicked.
    #[error(transparent)]
    System(#[from] SystemFailure),
    /// An event handler failed.
    #[error("a handler of event {event:?} in world {world:?} {} : {message}", if *.panicked { "panicked" } else { "failed" })]
    Event {
        /// The event.
        event: String,
        /// The world.
        world: String,
        /// Whether it panicked.
        panicked: bool,
        /// Its message.
        message: String,
    },
    /// The state log could not be written.
    #[error("recording the state log: {0}")]
    Log(#[from] LogError),
    /// The state log being played back could not be read or applied.
    #[error("playing back: {0}")]
    Playback(#[from] PlaybackError),
    /// The ECM refused an operation of the host itself.
    #[error("world {world:?}: {message}")]
    Ecm {
        /// The world.
        world: String,
        /// What went wrong.
        message: String,
    },
}

/// The runner of one world.
pub struct WorldRunner {
    name: String,
    world_entity: EntityId,
    /// The world's entities and components.
    pub ecm: Ecm,
    /// The world's clock.
    pub clock: Clock,
    systems: Vec<SystemSlot>,
    order: PhaseOrder,
    queued: Vec<AttachedPlugin>,
    /// Primary: attached systems that run on secondaries, not here (see
    /// [`WorldRunner::take_withheld_systems`]).
    withheld: Vec<(EntityId, plugin_api::msgs::Plugin)>,
    bus: Arc<EventBus>,
    role: NetworkRole,
    ownership: Arc<dyn Ownership>,
    split: Option<Arc<crate::distributed::split::SplitOwnership>>,
    snapshot: EcmSnapshot,
    reset_requested: bool,
    stop_requested: bool,
    /// The run's seed, handed to systems.
    pub seed: u64,
    next_system_id: u64,
    recorder: Option<Recorder>,
    player: Option<Player>,
    node: Node,
    systems_version: u64,
    world_sdf: Option<Arc<crate::sdf::WorldSdf>>,
    casters: Arc<RayCasterSlot>,
    /// Keep each step's changed state (a distributed secondary's answer).
    capture_changes: bool,
    last_changes: Option<plugin_api::msgs::SerializedStateMap>,
}

impl WorldRunner {
    /// A runner over an ECM already holding the world's entities.
    pub fn new(name: String, world_entity: EntityId, ecm: Ecm, clock: Clock) -> WorldRunner {
        WorldRunner {
            name,
            world_entity,
            ecm,
            clock,
            systems: Vec::new(),
            order: PhaseOrder::default(),
            queued: Vec::new(),
            withheld: Vec::new(),
            bus: Arc::new(EventBus::default()),
            role: NetworkRole::STANDALONE,
            ownership: Arc::new(OwnsAll),
            split: None,
            snapshot: EcmSnapshot::default(),
            reset_requested: false,
            capture_changes: false,
            last_changes: None,
            stop_requested: false,
            seed: 0,
            next_system_id: 0,
            recorder: None,
            player: None,
            node: Node::local(),
            systems_version: 0,
            world_sdf: None,
            casters: Arc::default(),
        }
    }

    /// The world's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The world entity.
    pub fn world_entity(&self) -> EntityId {
        self.world_entity
    }
    /// The world's event bus.
    pub fn events(&self) -> &Arc<EventBus> {
        &self.bus
    }
    /// Labels of the loaded systems, in load order.
    pub fn system_labels(&self) -> Vec<String> {
        self.systems.iter().map(|s| s.label.clone()).collect()
    }
    /// The transport node systems publish and serve through (a local one until
    /// [`WorldRunner::set_node`]).
    pub fn node(&self) -> &Node {
        &self.node
    }
    /// Uses `node` for the systems added from now on.
    pub fn set_node(&mut self, node: Node) {
        self.node = node;
    }
    /// Keeps the parsed world the ECM was created from, so systems can load its entities
    /// later with their file ids (the level manager: [`plugin_api::Ecm::load_world_entity`]).
    pub fn set_world_sdf(&mut self, world: Arc<crate::sdf::WorldSdf>) {
        self.world_sdf = Some(world);
    }
    /// Whether a system or event asked the run to stop.
    pub fn stop_requested(&self) -> bool {
        self.stop_requested
    }
    /// Asks for a reset at the next iteration.
    pub fn request_reset(&mut self) {
        self.reset_requested = true;
    }

    /// The world's ray-cast service (which system offers one).
    pub fn ray_casters(&self) -> &Arc<RayCasterSlot> {
        &self.casters
    }

    fn host_object(&self, owner: u64, label: &str) -> HostObj {
        let host = SystemHost::new(
            &self.name,
            self.bus.clone(),
            self.role,
            self.ownership.clone(),
            self.seed,
            owner,
            self.node.clone(),
        )
        .with_ray_casts(self.casters.clone(), label);
        HostServices_TO::from_ptr(RArc::new(host), TD_Opaque)
    }

    /// Loads, creates and configures a plugin system; it runs from the next step on.
    pub fn add_system(&mut self, loader: &mut PluginLoader, req: SystemRequest) -> Result<(), RunError> {
        let library = loader.load(&req.library).map_err(|source| RunError::Load {
            origin: req.origin.clone(),
            class: req.class.clone(),
            source: Box::new(source),
        })?;
        let obj = new_system(&library, &req.class, &req.origin)?;
        let class = if req.class.is_empty() {
            library.system_names().and_then(|n| n.into_iter().next()).unwrap_or_else(|| "<first system>".into())
        } else {
            req.class.clone()
        };
        let label = format!("{class} ({})", library.path.display());
        let source = Source::Library { library, class: req.class.clone() };
        self.install(SystemSlot {
            label,
            origin: req.origin,
            source,
            xml: req.xml,
            entity: req.entity,
            priority: 0,
            obj,
            id: 0,
            hooks: Hooks::ALL,
        })
    }

    /// Adds an in-process system (the test fixture's callbacks) attached to the world.
    pub fn add_in_process(&mut self, label: &str, obj: SystemObj) -> Result<(), RunError> {
        let slot = SystemSlot {
            label: label.to_string(),
            origin: "in-process".into(),
            source: Source::InProcess,
            xml: "<plugin/>".into(),
            entity: self.world_entity,
            priority: 0,
            obj,
            id: 0,
            hooks: Hooks::ALL,
        };
        self.install(slot)
    }

    fn install(&mut self, mut slot: SystemSlot) -> Result<(), RunError> {
        self.next_system_id += 1;
        slot.id = self.next_system_id;
        slot.priority = match config::priority_from_xml(&slot.xml) {
            Ok(Some(p)) => p,
            Ok(None) => slot.obj.default_priority().into_option().unwrap_or(0),
            Err(message) => return Err(RunError::UnknownSystem { origin: slot.origin.clone(), message }),
        };
        let host = self.host_object(slot.id, &slot.label);
        let mut spawner = QueueingSpawner { queue: &mut self.queued, world: self.world_sdf.as_deref() };
        let mut access = EcmAccess::new(&mut self.ecm, Some(&mut spawner));
        slot.configure(&mut access, host)?;
        log::info!("world {:?}: loaded system {} (priority {})", self.name, slot.label, slot.priority);
        self.systems.push(slot);
        self.order = PhaseOrder::of(&self.systems);
        self.systems_version += 1;
        Ok(())
    }

    /// Counts changes to the set of systems (loads, drops, resets), so observers can tell
    /// when [`WorldRunner::plugins`] would answer something new.
    pub fn systems_version(&self) -> u64 {
        self.systems_version
    }

    /// The loaded systems as gz `Plugin`s by entity: (entity, class name, library, the
    /// `<plugin>` element).
    pub fn plugins(&self) -> Vec<(EntityId, plugin_api::msgs::Plugin)> {
        self.systems
            .iter()
            .map(|s| {
                let (name, filename) = match &s.source {
                    Source::Library { library, class } => (class.clone(), library.name.clone()),
                    Source::InProcess => (s.label.clone(), String::new()),
                };
                (s.entity, plugin_api::msgs::Plugin { name, filename, innerxml: s.xml.clone(), ..Default::default() })
            })
            .collect()
    }

    /// Takes the post-load snapshot a reset returns to. Call once loading is complete.
    pub fn finish_load(&mut self) {
        self.snapshot = self.ecm.snapshot();
    }

    /// Starts recording a state log: its header and the current full state now, then each
    /// step. Call once loading is complete.
    pub fn start_recording(&mut self, options: &RecordOptions) -> Result<(), LogError> {
        self.recorder = Some(Recorder::start(options, &self.name, &self.ecm, self.stamp())?);
        Ok(())
    }

    /// Writes what the state log has buffered to its file (no-op when not recording).
    pub fn flush_recording(&mut self) -> Result<(), LogError> {
        match &mut self.recorder {
            Some(r) => r.flush(),
            None => Ok(()),
        }
    }

    /// Makes this runner follow a state log instead of simulating: each unpaused step
    /// applies the log's next step, and the run stops at the log's end. The ECM must hold
    /// the log's initial state ([`crate::state::playback::initial_ecm`]).
    pub fn start_playback(&mut self, player: Player) {
        self.player = Some(player);
    }

    /// The log being played back, if any.
    pub fn player(&self) -> Option<&Player> {
        self.player.as_ref()
    }

    /// Playback: puts the world in the state the log has at `iteration` (paused or not).
    pub fn seek(&mut self, iteration: u64) -> Result<(), RunError> {
        let Some(player) = &mut self.player else {
            return Err(RunError::Ecm {
                world: self.name.clone(),
                message: "seek: this runner is not playing a log back".into(),
            });
        };
        let stamp = player.seek(&mut self.ecm, iteration)?;
        self.clock.jump_to(stamp.sim_time_ns, stamp.iteration, Duration::ZERO);
        Ok(())
    }

    fn stamp(&self) -> Stamp {
        let info = self.clock.info();
        Stamp { sim_time_ns: info.sim_time_ns, iteration: info.iterations }
    }

    /// The role systems added from now on see (`HostServices::network_role`).
    pub fn set_network_role(&mut self, role: NetworkRole) {
        self.role = role;
    }

    /// Makes the world's systems see `ownership` (added from now on) and keeps it for the
    /// distributed driver, which updates it every step.
    pub fn set_split_ownership(&mut self, ownership: Arc<crate::distributed::split::SplitOwnership>) {
        self.ownership = ownership.clone();
        self.split = Some(ownership);
    }

    /// The ownership set by [`set_split_ownership`](Self::set_split_ownership).
    pub fn split_ownership(&self) -> Option<Arc<crate::distributed::split::SplitOwnership>> {
        self.split.clone()
    }

    /// Whether a reset was requested and the next [`step`](Self::step) performs it.
    pub fn reset_pending(&self) -> bool {
        self.reset_requested
    }

    /// Keeps each step's changed state for [`take_changes`](Self::take_changes) (a
    /// distributed secondary answers the primary with it).
    pub fn capture_changes(&mut self, on: bool) {
        self.capture_changes = on;
    }

    /// Primary: the systems attached to entities created since the last call that run on
    /// secondaries instead (the primary read the SDF that named them; the secondaries did
    /// not), as (entity, `Plugin` with the whole `<plugin>` element as its `innerxml`).
    pub fn take_withheld_systems(&mut self) -> Vec<(EntityId, plugin_api::msgs::Plugin)> {
        std::mem::take(&mut self.withheld)
    }

    /// The changed state of the last step, when capturing (see
    /// [`capture_changes`](Self::capture_changes)).
    pub fn take_changes(&mut self) -> Option<plugin_api::msgs::SerializedStateMap> {
        self.last_changes.take()
    }

    /// Runs one iteration that took `wall` of real time since the previous one.
    pub fn step(&mut self, loader: &mut PluginLoader, wall: Duration) -> Result<(), RunError> {
        self.activate_queued(loader)?;
        if self.reset_requested {
            self.reset_requested = false;
            self.reset()?;
            if let Some(player) = &mut self.player {
                player.seek(&mut self.ecm, 0)?;
            }
            // The restored state replaces everything, removals included: log it whole.
            let stamp = self.stamp();
            if let Some(recorder) = &mut self.recorder {
                recorder.record_full(&self.ecm, stamp)?;
            }
            return Ok(());
        }
        match &mut self.player {
            Some(player) if !self.clock.paused => match player.apply_next(&mut self.ecm)? {
                Some(stamp) => self.clock.jump_to(stamp.sim_time_ns, stamp.iteration, wall),
                None => {
                    log::info!(
                        "world {:?}: the log ends at iteration {}; playback stops",
                        self.name,
                        self.clock.iterations()
                    );
                    self.stop_requested = true;
                    return Ok(());
                }
            },
            _ => {
                if !self.clock.advance(wall) {
                    log::warn!(
                        "world {:?}: sim time {:.0} s cannot advance by another step of {} s: the clock ends at {:.0} s; the run stops",
                        self.name,
                        self.clock.info().sim_time(),
                        self.clock.step_ns as f64 * 1e-9,
                        i64::MAX as f64 * 1e-9
                    );
                    self.stop_requested = true;
                    return Ok(());
                }
            }
        }
        let info = self.clock.info();
        {
            let mut spawner = QueueingSpawner { queue: &mut self.queued, world: self.world_sdf.as_deref() };
            let mut access = EcmAccess::new(&mut self.ecm, Some(&mut spawner));
            for &i in &self.order.pre_update {
                self.systems[i].pre_update(&info, &mut access)?;
            }
            for &i in &self.order.update {
                self.systems[i].update(&info, &mut access)?;
            }
            for &i in &self.order.post_update {
                self.systems[i].post_update(&info, &access)?;
            }
        }
        self.dispatch_events()?;
        self.drop_systems_of_removed_entities();
        self.follow_physics_changes();
        if self.capture_changes {
            let stamp = Stamp { sim_time_ns: info.sim_time_ns, iteration: info.iterations };
            self.last_changes = Some(crate::state::changed_state(&self.ecm, stamp));
        }
        if let Some(recorder) = &mut self.recorder {
            recorder.record_step(
                &self.ecm,
                Stamp { sim_time_ns: info.sim_time_ns, iteration: info.iterations },
                info.paused,
            )?;
        }
        self.ecm.end_step();
        Ok(())
    }

    /// Starts the systems attached to entities created since (by a user command, the level
    /// manager, a system): at the start of each step, or earlier when called.
    pub(crate) fn activate_queued(&mut self, loader: &mut PluginLoader) -> Result<(), RunError> {
        for attached in std::mem::take(&mut self.queued) {
            let p = &attached.plugin;
            if let Placement::Skipped(why) = config::place(DefaultRoles::Attached, p.roles, self.role) {
                let (name, file, origin, entity) = (&p.name, &p.filename, &p.origin, attached.entity.0);
                log::info!("{name} ({file}, {origin}) of entity {entity} not run on this {}: {why}", self.role);
                // The primary hands what runs on secondaries to them: only it read the SDF of
                // a model spawned through it.
                let on_secondaries = config::place(DefaultRoles::Attached, p.roles, NetworkRole::SECONDARY);
                if self.role == NetworkRole::PRIMARY && on_secondaries == Placement::Runs {
                    let p = attached.plugin;
                    self.withheld.push((
                        attached.entity,
                        plugin_api::msgs::Plugin {
                            name: p.name,
                            filename: p.filename,
                            innerxml: p.xml,
                            ..Default::default()
                        },
                    ));
                }
                continue;
            }
            let plugin = attached.plugin;
            let origin = plugin.origin.to_string();
            match config::library_of_plugin(&plugin.filename, &plugin.name, &origin) {
                Some(library) => {
                    let req =
                        SystemRequest { library, class: plugin.name, xml: plugin.xml, origin, entity: attached.entity };
                    self.add_system(loader, req)?
                }
                None => {
                    log::warn!("{}: system {:?} is not available in Troupe, skipped", plugin.origin, plugin.filename)
                }
            }
        }
        Ok(())
    }

    /// Emits the stop event and delivers pending events without stepping (clean shutdown);
    /// flushes the state log.
    pub fn shutdown(&mut self) -> Result<(), RunError> {
        self.bus.emit(events::STOP, &[]);
        let delivered = self.dispatch_events();
        self.flush_recording()?;
        delivered
    }

    fn dispatch_events(&mut self) -> Result<(), RunError> {
        for event in self.bus.drain() {
            match event.name.as_str() {
                events::STOP => self.stop_requested = true,
                events::PAUSE => self.clock.paused = event.payload.first() != Some(&0),
                events::RESET => self.reset_requested = true,
                events::ADD_SYSTEM => self.queue_systems(&event.payload),
                _ => {}
            }
            self.bus.deliver(&event).map_err(|e| RunError::Event {
                event: event.name.clone(),
                world: self.name.clone(),
                panicked: e.kind == plugin_api::ffi::ErrorKind::PANICKED,
                message: e.message.into_string(),
            })?;
        }
        Ok(())
    }

    /// A world `Physics` component changed in this step (`/world/<w>/set_physics`): the
    /// clock takes its step size and real-time factor from the next step on.
    fn follow_physics_changes(&mut self) {
        if self.ecm.change_of(self.world_entity, Physics::ID) == plugin_api::Change::None {
            return;
        }
        let Some(physics) = self.ecm.get::<Physics>(self.world_entity) else { return };
        // The user-commands system checks these too; a system that writes the component
        // itself gets the same bounds here.
        let problem = Physics::step_size_problem(physics.max_step_size)
            .or_else(|| Physics::real_time_factor_problem(physics.real_time_factor));
        if let Some(why) = problem {
            log::warn!(
                "world {:?}: the physics component was refused ({why}); the clock keeps {} ns, {}",
                self.name,
                self.clock.step_ns,
                self.clock.real_time_factor
            );
            return;
        }
        let step_ns = (physics.max_step_size * 1e9).round() as i64;
        if step_ns != self.clock.step_ns || physics.real_time_factor != self.clock.real_time_factor {
            log::info!(
                "world {:?}: step size {} s, real-time factor {}",
                self.name,
                physics.max_step_size,
                physics.real_time_factor
            );
            self.clock.step_ns = step_ns;
            self.clock.real_time_factor = physics.real_time_factor;
        }
    }

    /// Queues the systems of an `events::ADD_SYSTEM` payload (a gz `EntityPlugin_V`); they
    /// are loaded at the start of the next step.
    fn queue_systems(&mut self, payload: &[u8]) {
        use plugin_api::prost::Message;
        let req = match plugin_api::msgs::EntityPluginV::decode(payload) {
            Ok(r) => r,
            Err(e) => {
                log::warn!(
                    "world {:?}: an add-system request that is not a gz.msgs.EntityPlugin_V was ignored: {e}",
                    self.name
                );
                return;
            }
        };
        let entity = EntityId(req.entity.as_ref().map_or(0, |e| e.id));
        if !self.ecm.has_entity(entity) {
            log::warn!("world {:?}: cannot add systems to entity {}: there is no such entity", self.name, entity.0);
            return;
        }
        for p in req.plugins {
            let xml = format!(
                "<plugin filename=\"{}\" name=\"{}\">{}</plugin>",
                xml_escape(&p.filename),
                xml_escape(&p.name),
                p.innerxml
            );
            let origin = crate::sdf::Origin { file: Arc::new("entity/system/add".into()), line: 0 };
            self.queued.push(AttachedPlugin {
                entity,
                plugin: crate::sdf::PluginSdf { name: p.name, filename: p.filename, xml, origin, roles: None },
            });
        }
    }

    fn drop_systems_of_removed_entities(&mut self) {
        let doomed = self.ecm.pending_removals();
        if doomed.is_empty() {
            return;
        }
        let before = self.systems.len();
        let bus = self.bus.clone();
        let casters = self.casters.clone();
        self.systems.retain(|s| {
            let keep = doomed.binary_search(&s.entity).is_err();
            if !keep {
                bus.unsubscribe_owner(s.id);
                casters.withdraw_owner(s.id);
                log::info!("system {} dropped: its entity {} was removed", s.label, s.entity);
            }
            keep
        });
        if self.systems.len() != before {
            self.order = PhaseOrder::of(&self.systems);
            self.systems_version += 1;
        }
    }

    /// Restores the post-load ECM, rewinds the clock, and resets every system: those that
    /// implement reset are kept, plugin systems that do not are made afresh and configured,
    /// in-process ones without reset are dropped (as gz-sim).
    fn reset(&mut self) -> Result<(), RunError> {
        self.ecm
            .restore(&self.snapshot)
            .map_err(|e| RunError::Ecm { world: self.name.clone(), message: e.message.into_string() })?;
        self.clock.rewind();
        let info = self.clock.info();
        let mut kept = Vec::with_capacity(self.systems.len());
        for mut slot in std::mem::take(&mut self.systems) {
            let outcome = {
                let mut spawner = QueueingSpawner { queue: &mut self.queued, world: self.world_sdf.as_deref() };
                let mut access = EcmAccess::new(&mut self.ecm, Some(&mut spawner));
                slot.reset(&info, &mut access)?
            };
            if outcome == ResetOutcome::DONE {
                kept.push(slot);
                continue;
            }
            match &slot.source {
                Source::Library { library, class } => {
                    self.bus.unsubscribe_owner(slot.id);
                    self.casters.withdraw_owner(slot.id);
                    slot.obj = new_system(library, class, &slot.origin)?;
                    let host = self.host_object(slot.id, &slot.label);
                    let mut spawner = QueueingSpawner { queue: &mut self.queued, world: self.world_sdf.as_deref() };
                    let mut access = EcmAccess::new(&mut self.ecm, Some(&mut spawner));
                    slot.configure(&mut access, host)?;
                    kept.push(slot);
                }
                Source::InProcess => {
                    self.bus.unsubscribe_owner(slot.id);
                    self.casters.withdraw_owner(slot.id);
                    log::warn!("in-process system {} has no reset; dropped", slot.label)
                }
            }
        }
        self.systems = kept;
        self.order = PhaseOrder::of(&self.systems);
        self.systems_version += 1;
        log::info!("world {:?} reset", self.name);
        Ok(())
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}

fn new_system(library: &crate::plugin::LoadedLibrary, class: &str, origin: &str) -> Result<SystemObj, RunError> {
    let made = (library.module.new_system())(abi_stable::std_types::RStr::from_str(class));
    made.into_result().map_err(|e| RunError::UnknownSystem {
        origin: origin.to_string(),
        message: format!("{}: {}", library.path.display(), e.message),
    })
}
