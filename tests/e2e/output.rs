//! What a finished `troupe` run left behind: its exit status and output (with assertions
//! that print everything on failure), and the file `testing::Recorder` writes.

use crate::harness::TestDir;
use std::process::ExitStatus;
use std::time::Duration;

/// What a finished run printed and how it ended.
pub struct Output {
    /// The command line.
    pub what: String,
    /// Exit status (`None` if it was killed by the harness).
    pub status: Option<ExitStatus>,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
    /// From start to end, as the test saw it.
    pub elapsed: Duration,
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stderr = tail(&self.stderr, 6000);
        write!(
            f,
            "command: {}\nstatus: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}--- end ---",
            self.what, self.status, self.stdout, stderr
        )
    }
}

fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

impl Output {
    /// The exit code (`None` if killed by a signal).
    pub fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }

    /// Fails unless the exit code is `code`.
    pub fn assert_code(&self, code: i32) -> &Output {
        assert_eq!(self.code(), Some(code), "wrong exit code\n{self}");
        self
    }

    /// Fails unless stderr contains every one of `needles`.
    pub fn assert_stderr_has(&self, needles: &[&str]) -> &Output {
        for n in needles {
            assert!(self.stderr.contains(n), "stderr lacks {n:?}\n{self}");
        }
        self
    }

    /// Fails if stderr contains `needle`.
    pub fn assert_stderr_lacks(&self, needle: &str) -> &Output {
        assert!(!self.stderr.contains(needle), "stderr has {needle:?}\n{self}");
        self
    }

    /// The `troupe: error:` lines of stderr, joined: the message a user reads.
    pub fn error_text(&self) -> String {
        let mut out = String::new();
        let mut in_error = false;
        for line in self.stderr.lines() {
            if line.starts_with("troupe: error:") {
                in_error = true;
            } else if !line.starts_with("  ") {
                in_error = false;
            }
            if in_error {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    /// Fails unless the run ended with exit `code` (2: could not start, 1: failed while
    /// running), printed no summary, and wrote a `troupe: error:` message
    /// containing every one of `needles`; answers the message.
    pub fn assert_error(&self, code: i32, needles: &[&str]) -> String {
        self.assert_code(code);
        let msg = self.error_text();
        assert!(!msg.is_empty(), "no `troupe: error:` line\n{self}");
        for n in needles {
            assert!(msg.contains(n), "the error message lacks {n:?}\nmessage: {msg}\n{self}");
        }
        assert!(!self.stdout.contains("iterations:"), "a failed run printed a summary\n{self}");
        msg
    }

    /// The iteration count of the summary line on stdout.
    pub fn summary_iterations(&self) -> u64 {
        self.summary_field("iterations:")
            .unwrap_or_else(|| panic!("no summary line `iterations: N ...` on stdout\n{self}"))
            .parse()
            .unwrap_or_else(|e| panic!("summary iterations not a number: {e}\n{self}"))
    }

    /// The wall time of the summary line, s.
    pub fn summary_wall_time(&self) -> f64 {
        self.summary_field("wall time:")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no `wall time: X s` in the summary line\n{self}"))
    }

    fn summary_field(&self, key: &str) -> Option<String> {
        let line = self.stdout.lines().find(|l| l.starts_with("iterations: "))?;
        field_of(line, key).map(str::to_string)
    }

    /// The number after `key` in every summary line on stdout, in order (processes sharing
    /// this stdout print one each).
    pub fn summary_values(&self, key: &str) -> Vec<f64> {
        self.stdout
            .lines()
            .filter(|l| l.starts_with("iterations: "))
            .map(|l| {
                field_of(l, key)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("no number after {key:?} in {l:?}\n{self}"))
            })
            .collect()
    }

    /// Stderr lines containing `needle`.
    pub fn stderr_lines_with(&self, needle: &str) -> Vec<&str> {
        self.stderr.lines().filter(|l| l.contains(needle)).collect()
    }
}

/// What `testing::Recorder` wrote: `world W`, `iterations N`, `sim_time S`, `entity ID NAME`.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The world name.
    pub world: String,
    /// The iterations it last saw.
    pub iterations: u64,
    /// The `entity ID NAME` lines, in file order.
    pub entity_lines: Vec<String>,
    /// The same, parsed.
    pub entities: Vec<(u64, String)>,
}

impl Recorded {
    /// Parses a Recorder file (panics with the text on a malformed one).
    pub fn parse(text: &str) -> Recorded {
        let field = |k: &str| text.lines().find_map(|l| l.strip_prefix(k)).map(str::trim).map(str::to_string);
        let world = field("world ").unwrap_or_else(|| panic!("no `world` line in:\n{text}"));
        let iterations = field("iterations ")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no `iterations N` line in:\n{text}"));
        let entity_lines: Vec<String> = text.lines().filter(|l| l.starts_with("entity ")).map(str::to_string).collect();
        let entities = entity_lines
            .iter()
            .map(|l| {
                let mut parts = l.splitn(3, ' ').skip(1);
                let id = parts.next().and_then(|i| i.parse().ok()).unwrap_or_else(|| panic!("bad entity line {l:?}"));
                (id, parts.next().unwrap_or("").to_string())
            })
            .collect();
        Recorded { world, iterations, entity_lines, entities }
    }

    /// Reads and parses `rel` in `dir`, failing the test (with the run's output) if missing.
    pub fn read(dir: &TestDir, rel: &str, out: &Output) -> Recorded {
        let text = dir.read(rel).unwrap_or_else(|| panic!("the Recorder wrote no {rel}\n{out}"));
        Recorded::parse(&text)
    }

    /// Whether an entity of this name was there.
    pub fn has_entity(&self, name: &str) -> bool {
        self.entities.iter().any(|(_, n)| n == name)
    }
}

/// The word after `key` in a summary line.
fn field_of<'l>(line: &'l str, key: &str) -> Option<&'l str> {
    line[line.find(key)? + key.len()..].split_whitespace().next()
}
