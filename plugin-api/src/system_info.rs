//! What a system is (plugin-api 1.8): its kind, the roles it runs in by default, and whether
//! it changes the simulation. A system states it through [`crate::System::info`]; the host
//! places and classifies systems by it, never by their library's name, so a third party's
//! physics or sensors plugin is what the built-in ones are.

use crate::ffi::NetworkRole;
use abi_stable::StableAbi;
use std::fmt;

/// What a system does, as far as the host cares. Values unknown to a host are [`SystemKind::OTHER`] to it.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SystemKind(pub u8);

impl SystemKind {
    /// Any other system.
    pub const OTHER: SystemKind = SystemKind(0);
    /// A physics backend: a world runs one, `--physics-engine` replaces it.
    pub const PHYSICS: SystemKind = SystemKind(1);
    /// A sensors system: the host adds one to a world with sensors that has none.
    pub const SENSORS: SystemKind = SystemKind(2);
    /// The scene broadcaster.
    pub const SCENE_BROADCASTER: SystemKind = SystemKind(3);
    /// The user-commands system.
    pub const USER_COMMANDS: SystemKind = SystemKind(4);
    /// The level manager: the host adds one when levels are on and the world has none.
    pub const LEVEL_MANAGER: SystemKind = SystemKind(5);

    /// The lower-case name, for messages (`"other"` for a value this version does not know).
    pub fn as_str(self) -> &'static str {
        match self {
            SystemKind::PHYSICS => "physics",
            SystemKind::SENSORS => "sensors",
            SystemKind::SCENE_BROADCASTER => "scene broadcaster",
            SystemKind::USER_COMMANDS => "user commands",
            SystemKind::LEVEL_MANAGER => "level manager",
            _ => "other",
        }
    }
}

/// A set of the roles of a distributed run ([`NetworkRole`]): bit 1 primary, 2 secondary,
/// 4 standalone.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RoleSet(pub u8);

impl RoleSet {
    /// No role.
    pub const NONE: RoleSet = RoleSet(0);
    /// The primary.
    pub const PRIMARY: RoleSet = RoleSet(1);
    /// Secondaries.
    pub const SECONDARY: RoleSet = RoleSet(2);
    /// Standalone runs.
    pub const STANDALONE: RoleSet = RoleSet(4);
    /// Every role.
    pub const ALL: RoleSet = RoleSet(7);
    /// Secondaries and standalone runs: where performers are simulated.
    pub const SIMULATING: RoleSet = RoleSet(2 | 4);
    /// The primary and standalone runs: where users talk to the world.
    pub const FACING_USERS: RoleSet = RoleSet(1 | 4);

    /// The set holding just `role` (standalone for a value this version does not know).
    pub const fn of(role: NetworkRole) -> RoleSet {
        match role {
            NetworkRole::PRIMARY => RoleSet::PRIMARY,
            NetworkRole::SECONDARY => RoleSet::SECONDARY,
            _ => RoleSet::STANDALONE,
        }
    }

    /// Both sets' roles.
    pub const fn union(self, other: RoleSet) -> RoleSet {
        RoleSet(self.0 | other.0)
    }

    /// Whether the two sets share a role.
    pub const fn intersects(self, other: RoleSet) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether `role` is in the set.
    pub const fn contains(self, role: NetworkRole) -> bool {
        self.intersects(RoleSet::of(role))
    }

    /// The roles in the set: primary, secondary, standalone.
    pub fn iter(self) -> impl Iterator<Item = NetworkRole> {
        [NetworkRole::PRIMARY, NetworkRole::SECONDARY, NetworkRole::STANDALONE]
            .into_iter()
            .filter(move |r| self.contains(*r))
    }
}

impl fmt::Display for RoleSet {
    /// `primary secondary standalone` (the roles in the set), or `no role`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 & RoleSet::ALL.0 == 0 {
            return f.write_str("no role");
        }
        let names: Vec<&str> = self.iter().map(NetworkRole::as_str).collect();
        f.write_str(&names.join(" "))
    }
}

impl fmt::Debug for RoleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RoleSet({self})")
    }
}

/// What a system is: see the [module docs](self).
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemInfo {
    /// What it does.
    pub kind: SystemKind,
    /// The roles it runs in when its `<plugin>` has no `<troupe:roles>`. (A system attached
    /// to a model or sensor runs where its model is simulated, whatever this says.)
    pub default_roles: RoleSet,
    /// Whether it changes the simulation: such systems are skipped when a log is played
    /// back, since the log replays what they did.
    pub simulates: bool,
}

impl SystemInfo {
    /// A system that observes (a logger, a publisher) and runs in every role, as gz-sim runs
    /// every system. The default, and what a library built before plugin-api 1.8 gets.
    pub const OTHER: SystemInfo = SystemInfo { kind: SystemKind::OTHER, default_roles: RoleSet::ALL, simulates: false };
    /// A physics backend: runs where performers are simulated (secondaries and standalone).
    pub const PHYSICS: SystemInfo =
        SystemInfo { kind: SystemKind::PHYSICS, default_roles: RoleSet::SIMULATING, simulates: true };
    /// A sensors system: runs where its sensors' performers are simulated.
    pub const SENSORS: SystemInfo =
        SystemInfo { kind: SystemKind::SENSORS, default_roles: RoleSet::SIMULATING, simulates: true };
    /// The scene broadcaster: runs on the primary (and standalone), which holds the whole world.
    pub const SCENE_BROADCASTER: SystemInfo =
        SystemInfo { kind: SystemKind::SCENE_BROADCASTER, default_roles: RoleSet::FACING_USERS, simulates: false };
    /// User commands: run on the primary (and standalone), which forwards what they change.
    pub const USER_COMMANDS: SystemInfo =
        SystemInfo { kind: SystemKind::USER_COMMANDS, default_roles: RoleSet::FACING_USERS, simulates: true };
    /// The level manager: runs in every role (it decides on the primary, follows on secondaries).
    pub const LEVEL_MANAGER: SystemInfo =
        SystemInfo { kind: SystemKind::LEVEL_MANAGER, default_roles: RoleSet::ALL, simulates: true };

    /// The same, marked as changing the simulation (a controller commanding joints, say).
    pub const fn simulating(self) -> SystemInfo {
        SystemInfo { simulates: true, ..self }
    }
}

impl Default for SystemInfo {
    fn default() -> Self {
        SystemInfo::OTHER
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_sets_hold_roles_and_print_them() {
        assert!(RoleSet::SIMULATING.contains(NetworkRole::SECONDARY));
        assert!(!RoleSet::SIMULATING.contains(NetworkRole::PRIMARY));
        assert!(RoleSet::FACING_USERS.contains(NetworkRole::STANDALONE));
        // A role this version does not know counts as standalone.
        assert!(RoleSet::STANDALONE.contains(NetworkRole(9)));
        assert_eq!(RoleSet::PRIMARY.union(RoleSet::SECONDARY).to_string(), "primary secondary");
        assert_eq!(RoleSet::NONE.to_string(), "no role");
        assert_eq!(RoleSet::ALL.iter().count(), 3);
    }

    #[test]
    fn a_kind_unknown_to_this_version_reads_as_other() {
        assert_eq!(SystemKind(200).as_str(), "other");
        assert_eq!(SystemKind::PHYSICS.as_str(), "physics");
        assert_eq!(SystemInfo::default(), SystemInfo::OTHER);
        assert!(SystemInfo::OTHER.simulating().simulates);
    }
}
