//! `<include>` through the real binary: `model://` found on `GZ_SIM_RESOURCE_PATH` /
//! `SDF_PATH` from the environment, included entities numbered in place, the systems of
//! included models loaded, and a missing model stopping the start with a clear error.

use crate::harness::{repo_file, Recorded, TestDir, Troupe};

/// `worlds/test/include/include.sdf` with its models on `GZ_SIM_RESOURCE_PATH`: ids are the
/// ones in the file's comments, and the two `testing::Noop` systems (one in the crate's own
/// file, one appended by an `<include><plugin>`) load.
#[test]
fn included_models_are_numbered_in_place_and_their_systems_load() {
    let tmp = TestDir::new("include_world");
    let out = Troupe::sim(&tmp)
        .env("GZ_SIM_RESOURCE_PATH", repo_file("worlds/test/include/models"))
        .env("SDF_PATH", "")
        .args(["-r", "-v", "3", "--iterations", "3"])
        .arg(repo_file("worlds/test/include/include.sdf"))
        .run();
    out.assert_code(0);
    let got = Recorded::read(&tmp, "include_ids.txt", &out);
    let mut sorted = got.entities.clone();
    sorted.sort();
    let sorted: Vec<(u64, &str)> = sorted.iter().map(|(i, n)| (*i, n.as_str())).collect();
    let expected: &[(u64, &str)] = &[
        (1, "include"),
        (2, "crate"),
        (3, "box"),
        (4, "box_collision"),
        (5, "between"),
        (6, "link"),
        (7, "cart2"),
        (8, "chassis"),
        (9, "left"),
        (10, "rim"),
        (11, "rim_collision"),
        (12, "right"),
        (13, "rim"),
        (14, "rim_collision"),
        (15, "axle"),
        (16, "lamp2"),
        (17, "spare"),
        (18, "rim"),
        (19, "rim_collision"),
        (20, "after"),
    ];
    assert_eq!(sorted, expected, "ids differ from document order with includes expanded in place");
    let noops = out.stderr_lines_with("loaded system testing::Noop");
    assert_eq!(noops.len(), 2, "the crate's plugin and the one the include appends\n{out}");
}

/// Without the models folder on any path, the start fails naming the URI, the including
/// file and line, and each folder searched.
#[test]
fn a_missing_model_names_the_uri_the_line_and_the_folders() {
    let tmp = TestDir::new("include_missing");
    let world = repo_file("worlds/test/include/include.sdf");
    let out = Troupe::sim(&tmp)
        .env("GZ_SIM_RESOURCE_PATH", "/nonexistent/gz")
        .env("SDF_PATH", "/nonexistent/sdf")
        .args(["-r", "--iterations", "3"])
        .arg(&world)
        .run();
    let line = std::fs::read_to_string(&world)
        .unwrap_or_default()
        .lines()
        .position(|l| l.contains("<uri>model://crate</uri>"))
        .unwrap_or(0); // the <include> is the line above the <uri>: its 1-based number is this index
    out.assert_error(
        2,
        &[
            &format!("{}:{line}: <include>: model \"crate\" of model://crate not found", world.display()),
            "/nonexistent/gz (GZ_SIM_RESOURCE_PATH), /nonexistent/sdf (SDF_PATH)",
        ],
    );
}
