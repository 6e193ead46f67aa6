//! Topics and services over nng, gz-transport style.
//!
//! A [`Node`] is this process's end of the transport: it publishes on topics, subscribes
//! to them, offers services and calls them. Inside one process messages and requests go
//! straight from publisher to subscriber; between processes they travel over nng (PUB/SUB
//! for topics, REQ/REP for services) in the framing of [`wire`], and processes of one
//! partition find each other through the [`registry`] directory. Nothing here runs on the
//! simulation thread or blocks it: publishing hands the message to nng (which drops it
//! rather than wait when a subscriber is slow), and requests for a system's services wait
//! in a queue the system drains at a step boundary.

mod net;
mod peers;
pub mod registry;
pub mod text;
pub mod wire;
pub mod world;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub use peers::peers_from_env;
pub use wire::Answer;

/// What went wrong in the transport.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// A topic or service name that gz-style naming does not allow.
    #[error("{kind} name {name:?} is not valid: {why}")]
    BadName {
        /// "topic" or "service".
        kind: &'static str,
        /// The name.
        name: String,
        /// Why not.
        why: &'static str,
    },
    /// Another node, or this one, already offers the service.
    #[error("service {0:?} is already offered in this partition")]
    ServiceTaken(String),
    /// No node offers the service.
    #[error("no node of partition {partition:?} offers service {service:?}")]
    NoSuchService {
        /// The service.
        service: String,
        /// The partition searched.
        partition: String,
    },
    /// A publisher id this node never gave out.
    #[error("unknown publisher id {0}")]
    UnknownPublisher(u64),
    /// The service did not answer in time.
    #[error("service {service:?} did not answer within {timeout:?}")]
    Timeout {
        /// The service.
        service: String,
        /// How long the caller waited.
        timeout: Duration,
    },
    /// nng refused an operation.
    #[error("{what}: {source}")]
    Nng {
        /// What was being done.
        what: String,
        /// nng's error.
        source: nng::Error,
    },
    /// The rendezvous directory could not be written.
    #[error("rendezvous directory {dir}: {source}")]
    Rendezvous {
        /// The directory.
        dir: std::path::PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A world of this name already runs in the partition (gz-sim refuses it too).
    #[error("another world named {world:?} is running in partition {partition:?} (set TROUPE_PARTITION or GZ_PARTITION to run apart)")]
    WorldTaken {
        /// The world.
        world: String,
        /// The partition.
        partition: String,
    },
    /// A transport thread could not be started.
    #[error("cannot start the transport's {what} thread: {source}")]
    Thread {
        /// Which thread.
        what: &'static str,
        /// The error.
        source: std::io::Error,
    },
    /// A reply that does not follow the framing.
    #[error("service {service:?}: {source}")]
    Malformed {
        /// The service.
        service: String,
        /// What was wrong.
        source: wire::MalformedFrame,
    },
}

/// Checks a topic or service name: it starts with '/', and holds no whitespace, NUL,
/// '@', ':', '=' or "//" (the characters gz-transport also refuses).
pub fn check_name(kind: &'static str, name: &str) -> Result<(), TransportError> {
    let why = if !name.starts_with('/') {
        Some("it must start with '/'")
    } else if name.len() == 1 {
        Some("it is empty")
    } else if name.contains("//") {
        Some("it contains \"//\"")
    } else if name.chars().any(|c| c.is_whitespace() || matches!(c, '\0' | '@' | ':' | '=')) {
        Some("it contains whitespace, NUL, '@', ':' or '='")
    } else if name.ends_with('/') {
        Some("it ends with '/'")
    } else {
        None
    };
    match why {
        Some(why) => Err(TransportError::BadName { kind, name: name.to_string(), why }),
        None => Ok(()),
    }
}

/// How a topic is published: the type systems give across the ABI, used as it is.
pub use plugin_api::TopicOptions;

/// A message as a subscriber receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    /// The topic.
    pub topic: String,
    /// Its type.
    pub msg_type: String,
    /// The publishing node.
    pub sender: String,
    /// The sender's sequence number on this topic.
    pub seq: u64,
    /// How many of the sender's messages on this topic were missed just before this one.
    pub missed: u64,
    /// The encoded message.
    pub payload: Vec<u8>,
}

struct Publisher {
    topic: String,
    msg_type: String,
    options: TopicOptions,
    seq: u64,
    last_sent: Option<Instant>,
}

/// A subscription's queue, filled by the transport and drained by its owner.
pub struct SubQueue {
    id: u64,
    msg_type: String,
    queue: Mutex<VecDeque<Received>>,
    ready: Condvar,
    last_seq: Mutex<HashMap<String, u64>>,
    missed: AtomicU64,
}

impl SubQueue {
    fn push(&self, topic: &str, msg_type: &str, sender: &str, seq: u64, payload: &[u8]) {
        if !self.msg_type.is_empty() && self.msg_type != msg_type {
            log::debug!("topic {topic:?}: a {msg_type} message skipped by a subscriber of {}", self.msg_type);
            return;
        }
        let missed = {
            let mut last = self.last_seq.lock().unwrap();
            let prev = last.insert(sender.to_string(), seq);
            match prev {
                // Saturating: a peer may send any number, 2^64 - 1 included.
                Some(p) if seq > p.saturating_add(1) => seq - p - 1,
                _ => 0,
            }
        };
        self.missed.fetch_add(missed, Ordering::Relaxed);
        let msg = Received {
            topic: topic.to_string(),
            msg_type: msg_type.to_string(),
            sender: sender.to_string(),
            seq,
            missed,
            payload: payload.to_vec(),
        };
        self.queue.lock().unwrap().push_back(msg);
        self.ready.notify_all();
    }
}

/// A subscription to a topic; messages queue until taken. Dropping it does not
/// unsubscribe (use [`Node::unsubscribe`]).
#[derive(Clone)]
pub struct Subscription(Arc<SubQueue>);

impl Subscription {
    /// Its id.
    pub fn id(&self) -> u64 {
        self.0.id
    }
    /// Every message received since the last call.
    pub fn take(&self) -> Vec<Received> {
        self.0.queue.lock().unwrap().drain(..).collect()
    }
    /// Whether a message waits to be taken.
    pub fn has_pending(&self) -> bool {
        !self.0.queue.lock().unwrap().is_empty()
    }
    /// Waits up to `timeout` for the next message.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Received> {
        let deadline = Instant::now() + timeout;
        let mut q = self.0.queue.lock().unwrap();
        loop {
            if let Some(m) = q.pop_front() {
                return Some(m);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            q = self.0.ready.wait_timeout(q, deadline - now).unwrap().0;
        }
    }
    /// Messages missed so far (gaps in senders' sequence numbers).
    pub fn missed(&self) -> u64 {
        self.0.missed.load(Ordering::Relaxed)
    }
}

/// A service handler that runs on the transport's thread and answers at once. Only for
/// services that change nothing in the simulation, or that queue their change.
pub type DirectHandler = Arc<dyn Fn(&[u8]) -> Answer + Send + Sync>;

/// Requests of a service that a system answers on the simulation thread.
pub type RequestQueue = Arc<Mutex<VecDeque<(u64, Vec<u8>)>>>;

enum Handler {
    Direct(DirectHandler),
    Queued(RequestQueue),
}

struct Service {
    req_type: String,
    rep_type: String,
    handler: Handler,
}

type Responder = Box<dyn FnOnce(Answer) + Send>;

/// How long a request may wait for a system's answer before the caller is told it was not
/// answered (gz-sim's blocking services wait 5 s; callers choose their own timeout, this
/// only frees the request's slot).
const UNANSWERED_AFTER: Duration = Duration::from_secs(60);

struct Pending {
    service: String,
    since: Instant,
    respond: Responder,
}

#[derive(Default)]
struct State {
    publishers: HashMap<u64, Publisher>,
    subscribers: HashMap<String, Vec<Arc<SubQueue>>>,
    services: HashMap<String, Service>,
}

struct Inner {
    id: String,
    partition: String,
    state: Mutex<State>,
    pending: Mutex<HashMap<u64, Pending>>,
    next_id: AtomicU64,
    net: Option<net::Net>,
    /// Subscriptions in this process, so that `has_subscribers` costs two atomic loads
    /// when nobody listens at all (the common case of a world's clock and stats).
    local_subscriptions: std::sync::atomic::AtomicUsize,
    /// Advertisements made so far (see [`Node::advertisements`]).
    advertisements: AtomicU64,
}

/// This process's end of the transport. Cheap to clone.
#[derive(Clone)]
pub struct Node {
    inner: Arc<Inner>,
}

impl Inner {
    fn new(id: String, partition: String, net: Option<net::Net>) -> Inner {
        Inner {
            id,
            partition,
            state: Mutex::new(State::default()),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            advertisements: AtomicU64::new(0),
            net,
            local_subscriptions: std::sync::atomic::AtomicUsize::new(0),
        }
    }
}

static NODES: AtomicU64 = AtomicU64::new(1);

/// Where a node's sockets listen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Bind {
    /// IPC sockets in the rendezvous directory (the default; this machine only).
    #[default]
    Ipc,
    /// TCP on a host address (`127.0.0.1`, an interface's address to be reachable from
    /// other machines, or `0.0.0.0` for all of them). The service socket listens on
    /// `port` (0: the system picks one), the address other machines are given; the
    /// publisher's port is always picked by the system and learned through discovery.
    Tcp {
        /// The address to listen on.
        host: String,
        /// The service socket's port.
        port: u16,
    },
}

impl Node {
    /// A node without sockets: publishers and subscribers, services and callers of this
    /// process still meet (tests, and runs with transport off).
    pub fn local() -> Node {
        let id = format!("{}-{}", std::process::id(), NODES.fetch_add(1, Ordering::Relaxed));
        Node { inner: Arc::new(Inner::new(id, String::new(), None)) }
    }

    /// A node of `partition`, listening as `bind` says and listed in the partition's
    /// rendezvous directory.
    pub fn open(partition: &str, bind: &Bind) -> Result<Node, TransportError> {
        Node::open_with_peers(partition, bind, Vec::new())
    }

    /// A node of `partition` that also meets the nodes on other machines whose service
    /// addresses `peers` lists (`tcp://host:port`, see [`crate::config::peer_url`]).
    pub fn open_with_peers(partition: &str, bind: &Bind, peers: Vec<String>) -> Result<Node, TransportError> {
        let id = format!("{}-{}", std::process::id(), NODES.fetch_add(1, Ordering::Relaxed));
        let net = net::Net::open(&id, &registry::rendezvous_dir(partition), bind, peers)?;
        let inner = Arc::new(Inner::new(id, partition.to_string(), Some(net)));
        if let Some(net) = &inner.net {
            net.start(Arc::downgrade(&inner))?;
        }
        Ok(Node { inner })
    }

    /// Ends a short-lived process's node: takes it out of the rendezvous directory and
    /// leaves its sockets to the process's exit: a command-line tool that has printed its
    /// answer does not wait for nng to tear its connections down.
    pub fn close_for_exit(self) {
        if let Some(net) = &self.inner.net {
            net.unlist();
        }
        std::mem::forget(self);
    }

    /// This node's id (`<pid>-<n>`).
    pub fn id(&self) -> &str {
        &self.inner.id
    }
    /// Its partition ("" for a local node).
    pub fn partition(&self) -> &str {
        &self.inner.partition
    }
    fn next_id(&self) -> u64 {
        self.inner.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A number this node has not handed out before (for ids of callers' own).
    pub fn fresh_id(&self) -> u64 {
        self.next_id()
    }

    /// Advertises a topic of type `msg_type`; answers a publisher id.
    pub fn advertise(&self, topic: &str, msg_type: &str, options: TopicOptions) -> Result<u64, TransportError> {
        check_name("topic", topic)?;
        let id = self.next_id();
        let publisher =
            Publisher { topic: topic.to_string(), msg_type: msg_type.to_string(), options, seq: 0, last_sent: None };
        self.inner.state.lock().unwrap().publishers.insert(id, publisher);
        self.inner.advertisements.fetch_add(1, Ordering::Relaxed);
        if let Some(net) = &self.inner.net {
            net.list(|e| {
                e.topics.insert((topic.to_string(), msg_type.to_string()));
            })?;
        }
        Ok(id)
    }

    /// Publishes an encoded message. Never blocks; answers whether it went out (false when
    /// the publisher's rate limit skipped it).
    pub fn publish(&self, publisher: u64, payload: &[u8]) -> Result<bool, TransportError> {
        let (topic, msg_type, seq, locals) = {
            let mut state = self.inner.state.lock().unwrap();
            let p = state.publishers.get_mut(&publisher).ok_or(TransportError::UnknownPublisher(publisher))?;
            let now = Instant::now();
            if p.options.max_rate_hz > 0.0 {
                if let Some(last) = p.last_sent {
                    if now.duration_since(last).as_secs_f64() < 1.0 / p.options.max_rate_hz {
                        return Ok(false);
                    }
                }
            }
            p.last_sent = Some(now);
            p.seq += 1;
            let (topic, msg_type, seq) = (p.topic.clone(), p.msg_type.clone(), p.seq);
            let locals = state.subscribers.get(&topic).cloned().unwrap_or_default();
            (topic, msg_type, seq, locals)
        };
        for q in &locals {
            q.push(&topic, &msg_type, &self.inner.id, seq, payload);
        }
        if let Some(net) = &self.inner.net {
            let frame = wire::TopicFrame { topic: &topic, msg_type: &msg_type, sender: &self.inner.id, seq, payload };
            net.publish(&frame.encode());
        }
        Ok(true)
    }

    /// Whether anyone listens: a subscriber in this process, or another node connected to
    /// this one that lists the topic among its subscriptions (noticed within about 100 ms).
    pub fn has_subscribers(&self, publisher: u64) -> bool {
        let remote = self.inner.net.as_ref().is_some_and(|n| n.has_remote_subscribers());
        if !remote && self.inner.local_subscriptions.load(Ordering::Relaxed) == 0 {
            return false;
        }
        let state = self.inner.state.lock().unwrap();
        let Some(p) = state.publishers.get(&publisher) else { return false };
        state.subscribers.get(&p.topic).is_some_and(|v| !v.is_empty())
            || self.inner.net.as_ref().is_some_and(|n| n.is_wanted(&p.topic))
    }

    /// Whether anything subscribes to anything: false means [`Node::has_subscribers`] is
    /// false for every publisher (two atomic loads).
    #[inline]
    pub fn may_have_subscribers(&self) -> bool {
        self.inner.local_subscriptions.load(Ordering::Relaxed) > 0
            || self.inner.net.as_ref().is_some_and(|n| n.has_remote_subscribers())
    }

    /// Configured peers that did not answer this node's last greeting: (address, why).
    pub fn silent_peers(&self) -> Vec<(String, String)> {
        self.inner.net.as_ref().map(|n| n.silent_peers()).unwrap_or_default()
    }

    /// Where this node serves its services: the address to give nodes on other machines
    /// as a peer (`None` without a network).
    pub fn service_addr(&self) -> Option<String> {
        self.inner.net.as_ref().map(|n| n.service_addr())
    }

    /// Subscribes to a topic (`msg_type` "" takes messages of any type). Messages of
    /// other processes arrive once the node has found their publishers (within about
    /// 100 ms of either side starting).
    pub fn subscribe(&self, topic: &str, msg_type: &str) -> Result<Subscription, TransportError> {
        check_name("topic", topic)?;
        let q = Arc::new(SubQueue {
            id: self.next_id(),
            msg_type: msg_type.to_string(),
            queue: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            last_seq: Mutex::new(HashMap::new()),
            missed: AtomicU64::new(0),
        });
        self.inner.state.lock().unwrap().subscribers.entry(topic.to_string()).or_default().push(q.clone());
        self.inner.local_subscriptions.fetch_add(1, Ordering::Relaxed);
        if let Some(net) = &self.inner.net {
            net.subscribe(topic)?;
        }
        Ok(Subscription(q))
    }

    /// Stops publishing through `publisher`; the topic stays listed while another
    /// publisher of this node uses it.
    pub fn unadvertise(&self, publisher: u64) {
        let (topic, still) = {
            let mut state = self.inner.state.lock().unwrap();
            let Some(p) = state.publishers.remove(&publisher) else { return };
            let still = state.publishers.values().any(|q| q.topic == p.topic && q.msg_type == p.msg_type);
            ((p.topic, p.msg_type), still)
        };
        if let (false, Some(net)) = (still, &self.inner.net) {
            if let Err(e) = net.list(|e| {
                e.topics.remove(&topic);
            }) {
                log::warn!("transport: {e}");
            }
        }
    }

    /// Withdraws a service; its unanswered requests are answered with an error.
    pub fn withdraw(&self, name: &str) {
        let Some(service) = self.inner.state.lock().unwrap().services.remove(name) else { return };
        let orphans: Vec<Pending> = {
            let mut pending = self.inner.pending.lock().unwrap();
            let ids: Vec<u64> = pending.iter().filter(|(_, p)| p.service == name).map(|(id, _)| *id).collect();
            ids.into_iter().filter_map(|id| pending.remove(&id)).collect()
        };
        for p in orphans {
            (p.respond)(Answer::Error(format!("service {name:?} was withdrawn before it answered")));
        }
        if let Some(net) = &self.inner.net {
            let listed = (name.to_string(), service.req_type, service.rep_type);
            if let Err(e) = net.list(|e| {
                e.services.remove(&listed);
            }) {
                log::warn!("transport: {e}");
            }
        }
    }

    /// Answers, with an error, requests that waited longer than any caller would.
    fn expire_pending(&self) {
        let expired: Vec<Pending> = {
            let mut pending = self.inner.pending.lock().unwrap();
            let ids: Vec<u64> =
                pending.iter().filter(|(_, p)| p.since.elapsed() > UNANSWERED_AFTER).map(|(id, _)| *id).collect();
            ids.into_iter().filter_map(|id| pending.remove(&id)).collect()
        };
        for p in expired {
            (p.respond)(Answer::Error(format!("service {:?} did not answer within {UNANSWERED_AFTER:?}", p.service)));
        }
    }

    /// Ends a subscription.
    pub fn unsubscribe(&self, subscription: u64) -> bool {
        let (mut found, mut emptied) = (false, Vec::new());
        {
            let mut state = self.inner.state.lock().unwrap();
            for (topic, queues) in state.subscribers.iter_mut() {
                let before = queues.len();
                queues.retain(|q| q.id != subscription);
                if queues.len() != before {
                    found = true;
                    if queues.is_empty() {
                        emptied.push(topic.clone());
                    }
                }
            }
            state.subscribers.retain(|_, queues| !queues.is_empty());
        }
        if found {
            self.inner.local_subscriptions.fetch_sub(1, Ordering::Relaxed);
        }
        if let (false, Some(net)) = (emptied.is_empty(), &self.inner.net) {
            if let Err(e) = net.list(|e| e.subscriptions.retain(|t| !emptied.contains(t))) {
                log::warn!("transport: {e}");
            }
        }
        found
    }

    fn offer(&self, name: &str, req_type: &str, rep_type: &str, handler: Handler) -> Result<(), TransportError> {
        check_name("service", name)?;
        {
            let mut state = self.inner.state.lock().unwrap();
            if state.services.contains_key(name) {
                return Err(TransportError::ServiceTaken(name.to_string()));
            }
            state.services.insert(
                name.to_string(),
                Service { req_type: req_type.to_string(), rep_type: rep_type.to_string(), handler },
            );
        }
        if let Some(net) = &self.inner.net {
            net.list(|e| {
                e.services.insert((name.to_string(), req_type.to_string(), rep_type.to_string()));
            })?;
        }
        Ok(())
    }

    /// Offers a service answered by `handler` on the transport's thread.
    pub fn offer_direct(
        &self,
        name: &str,
        req_type: &str,
        rep_type: &str,
        handler: DirectHandler,
    ) -> Result<(), TransportError> {
        self.offer(name, req_type, rep_type, Handler::Direct(handler))
    }

    /// Offers a service whose requests queue until [`Node::take_requests`]; each is
    /// answered with [`Node::reply`].
    pub fn offer_queued(&self, name: &str, req_type: &str, rep_type: &str) -> Result<RequestQueue, TransportError> {
        let queue = RequestQueue::default();
        self.offer(name, req_type, rep_type, Handler::Queued(queue.clone()))?;
        Ok(queue)
    }

    /// Takes a queued service's pending requests: (request id, request bytes).
    pub fn take_requests(&self, queue: &RequestQueue) -> Vec<(u64, Vec<u8>)> {
        queue.lock().unwrap().drain(..).collect()
    }

    /// Answers a queued request; false if it was already answered or is unknown.
    pub fn reply(&self, request: u64, answer: Answer) -> bool {
        let pending = self.inner.pending.lock().unwrap().remove(&request);
        match pending {
            Some(p) => {
                (p.respond)(answer);
                true
            }
            None => false,
        }
    }

    /// Routes a request to the service this node offers, answering through `respond`.
    fn dispatch(&self, name: &str, payload: &[u8], respond: Responder) {
        let handler = {
            let state = self.inner.state.lock().unwrap();
            state.services.get(name).map(|s| match &s.handler {
                Handler::Direct(h) => Handler::Direct(h.clone()),
                Handler::Queued(q) => Handler::Queued(q.clone()),
            })
        };
        match handler {
            None => respond(Answer::Error(format!("node {} offers no service {name:?}", self.inner.id))),
            Some(Handler::Direct(h)) => respond(h(payload)),
            Some(Handler::Queued(q)) => {
                let id = self.next_id();
                let pending = Pending { service: name.to_string(), since: Instant::now(), respond };
                self.inner.pending.lock().unwrap().insert(id, pending);
                q.lock().unwrap().push_back((id, payload.to_vec()));
            }
        }
    }

    /// Calls a service of this process or of any node of the partition, waiting at most
    /// `timeout` for the answer.
    pub fn call(&self, service: &str, payload: &[u8], timeout: Duration) -> Result<Answer, TransportError> {
        check_name("service", service)?;
        let local = self.inner.state.lock().unwrap().services.contains_key(service);
        if local {
            let (tx, rx) = std::sync::mpsc::channel();
            self.dispatch(
                service,
                payload,
                Box::new(move |a| {
                    let _ = tx.send(a);
                }),
            );
            return rx
                .recv_timeout(timeout)
                .map_err(|_| TransportError::Timeout { service: service.to_string(), timeout });
        }
        let Some(net) = &self.inner.net else {
            return Err(TransportError::NoSuchService {
                service: service.to_string(),
                partition: self.inner.partition.clone(),
            });
        };
        let addr = net.find_service(service).ok_or_else(|| TransportError::NoSuchService {
            service: service.to_string(),
            partition: self.inner.partition.clone(),
        })?;
        net::call(&addr, service, payload, timeout)
    }

    /// Every node of the partition other than this one, from the rendezvous directory.
    pub fn peers(&self) -> Vec<registry::Entry> {
        match &self.inner.net {
            Some(n) => n.peers(),
            None => Vec::new(),
        }
    }

    /// How many advertisements this node has made (it only grows): while it stays the same,
    /// [`Node::own_topics`] has gained nothing.
    pub fn advertisements(&self) -> u64 {
        self.inner.advertisements.load(Ordering::Relaxed)
    }

    /// The topics this node's publishers advertise: (name, type).
    pub fn own_topics(&self) -> Vec<(String, String)> {
        let state = self.inner.state.lock().unwrap();
        let mut all: Vec<(String, String)> =
            state.publishers.values().map(|p| (p.topic.clone(), p.msg_type.clone())).collect();
        all.sort();
        all.dedup();
        all
    }

    /// Topics known in the partition: (name, type), this node's own included.
    pub fn topics(&self) -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = {
            let state = self.inner.state.lock().unwrap();
            state.publishers.values().map(|p| (p.topic.clone(), p.msg_type.clone())).collect()
        };
        for e in self.peers() {
            all.extend(e.topics);
        }
        all.sort();
        all.dedup();
        all
    }

    /// Services known in the partition: (name, request type, response type).
    pub fn services(&self) -> Vec<(String, String, String)> {
        let mut all: Vec<(String, String, String)> = {
            let state = self.inner.state.lock().unwrap();
            state.services.iter().map(|(n, s)| (n.clone(), s.req_type.clone(), s.rep_type.clone())).collect()
        };
        for e in self.peers() {
            all.extend(e.services);
        }
        all.sort();
        all.dedup();
        all
    }

    /// Delivers a message that arrived from another process to this node's subscribers.
    fn deliver(&self, frame: &wire::TopicFrame<'_>) {
        let locals = self.inner.state.lock().unwrap().subscribers.get(frame.topic).cloned().unwrap_or_default();
        for q in &locals {
            q.push(frame.topic, frame.msg_type, frame.sender, frame.seq, frame.payload);
        }
    }

    /// Topics this node subscribes to (for discovery).
    fn subscribed_topics(&self) -> Vec<String> {
        let state = self.inner.state.lock().unwrap();
        state.subscribers.iter().filter(|(_, v)| !v.is_empty()).map(|(t, _)| t.clone()).collect()
    }
}

#[cfg(test)]
mod tests;
