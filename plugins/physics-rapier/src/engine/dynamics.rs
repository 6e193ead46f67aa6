//! SDF dynamics in rapier's terms: an `<inertial>` as mass properties, a joint axis's
//! damping and spring as a passive motor.

use crate::convert::{rot_to_r, vec_to_r};
use plugin_api::components::{AxisData, Inertial};
use rapier3d_f64::dynamics::{GenericJoint, JointAxis as RAxis, MotorModel};
use rapier3d_f64::math::{Matrix, Vector};
use rapier3d_f64::parry::mass_properties::MassProperties;

/// The SDF's passive dynamics of one joint axis: viscous damping and a spring, as a
/// force-based motor; no motor at all when both are zero (a motor with zero gains would
/// hold the axis still).
pub(super) fn set_passive_motor(joint: &mut GenericJoint, ax: RAxis, data: &AxisData) {
    let (stiffness, damping) = (data.spring_stiffness.max(0.0), data.damping.max(0.0));
    if stiffness == 0.0 && damping == 0.0 {
        joint.motor_axes.remove(ax.into());
        joint.motors[ax as usize] = Default::default();
        return;
    }
    joint.set_motor_model(ax, MotorModel::ForceBased);
    joint.set_motor(ax, data.spring_reference, 0.0, stiffness, damping);
    joint.set_motor_max_force(ax, f64::MAX);
}

/// SDF `<inertial>` → rapier mass properties (mass, centre of mass, full inertia tensor
/// rotated by the inertial pose).
pub(super) fn mass_properties(i: &Inertial) -> Result<MassProperties, String> {
    if !(i.mass.is_finite() && i.mass > 0.0) {
        return Err(format!("<inertial><mass> must be positive, not {}", i.mass));
    }
    let [ixx, ixy, ixz, iyy, iyz, izz] = i.inertia;
    let local = Matrix::from_cols(Vector::new(ixx, ixy, ixz), Vector::new(ixy, iyy, iyz), Vector::new(ixz, iyz, izz));
    if !local.is_finite() {
        return Err(format!("<inertia> {:?} is not finite", i.inertia));
    }
    // A physical inertia tensor has no negative principal moment. (A zero one is accepted:
    // rapier then keeps the body from turning about that axis.)
    let eigen = rapier3d_f64::math::SymmetricEigen::new(local);
    let scale = eigen.eigenvalues.abs().max_element().max(1e-300);
    if eigen.eigenvalues.min_element() < -1e-9 * scale {
        return Err(format!(
            "<inertia> ixx ixy ixz iyy iyz izz = {:?} has a negative principal moment ({:?})",
            i.inertia,
            eigen.eigenvalues.to_array()
        ));
    }
    if !(i.pose.position.to_array().iter().all(|v| v.is_finite())
        && [i.pose.rotation.w, i.pose.rotation.x, i.pose.rotation.y, i.pose.rotation.z].iter().all(|v| v.is_finite()))
    {
        return Err(format!("<inertial><pose> {:?} is not finite", i.pose));
    }
    let r = Matrix::from_quat(rot_to_r(i.pose.rotation));
    let tensor = r * local * r.transpose();
    Ok(MassProperties::with_inertia_matrix(vec_to_r(i.pose.position), i.mass, tensor))
}
