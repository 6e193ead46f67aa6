//! The motion of a sensor's link as physics writes it, carried to the sensor's origin.
//!
//! Physics fills velocity and acceleration components only for the links that carry them
//! (gz-sim's convention), so a sensor asks for them when it is set up with [`ensure`].

use crate::frames;
use plugin_api::components::{
    Gravity, WorldAngularAcceleration, WorldAngularVelocity, WorldLinearAcceleration, WorldLinearVelocity,
};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{Change, Component, Ecm, EcmRead, EntityId};

/// Creates component `C` (default value) on `entity` unless it has one, so that physics
/// fills it from the next step.
pub fn ensure<C: Component + Default>(ecm: &mut Ecm<'_>, entity: EntityId) -> Result<(), plugin_api::EcmError> {
    if !ecm.has::<C>(entity) {
        ecm.set(entity, &C::default(), Change::OneTime)?;
    }
    Ok(())
}

/// World-frame state of a sensor's origin.
#[derive(Clone, Copy, Debug, Default)]
pub struct Motion {
    /// The sensor's world pose.
    pub pose: Pose,
    /// Linear velocity of the sensor's origin, m/s.
    pub velocity: Vec3,
    /// Angular velocity, rad/s.
    pub angular_velocity: Vec3,
    /// Linear acceleration of the sensor's origin, m/s².
    pub acceleration: Vec3,
}

/// The motion of a sensor at `offset` (its pose relative to `link`). Missing components
/// (a static link, or before physics ran) read as zero.
pub fn of_sensor(ecm: &impl EcmRead, link: EntityId, offset: Pose) -> Motion {
    let link_pose = frames::world_pose(ecm, link);
    let pose = link_pose * offset;
    let v = ecm.get::<WorldLinearVelocity>(link).map(|c| c.0).unwrap_or_default();
    let w = ecm.get::<WorldAngularVelocity>(link).map(|c| c.0).unwrap_or_default();
    let a = ecm.get::<WorldLinearAcceleration>(link).map(|c| c.0).unwrap_or_default();
    let alpha = ecm.get::<WorldAngularAcceleration>(link).map(|c| c.0).unwrap_or_default();
    // The sensor's origin relative to the link's, in the world frame.
    let r = pose.position - link_pose.position;
    Motion {
        pose,
        velocity: v + w.cross(r),
        angular_velocity: w,
        acceleration: a + alpha.cross(r) + w.cross(w.cross(r)),
    }
}

/// The world's gravity (SDFormat default 0 0 -9.8).
pub fn gravity(ecm: &impl EcmRead, world: EntityId) -> Vec3 {
    ecm.get::<Gravity>(world).map(|g| g.0).unwrap_or(Vec3::new(0.0, 0.0, -9.8))
}
