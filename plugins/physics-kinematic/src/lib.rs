//! # troupe_physics_kinematic — a kinematic physics backend
//!
//! Troupe's second physics system, in the spirit of gz-sim's TPE ("trivial physics engine"):
//! bodies move exactly as their velocities say, and collisions are tested for overlap, but
//! nothing pushes on anything. Large multi-robot worlds that only need robots to drive
//! where they are told (and to know what they touch) use it for speed. It replaces
//! `troupe_physics_rapier` by changing only the plugin's `filename`:
//!
//! ```xml
//! <plugin filename="troupe_physics_kinematic" name="gz::sim::systems::Physics"/>
//! ```
//!
//! (`worlds/test/kinematic/motion.sdf` has exactly this line and `tests/kinematic` loads it),
//! or `troupe sim --physics-engine troupe_physics_kinematic`, or gz-sim's
//! `<engine><filename>gz-physics-tpe-plugin</filename></engine>` inside
//! `gz-sim-physics-system`. All numbers are f64, as in the ECM; collision detection runs on
//! `parry3d-f64` (the parry rapier3d-f64 uses).
//!
//! ## Parameters
//!
//! | element | type | default | meaning |
//! |---|---|---|---|
//! | `<gz:system_priority>` | integer | -64 | read by the host: lower runs first (gz-sim's Physics priority) |
//!
//! Other children (`<engine>`, `<contacts>`...) are ignored.
//!
//! ## Topics and services
//!
//! None: it talks through components only.
//!
//! ## What it does each step (priority -64, `update` only)
//!
//! 1. Removes the models, links and collisions pending removal, then adds those created
//!    since the last step, in ascending id, from their `Pose` components (and, for models,
//!    their `LinearVelocity` / `AngularVelocity`).
//! 2. Applies `WorldPoseCmd` (also to static models, also while paused: the command is
//!    consumed and the pose written at once) and the held velocity commands
//!    `LinearVelocityCmd` / `AngularVelocityCmd` (own frame) of models and links.
//! 3. Integrates every moving body exactly over `dt` (0 while paused), see
//!    `troupe_kinematic_engine::world`.
//! 4. Writes back the `Pose` of bodies that moved (`OneTime` for a pose command, else
//!    `Periodic`) and the `WorldLinearVelocity` / `WorldAngularVelocity` of non-static models
//!    and links whose velocity changed.
//! 5. Fills `ContactSensorData` of collisions carrying `WatchContacts` with their overlaps
//!    (forces zero: there is no dynamics), and writes it only when it changed.
//!
//! What it does not do (no gravity, no contact response, no joints...) is listed in
//! `docs/physics-kinematic.md`.
//!
//! ## Errors
//!
//! A collision whose geometry has a non-positive or non-finite size, a pose command or a
//! velocity command that is not finite, stop the run with an error naming the entity
//! (`model 'm' link 'l' collision 'c': box size y must be ...`). A mesh collision is not
//! collided, with one warning naming it.

use plugin_api::components::{
    AngularVelocity, AngularVelocityCmd, Collision, Contact, ContactSensorData, Geometry, LinearVelocity,
    LinearVelocityCmd, Link, Model, Name, SelfCollide, Static, Surface, WatchContacts, WorldAngularVelocity,
    WorldLinearVelocity, WorldPoseCmd,
};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{
    log, Change, Component, ConfigureContext, Ecm, EcmRead, EntityId, Error, Hooks, ResetOutcome, System, SystemInfo,
    UpdateInfo,
};
use std::collections::{BTreeMap, HashSet};
use troupe_kinematic_engine::{
    shapes, to_iso, to_pose, to_vec3, to_vector, ContactPair, Iso, Kind, NewBody, Twist, World,
};

fn finite_pose(p: &Pose) -> bool {
    let (t, q) = (p.position, p.rotation);
    [t.x, t.y, t.z, q.w, q.x, q.y, q.z].iter().all(|v| v.is_finite())
}

/// The system.
#[derive(Default)]
pub struct KinematicPhysics {
    world: World,
    /// Links that had a velocity command last step (they follow their model again when it
    /// goes).
    driven_links: Vec<EntityId>,
    /// The contacts last written, per watched collision.
    contacts_written: BTreeMap<EntityId, Vec<Contact>>,
    watched: Vec<EntityId>,
    warned: HashSet<EntityId>,
}

/// `model 'a' link 'b' collision 'c'`: an entity named by its chain of models.
fn describe(ecm: &Ecm<'_>, entity: EntityId) -> String {
    let mut parts = Vec::new();
    let mut e = Some(entity);
    while let Some(id) = e {
        let kind = if ecm.has::<Model>(id) {
            "model"
        } else if ecm.has::<Link>(id) {
            "link"
        } else if ecm.has::<Collision>(id) {
            "collision"
        } else {
            break;
        };
        let name = ecm.get::<Name>(id).map(|n| n.0).unwrap_or_default();
        parts.push(format!("{kind} '{name}'"));
        e = ecm.parent(id);
    }
    if parts.is_empty() {
        return format!("entity {entity}");
    }
    parts.reverse();
    parts.join(" ")
}

impl KinematicPhysics {
    fn warn_once(&mut self, entity: EntityId, message: impl FnOnce() -> String) {
        if self.warned.insert(entity) {
            log::warn!("{}", message());
        }
    }

    /// Forgets everything and adds every model, link and collision of the ECM.
    fn rebuild(&mut self, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        *self = KinematicPhysics { warned: std::mem::take(&mut self.warned), ..Default::default() };
        let models = ecm.entities_with(&[Model::ID]);
        let links = ecm.entities_with(&[Link::ID]);
        let collisions = ecm.entities_with(&[Collision::ID]);
        self.add(ecm, &models, &links, &collisions)
    }

    /// Adds the entities not known yet: models (parents before nested models), then links,
    /// then collisions, each in ascending id.
    fn add(
        &mut self,
        ecm: &mut Ecm<'_>,
        models: &[EntityId],
        links: &[EntityId],
        collisions: &[EntityId],
    ) -> plugin_api::Result {
        let mut pending: Vec<EntityId> = models.iter().copied().filter(|m| self.world.body(*m).is_none()).collect();
        while !pending.is_empty() {
            let before = pending.len();
            let mut left = Vec::new();
            for m in pending {
                let parent = ecm.parent(m).filter(|p| ecm.has::<Model>(*p));
                if parent.is_some_and(|p| self.world.body(p).is_none()) {
                    left.push(m);
                    continue;
                }
                let pose = self.pose_of(ecm, m)?;
                let twist = Twist {
                    linear: to_vector(ecm.get::<LinearVelocity>(m).map(|v| v.0).unwrap_or_default()),
                    angular: to_vector(ecm.get::<AngularVelocity>(m).map(|v| v.0).unwrap_or_default()),
                };
                if !(twist.linear.is_finite() && twist.angular.is_finite()) {
                    return Err(Error::msg(format!("{}: initial velocity is not finite", describe(ecm, m))));
                }
                let is_static = ecm.get::<Static>(m).is_some_and(|s| s.0);
                let name = describe(ecm, m);
                self.world.add_body(NewBody {
                    name,
                    is_static,
                    twist: Some(twist),
                    ..NewBody::new(m, Kind::Model, parent, pose)
                });
            }
            if left.len() == before {
                for m in &left {
                    self.warn_once(*m, || format!("{}: its parent model is unknown; not simulated", describe(ecm, *m)));
                }
                break;
            }
            pending = left;
        }
        for &l in links {
            if self.world.body(l).is_some() {
                continue;
            }
            let Some(model) = ecm.parent(l).filter(|p| self.world.body(*p).is_some()) else {
                self.warn_once(l, || format!("{}: not under a simulated model; not simulated", describe(ecm, l)));
                continue;
            };
            let pose = self.pose_of(ecm, l)?;
            let self_collide = ecm.get::<SelfCollide>(l).is_some_and(|s| s.0);
            let name = describe(ecm, l);
            self.world.add_body(NewBody { name, self_collide, ..NewBody::new(l, Kind::Link, Some(model), pose) });
        }
        for &c in collisions {
            if self.world.has_collision(c) {
                continue;
            }
            let Some(link) = ecm.parent(c).filter(|p| self.world.body(*p).is_some_and(|b| b.kind == Kind::Link)) else {
                self.warn_once(c, || format!("{}: not under a simulated link; not collided", describe(ecm, c)));
                continue;
            };
            let geometry = ecm.get::<Geometry>(c).unwrap_or_default();
            let shape = match shapes::build(&geometry) {
                Ok(shapes::Built::Shape(s)) => s,
                Ok(shapes::Built::Nothing) => continue,
                Ok(shapes::Built::Unsupported(why)) => {
                    self.warn_once(c, || format!("{}: {why}; not collided", describe(ecm, c)));
                    continue;
                }
                Err(why) => return Err(Error::msg(format!("{}: {why}", describe(ecm, c)))),
            };
            let pose = self.pose_of(ecm, c)?;
            let bitmask =
                ecm.get::<Surface>(c).map(|s| s.collide_bitmask).unwrap_or(Surface::default().collide_bitmask);
            self.world.add_collision(c, link, pose, shape, bitmask);
        }
        Ok(())
    }

    fn pose_of(&self, ecm: &Ecm<'_>, e: EntityId) -> plugin_api::Result<Iso> {
        let pose = ecm.get::<Pose>(e).unwrap_or_default();
        if !finite_pose(&pose) {
            return Err(Error::msg(format!("{}: pose {pose:?} is not finite", describe(ecm, e))));
        }
        Ok(to_iso(&pose))
    }

    /// Step 1: removals and creations.
    fn sync(&mut self, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let mut removed = ecm.removed_entities_with(&[Model::ID]);
        removed.extend(ecm.removed_entities_with(&[Link::ID]));
        removed.extend(ecm.removed_entities_with(&[Collision::ID]));
        if !removed.is_empty() {
            self.world.remove(&removed);
            for e in &removed {
                self.contacts_written.remove(e);
            }
            self.driven_links.retain(|l| !removed.contains(l));
        }
        let models = ecm.new_entities_with(&[Model::ID]);
        let links = ecm.new_entities_with(&[Link::ID]);
        let collisions = ecm.new_entities_with(&[Collision::ID]);
        // New entities pending removal already (created and removed in one step) stay out.
        let keep = |v: Vec<EntityId>| -> Vec<EntityId> { v.into_iter().filter(|e| !removed.contains(e)).collect() };
        let (models, links, collisions) = (keep(models), keep(links), keep(collisions));
        if !(models.is_empty() && links.is_empty() && collisions.is_empty()) {
            self.add(ecm, &models, &links, &collisions)?;
        }
        Ok(())
    }

    /// Step 2: pose and velocity commands.
    fn commands(&mut self, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        for (e, cmd) in ecm.each::<WorldPoseCmd>(&[])? {
            if !finite_pose(&cmd.0) {
                return Err(Error::msg(format!("{}: WorldPoseCmd {:?} is not finite", describe(ecm, e), cmd.0)));
            }
            if !self.world.teleport(e, to_iso(&cmd.0)) {
                self.warn_once(e, || {
                    format!(
                        "{}: WorldPoseCmd on an entity that is not a simulated model or link; ignored",
                        describe(ecm, e)
                    )
                });
            }
            ecm.remove::<WorldPoseCmd>(e);
        }
        let linear = ecm.each::<LinearVelocityCmd>(&[])?;
        let angular = ecm.each::<AngularVelocityCmd>(&[])?;
        let mut cmds: BTreeMap<EntityId, (Option<Vec3>, Option<Vec3>)> = BTreeMap::new();
        for (e, v) in linear {
            cmds.entry(e).or_default().0 = Some(v.0);
        }
        for (e, w) in angular {
            cmds.entry(e).or_default().1 = Some(w.0);
        }
        let mut driven = Vec::new();
        for (&e, &(lin, ang)) in &cmds {
            let (lin, ang) = (lin.map(to_vector), ang.map(to_vector));
            if lin.is_some_and(|v| !v.is_finite()) || ang.is_some_and(|w| !w.is_finite()) {
                return Err(Error::msg(format!(
                    "{}: velocity command {lin:?} {ang:?} is not finite",
                    describe(ecm, e)
                )));
            }
            let Some(body) = self.world.body(e) else {
                self.warn_once(e, || {
                    format!(
                        "{}: velocity command on an entity that is not a simulated model or link; ignored",
                        describe(ecm, e)
                    )
                });
                continue;
            };
            // A component not written keeps the body's current value (zero for a link that
            // was following its model).
            let old = self.world.twist(e).unwrap_or_default();
            let kind = body.kind;
            let twist = Twist { linear: lin.unwrap_or(old.linear), angular: ang.unwrap_or(old.angular) };
            if !self.world.command(e, Some(twist)) {
                self.warn_once(e, || format!("{}: is static; velocity commands are ignored", describe(ecm, e)));
                continue;
            }
            if kind == Kind::Link {
                driven.push(e);
            }
        }
        for l in std::mem::take(&mut self.driven_links) {
            if !cmds.contains_key(&l) {
                self.world.command(l, None);
            }
        }
        self.driven_links = driven;
        Ok(())
    }

    /// Step 4: poses and velocities.
    fn write_back(&mut self, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let (mut teleported, mut moved) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
        for b in self.world.bodies().iter().filter(|b| b.rel_changed) {
            let out = if b.teleported { &mut teleported } else { &mut moved };
            out.0.push(b.entity);
            out.1.push(to_pose(&b.rel));
        }
        let changes = self.world.velocity_changes();
        let vel_ids: Vec<EntityId> = changes.iter().map(|c| c.0).collect();
        let lin: Vec<_> = changes.iter().map(|c| WorldLinearVelocity(to_vec3(c.1))).collect();
        let ang: Vec<_> = changes.iter().map(|c| WorldAngularVelocity(to_vec3(c.2))).collect();
        if !teleported.0.is_empty() {
            ecm.write_many(&teleported.0, &teleported.1, Change::OneTime)?;
        }
        if !moved.0.is_empty() {
            ecm.write_many(&moved.0, &moved.1, Change::Periodic)?;
        }
        if !vel_ids.is_empty() {
            ecm.write_many(&vel_ids, &lin, Change::Periodic)?;
            ecm.write_many(&vel_ids, &ang, Change::Periodic)?;
        }
        Ok(())
    }

    /// Step 5: contacts of watched collisions.
    fn report_contacts(&mut self, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let watched = ecm.entities_with(&[WatchContacts::ID, Collision::ID]);
        if watched != self.watched {
            self.world.set_watched(&watched);
            // No longer watched: its last contacts would go stale, so they go.
            for e in self.watched.iter().filter(|e| watched.binary_search(e).is_err()) {
                if self.contacts_written.remove(e).is_some() && ecm.has_entity(*e) {
                    ecm.remove::<ContactSensorData>(*e);
                }
            }
            self.watched = watched;
        }
        if self.watched.is_empty() {
            return Ok(());
        }
        let mut now: BTreeMap<EntityId, Vec<Contact>> = self.watched.iter().map(|e| (*e, Vec::new())).collect();
        for ContactPair { collision, other, points } in self.world.contacts() {
            now.entry(collision).or_default().push(Contact {
                collision1: collision,
                collision2: other,
                positions: points.iter().map(|p| to_vec3(p.position)).collect(),
                normals: points.iter().map(|p| to_vec3(p.normal)).collect(),
                depths: points.iter().map(|p| p.depth).collect(),
                forces: vec![Vec3::ZERO; points.len()],
            });
        }
        for (e, contacts) in now {
            if self.contacts_written.get(&e) != Some(&contacts) {
                ecm.set(e, &ContactSensorData(contacts.clone()), Change::Periodic)?;
                self.contacts_written.insert(e, contacts);
            }
        }
        Ok(())
    }
}

impl System for KinematicPhysics {
    fn info() -> SystemInfo {
        SystemInfo::PHYSICS
    }

    fn priority(&self) -> Option<i32> {
        // gz-sim's Physics system priority.
        Some(-64)
    }

    fn hooks(&self) -> Hooks {
        Hooks::UPDATE
    }

    fn configure(&mut self, mut ctx: ConfigureContext<'_>) -> plugin_api::Result {
        self.rebuild(&mut ctx.ecm)?;
        log::info!(
            "kinematic physics: {} bodies, {} collisions",
            self.world.bodies().len(),
            self.world.collision_count()
        );
        Ok(())
    }

    fn reset(&mut self, _info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result<ResetOutcome> {
        // The host restored the ECM to its state after load: start again from it.
        self.rebuild(ecm)?;
        Ok(ResetOutcome::DONE)
    }

    fn update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        self.sync(ecm)?;
        self.world.begin_step();
        self.commands(ecm)?;
        let dt = if info.paused { 0.0 } else { info.dt() };
        self.world.step(dt);
        self.write_back(ecm)?;
        self.report_contacts(ecm)
    }
}

plugin_api::export_plugin! {
    library: "troupe_physics_kinematic",
    systems: {
        "troupe::KinematicPhysics" | "gz::sim::systems::Physics" | "kinematic" => KinematicPhysics::default(),
    }
}
