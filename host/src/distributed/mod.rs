//! The distributed step protocol (docs/distributed.md) as two state machines with no I/O.
//!
//! A [`Primary`] and N [`Secondary`]s take decoded [`messages::Envelope`]s and clock ticks
//! (`now` is a [`Duration`](std::time::Duration) from an injected clock, never the wall clock)
//! and produce [`Transmit`]s to send and events for their driver: the driver moves bytes
//! (over nng), runs the simulation steps the machines order and turns their
//! [`Outcome`] into an exit code. Read `docs/distributed.md` for the protocol itself.
//!
//! * [`messages`]: the prost messages (`host/proto/troupe/distributed.proto`).
//! * [`peer`]: peers, timing, transmits; [`outcome`]: how a run ends and why.
//! * [`assignment`]: which secondary simulates which performer (pure functions).
//! * [`levels`]: the ECM side of levels in a distributed run (the primary's membership,
//!   the secondary's assigned levels).
//! * [`primary`] / [`secondary`]: the two machines.
//! * [`simnet`]: a seeded in-memory network with loss, delay, reordering, duplication and
//!   partitions, on which the machines are tested.

pub mod assignment;
pub mod driver;
pub mod fingerprint;
pub mod levels;
pub mod messages;
pub mod outcome;
pub mod peer;
pub mod primary;
pub mod secondary;
pub mod settings;
pub mod simnet;
pub mod split;

pub use assignment::{LevelId, Membership, Owners, PerformerId};
pub use outcome::{Cause, Outcome, RunError};
pub use peer::{Destination, PeerRef, Timing, Transmit};
pub use primary::{Primary, PrimaryConfig, PrimaryEvent, StepInput, StepRefused};
pub use secondary::{Secondary, SecondaryConfig, SecondaryEvent, StepOrder};

/// The protocol version every message carries; peers with another version are refused.
/// Version 2: the step carries which secondary holds each level (`Step.levels`); a
/// version-1 secondary would ignore it and hold the wrong levels. Version 3: an answer
/// carries the topics the secondary's systems advertised since its previous one
/// (`StepAnswer.topics`), which every secondary then keeps advertised.
pub const PROTOCOL_VERSION: u32 = 3;

#[cfg(test)]
mod tests;
