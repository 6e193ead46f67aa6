//! Network values as users write them, in the server config (`<network>`, `<transport>`)
//! and in flags (`--network-*`, `--peer`): a role, a listen address, a peer address. Read
//! here so that the config's parser, the distributed settings, the transport and the CLI
//! share them.

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

/// A peer address as a user may write it: `tcp://host:port` or `host:port`; answers the
/// nng URL.
pub fn peer_url(addr: &str) -> Result<String, String> {
    let addr = addr.trim();
    let rest = match addr.split_once("://") {
        Some(("tcp", rest)) => rest,
        Some((scheme, _)) => {
            return Err(format!("peer address {addr:?}: only tcp:// peers can be on another machine, not {scheme}://"))
        }
        None => addr,
    };
    let Some((host, port)) = rest.rsplit_once(':') else {
        return Err(format!("peer address {addr:?} has no port (write host:port, e.g. 192.168.1.20:11345)"));
    };
    if host.is_empty() {
        return Err(format!("peer address {addr:?} has no host"));
    }
    match port.parse::<u16>() {
        Ok(p) if p > 0 => Ok(format!("tcp://{host}:{p}")),
        _ => Err(format!("peer address {addr:?}: {port:?} is not a port number (1 to 65535)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_addresses_are_checked_and_normalised() {
        assert_eq!(peer_url("192.168.1.20:11345").unwrap(), "tcp://192.168.1.20:11345");
        assert_eq!(peer_url(" tcp://robot.local:7000 ").unwrap(), "tcp://robot.local:7000");
        assert_eq!(peer_url("tcp://[::1]:7000").unwrap(), "tcp://[::1]:7000");
        assert!(peer_url("192.168.1.20").unwrap_err().contains("has no port"));
        assert!(peer_url("ipc:///tmp/x").unwrap_err().contains("only tcp://"));
        assert!(peer_url("host:99999").unwrap_err().contains("not a port number"));
        assert!(peer_url(":80").unwrap_err().contains("has no host"));
    }
}
