//! Levels and performers: the level manager (plugins/level-manager) loaded as the real
//! plugin by the real host, on the levels design's example world (`worlds/levels_seed000.sdf`) and
//! small worlds of its own. No physics: performers are moved by writing their `Pose` from
//! the fixture, and the level rule sees a pose written in step k at step k + 1.
//!
//! * [`narrative`]: the levels design's one-performer story, stage by stage, and a second performer
//!   keeping a level loaded.
//! * [`edges`]: buffers entered without entering the level, closed boxes, two performers
//!   keeping one level, leaving and coming back with the same ids, systems of unloaded
//!   models, what other systems see, levels off.
//! * [`secondary`]: the level manager on a secondary: assigned levels only, hand-overs.
//! * [`service`]: the `/world/<w>/level/set_performer` service.
//! * [`errors`]: bad input: errors with element and line, warnings.
//! * [`gz_world`]: gz-sim's `levels.sdf` (`$TROUPE_GZ_WORLDS`).

mod edges;
mod errors;
mod gz_world;
mod narrative;
mod secondary;
mod service;
mod support;
