//! Minimal f64 geometry shared by the host and plugins: vectors, quaternions and poses.
//!
//! These are plain `#[repr(C)]` values so they can sit inside components that cross the
//! plugin boundary. Plugins that use a maths library (nalgebra, glam) convert at their edge.
//!
//! Each is also plain old data ([`bytemuck::Pod`]): f64 fields only, no padding, and on a
//! little-endian target its memory is exactly its byte form (`Writer::vec3`, `quat`,
//! `pose`), which lets [`crate::Ecm::for_each_mut`] hand out values in place.

use abi_stable::StableAbi;
use bytemuck::{Pod, Zeroable};
use std::ops::{Add, Mul, Neg, Sub};

/// A 3-vector (metres, metres per second, newtons... as the component says).
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Vec3 {
    /// x component.
    pub x: f64,
    /// y component.
    pub y: f64,
    /// z component.
    pub z: f64,
}

impl Vec3 {
    /// The zero vector.
    pub const ZERO: Vec3 = Vec3::new(0.0, 0.0, 0.0);

    /// A vector from its components.
    pub const fn new(x: f64, y: f64, z: f64) -> Self {
        Vec3 { x, y, z }
    }
    /// Dot product.
    pub fn dot(self, o: Vec3) -> f64 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    /// Cross product.
    pub fn cross(self, o: Vec3) -> Vec3 {
        Vec3::new(self.y * o.z - self.z * o.y, self.z * o.x - self.x * o.z, self.x * o.y - self.y * o.x)
    }
    /// Euclidean length.
    pub fn length(self) -> f64 {
        self.dot(self).sqrt()
    }
    /// Each component scaled by `s`.
    pub fn scale(self, s: f64) -> Vec3 {
        Vec3::new(self.x * s, self.y * s, self.z * s)
    }
    /// The components as an array.
    pub fn to_array(self) -> [f64; 3] {
        [self.x, self.y, self.z]
    }
}

impl Add for Vec3 {
    type Output = Vec3;
    fn add(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}
impl Sub for Vec3 {
    type Output = Vec3;
    fn sub(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}
impl Neg for Vec3 {
    type Output = Vec3;
    fn neg(self) -> Vec3 {
        Vec3::new(-self.x, -self.y, -self.z)
    }
}

/// A unit quaternion (w, x, y, z) for rotations.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct Quat {
    /// Scalar part.
    pub w: f64,
    /// i component.
    pub x: f64,
    /// j component.
    pub y: f64,
    /// k component.
    pub z: f64,
}

impl Default for Quat {
    fn default() -> Self {
        Quat::IDENTITY
    }
}

impl Quat {
    /// No rotation.
    pub const IDENTITY: Quat = Quat { w: 1.0, x: 0.0, y: 0.0, z: 0.0 };

    /// The rotation given by roll, pitch and yaw (radians) about the fixed x, y and z axes,
    /// applied in that order: SDFormat's `<pose>` convention.
    pub fn from_rpy(roll: f64, pitch: f64, yaw: f64) -> Quat {
        let (sr, cr) = (roll * 0.5).sin_cos();
        let (sp, cp) = (pitch * 0.5).sin_cos();
        let (sy, cy) = (yaw * 0.5).sin_cos();
        Quat {
            w: cr * cp * cy + sr * sp * sy,
            x: sr * cp * cy - cr * sp * sy,
            y: cr * sp * cy + sr * cp * sy,
            z: cr * cp * sy - sr * sp * cy,
        }
    }

    /// Roll, pitch and yaw (radians) of this rotation, the inverse of [`Quat::from_rpy`].
    pub fn to_rpy(self) -> [f64; 3] {
        let q = self.normalized();
        let sinr = 2.0 * (q.w * q.x + q.y * q.z);
        let cosr = 1.0 - 2.0 * (q.x * q.x + q.y * q.y);
        let roll = sinr.atan2(cosr);
        let sinp = (2.0 * (q.w * q.y - q.z * q.x)).clamp(-1.0, 1.0);
        let pitch = sinp.asin();
        let siny = 2.0 * (q.w * q.z + q.x * q.y);
        let cosy = 1.0 - 2.0 * (q.y * q.y + q.z * q.z);
        let yaw = siny.atan2(cosy);
        [roll, pitch, yaw]
    }

    /// The same rotation with unit norm (identity if the norm is zero).
    pub fn normalized(self) -> Quat {
        let n = (self.w * self.w + self.x * self.x + self.y * self.y + self.z * self.z).sqrt();
        if n == 0.0 || !n.is_finite() {
            return Quat::IDENTITY;
        }
        Quat { w: self.w / n, x: self.x / n, y: self.y / n, z: self.z / n }
    }

    /// The inverse rotation (conjugate of a unit quaternion).
    pub fn inverse(self) -> Quat {
        Quat { w: self.w, x: -self.x, y: -self.y, z: -self.z }
    }

    /// `v` rotated by this quaternion.
    pub fn rotate(self, v: Vec3) -> Vec3 {
        let u = Vec3::new(self.x, self.y, self.z);
        let t = u.cross(v).scale(2.0);
        v + t.scale(self.w) + u.cross(t)
    }
}

impl Mul for Quat {
    type Output = Quat;
    /// Hamilton product: `a * b` rotates by `b` first, then by `a`.
    fn mul(self, b: Quat) -> Quat {
        let a = self;
        Quat {
            w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
            x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        }
    }
}

/// A rigid transform: where a frame is and how it is turned, relative to another frame.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Pose {
    /// Origin of the frame, metres.
    pub position: Vec3,
    /// Orientation of the frame.
    pub rotation: Quat,
}

impl Pose {
    /// The identity transform.
    pub const IDENTITY: Pose = Pose { position: Vec3::ZERO, rotation: Quat::IDENTITY };

    /// A pose from SDFormat's six numbers `x y z roll pitch yaw`.
    pub fn from_xyz_rpy(x: f64, y: f64, z: f64, roll: f64, pitch: f64, yaw: f64) -> Pose {
        Pose { position: Vec3::new(x, y, z), rotation: Quat::from_rpy(roll, pitch, yaw) }
    }

    /// The transform that undoes this one.
    pub fn inverse(self) -> Pose {
        let inv = self.rotation.inverse();
        Pose { position: -inv.rotate(self.position), rotation: inv }
    }

    /// `point`, given in this pose's frame, expressed in the parent frame.
    pub fn transform_point(self, point: Vec3) -> Vec3 {
        self.rotation.rotate(point) + self.position
    }
}

impl Mul for Pose {
    type Output = Pose;
    /// Composition: `parent_T_a * a_T_b = parent_T_b`.
    fn mul(self, child: Pose) -> Pose {
        Pose { position: self.transform_point(child.position), rotation: (self.rotation * child.rotation).normalized() }
    }
}

// The byte forms are 3, 4 and 7 little-endian f64: the layouts must have those sizes (the
// field order is checked by the `layout_is_the_byte_form` test).
const _: () = assert!(std::mem::size_of::<Vec3>() == 24);
const _: () = assert!(std::mem::size_of::<Quat>() == 32);
const _: () = assert!(std::mem::size_of::<Pose>() == 56);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Writer;

    #[test]
    #[cfg(target_endian = "little")]
    fn layout_is_the_byte_form() {
        // Distinct values in every field, so a swapped field or byte order shows.
        let p = Pose { position: Vec3::new(1.5, -2.25, 3.125), rotation: Quat { w: 0.5, x: -0.75, y: 6.0, z: -7.5 } };
        let mut encoded = Vec::new();
        let mut w = Writer(&mut encoded);
        w.pose(p);
        assert_eq!(bytemuck::bytes_of(&p), encoded.as_slice());
        let mut encoded = Vec::new();
        Writer(&mut encoded).vec3(p.position);
        assert_eq!(bytemuck::bytes_of(&p.position), encoded.as_slice());
        let mut encoded = Vec::new();
        Writer(&mut encoded).quat(p.rotation);
        assert_eq!(bytemuck::bytes_of(&p.rotation), encoded.as_slice());
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn rpy_round_trips() {
        let q = Quat::from_rpy(0.3, -0.4, 1.2);
        let [r, p, y] = q.to_rpy();
        assert!(close(r, 0.3) && close(p, -0.4) && close(y, 1.2), "{r} {p} {y}");
    }

    #[test]
    fn yaw_rotates_x_into_y() {
        let v = Quat::from_rpy(0.0, 0.0, std::f64::consts::FRAC_PI_2).rotate(Vec3::new(1.0, 0.0, 0.0));
        assert!(close(v.x, 0.0) && close(v.y, 1.0) && close(v.z, 0.0));
    }

    #[test]
    fn compose_then_inverse_is_identity() {
        let a = Pose::from_xyz_rpy(1.0, 2.0, 3.0, 0.1, 0.2, 0.3);
        let b = Pose::from_xyz_rpy(-1.0, 0.5, 0.0, 0.0, 0.0, 1.0);
        let c = (a * b) * b.inverse();
        assert!(close(c.position.x, 1.0) && close(c.position.y, 2.0) && close(c.position.z, 3.0));
        let [r, p, y] = c.rotation.to_rpy();
        assert!(close(r, 0.1) && close(p, 0.2) && close(y, 0.3));
    }
}
