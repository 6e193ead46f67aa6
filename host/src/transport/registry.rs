//! The partition's rendezvous directory: how processes on one machine find each other
//! without multicast.
//!
//! Every node writes one file, `<node id>.node`, into
//! `$XDG_RUNTIME_DIR/troupe/<partition>/` (or `/tmp/troupe-<uid>/<partition>/` when the
//! runtime directory is not set), replaced atomically whenever it advertises a topic or
//! offers a service. Its lines:
//!
//! ```text
//! pid 4242
//! pub ipc:///run/user/1000/troupe/p/4242-1.pub
//! rep ipc:///run/user/1000/troupe/p/4242-1.rep
//! topic /world/shapes/stats gz.msgs.WorldStatistics
//! service /world/shapes/control gz.msgs.WorldControl gz.msgs.Boolean
//! sub /world/shapes/pose/info
//! ```
//!
//! `sub` lines name the topics the node subscribes to, so that a publisher builds only the
//! messages somebody wants. Nodes on other machines exchange the same text through the
//! `@troupe/hello` service (see `peers`), with a leading `node <id>` line.
//!
//! Readers skip (and delete) the files of processes that no longer exist, so a crashed
//! server leaves nothing behind for long.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

/// The partition processes meet in: `TROUPE_PARTITION`, else `GZ_PARTITION`, else
/// `<hostname>:<user>` (gz-transport's default).
pub fn partition_from(get: impl Fn(&str) -> Option<String>) -> String {
    for key in ["TROUPE_PARTITION", "GZ_PARTITION"] {
        if let Some(p) = get(key).filter(|p| !p.is_empty()) {
            return p;
        }
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    let user = get("USER").unwrap_or_else(|| format!("uid{}", uid()));
    format!("{host}:{user}")
}

/// The partition of this process's environment.
pub fn partition() -> String {
    partition_from(|k| std::env::var(k).ok())
}

fn uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0)
}

/// Makes `dir` (a partition's rendezvous directory) and the directories above it that do
/// not exist yet, readable and writable by this user only (0700), and refuses a `dir` (and
/// Troupe's own directory above it, [`rendezvous_base`]) that is not a real directory or that
/// someone else owns: the files in it say which sockets to connect to and which to delete,
/// so nobody else may plant them. Such a directory of ours with wider permissions (an older
/// Troupe made them 0755) is narrowed. Directories above those are not touched.
pub fn prepare_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let base = rendezvous_base();
    let ours = [dir.parent().filter(|p| *p == base.as_path()), Some(dir)];
    for d in ours.into_iter().flatten() {
        let meta = std::fs::symlink_metadata(d)?;
        let refuse = |why: String| {
            io::Error::new(io::ErrorKind::PermissionDenied, format!("{}: {why}; refusing to use it", d.display()))
        };
        if !meta.is_dir() {
            return Err(refuse(String::from("not a directory (a symbolic link or a file)")));
        }
        if meta.uid() != uid() {
            return Err(refuse(format!("owned by user {}, not by this user ({})", meta.uid(), uid())));
        }
        if meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

/// Whether `path` is a socket directly inside `dir`: the only files a reader deletes for a
/// node that is gone, whatever the node's file names.
fn own_socket(dir: &Path, path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    path.parent() == Some(dir) && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// The directory holding every partition's rendezvous directory: `$XDG_RUNTIME_DIR/troupe`,
/// else `/tmp/troupe-<uid>`.
pub fn rendezvous_base() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("troupe"),
        None => std::env::temp_dir().join(format!("troupe-{}", uid())),
    }
}

/// The rendezvous directory of a partition (not created: see [`prepare_dir`]).
pub fn rendezvous_dir(partition: &str) -> PathBuf {
    // A partition name is free text; only '/' cannot be part of a file name.
    rendezvous_base().join(partition.replace('/', "_"))
}

/// What one node lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// The node's id (`<pid>-<n>`).
    pub node: String,
    /// Its process.
    pub pid: u32,
    /// Where its publisher listens.
    pub pub_addr: String,
    /// Where its service server listens.
    pub rep_addr: String,
    /// Topics it publishes: (name, type).
    pub topics: BTreeSet<(String, String)>,
    /// Services it offers: (name, request type, response type).
    pub services: BTreeSet<(String, String, String)>,
    /// Topics it subscribes to.
    pub subscriptions: BTreeSet<String>,
}

impl Entry {
    pub(super) fn render(&self) -> String {
        let mut out = format!("pid {}\npub {}\nrep {}\n", self.pid, self.pub_addr, self.rep_addr);
        for (t, ty) in &self.topics {
            out.push_str(&format!("topic {t} {ty}\n"));
        }
        for (s, req, rep) in &self.services {
            out.push_str(&format!("service {s} {req} {rep}\n"));
        }
        for t in &self.subscriptions {
            out.push_str(&format!("sub {t}\n"));
        }
        out
    }

    /// Parses a node's listing; a `node <id>` line (the hello exchange) overrides `node`.
    pub(super) fn parse(node: &str, text: &str) -> Option<Entry> {
        let mut e = Entry { node: node.to_string(), ..Entry::default() };
        for line in text.lines() {
            let mut words = line.split(' ');
            match (words.next(), words.next(), words.next(), words.next()) {
                (Some("pid"), Some(pid), None, None) => e.pid = pid.parse().ok()?,
                (Some("pub"), Some(a), None, None) => e.pub_addr = a.to_string(),
                (Some("rep"), Some(a), None, None) => e.rep_addr = a.to_string(),
                (Some("topic"), Some(t), Some(ty), None) => {
                    e.topics.insert((t.to_string(), ty.to_string()));
                }
                (Some("service"), Some(s), Some(req), Some(rep)) => {
                    e.services.insert((s.to_string(), req.to_string(), rep.to_string()));
                }
                (Some("sub"), Some(t), None, None) => {
                    e.subscriptions.insert(t.to_string());
                }
                (Some("node"), Some(n), None, None) => e.node = n.to_string(),
                _ => return None,
            }
        }
        (e.pid != 0).then_some(e)
    }
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Every live node of the directory, by node id; files of dead processes are removed, and
/// unreadable files skipped (a writer may be replacing one).
pub fn scan(dir: &Path) -> Vec<Entry> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut entries = Vec::new();
    for file in read.flatten() {
        let path = file.path();
        let Some(node) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".node")) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        match Entry::parse(node, &text) {
            Some(e) if alive(e.pid) => entries.push(e),
            Some(e) => {
                log::debug!("rendezvous: removing {} of process {}, which is gone", path.display(), e.pid);
                let _ = std::fs::remove_file(&path);
                for addr in [&e.pub_addr, &e.rep_addr] {
                    match addr.strip_prefix("ipc://").map(Path::new) {
                        Some(socket) if own_socket(dir, socket) => {
                            let _ = std::fs::remove_file(socket);
                        }
                        Some(other) => log::warn!(
                            "rendezvous: {} names {}, which is not a socket of {}; left alone",
                            path.display(),
                            other.display(),
                            dir.display()
                        ),
                        None => {}
                    }
                }
            }
            None => log::debug!("rendezvous: {} is not a node file; skipped", path.display()),
        }
    }
    entries.sort_by(|a, b| a.node.cmp(&b.node));
    entries
}

/// This node's own file.
pub struct Registration {
    path: PathBuf,
    entry: Entry,
}

impl Registration {
    /// Writes the node's file (creating the directory).
    pub fn create(dir: &Path, entry: Entry) -> io::Result<Registration> {
        prepare_dir(dir)?;
        let reg = Registration { path: dir.join(format!("{}.node", entry.node)), entry };
        reg.write()?;
        Ok(reg)
    }

    /// The listed entry.
    pub fn entry(&self) -> &Entry {
        &self.entry
    }

    /// Changes the entry and rewrites the file if anything changed.
    pub fn update(&mut self, change: impl FnOnce(&mut Entry)) -> io::Result<()> {
        let before = self.entry.clone();
        change(&mut self.entry);
        if self.entry != before {
            self.write()?;
        }
        Ok(())
    }

    /// Removes the file now (the node is about to go without running its destructors).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }

    fn write(&self) -> io::Result<()> {
        let tmp = self.path.with_extension("tmp");
        std::fs::write(&tmp, self.entry.render())?;
        std::fs::rename(&tmp, &self.path)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn troupe_partition_wins_over_gz_partition() {
        let env = |k: &str| match k {
            "TROUPE_PARTITION" => Some("mine".to_string()),
            "GZ_PARTITION" => Some("theirs".to_string()),
            _ => None,
        };
        assert_eq!(partition_from(env), "mine");
        assert_eq!(partition_from(|k| (k == "GZ_PARTITION").then(|| "theirs".to_string())), "theirs");
        assert!(partition_from(|k| (k == "USER").then(|| "ana".to_string())).ends_with(":ana"));
    }

    #[test]
    fn entries_round_trip_and_dead_processes_are_removed() {
        let dir = std::env::temp_dir().join(format!("troupe-registry-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut entry = Entry {
            node: format!("{}-1", std::process::id()),
            pid: std::process::id(),
            pub_addr: "ipc:///tmp/a.pub".into(),
            rep_addr: "tcp://127.0.0.1:5555".into(),
            ..Entry::default()
        };
        entry.topics.insert(("/world/w/stats".into(), "gz.msgs.WorldStatistics".into()));
        entry.subscriptions.insert("/world/w/wrench".into());
        let mut reg = Registration::create(&dir, entry.clone()).unwrap();
        reg.update(|e| {
            e.services.insert(("/world/w/control".into(), "gz.msgs.WorldControl".into(), "gz.msgs.Boolean".into()));
        })
        .unwrap();
        // A process id that cannot exist (above the kernel's pid_max limit of 2^22).
        std::fs::write(dir.join("dead.node"), "pid 4194399\npub ipc:///tmp/x\nrep ipc:///tmp/y\n").unwrap();
        std::fs::write(dir.join("junk.node"), "this is not a node file\n").unwrap();
        let found = scan(&dir);
        assert_eq!(found, vec![reg.entry().clone()]);
        assert!(!dir.join("dead.node").exists(), "the dead process's file is removed");
        assert!(dir.join("junk.node").exists(), "a file that is not ours is left alone");
        drop(reg);
        assert!(scan(&dir).is_empty(), "dropping the registration removes the file");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A node file may name any path as its socket; a reader deletes only sockets inside the
    /// directory (a planted file naming `ipc:///some/file` deleted that file).
    #[test]
    fn a_dead_node_costs_only_its_own_sockets() {
        let base = std::env::temp_dir().join(format!("troupe-registry-plant-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let dir = base.join("partition");
        prepare_dir(&dir).unwrap();
        let victim = base.join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        let regular_inside = dir.join("looks-like.pub");
        std::fs::write(&regular_inside, "not a socket").unwrap();
        let socket = dir.join("gone.rep");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        drop(listener);
        let planted = format!("pid 4194399\npub ipc://{}\nrep ipc://{}\n", victim.display(), regular_inside.display());
        std::fs::write(dir.join("planted.node"), planted).unwrap();
        std::fs::write(dir.join("dead.node"), format!("pid 4194398\nrep ipc://{}\n", socket.display())).unwrap();
        assert!(scan(&dir).is_empty());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "a file outside the directory");
        assert!(regular_inside.exists(), "a file inside that is not a socket");
        assert!(!socket.exists(), "the dead node's own socket is removed");
        assert!(!dir.join("planted.node").exists() && !dir.join("dead.node").exists());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn the_directory_is_ours_alone() {
        use std::os::unix::fs::PermissionsExt;
        let base = std::env::temp_dir().join(format!("troupe-registry-mode-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let dir = base.join("partition");
        prepare_dir(&dir).unwrap();
        let mode = |d: &Path| std::fs::metadata(d).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&base), mode(&dir)), (0o700, 0o700), "made 0700");
        // Above the partition, only Troupe's own directory is checked: never the temp folder.
        let tmp = std::env::temp_dir();
        let before = mode(&tmp);
        prepare_dir(&tmp.join(format!("troupe-registry-leaf-{}", std::process::id()))).unwrap();
        assert_eq!(mode(&tmp), before, "{} left as it was", tmp.display());
        let _ = std::fs::remove_dir(tmp.join(format!("troupe-registry-leaf-{}", std::process::id())));
        // One an older Troupe made readable by all is narrowed.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        prepare_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        // A symbolic link in its place is refused.
        std::fs::remove_dir(&dir).unwrap();
        std::os::unix::fs::symlink(std::env::temp_dir(), &dir).unwrap();
        let e = prepare_dir(&dir).unwrap_err().to_string();
        assert!(e.contains("not a directory") && e.contains("refusing to use it"), "{e}");
        std::fs::remove_file(&dir).unwrap();
        // One someone else owns is refused (making it needs the right to give files away).
        std::fs::create_dir(&dir).unwrap();
        match std::os::unix::fs::chown(&dir, Some(uid().wrapping_add(4242)), None) {
            Ok(()) => {
                let e = prepare_dir(&dir).unwrap_err().to_string();
                assert!(e.contains("owned by user") && e.contains("refusing to use it"), "{e}");
            }
            Err(e) => troupe_test_machine::lacks(format_args!("cannot give a directory to another user here: {e}")),
        }
        let _ = std::fs::remove_dir_all(&base);
    }
}
