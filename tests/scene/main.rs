//! The scene broadcaster (`plugins/scene-broadcaster`) loaded as the real plugin library
//! into a [`troupe::fixture::TestFixture`], reached through the server's in-process
//! transport node.
//!
//! * [`info`]: the `scene/info` service lists the world's models, links and lights; a
//!   model created while running is announced once on the `scene/info` topic, a removed one
//!   on `scene/deletion`.
//! * [`poses`]: `pose/info` and `dynamic_pose/info` carry what they should, no faster than
//!   their rates, with the sim time as stamp.
//! * [`state`]: the `state` service answers the full state; the `state` topic starts full,
//!   then carries one-time changes in the step they happen.
//! * [`config`]: bad `<state_hertz>` / `<dynamic_pose_hertz>` warn and keep the defaults.

mod config;
mod info;
mod poses;
mod state;
mod support;
