//! Real worlds run: every gz-sim reference world, and the project's demo world; every world
//! file of gz-sim's `test/worlds` reads as XML.

use crate::harness::{default_config, repo_file, TestDir, Troupe};
use std::path::{Path, PathBuf};

/// Every `.sdf` of `$TROUPE_GZ_WORLDS` (3k_shapes included) runs 50 iterations with the
/// default server config and exits 0. All worlds are tried before failing, so one report
/// lists every broken world.
#[test]
fn every_gz_reference_world_runs_50_iterations() {
    let Some(dir) = troupe_test_machine::gz_worlds() else { return };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sdf"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .sdf files in {}", dir.display());
    let tmp = TestDir::new("gz_worlds");
    let mut failures = Vec::new();
    for file in &files {
        let out =
            Troupe::sim(&tmp).args(["-r", "--iterations", "50", "--config"]).arg(default_config()).arg(file).run();
        let iterations = out.stdout.lines().find(|l| l.starts_with("iterations: ")).map(|_| out.summary_iterations());
        if out.code() != Some(0) || iterations != Some(50) {
            failures.push(format!(
                "{}: exit {:?}, summary iterations {iterations:?}\n{out}",
                file.display(),
                out.code()
            ));
        } else {
            eprintln!("ok: {} ({:.2} s)", file.display(), out.elapsed.as_secs_f64());
        }
    }
    assert!(failures.is_empty(), "{} of {} worlds failed:\n{}", failures.len(), files.len(), failures.join("\n\n"));
}

/// The 3000-shape world on its own, so a failure there is named by the test.
#[test]
fn gz_3k_shapes_runs() {
    let Some(file) = troupe_test_machine::gz_world("3k_shapes.sdf") else { return };
    let tmp = TestDir::new("gz_3k_shapes");
    let out = Troupe::sim(&tmp).args(["-r", "--iterations", "50", "--config"]).arg(default_config()).arg(&file).run();
    out.assert_code(0).assert_stderr_has(&["troupe: running world(s) shapes"]);
    assert_eq!(out.summary_iterations(), 50, "{out}");
}

/// `worlds/demo.sdf` runs with the template system loaded: at `-v 3` its periodic log line
/// (every 1000 iterations) appears. `-z 20000` only makes the 1000 iterations quick.
#[test]
fn demo_world_runs_with_the_template() {
    let tmp = TestDir::new("demo");
    let out = Troupe::sim(&tmp)
        .args(["-r", "-v", "3", "-z", "20000", "--iterations", "1000", "--config"])
        .arg(default_config())
        .arg(repo_file("worlds/demo.sdf"))
        .run();
    out.assert_code(0).assert_stderr_has(&[
        "troupe: running world(s) demo",
        "demo: attached to entity 1",
        "demo: t = 1.000 s",
    ]);
    assert_eq!(out.summary_iterations(), 1000, "{out}");
    let loaded = out.stderr_lines_with("loaded system troupe::Template");
    assert_eq!(loaded.len(), 1, "the template is loaded once\n{out}");
    assert!(loaded[0].contains("libtroupe_template.so"), "{out}");
}

/// Every `.sdf` and `.world` file under `$TROUPE_GZ_TEST_WORLDS` (gz-sim's `test/worlds`,
/// sub-folders included) is well-formed XML to Troupe's reader, as it is to libsdformat's
/// tinyxml2. Only the XML level: whether each file loads as a world (resources, plugins) is
/// not asked here. Every file is tried before failing, so one report lists every failure.
#[test]
fn every_gz_test_world_file_reads_as_xml() {
    let Some(dir) = troupe_test_machine::gz_test_worlds() else { return };
    let mut files = Vec::new();
    world_files(&dir, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no .sdf or .world files under {}", dir.display());
    let mut failures = Vec::new();
    for file in &files {
        let read = std::fs::read_to_string(file).map_err(|e| e.to_string());
        match read.and_then(|text| troupe::config::parse_element_lenient(&text).map_err(|e| e.to_string())) {
            Ok(_) => {}
            Err(e) => failures.push(format!("{}:{e}", file.display())),
        }
    }
    eprintln!("{} of {} files read as XML", files.len() - failures.len(), files.len());
    assert!(
        failures.is_empty(),
        "{} of {} files do not read as XML:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// The `.sdf` and `.world` files under `dir`, recursively.
fn world_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            world_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "sdf" || x == "world") {
            out.push(path);
        }
    }
}
