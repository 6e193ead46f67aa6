//! Loading plugin libraries with abi_stable's checks, and saying clearly why one was refused.

use super::search::SearchPath;
use abi_stable::library::{lib_header_from_path, LibraryError};
use abi_stable::std_types::RStr;
use plugin_api::{HostLogger, PluginModRef, SystemInfo};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a plugin library could not be used. Every message names the plugin and where the
/// host looked.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// No file for the library in any search directory.
    #[error("plugin library {library:?} not found; searched (in order): {}", searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    NotFound {
        /// The library asked for.
        library: String,
        /// Every directory searched.
        searched: Vec<PathBuf>,
    },
    /// The file exists but is not a loadable shared library.
    #[error("{path}: cannot open as a shared library: {reason}")]
    NotALibrary {
        /// The file.
        path: PathBuf,
        /// The loader's message.
        reason: String,
    },
    /// A shared library without Troupe's root module.
    #[error("{path}: not a Troupe system plugin (it exports no Troupe root module; build it with plugin_api::export_plugin!)")]
    NotAPlugin {
        /// The file.
        path: PathBuf,
    },
    /// Built against an incompatible plugin-api.
    #[error("{path}: built against plugin-api {found}, which this troupe (plugin-api {expected}) cannot load: rebuild the plugin against plugin-api {expected_major}.x")]
    IncompatibleVersion {
        /// The file.
        path: PathBuf,
        /// The host's plugin-api version.
        expected: String,
        /// The plugin's.
        found: String,
        /// The major version to build against.
        expected_major: u32,
    },
    /// Same version numbers but types that differ in layout.
    #[error("{path}: its plugin-api types differ from this troupe's ({details}); rebuild the plugin against the plugin-api this troupe was built with")]
    IncompatibleLayout {
        /// The file.
        path: PathBuf,
        /// The first lines of abi_stable's report that say what differs.
        details: String,
    },
}

/// A loaded library. Libraries are never unloaded.
pub struct LoadedLibrary {
    /// The file it came from.
    pub path: PathBuf,
    /// Its root module.
    pub module: PluginModRef,
    /// The name the library gives itself.
    pub name: String,
}

impl LoadedLibrary {
    /// Names of the systems the library offers (libraries built against plugin-api 1.0 do
    /// not say).
    pub fn system_names(&self) -> Option<Vec<String>> {
        self.module.system_names().map(|f| f().into_iter().map(|s| s.into_string()).collect())
    }

    /// What the system `class` is (empty: the library's first system). A library built
    /// before plugin-api 1.8 does not say, and its systems are [`SystemInfo::OTHER`]; `None`
    /// when the library has no system of that name.
    pub fn system_info(&self, class: &str) -> Option<SystemInfo> {
        match self.module.system_info() {
            Some(info) => info(class.into()).into_option(),
            None => Some(SystemInfo::OTHER),
        }
    }
}

/// Finds and loads plugin libraries, once each.
pub struct PluginLoader {
    search: SearchPath,
    loaded: HashMap<PathBuf, Arc<LoadedLibrary>>,
    log_level: u8,
}

impl PluginLoader {
    /// A loader over `search`; plugins' log records up to `log_level` (0 off .. 5 trace)
    /// reach the host's logger.
    pub fn new(search: SearchPath, log_level: u8) -> Self {
        PluginLoader { search, loaded: HashMap::new(), log_level }
    }

    /// The directories searched.
    pub fn search_path(&self) -> &SearchPath {
        &self.search
    }

    /// Finds `library` on the search path and loads it (or returns it if already loaded).
    pub fn load(&mut self, library: &str) -> Result<Arc<LoadedLibrary>, LoadError> {
        let path = self.search.find(library).ok_or_else(|| LoadError::NotFound {
            library: library.to_string(),
            searched: if library.contains('/') { vec![PathBuf::from(library)] } else { self.search.dirs.clone() },
        })?;
        self.load_path(&path)
    }

    /// Loads the library at `path`.
    pub fn load_path(&mut self, path: &Path) -> Result<Arc<LoadedLibrary>, LoadError> {
        let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if let Some(lib) = self.loaded.get(&key) {
            return Ok(lib.clone());
        }
        let module = load_module(path)?;
        (module.set_logger())(HostLogger { max_level: self.log_level, log: forward_plugin_log });
        let name = (module.library_name())().as_str().to_string();
        let lib = Arc::new(LoadedLibrary { path: path.to_path_buf(), module, name });
        self.loaded.insert(key, lib.clone());
        Ok(lib)
    }
}

/// Loads the root module after checking the library's ABI against ours.
///
/// abi_stable's own `init_root_module` accepts only libraries built against the same or a
/// *newer* plugin-api than the host (its checker refuses an interface with more fields than
/// the library). Troupe must also load plugins built against an *older* 1.x, which is the
/// common case for users' plugins after a Troupe upgrade. Every type that grows across 1.x
/// is a prefix type (the root module, the trait vtables) whose later fields are optional
/// and answered with `None` or a default when absent, so the same checker run with the roles
/// swapped (the plugin's layout as the interface) proves an older library safe. Either
/// direction passing is enough; plain structs must match exactly in both.
fn load_module(path: &Path) -> Result<PluginModRef, LoadError> {
    use abi_stable::abi_stability::abi_checking::check_layout_compatibility;
    use abi_stable::StableAbi;
    let header = lib_header_from_path(path).map_err(|e| explain(path, e))?;
    check_major_version(path, header.version_strings().version.as_str())?;
    let Some(theirs) = header.layout() else {
        return Err(LoadError::IncompatibleLayout {
            path: path.to_path_buf(),
            details: "it was exported without layout information".into(),
        });
    };
    let ours = <PluginModRef as StableAbi>::LAYOUT;
    if let Err(newer_or_equal) = check_layout_compatibility(ours, theirs) {
        if check_layout_compatibility(theirs, ours).is_err() {
            return Err(summarize(path.to_path_buf(), &newer_or_equal.to_string()));
        }
    }
    #[allow(unsafe_code, reason = "the layout was checked just above, in the direction that applies")]
    // SAFETY: `check_layout_compatibility` proved the library's root module layout
    // compatible with `PluginModRef` (the library same or newer, or older through prefix
    // types only); `init_root_module_with_unchecked_layout` still checks the version strings.
    let module = unsafe { header.init_root_module_with_unchecked_layout::<PluginModRef>() };
    module.map_err(|e| explain(path, e))
}

/// Turns abi_stable's error (whose layout report runs to thousands of lines) into one
/// sentence naming the plugin.
fn explain(path: &Path, err: LibraryError) -> LoadError {
    let path = path.to_path_buf();
    match err {
        LibraryError::OpenError { err, .. } => LoadError::NotALibrary { path, reason: err.to_string() },
        LibraryError::GetSymbolError { .. } => LoadError::NotAPlugin { path },
        LibraryError::IncompatibleVersionNumber { expected_version, actual_version, .. } => {
            LoadError::IncompatibleVersion {
                path,
                expected: expected_version.to_string(),
                found: actual_version.to_string(),
                expected_major: expected_version.major,
            }
        }
        LibraryError::InvalidAbiHeader(h) => LoadError::IncompatibleLayout {
            path,
            details: format!("it was built with abi_stable ABI {}.{}", h.abi_major, h.abi_minor),
        },
        other => summarize(path, &other.to_string()),
    }
}

/// plugin-api 1.x libraries load into any 1.y host; another major version never does.
fn check_major_version(path: &Path, theirs: &str) -> Result<(), LoadError> {
    let major = |v: &str| v.split('.').next().and_then(|m| m.parse::<u32>().ok());
    let ours = plugin_api_version();
    match (major(ours), major(theirs)) {
        (Some(a), Some(b)) if a == b => Ok(()),
        (expected_major, _) => Err(LoadError::IncompatibleVersion {
            path: path.to_path_buf(),
            expected: ours.to_string(),
            found: theirs.to_string(),
            expected_major: expected_major.unwrap_or(0),
        }),
    }
}

fn summarize(path: PathBuf, report: &str) -> LoadError {
    let mut lines: Vec<&str> = report.lines().map(str::trim).filter(|l| l.starts_with("Error:")).collect();
    lines.dedup();
    let details = if lines.is_empty() {
        report.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("unknown error").chars().take(200).collect()
    } else {
        lines.into_iter().take(3).collect::<Vec<_>>().join("; ")
    };
    LoadError::IncompatibleLayout { path, details }
}

/// The plugin-api version this host was built with.
pub fn plugin_api_version() -> &'static str {
    <PluginModRef as abi_stable::library::RootModule>::VERSION_STRINGS.version.as_str()
}

extern "C" fn forward_plugin_log(library: RStr<'_>, level: u8, target: RStr<'_>, message: RStr<'_>) {
    let level = match level {
        1 => log::Level::Error,
        2 => log::Level::Warn,
        3 => log::Level::Info,
        4 => log::Level::Debug,
        _ => log::Level::Trace,
    };
    let _ = target;
    log::log!(target: library.as_str(), level, "{}", message.as_str());
}
