//! How one world is split between the processes of a distributed run (docs/distributed.md), as
//! functions of the ECM and of state maps; the driver's [`server_sim`](super::driver::server_sim)
//! calls them around each step.
//!
//! * A **performer** is simulated by one secondary: its model and every descendant (the
//!   performer entity among them) exist there and nowhere else but on the primary, which
//!   mirrors them. A **level's content** exists on the secondary the level is assigned to
//!   (and on the primary while some performer is in it). Everything else (the world, static
//!   models of the default level) exists everywhere.
//! * **Hand-over**: the primary sends the whole state of a performer's entities
//!   ([`handover_state`]); the new owner creates them from it ([`subtree_of`]).
//! * **Answers**: a secondary answers the changes of the entities it simulates
//!   ([`SplitOwnership::mine`]); the primary applies them before its own systems run.
//! * **Forwarding**: what the primary's own systems changed (user commands: a pose set, a
//!   model spawned or removed) goes down with the next step ([`primary_changes`]): changes
//!   of a performer's entities to its owner only, the rest to every secondary. Level
//!   bookkeeping stays local: every process decides or follows levels itself.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

use plugin_api::components::{
    DefaultLevel, LevelAssigned, LevelEntityNames, LevelLoaded, Model, Name, ParentEntity, Performer,
    PerformerAffinity, PerformerLevels, PerformerRef,
};
use plugin_api::msgs::{SerializedComponent, SerializedEntityMap, SerializedStateMap};
use plugin_api::{Change, Component, ComponentTypeId, EntityId, Which};

use super::PerformerId;
use crate::ecm::Ecm;
use crate::runner::Ownership;
use crate::state::{self, Stamp};

/// Component types every process keeps for itself: level bookkeeping (each process decides
/// or follows levels on its own) and the affinity the primary tracks.
const LOCAL_COMPONENTS: [ComponentTypeId; 4] =
    [PerformerLevels::ID, PerformerAffinity::ID, LevelLoaded::ID, LevelAssigned::ID];

/// Each performer's model (the performer entity's parent), for every performer in `ecm`.
pub fn performer_models(ecm: &Ecm) -> BTreeMap<PerformerId, EntityId> {
    ecm.query(Which::ALL, &[Performer::ID]).into_iter().filter_map(|p| ecm.parent(p).map(|m| (p.0, m))).collect()
}

/// The whole state of every `moving` performer's model and its descendants: what goes down
/// with the step in which they change secondary.
pub fn handover_state(ecm: &Ecm, moving: &[PerformerId], stamp: Stamp) -> SerializedStateMap {
    let models = performer_models(ecm);
    let ids: Vec<EntityId> = moving.iter().filter_map(|p| models.get(p)).flat_map(|&m| ecm.descendants(m)).collect();
    state::entities_state(ecm, ids, stamp)
}

fn parent_in_map(map: &SerializedStateMap, id: u64) -> Option<u64> {
    let entry = map.entities.get(&id)?;
    let bytes = &entry.components.get(&ParentEntity::ID.0)?.component;
    ParentEntity::from_bytes(bytes).ok().map(|p| p.0 .0).filter(|p| *p != 0)
}

/// The model of performer `p` in a hand-over map (the performer entity's parent).
pub fn model_in_map(map: &SerializedStateMap, p: PerformerId) -> Option<u64> {
    parent_in_map(map, p)
}

/// The entries of `map` whose parent chain, inside the map, reaches `root` (root included).
pub fn subtree_of(map: &SerializedStateMap, root: u64) -> SerializedStateMap {
    let mut out =
        SerializedStateMap { header: map.header.clone(), has_one_time_component_changes: true, ..Default::default() };
    for (&id, entry) in &map.entities {
        let mut current = Some(id);
        // Bounded: a malformed map may hold a parent cycle.
        for _ in 0..64 {
            match current {
                Some(c) if c == root => {
                    out.entities.insert(id, entry.clone());
                    break;
                }
                Some(c) => current = parent_in_map(map, c),
                None => break,
            }
        }
    }
    out
}

/// Keeps the entries of `map` whose entity id passes `keep`.
pub fn retain_entities(map: &mut SerializedStateMap, keep: impl Fn(u64) -> bool) {
    map.entities.retain(|id, _| keep(*id));
}

/// The top-level entity (a child of the world) `id` descends from, or `id` itself.
fn top_level(ecm: &Ecm, id: EntityId, world: EntityId) -> EntityId {
    let mut current = id;
    for _ in 0..64 {
        match ecm.parent(current) {
            Some(p) if p != world => current = p,
            _ => break,
        }
    }
    current
}

/// The present entities some level holds: top-level entities named in a level's
/// `LevelEntityNames` (not the default level's), and their descendants.
pub fn level_content(ecm: &Ecm, world: EntityId) -> BTreeSet<EntityId> {
    let names: BTreeSet<String> = ecm
        .query(Which::ALL, &[LevelEntityNames::ID])
        .into_iter()
        .filter(|&l| !ecm.has_component(l, DefaultLevel::ID))
        .filter_map(|l| ecm.get::<LevelEntityNames>(l))
        .flat_map(|n| n.0)
        .collect();
    if names.is_empty() {
        return BTreeSet::new();
    }
    ecm.children(world)
        .filter(|&c| ecm.get::<Name>(c).is_some_and(|n| names.contains(&n.0)))
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|c| ecm.descendants(c))
        .collect()
}

/// The values a step's answers set (borrowed from the answers), to tell them from what the
/// primary's own systems did.
pub type Applied<'a> = BTreeMap<(u64, u64), &'a [u8]>;

/// Records the component values of `answer` in `applied`.
pub fn note_applied<'a>(applied: &mut Applied<'a>, answer: &'a SerializedStateMap) {
    for (&id, e) in &answer.entities {
        for (&ty, c) in &e.components {
            if !c.remove {
                applied.insert((id, ty), c.component.as_slice());
            }
        }
    }
}

/// What the primary's own systems changed in one step, to go down with the next.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Forward {
    /// For every secondary: the world, shared models, removals.
    pub shared: SerializedStateMap,
    /// For the owner of each performer only: changes of its entities.
    pub performers: BTreeMap<PerformerId, SerializedStateMap>,
}

impl Forward {
    /// Nothing to send.
    pub fn is_empty(&self) -> bool {
        self.shared.entities.is_empty() && self.performers.is_empty()
    }
}

/// Splits the primary's step `changes` (from [`crate::state::changed_state`], taken after its
/// step) into what its own systems did, minus the values the step's answers set
/// (`applied`), level content (`levels`: ids ever seen as a level's), and [`LOCAL_COMPONENTS`].
/// Changes of a performer's entities go to its owner; removals and the rest to everyone.
pub fn primary_changes(
    changes: &SerializedStateMap,
    applied: &Applied,
    ecm: &Ecm,
    world: EntityId,
    levels: &HashSet<EntityId>,
) -> Forward {
    // Asked for once, and only when something is to go down (most steps: nothing).
    let mut models: Option<BTreeMap<EntityId, PerformerId>> = None;
    let mut out = Forward::default();
    for (&key, entry) in &changes.entities {
        let id = EntityId(key);
        if levels.contains(&id) {
            continue;
        }
        if entry.remove {
            out.shared.entities.insert(key, entry.clone());
            continue;
        }
        // Most changes are the answers' values coming back: only the rest is copied.
        let own = |(&ty, c): &(&u64, &SerializedComponent)| {
            !LOCAL_COMPONENTS.contains(&ComponentTypeId(ty))
                && applied.get(&(key, ty)).is_none_or(|v| c.remove || *v != c.component.as_slice())
        };
        if !entry.components.iter().any(|c| own(&c)) {
            continue;
        }
        let components = entry.components.iter().filter(own).map(|(&ty, c)| (ty, c.clone())).collect();
        let entry = SerializedEntityMap { id: entry.id, components, remove: false };
        let top = top_level(ecm, id, world);
        let models = models.get_or_insert_with(|| performer_models(ecm).into_iter().map(|(p, m)| (m, p)).collect());
        let performer = if ecm.has_component(top, Model::ID) { models.get(&top).copied() } else { None };
        let target = match performer {
            Some(p) => out.performers.entry(p).or_insert_with(|| SerializedStateMap {
                header: changes.header.clone(),
                has_one_time_component_changes: true,
                ..Default::default()
            }),
            None => &mut out.shared,
        };
        target.entities.insert(key, entry);
    }
    if !out.shared.entities.is_empty() {
        out.shared.header = changes.header.clone();
        out.shared.has_one_time_component_changes = true;
    }
    out
}

/// Top-level dynamic models that are not performers and no level holds: in a distributed run
/// every secondary would simulate its own copy of each.
pub fn unsplit_dynamic_models(ecm: &Ecm, world: EntityId) -> Vec<EntityId> {
    let candidates: Vec<EntityId> = ecm.children(world).collect();
    unsplit_among(ecm, world, &candidates)
}

/// Those of `candidates` (top-level entities) that are [`unsplit_dynamic_models`].
pub fn unsplit_among(ecm: &Ecm, world: EntityId, candidates: &[EntityId]) -> Vec<EntityId> {
    let dynamic_models: Vec<EntityId> = candidates
        .iter()
        .copied()
        .filter(|&c| {
            ecm.has_component(c, Model::ID) && !ecm.get::<plugin_api::components::Static>(c).is_some_and(|s| s.0)
        })
        .collect();
    if dynamic_models.is_empty() {
        return Vec::new();
    }
    let performers: BTreeSet<EntityId> = performer_models(ecm).into_values().collect();
    let levels = level_content(ecm, world);
    dynamic_models.into_iter().filter(|c| !performers.contains(c) && !levels.contains(c)).collect()
}

/// The entities of `changes` created as children of `world` this step (a new entity's
/// entry carries its `ParentEntity`; a changed one's does not, parents do not change).
pub fn new_top_level(changes: &SerializedStateMap, world: EntityId) -> Vec<EntityId> {
    changes
        .entities
        .iter()
        .filter(|(_, e)| !e.remove)
        .filter(|(_, e)| {
            e.components
                .get(&ParentEntity::ID.0)
                .and_then(|c| ParentEntity::from_bytes(&c.component).ok())
                .is_some_and(|p| p.0 == world)
        })
        .map(|(&id, _)| EntityId(id))
        .collect()
}

/// Which entities this process simulates, for [`Ownership`] (what systems ask through
/// `Host::owns_entity`) and for the answers of a secondary.
///
/// * A secondary owns the entities of the performers it simulates and of the levels it
///   holds; secondary index 0 also owns everything no performer or level holds (the shared
///   world), so a system attached to a static model acts in exactly one process.
/// * The primary owns nothing: it simulates nothing, it mirrors.
#[derive(Debug, Default)]
pub struct SplitOwnership {
    mine: RwLock<HashSet<EntityId>>,
    split: RwLock<HashSet<EntityId>>,
    rest: AtomicBool,
}

impl SplitOwnership {
    /// Nothing owned yet.
    pub fn new() -> SplitOwnership {
        SplitOwnership::default()
    }

    /// Sets the entities simulated here and the entities simulated by one process only
    /// (every performer's and level's, known so far).
    pub fn update(&self, mine: HashSet<EntityId>, split: impl IntoIterator<Item = EntityId>) {
        self.split.write().unwrap_or_else(|e| e.into_inner()).extend(split);
        *self.mine.write().unwrap_or_else(|e| e.into_inner()) = mine;
    }

    /// Whether this process also owns the shared rest of the world (secondary index 0).
    pub fn set_rest(&self, rest: bool) {
        self.rest.store(rest, Ordering::Relaxed);
    }

    /// Whether `entity` is one this process simulates as a performer's or level's.
    pub fn mine(&self, entity: u64) -> bool {
        self.mine.read().unwrap_or_else(|e| e.into_inner()).contains(&EntityId(entity))
    }
}

impl Ownership for SplitOwnership {
    fn owns(&self, entity: EntityId) -> bool {
        if self.mine.read().unwrap_or_else(|e| e.into_inner()).contains(&entity) {
            return true;
        }
        self.rest.load(Ordering::Relaxed) && !self.split.read().unwrap_or_else(|e| e.into_inner()).contains(&entity)
    }
}

/// Makes `model` a performer: a child entity with `Performer`, `PerformerRef` (the model's
/// name) and no levels yet, as the level manager's `set_performer` does. Returns its id.
pub fn make_performer(ecm: &mut Ecm, model: EntityId) -> Result<PerformerId, plugin_api::EcmError> {
    let name = ecm.get::<Name>(model).map(|n| n.0).unwrap_or_default();
    let p = ecm.create_entity();
    ecm.set(p, &ParentEntity(model), Change::OneTime)?;
    ecm.set(p, &Performer, Change::OneTime)?;
    ecm.set(p, &PerformerRef(name.clone()), Change::OneTime)?;
    ecm.set(p, &Name(format!("{name}_performer")), Change::OneTime)?;
    ecm.set(p, &PerformerLevels(Vec::new()), Change::OneTime)?;
    Ok(p.0)
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
