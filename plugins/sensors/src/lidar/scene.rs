//! The sensors system's own ray-cast geometry: the collision shapes of the ECM in world
//! frame (box, sphere, cylinder, capsule, ellipsoid, plane), intersected analytically.
//! Meshes are not cast against (a warning says so once).
//!
//! A bounding volume hierarchy over the shapes' world-aligned boxes is the broad phase: a
//! ray visits the boxes it passes through, nearest first, and stops descending once a box
//! starts beyond the nearest hit so far, so a scan costs about log(shapes) per ray instead
//! of every shape. Planes have no bounds and are tested by every ray.

use crate::frames;
use plugin_api::components::{Collision, Geometry};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{Component, EcmRead, EntityId};

/// One shape placed in the world.
#[derive(Clone, Debug)]
struct Placed {
    /// Shape from world.
    inverse: Pose,
    geometry: Geometry,
}

impl Placed {
    fn cast(&self, origin: Vec3, dir: Vec3) -> Option<f64> {
        intersect(&self.geometry, self.inverse.transform_point(origin), self.inverse.rotation.rotate(dir))
    }
}

/// A world-aligned box.
#[derive(Clone, Copy, Debug)]
struct Aabb {
    min: [f64; 3],
    max: [f64; 3],
}

impl Aabb {
    const EMPTY: Aabb = Aabb { min: [f64::INFINITY; 3], max: [f64::NEG_INFINITY; 3] };

    fn grow(&mut self, o: &Aabb) {
        for i in 0..3 {
            self.min[i] = self.min[i].min(o.min[i]);
            self.max[i] = self.max[i].max(o.max[i]);
        }
    }

    fn centre(&self) -> [f64; 3] {
        [0.5 * (self.min[0] + self.max[0]), 0.5 * (self.min[1] + self.max[1]), 0.5 * (self.min[2] + self.max[2])]
    }

    /// Where the ray `o + t d` (with `inv` = 1 / d per axis) enters the box, if it passes
    /// through it at some `t` in `[0, max]`.
    #[inline]
    fn entry(&self, o: [f64; 3], inv: [f64; 3], max: f64) -> Option<f64> {
        let (mut t0, mut t1) = (0.0f64, max);
        for i in 0..3 {
            let a = (self.min[i] - o[i]) * inv[i];
            let b = (self.max[i] - o[i]) * inv[i];
            // `min`/`max` drop a NaN (a ray in the plane of a face): that axis then
            // does not bound the ray.
            t0 = t0.max(a.min(b));
            t1 = t1.min(a.max(b));
        }
        (t0 <= t1).then_some(t0)
    }
}

/// The world-aligned bounds of `g` placed at `pose`, or `None` if it is unbounded (a plane).
fn bounds(g: &Geometry, pose: &Pose) -> Option<Aabb> {
    // Half extents of a box about the shape's origin holding it.
    let e = match g {
        Geometry::Box { size } => size.scale(0.5),
        Geometry::Sphere { radius } => Vec3::new(*radius, *radius, *radius),
        Geometry::Cylinder { radius, length } => Vec3::new(*radius, *radius, 0.5 * length),
        Geometry::Capsule { radius, length } => Vec3::new(*radius, *radius, 0.5 * length + radius),
        Geometry::Ellipsoid { radii } => *radii,
        _ => return None,
    };
    let e = [e.x.abs(), e.y.abs(), e.z.abs()];
    let axes =
        [Vec3::new(1.0, 0.0, 0.0), Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 0.0, 1.0)].map(|a| pose.rotation.rotate(a));
    let mut half = [0.0; 3];
    for (j, a) in axes.iter().enumerate() {
        for (i, c) in a.to_array().iter().enumerate() {
            half[i] += c.abs() * e[j];
        }
    }
    let p = pose.position.to_array();
    let b = Aabb {
        min: [p[0] - half[0], p[1] - half[1], p[2] - half[2]],
        max: [p[0] + half[0], p[1] + half[1], p[2] + half[2]],
    };
    (b.min.iter().chain(&b.max).all(|v| v.is_finite())).then_some(b)
}

/// A node of the hierarchy: a leaf holds `shapes[first..first + count]`, an inner node
/// (`count == 0`) has its children at `first` and `first + 1`.
#[derive(Clone, Copy, Debug)]
struct Node {
    bounds: Aabb,
    first: u32,
    count: u32,
}

/// Shapes per leaf at most.
const LEAF: usize = 4;

/// The collision shapes of a world, for ray casts.
#[derive(Clone, Debug, Default)]
pub struct Scene {
    /// Bounded shapes, in the order of the hierarchy's leaves.
    shapes: Vec<Placed>,
    /// Planes.
    unbounded: Vec<Placed>,
    nodes: Vec<Node>,
    /// Collisions skipped because their shape cannot be cast against (meshes).
    pub skipped_meshes: usize,
}

impl Scene {
    /// The collisions of `ecm`, leaving out those under `exclude` (the sensor's own link).
    pub fn build(ecm: &impl EcmRead, exclude: Option<EntityId>) -> Scene {
        let mut skipped_meshes = 0;
        let mut placed = Vec::new();
        for c in ecm.entities_with(&[Collision::ID, Geometry::ID]) {
            if exclude.is_some() && ecm.parent(c) == exclude {
                continue;
            }
            let Some(geometry) = ecm.get::<Geometry>(c) else { continue };
            match geometry {
                Geometry::Empty => continue,
                Geometry::Mesh { .. } => {
                    skipped_meshes += 1;
                    continue;
                }
                _ => {}
            }
            placed.push((frames::world_pose(ecm, c), geometry));
        }
        let mut scene = Scene::from_shapes(placed);
        scene.skipped_meshes = skipped_meshes;
        scene
    }

    /// A scene of shapes placed in the world (world from shape).
    pub fn from_shapes(shapes: Vec<(Pose, Geometry)>) -> Scene {
        let mut bounded = Vec::new();
        let mut unbounded = Vec::new();
        for (pose, geometry) in shapes {
            let placed = Placed { inverse: pose.inverse(), geometry };
            match bounds(&placed.geometry, &pose) {
                Some(b) => bounded.push((b, placed)),
                None => unbounded.push(placed),
            }
        }
        let mut nodes = Vec::with_capacity(2 * bounded.len() / LEAF + 1);
        if !bounded.is_empty() {
            nodes.push(Node { bounds: Aabb::EMPTY, first: 0, count: 0 });
            split(&mut bounded, 0, 0, &mut nodes);
        }
        Scene { shapes: bounded.into_iter().map(|(_, p)| p).collect(), unbounded, nodes, skipped_meshes: 0 }
    }

    /// Number of shapes.
    pub fn len(&self) -> usize {
        self.shapes.len() + self.unbounded.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Distance along the unit direction `dir` from `origin` to the first surface within
    /// `max`, or `None`.
    pub fn cast(&self, origin: Vec3, dir: Vec3, max: f64) -> Option<f64> {
        let mut best = max;
        let mut hit = false;
        let mut take = |t: Option<f64>| {
            if let Some(t) = t.filter(|t| *t >= 0.0 && *t < best) {
                best = t;
                hit = true;
            }
        };
        for s in &self.unbounded {
            take(s.cast(origin, dir));
        }
        if !self.nodes.is_empty() {
            let o = origin.to_array();
            let inv = dir.to_array().map(|d| 1.0 / d);
            let mut stack = [0u32; 64];
            let mut depth = 1;
            while depth > 0 {
                depth -= 1;
                let node = &self.nodes[stack[depth] as usize];
                if node.bounds.entry(o, inv, best).is_none() {
                    continue;
                }
                if node.count > 0 {
                    let range = node.first as usize..(node.first + node.count) as usize;
                    for s in &self.shapes[range] {
                        let t = s.cast(origin, dir);
                        if let Some(t) = t.filter(|t| *t >= 0.0 && *t < best) {
                            best = t;
                            hit = true;
                        }
                    }
                    continue;
                }
                // Visit the nearer child first: push it last.
                let (a, b) = (node.first, node.first + 1);
                let ta = self.nodes[a as usize].bounds.entry(o, inv, best);
                let tb = self.nodes[b as usize].bounds.entry(o, inv, best);
                let (near, far) = match (ta, tb) {
                    (Some(x), Some(y)) if y < x => (Some(b), Some(a)),
                    (Some(_), Some(_)) => (Some(a), Some(b)),
                    (Some(_), None) => (Some(a), None),
                    (None, Some(_)) => (Some(b), None),
                    (None, None) => (None, None),
                };
                for child in [far, near].into_iter().flatten() {
                    if depth < stack.len() {
                        stack[depth] = child;
                        depth += 1;
                    }
                }
            }
        }
        hit.then_some(best)
    }

    /// [`Scene::cast`] testing every shape (what the hierarchy must agree with).
    #[cfg(test)]
    fn cast_every(&self, origin: Vec3, dir: Vec3, max: f64) -> Option<f64> {
        self.shapes
            .iter()
            .chain(&self.unbounded)
            .filter_map(|s| s.cast(origin, dir))
            .filter(|t| *t >= 0.0 && *t < max)
            .min_by(f64::total_cmp)
    }
}

/// Makes `nodes[at]` the node of `items` (which start at `offset` in the final order):
/// a leaf when few, else split at the median of the centres along the widest axis.
fn split(items: &mut [(Aabb, Placed)], offset: usize, at: usize, nodes: &mut Vec<Node>) {
    let mut b = Aabb::EMPTY;
    let mut centres = Aabb::EMPTY;
    for (bi, _) in items.iter() {
        b.grow(bi);
        let c = bi.centre();
        centres.grow(&Aabb { min: c, max: c });
    }
    if items.len() <= LEAF {
        nodes[at] = Node { bounds: b, first: offset as u32, count: items.len() as u32 };
        return;
    }
    let extent = [0, 1, 2].map(|i| centres.max[i] - centres.min[i]);
    let axis = (0..3).max_by(|&i, &j| extent[i].total_cmp(&extent[j])).unwrap_or(0);
    let mid = items.len() / 2;
    items.select_nth_unstable_by(mid, |x, y| x.0.centre()[axis].total_cmp(&y.0.centre()[axis]));
    let first = nodes.len();
    nodes[at] = Node { bounds: b, first: first as u32, count: 0 };
    nodes.push(Node { bounds: Aabb::EMPTY, first: 0, count: 0 });
    nodes.push(Node { bounds: Aabb::EMPTY, first: 0, count: 0 });
    let (left, right) = items.split_at_mut(mid);
    split(left, offset, first, nodes);
    split(right, offset + mid, first + 1, nodes);
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

    /// A small deterministic generator (numbers in [0, 1)).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
        fn range(&mut self, lo: f64, hi: f64) -> f64 {
            lo + (hi - lo) * self.next()
        }
    }

    #[test]
    fn the_hierarchy_finds_the_same_first_hit_as_testing_every_shape() {
        let mut rng = Lcg(7);
        for n in [0usize, 1, 3, 5, 17, 300] {
            let mut shapes = Vec::new();
            for i in 0..n {
                let pose = Pose::from_xyz_rpy(
                    rng.range(-10.0, 10.0),
                    rng.range(-10.0, 10.0),
                    rng.range(-2.0, 4.0),
                    rng.range(-3.0, 3.0),
                    rng.range(-3.0, 3.0),
                    rng.range(-3.0, 3.0),
                );
                let (a, b, c) = (rng.range(0.05, 1.0), rng.range(0.05, 1.0), rng.range(0.05, 1.0));
                let geometry = match i % 5 {
                    0 => Geometry::Box { size: Vec3::new(2.0 * a, 2.0 * b, 2.0 * c) },
                    1 => Geometry::Sphere { radius: a },
                    2 => Geometry::Cylinder { radius: a, length: 2.0 * b },
                    3 => Geometry::Capsule { radius: a, length: 2.0 * b },
                    _ => Geometry::Ellipsoid { radii: Vec3::new(a, b, c) },
                };
                shapes.push((pose, geometry));
            }
            if n == 17 {
                shapes.push((
                    Pose::from_xyz_rpy(0.0, 0.0, -1.5, 0.0, 0.0, 0.0),
                    Geometry::Plane { normal: Vec3::new(0.0, 0.0, 1.0), size: [1.0, 1.0] },
                ));
            }
            let scene = Scene::from_shapes(shapes);
            let mut hits = 0;
            for k in 0..2000 {
                let origin = Vec3::new(rng.range(-12.0, 12.0), rng.range(-12.0, 12.0), rng.range(-3.0, 5.0));
                let d = Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
                let d = d.scale(1.0 / d.length());
                // Axis-aligned rays too: their inverse direction has infinities.
                let d = if k % 7 == 3 { Vec3::new(0.0, 1.0, 0.0) } else { d };
                let max = rng.range(1.0, 30.0);
                let (fast, every) = (scene.cast(origin, d, max), scene.cast_every(origin, d, max));
                assert_eq!(fast, every, "{n} shapes, ray from {origin:?} along {d:?}");
                hits += usize::from(every.is_some());
            }
            assert!(n < 17 || hits > 200, "{n} shapes: the rays should hit often, hit {hits} times");
        }
    }
}
