//! Axis-aligned boxes: levels, buffers and performer volumes, and the box that encloses a
//! model's collision shapes.

use plugin_api::components::{Collision, Geometry, Link, Model};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{EcmRead, EntityId};

/// A closed axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Lowest corner.
    pub min: Vec3,
    /// Highest corner.
    pub max: Vec3,
}

impl Aabb {
    /// The box of `size` centred on `center`.
    pub fn centered(center: Vec3, size: Vec3) -> Aabb {
        let half = size.scale(0.5);
        Aabb { min: center - half, max: center + half }
    }

    /// The box grown by `margin` on every side.
    pub fn inflated(self, margin: f64) -> Aabb {
        let m = Vec3::new(margin, margin, margin);
        Aabb { min: self.min - m, max: self.max + m }
    }

    /// Whether the boxes share a point: closed intervals, so touching faces count.
    pub fn touches(&self, o: &Aabb) -> bool {
        self.min.x <= o.max.x
            && o.min.x <= self.max.x
            && self.min.y <= o.max.y
            && o.min.y <= self.max.y
            && self.min.z <= o.max.z
            && o.min.z <= self.max.z
    }

    /// The box moved by `by`.
    pub fn translated(self, by: Vec3) -> Aabb {
        Aabb { min: self.min + by, max: self.max + by }
    }

    fn grow(&mut self, p: Vec3) {
        self.min = Vec3::new(self.min.x.min(p.x), self.min.y.min(p.y), self.min.z.min(p.z));
        self.max = Vec3::new(self.max.x.max(p.x), self.max.y.max(p.y), self.max.z.max(p.z));
    }

    /// Centre and size.
    pub fn center_size(&self) -> (Vec3, Vec3) {
        ((self.min + self.max).scale(0.5), self.max - self.min)
    }
}

/// Half extents of a box enclosing the shape in its own frame; `None` for shapes without a
/// known finite extent (empty, planes, meshes).
fn half_extents(g: &Geometry) -> Option<Vec3> {
    match g {
        Geometry::Box { size } => Some(size.scale(0.5)),
        Geometry::Sphere { radius } => Some(Vec3::new(*radius, *radius, *radius)),
        Geometry::Cylinder { radius, length } => Some(Vec3::new(*radius, *radius, length / 2.0)),
        Geometry::Capsule { radius, length } => Some(Vec3::new(*radius, *radius, length / 2.0 + radius)),
        Geometry::Ellipsoid { radii } => Some(*radii),
        _ => None,
    }
}

/// The box, in the model's frame, enclosing every collision of the model and its nested
/// models (each shape's enclosing box, rotated into the model frame, then enclosed).
/// `None` if the model has no collision with a known extent.
pub fn collision_bounds(ecm: &impl EcmRead, model: EntityId) -> Option<Aabb> {
    let mut out: Option<Aabb> = None;
    collect(ecm, model, Pose::IDENTITY, &mut out);
    out
}

fn collect(ecm: &impl EcmRead, model: EntityId, to_root: Pose, out: &mut Option<Aabb>) {
    for child in ecm.children(model) {
        let pose = ecm.get::<Pose>(child).unwrap_or_default();
        if ecm.has::<Model>(child) {
            collect(ecm, child, to_root * pose, out);
        } else if ecm.has::<Link>(child) {
            let link = to_root * pose;
            for shape in ecm.children(child) {
                if !ecm.has::<Collision>(shape) {
                    continue;
                }
                let Some(half) = ecm.get::<Geometry>(shape).as_ref().and_then(half_extents) else { continue };
                let at = link * ecm.get::<Pose>(shape).unwrap_or_default();
                for i in 0..8 {
                    let sx = if i & 1 == 0 { -1.0 } else { 1.0 };
                    let sy = if i & 2 == 0 { -1.0 } else { 1.0 };
                    let sz = if i & 4 == 0 { -1.0 } else { 1.0 };
                    let corner = at.transform_point(Vec3::new(sx * half.x, sy * half.y, sz * half.z));
                    match out {
                        Some(b) => b.grow(corner),
                        None => *out = Some(Aabb { min: corner, max: corner }),
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_boxes_touch_at_faces_edges_and_corners() {
        let a = Aabb::centered(Vec3::ZERO, Vec3::new(2.0, 2.0, 2.0));
        let face = Aabb::centered(Vec3::new(2.0, 0.0, 0.0), Vec3::new(2.0, 2.0, 2.0));
        let corner = Aabb::centered(Vec3::new(2.0, 2.0, 2.0), Vec3::new(2.0, 2.0, 2.0));
        let apart = Aabb::centered(Vec3::new(2.0 + 1e-9, 0.0, 0.0), Vec3::new(2.0, 2.0, 2.0));
        assert!(a.touches(&face) && face.touches(&a));
        assert!(a.touches(&corner));
        assert!(!a.touches(&apart) && !apart.touches(&a));
    }

    #[test]
    fn inflating_and_moving() {
        let a = Aabb::centered(Vec3::new(1.0, 0.0, 0.0), Vec3::new(2.0, 4.0, 6.0)).inflated(1.0);
        assert_eq!(a.min, Vec3::new(-1.0, -3.0, -4.0));
        assert_eq!(a.max, Vec3::new(3.0, 3.0, 4.0));
        let (c, s) = a.translated(Vec3::new(0.0, 0.0, 1.0)).center_size();
        assert_eq!(c, Vec3::new(1.0, 0.0, 1.0));
        assert_eq!(s, Vec3::new(4.0, 6.0, 8.0));
    }

    #[test]
    fn shape_extents() {
        assert_eq!(half_extents(&Geometry::Capsule { radius: 1.0, length: 2.0 }), Some(Vec3::new(1.0, 1.0, 2.0)));
        assert_eq!(half_extents(&Geometry::Empty), None);
        assert_eq!(half_extents(&Geometry::Plane { normal: Vec3::new(0.0, 0.0, 1.0), size: [1.0, 1.0] }), None);
    }
}
