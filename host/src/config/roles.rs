//! In which roles of a distributed run a system runs (DESIGN.md point 3).
//!
//! A `<plugin>`, in the server config or in a world file, may hold a
//! `<troupe:roles>` child listing the roles it runs in, separated by spaces or commas:
//!
//! ```xml
//! <plugin filename="my_logger" name="my::Logger">
//!   <troupe:roles>primary standalone</troupe:roles>
//! </plugin>
//! ```
//!
//! The roles are `primary`, `secondary` and `standalone` (a run without `--network-role`);
//! `all` stands for the three. Without `<troupe:roles>` a system gets the default of its
//! [`SystemKind`]. Like `<gz:system_priority>`, the element is read by the host and stays in
//! the XML the system receives (systems ignore it). Any other `troupe:`-prefixed child of a
//! `<plugin>` is an error: the prefix is the host's.

use plugin_api::NetworkRole;
use std::fmt;
use xmltree::Element;

/// The part a process plays: a process outside a distributed run is standalone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunRole {
    /// A run of its own (no `--network-role`).
    Standalone,
    /// The distributed run's primary: orders the steps, keeps every performer, no physics.
    Primary,
    /// A distributed run's secondary: simulates the performers it is given.
    Secondary,
}

impl RunRole {
    /// Every role, in the order they are listed in messages.
    pub const ALL: [RunRole; 3] = [RunRole::Primary, RunRole::Secondary, RunRole::Standalone];

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunRole::Standalone => "standalone",
            RunRole::Primary => "primary",
            RunRole::Secondary => "secondary",
        }
    }

    /// The role of a process with these distributed settings (`None`: standalone).
    pub fn of_network(role: Option<crate::distributed::settings::Role>) -> RunRole {
        match role {
            None => RunRole::Standalone,
            Some(crate::distributed::settings::Role::Primary) => RunRole::Primary,
            Some(crate::distributed::settings::Role::Secondary) => RunRole::Secondary,
        }
    }

    /// The role a runner tells its systems (an unknown value counts as standalone).
    pub fn of_network_role(role: NetworkRole) -> RunRole {
        match role {
            NetworkRole::PRIMARY => RunRole::Primary,
            NetworkRole::SECONDARY => RunRole::Secondary,
            _ => RunRole::Standalone,
        }
    }

    fn bit(self) -> u8 {
        match self {
            RunRole::Primary => 1,
            RunRole::Secondary => 2,
            RunRole::Standalone => 4,
        }
    }
}

impl fmt::Display for RunRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of roles.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RoleSet(u8);

impl RoleSet {
    /// No role.
    pub const NONE: RoleSet = RoleSet(0);
    /// Every role.
    pub const ALL: RoleSet = RoleSet(7);
    /// Secondaries and standalone runs: where performers are simulated.
    pub const SIMULATING: RoleSet = RoleSet(2 | 4);
    /// The primary and standalone runs: where users talk to the world.
    pub const FACING_USERS: RoleSet = RoleSet(1 | 4);

    /// The set of these roles.
    pub fn of(roles: &[RunRole]) -> RoleSet {
        RoleSet(roles.iter().fold(0, |acc, r| acc | r.bit()))
    }

    /// Whether `role` is in the set.
    pub fn contains(self, role: RunRole) -> bool {
        self.0 & role.bit() != 0
    }

    /// The roles in the set, in [`RunRole::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = RunRole> {
        RunRole::ALL.into_iter().filter(move |r| self.contains(*r))
    }

    /// Parses the text of a `<troupe:roles>` element: role names separated by spaces or
    /// commas, in any case; `all` is every role. An unknown name, a repeated one or an empty
    /// list is an error naming the value and the allowed names.
    pub fn parse(text: &str) -> Result<RoleSet, String> {
        let mut set = RoleSet::NONE;
        let words: Vec<&str> = text.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()).collect();
        if words.is_empty() {
            return Err(format!("<troupe:roles> is empty; list the roles the system runs in ({ALLOWED})"));
        }
        for word in words {
            let add = match word.to_ascii_lowercase().as_str() {
                "primary" => RoleSet::of(&[RunRole::Primary]),
                "secondary" => RoleSet::of(&[RunRole::Secondary]),
                "standalone" => RoleSet::of(&[RunRole::Standalone]),
                "all" => RoleSet::ALL,
                _ => return Err(format!("<troupe:roles> names \"{word}\", which is not a role; expected {ALLOWED}")),
            };
            if set.0 & add.0 != 0 {
                return Err(format!("<troupe:roles> names \"{word}\" twice (\"{}\")", text.trim()));
            }
            set.0 |= add.0;
        }
        Ok(set)
    }
}

/// The names `<troupe:roles>` accepts, for messages.
const ALLOWED: &str = "primary, secondary, standalone or all, separated by spaces";

impl fmt::Display for RoleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("no role");
        }
        let names: Vec<&str> = self.iter().map(RunRole::as_str).collect();
        f.write_str(&names.join(" "))
    }
}

impl fmt::Debug for RoleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RoleSet({self})")
    }
}

/// What a system is, as far as the default roles go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemKind {
    /// A physics backend: secondaries and standalone (seed 001: the primary keeps every
    /// performer loaded but performs no physics simulation).
    Physics,
    /// The sensors system: secondaries and standalone (sensors run where their performer
    /// is simulated).
    Sensors,
    /// The scene broadcaster: primary and standalone (the user's view of the whole world).
    SceneBroadcaster,
    /// User commands: primary and standalone (all interaction goes through the primary).
    UserCommands,
    /// The level manager: every role (it decides on the primary, follows on secondaries).
    LevelManager,
    /// A system attached to a model or sensor: secondaries and standalone (it runs where its
    /// model is simulated).
    Attached,
    /// Any other world system: every role (gz-sim's behaviour).
    Other,
}

impl SystemKind {
    /// The kind of a world system loading `library` (a Troupe library name; `extra_physics`
    /// is `--physics-engine`'s library, a physics backend whatever its name).
    pub fn of_world_system(library: &str, extra_physics: Option<&str>) -> SystemKind {
        match library {
            "troupe_physics_rapier" | "troupe_physics_kinematic" => SystemKind::Physics,
            _ if extra_physics == Some(library) => SystemKind::Physics,
            "troupe_sensors" => SystemKind::Sensors,
            "troupe_scene_broadcaster" => SystemKind::SceneBroadcaster,
            "troupe_user_commands" => SystemKind::UserCommands,
            "troupe_level_manager" => SystemKind::LevelManager,
            _ => SystemKind::Other,
        }
    }

    /// The roles a system of this kind runs in when its `<plugin>` does not say.
    pub fn default_roles(self) -> RoleSet {
        match self {
            SystemKind::Physics | SystemKind::Sensors | SystemKind::Attached => RoleSet::SIMULATING,
            SystemKind::SceneBroadcaster | SystemKind::UserCommands => RoleSet::FACING_USERS,
            SystemKind::LevelManager | SystemKind::Other => RoleSet::ALL,
        }
    }

    /// Why the default is what it is, for the log.
    pub fn reason(self) -> &'static str {
        match self {
            SystemKind::Physics => {
                "physics runs where performers are simulated (secondaries and standalone), not on the primary"
            }
            SystemKind::Sensors => "sensors run where their performers are simulated (secondaries and standalone)",
            SystemKind::SceneBroadcaster => {
                "the scene is broadcast by the primary (and standalone), which holds the whole world"
            }
            SystemKind::UserCommands => "user commands go to the primary (and standalone), which forwards them",
            SystemKind::LevelManager => "the level manager runs in every role",
            SystemKind::Attached => {
                "a system attached to a model or sensor runs where its model is simulated (secondaries and standalone)"
            }
            SystemKind::Other => "a world system runs in every role unless its <troupe:roles> says otherwise",
        }
    }
}

/// Whether a system runs in `role`, and why not when it does not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// It runs.
    Runs,
    /// It is skipped in this role; the text says why (for the log).
    Skipped(String),
}

/// Decides whether a system of `kind` whose `<plugin>` says `explicit` (from
/// `<troupe:roles>`) runs in `role`.
pub fn place(kind: SystemKind, explicit: Option<RoleSet>, role: RunRole) -> Placement {
    match explicit {
        Some(set) if set.contains(role) => Placement::Runs,
        Some(set) => Placement::Skipped(format!("its <troupe:roles> says {set}")),
        None if kind.default_roles().contains(role) => Placement::Runs,
        None => Placement::Skipped(format!("by default: {}", kind.reason())),
    }
}

/// Reads the `<troupe:roles>` child of a `<plugin>` element. `Ok(None)` without one; an
/// error (with the offending child element, for its line) for a bad value, a second
/// `<troupe:roles>`, or any other `troupe:` child.
pub(crate) fn roles_of_plugin(plugin: &Element) -> Result<Option<RoleSet>, (&Element, String)> {
    let mut found: Option<(&Element, RoleSet)> = None;
    for child in crate::xml::elements(plugin) {
        if child.prefix.as_deref() != Some("troupe") {
            continue;
        }
        if child.name != "roles" {
            return Err((
                child,
                format!("unknown element <troupe:{}> in <plugin> (the host reads only <troupe:roles>)", child.name),
            ));
        }
        if found.is_some() {
            return Err((child, "a second <troupe:roles> in one <plugin>".into()));
        }
        if crate::xml::elements(child).next().is_some() {
            return Err((child, format!("<troupe:roles> holds elements; expected {ALLOWED}")));
        }
        let text = child.get_text().unwrap_or_default();
        let set = RoleSet::parse(&text).map_err(|e| (child, e))?;
        found = Some((child, set));
    }
    Ok(found.map(|(_, set)| set))
}
