//! What a test needs from the machine that cargo cannot build (a program from a Debian
//! package, a folder of reference data, a privilege) and the one policy for a machine that
//! lacks it:
//!
//! * with `CI=true` the test fails, naming what is missing and where it comes from: CI
//!   installs everything (`./dev test` does), so a lack there is a broken set-up;
//! * otherwise the test is skipped: it prints `skipped: <test>: <reason>` and returns, and
//!   the skip is appended to the file `$TROUPE_SKIP_LOG` names, from which `./dev test`
//!   counts the skips in its summary. A developer without, say, `nngcat` still runs the rest.
//!
//! ```no_run
//! #[test]
//! fn talks_to_nngcat() {
//!     if !troupe_test_machine::program("nngcat", "nng-utils") {
//!         return;
//!     }
//!     // ... the test proper
//! }
//! ```

use std::fmt::Display;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The variable naming the file each skip is appended to (one line per skip).
pub const SKIP_LOG_VAR: &str = "TROUPE_SKIP_LOG";

/// The variable pointing at gz-sim's reference worlds (`../shared/worlds/gz-sim` in this
/// workplace; `./dev test` sets it when that folder exists).
pub const GZ_WORLDS_VAR: &str = "TROUPE_GZ_WORLDS";

/// Whether this run is CI's, where nothing may be skipped (`CI=true`, as CI services set it).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// The machine lacks what the calling test needs, for `reason`: under CI this panics (the
/// test fails); otherwise it prints and records the skip, and the caller returns.
///
/// # Panics
///
/// Under CI, always: that is the policy.
pub fn lacks(reason: impl Display) {
    let test = current_test();
    if in_ci() {
        panic!("{test}: {reason} (CI=true: a test may not be skipped; `./dev test` installs what the tests need)");
    }
    eprintln!("skipped: {test}: {reason}");
    if let Some(log) = std::env::var_os(SKIP_LOG_VAR).filter(|v| !v.is_empty()) {
        // One short write with O_APPEND: lines of tests running in parallel do not mix.
        let line = format!("{test}: {reason}\n");
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            eprintln!("could not record the skip in {}: {e}", Path::new(&log).display());
        }
    }
}

/// Whether `name` can be started (looked up on `PATH`); if not, [`lacks`] it, naming the
/// Debian `package` that has it.
pub fn program(name: &str, package: &str) -> bool {
    let runs = Command::new(name)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !runs {
        lacks(format_args!("`{name}` is not installed (Debian package {package})"));
    }
    runs
}

/// Whether the file `path` exists; if not, [`lacks`] it, naming the Debian `package` that has it.
pub fn file(path: &Path, package: &str) -> bool {
    let there = path.exists();
    if !there {
        lacks(format_args!("{} is missing (Debian package {package})", path.display()));
    }
    there
}

/// The variable pointing at the whole of gz-sim's `test/worlds`, with their models, meshes
/// and a Fuel cache sample (`../shared/worlds/gz-sim-test` in this workplace; `./dev test`
/// sets it when that folder exists).
pub const GZ_TEST_WORLDS_VAR: &str = "TROUPE_GZ_TEST_WORLDS";

/// The folder of gz-sim's reference worlds named by `$TROUPE_GZ_WORLDS` (absolute, or
/// relative to the checkout, then to the current directory); `None` after [`lacks`] when the
/// variable is unset or names no folder.
pub fn gz_worlds() -> Option<PathBuf> {
    folder_of(GZ_WORLDS_VAR, "gz-sim's reference worlds")
}

/// The folder of gz-sim's whole `test/worlds` named by `$TROUPE_GZ_TEST_WORLDS`, as
/// [`gz_worlds`] reads its variable.
pub fn gz_test_worlds() -> Option<PathBuf> {
    folder_of(GZ_TEST_WORLDS_VAR, "gz-sim's test/worlds")
}

/// The folder `var` names (`what` it should hold, for the message).
fn folder_of(var: &str, what: &str) -> Option<PathBuf> {
    let Some(value) = std::env::var_os(var).filter(|v| !v.is_empty()) else {
        lacks(format_args!("{var} is not set (point it at {what})"));
        return None;
    };
    let given = PathBuf::from(&value);
    let candidates = if given.is_absolute() {
        vec![given.clone()]
    } else {
        let mut c = vec![repo_root().join(&given)];
        c.extend(std::env::current_dir().map(|d| d.join(&given)));
        c
    };
    let found = candidates.into_iter().find(|p| p.is_dir());
    if found.is_none() {
        lacks(format_args!("{var}={} is not a folder", given.display()));
    }
    found
}

/// A file of gz-sim's reference worlds, `None` after [`lacks`] when the folder or the file
/// is missing.
pub fn gz_world(name: &str) -> Option<PathBuf> {
    let file = gz_worlds()?.join(name);
    if !file.is_file() {
        lacks(format_args!("{} is missing from {GZ_WORLDS_VAR}", file.display()));
        return None;
    }
    Some(file)
}

/// The checkout's root folder.
fn repo_root() -> PathBuf {
    // This crate is tests/machine/ of the checkout.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The running test's name: libtest names each test's thread after it (nextest runs one
/// test per process, cargo test one per thread).
fn current_test() -> String {
    std::thread::current().name().unwrap_or("a test").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Environment variables are process-wide: the tests touching them run in one test.
    #[test]
    fn a_lack_is_recorded_outside_ci_and_fails_inside() {
        let log = std::env::temp_dir().join(format!("troupe-skip-log-{}", std::process::id()));
        let _ = std::fs::remove_file(&log);
        let ci_before = std::env::var_os("CI");
        std::env::set_var(SKIP_LOG_VAR, &log);
        std::env::set_var("CI", "false");
        assert!(!program("troupe-no-such-program", "no-such-package"));
        assert!(program("true", "coreutils"));
        assert!(!file(Path::new("/no/such/file"), "no-such-package"));
        let text = std::fs::read_to_string(&log).expect("the skips were recorded");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].contains("`troupe-no-such-program` is not installed (Debian package no-such-package)"),
            "{text}"
        );
        assert!(lines[0].starts_with("tests::a_lack_is_recorded_outside_ci_and_fails_inside: "), "{text}");
        assert!(lines[1].contains("/no/such/file is missing"), "{text}");

        std::env::set_var("CI", "true");
        let panicked = std::panic::catch_unwind(|| program("troupe-no-such-program", "no-such-package"));
        let message = panicked.expect_err("under CI a lack fails the test");
        let message = message.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(message.contains("Debian package no-such-package") && message.contains("CI=true"), "{message}");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), text, "a failure under CI is not a skip");
        match ci_before {
            Some(v) => std::env::set_var("CI", v),
            None => std::env::remove_var("CI"),
        }
        std::env::remove_var(SKIP_LOG_VAR);
        let _ = std::fs::remove_file(&log);
    }
}
