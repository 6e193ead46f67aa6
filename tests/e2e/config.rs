//! Which systems the server config adds: `GZ_SIM_SERVER_CONFIG_PATH`, `--config`, the
//! world's `include_server_config_plugins` policy, and `--physics-engine`.

use crate::harness::{default_config, server_config, world_sdf, Recorded, TestDir, Troupe};

const CONFIG_RECORDER: &str = "    <plugin entity_name=\"*\" entity_type=\"world\" filename=\"troupe_testing\" name=\"testing::Recorder\">\n      <output>from_config.txt</output>\n    </plugin>";
const TEMPLATE: &str = "    <plugin filename=\"troupe_template\" name=\"troupe::Template\"/>";

/// `GZ_SIM_SERVER_CONFIG_PATH=""` loads no config plugins at all: nothing is loaded or
/// skipped for a world without plugins. The default config, by contrast, names physics.
#[test]
fn empty_config_env_means_no_config_plugins() {
    let tmp = TestDir::new("empty_config_env");
    let file = tmp.write("w.sdf", &world_sdf("w", ""));
    let out = Troupe::sim(&tmp)
        .env("GZ_SIM_SERVER_CONFIG_PATH", "")
        .args(["-r", "-v", "2", "--iterations", "5"])
        .arg(&file)
        .run();
    out.assert_code(0).assert_stderr_lacks("not available yet").assert_stderr_lacks("[WARN");
    let out = Troupe::sim(&tmp)
        .env("GZ_SIM_SERVER_CONFIG_PATH", "")
        .args(["-r", "-v", "3", "--iterations", "5"])
        .arg(&file)
        .run();
    out.assert_code(0).assert_stderr_lacks("loaded system");
    assert!(!out.stderr.to_lowercase().contains("physics"), "physics mentioned with no config\n{out}");

    let out = Troupe::sim(&tmp)
        .args(["-r", "-v", "3", "--iterations", "5", "--config"])
        .arg(default_config())
        .arg(&file)
        .run();
    out.assert_code(0);
    assert!(
        out.stderr.to_lowercase().contains("physics"),
        "the default config's physics entry is not mentioned\n{out}"
    );
}

/// A config file's world plugin reaches a world that has no plugins of its own, by
/// `--config` and by `GZ_SIM_SERVER_CONFIG_PATH`.
#[test]
fn config_plugins_reach_the_world() {
    let tmp = TestDir::new("config_plugins");
    let config = tmp.write("recorder.config", &server_config(CONFIG_RECORDER));
    let file = tmp.write("w.sdf", &world_sdf("plain", ""));
    let by_flag =
        Troupe::sim(&tmp).args(["-r", "-v", "3", "--iterations", "5", "--config"]).arg(&config).arg(&file).run();
    by_flag.assert_code(0).assert_stderr_has(&["loaded system testing::Recorder"]);
    let rec = Recorded::read(&tmp, "from_config.txt", &by_flag);
    assert_eq!((rec.world.as_str(), rec.iterations), ("plain", 5));

    std::fs::remove_file(tmp.join("from_config.txt")).unwrap();
    let by_env =
        Troupe::sim(&tmp).env("GZ_SIM_SERVER_CONFIG_PATH", &config).args(["-r", "--iterations", "6"]).arg(&file).run();
    by_env.assert_code(0);
    assert_eq!(Recorded::read(&tmp, "from_config.txt", &by_env).iterations, 6);
}

/// `--config` wins over `GZ_SIM_SERVER_CONFIG_PATH`.
#[test]
fn config_flag_wins_over_env() {
    let tmp = TestDir::new("config_precedence");
    let config = tmp.write("recorder.config", &server_config(CONFIG_RECORDER));
    let file = tmp.write("w.sdf", &world_sdf("w", ""));
    let out = Troupe::sim(&tmp)
        .env("GZ_SIM_SERVER_CONFIG_PATH", tmp.join("does-not-exist.config"))
        .args(["-r", "--iterations", "5", "--config"])
        .arg(&config)
        .arg(&file)
        .run();
    out.assert_code(0);
    Recorded::read(&tmp, "from_config.txt", &out);
}

/// A world that names a world plugin (from another library) still gets the config set by
/// default; with `include_server_config_plugins` false it does not.
#[test]
fn policy_can_exclude_config_plugins() {
    let tmp = TestDir::new("policy");
    let config = tmp.write("recorder.config", &server_config(CONFIG_RECORDER));
    let run = |name: &str, body: &str| {
        let _ = std::fs::remove_file(tmp.join("from_config.txt"));
        let file = tmp.write(name, &world_sdf("w", body));
        Troupe::sim(&tmp).args(["-r", "-v", "3", "--iterations", "5", "--config"]).arg(&config).arg(&file).run()
    };

    let with_set = run("with.sdf", TEMPLATE);
    with_set.assert_code(0).assert_stderr_has(&["loaded system troupe::Template", "loaded system testing::Recorder"]);
    assert!(tmp.read("from_config.txt").is_some(), "config Recorder did not run\n{with_set}");

    let policy = "    <gz:policies>\n      <include_server_config_plugins>false</include_server_config_plugins>\n    </gz:policies>";
    let without = run("without.sdf", &format!("{policy}\n{TEMPLATE}"));
    without
        .assert_code(0)
        .assert_stderr_has(&["loaded system troupe::Template"])
        .assert_stderr_lacks("testing::Recorder");
    assert!(tmp.read("from_config.txt").is_none(), "the config Recorder ran despite the policy\n{without}");

    // The policy only applies when the world names a world plugin: with none, the set loads.
    let no_plugins = run("bare.sdf", policy);
    no_plugins.assert_code(0).assert_stderr_has(&["loaded system testing::Recorder"]);
}

/// `--physics-engine troupe_testing` replaces the config's physics entry: the library is
/// loaded in its place and the physics entry is neither loaded nor reported missing.
#[test]
fn physics_engine_replaces_the_physics_entry() {
    let tmp = TestDir::new("physics_engine");
    let file = tmp.write("w.sdf", &world_sdf("w", ""));
    let out = Troupe::sim(&tmp)
        .args(["-r", "-v", "3", "--iterations", "5", "--physics-engine", "troupe_testing", "--config"])
        .arg(default_config())
        .arg(&file)
        .run();
    out.assert_code(0);
    let loaded = out.stderr_lines_with("loaded system");
    assert!(loaded.iter().any(|l| l.contains("libtroupe_testing.so")), "troupe_testing not loaded\n{out}");
    assert!(!loaded.iter().any(|l| l.contains("physics")), "a physics system loaded too\n{out}");
    assert!(out.stderr_lines_with("physics_rapier").iter().all(|l| !l.contains("not available yet")), "{out}");
    assert!(out.stderr_lines_with("--physics-engine").iter().any(|l| l.contains("replaces")), "{out}");

    // Without a physics entry in the config, the engine is added.
    let out = Troupe::sim(&tmp)
        .args(["-r", "-v", "3", "--iterations", "5", "--physics-engine", "troupe_testing"])
        .arg(&file)
        .run();
    out.assert_code(0);
    assert_eq!(out.stderr_lines_with("loaded system").len(), 1, "{out}");
}
