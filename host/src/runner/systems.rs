//! Systems as the runner holds them, and calling their phases with errors that say which
//! system failed where.

use crate::ecm::EcmAccess;
use crate::plugin::LoadedLibrary;
use abi_stable::std_types::{RResult, RStr};
use plugin_api::ffi::{ErrorKind, HostObj, SystemError, SystemObj};
use plugin_api::{EntityId, ResetOutcome, UpdateInfo};
use std::sync::Arc;

/// Where a system came from, so it can be made again on reset.
#[derive(Clone)]
pub enum Source {
    /// A class of a loaded plugin library.
    Library {
        /// The library.
        library: Arc<LoadedLibrary>,
        /// The class name asked for.
        class: String,
    },
    /// A system added in-process (the test fixture's callbacks); cannot be re-made.
    InProcess,
}

/// A loaded, configured system.
pub struct SystemSlot {
    /// How logs and errors name it: `class (library file)` or the in-process label.
    pub label: String,
    /// The file and line that asked for it.
    pub origin: String,
    /// Where it came from.
    pub source: Source,
    /// Its `<plugin>` element.
    pub xml: String,
    /// The entity it is attached to.
    pub entity: EntityId,
    /// `<gz:system_priority>`, else the system's own, else 0.
    pub priority: i32,
    /// The system.
    pub obj: SystemObj,
    /// Unique within the runner; owns the system's event subscriptions.
    pub id: u64,
}

/// A lifecycle phase, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// configure
    Configure,
    /// reset
    Reset,
    /// pre_update
    PreUpdate,
    /// update
    Update,
    /// post_update
    PostUpdate,
    /// an event handler
    Event,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Phase::Configure => "configure",
            Phase::Reset => "reset",
            Phase::PreUpdate => "pre_update",
            Phase::Update => "update",
            Phase::PostUpdate => "post_update",
            Phase::Event => "an event handler",
        })
    }
}

/// A system failed; the run stops.
#[derive(Debug, thiserror::Error)]
#[error("system {system} (requested at {origin}) {} in {phase}: {message}", if *.panicked { "panicked" } else { "failed" })]
pub struct SystemFailure {
    /// The system's label.
    pub system: String,
    /// Where it was requested.
    pub origin: String,
    /// The phase.
    pub phase: Phase,
    /// Whether it panicked (else it returned an error).
    pub panicked: bool,
    /// Its message.
    pub message: String,
}

impl SystemSlot {
    fn fail(&self, phase: Phase, e: SystemError) -> SystemFailure {
        SystemFailure {
            system: self.label.clone(),
            origin: self.origin.clone(),
            phase,
            panicked: e.kind == ErrorKind::PANICKED,
            message: e.message.into_string(),
        }
    }

    fn check<T>(&self, phase: Phase, r: RResult<T, SystemError>) -> Result<T, SystemFailure> {
        r.into_result().map_err(|e| self.fail(phase, e))
    }

    /// Calls configure.
    pub fn configure(&mut self, access: &mut EcmAccess<'_>, host: HostObj) -> Result<(), SystemFailure> {
        let r = self.obj.configure(self.entity, RStr::from_str(&self.xml), access.as_mut_obj(), host);
        self.check(Phase::Configure, r)
    }
    /// Calls reset.
    pub fn reset(&mut self, info: &UpdateInfo, access: &mut EcmAccess<'_>) -> Result<ResetOutcome, SystemFailure> {
        let r = self.obj.reset(info, access.as_mut_obj());
        self.check(Phase::Reset, r)
    }
    /// Calls pre_update.
    pub fn pre_update(&mut self, info: &UpdateInfo, access: &mut EcmAccess<'_>) -> Result<(), SystemFailure> {
        let r = self.obj.pre_update(info, access.as_mut_obj());
        self.check(Phase::PreUpdate, r)
    }
    /// Calls update.
    pub fn update(&mut self, info: &UpdateInfo, access: &mut EcmAccess<'_>) -> Result<(), SystemFailure> {
        let r = self.obj.update(info, access.as_mut_obj());
        self.check(Phase::Update, r)
    }
    /// Calls post_update with the ECM read-only.
    pub fn post_update(&mut self, info: &UpdateInfo, access: &EcmAccess<'_>) -> Result<(), SystemFailure> {
        let r = self.obj.post_update(info, access.as_ref_obj());
        self.check(Phase::PostUpdate, r)
    }
}

/// Indices of `systems` in the order pre_update and update run: ascending priority, ties
/// in load order.
pub fn update_order(systems: &[SystemSlot]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..systems.len()).collect();
    order.sort_by_key(|&i| (systems[i].priority, i));
    order
}
