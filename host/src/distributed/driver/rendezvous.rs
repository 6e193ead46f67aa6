//! Distributed peers in the partition's rendezvous directory (the transport's, see
//! `transport::registry`): a primary lists its join address in `<pid>.primary`, a secondary
//! announces itself in `<pid>.secondary`. Other file kinds than `.node` are ignored by the
//! transport's readers. Files of processes that are gone are deleted by readers.

use std::path::{Path, PathBuf};

/// One distributed peer listed in the directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// Its process.
    pub pid: u32,
    /// Its peer id.
    pub id: String,
    /// Primary: its join address.
    pub join: String,
}

impl std::fmt::Display for Listed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (pid {}", self.id, self.pid)?;
        if !self.join.is_empty() {
            write!(f, ", {}", self.join)?;
        }
        write!(f, ")")
    }
}

/// This process's file, removed on drop.
pub struct Listing {
    path: PathBuf,
}

impl Listing {
    /// Writes `<pid>.<kind>` (kind `primary` or `secondary`).
    pub fn create(dir: &Path, kind: &str, id: &str, join: &str) -> std::io::Result<Listing> {
        crate::transport::registry::prepare_dir(dir)?;
        let pid = std::process::id();
        let path = dir.join(format!("{pid}.{kind}"));
        let tmp = dir.join(format!("{pid}.{kind}.tmp"));
        std::fs::write(&tmp, format!("pid {pid}\nid {id}\njoin {join}\n"))?;
        std::fs::rename(&tmp, &path)?;
        Ok(Listing { path })
    }
}

impl Drop for Listing {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The live peers of `kind` listed in `dir`, sorted by pid.
pub fn scan(dir: &Path, kind: &str) -> Vec<Listed> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let suffix = format!(".{kind}");
    let mut out = Vec::new();
    for file in read.flatten() {
        let path = file.path();
        if !path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(&suffix)) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let mut l = Listed { pid: 0, id: String::new(), join: String::new() };
        for line in text.lines() {
            match line.split_once(' ') {
                Some(("pid", v)) => l.pid = v.parse().unwrap_or(0),
                Some(("id", v)) => l.id = v.to_string(),
                Some(("join", v)) => l.join = v.to_string(),
                _ => {}
            }
        }
        if l.pid == 0 {
            continue;
        }
        if Path::new(&format!("/proc/{}", l.pid)).exists() {
            out.push(l);
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
    out.sort_by_key(|l| l.pid);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_are_found_and_dead_ones_removed() {
        let dir = std::env::temp_dir().join(format!("troupe-dist-rdv-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let me = Listing::create(&dir, "primary", "p-1", "ipc:///tmp/j").unwrap();
        std::fs::write(dir.join("4194399.primary"), "pid 4194399\nid ghost\njoin ipc:///x\n").unwrap();
        let found = scan(&dir, "primary");
        assert_eq!(found, vec![Listed { pid: std::process::id(), id: "p-1".into(), join: "ipc:///tmp/j".into() }]);
        assert!(!dir.join("4194399.primary").exists());
        assert!(scan(&dir, "secondary").is_empty());
        drop(me);
        assert!(scan(&dir, "primary").is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
