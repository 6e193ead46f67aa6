//! # troupe_sensors — IMU, altimeter, air pressure, magnetometer, NavSat, contact,
//! force-torque, logical camera and a CPU lidar
//!
//! Troupe's system for gz-sim's sensor systems. One instance serves a world; each gz-sim
//! name that loads it enables its sensor type (`gz-sim-imu-system` → `imu`,
//! `gz-sim-sensors-system` → the lidars, ...; the host merges several names into one
//! instance). A world with sensors and no sensor system gets one enabling every type.
//! Users' documentation: `docs/sensors.md`.
//!
//! ## Parameters
//!
//! | element | type | default | meaning |
//! |---|---|---|---|
//! | `<enable>` (repeatable) | gz-sim class name | the loading name | another sensor type to enable (the host writes these when it merges names) |
//!
//! Each `<sensor>` is read from its SDF: `<update_rate>` (Hz, 0 = every step, negative is
//! an error), `<topic>`, `<pose>` and the type's block with its `<noise>` (see
//! `docs/sensors.md`). A bad block is a warning naming the sensor and its file and line;
//! that sensor is skipped and the server runs.
//!
//! ## Topics and services
//!
//! | sensor type | default topic (scoped name +) | message |
//! |---|---|---|
//! | `imu` | `/imu` | `gz.msgs.IMU` |
//! | `altimeter` | `/altimeter` | `gz.msgs.Altimeter` |
//! | `air_pressure` | `/air_pressure` | `gz.msgs.FluidPressure` |
//! | `magnetometer` | `/magnetometer` | `gz.msgs.Magnetometer` |
//! | `navsat`, `gps` | `/navsat` | `gz.msgs.NavSat` |
//! | `contact` | `/contact` (`<contact><topic>` wins) | `gz.msgs.Contacts` |
//! | `force_torque` | `/forcetorque` | `gz.msgs.Wrench` |
//! | `logical_camera` | `/logical_camera` | `gz.msgs.LogicalCameraImage` |
//! | `gpu_lidar`, `lidar`, `ray` | `/scan`, and `/scan/points` | `gz.msgs.LaserScan`, `gz.msgs.PointCloudPacked` |
//!
//! The scoped name is `/world/<w>/model/<m>/link/<l>/sensor/<s>`. Samples go out at the
//! steps where sim time reaches a multiple of the period, whether anyone subscribes or not,
//! never while paused.
//!
//! ## Example
//!
//! `worlds/sensors.sdf` (loaded by the `sensors` test binary) holds one sensor of each type.

mod air_pressure;
mod altimeter;
mod config;
mod contact;
mod force_torque;
mod frames;
mod imu;
pub mod lidar;
mod logical_camera;
mod magnetometer;
mod motion;
mod navsat;
mod noise;
mod system;

pub use air_pressure::pressure_at;
pub use config::Kind;
pub use system::{Schedule, Sensors};

plugin_api::export_plugin! {
    library: "troupe_sensors",
    systems: {
        "gz::sim::systems::Sensors" => Sensors::enabling(&[Kind::Lidar]),
        "gz::sim::systems::Imu" => Sensors::enabling(&[Kind::Imu]),
        "gz::sim::systems::Altimeter" => Sensors::enabling(&[Kind::Altimeter]),
        "gz::sim::systems::AirPressure" => Sensors::enabling(&[Kind::AirPressure]),
        "gz::sim::systems::Magnetometer" => Sensors::enabling(&[Kind::Magnetometer]),
        "gz::sim::systems::NavSat" => Sensors::enabling(&[Kind::NavSat]),
        "gz::sim::systems::Contact" => Sensors::enabling(&[Kind::Contact]),
        "gz::sim::systems::ForceTorque" => Sensors::enabling(&[Kind::ForceTorque]),
        "gz::sim::systems::LogicalCamera" => Sensors::enabling(&[Kind::LogicalCamera]),
        "troupe::sensors::All" | "troupe_sensors" => Sensors::enabling(&Kind::ALL),
    }
}
