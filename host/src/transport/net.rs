//! The nng side of a [`Node`]: one PUB socket for every topic the node publishes, one REP
//! socket (with a pool of contexts, so a slow answer holds up no other caller) for its
//! services, one SUB socket dialled to every publisher of a topic it subscribes to, and
//! the node's file in the rendezvous directory.

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
use std::time::Duration;

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
}

fn listen(sock: &Socket, bind: &Bind, dir: &Path, id: &str, kind: &str) -> Result<String, TransportError> {
    let ipc = format!("ipc://{}/{id}.{kind}", dir.display());
    // A Unix socket path is limited to 107 bytes; a deep runtime directory falls back to TCP.
    let host = match bind {
        Bind::Ipc if ipc.len() <= 100 => {
            sock.listen(&ipc).map_err(nng_err(format!("listening on {ipc}")))?;
            return Ok(ipc);
        }
        Bind::Ipc => "127.0.0.1",
        Bind::Tcp(host) => host.as_str(),
    };
    let url = format!("tcp://{host}:0");
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
    pub(super) fn open(id: &str, dir: &Path, bind: &Bind) -> Result<Net, TransportError> {
        std::fs::create_dir_all(dir).map_err(|source| TransportError::Rendezvous { dir: dir.to_path_buf(), source })?;
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
        let registration =
            Registration::create(dir, entry).map_err(|source| TransportError::Rendezvous { dir: dir.to_path_buf(), source })?;
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
        })
    }

    /// Starts serving requests, receiving messages and looking for publishers.
    pub(super) fn start(&self, inner: Weak<Inner>) -> Result<(), TransportError> {
        let mut workers = self.workers.lock().unwrap();
        for _ in 0..CONTEXTS {
            let ctx = Context::new(&self.rep_sock).map_err(nng_err("opening a service context"))?;
            let c = ctx.clone();
            let weak = inner.clone();
            let aio = Aio::new(move |aio, result| serve(&weak, &c, aio, result)).map_err(nng_err("making a service worker"))?;
            ctx.recv(&aio).map_err(nng_err("waiting for requests"))?;
            workers.push((aio, ctx));
        }
        let sub = self.sub_sock.clone();
        let weak = inner.clone();
        std::thread::Builder::new()
            .name("troupe-sub".into())
            .spawn(move || receive(&sub, &weak))
            .map_err(|source| TransportError::Thread { what: "subscriber", source })?;
        let weak = inner;
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
        Ok(())
    }

    /// Dials every publisher of the partition that publishes one of `topics`.
    fn discover(&self, topics: &[String]) {
        if topics.is_empty() {
            return;
        }
        for e in registry::scan(&self.dir) {
            if e.node == self.id || !e.topics.iter().any(|(t, _)| topics.contains(t)) {
                continue;
            }
            let mut dialed = self.dialed.lock().unwrap();
            if dialed.insert(e.pub_addr.clone()) {
                if let Err(err) = self.sub_sock.dial_async(&e.pub_addr) {
                    log::warn!("transport: cannot connect to the publisher of node {} at {}: {err}", e.node, e.pub_addr);
                }
            }
        }
    }

    pub(super) fn subscribe(&self, topic: &str) -> Result<(), TransportError> {
        self.sub_sock.set_opt::<Subscribe>(wire::topic_prefix(topic)).map_err(nng_err(format!("subscribing to {topic}")))?;
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

    pub(super) fn list(&self, change: impl FnOnce(&mut Entry)) -> Result<(), TransportError> {
        self.registration.lock().unwrap().update(change).map_err(|source| TransportError::Rendezvous { dir: self.dir.clone(), source })
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

    pub(super) fn peers(&self) -> Vec<Entry> {
        registry::scan(&self.dir).into_iter().filter(|e| e.node != self.id).collect()
    }

    pub(super) fn find_service(&self, service: &str) -> Option<String> {
        self.peers().into_iter().find(|e| e.services.iter().any(|(s, _, _)| s == service)).map(|e| e.rep_addr)
    }
}

impl Drop for Net {
    fn drop(&mut self) {
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
        AioResult::Recv(Ok(msg)) => {
            let Some(inner) = node.upgrade() else { return };
            let node = Node { inner };
            let (c, a) = (ctx.clone(), aio.clone());
            let respond = Box::new(move |answer: Answer| {
                if let Err((_, e)) = c.send(&a, Message::from(answer.encode().as_slice())) {
                    log::warn!("transport: a service reply could not be sent: {e}");
                    let _ = c.recv(&a);
                }
            });
            match wire::decode_request(&msg) {
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
