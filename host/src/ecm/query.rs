//! Queries and bulk access: which entities have a set of components, their fixed-size
//! values copied out ([`Ecm::query_read`], [`Ecm::read_many`]) or lent in place
//! ([`Ecm::lend_records_mut`]), and bulk writes ([`Ecm::write_many`]).

use super::*;

/// Replaces `ids` and `slots` with the id and `slot(index)` of each index that passes
/// `filter`, at most `bound` of them. A tight loop: indexed stores into buffers sized up
/// front (pushes and captured state reloaded length and pointers from memory on every hit).
#[inline]
fn collect_hits(
    indices: impl Iterator<Item = Index>,
    filter: Option<&BitSet>,
    id_of: &[EntityId],
    slot_of: impl Fn(Index) -> u32,
    bound: usize,
    ids: &mut Vec<EntityId>,
    slots: &mut Vec<u32>,
) {
    ids.clear();
    slots.clear();
    ids.resize(bound, EntityId::NULL);
    slots.resize(bound, 0);
    let (id_buf, slot_buf) = (ids.as_mut_slice(), slots.as_mut_slice());
    let mut n = 0;
    for index in indices {
        if filter.is_some_and(|f| !f.contains(index)) {
            continue;
        }
        // `bound` is the population of the set walked, so this never stops early.
        let (Some(id), Some(slot)) = (id_buf.get_mut(n), slot_buf.get_mut(n)) else { break };
        *id = id_of[index as usize];
        *slot = slot_of(index);
        n += 1;
    }
    ids.truncate(n);
    slots.truncate(n);
}

impl Ecm {
    pub(super) fn ids_of(&self, set: &BitSet) -> Vec<EntityId> {
        let mut out: Vec<EntityId> = set.iter().map(|i| self.id_of[i as usize]).collect();
        if !out.is_sorted() {
            out.sort_unstable();
        }
        out
    }

    /// Replaces `ids` and `slots` with the entities that have every component in `types`
    /// and their specs slots, ascending by id (unknown types match nothing).
    pub(super) fn query_slots(
        &self,
        which: Which,
        types: &[ComponentTypeId],
        ids: &mut Vec<EntityId>,
        slots: &mut Vec<Index>,
    ) {
        self.query_mapped(which, types, |index| index, ids, slots);
    }

    /// Like [`Ecm::query_slots`] with `slot(index)` in place of each specs slot (a record
    /// number, for lending: one pass instead of two).
    #[inline]
    fn query_mapped(
        &self,
        which: Which,
        types: &[ComponentTypeId],
        slot: impl Fn(Index) -> u32,
        ids: &mut Vec<EntityId>,
        slots: &mut Vec<u32>,
    ) {
        ids.clear();
        slots.clear();
        let mut cols: Vec<&Column> = Vec::with_capacity(types.len());
        for ty in types {
            match self.column_of.get(ty) {
                Some(&ci) => cols.push(&self.columns[ci]),
                None => return,
            }
        }
        // The rarest component first: it bounds the walk.
        cols.sort_by_key(|c| c.count);
        let filter: Option<&BitSet> = match which {
            Which::NEW => Some(&self.new),
            Which::REMOVED => Some(&self.removal),
            _ => None,
        };
        let id_of = self.id_of.as_slice();
        let bound = cols.first().map_or(self.by_id.len(), |c| c.count);
        match (cols.as_slice(), filter) {
            ([], _) => collect_hits((&self.alive).iter(), filter, id_of, slot, bound, ids, slots),
            ([a], _) => collect_hits((&a.has).iter(), filter, id_of, slot, bound, ids, slots),
            // The common case: two components, all entities. The word-wise AND of the two
            // bit sets, as a specs join walks it.
            ([a, b], None) => {
                collect_hits(specs::hibitset::BitSetAnd(&a.has, &b.has).iter(), None, id_of, slot, bound, ids, slots)
            }
            ([a, b, rest @ ..], _) => {
                let both = specs::hibitset::BitSetAnd(&a.has, &b.has).iter();
                collect_hits(
                    both.filter(|&i| rest.iter().all(|c| c.has.contains(i))),
                    filter,
                    id_of,
                    slot,
                    bound,
                    ids,
                    slots,
                )
            }
        }
        if !ids.is_sorted() {
            // Slots are reused after removals, so slot order can differ from id order.
            let mut pairs: Vec<(EntityId, u32)> = ids.iter().copied().zip(slots.iter().copied()).collect();
            pairs.sort_unstable_by_key(|p| p.0);
            ids.clear();
            slots.clear();
            for (id, slot) in pairs {
                ids.push(id);
                slots.push(slot);
            }
        }
    }

    /// Entities with every component in `types`, ascending.
    pub fn query(&self, which: Which, types: &[ComponentTypeId]) -> Vec<EntityId> {
        let (mut ids, mut slots) = (Vec::new(), Vec::new());
        self.query_slots(which, types, &mut ids, &mut slots);
        ids
    }

    /// The column of a fixed-size component that `types` includes, for a bulk read.
    fn fixed_column(&self, what: &str, types: &[ComponentTypeId], ty: ComponentTypeId) -> Result<usize, EcmError> {
        let ci = self.column(ty)?;
        let col = &self.columns[ci];
        if col.fixed_size.is_none() {
            return Err(EcmError::new(format!("{} has no fixed size", col.name)));
        }
        if !types.contains(&ty) {
            return Err(EcmError::new(format!("{what} of {} must include it in the query", col.name)));
        }
        Ok(ci)
    }

    pub(super) fn take_scratch(&self) -> Scratch {
        match self.scratch.try_lock() {
            Ok(mut scratch) => std::mem::take(&mut *scratch),
            // In use by an enclosing call (a plugin reading inside a lent read): fresh ones.
            Err(_) => Scratch::default(),
        }
    }

    pub(super) fn put_scratch(&self, scratch: Scratch) {
        if let Ok(mut slot) = self.scratch.try_lock() {
            *slot = scratch;
        }
    }

    /// Like [`Ecm::query`], also appending the packed bytes of fixed-size component `read`.
    pub fn query_read(
        &self,
        which: Which,
        types: &[ComponentTypeId],
        read: ComponentTypeId,
        ids: &mut Vec<EntityId>,
        data: &mut Vec<u8>,
    ) -> Result<(), EcmError> {
        let mut scratch = self.take_scratch();
        let result = self.query_read_with(which, types, read, ids, data, &mut scratch.records);
        self.put_scratch(scratch);
        result
    }

    /// [`Ecm::query_read`] with a buffer for the specs slots.
    pub(super) fn query_read_with(
        &self,
        which: Which,
        types: &[ComponentTypeId],
        read: ComponentTypeId,
        ids: &mut Vec<EntityId>,
        data: &mut Vec<u8>,
        slots: &mut Vec<Index>,
    ) -> Result<(), EcmError> {
        let ci = self.fixed_column("query_read", types, read)?;
        self.query_slots(which, types, ids, slots);
        data.clear();
        let store = &self.columns[ci].store;
        match store.records() {
            Some(records) => {
                data.reserve(ids.len() * records.size());
                for &index in slots.iter() {
                    // Cannot miss: the query included `read`.
                    data.extend_from_slice(records.get(index).unwrap_or_default());
                }
            }
            None => {
                let entities = self.world.entities();
                let slots: Vec<Entity> = slots.iter().map(|&i| entities.entity(i)).collect();
                store.get_many(&self.world, &slots, data);
            }
        }
        Ok(())
    }

    /// Lends the records of fixed-size component `ty` of the entities that have every type
    /// in `types` (which must include `ty`), in place: `visit(ids, records, bytes, changed)`
    /// finds entity `ids[i]` (ascending) at `bytes[records[i] * size..][..size]` and pushes
    /// `i` into `changed` for each value it changed. Those are then flagged `change`.
    /// `ParentEntity` cannot be lent writable (the graph follows it): use `set`.
    pub fn lend_records_mut(
        &mut self,
        which: Which,
        types: &[ComponentTypeId],
        ty: ComponentTypeId,
        change: Change,
        visit: impl FnOnce(&[EntityId], &[u32], &mut [u8], &mut Vec<u32>),
    ) -> Result<(), EcmError> {
        let ci = self.fixed_column("lend_records_mut", types, ty)?;
        if ty == ParentEntity::ID {
            return Err(EcmError::new("ParentEntity cannot be lent writable: set it (or use set_parent)"));
        }
        let mut scratch = std::mem::take(self.scratch.get_mut().unwrap_or_else(PoisonError::into_inner));
        let Some(records) = self.columns[ci].store.records() else {
            return Err(EcmError::new(format!("{} is not stored as records", self.columns[ci].name)));
        };
        // Every hit has `ty` (the query includes it), so `record_of` cannot miss.
        self.query_mapped(
            which,
            types,
            |index| records.record_of(index).unwrap_or(0),
            &mut scratch.ids,
            &mut scratch.records,
        );
        let Scratch { ids, records: positions, changed, .. } = &mut scratch;
        let Column { store, one_time, periodic, .. } = &mut self.columns[ci];
        let records = store.records_mut().unwrap_or_else(|| unreachable!());
        changed.clear();
        visit(ids, positions, records.bytes_mut(), changed);
        let was_clean = one_time.is_empty() && periodic.is_empty();
        let one_time_empty = one_time.is_empty();
        let mut bad = None;
        for &i in changed.iter() {
            let Some(&record) = positions.get(i as usize) else {
                bad = Some(i);
                break;
            };
            let index = records.index_at(record);
            match change {
                Change::None => {}
                // A one-time flag wins over a periodic one; with none set (the steady
                // state) there is nothing to look up.
                Change::Periodic if one_time_empty || !one_time.contains(index) => {
                    periodic.add(index);
                }
                Change::Periodic => {}
                Change::OneTime => {
                    periodic.remove(index);
                    one_time.add(index);
                }
            }
        }
        if was_clean && !(one_time.is_empty() && periodic.is_empty()) {
            self.dirty.push(ci);
        }
        if let Some(i) = bad {
            let n = ids.len();
            *self.scratch.get_mut().unwrap_or_else(PoisonError::into_inner) = scratch;
            return Err(EcmError::new(format!("lend_records_mut: changed index {i} of {n} values")));
        }
        *self.scratch.get_mut().unwrap_or_else(PoisonError::into_inner) = scratch;
        Ok(())
    }

    /// Lends the records of fixed-size component `ty` of the entities that have every type
    /// in `types` (which must include `ty`), read-only: `visit(ids, records, bytes)` as in
    /// [`Ecm::lend_records_mut`].
    pub fn lend_records(
        &self,
        which: Which,
        types: &[ComponentTypeId],
        ty: ComponentTypeId,
        visit: impl FnOnce(&[EntityId], &[u32], &[u8]),
    ) -> Result<(), EcmError> {
        let ci = self.fixed_column("lend_records", types, ty)?;
        let col = &self.columns[ci];
        let records =
            col.store.records().ok_or_else(|| EcmError::new(format!("{} is not stored as records", col.name)))?;
        let mut scratch = self.take_scratch();
        self.query_mapped(
            which,
            types,
            |index| records.record_of(index).unwrap_or(0),
            &mut scratch.ids,
            &mut scratch.records,
        );
        visit(&scratch.ids, &scratch.records, records.bytes());
        self.put_scratch(scratch);
        Ok(())
    }

    /// Appends the packed bytes of fixed-size component `ty` of each entity.
    pub fn read_many(&self, ty: ComponentTypeId, entities: &[EntityId], out: &mut Vec<u8>) -> Result<(), EcmError> {
        let ci = self.column(ty)?;
        let col = &self.columns[ci];
        col.fixed_size.ok_or_else(|| EcmError::new(format!("{} has no fixed size", col.name)))?;
        let mut slots = Vec::with_capacity(entities.len());
        for &id in entities {
            let entity = self.entity(id)?;
            if !col.has.contains(entity.id()) {
                return Err(EcmError::new(format!("entity {id} has no {}", col.name)));
            }
            slots.push(entity);
        }
        col.store.get_many(&self.world, &slots, out);
        Ok(())
    }

    /// Writes fixed-size component `ty` of each entity from packed bytes.
    pub fn write_many(
        &mut self,
        ty: ComponentTypeId,
        entities: &[EntityId],
        data: &[u8],
        change: Change,
    ) -> Result<(), EcmError> {
        let ci = self.column(ty)?;
        let name = &self.columns[ci].name;
        let size = self.columns[ci].fixed_size.ok_or_else(|| EcmError::new(format!("{name} has no fixed size")))?;
        if data.len() != size * entities.len() {
            return Err(EcmError::new(format!(
                "write_many {name}: {} bytes for {} entities of {size} bytes",
                data.len(),
                entities.len()
            )));
        }
        if ty == ParentEntity::ID || size == 0 {
            // The graph (and markers, which have no bytes to split) take the general path.
            for (i, &id) in entities.iter().enumerate() {
                self.set_raw(id, ty, &data[i * size..(i + 1) * size], change)?;
            }
            return Ok(());
        }
        let slots = entities.iter().map(|&id| self.entity(id)).collect::<Result<Vec<_>, _>>()?;
        let mut changed = Vec::with_capacity(slots.len());
        let col = &mut self.columns[ci];
        col.store
            .set_many(&self.world, &slots, data, size, &mut changed)
            .map_err(|e| EcmError::new(format!("write_many {}: {e}", col.name)))?;
        for (slot, changed) in slots.iter().zip(changed) {
            let created = !self.columns[ci].has.add(slot.id());
            if created {
                self.columns[ci].count += 1;
                self.structure += 1;
            }
            let flag = if created {
                Change::OneTime
            } else if changed {
                change
            } else {
                Change::None
            };
            self.flag_column(ci, slot.id(), flag);
        }
        Ok(())
    }
}
