//! gz-sim's own `test/worlds/levels.sdf` (`$TROUPE_GZ_WORLDS/levels.sdf`) with levels on:
//! five 30 x 30 x 10 m levels with a 5 m buffer, each holding one tile; performers `sphere`
//! and `box` at the origin; `tile_0` global.

use crate::support::{load, set};

#[test]
fn gz_levels_world_loads_what_its_levels_say() {
    let Some(file) = troupe_test_machine::gz_world("levels.sdf") else { return };
    let text = std::fs::read_to_string(file).unwrap();
    let mut w = load(&text, true);
    // At load: the global tile and the two performers.
    assert_eq!(w.models(), set(&["sphere", "box", "tile_0"]));
    w.f.run(1).unwrap();
    // level1 (x 25..55, y -15..15 with its buffer) does not reach the performers at the
    // origin (2 m boxes): nothing more is loaded.
    assert_eq!(w.models(), set(&["sphere", "box", "tile_0"]));
    for l in ["level1", "level2", "level3", "level4", "level5"] {
        assert!(!w.level_loaded(l), "{l}");
    }
    // The sphere (a 2 m box) at x = 30 is inside level1 and touches level2's buffered box
    // (y 0..40) with its side at y = 1: level1 and level2 load their tiles.
    w.goto("sphere", 30.0, 0.0);
    assert_eq!(w.performer_levels("perf_sphere"), ["level1", "level2"]);
    assert_eq!(w.models(), set(&["sphere", "box", "tile_0", "tile_1", "tile_2"]));
    // The sphere leaves; the box goes to x = 70, inside level4 and touching the buffered
    // boxes of level3 (y -40..0) and level5 (y 0..40), but not level1's or level2's
    // (x up to 60).
    w.goto("sphere", -100.0, 0.0);
    assert_eq!(w.models(), set(&["sphere", "box", "tile_0"]));
    w.goto("box", 70.0, 0.0);
    assert_eq!(w.performer_levels("perf_box"), ["level3", "level4", "level5"]);
    assert_eq!(w.models(), set(&["sphere", "box", "tile_0", "tile_3", "tile_4", "tile_5"]));
}
