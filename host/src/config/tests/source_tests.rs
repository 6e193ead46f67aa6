//! Where the config set comes from, and loading it.

use crate::config::{config_source, load_config_set, ConfigError, ConfigSource, SERVER_CONFIG_ENV};
use std::path::{Path, PathBuf};

fn env_with(value: Option<&str>) -> impl Fn(&str) -> Option<String> + '_ {
    move |k| (k == SERVER_CONFIG_ENV).then(|| value.map(str::to_string)).flatten()
}

#[test]
fn precedence_flag_env_default() {
    let default = Path::new("config/server.config");
    let flag = Path::new("/tmp/flag.config");
    assert_eq!(
        config_source(Some(flag), env_with(Some("/tmp/env.config")), default),
        ConfigSource::CommandLine(flag.into())
    );
    assert_eq!(
        config_source(None, env_with(Some("/tmp/env.config")), default),
        ConfigSource::Environment(PathBuf::from("/tmp/env.config"))
    );
    assert_eq!(config_source(None, env_with(Some("")), default), ConfigSource::EnvironmentEmpty);
    assert_eq!(config_source(None, env_with(Some("  ")), default), ConfigSource::EnvironmentEmpty);
    assert_eq!(config_source(Some(flag), env_with(Some("")), default), ConfigSource::CommandLine(flag.into()));
    assert_eq!(config_source(None, env_with(None), default), ConfigSource::Default(default.into()));
}

#[test]
fn loading_each_source() {
    assert!(load_config_set(&ConfigSource::EnvironmentEmpty).unwrap().plugins.is_empty());

    let missing = PathBuf::from("/nonexistent/troupe.config");
    let err = load_config_set(&ConfigSource::CommandLine(missing.clone())).unwrap_err();
    assert!(matches!(err, ConfigError::NotFound { .. }));
    assert!(err.to_string().contains("/nonexistent/troupe.config") && err.to_string().contains("--config"), "{err}");
    let err = load_config_set(&ConfigSource::Environment(missing.clone())).unwrap_err();
    assert!(err.to_string().contains(SERVER_CONFIG_ENV), "{err}");

    // A missing default falls back to the built-in defaults.
    let c = load_config_set(&ConfigSource::Default(missing)).unwrap();
    assert_eq!(c.plugins.len(), 3);
    assert_eq!(c.plugins[0].origin, format!("{}:38", crate::config::BUILT_IN_LABEL));

    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/server.config");
    let c = load_config_set(&ConfigSource::Default(shipped.clone())).unwrap();
    assert_eq!(c.plugins.len(), 3);
    let c = load_config_set(&ConfigSource::Environment(shipped)).unwrap();
    assert_eq!(c.plugins[2].filename, "gz-sim-scene-broadcaster-system");
}

#[test]
fn an_invalid_named_file_is_an_error() {
    let dir = std::env::temp_dir().join(format!("troupe-config-src-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.config");
    std::fs::write(&path, "<server_config/>").unwrap();
    let err = load_config_set(&ConfigSource::CommandLine(path.clone())).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("invalid server config (1 problem):\n  {}:1: missing <plugins> element", path.display())
    );
}
