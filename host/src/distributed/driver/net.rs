//! The driver's sockets. Why these nng patterns:
//!
//! * **Admission: REQ/REP.** A secondary sends one `Hello` to the primary's join socket and
//!   waits for the `Welcome`; nothing is published, so nothing is dropped, and a refused
//!   peer gets its reason back.
//! * **Each admitted secondary: its own PAIR0 connection** (the primary listens on a fresh
//!   socket per secondary, the secondary dials it). PAIR0 never drops a message it
//!   accepted: when its buffer is full a send fails at once (we send without blocking) and
//!   says so, which the protocol's retransmission covers and the log shows. Its
//!   pipe-removal notification tells the other side at once that the process at the far
//!   end closed the connection or died (kill -9: the kernel closes its sockets), without
//!   waiting for a heartbeat timeout. A silent cut (cable, firewall) is left to the
//!   heartbeats.
//!
//! Everything heard arrives in one channel of [`Inbound`] events, read by the driver's
//! single thread, which owns the state machine. A connection receives through an nng `Aio`
//! whose completion callback (on nng's own threads) puts the message in the channel and
//! asks for the next one. Two other ways were measured slower in `troupe-bench --only
//! distributed`:
//! * a reader thread per connection blocked in nng's receive: one thread wake-up more per
//!   message (median step-time ratio against bare nng 1.06-1.39 with 1 to 4 secondaries,
//!   against 0.90-1.06 with the callback; the 1 + 3 split demo went from 1.15-1.29 of its
//!   goal to 1.07-1.10);
//! * receiving on the driver thread directly with a timeout, so the driver still sees its
//!   clock (1.39 instead of 1.03 with 2 secondaries): a receive with a timeout enters nng's
//!   timer queue, whose thread is woken.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nng::options::{Options, RecvBufferSize, RecvTimeout, SendBufferSize};
use nng::{Aio, AioResult, PipeEvent, Protocol, Socket};

use crate::distributed::messages::{Hello, Welcome};
use plugin_api::prost::Message;

/// Messages a PAIR connection holds before a send fails.
const BUFFER: i32 = 1024;

/// What the driver hears.
pub enum Inbound {
    /// A protocol message from connection `link`.
    Msg {
        /// The connection.
        link: usize,
        /// The encoded `Envelope`.
        bytes: Vec<u8>,
    },
    /// Connection `link`'s peer went away (its pipe was removed).
    Closed {
        /// The connection.
        link: usize,
    },
    /// A secondary asking to be admitted; answer on `reply`.
    Hello {
        /// What it says about itself.
        hello: Box<Hello>,
        /// Where the answer goes (the join thread waits for it).
        reply: Sender<Welcome>,
    },
}

/// The sending half every socket thread gets.
pub type InboundTx = Sender<Inbound>;

/// A new inbound channel.
pub fn channel() -> (InboundTx, Receiver<Inbound>) {
    mpsc::channel()
}

fn nng_err(what: impl std::fmt::Display) -> impl FnOnce(nng::Error) -> String {
    move |e| format!("{what}: {e}")
}

/// A connection's first pipe, once it is up.
type FirstPipe = Arc<Mutex<Option<nng::Pipe>>>;

/// One PAIR0 connection.
pub struct Link {
    sock: Socket,
    /// Where it listens or what it dialed.
    pub addr: String,
    /// The connection (its first pipe), once there is one.
    pipe: FirstPipe,
    /// The receive in progress (see [`Link::start_receiving`]); `None` only while opening.
    receiver: Option<Aio>,
}

impl Link {
    fn open(link: usize, tx: &InboundTx) -> Result<(Socket, FirstPipe), String> {
        let sock = Socket::new(Protocol::Pair0).map_err(nng_err("opening a PAIR socket"))?;
        sock.set_opt::<SendBufferSize>(BUFFER).map_err(nng_err("sizing a PAIR socket"))?;
        sock.set_opt::<RecvBufferSize>(BUFFER).map_err(nng_err("sizing a PAIR socket"))?;
        // Only the first connection counts: PAIR0 refuses a second one, whose removal must
        // not read as a loss.
        let first: FirstPipe = Arc::new(Mutex::new(None));
        let pipe = first.clone();
        let notify = Mutex::new(tx.clone());
        sock.pipe_notify(move |pipe, event| {
            let mut first = first.lock().unwrap_or_else(|e| e.into_inner());
            match event {
                PipeEvent::AddPost if first.is_none() => *first = Some(pipe),
                PipeEvent::RemovePost if *first == Some(pipe) => {
                    let _ = notify.lock().unwrap_or_else(|e| e.into_inner()).send(Inbound::Closed { link });
                }
                _ => {}
            }
        })
        .map_err(nng_err("watching a PAIR socket's connection"))?;
        Ok((sock, pipe))
    }

    /// Receives on nng's own threads: each message is handed to the driver's channel from the
    /// completion callback, which then asks for the next one.
    fn start_receiving(&self, link: usize, tx: &InboundTx) -> Result<Aio, String> {
        let sock = self.sock.clone();
        let tx = tx.clone();
        let aio = Aio::new(move |aio, result| match result {
            AioResult::Recv(Ok(m)) => {
                // A send fails only once the driver is gone: then nothing more is asked for.
                let delivered = tx.send(Inbound::Msg { link, bytes: m.as_slice().to_vec() }).is_ok();
                if delivered {
                    if let Err(e) = sock.recv_async(&aio) {
                        log::warn!("distributed: receiving on connection {link}: {e}");
                    }
                }
            }
            AioResult::Recv(Err(nng::Error::Closed | nng::Error::Canceled)) => {}
            AioResult::Recv(Err(e)) => log::warn!("distributed: receiving on connection {link}: {e}"),
            _ => {}
        })
        .map_err(nng_err("making a receiver"))?;
        self.sock.recv_async(&aio).map_err(nng_err("receiving"))?;
        Ok(aio)
    }

    /// A connection listening at `url` (tcp `host:0`, or an ipc path) for one peer.
    pub fn listen(link: usize, url: &str, tx: &InboundTx) -> Result<Link, String> {
        let (sock, pipe) = Self::open(link, tx)?;
        let listener = nng::Listener::new(&sock, url).map_err(nng_err(format!("listening on {url}")))?;
        let addr = bound_url(&listener, url);
        let mut l = Link { sock, addr, pipe, receiver: None };
        l.receiver = Some(l.start_receiving(link, tx)?);
        Ok(l)
    }

    /// A connection to `url`, dialed before this returns.
    pub fn dial(link: usize, url: &str, tx: &InboundTx) -> Result<Link, String> {
        let (sock, pipe) = Self::open(link, tx)?;
        sock.dial(url).map_err(nng_err(format!("connecting to {url}")))?;
        let mut l = Link { sock, addr: url.to_string(), pipe, receiver: None };
        l.receiver = Some(l.start_receiving(link, tx)?);
        Ok(l)
    }

    /// Sends without blocking. A full buffer (the peer is not reading) is reported, never
    /// waited on: the protocol sends again and its timeouts name a peer that stays stuck.
    pub fn send(&self, bytes: &[u8]) -> Result<(), String> {
        self.sock.try_send(bytes).map_err(|(_, e)| format!("sending to {}: {e}", self.addr))
    }

    /// This end's address of a TCP connection (`tcp://ip:port`, as the peer sees it);
    /// `None` before the connection is up and for IPC (an IPC dialer has no address of its
    /// own: nng reports the listener's path for both ends).
    pub fn local_tcp_addr(&self) -> Option<String> {
        let pipe = *self.pipe.lock().unwrap_or_else(|e| e.into_inner());
        pipe.and_then(|p| p.get_opt::<nng::options::LocalAddr>().ok()).and_then(|a| tcp_url(&a))
    }

    /// Closes the connection (the reader thread ends).
    pub fn close(&self) {
        self.sock.close();
    }
}

/// `tcp://ip:port` of a TCP address.
fn tcp_url(addr: &nng::SocketAddr) -> Option<String> {
    match addr {
        // nng 1.0.1 hands the port over in network byte order, unconverted.
        nng::SocketAddr::Inet(a) => Some(format!("tcp://{}:{}", a.ip(), u16::from_be(a.port()))),
        nng::SocketAddr::Inet6(a) => Some(format!("tcp://[{}]:{}", a.ip(), u16::from_be(a.port()))),
        _ => None,
    }
}

/// The URL a listener actually bound (the system's port for `:0`).
fn bound_url(listener: &nng::Listener, url: &str) -> String {
    listener.get_opt::<nng::options::LocalAddr>().ok().and_then(|a| tcp_url(&a)).unwrap_or_else(|| url.to_string())
}

/// The primary's join socket (REP0), served by a thread that hands each Hello to the
/// driver and sends back its Welcome.
pub struct JoinServer {
    sock: Socket,
    /// Where secondaries reach it.
    pub addr: String,
}

impl JoinServer {
    /// Listens at `url` (ipc path, or tcp `host:port`, port 0 picked by the system).
    pub fn listen(url: &str, tx: InboundTx) -> Result<JoinServer, String> {
        let sock = Socket::new(Protocol::Rep0).map_err(nng_err("opening the join socket"))?;
        let listener = nng::Listener::new(&sock, url).map_err(nng_err(format!("listening on {url}")))?;
        let addr = bound_url(&listener, url);
        let s = sock.clone();
        let _ = std::thread::Builder::new().name("troupe-dist-join".into()).spawn(move || loop {
            let msg = match s.recv() {
                Ok(m) => m,
                Err(nng::Error::Closed) => return,
                Err(e) => {
                    log::warn!("distributed: join socket: {e}");
                    return;
                }
            };
            let welcome = match Hello::decode(msg.as_slice()) {
                Ok(hello) => {
                    let (reply, answer) = mpsc::channel();
                    if tx.send(Inbound::Hello { hello: Box::new(hello), reply }).is_err() {
                        return;
                    }
                    answer.recv_timeout(Duration::from_secs(5)).unwrap_or_else(|_| Welcome {
                        reason: String::from("the primary did not decide in time"),
                        ..Welcome::default()
                    })
                }
                Err(e) => {
                    log::warn!("distributed: refused a message on the join socket that is not a Troupe Hello: {e}");
                    Welcome { reason: format!("not a Troupe distributed Hello: {e}"), ..Welcome::default() }
                }
            };
            if let Err((_, e)) = s.send(welcome.encode_to_vec().as_slice()) {
                log::warn!("distributed: answering a join: {e}");
            }
        });
        Ok(JoinServer { sock, addr })
    }

    /// Stops serving.
    pub fn close(&self) {
        self.sock.close();
    }
}

/// Asks the primary at `url` to admit us; `Err` when it did not answer within `timeout`
/// (the caller tries again until its discovery timeout).
pub fn ask_to_join(url: &str, hello: &Hello, timeout: Duration) -> Result<Welcome, String> {
    let sock = Socket::new(Protocol::Req0).map_err(nng_err("opening a join request socket"))?;
    sock.set_opt::<RecvTimeout>(Some(timeout)).map_err(nng_err("setting the join timeout"))?;
    // Non-blocking dial: nng keeps trying while we wait for the answer.
    sock.dial_async(url).map_err(nng_err(format!("connecting to {url}")))?;
    sock.send(hello.encode_to_vec().as_slice()).map_err(|(_, e)| format!("sending the join request to {url}: {e}"))?;
    let answer = sock.recv().map_err(|e| format!("no answer from {url}: {e}"))?;
    sock.close();
    Welcome::decode(answer.as_slice()).map_err(|e| format!("{url} answered with something that is not a Welcome: {e}"))
}
