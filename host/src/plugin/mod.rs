//! Finding, checking and loading system plugin libraries.

mod loader;
mod search;

pub use loader::{LoadError, LoadedLibrary, PluginLoader};
pub use search::{builtin_plugin_dirs, library_file_names, SearchPath};
