//! # troupe_velocity_control — gz-sim's VelocityControl system
//!
//! Holds a model at a commanded velocity: the last `gz.msgs.Twist` on the command topic
//! sets the model's linear and angular velocity, in the model's own frame, as physics'
//! `LinearVelocityCmd` and `AngularVelocityCmd`, which physics applies every step until a
//! new command replaces them (the velocity holds against contacts, friction and pushes).
//! Links named with `<link_name>` get their own topic and commands the same way.
//!
//! Attach it to a model. In a distributed run it acts only in the process that simulates
//! the model ([`plugin_api::Host::owns_entity`]); a hand-over configures a fresh instance,
//! starting from the initial velocities again.
//!
//! ## Parameters
//!
//! | element | type | default | unit | meaning |
//! |---|---|---|---|---|
//! | `<topic>` | topic | `/model/<model>/cmd_vel` | | the model's command topic |
//! | `<initial_linear>` | `x y z` | none | m/s | model velocity from the start, model frame |
//! | `<initial_angular>` | `x y z` | none | rad/s | model angular velocity from the start |
//! | `<link_name>` | string, repeated | — | | a link of the model with its own topic |
//!
//! Without an initial velocity and before the first command the system writes nothing:
//! the model moves freely. A link name that is not a link of the model, or numbers that do
//! not parse, are errors when the system is configured, all reported at once.
//!
//! ## Topics and services
//!
//! | topic | message | meaning |
//! |---|---|---|
//! | `/model/<model>/cmd_vel` | `gz.msgs.Twist` | the model's velocity, model frame: `linear` m/s, `angular` rad/s |
//! | `/model/<model>/link/<link>/cmd_vel` | `gz.msgs.Twist` | a named link's velocity, link frame |
//!
//! ## Example
//!
//! ```xml
//! <plugin filename="gz-sim-velocity-control-system" name="gz::sim::systems::VelocityControl">
//!   <initial_linear>1 0 0</initial_linear>
//! </plugin>
//! ```
//!
//! (loaded by `tests/model_systems/velocity.rs`).

use model_common::{model_params, vec3_from};
use plugin_api::components::LinearVelocityCmd;
use plugin_api::components::{AngularVelocityCmd, Link};
use plugin_api::math::Vec3;
use plugin_api::msgs;
use plugin_api::{
    Change, ConfigureContext, Ecm, EcmRead, EntityId, Hooks, Host, Subscriber, System, SystemInfo, UpdateInfo,
};

/// One controlled entity (the model or a link) and its command topic.
struct Controlled {
    entity: EntityId,
    commands: Subscriber<msgs::Twist>,
    /// The velocity to hold, once there is one.
    target: Option<(Vec3, Vec3)>,
    /// What was last written, so an unchanged command is not written again.
    written: Option<(Vec3, Vec3)>,
}

/// The system.
#[derive(Default)]
pub struct VelocityControl {
    model: EntityId,
    host: Option<Host>,
    controlled: Vec<Controlled>,
}

impl System for VelocityControl {
    /// It commands velocities: skipped in playback.
    fn info() -> SystemInfo {
        SystemInfo::OTHER.simulating()
    }

    fn hooks(&self) -> Hooks {
        Hooks::PRE_UPDATE
    }

    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let model = ctx.entity;
        let (mut p, model_name) = model_params(ctx.xml, &ctx.ecm, model, "VelocityControl")?;
        let topic = p.topic("topic", &format!("/model/{model_name}/cmd_vel"));
        let lin = p.vec3("initial_linear");
        let ang = p.vec3("initial_angular");
        let mut links = Vec::new();
        for name in p.texts("link_name") {
            match ctx.ecm.child_by_name(model, &name).filter(|l| ctx.ecm.has::<Link>(*l)) {
                Some(l) => links.push((l, name)),
                None => p.problem(format!("<link_name> {name:?}: the model has no link of that name")),
            }
        }
        p.finish()?;
        let initial = (lin.is_some() || ang.is_some()).then(|| (lin.unwrap_or(Vec3::ZERO), ang.unwrap_or(Vec3::ZERO)));
        self.controlled.push(Controlled {
            entity: model,
            commands: ctx.host.subscribe_topic(&topic)?,
            target: initial,
            written: None,
        });
        for (l, name) in links {
            let commands = ctx.host.subscribe_topic(&format!("/model/{model_name}/link/{name}/cmd_vel"))?;
            self.controlled.push(Controlled { entity: l, commands, target: None, written: None });
        }
        self.model = model;
        self.host = Some(ctx.host);
        Ok(())
    }

    fn pre_update(&mut self, _info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let owned = self.host.as_ref().is_some_and(|h| h.owns_entity(self.model));
        for c in &mut self.controlled {
            for cmd in c.commands.take() {
                let (lin, ang) = (vec3_from(cmd.linear.as_ref()), vec3_from(cmd.angular.as_ref()));
                if lin.to_array().iter().chain(ang.to_array().iter()).all(|x| x.is_finite()) {
                    c.target = Some((lin, ang));
                } else {
                    plugin_api::log::warn!(
                        "{}: a command that is not finite ({lin:?}, {ang:?}) was ignored",
                        c.commands.topic()
                    );
                }
            }
            let Some(target) = c.target else { continue };
            // Physics holds velocity commands until removed: write only changes (and again
            // if something removed them).
            let present = ecm.has::<LinearVelocityCmd>(c.entity) && ecm.has::<AngularVelocityCmd>(c.entity);
            if !owned || (c.written == Some(target) && present) {
                continue;
            }
            ecm.set(c.entity, &LinearVelocityCmd(target.0), Change::Periodic)?;
            ecm.set(c.entity, &AngularVelocityCmd(target.1), Change::Periodic)?;
            c.written = Some(target);
        }
        Ok(())
    }

    fn update(&mut self, _info: &UpdateInfo, _ecm: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }
}

plugin_api::export_plugin! {
    library: "troupe_velocity_control",
    systems: { "troupe::VelocityControl" | "gz::sim::systems::VelocityControl" | "velocity_control" => VelocityControl::default() }
}
