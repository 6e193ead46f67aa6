//! The kinematic world: bodies (models and links) that move only as their velocities say,
//! and collisions attached to links, tested for overlap with parry.
//!
//! Independent of the ECM (the plugin feeds it and reads it back), so its behaviour is
//! unit-tested here directly.
//!
//! # Bodies
//!
//! Every model and link is a body with a pose relative to its parent body (a nested model's
//! parent is its model, a link's its model, a top-level model's the world). A body either
//! *follows its parent* (keeps its relative pose: links without a velocity command, models
//! without a velocity) or *moves on its own* with a constant body-frame twist: a model's last
//! commanded (or initial) velocity, a link's current command. Moving bodies are integrated
//! exactly: the pose after `dt` is `pose · exp(dt · twist)`, the screw motion a constant
//! body-frame twist describes, so a constant linear velocity `v` moves a body by `R v dt`
//! per step (rounding aside) and a constant angular velocity turns it about its own axis.

use crate::shapes::Shape;
use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::{Pose as Iso, Rotation, Vector};
use parry3d_f64::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher};
use parry3d_f64::shape::SharedShape;
use plugin_api::EntityId;
use std::collections::HashMap;

/// A body-frame twist: linear velocity of the body's origin and angular velocity, both in the
/// body's own frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Twist {
    /// m/s, body frame.
    pub linear: Vector,
    /// rad/s, body frame.
    pub angular: Vector,
}

impl Twist {
    fn is_zero(&self) -> bool {
        self.linear == Vector::ZERO && self.angular == Vector::ZERO
    }
}

/// `exp(dt · twist)`: the displacement, in the body's frame, of a body moving with this
/// constant body-frame twist for `dt`.
pub fn screw(twist: Twist, dt: f64) -> Iso {
    let phi = twist.angular * dt;
    let u = twist.linear * dt;
    let theta = phi.length();
    if theta == 0.0 {
        return Iso::from_translation(u);
    }
    // V = I + (1 - cos θ)/θ² [φ]× + (θ - sin θ)/θ³ [φ]×²  (series near 0 for accuracy).
    let (a, b) = if theta < 1e-4 {
        let t2 = theta * theta;
        (0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0)
    } else {
        ((1.0 - theta.cos()) / (theta * theta), (theta - theta.sin()) / (theta * theta * theta))
    };
    let pxu = phi.cross(u);
    let translation = u + pxu * a + phi.cross(pxu) * b;
    Iso::from_parts(translation, Rotation::from_scaled_axis(phi))
}

/// Whether a body is a model or a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A model (top-level or nested).
    Model,
    /// A link.
    Link,
}

/// What [`World::add_body`] needs to know of a model or link.
#[derive(Clone, Debug)]
pub struct NewBody {
    /// Its entity.
    pub entity: EntityId,
    /// Model or link.
    pub kind: Kind,
    /// Scoped name for messages.
    pub name: String,
    /// The parent body (`None`: the world).
    pub parent: Option<EntityId>,
    /// A static model (its descendants are static too).
    pub is_static: bool,
    /// Links: self-collision with the other links of its model.
    pub self_collide: bool,
    /// Its Pose component: pose relative to the parent.
    pub rel: Iso,
    /// Initial twist (models: their velocity components; `None` or zero: at rest).
    pub twist: Option<Twist>,
}

impl NewBody {
    /// A body at `rel` under `parent`, not static, without self-collision, at rest.
    pub fn new(entity: EntityId, kind: Kind, parent: Option<EntityId>, rel: Iso) -> NewBody {
        NewBody { entity, kind, name: String::new(), parent, is_static: false, self_collide: false, rel, twist: None }
    }
}

/// A model or link.
#[derive(Clone, Debug)]
pub struct Body {
    /// Its entity.
    pub entity: EntityId,
    /// Model or link.
    pub kind: Kind,
    /// Scoped name for messages (`model::link`).
    pub name: String,
    /// The parent body (`None`: the world).
    pub parent: Option<EntityId>,
    /// Where the parent is in the world's body list (kept up to date by the world).
    parent_index: Option<usize>,
    /// The top-level model it belongs to (itself for a top-level model).
    pub root: EntityId,
    /// Nesting depth (0 for top-level models).
    pub depth: u32,
    /// Belongs to a static model: never moves except by a pose command.
    pub is_static: bool,
    /// Links: whether its collisions collide with other links of its model.
    pub self_collide: bool,
    /// Pose relative to the parent.
    pub rel: Iso,
    /// Pose in the world.
    pub world: Iso,
    /// Moves on its own with this twist; `None`: follows its parent.
    pub twist: Option<Twist>,
    /// World-frame linear and angular velocity after the last step.
    pub world_velocity: (Vector, Vector),
    /// Its world pose changed in the last step.
    pub moved: bool,
    /// Its relative pose changed in the last step (its Pose component must be written).
    pub rel_changed: bool,
    /// Its relative pose was set by a pose command in the last step.
    pub teleported: bool,
    /// The world velocity last handed out by [`World::velocity_changes`].
    reported_velocity: Option<(Vector, Vector)>,
}

/// A collision of a link.
pub struct Collision {
    /// Its entity.
    pub entity: EntityId,
    /// The link it belongs to.
    pub link: EntityId,
    /// Where the link is in the world's body list (kept up to date by the world).
    link_index: usize,
    /// The shape and its offset in the collision frame.
    pub shape: SharedShape,
    /// Shape pose relative to the link (collision pose · shape offset).
    pub local: Iso,
    /// Collision bitmask (`troupe.Surface`): two collisions touch only if they share a bit.
    pub bitmask: u32,
    /// Whether its contacts are reported.
    pub watched: bool,
    /// Shape pose in the world, and its bounding box (brought up to date only when contacts
    /// are asked for: `aabb_stale`).
    world: Iso,
    aabb: Aabb,
    aabb_stale: bool,
}

/// A collision's bounding box in the sweep of [`World::contacts`].
struct SweepBox {
    mins: Vector,
    maxs: Vector,
    watched: bool,
    /// Position in the collision list.
    index: usize,
}

/// A conservative world bounding box: the shape's local box turned and moved (parry's exact
/// boxes of cylinders and hulls cost several support-point searches each, which dominated
/// the step). A half-space's box is unbounded, except along an axis its normal points
/// along to within 1e-12 (a ground plane's box ends at the plane, plus 1 µm for that
/// tilt: right within a kilometre of its origin), so boxes above the ground skip it.
fn bounding_box(shape: &SharedShape, pose: &Iso) -> Aabb {
    let Some(half_space) = shape.as_halfspace() else {
        return shape.compute_local_aabb().transform_by(pose);
    };
    let mut aabb = shape.compute_aabb(pose);
    let n = pose.rotation * half_space.normal;
    let p = pose.translation;
    for k in 0..3 {
        let others = (0..3).filter(|&j| j != k).all(|j| n[j].abs() < 1e-12);
        if others && n[k] > 0.0 {
            aabb.maxs[k] = p[k] + 1e-6;
        } else if others && n[k] < 0.0 {
            aabb.mins[k] = p[k] - 1e-6;
        }
    }
    aabb
}

/// One contact point between two collisions, as the ECM reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// World position: midway between the two shapes' deepest points.
    pub position: Vector,
    /// Unit normal, pointing from the other collision to this one.
    pub normal: Vector,
    /// Penetration depth, m (0 when just touching).
    pub depth: f64,
}

/// The contacts of one watched collision with another.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactPair {
    /// The watched collision.
    pub collision: EntityId,
    /// The other collision.
    pub other: EntityId,
    /// The points, in the order parry's manifolds give them.
    pub points: Vec<Point>,
}

/// The kinematic world.
#[derive(Default)]
pub struct World {
    /// Bodies sorted by (depth, id): parents before their children.
    bodies: Vec<Body>,
    body_index: HashMap<EntityId, usize>,
    /// Collisions in ascending id.
    collisions: Vec<Collision>,
    collision_index: HashMap<EntityId, usize>,
    /// Bodies were added or removed since `parent_index` / `link_index` were computed.
    stale: bool,
}

impl World {
    /// The bodies, parents before children.
    pub fn bodies(&self) -> &[Body] {
        &self.bodies
    }
    /// The body of `entity`.
    pub fn body(&self, entity: EntityId) -> Option<&Body> {
        self.body_index.get(&entity).map(|&i| &self.bodies[i])
    }
    fn body_mut(&mut self, entity: EntityId) -> Option<&mut Body> {
        self.body_index.get(&entity).map(|&i| &mut self.bodies[i])
    }
    /// Whether `entity` is a collision of this world.
    pub fn has_collision(&self, entity: EntityId) -> bool {
        self.collision_index.contains_key(&entity)
    }
    /// Number of collisions.
    pub fn collision_count(&self) -> usize {
        self.collisions.len()
    }

    /// Adds a body whose parent (if any) is already in the world. Answers false if the
    /// parent is unknown.
    pub fn add_body(&mut self, new: NewBody) -> bool {
        let NewBody { entity, kind, name, parent, is_static, self_collide, rel, twist } = new;
        let (parent_world, root, depth, parent_static) = match parent {
            None => (Iso::IDENTITY, entity, 0, false),
            Some(p) => match self.body(p) {
                Some(pb) => (pb.world, pb.root, pb.depth + 1, pb.is_static),
                None => return false,
            },
        };
        let parent_index = parent.map(|p| self.body_index[&p]);
        let is_static = is_static || parent_static;
        let body = Body {
            entity,
            kind,
            name,
            parent,
            parent_index,
            root,
            depth,
            is_static,
            self_collide,
            rel,
            world: parent_world * rel,
            twist: if is_static { None } else { twist.filter(|t| !t.is_zero() || kind == Kind::Link) },
            world_velocity: (Vector::ZERO, Vector::ZERO),
            moved: false,
            rel_changed: false,
            teleported: false,
            reported_velocity: None,
        };
        let at = self.bodies.partition_point(|b| (b.depth, b.entity) < (depth, entity));
        self.bodies.insert(at, body);
        // Usually appended (entities arrive parents first, ascending): only the tail moves.
        for (i, b) in self.bodies.iter().enumerate().skip(at) {
            self.body_index.insert(b.entity, i);
        }
        // The new body's parent sits before it, so its own parent_index is right; others'
        // may have shifted.
        self.bodies[at].world_velocity = self.velocity_of(at);
        self.stale = true;
        true
    }

    /// Adds a collision of a known link; answers false if the link is unknown.
    pub fn add_collision(&mut self, entity: EntityId, link: EntityId, pose: Iso, shape: Shape, bitmask: u32) -> bool {
        let Some(l) = self.body(link) else { return false };
        let local = pose * shape.offset;
        let world = l.world * local;
        let aabb = bounding_box(&shape.shape, &world);
        let link_index = self.body_index[&link];
        let c = Collision {
            entity,
            link,
            link_index,
            shape: shape.shape,
            local,
            bitmask,
            watched: false,
            world,
            aabb,
            aabb_stale: false,
        };
        let at = self.collisions.partition_point(|c| c.entity < entity);
        self.collisions.insert(at, c);
        for (i, c) in self.collisions.iter().enumerate().skip(at) {
            self.collision_index.insert(c.entity, i);
        }
        true
    }

    /// Removes the bodies and collisions of `entities`, and everything below a removed body.
    pub fn remove(&mut self, entities: &[EntityId]) {
        if entities.is_empty() {
            return;
        }
        let mut gone: std::collections::HashSet<EntityId> = entities.iter().copied().collect();
        // Parents come first, so one pass finds every descendant.
        for b in &self.bodies {
            if b.parent.is_some_and(|p| gone.contains(&p)) {
                gone.insert(b.entity);
            }
        }
        let before = (self.bodies.len(), self.collisions.len());
        self.bodies.retain(|b| !gone.contains(&b.entity));
        self.collisions.retain(|c| !gone.contains(&c.entity) && !gone.contains(&c.link));
        if before.0 != self.bodies.len() {
            self.reindex_bodies();
        }
        if before.1 != self.collisions.len() {
            self.reindex_collisions();
        }
        self.stale = true;
    }

    /// Recomputes the list positions of parents and links after bodies came or went.
    fn refresh_indices(&mut self) {
        let index = &self.body_index;
        for b in &mut self.bodies {
            b.parent_index = b.parent.map(|p| index[&p]);
        }
        for c in &mut self.collisions {
            c.link_index = index[&c.link];
        }
        self.stale = false;
    }

    fn reindex_bodies(&mut self) {
        self.body_index = self.bodies.iter().enumerate().map(|(i, b)| (b.entity, i)).collect();
    }
    fn reindex_collisions(&mut self) {
        self.collision_index = self.collisions.iter().enumerate().map(|(i, c)| (c.entity, i)).collect();
    }

    /// Sets which collisions report contacts (all others stop).
    pub fn set_watched(&mut self, watched: &[EntityId]) {
        for c in &mut self.collisions {
            c.watched = false;
        }
        for e in watched {
            if let Some(&i) = self.collision_index.get(e) {
                self.collisions[i].watched = true;
            }
        }
    }

    /// Clears the per-step flags; call at the start of each step.
    pub fn begin_step(&mut self) {
        for b in &mut self.bodies {
            b.moved = false;
            b.rel_changed = false;
            b.teleported = false;
        }
    }

    /// Puts a body at `rel` relative to its parent (a pose command); its children follow.
    /// Answers false if the body is unknown.
    pub fn teleport(&mut self, entity: EntityId, rel: Iso) -> bool {
        let Some(b) = self.body_mut(entity) else { return false };
        b.rel = rel;
        b.teleported = true;
        b.rel_changed = true;
        true
    }

    /// Sets the velocity a body moves with (`None`: a link follows its model again; a
    /// model keeps its twist, so `None` is ignored for models). Static bodies ignore it;
    /// answers false for those and for unknown bodies.
    pub fn command(&mut self, entity: EntityId, twist: Option<Twist>) -> bool {
        let Some(b) = self.body_mut(entity) else { return false };
        if b.is_static {
            return false;
        }
        match (b.kind, twist) {
            (_, Some(t)) => b.twist = Some(t),
            (Kind::Link, None) => b.twist = None,
            (Kind::Model, None) => {}
        }
        true
    }

    /// The twist a body moves with, if it moves on its own.
    pub fn twist(&self, entity: EntityId) -> Option<Twist> {
        self.body(entity).and_then(|b| b.twist)
    }

    /// Advances every body by `dt` (0 while paused: pose commands still take effect), then
    /// brings the world poses of moved collisions up to date.
    pub fn step(&mut self, dt: f64) {
        if self.stale {
            self.refresh_indices();
        }
        for i in 0..self.bodies.len() {
            let (parent_world, parent_moved, parent_teleported) = match self.bodies[i].parent_index {
                None => (Iso::IDENTITY, false, false),
                Some(p) => {
                    let pb = &self.bodies[p];
                    (pb.world, pb.moved, pb.teleported)
                }
            };
            let b = &mut self.bodies[i];
            b.teleported |= parent_teleported;
            // Where the body is at the start of the step: a teleport (its own, or its
            // parent's, which carries it along) counts.
            let start = if b.teleported || (parent_moved && b.twist.is_none()) {
                b.moved = true;
                parent_world * b.rel
            } else {
                b.world
            };
            match b.twist {
                Some(t) if dt > 0.0 && !t.is_zero() => {
                    let mut world = start * screw(t, dt);
                    if t.angular != Vector::ZERO {
                        world.rotation = world.rotation.normalize();
                    }
                    b.world = world;
                    b.rel = match b.parent {
                        None => world,
                        Some(_) => parent_world.inv_mul(&world),
                    };
                    b.moved = true;
                    b.rel_changed = true;
                }
                _ => b.world = start,
            }
        }
        self.update_velocities();
        for c in &mut self.collisions {
            let link = &self.bodies[c.link_index];
            if link.moved {
                c.world = link.world * c.local;
                c.aabb_stale = true;
            }
        }
    }

    /// The non-static bodies whose world velocity changed since the last call (all of them
    /// the first time), with that velocity (linear, angular), in body-list order.
    pub fn velocity_changes(&mut self) -> Vec<(EntityId, Vector, Vector)> {
        let mut out = Vec::new();
        for b in self.bodies.iter_mut().filter(|b| !b.is_static) {
            if b.reported_velocity != Some(b.world_velocity) {
                b.reported_velocity = Some(b.world_velocity);
                out.push((b.entity, b.world_velocity.0, b.world_velocity.1));
            }
        }
        out
    }

    /// World velocities: a body moving on its own has its twist turned into the world
    /// frame; a body following its parent has the parent's velocity at its origin.
    fn update_velocities(&mut self) {
        for i in 0..self.bodies.len() {
            self.bodies[i].world_velocity = self.velocity_of(i);
        }
    }

    /// The world velocity of body `i`, its parent's being up to date.
    fn velocity_of(&self, i: usize) -> (Vector, Vector) {
        let b = &self.bodies[i];
        let parent = b.parent_index.map(|p| {
            let pb = &self.bodies[p];
            (pb.world.translation, pb.world_velocity)
        });
        match (b.twist, parent) {
            (Some(t), _) => (b.world.rotation * t.linear, b.world.rotation * t.angular),
            (None, None) => (Vector::ZERO, Vector::ZERO),
            (None, Some((origin, (v, w)))) => (v + w.cross(b.world.translation - origin), w),
        }
    }

    /// The contacts of every watched collision, by watched collision id and then other id.
    ///
    /// Pairs tested: collisions of different links, not both in static models, sharing a
    /// bit of their bitmasks, and, within one top-level model, only if both links have
    /// self-collision on. Bounding boxes are swept along x first (sort and sweep), then
    /// parry computes the contact manifolds of overlapping pairs.
    pub fn contacts(&mut self) -> Vec<ContactPair> {
        if !self.collisions.iter().any(|c| c.watched) {
            return Vec::new();
        }
        for c in self.collisions.iter_mut().filter(|c| c.aabb_stale) {
            c.aabb = bounding_box(&c.shape, &c.world);
            c.aabb_stale = false;
        }
        // The sweep reads boxes from one compact, sorted array (not through the collisions).
        let mut boxes: Vec<SweepBox> = self
            .collisions
            .iter()
            .enumerate()
            .map(|(i, c)| SweepBox { mins: c.aabb.mins, maxs: c.aabb.maxs, watched: c.watched, index: i })
            .collect();
        // Ties in x by index, which follows the entity id: the order is a function of the state.
        boxes.sort_unstable_by(|a, b| a.mins.x.total_cmp(&b.mins.x).then(a.index.cmp(&b.index)));
        let mut out = Vec::new();
        let mut manifolds: Vec<ContactManifold<(), ()>> = Vec::new();
        for (k, a) in boxes.iter().enumerate() {
            for b in &boxes[k + 1..] {
                if b.mins.x > a.maxs.x {
                    break;
                }
                if !(a.watched || b.watched)
                    || b.mins.y > a.maxs.y
                    || a.mins.y > b.maxs.y
                    || b.mins.z > a.maxs.z
                    || a.mins.z > b.maxs.z
                {
                    continue;
                }
                // Lower id first, so a pair's points do not depend on where the sweep met it.
                let (first, second) = if a.index < b.index { (a.index, b.index) } else { (b.index, a.index) };
                let (ca, cb) = (&self.collisions[first], &self.collisions[second]);
                if !self.may_touch(ca, cb) {
                    continue;
                }
                let points = self.touch(ca, cb, &mut manifolds);
                if points.is_empty() {
                    continue;
                }
                if ca.watched {
                    out.push(ContactPair { collision: ca.entity, other: cb.entity, points: points.clone() });
                }
                if cb.watched {
                    let flipped = points.iter().map(|p| Point { normal: -p.normal, ..*p }).collect();
                    out.push(ContactPair { collision: cb.entity, other: ca.entity, points: flipped });
                }
            }
        }
        out.sort_by_key(|p| (p.collision, p.other));
        out
    }

    fn may_touch(&self, a: &Collision, b: &Collision) -> bool {
        if a.link == b.link || a.bitmask & b.bitmask == 0 {
            return false;
        }
        let (la, lb) = (&self.bodies[self.body_index[&a.link]], &self.bodies[self.body_index[&b.link]]);
        if la.is_static && lb.is_static {
            return false;
        }
        la.root != lb.root || (la.self_collide && lb.self_collide)
    }

    /// The overlap points of two collisions, normals pointing from `b` to `a`.
    fn touch(&self, a: &Collision, b: &Collision, manifolds: &mut Vec<ContactManifold<(), ()>>) -> Vec<Point> {
        manifolds.clear();
        let pos12 = a.world.inv_mul(&b.world);
        let mut workspace = None;
        if DefaultQueryDispatcher
            .contact_manifolds(&pos12, a.shape.as_ref(), b.shape.as_ref(), 0.0, manifolds, &mut workspace)
            .is_err()
        {
            return Vec::new();
        }
        let mut points = Vec::new();
        for m in manifolds.iter() {
            // Composite shapes (none today) would give subshape poses; primitive ones none.
            let n1 = a.world.rotation * m.local_n1;
            for p in m.points.iter().filter(|p| p.dist <= 0.0) {
                let p1 = a.world.transform_point(p.local_p1);
                let p2 = b.world.transform_point(p.local_p2);
                points.push(Point { position: (p1 + p2) * 0.5, normal: -n1, depth: -p.dist });
            }
        }
        points
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::{build, Built};
    use plugin_api::components::Geometry;
    use plugin_api::math::Vec3;

    fn e(i: u64) -> EntityId {
        EntityId(i)
    }

    fn cube(size: f64) -> Shape {
        match build(&Geometry::Box { size: Vec3::new(size, size, size) }) {
            Ok(Built::Shape(s)) => s,
            _ => unreachable!("a cube is a shape"),
        }
    }

    /// A one-link model `model` with link `model + 1` and a unit cube `model + 2` at `at`.
    fn cube_model(w: &mut World, model: u64, at: Vector, is_static: bool) {
        let m = NewBody { is_static, ..NewBody::new(e(model), Kind::Model, None, Iso::from_translation(at)) };
        assert!(w.add_body(m));
        assert!(w.add_body(NewBody::new(e(model + 1), Kind::Link, Some(e(model)), Iso::IDENTITY)));
        assert!(w.add_collision(e(model + 2), e(model + 1), Iso::IDENTITY, cube(1.0), 0xffff));
    }

    #[test]
    fn screw_of_pure_translation_is_v_dt_and_of_rotation_about_its_axis() {
        let s = screw(Twist { linear: Vector::new(1.0, 2.0, 3.0), angular: Vector::ZERO }, 0.5);
        assert_eq!(s.translation, Vector::new(0.5, 1.0, 1.5));
        assert_eq!(s.rotation, Rotation::IDENTITY);
        let s = screw(Twist { linear: Vector::ZERO, angular: Vector::new(0.0, 0.0, 2.0) }, 0.25);
        assert_eq!(s.translation, Vector::ZERO);
        let (axis, angle) = s.rotation.to_axis_angle();
        assert!((angle - 0.5).abs() < 1e-15 && (axis - Vector::Z).length() < 1e-15);
    }

    #[test]
    fn forward_and_yaw_rate_drive_a_circle_exactly() {
        // v = 1 m/s forward, ω = 1 rad/s yaw: a circle of radius 1 about (0, 1). After a
        // quarter period in 1000 steps the body is at (1, 1) facing +y.
        let t = Twist { linear: Vector::X, angular: Vector::Z };
        let mut p = Iso::IDENTITY;
        let n = 1000;
        let dt = std::f64::consts::FRAC_PI_2 / n as f64;
        for _ in 0..n {
            p *= screw(t, dt);
        }
        assert!((p.translation - Vector::new(1.0, 1.0, 0.0)).length() < 1e-12, "{:?}", p.translation);
        assert!((p.rotation * Vector::X - Vector::Y).length() < 1e-12);
    }

    #[test]
    fn links_follow_their_model_and_commanded_links_move_on_their_own() {
        let mut w = World::default();
        cube_model(&mut w, 1, Vector::ZERO, false);
        assert!(w.add_body(NewBody::new(e(10), Kind::Link, Some(e(1)), Iso::from_translation(Vector::X))));
        w.command(e(1), Some(Twist { linear: Vector::Y, angular: Vector::ZERO }));
        w.command(e(10), Some(Twist { linear: Vector::Z, angular: Vector::ZERO }));
        for _ in 0..10 {
            w.begin_step();
            w.step(0.1);
        }
        let link = w.body(e(2)).map(|b| b.world.translation);
        assert!(link.is_some_and(|p| (p - Vector::new(0.0, 1.0, 0.0)).length() < 1e-12), "{link:?}");
        let l2 = w.body(e(10)).map(|b| (b.world.translation, b.rel.translation));
        // Its own motion only: 1 m up from where it started, whatever the model did.
        assert!(
            l2.is_some_and(|(p, rel)| (p - Vector::new(1.0, 0.0, 1.0)).length() < 1e-12
                && (rel - Vector::new(1.0, -1.0, 1.0)).length() < 1e-12),
            "{l2:?}"
        );
        // Command removed: it rides with the model again.
        w.command(e(10), None);
        w.begin_step();
        w.step(0.1);
        let l2 = w.body(e(10)).map(|b| b.world.translation);
        assert!(l2.is_some_and(|p| (p - Vector::new(1.0, 0.1, 1.0)).length() < 1e-12), "{l2:?}");
    }

    #[test]
    fn static_bodies_ignore_velocities_but_teleport() {
        let mut w = World::default();
        cube_model(&mut w, 1, Vector::ZERO, true);
        assert!(!w.command(e(1), Some(Twist { linear: Vector::X, angular: Vector::ZERO })));
        assert!(w.teleport(e(1), Iso::from_translation(Vector::new(0.0, 0.0, 5.0))));
        w.step(0.0);
        assert_eq!(w.body(e(2)).map(|b| b.world.translation), Some(Vector::new(0.0, 0.0, 5.0)));
    }

    #[test]
    fn overlapping_cubes_touch_and_separate_ones_do_not() {
        let mut w = World::default();
        cube_model(&mut w, 1, Vector::ZERO, false);
        cube_model(&mut w, 4, Vector::new(0.9, 0.0, 0.0), false);
        cube_model(&mut w, 7, Vector::new(3.0, 0.0, 0.0), false);
        w.set_watched(&[e(3), e(9)]);
        let c = w.contacts();
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].collision, c[0].other), (e(3), e(6)));
        assert!(!c[0].points.is_empty());
        for p in &c[0].points {
            assert!((p.depth - 0.1).abs() < 1e-9, "{p:?}");
            // From the other cube (at +x) towards this one: -x.
            assert!((p.normal - -Vector::X).length() < 1e-9, "{p:?}");
            assert!((p.position.x - 0.45).abs() < 1e-9, "{p:?}");
        }
        // Both watched: each reports the pair, normals opposite.
        w.set_watched(&[e(3), e(6)]);
        let c = w.contacts();
        assert_eq!(c.len(), 2);
        assert_eq!((c[1].collision, c[1].other), (e(6), e(3)));
        assert!((c[1].points[0].normal - Vector::X).length() < 1e-9);
    }

    #[test]
    fn a_ground_plane_box_ends_at_the_plane() {
        let plane = match build(&Geometry::Plane { normal: Vec3::new(0.0, 0.0, 1.0), size: [1.0, 1.0] }) {
            Ok(Built::Shape(s)) => s.shape,
            _ => unreachable!("a plane is a shape"),
        };
        let aabb = bounding_box(&plane, &Iso::from_translation(Vector::new(1.0, 2.0, -0.5)));
        assert_eq!(aabb.maxs.z, -0.5 + 1e-6);
        assert!(aabb.mins.z < -1e300 && aabb.maxs.x > 1e300 && aabb.mins.y < -1e300);
        // Upside down: the box is above the plane.
        let flipped = Iso::from_parts(Vector::new(0.0, 0.0, 2.0), Rotation::from_rotation_x(std::f64::consts::PI));
        let aabb = bounding_box(&plane, &flipped);
        assert!(aabb.mins.z == 2.0 - 1e-6 && aabb.maxs.z > 1e300, "{aabb:?}");
    }

    #[test]
    fn filtered_pairs_do_not_touch() {
        let mut w = World::default();
        cube_model(&mut w, 1, Vector::ZERO, true);
        cube_model(&mut w, 4, Vector::new(0.5, 0.0, 0.0), true);
        w.set_watched(&[e(3)]);
        assert!(w.contacts().is_empty(), "two static models");
        let mut w = World::default();
        cube_model(&mut w, 1, Vector::ZERO, false);
        assert!(w.add_body(NewBody::new(e(10), Kind::Link, Some(e(1)), Iso::IDENTITY)));
        assert!(w.add_collision(e(11), e(10), Iso::IDENTITY, cube(1.0), 0xffff));
        w.set_watched(&[e(3)]);
        assert!(w.contacts().is_empty(), "links of one model without self-collision");
        let mut w = World::default();
        cube_model(&mut w, 1, Vector::ZERO, false);
        assert!(w.add_body(NewBody::new(e(4), Kind::Model, None, Iso::IDENTITY)));
        assert!(w.add_body(NewBody::new(e(5), Kind::Link, Some(e(4)), Iso::IDENTITY)));
        assert!(w.add_collision(e(6), e(5), Iso::IDENTITY, cube(1.0), 0x10000));
        w.set_watched(&[e(3)]);
        assert!(w.contacts().is_empty(), "bitmasks sharing no bit");
    }

    #[test]
    fn removing_a_model_removes_its_links_and_collisions() {
        let mut w = World::default();
        cube_model(&mut w, 1, Vector::ZERO, false);
        cube_model(&mut w, 4, Vector::ZERO, false);
        w.remove(&[e(1)]);
        assert!(w.body(e(1)).is_none() && w.body(e(2)).is_none() && !w.has_collision(e(3)));
        assert!(w.body(e(4)).is_some() && w.has_collision(e(6)));
        w.set_watched(&[e(6)]);
        assert!(w.contacts().is_empty());
    }
}
