//! Loading a world with levels on or off, moving performers, and reading what is loaded.

use plugin_api::components::{Level, LevelLoaded, Model, Name, PerformerLevels, World};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{Change, Component, EcmRead, EntityId, Which};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use troupe::ecm::Ecm;
use troupe::fixture::TestFixture;
use troupe::server::ServerOptions;

/// `worlds/levels_seed000.sdf`.
pub fn seed_world_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../worlds/levels_seed000.sdf")
}

/// The seed world's text, with a `testing::Noop` system attached to model M1.
pub fn seed_world_with_m1_system() -> String {
    let text = std::fs::read_to_string(seed_world_path()).unwrap();
    let m1 = text.find("<model name=\"M1\">").unwrap();
    let link = m1 + text[m1..].find("<link").unwrap();
    format!("{}<plugin filename=\"troupe_testing\" name=\"testing::Noop\"/>\n    {}", &text[..link], &text[link..])
}

type Moves = Arc<Mutex<Vec<(String, Vec3)>>>;

/// What the fixture's post_update saw: (iteration, new model names, removed model names).
pub type Seen = Arc<Mutex<Vec<(u64, Vec<String>, Vec<String>)>>>;

/// A loaded world whose models the test moves.
pub struct Levels {
    pub f: TestFixture,
    moves: Moves,
    /// What the fixture's post_update saw.
    pub seen: Seen,
}

/// Loads `text` with levels on or off, without the default config's systems.
pub fn load(text: &str, levels: bool) -> Levels {
    try_load(text, levels).unwrap_or_else(|e| panic!("{e}"))
}

/// Loads `text`; the error as text.
pub fn try_load(text: &str, levels: bool) -> Result<Levels, String> {
    let opts = ServerOptions {
        world_text: Some((text.to_string(), "<levels test>".into())),
        run: true,
        levels,
        ..Default::default()
    };
    try_load_with(opts)
}

/// Loads `text` as a secondary of a distributed run would (`--network-role secondary`, which
/// turns levels on and sets the role systems see), without connecting to any primary: the
/// test plays the primary's part by marking the assigned levels between steps.
pub fn load_secondary(text: &str) -> Levels {
    let mut opts =
        ServerOptions { world_text: Some((text.to_string(), "<levels test>".into())), run: true, ..Default::default() };
    opts.network.role = Some("secondary".into());
    try_load_with(opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Loads with `opts` (the default config's systems left out).
pub fn try_load_with(opts: ServerOptions) -> Result<Levels, String> {
    // nextest runs each test in a process of its own.
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
    let moves: Moves = Arc::default();
    let seen: Seen = Arc::default();
    let (m, s) = (moves.clone(), seen.clone());
    let f = TestFixture::with_options(opts)
        .map_err(|e| e.to_string())?
        .on_pre_update(move |_, ecm| {
            for (name, to) in m.lock().unwrap().drain(..) {
                let e = ecm.entity_by_name(&name).unwrap_or_else(|| panic!("no model {name} to move"));
                let mut pose = ecm.get::<Pose>(e).unwrap_or_default();
                pose.position = to;
                ecm.set(e, &pose, Change::OneTime)?;
            }
            Ok(())
        })
        .on_post_update(move |info, ecm| {
            let names = |ids: Vec<EntityId>| -> Vec<String> {
                ids.into_iter().filter_map(|e| ecm.get::<Name>(e).map(|n| n.0)).collect()
            };
            let new = names(ecm.new_entities_with(&[Model::ID]));
            let removed = names(ecm.removed_entities_with(&[Model::ID]));
            if !new.is_empty() || !removed.is_empty() {
                s.lock().unwrap().push((info.iterations, new, removed));
            }
            Ok(())
        })
        .finalize()
        .map_err(|e| e.to_string())?;
    Ok(Levels { f, moves, seen })
}

impl Levels {
    /// Moves model `name` to (x, y, 0) and steps twice: the pose is written in the first
    /// step and the level rule acts on it in the second.
    pub fn goto(&mut self, name: &str, x: f64, y: f64) {
        self.moves.lock().unwrap().push((name.to_string(), Vec3::new(x, y, 0.0)));
        self.f.run(2).unwrap();
    }

    /// The ECM.
    pub fn ecm(&self) -> &Ecm {
        self.f.ecm()
    }

    /// Names of the loaded top-level models.
    pub fn models(&self) -> BTreeSet<String> {
        let ecm = self.ecm();
        ecm.children(world(ecm))
            .filter(|e| ecm.has_component(*e, Model::ID))
            .filter_map(|e| ecm.get::<Name>(e).map(|n| n.0))
            .collect()
    }

    /// The entity of the top-level entity or level named `name`.
    pub fn id(&self, name: &str) -> Option<EntityId> {
        let ecm = self.ecm();
        ecm.children(world(ecm)).find(|e| ecm.get::<Name>(*e).is_some_and(|n| n.0 == name))
    }

    /// Whether level `name` is loaded (its `LevelLoaded`).
    pub fn level_loaded(&self, name: &str) -> bool {
        let id = self.level(name);
        self.ecm().get::<LevelLoaded>(id).unwrap_or_else(|| panic!("level {name} has no LevelLoaded")).0
    }

    /// The level entity named `name`.
    pub fn level(&self, name: &str) -> EntityId {
        let ecm = self.ecm();
        ecm.query(Which::ALL, &[Level::ID])
            .into_iter()
            .find(|e| ecm.get::<Name>(*e).is_some_and(|n| n.0 == name))
            .unwrap_or_else(|| panic!("no level {name}"))
    }

    /// Names of the levels in performer `perf`'s `PerformerLevels`.
    pub fn performer_levels(&self, perf: &str) -> Vec<String> {
        let ecm = self.ecm();
        let id = ecm
            .query(Which::ALL, &[PerformerLevels::ID])
            .into_iter()
            .find(|e| ecm.get::<Name>(*e).is_some_and(|n| n.0 == perf))
            .unwrap_or_else(|| panic!("no performer {perf}"));
        ecm.get::<PerformerLevels>(id).unwrap().0.into_iter().map(|l| ecm.get::<Name>(l).unwrap().0).collect()
    }

    /// Every entity below `top` (itself included), ascending.
    pub fn subtree(&self, top: EntityId) -> Vec<EntityId> {
        let ecm = self.ecm();
        let mut out = vec![top];
        let mut i = 0;
        while i < out.len() {
            out.extend(ecm.children(out[i]));
            i += 1;
        }
        out.sort();
        out
    }
}

/// The world entity.
pub fn world(ecm: &Ecm) -> EntityId {
    ecm.query(Which::ALL, &[World::ID])[0]
}

/// A set of names.
pub fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}
