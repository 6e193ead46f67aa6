//! Peers, where a message goes, and the protocol's timing.

use std::fmt;
use std::time::Duration;

use super::messages::{self, Envelope, Role};
use super::PROTOCOL_VERSION;

/// A peer as errors name it: role, id and address if known.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeerRef {
    /// `primary` or `secondary`.
    pub role: Role,
    /// The peer's id (unique per process run).
    pub id: String,
    /// Its address, when the driver knows one (empty otherwise).
    pub address: String,
}

impl PeerRef {
    /// A peer from its wire description; a missing one is an unnamed peer of `role`.
    pub fn from_info(info: Option<&messages::PeerInfo>, role: Role) -> Self {
        match info {
            Some(i) => {
                PeerRef { role: Role::try_from(i.role).unwrap_or(role), id: i.id.clone(), address: i.address.clone() }
            }
            None => PeerRef { role, id: String::from("?"), address: String::new() },
        }
    }

    /// The wire description of this peer.
    pub fn info(&self) -> messages::PeerInfo {
        messages::PeerInfo { id: self.id.clone(), role: self.role as i32, address: self.address.clone() }
    }
}

impl fmt::Display for PeerRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let role = match self.role {
            Role::Primary => "primary",
            Role::Secondary => "secondary",
            Role::Unspecified => "peer",
        };
        write!(f, "{role} {}", self.id)?;
        if !self.address.is_empty() {
            write!(f, " ({})", self.address)?;
        }
        Ok(())
    }
}

/// Where a transmit goes. Secondaries only ever talk to the primary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// The primary.
    Primary,
    /// One secondary, by peer id.
    Secondary(String),
    /// Every secondary listening, joined or not (a broadcast, like a published topic).
    AllSecondaries,
}

/// A message a machine wants sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Transmit {
    /// Where to.
    pub to: Destination,
    /// What.
    pub msg: Envelope,
}

/// The protocol's clocks. Every duration is measured on the injected clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// How often a peer says it is alive (gz: 100 ms).
    pub heartbeat_interval: Duration,
    /// A peer not heard from for this long is lost (gz: 10 s, 100 heartbeat periods).
    pub peer_timeout: Duration,
    /// The longest the primary waits for every answer to a step, or for the secondaries to
    /// confirm a handshake or a stop (gz: 10 s for a step, 5 s for the handshake).
    pub step_timeout: Duration,
    /// How often an unanswered request (join, enable, step, stop) is sent again.
    pub retransmit_interval: Duration,
    /// How long the primary waits for all N secondaries to join; `None` waits as long as it
    /// takes, as gz-sim does.
    pub join_timeout: Option<Duration>,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            heartbeat_interval: Duration::from_millis(100),
            peer_timeout: Duration::from_secs(10),
            step_timeout: Duration::from_secs(10),
            retransmit_interval: Duration::from_millis(200),
            join_timeout: None,
        }
    }
}

/// Wraps a body in an envelope of this protocol version.
pub(crate) fn envelope(body: messages::envelope::Body) -> Envelope {
    Envelope { protocol_version: PROTOCOL_VERSION, body: Some(body) }
}

/// The sender named by a message, if its body names one.
pub(crate) fn sender(msg: &Envelope) -> Option<&messages::PeerInfo> {
    use messages::envelope::Body;
    match msg.body.as_ref()? {
        Body::Join(m) => m.peer.as_ref(),
        Body::Leave(m) => m.peer.as_ref(),
        Body::Heartbeat(m) => m.peer.as_ref(),
        Body::Control(m) => m.peer.as_ref(),
        Body::Answer(m) => m.peer.as_ref(),
        Body::Error(m) => m.peer.as_ref(),
        Body::Step(_) | Body::Stop(_) => None,
    }
}
