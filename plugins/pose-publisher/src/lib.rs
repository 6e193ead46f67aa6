//! # troupe_pose_publisher — gz-sim's PosePublisher system
//!
//! Publishes the poses of the frames inside a model: its links (by default), and on request
//! its visuals, collisions, sensors, nested models and the model itself. Each pose is the
//! frame's `Pose` relative to its parent, as a transform from the parent's frame
//! (`frame_id`: the parent's scoped name, `model::link`; the world's name for the model
//! itself) to the frame's (`child_frame_id`: its scoped name, also the message's `name`),
//! both in the header's data with the sim time as stamp.
//!
//! By default each frame goes out as its own `gz.msgs.Pose`; with `<use_pose_vector_msg>`
//! one `gz.msgs.Pose_V` carries them all. With `<static_publisher>`, frames that cannot
//! move relative to their parent go to `/model/<model>/pose_static` at
//! `<static_update_frequency>`, and `/model/<model>/pose` carries only the dynamic ones: the
//! links on either side of the model's non-fixed joints, except canonical links (gz-sim's
//! rule; a model's own pose counts as static there).
//!
//! Frames are published in depth-first order from the model, children ascending by id.
//! Rates count sim time: a publication waits until a period has passed since the last one
//! (the first after one period); a negative frequency publishes every step. It only observes:
//! a playback runs it, and in a distributed run it publishes from the process that simulates
//! the model.
//!
//! ## Parameters
//!
//! | element | type | default | unit | meaning |
//! |---|---|---|---|---|
//! | `<publish_link_pose>` | bool | true | | publish the links' poses |
//! | `<publish_visual_pose>` | bool | false | | publish the visuals' poses |
//! | `<publish_collision_pose>` | bool | false | | publish the collisions' poses |
//! | `<publish_sensor_pose>` | bool | false | | publish the sensors' poses |
//! | `<publish_nested_model_pose>` | bool | false | | publish the nested models' poses |
//! | `<publish_model_pose>` | bool | as `publish_nested_model_pose` | | publish the model's own pose (only together with nested model poses, as gz-sim) |
//! | `<use_pose_vector_msg>` | bool | false | | one `Pose_V` per publication instead of one `Pose` per frame |
//! | `<update_frequency>` | number | −1 (every step) | Hz of sim time | rate of `/pose` |
//! | `<static_publisher>` | bool | false | | static frames on `/pose_static` instead |
//! | `<static_update_frequency>` | number | `update_frequency` | Hz of sim time | rate of `/pose_static` |
//!
//! A value that does not parse, a frequency of 0: errors when the system is configured,
//! all reported at once.
//!
//! ## Topics and services
//!
//! | topic | message | meaning |
//! |---|---|---|
//! | `/model/<model>/pose` | `gz.msgs.Pose` or `gz.msgs.Pose_V` | the frames' poses (nested model: `/model/outer/model/inner/pose`) |
//! | `/model/<model>/pose_static` | `gz.msgs.Pose` or `gz.msgs.Pose_V` | with `<static_publisher>`: the static frames |
//!
//! ## Example
//!
//! ```xml
//! <plugin filename="gz-sim-pose-publisher-system" name="gz::sim::systems::PosePublisher">
//!   <publish_link_pose>true</publish_link_pose>
//!   <publish_visual_pose>true</publish_visual_pose>
//!   <publish_collision_pose>true</publish_collision_pose>
//!   <publish_sensor_pose>true</publish_sensor_pose>
//!   <publish_nested_model_pose>true</publish_nested_model_pose>
//!   <use_pose_vector_msg>true</use_pose_vector_msg>
//!   <update_frequency>10</update_frequency>
//! </plugin>
//! ```
//!
//! (loaded by `tests/model_systems/pose_publisher.rs`).

use model_common::{model_params, name_of, scoped_name, Params};
use plugin_api::components::{
    CanonicalLink, ChildLinkName, Collision, JointType, Link, Model, ParentLinkName, Sensor, Visual, World,
};
use plugin_api::math::Pose;
use plugin_api::msgs;
use plugin_api::{
    ConfigureContext, Ecm, EcmRead, EcmView, EntityId, Hooks, Host, Publisher, System, TopicOptions, UpdateInfo,
};

/// Which frames to publish.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frames {
    /// Links.
    pub link: bool,
    /// Visuals.
    pub visual: bool,
    /// Collisions.
    pub collision: bool,
    /// Sensors.
    pub sensor: bool,
    /// Nested models.
    pub nested_model: bool,
    /// The model itself (with nested models only).
    pub model: bool,
}

/// A frame to publish: the entity, its parent's and its own scoped names, and whether it
/// moves relative to its parent.
#[derive(Clone, Debug)]
struct Frame {
    entity: EntityId,
    frame_id: String,
    child_frame_id: String,
    dynamic: bool,
}

enum Out {
    Each(Publisher<msgs::Pose>),
    Vector(Publisher<msgs::PoseV>),
}

impl Out {
    fn new(host: &Host, topic: &str, vector: bool) -> plugin_api::Result<Out> {
        let options = TopicOptions { reliable: false, max_rate_hz: 0.0 };
        Ok(if vector {
            Out::Vector(host.advertise(topic, options)?)
        } else {
            Out::Each(host.advertise(topic, options)?)
        })
    }

    fn publish(&self, poses: Vec<msgs::Pose>, info: &UpdateInfo) -> plugin_api::Result {
        match self {
            Out::Each(p) => poses.iter().try_for_each(|m| p.publish(m).map(|_| ())),
            Out::Vector(p) => {
                p.publish(&msgs::PoseV { header: Some(model_common::header(info, &[])), pose: poses }).map(|_| ())
            }
        }
    }
}

/// A sim-time rate: publish once a period has passed since the last publication (gz-sim's
/// rule; a jump back in time publishes at once).
#[derive(Clone, Copy, Debug, Default)]
struct Rate {
    period_ns: i64,
    last_ns: i64,
}

impl Rate {
    fn from_frequency(hz: f64) -> Rate {
        Rate { period_ns: if hz > 0.0 { (1e9 / hz).round() as i64 } else { 0 }, last_ns: 0 }
    }

    fn due(&mut self, now_ns: i64) -> bool {
        let since = now_ns - self.last_ns;
        if since > 0 && since < self.period_ns {
            return false;
        }
        self.last_ns = now_ns;
        true
    }
}

/// The system.
#[derive(Default)]
pub struct PosePublisher {
    model: EntityId,
    host: Option<Host>,
    frames_wanted: Option<Frames>,
    /// Filled at the first publication (the model's children exist by then).
    frames: Option<Vec<Frame>>,
    static_publisher: bool,
    rate: Rate,
    static_rate: Rate,
    out: Option<Out>,
    out_static: Option<Out>,
}

impl System for PosePublisher {
    fn hooks(&self) -> Hooks {
        Hooks::POST_UPDATE
    }

    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let model = ctx.entity;
        let ecm = &ctx.ecm;
        let (mut p, _) = model_params(ctx.xml, ecm, model, "PosePublisher")?;
        let nested_model = p.value("publish_nested_model_pose", false);
        let frames = Frames {
            link: p.value("publish_link_pose", true),
            visual: p.value("publish_visual_pose", false),
            collision: p.value("publish_collision_pose", false),
            sensor: p.value("publish_sensor_pose", false),
            nested_model,
            model: p.value("publish_model_pose", nested_model),
        };
        let vector = p.value("use_pose_vector_msg", false);
        let frequency = |p: &mut Params, tag: &str, default: f64| {
            let f = p.number(tag, default);
            if f == 0.0 {
                p.problem(format!("<{tag}> must not be 0 (a negative frequency publishes every step)"));
            }
            f
        };
        let hz = frequency(&mut p, "update_frequency", -1.0);
        self.static_publisher = p.value("static_publisher", false);
        let static_hz = frequency(&mut p, "static_update_frequency", hz);
        p.finish()?;
        let topic = format!("{}/pose", model_topic(ecm, model));
        self.out = Some(Out::new(&ctx.host, &topic, vector)?);
        if self.static_publisher {
            self.out_static = Some(Out::new(&ctx.host, &format!("{topic}_static"), vector)?);
        }
        self.rate = Rate::from_frequency(hz);
        self.static_rate = Rate::from_frequency(static_hz);
        self.frames_wanted = Some(frames);
        self.model = model;
        self.host = Some(ctx.host);
        Ok(())
    }

    fn update(&mut self, _info: &UpdateInfo, _ecm: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }

    fn post_update(&mut self, info: &UpdateInfo, ecm: &EcmView<'_>) -> plugin_api::Result {
        let (Some(out), Some(wanted)) = (&self.out, self.frames_wanted) else { return Ok(()) };
        if info.paused || !self.host.as_ref().is_some_and(|h| h.owns_entity(self.model)) {
            return Ok(());
        }
        let now = info.sim_time_ns;
        let publish = self.rate.due(now);
        let publish_static = self.static_publisher && self.static_rate.due(now);
        if !publish && !publish_static {
            return Ok(());
        }
        let frames = self.frames.get_or_insert_with(|| frames_of(ecm, self.model, wanted, self.static_publisher));
        let poses = |dynamic: Option<bool>| -> Vec<msgs::Pose> {
            frames
                .iter()
                .filter(|f| dynamic.is_none_or(|d| f.dynamic == d))
                .filter_map(|f| ecm.get::<Pose>(f.entity).map(|p| pose_msg(f, &p, info)))
                .collect()
        };
        if !self.static_publisher {
            // Static frames first, then dynamic ones, as gz-sim; without a static
            // publisher every frame counts as static, so this is the frames' order.
            out.publish(poses(None), info)?;
            return Ok(());
        }
        if publish_static {
            if let Some(s) = &self.out_static {
                s.publish(poses(Some(false)), info)?;
            }
        }
        if publish {
            out.publish(poses(Some(true)), info)?;
        }
        Ok(())
    }
}

/// `/model/<outer>/model/<inner>` for a model (the world not included, as gz-sim).
fn model_topic(ecm: &impl EcmRead, model: EntityId) -> String {
    let mut parts = Vec::new();
    let mut cur = Some(model);
    while let Some(c) = cur.filter(|c| ecm.has::<Model>(*c)) {
        parts.push(format!("/model/{}", name_of(ecm, c)));
        cur = ecm.parent(c);
    }
    parts.reverse();
    parts.concat()
}

/// The frames below `model` (and it) that `wanted` asks for, depth first, children
/// ascending by id; with `split`, marking the dynamic ones.
fn frames_of(ecm: &EcmView<'_>, model: EntityId, wanted: Frames, split: bool) -> Vec<Frame> {
    let dynamic: Vec<EntityId> = if split { dynamic_links(ecm, model) } else { Vec::new() };
    let mut out = Vec::new();
    let mut stack = vec![model];
    while let Some(e) = stack.pop() {
        let parent = ecm.parent(e);
        let publish = if ecm.has::<Model>(e) {
            let nested = parent.is_some_and(|p| ecm.has::<Model>(p));
            if nested {
                wanted.nested_model
            } else {
                wanted.nested_model && wanted.model
            }
        } else {
            (wanted.link && ecm.has::<Link>(e))
                || (wanted.visual && ecm.has::<Visual>(e))
                || (wanted.collision && ecm.has::<Collision>(e))
                || (wanted.sensor && ecm.has::<Sensor>(e))
        };
        if publish {
            let frame_id = match parent {
                Some(p) if ecm.has::<World>(p) => name_of(ecm, p),
                Some(p) => scoped_name(ecm, p),
                None => String::new(),
            };
            out.push(Frame { entity: e, frame_id, child_frame_id: scoped_name(ecm, e), dynamic: dynamic.contains(&e) });
        }
        let mut children = ecm.children(e);
        children.sort_unstable();
        stack.extend(children.into_iter().rev());
    }
    out
}

/// The links of `model` on either side of its non-fixed joints, except canonical links.
fn dynamic_links(ecm: &EcmView<'_>, model: EntityId) -> Vec<EntityId> {
    let mut out = Vec::new();
    for j in model_common::joints_of(ecm, model) {
        if matches!(ecm.get::<JointType>(j), None | Some(JointType::Fixed)) {
            continue;
        }
        let names = [ecm.get::<ParentLinkName>(j).map(|n| n.0), ecm.get::<ChildLinkName>(j).map(|n| n.0)];
        for name in names.into_iter().flatten() {
            if let Some(l) =
                ecm.child_by_name(model, &name).filter(|l| ecm.has::<Link>(*l) && !ecm.has::<CanonicalLink>(*l))
            {
                if !out.contains(&l) {
                    out.push(l);
                }
            }
        }
    }
    out
}

fn pose_msg(f: &Frame, pose: &Pose, info: &UpdateInfo) -> msgs::Pose {
    let mut m = model_common::pose_msg(&f.child_frame_id, EntityId(0), pose);
    m.header = Some(model_common::header(info, &[("frame_id", &f.frame_id), ("child_frame_id", &f.child_frame_id)]));
    m
}

plugin_api::export_plugin! {
    library: "troupe_pose_publisher",
    systems: {
        "troupe::PosePublisher" | "gz::sim::systems::PosePublisher" | "pose_publisher" => PosePublisher::default()
    }
}

#[cfg(test)]
mod tests {
    use super::Rate;

    #[test]
    fn a_rate_publishes_once_a_period_has_passed_and_after_a_jump_back() {
        let mut r = Rate::from_frequency(10.0);
        let due: Vec<i64> = (1..=300).map(|k| k * 1_000_000).filter(|&t| r.due(t)).collect();
        assert_eq!(due, vec![100_000_000, 200_000_000, 300_000_000]);
        assert!(r.due(1_000_000), "time went back: publish and count again from there");
        assert!(!r.due(2_000_000));
        let mut every = Rate::from_frequency(-1.0);
        assert!((1..=5).all(|k| every.due(k)));
    }
}
