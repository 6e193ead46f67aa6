//! The plugin search path: `TROUPE_SYSTEM_PLUGIN_PATH`, then directories from the server
//! config, then the plugins that come with the build or install.
//!
//! gz-sim's `GZ_SIM_SYSTEM_PLUGIN_PATH` names C++ plugins and is deliberately not read.

use std::path::{Path, PathBuf};

/// Directories searched for plugin libraries, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchPath {
    /// The directories, first match wins.
    pub dirs: Vec<PathBuf>,
}

impl SearchPath {
    /// `env_value` (a `:`-separated list, as `TROUPE_SYSTEM_PLUGIN_PATH`), then `config_dirs`,
    /// then the built-in directories.
    pub fn new(env_value: Option<&str>, config_dirs: &[PathBuf]) -> SearchPath {
        let mut dirs: Vec<PathBuf> =
            env_value.into_iter().flat_map(|v| v.split(':')).filter(|s| !s.is_empty()).map(PathBuf::from).collect();
        dirs.extend(config_dirs.iter().cloned());
        dirs.extend(builtin_plugin_dirs());
        let mut seen = std::collections::HashSet::new();
        dirs.retain(|d| seen.insert(d.clone()));
        SearchPath { dirs }
    }

    /// The first existing file for `library` (a name like `troupe_template`, a file name like
    /// `libtroupe_template.so`, or a path).
    pub fn find(&self, library: &str) -> Option<PathBuf> {
        let as_path = Path::new(library);
        if library.contains('/') {
            // A path: the file itself, or the library of that name in that directory.
            if as_path.is_file() {
                return Some(as_path.to_path_buf());
            }
            let (dir, name) = (as_path.parent()?, as_path.file_name()?.to_str()?);
            return library_file_names(name).into_iter().map(|n| dir.join(n)).find(|p| p.is_file());
        }
        self.dirs
            .iter()
            .flat_map(|dir| library_file_names(library).into_iter().map(move |n| dir.join(n)))
            .find(|p| p.is_file())
    }
}

/// The file names a library name may have: `libNAME.so`, `NAME.so`, `NAME` as given; dashes
/// are also tried as underscores, as cargo names cdylibs.
pub fn library_file_names(library: &str) -> Vec<String> {
    let base = library.strip_prefix("lib").unwrap_or(library);
    let base = base.strip_suffix(".so").unwrap_or(base);
    let mut names = vec![format!("lib{base}.so"), format!("{base}.so"), library.to_string()];
    if base.contains('-') {
        names.push(format!("lib{}.so", base.replace('-', "_")));
    }
    names.dedup();
    names
}

/// Where the plugins built or installed with this `troupe` live, relative to the executable:
/// `<exe dir>/deps` first (cargo writes every fresh build of a cdylib there, while the copy
/// in `<exe dir>` is only refreshed by `cargo build`, so it can be stale during `cargo test`),
/// then `<exe dir>`, then `<exe dir>/../lib/troupe/plugins` (an install). A test binary,
/// which itself lives in `deps`, also looks in `deps`.
pub fn builtin_plugin_dirs() -> Vec<PathBuf> {
    let Some(exe_dir) = std::env::current_exe().ok().and_then(|p| p.parent().map(Path::to_path_buf)) else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    if exe_dir.file_name().is_some_and(|n| n == "deps") {
        dirs.push(exe_dir.clone());
    } else {
        dirs.push(exe_dir.join("deps"));
        dirs.push(exe_dir.clone());
    }
    if let Some(prefix) = exe_dir.parent() {
        dirs.push(prefix.join("lib").join("troupe").join("plugins"));
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_then_config_then_builtin() {
        let sp = SearchPath::new(Some("/a:/b::/a"), &[PathBuf::from("/c")]);
        assert_eq!(&sp.dirs[..3], &[PathBuf::from("/a"), PathBuf::from("/b"), PathBuf::from("/c")]);
        assert!(sp.dirs.len() > 3, "built-in dirs follow");
    }

    #[test]
    fn file_name_forms() {
        assert_eq!(library_file_names("troupe_template")[0], "libtroupe_template.so");
        assert_eq!(library_file_names("libfoo.so")[0], "libfoo.so");
        assert!(library_file_names("my-plugin").contains(&"libmy_plugin.so".to_string()));
    }

    #[test]
    fn finds_first_match_in_order() {
        let dir = std::env::temp_dir().join(format!("troupe-search-{}", std::process::id()));
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(b.join("libx.so"), b"").unwrap();
        let sp = SearchPath { dirs: vec![a.clone(), b.clone()] };
        assert_eq!(sp.find("x"), Some(b.join("libx.so")));
        std::fs::write(a.join("libx.so"), b"").unwrap();
        assert_eq!(sp.find("x"), Some(a.join("libx.so")));
        assert_eq!(sp.find("missing"), None);
        let by_path = format!("{}/x", b.display());
        assert_eq!(sp.find(&by_path), Some(b.join("libx.so")), "a path names the library in that directory");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
