//! # troupe_joint_state_publisher — gz-sim's JointStatePublisher system
//!
//! Publishes the state of a model's joints as one `gz.msgs.Model` per publication: the
//! model's name, id and pose, and for each joint its name, id, pose, parent and child link
//! names, and per axis the position, velocity and force (`axis1`, and `axis2` for joints with
//! two axes); `axis1` also carries the axis direction, limits and damping. Positions are the
//! physics system's `JointPosition` (revolute angles accumulated over whole turns, as gz-sim
//! reports them), velocities its `JointVelocity`.
//!
//! The force is the one commanded for the step (`JointForceCmd`, N·m or N), which is what
//! gz-sim's physics reports for a force-driven joint; it is 0 for joints no system pushed
//! (the motor effort of velocity-driven joints is not reported). To see the commands of
//! other systems before physics consumes them, this system's pre-update runs after every
//! system of ordinary priority ([`SAMPLE_PRIORITY`]).
//!
//! Attach it to a model. It only observes: a playback runs it, and in a distributed run it
//! publishes from the process that simulates the model.
//!
//! ## Parameters
//!
//! | element | type | default | unit | meaning |
//! |---|---|---|---|---|
//! | `<joint_name>` | string, repeated | every joint of the model | | a joint to publish (scoped names reach nested models' joints) |
//! | `<topic>` | topic | `/world/<world>/model/<model>/joint_state` | | where to publish |
//! | `<update_rate>` | number ≥ 0 | 0 (every step) | Hz of sim time | publication rate |
//!
//! A `<joint_name>` the model does not have, a rate that does not parse or is negative, an
//! invalid topic: errors when the system is configured, all reported at once. A joint named
//! twice is published once, with a warning.
//!
//! ## Topics and services
//!
//! | topic | message | meaning |
//! |---|---|---|
//! | `/world/<world>/model/<model>/joint_state` | `gz.msgs.Model` | the joints' state, stamped with the sim time (a nested model's topic names its parents: `/world/w/model/outer/model/inner/joint_state`) |
//!
//! ## Example
//!
//! ```xml
//! <plugin filename="gz-sim-joint-state-publisher-system" name="gz::sim::systems::JointStatePublisher">
//!   <joint_name>axle_b</joint_name>
//!   <topic>robot_joints</topic>
//!   <update_rate>50</update_rate>
//! </plugin>
//! ```
//!
//! (loaded by `tests/model_systems/joint_state.rs`).

use model_common::{find_joint, joints_of, model_params, name_of, pose_msg, vec3_msg};
use plugin_api::components::{
    ChildLinkName, JointAxis, JointForceCmd, JointPosition, JointVelocity, Model, ParentLinkName, World,
};
use plugin_api::math::Pose;
use plugin_api::msgs;
use plugin_api::{
    ConfigureContext, Ecm, EcmRead, EcmView, EntityId, Hooks, Host, Publisher, System, TopicOptions, UpdateInfo,
};
use std::collections::BTreeMap;

/// The priority of this system's pre-update, which samples the joint force commands: after
/// the controllers of ordinary priority (0) have written theirs, before physics consumes them
/// in the update phase.
pub const SAMPLE_PRIORITY: i32 = 1_000_000;

/// The system.
#[derive(Default)]
pub struct JointStatePublisher {
    model: EntityId,
    host: Option<Host>,
    /// The joints published, ascending by id (gz-sim keeps them in a set).
    joints: Vec<EntityId>,
    publisher: Option<Publisher<msgs::Model>>,
    /// Publication period, ns of sim time (0: every step).
    period_ns: i64,
    /// Sim time of the last publication, ns.
    last_ns: i64,
    /// The force commanded for this step, per published joint that had one.
    forces: BTreeMap<EntityId, Vec<f64>>,
}

/// The default topic of `model`: `/world/<w>/model/<outer>/model/<inner>/joint_state`.
fn default_topic(ecm: &impl EcmRead, model: EntityId) -> String {
    let mut parts = Vec::new();
    let mut cur = Some(model);
    while let Some(c) = cur {
        let kind = if ecm.has::<World>(c) {
            "world"
        } else if ecm.has::<Model>(c) {
            "model"
        } else {
            break;
        };
        parts.push(format!("/{kind}/{}", name_of(ecm, c)));
        cur = ecm.parent(c);
    }
    parts.reverse();
    format!("{}/joint_state", parts.concat())
}

impl System for JointStatePublisher {
    fn priority(&self) -> Option<i32> {
        Some(SAMPLE_PRIORITY)
    }

    fn hooks(&self) -> Hooks {
        Hooks::PRE_UPDATE | Hooks::POST_UPDATE
    }

    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let model = ctx.entity;
        let ecm = &ctx.ecm;
        let (mut p, model_name) = model_params(ctx.xml, ecm, model, "JointStatePublisher")?;
        let names = p.texts("joint_name");
        let mut joints = Vec::new();
        if names.is_empty() {
            joints = joints_of(ecm, model);
        }
        for n in &names {
            match find_joint(ecm, model, n) {
                None => p.problem(format!("<joint_name> {n:?}: the model has no joint of that name")),
                Some(j) if joints.contains(&j) => {
                    plugin_api::log::warn!("JointStatePublisher on model {model_name:?}: <joint_name> {n:?} is named twice; published once")
                }
                Some(j) => joints.push(j),
            }
        }
        joints.sort_unstable();
        let rate = p.number("update_rate", 0.0);
        if rate < 0.0 {
            p.problem(format!("<update_rate> must be 0 (every step) or more, found {rate}"));
        }
        let topic = p.topic("topic", &default_topic(ecm, model));
        p.finish()?;
        self.period_ns = if rate > 0.0 { (1e9 / rate).round() as i64 } else { 0 };
        let options = TopicOptions { reliable: false, max_rate_hz: 0.0 };
        self.publisher = Some(ctx.host.advertise(&topic, options)?);
        self.joints = joints;
        self.model = model;
        self.host = Some(ctx.host);
        Ok(())
    }

    fn pre_update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        self.forces.clear();
        if info.paused {
            return Ok(());
        }
        for &j in &self.joints {
            if let Some(f) = ecm.get::<JointForceCmd>(j) {
                self.forces.insert(j, f.0);
            }
        }
        Ok(())
    }

    fn update(&mut self, _info: &UpdateInfo, _ecm: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }

    fn post_update(&mut self, info: &UpdateInfo, ecm: &EcmView<'_>) -> plugin_api::Result {
        let Some(publisher) = &self.publisher else { return Ok(()) };
        if info.paused || !self.host.as_ref().is_some_and(|h| h.owns_entity(self.model)) {
            return Ok(());
        }
        // gz-sim's rule: skip while less than a period has passed since the last
        // publication; a jump back in time (a reset) publishes and restarts the count.
        let since = info.sim_time_ns - self.last_ns;
        if since > 0 && since < self.period_ns {
            return Ok(());
        }
        self.last_ns = info.sim_time_ns;
        publisher.publish(&self.message(info, ecm))?;
        Ok(())
    }
}

impl JointStatePublisher {
    fn message(&self, info: &UpdateInfo, ecm: &EcmView<'_>) -> msgs::Model {
        let model_pose = ecm.get::<Pose>(self.model).unwrap_or(Pose::IDENTITY);
        msgs::Model {
            header: Some(model_common::header(info, &[])),
            name: name_of(ecm, self.model),
            id: self.model.0 as u32,
            pose: Some(pose_msg("", EntityId(0), &model_pose)),
            joint: self.joints.iter().map(|&j| self.joint(ecm, j)).collect(),
            ..Default::default()
        }
    }

    fn joint(&self, ecm: &EcmView<'_>, j: EntityId) -> msgs::Joint {
        let positions = ecm.get::<JointPosition>(j).map(|p| p.0).unwrap_or_default();
        let velocities = ecm.get::<JointVelocity>(j).map(|v| v.0).unwrap_or_default();
        let forces = self.forces.get(&j).cloned().unwrap_or_default();
        let axis = |i: usize| msgs::Axis {
            position: positions.get(i).copied().unwrap_or(0.0),
            velocity: velocities.get(i).copied().unwrap_or(0.0),
            force: forces.get(i).copied().unwrap_or(0.0),
            ..Default::default()
        };
        let mut axis1 = axis(0);
        if let Some(JointAxis(a)) = ecm.get::<JointAxis>(j) {
            axis1.xyz = Some(vec3_msg(a.xyz));
            axis1.limit_lower = a.lower;
            axis1.limit_upper = a.upper;
            axis1.damping = a.damping;
        }
        let pose = pose_msg("", EntityId(0), &ecm.get::<Pose>(j).unwrap_or(Pose::IDENTITY));
        msgs::Joint {
            name: name_of(ecm, j),
            id: j.0 as u32,
            parent: ecm.get::<ParentLinkName>(j).map(|n| n.0).unwrap_or_default(),
            child: ecm.get::<ChildLinkName>(j).map(|n| n.0).unwrap_or_default(),
            pose: Some(pose),
            axis1: Some(axis1),
            axis2: (positions.len() > 1 || velocities.len() > 1).then(|| axis(1)),
            ..Default::default()
        }
    }
}

plugin_api::export_plugin! {
    library: "troupe_joint_state_publisher",
    systems: {
        "troupe::JointStatePublisher" | "gz::sim::systems::JointStatePublisher" | "joint_state_publisher" => JointStatePublisher::default()
    }
}
