//! A process's part in a distributed run, from the command line (`--network-role`,
//! `--network-secondaries`, `--network-primary`, `--network-listen`), the server config's
//! `<network>` and the environment (`TROUPE_CLUSTER_TOKEN`), with every invalid
//! combination an error naming where each value came from.

use plugin_api::NetworkRole;
use std::time::Duration;

use crate::config::{parse_role, NetworkSpec};

use super::peer::Timing;

/// The environment variable holding the cluster token (when the config has no `<token>`).
pub const TOKEN_ENV: &str = "TROUPE_CLUSTER_TOKEN";

/// Default discovery timeout: how long a primary waits for its secondaries and a secondary
/// for its primary before giving up, naming who is missing.
pub const DEFAULT_DISCOVERY_TIMEOUT: Duration = Duration::from_secs(60);

/// Default heartbeat timeout of a driver run (3 s; the machines' own default is
/// gz-sim's 10 s).
pub const DEFAULT_PEER_TIMEOUT: Duration = Duration::from_secs(3);

/// The role of a process with these settings' role (`None`: not distributed, standalone).
pub fn network_role_of(role: Option<NetworkRole>) -> NetworkRole {
    role.unwrap_or(NetworkRole::STANDALONE)
}

/// The distributed flags of `troupe sim` as given (unparsed role text).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkArgs {
    /// `--network-role`.
    pub role: Option<String>,
    /// `--network-secondaries`.
    pub secondaries: Option<u32>,
    /// `--network-primary` (already a `tcp://` URL).
    pub primary: Option<String>,
    /// `--network-listen` (already a `tcp://` URL).
    pub listen: Option<String>,
    /// `--network-auto-performers`.
    pub auto_performers: bool,
}

/// A resolved distributed setup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkSettings {
    /// This process's role.
    pub role: NetworkRole,
    /// Primary: how many secondaries it waits for (at least 1). Secondary: 0.
    pub secondaries: u32,
    /// The cluster token, and who gave it; `None` when none was given.
    pub token: Option<(String, String)>,
    /// Secondary: the primary's join address (across machines); `None` finds it in the
    /// partition's rendezvous directory.
    pub primary: Option<String>,
    /// Primary: where to listen for secondaries (across machines); `None` listens on an IPC
    /// socket listed in the partition's rendezvous directory.
    pub listen: Option<String>,
    /// Heartbeats and timeouts.
    pub timing: Timing,
    /// How long discovery may take.
    pub discovery_timeout: Duration,
    /// Make dynamic models outside performers and levels performers (`<auto_performers>`,
    /// `--network-auto-performers`) instead of refusing the world.
    pub auto_performers: bool,
}

impl NetworkSettings {
    /// Whether some endpoint of this process uses a non-loopback address, which makes the
    /// token required.
    pub fn non_loopback(&self) -> Option<&str> {
        [&self.primary, &self.listen].into_iter().flatten().map(String::as_str).find(|url| !is_loopback_url(url))
    }
}

/// Whether an nng URL stays on this machine (ipc://, inproc://, or tcp on a loopback IP or
/// `localhost`).
pub fn is_loopback_url(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("tcp://") else { return true };
    let host = rest.rsplit_once(':').map_or(rest, |(h, _)| h).trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Combines the command line, the config file's `<network>` and the token from the
/// environment. `Ok(None)`: not a distributed run. Every invalid combination is an error
/// naming its source.
pub fn resolve(
    args: &NetworkArgs,
    file: Option<&NetworkSpec>,
    env_token: Option<String>,
) -> Result<Option<NetworkSettings>, String> {
    let cli_role = match &args.role {
        Some(text) => Some(
            parse_role(text)
                .ok_or_else(|| format!("--network-role {text:?}: expected primary or secondary (any case)"))?,
        ),
        None => None,
    };
    let file_role = file
        .and_then(|f| f.role.as_ref())
        .map(|(text, at)| (parse_role(text).unwrap_or(NetworkRole::SECONDARY), at.clone()));
    let role = match (cli_role, &file_role) {
        (Some(c), Some((f, at))) if c != *f => {
            return Err(format!(
                "--network-role says {} but <role> at {at} says {}; give one of them",
                c.as_str(),
                f.as_str()
            ))
        }
        (Some(c), _) => Some((c, String::from("--network-role"))),
        (None, Some((f, at))) => Some((*f, format!("<role> at {at}"))),
        (None, None) => None,
    };
    let file_n = file.and_then(|f| f.secondaries.clone());
    let secondaries = match (args.secondaries, &file_n) {
        (Some(0), _) => return Err(String::from("--network-secondaries 0: a primary needs at least 1 secondary")),
        (Some(c), Some((f, at))) if c != *f => {
            return Err(format!("--network-secondaries says {c} but <secondaries> at {at} says {f}; give one of them"))
        }
        (Some(c), _) => Some((c, String::from("--network-secondaries"))),
        (None, Some((f, at))) => Some((*f, format!("<secondaries> at {at}"))),
        (None, None) => None,
    };
    let primary =
        agree("--network-primary", args.primary.as_ref(), file.and_then(|f| f.primary.as_ref()), "<primary>")?;
    let listen = agree("--network-listen", args.listen.as_ref(), file.and_then(|f| f.listen.as_ref()), "<listen>")?;
    let Some((role, role_from)) = role else {
        // Settings without a role would silently run standalone: refuse them.
        let stray = [
            secondaries.as_ref().map(|(_, from)| from.clone()),
            primary.as_ref().map(|(_, from)| from.clone()),
            listen.as_ref().map(|(_, from)| from.clone()),
            file.map(|f| format!("<network> at {}", f.origin)),
        ];
        if let Some(from) = stray.into_iter().flatten().next() {
            return Err(format!(
                "{from} is given without a role; add --network-role primary|secondary (or <role> in <network>)"
            ));
        }
        return Ok(None);
    };
    let secondaries = match (role, secondaries) {
        (NetworkRole::PRIMARY, Some((n, _))) => n,
        (NetworkRole::PRIMARY, None) => {
            return Err(format!("{role_from} is primary but no secondary count is given: add --network-secondaries N (N >= 1) or <secondaries>"))
        }
        // Otherwise secondary: parse_role gives no other role.
        (_, Some((_, from))) => return Err(format!("{from} is only for a primary, and {role_from} is secondary")),
        (_, None) => 0,
    };
    match (role, &primary, &listen) {
        (NetworkRole::PRIMARY, Some((_, from)), _) => return Err(format!("{from} names the primary's address, and {role_from} is primary (a primary uses --network-listen / <listen>)")),
        (NetworkRole::SECONDARY, _, Some((_, from))) => return Err(format!("{from} is where a primary listens, and {role_from} is secondary (a secondary uses --network-primary / <primary>)")),
        _ => {}
    }
    let file_token = file.and_then(|f| f.token.clone()).map(|(t, at)| (t, format!("<token> at {at}")));
    let env_token = env_token.filter(|t| !t.is_empty()).map(|t| (t, String::from(TOKEN_ENV)));
    let token = match (file_token, env_token) {
        (Some((f, ff)), Some((e, ef))) if f != e => {
            return Err(format!("{ff} and {ef} give different cluster tokens; give one"))
        }
        (Some(f), _) => Some(f),
        (None, e) => e,
    };
    let mut timing = Timing { peer_timeout: DEFAULT_PEER_TIMEOUT, ..Timing::default() };
    let ms = Duration::from_millis;
    if let Some(f) = file {
        if let Some(v) = f.heartbeat_period_ms {
            timing.heartbeat_interval = ms(v);
        }
        if let Some(v) = f.peer_timeout_ms {
            timing.peer_timeout = ms(v);
        }
        if let Some(v) = f.step_timeout_ms {
            timing.step_timeout = ms(v);
        }
    }
    if timing.peer_timeout <= timing.heartbeat_interval {
        let at = file.map(|f| f.origin.clone()).unwrap_or_default();
        return Err(format!(
            "<network> at {at}: the peer timeout ({} ms) must be longer than the heartbeat period ({} ms)",
            timing.peer_timeout.as_millis(),
            timing.heartbeat_interval.as_millis()
        ));
    }
    // Retransmitting faster than heartbeats is pointless on a reliable connection.
    timing.retransmit_interval = timing.retransmit_interval.max(timing.heartbeat_interval);
    let discovery_timeout = file.and_then(|f| f.discovery_timeout_ms).map_or(DEFAULT_DISCOVERY_TIMEOUT, ms);
    timing.join_timeout = Some(discovery_timeout);
    let settings = NetworkSettings {
        role,
        secondaries,
        token,
        primary: primary.map(|(u, _)| u),
        listen: listen.map(|(u, _)| u),
        timing,
        discovery_timeout,
        auto_performers: args.auto_performers || file.and_then(|f| f.auto_performers).unwrap_or(false),
    };
    if settings.token.is_none() {
        if let Some(url) = settings.non_loopback() {
            return Err(format!(
                "{url} is not a loopback address, so a cluster token is required: set {TOKEN_ENV} or <token> in <network> \
                 (the same on every process; it prevents cross-talk between runs, it is not authentication)"
            ));
        }
    }
    Ok(Some(settings))
}

/// One value from the command line and/or the file: they must agree.
fn agree(
    flag: &str,
    cli: Option<&String>,
    file: Option<&(String, String)>,
    element: &str,
) -> Result<Option<(String, String)>, String> {
    match (cli, file) {
        (Some(c), Some((f, at))) if c != f => {
            Err(format!("{flag} says {c} but {element} at {at} says {f}; give one of them"))
        }
        (Some(c), _) => Ok(Some((c.clone(), flag.to_string()))),
        (None, Some((f, at))) => Ok(Some((f.clone(), format!("{element} at {at}")))),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_server_config_str;

    fn file(network: &str) -> NetworkSpec {
        let text = format!("<server_config>\n<plugins/>\n{network}\n</server_config>");
        parse_server_config_str(&text, "d.config").unwrap().network.unwrap()
    }

    fn args(role: Option<&str>, n: Option<u32>) -> NetworkArgs {
        NetworkArgs { role: role.map(String::from), secondaries: n, ..NetworkArgs::default() }
    }

    #[test]
    fn roles_from_the_command_line_in_any_case() {
        let s = resolve(&args(Some("PRIMARY"), Some(3)), None, None).unwrap().unwrap();
        assert_eq!((s.role, s.secondaries), (NetworkRole::PRIMARY, 3));
        assert_eq!(s.timing.peer_timeout, Duration::from_secs(3));
        assert_eq!(s.timing.heartbeat_interval, Duration::from_millis(100));
        assert_eq!(s.timing.step_timeout, Duration::from_secs(10));
        assert_eq!(s.discovery_timeout, Duration::from_secs(60));
        let s = resolve(&args(Some("Secondary"), None), None, None).unwrap().unwrap();
        assert_eq!((s.role, s.secondaries), (NetworkRole::SECONDARY, 0));
        assert_eq!(resolve(&args(None, None), None, None).unwrap(), None);
    }

    #[test]
    fn invalid_combinations_name_their_source() {
        let err = |a: NetworkArgs, f: Option<&NetworkSpec>| resolve(&a, f, None).unwrap_err();
        assert!(err(args(Some("boss"), None), None).contains("--network-role \"boss\""));
        let e = err(args(Some("primary"), None), None);
        assert!(e.contains("--network-role") && e.contains("--network-secondaries N"), "{e}");
        assert!(err(args(Some("primary"), Some(0)), None).contains("at least 1"));
        let e = err(args(None, Some(2)), None);
        assert!(e.contains("--network-secondaries") && e.contains("without a role"), "{e}");
        let e = err(args(Some("secondary"), Some(2)), None);
        assert!(e.contains("--network-secondaries is only for a primary"), "{e}");
        let f = file("<network>\n  <role>primary</role>\n  <secondaries>2</secondaries>\n</network>");
        let e = err(args(Some("secondary"), None), Some(&f));
        assert!(e.contains("--network-role says secondary") && e.contains("d.config:4"), "{e}");
        let e = err(args(Some("primary"), Some(3)), Some(&f));
        assert!(e.contains("says 3") && e.contains("d.config:5"), "{e}");
        let f = file("<network>\n  <role>primary</role>\n</network>");
        let e = err(args(None, None), Some(&f));
        assert!(e.contains("<role> at d.config:4 is primary"), "{e}");
        let f = file("<network><secondaries>2</secondaries></network>");
        let e = err(args(None, None), Some(&f));
        assert!(e.contains("<secondaries> at d.config:3") && e.contains("without a role"), "{e}");
        let mut a = args(Some("primary"), Some(1));
        a.primary = Some("tcp://10.0.0.1:5".into());
        assert!(err(a, None).contains("--network-primary names the primary's address"));
        let mut a = args(Some("secondary"), None);
        a.listen = Some("tcp://10.0.0.1:5".into());
        assert!(err(a, None).contains("--network-listen is where a primary listens"));
    }

    #[test]
    fn the_file_alone_configures_a_run_with_its_timings() {
        let f = file(
            "<network><role>Primary</role><secondaries>2</secondaries><token>t</token><listen>10.1.0.1:0</listen>\
             <heartbeat_period_ms>50</heartbeat_period_ms><peer_timeout_ms>900</peer_timeout_ms>\
             <step_timeout_ms>2000</step_timeout_ms><discovery_timeout_ms>1500</discovery_timeout_ms></network>",
        );
        let s = resolve(&NetworkArgs::default(), Some(&f), None).unwrap().unwrap();
        assert_eq!((s.role, s.secondaries), (NetworkRole::PRIMARY, 2));
        assert_eq!(s.listen.as_deref(), Some("tcp://10.1.0.1:0"));
        assert_eq!(s.token.as_ref().map(|t| t.0.as_str()), Some("t"));
        assert_eq!(s.timing.heartbeat_interval, Duration::from_millis(50));
        assert_eq!(s.timing.peer_timeout, Duration::from_millis(900));
        assert_eq!(s.timing.step_timeout, Duration::from_secs(2));
        assert_eq!(s.discovery_timeout, Duration::from_millis(1500));
        assert_eq!(s.timing.join_timeout, Some(Duration::from_millis(1500)));
    }

    #[test]
    fn a_token_is_required_off_loopback_and_sources_must_agree() {
        let mut a = args(Some("secondary"), None);
        a.primary = Some("tcp://10.0.0.1:7000".into());
        let e = resolve(&a, None, None).unwrap_err();
        assert!(e.contains("tcp://10.0.0.1:7000") && e.contains(TOKEN_ENV) && e.contains("not authentication"), "{e}");
        let s = resolve(&a, None, Some("secret".into())).unwrap().unwrap();
        assert_eq!(s.token, Some(("secret".into(), TOKEN_ENV.into())));
        a.primary = Some("tcp://127.0.0.1:7000".into());
        assert!(resolve(&a, None, None).unwrap().unwrap().token.is_none(), "loopback needs no token");
        let f = file("<network><role>secondary</role><token>one</token></network>");
        let e = resolve(&NetworkArgs::default(), Some(&f), Some("two".into())).unwrap_err();
        assert!(e.contains("<token> at d.config:3") && e.contains(TOKEN_ENV), "{e}");
    }

    #[test]
    fn bad_network_elements_are_errors_with_lines() {
        let text = "<server_config>\n<plugins/>\n<network>\n<role>boss</role>\n<secondaries>0</secondaries>\n\
                    <peer_timeout_ms>soon</peer_timeout_ms>\n<primary>nohost</primary>\n<colour>red</colour>\n\
                    <role>primary</role>\n</network>\n</server_config>";
        let e = parse_server_config_str(text, "bad.config").unwrap_err().to_string();
        for want in [
            "bad.config:4: <role> is \"boss\"",
            "bad.config:5: <secondaries> is \"0\"",
            "bad.config:6: <peer_timeout_ms> is \"soon\"",
            "bad.config:7: <primary>",
            "bad.config:8: unknown element <colour>",
            "bad.config:9: a second <role>",
        ] {
            assert!(e.contains(want), "missing {want:?} in {e}");
        }
        assert!(crate::config::listen_url("eth0:5").is_err());
        assert_eq!(crate::config::listen_url("0.0.0.0:0").unwrap(), "tcp://0.0.0.0:0");
        assert!(
            is_loopback_url("ipc:///tmp/x")
                && is_loopback_url("tcp://127.0.0.1:4")
                && !is_loopback_url("tcp://10.0.0.2:4")
        );
    }
}
