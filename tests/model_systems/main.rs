//! The model systems loaded as their real plugin libraries into worlds with rapier physics,
//! stepped with [`troupe::fixture::TestFixture`] and checked against physics.
//!
//! * [`diff_drive`]: `worlds/diff_drive.sdf` driven at v, ω drives a circle of radius v/ω;
//!   wheel odometry against the true pose; speed limits; configuration errors.
//! * [`wrench`]: ApplyLinkWrench's one-shot (Δp = F·dt), persistent and cleared wrenches.
//! * [`velocity`]: VelocityControl holding its velocity under load.
//! * [`joint_position`]: JointPositionController settling time and overshoot, PID and direct,
//!   and a target past π (revolute angles accumulate over turns).
//! * [`joint_controller`]: JointController holding a velocity under load, directly and with
//!   the PID on force; braking; configuration errors.
//! * [`joint_state`]: JointStatePublisher's positions, velocities and forces against known
//!   motions, its joint filter, topic and rate.
//! * [`pose_publisher`]: PosePublisher's frames per option, counted at its rates.

mod diff_drive;
mod joint_controller;
mod joint_position;
mod joint_state;
mod pose_publisher;
mod support;
mod velocity;
mod wrench;
