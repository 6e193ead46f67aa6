//! The server: loads a world file into one runner per world, chooses and loads their
//! systems, and steps every runner in lockstep with real-time pacing until told to stop.

use crate::config::{self, ConfigError, DefaultRoles, Placement, RequestedPlugin, Selected, Target};
use crate::ecm::Ecm;
use crate::factory::{self, AttachedPlugin};
use crate::plugin::{PluginLoader, SearchPath};
use crate::runner::{Clock, RunError, SystemRequest, WorldRunner};
use crate::sdf::{self, SdfDocument, SdfError, WorldSdf};
use crate::state::log::{LogError, RecordOptions, DEFAULT_KEYFRAME_INTERVAL};
use crate::state::playback::{self, Player};
use crate::transport::world::{self, WorldTransport};
use crate::transport::{registry, Bind, Node, TransportError};
use plugin_api::components::{Physics, Sensor, World};
use plugin_api::{Component, EntityId, NetworkRole, SystemInfo, SystemKind, Which};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod pacing;
mod systems;

pub use systems::request_for;
use systems::*;

/// How to start a server.
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// The SDF file; `None` runs an empty world called `default` (as gz-sim).
    pub world_file: Option<PathBuf>,
    /// SDF text instead of a file (the test fixture), with a label for messages.
    pub world_text: Option<(String, String)>,
    /// Start running (`-r`); else start paused.
    pub run: bool,
    /// Iterations per second (`-z`), overriding step size / real-time factor.
    pub update_rate: Option<f64>,
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// `--physics-engine FILE`: replaces the physics system.
    pub physics_engine: Option<String>,
    /// `--seed`.
    pub seed: u64,
    /// Verbosity of plugins' logs forwarded to the host (0 off .. 5 trace).
    pub log_level: u8,
    /// `--record-path`: record a state log (overrides the config's `<record_path>`).
    pub record_path: Option<PathBuf>,
    /// `--playback`: replay this state log instead of loading and simulating a world file.
    pub playback: Option<PathBuf>,
    /// Open the transport's sockets, listening as this says, in the partition of the
    /// environment; `None` keeps topics and services inside the process (tests). The
    /// config's `<transport><host>` applies when this is [`Bind::Ipc`].
    pub transport: Option<Bind>,
    /// Service addresses of nodes on other machines to meet (`tcp://host:port`), besides
    /// the config's `<transport><peer>`s.
    pub peers: Vec<String>,
    /// `--levels`: use levels and performers (the config's `<levels>` can also turn them on).
    pub levels: bool,
    /// `--network-role`, `--network-secondaries`, `--network-primary`, `--network-listen`:
    /// combined with the config's `<network>` into the distributed settings. A role implies
    /// levels.
    pub network: crate::distributed::settings::NetworkArgs,
}

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The world file is broken.
    #[error(transparent)]
    Sdf(#[from] SdfError),
    /// The server config is broken.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A system could not be loaded or configured.
    #[error(transparent)]
    Run(#[from] RunError),
    /// Two worlds with one name.
    #[error("{0}")]
    World(String),
    /// The state log could not be started.
    #[error("cannot record: {0}")]
    Log(#[from] LogError),
    /// The transport could not start.
    #[error("transport: {0}")]
    Transport(#[from] TransportError),
    /// The command line and the server config disagree on where to listen.
    #[error("transport: {0}")]
    TransportSettings(String),
    /// The distributed settings are invalid or do not fit the world.
    #[error("distributed: {0}")]
    Network(String),
    /// The update rate (`-z`) cannot pace a run.
    #[error("{0}")]
    UpdateRate(String),
    /// Several plugin libraries could not be loaded: all are named at once.
    #[error("{} plugins could not be loaded:\n  {}", .0.len(), .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n  "))]
    Plugins(Vec<RunError>),
}

/// What a run did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunSummary {
    /// Iterations simulated (unpaused) by the first world.
    pub iterations: u64,
    /// Its sim time, s.
    pub sim_time: f64,
    /// Wall time of the run, s.
    pub wall_time: f64,
}

impl RunSummary {
    /// Sim time over wall time.
    pub fn real_time_factor(&self) -> f64 {
        if self.wall_time > 0.0 {
            self.sim_time / self.wall_time
        } else {
            0.0
        }
    }
}

/// A loaded server.
pub struct Server {
    pub(crate) runners: Vec<WorldRunner>,
    pub(crate) loader: PluginLoader,
    /// `-z`'s fixed period; else the worlds' step size / real-time factor decide.
    period: Option<Duration>,
    stop: Arc<AtomicBool>,
    node: Node,
    pub(crate) transports: Vec<WorldTransport>,
    network: Option<crate::distributed::settings::NetworkSettings>,
}

impl Server {
    /// Parses the world, builds each world's ECM, and loads and configures its systems.
    pub fn load(opts: &ServerOptions) -> Result<Server, ServerError> {
        // Before anything is loaded: a bad `-z` fails at once.
        let period = pacing::update_period(opts.update_rate).map_err(ServerError::UpdateRate)?;
        let source = config::config_source(opts.config.as_deref(), |k| std::env::var(k).ok(), &default_config_path());
        let config_set = config::load_config_set(&source)?;
        let env_path = std::env::var("TROUPE_SYSTEM_PLUGIN_PATH").ok();
        let search = SearchPath::new(env_path.as_deref(), &config_set.plugin_paths);
        let mut loader = PluginLoader::new(search, opts.log_level);
        let network = crate::distributed::settings::resolve(
            &opts.network,
            config_set.network.as_ref(),
            std::env::var(crate::distributed::settings::TOKEN_ENV).ok(),
        )
        .map_err(ServerError::Network)?;
        let secondary = network.as_ref().is_some_and(|n| n.role == NetworkRole::SECONDARY);
        if network.is_some() && opts.playback.is_some() {
            return Err(ServerError::Network(
                "a distributed run simulates a world file; --playback cannot be distributed".into(),
            ));
        }
        // A secondary's systems publish their topics (sensors, model systems: the secondary
        // that simulates a model publishes them under their standalone names), but it serves
        // no world services or topics of its own: world control, stats and clock go through
        // the primary (docs/distributed.md), and its world would clash with the primary's there.
        let transport_settings = network_settings(opts, &config_set)?;
        let node = match transport_settings {
            Some((bind, peers)) => {
                let partition = registry::partition();
                let node = Node::open_with_peers(&partition, &bind, peers)?;
                log::info!("transport: partition {partition:?}, node {}", node.id());
                node
            }
            None => Node::local(),
        };
        let mut runners = match &opts.playback {
            Some(log) => vec![load_playback(opts, log, &config_set, &mut loader, &node)?],
            None => load_world_file(opts, &config_set, &mut loader, &node, network.as_ref())?,
        };
        if let Some(record) = record_options(opts, &config_set) {
            if runners.len() != 1 {
                return Err(ServerError::World(format!(
                    "a state log records one world, and this file has {}: {}",
                    runners.len(),
                    runners.iter().map(|r| r.name().to_string()).collect::<Vec<_>>().join(", ")
                )));
            }
            runners[0].start_recording(&record)?;
            log::info!("recording world {:?} to {}", runners[0].name(), record.path.display());
        }
        let stop = Arc::new(AtomicBool::new(false));
        let world_node = if secondary { Node::local() } else { node.clone() };
        let mut transports = Vec::with_capacity(runners.len());
        for (i, runner) in runners.iter().enumerate() {
            transports.push(WorldTransport::open(&world_node, runner, i == 0)?);
        }
        let resource_paths =
            std::env::var_os("GZ_SIM_RESOURCE_PATH").map(|v| std::env::split_paths(&v).collect()).unwrap_or_default();
        world::offer_server_services(
            &world_node,
            runners.iter().map(|r| r.name().to_string()).collect(),
            stop.clone(),
            Arc::new(Mutex::new(resource_paths)),
        )?;
        Ok(Server { runners, loader, period, stop, node, transports, network })
    }

    /// The runners, one per world, in file order.
    pub fn runners(&self) -> &[WorldRunner] {
        &self.runners
    }
    /// The runners, mutably.
    pub fn runners_mut(&mut self) -> &mut [WorldRunner] {
        &mut self.runners
    }
    /// The transport node of this server.
    pub fn node(&self) -> &Node {
        &self.node
    }
    /// The distributed settings, when this server is part of a distributed run.
    pub fn network(&self) -> Option<&crate::distributed::settings::NetworkSettings> {
        self.network.as_ref()
    }

    /// Time between steps (see `period`), for the distributed driver.
    pub(crate) fn step_period(&self) -> Option<Duration> {
        self.period()
    }

    /// A flag that stops the run at the next iteration when set (Ctrl-C, SIGTERM).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Time between steps: `-z`'s, else the slowest world's step size / real-time factor
    /// (they may change while running); `None` runs as fast as possible.
    fn period(&self) -> Option<Duration> {
        let p = self
            .period
            .unwrap_or_else(|| self.runners.iter().map(|r| r.clock.update_period()).max().unwrap_or_default());
        (!p.is_zero()).then_some(p)
    }

    /// Steps every world once (lockstep), `wall` being the real time since the last step.
    pub fn step_once(&mut self, wall: Duration) -> Result<(), RunError> {
        for (runner, transport) in self.runners.iter_mut().zip(&mut self.transports) {
            transport.before_step(runner);
            runner.step(&mut self.loader, wall)?;
            transport.after_step(runner, wall);
        }
        Ok(())
    }

    /// Runs until `iterations` more unpaused iterations (0 or None: until stopped), a stop
    /// request, or an error. `progress` gets the iterations done so far after each step.
    pub fn run(&mut self, iterations: Option<u64>, mut progress: impl FnMut(u64)) -> Result<RunSummary, RunError> {
        let target = iterations.filter(|n| *n > 0);
        let start_iterations = self.runners[0].clock.iterations();
        let started = Instant::now();
        let mut last = started;
        let mut deadline = started;
        loop {
            let done = self.runners[0].clock.iterations() - start_iterations;
            let asked_to_stop = self.stop.load(Ordering::SeqCst) || self.runners.iter().any(|r| r.stop_requested());
            if asked_to_stop || target.is_some_and(|n| done >= n) {
                break;
            }
            let now = Instant::now();
            let wall = now - last;
            last = now;
            if let Err(e) = self.step_once(wall) {
                // Let every other system see the end of the run (flush logs, files) before
                // the error ends it; their own errors now would only hide the first one.
                for runner in &mut self.runners {
                    let _ = runner.shutdown();
                }
                return Err(e);
            }
            progress(self.runners[0].clock.iterations() - start_iterations);
            if self.runners[0].clock.paused {
                std::thread::sleep(Duration::from_millis(1));
                deadline = Instant::now();
            } else if let Some(period) = self.period() {
                // However long the period, a stop request ends the wait within a few ms.
                deadline = pacing::next_due(deadline, period, Instant::now());
                pacing::sleep_until(deadline, || self.stop.load(Ordering::SeqCst));
            }
        }
        for runner in &mut self.runners {
            runner.shutdown()?;
        }
        let first = &self.runners[0];
        Ok(RunSummary {
            iterations: first.clock.iterations() - start_iterations,
            sim_time: first.clock.info().sim_time(),
            wall_time: started.elapsed().as_secs_f64(),
        })
    }
}

/// `--record-path` wins over the config's `<record>`; the keyframe interval comes from the
/// config when it sets one.
/// Parses the world file (or text; an empty world without either) and loads one runner per
/// world.
fn load_world_file(
    opts: &ServerOptions,
    config_set: &config::ServerConfigFile,
    loader: &mut PluginLoader,
    node: &Node,
    network: Option<&crate::distributed::settings::NetworkSettings>,
) -> Result<Vec<WorldRunner>, ServerError> {
    let doc = match (&opts.world_text, &opts.world_file) {
        (Some((text, label)), _) => sdf::parse_str(text, label)?,
        (None, Some(path)) => sdf::parse_file(path)?,
        (None, None) => sdf::parse_str(EMPTY_WORLD, "<empty world>")?,
    };
    for w in &doc.warnings {
        log::warn!("{w}");
    }
    if let Some(n) = network {
        // Seed 001: a distributed process has one simulation runner.
        if doc.worlds.len() > 1 {
            let names: Vec<String> = doc.worlds.iter().map(|w| format!("{:?} ({})", w.name, w.origin)).collect();
            return Err(ServerError::Network(format!(
                "a distributed run ({}) simulates one world, and this file has {}: {}",
                n.role.as_str(),
                doc.worlds.len(),
                names.join(", ")
            )));
        }
    }
    let mut names = HashSet::new();
    let mut runners = Vec::new();
    for world in &doc.worlds {
        if !names.insert(world.name.clone()) {
            return Err(ServerError::World(format!("{}: a second world named {:?}", world.origin, world.name)));
        }
        runners.push(load_world(&doc, world, config_set, opts, loader, node, network)?);
    }
    if runners.is_empty() {
        return Err(ServerError::World("the SDF holds no <world>".into()));
    }
    Ok(runners)
}

/// Loads a state log for playback: the world comes from the log's first state, and the
/// config's systems run except those that change the simulation ([`SystemInfo::simulates`]).
fn load_playback(
    opts: &ServerOptions,
    log: &Path,
    config_set: &config::ServerConfigFile,
    loader: &mut PluginLoader,
    node: &Node,
) -> Result<WorldRunner, ServerError> {
    if opts.world_file.is_some() || opts.world_text.is_some() {
        return Err(ServerError::World(
            "--playback replays the world its log holds; do not give a world file too".into(),
        ));
    }
    if record_options(opts, config_set).is_some() {
        return Err(ServerError::World(
            "cannot record while playing a log back (--record-path or <record> with --playback)".into(),
        ));
    }
    let mut player = Player::open(log).map_err(RunError::from)?;
    let ecm = playback::initial_ecm(&mut player).map_err(RunError::from)?;
    let no_world = || ServerError::World(format!("{}: the log's first state has no world entity", log.display()));
    let world_entity = ecm.query(Which::ALL, &[World::ID]).into_iter().next().ok_or_else(no_world)?;
    let physics = ecm.get::<Physics>(world_entity).unwrap_or_default();
    let name = player.header().world.clone();
    let clock = Clock::new(physics.max_step_size, physics.real_time_factor, !opts.run);
    let mut runner = WorldRunner::new(name.clone(), world_entity, ecm, clock);
    runner.seed = opts.seed;
    runner.set_node(node.clone());
    log::info!("playing back world {name:?} from {} ({} iterations)", log.display(), player.last_iteration());

    let mut requests = Vec::new();
    for s in config::select_systems(&[], &config_set.plugins, true).load {
        let chosen = describe(loader, s);
        if chosen.info.simulates || opts.physics_engine.as_deref() == Some(chosen.selected.library.as_str()) {
            let s = &chosen.selected;
            log::info!("playback: {} ({}) skipped: the log replaces what it would simulate", s.name, s.library);
            continue;
        }
        requests.extend(resolve_selected(&runner, &name, chosen.selected));
    }
    add_systems(&mut runner, loader, requests)?;
    runner.finish_load();
    runner.start_playback(player);
    Ok(runner)
}

/// Where the server listens and which peers it meets: the command line, else the config's
/// `<transport>`; peers from both.
fn network_settings(
    opts: &ServerOptions,
    config: &config::ServerConfigFile,
) -> Result<Option<(Bind, Vec<String>)>, ServerError> {
    let Some(cli) = &opts.transport else { return Ok(None) };
    let mut peers = opts.peers.clone();
    let Some(spec) = &config.transport else { return Ok(Some((cli.clone(), peers))) };
    for p in &spec.peers {
        if !peers.contains(p) {
            peers.push(p.clone());
        }
    }
    let file_bind = spec.host.as_ref().map(|host| Bind::Tcp { host: host.clone(), port: spec.port.unwrap_or(0) });
    let bind = match (cli, file_bind) {
        (_, None) => cli.clone(),
        (Bind::Ipc, Some(file)) => file,
        // One may leave the port to the system while the other names it.
        (Bind::Tcp { host, port }, Some(Bind::Tcp { host: fh, port: fp })) if *host == fh && (*port == 0 || fp == 0 || *port == fp) => {
            Bind::Tcp { host: fh, port: (*port).max(fp) }
        }
        (Bind::Tcp { host, port }, Some(Bind::Tcp { host: fh, port: fp })) => {
            return Err(ServerError::TransportSettings(format!(
                "the command line listens on {host} port {port} but <transport> at {} says {fh} port {fp}; give one of them",
                spec.origin
            )))
        }
        (_, Some(file)) => file,
    };
    Ok(Some((bind, peers)))
}

fn record_options(opts: &ServerOptions, config: &config::ServerConfigFile) -> Option<RecordOptions> {
    let path = opts.record_path.clone().or_else(|| config.record.as_ref().map(|r| r.path.clone()))?;
    let keyframe_interval =
        config.record.as_ref().and_then(|r| r.keyframe_interval).unwrap_or(DEFAULT_KEYFRAME_INTERVAL);
    Some(RecordOptions { path, keyframe_interval })
}

const EMPTY_WORLD: &str = r#"<?xml version="1.0"?><sdf version="1.6"><world name="default"/></sdf>"#;

/// `config/server.config` of the source tree this binary was built from, or of an install
/// (`<exe dir>/../share/troupe/server.config`).
pub fn default_config_path() -> PathBuf {
    let installed = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("../share/troupe/server.config")))
        .filter(|p| p.is_file());
    installed.unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/server.config"))
}

/// Whether `--levels` or the config's `<levels>true</levels>` asks for levels (a network
/// role turns them on too: a distributed run divides work by level; see `load_world`).
pub fn levels_enabled(opts: &ServerOptions, config: &config::ServerConfigFile) -> bool {
    opts.levels || config.levels == Some(true)
}

fn load_world(
    doc: &SdfDocument,
    world: &WorldSdf,
    config_set: &config::ServerConfigFile,
    opts: &ServerOptions,
    loader: &mut PluginLoader,
    node: &Node,
    network: Option<&crate::distributed::settings::NetworkSettings>,
) -> Result<WorldRunner, ServerError> {
    let config_plugins = &config_set.plugins;
    let levels_on = levels_enabled(opts, config_set) || network.is_some();
    if levels_on && world.levels_plugin.is_none() {
        log::warn!(
            "{}: levels are on but world {:?} has no <plugin name=\"gz::sim\"> with levels and performers; \
             everything is the default level (performers can still be added with /world/{}/level/set_performer)",
            world.origin,
            world.name,
            world.name
        );
    }
    let levels = if levels_on { factory::Levels::On } else { factory::Levels::Off };
    let mut ecm = Ecm::new();
    let ecm_error = |e: plugin_api::EcmError| ServerError::World(format!("{}: {}", world.origin, e.message));
    let (world_entity, attached) =
        factory::create_world(&mut ecm, world, doc.entity_count, levels).map_err(ecm_error)?;
    let clock = Clock::new(world.physics.max_step_size, world.physics.real_time_factor, !opts.run);
    let mut runner = WorldRunner::new(world.name.clone(), world_entity, ecm, clock);
    runner.seed = opts.seed;
    runner.set_node(node.clone());
    runner.set_world_sdf(Arc::new(world.clone()));
    if let Some(role) = network.map(|n| n.role) {
        // Both roles keep each step's changes: a secondary answers with them, the primary
        // forwards what its own systems did (`distributed::split`).
        runner.set_network_role(role);
        runner.set_split_ownership(Arc::new(crate::distributed::split::SplitOwnership::new()));
        runner.capture_changes(true);
    }

    let requested: Vec<RequestedPlugin> = world
        .plugins
        .iter()
        .map(|p| RequestedPlugin {
            filename: p.filename.clone(),
            name: p.name.clone(),
            xml: p.xml.clone(),
            origin: p.origin.to_string(),
            target: Target::World,
            roles: p.roles,
        })
        .collect();
    let selection = config::select_systems(&requested, config_plugins, world.include_server_config_plugins);
    for note in &selection.notes {
        log::info!("world {:?}: {note}", world.name);
    }
    for (gz, origin) in &selection.skipped_unimplemented {
        config::warn_once(gz, &format!("{origin}: gz-sim system {gz} is not implemented by Troupe; skipped"));
    }
    let mut selected = selection.load;
    engine_from_xml(&mut selected);
    let mut chosen: Vec<Chosen> = selected.into_iter().map(|s| describe(loader, s)).collect();
    one_physics(&mut chosen);
    if let Some(engine) = &opts.physics_engine {
        swap_physics(&mut chosen, engine, loader);
    }
    add_sensors_if_needed(&runner, &mut chosen, loader);
    one_sensors(&mut chosen);
    add_level_manager_if_needed(world, levels_on, &mut chosen, loader);
    let role = crate::distributed::settings::network_role_of(network.map(|n| n.role));
    let (chosen, attached, skipped) = keep_for_role(role, chosen, attached);
    if !skipped.is_empty() {
        log::info!(
            "world {:?} ({role}): {} system(s) not run in this role:\n  {}",
            world.name,
            skipped.len(),
            skipped.join("\n  ")
        );
    }

    // World-file world plugins and config plugins (selection order), then model and sensor
    // plugins of the world file in document order.
    let mut requests = Vec::new();
    for s in chosen {
        if let Some(req) = resolve_selected(&runner, &world.name, s) {
            requests.push(req);
        }
    }
    requests.extend(attached.into_iter().filter_map(request_for_attached));
    add_systems(&mut runner, loader, requests)?;
    runner.finish_load();
    Ok(runner)
}

#[cfg(test)]
mod network_settings_tests {
    use super::*;

    fn with(transport: &str) -> config::ServerConfigFile {
        config::parse_server_config_str(&format!("<server_config><plugins/>{transport}</server_config>"), "n.config")
            .unwrap()
    }

    fn tcp(host: &str, port: u16) -> Bind {
        Bind::Tcp { host: host.into(), port }
    }

    #[test]
    fn the_command_line_and_the_config_combine() {
        let opts = |bind: Option<Bind>| ServerOptions {
            transport: bind,
            peers: vec!["tcp://a:1".into()],
            ..Default::default()
        };
        let file =
            with("<transport><host>10.0.0.5</host><port>7000</port><peer>b:2</peer><peer>a:1</peer></transport>");
        // Without a network (the fixture) nothing is opened, whatever the file says.
        assert_eq!(network_settings(&opts(None), &file).unwrap(), None);
        // The file says where to listen when the command line does not; peers are merged.
        let (bind, peers) = network_settings(&opts(Some(Bind::Ipc)), &file).unwrap().unwrap();
        assert_eq!(bind, tcp("10.0.0.5", 7000));
        assert_eq!(peers, ["tcp://a:1", "tcp://b:2"]);
        // The same host with the port left to the system on one side is no disagreement.
        assert_eq!(network_settings(&opts(Some(tcp("10.0.0.5", 0))), &file).unwrap().unwrap().0, tcp("10.0.0.5", 7000));
        // Without <transport> the command line stands.
        assert_eq!(
            network_settings(&opts(Some(tcp("127.0.0.1", 0))), &with("")).unwrap().unwrap().0,
            tcp("127.0.0.1", 0)
        );
    }

    #[test]
    fn a_command_line_and_a_file_that_disagree_are_an_error_naming_both() {
        let opts = ServerOptions { transport: Some(tcp("127.0.0.1", 0)), ..Default::default() };
        let err =
            network_settings(&opts, &with("<transport><host>10.0.0.5</host></transport>")).unwrap_err().to_string();
        assert!(err.contains("127.0.0.1") && err.contains("10.0.0.5") && err.contains("n.config:1"), "{err}");
    }
}
