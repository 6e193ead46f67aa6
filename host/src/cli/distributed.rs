//! `troupe sim --distributed N`: a whole local distributed run from one command. This
//! process becomes the primary; N copies of this program run as secondaries in a fresh
//! partition of their own, in their own process group (Ctrl-C reaches the primary alone,
//! which stops them cleanly), and are killed if still running when the primary is done.
//! The partition's rendezvous directory goes with them: it was this run's alone.

use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Children killed on drop (an early return, a panic), and the rendezvous directory of
/// their fresh partition, removed once they are gone.
pub struct Children {
    procs: Vec<Child>,
    dir: PathBuf,
}

impl Drop for Children {
    fn drop(&mut self) {
        for c in &mut self.procs {
            if matches!(c.try_wait(), Ok(None)) {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        // What a killed process could not remove goes too; the primary's own files, if it
        // is still up, are no longer looked for by anyone.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The secondaries' command line: this one without `--distributed N` and what only the
/// primary may do (record, listen), with `--network-role secondary`.
fn child_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip_value = false;
    for a in args {
        if skip_value {
            skip_value = false;
            continue;
        }
        let flag = a.split('=').next().unwrap_or_default();
        if matches!(flag, "--distributed" | "--record-path" | "--network-listen" | "--iterations") {
            skip_value = !a.contains('=');
            continue;
        }
        out.push(a.clone());
    }
    out.extend(["--network-role".to_string(), "secondary".to_string()]);
    out
}

/// Picks a fresh partition for this run (also this process's) and starts `n` secondaries.
pub fn spawn_secondaries(args: &[String], n: u32) -> Result<Children, String> {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let partition = format!("troupe-distributed-{}-{nanos}", std::process::id());
    // Set before any thread reads the environment; the children inherit it.
    std::env::set_var("TROUPE_PARTITION", &partition);
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let argv = child_args(args);
    let mut children = Children { procs: Vec::new(), dir: troupe::transport::registry::rendezvous_dir(&partition) };
    for i in 0..n {
        let mut cmd = Command::new(&exe);
        cmd.args(&argv).stdin(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().map_err(|e| format!("starting secondary {}: {e}", i + 1))?;
        children.procs.push(child);
    }
    troupe::status!("troupe: started {n} secondaries in partition {partition:?}");
    Ok(children)
}

/// After the primary's run: waits a little for the secondaries to exit, kills the others,
/// and fails a clean run if one of them did not exit 0.
pub fn finish(mut children: Children, code: ExitCode) -> ExitCode {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut failed = Vec::new();
    for c in &mut children.procs {
        let status = loop {
            match c.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                _ => break None,
            }
        };
        match status {
            Some(s) if s.success() => {}
            Some(s) => failed.push(format!("secondary pid {} exited with {s}", c.id())),
            None => failed.push(format!("secondary pid {} did not exit within 5 s and was killed", c.id())),
        }
    }
    drop(children);
    if code == ExitCode::SUCCESS && !failed.is_empty() {
        troupe::status!("troupe: error: {}", failed.join("; "));
        return ExitCode::from(1);
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secondaries_get_the_flags_but_not_the_primarys_own() {
        let args: Vec<String> =
            ["sim", "w.sdf", "--distributed", "3", "--record-path=x.tlog", "--iterations", "5", "-r"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        assert_eq!(child_args(&args), ["sim", "w.sdf", "-r", "--network-role", "secondary"]);
    }
}
