//! # troupe_joint_position_controller — gz-sim's JointPositionController system
//!
//! Drives one or more joints of a model to a commanded position: a `gz.msgs.Double` on the
//! command topic sets the target (rad or m) of the joint's degree of freedom
//! `<joint_index>`. Every step the system reads the joint position physics wrote and
//!
//! * by default runs a PID on the error (position − target) and writes its output as the
//!   joint force (`JointForceCmd`, N·m or N, acting for that step);
//! * with `<use_velocity_commands>true`, commands the velocity that reaches the target in
//!   one step (`JointVelocityCmd`), clamped to `[cmd_min, cmd_max]` (then rad/s or m/s):
//!   the joint moves at most that fast and stops on the target.
//!
//! Attach it to a model. In a distributed run it acts only in the process that simulates
//! the model ([`plugin_api::Host::owns_entity`]); a hand-over configures a fresh instance,
//! target back at `<initial_position>`.
//!
//! ## Parameters
//!
//! | element | type | default | unit | meaning |
//! |---|---|---|---|---|
//! | `<joint_name>` | string, repeated, at least one | — | | the joints driven (all to the same target) |
//! | `<joint_index>` | integer | 0 | | which degree of freedom of the joint |
//! | `<p_gain>` | number | 1 | | proportional gain |
//! | `<i_gain>` | number | 0.1 | | integral gain |
//! | `<d_gain>` | number | 0.01 | | derivative gain |
//! | `<i_max>` / `<i_min>` | number | 1 / −1 | | integral term clamp |
//! | `<cmd_max>` / `<cmd_min>` | number | 1000 / −1000 | N·m, N (rad/s, m/s with velocity commands) | command clamp |
//! | `<cmd_offset>` | number | 0 | | added to the PID's command |
//! | `<use_velocity_commands>` | bool | false | | direct mode: velocity commands instead of the PID |
//! | `<initial_position>` | number | 0 | rad, m | target before the first command |
//! | `<topic>` | topic | `/model/<model>/joint/<joint>/<index>/cmd_pos` | | command topic (first joint's name) |
//! | `<sub_topic>` | string | — | | command topic `/model/<model>/<sub_topic>` instead |
//!
//! Unknown joints, an index the joint does not have, numbers that do not parse, a PID whose
//! clamps are inverted: errors when the system is configured, all reported at once.
//!
//! ## Topics and services
//!
//! | topic | message | meaning |
//! |---|---|---|
//! | `/model/<model>/joint/<joint>/<index>/cmd_pos` | `gz.msgs.Double` | the target position, rad or m |
//!
//! ## Example
//!
//! ```xml
//! <plugin filename="gz-sim-joint-position-controller-system" name="gz::sim::systems::JointPositionController">
//!   <joint_name>hinge</joint_name>
//!   <p_gain>10</p_gain><i_gain>0</i_gain><d_gain>3</d_gain>
//! </plugin>
//! ```
//!
//! (loaded by `tests/model_systems/joint_position.rs`).

use model_common::{find_joint, model_params, Pid};
use plugin_api::components::{JointAxis2, JointForceCmd, JointPosition, JointType, JointVelocityCmd};
use plugin_api::msgs;
use plugin_api::{
    Change, ConfigureContext, Ecm, EcmRead, EntityId, Hooks, Host, Subscriber, System, SystemInfo, UpdateInfo,
};

/// The system.
#[derive(Default)]
pub struct JointPositionController {
    model: EntityId,
    host: Option<Host>,
    joints: Vec<EntityId>,
    index: usize,
    pid: Option<Pid>,
    velocity_mode: bool,
    target: f64,
    commands: Option<Subscriber<msgs::Double>>,
}

/// Degrees of freedom of a joint type.
fn dofs(t: JointType) -> usize {
    match t {
        JointType::Fixed => 0,
        JointType::Universal | JointType::Revolute2 => 2,
        JointType::Ball => 3,
        _ => 1,
    }
}

impl System for JointPositionController {
    /// It commands a joint: skipped in playback.
    fn info() -> SystemInfo {
        SystemInfo::OTHER.simulating()
    }

    fn hooks(&self) -> Hooks {
        Hooks::PRE_UPDATE
    }

    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let model = ctx.entity;
        let ecm = &ctx.ecm;
        let (mut p, model_name) = model_params(ctx.xml, ecm, model, "JointPositionController")?;
        let names = p.texts("joint_name");
        if names.is_empty() {
            p.problem("at least one <joint_name> is required");
        }
        let index: usize = p.value("joint_index", 0);
        for n in &names {
            match find_joint(ecm, model, n) {
                None => p.problem(format!("<joint_name> {n:?}: the model has no joint of that name")),
                Some(j) => {
                    let kind = ecm.get::<JointType>(j).unwrap_or_default();
                    let has = dofs(kind).max(if ecm.has::<JointAxis2>(j) { 2 } else { 0 });
                    if index >= has {
                        p.problem(format!(
                            "<joint_index> {index}: joint {n:?} ({}) has {has} degree(s) of freedom",
                            kind.sdf_name()
                        ));
                    }
                    self.joints.push(j);
                }
            }
        }
        let pid = Pid::from_params(&mut p, 1.0, 0.1, 0.01);
        self.velocity_mode = p.value("use_velocity_commands", false);
        if self.velocity_mode && pid.cmd_max <= 0.0 {
            p.problem(format!("<cmd_max> must be above 0 with velocity commands, found {}", pid.cmd_max));
        }
        self.target = p.number("initial_position", 0.0);
        let default_topic =
            format!("/model/{model_name}/joint/{}/{index}/cmd_pos", names.first().map(String::as_str).unwrap_or(""));
        let topic = if p.text("sub_topic").is_some() {
            format!("/model/{model_name}{}", p.topic("sub_topic", ""))
        } else {
            p.topic("topic", &default_topic)
        };
        p.finish()?;
        self.index = index;
        self.pid = Some(pid);
        self.commands = Some(ctx.host.subscribe_topic(&topic)?);
        self.model = model;
        self.host = Some(ctx.host);
        Ok(())
    }

    fn pre_update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let (Some(commands), Some(pid)) = (&self.commands, &mut self.pid) else { return Ok(()) };
        for m in commands.take() {
            if m.data.is_finite() {
                self.target = m.data;
            } else {
                plugin_api::log::warn!("{}: a target that is not finite ({}) was ignored", commands.topic(), m.data);
            }
        }
        if info.paused || !self.host.as_ref().is_some_and(|h| h.owns_entity(self.model)) {
            return Ok(());
        }
        let dt = info.dt();
        // The first joint's position drives the controller; the others follow its command.
        let Some(&first) = self.joints.first() else { return Ok(()) };
        let Some(pos) = ecm.get::<JointPosition>(first).and_then(|p| p.0.get(self.index).copied()) else {
            return Ok(());
        };
        let error = pos - self.target;
        let mut value = vec![0.0; self.index + 1];
        if self.velocity_mode {
            value[self.index] = (-error / dt).clamp(pid.cmd_min.min(pid.cmd_max), pid.cmd_max);
            for &j in &self.joints {
                ecm.set(j, &JointVelocityCmd(value.clone()), Change::Periodic)?;
            }
        } else {
            value[self.index] = pid.update(error, dt);
            for &j in &self.joints {
                ecm.set(j, &JointForceCmd(value.clone()), Change::Periodic)?;
            }
        }
        Ok(())
    }

    fn update(&mut self, _info: &UpdateInfo, _ecm: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }
}

plugin_api::export_plugin! {
    library: "troupe_joint_position_controller",
    systems: {
        "troupe::JointPositionController" | "gz::sim::systems::JointPositionController" | "joint_position_controller" => JointPositionController::default()
    }
}
