//! The rapier world kept in step with the ECM: creation and removal of bodies, colliders and
//! joints, commands, the step, and the write-back.

use crate::convert::{pose_from_r, pose_to_r, vec_from_r, vec_to_r};
use crate::shapes;
use plugin_api::components::{
    AngularVelocity, AngularVelocityCmd, AxisData, CanonicalLink, ChildLinkName, Collision, Contact, ContactSensorData,
    ExternalWorldWrenchCmd, Geometry, Gravity, GravityEnabled, Inertial, Joint, JointAxis, JointAxis2, JointForceCmd,
    JointPosition, JointPositionReset, JointTransmittedWrench, JointType, JointVelocity, JointVelocityCmd, Kinematic,
    LinearVelocity, LinearVelocityCmd, Link, Model, Name, ParentLinkName, SelfCollide, Static, Surface, WatchContacts,
    WorldAngularAcceleration, WorldAngularVelocity, WorldLinearAcceleration, WorldLinearVelocity, WorldPoseCmd, Wrench,
};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{log, Change, Component, ComponentTypeId, Ecm, EcmError, EcmRead, EntityId, Error, QueryCache, Ray};
use rapier3d_f64::dynamics::CoefficientCombineRule;
use rapier3d_f64::dynamics::{
    CCDSolver, GenericJointBuilder, ImpulseJointHandle, ImpulseJointSet, IntegrationParameters, IslandManager,
    JointAxesMask, JointAxis as RAxis, MotorModel, MultibodyJointSet, RigidBodyBuilder, RigidBodyHandle, RigidBodySet,
    SoftBodySet,
};
use rapier3d_f64::geometry::SolverFlags;
use rapier3d_f64::geometry::{
    ColliderBuilder, ColliderHandle, ColliderSet, DefaultBroadPhase, Group, InteractionGroups, InteractionTestMode,
    NarrowPhase,
};
use rapier3d_f64::math::{Matrix, Pose as RPose, Rotation, Vector};
use rapier3d_f64::pipeline::{ActiveHooks, PairFilterContext, PhysicsHooks, PhysicsPipeline, QueryFilter};
use std::collections::{BTreeMap, BTreeSet};

mod commands;
mod dynamics;
mod writeback;

use dynamics::{mass_properties, set_passive_motor};

/// The rapier sets and pipeline.
pub struct Sim {
    pub params: IntegrationParameters,
    pub gravity: Vector,
    pipeline: PhysicsPipeline,
    pub islands: IslandManager,
    broad: DefaultBroadPhase,
    narrow: NarrowPhase,
    pub bodies: RigidBodySet,
    pub colliders: ColliderSet,
    joints: ImpulseJointSet,
    multibody: MultibodyJointSet,
    soft: SoftBodySet,
    ccd: CCDSolver,
}

impl Sim {
    fn new(dt: f64) -> Sim {
        Sim {
            params: IntegrationParameters { dt, ..Default::default() },
            gravity: Vector::new(0.0, 0.0, -9.8),
            pipeline: PhysicsPipeline::new(),
            islands: IslandManager::new(),
            broad: DefaultBroadPhase::new(),
            narrow: NarrowPhase::new(),
            bodies: RigidBodySet::new(),
            colliders: ColliderSet::new(),
            joints: ImpulseJointSet::new(),
            multibody: MultibodyJointSet::new(),
            soft: SoftBodySet::new(),
            ccd: CCDSolver::new(),
        }
    }

    fn step(&mut self) {
        self.pipeline.step(
            self.gravity,
            &self.params,
            &mut self.islands,
            &mut self.broad,
            &mut self.narrow,
            &mut self.bodies,
            &mut self.colliders,
            &mut self.joints,
            &mut self.multibody,
            &mut self.soft,
            &mut self.ccd,
            &SelfCollideFilter,
            &(),
        );
    }

    fn remove_body(&mut self, h: RigidBodyHandle) {
        self.bodies.remove(
            h,
            &mut self.islands,
            &mut self.colliders,
            &mut self.joints,
            &mut self.multibody,
            &mut self.soft,
            true,
        );
    }
}

/// A link's body. Links and models live in slot vectors (a body's `user_data` is its link's
/// slot) so the per-step write-back finds them without a map lookup.
struct LinkState {
    entity: EntityId,
    body: RigidBodyHandle,
    /// Slot of the model the link belongs to.
    model: usize,
    name: String,
}

struct ModelState {
    entity: EntityId,
    parent: Option<EntityId>,
    /// Slot of the canonical link.
    canonical: Option<usize>,
    /// The canonical link's pose in the model frame (constant).
    canon_offset: RPose,
    /// The model's world pose as last computed.
    world: RPose,
    /// Slots of the model's links.
    links: Vec<usize>,
    is_static: bool,
    /// The step in which the model was last found moving.
    moved_in: u64,
}

struct JointState {
    handle: ImpulseJointHandle,
    kind: JointType,
    parent: RigidBodyHandle,
    child: RigidBodyHandle,
    /// Joint frames (x along the first axis) in the parent and child body frames.
    frame1: RPose,
    frame2: RPose,
    /// The rotation from the SDF joint frame to `frame2` (x along the first axis).
    axis_rot: Rotation,
    /// The damping/spring motors the SDF asked for, per free axis, to restore when a velocity
    /// command ends.
    axes: Vec<(RAxis, AxisData)>,
    commanded: bool,
    written_idle: bool,
    /// The last reported angle of a revolute joint, accumulated over whole turns (rapier
    /// knows it only wrapped to (−π, π]); `None` until first written. See `write_joints`.
    angle: Option<f64>,
}

/// A collision read from the ECM, waiting for its shape.
struct NewCollision {
    entity: EntityId,
    body: RigidBodyHandle,
    /// Self-collision filter group (0: none).
    group: u128,
    /// Scoped name, for errors.
    what: String,
    geometry: Geometry,
    pose: RPose,
    surface: Surface,
}

/// What physics does, configured from the plugin XML.
#[derive(Clone, Debug)]
pub struct Options {
    /// Let resting bodies sleep (rapier's islands): they then cost nothing per step.
    pub sleep: bool,
}

/// The physics world mirroring the ECM.
pub struct World {
    pub sim: Sim,
    opts: Options,
    world_entity: EntityId,
    started: bool,
    ground: Option<RigidBodyHandle>,
    links: BTreeMap<EntityId, usize>,
    link_slots: Vec<Option<LinkState>>,
    models: BTreeMap<EntityId, usize>,
    model_slots: Vec<Option<ModelState>>,
    steps: u64,
    /// The ECM's entity count at this step's update.
    count_after: u64,
    /// Per model slot: the pose being written this step (the in-place write path).
    scratch: Vec<Pose>,
    collisions: BTreeMap<EntityId, ColliderHandle>,
    joints: BTreeMap<EntityId, JointState>,
    forced: Vec<RigidBodyHandle>,
    /// Previous world velocities (of the link origin) of links that report accelerations.
    prev_vel: BTreeMap<EntityId, (Vector, Vector)>,
    /// Watched collisions that reported contacts last step.
    contacts_reported: BTreeSet<EntityId>,
    /// The per-step queries' answers (carriers of commands, velocities, contacts), kept
    /// while the ECM's structure stays the same: most steps ask the host nothing for them.
    queries: QueryCache,
}

fn err(msg: String) -> Error {
    Error::msg(msg)
}

/// An error naming the command and entity unless every coordinate of `v` is finite (a NaN
/// handed to the engine would spread to everything it touches).
fn finite(v: &Vec3, what: &str, e: EntityId) -> Result<(), Error> {
    if v.x.is_finite() && v.y.is_finite() && v.z.is_finite() {
        Ok(())
    } else {
        Err(err(format!("entity {e}: {what} {v:?} is not finite")))
    }
}

impl World {
    pub fn new(world_entity: EntityId, dt: f64, opts: Options) -> World {
        World {
            sim: Sim::new(dt),
            opts,
            world_entity,
            started: false,
            ground: None,
            links: BTreeMap::new(),
            link_slots: Vec::new(),
            models: BTreeMap::new(),
            model_slots: Vec::new(),
            steps: 0,
            count_after: 0,
            scratch: Vec::new(),
            collisions: BTreeMap::new(),
            joints: BTreeMap::new(),
            forced: Vec::new(),
            prev_vel: BTreeMap::new(),
            contacts_reported: BTreeSet::new(),
            queries: QueryCache::new(),
        }
    }

    /// Writes to `out[i]` the distance along `rays[i]` to the first collider within
    /// `max_range` (+infinity for none), leaving out the colliders of link `exclude`. A ray
    /// starting inside a shape meets it where it leaves it (as the sensors' own geometry).
    pub fn cast_rays(&self, rays: &[Ray], max_range: f64, exclude: EntityId, out: &mut [f64]) {
        let mut filter = QueryFilter::default();
        if let Some(l) = self.link(exclude) {
            filter = filter.exclude_rigid_body(l.body);
        }
        let query = self.sim.broad.as_query_pipeline(
            self.sim.narrow.query_dispatcher(),
            &self.sim.bodies,
            &self.sim.colliders,
            filter,
        );
        for (r, o) in rays.iter().zip(out.iter_mut()) {
            let ray = rapier3d_f64::geometry::Ray::new(vec_to_r(r.origin), vec_to_r(r.direction));
            *o = query.cast_ray(&ray, max_range, false).map_or(f64::INFINITY, |(_, t)| t);
        }
    }

    fn link(&self, e: EntityId) -> Option<&LinkState> {
        self.links.get(&e).and_then(|&i| self.link_slots[i].as_ref())
    }

    fn model(&self, e: EntityId) -> Option<&ModelState> {
        self.models.get(&e).and_then(|&i| self.model_slots[i].as_ref())
    }

    fn slot_body(&self, slot: usize) -> Option<RigidBodyHandle> {
        self.link_slots[slot].as_ref().map(|l| l.body)
    }

    /// One update: sync entities, apply commands, step unless paused, write back.
    pub fn update(&mut self, ecm: &mut Ecm<'_>, dt: f64, paused: bool) -> Result<(), Error> {
        let unchanged = self.queries.refresh(ecm);
        let result = self.update_with(ecm, dt, paused, unchanged);
        // After this update's own creations and removals (commands taken, contact data
        // first written): the next update finds the structure unchanged unless another
        // system changed it.
        self.queries.refresh(ecm);
        result
    }

    fn update_with(&mut self, ecm: &mut Ecm<'_>, dt: f64, paused: bool, unchanged: bool) -> Result<(), Error> {
        if let Some(g) = ecm.get::<Gravity>(self.world_entity) {
            self.sim.gravity = vec_to_r(g.0);
        }
        if !(self.started && unchanged) {
            self.sync_entities(ecm)?;
            // Everything alive now, pending removals included: a lower count next time means
            // entities went that physics may not have seen go. (An unchanged structure keeps
            // the count.)
            self.count_after = ecm.entity_count();
        }
        self.apply_pose_commands(ecm)?;
        self.apply_joint_resets(ecm)?;
        if paused || dt <= 0.0 {
            return Ok(());
        }
        if (self.sim.params.dt - dt).abs() > 0.0 {
            self.sim.params.dt = dt;
        }
        self.apply_velocity_commands(ecm)?;
        self.apply_wrenches(ecm)?;
        self.apply_joint_commands(ecm)?;
        self.sim.step();
        for h in self.forced.drain(..) {
            if let Some(b) = self.sim.bodies.get_mut(h) {
                b.reset_forces(false);
                b.reset_torques(false);
            }
        }
        self.write_poses(ecm)?;
        self.write_velocities(ecm, dt)?;
        self.write_joints(ecm, dt)?;
        self.write_contacts(ecm)?;
        Ok(())
    }

    /// `ecm.each::<C>(&[])` without a call into the host when no entity carries `C` (command
    /// components are absent in most steps).
    fn commands<C: Component>(&mut self, ecm: &Ecm<'_>) -> Result<Vec<(EntityId, C)>, EcmError> {
        if self.queries.entities_with(ecm, &[C::ID]).is_empty() {
            return Ok(Vec::new());
        }
        ecm.each::<C>(&[])
    }

    // ---------------------------------------------------------------- entities

    fn remove_joint(&mut self, j: EntityId) {
        if let Some(s) = self.joints.remove(&j) {
            self.sim.joints.remove(s.handle, true);
        }
    }

    fn remove_collision(&mut self, c: EntityId) {
        if let Some(h) = self.collisions.remove(&c) {
            self.sim.colliders.remove(h, &mut self.sim.islands, &mut self.sim.bodies, &mut self.sim.soft, true);
        }
    }

    fn remove_link(&mut self, l: EntityId) {
        let Some(slot) = self.links.remove(&l) else { return };
        let Some(s) = self.link_slots[slot].take() else { return };
        self.sim.remove_body(s.body);
        self.prev_vel.remove(&l);
        if let Some(m) = self.model_slots[s.model].as_mut() {
            m.links.retain(|x| *x != slot);
            if m.canonical == Some(slot) {
                m.canonical = None;
            }
        }
    }

    /// After removals: drops model states whose model goes (or went), and the map entries
    /// of colliders and joints that went with their bodies.
    fn after_removals(&mut self, gone: impl Fn(EntityId) -> bool) {
        let models: Vec<EntityId> = self.models.keys().copied().filter(|m| gone(*m)).collect();
        for m in models {
            if let Some(slot) = self.models.remove(&m) {
                self.model_slots[slot] = None;
            }
        }
        let colliders = &self.sim.colliders;
        self.collisions.retain(|_, h| colliders.contains(*h));
        let joints = &self.sim.joints;
        self.joints.retain(|_, s| joints.contains(s.handle));
    }

    fn sync_entities(&mut self, ecm: &mut Ecm<'_>) -> Result<(), Error> {
        if self.started {
            // Entities removed at the end of an earlier step without physics seeing them
            // pending (a later system asked after physics had run): the entity count fell
            // further than what physics removed, so look for what vanished. Only in steps
            // after a removal; the common path below costs nothing per body.
            if ecm.entity_count() < self.count_after {
                let vanished = |e: &EntityId| !ecm.has_entity(*e);
                let joints: Vec<EntityId> = self.joints.keys().filter(|e| vanished(e)).copied().collect();
                let collisions: Vec<EntityId> = self.collisions.keys().filter(|e| vanished(e)).copied().collect();
                let links: Vec<EntityId> = self.links.keys().filter(|e| vanished(e)).copied().collect();
                joints.into_iter().for_each(|j| self.remove_joint(j));
                collisions.into_iter().for_each(|c| self.remove_collision(c));
                links.into_iter().for_each(|l| self.remove_link(l));
                self.after_removals(|m| !ecm.has_entity(m));
            }
            // Removals first: an entity removed this step leaves the engine before it steps.
            let mut removed = false;
            for j in ecm.removed_entities_with(&[Joint::ID]) {
                self.remove_joint(j);
                removed = true;
            }
            for c in ecm.removed_entities_with(&[Collision::ID]) {
                self.remove_collision(c);
                removed = true;
            }
            for l in ecm.removed_entities_with(&[Link::ID]) {
                self.remove_link(l);
                removed = true;
            }
            if removed {
                // Models exist here for their links: drop those being removed with them.
                self.after_removals(|m| ecm.is_marked_for_removal(m));
            }
        }
        let which = |ecm: &Ecm<'_>, ty: ComponentTypeId, started: bool| {
            if started {
                ecm.new_entities_with(&[ty])
            } else {
                ecm.entities_with(&[ty])
            }
        };
        let started = self.started;
        self.started = true;
        for l in which(ecm, Link::ID, started) {
            if !ecm.is_marked_for_removal(l) {
                self.add_link(ecm, l)?;
            }
        }
        // Read every new collision first, then build the shapes in one run, as a bare
        // rapier program would: shapes are separate heap objects the narrow phase visits
        // every step, and built between the reads' temporaries they would lie scattered.
        // (Rapier's pair updates on the 3k world ran 3-10 % slower in the plugin than in
        // the bench's bare copy; in a row the gap was within the machine's noise, 3-6 %.)
        let mut pending = Vec::new();
        for c in which(ecm, Collision::ID, started) {
            if !ecm.is_marked_for_removal(c) {
                pending.extend(self.read_collision(ecm, c));
            }
        }
        for p in pending {
            self.add_collision(p)?;
        }
        for j in which(ecm, Joint::ID, started) {
            if !ecm.is_marked_for_removal(j) {
                self.add_joint(ecm, j)?;
            }
        }
        Ok(())
    }

    fn scoped_name(&self, ecm: &Ecm<'_>, e: EntityId) -> String {
        let mut parts = Vec::new();
        let mut cur = Some(e);
        while let Some(x) = cur {
            if x == self.world_entity {
                break;
            }
            parts.push(ecm.get::<Name>(x).map(|n| n.0).unwrap_or_else(|| format!("#{x}")));
            cur = ecm.parent(x);
        }
        parts.reverse();
        parts.join("::")
    }

    /// The slot of model `m`, created (with its parent models first) when its first link
    /// arrives: models matter to physics only through their links, so no per-step query
    /// looks for new models. `None` if `m` is not a model.
    fn ensure_model(&mut self, ecm: &Ecm<'_>, m: EntityId) -> Option<usize> {
        if let Some(&slot) = self.models.get(&m) {
            return Some(slot);
        }
        if !ecm.has::<Model>(m) {
            return None;
        }
        if let Some(p) = ecm.parent(m) {
            self.ensure_model(ecm, p);
        }
        self.add_model(ecm, m);
        self.models.get(&m).copied()
    }

    fn add_model(&mut self, ecm: &Ecm<'_>, m: EntityId) {
        let pose = pose_to_r(&ecm.get::<Pose>(m).unwrap_or(Pose::IDENTITY));
        let parent = ecm.parent(m).filter(|p| self.models.contains_key(p));
        let (world, parent_static) = match parent.and_then(|p| self.model(p)) {
            Some(p) => (p.world * pose, p.is_static),
            None => (pose, false),
        };
        let is_static = parent_static || ecm.get::<Static>(m).is_some_and(|s| s.0);
        self.models.insert(m, self.model_slots.len());
        self.model_slots.push(Some(ModelState {
            entity: m,
            parent,
            canonical: None,
            canon_offset: RPose::IDENTITY,
            world,
            links: Vec::new(),
            is_static,
            moved_in: 0,
        }));
    }

    fn add_link(&mut self, ecm: &Ecm<'_>, l: EntityId) -> Result<(), Error> {
        let Some((model_id, model_slot)) = ecm.parent(l).and_then(|p| self.ensure_model(ecm, p).map(|s| (p, s))) else {
            return Ok(()); // a link outside any model: nothing to simulate it in
        };
        let local = pose_to_r(&ecm.get::<Pose>(l).unwrap_or(Pose::IDENTITY));
        let name = self.scoped_name(ecm, l);
        let slot = self.link_slots.len();
        let model = self.model_slots[model_slot].as_mut().expect("models in the map have a slot");
        let world = model.world * local;
        if model.canonical.is_none() || ecm.has::<CanonicalLink>(l) {
            model.canonical = Some(slot);
            model.canon_offset = local;
        }
        model.links.push(slot);
        let kinematic = ecm.get::<Kinematic>(l).is_some_and(|k| k.0);
        // The body's centre of mass in the link frame (the body has no collider yet, so rapier
        // cannot tell it before insertion).
        let mut local_com = Vector::ZERO;
        let builder = if model.is_static {
            RigidBodyBuilder::fixed()
        } else if kinematic {
            RigidBodyBuilder::kinematic_velocity_based()
        } else {
            let inertial = ecm.get::<Inertial>(l).unwrap_or_default();
            let mp = mass_properties(&inertial).map_err(|e| err(format!("link {name}: {e}")))?;
            local_com = mp.local_com;
            let gravity = ecm.get::<GravityEnabled>(l).is_none_or(|g| g.0);
            RigidBodyBuilder::dynamic()
                .additional_mass_properties(mp)
                .gravity_scale(if gravity { 1.0 } else { 0.0 })
                .can_sleep(self.opts.sleep)
        };
        let mut body = builder.pose(world).user_data(slot as u128).build();
        if body.is_dynamic() || body.is_kinematic() {
            // Starting velocity: the link's own components, else its model's.
            let rot = world.rotation;
            let model_rot = model.world.rotation;
            let lin = ecm
                .get::<WorldLinearVelocity>(l)
                .map(|v| vec_to_r(v.0))
                .or_else(|| ecm.get::<LinearVelocity>(l).map(|v| rot * vec_to_r(v.0)))
                .or_else(|| ecm.get::<WorldLinearVelocity>(model_id).map(|v| vec_to_r(v.0)))
                .or_else(|| ecm.get::<LinearVelocity>(model_id).map(|v| model_rot * vec_to_r(v.0)));
            let ang = ecm
                .get::<WorldAngularVelocity>(l)
                .map(|v| vec_to_r(v.0))
                .or_else(|| ecm.get::<AngularVelocity>(l).map(|v| rot * vec_to_r(v.0)))
                .or_else(|| ecm.get::<WorldAngularVelocity>(model_id).map(|v| vec_to_r(v.0)))
                .or_else(|| ecm.get::<AngularVelocity>(model_id).map(|v| model_rot * vec_to_r(v.0)));
            if lin.is_some() || ang.is_some() {
                let (lin, ang) = (lin.unwrap_or(Vector::ZERO), ang.unwrap_or(Vector::ZERO));
                // The link origin's velocity moved to the centre of mass.
                let com_offset = world.rotation * local_com;
                body.set_linvel(lin + ang.cross(com_offset), false);
                body.set_angvel(ang, false);
            }
        }
        let body = self.sim.bodies.insert(body);
        self.links.insert(l, slot);
        self.link_slots.push(Some(LinkState { entity: l, body, model: model_slot, name }));
        Ok(())
    }

    /// What a new collision needs from the ECM (`None`: not on a simulated link).
    fn read_collision(&self, ecm: &Ecm<'_>, c: EntityId) -> Option<NewCollision> {
        let link_entity = ecm.parent(c)?;
        let link = self.link(link_entity)?;
        // Links of one model do not collide with each other unless it self-collides.
        let model = self.model_slots[link.model].as_ref();
        let multi_link = model.is_some_and(|m| m.links.len() > 1);
        let self_collide = ecm
            .get::<SelfCollide>(link_entity)
            .or_else(|| model.and_then(|m| ecm.get::<SelfCollide>(m.entity)))
            .is_some_and(|s| s.0);
        Some(NewCollision {
            entity: c,
            body: link.body,
            group: if multi_link && !self_collide { link.model as u128 + 1 } else { 0 },
            what: format!("{}::{}", link.name, ecm.get::<Name>(c).map(|n| n.0).unwrap_or_default()),
            geometry: ecm.get::<Geometry>(c).unwrap_or_default(),
            pose: pose_to_r(&ecm.get::<Pose>(c).unwrap_or(Pose::IDENTITY)),
            surface: ecm.get::<Surface>(c).unwrap_or_default(),
        })
    }

    fn add_collision(&mut self, n: NewCollision) -> Result<(), Error> {
        let fixed = self.sim.bodies.get(n.body).is_some_and(|b| b.is_fixed());
        let Some(shape) = shapes::build(&n.geometry, fixed, &n.what).map_err(err)? else {
            return Ok(());
        };
        let surface = n.surface;
        let mask = Group::from_bits_truncate(surface.collide_bitmask);
        let collider = ColliderBuilder::new(shape.shape)
            .position(n.pose * shape.local)
            .density(0.0)
            .friction(surface.mu.max(0.0))
            .friction_combine_rule(CoefficientCombineRule::Min)
            .restitution(surface.restitution.max(0.0))
            .restitution_combine_rule(CoefficientCombineRule::Multiply)
            .collision_groups(InteractionGroups::new(mask, mask, InteractionTestMode::And))
            .user_data(n.entity.0 as u128 | n.group << 64)
            .active_hooks(if n.group != 0 { ActiveHooks::FILTER_CONTACT_PAIRS } else { ActiveHooks::empty() })
            .build();
        let h = self.sim.colliders.insert_with_parent(collider, n.body, &mut self.sim.bodies);
        self.collisions.insert(n.entity, h);
        Ok(())
    }

    /// The link a joint names, relative to the joint's model (`a::b` walks nested models).
    fn find_link(&self, ecm: &Ecm<'_>, model: EntityId, name: &str) -> Option<EntityId> {
        let mut scope = model;
        let mut parts = name.split("::").peekable();
        while let Some(part) = parts.next() {
            let child = ecm.child_by_name(scope, part)?;
            if parts.peek().is_none() {
                return self.links.contains_key(&child).then_some(child);
            }
            scope = child;
        }
        None
    }

    fn ground(&mut self) -> RigidBodyHandle {
        *self
            .ground
            .get_or_insert_with(|| self.sim.bodies.insert(RigidBodyBuilder::fixed().user_data(u128::MAX).build()))
    }

    fn add_joint(&mut self, ecm: &Ecm<'_>, j: EntityId) -> Result<(), Error> {
        let name = self.scoped_name(ecm, j);
        let model = ecm.parent(j).unwrap_or(self.world_entity);
        let kind = ecm.get::<JointType>(j).unwrap_or_default();
        let link_named = |which: &str, link: Option<String>| -> Result<Option<EntityId>, Error> {
            let link = link.ok_or_else(|| err(format!("joint {name}: no {which} link named")))?;
            if link == "world" {
                return Ok(None);
            }
            self.find_link(ecm, model, &link).map(Some).ok_or_else(|| {
                err(format!(
                    "joint {name}: {which} link \"{link}\" is not a link of model {}",
                    self.scoped_name(ecm, model)
                ))
            })
        };
        let parent = link_named("parent", ecm.get::<ParentLinkName>(j).map(|n| n.0))?;
        let child = link_named("child", ecm.get::<ChildLinkName>(j).map(|n| n.0))?
            .ok_or_else(|| err(format!("joint {name}: the child link cannot be the world")))?;
        let child_body = self.link(child).expect("found above").body;
        let parent_body = match parent {
            Some(p) => self.link(p).expect("found above").body,
            None => self.ground(),
        };
        if parent_body == child_body {
            return Err(err(format!("joint {name}: parent and child are the same link")));
        }
        let (locked, axes): (JointAxesMask, &[RAxis]) = match kind {
            JointType::Fixed => (JointAxesMask::LOCKED_FIXED_AXES, &[]),
            JointType::Revolute | JointType::Continuous => (JointAxesMask::LOCKED_REVOLUTE_AXES, &[RAxis::AngX]),
            JointType::Prismatic => (JointAxesMask::LOCKED_PRISMATIC_AXES, &[RAxis::LinX]),
            JointType::Ball => (JointAxesMask::LOCKED_SPHERICAL_AXES, &[]),
            JointType::Universal | JointType::Revolute2 => {
                (JointAxesMask::LIN_AXES | JointAxesMask::ANG_Z, &[RAxis::AngX, RAxis::AngY])
            }
            other => {
                log::warn!(
                    "joint {name}: {} joints are not simulated by physics-rapier; the joint is left out",
                    other.sdf_name()
                );
                return Ok(());
            }
        };
        let axis1 = ecm.get::<JointAxis>(j).map(|a| a.0).unwrap_or_default();
        let axis2 = ecm
            .get::<JointAxis2>(j)
            .map(|a| a.0)
            .unwrap_or(AxisData { xyz: Vec3::new(0.0, 1.0, 0.0), ..Default::default() });
        let unit = |a: &AxisData, which: &str| {
            let v = vec_to_r(a.xyz);
            if v.is_finite() && v.length() > 1e-12 {
                Ok(v.normalize())
            } else {
                Err(err(format!("joint {name}: {which} xyz {:?} has no direction", a.xyz)))
            }
        };
        let a1 = unit(&axis1, "<axis>")?;
        let frame_rot = if axes.len() == 2 {
            let a2 = unit(&axis2, "<axis2>")?;
            let a2 = a2 - a1 * a1.dot(a2);
            if a2.length() < 1e-9 {
                return Err(err(format!("joint {name}: <axis> and <axis2> are parallel")));
            }
            let a2 = a2.normalize();
            Rotation::from_mat3(&Matrix::from_cols(a1, a2, a1.cross(a2)))
        } else {
            Rotation::from_rotation_arc(Vector::X, a1)
        };
        let joint_pose = pose_to_r(&ecm.get::<Pose>(j).unwrap_or(Pose::IDENTITY));
        let xp = *self.sim.bodies[parent_body].position();
        let xc = *self.sim.bodies[child_body].position();
        let frame2 = joint_pose * RPose::from_rotation(frame_rot);
        let frame1 = xp.inv_mul(&(xc * frame2));
        let mut builder =
            GenericJointBuilder::new(locked).local_frame1(frame1).local_frame2(frame2).contacts_enabled(false);
        let mut axis_list = Vec::new();
        for (i, &ax) in axes.iter().enumerate() {
            let data = if i == 0 { axis1 } else { axis2 };
            let angular = !matches!(ax, RAxis::LinX);
            let limited =
                kind != JointType::Continuous && data.lower > -1e15 && data.upper < 1e15 && data.lower <= data.upper;
            // A revolute range of a full turn or more does not limit anything.
            if limited && (!angular || data.upper - data.lower < 2.0 * std::f64::consts::PI) {
                builder = builder.limits(ax, [data.lower, data.upper]);
            }
            axis_list.push((ax, data));
        }
        let mut joint = builder.build();
        for (ax, data) in &axis_list {
            set_passive_motor(&mut joint, *ax, data);
        }
        let handle = self.sim.joints.insert(parent_body, child_body, joint, true);
        self.joints.insert(
            j,
            JointState {
                handle,
                kind,
                parent: parent_body,
                child: child_body,
                frame1,
                frame2,
                axis_rot: frame_rot,
                axes: axis_list,
                commanded: false,
                written_idle: false,
                angle: None,
            },
        );
        Ok(())
    }

    // ---------------------------------------------------------------- commands

    /// The slots of a model, of the models nested in it, and of all their links.
    fn subtree(&self, model: EntityId) -> (Vec<usize>, Vec<usize>) {
        let mut models = vec![model];
        let mut i = 0;
        while i < models.len() {
            let m = models[i];
            models.extend(self.model_slots.iter().flatten().filter(|s| s.parent == Some(m)).map(|s| s.entity));
            i += 1;
        }
        let slots: Vec<usize> = models.iter().map(|m| self.models[m]).collect();
        let links = slots
            .iter()
            .flat_map(|&m| self.model_slots[m].as_ref().map(|s| s.links.clone()).unwrap_or_default())
            .collect();
        (slots, links)
    }
}

/// Keeps the links of a model from colliding with each other unless it self-collides
/// (SDFormat's default is not to). A collider's `user_data` holds its collision entity in
/// the low 64 bits and, for links that do not self-collide, their model slot + 1 in the
/// high ones; only such colliders ask for this filter, so others cost nothing.
struct SelfCollideFilter;

impl PhysicsHooks for SelfCollideFilter {
    fn filter_contact_pair(&self, ctx: &PairFilterContext) -> Option<SolverFlags> {
        let group = |h| ctx.colliders.get(h).map_or(0, |c| (c.user_data >> 64) as u64);
        let (a, b) = (group(ctx.collider1), group(ctx.collider2));
        if a != 0 && a == b {
            None
        } else {
            Some(SolverFlags::COMPUTE_RIGID_IMPULSES)
        }
    }
}
