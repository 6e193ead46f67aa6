//! The event manager of a world (gz-sim's EventManager): built-in stop, pause and reset events and named
//! custom events. Emitting queues an event; the runner delivers the queue on the simulation
//! thread at the end of the step, so handlers never run inside another system's call.

use abi_stable::std_types::{RBox, RSlice, RStr};
use plugin_api::ffi::{EventHandler_TO, SystemError};
use plugin_api::EntityId;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// An emitted event waiting for the end of the step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The event name.
    pub name: String,
    /// Its payload.
    pub payload: Vec<u8>,
}

type Handler = EventHandler_TO<'static, RBox<()>>;

/// Queue and subscriptions of one world.
#[derive(Default)]
pub struct EventBus {
    queue: Mutex<Vec<Event>>,
    /// Whether `queue` may hold events: set and cleared under its lock, read without it,
    /// so the end of a step without events costs no lock.
    pending: AtomicBool,
    /// (subscription id, owning system, event name, handler).
    subscribers: Mutex<Vec<(u64, u64, String, Handler)>>,
    next_id: AtomicU64,
}

impl EventBus {
    /// Queues an event.
    pub fn emit(&self, name: &str, payload: &[u8]) {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        queue.push(Event { name: name.into(), payload: payload.to_vec() });
        self.pending.store(true, Ordering::Release);
    }

    /// Takes the queued events, oldest first. An event emitted by another thread while this
    /// runs is delivered by the next drain.
    pub fn drain(&self) -> Vec<Event> {
        if !self.pending.load(Ordering::Acquire) {
            return Vec::new();
        }
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        self.pending.store(false, Ordering::Release);
        std::mem::take(&mut *queue)
    }

    pub(super) fn subscribe(&self, owner: u64, name: &str, handler: Handler) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        self.subscribers.lock().unwrap_or_else(PoisonError::into_inner).push((id, owner, name.to_string(), handler));
        id
    }

    /// Removes every subscription of a system that is going away.
    pub fn unsubscribe_owner(&self, owner: u64) {
        self.subscribers.lock().unwrap_or_else(PoisonError::into_inner).retain(|s| s.1 != owner);
    }

    pub(super) fn unsubscribe(&self, id: u64) -> bool {
        let mut subs = self.subscribers.lock().unwrap_or_else(PoisonError::into_inner);
        let before = subs.len();
        subs.retain(|s| s.0 != id);
        subs.len() != before
    }

    /// Runs every handler subscribed to `event.name`, in subscription order. A failing
    /// handler's error is returned after the others ran.
    pub fn deliver(&self, event: &Event) -> Result<(), SystemError> {
        // Handlers may subscribe or emit while running: take them out of the lock.
        let mut subs = std::mem::take(&mut *self.subscribers.lock().unwrap_or_else(PoisonError::into_inner));
        let mut first_error = None;
        for (_, _, name, handler) in subs.iter_mut().filter(|s| s.2 == event.name) {
            let r = handler.on_event(RStr::from_str(name), RSlice::from_slice(&event.payload));
            if let abi_stable::std_types::RErr(e) = r {
                first_error.get_or_insert(e);
            }
        }
        let mut guard = self.subscribers.lock().unwrap_or_else(PoisonError::into_inner);
        let added = std::mem::take(&mut *guard);
        *guard = subs;
        guard.extend(added);
        first_error.map_or(Ok(()), Err)
    }
}

/// Answers whether this process simulates an entity. Standalone: always.
pub trait Ownership: Send + Sync {
    /// Whether `entity` is simulated here.
    fn owns(&self, entity: EntityId) -> bool;
}

/// Standalone ownership: everything is local.
pub struct OwnsAll;

impl Ownership for OwnsAll {
    fn owns(&self, _: EntityId) -> bool {
        true
    }
}
