//! The kinematic physics backend (`plugins/physics-kinematic`) loaded as the real plugin
//! library into a [`troupe::fixture::TestFixture`], on the worlds in
//! `worlds/test/kinematic/`.
//!
//! * [`motion`]: velocity commands move bodies by exactly v·t, angular ones turn them.
//! * [`contacts`]: overlapping collisions report their contact, separate ones do not; every
//!   primitive shape has the size the SDF gives it.
//! * [`lifecycle`]: pose commands while paused, entities spawned and removed mid-run, reset,
//!   bit-identical runs.
//! * [`errors`]: bad geometry and bad commands end the run naming the entity.
//! * [`cross_backend`]: one SDF text on every physics backend, only `filename` changed.
//! * [`selection`]: gz-sim's `<engine>` TPE choice, `--physics-engine`, and the world file's
//!   backend replacing the server config's.

mod contacts;
mod cross_backend;
mod errors;
mod lifecycle;
mod motion;
mod selection;
mod support;
