//! The types that cross the plugin boundary. Plugin authors use the safe wrappers in
//! [`crate::Ecm`], [`crate::Host`] and [`crate::System`] instead of these.
//!
//! Every trait here is an abi_stable `sabi_trait` whose vtable is a prefix type: methods are
//! only ever appended after the one marked `last_prefix_field`, each with a default body,
//! so an object from an older library answers the new method with its default.

#![allow(unsafe_code, reason = "the sabi_trait macro generates the unsafe vtable glue of this module")]

use crate::component::{Change, ComponentTypeId};
use crate::entity::EntityId;
use crate::math::Vec3;
use abi_stable::sabi_trait;
use abi_stable::sabi_types::RMut;
use abi_stable::std_types::{RArc, RBox, RErr, ROk, ROption, RResult, RSlice, RSliceMut, RStr, RString, RVec};
use abi_stable::StableAbi;

/// Which entities a query returns.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Which(pub u8);

impl Which {
    /// Every entity with the components, including those pending removal (as gz-sim).
    pub const ALL: Which = Which(0);
    /// Entities created since the end of the previous step.
    pub const NEW: Which = Which(1);
    /// Entities marked for removal, which disappear at the end of this step.
    pub const REMOVED: Which = Which(2);
}

/// An error from the ECM facade, with a message naming what was wrong.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct EcmError {
    /// Human-readable reason.
    pub message: RString,
}

impl std::fmt::Display for EcmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EcmError {}

impl EcmError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        EcmError { message: RString::from(message.into()) }
    }
}

/// The entity-component manager as the host lends it to a system for one call.
///
/// Components travel as their byte form ([`crate::Component::encode`]). A facade built on a
/// shared reference (post_update) can only be used for the `&self` methods.
#[sabi_trait]
pub trait EcmFacade {
    /// Whether the entity exists (including entities pending removal).
    fn has_entity(&self, entity: EntityId) -> bool;
    /// Number of entities.
    fn entity_count(&self) -> u64;
    /// The parent in the entity graph, or [`EntityId::NULL`].
    fn parent_of(&self, entity: EntityId) -> EntityId;
    /// Replaces `out` with the children of `entity`, ascending.
    fn children_of(&self, entity: EntityId, out: &mut RVec<EntityId>);
    /// Whether removal of the entity was requested (it disappears at the end of the step).
    fn is_marked_for_removal(&self, entity: EntityId) -> bool;
    /// Whether the entity has the component.
    fn has_component(&self, entity: EntityId, ty: ComponentTypeId) -> bool;
    /// Replaces `out` with the component's bytes; false if absent.
    fn get_raw(&self, entity: EntityId, ty: ComponentTypeId, out: &mut RVec<u8>) -> bool;
    /// Replaces `out` with the entities that have every component in `types`, ascending.
    fn query(&self, which: Which, types: RSlice<'_, ComponentTypeId>, out: &mut RVec<EntityId>);
    /// Like [`EcmFacade::query`], and also replaces `data` with the packed bytes of
    /// component `read` (a fixed-size type) of each entity, in the same order.
    fn query_read(
        &self,
        which: Which,
        types: RSlice<'_, ComponentTypeId>,
        read: ComponentTypeId,
        ids: &mut RVec<EntityId>,
        data: &mut RVec<u8>,
    ) -> RResult<(), EcmError>;
    /// Replaces `out` with the packed bytes of a fixed-size component of each entity.
    fn read_many(
        &self,
        ty: ComponentTypeId,
        entities: RSlice<'_, EntityId>,
        out: &mut RVec<u8>,
    ) -> RResult<(), EcmError>;
    /// How the component changed during this step.
    fn change_of(&self, entity: EntityId, ty: ComponentTypeId) -> Change;
    /// The registered name of a component type.
    fn component_name(&self, ty: ComponentTypeId) -> ROption<RString>;

    /// Creates an entity with a run-time id, child of `parent` (NULL for none).
    fn create_entity(&mut self, parent: EntityId) -> EntityId;
    /// Requests removal at the end of the step (with descendants if `recursive`).
    fn request_remove(&mut self, entity: EntityId, recursive: bool) -> bool;
    /// Sets (or with NULL clears) the parent of `child`.
    fn set_parent(&mut self, child: EntityId, parent: EntityId) -> RResult<(), EcmError>;
    /// Creates or replaces a component from its bytes; answers whether the value changed.
    fn set_raw(
        &mut self,
        entity: EntityId,
        ty: ComponentTypeId,
        data: RSlice<'_, u8>,
        change: Change,
    ) -> RResult<bool, EcmError>;
    /// Removes a component; false if it was absent.
    fn remove_component(&mut self, entity: EntityId, ty: ComponentTypeId) -> bool;
    /// Writes a fixed-size component of many entities from packed bytes in one crossing.
    fn write_many(
        &mut self,
        ty: ComponentTypeId,
        entities: RSlice<'_, EntityId>,
        data: RSlice<'_, u8>,
        change: Change,
    ) -> RResult<(), EcmError>;
    /// Flags a component as changed without writing it.
    fn mark_changed(&mut self, entity: EntityId, ty: ComponentTypeId, change: Change) -> bool;
    /// Registers a third-party component type by name (size 0 in `fixed_size` = marker).
    fn register_component(&mut self, name: RStr<'_>, fixed_size: ROption<u32>) -> RResult<ComponentTypeId, EcmError>;
    /// Creates the entities of an SDF snippet (one model or light) under `parent`, with
    /// run-time ids, loading the systems its `<plugin>`s name; answers the top entity.
    #[sabi(last_prefix_field)]
    fn create_from_sdf(&mut self, sdf: RStr<'_>, parent: EntityId) -> RResult<EntityId, EcmError>;

    /// Lends the values of fixed-size component `ty` of the entities that have every type
    /// in `types` (which must include `ty`), in place, for one call of `visitor`: see
    /// [`RecordsVisitor::visit_mut`]. Afterwards flags each value the visitor reported
    /// changed with `change`. (plugin-api 1.2. The default, for older hosts, copies the
    /// values out with `query_read` and the changed ones back with `write_many`.)
    fn lend_records_mut(
        &mut self,
        which: Which,
        types: RSlice<'_, ComponentTypeId>,
        ty: ComponentTypeId,
        change: Change,
        visitor: RecordsVisitor_TO<'_, RMut<'_, ()>>,
    ) -> RResult<(), EcmError> {
        let (mut ids, mut data) = (RVec::new(), RVec::new());
        if let RErr(e) = self.query_read(which, types, ty, &mut ids, &mut data) {
            return RErr(e);
        }
        let slots: RVec<u32> = (0..ids.len() as u32).collect();
        let mut changed = RVec::new();
        let mut visitor = visitor;
        visitor.visit_mut(ids.as_rslice(), slots.as_rslice(), data.as_mut_rslice(), &mut changed);
        if changed.is_empty() {
            return ROk(());
        }
        let size = data.len() / ids.len();
        let (mut changed_ids, mut changed_data) = (RVec::new(), RVec::new());
        for &i in changed.iter() {
            let i = i as usize;
            if i >= ids.len() {
                return RErr(EcmError::new(format!("lend_records_mut: changed index {i} of {}", ids.len())));
            }
            changed_ids.push(ids[i]);
            changed_data.extend_from_slice(&data[i * size..(i + 1) * size]);
        }
        self.write_many(ty, changed_ids.as_rslice(), changed_data.as_rslice(), change)
    }

    /// Lends the values of fixed-size component `ty` of the entities that have every type
    /// in `types` (which must include `ty`), read-only, for one call of `visitor`.
    /// (plugin-api 1.2. The default, for older hosts, copies them out with `query_read`.)
    fn lend_records(
        &self,
        which: Which,
        types: RSlice<'_, ComponentTypeId>,
        ty: ComponentTypeId,
        visitor: RecordsReader_TO<'_, RMut<'_, ()>>,
    ) -> RResult<(), EcmError> {
        let (mut ids, mut data) = (RVec::new(), RVec::new());
        if let RErr(e) = self.query_read(which, types, ty, &mut ids, &mut data) {
            return RErr(e);
        }
        let slots: RVec<u32> = (0..ids.len() as u32).collect();
        let mut visitor = visitor;
        visitor.visit(ids.as_rslice(), slots.as_rslice(), data.as_rslice());
        ROk(())
    }
    /// The world's state as an encoded gz `SerializedStateMap` (header left empty): every
    /// entity and component when `changed_only` is false, else what changed in this step
    /// (entities created or removed, components changed or removed). (plugin-api 1.3. The
    /// default, for older hosts, answers an error.)
    fn serialized_state(&self, changed_only: bool, out: &mut RVec<u8>) -> RResult<(), EcmError> {
        let _ = (changed_only, out);
        RErr(EcmError::new("this host cannot serialize the state (it predates plugin-api 1.3)"))
    }

    // ---- Levels (plugin-api 1.4). Appended after the prefix, with a default for older hosts.

    /// Creates the world file's top-level model, light or joint named `name` under the
    /// world entity, with the ids the world file gives it (so a reload gives the same ids),
    /// loading the systems its `<plugin>`s name from the next step; answers its top entity.
    /// An error if the world file has no such element or its entity exists already. (The
    /// level manager loads levels with it. The default, for older hosts, answers an error.)
    fn load_world_entity(&mut self, name: RStr<'_>) -> RResult<EntityId, EcmError> {
        let _ = name;
        RErr(EcmError::new("this host cannot load world-file entities (it predates plugin-api 1.4)"))
    }

    /// A number that changes whenever an entity is created, marked for removal or removed,
    /// or a component is added to or removed from an entity, and only then: while it is the
    /// same, `Which::ALL` queries answer the same entities, and if it is the same as in an
    /// earlier step, `Which::NEW` and `Which::REMOVED` queries answer nothing. (plugin-api
    /// 1.7. The default, for older hosts, answers 0: unknown, keep nothing.)
    fn structure_version(&self) -> u64 {
        0
    }
}

/// What a system does with component values the host lends it in place
/// ([`EcmFacade::lend_records_mut`]). The safe way to use it is [`crate::Ecm::for_each_mut`].
#[sabi_trait]
pub trait RecordsVisitor {
    /// Called once. Entity `ids[i]` (ascending) has its value, in byte form, at
    /// `records[slots[i] * size..][..size]`, `size` being the component's fixed size. Write
    /// new values in place and push `i` into `changed` for each value changed. Must not
    /// unwind: catch panics and re-raise them after the host's call returned.
    #[sabi(last_prefix_field)]
    fn visit_mut(
        &mut self,
        ids: RSlice<'_, EntityId>,
        slots: RSlice<'_, u32>,
        records: RSliceMut<'_, u8>,
        changed: &mut RVec<u32>,
    );
}

/// What a system does with component values the host lends it read-only
/// ([`EcmFacade::lend_records`]). The safe way to use it is [`crate::EcmRead::for_each`].
#[sabi_trait]
pub trait RecordsReader {
    /// Called once; `ids`, `slots` and `records` as in [`RecordsVisitor::visit_mut`]. Must
    /// not unwind.
    #[sabi(last_prefix_field)]
    fn visit(&mut self, ids: RSlice<'_, EntityId>, slots: RSlice<'_, u32>, records: RSlice<'_, u8>);
}

/// The ECM lent mutably (configure, reset, pre_update, update).
pub type EcmMutObj<'a> = EcmFacade_TO<'a, abi_stable::sabi_types::RMut<'a, ()>>;
/// The ECM lent read-only (post_update).
pub type EcmRefObj<'a> = EcmFacade_TO<'a, abi_stable::sabi_types::RRef<'a, ()>>;

/// The role of this process in a distributed simulation.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkRole(pub u8);

impl NetworkRole {
    /// Not distributed: this process simulates the whole world.
    pub const STANDALONE: NetworkRole = NetworkRole(0);
    /// Keeps the secondaries in lockstep; runs no physics.
    pub const PRIMARY: NetworkRole = NetworkRole(2);
    /// Simulates the levels the primary assigns to it.
    pub const SECONDARY: NetworkRole = NetworkRole(3);

    /// The lower-case name (`"standalone"` for a value this version does not know).
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkRole::PRIMARY => "primary",
            NetworkRole::SECONDARY => "secondary",
            _ => "standalone",
        }
    }
}

impl std::fmt::Display for NetworkRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A callback for events (see [`crate::events`]).
#[sabi_trait]
pub trait EventHandler: Send {
    /// Called on the simulation thread at the step boundary after the event was emitted.
    #[sabi(last_prefix_field)]
    fn on_event(&mut self, name: RStr<'_>, payload: RSlice<'_, u8>) -> RResult<(), SystemError>;
}

/// Services the host offers a system for its whole life.
#[sabi_trait]
pub trait HostServices: Send + Sync {
    /// The world this system runs in.
    fn world_name(&self) -> RString;
    /// This process's role.
    fn network_role(&self) -> NetworkRole;
    /// Whether this process simulates the entity (always true standalone).
    fn owns_entity(&self, entity: EntityId) -> bool;
    /// The run's random seed (`--seed`, 0 if none was given): seed every random
    /// generator from it so runs repeat.
    fn seed(&self) -> u64;
    /// Emits an event; subscribers run at the end of the current step.
    fn emit_event(&self, name: RStr<'_>, payload: RSlice<'_, u8>);
    /// Subscribes a handler to an event name; answers a subscription id.
    fn subscribe(&self, name: RStr<'_>, handler: EventHandler_TO<'static, RBox<()>>) -> u64;
    /// Removes a subscription.
    #[sabi(last_prefix_field)]
    fn unsubscribe(&self, subscription: u64) -> bool;

    // ---- Transport (plugin-api 1.3). Appended after the prefix: a 1.2 host lacks them,
    // and the loader refuses a plugin newer than its host.

    /// Advertises a topic of message type `msg_type` (`gz.msgs.Pose_V`); answers a
    /// publisher id.
    fn advertise(&self, topic: RStr<'_>, msg_type: RStr<'_>, options: TopicOptions) -> RResult<u64, SystemError>;
    /// Publishes an encoded message; never blocks. Answers false when the publisher's
    /// rate limit skipped it.
    fn publish(&self, publisher: u64, payload: RSlice<'_, u8>) -> RResult<bool, SystemError>;
    /// Whether anyone listens to the publisher's topic.
    fn has_subscribers(&self, publisher: u64) -> bool;
    /// Subscribes to a topic; messages queue until [`HostServices::take_messages`].
    fn subscribe_topic(&self, topic: RStr<'_>, msg_type: RStr<'_>) -> RResult<u64, SystemError>;
    /// Takes the messages received on a subscription since the last call, oldest first.
    fn take_messages(&self, subscription: u64) -> RVec<RVec<u8>>;
    /// Offers a service; requests queue until [`HostServices::take_requests`].
    fn offer_service(&self, name: RStr<'_>, req_type: RStr<'_>, rep_type: RStr<'_>) -> RResult<u64, SystemError>;
    /// Takes a service's pending requests.
    fn take_requests(&self, service: u64) -> RVec<ServiceRequest>;
    /// Answers a request (true or false, with a response); false if it was already
    /// answered.
    fn reply(&self, request: u64, ok: bool, payload: RSlice<'_, u8>) -> bool;
    /// Calls a service of this process or of the partition, waiting up to `timeout_ms`.
    /// It blocks the caller: call it outside the simulation step where possible.
    fn call_service(
        &self,
        name: RStr<'_>,
        payload: RSlice<'_, u8>,
        timeout_ms: u64,
    ) -> RResult<ServiceReply, SystemError>;

    // ---- Ray casts (plugin-api 1.5). Appended after everything else, each with a default
    // for hosts that predate them.

    /// Offers `caster` as this world's ray-cast service (a physics backend casting against
    /// its own collision shapes). A world has at most one: an error names the system that
    /// holds it already. Withdrawn when the offering system is dropped or reset. (The
    /// default, for older hosts, answers an error.)
    fn offer_ray_caster(&self, caster: RayCaster_TO<'static, RBox<()>>) -> RResult<(), SystemError> {
        drop(caster);
        RErr(SystemError {
            kind: ErrorKind::FAILED,
            message: RString::from("this host has no ray-cast service (it predates plugin-api 1.5)"),
        })
    }
    /// Casts `rays` through the world's ray caster, as [`RayCaster::cast_rays`] does; false
    /// (and `out` untouched) when the world has none, it is busy (called from within the
    /// caster's own system while it steps) or `out.len() != rays.len()`. (The default, for
    /// older hosts, answers false.)
    fn cast_rays(&self, rays: RSlice<'_, Ray>, max_range: f64, exclude: EntityId, out: RSliceMut<'_, f64>) -> bool {
        let _ = (rays, max_range, exclude, out);
        false
    }

    /// Whether a request waits on one of this system's services or a message on one of its
    /// subscriptions: one call, where taking from each would be one per service. (plugin-api
    /// 1.7. The default, for older hosts, answers true: take from each.)
    fn has_pending(&self) -> bool {
        true
    }
}

/// A ray in world coordinates (plugin-api 1.5): from `origin` along the unit vector
/// `direction`.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, Default, PartialEq)]
pub struct Ray {
    /// Where the ray starts, world frame, m.
    pub origin: Vec3,
    /// Its direction, a unit vector in the world frame.
    pub direction: Vec3,
}

/// A world's ray-cast service, as a physics backend offers it
/// ([`HostServices::offer_ray_caster`]; the safe way is [`crate::Host::offer_ray_caster`]).
/// It is called on the simulation thread, by the systems that run after the backend.
#[sabi_trait]
pub trait RayCaster: Send {
    /// Writes to `out[i]` the distance along `rays[i]` to the first surface it meets within
    /// `max_range` (+infinity for none), ignoring the shapes of link `exclude`
    /// ([`EntityId::NULL`]: none). A ray starting inside a shape meets that shape where it
    /// leaves it. `out` is as long as `rays`. Answers false if it cannot cast now (`out` is
    /// then ignored). Must not unwind.
    #[sabi(last_prefix_field)]
    fn cast_rays(&mut self, rays: RSlice<'_, Ray>, max_range: f64, exclude: EntityId, out: RSliceMut<'_, f64>) -> bool;
}

/// How a topic is published.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, Default, PartialEq)]
pub struct TopicOptions {
    /// One-time messages: every message carries a sequence number and subscribers are
    /// told of gaps (they re-sync through a service). Periodic topics may drop silently.
    pub reliable: bool,
    /// At most this many messages a second; the rest are skipped (0: no limit).
    pub max_rate_hz: f64,
}

/// A request waiting for a system's answer.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ServiceRequest {
    /// The id to answer with.
    pub id: u64,
    /// The encoded request.
    pub payload: RVec<u8>,
}

/// A service's answer to a call.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ServiceReply {
    /// Whether the service answered true.
    pub ok: bool,
    /// The encoded response.
    pub payload: RVec<u8>,
}

/// Host services as a system keeps them.
pub type HostObj = HostServices_TO<'static, RArc<()>>;

/// Time as a system sees it in one update (gz-sim's `UpdateInfo`).
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpdateInfo {
    /// Simulation time reached after this step, ns (does not advance while paused).
    pub sim_time_ns: i64,
    /// Wall time spent running (unpaused), ns.
    pub real_time_ns: i64,
    /// Simulation time handled by this step, ns: the step size, 0 while paused.
    pub dt_ns: i64,
    /// Steps simulated so far (not counting paused iterations).
    pub iterations: u64,
    /// Whether the simulation is paused.
    pub paused: bool,
}

impl UpdateInfo {
    /// Simulation time in seconds.
    pub fn sim_time(&self) -> f64 {
        self.sim_time_ns as f64 * 1e-9
    }
    /// Step size of this update in seconds (0 while paused).
    pub fn dt(&self) -> f64 {
        self.dt_ns as f64 * 1e-9
    }
}

/// What kind of failure a system reported.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorKind(pub u8);

impl ErrorKind {
    /// The system returned an error.
    pub const FAILED: ErrorKind = ErrorKind(0);
    /// The system panicked; the panic was caught at the boundary.
    pub const PANICKED: ErrorKind = ErrorKind(1);
    /// The library has no system of the requested name.
    pub const UNKNOWN_SYSTEM: ErrorKind = ErrorKind(2);
}

/// A failure reported by a system across the boundary.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct SystemError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The system's message, or the panic message.
    pub message: RString,
}

/// What a system asks the host to do on reset.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResetOutcome(pub u8);

impl ResetOutcome {
    /// The system reset itself and is kept.
    pub const DONE: ResetOutcome = ResetOutcome(0);
    /// The system has no reset: the host drops it and configures a fresh instance.
    pub const RECONFIGURE: ResetOutcome = ResetOutcome(1);
}

/// The update hooks a system implements, stated once when it is loaded: the host calls only
/// those, as gz-sim calls only the `ISystem*` interfaces a system implements. A bit set.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hooks(pub u8);

impl Hooks {
    /// No update hook.
    pub const NONE: Hooks = Hooks(0);
    /// `pre_update`.
    pub const PRE_UPDATE: Hooks = Hooks(1);
    /// `update`.
    pub const UPDATE: Hooks = Hooks(2);
    /// `post_update`.
    pub const POST_UPDATE: Hooks = Hooks(4);
    /// All three: the default, and what a plugin built before plugin-api 1.2 answers.
    pub const ALL: Hooks = Hooks(7);

    /// Whether every hook of `other` is in `self`.
    #[inline]
    pub const fn contains(self, other: Hooks) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Hooks {
    type Output = Hooks;
    fn bitor(self, other: Hooks) -> Hooks {
        Hooks(self.0 | other.0)
    }
}

/// A system as the host drives it. Produced by [`crate::SystemAdapter`]; do not implement
/// it by hand.
#[sabi_trait]
pub trait FfiSystem: Send {
    /// The priority the system asks for when the XML gives none.
    fn default_priority(&self) -> ROption<i32>;
    /// Called once, before the first step in which the system runs.
    fn configure<'a>(
        &mut self,
        entity: EntityId,
        xml: RStr<'a>,
        ecm: EcmMutObj<'a>,
        host: HostObj,
    ) -> RResult<(), SystemError>;
    /// Called when the world is reset, after the ECM was restored.
    fn reset(&mut self, info: &UpdateInfo, ecm: EcmMutObj<'_>) -> RResult<ResetOutcome, SystemError>;
    /// Read/write, before physics.
    fn pre_update(&mut self, info: &UpdateInfo, ecm: EcmMutObj<'_>) -> RResult<(), SystemError>;
    /// Read/write; physics lives here.
    fn update(&mut self, info: &UpdateInfo, ecm: EcmMutObj<'_>) -> RResult<(), SystemError>;
    /// Read-only, after the step.
    #[sabi(last_prefix_field)]
    fn post_update(&mut self, info: &UpdateInfo, ecm: EcmRefObj<'_>) -> RResult<(), SystemError>;

    /// The update hooks the system implements (plugin-api 1.2; older plugins: all).
    fn hooks(&self) -> Hooks {
        Hooks::ALL
    }
    /// `pre_update`, answering whether it succeeded and writing a failure to `failure`.
    ///
    /// The `run_*` methods are the host's per-step path (plugin-api 1.2): a `bool` comes
    /// back in a register, while the 48-byte `RResult` of `pre_update` is written to memory
    /// in pieces and read back whole, which stalls the CPU on every call. Their defaults, for
    /// older plugins, call the hooks above.
    fn run_pre_update(&mut self, info: &UpdateInfo, ecm: EcmMutObj<'_>, failure: &mut ROption<SystemError>) -> bool {
        match self.pre_update(info, ecm) {
            ROk(()) => true,
            RErr(e) => {
                *failure = ROption::RSome(e);
                false
            }
        }
    }
    /// `update`, reporting like [`FfiSystem::run_pre_update`].
    fn run_update(&mut self, info: &UpdateInfo, ecm: EcmMutObj<'_>, failure: &mut ROption<SystemError>) -> bool {
        match self.update(info, ecm) {
            ROk(()) => true,
            RErr(e) => {
                *failure = ROption::RSome(e);
                false
            }
        }
    }
    /// `post_update`, reporting like [`FfiSystem::run_pre_update`].
    fn run_post_update(&mut self, info: &UpdateInfo, ecm: EcmRefObj<'_>, failure: &mut ROption<SystemError>) -> bool {
        match self.post_update(info, ecm) {
            ROk(()) => true,
            RErr(e) => {
                *failure = ROption::RSome(e);
                false
            }
        }
    }
}

/// A system object as it crosses the boundary.
pub type SystemObj = FfiSystem_TO<'static, RBox<()>>;
