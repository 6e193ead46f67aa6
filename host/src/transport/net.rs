//! The nng side of a [`Node`]: one PUB socket for every topic the node publishes, one REP
//! socket (with a pool of contexts, so a slow answer holds up no other caller) for its
//! services, one SUB socket dialled to every publisher of a topic it subscribes to, and
//! the node's file in the rendezvous directory.

use super::peers::{self, RemoteNodes};
use super::registry::{self, Entry, Registration};
use super::wire::{self, Answer, TopicFrame};
use super::{Bind, Inner, Node, TransportError};
use nng::options::protocol::pubsub::Subscribe;
use nng::options::protocol::reqrep::ResendTime;
use nng::options::{Options, RecvBufferSize, RecvTimeout, SendBufferSize, SendTimeout};
use nng::{Aio, AioResult, Context, Message, PipeEvent, Protocol, Socket};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Requests one node serves at the same time (each waits in its own nng context).
const CONTEXTS: usize = 32;
/// Messages nng buffers per socket before a publisher drops (measured: the default 0-8
/// loses most of a burst of 1000; 1024 loses none).
const BUFFER: i32 = 1024;
/// How often a subscribing node looks for new publishers.
const DISCOVERY_PERIOD: Duration = Duration::from_millis(100);

fn nng_err(what: impl Into<String>) -> impl FnOnce(nng::Error) -> TransportError {
    let what = what.into();
    move |source| TransportError::Nng { what, source }
}

pub(super) struct Net {
    id: String,
    dir: PathBuf,
    pub_sock: Socket,
    rep_sock: Socket,
    sub_sock: Socket,
    remote_subscribers: Arc<AtomicUsize>,
    registration: Mutex<Registration>,
    dialed: Mutex<HashSet<String>>,
    workers: Mutex<Vec<(Aio, Context)>>,
    /// Configured addresses of nodes on other machines (`tcp://host:port`).
    peer_urls: Vec<String>,
    /// What those nodes, and nodes that greeted this one, listed.
    remote: RemoteNodes,
    /// Topics some other node subscribes to, as last seen by discovery.
    wanted: Mutex<HashSet<String>>,
    /// Nodes that have subscribed to a topic this node publishes: each dialled this
    /// node's publisher once and stays connected while it lives, subscribed or not.
    dialed_by: Mutex<HashSet<String>>,
    /// How many of those still live: connections beyond that come from subscribers that
    /// list nothing (nngcat, another transport).
    known_subscribers: AtomicUsize,
    /// Configured peers that did not answer the last greeting, and why.
    silent: Mutex<Vec<(String, String)>>,
    /// When this node last handed a service reply to nng (see `Drop`).
    last_reply: Arc<Mutex<Option<Instant>>>,
}

/// How long a closing node lets its last service reply travel: nng hands a reply to the
/// connection and reports it sent before the bytes are out, and closing a TCP connection
/// with bytes unsent resets it (the caller of `/server_control` stop saw "Connection reset").
const REPLY_GRACE: Duration = Duration::from_millis(100);

fn listen(sock: &Socket, bind: &Bind, dir: &Path, id: &str, kind: &str) -> Result<String, TransportError> {
    let ipc = format!("ipc://{}/{id}.{kind}", dir.display());
    // A Unix socket path is limited to 107 bytes; a deep runtime directory falls back to TCP.
    let host = match bind {
        Bind::Ipc if ipc.len() <= 100 => {
            sock.listen(&ipc).map_err(nng_err(format!("listening on {ipc}")))?;
            return Ok(ipc);
        }
        Bind::Ipc => "127.0.0.1",
        Bind::Tcp { host, .. } => host.as_str(),
    };
    // Only the service socket takes a fixed port: it is the address other machines are given.
    let port = match bind {
        Bind::Tcp { port, .. } if kind == "rep" => *port,
        _ => 0,
    };
    let url = if host.contains(':') { format!("tcp://[{host}]:{port}") } else { format!("tcp://{host}:{port}") };
    let listener = nng::Listener::new(sock, &url).map_err(nng_err(format!("listening on {url}")))?;
    let local = listener.get_opt::<nng::options::LocalAddr>().map_err(nng_err(format!("reading the port of {url}")))?;
    // nng 1.0.1 hands the port over in network byte order, unconverted.
    match local {
        nng::SocketAddr::Inet(a) => {
            let ip = if a.ip().is_unspecified() { std::net::Ipv4Addr::LOCALHOST } else { *a.ip() };
            Ok(format!("tcp://{ip}:{}", u16::from_be(a.port())))
        }
        nng::SocketAddr::Inet6(a) => Ok(format!("tcp://[{}]:{}", a.ip(), u16::from_be(a.port()))),
        other => Ok(format!("{other}")),
    }
}

impl Net {
    pub(super) fn open(id: &str, dir: &Path, bind: &Bind, peer_urls: Vec<String>) -> Result<Net, TransportError> {
        super::registry::prepare_dir(dir)
            .map_err(|source| TransportError::Rendezvous { dir: dir.to_path_buf(), source })?;
        let pub_sock = Socket::new(Protocol::Pub0).map_err(nng_err("opening a publisher socket"))?;
        pub_sock.set_opt::<SendBufferSize>(BUFFER).map_err(nng_err("sizing the publisher's buffer"))?;
        let remote_subscribers = Arc::new(AtomicUsize::new(0));
        let count = remote_subscribers.clone();
        pub_sock
            .pipe_notify(move |_, event| match event {
                PipeEvent::AddPost => {
                    count.fetch_add(1, Ordering::Relaxed);
                }
                PipeEvent::RemovePost => {
                    count.fetch_sub(1, Ordering::Relaxed);
                }
                _ => {}
            })
            .map_err(nng_err("watching the publisher's connections"))?;
        let pub_addr = listen(&pub_sock, bind, dir, id, "pub")?;
        let rep_sock = Socket::new(Protocol::Rep0).map_err(nng_err("opening a service socket"))?;
        let rep_addr = listen(&rep_sock, bind, dir, id, "rep")?;
        let sub_sock = Socket::new(Protocol::Sub0).map_err(nng_err("opening a subscriber socket"))?;
        sub_sock.set_opt::<RecvBufferSize>(BUFFER).map_err(nng_err("sizing the subscriber's buffer"))?;
        let entry = Entry { node: id.to_string(), pid: std::process::id(), pub_addr, rep_addr, ..Entry::default() };
        let registration = Registration::create(dir, entry)
            .map_err(|source| TransportError::Rendezvous { dir: dir.to_path_buf(), source })?;
        Ok(Net {
            id: id.to_string(),
            dir: dir.to_path_buf(),
            pub_sock,
            rep_sock,
            sub_sock,
            remote_subscribers,
            registration: Mutex::new(registration),
            dialed: Mutex::new(HashSet::new()),
            workers: Mutex::new(Vec::new()),
            peer_urls,
            remote: RemoteNodes::default(),
            wanted: Mutex::new(HashSet::new()),
            dialed_by: Mutex::new(HashSet::new()),
            known_subscribers: AtomicUsize::new(0),
            silent: Mutex::new(Vec::new()),
            last_reply: Arc::new(Mutex::new(None)),
        })
    }

    /// Starts serving requests, receiving messages and looking for publishers.
    pub(super) fn start(&self, inner: Weak<Inner>) -> Result<(), TransportError> {
        let mut workers = self.workers.lock().unwrap();
        for _ in 0..CONTEXTS {
            let ctx = Context::new(&self.rep_sock).map_err(nng_err("opening a service context"))?;
            let c = ctx.clone();
            let weak = inner.clone();
            let aio = Aio::new(move |aio, result| serve(&weak, &c, aio, result))
                .map_err(nng_err("making a service worker"))?;
            ctx.recv(&aio).map_err(nng_err("waiting for requests"))?;
            workers.push((aio, ctx));
        }
        let sub = self.sub_sock.clone();
        let weak = inner.clone();
        std::thread::Builder::new()
            .name("troupe-sub".into())
            .spawn(move || receive(&sub, &weak))
            .map_err(|source| TransportError::Thread { what: "subscriber", source })?;
        let weak = inner.clone();
        std::thread::Builder::new()
            .name("troupe-discovery".into())
            .spawn(move || loop {
                std::thread::sleep(DISCOVERY_PERIOD);
                let Some(inner) = weak.upgrade() else { return };
                let node = Node { inner };
                node.expire_pending();
                if let Some(net) = &node.inner.net {
                    net.discover(&node.subscribed_topics());
                }
            })
            .map_err(|source| TransportError::Thread { what: "discovery", source })?;
        if !self.peer_urls.is_empty() {
            // The first round before anything else, so that a tool listing or calling right
            // away already sees the peers' topics and services.
            self.greet_peers();
            // Greeting waits on the network, so it has its own thread: a peer that does not
            // answer must not hold up discovery on this machine.
            let weak = inner;
            std::thread::Builder::new()
                .name("troupe-peers".into())
                .spawn(move || loop {
                    std::thread::sleep(peers::GREET_EVERY);
                    let Some(inner) = weak.upgrade() else { return };
                    if let Some(net) = &inner.net {
                        net.greet_peers();
                    }
                })
                .map_err(|source| TransportError::Thread { what: "peer greeting", source })?;
        }
        Ok(())
    }

    /// Exchanges listings with every configured peer; notes the ones that did not answer.
    fn greet_peers(&self) {
        let own = peers::hello_text(self.registration.lock().unwrap().entry());
        let mut silent = Vec::new();
        for url in &self.peer_urls {
            let why = match call(url, peers::HELLO, own.as_bytes(), peers::HELLO_TIMEOUT) {
                Ok(Answer::Ok(text)) => match Entry::parse("", &String::from_utf8_lossy(&text)) {
                    Some(mut e) => {
                        if let Some(host) = peers::url_host(url) {
                            peers::localize(&mut e, host);
                        }
                        if e.node != self.id {
                            self.remote.learn(e, Instant::now());
                        }
                        continue;
                    }
                    None => "it answered with a listing Troupe cannot read (not a Troupe node?)".to_string(),
                },
                Ok(Answer::Error(e)) => format!("it refused the greeting: {e}"),
                Ok(Answer::Failed(_)) => "it refused the greeting".to_string(),
                Err(e) => e.to_string(),
            };
            log::debug!("transport: peer {url} did not answer: {why}");
            silent.push((url.clone(), why));
        }
        *self.silent.lock().unwrap() = silent;
    }

    /// Configured peers that did not answer the last greeting: (address, why).
    pub(super) fn silent_peers(&self) -> Vec<(String, String)> {
        self.silent.lock().unwrap().clone()
    }

    /// Answers another machine's hello: records its listing and gives this node's.
    fn hello(&self, payload: &[u8], seen_from: Option<String>) -> Answer {
        let Some(mut e) = Entry::parse("", &String::from_utf8_lossy(payload)) else {
            return Answer::Error("@troupe/hello: the listing could not be read".into());
        };
        if let Some(host) = seen_from {
            peers::localize(&mut e, &host);
        }
        if e.node != self.id {
            self.remote.learn(e, Instant::now());
        }
        Answer::Ok(peers::hello_text(self.registration.lock().unwrap().entry()).into_bytes())
    }

    /// Every other node this one knows of: the partition's directory and the listings
    /// of other machines.
    pub(super) fn peers(&self) -> Vec<Entry> {
        let mut all: Vec<Entry> = registry::scan(&self.dir).into_iter().filter(|e| e.node != self.id).collect();
        for e in self.remote.current(Instant::now()) {
            if !all.iter().any(|k| k.node == e.node && k.rep_addr == e.rep_addr) {
                all.push(e);
            }
        }
        all
    }

    /// Dials every publisher that publishes one of `topics`, and notes which topics other
    /// nodes subscribe to.
    fn discover(&self, topics: &[String]) {
        let peers = self.peers();
        let published: HashSet<String> =
            self.registration.lock().unwrap().entry().topics.iter().map(|(t, _)| t.clone()).collect();
        let known = {
            let mut dialed_by = self.dialed_by.lock().unwrap();
            for e in &peers {
                if e.subscriptions.iter().any(|t| published.contains(t)) {
                    dialed_by.insert(e.node.clone());
                }
            }
            peers.iter().filter(|e| dialed_by.contains(&e.node)).count()
        };
        self.known_subscribers.store(known, Ordering::Relaxed);
        *self.wanted.lock().unwrap() = peers.iter().flat_map(|e| e.subscriptions.iter().cloned()).collect();
        if topics.is_empty() {
            return;
        }
        for e in peers {
            if !e.topics.iter().any(|(t, _)| topics.contains(t)) {
                continue;
            }
            let mut dialed = self.dialed.lock().unwrap();
            if dialed.insert(e.pub_addr.clone()) {
                if let Err(err) = self.sub_sock.dial_async(&e.pub_addr) {
                    log::warn!(
                        "transport: cannot connect to the publisher of node {} at {}: {err}",
                        e.node,
                        e.pub_addr
                    );
                }
            }
        }
    }

    pub(super) fn subscribe(&self, topic: &str) -> Result<(), TransportError> {
        self.sub_sock
            .set_opt::<Subscribe>(wire::topic_prefix(topic))
            .map_err(nng_err(format!("subscribing to {topic}")))?;
        self.list(|e| {
            e.subscriptions.insert(topic.to_string());
        })?;
        // Peers on other machines hear of the subscription now rather than at the next
        // greeting, a second away.
        if !self.peer_urls.is_empty() {
            self.greet_peers();
        }
        self.discover(&[topic.to_string()]);
        Ok(())
    }

    pub(super) fn publish(&self, frame: &[u8]) {
        if self.remote_subscribers.load(Ordering::Relaxed) == 0 {
            return;
        }
        // PUB never waits for a slow subscriber: a full buffer drops the message, which the
        // subscriber sees as a gap in the sequence numbers.
        if let Err((_, e)) = self.pub_sock.try_send(Message::from(frame)) {
            log::trace!("transport: a message was not sent: {e}");
        }
    }

    pub(super) fn has_remote_subscribers(&self) -> bool {
        self.remote_subscribers.load(Ordering::Relaxed) > 0
    }

    /// Whether another node that is connected subscribes to `topic` (as of the last
    /// discovery round, at most [`DISCOVERY_PERIOD`] ago). A connection no known node
    /// accounts for is a subscriber that does not say what it wants: every topic counts
    /// as wanted then.
    pub(super) fn is_wanted(&self, topic: &str) -> bool {
        let connected = self.remote_subscribers.load(Ordering::Relaxed);
        connected > 0
            && (connected > self.known_subscribers.load(Ordering::Relaxed)
                || self.wanted.lock().unwrap().contains(topic))
    }

    /// Where this node serves its services (the address other machines are given).
    pub(super) fn service_addr(&self) -> String {
        self.registration.lock().unwrap().entry().rep_addr.clone()
    }

    pub(super) fn list(&self, change: impl FnOnce(&mut Entry)) -> Result<(), TransportError> {
        self.registration
            .lock()
            .unwrap()
            .update(change)
            .map_err(|source| TransportError::Rendezvous { dir: self.dir.clone(), source })
    }

    /// Takes the node out of the rendezvous directory (its file and IPC socket files).
    pub(super) fn unlist(&self) {
        let registration = self.registration.lock().unwrap();
        registration.remove();
        for addr in [&registration.entry().pub_addr, &registration.entry().rep_addr] {
            if let Some(p) = addr.strip_prefix("ipc://") {
                let _ = std::fs::remove_file(p);
            }
        }
    }

    pub(super) fn find_service(&self, service: &str) -> Option<String> {
        self.peers().into_iter().find(|e| e.services.iter().any(|(s, _, _)| s == service)).map(|e| e.rep_addr)
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        let last = *self.last_reply.lock().unwrap();
        if let Some(wait) = last.and_then(|t| REPLY_GRACE.checked_sub(t.elapsed())) {
            std::thread::sleep(wait);
        }
        for (aio, ctx) in self.workers.lock().unwrap().drain(..) {
            aio.cancel();
            ctx.close();
        }
        self.sub_sock.close();
        self.rep_sock.close();
        self.pub_sock.close();
        let registration = self.registration.lock().unwrap();
        for addr in [&registration.entry().pub_addr, &registration.entry().rep_addr] {
            if let Some(p) = addr.strip_prefix("ipc://") {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

/// One service context's state machine: receive a request, hand it to the node, send the
/// answer when it comes, receive the next.
fn serve(node: &Weak<Inner>, ctx: &Context, aio: Aio, result: AioResult) {
    match result {
        AioResult::Recv(Ok(mut msg)) => {
            let Some(inner) = node.upgrade() else { return };
            let node = Node { inner };
            let (c, a) = (ctx.clone(), aio.clone());
            let stamp = node.inner.net.as_ref().map(|n| n.last_reply.clone());
            let respond = Box::new(move |answer: Answer| {
                if let Err((_, e)) = c.send(&a, Message::from(answer.encode().as_slice())) {
                    log::warn!("transport: a service reply could not be sent: {e}");
                    let _ = c.recv(&a);
                }
                if let Some(stamp) = &stamp {
                    *stamp.lock().unwrap() = Some(Instant::now());
                }
            });
            // Only the hello needs to know who called (asking nng costs a lookup).
            let seen_from =
                if msg.as_slice().starts_with(peers::HELLO.as_bytes()) { remote_host(&mut msg) } else { None };
            match wire::decode_request(&msg) {
                Ok((peers::HELLO, payload)) => match &node.inner.net {
                    Some(net) => respond(net.hello(payload, seen_from)),
                    None => respond(Answer::Error("no network".into())),
                },
                Ok((name, payload)) => node.dispatch(name, payload, respond),
                Err(e) => respond(Answer::Error(e.0)),
            }
        }
        AioResult::Send(result) => {
            if let Err((_, e)) = result {
                log::debug!("transport: a service reply was not delivered: {e}");
            }
            let _ = ctx.recv(&aio);
        }
        AioResult::Recv(Err(nng::Error::Closed)) | AioResult::Recv(Err(nng::Error::Canceled)) => {}
        AioResult::Recv(Err(e)) => {
            log::debug!("transport: receiving a request failed: {e}");
            let _ = ctx.recv(&aio);
        }
        AioResult::Sleep(_) => {}
    }
}

/// The IP address a message came from, when it came over TCP.
fn remote_host(msg: &mut Message) -> Option<String> {
    match msg.pipe()?.get_opt::<nng::options::RemAddr>().ok()? {
        nng::SocketAddr::Inet(a) => Some(a.ip().to_string()),
        nng::SocketAddr::Inet6(a) => Some(a.ip().to_string()),
        _ => None,
    }
}

/// The subscriber thread: every message from another process goes to this node's
/// subscribers of its topic.
fn receive(sub: &Socket, node: &Weak<Inner>) {
    loop {
        let msg = match sub.recv() {
            Ok(m) => m,
            Err(nng::Error::Closed) => return,
            Err(e) => {
                log::debug!("transport: receiving a topic message failed: {e}");
                continue;
            }
        };
        let Some(inner) = node.upgrade() else { return };
        match TopicFrame::decode(&msg) {
            Ok(frame) => Node { inner }.deliver(&frame),
            Err(e) => log::warn!("transport: a malformed topic message was dropped: {e}"),
        }
    }
}

/// Calls `service` at `addr` on a request socket of its own, closed as soon as the answer
/// is in (no resend: a request runs at most once).
///
/// A socket per call costs a connection per call (tens of microseconds over IPC). Sharing
/// one request socket per peer through nng contexts was tried and dropped: with nng 1.4, a
/// shared request socket whose peer went away could block forever in nng's reaper thread
/// when it was closed, hanging the caller's exit.
pub(super) fn call(addr: &str, service: &str, payload: &[u8], timeout: Duration) -> Result<Answer, TransportError> {
    let failed = |e: nng::Error, what: &str| match e {
        nng::Error::TimedOut => TransportError::Timeout { service: service.to_string(), timeout },
        source => TransportError::Nng { what: format!("{what} service {service:?} at {addr}"), source },
    };
    let sock = Socket::new(Protocol::Req0).map_err(nng_err("opening a request socket"))?;
    sock.set_opt::<ResendTime>(None).map_err(nng_err("turning request resending off"))?;
    sock.set_opt::<RecvTimeout>(Some(timeout)).map_err(nng_err("setting the reply timeout"))?;
    sock.set_opt::<SendTimeout>(Some(timeout)).map_err(nng_err("setting the request timeout"))?;
    sock.dial(addr).map_err(|e| failed(e, "connecting to"))?;
    let result = sock
        .send(Message::from(wire::encode_request(service, payload).as_slice()))
        .map_err(|(_, e)| failed(e, "calling"))
        .and_then(|()| sock.recv().map_err(|e| failed(e, "waiting for")));
    sock.close();
    let reply = result?;
    Answer::decode(&reply).map_err(|source| TransportError::Malformed { service: service.to_string(), source })
}
