//! Which systems a world gets: the gz-sim choices made on the selection (one physics
//! backend, its engine, the sensors and level manager when needed), the role filter of a
//! distributed run, and turning what is left into [`SystemRequest`]s for the runner.
//!
//! Systems are told apart by what their library says they are ([`SystemInfo`], read once
//! when the library is loaded), never by the library's name; only the gz name table
//! ([`config::map_system`]) and the systems the host adds on its own (sensors, the level
//! manager) name libraries.

use super::*;

/// A selected system and what its library says it is.
#[derive(Clone, Debug)]
pub(super) struct Chosen {
    pub selected: Selected,
    pub info: SystemInfo,
}

impl Chosen {
    fn is(&self, kind: SystemKind) -> bool {
        self.info.kind == kind && self.selected.target == Target::World
    }
}

/// Loads the library of `selected` to read what the system is. A library that cannot be
/// loaded is kept as [`SystemInfo::OTHER`]: loading it for real reports it with the others
/// ([`add_systems`]).
pub(super) fn describe(loader: &mut PluginLoader, selected: Selected) -> Chosen {
    let info = loader
        .load(&selected.library)
        .ok()
        .and_then(|lib| lib.system_info(&selected.name))
        .unwrap_or(SystemInfo::OTHER);
    Chosen { selected, info }
}

/// Keeps the systems that run in `role` (`<troupe:roles>`, else what the library declares;
/// see [`config::roles`]); the third list says, for the log, each one skipped and why.
pub(super) fn keep_for_role(
    role: NetworkRole,
    chosen: Vec<Chosen>,
    attached: Vec<AttachedPlugin>,
) -> (Vec<Selected>, Vec<AttachedPlugin>, Vec<String>) {
    let mut skipped = Vec::new();
    let chosen: Vec<Selected> = chosen
        .into_iter()
        .filter(|c| {
            let s = &c.selected;
            let default = match s.target {
                Target::World => DefaultRoles::Declared(c.info),
                Target::Model(_) | Target::Sensor(_) => DefaultRoles::Attached,
            };
            match config::place(default, s.roles, role) {
                Placement::Runs => true,
                Placement::Skipped(why) => {
                    skipped.push(format!("{} ({}, {}): {why}", s.name, s.library, s.origin));
                    false
                }
            }
        })
        .map(|c| c.selected)
        .collect();
    let attached: Vec<AttachedPlugin> = attached
        .into_iter()
        .filter(|a| match config::place(DefaultRoles::Attached, a.plugin.roles, role) {
            Placement::Runs => true,
            Placement::Skipped(why) => {
                skipped.push(format!("{} ({}, {}): {why}", a.plugin.name, a.plugin.filename, a.plugin.origin));
                false
            }
        })
        .collect();
    (chosen, attached, skipped)
}

/// Adds the systems in order, reporting every library that cannot be found or loaded, not
/// just the first.
pub(super) fn add_systems(
    runner: &mut WorldRunner,
    loader: &mut PluginLoader,
    requests: Vec<SystemRequest>,
) -> Result<(), ServerError> {
    let mut missing = Vec::new();
    for req in requests {
        match runner.add_system(loader, req) {
            Err(e @ RunError::Load { .. }) => missing.push(e),
            other => other?,
        }
    }
    match missing.len() {
        0 => Ok(()),
        1 => Err(ServerError::Run(missing.remove(0))),
        _ => Err(ServerError::Plugins(missing)),
    }
}

/// A world file that loads a physics backend replaces the config set's physics: gz-sim drops
/// a config plugin the world file loads too, but backends have different library names for
/// the same role.
pub(super) fn one_physics(chosen: &mut Vec<Chosen>) {
    if chosen.iter().any(|c| !c.selected.from_config && c.is(SystemKind::PHYSICS)) {
        chosen.retain(|c| !(c.selected.from_config && c.is(SystemKind::PHYSICS)));
    }
}

/// gz-sim's choice of engine inside its physics plugin: `<engine><filename>` naming TPE
/// (`gz-physics-tpe-plugin`, any spelling) loads Troupe's kinematic backend.
pub(super) fn engine_from_xml(chosen: &mut [Selected]) {
    for s in chosen.iter_mut().filter(|s| s.library == "troupe_physics_rapier") {
        let Ok(el) = crate::xml::parse_element_lenient(&s.xml) else { continue };
        let engine = el.get_child("engine").and_then(|e| e.get_child("filename")).and_then(|f| f.get_text());
        let Some(engine) = engine else { continue };
        let engine = engine.trim();
        let lower = engine.to_ascii_lowercase();
        let file = lower.rsplit('/').next().unwrap_or_default();
        if file.contains("physics") && file.contains("tpe") {
            log::info!("{}: <engine> {engine} (TPE): loading troupe_physics_kinematic", s.origin);
            s.library = "troupe_physics_kinematic".into();
        } else {
            log::info!("{}: <engine> {engine} is not available in Troupe; using {}", s.origin, s.library);
        }
    }
}

/// `--physics-engine ENGINE`: its library replaces the world's physics system (or is added
/// when there is none). It is placed as a physics system even if it does not say it is one
/// (a library built before plugin-api 1.8, or one that forgot): the user named it the physics.
pub(super) fn swap_physics(chosen: &mut Vec<Chosen>, engine: &str, loader: &mut PluginLoader) {
    let replacement = Selected {
        library: engine.to_string(),
        name: String::new(),
        xml: "<plugin filename=\"--physics-engine\" name=\"\"/>".into(),
        origin: "--physics-engine".into(),
        target: Target::World,
        from_config: false,
        world_name: None,
        roles: None,
    };
    let replacement = match chosen.iter().position(|c| c.is(SystemKind::PHYSICS)) {
        Some(i) => {
            let old = &chosen[i].selected;
            log::info!("--physics-engine: {engine} replaces {}", old.library);
            let (xml, roles) = (old.xml.clone(), old.roles);
            chosen.remove(i);
            Selected { xml, roles, ..replacement }
        }
        None => replacement,
    };
    let mut engine_system = describe(loader, replacement);
    if engine_system.info.kind != SystemKind::PHYSICS {
        log::warn!(
            "--physics-engine: {engine} does not declare itself a physics system (plugin-api 1.8, System::info); \
             placed as one"
        );
        engine_system.info = SystemInfo::PHYSICS;
    }
    chosen.push(engine_system);
}

/// A world with sensors and no sensors system gets Troupe's (gz-sim's server adds its sensors
/// system likewise).
pub(super) fn add_sensors_if_needed(runner: &WorldRunner, chosen: &mut Vec<Chosen>, loader: &mut PluginLoader) {
    let has_sensors = !runner.ecm.query(Which::ALL, &[Sensor::ID]).is_empty();
    if has_sensors && !chosen.iter().any(|c| c.is(SystemKind::SENSORS)) {
        log::info!("world {:?} has sensors and no sensors system: adding troupe_sensors", runner.name());
        let added = Selected {
            library: "troupe_sensors".into(),
            name: "troupe::sensors::All".into(),
            xml: "<plugin filename=\"troupe_sensors\" name=\"troupe::sensors::All\"/>".into(),
            origin: "added by the host".into(),
            target: Target::World,
            from_config: false,
            world_name: None,
            roles: None,
        };
        chosen.push(describe(loader, added));
    }
}

/// gz-sim has one system per sensor type (`gz-sim-imu-system`, `gz-sim-contact-system`...);
/// Troupe has one `troupe_sensors` instance per world, and each of those names enables its
/// type. The world-level selections of `troupe_sensors` are merged into the first: its XML
/// gets an `<enable>CLASS</enable>` child per selection (its own included) followed by the
/// children of every merged `<plugin>`.
pub(super) fn one_sensors(chosen: &mut Vec<Chosen>) {
    let is_sensors = |c: &Chosen| c.selected.library == "troupe_sensors" && c.selected.target == Target::World;
    let Some(first) = chosen.iter().position(is_sensors) else { return };
    let info = chosen[first].info;
    let merged: Vec<Selected> = chosen.iter().filter(|c| is_sensors(c)).map(|c| c.selected.clone()).collect();
    let mut root = match crate::xml::parse_element_lenient(&merged[0].xml) {
        Ok(el) => el,
        Err(_) => xmltree::Element::new("plugin"),
    };
    root.children.clear();
    for s in &merged {
        let mut enable = xmltree::Element::new("enable");
        enable.children.push(xmltree::XMLNode::Text(s.name.clone()));
        root.children.push(xmltree::XMLNode::Element(enable));
    }
    for s in &merged {
        if let Ok(el) = crate::xml::parse_element_lenient(&s.xml) {
            root.children.extend(el.children.into_iter().filter(|n| matches!(n, xmltree::XMLNode::Element(_))));
        }
    }
    if merged.len() > 1 {
        let origins: Vec<&str> = merged.iter().map(|s| s.origin.as_str()).collect();
        log::info!("one troupe_sensors instance serves {} sensor systems ({})", merged.len(), origins.join(", "));
    }
    let mut keep = merged[0].clone();
    keep.xml = crate::xml::to_string(&root);
    // The one instance runs where the first selection with a <troupe:roles> says.
    let with_roles: Vec<&Selected> = merged.iter().filter(|s| s.roles.is_some()).collect();
    if let Some(first_roles) = with_roles.first() {
        keep.roles = first_roles.roles;
        for other in with_roles.iter().skip(1).filter(|s| s.roles != first_roles.roles) {
            log::warn!(
                "{}: <troupe:roles> {} differs from {} at {}; the one troupe_sensors instance runs in: {}",
                other.origin,
                other.roles.unwrap_or_default(),
                first_roles.roles.unwrap_or_default(),
                first_roles.origin,
                first_roles.roles.unwrap_or_default()
            );
        }
    }
    let mut i = 0;
    chosen.retain(|s| {
        let drop = is_sensors(s) && i != first;
        i += 1;
        !drop
    });
    chosen[first] = Chosen { selected: keep, info };
}

/// The level manager runs when levels are on (it loads and unloads them) and, with levels
/// off, when the world has levels or performers (it keeps their bookkeeping). It is built
/// into gz-sim's runner, so no world file names it.
pub(super) fn add_level_manager_if_needed(
    world: &WorldSdf,
    levels_on: bool,
    chosen: &mut Vec<Chosen>,
    loader: &mut PluginLoader,
) {
    if !levels_on && world.levels_plugin.is_none() || chosen.iter().any(|c| c.is(SystemKind::LEVEL_MANAGER)) {
        return;
    }
    let added = Selected {
        library: "troupe_level_manager".into(),
        name: "troupe::LevelManager".into(),
        xml: format!("<plugin filename=\"troupe_level_manager\" name=\"troupe::LevelManager\"><levels>{levels_on}</levels></plugin>"),
        origin: "added by the host (levels)".into(),
        target: Target::World,
        from_config: false,
        world_name: None,
        roles: None,
    };
    chosen.push(describe(loader, added));
}

pub(super) fn resolve_selected(runner: &WorldRunner, world: &str, s: Selected) -> Option<SystemRequest> {
    if s.world_name.as_ref().is_some_and(|n| n != world) {
        return None;
    }
    let entity = match &s.target {
        Target::World => Some(runner.world_entity()),
        Target::Model(name) => runner
            .ecm
            .children(runner.world_entity())
            .find(|e| runner.ecm.get::<plugin_api::components::Name>(*e).is_some_and(|n| &n.0 == name)),
        Target::Sensor(scoped) => find_scoped(runner, scoped),
    };
    let Some(entity) = entity else {
        log::warn!(
            "{}: system {} targets {:?}, which world {:?} does not have; skipped",
            s.origin,
            s.name,
            s.target,
            world
        );
        return None;
    };
    Some(SystemRequest { library: s.library, class: s.name, xml: s.xml, origin: s.origin, entity })
}

/// The entity named by a scoped name `world::model::link::sensor`.
pub(super) fn find_scoped(runner: &WorldRunner, scoped: &str) -> Option<EntityId> {
    let mut parts = scoped.split("::");
    let first = parts.next()?;
    let name_of = |e: EntityId| runner.ecm.get::<plugin_api::components::Name>(e).map(|n| n.0);
    let mut current = runner.world_entity();
    if name_of(current).as_deref() != Some(first) {
        return None;
    }
    for part in parts {
        current = runner.ecm.children(current).find(|c| name_of(*c).as_deref() == Some(part))?;
    }
    Some(current)
}

pub(super) fn request_for_attached(a: AttachedPlugin) -> Option<SystemRequest> {
    let p = a.plugin;
    request_for(&p.filename, &p.name, p.xml, p.origin.to_string(), a.entity)
}

/// The request for a `<plugin>` of a model or sensor: gz-sim names mapped, unimplemented
/// gz-sim systems skipped with one warning each ([`config::library_of_plugin`]).
pub fn request_for(filename: &str, name: &str, xml: String, origin: String, entity: EntityId) -> Option<SystemRequest> {
    let library = config::library_of_plugin(filename, name, &origin)?;
    Some(SystemRequest { library, class: name.to_string(), xml, origin, entity })
}

#[cfg(test)]
mod role_tests {
    use super::*;
    use crate::config::RoleSet;

    /// The default config's systems, with what their libraries declare (these tests load no
    /// library; tests/roles loads the real ones).
    fn default_set() -> Vec<Chosen> {
        let config = config::parse_server_config_str(config::DEFAULT_SERVER_CONFIG, "server.config").unwrap();
        let declared = |library: &str| match library {
            "troupe_physics_rapier" => SystemInfo::PHYSICS,
            "troupe_user_commands" => SystemInfo::USER_COMMANDS,
            "troupe_scene_broadcaster" => SystemInfo::SCENE_BROADCASTER,
            other => panic!("the default config names {other}: say here what it declares"),
        };
        let selected = config::select_systems(&[], &config.plugins, true).load;
        selected.into_iter().map(|s| Chosen { info: declared(&s.library), selected: s }).collect()
    }

    fn libraries(chosen: &[Selected]) -> Vec<&str> {
        chosen.iter().map(|s| s.library.as_str()).collect()
    }

    fn selected(chosen: &[Chosen]) -> Vec<Selected> {
        chosen.iter().map(|c| c.selected.clone()).collect()
    }

    #[test]
    fn the_default_set_splits_between_primary_and_secondaries() {
        let (primary, _, skipped) = keep_for_role(NetworkRole::PRIMARY, default_set(), Vec::new());
        assert_eq!(libraries(&primary), ["troupe_user_commands", "troupe_scene_broadcaster"]);
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        // The log line names the system, its library, where it was written, and why.
        assert!(
            skipped[0].starts_with("gz::sim::systems::Physics (troupe_physics_rapier, server.config:"),
            "{skipped:?}"
        );
        assert!(skipped[0].contains("by default: physics runs where performers are simulated"), "{skipped:?}");

        let (secondary, _, skipped) = keep_for_role(NetworkRole::SECONDARY, default_set(), Vec::new());
        assert_eq!(libraries(&secondary), ["troupe_physics_rapier"]);
        assert_eq!(skipped.len(), 2, "{skipped:?}");

        let (standalone, _, skipped) = keep_for_role(NetworkRole::STANDALONE, default_set(), Vec::new());
        assert_eq!(libraries(&standalone), libraries(&selected(&default_set())));
        assert!(skipped.is_empty(), "{skipped:?}");
    }

    #[test]
    fn a_system_declaring_other_roles_is_placed_by_them_and_says_so() {
        let mut chosen = default_set();
        // A scene broadcaster of someone's that runs everywhere but standalone.
        chosen[2].info.default_roles = RoleSet::PRIMARY.union(RoleSet::SECONDARY);
        let (standalone, _, skipped) = keep_for_role(NetworkRole::STANDALONE, chosen, Vec::new());
        assert_eq!(libraries(&standalone), ["troupe_physics_rapier", "troupe_user_commands"]);
        assert!(
            skipped[0].ends_with(
                "by default: its library declares it a scene broadcaster system running in: primary secondary"
            ),
            "{skipped:?}"
        );
    }

    #[test]
    fn attached_systems_run_where_their_model_is_simulated_unless_told() {
        let plugin = |roles| AttachedPlugin {
            entity: EntityId(7),
            plugin: crate::sdf::PluginSdf {
                name: "gz::sim::systems::DiffDrive".into(),
                filename: "gz-sim-diff-drive-system".into(),
                xml: String::new(),
                origin: crate::sdf::Origin { file: Arc::new("w.sdf".into()), line: 12 },
                roles,
            },
        };
        let attached = vec![plugin(None), plugin(Some(RoleSet::ALL))];
        let (_, kept, skipped) = keep_for_role(NetworkRole::PRIMARY, Vec::new(), attached.clone());
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].plugin.roles, Some(RoleSet::ALL));
        assert!(
            skipped[0].starts_with("gz::sim::systems::DiffDrive (gz-sim-diff-drive-system, w.sdf:12): by default"),
            "{skipped:?}"
        );
        let (_, kept, _) = keep_for_role(NetworkRole::SECONDARY, Vec::new(), attached);
        assert_eq!(kept.len(), 2);

        // A server-config plugin for a model (entity_type="model") is attached too.
        let config = config::parse_server_config_str(
            r#"<server_config><plugins><plugin entity_name="robot" entity_type="model" filename="gz-sim-pose-publisher-system" name="gz::sim::systems::PosePublisher"/></plugins></server_config>"#,
            "model.config",
        )
        .unwrap();
        // Whatever the library declares: what counts is that it is attached to a model.
        let chosen: Vec<Chosen> = config::select_systems(&[], &config.plugins, true)
            .load
            .into_iter()
            .map(|selected| Chosen { selected, info: SystemInfo::OTHER })
            .collect();
        assert_eq!(chosen[0].selected.target, Target::Model("robot".into()));
        let (primary, _, skipped) = keep_for_role(NetworkRole::PRIMARY, chosen.clone(), Vec::new());
        assert!(primary.is_empty() && skipped[0].contains("attached to a model"), "{skipped:?}");
        let (secondary, _, _) = keep_for_role(NetworkRole::SECONDARY, chosen, Vec::new());
        assert_eq!(secondary.len(), 1);
    }
}
