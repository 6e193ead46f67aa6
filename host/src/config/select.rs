//! Which systems load: the world file's plugins plus the server-config set (gz-sim Ionic
//! rules with Troupe's name mapping), and system priorities.

use super::names::{canonical_library, map_system, normalise_class, normalise_library, SystemName};
use super::parse::{EntityType, PluginSpec};
use super::roles::RoleSet;
use crate::xml::parse_element_lenient;
use std::collections::HashSet;
use xmltree::XMLNode;

/// The entity a system attaches to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// The world.
    World,
    /// The model with this name.
    Model(String),
    /// The sensor with this scoped name (`world::model::link::sensor`).
    Sensor(String),
}

/// A plugin named by the world file (SDF).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestedPlugin {
    /// The `filename` attribute.
    pub filename: String,
    /// The `name` attribute.
    pub name: String,
    /// The whole `<plugin>` element as XML text.
    pub xml: String,
    /// Where it was written (`file:line`).
    pub origin: String,
    /// What it attaches to.
    pub target: Target,
    /// Its `<troupe:roles>`, when it has one (see [`super::roles`]).
    pub roles: Option<RoleSet>,
}

/// A system chosen to load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selected {
    /// The library to search on the plugin path: the Troupe library for gz-sim names,
    /// else the filename without `lib` prefix and `.so` suffix.
    pub library: String,
    /// The class name: `gz::sim::systems::X` for gz-sim names (old spellings
    /// normalised), else as written.
    pub name: String,
    /// The whole `<plugin>` element as XML text, for the system's configure call.
    pub xml: String,
    /// Where it was written (`file:line`).
    pub origin: String,
    /// What it attaches to.
    pub target: Target,
    /// Whether it comes from the server config (rather than the world file).
    pub from_config: bool,
    /// For config plugins of type `world` whose `entity_name` is not `*`: the world they
    /// are for. The caller attaches them only to a world of that name (gz-sim skips
    /// unmatched names silently). `None` = any world.
    pub world_name: Option<String>,
    /// Its `<troupe:roles>`, when it has one: the roles it runs in instead of the default
    /// of its kind (see [`super::roles`]).
    pub roles: Option<RoleSet>,
}

/// The result of [`select_systems`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Systems to load, world-file plugins in document order first, then config plugins
    /// in file order.
    pub load: Vec<Selected>,
    /// Known gz-sim systems Troupe does not implement: (gz library name, origin of its
    /// first mention). One entry per name; the caller warns once for each.
    pub skipped_unimplemented: Vec<(String, String)>,
    /// Explanations of the decisions taken (config set skipped, duplicates dropped …),
    /// for the log.
    pub notes: Vec<String>,
}

/// Chooses the systems to load.
///
/// The world file's plugins all load. The config set is added unless
/// `include_server_config_plugins` is false and the world file has at least one world
/// plugin (`<world><gz:policies><include_server_config_plugins>`, default true since
/// Ionic); if the world file has no world plugins the config set always applies. Config
/// plugins whose [`canonical_library`] equals that of a world-level plugin of the world
/// file are dropped (gz-sim compares exact filenames; Troupe compares mapped names).
/// Known-but-unimplemented gz-sim systems are listed in
/// [`Selection::skipped_unimplemented`] instead of loading.
pub fn select_systems(
    world_plugins: &[RequestedPlugin],
    config: &[PluginSpec],
    include_server_config_plugins: bool,
) -> Selection {
    let mut out = Selection::default();
    let mut unimplemented_seen = HashSet::new();
    let mut world_level: Vec<(String, &str)> = Vec::new();
    for p in world_plugins {
        if p.target == Target::World {
            world_level.push((canonical_library(&p.filename, &p.name), p.origin.as_str()));
        }
        let candidate = Candidate {
            filename: &p.filename,
            name: &p.name,
            xml: &p.xml,
            origin: &p.origin,
            target: p.target.clone(),
            from_config: false,
            world_name: None,
            roles: p.roles,
        };
        candidate.select(&mut out, &mut unimplemented_seen);
    }

    if world_level.is_empty() {
        if !config.is_empty() {
            out.notes.push("no systems loaded from the world file; loading the server config plugins".into());
        }
    } else if !include_server_config_plugins {
        if !config.is_empty() {
            out.notes.push(format!(
                "include_server_config_plugins is false and the world file names {} world \
                 plugin(s): the {} server config plugin(s) are not loaded",
                world_level.len(),
                config.len()
            ));
        }
        note_shared_libraries(&mut out);
        return out;
    }

    for c in config {
        let key = canonical_library(&c.filename, &c.name);
        if let Some((_, sdf_origin)) = world_level.iter().find(|(k, _)| *k == key) {
            out.notes.push(format!(
                "server config plugin {} ({}) not loaded: the world file already loads {key} at {sdf_origin}",
                c.filename, c.origin
            ));
            continue;
        }
        let target = match c.entity_type {
            EntityType::World => Target::World,
            EntityType::Model => Target::Model(c.entity_name.clone()),
            EntityType::Sensor => Target::Sensor(c.entity_name.clone()),
        };
        let world_name = (c.entity_type == EntityType::World && c.entity_name != "*").then(|| c.entity_name.clone());
        let candidate = Candidate {
            filename: &c.filename,
            name: &c.name,
            xml: &c.xml,
            origin: &c.origin,
            target,
            from_config: true,
            world_name,
            roles: c.roles,
        };
        candidate.select(&mut out, &mut unimplemented_seen);
    }
    note_shared_libraries(&mut out);
    out
}

/// A plugin reference from either source, before mapping.
struct Candidate<'a> {
    filename: &'a str,
    name: &'a str,
    xml: &'a str,
    origin: &'a str,
    target: Target,
    from_config: bool,
    world_name: Option<String>,
    roles: Option<RoleSet>,
}

impl Candidate<'_> {
    fn select(self, out: &mut Selection, unimplemented_seen: &mut HashSet<&'static str>) {
        let (library, name) = match map_system(self.filename, self.name) {
            SystemName::Troupe { library } => (library.to_string(), normalise_class(self.name)),
            SystemName::KnownUnimplemented { gz } => {
                if unimplemented_seen.insert(gz) {
                    out.skipped_unimplemented.push((gz.to_string(), self.origin.to_string()));
                }
                return;
            }
            SystemName::NotGz => (normalise_library(self.filename), self.name.trim().to_string()),
        };
        out.load.push(Selected {
            library,
            name,
            xml: self.xml.to_string(),
            origin: self.origin.to_string(),
            target: self.target,
            from_config: self.from_config,
            world_name: self.world_name,
            roles: self.roles,
        });
    }
}

/// Notes world-level selections that load the same Troupe library more than once (e.g.
/// `gz-sim-imu-system` and `gz-sim-sensors-system`, both `troupe_sensors`).
fn note_shared_libraries(out: &mut Selection) {
    let world: Vec<&Selected> = out.load.iter().filter(|s| s.target == Target::World).collect();
    let mut reported = HashSet::new();
    for (i, a) in world.iter().enumerate() {
        if !a.library.starts_with("troupe_") || reported.contains(&a.library) {
            continue;
        }
        let origins: Vec<&str> =
            world[i..].iter().filter(|b| b.library == a.library).map(|b| b.origin.as_str()).collect();
        if origins.len() > 1 {
            reported.insert(a.library.clone());
            out.notes.push(format!(
                "{} is selected {} times for the world (at {}); each instance gets its own XML",
                a.library,
                origins.len(),
                origins.join(", ")
            ));
        }
    }
}

/// Reads the `<gz:system_priority>` child of a `<plugin>` element given as XML text.
///
/// `Ok(None)` when there is none (or the text is empty); `Err` naming the offending text
/// when the value is not a signed 32-bit integer or the XML is malformed. The `gz`
/// prefix need not be declared.
pub fn priority_from_xml(xml: &str) -> Result<Option<i32>, String> {
    if xml.trim().is_empty() {
        return Ok(None);
    }
    let root = parse_element_lenient(xml)
        .map_err(|e| format!("cannot read plugin XML (line {}, column {}): {}", e.line, e.column, e.message))?;
    let element = root.children.iter().find_map(|n| match n {
        XMLNode::Element(e) if e.prefix.as_deref() == Some("gz") && e.name == "system_priority" => Some(e),
        _ => None,
    });
    let Some(element) = element else {
        return Ok(None);
    };
    let text = element.get_text().unwrap_or_default();
    let value = text.trim();
    value
        .parse::<i32>()
        .map(Some)
        .map_err(|_| format!("<gz:system_priority> must be a signed 32-bit integer, found \"{value}\""))
}
