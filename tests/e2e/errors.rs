//! Every way of failing says what was wrong and where: exit 2 when `troupe` cannot start,
//! exit 1 when a running system fails, and a `troupe: error:` message on stderr.

use crate::harness::{server_config, world_sdf, TestDir, Troupe};
use std::path::PathBuf;

fn plugin(filename: &str, name: &str, inner: &str) -> String {
    format!("    <plugin filename=\"{filename}\" name=\"{name}\">{inner}</plugin>")
}

/// `libm` of this machine: a real shared library that is not a Troupe plugin.
fn libm() -> Option<PathBuf> {
    let found = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
        "/usr/lib64/libm.so.6",
        "/lib/aarch64-linux-gnu/libm.so.6",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.is_file());
    if found.is_none() {
        troupe_test_machine::lacks("no libm.so.6 in the usual places (Debian package libc6)");
    }
    found
}

#[test]
fn malformed_sdf_names_file_and_line() {
    let tmp = TestDir::new("malformed_sdf");
    // Line 5 closes <world> while <model> (line 4) is open.
    let file = tmp.write(
        "broken.sdf",
        "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n<world name=\"w\">\n<model name=\"m\">\n</world>\n</sdf>\n",
    );
    let out = Troupe::sim(&tmp).args(["-r", "--iterations", "5"]).arg(&file).run();
    out.assert_error(2, &[&format!("{}:5", file.display())]);
}

#[test]
fn invalid_sdf_element_names_file_and_line() {
    let tmp = TestDir::new("invalid_sdf");
    let file = tmp.write("noname.sdf", &world_sdf("w", "    <model>\n    </model>"));
    let out = Troupe::sim(&tmp).args(["-r", "--iterations", "5"]).arg(&file).run();
    out.assert_error(2, &[&format!("{}:4", file.display()), "<model>", "name"]);
}

#[test]
fn missing_world_file() {
    let tmp = TestDir::new("missing_world");
    let file = tmp.join("nowhere.sdf");
    let out = Troupe::sim(&tmp).args(["-r", "--iterations", "5"]).arg(&file).run();
    out.assert_error(2, &[&file.display().to_string()]);
}

/// The message names the library, the world file:line that asked for it, and every
/// directory searched (the one from `TROUPE_SYSTEM_PLUGIN_PATH` first).
#[test]
fn missing_plugin_library_names_library_origin_and_search_path() {
    let tmp = TestDir::new("missing_plugin");
    let extra = tmp.join("my-plugins");
    std::fs::create_dir_all(&extra).unwrap();
    let file = tmp.write("w.sdf", &world_sdf("w", &plugin("troupe_not_there", "x::Missing", "")));
    let out =
        Troupe::sim(&tmp).env("TROUPE_SYSTEM_PLUGIN_PATH", &extra).args(["-r", "--iterations", "5"]).arg(&file).run();
    let exe_dir = crate::harness::troupe_exe().parent().unwrap().to_path_buf();
    let msg = out.assert_error(
        2,
        &[
            "troupe_not_there",
            &format!("{}:4", file.display()),
            &extra.display().to_string(),
            &exe_dir.join("deps").display().to_string(),
        ],
    );
    let extra_at = msg.find(&extra.display().to_string()).unwrap();
    let deps_at = msg.find(&exe_dir.join("deps").display().to_string()).unwrap();
    assert!(extra_at < deps_at, "TROUPE_SYSTEM_PLUGIN_PATH is searched first: {msg}");
}

/// Every missing library is named at once, not just the first.
#[test]
fn all_missing_plugins_are_reported_together() {
    let tmp = TestDir::new("two_missing");
    let plugins = [plugin("troupe_nothere1", "x::A", ""), plugin("troupe_nothere2", "x::B", "")].concat();
    let file = tmp.write("w.sdf", &world_sdf("w", &plugins));
    let out = Troupe::sim(&tmp).args(["-r", "--iterations", "5"]).arg(&file).run();
    out.assert_error(2, &["2 plugins could not be loaded", "troupe_nothere1", "troupe_nothere2"]);
}

/// `--physics-engine` with the path of a real shared library that exports no Troupe module.
#[test]
fn physics_engine_that_is_not_a_plugin() {
    let Some(libm) = libm() else { return };
    let tmp = TestDir::new("not_plugin_engine");
    let out = Troupe::sim(&tmp)
        .args(["-r", "--iterations", "5", "--config"])
        .arg(crate::harness::default_config())
        .arg("--physics-engine")
        .arg(&libm)
        .run();
    out.assert_error(2, &[&libm.display().to_string(), "not a Troupe system plugin", "--physics-engine"]);
}

/// A real shared library found on `TROUPE_SYSTEM_PLUGIN_PATH` under a plugin's name.
#[test]
fn library_on_the_search_path_that_is_not_a_plugin() {
    let Some(libm) = libm() else { return };
    let tmp = TestDir::new("not_plugin_path");
    let dir = tmp.join("plugins");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&libm, dir.join("libnotaplugin.so")).expect("copy libm");
    let file = tmp.write("w.sdf", &world_sdf("w", &plugin("notaplugin", "x::Y", "")));
    let out =
        Troupe::sim(&tmp).env("TROUPE_SYSTEM_PLUGIN_PATH", &dir).args(["-r", "--iterations", "5"]).arg(&file).run();
    out.assert_error(
        2,
        &[
            &dir.join("libnotaplugin.so").display().to_string(),
            "not a Troupe system plugin",
            &format!("{}:4", file.display()),
        ],
    );
}

/// A world `<plugin filename>` may be an absolute path to a library file.
#[test]
fn world_plugin_by_absolute_path() {
    let tmp = TestDir::new("abs_plugin");
    if let Some(libm) = libm() {
        let file = tmp.write("libm.sdf", &world_sdf("w", &plugin(&libm.display().to_string(), "x::Y", "")));
        let out = Troupe::sim(&tmp).args(["-r", "--iterations", "5"]).arg(&file).run();
        out.assert_error(2, &[&libm.display().to_string(), "not a Troupe system plugin"]);
    }
    let testing = crate::harness::troupe_exe().parent().unwrap().join("deps/libtroupe_testing.so");
    let file = tmp.write("abs.sdf", &world_sdf("w", &plugin(&testing.display().to_string(), "testing::Noop", "")));
    Troupe::sim(&tmp).args(["-r", "--iterations", "5"]).arg(&file).run().assert_code(0);
}

#[test]
fn text_file_named_like_a_library() {
    let tmp = TestDir::new("bogus_library");
    let dir = tmp.join("plugins");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("libbogus.so"), "this is not an ELF file\n").unwrap();
    let file = tmp.write("w.sdf", &world_sdf("w", &plugin("bogus", "x::Y", "")));
    let out =
        Troupe::sim(&tmp).env("TROUPE_SYSTEM_PLUGIN_PATH", &dir).args(["-r", "--iterations", "5"]).arg(&file).run();
    out.assert_error(
        2,
        &[
            &dir.join("libbogus.so").display().to_string(),
            "cannot open as a shared library",
            &format!("{}:4", file.display()),
        ],
    );
}

/// Malformed config XML, by `--config` and by `GZ_SIM_SERVER_CONFIG_PATH`: file:line.
#[test]
fn malformed_server_config_names_file_and_line() {
    let tmp = TestDir::new("bad_config");
    // Line 5 closes <plugins> while <plugin> (line 4) is open.
    let config = tmp.write(
        "bad.config",
        "<?xml version=\"1.0\"?>\n<server_config>\n<plugins>\n<plugin entity_name=\"*\" entity_type=\"world\" filename=\"x\" name=\"y\">\n</plugins>\n</server_config>\n",
    );
    let where_ = format!("{}:5", config.display());
    let by_flag = Troupe::sim(&tmp).args(["-r", "--iterations", "5", "--config"]).arg(&config).run();
    by_flag.assert_error(2, &[&where_]);
    let by_env = Troupe::sim(&tmp).env("GZ_SIM_SERVER_CONFIG_PATH", &config).args(["-r", "--iterations", "5"]).run();
    by_env.assert_error(2, &[&where_]);
}

/// Well-formed XML that is not a valid config: the bad entry's line.
#[test]
fn invalid_server_config_entry_names_file_and_line() {
    let tmp = TestDir::new("invalid_config");
    let config = tmp.write(
        "bad.config",
        &server_config(
            "    <plugin entity_name=\"*\" entity_type=\"galaxy\" filename=\"troupe_testing\" name=\"testing::Noop\"/>",
        ),
    );
    let out = Troupe::sim(&tmp).args(["-r", "--iterations", "5", "--config"]).arg(&config).run();
    out.assert_error(2, &[&format!("{}:4", config.display()), "galaxy"]);
}

#[test]
fn config_file_that_does_not_exist() {
    let tmp = TestDir::new("missing_config");
    let config = tmp.join("nothere.config");
    let out = Troupe::sim(&tmp).args(["-r", "--iterations", "5", "--config"]).arg(&config).run();
    out.assert_error(2, &[&config.display().to_string(), "does not exist", "--config"]);
    let out = Troupe::sim(&tmp).env("GZ_SIM_SERVER_CONFIG_PATH", &config).args(["-r", "--iterations", "5"]).run();
    out.assert_error(2, &[&config.display().to_string(), "does not exist", "GZ_SIM_SERVER_CONFIG_PATH"]);
}

fn misbehaving(tmp: &TestDir, class: &str, phase: &str, at: u64) -> (PathBuf, crate::harness::Output) {
    let inner = format!("<phase>{phase}</phase><at>{at}</at>");
    let file = tmp.write(&format!("{phase}.sdf"), &world_sdf("w", &plugin("troupe_testing", class, &inner)));
    let out = Troupe::sim(tmp).args(["-r", "--iterations", "10"]).arg(&file).run();
    (file, out)
}

/// A panic while running: exit 1, naming the system, where it was requested, the phase and
/// the panic message.
#[test]
fn panic_in_update_fails_the_run() {
    let tmp = TestDir::new("panic_update");
    let (file, out) = misbehaving(&tmp, "testing::Panic", "update", 3);
    out.assert_error(
        1,
        &["testing::Panic", &format!("{}:4", file.display()), "panicked in update", "deliberate panic in update"],
    );
    out.assert_stderr_has(&["troupe: running world(s) w"]);
}

/// A panic while loading: the server cannot start, exit 2.
#[test]
fn panic_in_configure_stops_the_start() {
    let tmp = TestDir::new("panic_configure");
    let (file, out) = misbehaving(&tmp, "testing::Panic", "configure", 1);
    out.assert_error(
        2,
        &["testing::Panic", &format!("{}:4", file.display()), "configure", "deliberate panic in configure"],
    );
    out.assert_stderr_lacks("troupe: running world(s)");
}

/// An error returned in every running phase: exit 1, "failed in PHASE".
#[test]
fn failure_while_running_fails_the_run() {
    let tmp = TestDir::new("fail_running");
    for phase in ["pre_update", "update", "post_update"] {
        let (_, out) = misbehaving(&tmp, "testing::Fail", phase, 4);
        out.assert_error(
            1,
            &["testing::Fail", &format!("failed in {phase}"), &format!("deliberate failure in {phase}")],
        );
    }
}

#[test]
fn failure_in_configure_stops_the_start() {
    let tmp = TestDir::new("fail_configure");
    let (file, out) = misbehaving(&tmp, "testing::Fail", "configure", 1);
    out.assert_error(
        2,
        &["testing::Fail", &format!("{}:4", file.display()), "failed in configure", "deliberate failure in configure"],
    );
}

/// A class the library does not have: the error lists what it offers.
#[test]
fn unknown_class_lists_the_library_systems() {
    let tmp = TestDir::new("unknown_class");
    let file = tmp.write("w.sdf", &world_sdf("w", &plugin("troupe_testing", "testing::Nope", "")));
    let out = Troupe::sim(&tmp).args(["-r", "--iterations", "5"]).arg(&file).run();
    out.assert_error(
        2,
        &[
            "testing::Nope",
            &format!("{}:4", file.display()),
            "testing::Noop",
            "testing::Panic",
            "testing::Recorder",
            "testing::Stopper",
        ],
    );
}
