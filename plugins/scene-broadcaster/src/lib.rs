//! # troupe_scene_broadcaster — the world's scene, poses and state on the transport
//!
//! Troupe's system for gz-sim's `gz-sim-scene-broadcaster-system`: what a GUI needs to draw
//! the world and follow it. World `w` gets (see `docs/scene-broadcaster.md`):
//!
//! | name | kind | message | when |
//! |---|---|---|---|
//! | `/world/w/scene/info` | service | Empty → `gz.msgs.Scene` | scene properties, every model (links, nested models) and light |
//! | `/world/w/state` | service | Empty → `gz.msgs.SerializedStepMap` | the full state; also sent on the `state` topic |
//! | `/world/w/scene/info` | topic, reliable | `gz.msgs.Scene` | models and lights new in a step, each once |
//! | `/world/w/scene/deletion` | topic, reliable | `gz.msgs.UInt32_V` | ids of models and lights removed in a step |
//! | `/world/w/state` | topic, reliable | `gz.msgs.SerializedStepMap` | full for a first subscriber, a request or a reset; then changes, at once on one-time changes, else at `<state_hertz>` |
//! | `/world/w/pose/info` | topic | `gz.msgs.Pose_V` | every model, link, visual and light, at most 60 a second |
//! | `/world/w/dynamic_pose/info` | topic | `gz.msgs.Pose_V` | non-static models and their links, at most `<dynamic_pose_hertz>` a second |
//!
//! Rates are per second of wall time, as gz-transport's throttled publishers count them.
//! Nothing is built for a topic nobody subscribes to.
//!
//! ## Parameters
//!
//! | element | type | default | meaning |
//! |---|---|---|---|
//! | `<dynamic_pose_hertz>` | number > 0 | 60 | `dynamic_pose/info` messages a second at most |
//! | `<state_hertz>` | number > 0 | 60 | `state` messages a second while running (half while paused) |
//!
//! A value that is not a positive number is reported with a warning naming it, and the
//! default is kept.

mod scene;
mod state;

use plugin_api::components::{Light, Model, World};
use plugin_api::msgs::{self as gz, Empty, PoseV, Scene, SerializedStateMap, SerializedStepMap, UInt32V};
use plugin_api::prost::Message;
use plugin_api::xml::PluginXml;
use plugin_api::{
    log, Component, ConfigureContext, Ecm, EcmRead, EcmView, EntityId, Hooks, Host, Publisher, QueryCache,
    ResetOutcome, ServiceServer, System, SystemInfo, TopicOptions, UpdateInfo,
};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

pub use scene::{all_poses, dynamic_poses};

/// gz-sim's `pose/info` rate, messages a second.
pub const POSE_HZ: f64 = 60.0;
/// Default of `<dynamic_pose_hertz>`.
pub const DEFAULT_DYNAMIC_POSE_HZ: f64 = 60.0;
/// Default of `<state_hertz>`.
pub const DEFAULT_STATE_HZ: f64 = 60.0;

/// The world's services and topics.
struct Io {
    scene_service: ServiceServer<Empty, Scene>,
    state_service: ServiceServer<Empty, SerializedStepMap>,
    scene: Publisher<Scene>,
    deletion: Publisher<UInt32V>,
    state: Publisher<SerializedStepMap>,
    poses: Publisher<PoseV>,
    dynamic_poses: Publisher<PoseV>,
}

/// A wall-clock throttle: at most `hz` events a second.
struct Throttle {
    period: Duration,
    last: Option<Instant>,
}

impl Throttle {
    fn new(hz: f64) -> Throttle {
        // A rate so small that its period does not fit a Duration: once, then never again.
        Throttle { period: Duration::try_from_secs_f64(1.0 / hz).unwrap_or(Duration::MAX), last: None }
    }
    /// Whether a `period` (times `factor`) went by since the last time this answered true.
    fn due(&mut self, now: Instant, factor: u32) -> bool {
        let period = self.period.checked_mul(factor).unwrap_or(Duration::MAX);
        let due = self.last.is_none_or(|last| now.duration_since(last) >= period);
        if due {
            self.last = Some(now);
        }
        due
    }
}

/// The system.
pub struct SceneBroadcaster {
    io: Option<Io>,
    world: EntityId,
    world_name: String,
    dynamic_pose_hz: f64,
    state_hz: f64,
    /// Models and lights announced on `scene/info` (or present when it started).
    known: BTreeSet<EntityId>,
    /// Compare `known` with the whole world at the next post_update (first step, reset).
    resync: bool,
    pose_throttle: Throttle,
    dynamic_throttle: Throttle,
    state_throttle: Throttle,
    /// Whether the `state` topic had a subscriber at the last post_update.
    state_listened: bool,
    /// Send the full state on the `state` topic at the next post_update.
    full_state_due: bool,
    pending: state::Pending,
    /// Tells a step that created and removed nothing since the last one (most steps).
    structure: QueryCache,
    /// Asked whether a request waits, once a step, before taking from both services.
    host: Option<Host>,
}

impl Default for SceneBroadcaster {
    fn default() -> Self {
        SceneBroadcaster {
            io: None,
            world: EntityId::NULL,
            world_name: String::new(),
            dynamic_pose_hz: DEFAULT_DYNAMIC_POSE_HZ,
            state_hz: DEFAULT_STATE_HZ,
            known: BTreeSet::new(),
            resync: true,
            pose_throttle: Throttle::new(POSE_HZ),
            dynamic_throttle: Throttle::new(DEFAULT_DYNAMIC_POSE_HZ),
            state_throttle: Throttle::new(DEFAULT_STATE_HZ),
            state_listened: false,
            full_state_due: false,
            pending: state::Pending::default(),
            structure: QueryCache::new(),
            host: None,
        }
    }
}

/// A positive rate from `<tag>`, or `default` with a warning naming the value.
fn rate(xml: &PluginXml, tag: &str, default: f64) -> f64 {
    let Some(text) = xml.text(tag) else { return default };
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => v,
        Ok(_) => {
            log::warn!(
                "scene broadcaster: <{tag}> is {:?}, not a positive number; using the default {default}",
                text.trim()
            );
            default
        }
        Err(_) => {
            log::warn!("scene broadcaster: <{tag}> is {:?}, not a number; using the default {default}", text.trim());
            default
        }
    }
}

impl SceneBroadcaster {
    fn advertise(&self, host: &plugin_api::Host) -> plugin_api::Result<Io> {
        let w = format!("/world/{}", self.world_name);
        let reliable = TopicOptions { reliable: true, max_rate_hz: 0.0 };
        // Periodic topics are throttled here, before their messages are built.
        let periodic = TopicOptions { reliable: false, max_rate_hz: 0.0 };
        Ok(Io {
            scene_service: host.offer_service(&format!("{w}/scene/info"))?,
            state_service: host.offer_service(&format!("{w}/state"))?,
            scene: host.advertise(&format!("{w}/scene/info"), reliable)?,
            deletion: host.advertise(&format!("{w}/scene/deletion"), reliable)?,
            state: host.advertise(&format!("{w}/state"), reliable)?,
            poses: host.advertise(&format!("{w}/pose/info"), periodic)?,
            dynamic_poses: host.advertise(&format!("{w}/dynamic_pose/info"), periodic)?,
        })
    }

    /// Announces new models and lights and the removed ones.
    fn scene_changes(&mut self, io: &Io, info: &UpdateInfo, ecm: &EcmView<'_>) -> plugin_api::Result {
        // Nothing created or removed since the last step: no model or light is new or gone.
        if self.structure.refresh(ecm) && !self.resync {
            return Ok(());
        }
        let (mut added, mut removed) = (BTreeSet::new(), BTreeSet::new());
        let types = [Model::ID, Light::ID];
        for ty in types {
            removed.extend(ecm.removed_entities_with(&[ty]));
        }
        let mut news = BTreeSet::new();
        for ty in types {
            news.extend(ecm.new_entities_with(&[ty]));
        }
        // Entities already known that are new again: the ECM was restored (playback seek).
        if self.resync || news.iter().any(|e| self.known.contains(e)) {
            self.resync = false;
            let (models, lights) = scene::models_and_lights(ecm);
            let current: BTreeSet<EntityId> = models.union(&lights).copied().filter(|e| !removed.contains(e)).collect();
            removed.extend(self.known.difference(&current).copied());
            added.extend(current.difference(&self.known).copied());
        } else {
            added.extend(news.into_iter().filter(|e| !removed.contains(e)));
        }
        // Only what subscribers were told of is deleted (not what came and went in one step).
        removed.retain(|e| self.known.contains(e));
        self.known.extend(added.iter().copied());
        for e in &removed {
            self.known.remove(e);
        }
        if !added.is_empty() && io.scene.has_subscribers() {
            let models: BTreeSet<EntityId> = added.iter().copied().filter(|e| ecm.has::<Model>(*e)).collect();
            let lights: BTreeSet<EntityId> = added.iter().copied().filter(|e| ecm.has::<Light>(*e)).collect();
            io.scene.publish(&scene::scene_msg(
                ecm,
                self.world,
                &self.world_name,
                &models,
                &lights,
                false,
                info.sim_time_ns,
            ))?;
        }
        if !removed.is_empty() && io.deletion.has_subscribers() {
            let ids = removed.iter().map(|e| u32::try_from(e.0).unwrap_or(u32::MAX)).collect();
            io.deletion.publish(&UInt32V { header: Some(scene::stamped(info.sim_time_ns)), data: ids })?;
        }
        Ok(())
    }

    fn poses(&mut self, io: &Io, info: &UpdateInfo, ecm: &EcmView<'_>, now: Instant) -> plugin_api::Result {
        if io.poses.has_subscribers() && self.pose_throttle.due(now, 1) {
            io.poses.publish(&PoseV { header: Some(scene::stamped(info.sim_time_ns)), pose: scene::all_poses(ecm) })?;
        }
        if io.dynamic_poses.has_subscribers() && self.dynamic_throttle.due(now, 1) {
            io.dynamic_poses
                .publish(&PoseV { header: Some(scene::stamped(info.sim_time_ns)), pose: scene::dynamic_poses(ecm) })?;
        }
        Ok(())
    }

    fn step_map(&self, info: &UpdateInfo, ecm: &EcmView<'_>, state: Option<SerializedStateMap>) -> SerializedStepMap {
        let header = gz::Header {
            stamp: Some(scene::time(info.sim_time_ns)),
            data: vec![gz::header::Map { key: "iteration".into(), value: vec![info.iterations.to_string()] }],
        };
        let stats = gz::WorldStatistics {
            header: Some(scene::stamped(info.sim_time_ns)),
            sim_time: Some(scene::time(info.sim_time_ns)),
            real_time: Some(scene::time(info.real_time_ns)),
            paused: info.paused,
            iterations: info.iterations,
            model_count: ecm.entities_with(&[Model::ID]).len() as i32,
            step_size: (info.dt_ns > 0).then(|| scene::time(info.dt_ns)),
            ..Default::default()
        };
        SerializedStepMap { stats: Some(stats), state: state.map(|s| SerializedStateMap { header: Some(header), ..s }) }
    }

    fn full_state(&self, info: &UpdateInfo, ecm: &EcmView<'_>) -> plugin_api::Result<SerializedStepMap> {
        let bytes = ecm.serialized_state(false)?;
        let state = SerializedStateMap::decode(bytes.as_slice()).map_err(|e| {
            plugin_api::Error::msg(format!("scene broadcaster: the host's full state does not decode: {e}"))
        })?;
        Ok(self.step_map(info, ecm, Some(state)))
    }

    /// The `state` topic: a full state first and on request, then the changes.
    fn state(&mut self, io: &Io, info: &UpdateInfo, ecm: &EcmView<'_>, now: Instant) -> plugin_api::Result {
        if !io.state.has_subscribers() {
            self.state_listened = false;
            self.pending.clear();
            return Ok(());
        }
        if !self.state_listened || self.full_state_due {
            self.state_listened = true;
            self.full_state_due = false;
            self.pending.clear();
            self.state_throttle.last = Some(now);
            io.state.publish(&self.full_state(info, ecm)?)?;
            return Ok(());
        }
        let bytes = ecm.serialized_state(true)?;
        let changed = SerializedStateMap::decode(bytes.as_slice()).map_err(|e| {
            plugin_api::Error::msg(format!("scene broadcaster: the host's changed state does not decode: {e}"))
        })?;
        let event = self.pending.merge(changed);
        let factor = if info.paused { 2 } else { 1 };
        if event {
            self.state_throttle.last = Some(now);
        } else if !self.state_throttle.due(now, factor) {
            return Ok(());
        }
        let changes = self.pending.take();
        // While paused, nothing changing: the stats alone, as gz-sim sends.
        let changes = (!(info.paused && changes.entities.is_empty())).then_some(changes);
        io.state.publish(&self.step_map(info, ecm, changes))?;
        Ok(())
    }

    /// Answers the services' waiting requests.
    fn services(&mut self, io: &Io, info: &UpdateInfo, ecm: &EcmView<'_>) -> plugin_api::Result {
        if self.host.as_ref().is_some_and(|h| !h.has_pending()) {
            return Ok(());
        }
        let scene_requests = io.scene_service.take();
        if !scene_requests.is_empty() {
            let (models, lights) = scene::models_and_lights(ecm);
            let scene = scene::scene_msg(ecm, self.world, &self.world_name, &models, &lights, true, info.sim_time_ns);
            for r in &scene_requests {
                io.scene_service.reply(r, true, &scene);
            }
        }
        let state_requests = io.state_service.take();
        if !state_requests.is_empty() {
            let full = self.full_state(info, ecm)?;
            for r in &state_requests {
                io.state_service.reply(r, true, &full);
            }
            // As gz-sim: a subscriber that asked re-syncs, so the topic carries it too.
            self.full_state_due = true;
        }
        Ok(())
    }
}

impl System for SceneBroadcaster {
    fn info() -> SystemInfo {
        SystemInfo::SCENE_BROADCASTER
    }

    fn hooks(&self) -> Hooks {
        Hooks::POST_UPDATE
    }

    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let xml = PluginXml::parse(ctx.xml)?;
        self.dynamic_pose_hz = rate(&xml, "dynamic_pose_hertz", DEFAULT_DYNAMIC_POSE_HZ);
        self.state_hz = rate(&xml, "state_hertz", DEFAULT_STATE_HZ);
        self.dynamic_throttle = Throttle::new(self.dynamic_pose_hz);
        self.state_throttle = Throttle::new(self.state_hz);
        self.world = if ctx.ecm.has::<World>(ctx.entity) {
            ctx.entity
        } else {
            log::warn!(
                "scene broadcaster: attached to entity {}, which is not a world; broadcasting its world",
                ctx.entity
            );
            ctx.ecm.entities_with(&[World::ID]).first().copied().unwrap_or(EntityId::NULL)
        };
        self.world_name = ctx.host.world_name();
        self.io = Some(self.advertise(&ctx.host)?);
        self.host = Some(ctx.host.clone());
        Ok(())
    }

    fn reset(&mut self, _info: &UpdateInfo, _ecm: &mut Ecm<'_>) -> plugin_api::Result<ResetOutcome> {
        // The world went back to its loaded state: tell subscribers what disappeared or came
        // back, and send the full state.
        self.resync = true;
        self.full_state_due = true;
        self.pending.clear();
        Ok(ResetOutcome::DONE)
    }

    fn update(&mut self, _info: &UpdateInfo, _ecm: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }

    fn post_update(&mut self, info: &UpdateInfo, ecm: &EcmView<'_>) -> plugin_api::Result {
        let Some(io) = self.io.take() else { return Ok(()) };
        let now = Instant::now();
        let outcome = self
            .scene_changes(&io, info, ecm)
            .and_then(|_| self.services(&io, info, ecm))
            .and_then(|_| self.state(&io, info, ecm, now))
            .and_then(|_| self.poses(&io, info, ecm, now));
        self.io = Some(io);
        outcome
    }
}

plugin_api::export_plugin! {
    library: "troupe_scene_broadcaster",
    systems: {
        "troupe::SceneBroadcaster" | "gz::sim::systems::SceneBroadcaster" | "scene-broadcaster" => SceneBroadcaster::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_throttle_lets_one_event_through_per_period() {
        let mut t = Throttle::new(10.0);
        let start = Instant::now();
        assert!(t.due(start, 1), "the first event goes out");
        assert!(!t.due(start + Duration::from_millis(99), 1));
        assert!(t.due(start + Duration::from_millis(100), 1));
        assert!(!t.due(start + Duration::from_millis(250), 2), "paused: twice the period");
        assert!(t.due(start + Duration::from_millis(300), 2));
    }

    #[test]
    fn a_rate_too_small_for_a_duration_does_not_panic() {
        let mut t = Throttle::new(1e-310);
        let start = Instant::now();
        assert!(t.due(start, 2));
        assert!(!t.due(start + Duration::from_secs(1_000_000), 2));
    }
}
