//! Server configuration: which systems a server loads besides those its world file names.
//!
//! Troupe follows gz-sim Ionic (see `gz-sim-behaviour.md` §3–4) with these differences:
//!
//! * **Strict config files.** Every problem in a server-config file (malformed XML, wrong
//!   root, missing `<plugins>`, a `<plugin>` with a missing/empty attribute or an
//!   unknown `entity_type`, unknown elements) is reported at once, each as
//!   `file:line: what is wrong`; gz-sim skips bad entries silently.
//! * **A named config file must exist.** `--config FILE` or a non-empty
//!   `GZ_SIM_SERVER_CONFIG_PATH` naming a missing file is an error (gz-sim only warns).
//! * **The default set** is the project's `config/server.config` (path given by the
//!   caller); if that file is missing, the same defaults built into the binary are used.
//! * **Names are mapped** (see [`names`]): gz-sim system names select Troupe libraries,
//!   and de-duplication between world-file and config plugins compares these mapped
//!   names, so `libgz-sim-physics-system.so` matches `gz-sim-physics-system`.
//! * **`<plugin_path>DIR</plugin_path>`** children of `<server_config>` add directories
//!   to the system plugin search path.
//! * **`<record>`** with `<record_path>FILE</record_path>` (and optionally
//!   `<keyframe_interval>N</keyframe_interval>`) records a state log, as `--record-path`
//!   does (see `docs/state-and-logs.md`).
//! * **`<transport>`** with `<host>IP</host>`, `<port>N</port>` and `<peer>host:port</peer>`
//!   elements says how other machines reach the server, as `--transport-host`,
//!   `--transport-port` and `--peer` do (see `docs/transport.md`).
//! * **`<network>`** with `<role>`, `<secondaries>`, `<token>`, `<primary>`, `<listen>` and
//!   the `*_ms` timings makes the server part of a distributed run, as `--network-role`
//!   and its sibling flags do (see `docs/distributed.md`).
//! * **`<troupe:roles>`** inside a `<plugin>` (here or in a world file) lists the roles of a
//!   distributed run the system runs in; without it each kind of system has a default
//!   (see [`roles`] and `docs/distributed.md`, "Which systems run where").

pub mod names;
mod network;
mod parse;
pub mod roles;
mod select;

#[cfg(test)]
mod tests;

pub use crate::xml::{parse_element_lenient, XmlSyntaxError};
pub use names::{canonical_library, library_of_plugin, map_system, unimplemented_gz_systems, warn_once, SystemName};
pub use network::{listen_url, parse_role, peer_url};
pub use parse::{
    parse_server_config_file, parse_server_config_str, EntityType, NetworkSpec, PluginSpec, RecordSpec,
    ServerConfigFile, TransportSpec,
};
pub use roles::{parse_roles, place, DefaultRoles, Placement, RoleSet};
pub use select::{priority_from_xml, select_systems, RequestedPlugin, Selected, Selection, Target};

use std::fmt;
use std::path::{Path, PathBuf};

/// Environment variable naming the server-config file (an empty value means "no config
/// plugins").
pub const SERVER_CONFIG_ENV: &str = "GZ_SIM_SERVER_CONFIG_PATH";

/// The shipped default config (`config/server.config`), built into the binary as the
/// fallback when the default file is missing.
pub const DEFAULT_SERVER_CONFIG: &str = include_str!("../../../config/server.config");

/// Label used in origins for [`DEFAULT_SERVER_CONFIG`].
pub const BUILT_IN_LABEL: &str = "<built-in server.config>";

/// One problem found in a server-config file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The file (or label) it is in.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, when known (XML syntax errors).
    pub column: Option<u32>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(c) => write!(f, "{}:{}:{}: {}", self.file, self.line, c, self.message),
            None => write!(f, "{}:{}: {}", self.file, self.line, self.message),
        }
    }
}

/// Why a server config could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The named file does not exist.
    #[error("server config file {} does not exist{}", path.display(), named_by_suffix(*named_by))]
    NotFound {
        /// The path as given.
        path: PathBuf,
        /// Who named it (`--config`, `GZ_SIM_SERVER_CONFIG_PATH`), when known.
        named_by: Option<&'static str>,
    },
    /// The file exists but could not be read.
    #[error("cannot read server config file {}: {source}", path.display())]
    Io {
        /// The path as given.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file was read but is not a valid server config; every problem is listed.
    #[error("{}", list_problems(problems))]
    Invalid {
        /// All problems, in document order.
        problems: Vec<Problem>,
    },
}

fn named_by_suffix(named_by: Option<&'static str>) -> String {
    named_by.map(|n| format!(" (named by {n})")).unwrap_or_default()
}

fn list_problems(problems: &[Problem]) -> String {
    let mut out = match problems.len() {
        1 => "invalid server config (1 problem):".to_string(),
        n => format!("invalid server config ({n} problems):"),
    };
    for p in problems {
        out.push_str(&format!("\n  {p}"));
    }
    out
}

/// Where the config plugin set comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigSource {
    /// `--config FILE`.
    CommandLine(PathBuf),
    /// `GZ_SIM_SERVER_CONFIG_PATH` set to a non-empty value.
    Environment(PathBuf),
    /// `GZ_SIM_SERVER_CONFIG_PATH` set but empty (or only whitespace): no config plugins.
    EnvironmentEmpty,
    /// Neither: the project's default file.
    Default(PathBuf),
}

/// Decides where the config set comes from: `--config FILE` wins; else
/// `GZ_SIM_SERVER_CONFIG_PATH` if set (an empty value means no config plugins); else
/// `default_path`. `env` looks up environment variables (pass
/// `|k| std::env::var(k).ok()` in production).
pub fn config_source(
    cli_config: Option<&Path>,
    env: impl Fn(&str) -> Option<String>,
    default_path: &Path,
) -> ConfigSource {
    if let Some(p) = cli_config {
        return ConfigSource::CommandLine(p.to_path_buf());
    }
    match env(SERVER_CONFIG_ENV) {
        Some(v) if v.trim().is_empty() => ConfigSource::EnvironmentEmpty,
        Some(v) => ConfigSource::Environment(PathBuf::from(v)),
        None => ConfigSource::Default(default_path.to_path_buf()),
    }
}

/// Loads the config set from `source`. A file named by the flag or the environment must
/// exist; a missing default file falls back to [`DEFAULT_SERVER_CONFIG`] with a warning.
pub fn load_config_set(source: &ConfigSource) -> Result<ServerConfigFile, ConfigError> {
    match source {
        ConfigSource::CommandLine(p) => parse::read_and_parse(p, Some("--config")),
        ConfigSource::Environment(p) => parse::read_and_parse(p, Some(SERVER_CONFIG_ENV)),
        ConfigSource::EnvironmentEmpty => Ok(ServerConfigFile::default()),
        ConfigSource::Default(p) => match parse::read_and_parse(p, None) {
            Err(ConfigError::NotFound { .. }) => {
                log::warn!("default server config {} not found; using the built-in defaults", p.display());
                parse_server_config_str(DEFAULT_SERVER_CONFIG, BUILT_IN_LABEL)
            }
            other => other,
        },
    }
}
