//! # troupe_kinematic_engine — the engine of `troupe_physics_kinematic`
//!
//! Bodies that move only as their velocities say, and collisions tested for overlap with
//! parry3d-f64, with no ECM: the plugin (`plugins/physics-kinematic`) feeds it from the ECM
//! and writes its results back. See `docs/physics-kinematic.md`.
//!
//! * [`world`]: bodies (models and links), their exact integration, contacts.
//! * [`shapes`]: SDFormat geometries as parry shapes.
//! * [`to_iso`] / [`to_pose`] / [`to_vector`] / [`to_vec3`]: conversions at the ECM edge.

pub mod shapes;
pub mod world;

pub use parry3d_f64::math::{Pose as Iso, Rotation, Vector};
pub use world::{Body, ContactPair, Kind, NewBody, Point, Twist, World};

use plugin_api::math::{Pose, Quat, Vec3};

/// ECM pose → parry pose (the quaternion as stored, not renormalised).
pub fn to_iso(p: &Pose) -> Iso {
    let q = p.rotation;
    Iso::from_parts(Vector::new(p.position.x, p.position.y, p.position.z), Rotation::from_xyzw(q.x, q.y, q.z, q.w))
}

/// parry pose → ECM pose.
pub fn to_pose(i: &Iso) -> Pose {
    let (t, q) = (i.translation, i.rotation);
    Pose { position: Vec3::new(t.x, t.y, t.z), rotation: Quat { w: q.w, x: q.x, y: q.y, z: q.z } }
}

/// ECM vector → parry vector.
pub fn to_vector(v: Vec3) -> Vector {
    Vector::new(v.x, v.y, v.z)
}

/// parry vector → ECM vector.
pub fn to_vec3(v: Vector) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}
