//! The runner through the public test fixture: in-process callbacks and real plugin
//! libraries, no child processes.

use plugin_api::components::{Gravity, Model, Name};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{events, Change, ComponentTypeId, EcmRead, EcmView, EntityId, UpdateInfo};
use std::sync::{Arc, Mutex};
use troupe::fixture::TestFixture;

fn world(body: &str) -> String {
    format!(
        r#"<?xml version="1.0"?><sdf version="1.9"><world name="w">
        <physics><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
        {body}</world></sdf>"#
    )
}

/// No config plugins: these tests are about the runner, not the default system set.
fn no_config() {
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
}

type PostHook = Box<dyn FnMut(&UpdateInfo, &EcmView<'_>) -> plugin_api::Result + Send>;

fn recorder() -> (Arc<Mutex<Vec<UpdateInfo>>>, PostHook) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let hook: PostHook = Box::new(move |info: &UpdateInfo, _: &EcmView<'_>| {
        s.lock().unwrap().push(*info);
        Ok(())
    });
    (seen, hook)
}

#[test]
fn time_follows_gz_semantics_running_and_paused() {
    no_config();
    let (seen, hook) = recorder();
    let mut f = TestFixture::from_sdf(&world("")).unwrap().on_post_update(hook).finalize().unwrap();
    f.run(100).unwrap();
    {
        let seen = seen.lock().unwrap();
        let first = seen[0];
        assert_eq!(
            (first.sim_time_ns, first.dt_ns, first.iterations),
            (1_000_000, 1_000_000, 1),
            "sim time is after the step"
        );
        assert_eq!((seen[99].sim_time_ns, seen[99].iterations), (100_000_000, 100));
    }
    f.runner_mut().clock.paused = true;
    f.run(5).unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 105, "systems run while paused");
    for info in &seen[100..] {
        assert!(
            info.paused && info.dt_ns == 0 && info.iterations == 100 && info.sim_time_ns == 100_000_000,
            "{info:?}"
        );
    }
}

#[test]
fn pre_update_and_update_run_by_priority() {
    no_config();
    let plugin = |label: &str, prio: Option<i32>| {
        let p = prio.map(|p| format!("<gz:system_priority>{p}</gz:system_priority>")).unwrap_or_default();
        format!(r#"<plugin filename="troupe_testing" name="testing::Order"><label>{label}</label>{p}</plugin>"#)
    };
    let body = [plugin("a", None), plugin("b", Some(-10)), plugin("c", Some(5)), plugin("d", Some(-10))].concat();
    let mut f = TestFixture::from_sdf(&world(&body)).unwrap().finalize().unwrap();
    f.run(1).unwrap();
    let world_entity = f.runner().world_entity();
    let mut out = Vec::new();
    assert!(f.ecm().get_raw(world_entity, ComponentTypeId::of_name("testing.Order"), &mut out));
    let text = String::from_utf8_lossy(&out[4..]).to_string();
    assert_eq!(text, "b d a c ", "ascending priority, ties in load order");
}

#[test]
fn ids_are_a_pure_function_of_the_file() {
    no_config();
    let body = r#"<light name="sun" type="directional"/>
        <model name="m"><link name="l"><visual name="v"/><collision name="c"/></link>
        <joint name="j" type="fixed"><parent>world</parent><child>l</child></joint></model>"#;
    let a = TestFixture::from_sdf(&world(body)).unwrap().finalize().unwrap();
    let b = TestFixture::from_sdf(&world(body)).unwrap().finalize().unwrap();
    assert_eq!(a.ecm().snapshot(), b.ecm().snapshot());
    let name = |id: u64| a.ecm().get::<Name>(EntityId(id)).map(|n| n.0);
    for (i, want) in ["w", "sun", "m", "l", "v", "c", "j"].iter().enumerate() {
        assert_eq!(name(i as u64 + 1).as_deref(), Some(*want), "depth-first document order");
    }
}

#[test]
fn reset_restores_the_loaded_world_and_never_reuses_ids() {
    no_config();
    let spawned = Arc::new(Mutex::new(Vec::new()));
    let s = spawned.clone();
    let mut f = TestFixture::from_sdf(&world(r#"<model name="m"><link name="l"/></model>"#))
        .unwrap()
        .on_pre_update(move |info, ecm| {
            if info.iterations == 3 {
                let id = ecm.create_from_sdf(r#"<model name="extra"><link name="l"/></model>"#, EntityId(1))?;
                s.lock().unwrap().push(id);
                // The loaded model goes too, and must come back with every component.
                ecm.request_remove(EntityId(2));
                ecm.set(EntityId(1), &Gravity(Vec3::new(0.0, 0.0, -1.6)), Change::OneTime)?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    let before = f.ecm().snapshot();
    f.run(5).unwrap();
    let extra = spawned.lock().unwrap()[0];
    assert!(extra.0 > 3, "run-time ids start above the file's");
    assert!(f.ecm().has_entity(extra));
    assert!(!f.ecm().has_entity(EntityId(2)) && !f.ecm().has_entity(EntityId(3)), "model and link removed");
    f.runner().events().emit(events::RESET, &[]);
    f.run(1).unwrap(); // delivers the reset event
    f.run(2).unwrap(); // the reset iteration, then one step
    assert!(!f.ecm().has_entity(extra), "entities spawned since load are gone");
    assert_eq!(f.runner().clock.iterations(), 1, "time rewound, then one step");
    assert_eq!(f.ecm().snapshot(), before, "every loaded entity and component is back");
    let again = f.server().runners_mut()[0].ecm.create_entity();
    assert!(again.0 > extra.0, "ids are not reused after a reset");
}

#[test]
fn systems_of_spawned_models_load_next_step_and_go_with_their_model() {
    no_config();
    let spawned = Arc::new(Mutex::new(None));
    let s = spawned.clone();
    let mut f = TestFixture::from_sdf(&world(""))
        .unwrap()
        .on_pre_update(move |info, ecm| {
            if info.iterations == 1 {
                let sdf = r#"<model name="robot"><link name="l"/>
                    <plugin filename="troupe_testing" name="testing::Noop"/></model>"#;
                *s.lock().unwrap() = Some(ecm.create_from_sdf(sdf, EntityId(1))?);
            }
            if info.iterations == 3 {
                let robot = s.lock().unwrap().expect("spawned");
                ecm.request_remove(robot);
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    assert_eq!(f.runner().system_labels().len(), 1);
    f.run(2).unwrap();
    let labels = f.runner().system_labels();
    assert_eq!(labels.len(), 2, "the model's plugin loaded at the next step: {labels:?}");
    assert!(labels[1].contains("testing::Noop"));
    f.run(1).unwrap();
    assert_eq!(f.runner().system_labels().len(), 1, "dropped with its model");
    assert!(f.ecm().query(plugin_api::Which::ALL, &[<Model as plugin_api::Component>::ID]).is_empty());
}

#[test]
fn custom_events_reach_subscribers_at_the_end_of_the_step_and_stop_stops() {
    no_config();
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    let mut f = TestFixture::from_sdf(&world(""))
        .unwrap()
        .on_configure(move |ctx| {
            let g = g.clone();
            ctx.host.subscribe("test.ping", move |name, payload| {
                g.lock().unwrap().push((name.to_string(), payload.to_vec()));
                Ok(())
            });
            let host = ctx.host.clone();
            ctx.host.subscribe("test.ping", move |_, payload| {
                if payload == [2] {
                    host.emit(events::STOP, &[]);
                }
                Ok(())
            });
            Ok(())
        })
        .finalize()
        .unwrap();
    f.runner().events().emit("test.ping", &[1]);
    f.run(1).unwrap();
    assert_eq!(*got.lock().unwrap(), vec![("test.ping".to_string(), vec![1])]);
    assert!(!f.runner().stop_requested());
    f.runner().events().emit("test.ping", &[2]);
    f.run(2).unwrap();
    assert!(f.runner().stop_requested(), "a system can end the run with the stop event");
}

#[test]
fn worlds_of_one_file_step_in_lockstep() {
    no_config();
    let two = r#"<sdf version="1.9"><world name="a"><physics><max_step_size>0.001</max_step_size></physics></world>
        <world name="b"><physics><max_step_size>0.002</max_step_size></physics></world></sdf>"#;
    let mut f = TestFixture::from_sdf(two).unwrap().finalize().unwrap();
    f.run(10).unwrap();
    let runners = f.server().runners();
    assert_eq!(runners.len(), 2);
    assert_eq!((runners[0].clock.iterations(), runners[1].clock.iterations()), (10, 10));
    assert_eq!(runners[1].clock.info().sim_time_ns, 20_000_000, "each world keeps its own step size");
}

#[test]
fn a_panicking_system_is_reported_with_name_phase_and_message() {
    no_config();
    let body =
        r#"<plugin filename="troupe_testing" name="testing::Panic"><phase>post_update</phase><at>2</at></plugin>"#;
    let mut f = TestFixture::from_sdf(&world(body)).unwrap().finalize().unwrap();
    f.run(1).unwrap();
    let err = f.run(1).unwrap_err().to_string();
    for part in ["testing::Panic", "panicked in post_update", "deliberate panic in post_update", "<fixture>:3"] {
        assert!(err.contains(part), "{part:?} missing from: {err}");
    }
}

#[test]
fn writes_flag_changes_for_observers() {
    no_config();
    let mut f = TestFixture::from_sdf(&world(r#"<model name="m"><link name="l"/></model>"#))
        .unwrap()
        .on_update(|info, ecm| {
            if info.iterations == 2 {
                let m = ecm.entity_by_name("m").expect("model m");
                let mut p: Pose = ecm.get(m).unwrap_or_default();
                p.position.z += 1.0;
                ecm.set(m, &p, Change::Periodic)?;
            }
            Ok(())
        })
        .on_post_update(|info, ecm| {
            let m = ecm.entity_by_name("m").expect("model m");
            let change = ecm.change::<Pose>(m);
            let expected = if info.iterations == 2 { Change::Periodic } else { Change::None };
            if info.iterations > 1 && change != expected {
                return Err(plugin_api::Error::msg(format!("iteration {}: {change:?}", info.iterations)));
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(4).unwrap();
    assert_eq!(f.ecm().get::<Pose>(EntityId(2)).unwrap().position.z, 1.0);
}
