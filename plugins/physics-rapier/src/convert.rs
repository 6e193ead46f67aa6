//! Conversions between Troupe's math types (`plugin_api::math`, f64) and rapier's (glam,
//! f64 in this build).

use plugin_api::math::{Pose, Quat, Vec3};
use rapier3d_f64::math::{Pose as RPose, Rotation, Vector};

/// Troupe vector → rapier vector.
pub fn vec_to_r(v: Vec3) -> Vector {
    Vector::new(v.x, v.y, v.z)
}

/// Rapier vector → Troupe vector.
pub fn vec_from_r(v: Vector) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

/// Troupe quaternion → rapier rotation (normalised: SDF rotations are, but a command may
/// carry a slightly denormalised one).
pub fn rot_to_r(q: Quat) -> Rotation {
    let r = Rotation::from_xyzw(q.x, q.y, q.z, q.w);
    let n = r.length();
    if (n - 1.0).abs() > 1e-12 && n > 0.0 {
        r / n
    } else {
        r
    }
}

/// Rapier rotation → Troupe quaternion.
pub fn rot_from_r(r: Rotation) -> Quat {
    Quat { w: r.w, x: r.x, y: r.y, z: r.z }
}

/// Troupe pose → rapier pose.
pub fn pose_to_r(p: &Pose) -> RPose {
    RPose::from_parts(vec_to_r(p.position), rot_to_r(p.rotation))
}

/// Rapier pose → Troupe pose.
pub fn pose_from_r(p: &RPose) -> Pose {
    Pose { position: vec_from_r(p.translation), rotation: rot_from_r(p.rotation) }
}
