//! Commands other systems write and physics consumes.
//!
//! A command component is a request for the next physics step: physics applies it and then
//! removes it (wrenches and joint forces act for one step; a system that wants a sustained
//! force writes it every step), except the velocity commands, which hold until removed, as in
//! gz-sim.

use super::{record, value_component};
use crate::math::{Pose, Vec3};

value_component!(
    /// Teleports a model (static ones too, and also while paused) to this pose, relative to
    /// its parent, at the next step.
    WorldPoseCmd(Pose) = "gz_sim_components.WorldPoseCmd");
value_component!(
    /// Linear velocity a model or link should have, in its own frame, m/s; held until
    /// removed.
    LinearVelocityCmd(Vec3) = "gz_sim_components.LinearVelocityCmd");
value_component!(
    /// Angular velocity a model or link should have, in its own frame, rad/s; held until
    /// removed.
    AngularVelocityCmd(Vec3) = "gz_sim_components.AngularVelocityCmd");

record! {
    /// A force and a torque, in the world frame unless the component says otherwise.
    Wrench {
        /// Force, N.
        force: Vec3 = Vec3::ZERO,
        /// Torque, N·m.
        torque: Vec3 = Vec3::ZERO,
    }
}

value_component!(
    /// A wrench applied to a link's centre of mass for the next step, world frame.
    ExternalWorldWrenchCmd(Wrench) = "gz_sim_components.ExternalWorldWrenchCmd");
value_component!(
    /// Force (prismatic) or torque (revolute) per joint degree of freedom for the next step.
    JointForceCmd(Vec<f64>) = "gz_sim_components.JointForceCmd");
value_component!(
    /// Velocity per joint degree of freedom, rad/s or m/s; held until removed.
    JointVelocityCmd(Vec<f64>) = "gz_sim_components.JointVelocityCmd");
value_component!(
    /// Sets the joint position per degree of freedom at the next step (a reset, not a
    /// controller).
    JointPositionReset(Vec<f64>) = "gz_sim_components.JointPositionReset");
