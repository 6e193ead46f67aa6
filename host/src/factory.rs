//! The entity factory: turns parsed SDF into entities and components.
//!
//! Ids are `base + ordinal`: base 0 for the world file (so its ids are a pure function of
//! the file) and the run-time counter for snippets created while running.

use crate::ecm::{Ecm, Spawner};
use crate::sdf::{self, JointSdf, LightSdf, LinkSdf, ModelSdf, PluginSdf, SensorSdf, ShapeSdf, WorldSdf};
use plugin_api::components::*;
use plugin_api::{Change, Component, EcmError, EntityId};
use std::collections::HashSet;

/// A `<plugin>` of a model or sensor, with the entity it attaches to.
#[derive(Clone, Debug)]
pub struct AttachedPlugin {
    /// The model or sensor entity.
    pub entity: EntityId,
    /// The element.
    pub plugin: PluginSdf,
}

struct Factory<'a> {
    ecm: &'a mut Ecm,
    base: u64,
    plugins: Vec<AttachedPlugin>,
}

impl Factory<'_> {
    fn id(&self, ordinal: u64) -> EntityId {
        EntityId(self.base + ordinal)
    }

    fn entity(&mut self, ordinal: u64, parent: EntityId, name: &str) -> Result<EntityId, EcmError> {
        let id = self.id(ordinal);
        self.ecm.create_with_id(id)?;
        self.put(id, &Name(name.to_string()))?;
        if !parent.is_null() {
            self.put(id, &ParentEntity(parent))?;
        }
        Ok(id)
    }

    fn put<C: Component>(&mut self, id: EntityId, value: &C) -> Result<(), EcmError> {
        self.ecm.set(id, value, Change::OneTime).map(|_| ())
    }

    fn model(&mut self, m: &ModelSdf, parent: EntityId) -> Result<EntityId, EcmError> {
        let id = self.entity(m.ordinal, parent, &m.name)?;
        self.put(id, &Model)?;
        self.put(id, &m.pose)?;
        self.put(id, &Static(m.is_static))?;
        self.put(id, &SelfCollide(m.self_collide))?;
        self.put(id, &WindMode(m.enable_wind))?;
        for (i, link) in m.links.iter().enumerate() {
            let l = self.link(link, id, m)?;
            if i == 0 {
                self.put(l, &CanonicalLink)?;
            }
        }
        for joint in &m.joints {
            self.joint(joint, id)?;
        }
        for nested in &m.models {
            self.model(nested, id)?;
        }
        self.plugins.extend(m.plugins.iter().map(|p| AttachedPlugin { entity: id, plugin: p.clone() }));
        Ok(id)
    }

    /// A link; `<self_collide>` and `<enable_wind>` it does not write come from its model.
    fn link(&mut self, l: &LinkSdf, model: EntityId, m: &ModelSdf) -> Result<EntityId, EcmError> {
        let id = self.entity(l.ordinal, model, &l.name)?;
        self.put(id, &Link)?;
        self.put(id, &l.pose)?;
        self.put(id, &l.inertial)?;
        self.put(id, &GravityEnabled(l.gravity))?;
        self.put(id, &Kinematic(l.kinematic))?;
        self.put(id, &SelfCollide(l.self_collide.unwrap_or(m.self_collide)))?;
        self.put(id, &WindMode(l.enable_wind.unwrap_or(m.enable_wind)))?;
        for c in &l.collisions {
            let s = self.shape(c, id)?;
            self.put(s, &Collision)?;
        }
        for v in &l.visuals {
            let s = self.shape(v, id)?;
            self.put(s, &Visual)?;
        }
        for light in &l.lights {
            self.light(light, id)?;
        }
        for s in &l.sensors {
            self.sensor(s, id)?;
        }
        Ok(id)
    }

    fn shape(&mut self, s: &ShapeSdf, link: EntityId) -> Result<EntityId, EcmError> {
        let id = self.entity(s.ordinal, link, &s.name)?;
        self.put(id, &s.pose)?;
        self.put(id, &s.geometry)?;
        if let Some(surface) = &s.surface {
            self.put(id, surface)?;
        }
        if let Some(material) = &s.material {
            self.put(id, material)?;
        }
        Ok(id)
    }

    fn joint(&mut self, j: &JointSdf, parent: EntityId) -> Result<EntityId, EcmError> {
        let id = self.entity(j.ordinal, parent, &j.name)?;
        self.put(id, &Joint)?;
        self.put(id, &j.pose)?;
        self.put(id, &j.kind)?;
        self.put(id, &ParentLinkName(j.parent.clone()))?;
        self.put(id, &ChildLinkName(j.child.clone()))?;
        if let Some(a) = j.axis {
            self.put(id, &JointAxis(a))?;
        }
        if let Some(a) = j.axis2 {
            self.put(id, &JointAxis2(a))?;
        }
        for s in &j.sensors {
            self.sensor(s, id)?;
        }
        Ok(id)
    }

    fn light(&mut self, l: &LightSdf, parent: EntityId) -> Result<EntityId, EcmError> {
        let id = self.entity(l.ordinal, parent, &l.name)?;
        self.put(id, &l.pose)?;
        self.put(id, &l.light)?;
        Ok(id)
    }

    fn sensor(&mut self, s: &SensorSdf, parent: EntityId) -> Result<EntityId, EcmError> {
        let id = self.entity(s.ordinal, parent, &s.name)?;
        self.put(id, &Sensor)?;
        self.put(id, &s.pose)?;
        self.put(
            id,
            &plugin_api::components::SensorSdf {
                kind: s.kind.clone(),
                update_rate: s.update_rate,
                always_on: s.always_on,
                topic: s.topic.clone(),
                xml: s.xml.clone(),
            },
        )?;
        self.plugins.extend(s.plugins.iter().map(|p| AttachedPlugin { entity: id, plugin: p.clone() }));
        Ok(id)
    }
}

/// Which of a world's top-level entities to create at load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Levels {
    /// Levels off: every entity, with the level bookkeeping entities if the world has a
    /// levels plugin (`<plugin name="gz::sim">`).
    Off,
    /// Levels on: the default level (entities no level refers to) and the performers; the
    /// level manager loads the rest.
    On,
}

/// Creates a world's entities with their file ids; answers the model and sensor plugins to
/// load. With levels on only the default level's entities and the performers' models are
/// created. Levels and performers become entities (file ids) when the world has a levels
/// plugin or levels are on, with the default level after them (the first run-time id).
pub fn create_world(
    ecm: &mut Ecm,
    world: &WorldSdf,
    entity_count: u64,
    levels: Levels,
) -> Result<(EntityId, Vec<AttachedPlugin>), EcmError> {
    ecm.reserve_ids(entity_count);
    let mut f = Factory { ecm, base: 0, plugins: Vec::new() };
    let id = f.entity(world.ordinal, EntityId::NULL, &world.name)?;
    f.put(id, &World)?;
    f.put(id, &Gravity(world.gravity))?;
    f.put(id, &world.physics)?;
    f.put(id, &MagneticField(world.magnetic_field))?;
    f.put(id, &world.atmosphere)?;
    f.put(id, &WindVelocity(world.wind))?;
    f.put(id, &world.spherical_coordinates)?;
    f.put(id, &world.scene)?;
    let in_a_level: HashSet<&str> = match levels {
        Levels::On => world.levels.iter().flat_map(|l| l.refs.iter().map(String::as_str)).collect(),
        Levels::Off => HashSet::new(),
    };
    let load = |name: &str| !in_a_level.contains(name);
    // Children in document order: ids are ordinals, so creating kind by kind is fine.
    for light in world.lights.iter().filter(|l| load(&l.name)) {
        f.light(light, id)?;
    }
    for model in world.models.iter().filter(|m| load(&m.name)) {
        f.model(model, id)?;
    }
    for joint in world.joints.iter().filter(|j| load(&j.name)) {
        f.joint(joint, id)?;
    }
    if world.levels_plugin.is_some() || levels == Levels::On {
        f.levels(world, id, levels)?;
    }
    Ok((id, f.plugins))
}

impl Factory<'_> {
    /// Level, performer and default-level entities (docs/levels.md; gz-sim's components).
    fn levels(&mut self, world: &WorldSdf, world_id: EntityId, levels: Levels) -> Result<(), EcmError> {
        for l in &world.levels {
            let id = self.entity(l.ordinal, world_id, &l.name)?;
            self.put(id, &Level)?;
            self.put(id, &l.pose)?;
            self.put(id, &Geometry::Box { size: l.size })?;
            self.put(id, &LevelBuffer(l.buffer))?;
            let mut names = l.refs.clone();
            names.sort();
            self.put(id, &LevelEntityNames(names))?;
            self.put(id, &LevelLoaded(levels == Levels::Off))?;
        }
        for p in &world.performers {
            let model = world.models.iter().find(|m| m.name == p.model).map(|m| self.id(m.ordinal));
            let id = self.entity(p.ordinal, model.unwrap_or(world_id), &p.name)?;
            self.put(id, &Performer)?;
            self.put(id, &PerformerRef(p.model.clone()))?;
            self.put(id, &PerformerLevels(Vec::new()))?;
            if let Some(size) = p.size {
                self.put(id, &Geometry::Box { size })?;
            }
            // A performer's links carry their velocities, so its state is whole: a distributed
            // hand-over creates it on another secondary from that state alone.
            if let Some(model) = model {
                for e in self.ecm.descendants(model) {
                    if self.ecm.has::<Link>(e) {
                        self.put(e, &WorldLinearVelocity(plugin_api::math::Vec3::ZERO))?;
                        self.put(e, &WorldAngularVelocity(plugin_api::math::Vec3::ZERO))?;
                    }
                }
            }
        }
        let referred: HashSet<&str> = world.levels.iter().flat_map(|l| l.refs.iter().map(String::as_str)).collect();
        let mut default: Vec<String> = world
            .lights
            .iter()
            .map(|l| &l.name)
            .chain(world.models.iter().map(|m| &m.name))
            .chain(world.joints.iter().map(|j| &j.name))
            .filter(|n| !referred.contains(n.as_str()))
            .cloned()
            .collect();
        default.sort();
        default.dedup();
        let id = self.ecm.create_entity();
        self.put(id, &Name("default".into()))?;
        self.put(id, &ParentEntity(world_id))?;
        self.put(id, &Level)?;
        self.put(id, &DefaultLevel)?;
        self.put(id, &LevelEntityNames(default))?;
        self.put(id, &LevelLoaded(true))?;
        Ok(())
    }
}

/// Creates the world file's top-level model, light or joint `name` with its file ids under
/// the world entity (the level manager loading a level); answers its top entity and the
/// systems it names.
pub fn create_world_entity(
    ecm: &mut Ecm,
    world: &WorldSdf,
    name: &str,
) -> Result<(EntityId, Vec<AttachedPlugin>), String> {
    let world_id = EntityId(world.ordinal);
    let ordinal = world
        .models
        .iter()
        .map(|m| (&m.name, m.ordinal))
        .chain(world.lights.iter().map(|l| (&l.name, l.ordinal)))
        .chain(world.joints.iter().map(|j| (&j.name, j.ordinal)))
        .find(|(n, _)| n.as_str() == name)
        .map(|(_, o)| o)
        .ok_or_else(|| {
            format!("world {:?} has no top-level model, light or joint named {name:?} in its file", world.name)
        })?;
    if ecm.has_entity(EntityId(ordinal)) {
        return Err(format!("{name:?} (entity {ordinal}) is loaded already"));
    }
    let mut f = Factory { ecm, base: 0, plugins: Vec::new() };
    let result = if let Some(m) = world.models.iter().find(|m| m.ordinal == ordinal) {
        f.model(m, world_id)
    } else if let Some(l) = world.lights.iter().find(|l| l.ordinal == ordinal) {
        f.light(l, world_id)
    } else {
        let j = world.joints.iter().find(|j| j.ordinal == ordinal).expect("found above");
        f.joint(j, world_id)
    };
    let top = result.map_err(|e| e.to_string())?;
    Ok((top, f.plugins))
}

/// Creates the entities of an SDF snippet (one `<model>` or `<light>`) under `parent` with
/// run-time ids.
pub fn create_snippet(ecm: &mut Ecm, text: &str, parent: EntityId) -> Result<(EntityId, Vec<AttachedPlugin>), String> {
    let doc = sdf::parse_str(text, "<create_from_sdf>").map_err(|e| e.to_string())?;
    for w in &doc.warnings {
        log::warn!("{w}");
    }
    if !doc.worlds.is_empty() {
        return Err("create_from_sdf expects one <model> or <light>, found a <world>".into());
    }
    if doc.models.len() + doc.lights.len() != 1 {
        return Err(format!(
            "create_from_sdf expects exactly one <model> or <light>, found {} models and {} lights",
            doc.models.len(),
            doc.lights.len()
        ));
    }
    if !parent.is_null() && !ecm.has_entity(parent) {
        return Err(format!("no parent entity {parent}"));
    }
    let base = ecm.next_runtime_id() - 1;
    ecm.reserve_ids(base + doc.entity_count);
    let mut f = Factory { ecm, base, plugins: Vec::new() };
    let top = match (doc.models.first(), doc.lights.first()) {
        (Some(m), _) => f.model(m, parent),
        (None, Some(l)) => f.light(l, parent),
        (None, None) => unreachable!("counted above"),
    }
    .map_err(|e| e.to_string())?;
    Ok((top, f.plugins))
}

/// The runner's [`Spawner`]: creates snippets and world-file entities and queues the systems
/// they name.
pub struct QueueingSpawner<'a> {
    /// Systems to load at the start of the next step.
    pub queue: &'a mut Vec<AttachedPlugin>,
    /// The parsed world the runner was loaded from (none in playback).
    pub world: Option<&'a WorldSdf>,
}

impl Spawner for QueueingSpawner<'_> {
    fn create_from_sdf(&mut self, ecm: &mut Ecm, sdf: &str, parent: EntityId) -> Result<EntityId, String> {
        let (top, plugins) = create_snippet(ecm, sdf, parent)?;
        self.queue.extend(plugins);
        Ok(top)
    }
    fn load_world_entity(&mut self, ecm: &mut Ecm, name: &str) -> Result<EntityId, String> {
        let world = self.world.ok_or("this runner has no world file to load entities from (playback)")?;
        let (top, plugins) = create_world_entity(ecm, world, name)?;
        self.queue.extend(plugins);
        Ok(top)
    }
}

#[cfg(test)]
#[path = "factory_tests.rs"]
mod tests;
