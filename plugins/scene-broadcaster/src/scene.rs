//! gz-msgs messages built from the ECM: the scene with its models, links and lights, and
//! the pose vectors.

use plugin_api::components::{
    CanonicalLink, GravityEnabled, Kinematic, Light, LightKind, Link, Model, Name, Scene as SceneComponent,
    SelfCollide, Static, Visual,
};
use plugin_api::math::Pose;
use plugin_api::msgs::{self as gz, light::LightType};
use plugin_api::{Component, EcmRead, EntityId};
use std::collections::BTreeSet;

/// A gz `Time` from nanoseconds.
pub fn time(ns: i64) -> gz::Time {
    gz::Time { sec: ns.div_euclid(1_000_000_000), nsec: ns.rem_euclid(1_000_000_000) as i32 }
}

/// A header stamped with a sim time.
pub fn stamped(sim_time_ns: i64) -> gz::Header {
    gz::Header { stamp: Some(time(sim_time_ns)), data: Vec::new() }
}

/// The entity's name ("" when it has none).
fn name_of(ecm: &impl EcmRead, e: EntityId) -> String {
    ecm.get::<Name>(e).map(|n| n.0).unwrap_or_default()
}

/// gz's entity ids are 32-bit in messages; Troupe's fit unless a run creates billions.
fn id32(e: EntityId) -> u32 {
    u32::try_from(e.0).unwrap_or(u32::MAX)
}

/// A gz `Pose` from a pose, with the entity's name and id.
pub fn pose_msg(name: String, e: EntityId, p: &Pose) -> gz::Pose {
    gz::Pose {
        header: None,
        name,
        id: id32(e),
        position: Some(gz::Vector3d { header: None, x: p.position.x, y: p.position.y, z: p.position.z }),
        orientation: Some(gz::Quaternion {
            header: None,
            x: p.rotation.x,
            y: p.rotation.y,
            z: p.rotation.z,
            w: p.rotation.w,
        }),
    }
}

fn color(c: [f64; 4]) -> gz::Color {
    gz::Color { header: None, r: c[0] as f32, g: c[1] as f32, b: c[2] as f32, a: c[3] as f32 }
}

fn children_with<C: Component>(ecm: &impl EcmRead, e: EntityId) -> Vec<EntityId> {
    ecm.children(e).into_iter().filter(|c| ecm.has::<C>(*c)).collect()
}

/// A light as gz describes it.
pub fn light_msg(ecm: &impl EcmRead, e: EntityId) -> gz::Light {
    let l = ecm.get::<Light>(e).unwrap_or_default();
    let pose = ecm.get::<Pose>(e).unwrap_or(Pose::IDENTITY);
    let kind = match l.kind {
        LightKind::Directional => LightType::Directional,
        LightKind::Spot => LightType::Spot,
        _ => LightType::Point,
    };
    let name = name_of(ecm, e);
    gz::Light {
        header: None,
        name: name.clone(),
        r#type: kind as i32,
        pose: Some(pose_msg(name, e, &pose)),
        diffuse: Some(color(l.diffuse)),
        specular: Some(color(l.specular)),
        attenuation_constant: l.attenuation[0] as f32,
        attenuation_linear: l.attenuation[1] as f32,
        attenuation_quadratic: l.attenuation[2] as f32,
        direction: Some(gz::Vector3d { header: None, x: l.direction.x, y: l.direction.y, z: l.direction.z }),
        range: l.range as f32,
        cast_shadows: l.cast_shadows,
        spot_inner_angle: l.spot[0] as f32,
        spot_outer_angle: l.spot[1] as f32,
        spot_falloff: l.spot[2] as f32,
        id: id32(e),
        parent_id: ecm.parent(e).map_or(0, id32),
        intensity: l.intensity as f32,
        is_light_off: !l.on,
        visualize_visual: l.visualize,
    }
}

fn link_msg(ecm: &impl EcmRead, e: EntityId) -> gz::Link {
    let name = name_of(ecm, e);
    let pose = ecm.get::<Pose>(e).unwrap_or(Pose::IDENTITY);
    gz::Link {
        header: None,
        id: id32(e),
        name: name.clone(),
        self_collide: ecm.get::<SelfCollide>(e).is_some_and(|s| s.0),
        gravity: ecm.get::<GravityEnabled>(e).is_none_or(|g| g.0),
        kinematic: ecm.get::<Kinematic>(e).is_some_and(|k| k.0),
        enabled: true,
        pose: Some(pose_msg(name, e, &pose)),
        canonical: ecm.has::<CanonicalLink>(e),
        light: children_with::<Light>(ecm, e).into_iter().map(|l| light_msg(ecm, l)).collect(),
    }
}

/// A model with its links (and their lights) and nested models.
pub fn model_msg(ecm: &impl EcmRead, e: EntityId) -> gz::Model {
    let name = name_of(ecm, e);
    let pose = ecm.get::<Pose>(e).unwrap_or(Pose::IDENTITY);
    gz::Model {
        header: None,
        name: name.clone(),
        id: id32(e),
        is_static: is_static(ecm, e),
        pose: Some(pose_msg(name, e, &pose)),
        // Joints are not part of the scene gz-sim broadcasts either.
        joint: Vec::new(),
        link: children_with::<Link>(ecm, e).into_iter().map(|l| link_msg(ecm, l)).collect(),
        deleted: false,
        self_collide: ecm.get::<SelfCollide>(e).is_some_and(|s| s.0),
        model: children_with::<Model>(ecm, e).into_iter().map(|m| model_msg(ecm, m)).collect(),
    }
}

/// Whether a model is static, or inside a static model.
pub fn is_static(ecm: &impl EcmRead, model: EntityId) -> bool {
    let mut e = Some(model);
    while let Some(m) = e {
        if !ecm.has::<Model>(m) {
            return false;
        }
        if ecm.get::<Static>(m).is_some_and(|s| s.0) {
            return true;
        }
        e = ecm.parent(m);
    }
    false
}

/// Whether an ancestor of `e` (not `e` itself) is in `set`.
fn under(ecm: &impl EcmRead, e: EntityId, set: &BTreeSet<EntityId>) -> bool {
    let mut p = ecm.parent(e);
    while let Some(a) = p {
        if set.contains(&a) {
            return true;
        }
        p = ecm.parent(a);
    }
    false
}

/// A scene of `world` holding `models` and `lights` (each once: an entity inside another one
/// of the set is carried inside it), with the world's scene properties if `properties`.
pub fn scene_msg(
    ecm: &impl EcmRead,
    world: EntityId,
    world_name: &str,
    models: &BTreeSet<EntityId>,
    lights: &BTreeSet<EntityId>,
    properties: bool,
    sim_time_ns: i64,
) -> gz::Scene {
    let mut scene =
        gz::Scene { header: Some(stamped(sim_time_ns)), name: world_name.to_string(), ..Default::default() };
    if properties {
        let s = ecm.get::<SceneComponent>(world).unwrap_or_default();
        scene.ambient = Some(color(s.ambient));
        scene.background = Some(color(s.background));
        scene.shadows = s.shadows;
        scene.grid = s.grid;
        scene.origin_visual = s.origin_visual;
    }
    scene.model = models.iter().filter(|m| !under(ecm, **m, models)).map(|m| model_msg(ecm, *m)).collect();
    // A light inside a link goes with its link when that link's model is in the message.
    scene.light = lights
        .iter()
        .filter(|l| !(under(ecm, **l, models) && ecm.parent(**l).is_some_and(|p| ecm.has::<Link>(p))))
        .map(|l| light_msg(ecm, *l))
        .collect();
    scene
}

/// Every model and light of the world, sorted.
pub fn models_and_lights(ecm: &impl EcmRead) -> (BTreeSet<EntityId>, BTreeSet<EntityId>) {
    (ecm.entities_with(&[Model::ID]).into_iter().collect(), ecm.entities_with(&[Light::ID]).into_iter().collect())
}

/// The poses (relative to each entity's parent) of every model, link, visual and light, in
/// ascending entity id.
pub fn all_poses(ecm: &impl EcmRead) -> Vec<gz::Pose> {
    let mut out = Vec::new();
    for kind in [Model::ID, Link::ID, Visual::ID, Light::ID] {
        for (e, p) in ecm.each::<Pose>(&[kind]).unwrap_or_else(|err| {
            plugin_api::log::warn!("pose/info: poses not readable: {err}");
            Vec::new()
        }) {
            out.push((e, p));
        }
    }
    out.sort_by_key(|(e, _)| *e);
    out.dedup_by_key(|(e, _)| *e);
    out.into_iter().map(|(e, p)| pose_msg(name_of(ecm, e), e, &p)).collect()
}

/// The poses of every non-static model and of the links of non-static models.
pub fn dynamic_poses(ecm: &impl EcmRead) -> Vec<gz::Pose> {
    let models = ecm.each::<Pose>(&[Model::ID]).unwrap_or_default();
    let moving: BTreeSet<EntityId> = models.iter().map(|(e, _)| *e).filter(|e| !is_static(ecm, *e)).collect();
    let mut out: Vec<(EntityId, Pose)> = models.into_iter().filter(|(e, _)| moving.contains(e)).collect();
    for (e, p) in ecm.each::<Pose>(&[Link::ID]).unwrap_or_default() {
        if ecm.parent(e).is_some_and(|m| moving.contains(&m)) {
            out.push((e, p));
        }
    }
    out.sort_by_key(|(e, _)| *e);
    out.into_iter().map(|(e, p)| pose_msg(name_of(ecm, e), e, &p)).collect()
}
