//! # troupe_user_commands — gz-sim's UserCommands system
//!
//! Services of world `<w>` that change the world, each as an ordinary ECM change made in
//! `pre_update` on the simulation thread (priority −16384, gz-sim's): entities come from
//! the host's factory with host-allocated ids, poses go through `WorldPoseCmd`, lights and
//! physics parameters through their components, new systems through the host's
//! `troupe.add_system` event. Nothing bypasses the ECM.
//!
//! | service | request | effect |
//! |---|---|---|
//! | `/world/<w>/create` | `EntityFactory` | a model or light from `sdf`, `sdf_filename` or `light` |
//! | `/world/<w>/create_multiple` | `EntityFactory_V` | each of them; result = AND |
//! | `/world/<w>/remove` | `Entity` | removes a top-level model or light, by id or by name and type |
//! | `/world/<w>/set_pose` | `Pose` | `WorldPoseCmd` on the entity, by id or by name |
//! | `/world/<w>/set_pose_vector` | `Pose_V` | each of them |
//! | `/world/<w>/light_config` | `Light` | the `Light` component of a light, by id or by name |
//! | `/world/<w>/set_physics` | `Physics` | the world's `Physics` component (step size, RTF) |
//! | `/world/<w>/entity/system/add` | `EntityPlugin_V` | the host loads the plugins |
//!
//! All answer `gz.msgs.Boolean`. `/world/<w>/light_config` is also a topic of `Light`
//! messages, carried out as the service's requests. The plain service answers true as soon as it takes the
//! request (gz-sim's asynchronous services); `<service>/blocking` answers after the step
//! that carried the command out, true or false with the reason in the log.
//!
//! ## set_pose with and without physics
//!
//! A physics system consumes (removes) `WorldPoseCmd` in its `update`. This system's
//! `update` runs before physics' (lower priority first) and `post_update` cannot write, so
//! the first hook that can tell whether physics took the command is the next step's
//! `pre_update`: a command still there, unchanged, is applied to `Pose` then (and removed),
//! before any other system of that step runs. With physics the pose changes in the step
//! the command was written; without, at the start of the next one; either way once. Lights
//! are not physics bodies: their `Pose` is written directly. See `docs/user-commands.md`.

mod convert;
mod sdf;

use plugin_api::components::{Light, Model, Name, Physics, World, WorldPoseCmd};
use plugin_api::math::Pose;
use plugin_api::msgs::{self, Boolean};
use plugin_api::prost::{Message, Name as MsgName};
use plugin_api::{
    events, log, Change, Component, ConfigureContext, Ecm, EcmRead, EcmView, EntityId, Host, ResetOutcome,
    ServiceServer, Subscriber, System, SystemInfo, UpdateInfo,
};
use std::sync::Arc;

/// gz-sim's priority for UserCommands.
pub const PRIORITY: i32 = -16384;

type Reply = Box<dyn FnOnce(bool) + Send>;

/// A service and its `/blocking` twin.
struct Pair<Req: Message + Default + MsgName> {
    plain: Arc<ServiceServer<Req, Boolean>>,
    blocking: Arc<ServiceServer<Req, Boolean>>,
}

impl<Req: Message + Default + MsgName + Clone + 'static> Pair<Req> {
    fn offer(host: &Host, name: &str) -> plugin_api::Result<Self> {
        Ok(Pair {
            plain: Arc::new(host.offer_service(name)?),
            blocking: Arc::new(host.offer_service(&format!("{name}/blocking"))?),
        })
    }

    /// The waiting requests, plain ones answered true already, each with the way to answer
    /// it once carried out (a no-op for plain ones).
    fn take(&self) -> Vec<(Req, Option<Reply>)> {
        let mut out = Vec::new();
        for r in self.plain.take() {
            self.plain.reply(&r, true, &Boolean { data: true, ..Default::default() });
            out.push((r.message, None));
        }
        for r in self.blocking.take() {
            let server = self.blocking.clone();
            let message = r.message.clone();
            let reply: Reply = Box::new(move |ok| {
                server.reply(&r, ok, &Boolean { data: ok, ..Default::default() });
            });
            out.push((message, Some(reply)));
        }
        out
    }
}

struct Services {
    create: Pair<msgs::EntityFactory>,
    create_multiple: Pair<msgs::EntityFactoryV>,
    remove: Pair<msgs::Entity>,
    set_pose: Pair<msgs::Pose>,
    set_pose_vector: Pair<msgs::PoseV>,
    light_config: Pair<msgs::Light>,
    set_physics: Pair<msgs::Physics>,
    system_add: Pair<msgs::EntityPluginV>,
    /// `light_config` is also a topic, as in gz-sim.
    light_topic: Subscriber<msgs::Light>,
}

/// A blocking request carried out in this step, answered in `post_update` unless a pose
/// command of it is still waiting for the next step's `pre_update`.
struct Done {
    reply: Reply,
    ok: bool,
    poses: Vec<(EntityId, Pose)>,
    next_step: bool,
}

/// The system.
#[derive(Default)]
pub struct UserCommands {
    world: EntityId,
    world_name: String,
    host: Option<Host>,
    services: Option<Services>,
    /// Pose commands written this step, applied in the next `pre_update` if no physics
    /// system consumed them.
    written: Vec<(EntityId, Pose)>,
    /// Blocking requests carried out this step.
    done: Vec<Done>,
    /// Blocking requests answered at the start of the next step.
    next_step: Vec<(Reply, bool)>,
}

impl UserCommands {
    fn fail(&self, service: &str, reason: impl std::fmt::Display) -> bool {
        log::warn!("/world/{}/{service}: {reason}", self.world_name);
        false
    }

    /// A top-level entity (a child of the world) named `name`.
    fn top_level(&self, ecm: &Ecm<'_>, name: &str) -> Option<EntityId> {
        ecm.child_by_name(self.world, name)
    }

    fn describe(ecm: &Ecm<'_>, e: EntityId) -> String {
        match ecm.get::<Name>(e) {
            Some(n) => format!("entity {e} ({:?})", n.0),
            None => format!("entity {e}"),
        }
    }

    // ---- create ----

    fn create(&mut self, ecm: &mut Ecm<'_>, req: &msgs::EntityFactory) -> bool {
        match self.try_create(ecm, req) {
            Ok(e) => {
                log::info!("/world/{}/create: created {}", self.world_name, Self::describe(ecm, e));
                true
            }
            Err(reason) => self.fail("create", reason),
        }
    }

    fn try_create(&mut self, ecm: &mut Ecm<'_>, req: &msgs::EntityFactory) -> Result<EntityId, String> {
        use msgs::entity_factory::From;
        let (text, light, origin) =
            match &req.from {
                Some(From::Sdf(s)) => (s.clone(), None, "the sdf string".to_string()),
                Some(From::SdfFilename(f)) => {
                    let path = sdf::resolve(f)?;
                    let text = plugin_api::files::read_to_string(&path, plugin_api::files::TEXT_LIMIT)
                        .map_err(|e| format!("sdf_filename {}: {e}", path.display()))?;
                    (text, None, format!("{}", path.display()))
                }
                Some(From::Light(l)) => {
                    let kind = convert::light_type_name(l)?;
                    let text = format!("<sdf version=\"1.9\"><light name=\"\" type=\"{kind}\"/></sdf>");
                    (text, Some(l.clone()), "the light message".to_string())
                }
                Some(From::Model(_)) => return Err(
                    "creating from a Model message is not supported (gz-sim does not either); send sdf or sdf_filename"
                        .into(),
                ),
                Some(From::CloneName(n)) => {
                    return Err(format!("clone_name {n:?}: cloning is not supported yet; send sdf or sdf_filename"))
                }
                None => return Err("the request has none of sdf, sdf_filename or light".into()),
            };
        let top = sdf::top(&text).map_err(|e| format!("{origin}: {e}"))?;
        let light_name = light.as_ref().map(|l| l.name.clone()).unwrap_or_default();
        let wanted = [req.name.as_str(), light_name.as_str(), top.name.as_str()].into_iter().find(|n| !n.is_empty());
        let Some(wanted) = wanted else {
            return Err(format!("{origin}: the <{}> has no name and the request gives none", top.kind));
        };
        let name = if self.top_level(ecm, wanted).is_none() {
            wanted.to_string()
        } else if req.allow_renaming {
            (0u64..).map(|i| format!("{wanted}_{i}")).find(|n| self.top_level(ecm, n).is_none()).expect("a free name")
        } else {
            return Err(format!("an entity named {wanted:?} already exists in the world and allow_renaming is false"));
        };
        // Pose and light values are checked before anything is created.
        let pose = req.pose.as_ref().map(convert::pose).transpose().map_err(|e| format!("pose: {e}"))?;
        let light_pose = light
            .as_ref()
            .and_then(|l| l.pose.as_ref())
            .map(convert::pose)
            .transpose()
            .map_err(|e| format!("light pose: {e}"))?;
        let light_value = light.as_ref().map(|l| convert::light(l, &Light::default())).transpose()?;
        let text = if name == top.name { text } else { sdf::renamed(&text, &top, &name) };
        let entity = ecm.create_from_sdf(&text, self.world).map_err(|e| format!("{origin}: {e}"))?;
        let set = |ecm: &mut Ecm<'_>| -> Result<(), plugin_api::EcmError> {
            if let Some(l) = &light_value {
                ecm.set(entity, l, Change::OneTime)?;
            }
            if let Some(p) = pose.or(light_pose) {
                ecm.set(entity, &p, Change::OneTime)?;
            }
            Ok(())
        };
        set(ecm).map_err(|e| format!("created entity {entity} but could not set its pose or light: {e}"))?;
        Ok(entity)
    }

    // ---- remove ----

    /// The entity an `Entity` message names: by id if non-zero, else by name among the
    /// world's children of that type (MODEL or LIGHT).
    fn entity_from_msg(&self, ecm: &Ecm<'_>, msg: &msgs::Entity) -> Result<EntityId, String> {
        if msg.id != 0 {
            let e = EntityId(msg.id);
            return if ecm.has_entity(e) { Ok(e) } else { Err(format!("no entity with id {}", msg.id)) };
        }
        if msg.name.is_empty() {
            return Err("the request names no entity (id 0 and no name)".into());
        }
        let ty = msgs::entity::Type::try_from(msg.r#type).map_err(|_| format!("unknown entity type {}", msg.r#type))?;
        let is_kind = |e: EntityId| match ty {
            msgs::entity::Type::Model => ecm.has::<Model>(e),
            _ => ecm.has::<Light>(e),
        };
        if !matches!(ty, msgs::entity::Type::Model | msgs::entity::Type::Light) {
            return Err(format!(
                "entity {:?} of type {}: only MODEL and LIGHT can be named here",
                msg.name,
                ty.as_str_name()
            ));
        }
        ecm.children(self.world)
            .into_iter()
            .find(|e| is_kind(*e) && ecm.get::<Name>(*e).is_some_and(|n| n.0 == msg.name))
            .ok_or_else(|| format!("no {} named {:?} in the world", ty.as_str_name(), msg.name))
    }

    fn remove(&mut self, ecm: &mut Ecm<'_>, req: &msgs::Entity) -> bool {
        let e = match self.entity_from_msg(ecm, req) {
            Ok(e) => e,
            Err(reason) => return self.fail("remove", reason),
        };
        if !(ecm.has::<Model>(e) || ecm.has::<Light>(e)) {
            return self.fail("remove", format!("{} is neither a model nor a light", Self::describe(ecm, e)));
        }
        if ecm.parent(e) != Some(self.world) {
            return self.fail("remove", format!("{} is not a direct child of the world", Self::describe(ecm, e)));
        }
        log::info!("/world/{}/remove: removing {}", self.world_name, Self::describe(ecm, e));
        if !ecm.request_remove(e) {
            return self.fail("remove", format!("the host refused to remove {}", Self::describe(ecm, e)));
        }
        true
    }

    // ---- set_pose ----

    fn set_pose(&mut self, ecm: &mut Ecm<'_>, req: &msgs::Pose, service: &str) -> Option<(EntityId, Pose)> {
        match self.try_set_pose(ecm, req) {
            Ok(done) => Some(done),
            Err(reason) => {
                self.fail(service, reason);
                None
            }
        }
    }

    fn try_set_pose(&mut self, ecm: &mut Ecm<'_>, req: &msgs::Pose) -> Result<(EntityId, Pose), String> {
        let e = if req.id != 0 {
            let e = EntityId(req.id as u64);
            if !ecm.has_entity(e) {
                return Err(format!("no entity with id {}", req.id));
            }
            e
        } else if !req.name.is_empty() {
            self.top_level(ecm, &req.name).ok_or_else(|| format!("no entity named {:?} in the world", req.name))?
        } else {
            return Err("the request names no entity (id 0 and no name)".into());
        };
        if !ecm.has::<Pose>(e) || ecm.has::<World>(e) {
            return Err(format!("{} has no pose to set", Self::describe(ecm, e)));
        }
        let pose = convert::pose(req).map_err(|e| format!("{}: {e}", req.name))?;
        let is_light = ecm.has::<Light>(e);
        let written = if is_light {
            // Not a physics body: nothing would consume a command.
            ecm.set(e, &pose, Change::OneTime)
        } else {
            ecm.set(e, &WorldPoseCmd(pose), Change::OneTime)
        };
        written.map_err(|err| format!("{}: {err}", Self::describe(ecm, e)))?;
        if is_light {
            return Ok((e, pose));
        }
        self.written.retain(|(w, _)| *w != e);
        self.written.push((e, pose));
        Ok((e, pose))
    }

    /// Applies pose commands of the previous step that no physics system consumed.
    fn apply_unconsumed_poses(&mut self, ecm: &mut Ecm<'_>) {
        for (e, pose) in std::mem::take(&mut self.written) {
            if ecm.get::<WorldPoseCmd>(e).is_some_and(|c| c.0 == pose) {
                if let Err(err) = ecm.set(e, &pose, Change::OneTime) {
                    log::warn!("/world/{}/set_pose: {}: {err}", self.world_name, Self::describe(ecm, e));
                }
                ecm.remove::<WorldPoseCmd>(e);
            }
        }
    }

    // ---- light_config ----

    fn light_config(&mut self, ecm: &mut Ecm<'_>, req: &msgs::Light) -> bool {
        let e = if req.id != 0 {
            let e = EntityId(req.id as u64);
            if !ecm.has_entity(e) {
                return self.fail("light_config", format!("no entity with id {}", req.id));
            }
            e
        } else if !req.name.is_empty() {
            match ecm
                .entities_with(&[Light::ID])
                .into_iter()
                .find(|e| ecm.get::<Name>(*e).is_some_and(|n| n.0 == req.name))
            {
                Some(e) => e,
                None => return self.fail("light_config", format!("no light named {:?}", req.name)),
            }
        } else {
            return self.fail("light_config", "the request names no light (id 0 and no name)");
        };
        let Some(current) = ecm.get::<Light>(e) else {
            return self.fail("light_config", format!("{} is not a light", Self::describe(ecm, e)));
        };
        let light = match convert::light(req, &current) {
            Ok(l) => l,
            Err(reason) => return self.fail("light_config", format!("{}: {reason}", Self::describe(ecm, e))),
        };
        match ecm.set(e, &light, Change::OneTime) {
            Ok(_) => true,
            Err(err) => self.fail("light_config", format!("{}: {err}", Self::describe(ecm, e))),
        }
    }

    // ---- set_physics ----

    fn set_physics(&mut self, ecm: &mut Ecm<'_>, req: &msgs::Physics) -> bool {
        let step = req.max_step_size;
        let rtf = req.real_time_factor;
        // 0 keeps the current step size (as gz-sim); anything else must fit the host's clock.
        if let Some(why) = Physics::step_size_problem(step).filter(|_| step != 0.0) {
            return self.fail("set_physics", format!("{why} (0 keeps the current one)"));
        }
        if let Some(why) = Physics::real_time_factor_problem(rtf) {
            return self.fail("set_physics", why);
        }
        let mut physics = ecm.get::<Physics>(self.world).unwrap_or_default();
        if step > 0.0 {
            physics.max_step_size = step;
        }
        // As gz-sim: a factor of (about) zero leaves the current one.
        if rtf > 1e-5 {
            physics.real_time_factor = rtf;
        }
        if req.gravity.is_some() {
            log::warn!("/world/{}/set_physics: changing gravity is not supported yet; ignored", self.world_name);
        }
        match ecm.set(self.world, &physics, Change::OneTime) {
            Ok(_) => true,
            Err(err) => self.fail("set_physics", err),
        }
    }

    // ---- entity/system/add ----

    fn system_add(&mut self, ecm: &mut Ecm<'_>, req: &msgs::EntityPluginV) -> bool {
        let target = match &req.entity {
            None => Ok(self.world),
            Some(m) if m.id == 0 && m.name.is_empty() => Ok(self.world),
            Some(m) => self.entity_from_msg(ecm, m),
        };
        let target = match target {
            Ok(e) => e,
            Err(reason) => return self.fail("entity/system/add", reason),
        };
        if req.plugins.is_empty() {
            return self.fail("entity/system/add", "the request has no plugins");
        }
        if let Some(p) = req.plugins.iter().find(|p| p.filename.is_empty()) {
            return self.fail("entity/system/add", format!("plugin {:?} has no filename", p.name));
        }
        let mut resolved = req.clone();
        let entity = resolved.entity.get_or_insert_with(Default::default);
        entity.id = target.0;
        if let Some(host) = &self.host {
            host.emit(events::ADD_SYSTEM, &resolved.encode_to_vec());
        }
        true
    }

    /// Takes every waiting request and carries it out.
    fn execute(&mut self, ecm: &mut Ecm<'_>) {
        // Most steps bring no request: one call answers that for all sixteen services.
        if self.host.as_ref().is_some_and(|h| !h.has_pending()) {
            return;
        }
        let Some(s) = self.services.take() else { return };
        for (req, reply) in s.create.take() {
            let ok = self.create(ecm, &req);
            self.finish(reply, ok, Vec::new(), false);
        }
        for (req, reply) in s.create_multiple.take() {
            let mut ok = true;
            for item in &req.data {
                ok &= self.create(ecm, item);
            }
            if req.data.is_empty() {
                ok = self.fail("create_multiple", "the request holds no EntityFactory");
            }
            self.finish(reply, ok, Vec::new(), false);
        }
        for (req, reply) in s.remove.take() {
            let ok = self.remove(ecm, &req);
            self.finish(reply, ok, Vec::new(), false);
        }
        for (req, reply) in s.set_pose.take() {
            let done = self.set_pose(ecm, &req, "set_pose");
            let ok = done.is_some();
            self.finish(reply, ok, done.into_iter().collect(), false);
        }
        for (req, reply) in s.set_pose_vector.take() {
            let mut ok = !req.pose.is_empty();
            if !ok {
                self.fail("set_pose_vector", "the request holds no Pose");
            }
            let mut poses = Vec::new();
            for p in &req.pose {
                match self.set_pose(ecm, p, "set_pose_vector") {
                    Some(done) => poses.push(done),
                    None => ok = false,
                }
            }
            self.finish(reply, ok, poses, false);
        }
        for (req, reply) in s.light_config.take() {
            let ok = self.light_config(ecm, &req);
            self.finish(reply, ok, Vec::new(), false);
        }
        for msg in s.light_topic.take() {
            self.light_config(ecm, &msg);
        }
        for (req, reply) in s.set_physics.take() {
            let ok = self.set_physics(ecm, &req);
            self.finish(reply, ok, Vec::new(), false);
        }
        for (req, reply) in s.system_add.take() {
            let ok = self.system_add(ecm, &req);
            // The host loads the systems when it delivers the event, at the end of this
            // step: answered at the start of the next one.
            self.finish(reply, ok, Vec::new(), true);
        }
        self.services = Some(s);
    }

    fn finish(&mut self, reply: Option<Reply>, ok: bool, poses: Vec<(EntityId, Pose)>, next_step: bool) {
        if let Some(reply) = reply {
            // Only commands still pending matter for when to answer.
            let poses = poses.into_iter().filter(|p| self.written.contains(p)).collect();
            self.done.push(Done { reply, ok, poses, next_step });
        }
    }
}

impl System for UserCommands {
    fn info() -> SystemInfo {
        SystemInfo::USER_COMMANDS
    }

    fn priority(&self) -> Option<i32> {
        Some(PRIORITY)
    }

    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        self.world_name = ctx.host.world_name();
        self.world = if ctx.ecm.has::<World>(ctx.entity) {
            ctx.entity
        } else {
            let world = ctx.ecm.entities_with(&[World::ID]).into_iter().next();
            let world = world.ok_or_else(|| plugin_api::Error::msg("user commands: the ECM has no world entity"))?;
            log::warn!(
                "user commands: attached to entity {}, not a world; serving world {:?} instead",
                ctx.entity,
                self.world_name
            );
            world
        };
        let w = format!("/world/{}", self.world_name);
        let host = &ctx.host;
        self.services = Some(Services {
            create: Pair::offer(host, &format!("{w}/create"))?,
            create_multiple: Pair::offer(host, &format!("{w}/create_multiple"))?,
            remove: Pair::offer(host, &format!("{w}/remove"))?,
            set_pose: Pair::offer(host, &format!("{w}/set_pose"))?,
            set_pose_vector: Pair::offer(host, &format!("{w}/set_pose_vector"))?,
            light_config: Pair::offer(host, &format!("{w}/light_config"))?,
            set_physics: Pair::offer(host, &format!("{w}/set_physics"))?,
            system_add: Pair::offer(host, &format!("{w}/entity/system/add"))?,
            light_topic: host.subscribe_topic(&format!("{w}/light_config"))?,
        });
        self.host = Some(ctx.host.clone());
        Ok(())
    }

    fn pre_update(&mut self, _info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        self.apply_unconsumed_poses(ecm);
        for (reply, ok) in self.next_step.drain(..) {
            reply(ok);
        }
        self.execute(ecm);
        Ok(())
    }

    fn update(&mut self, _info: &UpdateInfo, _ecm: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }

    fn post_update(&mut self, _info: &UpdateInfo, ecm: &EcmView<'_>) -> plugin_api::Result {
        for d in self.done.drain(..) {
            let waiting = d.poses.iter().any(|(e, p)| ecm.get::<WorldPoseCmd>(*e).is_some_and(|c| c.0 == *p));
            if d.next_step || waiting {
                self.next_step.push((d.reply, d.ok));
            } else {
                (d.reply)(d.ok);
            }
        }
        Ok(())
    }

    fn reset(&mut self, _info: &UpdateInfo, _ecm: &mut Ecm<'_>) -> plugin_api::Result<ResetOutcome> {
        // The services stay; what was pending belonged to the world before the reset.
        self.written.clear();
        let pending = self.next_step.drain(..).map(|(r, _)| r).chain(self.done.drain(..).map(|d| d.reply));
        for reply in pending.collect::<Vec<_>>() {
            log::warn!("/world/{}: a blocking command was overtaken by a world reset; answered false", self.world_name);
            reply(false);
        }
        Ok(ResetOutcome::DONE)
    }
}

plugin_api::export_plugin! {
    library: "troupe_user_commands",
    systems: {
        "troupe::UserCommands" | "gz::sim::systems::UserCommands" | "user_commands" => UserCommands::default(),
    }
}
