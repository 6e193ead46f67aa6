//! Running the real `troupe` binary: arguments and a controlled environment in, exit code
//! and output out, with a timeout and a guard that never leaves a child behind.
//!
//! Every run gets `GZ_SIM_SERVER_CONFIG_PATH=""` (no config plugins) unless the test sets it
//! or passes `--config`, runs in the test's own temp dir (relative `<output>` paths land
//! there), and has `TROUPE_SYSTEM_PLUGIN_PATH` and `RUST_LOG` removed, so results do not
//! depend on the environment of whoever runs the tests.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use crate::output::{Output, Recorded};

/// How long any one run may take before it is killed and the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// The `troupe` binary under test.
pub fn troupe_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_troupe"))
}

/// The workspace root (the checkout).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("host/ has a parent").to_path_buf()
}

/// A file of the checkout, e.g. `repo_file("worlds/demo.sdf")`.
pub fn repo_file(rel: &str) -> PathBuf {
    repo_root().join(rel)
}

/// The repository's default server config.
pub fn default_config() -> PathBuf {
    repo_file("config/server.config")
}

/// A directory of its own for one test, removed when dropped.
pub struct TestDir {
    path: PathBuf,
}

impl TestDir {
    /// `<temp>/troupe-e2e-<name>-<pid>`, empty.
    pub fn new(name: &str) -> TestDir {
        let path = std::env::temp_dir().join(format!("troupe-e2e-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        TestDir { path }
    }
    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// A path inside it.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.path.join(rel)
    }
    /// Writes `text` to `rel` inside it and answers the absolute path.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create parent dir");
        }
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", p.display()));
        p
    }
    /// The text of `rel` inside it, if the file exists.
    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.join(rel)).ok()
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
        // The test's transport partition is its own (named after this directory): what its
        // processes listed there, and what a killed one could not remove, goes too.
        let _ = std::fs::remove_dir_all(troupe::transport::registry::rendezvous_dir(&partition_of(&self.path)));
    }
}

/// An SDF file text with one world named `name` and `body` inside it.
pub fn world_sdf(name: &str, body: &str) -> String {
    format!("<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n  <world name=\"{name}\">\n{body}\n  </world>\n</sdf>\n")
}

/// A `<physics>` element that turns off real-time pacing (the run goes as fast as it can).
pub const UNPACED: &str =
    "    <physics name=\"fast\" type=\"ignored\"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>";

/// A server config file text with these `<plugin>` elements.
pub fn server_config(plugins: &str) -> String {
    format!("<?xml version=\"1.0\"?>\n<server_config>\n  <plugins>\n{plugins}\n  </plugins>\n</server_config>\n")
}

/// The transport partition of runs started in `dir`.
pub fn partition_of(dir: &Path) -> String {
    dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "troupe-e2e".into())
}

/// A `troupe` invocation being put together.
pub struct Troupe {
    /// A command the run goes through (`ip netns exec NS`), empty for none.
    wrap: Vec<OsString>,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    cwd: PathBuf,
}

impl Troupe {
    /// `troupe sim`, run in `dir`.
    pub fn sim(dir: &TestDir) -> Troupe {
        Troupe { wrap: Vec::new(), args: vec!["sim".into()], env: Vec::new(), cwd: dir.path().to_path_buf() }
    }
    /// `troupe topic`, run in `dir` (in its partition).
    pub fn topic(dir: &TestDir) -> Troupe {
        Troupe { wrap: Vec::new(), args: vec!["topic".into()], env: Vec::new(), cwd: dir.path().to_path_buf() }
    }
    /// `troupe service`, run in `dir` (in its partition).
    pub fn service(dir: &TestDir) -> Troupe {
        Troupe { wrap: Vec::new(), args: vec!["service".into()], env: Vec::new(), cwd: dir.path().to_path_buf() }
    }
    /// `troupe log`, run in `dir`.
    pub fn log(dir: &TestDir) -> Troupe {
        Troupe { wrap: Vec::new(), args: vec!["log".into()], env: Vec::new(), cwd: dir.path().to_path_buf() }
    }
    /// Adds an argument.
    pub fn arg(mut self, a: impl Into<OsString>) -> Troupe {
        self.args.push(a.into());
        self
    }
    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, a: I) -> Troupe {
        self.args.extend(a.into_iter().map(Into::into));
        self
    }
    /// Runs the child inside network namespace `ns` (`ip netns exec ns troupe ...`).
    pub fn in_netns(mut self, ns: &str) -> Troupe {
        self.wrap = vec!["ip".into(), "netns".into(), "exec".into(), ns.into()];
        self
    }
    /// Runs the child with its stdout piped into `head -n LINES`, which leaves after that
    /// many lines; the exit status is the child's (bash's `pipefail`).
    pub fn piped_into_head(mut self, lines: usize) -> Troupe {
        let script = format!("set -o pipefail; \"$0\" \"$@\" | head -n {lines}");
        self.wrap = vec!["bash".into(), "-c".into(), script.into()];
        self
    }
    /// Sets an environment variable of the child.
    pub fn env(mut self, k: &str, v: impl Into<OsString>) -> Troupe {
        self.env.push((k.into(), Some(v.into())));
        self
    }

    fn command(&self) -> Command {
        let mut cmd = match self.wrap.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(troupe_exe());
                c
            }
            None => Command::new(troupe_exe()),
        };
        cmd.args(&self.args).current_dir(&self.cwd);
        cmd.env("GZ_SIM_SERVER_CONFIG_PATH", "");
        cmd.env_remove("TROUPE_SYSTEM_PLUGIN_PATH");
        cmd.env_remove("RUST_LOG");
        cmd.env("RUST_BACKTRACE", "0");
        // Every test directory is its own transport partition: runs of one test meet, runs
        // of other tests (and servers of the person running them) do not.
        cmd.env("TROUPE_PARTITION", partition_of(&self.cwd));
        cmd.env_remove("GZ_PARTITION");
        for (k, v) in &self.env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd
    }

    /// The command line, for messages.
    pub fn describe(&self) -> String {
        let env: Vec<String> = self
            .env
            .iter()
            .map(|(k, v)| format!("{}={:?}", k.to_string_lossy(), v.clone().unwrap_or_default()))
            .collect();
        let args: Vec<String> = self.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        format!("{} troupe {}", env.join(" "), args.join(" ")).trim().to_string()
    }

    /// Starts the child.
    pub fn spawn(self) -> Running {
        let what = self.describe();
        let mut child = self.command().spawn().unwrap_or_else(|e| panic!("cannot start `{what}`: {e}"));
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let readers = vec![
            pump(child.stdout.take().expect("piped stdout"), stdout.clone()),
            pump(child.stderr.take().expect("piped stderr"), stderr.clone()),
        ];
        Running { child: Some(child), what, stdout, stderr, readers, started: Instant::now() }
    }

    /// Runs to the end (or [`TIMEOUT`]).
    pub fn run(self) -> Output {
        self.spawn().wait()
    }
}

fn pump(mut from: impl Read + Send + 'static, into: Arc<Mutex<String>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => into.lock().unwrap_or_else(|e| e.into_inner()).push_str(&String::from_utf8_lossy(&buf[..n])),
            }
        }
    })
}

/// A running child; killed if dropped before it ended.
pub struct Running {
    child: Option<Child>,
    what: String,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
    started: Instant,
}

impl Running {
    /// Stdout so far.
    pub fn stdout_so_far(&self) -> String {
        self.stdout.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
    /// Stderr so far.
    pub fn stderr_so_far(&self) -> String {
        self.stderr.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Waits until stderr contains `needle`; fails the test (killing the child) if the child
    /// ends first or [`TIMEOUT`] passes.
    pub fn wait_for_stderr(&mut self, needle: &str) {
        loop {
            if self.stderr_so_far().contains(needle) {
                return;
            }
            let exited = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                let out = self.finish(status);
                panic!("`{}` ended before printing {needle:?} on stderr\n{out}", self.what);
            }
            if self.started.elapsed() > TIMEOUT {
                self.kill();
                let out = self.collect(None);
                panic!("`{}` did not print {needle:?} on stderr within {TIMEOUT:?}; killed\n{out}", self.what);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends a signal (`TERM`, `INT`, ...) with kill(1).
    pub fn signal(&self, name: &str) {
        let pid = self.child.as_ref().expect("child running").id();
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(pid.to_string())
            .status()
            .unwrap_or_else(|e| panic!("cannot run kill: {e}"));
        assert!(status.success(), "kill -{name} {pid} failed: {status}");
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("child running").id()
    }

    /// Waits for the end (at most [`TIMEOUT`] since the start); on timeout kills the child
    /// and fails the test with the output so far.
    pub fn wait(self) -> Output {
        self.wait_within(TIMEOUT)
    }

    /// Waits for the end, at most `bound` from now (and [`TIMEOUT`] since the start); past
    /// it kills the child and fails the test with the output so far.
    pub fn wait_within(mut self, bound: Duration) -> Output {
        let until = Instant::now() + bound;
        loop {
            let exited = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                return self.finish(status);
            }
            if self.started.elapsed() > TIMEOUT || Instant::now() > until {
                self.kill();
                let out = self.collect(None);
                panic!("`{}` did not end within {:?}; killed\n{out}", self.what, bound.min(TIMEOUT));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn finish(&mut self, status: ExitStatus) -> Output {
        self.child = None;
        self.collect(Some(status))
    }

    fn collect(&mut self, status: Option<ExitStatus>) -> Output {
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        Output {
            what: self.what.clone(),
            status,
            stdout: self.stdout.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            stderr: self.stderr.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            elapsed: self.started.elapsed(),
        }
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `troupe service` calling `service` (answering a `gz.msgs.Boolean`) with `req` of type
/// `req_type`, waiting up to 20 s for the answer.
pub fn call(dir: &TestDir, service: &str, req_type: &str, req: &str) -> crate::output::Output {
    Troupe::service(dir)
        .args([
            "-s",
            service,
            "--reqtype",
            req_type,
            "--reptype",
            "gz.msgs.Boolean",
            "--timeout",
            "20000",
            "--req",
            req,
        ])
        .run()
}

/// Asserts the service answered true.
pub fn ok(out: crate::output::Output) {
    out.assert_code(0);
    assert_eq!(out.stdout.trim(), "data: true", "{out}");
}
