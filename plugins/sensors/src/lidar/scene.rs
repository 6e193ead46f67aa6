//! The sensors system's own ray-cast geometry: the collision shapes of the ECM in world
//! frame (box, sphere, cylinder, capsule, ellipsoid, plane), intersected analytically.
//! Meshes are not cast against (a warning says so once).

use crate::frames;
use plugin_api::components::{Collision, Geometry};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{Component, EcmRead, EntityId};

/// One shape placed in the world.
#[derive(Clone, Debug)]
struct Placed {
    /// World from shape.
    pose: Pose,
    /// Shape from world.
    inverse: Pose,
    geometry: Geometry,
    /// A bounding sphere radius about `pose.position` (infinite for planes).
    bound: f64,
}

/// The collision shapes of a world, for ray casts.
#[derive(Clone, Debug, Default)]
pub struct Scene {
    shapes: Vec<Placed>,
    /// Collisions skipped because their shape cannot be cast against (meshes).
    pub skipped_meshes: usize,
}

fn bound(g: &Geometry) -> f64 {
    match g {
        Geometry::Box { size } => 0.5 * size.length(),
        Geometry::Sphere { radius } => *radius,
        Geometry::Cylinder { radius, length } => (radius * radius + 0.25 * length * length).sqrt(),
        Geometry::Capsule { radius, length } => radius + 0.5 * length,
        Geometry::Ellipsoid { radii } => radii.x.max(radii.y).max(radii.z),
        _ => f64::INFINITY,
    }
}

impl Scene {
    /// The collisions of `ecm`, leaving out those under `exclude` (the sensor's own link).
    pub fn build(ecm: &impl EcmRead, exclude: Option<EntityId>) -> Scene {
        let mut scene = Scene::default();
        for c in ecm.entities_with(&[Collision::ID, Geometry::ID]) {
            if exclude.is_some() && ecm.parent(c) == exclude {
                continue;
            }
            let Some(geometry) = ecm.get::<Geometry>(c) else { continue };
            match geometry {
                Geometry::Empty => continue,
                Geometry::Mesh { .. } => {
                    scene.skipped_meshes += 1;
                    continue;
                }
                _ => {}
            }
            let pose = frames::world_pose(ecm, c);
            scene.shapes.push(Placed { pose, inverse: pose.inverse(), bound: bound(&geometry), geometry });
        }
        scene
    }

    /// Number of shapes.
    pub fn len(&self) -> usize {
        self.shapes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }

    /// Distance along the unit direction `dir` from `origin` to the first surface within
    /// `max`, or `None`.
    pub fn cast(&self, origin: Vec3, dir: Vec3, max: f64) -> Option<f64> {
        let mut best = max;
        let mut hit = false;
        for s in &self.shapes {
            if s.bound.is_finite() {
                // Reject by bounding sphere: closest approach of the ray to the centre.
                let oc = s.pose.position - origin;
                let t = oc.dot(dir);
                let d2 = oc.dot(oc) - t * t;
                if d2 > s.bound * s.bound || t + s.bound < 0.0 || t - s.bound > best {
                    continue;
                }
            }
            let o = s.inverse.transform_point(origin);
            let d = s.inverse.rotation.rotate(dir);
            if let Some(t) = intersect(&s.geometry, o, d) {
                if t >= 0.0 && t < best {
                    best = t;
                    hit = true;
                }
            }
        }
        hit.then_some(best)
    }
}

/// The first non-negative `t` where `o + t d` meets the surface of `g` (in its own frame).
pub fn intersect(g: &Geometry, o: Vec3, d: Vec3) -> Option<f64> {
    match g {
        Geometry::Box { size } => ray_box(o, d, size.scale(0.5)),
        Geometry::Sphere { radius } => ray_ellipsoid(o, d, Vec3::new(*radius, *radius, *radius)),
        Geometry::Ellipsoid { radii } => ray_ellipsoid(o, d, *radii),
        Geometry::Cylinder { radius, length } => ray_cylinder(o, d, *radius, 0.5 * length),
        Geometry::Capsule { radius, length } => ray_capsule(o, d, *radius, 0.5 * length),
        Geometry::Plane { normal, .. } => {
            let n = normal.scale(1.0 / normal.length().max(1e-12));
            let denom = n.dot(d);
            if denom.abs() < 1e-12 {
                return None;
            }
            let t = -n.dot(o) / denom;
            (t >= 0.0).then_some(t)
        }
        _ => None,
    }
}

/// The smallest root >= 0 of a t² + b t + c (a > 0).
fn first_root(a: f64, b: f64, c: f64) -> Option<f64> {
    let disc = b * b - 4.0 * a * c;
    if disc < 0.0 || a == 0.0 {
        return None;
    }
    let s = disc.sqrt();
    let (t0, t1) = ((-b - s) / (2.0 * a), (-b + s) / (2.0 * a));
    if t0 >= 0.0 {
        Some(t0)
    } else if t1 >= 0.0 {
        Some(t1)
    } else {
        None
    }
}

fn ray_box(o: Vec3, d: Vec3, h: Vec3) -> Option<f64> {
    let (mut tmin, mut tmax) = (f64::NEG_INFINITY, f64::INFINITY);
    for (oi, di, hi) in [(o.x, d.x, h.x), (o.y, d.y, h.y), (o.z, d.z, h.z)] {
        if di.abs() < 1e-15 {
            if oi.abs() > hi {
                return None;
            }
            continue;
        }
        let (a, b) = ((-hi - oi) / di, (hi - oi) / di);
        tmin = tmin.max(a.min(b));
        tmax = tmax.min(a.max(b));
    }
    if tmax < tmin.max(0.0) {
        return None;
    }
    Some(if tmin >= 0.0 { tmin } else { tmax })
}

fn ray_ellipsoid(o: Vec3, d: Vec3, r: Vec3) -> Option<f64> {
    let o = Vec3::new(o.x / r.x, o.y / r.y, o.z / r.z);
    let d = Vec3::new(d.x / r.x, d.y / r.y, d.z / r.z);
    first_root(d.dot(d), 2.0 * o.dot(d), o.dot(o) - 1.0)
}

/// Infinite cylinder about z of radius `r`: roots of the side.
fn side_hits(o: Vec3, d: Vec3, r: f64) -> Option<(f64, f64)> {
    let a = d.x * d.x + d.y * d.y;
    if a < 1e-15 {
        return None;
    }
    let b = 2.0 * (o.x * d.x + o.y * d.y);
    let c = o.x * o.x + o.y * o.y - r * r;
    let disc = b * b - 4.0 * a * c;
    if disc < 0.0 {
        return None;
    }
    let s = disc.sqrt();
    Some(((-b - s) / (2.0 * a), (-b + s) / (2.0 * a)))
}

fn ray_cylinder(o: Vec3, d: Vec3, r: f64, h: f64) -> Option<f64> {
    let mut best: Option<f64> = None;
    let mut take = |t: f64| {
        if t >= 0.0 && best.is_none_or(|b| t < b) {
            best = Some(t);
        }
    };
    if let Some((t0, t1)) = side_hits(o, d, r) {
        for t in [t0, t1] {
            if (o.z + t * d.z).abs() <= h {
                take(t);
            }
        }
    }
    if d.z.abs() > 1e-15 {
        for z in [-h, h] {
            let t = (z - o.z) / d.z;
            let (x, y) = (o.x + t * d.x, o.y + t * d.y);
            if x * x + y * y <= r * r {
                take(t);
            }
        }
    }
    best
}

fn ray_capsule(o: Vec3, d: Vec3, r: f64, h: f64) -> Option<f64> {
    let mut best: Option<f64> = None;
    let mut take = |t: Option<f64>| {
        if let Some(t) = t.filter(|t| *t >= 0.0) {
            if best.is_none_or(|b| t < b) {
                best = Some(t);
            }
        }
    };
    if let Some((t0, t1)) = side_hits(o, d, r) {
        for t in [t0, t1] {
            if (o.z + t * d.z).abs() <= h {
                take(Some(t));
            }
        }
    }
    for z in [-h, h] {
        let c = Vec3::new(o.x, o.y, o.z - z);
        take(first_root(d.dot(d), 2.0 * c.dot(d), c.dot(c) - r * r));
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const X: Vec3 = Vec3 { x: 1.0, y: 0.0, z: 0.0 };

    #[test]
    fn rays_meet_each_shape_at_its_surface() {
        let o = Vec3::new(-5.0, 0.0, 0.0);
        let near = |g: Geometry| intersect(&g, o, X).unwrap();
        assert!((near(Geometry::Box { size: Vec3::new(2.0, 2.0, 2.0) }) - 4.0).abs() < 1e-12);
        assert!((near(Geometry::Sphere { radius: 1.5 }) - 3.5).abs() < 1e-12);
        assert!((near(Geometry::Cylinder { radius: 0.5, length: 2.0 }) - 4.5).abs() < 1e-12);
        assert!((near(Geometry::Capsule { radius: 0.5, length: 2.0 }) - 4.5).abs() < 1e-12);
        assert!((near(Geometry::Ellipsoid { radii: Vec3::new(2.0, 1.0, 1.0) }) - 3.0).abs() < 1e-12);
        // Down onto a cylinder's cap and a capsule's dome.
        let down = Vec3::new(0.0, 0.0, -1.0);
        let top = Vec3::new(0.0, 0.0, 5.0);
        assert!((intersect(&Geometry::Cylinder { radius: 0.5, length: 2.0 }, top, down).unwrap() - 4.0).abs() < 1e-12);
        assert!((intersect(&Geometry::Capsule { radius: 0.5, length: 2.0 }, top, down).unwrap() - 3.5).abs() < 1e-12);
        let plane = Geometry::Plane { normal: Vec3::new(0.0, 0.0, 1.0), size: [1.0, 1.0] };
        assert!((intersect(&plane, top, down).unwrap() - 5.0).abs() < 1e-12);
        assert!(intersect(&plane, top, X).is_none(), "parallel");
        assert!(intersect(&Geometry::Sphere { radius: 1.0 }, Vec3::new(-5.0, 2.0, 0.0), X).is_none(), "a miss");
    }
}
