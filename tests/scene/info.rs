//! `scene/info` (service and topic) and `scene/deletion`.

use crate::support::{call, decode, fixture, run_until, subscribe, SPAWNED};
use plugin_api::components::World;
use plugin_api::msgs::{light::LightType, Model, Pose, Scene, UInt32V};
use plugin_api::{Component, EcmRead, EntityId};
use std::sync::{Arc, Mutex};

fn id_of(f: &troupe::fixture::TestFixture, path: &str) -> u32 {
    let ecm = f.ecm();
    let mut e = ecm.query(plugin_api::Which::ALL, &[World::ID])[0];
    for part in path.split('/') {
        e = ecm
            .children(e)
            .find(|c| ecm.get::<plugin_api::components::Name>(*c).is_some_and(|n| n.0 == part))
            .unwrap_or_else(|| panic!("no entity {path}"));
    }
    e.0 as u32
}

fn xyz(p: &Option<Pose>) -> (f64, f64, f64) {
    let v = p.as_ref().and_then(|p| p.position.clone()).expect("a pose with a position");
    (v.x, v.y, v.z)
}

fn model<'a>(models: &'a [Model], name: &str) -> &'a Model {
    models
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no model {name} in {:?}", models.iter().map(|m| &m.name).collect::<Vec<_>>()))
}

#[test]
fn the_service_lists_every_model_with_its_links_and_every_light() {
    let mut f = fixture("");
    let scene: Scene = call(&mut f, "/world/w/scene/info");
    assert_eq!(scene.name, "w");
    let ambient = scene.ambient.expect("ambient colour");
    assert_eq!((ambient.r, ambient.g, ambient.b, ambient.a), (0.1, 0.2, 0.3, 1.0));
    assert!(!scene.grid, "<grid>false</grid>");
    assert!(scene.shadows, "shadows default to true");

    let names: Vec<&str> = scene.model.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["ground", "cart"], "top-level models only, nested ones inside");
    let ground = model(&scene.model, "ground");
    assert!(ground.is_static);
    assert_eq!(ground.id, id_of(&f, "ground"));
    assert_eq!(ground.link.len(), 1);
    assert_eq!(ground.link[0].name, "ground_link");
    assert_eq!(ground.link[0].id, id_of(&f, "ground/ground_link"));

    let cart = model(&scene.model, "cart");
    assert!(!cart.is_static);
    assert_eq!(cart.id, id_of(&f, "cart"));
    assert_eq!(xyz(&cart.pose), (1.0, 2.0, 0.5));
    assert_eq!(cart.pose.as_ref().unwrap().id, cart.id, "a pose names its entity");
    let links: Vec<(&str, u32)> = cart.link.iter().map(|l| (l.name.as_str(), l.id)).collect();
    assert_eq!(links, [("chassis", id_of(&f, "cart/chassis")), ("wheel", id_of(&f, "cart/wheel"))]);
    assert!(cart.link[0].canonical && !cart.link[1].canonical, "the first link is canonical");
    assert_eq!(xyz(&cart.link[0].pose), (0.0, 0.0, 0.1), "link poses are relative to the model");
    assert_eq!(xyz(&cart.link[1].pose), (0.3, 0.0, 0.0));
    // The lamp travels with its link, not at the scene's top level.
    let lamp = &cart.link[0].light;
    assert_eq!(lamp.len(), 1);
    assert_eq!((lamp[0].name.as_str(), lamp[0].id), ("headlamp", id_of(&f, "cart/chassis/headlamp")));
    assert_eq!(lamp[0].r#type, LightType::Point as i32);
    assert_eq!(lamp[0].parent_id, id_of(&f, "cart/chassis"));
    assert_eq!(xyz(&lamp[0].pose), (0.5, 0.0, 0.0));
    assert_eq!(cart.model.len(), 1);
    assert_eq!((cart.model[0].name.as_str(), cart.model[0].id), ("mast", id_of(&f, "cart/mast")));
    assert_eq!(cart.model[0].link[0].name, "mast_link");

    assert_eq!(scene.light.len(), 1, "{:?}", scene.light);
    let sun = &scene.light[0];
    assert_eq!((sun.name.as_str(), sun.id), ("sun", id_of(&f, "sun")));
    assert_eq!(sun.r#type, LightType::Directional as i32);
    assert!(sun.cast_shadows);
    assert_eq!(xyz(&sun.pose), (0.0, 0.0, 10.0));
    let d = sun.direction.clone().expect("a direction");
    assert_eq!((d.x, d.y, d.z), (0.5, 0.1, -0.9));
}

/// A fixture that spawns [`SPAWNED`] at iteration `spawn_at` and removes it at `remove_at`;
/// the spawned id lands in the returned cell.
fn spawner(spawn_at: u64, remove_at: u64) -> (troupe::fixture::TestFixture, Arc<Mutex<Option<EntityId>>>) {
    let cell = Arc::new(Mutex::new(None));
    let seen = cell.clone();
    let f = fixture("")
        .on_pre_update(move |info, ecm| {
            if info.iterations == spawn_at && !info.paused {
                let world = ecm.entities_with(&[World::ID])[0];
                *seen.lock().unwrap() = Some(ecm.create_from_sdf(SPAWNED, world)?);
            }
            if info.iterations == remove_at && !info.paused {
                let e = seen.lock().unwrap().expect("spawned before removal");
                assert!(ecm.request_remove(e));
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    (f, cell)
}

#[test]
fn a_spawned_model_is_announced_once_and_its_removal_is_announced() {
    let (mut f, spawned) = spawner(20, 200);
    let news = subscribe(&mut f, "/world/w/scene/info", "gz.msgs.Scene");
    let gone = subscribe(&mut f, "/world/w/scene/deletion", "gz.msgs.UInt32_V");
    f.run(300).unwrap();
    let id = spawned.lock().unwrap().expect("spawned").0 as u32;

    let scenes: Vec<Scene> = decode(&news.take());
    // First the world as it was loaded, then the spawned model: each model once.
    let announced: Vec<&str> = scenes.iter().flat_map(|s| s.model.iter().map(|m| m.name.as_str())).collect();
    assert_eq!(announced, ["ground", "cart", "spawned"], "{scenes:?}");
    let last = scenes.last().unwrap();
    assert_eq!(last.model.len(), 1);
    assert!(last.light.is_empty(), "lights already announced are not repeated");
    assert_eq!(last.model[0].id, id);
    assert_eq!(xyz(&last.model[0].pose), (4.0, 5.0, 6.0));
    assert_eq!(last.model[0].link[0].name, "body");
    assert_eq!(
        last.header.as_ref().and_then(|h| h.stamp).map(|t| t.nsec),
        Some(20_000_000),
        "stamped with the sim time of its step (1 ms steps)"
    );
    let first_lights: Vec<&str> = scenes[0].light.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(first_lights, ["sun"], "the lamp is inside the cart's chassis");

    let deletions: Vec<UInt32V> = decode(&gone.take());
    assert_eq!(deletions.len(), 1, "{deletions:?}");
    assert_eq!(deletions[0].data, [id]);

    // The service no longer lists it.
    let scene: Scene = call(&mut f, "/world/w/scene/info");
    assert!(scene.model.iter().all(|m| m.name != "spawned"), "{:?}", scene.model);
}

#[test]
fn a_spawned_model_appears_in_pose_info() {
    let (mut f, spawned) = spawner(5, u64::MAX);
    let poses = subscribe(&mut f, "/world/w/pose/info", "gz.msgs.Pose_V");
    f.run(10).unwrap();
    let id = spawned.lock().unwrap().expect("spawned").0 as u32;
    let got = run_until(&mut f, &poses, |got| {
        decode::<plugin_api::msgs::PoseV>(got).iter().any(|v| v.pose.iter().any(|p| p.id == id))
    });
    let all: Vec<plugin_api::msgs::PoseV> = decode(&got);
    let with = all.iter().find(|v| v.pose.iter().any(|p| p.id == id)).unwrap();
    let p = with.pose.iter().find(|p| p.id == id).unwrap();
    assert_eq!(p.name, "spawned");
    assert_eq!(xyz(&Some(p.clone())), (4.0, 5.0, 6.0));
    let body = with.pose.iter().find(|p| p.name == "body").expect("the spawned model's link");
    assert_eq!(body.id, id + 1, "the link was created right after its model");
}

#[test]
fn nothing_is_announced_to_nobody_and_a_late_subscriber_asks_the_service() {
    let (mut f, _spawned) = spawner(5, u64::MAX);
    f.run(20).unwrap();
    // Subscribing late: the spawn went by unannounced (nobody listened), no gap to report.
    let news = subscribe(&mut f, "/world/w/scene/info", "gz.msgs.Scene");
    f.run(20).unwrap();
    assert!(news.take().is_empty());
    assert_eq!(news.missed(), 0);
    let scene: Scene = call(&mut f, "/world/w/scene/info");
    let names: Vec<&str> = scene.model.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["ground", "cart", "spawned"]);
}

#[test]
fn a_reset_announces_the_removal_of_what_was_spawned() {
    let (mut f, spawned) = spawner(5, u64::MAX);
    let news = subscribe(&mut f, "/world/w/scene/info", "gz.msgs.Scene");
    let gone = subscribe(&mut f, "/world/w/scene/deletion", "gz.msgs.UInt32_V");
    f.run(20).unwrap();
    let id = spawned.lock().unwrap().expect("spawned").0 as u32;
    news.take();
    f.runner_mut().request_reset();
    f.run(3).unwrap();
    let deletions: Vec<UInt32V> = decode(&gone.take());
    assert_eq!(deletions.len(), 1, "{deletions:?}");
    assert_eq!(deletions[0].data, [id]);
    // What the world had at load is still there: not announced again.
    assert!(news.take().is_empty());
    let scene: Scene = call(&mut f, "/world/w/scene/info");
    let names: Vec<&str> = scene.model.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["ground", "cart"]);
}
