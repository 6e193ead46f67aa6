//! Edge cases of the level rule and of loading and unloading.

use crate::support::{load, seed_world_path, seed_world_with_m1_system, set, Levels};
use plugin_api::components::{Geometry, LevelLoaded, Performer};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{Component, Which};

fn seed(levels: bool) -> Levels {
    let mut w = load(&std::fs::read_to_string(seed_world_path()).unwrap(), levels);
    w.f.run(1).unwrap();
    w
}

/// R2 and R3 out of the way; R1 stays in L1.
fn r1_alone() -> Levels {
    let mut w = seed(true);
    w.goto("R2", 100.0, 100.0);
    w.goto("R3", 100.0, -100.0);
    assert!(!w.level_loaded("L2"));
    w
}

#[test]
fn entering_a_buffer_without_entering_the_level_loads_it() {
    let mut w = r1_alone();
    // L2 spans x 0..10, its buffer x -2..12. R1 (a 1 m box) at x = -1 spans -1.5..-0.5.
    w.goto("R1", -1.0, 5.0);
    assert!(w.level_loaded("L2"));
    assert!(w.models().contains("M2"));
    assert_eq!(w.performer_levels("perf1"), ["L1", "L2"]);
}

#[test]
fn a_performer_the_host_makes_after_load_is_followed_like_the_world_files() {
    let mut w = r1_alone();
    assert!(!w.level_loaded("L3"));
    // As the primary of a distributed run does with a dynamic model spawned through it.
    let r4 = w.id("R4").unwrap();
    troupe::distributed::split::make_performer(&mut w.f.runner_mut().ecm, r4).unwrap();
    w.f.run(1).unwrap();
    assert!(w.performer_levels("R4_performer").is_empty(), "R4 is in no level yet");
    w.goto("R4", -5.0, -5.0);
    assert!(w.level_loaded("L3"), "R4 walked into L3");
    assert!(w.models().contains("M4"));
    assert_eq!(w.performer_levels("R4_performer"), ["L3"]);
}

#[test]
fn closed_boxes_touching_counts() {
    let mut w = r1_alone();
    // R1 at x = -2.5 spans -3..-2: it touches L2's buffer face at x = -2.
    w.goto("R1", -2.5, 5.0);
    assert!(w.level_loaded("L2"), "a touching face counts");
    // A hair further and it does not.
    w.goto("R1", -2.5 - 1e-6, 5.0);
    assert!(!w.level_loaded("L2"));
    assert!(!w.models().contains("M2"));
}

#[test]
fn two_performers_keep_one_level_until_both_leave() {
    let mut w = seed(true);
    w.goto("R3", 100.0, -100.0);
    // R1 and R2 are both in L1.
    w.goto("R1", 50.0, 50.0);
    assert!(w.level_loaded("L1"));
    w.goto("R1", -5.0, 5.0);
    w.goto("R2", 50.0, 60.0);
    assert!(w.level_loaded("L1"), "R1 came back before R2 left");
    w.goto("R1", 50.0, 50.0);
    assert!(!w.level_loaded("L1"), "both left");
    assert_eq!(w.models(), set(&["R1", "R2", "R3", "R4", "M6"]));
    assert!(w.performer_levels("perf1").is_empty() && w.performer_levels("perf2").is_empty());
}

#[test]
fn a_performer_whose_model_is_removed_after_quiet_steps_no_longer_keeps_its_level() {
    let mut w = seed(true);
    w.goto("R3", 100.0, -100.0);
    assert!(w.level_loaded("L1"), "R1 and R2 are in L1");
    // Steps in which nothing is created or removed, then R2's model goes.
    w.f.run(50).unwrap();
    let r2 = w.id("R2").unwrap();
    assert!(w.f.runner_mut().ecm.request_remove(r2, true));
    w.f.run(50).unwrap();
    assert!(w.id("R2").is_none());
    assert!(w.level_loaded("L1"), "R1 is still in L1");
    w.goto("R1", 50.0, 50.0);
    assert!(!w.level_loaded("L1"), "R2's performer went with its model, and R1 left L1");
}

#[test]
fn leaving_and_coming_back_reloads_with_the_same_ids() {
    let mut w = load(&seed_world_with_m1_system(), true);
    w.f.run(1).unwrap();
    w.goto("R2", 100.0, 100.0);
    w.goto("R3", 100.0, -100.0);
    let m1 = w.id("M1").expect("M1 loaded");
    let m1_tree = w.subtree(m1);
    assert!(m1_tree.len() >= 4, "M1, its link, collision and visual: {m1_tree:?}");
    let noop = |w: &Levels| w.f.runner().system_labels().iter().filter(|l| l.starts_with("testing::Noop")).count();
    assert_eq!(noop(&w), 1, "M1's system runs while M1 is loaded");

    w.goto("R1", 100.0, 0.0);
    assert!(w.id("M1").is_none());
    for e in &m1_tree {
        assert!(!w.ecm().has_entity(*e), "entity {e} of M1 is gone");
    }
    assert_eq!(noop(&w), 0, "M1's system went with M1");

    w.goto("R1", -5.0, 5.0);
    let again = w.id("M1").expect("M1 reloaded");
    assert_eq!(again, m1);
    assert_eq!(w.subtree(again), m1_tree, "every entity of M1 has its file id again");
    w.f.run(1).unwrap();
    assert_eq!(noop(&w), 1, "M1's system is back from the step after the reload");
}

#[test]
fn other_systems_see_ordinary_creation_and_removal() {
    let mut w = r1_alone();
    w.seen.lock().unwrap().clear();
    let before = w.f.runner().clock.iterations();
    w.goto("R1", -5.0, 1.0);
    w.goto("R1", -5.0, -5.0);
    let seen = w.seen.lock().unwrap().clone();
    // Loading L3 shows M4 and M5 as new in the step that loads them; unloading L1 lists M1
    // as removed in its step (then it is gone).
    let new: Vec<_> = seen.iter().flat_map(|(_, n, _)| n.clone()).collect();
    let removed: Vec<_> = seen.iter().flat_map(|(_, _, r)| r.clone()).collect();
    assert_eq!(new, ["M4", "M5"]);
    assert_eq!(removed, ["M1"]);
    assert!(seen.iter().all(|(i, _, _)| *i > before));
    assert_ne!(seen[0].0, seen[1].0, "two different steps: {seen:?}");
}

#[test]
fn levels_off_loads_everything_and_only_keeps_the_books() {
    let mut w = seed(false);
    let all = set(&["R1", "R2", "R3", "R4", "M1", "M2", "M3", "M4", "M5", "M6"]);
    assert_eq!(w.models(), all);
    for l in ["L1", "L2", "L3"] {
        assert!(w.level_loaded(l), "{l} counts as loaded with levels off");
    }
    assert_eq!(w.performer_levels("perf1"), ["L1"]);
    assert_eq!(w.performer_levels("perf3"), ["L2"]);
    w.goto("R1", 100.0, 0.0);
    w.goto("R2", 100.0, 10.0);
    w.goto("R3", 100.0, 20.0);
    assert_eq!(w.models(), all, "nothing is unloaded with levels off");
    assert!(w.performer_levels("perf1").is_empty());
}

#[test]
fn performers_are_sized_by_their_collisions() {
    let w = seed(true);
    let ecm = w.ecm();
    let perfs = ecm.query(Which::ALL, &[Performer::ID]);
    assert_eq!(perfs.len(), 3);
    for p in perfs {
        assert_eq!(ecm.get::<Geometry>(p), Some(Geometry::Box { size: Vec3::new(1.0, 1.0, 1.0) }));
        assert_eq!(ecm.get::<Pose>(p).unwrap().position, Vec3::ZERO, "the box is centred on the model");
    }
}

#[test]
fn an_offset_collision_moves_the_performer_volume() {
    // The robot's only collision is 3 m ahead of its origin (and rotated 90 degrees about z,
    // which swaps its x and y extents): its volume is x 2..4, y -0.5..0.5 around the model.
    let text = r#"<sdf version="1.9"><world name="w">
      <model name="robot"><pose>0 0 0 0 0 0</pose>
        <link name="l"><pose>3 0 0 0 0 0</pose>
          <collision name="c"><pose>0 0 0 0 0 1.5707963267948966</pose>
            <geometry><box><size>1 2 1</size></box></geometry></collision>
        </link>
      </model>
      <model name="far"><pose>20 0 0 0 0 0</pose><link name="l"/></model>
      <plugin name="gz::sim" filename="dummy">
        <performer name="p"><ref>robot</ref></performer>
        <level name="east"><pose>10 0 0 0 0 0</pose>
          <geometry><box><size>10 10 10</size></box></geometry><buffer>1</buffer>
          <ref>far</ref></level>
      </plugin>
    </world></sdf>"#;
    let mut w = load(text, true);
    w.f.run(1).unwrap();
    let ecm = w.ecm();
    let p = ecm.query(Which::ALL, &[Performer::ID])[0];
    let Some(Geometry::Box { size }) = ecm.get::<Geometry>(p) else { panic!("no box") };
    assert!((size.x - 2.0).abs() < 1e-9 && (size.y - 1.0).abs() < 1e-9, "{size:?}");
    assert!((ecm.get::<Pose>(p).unwrap().position.x - 3.0).abs() < 1e-9);
    // East's buffered box starts at x = 4: the robot at 0 reaches x = 4 and touches it.
    assert!(w.level_loaded("east"));
    w.goto("robot", -0.01, 0.0);
    assert!(!w.level_loaded("east"));
    assert!(w.models().contains("robot") && !w.models().contains("far"));
}

#[test]
fn a_reset_returns_to_the_loaded_state_at_load() {
    let mut w = r1_alone();
    w.goto("R1", -5.0, -5.0);
    assert!(w.level_loaded("L3"));
    w.f.runner_mut().request_reset();
    w.f.run(2).unwrap();
    // After the reset R1 is back at (-5, 5): L1 loaded, L3 not.
    assert!(w.level_loaded("L1"));
    let l3 = w.level("L3");
    assert_eq!(w.ecm().get::<LevelLoaded>(l3), Some(LevelLoaded(false)));
}
