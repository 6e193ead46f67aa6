//! Models created while running (`testing::Spawner`): their systems load at the start of
//! the next step, and are dropped when the model is removed.

use crate::harness::{world_sdf, Recorded, TestDir, Troupe, UNPACED};

/// A world whose Spawner creates `model` (SDF text) at iteration `at` and removes it at
/// `remove_at`; a world-level Recorder writes `world.txt`.
fn spawner_world(model: &str, at: u64, remove_at: Option<u64>) -> String {
    let remove = remove_at.map(|r| format!("<remove_at>{r}</remove_at>")).unwrap_or_default();
    let body = format!(
        "{UNPACED}\n    <plugin filename=\"troupe_testing\" name=\"testing::Spawner\">\n      <at>{at}</at>{remove}\n      <sdf><![CDATA[{model}]]></sdf>\n    </plugin>\n    <plugin filename=\"troupe_testing\" name=\"testing::Recorder\"><output>world.txt</output></plugin>"
    );
    world_sdf("w", &body)
}

fn model_with_plugin(class: &str, inner: &str) -> String {
    format!("<model name=\"spawned\"><link name=\"body\"/><plugin filename=\"troupe_testing\" name=\"{class}\">{inner}</plugin></model>")
}

/// The spawned model's Recorder is loaded and runs to the end of the run: its file exists
/// and lists the spawned entities with run-time ids after the file's.
#[test]
fn spawned_model_system_is_loaded() {
    let tmp = TestDir::new("spawn_loaded");
    let model = model_with_plugin("testing::Recorder", "<output>spawned.txt</output>");
    let file = tmp.write("w.sdf", &spawner_world(&model, 3, None));
    let out = Troupe::sim(&tmp).args(["-r", "-v", "3", "--iterations", "20"]).arg(&file).run();
    out.assert_code(0);
    assert_eq!(out.stderr_lines_with("loaded system testing::Recorder").len(), 2, "world and spawned Recorders\n{out}");
    let spawned = Recorded::read(&tmp, "spawned.txt", &out);
    assert_eq!((spawned.world.as_str(), spawned.iterations), ("w", 20));
    assert!(spawned.has_entity("spawned") && spawned.has_entity("body"), "{spawned:?}");
    let world = Recorded::read(&tmp, "world.txt", &out);
    let id_of = |name: &str| world.entities.iter().find(|(_, n)| n == name).map(|(i, _)| *i);
    let model_id = id_of("spawned").unwrap_or_else(|| panic!("no spawned model: {world:?}"));
    assert!(model_id > id_of("w").unwrap(), "run-time ids follow the file's: {world:?}");
    assert_eq!(id_of("body"), Some(model_id + 1), "the spawned link follows its model: {world:?}");
}

/// Spawned at iteration 3, the model's system first runs in iteration 4: a system that
/// panics in pre_update of iteration 4 fails the run, one set for iteration 3 never fires.
#[test]
fn spawned_model_system_runs_from_the_next_step() {
    let tmp = TestDir::new("spawn_next_step");
    let panic_at = |at: u64| {
        let model = model_with_plugin("testing::Panic", &format!("<phase>pre_update</phase><at>{at}</at>"));
        let file = tmp.write(&format!("at{at}.sdf"), &spawner_world(&model, 3, None));
        Troupe::sim(&tmp).args(["-r", "--iterations", "10"]).arg(&file).run()
    };
    let next = panic_at(4);
    next.assert_error(1, &["testing::Panic", "panicked in pre_update", "deliberate panic in pre_update"]);
    let same = panic_at(3);
    same.assert_code(0);
    assert_eq!(same.summary_iterations(), 10, "{same}");
}

/// Removing the model drops its system (logged), and the entities are gone from the world.
#[test]
fn removing_the_model_drops_its_system() {
    let tmp = TestDir::new("spawn_removed");
    let model = model_with_plugin("testing::Recorder", "<output>spawned.txt</output>");
    let file = tmp.write("w.sdf", &spawner_world(&model, 3, Some(10)));
    let out = Troupe::sim(&tmp).args(["-r", "-v", "3", "--iterations", "20"]).arg(&file).run();
    out.assert_code(0);
    let spawned_id: u64 = out
        .stderr_lines_with("spawned entity ")
        .first()
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|id| id.trim().parse().ok())
        .unwrap_or_else(|| panic!("no `spawned entity ID` log line\n{out}"));
    let dropped = out.stderr_lines_with("dropped: its entity");
    assert_eq!(dropped.len(), 1, "{out}");
    assert!(
        dropped[0].contains("testing::Recorder") && dropped[0].contains(&format!("its entity {spawned_id} ")),
        "{out}"
    );

    let world = Recorded::read(&tmp, "world.txt", &out);
    assert_eq!(world.iterations, 20);
    assert!(!world.has_entity("spawned") && !world.has_entity("body"), "removed entities still there: {world:?}");
    // The dropped system saw no iteration after its removal.
    if let Some(text) = tmp.read("spawned.txt") {
        let spawned = Recorded::parse(&text);
        assert!(spawned.iterations <= 10, "the dropped system ran after removal: {spawned:?}");
    }
}

/// A model without systems: the world Recorder sees its entities after it is spawned.
#[test]
fn spawned_entities_appear_in_the_world() {
    let tmp = TestDir::new("spawn_plain");
    let file = tmp.write("w.sdf", &spawner_world("<model name=\"spawned\"><link name=\"body\"/></model>", 2, None));
    let out = Troupe::sim(&tmp).args(["-r", "--iterations", "5"]).arg(&file).run();
    out.assert_code(0);
    let world = Recorded::read(&tmp, "world.txt", &out);
    assert!(world.has_entity("spawned") && world.has_entity("body"), "{world:?}");
}

/// A spawned model naming a library that does not exist ends the run (exit 1) with the
/// library named.
#[test]
fn spawned_model_with_missing_library_fails_the_run() {
    let tmp = TestDir::new("spawn_missing_lib");
    let model =
        "<model name=\"spawned\"><link name=\"body\"/><plugin filename=\"troupe_not_there\" name=\"x::Gone\"/></model>";
    let file = tmp.write("w.sdf", &spawner_world(model, 2, None));
    let out = Troupe::sim(&tmp).args(["-r", "--iterations", "10"]).arg(&file).run();
    out.assert_error(1, &["troupe_not_there", "x::Gone", "not found"]);
}
