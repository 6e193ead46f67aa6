//! State physics writes back every step: world-frame velocities and accelerations, joint
//! state, transmitted wrenches and contacts.

use super::commands::Wrench;
use super::{marker_components, record, value_component};
use crate::entity::EntityId;
use crate::math::Vec3;

value_component!(
    /// Linear velocity of a link or model in the world frame, m/s.
    WorldLinearVelocity(Vec3) = "gz_sim_components.WorldLinearVelocity");
value_component!(
    /// Angular velocity of a link or model in the world frame, rad/s.
    WorldAngularVelocity(Vec3) = "gz_sim_components.WorldAngularVelocity");
value_component!(
    /// Linear acceleration of a link's origin in the world frame, m/s² (what an IMU's
    /// specific force is computed from).
    WorldLinearAcceleration(Vec3) = "gz_sim_components.WorldLinearAcceleration");
value_component!(
    /// Angular acceleration of a link in the world frame, rad/s².
    WorldAngularAcceleration(Vec3) = "gz_sim_components.WorldAngularAcceleration");
value_component!(
    /// Joint position per degree of freedom, rad or m.
    JointPosition(Vec<f64>) = "gz_sim_components.JointPosition");
value_component!(
    /// Joint velocity per degree of freedom, rad/s or m/s.
    JointVelocity(Vec<f64>) = "gz_sim_components.JointVelocity");
value_component!(
    /// The wrench the joint transmits from its parent to its child link, in the joint frame.
    /// Physics fills it for joints that carry the component.
    JointTransmittedWrench(Wrench) = "gz_sim_components.JointTransmittedWrench");

record! {
    /// One contact between two collisions: the points where they touch.
    Contact {
        /// The collision that carries the component.
        collision1: EntityId = EntityId::NULL,
        /// The other collision.
        collision2: EntityId = EntityId::NULL,
        /// Contact points, world frame, m.
        positions: Vec<Vec3> = Vec::new(),
        /// Contact normals at each point, pointing from `collision2` to `collision1`.
        normals: Vec<Vec3> = Vec::new(),
        /// Penetration depth at each point, m.
        depths: Vec<f64> = Vec::new(),
        /// Force on `collision1` at each point, world frame, N.
        forces: Vec<Vec3> = Vec::new(),
    }
}

value_component!(
    /// The contacts of a collision during the last step. Physics fills it for collisions
    /// that carry [`WatchContacts`] (and clears it when there are none).
    ContactSensorData(Vec<Contact>) = "gz_sim_components.ContactSensorData");

marker_components! {
    /// Asks physics to report this collision's contacts in [`ContactSensorData`].
    WatchContacts = "troupe.WatchContacts";
}
