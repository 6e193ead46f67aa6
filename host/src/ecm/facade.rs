//! The ECM as a plugin sees it: the host's side of [`plugin_api::ffi::EcmFacade`].

use super::Ecm;
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::sabi_types::RMut;
use abi_stable::std_types::{RErr, ROk, ROption, RResult, RSlice, RSliceMut, RStr, RString, RVec};
use plugin_api::ffi::{EcmFacade, EcmFacade_TO, EcmMutObj, EcmRefObj, RecordsReader_TO, RecordsVisitor_TO};
use plugin_api::{Change, ComponentTypeId, EcmError, EntityId, Which};

/// Creates entities from SDF snippets for [`EcmFacade::create_from_sdf`] (the runner's
/// entity factory, which also queues the systems a snippet names).
pub trait Spawner {
    /// Creates the snippet's entities under `parent`; answers the top entity.
    fn create_from_sdf(&mut self, ecm: &mut Ecm, sdf: &str, parent: EntityId) -> Result<EntityId, String>;
    /// Creates the world file's top-level entity `name` with its file ids.
    fn load_world_entity(&mut self, ecm: &mut Ecm, name: &str) -> Result<EntityId, String> {
        let _ = (ecm, name);
        Err("loading world-file entities is not available here".into())
    }
}

/// The ECM lent to a system for one call.
pub struct EcmAccess<'a> {
    ecm: &'a mut Ecm,
    spawner: Option<&'a mut dyn Spawner>,
}

impl<'a> EcmAccess<'a> {
    /// Lends `ecm`; `spawner` serves `create_from_sdf` (None: that call fails).
    pub fn new(ecm: &'a mut Ecm, spawner: Option<&'a mut dyn Spawner>) -> Self {
        EcmAccess { ecm, spawner }
    }
    /// The read/write facade object.
    pub fn as_mut_obj(&mut self) -> EcmMutObj<'_> {
        EcmFacade_TO::from_ptr(abi_stable::sabi_types::RMut::new(self), TD_Opaque)
    }
    /// The read-only facade object.
    pub fn as_ref_obj(&self) -> EcmRefObj<'_> {
        EcmFacade_TO::from_ptr(abi_stable::sabi_types::RRef::new(self), TD_Opaque)
    }
}

/// Replaces `out` with `items` in one copy (RVec's `extend` pushes element by element).
fn fill<T: Copy>(out: &mut RVec<T>, items: &[T]) {
    out.clear();
    out.extend_from_copy_slice(items);
}

impl EcmFacade for EcmAccess<'_> {
    fn has_entity(&self, entity: EntityId) -> bool {
        self.ecm.has_entity(entity)
    }
    fn entity_count(&self) -> u64 {
        self.ecm.entity_count() as u64
    }
    fn parent_of(&self, entity: EntityId) -> EntityId {
        self.ecm.parent(entity).unwrap_or(EntityId::NULL)
    }
    fn children_of(&self, entity: EntityId, out: &mut RVec<EntityId>) {
        fill(out, &self.ecm.children(entity).collect::<Vec<_>>());
    }
    fn is_marked_for_removal(&self, entity: EntityId) -> bool {
        self.ecm.is_marked_for_removal(entity)
    }
    fn has_component(&self, entity: EntityId, ty: ComponentTypeId) -> bool {
        self.ecm.has_component(entity, ty)
    }
    fn get_raw(&self, entity: EntityId, ty: ComponentTypeId, out: &mut RVec<u8>) -> bool {
        if let Some(bytes) = self.ecm.record(entity, ty) {
            fill(out, bytes);
            return true;
        }
        // Variable-size values are encoded into the ECM's reused buffer, then copied once.
        let mut scratch = self.ecm.take_scratch();
        scratch.bytes.clear();
        let found = self.ecm.get_raw(entity, ty, &mut scratch.bytes);
        fill(out, &scratch.bytes);
        self.ecm.put_scratch(scratch);
        found
    }
    fn query(&self, which: Which, types: RSlice<'_, ComponentTypeId>, out: &mut RVec<EntityId>) {
        fill(out, &self.ecm.query(which, types.as_slice()));
    }
    fn query_read(
        &self,
        which: Which,
        types: RSlice<'_, ComponentTypeId>,
        read: ComponentTypeId,
        ids: &mut RVec<EntityId>,
        data: &mut RVec<u8>,
    ) -> RResult<(), EcmError> {
        let mut scratch = self.ecm.take_scratch();
        let super::Scratch { ids: i, bytes: d, records: slots, .. } = &mut scratch;
        let result = self.ecm.query_read_with(which, types.as_slice(), read, i, d, slots);
        fill(ids, i);
        fill(data, d);
        self.ecm.put_scratch(scratch);
        result.into()
    }
    fn read_many(
        &self,
        ty: ComponentTypeId,
        entities: RSlice<'_, EntityId>,
        out: &mut RVec<u8>,
    ) -> RResult<(), EcmError> {
        let mut scratch = self.ecm.take_scratch();
        scratch.bytes.clear();
        let result = self.ecm.read_many(ty, entities.as_slice(), &mut scratch.bytes);
        fill(out, &scratch.bytes);
        self.ecm.put_scratch(scratch);
        result.into()
    }
    fn change_of(&self, entity: EntityId, ty: ComponentTypeId) -> Change {
        self.ecm.change_of(entity, ty)
    }
    fn component_name(&self, ty: ComponentTypeId) -> ROption<RString> {
        self.ecm.component_name(ty).map(RString::from).into()
    }
    fn create_entity(&mut self, parent: EntityId) -> EntityId {
        let id = self.ecm.create_entity();
        if !parent.is_null() && self.ecm.has_entity(parent) {
            // Cannot fail: both entities exist and differ.
            let _ = self.ecm.set(id, &plugin_api::components::ParentEntity(parent), Change::OneTime);
        }
        id
    }
    fn request_remove(&mut self, entity: EntityId, recursive: bool) -> bool {
        self.ecm.request_remove(entity, recursive)
    }
    fn set_parent(&mut self, child: EntityId, parent: EntityId) -> RResult<(), EcmError> {
        if !parent.is_null() && !self.ecm.has_entity(parent) {
            return RErr(EcmError::new(format!("no entity {parent} to be the parent of {child}")));
        }
        let result = if parent.is_null() {
            self.ecm.remove_component(child, <plugin_api::components::ParentEntity as plugin_api::Component>::ID);
            Ok(())
        } else {
            self.ecm.set(child, &plugin_api::components::ParentEntity(parent), Change::OneTime).map(|_| ())
        };
        result.into()
    }
    fn set_raw(
        &mut self,
        entity: EntityId,
        ty: ComponentTypeId,
        data: RSlice<'_, u8>,
        change: Change,
    ) -> RResult<bool, EcmError> {
        self.ecm.set_raw(entity, ty, data.as_slice(), change).into()
    }
    fn remove_component(&mut self, entity: EntityId, ty: ComponentTypeId) -> bool {
        self.ecm.remove_component(entity, ty)
    }
    fn write_many(
        &mut self,
        ty: ComponentTypeId,
        entities: RSlice<'_, EntityId>,
        data: RSlice<'_, u8>,
        change: Change,
    ) -> RResult<(), EcmError> {
        self.ecm.write_many(ty, entities.as_slice(), data.as_slice(), change).into()
    }
    fn mark_changed(&mut self, entity: EntityId, ty: ComponentTypeId, change: Change) -> bool {
        self.ecm.mark_changed(entity, ty, change)
    }
    fn register_component(&mut self, name: RStr<'_>, fixed_size: ROption<u32>) -> RResult<ComponentTypeId, EcmError> {
        let size = fixed_size.into_option().map(|s| s as usize);
        self.ecm.register_component(name.as_str(), size).into()
    }
    fn lend_records_mut(
        &mut self,
        which: Which,
        types: RSlice<'_, ComponentTypeId>,
        ty: ComponentTypeId,
        change: Change,
        mut visitor: RecordsVisitor_TO<'_, RMut<'_, ()>>,
    ) -> RResult<(), EcmError> {
        self.ecm
            .lend_records_mut(which, types.as_slice(), ty, change, |ids, records, bytes, changed| {
                // O(1) both ways: the RVec takes over the Vec's buffer and gives it back.
                let mut out = RVec::from(std::mem::take(changed));
                visitor.visit_mut(
                    RSlice::from_slice(ids),
                    RSlice::from_slice(records),
                    RSliceMut::from_mut_slice(bytes),
                    &mut out,
                );
                *changed = out.into_vec();
            })
            .into()
    }
    fn lend_records(
        &self,
        which: Which,
        types: RSlice<'_, ComponentTypeId>,
        ty: ComponentTypeId,
        mut visitor: RecordsReader_TO<'_, RMut<'_, ()>>,
    ) -> RResult<(), EcmError> {
        self.ecm
            .lend_records(which, types.as_slice(), ty, |ids, records, bytes| {
                visitor.visit(RSlice::from_slice(ids), RSlice::from_slice(records), RSlice::from_slice(bytes));
            })
            .into()
    }
    fn serialized_state(&self, changed_only: bool, out: &mut RVec<u8>) -> RResult<(), EcmError> {
        let stamp = crate::state::Stamp::default();
        let state = if changed_only {
            crate::state::changed_state(self.ecm, stamp)
        } else {
            crate::state::full_state(self.ecm, stamp)
        };
        *out = RVec::from(plugin_api::prost::Message::encode_to_vec(&state));
        ROk(())
    }
    fn create_from_sdf(&mut self, sdf: RStr<'_>, parent: EntityId) -> RResult<EntityId, EcmError> {
        match self.spawner.as_deref_mut() {
            Some(spawner) => match spawner.create_from_sdf(self.ecm, sdf.as_str(), parent) {
                Ok(id) => ROk(id),
                Err(e) => RErr(EcmError::new(e)),
            },
            None => RErr(EcmError::new("entity creation from SDF is not available here")),
        }
    }
    fn load_world_entity(&mut self, name: RStr<'_>) -> RResult<EntityId, EcmError> {
        match self.spawner.as_deref_mut() {
            Some(spawner) => spawner.load_world_entity(self.ecm, name.as_str()).map_err(EcmError::new).into(),
            None => RErr(EcmError::new("loading world-file entities is not available here")),
        }
    }
    fn structure_version(&self) -> u64 {
        self.ecm.structure_version()
    }
}
