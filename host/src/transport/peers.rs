//! Nodes on other machines, which the rendezvous directory cannot show.
//!
//! A node given peer addresses (`--peer`, `TROUPE_PEERS`, the server config's
//! `<transport><peer>`) calls the reserved `@troupe/hello` service of each about once a
//! second. The request carries the caller's own listing and the reply the callee's, in the
//! rendezvous file's text: after one exchange each side knows the other's topics, services,
//! subscriptions and addresses, as if they shared a directory. A listing not refreshed for
//! [`FORGET_AFTER`] is forgotten, so a vanished machine drops out of `topic -l` and stops
//! counting as a subscriber.
//!
//! A node listening on every interface (`0.0.0.0`, what a command-line tool uses when it has
//! peers) lists its addresses as `127.0.0.1`. Whoever learns such a listing over TCP from
//! another host puts that host's address in its place, so the addresses it dials are ones
//! it can reach.

use super::registry::Entry;
use crate::config::peer_url;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The reserved service of the hello exchange (a name no user service can take: they
/// start with `/`).
pub(super) const HELLO: &str = "@troupe/hello";
/// How often a node greets each of its configured peers.
pub(super) const GREET_EVERY: Duration = Duration::from_secs(1);
/// How long a hello may take before the peer counts as unreachable for this round.
pub(super) const HELLO_TIMEOUT: Duration = Duration::from_millis(800);
/// How long a remote listing is kept without being refreshed.
pub(super) const FORGET_AFTER: Duration = Duration::from_secs(3);

/// Peer addresses from the environment (`TROUPE_PEERS`, separated by commas or spaces).
pub fn peers_from_env() -> Result<Vec<String>, String> {
    let Ok(list) = std::env::var("TROUPE_PEERS") else { return Ok(Vec::new()) };
    list.split([',', ' '])
        .filter(|s| !s.trim().is_empty())
        .map(|a| peer_url(a).map_err(|e| format!("TROUPE_PEERS: {e}")))
        .collect()
}

/// The hello text of a listing.
pub(super) fn hello_text(entry: &Entry) -> String {
    format!("node {}\n{}", entry.node, entry.render())
}

/// Whether `url` names a loopback or unspecified IPv4/IPv6 host.
fn local_host(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("tcp://")?;
    let (host, _) = rest.rsplit_once(':')?;
    let ip: IpAddr = host.trim_start_matches('[').trim_end_matches(']').parse().ok()?;
    (ip.is_loopback() || ip.is_unspecified()).then_some(host)
}

/// Rewrites the loopback TCP addresses of a listing learned from `seen_from` (a host that
/// is not this one) to `seen_from`.
pub(super) fn localize(entry: &mut Entry, seen_from: &str) {
    let Ok(from) = seen_from.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() else { return };
    if from.is_loopback() || from.is_unspecified() {
        return;
    }
    let host = match from {
        IpAddr::V4(a) => a.to_string(),
        IpAddr::V6(a) => format!("[{a}]"),
    };
    for addr in [&mut entry.pub_addr, &mut entry.rep_addr] {
        if let Some(old) = local_host(addr) {
            *addr = addr.replacen(&format!("tcp://{old}:"), &format!("tcp://{host}:"), 1);
        }
    }
}

/// The host part of a `tcp://host:port` URL.
pub(super) fn url_host(url: &str) -> Option<&str> {
    url.strip_prefix("tcp://")?.rsplit_once(':').map(|(h, _)| h)
}

/// Listings learned from other machines, each with when it was last heard.
#[derive(Default)]
pub(super) struct RemoteNodes {
    known: Mutex<HashMap<(String, String), (Entry, Instant)>>,
}

impl RemoteNodes {
    /// Records (or refreshes) a listing.
    pub(super) fn learn(&self, entry: Entry, now: Instant) {
        let key = (entry.node.clone(), entry.rep_addr.clone());
        self.known.lock().unwrap().insert(key, (entry, now));
    }

    /// The listings heard within [`FORGET_AFTER`] of `now`; older ones are dropped.
    pub(super) fn current(&self, now: Instant) -> Vec<Entry> {
        let mut known = self.known.lock().unwrap();
        known.retain(|_, (_, seen)| now.saturating_duration_since(*seen) <= FORGET_AFTER);
        let mut out: Vec<Entry> = known.values().map(|(e, _)| e.clone()).collect();
        out.sort_by(|a, b| (&a.node, &a.rep_addr).cmp(&(&b.node, &b.rep_addr)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pub_addr: &str, rep_addr: &str) -> Entry {
        Entry { node: "7-1".into(), pid: 7, pub_addr: pub_addr.into(), rep_addr: rep_addr.into(), ..Entry::default() }
    }

    #[test]
    fn loopback_addresses_of_a_remote_listing_become_the_remote_host() {
        let mut e = entry("tcp://127.0.0.1:4000", "tcp://10.0.0.5:4001");
        localize(&mut e, "10.0.0.9");
        assert_eq!(e.pub_addr, "tcp://10.0.0.9:4000");
        assert_eq!(e.rep_addr, "tcp://10.0.0.5:4001", "a routable address is kept");
        let mut same = entry("tcp://127.0.0.1:4000", "ipc:///tmp/a.rep");
        localize(&mut same, "127.0.0.1");
        assert_eq!(same.pub_addr, "tcp://127.0.0.1:4000", "a listing from this machine is kept");
        let mut v6 = entry("tcp://0.0.0.0:4000", "tcp://[::1]:4001");
        localize(&mut v6, "fe80::1");
        assert_eq!(v6.pub_addr, "tcp://[fe80::1]:4000");
        assert_eq!(v6.rep_addr, "tcp://[fe80::1]:4001");
    }

    #[test]
    fn hello_text_round_trips_and_listings_are_forgotten() {
        let mut e = entry("tcp://127.0.0.1:4000", "tcp://127.0.0.1:4001");
        e.subscriptions.insert("/world/w/wrench".into());
        let back = Entry::parse("unknown", &hello_text(&e)).unwrap();
        assert_eq!(back, e);
        let remote = RemoteNodes::default();
        let t0 = Instant::now();
        remote.learn(e.clone(), t0);
        assert_eq!(remote.current(t0 + FORGET_AFTER), vec![e]);
        assert!(remote.current(t0 + FORGET_AFTER + Duration::from_millis(1)).is_empty());
    }
}
