//! Entity ids.

use abi_stable::StableAbi;
use std::fmt;

/// An entity: a u64 id, never reused within a run.
///
/// Ids of entities that come from the world file are a pure function of the file: the host
/// numbers every SDF element that becomes an entity depth-first in document order from 1,
/// whether it is loaded now or not, so every process of a distributed run agrees on them and
/// a level reloaded later gets the same ids again. Entities created at run time take ids from
/// a counter above that range.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct EntityId(pub u64);

impl EntityId {
    /// No entity (gz-sim's `kNullEntity`).
    pub const NULL: EntityId = EntityId(0);

    /// Whether this is [`EntityId::NULL`].
    pub fn is_null(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Debug for EntityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

impl fmt::Display for EntityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
