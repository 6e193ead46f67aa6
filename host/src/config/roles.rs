//! In which roles of a distributed run a system runs (docs/distributed.md, "Which systems run where").
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
//! `all` stands for the three. Without `<troupe:roles>` a world system runs in the roles its
//! library declares ([`plugin_api::SystemInfo`]), and a system attached to a model or sensor
//! where its model is simulated ([`DefaultRoles`]). Like `<gz:system_priority>`, the element is read by the host and stays in
//! the XML the system receives (systems ignore it). Any other `troupe:`-prefixed child of a
//! `<plugin>` is an error: the prefix is the host's.

pub use plugin_api::RoleSet;
use plugin_api::{NetworkRole, SystemInfo, SystemKind};
use xmltree::Element;

/// Parses the text of a `<troupe:roles>` element: role names separated by spaces or commas,
/// in any case; `all` is every role. An unknown name, a repeated one or an empty list is an
/// error naming the value and the allowed names.
pub fn parse_roles(text: &str) -> Result<RoleSet, String> {
    let mut set = RoleSet::NONE;
    let words: Vec<&str> = text.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()).collect();
    if words.is_empty() {
        return Err(format!("<troupe:roles> is empty; list the roles the system runs in ({ALLOWED})"));
    }
    for word in words {
        let add = match word.to_ascii_lowercase().as_str() {
            "primary" => RoleSet::PRIMARY,
            "secondary" => RoleSet::SECONDARY,
            "standalone" => RoleSet::STANDALONE,
            "all" => RoleSet::ALL,
            _ => return Err(format!("<troupe:roles> names \"{word}\", which is not a role; expected {ALLOWED}")),
        };
        if set.intersects(add) {
            return Err(format!("<troupe:roles> names \"{word}\" twice (\"{}\")", text.trim()));
        }
        set = set.union(add);
    }
    Ok(set)
}

/// The names `<troupe:roles>` accepts, for messages.
const ALLOWED: &str = "primary, secondary, standalone or all, separated by spaces";

/// The roles a system runs in when its `<plugin>` has no `<troupe:roles>`: those its
/// library declares ([`SystemInfo`]), or, for a system attached to a model or sensor, where
/// its model is simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultRoles {
    /// A world system: what it declared.
    Declared(SystemInfo),
    /// A system attached to a model or sensor.
    Attached,
}

impl DefaultRoles {
    /// The roles.
    pub fn roles(self) -> RoleSet {
        match self {
            DefaultRoles::Declared(info) => info.default_roles,
            DefaultRoles::Attached => RoleSet::SIMULATING,
        }
    }

    /// Why the default is what it is, for the log.
    pub fn reason(self) -> String {
        let info = match self {
            DefaultRoles::Attached => {
                return "a system attached to a model or sensor runs where its model is simulated (secondaries and standalone)"
                    .into()
            }
            DefaultRoles::Declared(info) => info,
        };
        // The usual roles of each kind say why in words; any other choice is the library's.
        let usual = match info.kind {
            SystemKind::PHYSICS => SystemInfo::PHYSICS,
            SystemKind::SENSORS => SystemInfo::SENSORS,
            SystemKind::SCENE_BROADCASTER => SystemInfo::SCENE_BROADCASTER,
            SystemKind::USER_COMMANDS => SystemInfo::USER_COMMANDS,
            SystemKind::LEVEL_MANAGER => SystemInfo::LEVEL_MANAGER,
            _ => SystemInfo::OTHER,
        };
        if info.default_roles != usual.default_roles {
            return format!(
                "its library declares it a {} system running in: {}",
                info.kind.as_str(),
                info.default_roles
            );
        }
        match info.kind {
            SystemKind::PHYSICS => {
                "physics runs where performers are simulated (secondaries and standalone), not on the primary"
            }
            SystemKind::SENSORS => "sensors run where their performers are simulated (secondaries and standalone)",
            SystemKind::SCENE_BROADCASTER => {
                "the scene is broadcast by the primary (and standalone), which holds the whole world"
            }
            SystemKind::USER_COMMANDS => "user commands go to the primary (and standalone), which forwards them",
            SystemKind::LEVEL_MANAGER => "the level manager runs in every role",
            _ => "a world system runs in every role unless its <troupe:roles> says otherwise",
        }
        .into()
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

/// Decides whether a system whose `<plugin>` says `explicit` (from `<troupe:roles>`) runs in
/// `role`; without `explicit`, its `default` decides.
pub fn place(default: DefaultRoles, explicit: Option<RoleSet>, role: NetworkRole) -> Placement {
    match explicit {
        Some(set) if set.contains(role) => Placement::Runs,
        Some(set) => Placement::Skipped(format!("its <troupe:roles> says {set}")),
        None if default.roles().contains(role) => Placement::Runs,
        None => Placement::Skipped(format!("by default: {}", default.reason())),
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
        let set = parse_roles(&text).map_err(|e| (child, e))?;
        found = Some((child, set));
    }
    Ok(found.map(|(_, set)| set))
}
