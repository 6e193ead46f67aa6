//! Lossless state: an ECM to gz's `SerializedStateMap` and back.
//!
//! A state map holds, per entity id, the entity's components keyed by component type id,
//! each as the component's byte form ([`plugin_api::Component::encode`]), so any ECM that
//! knows the same component types rebuilds the same entities bit for bit. The semantics are
//! gz-sim's (`EntityComponentManager::State`, `ChangedState`, `SetState`):
//!
//! * [`full_state`]: every entity with every component.
//! * [`changed_state`]: components flagged one-time or periodic this step; entities created
//!   this step with all their components; entities pending removal as `remove = true`;
//!   components removed this step as `remove = true`.
//! * [`apply_state`]: pass 1 requests the removals and creates missing entities **with the
//!   given id** (and, unlike gz-sim, moves the run-time id counter above them); pass 2 sets,
//!   or removes, the components. Unknown component types are skipped with one warning per
//!   type. Values are flagged one-time if the map says `has_one_time_component_changes`,
//!   else periodic.
//!
//! The header's stamp is the sim time; its data holds the iteration (`iteration`).
//! [`fingerprint`] hashes a full state, so two processes that loaded the same world agree
//! on one 64-bit number (the log header carries it; the distributed handshake can too).
//! [`log`] records states to a file and reads them back; [`diff`] compares two logs;
//! [`describe`] puts component values into words.

pub mod describe;
pub mod diff;
pub mod log;
pub mod playback;

use crate::ecm::{Ecm, EntityState};
use plugin_api::msgs::{header, Header, SerializedComponent, SerializedEntityMap, SerializedStateMap, Time};
use plugin_api::prost::Message;
use plugin_api::{Change, ComponentTypeId, EntityId};
use std::collections::{BTreeMap, BTreeSet};

/// The header data key under which a state carries its iteration.
pub const ITERATION_KEY: &str = "iteration";

/// When a state was taken: the sim time after the step and the iteration count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamp {
    /// Simulation time, ns.
    pub sim_time_ns: i64,
    /// Iterations simulated so far.
    pub iteration: u64,
}

impl Stamp {
    /// The stamp of a state map's header (zero when absent or unreadable).
    pub fn of(map: &SerializedStateMap) -> Stamp {
        let Some(header) = &map.header else { return Stamp::default() };
        let sim_time_ns =
            header.stamp.map_or(0, |t| t.sec.saturating_mul(1_000_000_000).saturating_add(i64::from(t.nsec)));
        let iteration = header
            .data
            .iter()
            .find(|d| d.key == ITERATION_KEY)
            .and_then(|d| d.value.first())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        Stamp { sim_time_ns, iteration }
    }

    fn header(self) -> Header {
        Header {
            stamp: Some(Time {
                sec: self.sim_time_ns.div_euclid(1_000_000_000),
                nsec: self.sim_time_ns.rem_euclid(1_000_000_000) as i32,
            }),
            data: vec![header::Map { key: ITERATION_KEY.into(), value: vec![self.iteration.to_string()] }],
        }
    }
}

/// Why a state could not be read or applied. Every variant names what and where.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum StateError {
    /// The bytes are not a `SerializedStateMap`.
    #[error("not a gz.msgs.SerializedStateMap: {0}")]
    Decode(String),
    /// An entity entry is inconsistent or cannot be applied.
    #[error("entity {entity}: {reason}")]
    Entity {
        /// The entity id (the map key).
        entity: u64,
        /// What is wrong.
        reason: String,
    },
    /// A component entry is inconsistent or its bytes are not a value of its type.
    #[error("entity {entity}, component {component}: {reason}")]
    Component {
        /// The entity id.
        entity: u64,
        /// The component's registered name, or its type id when unknown.
        component: String,
        /// What is wrong.
        reason: String,
    },
}

fn entity_entry(state: EntityState) -> SerializedEntityMap {
    SerializedEntityMap {
        id: state.id.0,
        components: state
            .components
            .into_iter()
            .map(|(ty, bytes)| (ty.0, SerializedComponent { r#type: ty.0, component: bytes, remove: false }))
            .collect(),
        remove: false,
    }
}

/// Every entity with every component; entities pending removal are marked `remove = true`
/// (as in gz-sim). `has_one_time_component_changes` is true: applying a full state must
/// deliver every value.
pub fn full_state(ecm: &Ecm, stamp: Stamp) -> SerializedStateMap {
    let mut entities: BTreeMap<u64, SerializedEntityMap> =
        ecm.snapshot().entities.into_iter().map(|e| (e.id.0, entity_entry(e))).collect();
    for id in ecm.pending_removals() {
        if let Some(entry) = entities.get_mut(&id.0) {
            entry.remove = true;
        }
    }
    SerializedStateMap { header: Some(stamp.header()), entities, has_one_time_component_changes: true }
}

/// The whole state of the entities `ids` (those that exist), every component: what a
/// distributed hand-over sends down for a performer's model and its descendants.
pub fn entities_state(ecm: &Ecm, ids: impl IntoIterator<Item = EntityId>, stamp: Stamp) -> SerializedStateMap {
    let entities = ids.into_iter().filter_map(|id| ecm.entity_state(id)).map(|e| (e.id.0, entity_entry(e))).collect();
    SerializedStateMap { header: Some(stamp.header()), entities, has_one_time_component_changes: true }
}

/// What changed this step (see the module doc). Call before the step ends
/// ([`Ecm::end_step`] clears the flags, removals and removed components).
pub fn changed_state(ecm: &Ecm, stamp: Stamp) -> SerializedStateMap {
    let mut entities: BTreeMap<u64, SerializedEntityMap> = BTreeMap::new();
    let mut has_one_time = false;
    let removing: BTreeSet<EntityId> = ecm.pending_removals().into_iter().collect();
    for &id in &removing {
        entities.insert(id.0, SerializedEntityMap { id: id.0, components: BTreeMap::new(), remove: true });
    }
    for id in ecm.query(plugin_api::Which::NEW, &[]) {
        if removing.contains(&id) {
            continue;
        }
        if let Some(state) = ecm.entity_state(id) {
            has_one_time = true;
            entities.insert(id.0, entity_entry(state));
        }
    }
    let mut bytes = Vec::new();
    for (id, ty, change) in ecm.changed_components() {
        if removing.contains(&id) {
            continue;
        }
        let entry = entities.entry(id.0).or_insert_with(|| SerializedEntityMap { id: id.0, ..Default::default() });
        if entry.components.contains_key(&ty.0) {
            continue;
        }
        bytes.clear();
        if ecm.get_raw(id, ty, &mut bytes) {
            has_one_time |= change == Change::OneTime;
            entry
                .components
                .insert(ty.0, SerializedComponent { r#type: ty.0, component: bytes.clone(), remove: false });
        }
    }
    for &(id, ty) in ecm.removed_components() {
        if removing.contains(&id) || ecm.has_component(id, ty) || !ecm.has_entity(id) {
            continue;
        }
        let entry = entities.entry(id.0).or_insert_with(|| SerializedEntityMap { id: id.0, ..Default::default() });
        entry.components.insert(ty.0, SerializedComponent { r#type: ty.0, component: Vec::new(), remove: true });
        has_one_time = true;
    }
    SerializedStateMap { header: Some(stamp.header()), entities, has_one_time_component_changes: has_one_time }
}

/// Reads a `SerializedStateMap` from its protobuf bytes and checks that its keys agree with
/// the ids inside (entity key = entity id, component key = component type).
pub fn decode_state(bytes: &[u8]) -> Result<SerializedStateMap, StateError> {
    let map = SerializedStateMap::decode(bytes).map_err(|e| StateError::Decode(e.to_string()))?;
    check_keys(&map)?;
    Ok(map)
}

fn check_keys(map: &SerializedStateMap) -> Result<(), StateError> {
    for (&key, entity) in &map.entities {
        if entity.id != key {
            return Err(StateError::Entity { entity: key, reason: format!("keyed {key} but its id is {}", entity.id) });
        }
        if key == 0 {
            return Err(StateError::Entity { entity: 0, reason: "0 is the null entity".into() });
        }
        for (&ty, component) in &entity.components {
            if component.r#type != ty {
                return Err(StateError::Component {
                    entity: key,
                    component: ComponentTypeId(ty).to_string(),
                    reason: format!(
                        "keyed {} but its type is {}",
                        ComponentTypeId(ty),
                        ComponentTypeId(component.r#type)
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Applies state maps to an ECM, warning once per unknown component type over its life.
#[derive(Debug, Default)]
pub struct StateApplier {
    warned: BTreeSet<u64>,
}

/// What [`StateApplier::apply`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Entities created with the map's ids.
    pub created: usize,
    /// Entities whose removal was requested.
    pub removed: usize,
    /// Components set.
    pub set: usize,
    /// Components removed.
    pub components_removed: usize,
    /// Components of unknown types, skipped.
    pub skipped: usize,
}

impl StateApplier {
    /// A fresh applier (no unknown type warned about yet).
    pub fn new() -> Self {
        StateApplier::default()
    }

    /// Applies `map` to `ecm` (gz-sim's `SetState`; see the module doc).
    ///
    /// On error the entries before the bad one have been applied: treat the ECM as spoiled.
    pub fn apply(&mut self, ecm: &mut Ecm, map: &SerializedStateMap) -> Result<Applied, StateError> {
        check_keys(map)?;
        let mut done = Applied::default();
        // Pass 1: removals, then missing entities with their own ids.
        for (&key, entity) in &map.entities {
            let id = EntityId(key);
            if entity.remove {
                if ecm.request_remove(id, true) {
                    done.removed += 1;
                }
            } else if !ecm.has_entity(id) {
                ecm.create_with_id(id)
                    .map_err(|e| StateError::Entity { entity: key, reason: e.message.into_string() })?;
                done.created += 1;
            }
        }
        // Pass 2: components.
        let change = if map.has_one_time_component_changes { Change::OneTime } else { Change::Periodic };
        for (&key, entity) in &map.entities {
            if entity.remove {
                continue;
            }
            let id = EntityId(key);
            for (&ty, component) in &entity.components {
                let ty = ComponentTypeId(ty);
                let Some(name) = ecm.component_name(ty).map(str::to_owned) else {
                    if self.warned.insert(ty.0) {
                        ::log::warn!("state: component type {ty} is not registered here; its values are skipped (first seen on entity {key})");
                    }
                    done.skipped += 1;
                    continue;
                };
                if component.remove {
                    if ecm.remove_component(id, ty) {
                        done.components_removed += 1;
                    }
                    continue;
                }
                ecm.set_raw(id, ty, &component.component, change).map_err(|e| StateError::Component {
                    entity: key,
                    component: name,
                    reason: e.message.into_string(),
                })?;
                done.set += 1;
            }
        }
        Ok(done)
    }
}

/// Applies `map` to `ecm` with a fresh [`StateApplier`].
pub fn apply_state(ecm: &mut Ecm, map: &SerializedStateMap) -> Result<Applied, StateError> {
    StateApplier::new().apply(ecm, map)
}

/// A 64-bit hash of a state's entities and components, not its header or flags: FNV-1a over,
/// for each entity in ascending id order, its id (8 bytes, little-endian) followed by the
/// protobuf encoding of its `SerializedEntityMap` (components in ascending type order).
/// Equal states hash equal in every process, so two processes that loaded the same world get
/// the same fingerprint from [`full_state`] right after loading.
pub fn fingerprint(map: &SerializedStateMap) -> u64 {
    let mut hash = FNV_OFFSET;
    for (id, entity) in &map.entities {
        hash = fnv1a(hash, &id.to_le_bytes());
        hash = fnv1a(hash, &entity.encode_to_vec());
    }
    hash
}

/// The [`fingerprint`] of an ECM's full state.
pub fn fingerprint_ecm(ecm: &Ecm) -> u64 {
    fingerprint(&full_state(ecm, Stamp::default()))
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod samples;
#[cfg(test)]
mod tests;
