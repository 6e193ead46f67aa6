//! How a run ends: cleanly, or with an error naming the peer it concerns and the cause.

use std::fmt;

use super::messages::ErrorCause;
use super::peer::PeerRef;

/// Why a run ended abnormally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    /// The peer speaks another protocol version.
    VersionMismatch,
    /// The peer loaded another world (its fingerprint differs).
    FingerprintMismatch,
    /// A secondary joined after the run started (the simulation terminates, as the design says).
    LateJoin,
    /// The peer announced it is leaving.
    PeerLeft,
    /// Nothing was heard from the peer for the peer timeout.
    HeartbeatTimeout,
    /// The peer did not answer a step (or a handshake or stop request) within the step
    /// timeout.
    StepAnswerTimeout,
    /// The peer sent something the protocol does not allow at this point.
    ProtocolViolation,
    /// Not all secondaries joined within the join timeout.
    JoinTimeout,
    /// The peer's own run failed (a system error, a local shutdown) and it ended the run.
    Aborted,
}

impl Cause {
    /// The wire form.
    pub fn to_wire(self) -> ErrorCause {
        match self {
            Cause::VersionMismatch => ErrorCause::VersionMismatch,
            Cause::FingerprintMismatch => ErrorCause::FingerprintMismatch,
            Cause::LateJoin => ErrorCause::LateJoin,
            Cause::PeerLeft => ErrorCause::PeerLeft,
            Cause::HeartbeatTimeout => ErrorCause::HeartbeatTimeout,
            Cause::StepAnswerTimeout => ErrorCause::StepAnswerTimeout,
            Cause::ProtocolViolation => ErrorCause::ProtocolViolation,
            Cause::JoinTimeout => ErrorCause::JoinTimeout,
            Cause::Aborted => ErrorCause::Aborted,
        }
    }

    /// From the wire; an unknown cause reads as a protocol violation.
    pub fn from_wire(c: i32) -> Cause {
        match ErrorCause::try_from(c) {
            Ok(ErrorCause::VersionMismatch) => Cause::VersionMismatch,
            Ok(ErrorCause::FingerprintMismatch) => Cause::FingerprintMismatch,
            Ok(ErrorCause::LateJoin) => Cause::LateJoin,
            Ok(ErrorCause::PeerLeft) => Cause::PeerLeft,
            Ok(ErrorCause::HeartbeatTimeout) => Cause::HeartbeatTimeout,
            Ok(ErrorCause::StepAnswerTimeout) => Cause::StepAnswerTimeout,
            Ok(ErrorCause::JoinTimeout) => Cause::JoinTimeout,
            Ok(ErrorCause::Aborted) => Cause::Aborted,
            Ok(ErrorCause::ProtocolViolation) | Ok(ErrorCause::Unspecified) | Err(_) => Cause::ProtocolViolation,
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cause::VersionMismatch => "protocol version mismatch",
            Cause::FingerprintMismatch => "world fingerprint mismatch",
            Cause::LateJoin => "joined after the run started",
            Cause::PeerLeft => "left the run",
            Cause::HeartbeatTimeout => "no heartbeat within the peer timeout",
            Cause::StepAnswerTimeout => "no answer within the step timeout",
            Cause::ProtocolViolation => "protocol violation",
            Cause::JoinTimeout => "not all secondaries joined within the join timeout",
            Cause::Aborted => "ended the run",
        })
    }
}

/// An abnormal end: the peer concerned, the cause, details, and who reported it when it was
/// not this machine's own finding (a secondary learning from the primary).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    /// The peer the error is about (the lost one, the late joiner, the mismatched one).
    pub peer: PeerRef,
    /// Why.
    pub cause: Cause,
    /// Details for the log (expected and found values, missing peers...).
    pub detail: String,
    /// The peer that told us, if not found by this machine itself.
    pub reported_by: Option<PeerRef>,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.peer, self.cause)?;
        if !self.detail.is_empty() {
            write!(f, " ({})", self.detail)?;
        }
        if let Some(by) = &self.reported_by {
            write!(f, ", reported by {by}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RunError {}

/// How a machine's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A normal stop at a step boundary; the process exits 0.
    Stopped {
        /// The last step every secondary completed.
        after_seq: u64,
    },
    /// An abnormal end; the process exits non-zero with this message.
    Failed(RunError),
}

impl Outcome {
    /// Whether the run ended cleanly.
    pub fn is_clean(&self) -> bool {
        matches!(self, Outcome::Stopped { .. })
    }

    /// The process exit code for this outcome: 0 stopped cleanly, 1 failed.
    pub fn exit_code(&self) -> i32 {
        if self.is_clean() {
            0
        } else {
            1
        }
    }
}
