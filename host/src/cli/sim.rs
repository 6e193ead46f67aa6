//! `troupe sim`.

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use troupe::server::{Server, ServerOptions};

/// Arguments of `troupe sim`, spelled as gz-sim's server flags.
#[derive(Args, Debug)]
pub struct SimArgs {
    /// The SDF world file (none: an empty world named `default`).
    file: Option<PathBuf>,
    /// Server only. Troupe is always headless, so this is accepted and changes nothing.
    #[arg(short = 's')]
    server_only: bool,
    /// Run on start (else start paused).
    #[arg(short = 'r')]
    run: bool,
    /// Verbosity 0..4 (0 errors only... 4 debug); `-v` alone is 3. Default 2 (warnings).
    #[arg(short = 'v', num_args = 0..=1, default_missing_value = "3", value_name = "LEVEL")]
    verbose: Option<u8>,
    /// Update rate in Hz (steps per second of wall time), overriding the world's step size /
    /// real-time factor. At least 1.16e-5 (one step a day); 0, negative or NaN is ignored, as
    /// by gz-sim.
    #[arg(short = 'z', value_name = "HZ", allow_negative_numbers = true)]
    rate: Option<f64>,
    /// Stop after this many (unpaused) iterations; 0 runs until stopped.
    #[arg(long, value_name = "N")]
    iterations: Option<u64>,
    /// Use levels and performers.
    #[arg(long)]
    levels: bool,
    /// Distributed role: primary or secondary (any case; implies --levels). Also
    /// `<network><role>` in the server config.
    #[arg(long, value_name = "ROLE")]
    network_role: Option<String>,
    /// Number of secondaries a primary waits for (at least 1).
    #[arg(long, value_name = "N")]
    network_secondaries: Option<u32>,
    /// Secondary on another machine: the primary's join address (`host:port`).
    #[arg(long, value_name = "HOST:PORT", value_parser = troupe::config::peer_url)]
    network_primary: Option<String>,
    /// Primary serving other machines: listen for secondaries on this address (`IP:PORT`,
    /// port 0 lets the system pick; printed at start).
    #[arg(long, value_name = "IP:PORT", value_parser = troupe::config::listen_url)]
    network_listen: Option<String>,
    /// Distributed run: make every dynamic model that is not a performer and in no level a
    /// performer (else such a world is refused: every secondary would simulate its own copy).
    #[arg(long)]
    network_auto_performers: bool,
    /// Start a whole local distributed run: this process is the primary and starts N
    /// secondaries (this same program, same world and flags) in a fresh partition; they
    /// are killed when it exits.
    #[arg(long, value_name = "N", conflicts_with_all = ["network_role", "network_secondaries", "network_primary"])]
    distributed: Option<u32>,
    /// Random seed handed to every system.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Server config XML naming the default systems (replaces config/server.config).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// A physics system library to use instead of the configured one.
    #[arg(long, value_name = "FILE")]
    physics_engine: Option<String>,
    /// Record a state log to this file (see `troupe log diff`; overrides the server
    /// config's `<record>`).
    #[arg(long, value_name = "PATH")]
    record_path: Option<PathBuf>,
    /// Play back a state log written with --record-path instead of simulating a world file
    /// (the world comes from the log; simulating systems are not loaded).
    #[arg(long, value_name = "PATH", conflicts_with = "file")]
    playback: Option<PathBuf>,
    /// Serve topics and services over TCP on this address (an interface's IP, so other
    /// machines can connect) instead of IPC sockets only this machine sees.
    #[arg(long, value_name = "IP")]
    transport_host: Option<String>,
    /// With --transport-host: serve services on this port (the address to give other
    /// machines as `--peer`); without it the system picks one, printed at start.
    #[arg(long, value_name = "PORT", requires = "transport_host")]
    transport_port: Option<u16>,
    /// Meet the node serving at this address on another machine (`host:port`, repeatable;
    /// also `TROUPE_PEERS`, comma-separated).
    #[arg(long = "peer", value_name = "HOST:PORT", value_parser = troupe::config::peer_url)]
    peers: Vec<String>,
}

pub(super) fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => log::LevelFilter::Error,
        1 => log::LevelFilter::Error,
        2 => log::LevelFilter::Warn,
        3 => log::LevelFilter::Info,
        4 => log::LevelFilter::Debug,
        _ => log::LevelFilter::Trace,
    };
    let mut builder = env_logger::Builder::new();
    builder.filter_level(level);
    if let Ok(spec) = std::env::var("RUST_LOG") {
        builder.parse_filters(&spec);
    }
    let _ = builder.format_target(true).try_init();
}

/// Runs `troupe sim`.
pub fn run(args: SimArgs) -> ExitCode {
    let verbose = args.verbose.unwrap_or(2);
    init_logging(verbose);
    let children = match args.distributed {
        Some(0) => {
            troupe::status!("troupe: error: --distributed 0: a distributed run needs at least 1 secondary");
            return ExitCode::from(2);
        }
        Some(n) => match super::distributed::spawn_secondaries(&args_for_children(), n) {
            Ok(c) => Some(c),
            Err(e) => {
                troupe::status!("troupe: error: --distributed: {e}");
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let network = troupe::distributed::settings::NetworkArgs {
        role: if args.distributed.is_some() { Some("primary".into()) } else { args.network_role.clone() },
        secondaries: args.distributed.or(args.network_secondaries),
        primary: args.network_primary.clone(),
        listen: args.network_listen.clone(),
        auto_performers: args.network_auto_performers,
    };
    let code = run_server(&args, network, verbose);
    match children {
        Some(children) => super::distributed::finish(children, code),
        None => code,
    }
}

/// The command line of this process, for `--distributed`'s secondaries.
fn args_for_children() -> Vec<String> {
    std::env::args().skip(1).collect()
}

fn run_server(args: &SimArgs, network: troupe::distributed::settings::NetworkArgs, verbose: u8) -> ExitCode {
    let mut peers = match troupe::transport::peers_from_env() {
        Ok(p) => p,
        Err(e) => {
            troupe::status!("troupe: error: {e}");
            return ExitCode::from(2);
        }
    };
    peers.extend(args.peers.iter().cloned());
    let opts = ServerOptions {
        world_file: args.file.clone(),
        world_text: None,
        run: args.run,
        update_rate: args.rate,
        config: args.config.clone(),
        physics_engine: args.physics_engine.clone(),
        seed: args.seed.unwrap_or(0),
        log_level: verbose.min(5),
        record_path: args.record_path.clone(),
        playback: args.playback.clone(),
        transport: Some(match &args.transport_host {
            Some(ip) => troupe::transport::Bind::Tcp { host: ip.clone(), port: args.transport_port.unwrap_or(0) },
            None => troupe::transport::Bind::Ipc,
        }),
        peers,
        levels: args.levels,
        network,
    };
    let mut server = match Server::load(&opts) {
        Ok(s) => s,
        Err(e) => {
            troupe::status!("troupe: error: {e}");
            return ExitCode::from(2);
        }
    };
    let stop = server.stop_flag();
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(signal, stop.clone()) {
            log::warn!("cannot handle signal {signal}: {e}");
        }
    }
    let worlds: Vec<String> = server.runners().iter().map(|r| r.name().to_string()).collect();
    troupe::status!("troupe: running world(s) {}", worlds.join(", "));
    if let Some(addr) = server.node().service_addr().filter(|a| a.starts_with("tcp://")) {
        let addr = addr.trim_start_matches("tcp://");
        match args.transport_host.as_deref() {
            // Listening everywhere lists loopback; name the port with a placeholder host.
            Some("0.0.0.0") => troupe::status!(
                "troupe: other machines reach this server with --peer <this machine's address>:{}",
                addr.rsplit_once(':').map_or(addr, |(_, p)| p)
            ),
            _ => troupe::status!("troupe: other machines reach this server with --peer {addr}"),
        }
    }
    if !args.run && server.network().is_none_or(|n| n.role == plugin_api::NetworkRole::PRIMARY) {
        let w = &worlds[0];
        troupe::status!(
            "troupe: starting paused (no -r); to run: troupe service -s /world/{w}/control --reqtype gz.msgs.WorldControl --reptype gz.msgs.Boolean --req 'pause: false'"
        );
    }
    if server.network().is_some() {
        return run_distributed(&mut server, args.iterations);
    }
    let bar = progress_bar(args.iterations);
    let result = server.run(args.iterations, |done| {
        if let Some(bar) = &bar {
            bar.set_position(done);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    match result {
        Ok(summary) => {
            println!(
                "iterations: {}  sim time: {:.3} s  wall time: {:.3} s  real-time factor: {:.2}",
                summary.iterations,
                summary.sim_time,
                summary.wall_time,
                summary.real_time_factor()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            troupe::status!("troupe: error: {e}");
            ExitCode::from(1)
        }
    }
}

/// The distributed run's end: 0 when it stopped cleanly, 1 naming the lost peer.
fn run_distributed(server: &mut Server, iterations: Option<u64>) -> ExitCode {
    match server.run_distributed(iterations, |_| {}) {
        Ok((summary, outcome)) if outcome.is_clean() => {
            println!(
                "iterations: {}  sim time: {:.3} s  wall time: {:.3} s  real-time factor: {:.2}  ({})",
                summary.iterations,
                summary.sim_time,
                summary.wall_time,
                summary.real_time_factor(),
                troupe::distributed::driver::describe(&outcome)
            );
            ExitCode::SUCCESS
        }
        Ok((_, outcome)) => {
            troupe::status!(
                "troupe: error: the distributed run failed: {}",
                troupe::distributed::driver::describe(&outcome)
            );
            ExitCode::from(1)
        }
        Err(e) => {
            troupe::status!("troupe: error: {e}");
            ExitCode::from(1)
        }
    }
}

fn progress_bar(iterations: Option<u64>) -> Option<ProgressBar> {
    let n = iterations.filter(|n| *n > 0)?;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(n);
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} iterations  {per_sec}  eta {eta}") {
        bar.set_style(style);
    }
    Some(bar)
}
