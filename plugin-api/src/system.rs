//! The [`System`] trait plugin authors implement, and the adapter that carries it across the
//! boundary with every entry point guarded against panics.

use crate::ecm::{Ecm, EcmView};
use crate::entity::EntityId;
use crate::ffi::{EcmMutObj, EcmRefObj, ErrorKind, FfiSystem, Hooks, HostObj, ResetOutcome, SystemError, UpdateInfo};
use crate::host::Host;
use crate::system_info::SystemInfo;
use abi_stable::std_types::{RErr, ROk, ROption, RResult, RStr, RString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// An error a system returns; the run stops with it, naming the system and the phase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::error::Error> From<E> for Error {
    fn from(e: E) -> Self {
        Error(e.to_string())
    }
}

impl Error {
    /// An error with this message.
    pub fn msg(message: impl Into<String>) -> Self {
        Error(message.into())
    }
}

/// The result of a system hook.
pub type Result<T = (), E = Error> = std::result::Result<T, E>;

/// What a system receives when it is configured.
pub struct ConfigureContext<'a> {
    /// The entity the system is attached to (the world, a model or a sensor).
    pub entity: EntityId,
    /// The whole `<plugin>` element that asked for the system, as XML text (see
    /// [`crate::xml`] for reading parameters from it).
    pub xml: &'a str,
    /// The ECM, read/write.
    pub ecm: Ecm<'a>,
    /// Host services, which the system may keep for its whole life.
    pub host: Host,
}

/// A simulation system: logic run by the host every step.
///
/// # Lifecycle
///
/// `configure` → (`reset`)* and, every step, `pre_update` → `update` → `post_update`.
///
/// * **configure** runs once, when the system is added: after the world's entities exist,
///   before the first step the system takes part in. It may read and write the ECM.
/// * **pre_update** and **update** run every iteration in ascending priority (ties in load
///   order; gz-sim's `<gz:system_priority>`), read/write. Commands are applied in
///   pre_update; physics integrates in update.
/// * **post_update** runs every iteration in load order and sees the ECM read-only: publish,
///   record, sense.
/// * **reset** runs when the world is reset, after the host restored the ECM to its state
///   after load. The default answers [`ResetOutcome::RECONFIGURE`]: the host drops this
///   instance and configures a fresh one from the same XML.
///
/// # Time while paused
///
/// The host keeps iterating while paused (at most once per millisecond) and calls every
/// phase with `info.paused == true` and `info.dt_ns == 0`; sim time and the iteration count
/// do not advance. Commands queued while paused are therefore still applied.
///
/// Every hook but `update` has a no-op default. A panic in any hook is caught at the
/// boundary and ends the run with an error naming the system, the phase and the message.
///
/// # Hooks the host calls
///
/// [`System::hooks`] states, once when the system is loaded, which of `pre_update`,
/// `update` and `post_update` it implements; the host calls only those (gz-sim likewise
/// calls only the `ISystem*` interfaces a system implements). The default is all three, so
/// nothing is skipped unless the system says so. A hook left out is never called, even if
/// the type implements it.
pub trait System: Send + 'static {
    /// What the system is: its kind, the roles it runs in by default and whether it changes
    /// the simulation (plugin-api 1.8). The host places the system by this, once, when its
    /// library is loaded; the default, [`SystemInfo::OTHER`], runs in every role and is kept
    /// in playback. A physics backend answers [`SystemInfo::PHYSICS`], and is then swapped by
    /// `--physics-engine` and kept off the primary as the built-in one is.
    fn info() -> SystemInfo
    where
        Self: Sized,
    {
        SystemInfo::OTHER
    }

    /// The priority to use when the XML has no `<gz:system_priority>` (default 0; lower
    /// runs first).
    fn priority(&self) -> Option<i32> {
        None
    }
    /// The update hooks this system implements, asked once when it is loaded (default: all
    /// three). A system that only integrates physics answers [`Hooks::UPDATE`](crate::ffi::Hooks::UPDATE), saving the
    /// host a call across the plugin boundary per skipped hook and step.
    fn hooks(&self) -> Hooks {
        Hooks::ALL
    }
    /// Called once when the system is added.
    fn configure(&mut self, ctx: ConfigureContext<'_>) -> Result {
        let _ = ctx;
        Ok(())
    }
    /// Called on world reset.
    fn reset(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> Result<ResetOutcome> {
        let _ = (info, ecm);
        Ok(ResetOutcome::RECONFIGURE)
    }
    /// Read/write, before `update`.
    fn pre_update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> Result {
        let _ = (info, ecm);
        Ok(())
    }
    /// Read/write.
    fn update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> Result;
    /// Read-only, after the step.
    fn post_update(&mut self, info: &UpdateInfo, ecm: &EcmView<'_>) -> Result {
        let _ = (info, ecm);
        Ok(())
    }
}

/// Carries a [`System`] across the boundary: every call runs inside `catch_unwind`, so a
/// panic becomes an error value instead of aborting the host.
pub struct SystemAdapter<S: System>(pub S);

/// Text of a caught panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

fn guard<T>(f: impl FnOnce() -> Result<T>) -> RResult<T, SystemError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => ROk(v),
        Ok(Err(e)) => RErr(SystemError { kind: ErrorKind::FAILED, message: RString::from(e.0) }),
        Err(payload) => {
            RErr(SystemError { kind: ErrorKind::PANICKED, message: RString::from(panic_message(&*payload)) })
        }
    }
}

/// Runs a hook for the `run_*` entry points: success costs no write to memory.
#[inline]
fn run(failure: &mut ROption<SystemError>, f: impl FnOnce() -> Result) -> bool {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => true,
        Ok(Err(e)) => report(failure, ErrorKind::FAILED, e.0),
        Err(payload) => report(failure, ErrorKind::PANICKED, panic_message(&*payload)),
    }
}

#[cold]
fn report(failure: &mut ROption<SystemError>, kind: ErrorKind, message: String) -> bool {
    *failure = ROption::RSome(SystemError { kind, message: RString::from(message) });
    false
}

impl<S: System> FfiSystem for SystemAdapter<S> {
    fn default_priority(&self) -> ROption<i32> {
        match catch_unwind(AssertUnwindSafe(|| self.0.priority())) {
            Ok(Some(p)) => ROption::RSome(p),
            _ => ROption::RNone,
        }
    }
    fn configure<'a>(
        &mut self,
        entity: EntityId,
        xml: RStr<'a>,
        ecm: EcmMutObj<'a>,
        host: HostObj,
    ) -> RResult<(), SystemError> {
        let ctx = ConfigureContext { entity, xml: xml.as_str(), ecm: Ecm::from_ffi(ecm), host: Host::from_ffi(host) };
        guard(|| self.0.configure(ctx))
    }
    fn reset(&mut self, info: &UpdateInfo, ecm: EcmMutObj<'_>) -> RResult<ResetOutcome, SystemError> {
        guard(|| self.0.reset(info, &mut Ecm::from_ffi(ecm)))
    }
    fn pre_update(&mut self, info: &UpdateInfo, ecm: EcmMutObj<'_>) -> RResult<(), SystemError> {
        guard(|| self.0.pre_update(info, &mut Ecm::from_ffi(ecm)))
    }
    fn update(&mut self, info: &UpdateInfo, ecm: EcmMutObj<'_>) -> RResult<(), SystemError> {
        guard(|| self.0.update(info, &mut Ecm::from_ffi(ecm)))
    }
    fn post_update(&mut self, info: &UpdateInfo, ecm: EcmRefObj<'_>) -> RResult<(), SystemError> {
        guard(|| self.0.post_update(info, &EcmView::from_ffi(ecm)))
    }
    fn hooks(&self) -> Hooks {
        catch_unwind(AssertUnwindSafe(|| self.0.hooks())).unwrap_or(Hooks::ALL)
    }
    fn run_pre_update(&mut self, info: &UpdateInfo, ecm: EcmMutObj<'_>, failure: &mut ROption<SystemError>) -> bool {
        run(failure, || self.0.pre_update(info, &mut Ecm::from_ffi(ecm)))
    }
    fn run_update(&mut self, info: &UpdateInfo, ecm: EcmMutObj<'_>, failure: &mut ROption<SystemError>) -> bool {
        run(failure, || self.0.update(info, &mut Ecm::from_ffi(ecm)))
    }
    fn run_post_update(&mut self, info: &UpdateInfo, ecm: EcmRefObj<'_>, failure: &mut ROption<SystemError>) -> bool {
        run(failure, || self.0.post_update(info, &EcmView::from_ffi(ecm)))
    }
}

/// Boxes a system as the object the host drives (used by [`crate::export_plugin!`] and by
/// in-process systems of the test fixture).
pub fn into_ffi<S: System>(system: S) -> crate::ffi::SystemObj {
    crate::ffi::FfiSystem_TO::from_value(SystemAdapter(system), abi_stable::sabi_trait::TD_Opaque)
}
