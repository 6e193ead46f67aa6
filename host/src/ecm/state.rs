//! What the state module (`crate::state`) needs from the ECM's internals: the components
//! flagged changed this step, read column by column instead of probing every entity.

use super::{Ecm, EntityState};
use plugin_api::{Change, ComponentTypeId, EntityId};
use specs::hibitset::BitSetLike;

impl Ecm {
    /// Every component flagged one-time or periodic this step, as (entity, type, change),
    /// sorted by entity then type.
    pub(crate) fn changed_components(&self) -> Vec<(EntityId, ComponentTypeId, Change)> {
        let mut out = Vec::new();
        for &ci in &self.dirty {
            let col = &self.columns[ci];
            for index in (&col.one_time).iter() {
                out.push((self.id_of[index as usize], col.id, Change::OneTime));
            }
            for index in (&col.periodic).iter() {
                out.push((self.id_of[index as usize], col.id, Change::Periodic));
            }
        }
        // A column appears in `dirty` once per step, but sort anyway: ids are not in slot
        // order once slots are reused.
        out.sort_unstable_by_key(|&(id, ty, _)| (id, ty));
        out.dedup_by_key(|&mut (id, ty, _)| (id, ty));
        out
    }

    /// Every component of one entity in byte form, sorted by type id.
    pub(crate) fn entity_state(&self, id: EntityId) -> Option<EntityState> {
        let entity = *self.by_id.get(&id)?;
        let mut components: Vec<(ComponentTypeId, Vec<u8>)> = self
            .columns
            .iter()
            .filter(|c| c.has.contains(entity.id()))
            .map(|c| {
                let mut bytes = Vec::new();
                c.store.get(&self.world, entity, &mut bytes);
                (c.id, bytes)
            })
            .collect();
        components.sort_unstable_by_key(|c| c.0);
        Some(EntityState { id, components })
    }
}
