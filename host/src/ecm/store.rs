//! Where component values live: typed specs storages for the built-in catalogue, a byte map
//! for third-party types registered by name.

use plugin_api::{Component, DecodeError, Writer};
use specs::world::{Entity, Index};
use specs::{DenseVecStorage, World, WorldExt};
use std::collections::HashMap;
use std::marker::PhantomData;

/// A built-in component as specs stores it (the orphan rule forbids implementing
/// `specs::Component` for plugin-api's types directly).
pub(crate) struct Stored<C>(pub(crate) C);

impl<C: Component> specs::Component for Stored<C> {
    type Storage = DenseVecStorage<Self>;
}

/// The operations the ECM needs on one component type, in byte form.
pub(crate) trait Store: Send + Sync {
    /// Appends the bytes of `entity`'s value to `out`; false if absent.
    fn get(&self, world: &World, entity: Entity, out: &mut Vec<u8>) -> bool;
    /// Inserts or replaces from bytes; answers whether the value changed.
    fn set(&mut self, world: &World, entity: Entity, bytes: &[u8]) -> Result<bool, DecodeError>;
    /// Removes the value; false if absent.
    fn remove(&mut self, world: &World, entity: Entity) -> bool;
    /// Forgets everything stored for a deleted entity slot (typed storages are cleaned by
    /// specs' `maintain`).
    fn forget(&mut self, index: Index);
    /// Registers the storage with a new specs world.
    fn register(&self, world: &mut World);
    /// Appends the bytes of each entity's value; false if one is absent.
    fn get_many(&self, world: &World, entities: &[Entity], out: &mut Vec<u8>) -> bool {
        entities.iter().all(|e| self.get(world, *e, out))
    }
    /// Writes `size`-byte values from `data`, one per entity, pushing whether each changed.
    fn set_many(&mut self, world: &World, entities: &[Entity], data: &[u8], size: usize, changed: &mut Vec<bool>) -> Result<(), DecodeError> {
        for (i, e) in entities.iter().enumerate() {
            changed.push(self.set(world, *e, &data[i * size..(i + 1) * size])?);
        }
        Ok(())
    }
}

/// A built-in component type stored in a specs `DenseVecStorage`.
pub(crate) struct TypedStore<C>(PhantomData<fn() -> C>);

impl<C> TypedStore<C> {
    pub(crate) fn new() -> Self {
        TypedStore(PhantomData)
    }
}

impl<C: Component + PartialEq> Store for TypedStore<C> {
    fn get(&self, world: &World, entity: Entity, out: &mut Vec<u8>) -> bool {
        let storage = world.read_storage::<Stored<C>>();
        match storage.get(entity) {
            Some(v) => {
                v.0.encode(&mut Writer(out));
                true
            }
            None => false,
        }
    }
    fn set(&mut self, world: &World, entity: Entity, bytes: &[u8]) -> Result<bool, DecodeError> {
        let value = C::from_bytes(bytes)?;
        let mut storage = world.write_storage::<Stored<C>>();
        if let Some(slot) = storage.get_mut(entity) {
            if slot.0 == value {
                return Ok(false);
            }
            slot.0 = value;
            return Ok(true);
        }
        // The entity is alive (the ECM checked), so insertion cannot fail.
        let _ = storage.insert(entity, Stored(value));
        Ok(true)
    }
    fn remove(&mut self, world: &World, entity: Entity) -> bool {
        world.write_storage::<Stored<C>>().remove(entity).is_some()
    }
    fn forget(&mut self, _: Index) {}
    fn register(&self, world: &mut World) {
        world.register::<Stored<C>>();
    }
    // The bulk paths fetch the storage once per call, not once per entity.
    fn get_many(&self, world: &World, entities: &[Entity], out: &mut Vec<u8>) -> bool {
        let storage = world.read_storage::<Stored<C>>();
        let mut w = Writer(out);
        entities.iter().all(|e| match storage.get(*e) {
            Some(v) => {
                v.0.encode(&mut w);
                true
            }
            None => false,
        })
    }
    fn set_many(&mut self, world: &World, entities: &[Entity], data: &[u8], size: usize, changed: &mut Vec<bool>) -> Result<(), DecodeError> {
        let mut storage = world.write_storage::<Stored<C>>();
        for (i, e) in entities.iter().enumerate() {
            let value = C::from_bytes(&data[i * size..(i + 1) * size])?;
            match storage.get_mut(*e) {
                Some(slot) if slot.0 == value => changed.push(false),
                Some(slot) => {
                    slot.0 = value;
                    changed.push(true);
                }
                None => {
                    let _ = storage.insert(*e, Stored(value));
                    changed.push(true);
                }
            }
        }
        Ok(())
    }
}

/// A third-party component type, known only by name and bytes.
#[derive(Default)]
pub(crate) struct BlobStore {
    values: HashMap<Index, Vec<u8>>,
}

impl Store for BlobStore {
    fn get(&self, _: &World, entity: Entity, out: &mut Vec<u8>) -> bool {
        match self.values.get(&entity.id()) {
            Some(v) => {
                out.extend_from_slice(v);
                true
            }
            None => false,
        }
    }
    fn set(&mut self, _: &World, entity: Entity, bytes: &[u8]) -> Result<bool, DecodeError> {
        match self.values.get_mut(&entity.id()) {
            Some(v) if v.as_slice() == bytes => Ok(false),
            Some(v) => {
                v.clear();
                v.extend_from_slice(bytes);
                Ok(true)
            }
            None => {
                self.values.insert(entity.id(), bytes.to_vec());
                Ok(true)
            }
        }
    }
    fn remove(&mut self, _: &World, entity: Entity) -> bool {
        self.values.remove(&entity.id()).is_some()
    }
    fn forget(&mut self, index: Index) {
        self.values.remove(&index);
    }
    fn register(&self, _: &mut World) {}
}
