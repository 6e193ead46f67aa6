//! light_config, set_physics and entity/system/add.

use crate::support::*;
use plugin_api::components::{Light, LightKind, Physics};
use plugin_api::msgs;
use plugin_api::prost::Message;
use plugin_api::{events, Change};
use std::sync::{Arc, Mutex};

#[test]
fn light_config_updates_the_light_component_by_name_or_id() {
    let mut f = fixture(BOX_WORLD);
    let lamp = find(f.ecm(), "lamp").unwrap();
    let req = msgs::Light {
        name: "lamp".into(),
        r#type: msgs::light::LightType::Directional as i32,
        diffuse: Some(msgs::Color { r: 1.0, g: 0.5, b: 0.0, a: 1.0, ..Default::default() }),
        intensity: 0.25,
        range: 3.0,
        cast_shadows: true,
        ..Default::default()
    };
    assert!(call(&mut f, "light_config/blocking", &req).ok());
    let l = f.ecm().get::<Light>(lamp).unwrap();
    assert_eq!(l.kind, LightKind::Directional);
    assert_eq!(l.diffuse, [1.0, 0.5, 0.0, 1.0]);
    assert_eq!((l.intensity, l.range, l.cast_shadows), (0.25, 3.0, true));
    assert!(call(
        &mut f,
        "light_config/blocking",
        &msgs::Light { id: lamp.0 as u32, is_light_off: true, ..Default::default() }
    )
    .ok());
    assert!(!f.ecm().get::<Light>(lamp).unwrap().on);

    let b = find(f.ecm(), "box").unwrap();
    for bad in [
        msgs::Light { name: "ghost".into(), ..Default::default() },
        msgs::Light { id: b.0 as u32, ..Default::default() },
        msgs::Light { name: "lamp".into(), r#type: 9, ..Default::default() },
        msgs::Light::default(),
    ] {
        assert!(!call(&mut f, "light_config/blocking", &bad).ok(), "{bad:?} was accepted");
    }
}

#[test]
fn set_physics_changes_the_world_physics_component_once() {
    let changes = Arc::new(Mutex::new(Vec::new()));
    let log = changes.clone();
    let mut f = troupe::fixture::TestFixture::from_sdf(BOX_WORLD)
        .unwrap()
        .on_post_update(move |_info, ecm| {
            use plugin_api::EcmRead;
            let w = ecm.entities_with(&[<plugin_api::components::World as plugin_api::Component>::ID])[0];
            log.lock().unwrap().push(ecm.change::<Physics>(w));
            Ok(())
        })
        .finalize()
        .unwrap();
    let w = world(f.ecm());
    let before = f.ecm().get::<Physics>(w).unwrap_or_default();
    // The first step reports everything loaded as changed: count from after it.
    f.run(1).unwrap();
    changes.lock().unwrap().clear();
    let req = msgs::Physics { max_step_size: 0.004, real_time_factor: 2.0, ..Default::default() };
    assert!(call(&mut f, "set_physics/blocking", &req).ok());
    let after = f.ecm().get::<Physics>(w).unwrap();
    assert_eq!((after.max_step_size, after.real_time_factor), (0.004, 2.0));
    assert_eq!(after.name, before.name);
    assert_eq!(changes.lock().unwrap().iter().filter(|c| **c == Change::OneTime).count(), 1);
    // Zeros keep the current values; negative or non-finite ones are refused.
    assert!(call(&mut f, "set_physics/blocking", &msgs::Physics { real_time_factor: 0.5, ..Default::default() }).ok());
    let after = f.ecm().get::<Physics>(w).unwrap();
    assert_eq!((after.max_step_size, after.real_time_factor), (0.004, 0.5));
    // Out of the clock's range (1e300 s overflowed it; below 1 ns it stands still).
    for bad in [-0.001, f64::NAN, f64::INFINITY, 1e300, 1e6, 1e-12] {
        assert!(!call(&mut f, "set_physics/blocking", &msgs::Physics { max_step_size: bad, ..Default::default() }).ok());
    }
    assert!(!call(&mut f, "set_physics/blocking", &msgs::Physics { real_time_factor: -1.0, ..Default::default() }).ok());
    assert_eq!(f.ecm().get::<Physics>(w).unwrap(), after);
}

#[test]
fn system_add_emits_the_add_system_event_with_the_entity_resolved() {
    let events_seen = Arc::new(Mutex::new(Vec::<Vec<u8>>::new()));
    let log = events_seen.clone();
    let mut f = troupe::fixture::TestFixture::from_sdf(BOX_WORLD)
        .unwrap()
        .on_configure(move |ctx| {
            let log = log.clone();
            ctx.host.subscribe(events::ADD_SYSTEM, move |_, payload| {
                log.lock().unwrap().push(payload.to_vec());
                Ok(())
            });
            Ok(())
        })
        .finalize()
        .unwrap();
    let b = find(f.ecm(), "box").unwrap();
    let plugin = msgs::Plugin {
        name: "troupe::Template".into(),
        filename: "troupe_template".into(),
        innerxml: "<every>5</every>".into(),
        ..Default::default()
    };
    let req = msgs::EntityPluginV {
        entity: Some(msgs::Entity {
            name: "box".into(),
            r#type: msgs::entity::Type::Model as i32,
            ..Default::default()
        }),
        plugins: vec![plugin.clone()],
        ..Default::default()
    };
    let called = call(&mut f, "entity/system/add/blocking", &req);
    assert!(called.ok());
    let seen = events_seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "one event before the answer");
    let sent = msgs::EntityPluginV::decode(seen[0].as_slice()).unwrap();
    assert_eq!(sent.entity.unwrap().id, b.0, "the name was resolved to the box's id");
    assert_eq!(sent.plugins, vec![plugin.clone()]);
    for bad in [
        msgs::EntityPluginV {
            entity: Some(msgs::Entity { id: 999_999, ..Default::default() }),
            plugins: vec![plugin.clone()],
            ..Default::default()
        },
        msgs::EntityPluginV { plugins: vec![], ..Default::default() },
        msgs::EntityPluginV {
            plugins: vec![msgs::Plugin { name: "x".into(), ..Default::default() }],
            ..Default::default()
        },
    ] {
        assert!(!call(&mut f, "entity/system/add/blocking", &bad).ok(), "{bad:?} was accepted");
    }
    assert_eq!(events_seen.lock().unwrap().len(), 1, "refused requests emit nothing");
}

#[test]
fn light_config_is_also_a_topic() {
    let mut f = fixture(BOX_WORLD);
    let lamp = find(f.ecm(), "lamp").unwrap();
    let node = f.server().node().clone();
    let publisher =
        node.advertise("/world/w/light_config", "gz.msgs.Light", troupe::transport::TopicOptions::default()).unwrap();
    let msg = msgs::Light { name: "lamp".into(), intensity: 4.0, range: 2.0, ..Default::default() };
    assert!(node.publish(publisher, &msg.encode_to_vec()).unwrap());
    f.run(1).unwrap();
    let l = f.ecm().get::<Light>(lamp).unwrap();
    assert_eq!((l.intensity, l.range), (4.0, 2.0));
    // A message for no light is logged and skipped; the world steps on.
    let ghost = msgs::Light { name: "ghost".into(), ..Default::default() };
    assert!(node.publish(publisher, &ghost.encode_to_vec()).unwrap());
    f.run(2).unwrap();
    assert_eq!(f.ecm().get::<Light>(lamp).unwrap(), l);
}
