//! Host services for systems: events, network role and entity ownership (topics and
//! services are in [`crate::transport`]).

use crate::entity::EntityId;
use crate::ffi::{EventHandler, EventHandler_TO, HostObj, NetworkRole, SystemError};
use crate::system::panic_message;
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RErr, ROk, RResult, RSlice, RStr, RString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Names of the events the host itself emits and acts on (seed 000's event manager).
pub mod events {
    /// Stop the run at the end of the current step. Emitted by the host on Ctrl-C, SIGTERM
    /// or when the iteration count is reached; a system may emit it to end the run.
    pub const STOP: &str = "troupe.stop";
    /// Pause (payload `[1]`) or resume (payload `[0]`) the simulation.
    pub const PAUSE: &str = "troupe.pause";
    /// Reset the world to its state after load, at the end of the current step.
    pub const RESET: &str = "troupe.reset";
    /// Load systems while running (`/world/<w>/entity/system/add`): the payload is an
    /// encoded `gz.msgs.EntityPlugin_V` naming the entity and the plugins. The host loads
    /// them at the end of the step; they run from the next step on.
    pub const ADD_SYSTEM: &str = "troupe.add_system";
}

/// Host services as a system holds them. Cheap to clone.
#[derive(Clone)]
pub struct Host {
    obj: std::sync::Arc<HostObj>,
}

impl Host {
    /// Wraps the host object (the adapter does this).
    pub fn from_ffi(obj: HostObj) -> Self {
        Host { obj: std::sync::Arc::new(obj) }
    }
    /// The host object itself.
    pub(crate) fn ffi(&self) -> &HostObj {
        &self.obj
    }
    /// The name of the world this system runs in.
    pub fn world_name(&self) -> String {
        self.obj.world_name().into_string()
    }
    /// This process's role in a distributed run.
    pub fn network_role(&self) -> NetworkRole {
        self.obj.network_role()
    }
    /// Whether this process simulates `entity` (always true standalone).
    pub fn owns_entity(&self, entity: EntityId) -> bool {
        self.obj.owns_entity(entity)
    }
    /// The run's random seed (`--seed`, 0 if none was given).
    pub fn seed(&self) -> u64 {
        self.obj.seed()
    }
    /// Emits an event; subscribers run on the simulation thread at the end of the step.
    pub fn emit(&self, name: &str, payload: &[u8]) {
        self.obj.emit_event(RStr::from_str(name), RSlice::from_slice(payload))
    }
    /// Subscribes `handler` to event `name`. Answers an id for [`Host::unsubscribe`]. A
    /// handler that returns an error or panics ends the run, naming the event.
    pub fn subscribe<F>(&self, name: &str, handler: F) -> u64
    where
        F: FnMut(&str, &[u8]) -> crate::system::Result + Send + 'static,
    {
        let obj = EventHandler_TO::from_value(ClosureHandler(handler), TD_Opaque);
        self.obj.subscribe(RStr::from_str(name), obj)
    }
    /// Removes a subscription.
    pub fn unsubscribe(&self, subscription: u64) -> bool {
        self.obj.unsubscribe(subscription)
    }
}

struct ClosureHandler<F>(F);

impl<F> EventHandler for ClosureHandler<F>
where
    F: FnMut(&str, &[u8]) -> crate::system::Result + Send + 'static,
{
    fn on_event(&mut self, name: RStr<'_>, payload: RSlice<'_, u8>) -> RResult<(), SystemError> {
        match catch_unwind(AssertUnwindSafe(|| (self.0)(name.as_str(), payload.as_slice()))) {
            Ok(Ok(())) => ROk(()),
            Ok(Err(e)) => RErr(SystemError { kind: crate::ffi::ErrorKind::FAILED, message: RString::from(e.0) }),
            Err(p) => RErr(SystemError {
                kind: crate::ffi::ErrorKind::PANICKED,
                message: RString::from(panic_message(&*p)),
            }),
        }
    }
}
