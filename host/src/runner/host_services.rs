//! The host services object each system holds: world facts, events, and the transport.

use super::event_bus::{EventBus, Ownership};
use crate::transport::{Answer, Node, RequestQueue, Subscription, TopicOptions as NodeTopicOptions, TransportError};
use abi_stable::std_types::{RBox, RErr, ROk, RResult, RSlice, RStr, RString, RVec};
use plugin_api::ffi::{ErrorKind, EventHandler_TO, HostServices, NetworkRole, ServiceReply, ServiceRequest, SystemError, TopicOptions};
use plugin_api::EntityId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Handler = EventHandler_TO<'static, RBox<()>>;

/// The host services object handed to each system. What it advertises, subscribes to and
/// offers is withdrawn when the system lets go of it (the system was dropped or reset).
pub struct SystemHost {
    world: String,
    bus: Arc<EventBus>,
    role: NetworkRole,
    ownership: Arc<dyn Ownership>,
    seed: u64,
    owner: u64,
    node: Node,
    publishers: Mutex<Vec<u64>>,
    subscriptions: Mutex<HashMap<u64, Subscription>>,
    services: Mutex<HashMap<u64, (String, RequestQueue)>>,
}

impl SystemHost {
    /// Host services for system `owner` of world `world`.
    pub fn new(world: &str, bus: Arc<EventBus>, role: NetworkRole, ownership: Arc<dyn Ownership>, seed: u64, owner: u64, node: Node) -> SystemHost {
        SystemHost {
            world: world.to_string(),
            bus,
            role,
            ownership,
            seed,
            owner,
            node,
            publishers: Mutex::default(),
            subscriptions: Mutex::default(),
            services: Mutex::default(),
        }
    }
}

impl Drop for SystemHost {
    fn drop(&mut self) {
        for id in self.publishers.get_mut().unwrap().drain(..) {
            self.node.unadvertise(id);
        }
        for id in self.subscriptions.get_mut().unwrap().keys() {
            self.node.unsubscribe(*id);
        }
        for (name, _) in self.services.get_mut().unwrap().values() {
            self.node.withdraw(name);
        }
    }
}

fn failed(e: TransportError) -> SystemError {
    SystemError { kind: ErrorKind::FAILED, message: RString::from(e.to_string()) }
}

impl HostServices for SystemHost {
    fn world_name(&self) -> RString {
        RString::from(self.world.as_str())
    }
    fn network_role(&self) -> NetworkRole {
        self.role
    }
    fn owns_entity(&self, entity: EntityId) -> bool {
        self.ownership.owns(entity)
    }
    fn seed(&self) -> u64 {
        self.seed
    }
    fn emit_event(&self, name: RStr<'_>, payload: RSlice<'_, u8>) {
        self.bus.emit(name.as_str(), payload.as_slice());
    }
    fn subscribe(&self, name: RStr<'_>, handler: Handler) -> u64 {
        self.bus.subscribe(self.owner, name.as_str(), handler)
    }
    fn unsubscribe(&self, subscription: u64) -> bool {
        self.bus.unsubscribe(subscription)
    }

    fn advertise(&self, topic: RStr<'_>, msg_type: RStr<'_>, options: TopicOptions) -> RResult<u64, SystemError> {
        let options = NodeTopicOptions { reliable: options.reliable, max_rate_hz: options.max_rate_hz };
        match self.node.advertise(topic.as_str(), msg_type.as_str(), options) {
            Ok(id) => {
                self.publishers.lock().unwrap().push(id);
                ROk(id)
            }
            Err(e) => RErr(failed(e)),
        }
    }
    fn publish(&self, publisher: u64, payload: RSlice<'_, u8>) -> RResult<bool, SystemError> {
        self.node.publish(publisher, payload.as_slice()).map_err(failed).into()
    }
    fn has_subscribers(&self, publisher: u64) -> bool {
        self.node.has_subscribers(publisher)
    }
    fn subscribe_topic(&self, topic: RStr<'_>, msg_type: RStr<'_>) -> RResult<u64, SystemError> {
        match self.node.subscribe(topic.as_str(), msg_type.as_str()) {
            Ok(sub) => {
                let id = sub.id();
                self.subscriptions.lock().unwrap().insert(id, sub);
                ROk(id)
            }
            Err(e) => RErr(failed(e)),
        }
    }
    fn take_messages(&self, subscription: u64) -> RVec<RVec<u8>> {
        match self.subscriptions.lock().unwrap().get(&subscription) {
            Some(sub) => sub.take().into_iter().map(|m| RVec::from(m.payload)).collect(),
            None => RVec::new(),
        }
    }
    fn offer_service(&self, name: RStr<'_>, req_type: RStr<'_>, rep_type: RStr<'_>) -> RResult<u64, SystemError> {
        match self.node.offer_queued(name.as_str(), req_type.as_str(), rep_type.as_str()) {
            Ok(queue) => {
                let id = self.node.fresh_id();
                self.services.lock().unwrap().insert(id, (name.as_str().to_string(), queue));
                ROk(id)
            }
            Err(e) => RErr(failed(e)),
        }
    }
    fn take_requests(&self, service: u64) -> RVec<ServiceRequest> {
        match self.services.lock().unwrap().get(&service) {
            Some((_, queue)) => {
                self.node.take_requests(queue).into_iter().map(|(id, payload)| ServiceRequest { id, payload: RVec::from(payload) }).collect()
            }
            None => RVec::new(),
        }
    }
    fn reply(&self, request: u64, ok: bool, payload: RSlice<'_, u8>) -> bool {
        let bytes = payload.as_slice().to_vec();
        self.node.reply(request, if ok { Answer::Ok(bytes) } else { Answer::Failed(bytes) })
    }
    fn call_service(&self, name: RStr<'_>, payload: RSlice<'_, u8>, timeout_ms: u64) -> RResult<ServiceReply, SystemError> {
        match self.node.call(name.as_str(), payload.as_slice(), Duration::from_millis(timeout_ms)) {
            Ok(Answer::Ok(b)) => ROk(ServiceReply { ok: true, payload: RVec::from(b) }),
            Ok(Answer::Failed(b)) => ROk(ServiceReply { ok: false, payload: RVec::from(b) }),
            Ok(Answer::Error(text)) => RErr(SystemError { kind: ErrorKind::FAILED, message: RString::from(format!("service {name}: {text}")) }),
            Err(e) => RErr(failed(e)),
        }
    }
}
