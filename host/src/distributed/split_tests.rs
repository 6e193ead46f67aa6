//! The split of one world between processes, on a real ECM built from a world file.

use super::*;
use crate::factory::{create_world, create_world_entity, Levels};
use crate::sdf::{parse_str_with, ModelPaths, WorldSdf};
use plugin_api::components::{Static, WorldLinearVelocity, WorldPoseCmd};
use plugin_api::math::Pose;
use plugin_api::Change;

const WORLD: &str = r#"<sdf version="1.9"><world name="w">
  <model name="ground"><static>true</static><link name="l"/></model>
  <model name="a"><link name="l"><collision name="c"><geometry><box/></geometry></collision></link></model>
  <model name="b"><link name="l"><collision name="c"><geometry><sphere/></geometry></collision></link></model>
  <model name="block"><static>true</static><link name="l"/></model>
  <plugin name="gz::sim" filename="dummy">
    <performer name="pa"><ref>a</ref></performer>
    <performer name="pb"><ref>b</ref></performer>
    <level name="lv"><pose>5 0 0 0 0 0</pose><geometry><box><size>2 2 2</size></box></geometry><ref>block</ref></level>
  </plugin>
</world></sdf>"#;

fn world() -> (Ecm, WorldSdf) {
    let doc = parse_str_with(WORLD, "split.sdf", &ModelPaths::default()).unwrap();
    let mut ecm = Ecm::new();
    create_world(&mut ecm, &doc.worlds[0], doc.entity_count, Levels::On).unwrap();
    (ecm, doc.worlds[0].clone())
}

fn named(ecm: &Ecm, name: &str) -> EntityId {
    ecm.children(EntityId(1)).find(|&e| ecm.get::<Name>(e).is_some_and(|n| n.0 == name)).unwrap()
}

fn performer_of(ecm: &Ecm, model: &str) -> PerformerId {
    let m = named(ecm, model);
    *performer_models(ecm).iter().find(|(_, &mm)| mm == m).unwrap().0
}

#[test]
fn performers_their_models_and_membership_come_from_the_ecm() {
    let (mut ecm, _) = world();
    let models = performer_models(&ecm);
    assert_eq!(models.len(), 2);
    assert_eq!(models.values().copied().collect::<BTreeSet<_>>(), [named(&ecm, "a"), named(&ecm, "b")].into());
    let pa = performer_of(&ecm, "a");
    let lv = named(&ecm, "lv");
    ecm.set(EntityId(pa), &PerformerLevels(vec![lv]), Change::OneTime).unwrap();
    let m = crate::distributed::levels::membership(&ecm);
    assert_eq!(m[&pa], [lv.0].into());
    assert!(m[&performer_of(&ecm, "b")].is_empty());
    // The performers' links carry velocities, so a hand-over's state is whole.
    let link = ecm.children(named(&ecm, "a")).find(|&e| ecm.has::<plugin_api::components::Link>(e)).unwrap();
    assert!(ecm.has::<WorldLinearVelocity>(link));
    assert!(!ecm.has::<WorldLinearVelocity>(ecm.children(named(&ecm, "ground")).next().unwrap()), "only performers'");
}

#[test]
fn a_handover_carries_the_whole_model_and_the_new_owner_takes_exactly_it() {
    let (ecm, _) = world();
    let pa = performer_of(&ecm, "a");
    let a = named(&ecm, "a");
    let state = handover_state(&ecm, &[pa], Stamp::default());
    let expected: BTreeSet<u64> = ecm.descendants(a).into_iter().map(|e| e.0).collect();
    assert_eq!(state.entities.keys().copied().collect::<BTreeSet<_>>(), expected);
    assert!(expected.contains(&pa), "the performer entity goes with its model");
    assert_eq!(model_in_map(&state, pa), Some(a.0));
    // Two performers in one map: each subtree is found on its own.
    let both = handover_state(&ecm, &[pa, performer_of(&ecm, "b")], Stamp::default());
    assert_eq!(subtree_of(&both, a.0).entities.keys().copied().collect::<BTreeSet<_>>(), expected);

    // Created on an ECM that does not have it: same ids, same components.
    let (mut other, _) = world();
    other.request_remove(a, true);
    other.end_step();
    assert!(!other.has_entity(a));
    crate::state::apply_state(&mut other, &subtree_of(&both, a.0)).unwrap();
    for id in ecm.descendants(a) {
        assert_eq!(other.entity_state(id), ecm.entity_state(id), "entity {id}");
    }
}

#[test]
fn level_content_is_what_a_level_holds_not_the_default_level() {
    let (mut ecm, w) = world();
    assert!(level_content(&ecm, EntityId(1)).is_empty(), "the level is not loaded");
    let (block, _) = create_world_entity(&mut ecm, &w, "block").unwrap();
    let content = level_content(&ecm, EntityId(1));
    assert_eq!(content, ecm.descendants(block).into_iter().collect());
    assert!(!content.contains(&named(&ecm, "ground")), "the default level's models are shared, not a level's");
}

#[test]
fn the_primary_forwards_its_own_changes_to_the_right_secondaries_only() {
    let (mut ecm, w) = world();
    ecm.end_step();
    let world_id = EntityId(1);
    let (a, ground) = (named(&ecm, "a"), named(&ecm, "ground"));
    let pa = performer_of(&ecm, "a");
    // An answer set a's pose; the primary's systems then wrote a pose command on a, moved
    // the ground, loaded a level, and wrote level bookkeeping.
    let answered = Pose::from_xyz_rpy(1.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    ecm.set(a, &answered, Change::Periodic).unwrap();
    let answer = crate::state::changed_state(&ecm, Stamp::default());
    let mut applied = Applied::new();
    note_applied(&mut applied, &answer);
    ecm.set(a, &WorldPoseCmd(Pose::from_xyz_rpy(0.0, 0.0, 3.0, 0.0, 0.0, 0.0)), Change::OneTime).unwrap();
    ecm.set(ground, &Pose::from_xyz_rpy(0.0, 0.0, -1.0, 0.0, 0.0, 0.0), Change::OneTime).unwrap();
    ecm.set(EntityId(pa), &PerformerLevels(vec![named(&ecm, "lv")]), Change::OneTime).unwrap();
    let (block, _) = create_world_entity(&mut ecm, &w, "block").unwrap();
    let levels: HashSet<EntityId> = level_content(&ecm, world_id).into_iter().collect();
    let changes = crate::state::changed_state(&ecm, Stamp::default());
    let f = primary_changes(&changes, &applied, &ecm, world_id, &levels);

    let to_a = &f.performers[&pa];
    assert_eq!(to_a.entities.keys().copied().collect::<Vec<_>>(), [a.0], "the pose command, not the bookkeeping");
    let ty = ecm.component_types().find(|(_, n, _)| *n == WorldPoseCmd::NAME).unwrap().0;
    assert_eq!(
        to_a.entities[&a.0].components.keys().copied().collect::<Vec<_>>(),
        [ty.0],
        "the answered pose is not sent back"
    );
    assert_eq!(f.shared.entities.keys().copied().collect::<Vec<_>>(), [ground.0], "no level content, no performer");
    assert!(!f.shared.entities.contains_key(&block.0));
    assert_eq!(f.performers.len(), 1);

    // A removal goes to everyone (only the holder has the entity).
    ecm.end_step();
    ecm.request_remove(a, true);
    let changes = crate::state::changed_state(&ecm, Stamp::default());
    let f = primary_changes(&changes, &Applied::new(), &ecm, world_id, &levels);
    assert!(f.shared.entities.get(&a.0).is_some_and(|e| e.remove));
    assert!(f.performers.is_empty());
}

#[test]
fn dynamic_models_outside_performers_and_levels_are_found_and_can_be_made_performers() {
    let (mut ecm, w) = world();
    assert!(unsplit_dynamic_models(&ecm, EntityId(1)).is_empty(), "a and b are performers, the rest static");
    let (block, _) = create_world_entity(&mut ecm, &w, "block").unwrap();
    ecm.set(block, &Static(false), Change::OneTime).unwrap();
    assert!(unsplit_dynamic_models(&ecm, EntityId(1)).is_empty(), "a level's content is its secondary's");
    let ground = named(&ecm, "ground");
    ecm.set(ground, &Static(false), Change::OneTime).unwrap();
    assert_eq!(unsplit_dynamic_models(&ecm, EntityId(1)), [ground]);
    let p = make_performer(&mut ecm, ground).unwrap();
    assert_eq!(ecm.parent(EntityId(p)), Some(ground));
    assert_eq!(ecm.get::<PerformerRef>(EntityId(p)), Some(PerformerRef("ground".into())));
    assert!(unsplit_dynamic_models(&ecm, EntityId(1)).is_empty());
    assert!(crate::distributed::levels::membership(&ecm).contains_key(&p));
}

#[test]
fn ownership_is_mine_plus_the_shared_rest_on_secondary_zero_only() {
    let o = SplitOwnership::new();
    let (mine, theirs, shared) = (EntityId(10), EntityId(20), EntityId(30));
    o.update([mine].into(), [mine, theirs]);
    assert!(o.owns(mine) && !o.owns(theirs) && !o.owns(shared));
    assert!(o.mine(10) && !o.mine(30));
    o.set_rest(true);
    assert!(o.owns(mine) && !o.owns(theirs) && o.owns(shared), "secondary 0 owns the shared world");
    // The primary: nothing.
    let p = SplitOwnership::new();
    assert!(!p.owns(mine) && !p.owns(shared));
}
