//! # Troupe host
//!
//! The server: it owns each world's entity-component manager, clock and event bus, loads
//! systems from plugin libraries, and steps them.
//!
//! * [`sdf`] parses world files; [`factory`] turns them into entities.
//! * [`ecm`] is the entity-component manager; [`runner`] steps one world; [`server`] runs
//!   every world of a file in lockstep.
//! * [`config`] reads the server config and decides which systems load; [`plugin`] finds
//!   and loads their libraries.
//! * [`state`] turns an ECM into gz's `SerializedStateMap` and back, and records logs.
//! * [`fixture`] is the test fixture for plugin authors and our own tests.
//! * [`distributed`] is the primary/secondary step protocol as state machines with no I/O.

/// `eprintln!` in a single write: the line is formatted with its newline first, then written
/// to stderr at once. Processes sharing a stderr (a `--distributed` run and the secondaries it
/// starts) then never split each other's lines, as `eprintln!` may: stderr is unbuffered and
/// it writes each piece of the format on its own.
#[macro_export]
macro_rules! status {
    ($($arg:tt)*) => {{
        let mut line = ::std::format!($($arg)*);
        line.push('\n');
        let _ = ::std::io::Write::write_all(&mut ::std::io::stderr().lock(), line.as_bytes());
    }};
}

pub mod config;
pub mod distributed;
pub mod ecm;
pub mod factory;
pub mod fixture;
pub mod plugin;
pub mod runner;
pub mod sdf;
pub mod server;
pub mod state;
pub mod transport;
pub(crate) mod xml;
