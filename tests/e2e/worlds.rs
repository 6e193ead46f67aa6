//! Real worlds run: every gz-sim reference world, and the project's demo world.

use crate::harness::{default_config, repo_file, TestDir, Troupe};

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
