//! Reading a file that a user or a client names, with a bound.
//!
//! A world, an included model, a server config, an `sdf_filename` sent to `create`, a mesh:
//! the path comes from outside, and reading it whole without a bound lets `/dev/zero` (or a
//! 50 GB file named by mistake) fill the memory while the process ignores signals. [`read`]
//! refuses anything but a regular file (a device, a pipe, a socket, a directory) before it
//! opens it, and a file larger than the bound given, and never reads past that bound (a file
//! growing while read is refused too). The bounds:
//!
//! * [`TEXT_LIMIT`] (256 MiB) for XML: worlds, models, `model.config`, server configs. gz-sim's
//!   largest example world is under 1 MiB.
//! * [`MESH_LIMIT`] (1 GiB) for mesh files a physics engine reads whole.
//!
//! State logs are not read whole: they are read record by record, each bounded on its own.

use std::io::{self, Read};
use std::path::Path;

/// The largest XML file (world, model, `model.config`, server config) read: 256 MiB.
pub const TEXT_LIMIT: u64 = 256 << 20;

/// The largest mesh file read: 1 GiB.
pub const MESH_LIMIT: u64 = 1 << 30;

/// Reads the whole regular file at `path`, at most `limit` bytes.
///
/// Errors keep the [`io::ErrorKind`] of the system's answer (`NotFound`, ...); a file that
/// is not a regular one or is larger than `limit` is an [`io::ErrorKind::InvalidInput`]
/// error saying which and naming the bound. The caller's message names the path.
pub fn read(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    // `metadata` follows symbolic links and does not block on a pipe, which opening would.
    let meta = std::fs::metadata(path)?;
    check(&meta, limit)?;
    let file = std::fs::File::open(path)?;
    // The path may have been replaced between the two looks.
    let meta = file.metadata()?;
    check(&meta, limit)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(None, limit));
    }
    Ok(bytes)
}

/// [`read`], as UTF-8 text: invalid UTF-8 is an [`io::ErrorKind::InvalidData`] error.
pub fn read_to_string(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read(path, limit)?).map_err(|e| {
        let line = 1 + e.as_bytes()[..e.utf8_error().valid_up_to()].iter().filter(|&&b| b == b'\n').count();
        io::Error::new(io::ErrorKind::InvalidData, format!("the file is not valid UTF-8 (line {line})"))
    })
}

/// Refuses anything but a regular file, naming what it is; see [`read`].
pub fn check_regular(path: &Path) -> io::Result<()> {
    let meta = std::fs::metadata(path)?;
    check(&meta, u64::MAX)
}

fn check(meta: &std::fs::Metadata, limit: u64) -> io::Result<()> {
    if !meta.is_file() {
        let kind = kind(&meta.file_type());
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {kind}, not a regular file; only regular files are read"),
        ));
    }
    if meta.len() > limit {
        return Err(too_large(Some(meta.len()), limit));
    }
    Ok(())
}

fn too_large(size: Option<u64>, limit: u64) -> io::Error {
    let size = size.map_or_else(|| String::from("it grew while read"), |s| format!("{s} bytes"));
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("the file is larger than the {} a file of this kind may have ({size})", human(limit)),
    )
}

/// `256 MiB`, `1 GiB`, or bytes.
fn human(n: u64) -> String {
    if n >= 1 << 30 && n % (1 << 30) == 0 {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

fn kind(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_fifo() {
            return "a pipe (FIFO)";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("troupe-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn a_regular_file_within_the_bound_is_read_whole() {
        let path = temp("small.txt", b"<sdf/>\n");
        assert_eq!(read(&path, 7).unwrap(), b"<sdf/>\n");
        assert_eq!(read_to_string(&path, TEXT_LIMIT).unwrap(), "<sdf/>\n");
    }

    #[test]
    fn a_larger_file_is_refused_naming_the_bound() {
        let path = temp("large.txt", &[b'x'; 3 << 20]);
        let err = read(&path, 2 << 20).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("larger than the 2 MiB"), "{err}");
        assert!(err.to_string().contains("3145728 bytes"), "{err}");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn devices_and_directories_are_refused_before_they_are_read() {
        let err = read(Path::new("/dev/zero"), TEXT_LIMIT).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("a character device, not a regular file"), "{err}");
        let err = read(&std::env::temp_dir(), TEXT_LIMIT).unwrap_err();
        assert!(err.to_string().contains("a directory"), "{err}");
        assert!(check_regular(Path::new("/dev/null")).is_err());
    }

    /// Reads of whole files in the host's and the plugins' code (not their tests) go
    /// through [`read`]; the exceptions read files Troupe writes itself, in its own
    /// rendezvous directory, or the kernel's host name.
    #[test]
    fn no_unbounded_whole_file_read_is_left_in_the_host_or_the_plugins() {
        const ALLOWED: [&str; 3] = [
            "host/src/transport/registry.rs",
            "host/src/distributed/driver/mod.rs",
            "host/src/distributed/driver/rendezvous.rs",
        ];
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut dirs = vec![root.join("host/src")];
        for plugin in std::fs::read_dir(root.join("plugins")).unwrap().flatten() {
            dirs.push(plugin.path().join("src"));
        }
        let mut found = Vec::new();
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                if path.is_dir() {
                    if name != "tests" {
                        dirs.push(path);
                    }
                    continue;
                }
                let rel = path.strip_prefix(&root).unwrap().display().to_string();
                if !name.ends_with(".rs") || name.starts_with("tests") || ALLOWED.contains(&rel.as_str()) {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                // A file's own tests module comes last.
                let code = text.split("#[cfg(test)]").next().unwrap_or_default();
                for (i, line) in code.lines().enumerate() {
                    if ["fs::read(", "fs::read_to_string(", "read_to_end("].iter().any(|n| line.contains(n)) {
                        found.push(format!("{rel}:{}: {}", i + 1, line.trim()));
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "whole-file reads without a bound (use plugin_api::files::read):\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn a_missing_file_keeps_its_kind_and_bad_utf8_names_the_line() {
        let err = read(Path::new("/nonexistent/troupe/w.sdf"), TEXT_LIMIT).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        let path = temp("latin1.sdf", b"<sdf>\n<!-- \xe9 -->\n</sdf>\n");
        let err = read_to_string(&path, TEXT_LIMIT).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("line 2"), "{err}");
    }
}
