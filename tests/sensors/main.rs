//! The sensors system (`plugins/sensors`) loaded as the real `troupe_sensors` library into
//! worlds stepped by rapier physics through [`troupe::fixture::TestFixture`]; samples are
//! read from the server's in-process transport node.
//!
//! * [`motion`]: IMU in free fall and at rest (and turned), altimeter after a known fall.
//! * [`environment`]: air pressure at two altitudes, magnetometer turned by a known yaw,
//!   NavSat moving north a known distance.
//! * [`forces`]: contact between a dropped sphere and a box; force-torque under a hanging mass.
//! * [`vision`]: the logical camera's exact model set; lidar ranges to a wall and a sphere.
//! * [`rate`]: samples over 10 s equal rate x 10; none while paused; noise repeats with the seed.
//! * [`example`]: the documented example world, `worlds/sensors.sdf`.
//! * [`errors`]: bad sensor blocks warn with the sensor's name and line and are skipped.

mod common;
mod environment;
mod errors;
mod example;
mod forces;
mod motion;
mod rate;
mod vision;
