//! The `state` topic's changes between two publications.

use plugin_api::msgs::{SerializedEntityMap, SerializedStateMap};
use std::collections::BTreeMap;

/// The changes of the steps since the last publication, merged: a later value of a
/// component replaces an earlier one, and an entity's removal replaces what it had.
#[derive(Default)]
pub struct Pending {
    entities: BTreeMap<u64, SerializedEntityMap>,
    one_time: bool,
}

impl Pending {
    /// Adds one step's changed state; answers whether it holds a change that must go out at
    /// once (a new or removed entity, a one-time component change, a removed component).
    pub fn merge(&mut self, step: SerializedStateMap) -> bool {
        let mut event = step.has_one_time_component_changes;
        for (id, entity) in step.entities {
            if entity.remove {
                event = true;
                self.entities.insert(id, entity);
                continue;
            }
            let entry = self.entities.entry(id).or_insert_with(|| SerializedEntityMap { id, ..Default::default() });
            if entry.remove {
                *entry = SerializedEntityMap { id, ..Default::default() };
            }
            entry.components.extend(entity.components);
        }
        self.one_time |= event;
        event
    }

    /// The merged changes as one state map (header left to the caller), emptying this.
    pub fn take(&mut self) -> SerializedStateMap {
        let state = SerializedStateMap {
            header: None,
            entities: std::mem::take(&mut self.entities),
            has_one_time_component_changes: self.one_time,
        };
        self.one_time = false;
        state
    }

    /// Forgets everything (a full state went out instead).
    pub fn clear(&mut self) {
        self.entities.clear();
        self.one_time = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::msgs::SerializedComponent;

    fn comp(ty: u64, byte: u8) -> (u64, SerializedComponent) {
        (ty, SerializedComponent { r#type: ty, component: vec![byte], remove: false })
    }

    fn step(entities: Vec<SerializedEntityMap>, one_time: bool) -> SerializedStateMap {
        SerializedStateMap {
            header: None,
            entities: entities.into_iter().map(|e| (e.id, e)).collect(),
            has_one_time_component_changes: one_time,
        }
    }

    #[test]
    fn later_values_replace_earlier_ones_and_removal_replaces_all() {
        let mut p = Pending::default();
        let e = |id, c: Vec<(u64, SerializedComponent)>, remove| SerializedEntityMap {
            id,
            components: c.into_iter().collect(),
            remove,
        };
        assert!(!p.merge(step(vec![e(1, vec![comp(7, 1), comp(8, 1)], false), e(2, vec![comp(7, 1)], false)], false)));
        assert!(!p.merge(step(vec![e(1, vec![comp(7, 2)], false)], false)));
        assert!(p.merge(step(vec![e(2, vec![], true)], false)), "a removal is an event");
        let s = p.take();
        assert!(s.has_one_time_component_changes);
        assert_eq!(s.entities[&1].components[&7].component, vec![2]);
        assert_eq!(s.entities[&1].components[&8].component, vec![1]);
        assert!(s.entities[&2].remove && s.entities[&2].components.is_empty());
        let empty = p.take();
        assert!(empty.entities.is_empty() && !empty.has_one_time_component_changes);
    }
}
