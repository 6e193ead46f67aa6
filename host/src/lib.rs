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
