//! Physics against physics: worlds loaded with the real `troupe_physics_rapier` library
//! (through the default name mapping of `gz-sim-physics-system`), stepped with
//! [`troupe::fixture::TestFixture`], and checked against analytic mechanics.
//!
//! * [`fall`]: free fall against the continuous and the integrator's discrete solution;
//!   bit-identical runs.
//! * [`contact`]: resting, sliding on an incline, bouncing, reported contacts.
//! * [`joints`]: pendulum period and energy, prismatic limit, joint state (accumulated
//!   revolute angles) and commands,
//!   a joint naming an unknown link.
//! * [`commands`]: velocity, wrench and pose commands (paused too), entities created and
//!   removed while running, reset.
//! * [`meshes`]: STL and OBJ collisions, and the errors bad mesh input gives.
//! * [`gz_worlds`]: gz-sim's shapes.sdf and distributed_standalone.sdf (`$TROUPE_GZ_WORLDS`,
//!   skipped when unset, failed under CI).

mod commands;
mod common;
mod contact;
mod fall;
mod gz_worlds;
mod joints;
mod meshes;
