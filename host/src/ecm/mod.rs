//! The entity-component manager: entities with stable u64 ids, their components, the
//! parent/child graph, change tracking and deferred removal.
//!
//! specs is the storage and stays inside this module: ids, change tracking and the byte form
//! of components are Troupe's own, so nothing outside depends on specs' types. specs owns
//! the entity slots and the variable-size built-in components; fixed-size components are
//! kept as dense arrays of their byte form ([`store::Records`]), which the ECM lends to
//! plugins in place ([`Ecm::lend_records_mut`]) so a bulk update copies nothing.

mod catalogue;
mod facade;
mod query;
mod state;
mod store;

pub use facade::{EcmAccess, Spawner};

use plugin_api::components::ParentEntity;
use plugin_api::{Change, Component, ComponentTypeId, EcmError, EntityId, Which};
use specs::hibitset::{BitSet, BitSetLike};
use specs::world::{Entity, Index};
use specs::{Builder, World, WorldExt};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, PoisonError};

/// Hashes u64 keys (entity and component type ids) by one multiplication: ids are already
/// well spread or sequential, and SipHash showed up in the bulk-access profile.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;
use store::{BlobRecords, BlobStore, Store};

/// One component type: where its values are and which entities have or changed it.
struct Column {
    id: ComponentTypeId,
    name: String,
    fixed_size: Option<usize>,
    store: Box<dyn Store>,
    has: BitSet,
    count: usize,
    one_time: BitSet,
    periodic: BitSet,
}

/// Every component of one entity, in byte form (a snapshot entry).
#[derive(Clone, Debug, PartialEq)]
pub struct EntityState {
    /// The entity.
    pub id: EntityId,
    /// Components sorted by type id.
    pub components: Vec<(ComponentTypeId, Vec<u8>)>,
}

/// A full copy of an ECM's entities and components (the reset point after load).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EcmSnapshot {
    /// Entities in ascending id order.
    pub entities: Vec<EntityState>,
}

/// The entity-component manager of one world.
pub struct Ecm {
    world: World,
    by_id: IdMap<EntityId, Entity>,
    id_of: Vec<EntityId>,
    alive: BitSet,
    columns: Vec<Column>,
    column_of: IdMap<ComponentTypeId, usize>,
    /// Columns with change flags set this step (cleared at the end of the step).
    dirty: Vec<usize>,
    /// Whether an entity was destroyed since specs last reclaimed slots.
    needs_maintain: bool,
    children: BTreeMap<EntityId, BTreeSet<EntityId>>,
    new: BitSet,
    removal: BitSet,
    removed_components: Vec<(EntityId, ComponentTypeId)>,
    next_runtime_id: u64,
    /// Changes with every structural change: see [`Ecm::structure_version`].
    structure: u64,
    /// Buffers of the bulk calls, kept across calls and steps (a lock only so that `&self`
    /// calls may use them too; `&mut self` calls take them without locking).
    scratch: Mutex<Scratch>,
}

/// Reused buffers of [`Ecm::lend_records_mut`], [`Ecm::lend_records`] and [`Ecm::query_read`].
/// Also the facade's transfer buffers ([`EcmAccess`]): what it copies into a plugin's
/// vectors is first written here.
#[derive(Default)]
struct Scratch {
    ids: Vec<EntityId>,
    records: Vec<u32>,
    changed: Vec<u32>,
    bytes: Vec<u8>,
}

impl Default for Ecm {
    fn default() -> Self {
        Ecm::new()
    }
}

impl Ecm {
    /// An empty ECM with the built-in catalogue registered.
    pub fn new() -> Self {
        let mut ecm = Ecm {
            world: World::new(),
            by_id: IdMap::default(),
            id_of: Vec::new(),
            alive: BitSet::new(),
            columns: Vec::new(),
            column_of: IdMap::default(),
            dirty: Vec::new(),
            needs_maintain: false,
            children: BTreeMap::new(),
            new: BitSet::new(),
            removal: BitSet::new(),
            removed_components: Vec::new(),
            next_runtime_id: 1,
            structure: 1,
            scratch: Mutex::default(),
        };
        catalogue::register_builtins(&mut ecm);
        ecm
    }

    fn add_column(&mut self, id: ComponentTypeId, name: &str, fixed_size: Option<usize>, store: Box<dyn Store>) {
        store.register(&mut self.world);
        self.column_of.insert(id, self.columns.len());
        self.columns.push(Column {
            id,
            name: name.to_string(),
            fixed_size,
            store,
            has: BitSet::new(),
            count: 0,
            one_time: BitSet::new(),
            periodic: BitSet::new(),
        });
    }

    /// Registers a component type known only by name (a third party's). Registering the
    /// same name twice is fine; a different name with the same hash is an error.
    pub fn register_component(&mut self, name: &str, fixed_size: Option<usize>) -> Result<ComponentTypeId, EcmError> {
        let id = ComponentTypeId::of_name(name);
        if let Some(&i) = self.column_of.get(&id) {
            let col = &self.columns[i];
            if col.name != name {
                return Err(EcmError::new(format!(
                    "component name {name:?} hashes to {id}, already taken by {:?}",
                    col.name
                )));
            }
            if col.fixed_size != fixed_size {
                return Err(EcmError::new(format!(
                    "component {name:?} registered with size {:?}, now {:?}",
                    col.fixed_size, fixed_size
                )));
            }
            return Ok(id);
        }
        let store: Box<dyn Store> = match fixed_size {
            Some(size) => Box::new(BlobRecords::new(size)),
            None => Box::new(BlobStore::default()),
        };
        self.add_column(id, name, fixed_size, store);
        Ok(id)
    }

    /// The registered name of a component type.
    pub fn component_name(&self, ty: ComponentTypeId) -> Option<&str> {
        self.column_of.get(&ty).map(|&i| self.columns[i].name.as_str())
    }

    /// Every registered component type: id, name, fixed size.
    pub fn component_types(&self) -> impl Iterator<Item = (ComponentTypeId, &str, Option<usize>)> {
        self.columns.iter().map(|c| (c.id, c.name.as_str(), c.fixed_size))
    }

    fn column(&self, ty: ComponentTypeId) -> Result<usize, EcmError> {
        self.column_of.get(&ty).copied().ok_or_else(|| EcmError::new(format!("component type {ty} is not registered")))
    }

    fn entity(&self, id: EntityId) -> Result<Entity, EcmError> {
        self.by_id.get(&id).copied().ok_or_else(|| EcmError::new(format!("no entity {id}")))
    }

    // ---------------------------------------------------------------- entities

    /// Makes ids up to `last` file ids: run-time ids start above them.
    pub fn reserve_ids(&mut self, last: u64) {
        self.next_runtime_id = self.next_runtime_id.max(last + 1);
    }

    /// The id the next run-time entity will get.
    pub fn next_runtime_id(&self) -> u64 {
        self.next_runtime_id
    }

    /// Creates an entity with a run-time id.
    pub fn create_entity(&mut self) -> EntityId {
        let id = EntityId(self.next_runtime_id);
        self.next_runtime_id += 1;
        self.spawn(id);
        id
    }

    /// Creates an entity with a given id (from the world file, a snapshot or the network).
    /// Run-time ids continue above it, so they never collide.
    pub fn create_with_id(&mut self, id: EntityId) -> Result<(), EcmError> {
        if id.is_null() {
            return Err(EcmError::new("entity id 0 is the null entity"));
        }
        if self.by_id.contains_key(&id) {
            return Err(EcmError::new(format!("entity {id} already exists")));
        }
        self.next_runtime_id = self.next_runtime_id.max(id.0 + 1);
        self.spawn(id);
        Ok(())
    }

    fn spawn(&mut self, id: EntityId) {
        let entity = self.world.create_entity().build();
        let index = entity.id() as usize;
        if self.id_of.len() <= index {
            self.id_of.resize(index + 1, EntityId::NULL);
        }
        self.id_of[index] = id;
        self.by_id.insert(id, entity);
        self.alive.add(entity.id());
        self.new.add(entity.id());
        self.structure += 1;
    }

    /// Whether the entity exists (pending removal included).
    pub fn has_entity(&self, id: EntityId) -> bool {
        self.by_id.contains_key(&id)
    }

    /// Number of entities.
    pub fn entity_count(&self) -> usize {
        self.by_id.len()
    }

    /// A number that changes whenever an entity is created, marked for removal or removed,
    /// or a component is added to or removed from an entity, and only then (writing values,
    /// flagging changes and a step ending with nothing to remove leave it as it is): while it
    /// stays the same, `Which::ALL` queries answer the same entities, and if it is the same as
    /// in an earlier step, `Which::NEW` and `Which::REMOVED` queries answer nothing. Never 0.
    pub fn structure_version(&self) -> u64 {
        self.structure
    }

    /// Requests removal at the end of the step, of `id` and (if `recursive`) its
    /// descendants. False if the entity does not exist.
    pub fn request_remove(&mut self, id: EntityId, recursive: bool) -> bool {
        let Some(&entity) = self.by_id.get(&id) else { return false };
        if !self.removal.add(entity.id()) {
            self.structure += 1;
        }
        if recursive {
            for child in self.children.get(&id).cloned().unwrap_or_default() {
                self.request_remove(child, true);
            }
        }
        true
    }

    /// Whether removal of the entity was requested.
    pub fn is_marked_for_removal(&self, id: EntityId) -> bool {
        self.by_id.get(&id).is_some_and(|e| self.removal.contains(e.id()))
    }

    /// Entities pending removal, ascending.
    pub fn pending_removals(&self) -> Vec<EntityId> {
        if self.removal.is_empty() {
            return Vec::new();
        }
        self.ids_of(&self.removal)
    }

    // ---------------------------------------------------------------- graph

    /// The parent, if any.
    pub fn parent(&self, id: EntityId) -> Option<EntityId> {
        self.get::<ParentEntity>(id).map(|p| p.0).filter(|p| !p.is_null())
    }

    /// Children, ascending.
    pub fn children(&self, id: EntityId) -> impl Iterator<Item = EntityId> + '_ {
        self.children.get(&id).into_iter().flatten().copied()
    }

    /// `id` and all its descendants, breadth-first.
    pub fn descendants(&self, id: EntityId) -> Vec<EntityId> {
        let mut out = vec![id];
        let mut i = 0;
        while i < out.len() {
            out.extend(self.children(out[i]));
            i += 1;
        }
        out
    }

    fn unlink(&mut self, child: EntityId) {
        if let Some(parent) = self.parent(child) {
            if let Some(set) = self.children.get_mut(&parent) {
                set.remove(&child);
                if set.is_empty() {
                    self.children.remove(&parent);
                }
            }
        }
    }

    // ---------------------------------------------------------------- components

    /// Writes a component from bytes. Creating it flags a one-time change; replacing it
    /// flags `change` if the value differs. Answers whether the value changed.
    pub fn set_raw(
        &mut self,
        id: EntityId,
        ty: ComponentTypeId,
        bytes: &[u8],
        change: Change,
    ) -> Result<bool, EcmError> {
        let entity = self.entity(id)?;
        let ci = self.column(ty)?;
        if ty == ParentEntity::ID {
            let parent = ParentEntity::from_bytes(bytes).map_err(|e| EcmError::new(e.to_string()))?.0;
            if parent == id {
                return Err(EcmError::new(format!("entity {id} cannot be its own parent")));
            }
            self.unlink(id);
            if !parent.is_null() {
                self.children.entry(parent).or_default().insert(id);
            }
        }
        let col = &mut self.columns[ci];
        let changed =
            col.store.set(&self.world, entity, bytes).map_err(|e| EcmError::new(format!("entity {id}: {e}")))?;
        let created = !col.has.add(entity.id());
        if created {
            col.count += 1;
            self.structure += 1;
        }
        let flag = if created {
            Change::OneTime
        } else if changed {
            change
        } else {
            Change::None
        };
        self.flag_column(ci, entity.id(), flag);
        Ok(changed)
    }

    fn flag(col: &mut Column, index: Index, change: Change) -> bool {
        let flagged = change != Change::None;
        match change {
            Change::None => {}
            Change::Periodic => {
                if !col.one_time.contains(index) {
                    col.periodic.add(index);
                }
            }
            Change::OneTime => {
                col.periodic.remove(index);
                col.one_time.add(index);
            }
        }
        flagged
    }

    fn flag_column(&mut self, ci: usize, index: Index, change: Change) {
        let col = &mut self.columns[ci];
        let was_clean = col.one_time.is_empty() && col.periodic.is_empty();
        if Self::flag(col, index, change) && was_clean {
            self.dirty.push(ci);
        }
    }

    /// Appends a component's bytes to `out`; false if absent (or unknown).
    pub fn get_raw(&self, id: EntityId, ty: ComponentTypeId, out: &mut Vec<u8>) -> bool {
        let (Some(&entity), Some(&ci)) = (self.by_id.get(&id), self.column_of.get(&ty)) else {
            return false;
        };
        let col = &self.columns[ci];
        col.has.contains(entity.id()) && col.store.get(&self.world, entity, out)
    }

    /// The bytes of a fixed-size component, in place (None if absent, or not fixed-size).
    pub(crate) fn record(&self, id: EntityId, ty: ComponentTypeId) -> Option<&[u8]> {
        let (Some(&entity), Some(&ci)) = (self.by_id.get(&id), self.column_of.get(&ty)) else {
            return None;
        };
        self.columns[ci].store.records()?.get(entity.id())
    }

    /// Whether the entity has the component.
    pub fn has_component(&self, id: EntityId, ty: ComponentTypeId) -> bool {
        match (self.by_id.get(&id), self.column_of.get(&ty)) {
            (Some(e), Some(&ci)) => self.columns[ci].has.contains(e.id()),
            _ => false,
        }
    }

    /// Removes a component (recorded for observers); false if absent.
    pub fn remove_component(&mut self, id: EntityId, ty: ComponentTypeId) -> bool {
        let (Ok(entity), Ok(ci)) = (self.entity(id), self.column(ty)) else { return false };
        if !self.columns[ci].has.contains(entity.id()) {
            return false;
        }
        if ty == ParentEntity::ID {
            self.unlink(id);
        }
        let col = &mut self.columns[ci];
        col.store.remove(&self.world, entity);
        col.has.remove(entity.id());
        col.count -= 1;
        col.one_time.remove(entity.id());
        col.periodic.remove(entity.id());
        self.removed_components.push((id, ty));
        self.structure += 1;
        true
    }

    /// Flags a component as changed without writing it; false if absent.
    pub fn mark_changed(&mut self, id: EntityId, ty: ComponentTypeId, change: Change) -> bool {
        let (Ok(entity), Ok(ci)) = (self.entity(id), self.column(ty)) else { return false };
        if !self.columns[ci].has.contains(entity.id()) {
            return false;
        }
        self.flag_column(ci, entity.id(), change);
        true
    }

    /// How a component changed this step.
    pub fn change_of(&self, id: EntityId, ty: ComponentTypeId) -> Change {
        match (self.by_id.get(&id), self.column_of.get(&ty)) {
            (Some(e), Some(&ci)) if self.columns[ci].one_time.contains(e.id()) => Change::OneTime,
            (Some(e), Some(&ci)) if self.columns[ci].periodic.contains(e.id()) => Change::Periodic,
            _ => Change::None,
        }
    }

    /// Components removed this step.
    pub fn removed_components(&self) -> &[(EntityId, ComponentTypeId)] {
        &self.removed_components
    }

    /// A typed component.
    pub fn get<C: Component>(&self, id: EntityId) -> Option<C> {
        let mut buf = Vec::new();
        self.get_raw(id, C::ID, &mut buf).then(|| C::from_bytes(&buf).ok()).flatten()
    }

    /// Writes a typed component.
    pub fn set<C: Component>(&mut self, id: EntityId, value: &C, change: Change) -> Result<bool, EcmError> {
        self.set_raw(id, C::ID, &value.to_bytes(), change)
    }

    /// Whether the entity has component `C`.
    pub fn has<C: Component>(&self, id: EntityId) -> bool {
        self.has_component(id, C::ID)
    }

    // ---------------------------------------------------------------- step boundary

    /// Ends a step: removes the entities marked for removal, forgets which entities and
    /// components were new or changed.
    pub fn end_step(&mut self) {
        if !self.removal.is_empty() {
            for id in self.pending_removals() {
                self.destroy(id);
            }
            self.removal.clear();
        }
        if self.needs_maintain {
            self.world.maintain();
            self.needs_maintain = false;
        }
        if !self.new.is_empty() {
            self.new.clear();
        }
        self.removed_components.clear();
        if !self.dirty.is_empty() {
            self.clear_changes();
        }
    }

    fn destroy(&mut self, id: EntityId) {
        let Some(entity) = self.by_id.remove(&id) else { return };
        self.unlink(id);
        // Orphans keep their ParentEntity value but leave the graph, as in gz-sim.
        self.children.remove(&id);
        let index = entity.id();
        for col in &mut self.columns {
            if col.has.remove(index) {
                col.count -= 1;
                col.store.forget(index);
            }
            col.one_time.remove(index);
            col.periodic.remove(index);
        }
        self.alive.remove(index);
        self.id_of[index as usize] = EntityId::NULL;
        // Cannot fail: the entity is alive (we just looked it up).
        let _ = self.world.delete_entity(entity);
        self.needs_maintain = true;
        self.structure += 1;
    }

    /// Clears all change flags (after a state was published or sent).
    pub fn clear_changes(&mut self) {
        for ci in self.dirty.drain(..) {
            self.columns[ci].one_time.clear();
            self.columns[ci].periodic.clear();
        }
    }

    // ---------------------------------------------------------------- snapshots

    /// Every entity with every component, in ascending id order.
    pub fn snapshot(&self) -> EcmSnapshot {
        let mut ids: Vec<EntityId> = self.by_id.keys().copied().collect();
        ids.sort_unstable();
        let entities = ids.into_iter().filter_map(|id| self.entity_state(id)).collect();
        EcmSnapshot { entities }
    }

    /// Replaces every entity with those of `snapshot`, same ids. Entities created since are
    /// gone; the run-time id counter is kept, so ids are never reused within a run. Every
    /// restored entity counts as new, with its components changed one-time.
    pub fn restore(&mut self, snapshot: &EcmSnapshot) -> Result<(), EcmError> {
        let all: Vec<EntityId> = self.by_id.keys().copied().collect();
        for id in all {
            self.destroy(id);
        }
        self.world.maintain();
        self.children.clear();
        self.new.clear();
        self.removal.clear();
        self.removed_components.clear();
        let counter = self.next_runtime_id;
        for state in &snapshot.entities {
            self.create_with_id(state.id)?;
        }
        for state in &snapshot.entities {
            for (ty, bytes) in &state.components {
                self.set_raw(state.id, *ty, bytes, Change::OneTime)?;
            }
        }
        self.next_runtime_id = counter.max(self.next_runtime_id);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
