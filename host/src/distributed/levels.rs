//! Levels in a distributed run, on the ECM side (docs/distributed.md: "each level can only be simulated
//! by one secondary at a time").
//!
//! * The primary's level manager writes each performer's `PerformerLevels` from the poses
//!   it mirrors; [`membership`] reads them as the [`Membership`] the primary's
//!   [`begin_step`](super::Primary::begin_step) assigns from.
//! * The primary's step tells each secondary which levels it holds
//!   ([`StepOrder::levels`](super::StepOrder::levels)); [`mark_assigned_levels`] writes them
//!   as `LevelAssigned` on the secondary's level entities before the step runs, and the
//!   level manager (in secondary role) loads exactly those levels in that step's
//!   pre_update, and unloads the others.

use std::collections::BTreeSet;

use plugin_api::components::{DefaultLevel, Level, LevelAssigned, Performer, PerformerLevels};
use plugin_api::{Change, Component, EcmError, EntityId, Which};

use super::assignment::{LevelId, Membership};
use crate::ecm::Ecm;

/// Every performer's levels, from the `PerformerLevels` components (a performer without one
/// is in no level). Performers are keyed by their performer entity's id, as
/// [`Primary::begin_step`](super::Primary::begin_step) expects.
pub fn membership(ecm: &Ecm) -> Membership {
    ecm.query(Which::ALL, &[Performer::ID])
        .into_iter()
        .map(|p| {
            let levels = ecm.get::<PerformerLevels>(p).map(|l| l.0).unwrap_or_default();
            (p.0, levels.into_iter().map(|l| l.0).collect())
        })
        .collect()
}

/// Writes `LevelAssigned` on every level entity: true iff its id is in `levels`. The default
/// level (always loaded) is left alone. A value is only rewritten when it changes, and never
/// flagged as a change: it is this runner's bookkeeping, not world state for the primary.
/// An id in `levels` that is no level entity of this world is an error naming it (the
/// primary and this secondary would disagree on the world).
pub fn mark_assigned_levels(ecm: &mut Ecm, levels: &BTreeSet<LevelId>) -> Result<(), EcmError> {
    let entities: Vec<EntityId> =
        ecm.query(Which::ALL, &[Level::ID]).into_iter().filter(|&l| !ecm.has::<DefaultLevel>(l)).collect();
    if let Some(unknown) = levels.iter().find(|&&l| !entities.contains(&EntityId(l))) {
        return Err(EcmError::new(format!(
            "the primary assigned level {unknown} to this secondary, and this world has no level entity {unknown}"
        )));
    }
    for l in entities {
        let want = LevelAssigned(levels.contains(&l.0));
        if ecm.get::<LevelAssigned>(l).as_ref() != Some(&want) {
            ecm.set(l, &want, Change::None)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::factory::{create_world, Levels};
    use crate::sdf::{parse_str_with, ModelPaths};
    use plugin_api::components::Name;

    /// Two levels, two performers (one in L1, one in both), the default level.
    const WORLD: &str = r#"<sdf version="1.9"><world name="w">
      <model name="r1"><link name="l"/></model>
      <model name="r2"><link name="l"/></model>
      <model name="r3"><link name="l"/></model>
      <model name="m1"><link name="l"/></model>
      <model name="m2"><link name="l"/></model>
      <plugin name="gz::sim" filename="dummy">
        <performer name="p1"><ref>r1</ref><geometry><box><size>1 1 1</size></box></geometry></performer>
        <performer name="p2"><ref>r2</ref><geometry><box><size>1 1 1</size></box></geometry></performer>
        <performer name="p3"><ref>r3</ref><geometry><box><size>1 1 1</size></box></geometry></performer>
        <level name="L1"><pose>0 0 0 0 0 0</pose><geometry><box><size>10 10 10</size></box></geometry><ref>m1</ref></level>
        <level name="L2"><pose>20 0 0 0 0 0</pose><geometry><box><size>10 10 10</size></box></geometry><ref>m2</ref></level>
      </plugin>
    </world></sdf>"#;

    fn world() -> Ecm {
        let doc = parse_str_with(WORLD, "levels.sdf", &ModelPaths::default()).unwrap_or_else(|e| panic!("{e}"));
        let mut ecm = Ecm::new();
        create_world(&mut ecm, &doc.worlds[0], doc.entity_count, Levels::On)
            .unwrap_or_else(|e| panic!("{}", e.message));
        ecm
    }

    fn named(ecm: &Ecm, name: &str) -> EntityId {
        ecm.query(Which::ALL, &[Name::ID])
            .into_iter()
            .find(|e| ecm.get::<Name>(*e).is_some_and(|n| n.0 == name))
            .unwrap_or_else(|| panic!("no entity {name}"))
    }

    fn assigned(ecm: &Ecm, name: &str) -> Option<bool> {
        ecm.get::<LevelAssigned>(named(ecm, name)).map(|a| a.0)
    }

    #[test]
    fn membership_reads_every_performers_levels() {
        let mut ecm = world();
        let (l1, l2) = (named(&ecm, "L1"), named(&ecm, "L2"));
        let (p1, p2, p3) = (named(&ecm, "p1"), named(&ecm, "p2"), named(&ecm, "p3"));
        // As created: every performer is in no level yet.
        let m = membership(&ecm);
        assert_eq!(m.keys().copied().collect::<Vec<_>>(), [p1.0, p2.0, p3.0]);
        assert!(m.values().all(BTreeSet::is_empty), "{m:?}");
        // As the primary's level manager writes them; p3 loses its component altogether.
        ecm.set(p1, &PerformerLevels(vec![l1]), Change::OneTime).unwrap();
        ecm.set(p2, &PerformerLevels(vec![l1, l2]), Change::OneTime).unwrap();
        ecm.remove_component(p3, PerformerLevels::ID);
        let m = membership(&ecm);
        assert_eq!(m[&p1.0], [l1.0].into());
        assert_eq!(m[&p2.0], [l1.0, l2.0].into());
        assert_eq!(m[&p3.0], BTreeSet::new(), "a performer without PerformerLevels is in no level");
        // Its groups: p1 and p2 share L1, so L1 and L2 are one group; p3 alone.
        let groups = crate::distributed::assignment::groups(&m);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].levels, [l1.0, l2.0].into());
    }

    #[test]
    fn marks_exactly_the_assigned_levels_and_leaves_the_default_level_alone() {
        let mut ecm = world();
        let (l1, l2, default) = (named(&ecm, "L1"), named(&ecm, "L2"), named(&ecm, "default"));
        assert_eq!(assigned(&ecm, "L1"), None, "the factory writes no LevelAssigned");
        mark_assigned_levels(&mut ecm, &[l2.0].into()).unwrap();
        assert_eq!((assigned(&ecm, "L1"), assigned(&ecm, "L2")), (Some(false), Some(true)));
        assert_eq!(ecm.get::<LevelAssigned>(default), None);
        // A change of assignment flips both.
        ecm.end_step();
        mark_assigned_levels(&mut ecm, &[l1.0].into()).unwrap();
        assert_eq!((assigned(&ecm, "L1"), assigned(&ecm, "L2")), (Some(true), Some(false)));
        // Rewrites are not flagged as changes (they are not state for the primary).
        assert_eq!(ecm.change_of(l1, LevelAssigned::ID), Change::None);
        assert_eq!(ecm.change_of(l2, LevelAssigned::ID), Change::None);
        // Nothing assigned: every level false.
        mark_assigned_levels(&mut ecm, &BTreeSet::new()).unwrap();
        assert_eq!((assigned(&ecm, "L1"), assigned(&ecm, "L2")), (Some(false), Some(false)));
    }

    #[test]
    fn an_unknown_level_is_an_error_naming_it_and_nothing_is_written() {
        let mut ecm = world();
        let l1 = named(&ecm, "L1");
        let p1 = named(&ecm, "p1");
        for bad in [999_999, p1.0] {
            let err = mark_assigned_levels(&mut ecm, &[l1.0, bad].into()).unwrap_err();
            assert!(err.message.contains(&format!("no level entity {bad}")), "{}", err.message);
            assert_eq!(assigned(&ecm, "L1"), None, "nothing written on error");
        }
    }
}
