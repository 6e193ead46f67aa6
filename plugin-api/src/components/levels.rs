//! Levels and performers (gz-sim's), as the level manager stores them.
//!
//! A level is an entity with [`Level`], a [`Name`](super::Name), a box
//! [`Geometry`](super::Geometry), a [`Pose`](crate::math::Pose) and a [`LevelBuffer`]; the
//! entities it holds are named in [`LevelEntityNames`]. A performer is an entity with
//! [`Performer`] and [`PerformerRef`], whose parent is the model it refers to.

use super::{marker_components, value_component};
use crate::entity::EntityId;

marker_components! {
    /// Marks a level.
    Level = "gz_sim_components.Level";
    /// Marks the default level: every entity no level refers to.
    DefaultLevel = "gz_sim_components.DefaultLevel";
    /// Marks a performer.
    Performer = "gz_sim_components.Performer";
}

value_component!(
    /// How far a level's box is inflated to detect performers about to enter it, m.
    LevelBuffer(f64) = "gz_sim_components.LevelBuffer");
value_component!(
    /// Names of the top-level entities a level holds, sorted (a set).
    LevelEntityNames(Vec<String>) = "gz_sim_components.LevelEntityNames");
value_component!(
    /// Name of the model a performer refers to.
    PerformerRef(String) = "gz_sim_components.PerformerRef");
value_component!(
    /// The levels a performer's volume touches, sorted by id (a set).
    PerformerLevels(Vec<EntityId>) = "gz_sim_components.PerformerLevels");
value_component!(
    /// The secondary that simulates a performer in a distributed run.
    PerformerAffinity(String) = "gz_sim_components.PerformerAffinity");
value_component!(
    /// Whether a level's entities are loaded in this runner (plugin-api 1.4). The level
    /// manager keeps it on every level entity; the default level is always loaded.
    LevelLoaded(bool) = "troupe.LevelLoaded");
value_component!(
    /// Whether this runner must hold a level (plugin-api 1.6): on a secondary of a
    /// distributed run the host writes it on every level entity before each step, true
    /// exactly for the levels the primary assigned to this secondary, and the level manager
    /// loads and unloads levels by it instead of by performer volumes. Absent elsewhere.
    LevelAssigned(bool) = "troupe.LevelAssigned");
