//! # troupe_level_manager — levels and performers
//!
//! A level is an axis-aligned box of the world with a buffer zone around it and the
//! top-level entities it holds; a performer is a model whose volume decides which levels
//! are loaded. With levels on, a level is loaded at the first step in which some
//! performer's volume touches its buffered box (closed boxes: touching counts), and unloaded
//! at the first step in which none does. Loading creates the level's models, lights and
//! joints through the host with their ids from the world file (so a reload gives the same
//! ids); unloading requests their removal, done at the end of the step, and the systems
//! attached to them go with them. An entity held by several levels stays while any of them
//! is loaded. The default level (everything no level refers to) and the performers' models
//! are always loaded. With levels off everything is loaded and only the bookkeeping runs.
//!
//! ## Roles in a distributed run
//!
//! Standalone and on the primary (`Host::network_role()` STANDALONE or PRIMARY) the rule
//! above decides; the primary keeps every performer loaded and decides from the poses the
//! secondaries report. A performer entity made after load by someone else (the host makes a
//! dynamic model spawned in a distributed run one) counts from the step after it appeared. On a **secondary** the system decides nothing: the host writes
//! `LevelAssigned` on every level entity before each step (true for the levels the primary
//! assigned to this secondary: those its performers are in), and in that step's pre_update
//! the system loads each level whose `LevelAssigned` is true and unloads each whose
//! `LevelAssigned` is false or absent, with the same loading and unloading as above. It
//! computes no performer volumes and writes no `PerformerLevels` (the primary's are the
//! ones that count). Performers come and go at run time on a secondary (the host creates the
//! performers handed over to it and removes those handed away): their models are never
//! loaded or unloaded by a level, even when a level names them. The
//! `/world/<w>/level/set_performer` service is offered by the primary only.
//!
//! The host loads this system itself: with `--levels` (or `<levels>true</levels>` in the
//! server config), and with levels off for a world that has a `<plugin name="gz::sim">`
//! (or `ignition::gazebo`) element. The host's SDF reader reads and checks that element
//! (errors and warnings name the file and line) and creates the level and performer
//! entities; this system works from their components.
//!
//! ## Parameters
//!
//! | element | type | default | meaning |
//! |---|---|---|---|
//! | `<levels>` | bool | `false` | load and unload levels (else bookkeeping only) |
//!
//! ## Components
//!
//! Read: on level entities `Level`, `Name`, `Pose` (position), box `Geometry`,
//! `LevelBuffer`, `LevelEntityNames` (and `LevelAssigned` on a secondary); on performers
//! `Performer`, `ParentEntity` (the model), optional box `Geometry`. Written:
//! `LevelLoaded` on each level; `PerformerLevels` on each performer (the levels whose
//! buffered box its volume touches, ascending ids; not on a secondary); a performer without
//! geometry gets the box enclosing its model's collisions as `Geometry` with the box
//! centre, in the model frame, as its `Pose` (not on a secondary either).
//!
//! ## Topics and services
//!
//! | name | request | response | what |
//! |---|---|---|---|
//! | `/world/<w>/level/set_performer` | `gz.msgs.StringMsg` (model name) | `gz.msgs.Boolean` | makes a top-level model a performer; false if there is no such model or it is one already |
//!
//! ## Example
//!
//! ```xml
//! <plugin name="gz::sim" filename="dummy">
//!   <performer name="perf1"><ref>robot1</ref></performer>
//!   <level name="level1">
//!     <pose>0 0 5 0 0 0</pose>
//!     <geometry><box><size>10 10 10</size></box></geometry>
//!     <buffer>2</buffer>
//!     <ref>model1</ref>
//!   </level>
//! </plugin>
//! ```

mod levels;
mod volume;

pub use levels::{LevelRecord, LevelSet};
pub use volume::{collision_bounds, Aabb};

use plugin_api::components::{
    Geometry, Level, LevelAssigned, LevelBuffer, LevelEntityNames, LevelLoaded, Model, Name, Performer,
    PerformerLevels, PerformerRef, World,
};
use plugin_api::ffi::Hooks;
use plugin_api::math::{Pose, Vec3};
use plugin_api::msgs::{Boolean, StringMsg};
use plugin_api::transport::ServiceServer;
use plugin_api::xml::PluginXml;
use plugin_api::{
    log, Change, Component, ConfigureContext, Ecm, EcmRead, EntityId, Error, Host, NetworkRole, QueryCache, System,
    SystemInfo, UpdateInfo,
};
use std::collections::{BTreeSet, HashMap};

/// Runs before every other system, as gz-sim's level update runs before its systems.
pub const PRIORITY: i32 = -32768;

/// The volume of a runtime performer whose model has no collision (gz-sim's), m.
const FALLBACK_SIZE: Vec3 = Vec3::new(2.0, 2.0, 2.0);

/// One performer: its entity, its model, and its volume relative to the model's position.
#[derive(Clone, Debug)]
struct PerformerRecord {
    id: EntityId,
    model: EntityId,
    /// The volume with the model at the origin (orientation ignored).
    local: Aabb,
    /// Level entities last written to `PerformerLevels`.
    levels: Vec<EntityId>,
}

/// The system.
#[derive(Default)]
pub struct LevelManager {
    enabled: bool,
    /// On a secondary of a distributed run: levels follow `LevelAssigned`.
    secondary: bool,
    world: EntityId,
    set: LevelSet,
    loaded: Vec<bool>,
    performers: Vec<PerformerRecord>,
    service: Option<ServiceServer<StringMsg, Boolean>>,
    // Reused per step.
    volumes: Vec<Aabb>,
    touched: Vec<Vec<usize>>,
    wanted: Vec<bool>,
    model_ids: Vec<EntityId>,
    /// On a secondary: the names of every performer's model seen so far.
    performer_names: BTreeSet<String>,
    /// Tells a step in which nothing was created or removed since this system's last one.
    structure: QueryCache,
    /// Asked once a step whether a `set_performer` request waits.
    host: Option<Host>,
}

impl System for LevelManager {
    fn info() -> SystemInfo {
        SystemInfo::LEVEL_MANAGER
    }

    fn priority(&self) -> Option<i32> {
        Some(PRIORITY)
    }

    fn hooks(&self) -> Hooks {
        Hooks::PRE_UPDATE
    }

    fn configure(&mut self, mut ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let xml = PluginXml::parse(ctx.xml)?;
        self.enabled = xml.value::<bool>("levels")?.unwrap_or(false);
        self.world = if ctx.ecm.has::<World>(ctx.entity) {
            ctx.entity
        } else {
            ctx.ecm
                .entities_with(&[World::ID])
                .into_iter()
                .next()
                .ok_or_else(|| Error::msg("level manager: no world entity"))?
        };
        self.secondary = ctx.host.network_role() == NetworkRole::SECONDARY;
        self.read_levels(&ctx.ecm)?;
        if self.secondary {
            if !self.enabled {
                log::warn!("level manager on a secondary with levels off: every level stays loaded");
            }
            // Performers are made on the primary (which the host tells the secondaries).
            self.performer_models(&ctx.ecm);
            return Ok(());
        }
        let performers = ctx.ecm.entities_with(&[Performer::ID]);
        self.adopt_performers(&mut ctx.ecm, performers)?;
        let name = format!("/world/{}/level/set_performer", ctx.host.world_name());
        self.service = Some(ctx.host.offer_service(&name)?);
        self.host = Some(ctx.host.clone());
        if self.enabled && self.performers.is_empty() {
            log::info!("levels are on and there are no performers yet; add some with {name}");
        }
        Ok(())
    }

    fn pre_update(&mut self, _info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        if self.secondary {
            return self.follow_assignment(ecm);
        }
        // Most steps create and remove nothing: then no performer is new and none lost its model.
        let unchanged = self.structure.refresh(ecm);
        if !unchanged {
            // Performers made since the last step by the host (a dynamic model spawned in a
            // distributed run becomes one) count like those of the world file.
            let made = ecm.new_entities_with(&[Performer::ID]);
            if !made.is_empty() {
                self.adopt_performers(ecm, made)?;
            }
        }
        if self.host.as_ref().is_none_or(|h| h.has_pending()) {
            self.serve_set_performer(ecm)?;
        }
        self.update_levels(ecm, unchanged)?;
        // After this system's own creations and removals, so they do not read as another's.
        self.structure.refresh(ecm);
        Ok(())
    }

    /// Not called: [`LevelManager::hooks`] says pre_update only.
    fn update(&mut self, _info: &UpdateInfo, _ecm: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }
}

impl LevelManager {
    /// Caches the level entities (they do not move; their content is fixed by the file).
    fn read_levels(&mut self, ecm: &impl EcmRead) -> plugin_api::Result {
        let mut levels = Vec::new();
        let mut loaded = Vec::new();
        for id in ecm.entities_with(&[Level::ID, LevelEntityNames::ID]) {
            if ecm.has::<plugin_api::components::DefaultLevel>(id) {
                continue;
            }
            let name = ecm.get::<Name>(id).map(|n| n.0).unwrap_or_default();
            let size = match ecm.get::<Geometry>(id) {
                Some(Geometry::Box { size }) => size,
                other => {
                    return Err(Error::msg(format!(
                        "level {name:?} (entity {id}) has geometry {other:?}; a level is a box"
                    )))
                }
            };
            let position = ecm.get::<Pose>(id).unwrap_or_default().position;
            let buffer = ecm.get::<LevelBuffer>(id).map_or(0.0, |b| b.0.max(0.0));
            let names = ecm.get::<LevelEntityNames>(id).map(|n| n.0).unwrap_or_default();
            loaded.push(ecm.get::<LevelLoaded>(id).is_some_and(|l| l.0));
            levels.push(LevelRecord { id, name, buffered: Aabb::centered(position, size).inflated(buffer), names });
        }
        self.set = LevelSet { levels };
        self.loaded = loaded;
        Ok(())
    }

    /// Records the performer entities `ids` not recorded yet (each attached to a model).
    fn adopt_performers(&mut self, ecm: &mut Ecm<'_>, ids: Vec<EntityId>) -> plugin_api::Result {
        for id in ids {
            if self.performers.iter().any(|p| p.id == id) {
                continue;
            }
            let Some(model) = ecm.parent(id).filter(|m| ecm.has::<Model>(*m)) else {
                log::warn!("performer {id} is not attached to a model; ignored");
                continue;
            };
            self.add_performer(ecm, id, model)?;
        }
        Ok(())
    }

    /// Records a performer; sizes it by its model's collisions when it has no geometry.
    fn add_performer(&mut self, ecm: &mut Ecm<'_>, id: EntityId, model: EntityId) -> plugin_api::Result {
        let (center, size) = match ecm.get::<Geometry>(id) {
            Some(Geometry::Box { size }) => (ecm.get::<Pose>(id).unwrap_or_default().position, size),
            Some(other) => {
                return Err(Error::msg(format!("performer {id} has geometry {other:?}; a performer volume is a box")))
            }
            None => {
                let (center, size) = match collision_bounds(&*ecm, model) {
                    Some(b) => b.center_size(),
                    None => {
                        log::info!(
                            "performer {id}: its model has no collision shape to size it by; using a 2 x 2 x 2 m box"
                        );
                        (Vec3::ZERO, FALLBACK_SIZE)
                    }
                };
                ecm.set(id, &Geometry::Box { size }, Change::OneTime)?;
                ecm.set(id, &Pose { position: center, ..Pose::IDENTITY }, Change::OneTime)?;
                (center, size)
            }
        };
        let levels = ecm.get::<PerformerLevels>(id).map(|l| l.0).unwrap_or_default();
        self.performers.push(PerformerRecord { id, model, local: Aabb::centered(center, size), levels });
        Ok(())
    }

    /// `/world/<w>/level/set_performer`: answered in the step that takes the request.
    fn serve_set_performer(&mut self, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let Some(service) = self.service.take() else { return Ok(()) };
        let result = (|| {
            for req in service.take() {
                let name = req.message.data.trim().to_string();
                let ok = self.make_performer(ecm, &name)?;
                service.reply(&req, ok, &Boolean { data: ok, ..Default::default() });
            }
            Ok(())
        })();
        self.service = Some(service);
        result
    }

    fn make_performer(&mut self, ecm: &mut Ecm<'_>, name: &str) -> Result<bool, Error> {
        if name.is_empty() {
            log::warn!("set_performer: the request names no model");
            return Ok(false);
        }
        let model = ecm.child_by_name(self.world, name).filter(|m| ecm.has::<Model>(*m));
        let Some(model) = model else {
            log::warn!("set_performer: world has no top-level model named {name:?}");
            return Ok(false);
        };
        if let Some(p) = self.performers.iter().find(|p| p.model == model) {
            log::warn!("set_performer: model {name:?} is a performer already (entity {})", p.id);
            return Ok(false);
        }
        let id = ecm.create_entity(Some(model));
        ecm.set(id, &Name(format!("perf_{name}")), Change::OneTime)?;
        ecm.set(id, &Performer, Change::OneTime)?;
        ecm.set(id, &PerformerRef(name.to_string()), Change::OneTime)?;
        ecm.set(id, &PerformerLevels(Vec::new()), Change::OneTime)?;
        self.add_performer(ecm, id, model)?;
        log::info!("model {name:?} is now a performer (entity {id})");
        Ok(true)
    }

    /// The level rule for this step: performer volumes, then levels to load and unload.
    /// `unchanged`: nothing was created or removed since this system's previous step.
    fn update_levels(&mut self, ecm: &mut Ecm<'_>, unchanged: bool) -> plugin_api::Result {
        // A performer whose model went away (removed by a user or with a level) is dropped.
        if !unchanged {
            self.performers.retain(|p| {
                let alive = ecm.has_entity(p.model) && ecm.has_entity(p.id);
                if !alive {
                    log::info!("performer {} dropped: its model {} was removed", p.id, p.model);
                }
                alive
            });
        }
        if self.set.levels.is_empty() {
            // A world without levels (they are read once, from the file): every performer
            // is in none, always.
            return Ok(());
        }
        self.model_ids.clear();
        self.model_ids.extend(self.performers.iter().map(|p| p.model));
        let poses = ecm.read_many::<Pose>(&self.model_ids)?;
        self.volumes.clear();
        self.volumes.extend(self.performers.iter().zip(&poses).map(|(p, pose)| p.local.translated(pose.position)));
        self.set.update(&self.volumes, &mut self.touched, &mut self.wanted);

        for (p, touched) in self.performers.iter_mut().zip(&self.touched) {
            let now: Vec<EntityId> = touched.iter().map(|&i| self.set.levels[i].id).collect();
            if now != p.levels {
                ecm.set(p.id, &PerformerLevels(now.clone()), Change::OneTime)?;
                p.levels = now;
            }
        }
        if !self.enabled || self.wanted == self.loaded {
            return Ok(());
        }
        self.load_and_unload(ecm)
    }

    /// A secondary's rule: the levels the host marked `LevelAssigned` (absent is false).
    fn follow_assignment(&mut self, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        if !self.enabled {
            return Ok(());
        }
        self.wanted.clear();
        for level in &self.set.levels {
            self.wanted.push(ecm.get::<LevelAssigned>(level.id).is_some_and(|a| a.0));
        }
        if self.wanted == self.loaded {
            return Ok(());
        }
        self.load_and_unload(ecm)
    }

    /// The models of the performers present now, and the names of every performer's model
    /// (a performer handed to another secondary is gone from this ECM, its name is not
    /// forgotten: on a secondary a level never loads another secondary's performer).
    fn performer_models(&mut self, ecm: &Ecm<'_>) -> BTreeSet<EntityId> {
        if !self.secondary {
            return self.performers.iter().map(|p| p.model).collect();
        }
        let mut models = BTreeSet::new();
        for p in ecm.entities_with(&[Performer::ID]) {
            if let Some(r) = ecm.get::<PerformerRef>(p) {
                self.performer_names.insert(r.0);
            }
            if let Some(m) = ecm.parent(p) {
                if let Some(n) = ecm.get::<Name>(m) {
                    self.performer_names.insert(n.0);
                }
                models.insert(m);
            }
        }
        models
    }

    fn load_and_unload(&mut self, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let performer_models = self.performer_models(ecm);
        let keep: BTreeSet<&str> = self
            .set
            .levels
            .iter()
            .zip(&self.wanted)
            .filter(|(_, w)| **w)
            .flat_map(|(l, _)| l.names.iter().map(String::as_str))
            .collect();
        // Top-level entities by name, read once per step in which levels change.
        let mut top: HashMap<String, EntityId> = HashMap::new();
        for e in ecm.children(self.world) {
            if let Some(n) = ecm.get::<Name>(e) {
                top.entry(n.0).or_insert(e);
            }
        }
        for (i, level) in self.set.levels.iter().enumerate() {
            if self.loaded[i] && !self.wanted[i] {
                for name in level.names.iter().filter(|n| !keep.contains(n.as_str())) {
                    let Some(&e) = top.get(name.as_str()) else { continue };
                    if !performer_models.contains(&e) && !self.performer_names.contains(name) {
                        ecm.request_remove(e);
                    }
                }
                ecm.set(level.id, &LevelLoaded(false), Change::OneTime)?;
                log::info!("unloaded level {:?}", level.name);
            }
        }
        for (i, level) in self.set.levels.iter().enumerate() {
            if !self.loaded[i] && self.wanted[i] {
                for name in &level.names {
                    if top.contains_key(name.as_str()) || self.performer_names.contains(name) {
                        continue;
                    }
                    let e = ecm
                        .load_world_entity(name)
                        .map_err(|e| Error::msg(format!("loading level {:?}: {}", level.name, e.message)))?;
                    top.insert(name.clone(), e);
                }
                ecm.set(level.id, &LevelLoaded(true), Change::OneTime)?;
                log::info!("loaded level {:?}", level.name);
            }
        }
        self.loaded.clone_from(&self.wanted);
        Ok(())
    }
}

plugin_api::export_plugin! {
    library: "troupe_level_manager",
    systems: {
        "troupe::LevelManager" | "level_manager" => LevelManager::default(),
    }
}
