//! # troupe_apply_link_wrench — gz-sim's ApplyLinkWrench system
//!
//! Applies forces and torques to links (or to a model, through its canonical link), in
//! the world frame, as physics' `ExternalWorldWrenchCmd`: a wrench on the `wrench` topic
//! acts for one step, one on `wrench/persistent` (or written in the XML) acts every step
//! until `wrench/clear` names its entity. Wrenches on the same link in the same step add
//! up. The force acts at the link's centre of mass, or at `force_offset` (link frame, from
//! the link origin) when the message gives one, which adds the torque of the lever arm.
//!
//! Attach it to the world. In a distributed run a wrench is applied only by the process
//! that simulates the link ([`plugin_api::Host::owns_entity`]); the others ignore it.
//!
//! ## Parameters
//!
//! | element | type | default | unit | meaning |
//! |---|---|---|---|---|
//! | `<persistent>` | block, repeated | — | | a wrench applied from the start until cleared |
//! | `<persistent><entity_name>` | string | required | | the link or model, scoped (`model::link`) |
//! | `<persistent><entity_type>` | `link` or `model` | required | | what the name is |
//! | `<persistent><force>` | `x y z` | `0 0 0` | N | world frame |
//! | `<persistent><torque>` | `x y z` | `0 0 0` | N·m | world frame |
//! | `<verbose>` | bool | true | | log each wrench applied or cleared |
//!
//! A persistent block naming no existing link or model, or an unknown type, and numbers that
//! do not parse are errors when the system is configured, all reported at once.
//!
//! ## Topics and services
//!
//! | topic | message | meaning |
//! |---|---|---|
//! | `/world/<w>/wrench` | `gz.msgs.EntityWrench` | applied during the next step only |
//! | `/world/<w>/wrench/persistent` | `gz.msgs.EntityWrench` | applied every step from the next one, replacing an earlier persistent wrench on the same entity |
//! | `/world/<w>/wrench/clear` | `gz.msgs.Entity` | removes the persistent wrench of the entity |
//!
//! The entity is named by `id`, or by `name` (scoped, `model::link`) and `type` (`LINK` or
//! `MODEL`). A message naming nothing that exists is skipped with a warning naming the topic
//! and the entity.
//!
//! ## Example
//!
//! ```xml
//! <plugin filename="gz-sim-apply-link-wrench-system" name="gz::sim::systems::ApplyLinkWrench">
//!   <persistent>
//!     <entity_name>box::link</entity_name>
//!     <entity_type>link</entity_type>
//!     <force>-2 0 0</force>
//!   </persistent>
//! </plugin>
//! ```
//!
//! (loaded by `tests/model_systems/wrench.rs`).

use model_common::{find_path, name_of, vec3_from, world_pose, Params};
use plugin_api::components::{CanonicalLink, ExternalWorldWrenchCmd, Inertial, Link, Model, Wrench};
use plugin_api::math::Vec3;
use plugin_api::msgs::{self, entity::Type};
use plugin_api::{
    Change, ConfigureContext, Ecm, EcmRead, EntityId, Hooks, Host, Subscriber, System, SystemInfo, UpdateInfo,
};
use std::collections::BTreeMap;

/// A wrench in the world frame, with the point of application (link frame) if not the
/// centre of mass.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Applied {
    force: Vec3,
    torque: Vec3,
    offset: Option<Vec3>,
}

struct Io {
    once: Subscriber<msgs::EntityWrench>,
    persistent: Subscriber<msgs::EntityWrench>,
    clear: Subscriber<msgs::Entity>,
}

/// The system.
#[derive(Default)]
pub struct ApplyLinkWrench {
    host: Option<Host>,
    io: Option<Io>,
    world: EntityId,
    world_name: String,
    verbose: bool,
    /// Persistent wrenches by link, in id order (a defined summing order).
    persistent: BTreeMap<EntityId, Applied>,
}

/// The link a wrench on `entity` acts on: the entity itself if a link, a model's canonical
/// link.
fn link_of(ecm: &impl EcmRead, entity: EntityId) -> Option<EntityId> {
    if ecm.has::<Link>(entity) {
        return Some(entity);
    }
    if ecm.has::<Model>(entity) {
        return ecm.children(entity).into_iter().find(|c| ecm.has::<CanonicalLink>(*c));
    }
    None
}

/// Resolves an entity by id, or by scoped name and type: the link to push, or why not.
fn resolve(ecm: &impl EcmRead, world: EntityId, e: &msgs::Entity) -> Result<EntityId, String> {
    let target = if e.id != 0 {
        let id = EntityId(e.id);
        if !ecm.has::<Link>(id) && !ecm.has::<Model>(id) {
            return Err(format!("entity {} is not a link or a model", e.id));
        }
        id
    } else {
        let kind = match Type::try_from(e.r#type) {
            Ok(Type::Link) => "link",
            Ok(Type::Model) => "model",
            _ => {
                return Err(format!(
                    "entity {:?}: the type must be LINK or MODEL, found {}",
                    e.name,
                    type_name(e.r#type)
                ))
            }
        };
        by_name(ecm, world, &e.name, kind)?
    };
    link_of(ecm, target).ok_or_else(|| format!("model {:?} has no canonical link", name_of(ecm, target)))
}

fn type_name(t: i32) -> String {
    Type::try_from(t).map(|t| t.as_str_name().to_string()).unwrap_or_else(|_| t.to_string())
}

/// A link or model by scoped name below the world.
fn by_name(ecm: &impl EcmRead, world: EntityId, name: &str, kind: &str) -> Result<EntityId, String> {
    let found = find_path(ecm, world, name).filter(|e| match kind {
        "link" => ecm.has::<Link>(*e),
        _ => ecm.has::<Model>(*e),
    });
    found.ok_or_else(|| format!("no {kind} named {name:?} (give a scoped name, e.g. \"model::link\")"))
}

impl ApplyLinkWrench {
    fn log(&self, what: std::fmt::Arguments<'_>) {
        if self.verbose {
            plugin_api::log::info!("{what}");
        }
    }

    fn topic(&self, suffix: &str) -> String {
        format!("/world/{}/wrench{suffix}", self.world_name)
    }

    fn applied(m: &msgs::EntityWrench) -> Result<Applied, String> {
        let w = m.wrench.clone().unwrap_or_default();
        let a = Applied {
            force: vec3_from(w.force.as_ref()),
            torque: vec3_from(w.torque.as_ref()),
            offset: w.force_offset.as_ref().map(|o| vec3_from(Some(o))),
        };
        let finite = |v: Vec3| v.to_array().iter().all(|x| x.is_finite());
        if finite(a.force) && finite(a.torque) && a.offset.is_none_or(finite) {
            Ok(a)
        } else {
            Err(format!("the wrench is not finite: {a:?}"))
        }
    }
}

impl System for ApplyLinkWrench {
    /// It applies forces: skipped in playback.
    fn info() -> SystemInfo {
        SystemInfo::OTHER.simulating()
    }

    fn hooks(&self) -> Hooks {
        Hooks::PRE_UPDATE
    }

    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let mut p = Params::parse(ctx.xml, "ApplyLinkWrench")?;
        let ecm = &ctx.ecm;
        self.verbose = p.value("verbose", true);
        let world = ctx.entity;
        let blocks = p.blocks("persistent", |b| {
            let force = b.vec3("force").unwrap_or(Vec3::ZERO);
            let torque = b.vec3("torque").unwrap_or(Vec3::ZERO);
            let (Some(name), Some(kind)) = (b.text("entity_name"), b.text("entity_type")) else {
                b.problem("<entity_name> and <entity_type> are required");
                return None;
            };
            if kind != "link" && kind != "model" {
                b.problem(format!("<entity_type> must be link or model, found {kind:?}"));
                return None;
            }
            match by_name(ecm, world, &name, &kind)
                .and_then(|e| link_of(ecm, e).ok_or_else(|| format!("model {name:?} has no link")))
            {
                Ok(link) => Some((link, Applied { force, torque, offset: None })),
                Err(e) => {
                    b.problem(format!("<entity_name>: {e}"));
                    None
                }
            }
        });
        p.finish()?;
        self.persistent = blocks.into_iter().flatten().collect();
        self.world = world;
        self.world_name = ctx.host.world_name();
        self.io = Some(Io {
            once: ctx.host.subscribe_topic(&self.topic(""))?,
            persistent: ctx.host.subscribe_topic(&self.topic("/persistent"))?,
            clear: ctx.host.subscribe_topic(&self.topic("/clear"))?,
        });
        self.host = Some(ctx.host);
        Ok(())
    }

    fn pre_update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let (Some(io), Some(host)) = (&self.io, &self.host) else { return Ok(()) };
        let world = self.world;
        let mut now: Vec<(EntityId, Applied)> = Vec::new();
        let (once, persistent, clear) = (io.once.take(), io.persistent.take(), io.clear.take());
        for (msgs, persist) in [(once, false), (persistent, true)] {
            let topic = self.topic(if persist { "/persistent" } else { "" });
            for m in msgs {
                let entity = m.entity.clone().unwrap_or_default();
                match resolve(ecm, world, &entity).and_then(|l| Self::applied(&m).map(|a| (l, a))) {
                    Ok((link, a)) => {
                        self.log(format_args!("{topic}: {a:?} on {:?}", name_of(ecm, link)));
                        if persist {
                            self.persistent.insert(link, a);
                        } else {
                            now.push((link, a));
                        }
                    }
                    Err(e) => plugin_api::log::warn!("{topic}: skipped: {e}"),
                }
            }
        }
        for entity in clear {
            match resolve(ecm, world, &entity) {
                Ok(link) => {
                    if self.persistent.remove(&link).is_some() {
                        self.log(format_args!(
                            "{}: cleared the wrench on {:?}",
                            self.topic("/clear"),
                            name_of(ecm, link)
                        ));
                    }
                }
                Err(e) => plugin_api::log::warn!("{}: skipped: {e}", self.topic("/clear")),
            }
        }
        if info.paused {
            // One-shot wrenches wait for a step that moves.
            return Ok(());
        }
        now.extend(self.persistent.iter().map(|(l, a)| (*l, *a)));
        let mut total: BTreeMap<EntityId, Wrench> = BTreeMap::new();
        for (link, a) in now {
            if !host.owns_entity(link) {
                continue;
            }
            let mut torque = a.torque;
            if let Some(offset) = a.offset {
                // Lever arm from the centre of mass to the point of application.
                let pose = world_pose(ecm, link);
                let com_local = ecm.get::<Inertial>(link).map_or(Vec3::ZERO, |i| i.pose.position);
                let arm = pose.rotation.rotate(offset - com_local);
                torque = torque + arm.cross(a.force);
            }
            let w = total.entry(link).or_default();
            w.force = w.force + a.force;
            w.torque = w.torque + torque;
        }
        for (link, w) in total {
            // Add to what other systems asked for this step.
            let prior = ecm.get::<ExternalWorldWrenchCmd>(link).map(|c| c.0).unwrap_or_default();
            let sum = Wrench { force: prior.force + w.force, torque: prior.torque + w.torque };
            ecm.set(link, &ExternalWorldWrenchCmd(sum), Change::Periodic)?;
        }
        Ok(())
    }

    fn update(&mut self, _info: &UpdateInfo, _ecm: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }
}

plugin_api::export_plugin! {
    library: "troupe_apply_link_wrench",
    systems: { "troupe::ApplyLinkWrench" | "gz::sim::systems::ApplyLinkWrench" | "apply_link_wrench" => ApplyLinkWrench::default() }
}
