//! # troupe_joint_controller — gz-sim's JointController system
//!
//! Holds one or more joints of a model at a commanded velocity (the first axis): a
//! `gz.msgs.Double` on the command topic sets the target (rad/s or m/s).
//!
//! * **Velocity mode** (default): every step the joints are given the target as a velocity
//!   command (`JointVelocityCmd`); physics holds them at it, whatever the load.
//! * **Force mode** (`<use_force_commands>true`): a PID on the error (velocity − target) of
//!   the first joint gives the joint force each step (`JointForceCmd`, N·m or N), applied to
//!   every joint named. With `<disable_braking>` the PID never pushes against the motion of a
//!   joint running faster than the target in the same direction: it freewheels down.
//!
//! Attach it to a model. In a distributed run it acts only in the process that simulates
//! the model ([`plugin_api::Host::owns_entity`]); a hand-over configures a fresh instance,
//! target back at `<initial_velocity>`.
//!
//! ## Parameters
//!
//! | element | type | default | unit | meaning |
//! |---|---|---|---|---|
//! | `<joint_name>` | string, repeated, at least one | — | | the joints driven (all at the same target) |
//! | `<initial_velocity>` | number | 0 | rad/s, m/s | target before the first command |
//! | `<use_force_commands>` | bool | false | | force mode: a PID on force instead of velocity commands |
//! | `<p_gain>` | number | 1 | | proportional gain (force mode) |
//! | `<i_gain>` | number | 0 | | integral gain |
//! | `<d_gain>` | number | 0 | | derivative gain |
//! | `<i_max>` / `<i_min>` | number | 1 / −1 | | integral term clamp |
//! | `<cmd_max>` / `<cmd_min>` | number | 1000 / −1000 | N·m, N | force clamp |
//! | `<cmd_offset>` | number | 0 | N·m, N | added to the PID's force (feed-forward) |
//! | `<disable_braking>` | bool | false | | force mode: let a joint faster than the target freewheel |
//! | `<topic>` | topic | `/model/<model>/joint/<joint>/cmd_vel` | | command topic (first joint's name) |
//! | `<sub_topic>` | string | — | | command topic `/model/<model>/<sub_topic>` instead |
//!
//! gz-sim's `<use_actuator_msg>` (commands from a `gz.msgs.Actuators` array) is not
//! available: asking for it is an error. Unknown joints, numbers that do not parse, a PID
//! whose clamps are inverted: errors when the system is configured, all reported at once.
//!
//! ## Topics and services
//!
//! | topic | message | meaning |
//! |---|---|---|
//! | `/model/<model>/joint/<joint>/cmd_vel` | `gz.msgs.Double` | the target velocity, rad/s or m/s |
//!
//! ## Example
//!
//! ```xml
//! <plugin filename="gz-sim-joint-controller-system" name="gz::sim::systems::JointController">
//!   <joint_name>axle</joint_name>
//!   <use_force_commands>true</use_force_commands>
//!   <p_gain>0.5</p_gain><i_gain>2</i_gain>
//! </plugin>
//! ```
//!
//! (loaded by `tests/model_systems/joint_controller.rs`).

use model_common::{find_joint, model_params, Pid};
use plugin_api::components::{JointForceCmd, JointType, JointVelocity, JointVelocityCmd};
use plugin_api::msgs;
use plugin_api::{
    Change, ConfigureContext, Ecm, EcmRead, EntityId, Hooks, Host, Subscriber, System, SystemInfo, UpdateInfo,
};

/// The system.
#[derive(Default)]
pub struct JointController {
    model: EntityId,
    host: Option<Host>,
    joints: Vec<EntityId>,
    /// The PID of force mode; `None` in velocity mode.
    pid: Option<Pid>,
    disable_braking: bool,
    target: f64,
    commands: Option<Subscriber<msgs::Double>>,
}

impl System for JointController {
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
        let (mut p, model_name) = model_params(ctx.xml, ecm, model, "JointController")?;
        let names = p.texts("joint_name");
        if names.is_empty() {
            p.problem("at least one <joint_name> is required");
        }
        for n in &names {
            match find_joint(ecm, model, n) {
                None => p.problem(format!("<joint_name> {n:?}: the model has no joint of that name")),
                Some(j) => {
                    let kind = ecm.get::<JointType>(j).unwrap_or_default();
                    if matches!(kind, JointType::Fixed | JointType::Ball) {
                        p.problem(format!("<joint_name> {n:?}: a {} joint has no axis to drive", kind.sdf_name()));
                    }
                    self.joints.push(j);
                }
            }
        }
        let force_mode: bool = p.value("use_force_commands", false);
        if p.value("use_actuator_msg", false) {
            p.problem(
                "<use_actuator_msg>: commands from gz.msgs.Actuators are not available in Troupe; use the Double topic",
            );
        }
        let pid = Pid::from_params(&mut p, 1.0, 0.0, 0.0);
        self.disable_braking = p.value("disable_braking", false);
        self.target = p.number("initial_velocity", 0.0);
        let default_topic =
            format!("/model/{model_name}/joint/{}/cmd_vel", names.first().map(String::as_str).unwrap_or(""));
        let topic = if p.text("sub_topic").is_some() {
            format!("/model/{model_name}{}", p.topic("sub_topic", ""))
        } else {
            p.topic("topic", &default_topic)
        };
        p.finish()?;
        self.pid = force_mode.then_some(pid);
        self.commands = Some(ctx.host.subscribe_topic(&topic)?);
        self.model = model;
        self.host = Some(ctx.host);
        Ok(())
    }

    fn pre_update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let Some(commands) = &self.commands else { return Ok(()) };
        for m in commands.take() {
            if m.data.is_finite() {
                self.target = m.data;
            } else {
                plugin_api::log::warn!(
                    "{}: a target velocity that is not finite ({}) was ignored",
                    commands.topic(),
                    m.data
                );
            }
        }
        if info.paused || !self.host.as_ref().is_some_and(|h| h.owns_entity(self.model)) {
            return Ok(());
        }
        let Some(pid) = &mut self.pid else {
            for &j in &self.joints {
                ecm.set(j, &JointVelocityCmd(vec![self.target]), Change::Periodic)?;
            }
            return Ok(());
        };
        // The first joint's velocity drives the PID; the others get the same force. Before
        // physics has written a velocity (the first step) the joint is taken at rest.
        let Some(&first) = self.joints.first() else { return Ok(()) };
        let velocity = ecm.get::<JointVelocity>(first).and_then(|v| v.0.first().copied()).unwrap_or(0.0);
        let mut force = pid.update(velocity - self.target, info.dt());
        if self.disable_braking && brakes(force, velocity, self.target) {
            force = 0.0;
        }
        for &j in &self.joints {
            ecm.set(j, &JointForceCmd(vec![force]), Change::Periodic)?;
        }
        Ok(())
    }

    fn update(&mut self, _info: &UpdateInfo, _ecm: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }
}

/// Whether `force` would slow a joint moving at `velocity`, faster than `target` in the
/// same direction.
fn brakes(force: f64, velocity: f64, target: f64) -> bool {
    let faster_same_way = velocity * target >= 0.0 && velocity.abs() > target.abs();
    faster_same_way && force * velocity < 0.0
}

plugin_api::export_plugin! {
    library: "troupe_joint_controller",
    systems: {
        "troupe::JointController" | "gz::sim::systems::JointController" | "joint_controller" => JointController::default()
    }
}

#[cfg(test)]
mod tests {
    use super::brakes;

    #[test]
    fn braking_is_only_a_push_against_a_joint_faster_than_its_target() {
        assert!(brakes(-1.0, 3.0, 2.0));
        assert!(brakes(1.0, -3.0, -2.0));
        assert!(!brakes(1.0, 3.0, 2.0), "pushing along the motion is not braking");
        assert!(!brakes(-1.0, 1.0, 2.0), "slower than the target: the PID's correction stays");
        assert!(!brakes(-1.0, 1.0, -2.0), "a reversal is driven, not freewheeled");
    }
}
