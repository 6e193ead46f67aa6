//! Entity ids are a pure function of the world file: the same in every load and process,
//! numbered 1..N in depth-first document order (`worlds/test/ids.sdf` has the expected id
//! of every element in a comment).

use crate::harness::{repo_file, Recorded, TestDir, Troupe};

fn record(tmp: &TestDir, world: &std::path::Path) -> Recorded {
    let _ = std::fs::remove_file(tmp.join("ids.txt"));
    let out = Troupe::sim(tmp).args(["-r", "--iterations", "3"]).arg(world).run();
    out.assert_code(0);
    Recorded::read(tmp, "ids.txt", &out)
}

/// Two processes loading the same file (once by its path in the checkout, once as a copy
/// elsewhere) list identical `entity ID NAME` lines, numbered 1..N.
#[test]
fn ids_are_the_same_across_loads_and_processes() {
    let tmp = TestDir::new("ids_same");
    let world = repo_file("worlds/test/ids.sdf");
    let first = record(&tmp, &world);
    let second = record(&tmp, &world);
    let text = std::fs::read_to_string(&world).expect("read ids.sdf");
    let copy = tmp.write("elsewhere/copy.sdf", &text);
    let third = record(&tmp, &copy);

    assert_eq!(first.world, "ids");
    assert!(!first.entity_lines.is_empty(), "the Recorder saw no entities: {first:?}");
    assert_eq!(first.entity_lines, second.entity_lines, "a second process numbered the entities differently");
    assert_eq!(first.entity_lines, third.entity_lines, "a copy of the file in another directory numbered differently");

    let mut ids: Vec<u64> = first.entities.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    let n = ids.len() as u64;
    assert_eq!(ids, (1..=n).collect::<Vec<_>>(), "ids are not exactly 1..{n}: {first:?}");
}

/// The ids are the depth-first, document-order positions of the entity elements, checked
/// element by element against the comments of `worlds/test/ids.sdf`.
#[test]
fn ids_follow_depth_first_document_order() {
    let tmp = TestDir::new("ids_order");
    let got = record(&tmp, &repo_file("worlds/test/ids.sdf"));
    let expected: &[(u64, &str)] = &[
        (1, "ids"),
        (2, "lamp"),
        (3, "cart"),
        (4, "chassis"),
        (5, "chassis_collision"),
        (6, "chassis_visual"),
        (7, "axle"), // a joint written between two links
        (8, "wheel"),
        (9, "imu"), // a sensor written before the link's visual
        (10, "wheel_visual"),
        (11, "trailer"), // a nested model
        (12, "bed"),
        (13, "ground"),
        (14, "link"),
        (15, "collision"),
    ];
    let mut sorted = got.entities.clone();
    sorted.sort();
    let sorted: Vec<(u64, &str)> = sorted.iter().map(|(i, n)| (*i, n.as_str())).collect();
    assert_eq!(sorted, expected, "ids differ from depth-first document order");
}
