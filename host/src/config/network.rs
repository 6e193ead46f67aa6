//! The values of a distributed run's settings as users write them, in `<network>` and in
//! the `--network-*` flags: a role, a listen address. Read here so that the server config's
//! parser and the distributed settings share them.

use plugin_api::NetworkRole;

/// `primary` or `secondary`, in any case (as gz-sim): a distributed run's role.
pub fn parse_role(text: &str) -> Option<NetworkRole> {
    match text.trim().to_ascii_lowercase().as_str() {
        "primary" => Some(NetworkRole::PRIMARY),
        "secondary" => Some(NetworkRole::SECONDARY),
        _ => None,
    }
}

/// A listen address as a user writes it: `host:port` or `tcp://host:port` (port 0: the
/// system picks one); answers the nng URL.
pub fn listen_url(addr: &str) -> Result<String, String> {
    let a = addr.trim();
    let rest = a.strip_prefix("tcp://").unwrap_or(a);
    let Some((host, port)) = rest.rsplit_once(':') else {
        return Err(format!("listen address {a:?} has no port (write host:port, e.g. 192.168.1.20:11400, or port 0)"));
    };
    if host.parse::<std::net::IpAddr>().is_err() {
        return Err(format!("listen address {a:?}: {host:?} is not an IP address of this machine"));
    }
    match port.parse::<u16>() {
        Ok(p) => Ok(format!("tcp://{host}:{p}")),
        Err(_) => Err(format!("listen address {a:?}: {port:?} is not a port number (0 to 65535)")),
    }
}
