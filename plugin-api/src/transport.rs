//! Topics and services for systems, typed by gz-msgs message (plugin-api 1.3).
//!
//! The host owns the sockets; a system advertises, publishes, subscribes and offers
//! services through [`Host`]. Received messages and requests wait in the host until the
//! system takes them, which it does in its own hooks, on the simulation thread: nothing a
//! network peer sends runs in a system outside a step.
//!
//! ```no_run
//! use troupe_plugin_api::msgs::{Boolean, StringMsg};
//! use troupe_plugin_api::{Host, TopicOptions};
//!
//! fn configure(host: &Host) -> troupe_plugin_api::Result<()> {
//!     let news = host.advertise::<StringMsg>("/world/w/news", TopicOptions::default())?;
//!     news.publish(&StringMsg { data: "hello".into(), ..Default::default() })?;
//!     let toggles = host.offer_service::<Boolean, Boolean>("/world/w/toggle")?;
//!     for request in toggles.take() {
//!         let ok = request.message.data;
//!         toggles.reply(&request, ok, &Boolean { data: ok, ..Default::default() });
//!     }
//!     Ok(())
//! }
//! ```

use crate::ffi::{ServiceRequest, TopicOptions};
use crate::host::Host;
use crate::system::{Error, Result};
use abi_stable::std_types::{RSlice, RStr};
use prost::{Message, Name};
use std::marker::PhantomData;
use std::time::Duration;

fn err(e: crate::ffi::SystemError) -> Error {
    Error(e.message.into_string())
}

/// A topic a system publishes on.
pub struct Publisher<M> {
    host: Host,
    id: u64,
    topic: String,
    _m: PhantomData<fn(M)>,
}

impl<M: Message + Name> Publisher<M> {
    /// Publishes a message; never blocks. Answers false when the rate limit skipped it.
    pub fn publish(&self, msg: &M) -> Result<bool> {
        self.publish_encoded(&msg.encode_to_vec())
    }
    /// Publishes an already encoded message.
    pub fn publish_encoded(&self, bytes: &[u8]) -> Result<bool> {
        self.host.ffi().publish(self.id, RSlice::from_slice(bytes)).into_result().map_err(err)
    }
    /// Whether anyone listens (skip building costly messages when nobody does).
    pub fn has_subscribers(&self) -> bool {
        self.host.ffi().has_subscribers(self.id)
    }
    /// The topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }
}

/// A topic a system listens to.
pub struct Subscriber<M> {
    host: Host,
    id: u64,
    topic: String,
    _m: PhantomData<fn() -> M>,
}

impl<M: Message + Default + Name> Subscriber<M> {
    /// The messages received since the last call, oldest first. One that does not decode
    /// as `M` is skipped with a warning naming the topic.
    pub fn take(&self) -> Vec<M> {
        let raw = self.host.ffi().take_messages(self.id);
        raw.into_iter()
            .filter_map(|bytes| match M::decode(bytes.as_slice()) {
                Ok(m) => Some(m),
                Err(e) => {
                    log::warn!(
                        "topic {}: a message that is not a valid {} was skipped: {e}",
                        self.topic,
                        M::full_name()
                    );
                    None
                }
            })
            .collect()
    }
    /// The topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }
}

/// A request to a system's service.
pub struct Request<Req> {
    id: u64,
    /// The decoded request.
    pub message: Req,
}

/// A service a system offers.
pub struct ServiceServer<Req, Rep> {
    host: Host,
    id: u64,
    name: String,
    _m: PhantomData<fn(Req) -> Rep>,
}

impl<Req: Message + Default + Name, Rep: Message + Name> ServiceServer<Req, Rep> {
    /// The requests waiting for an answer. One that does not decode as `Req` is answered
    /// false at once and logged.
    pub fn take(&self) -> Vec<Request<Req>> {
        let raw = self.host.ffi().take_requests(self.id);
        raw.into_iter().filter_map(|r: ServiceRequest| self.decode(r)).collect()
    }

    fn decode(&self, r: ServiceRequest) -> Option<Request<Req>> {
        match Req::decode(r.payload.as_slice()) {
            Ok(message) => Some(Request { id: r.id, message }),
            Err(e) => {
                log::warn!(
                    "service {}: a request that is not a valid {} was answered false: {e}",
                    self.name,
                    Req::full_name()
                );
                self.host.ffi().reply(r.id, false, RSlice::from_slice(&[]));
                None
            }
        }
    }

    /// Answers a request; false if it was answered already.
    pub fn reply(&self, request: &Request<Req>, ok: bool, response: &Rep) -> bool {
        self.host.ffi().reply(request.id, ok, RSlice::from_slice(&response.encode_to_vec()))
    }
    /// The service's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Host {
    /// Advertises a topic of messages `M`.
    pub fn advertise<M: Message + Name>(&self, topic: &str, options: TopicOptions) -> Result<Publisher<M>> {
        let id = self
            .ffi()
            .advertise(RStr::from_str(topic), RStr::from_str(&M::full_name()), options)
            .into_result()
            .map_err(err)?;
        Ok(Publisher { host: self.clone(), id, topic: topic.to_string(), _m: PhantomData })
    }

    /// Subscribes to a topic of messages `M`.
    pub fn subscribe_topic<M: Message + Default + Name>(&self, topic: &str) -> Result<Subscriber<M>> {
        let id = self
            .ffi()
            .subscribe_topic(RStr::from_str(topic), RStr::from_str(&M::full_name()))
            .into_result()
            .map_err(err)?;
        Ok(Subscriber { host: self.clone(), id, topic: topic.to_string(), _m: PhantomData })
    }

    /// Offers a service taking `Req` and answering `Rep`.
    pub fn offer_service<Req: Message + Default + Name, Rep: Message + Name>(
        &self,
        name: &str,
    ) -> Result<ServiceServer<Req, Rep>> {
        let id = self
            .ffi()
            .offer_service(RStr::from_str(name), RStr::from_str(&Req::full_name()), RStr::from_str(&Rep::full_name()))
            .into_result()
            .map_err(err)?;
        Ok(ServiceServer { host: self.clone(), id, name: name.to_string(), _m: PhantomData })
    }

    /// Calls a service and waits up to `timeout` for its answer: whether it answered true,
    /// and its response.
    pub fn call<Req: Message, Rep: Message + Default>(
        &self,
        name: &str,
        request: &Req,
        timeout: Duration,
    ) -> Result<(bool, Rep)> {
        let reply = self
            .ffi()
            .call_service(
                RStr::from_str(name),
                RSlice::from_slice(&request.encode_to_vec()),
                timeout.as_millis() as u64,
            )
            .into_result()
            .map_err(err)?;
        let rep = Rep::decode(reply.payload.as_slice())
            .map_err(|e| Error(format!("service {name}: the response does not decode: {e}")))?;
        Ok((reply.ok, rep))
    }
}
