//! Where component values live: fixed-size types as dense little-endian records (what the
//! ECM lends to plugins in place), variable-size built-in types in typed specs storages,
//! variable-size third-party types in a byte map.

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
    fn set_many(
        &mut self,
        world: &World,
        entities: &[Entity],
        data: &[u8],
        size: usize,
        changed: &mut Vec<bool>,
    ) -> Result<(), DecodeError> {
        for (i, e) in entities.iter().enumerate() {
            changed.push(self.set(world, *e, &data[i * size..(i + 1) * size])?);
        }
        Ok(())
    }
    /// The records of a fixed-size type (None for variable-size types).
    fn records(&self) -> Option<&Records> {
        None
    }
    /// The records of a fixed-size type, writable.
    fn records_mut(&mut self) -> Option<&mut Records> {
        None
    }
}

/// No record: [`Records::slot_of`] of an entity slot without the component.
const ABSENT: u32 = u32::MAX;

/// The values of one fixed-size component type, as packed records of `size` bytes in one
/// dense array, in the order they were added; removing one moves the last into its place.
///
/// The array is kept in `u64` words, so it is 8-byte aligned and a plugin can view records
/// of plain f64 types (`Pose`, `Vec3`) in place.
pub(crate) struct Records {
    size: usize,
    words: Vec<u64>,
    len: usize,
    /// Entity slot (specs index) → record, [`ABSENT`] if none.
    slot_of: Vec<u32>,
    /// Record → entity slot.
    index_at: Vec<Index>,
}

impl Records {
    pub(crate) fn new(size: usize) -> Records {
        Records { size, words: Vec::new(), len: 0, slot_of: Vec::new(), index_at: Vec::new() }
    }

    /// Bytes per record.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// The record of an entity slot.
    #[inline]
    pub(crate) fn record_of(&self, index: Index) -> Option<u32> {
        self.slot_of.get(index as usize).copied().filter(|&r| r != ABSENT)
    }

    /// The entity slot of a record.
    #[inline]
    pub(crate) fn index_at(&self, record: u32) -> Index {
        self.index_at[record as usize]
    }

    /// Every record, packed.
    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[..self.len * self.size]
    }

    /// Every record, packed and writable.
    #[inline]
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        let n = self.len * self.size;
        &mut bytemuck::cast_slice_mut(&mut self.words)[..n]
    }

    /// The bytes of an entity slot's value.
    #[inline]
    pub(crate) fn get(&self, index: Index) -> Option<&[u8]> {
        let r = self.record_of(index)? as usize;
        Some(&self.bytes()[r * self.size..(r + 1) * self.size])
    }

    /// Inserts or replaces the value of an entity slot from its first `size` bytes of
    /// `bytes` (a longer byte form carries fields of a newer writer); answers whether the
    /// stored bytes changed.
    pub(crate) fn set(&mut self, index: Index, bytes: &[u8]) -> bool {
        let size = self.size;
        let bytes = &bytes[..size];
        if let Some(r) = self.record_of(index) {
            let record = &mut self.bytes_mut()[r as usize * size..(r as usize + 1) * size];
            if record == bytes {
                return false;
            }
            record.copy_from_slice(bytes);
            return true;
        }
        let r = self.len;
        self.len += 1;
        let words = (self.len * size).div_ceil(8);
        if self.words.len() < words {
            self.words.resize(words, 0);
        }
        self.bytes_mut()[r * size..].copy_from_slice(bytes);
        if self.slot_of.len() <= index as usize {
            self.slot_of.resize(index as usize + 1, ABSENT);
        }
        self.slot_of[index as usize] = r as u32;
        self.index_at.push(index);
        true
    }

    /// Removes the value of an entity slot; false if absent.
    pub(crate) fn remove(&mut self, index: Index) -> bool {
        let Some(r) = self.record_of(index) else { return false };
        let (r, last, size) = (r as usize, self.len - 1, self.size);
        if r != last {
            self.bytes_mut().copy_within(last * size..(last + 1) * size, r * size);
            let moved = self.index_at[last];
            self.index_at[r] = moved;
            self.slot_of[moved as usize] = r as u32;
        }
        self.index_at.pop();
        self.slot_of[index as usize] = ABSENT;
        self.len = last;
        true
    }
}

/// The [`Store`] methods of a fixed-size type, on its records; `check` validates bytes
/// before they are stored.
macro_rules! records_store_methods {
    ($check:expr) => {
        fn get(&self, world: &World, entity: Entity, out: &mut Vec<u8>) -> bool {
            let _ = world;
            match self.records.get(entity.id()) {
                Some(bytes) => {
                    out.extend_from_slice(bytes);
                    true
                }
                None => false,
            }
        }
        fn set(&mut self, _: &World, entity: Entity, bytes: &[u8]) -> Result<bool, DecodeError> {
            ($check)(self, bytes)?;
            Ok(self.records.set(entity.id(), bytes))
        }
        fn remove(&mut self, _: &World, entity: Entity) -> bool {
            self.records.remove(entity.id())
        }
        fn forget(&mut self, index: Index) {
            self.records.remove(index);
        }
        fn get_many(&self, _: &World, entities: &[Entity], out: &mut Vec<u8>) -> bool {
            out.reserve(entities.len() * self.records.size());
            entities.iter().all(|e| match self.records.get(e.id()) {
                Some(bytes) => {
                    out.extend_from_slice(bytes);
                    true
                }
                None => false,
            })
        }
        fn records(&self) -> Option<&Records> {
            Some(&self.records)
        }
        fn records_mut(&mut self) -> Option<&mut Records> {
            Some(&mut self.records)
        }
    };
}

/// A built-in component type: records if it has a fixed size, else a specs
/// `DenseVecStorage` of the decoded values.
pub(crate) struct TypedStore<C> {
    /// Present for fixed-size types.
    fixed: Option<FixedStore<C>>,
}

impl<C: Component> TypedStore<C> {
    pub(crate) fn new() -> Self {
        let fixed = C::FIXED_SIZE.map(|size| FixedStore { records: Records::new(size), _c: PhantomData });
        TypedStore { fixed }
    }
}

/// A built-in fixed-size type's records; bytes are checked by decoding them as `C` before
/// they are stored.
pub(crate) struct FixedStore<C> {
    records: Records,
    _c: PhantomData<fn() -> C>,
}

impl<C: Component> Store for FixedStore<C> {
    records_store_methods!(|store: &Self, bytes: &[u8]| -> Result<(), DecodeError> {
        let _ = store;
        C::from_bytes(bytes).map(|_| ())
    });
    fn register(&self, _: &mut World) {}
}

impl<C: Component + PartialEq> Store for TypedStore<C> {
    fn get(&self, world: &World, entity: Entity, out: &mut Vec<u8>) -> bool {
        if let Some(fixed) = &self.fixed {
            return fixed.get(world, entity, out);
        }
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
        if let Some(fixed) = &mut self.fixed {
            return fixed.set(world, entity, bytes);
        }
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
        match &mut self.fixed {
            Some(fixed) => fixed.remove(world, entity),
            None => world.write_storage::<Stored<C>>().remove(entity).is_some(),
        }
    }
    fn forget(&mut self, index: Index) {
        if let Some(fixed) = &mut self.fixed {
            fixed.forget(index);
        }
    }
    fn register(&self, world: &mut World) {
        if self.fixed.is_none() {
            world.register::<Stored<C>>();
        }
    }
    // The bulk paths fetch the storage once per call, not once per entity.
    fn get_many(&self, world: &World, entities: &[Entity], out: &mut Vec<u8>) -> bool {
        if let Some(fixed) = &self.fixed {
            return fixed.get_many(world, entities, out);
        }
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
    fn set_many(
        &mut self,
        world: &World,
        entities: &[Entity],
        data: &[u8],
        size: usize,
        changed: &mut Vec<bool>,
    ) -> Result<(), DecodeError> {
        if let Some(fixed) = &mut self.fixed {
            for (i, e) in entities.iter().enumerate() {
                changed.push(fixed.set(world, *e, &data[i * size..(i + 1) * size])?);
            }
            return Ok(());
        }
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
    fn records(&self) -> Option<&Records> {
        self.fixed.as_ref().map(|f| &f.records)
    }
    fn records_mut(&mut self) -> Option<&mut Records> {
        self.fixed.as_mut().map(|f| &mut f.records)
    }
}

/// A third-party component type of fixed size, known only by name and bytes.
pub(crate) struct BlobRecords {
    records: Records,
}

impl BlobRecords {
    pub(crate) fn new(size: usize) -> Self {
        BlobRecords { records: Records::new(size) }
    }
}

impl Store for BlobRecords {
    records_store_methods!(|store: &Self, bytes: &[u8]| -> Result<(), DecodeError> {
        let size = store.records.size();
        if bytes.len() < size {
            return Err(DecodeError {
                what: "a registered component",
                reason: format!("needs {size} bytes, got {}", bytes.len()),
            });
        }
        Ok(())
    });
    fn register(&self, _: &mut World) {}
}

/// A third-party component type of variable size, known only by name and bytes.
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

#[cfg(test)]
mod tests {
    use super::Records;

    fn bytes(v: u32) -> [u8; 4] {
        v.to_le_bytes()
    }

    #[test]
    fn records_stay_dense_through_removals() {
        let mut r = Records::new(4);
        for index in [5, 1, 9, 3] {
            assert!(r.set(index, &bytes(index * 10)));
        }
        assert!(!r.set(9, &bytes(90)), "same bytes: no change");
        assert!(r.set(9, &bytes(91)));
        assert!(r.remove(1));
        assert!(!r.remove(1));
        // The last record (slot 3) moved into the hole left by slot 1.
        assert_eq!(r.bytes().len(), 12);
        assert_eq!(r.record_of(3), Some(1));
        assert_eq!(r.index_at(1), 3);
        for (index, value) in [(5, 50), (9, 91), (3, 30)] {
            assert_eq!(r.get(index), Some(&bytes(value)[..]), "slot {index}");
        }
        assert_eq!(r.get(1), None);
        assert!(r.set(1, &bytes(7)));
        assert_eq!(r.get(1), Some(&bytes(7)[..]));
        for index in [5, 9, 3, 1] {
            assert!(r.remove(index));
        }
        assert!(r.bytes().is_empty());
    }

    #[test]
    fn records_are_eight_byte_aligned() {
        let mut r = Records::new(56);
        r.set(0, &[1; 56]);
        r.set(1, &[2; 60]);
        assert_eq!(r.bytes().as_ptr() as usize % 8, 0);
        assert_eq!(r.get(1), Some(&[2; 56][..]), "bytes past the fixed size are not stored");
    }
}
