//! A simulated network for testing the protocol: in-memory links between one primary and
//! its secondaries, each with loss, delay, reordering and duplication, and partitions, all
//! drawn from one seed so a failing run replays exactly. No threads, no wall clock: the
//! test moves time and asks for what is due.
//!
//! Messages cross it encoded (prost bytes), as they will over nng.

use std::collections::BTreeMap;
use std::time::Duration;

use plugin_api::prost::Message;

use super::messages::Envelope;
use super::peer::{Destination, Transmit};

/// A machine on the network: the primary or a secondary by its node index (the order the
/// test added it, not its protocol index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Node {
    /// The primary.
    Primary,
    /// A secondary.
    Secondary(usize),
}

/// How a link between the primary and one secondary misbehaves (both directions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkConfig {
    /// Probability a message is lost.
    pub loss: f64,
    /// Probability a message is delivered twice (the copy with its own delay).
    pub duplicate: f64,
    /// Probability a message is held back by an extra `delay_max`, so later ones overtake it.
    pub reorder: f64,
    /// Shortest delivery delay.
    pub delay_min: Duration,
    /// Longest delivery delay (uniform between the two).
    pub delay_max: Duration,
}

impl LinkConfig {
    /// A perfect link delivering after `delay`.
    pub fn perfect(delay: Duration) -> Self {
        LinkConfig { loss: 0.0, duplicate: 0.0, reorder: 0.0, delay_min: delay, delay_max: delay }
    }
}

/// splitmix64: tiny, seedable, good enough to pick network faults.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A float in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.unit() < p
    }

    /// An integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

/// A message the network delivers.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// When.
    pub at: Duration,
    /// Sender.
    pub from: Node,
    /// Receiver.
    pub to: Node,
    /// The decoded message.
    pub msg: Envelope,
}

/// The network: links by secondary node index, messages in flight ordered by delivery time
/// (ties by send order).
#[derive(Debug)]
pub struct SimNet {
    rng: Rng,
    links: Vec<LinkConfig>,
    /// Secondary node index → peer id, to route `Destination::Secondary(id)`.
    names: Vec<String>,
    cut: Vec<bool>,
    in_flight: BTreeMap<(Duration, u64), (Node, Node, Vec<u8>)>,
    sent: u64,
    /// How many messages were dropped by loss or partition.
    pub dropped: u64,
}

impl SimNet {
    /// An empty network drawing every fault from `seed`.
    pub fn new(seed: u64) -> Self {
        SimNet {
            rng: Rng::new(seed),
            links: Vec::new(),
            names: Vec::new(),
            cut: Vec::new(),
            in_flight: BTreeMap::new(),
            sent: 0,
            dropped: 0,
        }
    }

    /// Adds a secondary with peer id `id` behind `link`; returns its node.
    pub fn add_secondary(&mut self, id: &str, link: LinkConfig) -> Node {
        self.links.push(link);
        self.names.push(id.to_owned());
        self.cut.push(false);
        Node::Secondary(self.links.len() - 1)
    }

    /// Cuts (or heals) the link between the primary and secondary node `i`: nothing crosses
    /// it, in either direction, messages in flight included.
    pub fn partition(&mut self, i: usize, cut: bool) {
        self.cut[i] = cut;
    }

    /// Changes a link's behaviour from now on.
    pub fn set_link(&mut self, i: usize, link: LinkConfig) {
        self.links[i] = link;
    }

    /// The random source (tests draw their own choices from it too, so one seed decides all).
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// Sends `t` from `from` at time `now`, through each destination link's faults.
    pub fn send(&mut self, now: Duration, from: Node, t: &Transmit) {
        let bytes = t.msg.encode_to_vec();
        let targets: Vec<Node> = match (&from, &t.to) {
            (Node::Secondary(_), _) | (Node::Primary, Destination::Primary) => vec![Node::Primary],
            (Node::Primary, Destination::AllSecondaries) => (0..self.links.len()).map(Node::Secondary).collect(),
            (Node::Primary, Destination::Secondary(id)) => {
                self.names.iter().position(|n| n == id).map(Node::Secondary).into_iter().collect()
            }
        };
        for to in targets {
            let link = match (from, to) {
                (Node::Secondary(i), _) | (_, Node::Secondary(i)) => i,
                (Node::Primary, Node::Primary) => continue,
            };
            let cfg = self.links[link];
            if self.cut[link] || self.rng.chance(cfg.loss) {
                self.dropped += 1;
                continue;
            }
            let copies = if self.rng.chance(cfg.duplicate) { 2 } else { 1 };
            for _ in 0..copies {
                let span = cfg.delay_max.saturating_sub(cfg.delay_min).as_micros() as u64;
                let mut delay = cfg.delay_min + Duration::from_micros(self.rng.below(span + 1));
                if self.rng.chance(cfg.reorder) {
                    delay += cfg.delay_max;
                }
                self.sent += 1;
                self.in_flight.insert((now + delay, self.sent), (from, to, bytes.clone()));
            }
        }
    }

    /// Takes every message due at or before `now`, in delivery order. Messages on a cut link
    /// are lost.
    pub fn deliver_due(&mut self, now: Duration) -> Vec<Delivery> {
        let mut out = Vec::new();
        while let Some(entry) = self.in_flight.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let ((at, _), (from, to, bytes)) = entry.remove_entry();
            let link = match (from, to) {
                (Node::Secondary(i), _) | (_, Node::Secondary(i)) => i,
                _ => continue,
            };
            if self.cut[link] {
                self.dropped += 1;
                continue;
            }
            let msg = Envelope::decode(bytes.as_slice()).expect("the simulated network carries valid messages");
            out.push(Delivery { at, from, to, msg });
        }
        out
    }

    /// Whether nothing is in flight.
    pub fn is_idle(&self) -> bool {
        self.in_flight.is_empty()
    }
}
