//! The level manager on a secondary of a distributed run (role SECONDARY): it loads exactly
//! the levels marked `LevelAssigned` (what the primary's step says, written by the host's
//! `distributed::levels::mark_assigned_levels` before the step), decides nothing from
//! performer volumes, and leaves performers' models to the host, which creates and removes
//! them at hand-overs. The test plays the primary and the driver between steps.

use crate::support::{load_secondary, seed_world_path, set, Levels};
use plugin_api::components::{LevelAssigned, Name, ParentEntity, Performer, PerformerRef};
use plugin_api::{Change, EntityId};
use std::collections::BTreeSet;
use troupe::distributed::levels::mark_assigned_levels;

/// Marks `names` as this secondary's levels, as the driver does before each step.
fn assign(w: &mut Levels, names: &[&str]) {
    let ids: BTreeSet<u64> = names.iter().map(|n| w.level(n).0).collect();
    mark_assigned_levels(&mut w.f.runner_mut().ecm, &ids).unwrap();
}

/// Runs one step; answers its iteration and the models it created and removed (as the
/// fixture's post_update saw them, sorted).
fn step(w: &mut Levels) -> (u64, Vec<String>, Vec<String>) {
    let before = w.seen.lock().unwrap().len();
    w.f.run(1).unwrap();
    let iteration = w.f.runner().clock.iterations();
    let seen = w.seen.lock().unwrap();
    match &seen[before..] {
        [] => (iteration, Vec::new(), Vec::new()),
        [(it, new, removed)] => {
            let (mut new, mut removed) = (new.clone(), removed.clone());
            new.sort();
            removed.sort();
            (*it, new, removed)
        }
        more => panic!("one step, several records: {more:?}"),
    }
}

fn loaded(w: &Levels) -> Vec<&'static str> {
    ["L1", "L2", "L3"].into_iter().filter(|l| w.level_loaded(l)).collect()
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn only_assigned_levels_load_and_a_new_assignment_applies_at_that_step() {
    let mut w = load_secondary(&std::fs::read_to_string(seed_world_path()).unwrap());
    // Nothing assigned yet (no LevelAssigned at all): nothing loads, although R1 and R2
    // stand in L1 and R3 in L2 (standalone loads L1 and L2 at the first step).
    let (_, new, _) = step(&mut w);
    assert_eq!(
        new,
        strings(&["M6", "R1", "R2", "R3", "R4"]),
        "the first step sees what the host created at load, no more"
    );
    assert_eq!(loaded(&w), Vec::<&str>::new());
    assert_eq!(w.models(), set(&["R1", "R2", "R3", "R4", "M6"]));
    assert!(w.performer_levels("perf1").is_empty(), "a secondary writes no PerformerLevels");

    // L2 here: M2 and M3 come in that very step.
    assign(&mut w, &["L2"]);
    let (it, new, removed) = step(&mut w);
    assert_eq!((new, removed), (strings(&["M2", "M3"]), strings(&[])));
    assert_eq!(it, w.f.runner().clock.iterations());
    assert_eq!(loaded(&w), ["L2"]);
    assert_eq!(w.models(), set(&["R1", "R2", "R3", "R4", "M2", "M3", "M6"]));
    let m3 = w.id("M3").unwrap();

    // Steps with the same assignment change nothing.
    let (_, new, removed) = step(&mut w);
    assert!(new.is_empty() && removed.is_empty());

    // L2 goes elsewhere, L1 and L3 come here, all in one step: M2 leaves, M1, M4, M5 come,
    // M3 stays (L1 and L3 hold it too) with its id.
    assign(&mut w, &["L1", "L3"]);
    let (it2, new, removed) = step(&mut w);
    assert_eq!(it2, it + 2);
    assert_eq!((new, removed), (strings(&["M1", "M4", "M5"]), strings(&["M2"])));
    assert_eq!(loaded(&w), ["L1", "L3"]);
    assert_eq!(w.models(), set(&["R1", "R2", "R3", "R4", "M1", "M3", "M4", "M5", "M6"]));
    assert_eq!(w.id("M3"), Some(m3));

    // Moving performers decides nothing: R1 and R2 leave L1 far behind, L1 stays.
    w.goto("R1", 100.0, 100.0);
    w.goto("R2", 100.0, -100.0);
    assert_eq!(loaded(&w), ["L1", "L3"]);
    assert!(w.performer_levels("perf1").is_empty());

    // Nothing assigned any more: everything the levels held goes, in that step.
    assign(&mut w, &[]);
    let (_, new, removed) = step(&mut w);
    assert_eq!((new, removed), (strings(&[]), strings(&["M1", "M3", "M4", "M5"])));
    assert_eq!(loaded(&w), Vec::<&str>::new());
    assert_eq!(w.models(), set(&["R1", "R2", "R3", "R4", "M6"]));
    // The flag the host wrote is what the system read.
    assert_eq!(w.ecm().get::<LevelAssigned>(w.level("L1")), Some(LevelAssigned(false)));
}

/// `rover` and `crate` are in LA, `rock` in LB; `bot` is the file's performer.
const HANDOVER_WORLD: &str = r#"<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <model name="ground"><static>true</static><link name="l"/></model>
  <model name="bot"><pose>0 0 0 0 0 0</pose><link name="l">
    <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision></link></model>
  <model name="rover"><pose>1 1 0 0 0 0</pose><link name="l">
    <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision></link></model>
  <model name="crate"><static>true</static><pose>2 2 0 0 0 0</pose><link name="l"/></model>
  <model name="rock"><static>true</static><pose>50 0 0 0 0 0</pose><link name="l"/></model>
  <plugin name="gz::sim" filename="dummy">
    <performer name="p_bot"><ref>bot</ref></performer>
    <level name="LA"><pose>0 0 0 0 0 0</pose><geometry><box><size>10 10 10</size></box></geometry>
      <ref>rover</ref><ref>crate</ref></level>
    <level name="LB"><pose>50 0 0 0 0 0</pose><geometry><box><size>10 10 10</size></box></geometry>
      <ref>rock</ref></level>
  </plugin>
</world></sdf>"#;

/// The host making `model` a performer held here (a hand-over to this secondary of a model
/// the primary made a performer): the performer entity, a child of the model.
fn add_performer(w: &mut Levels, model: &str) -> EntityId {
    let m = w.id(model).unwrap();
    let ecm = &mut w.f.runner_mut().ecm;
    let p = ecm.create_entity();
    ecm.set(p, &ParentEntity(m), Change::OneTime).unwrap();
    ecm.set(p, &Name(format!("perf_{model}")), Change::OneTime).unwrap();
    ecm.set(p, &Performer, Change::OneTime).unwrap();
    ecm.set(p, &PerformerRef(model.into()), Change::OneTime).unwrap();
    p
}

/// The host removing a performer handed to another secondary: its model and everything in it.
fn hand_away(w: &mut Levels, model: &str) {
    let m = w.id(model).unwrap();
    assert!(w.f.runner_mut().ecm.request_remove(m, true));
}

#[test]
fn performers_created_and_removed_by_the_host_are_never_loaded_or_unloaded_by_a_level() {
    let mut w = load_secondary(HANDOVER_WORLD);
    step(&mut w);
    assert_eq!(w.models(), set(&["ground", "bot"]));

    assign(&mut w, &["LA"]);
    let (_, new, _) = step(&mut w);
    assert_eq!(new, strings(&["crate", "rover"]));

    // rover becomes a performer held here; bot is handed to another secondary (removed at
    // the end of the step). The level manager takes both in its stride.
    add_performer(&mut w, "rover");
    hand_away(&mut w, "bot");
    let (_, new, removed) = step(&mut w);
    assert_eq!((new, removed), (strings(&[]), strings(&["bot"])));
    assert_eq!(w.models(), set(&["ground", "rover", "crate"]));

    // LA goes elsewhere, LB comes: crate goes with LA, rover stays (a performer's model is
    // the host's to remove, not a level's).
    assign(&mut w, &["LB"]);
    let (_, new, removed) = step(&mut w);
    assert_eq!((new, removed), (strings(&["rock"]), strings(&["crate"])));
    assert_eq!(w.models(), set(&["ground", "rover", "rock"]));
    assert!(!w.level_loaded("LA") && w.level_loaded("LB"));

    // rover is handed away too.
    hand_away(&mut w, "rover");
    let (_, _, removed) = step(&mut w);
    assert_eq!(removed, strings(&["rover"]));

    // LA comes back here: crate loads, rover does not (another secondary simulates it).
    assign(&mut w, &["LA", "LB"]);
    let (_, new, removed) = step(&mut w);
    assert_eq!((new, removed), (strings(&["crate"]), strings(&[])));
    assert_eq!(w.models(), set(&["ground", "crate", "rock"]));
    assert!(w.level_loaded("LA"));
}

#[test]
fn a_level_the_world_does_not_have_is_refused_naming_it() {
    let mut w = load_secondary(&std::fs::read_to_string(seed_world_path()).unwrap());
    let m6 = w.id("M6").unwrap();
    let err = mark_assigned_levels(&mut w.f.runner_mut().ecm, &[m6.0].into()).unwrap_err();
    assert!(err.message.contains(&format!("no level entity {}", m6.0)), "{}", err.message);
}
