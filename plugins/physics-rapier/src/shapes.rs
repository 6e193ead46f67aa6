//! SDF geometry → rapier collision shapes.

use crate::mesh;
use plugin_api::components::Geometry;
use plugin_api::log;
use rapier3d_f64::geometry::SharedShape;
use rapier3d_f64::math::{Pose as RPose, Rotation, Vector};
use std::path::{Path, PathBuf};

/// A shape and the pose of the shape's frame in the collision frame (rapier's cylinder lies
/// along y where SDF's lies along z).
pub struct Shape {
    /// The shape.
    pub shape: SharedShape,
    /// Extra pose applied after the collision's own pose.
    pub local: RPose,
}

/// Builds the shape of `geometry`. `body_fixed` chooses a triangle mesh (fixed bodies) or a
/// convex hull (moving ones) for meshes. `Ok(None)`: nothing to collide with (empty
/// geometry, or a mesh format physics does not read, which is warned about). Errors name
/// `what` (the scoped collision name) and, for meshes, the file.
pub fn build(geometry: &Geometry, body_fixed: bool, what: &str) -> Result<Option<Shape>, String> {
    let positive = |name: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(format!("collision {what}: {name} must be a positive number, not {v}"))
        }
    };
    let plain = |shape: SharedShape| Ok(Some(Shape { shape, local: RPose::IDENTITY }));
    match geometry {
        Geometry::Empty => Ok(None),
        Geometry::Box { size } => plain(SharedShape::cuboid(
            positive("box size x", size.x)? / 2.0,
            positive("box size y", size.y)? / 2.0,
            positive("box size z", size.z)? / 2.0,
        )),
        Geometry::Sphere { radius } => plain(SharedShape::ball(positive("sphere radius", *radius)?)),
        Geometry::Cylinder { radius, length } => Ok(Some(Shape {
            shape: SharedShape::cylinder(
                positive("cylinder length", *length)? / 2.0,
                positive("cylinder radius", *radius)?,
            ),
            // Rapier's cylinder axis is y; a quarter turn about x takes it to SDF's z.
            local: RPose::from_rotation(Rotation::from_rotation_x(std::f64::consts::FRAC_PI_2)),
        })),
        Geometry::Capsule { radius, length } => {
            let r = positive("capsule radius", *radius)?;
            if !(length.is_finite() && *length >= 0.0) {
                return Err(format!("collision {what}: capsule length must be zero or positive, not {length}"));
            }
            plain(SharedShape::capsule_z(length / 2.0, r))
        }
        Geometry::Ellipsoid { radii } => {
            let (a, b, c) = (
                positive("ellipsoid radius x", radii.x)?,
                positive("ellipsoid radius y", radii.y)?,
                positive("ellipsoid radius z", radii.z)?,
            );
            plain(ellipsoid_hull(a, b, c).ok_or_else(|| format!("collision {what}: ellipsoid hull failed"))?)
        }
        Geometry::Plane { normal, size } => {
            let n = Vector::new(normal.x, normal.y, normal.z);
            if !(n.is_finite() && n.length() > 0.0) {
                return Err(format!("collision {what}: plane normal {normal:?} has no direction"));
            }
            let n = n.normalize();
            if body_fixed {
                return plain(SharedShape::halfspace(n));
            }
            // A half-space cannot move; a moving plane is a 1 mm thick slab of its size.
            let (sx, sy) = (positive("plane size x", size[0])?, positive("plane size y", size[1])?);
            Ok(Some(Shape {
                shape: SharedShape::cuboid(sx / 2.0, sy / 2.0, 0.0005),
                local: RPose::from_parts(-n * 0.0005, Rotation::from_rotation_arc(Vector::Z, n)),
            }))
        }
        Geometry::Mesh { uri, scale, submesh } => {
            let path = resolve_uri(uri).ok_or_else(|| format!("collision {what}: mesh file {uri:?} not found"))?;
            if mesh::Format::of(&path).is_none() {
                log::warn!(
                    "collision {what}: mesh {uri:?} is not STL or OBJ, which physics reads; the collision is left out"
                );
                return Ok(None);
            }
            if !submesh.is_empty() {
                log::warn!("collision {what}: <submesh> {submesh:?} ignored, the whole mesh is used");
            }
            let m = mesh::load(&path).map_err(|e| format!("collision {what}: {e}"))?;
            let s = [
                positive("mesh scale x", scale.x)?,
                positive("mesh scale y", scale.y)?,
                positive("mesh scale z", scale.z)?,
            ];
            let vertices: Vec<Vector> =
                m.vertices.iter().map(|v| Vector::new(v[0] * s[0], v[1] * s[1], v[2] * s[2])).collect();
            let shape = if body_fixed {
                SharedShape::trimesh(vertices, m.triangles)
                    .map_err(|e| format!("collision {what}: mesh file {}: {e:?}", path.display()))?
            } else {
                SharedShape::convex_hull(&vertices).ok_or_else(|| {
                    format!(
                        "collision {what}: mesh file {}: its points have no convex hull (flat or degenerate)",
                        path.display()
                    )
                })?
            };
            plain(shape)
        }
        other => {
            log::warn!("collision {what}: geometry {other:?} is not simulated; the collision is left out");
            Ok(None)
        }
    }
}

/// A convex polyhedron through points on the ellipsoid surface (parry has no ellipsoid): 24
/// meridians × 12 parallels plus the poles: its facets lie at most 1.7 % inside the true
/// surface (cos² 7.5°).
fn ellipsoid_hull(a: f64, b: f64, c: f64) -> Option<SharedShape> {
    let (meridians, parallels) = (24, 12);
    let mut points = vec![Vector::new(0.0, 0.0, c), Vector::new(0.0, 0.0, -c)];
    for i in 1..parallels {
        let theta = std::f64::consts::PI * i as f64 / parallels as f64;
        for j in 0..meridians {
            let phi = 2.0 * std::f64::consts::PI * j as f64 / meridians as f64;
            points.push(Vector::new(a * theta.sin() * phi.cos(), b * theta.sin() * phi.sin(), c * theta.cos()));
        }
    }
    SharedShape::convex_hull(&points)
}

/// A mesh URI as a file path: `file://` and plain paths (absolute, or relative to the
/// working directory), then relative ones and `model://NAME/...` looked up in each folder of
/// `GZ_SIM_RESOURCE_PATH` and `SDF_PATH`. `None` if no such file exists.
pub fn resolve_uri(uri: &str) -> Option<PathBuf> {
    let uri = uri.trim();
    if uri.starts_with("http://") || uri.starts_with("https://") {
        return None;
    }
    let rel = uri.strip_prefix("file://").or_else(|| uri.strip_prefix("model://")).unwrap_or(uri);
    let direct = Path::new(rel);
    if !uri.starts_with("model://") && direct.is_file() {
        return Some(direct.to_path_buf());
    }
    if direct.is_absolute() {
        return None;
    }
    ["GZ_SIM_RESOURCE_PATH", "SDF_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .flat_map(|v| std::env::split_paths(&v).collect::<Vec<_>>())
        .map(|dir| dir.join(rel))
        .find(|p| p.is_file())
}
