//! The host services object each system holds: world facts, events, and the transport.

use super::event_bus::{EventBus, Ownership};
use crate::transport::{Answer, Node, RequestQueue, Subscription, TransportError};
use abi_stable::std_types::{RBox, RErr, ROk, RResult, RSlice, RSliceMut, RStr, RString, RVec};
use plugin_api::ffi::{
    ErrorKind, EventHandler_TO, HostServices, NetworkRole, Ray, RayCaster_TO, ServiceReply, ServiceRequest,
    SystemError, TopicOptions,
};
use plugin_api::EntityId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::Duration;

type Handler = EventHandler_TO<'static, RBox<()>>;
type Caster = RayCaster_TO<'static, RBox<()>>;

/// A world's ray-cast service (plugin-api 1.5): at most one caster, offered by one system
/// (a physics backend) and withdrawn when that system goes.
#[derive(Default)]
pub struct RayCasterSlot {
    offered: Mutex<Option<Offered>>,
    next_token: AtomicU64,
}

struct Offered {
    owner: u64,
    label: String,
    token: u64,
    caster: Caster,
}

impl RayCasterSlot {
    /// Installs `caster` for system `owner` (`label` names it in errors); answers a token
    /// to withdraw it with, or an error naming the system holding the slot already.
    fn offer(&self, owner: u64, label: &str, caster: Caster) -> Result<u64, String> {
        let mut slot = self.offered.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(o) = slot.as_ref() {
            return Err(format!(
                "this world has a ray caster already, offered by system {}; a world has at most one",
                o.label
            ));
        }
        let token = self.next_token.fetch_add(1, Ordering::Relaxed) + 1;
        *slot = Some(Offered { owner, label: label.to_string(), token, caster });
        Ok(token)
    }

    fn withdraw_where(&self, pred: impl Fn(&Offered) -> bool) -> bool {
        let gone = {
            let mut slot = self.offered.lock().unwrap_or_else(|p| p.into_inner());
            if slot.as_ref().is_some_and(pred) {
                slot.take()
            } else {
                None
            }
        };
        // Dropped outside the lock: the caster's drop runs plugin code.
        gone.is_some()
    }

    /// Withdraws the caster of system `owner`, if it holds the slot.
    pub fn withdraw_owner(&self, owner: u64) -> bool {
        self.withdraw_where(|o| o.owner == owner)
    }

    /// The system holding the slot, if any.
    pub fn owner(&self) -> Option<u64> {
        self.offered.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|o| o.owner)
    }

    /// Casts through the caster; false if there is none, it is in use (a cast from within
    /// a cast) or `out` is not as long as `rays`.
    pub fn cast(&self, rays: &[Ray], max_range: f64, exclude: EntityId, out: &mut [f64]) -> bool {
        if rays.len() != out.len() {
            return false;
        }
        let mut slot = match self.offered.try_lock() {
            Ok(s) => s,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return false,
        };
        match slot.as_mut() {
            Some(o) => o.caster.cast_rays(RSlice::from_slice(rays), max_range, exclude, RSliceMut::from_mut_slice(out)),
            None => false,
        }
    }
}

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
    casters: Arc<RayCasterSlot>,
    label: String,
    /// The token of the caster this system offered, if it did.
    offered_caster: Mutex<Option<u64>>,
}

impl SystemHost {
    /// Host services for system `owner` of world `world`.
    pub fn new(
        world: &str,
        bus: Arc<EventBus>,
        role: NetworkRole,
        ownership: Arc<dyn Ownership>,
        seed: u64,
        owner: u64,
        node: Node,
    ) -> SystemHost {
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
            casters: Arc::default(),
            label: format!("#{owner}"),
            offered_caster: Mutex::default(),
        }
    }

    /// Shares the world's ray-cast slot; `label` names this system in errors.
    pub fn with_ray_casts(mut self, casters: Arc<RayCasterSlot>, label: &str) -> SystemHost {
        self.casters = casters;
        self.label = label.to_string();
        self
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
        if let Some(token) = self.offered_caster.get_mut().unwrap().take() {
            self.casters.withdraw_where(|o| o.token == token);
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
            Some((_, queue)) => self
                .node
                .take_requests(queue)
                .into_iter()
                .map(|(id, payload)| ServiceRequest { id, payload: RVec::from(payload) })
                .collect(),
            None => RVec::new(),
        }
    }
    fn reply(&self, request: u64, ok: bool, payload: RSlice<'_, u8>) -> bool {
        let bytes = payload.as_slice().to_vec();
        self.node.reply(request, if ok { Answer::Ok(bytes) } else { Answer::Failed(bytes) })
    }
    fn call_service(
        &self,
        name: RStr<'_>,
        payload: RSlice<'_, u8>,
        timeout_ms: u64,
    ) -> RResult<ServiceReply, SystemError> {
        match self.node.call(name.as_str(), payload.as_slice(), Duration::from_millis(timeout_ms)) {
            Ok(Answer::Ok(b)) => ROk(ServiceReply { ok: true, payload: RVec::from(b) }),
            Ok(Answer::Failed(b)) => ROk(ServiceReply { ok: false, payload: RVec::from(b) }),
            Ok(Answer::Error(text)) => {
                RErr(SystemError { kind: ErrorKind::FAILED, message: RString::from(format!("service {name}: {text}")) })
            }
            Err(e) => RErr(failed(e)),
        }
    }

    fn offer_ray_caster(&self, caster: Caster) -> RResult<(), SystemError> {
        match self.casters.offer(self.owner, &self.label, caster) {
            Ok(token) => {
                *self.offered_caster.lock().unwrap() = Some(token);
                ROk(())
            }
            Err(message) => RErr(SystemError { kind: ErrorKind::FAILED, message: RString::from(message) }),
        }
    }
    fn cast_rays(&self, rays: RSlice<'_, Ray>, max_range: f64, exclude: EntityId, mut out: RSliceMut<'_, f64>) -> bool {
        self.casters.cast(rays.as_slice(), max_range, exclude, out.as_mut_slice())
    }
    fn has_pending(&self) -> bool {
        self.services.lock().unwrap().values().any(|(_, queue)| !queue.lock().unwrap().is_empty())
            || self.subscriptions.lock().unwrap().values().any(|sub| sub.has_pending())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::OwnsAll;
    use abi_stable::sabi_trait::TD_Opaque;
    use abi_stable::std_types::RArc;
    use plugin_api::math::Vec3;
    use plugin_api::{Host, RayCaster};

    /// Answers `origin.x + base` for every ray, or asks the host to cast from within a cast,
    /// or panics.
    struct Fake {
        base: f64,
        nested: Option<Host>,
        panic: bool,
    }

    impl RayCaster for Fake {
        fn cast_rays(&mut self, rays: &[Ray], max_range: f64, exclude: EntityId, out: &mut [f64]) -> bool {
            if self.panic {
                panic!("fake caster panicked");
            }
            if let Some(host) = &self.nested {
                let mut again = vec![0.0; rays.len()];
                assert!(!host.cast_rays(rays, max_range, exclude, &mut again), "a cast from within a cast is refused");
            }
            for (r, o) in rays.iter().zip(out.iter_mut()) {
                *o = if exclude == EntityId(9) { f64::INFINITY } else { (r.origin.x + self.base).min(max_range) };
            }
            true
        }
    }

    fn host(slot: &Arc<RayCasterSlot>, owner: u64, label: &str) -> Host {
        let h = SystemHost::new(
            "w",
            Arc::new(EventBus::default()),
            NetworkRole::STANDALONE,
            Arc::new(OwnsAll),
            0,
            owner,
            Node::local(),
        )
        .with_ray_casts(slot.clone(), label);
        Host::from_ffi(plugin_api::ffi::HostServices_TO::from_ptr(RArc::new(h), TD_Opaque))
    }

    fn rays(n: usize) -> Vec<Ray> {
        (0..n).map(|i| Ray { origin: Vec3::new(i as f64, 0.0, 0.0), direction: Vec3::new(1.0, 0.0, 0.0) }).collect()
    }

    #[test]
    fn a_world_has_one_ray_caster_until_its_system_goes() {
        let slot = Arc::new(RayCasterSlot::default());
        let physics = host(&slot, 1, "physics");
        let sensors = host(&slot, 2, "sensors");
        let mut out = vec![0.0; 3];
        assert!(!sensors.cast_rays(&rays(3), 10.0, EntityId::NULL, &mut out), "no caster yet");
        assert_eq!(out, [0.0; 3], "untouched without a caster");

        physics.offer_ray_caster(Fake { base: 1.0, nested: None, panic: false }).unwrap();
        assert_eq!(slot.owner(), Some(1));
        assert!(sensors.cast_rays(&rays(3), 10.0, EntityId::NULL, &mut out));
        assert_eq!(out, [1.0, 2.0, 3.0]);
        assert!(sensors.cast_rays(&rays(3), 10.0, EntityId(9), &mut out));
        assert!(out.iter().all(|d| d.is_infinite()), "the excluded link reaches the caster: {out:?}");
        assert!(!sensors.cast_rays(&rays(3), 10.0, EntityId::NULL, &mut [0.0; 2]), "out must be as long as rays");

        let second = sensors.offer_ray_caster(Fake { base: 5.0, nested: None, panic: false }).unwrap_err();
        assert!(second.0.contains("offered by system physics"), "{second}");
        assert_eq!(slot.owner(), Some(1), "the first caster stays");

        drop(physics);
        assert_eq!(slot.owner(), None, "withdrawn when its system lets go of the host");
        assert!(!sensors.cast_rays(&rays(3), 10.0, EntityId::NULL, &mut out));
        sensors.offer_ray_caster(Fake { base: 5.0, nested: None, panic: false }).unwrap();
        assert!(sensors.cast_rays(&rays(1), 10.0, EntityId::NULL, &mut out[..1]));
        assert_eq!(out[0], 5.0);
        assert!(slot.withdraw_owner(2) && !slot.withdraw_owner(2), "the runner withdraws by owner once");
    }

    #[test]
    fn a_panicking_or_reentrant_caster_answers_false_without_deadlock() {
        let slot = Arc::new(RayCasterSlot::default());
        let physics = host(&slot, 1, "physics");
        let sensors = host(&slot, 2, "sensors");
        physics.offer_ray_caster(Fake { base: 0.0, nested: Some(sensors.clone()), panic: false }).unwrap();
        let mut out = vec![0.0; 2];
        assert!(sensors.cast_rays(&rays(2), 10.0, EntityId::NULL, &mut out), "the outer cast answers");
        slot.withdraw_owner(1);
        physics.offer_ray_caster(Fake { base: 0.0, nested: None, panic: true }).unwrap();
        assert!(!sensors.cast_rays(&rays(2), 10.0, EntityId::NULL, &mut out), "a panic is caught and answered false");
        assert!(!sensors.cast_rays(&rays(2), 10.0, EntityId::NULL, &mut out), "and the slot still works after it");
    }

    /// What lets a system with many services skip taking from each when nothing waits.
    #[test]
    fn has_pending_sees_a_queued_request_or_message_until_taken() {
        use plugin_api::msgs::{Boolean, StringMsg};
        use plugin_api::prost::Message;
        let node = Node::local();
        let h = SystemHost::new(
            "w",
            Arc::new(EventBus::default()),
            NetworkRole::STANDALONE,
            Arc::new(OwnsAll),
            0,
            1,
            node.clone(),
        );
        let host = Host::from_ffi(plugin_api::ffi::HostServices_TO::from_ptr(RArc::new(h), TD_Opaque));
        let service = host.offer_service::<StringMsg, Boolean>("/w/ask").unwrap();
        let topic = host.subscribe_topic::<StringMsg>("/w/said").unwrap();
        assert!(!host.has_pending(), "nothing asked or said yet");

        let caller = node.clone();
        let call = std::thread::spawn(move || {
            caller.call("/w/ask", &StringMsg::default().encode_to_vec(), Duration::from_secs(60))
        });
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !host.has_pending() {
            assert!(std::time::Instant::now() < deadline, "the request never showed as pending");
            std::thread::sleep(Duration::from_millis(1));
        }
        let requests = service.take();
        assert_eq!(requests.len(), 1);
        assert!(!host.has_pending(), "taken");
        service.reply(&requests[0], true, &Boolean { data: true, ..Default::default() });
        assert!(matches!(call.join().unwrap(), Ok(crate::transport::Answer::Ok(_))));

        let publisher = node.advertise("/w/said", "gz.msgs.StringMsg", Default::default()).unwrap();
        node.publish(publisher, &StringMsg { data: "hi".into(), ..Default::default() }.encode_to_vec()).unwrap();
        assert!(host.has_pending(), "a message waits");
        assert_eq!(topic.take().len(), 1);
        assert!(!host.has_pending(), "taken");
    }
}
