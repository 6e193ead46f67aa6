//! Safe, typed access to the entity-component manager for systems.

use crate::component::{Change, Component, ComponentTypeId};
use crate::components::Name;
use crate::entity::EntityId;
use crate::ffi::{
    EcmError, EcmMutObj, EcmRefObj, RecordsReader, RecordsReader_TO, RecordsVisitor, RecordsVisitor_TO, Which,
};
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::sabi_types::RMut;
use abi_stable::std_types::{ROption, RSlice, RSliceMut, RStr, RVec};
use bytemuck::Pod;
use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// Read access to the ECM, shared by [`Ecm`] (read/write phases) and [`EcmView`]
/// (post_update). Queries answer entities in ascending id order.
pub trait EcmRead {
    /// The underlying facade, borrowed read-only.
    #[doc(hidden)]
    fn facade(&self) -> EcmRefObj<'_>;

    /// Whether the entity exists (including entities pending removal).
    fn has_entity(&self, entity: EntityId) -> bool {
        self.facade().has_entity(entity)
    }
    /// Number of entities.
    fn entity_count(&self) -> u64 {
        self.facade().entity_count()
    }
    /// A number that changes whenever an entity is created, marked for removal or removed,
    /// or a component is added to or removed from an entity (0 from a host older than
    /// plugin-api 1.7: unknown). [`QueryCache`] keeps query answers while it stays the same.
    fn structure_version(&self) -> u64 {
        self.facade().structure_version()
    }
    /// The parent of `entity`, if any.
    fn parent(&self, entity: EntityId) -> Option<EntityId> {
        let p = self.facade().parent_of(entity);
        (!p.is_null()).then_some(p)
    }
    /// The children of `entity`, ascending.
    fn children(&self, entity: EntityId) -> Vec<EntityId> {
        let mut out = RVec::new();
        self.facade().children_of(entity, &mut out);
        out.into_vec()
    }
    /// Whether removal of `entity` was requested this step.
    fn is_marked_for_removal(&self, entity: EntityId) -> bool {
        self.facade().is_marked_for_removal(entity)
    }
    /// Whether `entity` has component `C`.
    fn has<C: Component>(&self, entity: EntityId) -> bool {
        self.facade().has_component(entity, C::ID)
    }
    /// Component `C` of `entity`, or an error if its bytes do not decode as `C`.
    fn try_get<C: Component>(&self, entity: EntityId) -> Result<Option<C>, EcmError> {
        let mut buf = RVec::new();
        if !self.facade().get_raw(entity, C::ID, &mut buf) {
            return Ok(None);
        }
        C::from_bytes(&buf).map(Some).map_err(|e| EcmError::new(format!("entity {entity}: {e}")))
    }
    /// Component `C` of `entity` if present (a value that does not decode is logged and
    /// treated as absent).
    fn get<C: Component>(&self, entity: EntityId) -> Option<C> {
        self.try_get(entity).unwrap_or_else(|e| {
            log::warn!("{e}");
            None
        })
    }
    /// Entities that have every component type in `types`, ascending.
    fn entities_with(&self, types: &[ComponentTypeId]) -> Vec<EntityId> {
        self.query(Which::ALL, types)
    }
    /// Entities created since the end of the previous step that have every type in `types`.
    fn new_entities_with(&self, types: &[ComponentTypeId]) -> Vec<EntityId> {
        self.query(Which::NEW, types)
    }
    /// Entities pending removal that have every type in `types`.
    fn removed_entities_with(&self, types: &[ComponentTypeId]) -> Vec<EntityId> {
        self.query(Which::REMOVED, types)
    }
    /// A query with an explicit [`Which`].
    fn query(&self, which: Which, types: &[ComponentTypeId]) -> Vec<EntityId> {
        let mut out = RVec::new();
        self.facade().query(which, RSlice::from_slice(types), &mut out);
        out.into_vec()
    }
    /// Every entity having `C` and every type in `also`, with its `C`, in one boundary
    /// crossing for fixed-size components.
    fn each<C: Component>(&self, also: &[ComponentTypeId]) -> Result<Vec<(EntityId, C)>, EcmError> {
        let mut types = Vec::with_capacity(also.len() + 1);
        types.push(C::ID);
        types.extend_from_slice(also);
        let Some(size) = C::FIXED_SIZE else {
            let ids = self.entities_with(&types);
            return ids
                .into_iter()
                .filter_map(|e| self.try_get::<C>(e).transpose().map(|c| c.map(|c| (e, c))))
                .collect();
        };
        let (mut ids, mut data) = (RVec::new(), RVec::new());
        self.facade().query_read(Which::ALL, RSlice::from_slice(&types), C::ID, &mut ids, &mut data).into_result()?;
        decode_packed::<C>(&data, size, ids.len()).map(|values| ids.into_iter().zip(values).collect())
    }
    /// Calls `f` with every entity having `C` and every type in `also`, ascending, and its
    /// `C`, which the host lends in place: one boundary crossing and no copy. `C` is plain
    /// data (`bytemuck::Pod`, e.g. [`crate::math::Pose`]) whose memory is its byte form; if
    /// that does not hold on this target, values are decoded one by one instead.
    fn for_each<C: Component + Pod>(
        &self,
        also: &[ComponentTypeId],
        mut f: impl FnMut(EntityId, &C),
    ) -> Result<(), EcmError> {
        let types = with_type::<C>(also);
        let mut reader = Reader::<C, _> { f: &mut f, outcome: Ok(()), panic: None, _c: std::marker::PhantomData };
        let result = self
            .facade()
            .lend_records(
                Which::ALL,
                RSlice::from_slice(&types),
                C::ID,
                RecordsReader_TO::from_ptr(RMut::new(&mut reader), TD_Opaque),
            )
            .into_result();
        if let Some(payload) = reader.panic {
            resume_unwind(payload);
        }
        result.and(reader.outcome)
    }
    /// Component `C` (fixed-size) of each entity, in one boundary crossing.
    fn read_many<C: Component>(&self, entities: &[EntityId]) -> Result<Vec<C>, EcmError> {
        let size = fixed_size::<C>()?;
        let mut data = RVec::new();
        self.facade().read_many(C::ID, RSlice::from_slice(entities), &mut data).into_result()?;
        decode_packed::<C>(&data, size, entities.len())
    }
    /// How component `C` of `entity` changed this step.
    fn change<C: Component>(&self, entity: EntityId) -> Change {
        self.facade().change_of(entity, C::ID)
    }
    /// The first entity (lowest id) named `name`.
    fn entity_by_name(&self, name: &str) -> Option<EntityId> {
        self.entities_with(&[Name::ID]).into_iter().find(|e| self.get::<Name>(*e).is_some_and(|n| n.0 == name))
    }
    /// The child of `parent` named `name`.
    fn child_by_name(&self, parent: EntityId, name: &str) -> Option<EntityId> {
        self.children(parent).into_iter().find(|e| self.get::<Name>(*e).is_some_and(|n| n.0 == name))
    }
    /// The world's state as an encoded gz `SerializedStateMap` (header empty): everything
    /// (`changed_only` false) or what changed in this step. The scene broadcaster's `state`
    /// topic is made of these.
    fn serialized_state(&self, changed_only: bool) -> Result<Vec<u8>, EcmError> {
        let mut out = RVec::new();
        self.facade().serialized_state(changed_only, &mut out).into_result()?;
        Ok(out.into_vec())
    }
    /// The registered name of a component type.
    fn component_name(&self, ty: ComponentTypeId) -> Option<String> {
        match self.facade().component_name(ty) {
            ROption::RSome(s) => Some(s.into_string()),
            ROption::RNone => None,
        }
    }
}

/// `C`'s id followed by `also`: the types of a query for `C`.
fn with_type<C: Component>(also: &[ComponentTypeId]) -> Vec<ComponentTypeId> {
    let mut types = Vec::with_capacity(also.len() + 1);
    types.push(C::ID);
    types.extend_from_slice(also);
    types
}

/// Whether `C`'s memory is its byte form: same size, and a value whose every byte differs
/// encodes to exactly its own memory (so no field is reordered, resized or byte-swapped).
fn layout_is_byte_form<C: Component + Pod>() -> bool {
    if C::FIXED_SIZE != Some(std::mem::size_of::<C>()) {
        return false;
    }
    let mut probe = C::zeroed();
    for (i, b) in bytemuck::bytes_of_mut(&mut probe).iter_mut().enumerate() {
        *b = (i as u8).wrapping_add(1);
    }
    probe.to_bytes() == bytemuck::bytes_of(&probe)
}

/// Whether two values have the same bytes, compared a word at a time: a call to `memcmp`
/// per value cost more than the rest of a bulk update.
#[inline(always)]
fn same_bytes<C: Pod>(a: &C, b: &C) -> bool {
    let (a, b) = (bytemuck::bytes_of(a), bytemuck::bytes_of(b));
    let words = a.len() / 8;
    for w in 0..words {
        let x: [u8; 8] = [
            a[w * 8],
            a[w * 8 + 1],
            a[w * 8 + 2],
            a[w * 8 + 3],
            a[w * 8 + 4],
            a[w * 8 + 5],
            a[w * 8 + 6],
            a[w * 8 + 7],
        ];
        let y: [u8; 8] = [
            b[w * 8],
            b[w * 8 + 1],
            b[w * 8 + 2],
            b[w * 8 + 3],
            b[w * 8 + 4],
            b[w * 8 + 5],
            b[w * 8 + 6],
            b[w * 8 + 7],
        ];
        if u64::from_ne_bytes(x) != u64::from_ne_bytes(y) {
            return false;
        }
    }
    (words * 8..a.len()).all(|i| a[i] == b[i])
}

fn check_lent<C: Component>(ids: usize, records: usize, bytes: usize) -> Result<usize, EcmError> {
    let size = fixed_size::<C>()?;
    if ids != records || (size > 0 && bytes % size != 0) {
        return Err(EcmError::new(format!(
            "{}: host lent {ids} ids, {records} records and {bytes} bytes of {size}-byte values",
            C::NAME
        )));
    }
    Ok(size)
}

fn bad_record<C: Component>(record: u32) -> EcmError {
    EcmError::new(format!("{}: host lent record {record} out of range", C::NAME))
}

/// Visits lent records writable (see [`Ecm::for_each_mut`]); a panic in `f` is caught and
/// re-raised on this side of the boundary once the host's call has returned.
struct Visitor<'f, C, F> {
    f: &'f mut F,
    outcome: Result<(), EcmError>,
    panic: Option<Box<dyn Any + Send>>,
    _c: std::marker::PhantomData<fn() -> C>,
}

impl<C: Component + Pod, F: FnMut(EntityId, &mut C)> RecordsVisitor for Visitor<'_, C, F> {
    fn visit_mut(
        &mut self,
        ids: RSlice<'_, EntityId>,
        slots: RSlice<'_, u32>,
        records: RSliceMut<'_, u8>,
        changed: &mut RVec<u32>,
    ) {
        let f = &mut *self.f;
        match catch_unwind(AssertUnwindSafe(|| visit_mut::<C, F>(f, &ids, &slots, records.into_mut_slice(), changed))) {
            Ok(outcome) => self.outcome = outcome,
            Err(payload) => self.panic = Some(payload),
        }
    }
}

fn visit_mut<C: Component + Pod, F: FnMut(EntityId, &mut C)>(
    f: &mut F,
    ids: &[EntityId],
    slots: &[u32],
    records: &mut [u8],
    changed: &mut RVec<u32>,
) -> Result<(), EcmError> {
    let size = check_lent::<C>(ids.len(), slots.len(), records.len())?;
    if layout_is_byte_form::<C>() {
        // In place. The cast fails only if the host's buffer is not aligned for `C` (an
        // older host copies into a plain byte vector): then the copying path below.
        if let Ok(values) = bytemuck::try_cast_slice_mut::<u8, C>(records) {
            // Collected here and handed over in one copy: `RVec::push` is not inlined.
            let mut local = Vec::with_capacity(ids.len());
            for (i, (&id, &slot)) in ids.iter().zip(slots).enumerate() {
                let value = values.get_mut(slot as usize).ok_or_else(|| bad_record::<C>(slot))?;
                let before = *value;
                f(id, value);
                if !same_bytes(&before, value) {
                    local.push(i as u32);
                }
            }
            changed.extend_from_copy_slice(&local);
            return Ok(());
        }
    }
    for (i, (&id, &slot)) in ids.iter().zip(slots).enumerate() {
        let start = slot as usize * size;
        let record = records.get_mut(start..start + size).ok_or_else(|| bad_record::<C>(slot))?;
        let before = C::from_bytes(record).map_err(|e| EcmError::new(e.to_string()))?;
        let mut value = before;
        f(id, &mut value);
        if !same_bytes(&before, &value) {
            record.copy_from_slice(&value.to_bytes()[..size]);
            changed.push(i as u32);
        }
    }
    Ok(())
}

/// Visits lent records read-only (see [`EcmRead::for_each`]).
struct Reader<'f, C, F> {
    f: &'f mut F,
    outcome: Result<(), EcmError>,
    panic: Option<Box<dyn Any + Send>>,
    _c: std::marker::PhantomData<fn() -> C>,
}

impl<C: Component + Pod, F: FnMut(EntityId, &C)> RecordsReader for Reader<'_, C, F> {
    fn visit(&mut self, ids: RSlice<'_, EntityId>, slots: RSlice<'_, u32>, records: RSlice<'_, u8>) {
        let f = &mut *self.f;
        match catch_unwind(AssertUnwindSafe(|| visit::<C, F>(f, &ids, &slots, &records))) {
            Ok(outcome) => self.outcome = outcome,
            Err(payload) => self.panic = Some(payload),
        }
    }
}

fn visit<C: Component + Pod, F: FnMut(EntityId, &C)>(
    f: &mut F,
    ids: &[EntityId],
    slots: &[u32],
    records: &[u8],
) -> Result<(), EcmError> {
    let size = check_lent::<C>(ids.len(), slots.len(), records.len())?;
    if layout_is_byte_form::<C>() {
        if let Ok(values) = bytemuck::try_cast_slice::<u8, C>(records) {
            for (&id, &slot) in ids.iter().zip(slots) {
                f(id, values.get(slot as usize).ok_or_else(|| bad_record::<C>(slot))?);
            }
            return Ok(());
        }
    }
    for (&id, &slot) in ids.iter().zip(slots) {
        let start = slot as usize * size;
        let record = records.get(start..start + size).ok_or_else(|| bad_record::<C>(slot))?;
        f(id, &C::from_bytes(record).map_err(|e| EcmError::new(e.to_string()))?);
    }
    Ok(())
}

fn fixed_size<C: Component>() -> Result<usize, EcmError> {
    C::FIXED_SIZE.ok_or_else(|| EcmError::new(format!("{} has no fixed size; read it entity by entity", C::NAME)))
}

fn decode_packed<C: Component>(data: &[u8], size: usize, count: usize) -> Result<Vec<C>, EcmError> {
    if data.len() != size * count {
        return Err(EcmError::new(format!(
            "{}: host sent {} bytes for {count} values of {size} bytes",
            C::NAME,
            data.len()
        )));
    }
    if size == 0 {
        return C::from_bytes(&[]).map(|c| vec![c; count]).map_err(|e| EcmError::new(e.to_string()));
    }
    data.chunks_exact(size).map(|chunk| C::from_bytes(chunk).map_err(|e| EcmError::new(e.to_string()))).collect()
}

/// Answers of [`EcmRead::entities_with`] kept across steps while the ECM's structure stays
/// the same (plugin-api 1.7), for a system that asks the same questions every step: most
/// steps create and remove nothing, so most answers cost no call into the host.
///
/// Call [`QueryCache::refresh`] once at the start of each update and again at its end, after
/// the system's own creations and removals; in between, [`QueryCache::entities_with`]
/// answers from what it kept. An answer asked for after the system itself changed the
/// structure (in the same update) is the one from before that change.
#[derive(Debug, Default)]
pub struct QueryCache {
    version: u64,
    answers: Vec<(Vec<ComponentTypeId>, Vec<EntityId>)>,
}

impl QueryCache {
    /// An empty cache.
    pub fn new() -> Self {
        QueryCache::default()
    }

    /// Compares the ECM's structure version with the one at the previous call. The same:
    /// answers true (nothing was created, marked for removal, removed, or given or stripped
    /// of a component since, so `Which::NEW` and `Which::REMOVED` queries would answer
    /// nothing when the previous call was in an earlier step). Otherwise forgets every kept
    /// answer and answers false; always so with a host older than plugin-api 1.7.
    pub fn refresh(&mut self, ecm: &impl EcmRead) -> bool {
        self.seen(ecm.structure_version())
    }

    fn seen(&mut self, version: u64) -> bool {
        if version != 0 && version == self.version {
            return true;
        }
        self.version = version;
        self.answers.clear();
        false
    }

    /// The entities that have every type in `types`, ascending, as the last
    /// [`QueryCache::refresh`] left them (asked once, then kept until the structure changes).
    pub fn entities_with(&mut self, ecm: &impl EcmRead, types: &[ComponentTypeId]) -> &[EntityId] {
        let i = match self.answers.iter().position(|(t, _)| t.as_slice() == types) {
            Some(i) => i,
            None => {
                self.answers.push((types.to_vec(), ecm.entities_with(types)));
                self.answers.len() - 1
            }
        };
        &self.answers[i].1
    }
}

/// The ECM lent read/write to a system for one call.
pub struct Ecm<'a> {
    obj: EcmMutObj<'a>,
}

/// The ECM lent read-only (post_update).
pub struct EcmView<'a> {
    obj: EcmRefObj<'a>,
}

impl<'a> Ecm<'a> {
    /// Wraps a facade object (the adapter does this).
    pub fn from_ffi(obj: EcmMutObj<'a>) -> Self {
        Ecm { obj }
    }

    /// Creates an entity with a run-time id under `parent` (`None`: no parent).
    pub fn create_entity(&mut self, parent: Option<EntityId>) -> EntityId {
        self.obj.create_entity(parent.unwrap_or(EntityId::NULL))
    }
    /// Requests removal of `entity` and its descendants at the end of the step.
    pub fn request_remove(&mut self, entity: EntityId) -> bool {
        self.obj.request_remove(entity, true)
    }
    /// Requests removal of `entity` alone.
    pub fn request_remove_single(&mut self, entity: EntityId) -> bool {
        self.obj.request_remove(entity, false)
    }
    /// Sets the parent of `child` (through its `ParentEntity` component).
    pub fn set_parent(&mut self, child: EntityId, parent: Option<EntityId>) -> Result<(), EcmError> {
        self.obj.set_parent(child, parent.unwrap_or(EntityId::NULL)).into_result()
    }
    /// Creates or replaces component `C`, flagging the change as `change`; answers whether
    /// the value changed.
    pub fn set<C: Component>(&mut self, entity: EntityId, value: &C, change: Change) -> Result<bool, EcmError> {
        let bytes = value.to_bytes();
        self.obj.set_raw(entity, C::ID, RSlice::from_slice(&bytes), change).into_result()
    }
    /// Removes component `C`; false if it was absent.
    pub fn remove<C: Component>(&mut self, entity: EntityId) -> bool {
        self.obj.remove_component(entity, C::ID)
    }
    /// Calls `f` with every entity having `C` and every type in `also`, ascending, and a
    /// `&mut C` into the host's own storage: one boundary crossing, no copy, no allocation.
    /// Each value `f` changes (compared byte for byte afterwards) is flagged `change`, as
    /// [`Ecm::set`] would. The bulk path of physics-style updates.
    ///
    /// `C` is plain data (`bytemuck::Pod`, e.g. [`crate::math::Pose`]) whose memory is its
    /// byte form; if that does not hold on this target, or the host is older than
    /// plugin-api 1.2, values are copied, decoded and written back instead (same results).
    /// `ParentEntity` cannot be updated this way (use [`Ecm::set_parent`]). A panic in `f`
    /// propagates after the host's call returned; values changed before it are kept.
    pub fn for_each_mut<C: Component + Pod>(
        &mut self,
        also: &[ComponentTypeId],
        change: Change,
        mut f: impl FnMut(EntityId, &mut C),
    ) -> Result<(), EcmError> {
        let types = with_type::<C>(also);
        let mut visitor = Visitor::<C, _> { f: &mut f, outcome: Ok(()), panic: None, _c: std::marker::PhantomData };
        let result = self
            .obj
            .lend_records_mut(
                Which::ALL,
                RSlice::from_slice(&types),
                C::ID,
                change,
                RecordsVisitor_TO::from_ptr(RMut::new(&mut visitor), TD_Opaque),
            )
            .into_result();
        if let Some(payload) = visitor.panic {
            resume_unwind(payload);
        }
        result.and(visitor.outcome)
    }
    /// Writes component `C` (fixed-size) of many entities in one boundary crossing.
    pub fn write_many<C: Component>(
        &mut self,
        entities: &[EntityId],
        values: &[C],
        change: Change,
    ) -> Result<(), EcmError> {
        let size = fixed_size::<C>()?;
        if entities.len() != values.len() {
            return Err(EcmError::new(format!(
                "write_many::<{}>: {} entities but {} values",
                C::NAME,
                entities.len(),
                values.len()
            )));
        }
        let mut data = Vec::with_capacity(size * values.len());
        let mut w = crate::component::Writer(&mut data);
        values.iter().for_each(|v| v.encode(&mut w));
        self.obj.write_many(C::ID, RSlice::from_slice(entities), RSlice::from_slice(&data), change).into_result()
    }
    /// Flags component `C` of `entity` as changed.
    pub fn mark_changed<C: Component>(&mut self, entity: EntityId, change: Change) -> bool {
        self.obj.mark_changed(entity, C::ID, change)
    }
    /// Registers a third-party component type (call it in `configure`).
    pub fn register_component<C: Component>(&mut self) -> Result<ComponentTypeId, EcmError> {
        let size = match C::FIXED_SIZE {
            Some(n) => ROption::RSome(n as u32),
            None => ROption::RNone,
        };
        let id = self.obj.register_component(RStr::from_str(C::NAME), size).into_result()?;
        if id != C::ID {
            return Err(EcmError::new(format!("{}: host computed id {id}, plugin {}", C::NAME, C::ID)));
        }
        Ok(id)
    }
    /// Creates the entities of an SDF snippet (one `<model>` or `<light>`) under `parent`
    /// with run-time ids; the systems its `<plugin>`s name start at the next step.
    pub fn create_from_sdf(&mut self, sdf: &str, parent: EntityId) -> Result<EntityId, EcmError> {
        self.obj.create_from_sdf(RStr::from_str(sdf), parent).into_result()
    }
    /// Creates the world file's top-level model, light or joint named `name` with its ids
    /// from the world file (a reload gives the same ids); the systems it names start at the
    /// next step. Fails if the file has no such element or its entity exists. (plugin-api
    /// 1.4; what the level manager loads levels with.)
    pub fn load_world_entity(&mut self, name: &str) -> Result<EntityId, EcmError> {
        self.obj.load_world_entity(RStr::from_str(name)).into_result()
    }
}

impl EcmRead for Ecm<'_> {
    fn facade(&self) -> EcmRefObj<'_> {
        self.obj.sabi_reborrow()
    }
}

impl<'a> EcmView<'a> {
    /// Wraps a facade object (the adapter does this).
    pub fn from_ffi(obj: EcmRefObj<'a>) -> Self {
        EcmView { obj }
    }
}

impl EcmRead for EcmView<'_> {
    fn facade(&self) -> EcmRefObj<'_> {
        self.obj.sabi_reborrow()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_cache_keeps_nothing_under_a_host_that_cannot_tell_its_structure() {
        let mut cache = QueryCache::new();
        cache.answers.push((vec![ComponentTypeId(1)], vec![EntityId(7)]));
        assert!(!cache.seen(0), "0: unknown");
        assert!(cache.answers.is_empty(), "forgotten");
        cache.answers.push((vec![ComponentTypeId(1)], vec![EntityId(7)]));
        assert!(!cache.seen(0), "never the same under an older host");
        assert!(cache.answers.is_empty());
        assert!(!cache.seen(5), "a first version");
        cache.answers.push((vec![ComponentTypeId(1)], vec![EntityId(7)]));
        assert!(cache.seen(5), "unchanged");
        assert_eq!(cache.answers.len(), 1, "kept");
        assert!(!cache.seen(6));
        assert!(cache.answers.is_empty());
    }
}
