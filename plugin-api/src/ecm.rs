//! Safe, typed access to the entity-component manager for systems.

use crate::component::{Change, Component, ComponentTypeId};
use crate::components::Name;
use crate::entity::EntityId;
use crate::ffi::{EcmError, EcmMutObj, EcmRefObj, Which};
use abi_stable::std_types::{RSlice, RStr, RVec, ROption};

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
        self.facade()
            .query_read(Which::ALL, RSlice::from_slice(&types), C::ID, &mut ids, &mut data)
            .into_result()?;
        decode_packed::<C>(&data, size, ids.len())
            .map(|values| ids.into_iter().zip(values).collect())
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
        self.entities_with(&[Name::ID])
            .into_iter()
            .find(|e| self.get::<Name>(*e).is_some_and(|n| n.0 == name))
    }
    /// The child of `parent` named `name`.
    fn child_by_name(&self, parent: EntityId, name: &str) -> Option<EntityId> {
        self.children(parent)
            .into_iter()
            .find(|e| self.get::<Name>(*e).is_some_and(|n| n.0 == name))
    }
    /// The registered name of a component type.
    fn component_name(&self, ty: ComponentTypeId) -> Option<String> {
        match self.facade().component_name(ty) {
            ROption::RSome(s) => Some(s.into_string()),
            ROption::RNone => None,
        }
    }
}

fn fixed_size<C: Component>() -> Result<usize, EcmError> {
    C::FIXED_SIZE.ok_or_else(|| {
        EcmError::new(format!("{} has no fixed size; read it entity by entity", C::NAME))
    })
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
    data.chunks_exact(size)
        .map(|chunk| C::from_bytes(chunk).map_err(|e| EcmError::new(e.to_string())))
        .collect()
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
        self.obj
            .write_many(C::ID, RSlice::from_slice(entities), RSlice::from_slice(&data), change)
            .into_result()
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
