//! Host services for systems: events, network role and entity ownership (topics and
//! services are in [`crate::transport`]).

use crate::entity::EntityId;
use crate::ffi::{
    EventHandler, EventHandler_TO, HostObj, NetworkRole, Ray, RayCaster as FfiRayCaster, RayCaster_TO, SystemError,
};
use crate::system::panic_message;
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RErr, ROk, RResult, RSlice, RSliceMut, RStr, RString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Names of the events the host itself emits and acts on (gz-sim's event manager).
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

    /// Offers `caster` as the world's ray-cast service (plugin-api 1.5): what a physics
    /// backend does so sensors cast against its collision shapes. A world has at most one;
    /// offering a second is an error naming the system that holds it. It is withdrawn when
    /// this system is dropped or reset.
    pub fn offer_ray_caster<C: RayCaster>(&self, caster: C) -> crate::system::Result<()> {
        let obj = RayCaster_TO::from_value(CasterAdapter(caster), TD_Opaque);
        self.obj.offer_ray_caster(obj).into_result().map_err(|e| crate::system::Error(e.message.into_string()))
    }

    /// Casts `rays` through the world's ray-cast service: `out[i]` becomes the distance
    /// along `rays[i]` to the first surface within `max_range` (+infinity for none),
    /// ignoring the shapes of link `exclude` ([`EntityId::NULL`]: none). Answers false, with
    /// `out` untouched, when the world has no ray caster (or it cannot cast now, or
    /// `out.len() != rays.len()`): cast against geometry of your own then.
    pub fn cast_rays(&self, rays: &[Ray], max_range: f64, exclude: EntityId, out: &mut [f64]) -> bool {
        if out.len() != rays.len() {
            return false;
        }
        self.obj.cast_rays(RSlice::from_slice(rays), max_range, exclude, RSliceMut::from_mut_slice(out))
    }
    /// Whether a request waits on one of this system's services or a message on one of its
    /// subscriptions (plugin-api 1.7; always true under an older host): a system serving
    /// many services checks this once a step before taking from each.
    pub fn has_pending(&self) -> bool {
        self.obj.has_pending()
    }
}

/// A world's ray-cast service, as a physics backend implements it (plugin-api 1.5) and
/// offers it with [`Host::offer_ray_caster`]. Called on the simulation thread by systems
/// that run after the backend (sensors in `post_update`), never concurrently with it.
pub trait RayCaster: Send + 'static {
    /// Writes to `out[i]` the distance along `rays[i]` (unit direction, world frame) to the
    /// first surface it meets within `max_range`, or +infinity; shapes of link `exclude`
    /// ([`EntityId::NULL`]: none) are ignored. A ray that starts inside a shape meets it
    /// where it leaves it. `out.len() == rays.len()`. Answer false if you cannot cast now
    /// (the caller then casts against geometry of its own). A panic is caught, logged and
    /// answered as false.
    fn cast_rays(&mut self, rays: &[Ray], max_range: f64, exclude: EntityId, out: &mut [f64]) -> bool;
}

struct CasterAdapter<C>(C);

impl<C: RayCaster> FfiRayCaster for CasterAdapter<C> {
    fn cast_rays(
        &mut self,
        rays: RSlice<'_, Ray>,
        max_range: f64,
        exclude: EntityId,
        mut out: RSliceMut<'_, f64>,
    ) -> bool {
        match catch_unwind(AssertUnwindSafe(|| {
            self.0.cast_rays(rays.as_slice(), max_range, exclude, out.as_mut_slice())
        })) {
            Ok(answered) => answered,
            Err(p) => {
                log::error!("the ray caster panicked: {}", panic_message(&*p));
                false
            }
        }
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
            Err(p) => {
                RErr(SystemError { kind: crate::ffi::ErrorKind::PANICKED, message: RString::from(panic_message(&*p)) })
            }
        }
    }
}
