//! SDFormat geometries as parry shapes.
//!
//! parry's cylinders and capsules run along y, SDFormat's along z: those shapes come with a
//! local rotation that turns parry's y onto the collision's z. An ellipsoid, which parry
//! does not have, is the convex hull of [`ELLIPSOID_RINGS`] × [`ELLIPSOID_SEGMENTS`] points of
//! its surface (plus the poles), scaled outwards so that the hull contains the ellipsoid: see
//! [`ellipsoid_hull`].

use parry3d_f64::math::{Pose as Iso, Rotation, Vector};
use parry3d_f64::shape::SharedShape;
use plugin_api::components::Geometry;

/// Latitude rings of an ellipsoid's hull (poles excluded).
pub const ELLIPSOID_RINGS: usize = 15;
/// Points per ring of an ellipsoid's hull.
pub const ELLIPSOID_SEGMENTS: usize = 32;

/// A collision shape and where it sits in the collision's frame.
pub struct Shape {
    /// The parry shape.
    pub shape: SharedShape,
    /// Its pose in the collision frame (identity except for cylinders and capsules).
    pub offset: Iso,
}

/// What a geometry becomes.
pub enum Built {
    /// A shape to collide.
    Shape(Shape),
    /// Nothing to collide (`<empty/>`).
    Nothing,
    /// A valid geometry this engine does not collide, with the reason (meshes).
    Unsupported(String),
}

fn positive(what: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("{what} must be a positive finite number, got {v}"))
    }
}

/// Turns `geometry` into a shape, or says what is wrong with it.
pub fn build(geometry: &Geometry) -> Result<Built, String> {
    // parry's y axis onto SDFormat's z: a quarter turn about x.
    let y_to_z = Iso::from_rotation(Rotation::from_rotation_x(std::f64::consts::FRAC_PI_2));
    let plain = |shape| Ok(Built::Shape(Shape { shape, offset: Iso::IDENTITY }));
    match geometry {
        Geometry::Empty => Ok(Built::Nothing),
        Geometry::Box { size } => {
            let (x, y, z) =
                (positive("box size x", size.x)?, positive("box size y", size.y)?, positive("box size z", size.z)?);
            plain(SharedShape::cuboid(x / 2.0, y / 2.0, z / 2.0))
        }
        Geometry::Sphere { radius } => plain(SharedShape::ball(positive("sphere radius", *radius)?)),
        Geometry::Cylinder { radius, length } => {
            let (r, l) = (positive("cylinder radius", *radius)?, positive("cylinder length", *length)?);
            Ok(Built::Shape(Shape { shape: SharedShape::cylinder(l / 2.0, r), offset: y_to_z }))
        }
        Geometry::Capsule { radius, length } => {
            let r = positive("capsule radius", *radius)?;
            if !(length.is_finite() && *length >= 0.0) {
                return Err(format!("capsule length must be a finite number >= 0, got {length}"));
            }
            Ok(Built::Shape(Shape { shape: SharedShape::capsule_z(length / 2.0, r), offset: Iso::IDENTITY }))
        }
        Geometry::Ellipsoid { radii } => {
            let r = Vector::new(
                positive("ellipsoid radius x", radii.x)?,
                positive("ellipsoid radius y", radii.y)?,
                positive("ellipsoid radius z", radii.z)?,
            );
            let hull = ellipsoid_hull(r).ok_or_else(|| format!("could not build the hull of ellipsoid {r:?}"))?;
            plain(hull)
        }
        Geometry::Plane { normal, .. } => {
            let n = Vector::new(normal.x, normal.y, normal.z);
            let len = n.length();
            if !(len.is_finite() && len > 0.0) {
                return Err(format!("plane normal must be a non-zero finite vector, got {normal:?}"));
            }
            plain(SharedShape::halfspace(n / len))
        }
        Geometry::Mesh { uri, .. } => Ok(Built::Unsupported(format!(
            "mesh {uri:?}: troupe_physics_kinematic does not collide meshes (see docs/physics-kinematic.md)"
        ))),
        // Geometry is non-exhaustive: a kind added to plugin-api later.
        #[allow(unreachable_patterns, reason = "Geometry is non-exhaustive only across crates")]
        other => Ok(Built::Unsupported(format!("geometry {other:?} is not supported by troupe_physics_kinematic"))),
    }
}

/// The convex hull of points on the ellipsoid with semi-axes `r`, pushed outwards so the
/// hull contains the ellipsoid.
///
/// The points lie on [`ELLIPSOID_RINGS`] rings of equal latitude step, each of
/// [`ELLIPSOID_SEGMENTS`] points, plus the two poles. On the unit sphere the hull of such
/// points is inscribed; its faces come closest to the centre at the middle of a cell, at
/// distance at least cos(Δlat/2)·cos(Δlon/2). Scaling the sphere's points by the inverse of
/// that before stretching them to the ellipsoid (an affine map, which keeps containment)
/// makes the hull circumscribe: it contains the ellipsoid and sticks out of it by at most
/// 1/(cos(Δlat/2)·cos(Δlon/2)) − 1 of a radius (1.0 % with 15 rings and 32 segments).
pub fn ellipsoid_hull(r: Vector) -> Option<SharedShape> {
    let d_lat = std::f64::consts::PI / (ELLIPSOID_RINGS + 1) as f64;
    let d_lon = 2.0 * std::f64::consts::PI / ELLIPSOID_SEGMENTS as f64;
    let grow = 1.0 / ((d_lat / 2.0).cos() * (d_lon / 2.0).cos());
    let mut points = Vec::with_capacity(ELLIPSOID_RINGS * ELLIPSOID_SEGMENTS + 2);
    points.push(Vector::new(0.0, 0.0, grow * r.z));
    points.push(Vector::new(0.0, 0.0, -grow * r.z));
    for i in 1..=ELLIPSOID_RINGS {
        let (sin_lat, cos_lat) = (i as f64 * d_lat).sin_cos();
        for j in 0..ELLIPSOID_SEGMENTS {
            let (sin_lon, cos_lon) = (j as f64 * d_lon).sin_cos();
            points.push(Vector::new(
                grow * r.x * sin_lat * cos_lon,
                grow * r.y * sin_lat * sin_lon,
                grow * r.z * cos_lat,
            ));
        }
    }
    SharedShape::convex_hull(&points)
}

/// The largest relative amount by which an ellipsoid's hull sticks out of the ellipsoid.
pub fn ellipsoid_overshoot() -> f64 {
    let d_lat = std::f64::consts::PI / (ELLIPSOID_RINGS + 1) as f64;
    let d_lon = 2.0 * std::f64::consts::PI / ELLIPSOID_SEGMENTS as f64;
    1.0 / ((d_lat / 2.0).cos() * (d_lon / 2.0).cos()) - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::math::Vec3;

    fn shape(g: Geometry) -> Shape {
        match build(&g) {
            Ok(Built::Shape(s)) => s,
            Ok(_) => panic!("{g:?} built no shape"),
            Err(e) => panic!("{g:?}: {e}"),
        }
    }

    fn contains(s: &Shape, p: Vector) -> bool {
        s.shape.contains_point(&s.offset, p)
    }

    #[test]
    fn cylinder_runs_along_z() {
        let s = shape(Geometry::Cylinder { radius: 0.1, length: 2.0 });
        assert!(contains(&s, Vector::new(0.0, 0.0, 0.99)));
        assert!(!contains(&s, Vector::new(0.0, 0.99, 0.0)));
    }

    #[test]
    fn capsule_runs_along_z_with_caps() {
        let s = shape(Geometry::Capsule { radius: 0.1, length: 2.0 });
        assert!(contains(&s, Vector::new(0.0, 0.0, 1.09)));
        assert!(!contains(&s, Vector::new(0.0, 0.0, 1.11)));
        assert!(!contains(&s, Vector::new(0.0, 0.5, 0.0)));
    }

    #[test]
    fn box_takes_full_sizes() {
        let s = shape(Geometry::Box { size: Vec3::new(2.0, 4.0, 6.0) });
        assert!(contains(&s, Vector::new(0.99, 1.99, 2.99)));
        assert!(!contains(&s, Vector::new(1.01, 0.0, 0.0)));
        assert!(!contains(&s, Vector::new(0.0, 0.0, 3.01)));
    }

    #[test]
    fn plane_is_the_half_space_below_it() {
        let s = shape(Geometry::Plane { normal: Vec3::new(0.0, 0.0, 2.0), size: [1.0, 1.0] });
        assert!(contains(&s, Vector::new(100.0, -50.0, -0.01)));
        assert!(!contains(&s, Vector::new(0.0, 0.0, 0.01)));
    }

    #[test]
    fn ellipsoid_hull_contains_the_ellipsoid_and_overshoots_by_at_most_the_stated_amount() {
        let r = Vector::new(1.0, 2.0, 0.5);
        let s = shape(Geometry::Ellipsoid { radii: Vec3::new(r.x, r.y, r.z) });
        let over = ellipsoid_overshoot();
        assert!(over > 0.0 && over < 0.011, "{over}");
        // Points on the ellipsoid (off the hull's vertices) are inside; points scaled by
        // more than the overshoot are outside.
        for k in 0..200 {
            let (a, b) = (k as f64 * 0.731, k as f64 * 1.379);
            let unit = Vector::new(a.sin() * b.cos(), a.sin() * b.sin(), a.cos());
            let p = unit * r;
            assert!(contains(&s, p * 0.999_999), "{p:?} outside the hull");
            assert!(!contains(&s, p * (1.0 + over) * 1.000_001), "{p:?} too far out still inside");
        }
    }

    #[test]
    fn bad_sizes_are_errors_naming_the_field() {
        for (g, field) in [
            (Geometry::Box { size: Vec3::new(1.0, -1.0, 1.0) }, "box size y"),
            (Geometry::Sphere { radius: 0.0 }, "sphere radius"),
            (Geometry::Cylinder { radius: 1.0, length: f64::NAN }, "cylinder length"),
            (Geometry::Capsule { radius: 1.0, length: -0.5 }, "capsule length"),
            (Geometry::Ellipsoid { radii: Vec3::new(1.0, 1.0, f64::INFINITY) }, "ellipsoid radius z"),
            (Geometry::Plane { normal: Vec3::ZERO, size: [1.0, 1.0] }, "plane normal"),
        ] {
            match build(&g) {
                Err(e) => assert!(e.contains(field), "{e:?} does not name {field}"),
                Ok(_) => panic!("{g:?} accepted"),
            }
        }
    }

    #[test]
    fn meshes_are_unsupported_and_empty_is_nothing() {
        let mesh =
            Geometry::Mesh { uri: "model://a/b.stl".into(), scale: Vec3::new(1.0, 1.0, 1.0), submesh: String::new() };
        assert!(matches!(build(&mesh), Ok(Built::Unsupported(m)) if m.contains("b.stl")));
        assert!(matches!(build(&Geometry::Empty), Ok(Built::Nothing)));
    }
}
