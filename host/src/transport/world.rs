//! The services and topics of the host itself: per world `/world/<w>/control`,
//! `/world/<w>/stats` and `/world/<w>/clock` (and `/stats`, `/clock` for the first world),
//! and per server `/gazebo/worlds`, `/server_control` and `/gazebo/resource_paths/{get,add}`.
//!
//! `/world/<w>/system/info` lists the loaded systems. Control requests arrive on the transport's thread; they are queued and applied by the
//! simulation thread at the next step boundary ([`WorldTransport::before_step`]), so a run
//! is the same whichever thread a request came in on.

use super::{Answer, Node, TopicOptions, TransportError};
use crate::runner::WorldRunner;
use plugin_api::msgs::{
    entity, Boolean, Clock, Entity, EntityPluginV, SerializedStateMap, ServerControl, StringMsgV, Time, WorldControl,
    WorldControlState, WorldStatistics,
};
use plugin_api::prost::Message;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// gz-sim throttles `/world/<w>/stats` to 10 messages a second.
const STATS_HZ: f64 = 10.0;

fn time(ns: i64) -> Time {
    Time { sec: ns.div_euclid(1_000_000_000), nsec: ns.rem_euclid(1_000_000_000) as i32 }
}

/// `t` in nanoseconds, `None` when that does not fit the clock's `i64`.
fn time_ns(t: &Time) -> Option<i64> {
    t.sec.checked_mul(1_000_000_000)?.checked_add(i64::from(t.nsec))
}

/// Why a control request cannot be applied, or `None`: a `run_to_sim_time` that does not fit
/// the clock (sim time is `i64` nanoseconds, about ±292 years) is refused when it arrives,
/// and the world goes on (it used to overflow on the simulation thread).
fn control_problem(req: &WorldControl) -> Option<String> {
    let t = req.run_to_sim_time.as_ref()?;
    time_ns(t).is_none().then(|| {
        format!(
            "run_to_sim_time {{ sec: {}, nsec: {} }} does not fit the clock, which ends at {} s",
            t.sec,
            t.nsec,
            i64::MAX / 1_000_000_000
        )
    })
}

fn ok_boolean() -> Answer {
    Answer::Ok(Boolean { data: true, ..Default::default() }.encode_to_vec())
}

/// One world's end of the transport.
pub struct WorldTransport {
    node: Node,
    world: String,
    requests: Receiver<ControlRequest>,
    /// Says whether `requests` holds anything, so that a step without requests costs one
    /// atomic load rather than a channel poll.
    inbox: Arc<ControlInbox>,
    stats: u64,
    clock: u64,
    global: Option<(u64, u64)>,
    stepping: u64,
    run_to_ns: Option<i64>,
    last_sim_ns: i64,
    systems: Arc<Mutex<EntityPluginV>>,
    systems_version: u64,
}

impl WorldTransport {
    /// Advertises the world's topics and offers its control service. `first` is the
    /// server's first world, which also publishes `/stats` and `/clock` unless another
    /// process of the partition already does.
    pub fn open(node: &Node, runner: &WorldRunner, first: bool) -> Result<WorldTransport, TransportError> {
        let world = runner.name();
        let stats_topic = format!("/world/{world}/stats");
        let taken = |topic: &str| node.peers().iter().any(|e| e.topics.iter().any(|(t, _)| t == topic));
        if taken(&stats_topic) {
            return Err(TransportError::WorldTaken {
                world: world.to_string(),
                partition: node.partition().to_string(),
            });
        }
        let stats_type = "gz.msgs.WorldStatistics";
        let stats =
            node.advertise(&stats_topic, stats_type, TopicOptions { reliable: false, max_rate_hz: STATS_HZ })?;
        let clock = node.advertise(&format!("/world/{world}/clock"), "gz.msgs.Clock", TopicOptions::default())?;
        let global = match first {
            true if taken("/stats") || taken("/clock") => {
                log::warn!("another process of partition {:?} publishes /stats or /clock; world {world:?} uses its namespaced topics only", node.partition());
                None
            }
            true => Some((
                node.advertise("/stats", stats_type, TopicOptions { reliable: false, max_rate_hz: STATS_HZ })?,
                node.advertise("/clock", "gz.msgs.Clock", TopicOptions::default())?,
            )),
            false => None,
        };
        let (tx, requests) = channel();
        let tx = Arc::new(ControlInbox { sender: Mutex::new(tx), waiting: AtomicBool::new(false) });
        let inbox = tx.clone();
        offer_control(node, world, "control", "gz.msgs.WorldControl", tx.clone(), |bytes| {
            WorldControl::decode(bytes).map(|req| (req, None))
        })?;
        offer_control(node, world, "control/state", "gz.msgs.WorldControlState", tx, |bytes| {
            WorldControlState::decode(bytes).map(|req| (req.world_control.unwrap_or_default(), req.state))
        })?;
        let systems = Arc::new(Mutex::new(systems_of(runner)));
        let listed = systems.clone();
        node.offer_direct(
            &format!("/world/{world}/system/info"),
            "gz.msgs.Empty",
            "gz.msgs.EntityPlugin_V",
            Arc::new(move |_: &[u8]| Answer::Ok(listed.lock().unwrap().encode_to_vec())),
        )?;
        Ok(WorldTransport {
            systems,
            systems_version: runner.systems_version(),
            node: node.clone(),
            world: world.to_string(),
            requests,
            inbox,
            stats,
            clock,
            global,
            stepping: 0,
            run_to_ns: None,
            last_sim_ns: 0,
        })
    }

    /// Applies the control requests that arrived since the last step, in arrival order
    /// (a `control/state` request's state first, then its control part)
    /// (gz-sim's semantics: every request sets the pause state; `step` and `multi_step`
    /// run that many iterations and pause again, only when the request leaves the world
    /// paused; `reset` rewinds everything or only the clock).
    pub fn before_step(&mut self, runner: &mut WorldRunner) {
        let arrived: Vec<ControlRequest> = if self.inbox.waiting.swap(false, Ordering::Acquire) {
            self.requests.try_iter().collect()
        } else {
            Vec::new()
        };
        for (req, state) in arrived {
            if let Some(state) = state {
                // control/state: the state first, as gz-sim applies it at the start of the step.
                if let Err(e) = crate::state::apply_state(&mut runner.ecm, &state) {
                    log::warn!("world {:?}: the state of a control/state request was not applied: {e}", self.world);
                }
            }
            runner.clock.paused = req.pause;
            if let Some(reset) = &req.reset {
                if reset.all {
                    runner.request_reset();
                    self.stepping = 0;
                    self.run_to_ns = None;
                } else if reset.time_only {
                    runner.clock.rewind();
                } else if reset.model_only {
                    log::warn!("world {:?}: reset.model_only is not supported (as in gz-sim); ignored", self.world);
                }
            }
            if req.seed != 0 {
                log::warn!(
                    "world {:?}: changing the seed at run time is not supported (as in gz-sim); ignored",
                    self.world
                );
            }
            let steps = if req.multi_step > 0 { u64::from(req.multi_step) } else { u64::from(req.step) };
            if req.pause && steps > 0 {
                self.stepping += steps;
            }
            // The service refused targets the clock cannot hold (`control_problem`).
            if let Some(target) = req.run_to_sim_time.as_ref().and_then(time_ns) {
                if target > runner.clock.info().sim_time_ns {
                    self.run_to_ns = Some(target);
                    runner.clock.paused = false;
                }
            }
        }
        if self.stepping > 0 {
            runner.clock.paused = false;
        }
    }

    /// Counts down stepping and run-to-time, then publishes the clock (every iteration)
    /// and the statistics (at most 10 a second).
    pub fn after_step(&mut self, runner: &mut WorldRunner, wall: Duration) {
        if runner.systems_version() != self.systems_version {
            self.systems_version = runner.systems_version();
            *self.systems.lock().unwrap() = systems_of(runner);
        }
        let info = runner.clock.info();
        let stepping_now = self.stepping > 0;
        if stepping_now && !info.paused {
            self.stepping -= 1;
            if self.stepping == 0 {
                runner.clock.paused = true;
            }
        }
        if let Some(target) = self.run_to_ns {
            if info.sim_time_ns >= target {
                runner.clock.paused = true;
                self.run_to_ns = None;
            }
        }
        // One check for the usual case of nobody listening at all, rather than four.
        let listening = self.node.may_have_subscribers();
        let wants_clock = listening
            && (self.node.has_subscribers(self.clock)
                || self.global.is_some_and(|(_, c)| self.node.has_subscribers(c)));
        if wants_clock {
            let system = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
            let clock = Clock {
                system: Some(time(system.as_nanos() as i64)),
                real: Some(time(info.real_time_ns)),
                sim: Some(time(info.sim_time_ns)),
                ..Default::default()
            };
            let bytes = clock.encode_to_vec();
            self.publish(self.clock, &bytes);
            if let Some((_, c)) = self.global {
                self.publish(c, &bytes);
            }
        }
        let sim_delta = info.sim_time_ns - self.last_sim_ns;
        self.last_sim_ns = info.sim_time_ns;
        let wants_stats = listening
            && (self.node.has_subscribers(self.stats)
                || self.global.is_some_and(|(s, _)| self.node.has_subscribers(s)));
        if wants_stats {
            let rtf = if wall.is_zero() { 0.0 } else { sim_delta as f64 * 1e-9 / wall.as_secs_f64() };
            let stats = WorldStatistics {
                sim_time: Some(time(info.sim_time_ns)),
                real_time: Some(time(info.real_time_ns)),
                paused: runner.clock.paused,
                iterations: info.iterations,
                real_time_factor: rtf,
                step_size: Some(time(info.dt_ns)),
                ..Default::default()
            };
            let bytes = stats.encode_to_vec();
            self.publish(self.stats, &bytes);
            if let Some((s, _)) = self.global {
                self.publish(s, &bytes);
            }
        }
    }

    fn publish(&self, publisher: u64, bytes: &[u8]) {
        if let Err(e) = self.node.publish(publisher, bytes) {
            log::warn!("world {:?}: {e}", self.world);
        }
    }
}

/// A control request as the simulation thread takes it: the control part, and the state to
/// apply first (`control/state` only).
type ControlRequest = (WorldControl, Option<SerializedStateMap>);

/// Where the transport's thread leaves control requests for the simulation thread.
struct ControlInbox {
    sender: Mutex<Sender<ControlRequest>>,
    /// Set after each send, cleared by the simulation thread before it takes them.
    waiting: AtomicBool,
}

/// Offers `/world/<world>/<service>`, which queues what `decode` reads for the next step
/// boundary and answers true, or false with a warning when the bytes are not a `req_type`
/// (naming the type) or the request cannot be applied (saying why).
fn offer_control(
    node: &Node,
    world: &str,
    service: &str,
    req_type: &'static str,
    queue: Arc<ControlInbox>,
    decode: fn(&[u8]) -> Result<ControlRequest, plugin_api::prost::DecodeError>,
) -> Result<(), TransportError> {
    let name = format!("/world/{world}/{service}");
    let label = name.clone();
    node.offer_direct(
        &name,
        req_type,
        "gz.msgs.Boolean",
        Arc::new(move |bytes: &[u8]| match decode(bytes) {
            Ok(req) => match control_problem(&req.0) {
                Some(why) => {
                    log::warn!("{label}: request refused: {why}");
                    Answer::Failed(Boolean::default().encode_to_vec())
                }
                None => {
                    // The world is gone only when the server is stopping; the answer is moot.
                    let _ = queue.sender.lock().unwrap().send(req);
                    queue.waiting.store(true, Ordering::Release);
                    ok_boolean()
                }
            },
            Err(e) => {
                log::warn!("{label}: a request that is not a {req_type} was refused: {e}");
                Answer::Failed(Boolean::default().encode_to_vec())
            }
        }),
    )
}

/// `/world/<w>/system/info`'s answer: every loaded system (gz-sim lists them under the
/// world entity; the entity each is attached to is not carried).
fn systems_of(runner: &WorldRunner) -> EntityPluginV {
    EntityPluginV {
        entity: Some(Entity {
            id: runner.world_entity().0,
            name: runner.name().to_string(),
            r#type: entity::Type::World as i32,
            ..Default::default()
        }),
        plugins: runner.plugins().into_iter().map(|(_, p)| p).collect(),
        ..Default::default()
    }
}

/// Offers the server's own services: `/gazebo/worlds`, `/server_control` (only `stop`, as
/// gz-sim; it sets `stop`, and the run ends at the next step boundary) and
/// `/gazebo/resource_paths/get` / `add` over `paths`.
pub fn offer_server_services(
    node: &Node,
    worlds: Vec<String>,
    stop: Arc<AtomicBool>,
    paths: Arc<Mutex<Vec<PathBuf>>>,
) -> Result<(), TransportError> {
    node.offer_direct(
        "/gazebo/worlds",
        "gz.msgs.Empty",
        "gz.msgs.StringMsg_V",
        Arc::new(move |_: &[u8]| Answer::Ok(StringMsgV { data: worlds.clone(), ..Default::default() }.encode_to_vec())),
    )?;
    node.offer_direct(
        "/server_control",
        "gz.msgs.ServerControl",
        "gz.msgs.Boolean",
        Arc::new(move |bytes: &[u8]| match ServerControl::decode(bytes) {
            Ok(req) if req.stop => {
                log::info!("/server_control: stop requested");
                stop.store(true, Ordering::SeqCst);
                ok_boolean()
            }
            Ok(_) => {
                log::warn!("/server_control: only stop is supported (as in gz-sim)");
                Answer::Failed(Boolean::default().encode_to_vec())
            }
            Err(e) => {
                log::warn!("/server_control: the request is not a gz.msgs.ServerControl: {e}");
                Answer::Failed(Boolean::default().encode_to_vec())
            }
        }),
    )?;
    let read = paths.clone();
    node.offer_direct(
        "/gazebo/resource_paths/get",
        "gz.msgs.Empty",
        "gz.msgs.StringMsg_V",
        Arc::new(move |_: &[u8]| {
            let data = read.lock().unwrap().iter().map(|p| p.display().to_string()).collect();
            Answer::Ok(StringMsgV { data, ..Default::default() }.encode_to_vec())
        }),
    )?;
    node.offer_direct(
        "/gazebo/resource_paths/add",
        "gz.msgs.StringMsg_V",
        "gz.msgs.Empty",
        Arc::new(move |bytes: &[u8]| match StringMsgV::decode(bytes) {
            Ok(req) => {
                let mut list = paths.lock().unwrap();
                for p in req.data.iter().flat_map(|d| std::env::split_paths(d).collect::<Vec<_>>()) {
                    if !p.as_os_str().is_empty() && !list.contains(&p) {
                        list.push(p);
                    }
                }
                Answer::Ok(Vec::new())
            }
            Err(e) => {
                Answer::Error(format!("/gazebo/resource_paths/add: the request is not a gz.msgs.StringMsgV: {e}"))
            }
        }),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `run_to_sim_time { sec: i64::MAX }` overflowed the simulation thread; such targets are
    /// refused with the reason, and those that fit are kept to the nanosecond.
    #[test]
    fn run_to_sim_time_must_fit_the_clock() {
        let run_to = |sec, nsec| WorldControl { run_to_sim_time: Some(Time { sec, nsec }), ..Default::default() };
        assert_eq!(control_problem(&WorldControl::default()), None);
        assert_eq!(control_problem(&run_to(9_223_372_035, 0)), None);
        assert_eq!(time_ns(&Time { sec: 2, nsec: 5 }), Some(2_000_000_005));
        assert_eq!(time_ns(&Time { sec: -1, nsec: 0 }), Some(-1_000_000_000));
        for (sec, nsec) in [(i64::MAX, 0), (9_223_372_036, 999_999_999), (i64::MIN, 0)] {
            let why = control_problem(&run_to(sec, nsec)).unwrap_or_default();
            assert!(why.contains(&format!("run_to_sim_time {{ sec: {sec}, nsec: {nsec} }}")), "{why:?}");
        }
    }
}
