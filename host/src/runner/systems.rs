//! Systems as the runner holds them, and calling their phases with errors that say which
//! system failed where.

use crate::ecm::EcmAccess;
use crate::plugin::LoadedLibrary;
use abi_stable::std_types::{RNone, ROption, RResult, RStr};
use plugin_api::ffi::{ErrorKind, Hooks, HostObj, SystemError, SystemObj};
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
    /// The update hooks the system implements, asked when it is configured (give
    /// [`Hooks::ALL`] when making a slot); the others are not called.
    pub hooks: Hooks,
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

    /// Calls configure, then asks the system which update hooks it implements.
    pub fn configure(&mut self, access: &mut EcmAccess<'_>, host: HostObj) -> Result<(), SystemFailure> {
        let r = self.obj.configure(self.entity, RStr::from_str(&self.xml), access.as_mut_obj(), host);
        self.check(Phase::Configure, r)?;
        self.hooks = self.obj.hooks();
        Ok(())
    }
    /// Calls reset.
    pub fn reset(&mut self, info: &UpdateInfo, access: &mut EcmAccess<'_>) -> Result<ResetOutcome, SystemFailure> {
        let r = self.obj.reset(info, access.as_mut_obj());
        self.check(Phase::Reset, r)
    }
    // The update hooks go through the `run_*` entry points: success comes back as a bool in
    // a register, not as a 48-byte RResult read back from memory (a store-forwarding stall
    // on every call). A hook the system does not implement costs one test here.

    /// Calls pre_update, if the system implements it.
    #[inline]
    pub fn pre_update(&mut self, info: &UpdateInfo, access: &mut EcmAccess<'_>) -> Result<(), SystemFailure> {
        if !self.hooks.contains(Hooks::PRE_UPDATE) {
            return Ok(());
        }
        let mut failure = RNone;
        if self.obj.run_pre_update(info, access.as_mut_obj(), &mut failure) {
            return Ok(());
        }
        Err(self.failed(Phase::PreUpdate, failure))
    }
    /// Calls update, if the system implements it.
    #[inline]
    pub fn update(&mut self, info: &UpdateInfo, access: &mut EcmAccess<'_>) -> Result<(), SystemFailure> {
        if !self.hooks.contains(Hooks::UPDATE) {
            return Ok(());
        }
        let mut failure = RNone;
        if self.obj.run_update(info, access.as_mut_obj(), &mut failure) {
            return Ok(());
        }
        Err(self.failed(Phase::Update, failure))
    }
    /// Calls post_update with the ECM read-only, if the system implements it.
    #[inline]
    pub fn post_update(&mut self, info: &UpdateInfo, access: &EcmAccess<'_>) -> Result<(), SystemFailure> {
        if !self.hooks.contains(Hooks::POST_UPDATE) {
            return Ok(());
        }
        let mut failure = RNone;
        if self.obj.run_post_update(info, access.as_ref_obj(), &mut failure) {
            return Ok(());
        }
        Err(self.failed(Phase::PostUpdate, failure))
    }

    #[cold]
    fn failed(&self, phase: Phase, failure: ROption<SystemError>) -> SystemFailure {
        let e = failure.into_option().unwrap_or_else(|| SystemError {
            kind: ErrorKind::FAILED,
            message: "the system reported a failure without an error".into(),
        });
        self.fail(phase, e)
    }
}

/// The systems each update phase calls, as indices of the runner's systems: pre_update and
/// update in ascending priority (ties in load order), post_update in load order. A system is
/// listed only in the phases it implements ([`SystemSlot::hooks`], asked at configure), so
/// a step makes no call, and no test, for a hook nobody implements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PhaseOrder {
    /// Those that implement pre_update.
    pub pre_update: Vec<usize>,
    /// Those that implement update.
    pub update: Vec<usize>,
    /// Those that implement post_update.
    pub post_update: Vec<usize>,
}

impl PhaseOrder {
    /// The lists for `systems` (configured: their hooks are known).
    pub fn of(systems: &[SystemSlot]) -> PhaseOrder {
        let mut by_priority: Vec<usize> = (0..systems.len()).collect();
        by_priority.sort_by_key(|&i| (systems[i].priority, i));
        let having = |order: &[usize], hook: Hooks| -> Vec<usize> {
            order.iter().copied().filter(|&i| systems[i].hooks.contains(hook)).collect()
        };
        let load_order: Vec<usize> = (0..systems.len()).collect();
        PhaseOrder {
            pre_update: having(&by_priority, Hooks::PRE_UPDATE),
            update: having(&by_priority, Hooks::UPDATE),
            post_update: having(&load_order, Hooks::POST_UPDATE),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecm::Ecm;
    use crate::runner::{EventBus, OwnsAll, SystemHost};
    use abi_stable::sabi_trait::TD_Opaque;
    use abi_stable::std_types::RArc;
    use plugin_api::ffi::{HostServices_TO, NetworkRole};
    use plugin_api::{EcmView, System};
    use std::sync::Mutex;

    /// Records the hooks called; fails in update if asked to.
    struct Probe {
        hooks: Hooks,
        calls: Arc<Mutex<Vec<&'static str>>>,
        fail: Option<bool>,
    }

    impl System for Probe {
        fn hooks(&self) -> Hooks {
            self.hooks
        }
        fn pre_update(&mut self, _: &UpdateInfo, _: &mut plugin_api::Ecm<'_>) -> plugin_api::Result {
            self.calls.lock().unwrap().push("pre_update");
            Ok(())
        }
        fn update(&mut self, _: &UpdateInfo, _: &mut plugin_api::Ecm<'_>) -> plugin_api::Result {
            self.calls.lock().unwrap().push("update");
            match self.fail {
                Some(true) => panic!("probe panicked"),
                Some(false) => Err(plugin_api::Error::msg("probe failed")),
                None => Ok(()),
            }
        }
        fn post_update(&mut self, _: &UpdateInfo, _: &EcmView<'_>) -> plugin_api::Result {
            self.calls.lock().unwrap().push("post_update");
            Ok(())
        }
    }

    fn configured(hooks: Hooks, fail: Option<bool>, ecm: &mut Ecm) -> (SystemSlot, Arc<Mutex<Vec<&'static str>>>) {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let probe = Probe { hooks, calls: calls.clone(), fail };
        let mut slot = SystemSlot {
            label: "probe".into(),
            origin: "test".into(),
            source: Source::InProcess,
            xml: "<plugin/>".into(),
            entity: EntityId(1),
            priority: 0,
            obj: plugin_api::into_ffi(probe),
            id: 1,
            hooks: Hooks::ALL,
        };
        let host = SystemHost::new(
            "w",
            Arc::new(EventBus::default()),
            NetworkRole::STANDALONE,
            Arc::new(OwnsAll),
            0,
            1,
            crate::transport::Node::local(),
        );
        slot.configure(&mut EcmAccess::new(ecm, None), HostServices_TO::from_ptr(RArc::new(host), TD_Opaque)).unwrap();
        (slot, calls)
    }

    fn one_step(slot: &mut SystemSlot, ecm: &mut Ecm) -> Result<(), SystemFailure> {
        let info = UpdateInfo::default();
        let mut access = EcmAccess::new(ecm, None);
        slot.pre_update(&info, &mut access)?;
        slot.update(&info, &mut access)?;
        slot.post_update(&info, &access)
    }

    #[test]
    fn only_the_hooks_a_system_declares_are_called() {
        let mut ecm = Ecm::new();
        let (mut slot, calls) = configured(Hooks::UPDATE, None, &mut ecm);
        assert_eq!(slot.hooks, Hooks::UPDATE, "asked once, at configure");
        one_step(&mut slot, &mut ecm).unwrap();
        assert_eq!(*calls.lock().unwrap(), ["update"]);
        let (mut slot, calls) = configured(Hooks::PRE_UPDATE | Hooks::POST_UPDATE, None, &mut ecm);
        one_step(&mut slot, &mut ecm).unwrap();
        assert_eq!(*calls.lock().unwrap(), ["pre_update", "post_update"]);
        let (mut slot, calls) = configured(Hooks::ALL, None, &mut ecm);
        one_step(&mut slot, &mut ecm).unwrap();
        assert_eq!(*calls.lock().unwrap(), ["pre_update", "update", "post_update"]);
    }

    #[test]
    fn each_phase_lists_only_the_systems_implementing_it_in_its_order() {
        let mut ecm = Ecm::new();
        let mut with = |hooks, priority| {
            let (mut slot, _) = configured(hooks, None, &mut ecm);
            slot.priority = priority;
            slot
        };
        let systems = [
            with(Hooks::UPDATE, 5),
            with(Hooks::ALL, 0),
            with(Hooks::PRE_UPDATE | Hooks::POST_UPDATE, -1),
            with(Hooks::POST_UPDATE, 0),
        ];
        let order = PhaseOrder::of(&systems);
        // pre_update and update by priority (ties in load order), post_update in load order.
        assert_eq!(order.pre_update, [2, 1]);
        assert_eq!(order.update, [1, 0]);
        assert_eq!(order.post_update, [1, 2, 3]);
        assert_eq!(PhaseOrder::of(&[]), PhaseOrder::default());
    }

    #[test]
    fn failures_and_panics_come_back_with_phase_and_message() {
        let mut ecm = Ecm::new();
        let (mut slot, _) = configured(Hooks::ALL, Some(false), &mut ecm);
        let e = one_step(&mut slot, &mut ecm).unwrap_err();
        assert_eq!((e.phase, e.panicked, e.message.as_str()), (Phase::Update, false, "probe failed"));
        let (mut slot, _) = configured(Hooks::UPDATE, Some(true), &mut ecm);
        let e = one_step(&mut slot, &mut ecm).unwrap_err();
        assert_eq!((e.phase, e.panicked, e.message.as_str()), (Phase::Update, true, "probe panicked"));
    }
}
