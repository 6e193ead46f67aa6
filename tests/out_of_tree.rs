//! Plugins built outside the workspace, in their own target directories, as third parties
//! build them, then loaded by the real host:
//!
//! * the template plugin, against the current plugin-api by path;
//! * a plugin built against the frozen plugin-api 1.0.0 (`tests/abi-compat/`), which this
//!   1.x host must load;
//! * the same plugin against that copy with its major version bumped to 2.0.0, which the
//!   host must refuse with a short message.

use plugin_api::{ComponentTypeId, EntityId};
use std::path::{Path, PathBuf};
use std::process::Command;
use troupe::fixture::TestFixture;
use troupe::plugin::{LoadError, PluginLoader, SearchPath};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("host/ has a parent").to_path_buf()
}

/// `<target>/out-of-tree/<name>`: this test binary lives in `<target>/<profile>/deps/`.
fn scratch(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let target = exe.ancestors().nth(3).expect("<target>/<profile>/deps/<exe>");
    target.join("out-of-tree").join(name)
}

/// Builds the cdylib of `manifest` in `target_dir`; answers the `.so` path.
fn build(manifest: &Path, target_dir: &Path, lib: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let run = |offline: bool| {
        let mut cmd = Command::new(&cargo);
        cmd.arg("build").arg("--manifest-path").arg(manifest).arg("--target-dir").arg(target_dir);
        if offline {
            cmd.arg("--offline");
        }
        // Do not inherit the outer build's profile settings or flags.
        cmd.env_remove("CARGO_PROFILE_DEV_OPT_LEVEL").env_remove("RUSTFLAGS");
        cmd.output().expect("cargo runs")
    };
    // Offline first: the workspace build has fetched every crate these need.
    let mut out = run(true);
    if !out.status.success() {
        out = run(false);
    }
    assert!(out.status.success(), "building {} failed:\n{}", manifest.display(), String::from_utf8_lossy(&out.stderr));
    let so = target_dir.join("debug").join(format!("lib{lib}.so"));
    assert!(so.is_file(), "{} was not produced", so.display());
    so
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "target" {
                copy_dir(&entry.path(), &dest);
            }
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

fn world_with(plugin: &Path, class: &str, params: &str) -> String {
    format!(
        r#"<?xml version="1.0"?><sdf version="1.9"><world name="w">
        <plugin filename="{}" name="{class}">{params}</plugin>
        <model name="m"><link name="l"/></model></world></sdf>"#,
        plugin.display()
    )
}

fn run_world(sdf: &str, steps: u64) -> TestFixture {
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
    let mut fixture = TestFixture::from_sdf(sdf).expect("world loads").finalize().expect("finalize");
    fixture.run(steps).expect("runs");
    fixture
}

fn u64_component(fixture: &TestFixture, entity: EntityId, name: &str) -> Option<u64> {
    let mut out = Vec::new();
    fixture
        .ecm()
        .get_raw(entity, ComponentTypeId::of_name(name), &mut out)
        .then(|| u64::from_le_bytes(out.try_into().expect("8 bytes")))
}

#[test]
fn template_builds_outside_the_workspace_and_loads() {
    let src = scratch("template-src");
    let _ = std::fs::remove_dir_all(&src);
    copy_dir(&repo().join("plugins/template"), &src);
    let manifest = src.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let api = repo().join("plugin-api");
    let text =
        text.replace("path = \"../../plugin-api\"", &format!("path = \"{}\"", api.display())) + "\n[workspace]\n";
    assert!(text.contains(&api.display().to_string()), "the template depends on plugin-api by path");
    std::fs::write(&manifest, text).unwrap();
    let so = build(&manifest, &scratch("template-target"), "troupe_template");

    let fixture = run_world(&world_with(&so, "troupe::Template", "<every>2</every>"), 3);
    let world = fixture.runner().world_entity();
    assert_eq!(u64_component(&fixture, world, "troupe_template.StepCount"), Some(3));
}

#[test]
fn plugin_built_against_frozen_plugin_api_1_0_loads() {
    let manifest = repo().join("tests/abi-compat/plugin-old/Cargo.toml");
    let so = build(&manifest, &scratch("old-target"), "troupe_compat_old");

    let mut loader = PluginLoader::new(SearchPath::default(), 0);
    let lib = loader.load_path(&so).expect("a 1.0 plugin loads into a 1.1 host");
    assert_eq!(lib.name, "troupe_compat_old");
    assert_eq!(lib.system_names(), None, "1.0 libraries do not have the 1.1 field");
    // Nor the 1.8 one: their systems are what an unmarked system is.
    assert_eq!(lib.system_info("compat::Old"), Some(plugin_api::SystemInfo::OTHER));

    let fixture = run_world(&world_with(&so, "compat::Old", ""), 5);
    let world = fixture.runner().world_entity();
    assert_eq!(u64_component(&fixture, world, "compat.Updates"), Some(5));
}

#[test]
fn plugin_built_against_another_major_version_is_refused_briefly() {
    let api = scratch("plugin-api-2.0.0");
    let plugin = scratch("plugin-major");
    let _ = std::fs::remove_dir_all(&api);
    let _ = std::fs::remove_dir_all(&plugin);
    copy_dir(&repo().join("tests/abi-compat/plugin-api-1.0.0"), &api);
    copy_dir(&repo().join("tests/abi-compat/plugin-old"), &plugin);
    let _ = std::fs::remove_file(plugin.join("Cargo.lock"));
    let cargo_toml = api.join("Cargo.toml");
    let text = std::fs::read_to_string(&cargo_toml).unwrap().replace("version = \"1.0.0\"", "version = \"2.0.0\"");
    std::fs::write(&cargo_toml, text).unwrap();
    let manifest = plugin.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("path = \"../plugin-api-1.0.0\"", &format!("path = \"{}\"", api.display()));
    std::fs::write(&manifest, text).unwrap();
    let so = build(&manifest, &scratch("major-target"), "troupe_compat_old");

    let mut loader = PluginLoader::new(SearchPath::default(), 0);
    let err = loader.load_path(&so).err().expect("a 2.0 plugin must be refused");
    let message = err.to_string();
    assert!(matches!(err, LoadError::IncompatibleVersion { .. }), "{message}");
    assert!(message.contains("2.0.0") && message.contains("which this troupe (plugin-api 1."), "{message}");
    assert!(message.contains(&so.display().to_string()), "names the plugin: {message}");
    assert!(message.lines().count() == 1 && message.len() < 400, "short, not abi_stable's dump: {message}");
}

/// The `key = value` lines of the TOML table `[name]` in `text`, comments and blank lines left out.
fn toml_table(text: &str, name: &str) -> Vec<String> {
    let header = format!("[{name}]");
    text.lines()
        .skip_while(|l| l.trim() != header)
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .map(|l| l.split('#').next().unwrap_or_default().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Every crate of the workspace takes the workspace's lints; the template, which is copied out
/// of the workspace, writes the same table out.
#[test]
fn every_crate_takes_the_workspace_lints_and_the_template_states_the_same() {
    let root = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let members = root.lines().find_map(|l| l.strip_prefix("members = [")).expect("the workspace lists its members");
    let members: Vec<&str> = members.trim_end_matches(']').split(',').map(|m| m.trim().trim_matches('"')).collect();
    assert!(members.len() > 10 && members.contains(&"host"), "{members:?}");
    for member in members.iter().filter(|m| **m != "plugins/template") {
        let manifest = std::fs::read_to_string(repo().join(member).join("Cargo.toml")).unwrap();
        assert_eq!(
            toml_table(&manifest, "lints"),
            ["workspace = true"],
            "{member}/Cargo.toml takes the workspace's lints"
        );
    }
    let template = std::fs::read_to_string(repo().join("plugins/template/Cargo.toml")).unwrap();
    for table in ["rust", "clippy"] {
        let workspace = toml_table(&root, &format!("workspace.lints.{table}"));
        assert!(!workspace.is_empty(), "the workspace has [workspace.lints.{table}]");
        assert_eq!(toml_table(&template, &format!("lints.{table}")), workspace, "the template's [lints.{table}]");
    }
}
