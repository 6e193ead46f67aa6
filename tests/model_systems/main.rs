//! The model systems loaded as their real plugin libraries into worlds with rapier physics,
//! stepped with [`troupe::fixture::TestFixture`] and checked against physics.
//!
//! * [`diff_drive`]: `worlds/diff_drive.sdf` driven at v, ω drives a circle of radius v/ω;
//!   wheel odometry against the true pose; speed limits; configuration errors.
//! * [`wrench`]: ApplyLinkWrench's one-shot (Δp = F·dt), persistent and cleared wrenches.
//! * [`velocity`]: VelocityControl holding its velocity under load.
//! * [`joint_position`]: JointPositionController settling time and overshoot, PID and direct.

mod diff_drive;
mod joint_position;
mod support;
mod velocity;
mod wrench;
