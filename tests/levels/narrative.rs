//! Seed 000's "Multiple levels, one performer" story on its example world, stage by stage.

use crate::support::{load, seed_world_path, set, Levels};

/// The seed world with levels on, R2 and R3 moved outside every buffer.
fn alone() -> Levels {
    let mut w = load(&std::fs::read_to_string(seed_world_path()).unwrap(), true);
    w.f.run(1).unwrap();
    w.goto("R2", 100.0, 100.0);
    w.goto("R3", 100.0, -100.0);
    w
}

#[test]
fn one_performer_walks_from_l1_to_l3() {
    let mut w = alone();
    // 1. R1 starts inside L1: loaded are R1 (and the other performers, always), M1 and M3
    //    (L1's), and M6 (global).
    assert_eq!(w.models(), set(&["R1", "R2", "R3", "R4", "M1", "M3", "M6"]));
    assert!(w.level_loaded("L1") && !w.level_loaded("L2") && !w.level_loaded("L3"));
    assert_eq!(w.performer_levels("perf1"), ["L1"]);

    // 2. R1 moves south and enters L3's buffer zone (still inside L1): M4 and M5 load; L1
    //    and L3 are both loaded.
    w.goto("R1", -5.0, 1.0);
    assert_eq!(w.models(), set(&["R1", "R2", "R3", "R4", "M1", "M3", "M4", "M5", "M6"]));
    assert!(w.level_loaded("L1") && w.level_loaded("L3"));
    assert_eq!(w.performer_levels("perf1"), ["L1", "L3"]);

    // 3. R1 leaves L1 and enters L3, still within L1's buffer: nothing changes.
    w.goto("R1", -5.0, -1.0);
    assert_eq!(w.models(), set(&["R1", "R2", "R3", "R4", "M1", "M3", "M4", "M5", "M6"]));
    assert!(w.level_loaded("L1") && w.level_loaded("L3"));

    // 4. R1 moves beyond L1's buffer: L1 unloads, which removes M1; M3 stays, L3 holds it.
    w.goto("R1", -5.0, -5.0);
    assert_eq!(w.models(), set(&["R1", "R2", "R3", "R4", "M3", "M4", "M5", "M6"]));
    assert!(!w.level_loaded("L1") && w.level_loaded("L3"));
    assert_eq!(w.performer_levels("perf1"), ["L3"]);
}

#[test]
fn a_second_performer_keeps_l1_loaded_after_r1_leaves() {
    let mut w = load(&std::fs::read_to_string(seed_world_path()).unwrap(), true);
    w.f.run(1).unwrap();
    w.goto("R3", 100.0, -100.0);
    // R2 stays at (-5, 8), inside L1.
    w.goto("R1", -5.0, -5.0);
    assert!(w.level_loaded("L1"), "R2 is still in L1");
    assert!(w.models().contains("M1"));
    assert_eq!(w.performer_levels("perf1"), ["L3"]);
    assert_eq!(w.performer_levels("perf2"), ["L1"]);
    // Then R2 leaves too: L1 goes.
    w.goto("R2", 100.0, 100.0);
    assert!(!w.level_loaded("L1"));
    assert!(!w.models().contains("M1"));
    assert!(w.models().contains("M3"), "L3 holds M3");
}

#[test]
fn at_load_only_the_default_level_performers_and_touched_levels_exist() {
    let mut w = load(&std::fs::read_to_string(seed_world_path()).unwrap(), true);
    // Before any step the host created the default level and the performers only.
    assert_eq!(w.models(), set(&["R1", "R2", "R3", "R4", "M6"]));
    w.f.run(1).unwrap();
    // The first step loads what the performers touch: L1 (R1, R2) and L2 (R3).
    assert_eq!(w.models(), set(&["R1", "R2", "R3", "R4", "M1", "M2", "M3", "M6"]));
    assert!(w.level_loaded("L1") && w.level_loaded("L2") && !w.level_loaded("L3"));
}
