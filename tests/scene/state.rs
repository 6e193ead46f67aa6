//! The `state` service and topic.

use crate::support::{call, decode, fixture, run_until, subscribe, SPAWNED};
use plugin_api::components::{Name, World};
use plugin_api::math::Pose;
use plugin_api::msgs::SerializedStepMap;
use plugin_api::{Change, Component, EcmRead, EntityId};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

fn iteration(m: &SerializedStepMap) -> u64 {
    m.stats.as_ref().expect("stats").iterations
}

#[test]
fn the_service_answers_the_full_state() {
    let mut f = fixture("").finalize().unwrap();
    f.run(10).unwrap();
    let step: SerializedStepMap = call(&mut f, "/world/w/state");
    let stats = step.stats.as_ref().expect("stats");
    assert!(stats.iterations > 10 && !stats.paused, "{stats:?}");
    assert_eq!(stats.model_count, 3, "ground, cart and its mast");
    let state = step.state.as_ref().expect("a state");
    assert_eq!(state.entities.len() as u64, f.ecm().entity_count() as u64, "every entity");
    assert!(state.has_one_time_component_changes, "a full state delivers every value");
    let ecm = f.ecm();
    let cart = ecm
        .query(plugin_api::Which::ALL, &[Name::ID])
        .into_iter()
        .find(|e| ecm.get::<Name>(*e).unwrap().0 == "cart")
        .unwrap();
    let entry = &state.entities[&cart.0];
    assert_eq!(entry.components[&Name::ID.0].component, Name("cart".into()).to_bytes());
    assert_eq!(entry.components[&Pose::ID.0].component, ecm.get::<Pose>(cart).unwrap().to_bytes());
    let header = state.header.as_ref().expect("a header");
    assert_eq!(header.data[0].key, "iteration");
    assert_eq!(header.data[0].value, [stats.iterations.to_string()]);
}

#[test]
fn the_topic_starts_full_then_carries_one_time_changes_in_their_step() {
    let cell: Arc<Mutex<Option<EntityId>>> = Arc::new(Mutex::new(None));
    let seen = cell.clone();
    let mut f = fixture("<state_hertz>1</state_hertz>")
        .on_pre_update(move |info, ecm| {
            let world = ecm.entities_with(&[World::ID])[0];
            match info.iterations {
                30 => *seen.lock().unwrap() = Some(ecm.create_from_sdf(SPAWNED, world)?),
                35 => {
                    let cart = ecm.child_by_name(world, "cart").unwrap();
                    ecm.set(cart, &Pose::from_xyz_rpy(7.0, 0.0, 0.0, 0.0, 0.0, 0.0), Change::OneTime)?;
                }
                40 => {
                    ecm.request_remove(seen.lock().unwrap().unwrap());
                }
                _ => {}
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    let sub = subscribe(&mut f, "/world/w/state", "gz.msgs.SerializedStepMap");
    f.run(50).unwrap();
    let got: Vec<SerializedStepMap> = decode(&sub.take());
    assert_eq!(sub.missed(), 0);
    // Full for the new subscriber at the first step.
    assert_eq!(iteration(&got[0]), 1);
    let first = got[0].state.as_ref().unwrap();
    assert!(first.entities.len() >= 11, "the full state: {} entities", first.entities.len());
    // At 1 Hz nothing periodic goes out in 50 fast steps: only the three changes.
    let at: Vec<u64> = got[1..].iter().map(iteration).collect();
    assert_eq!(at, [30, 35, 40], "one message per one-time change, in its step");
    let spawned = cell.lock().unwrap().unwrap();
    let created = got[1].state.as_ref().unwrap();
    assert!(created.has_one_time_component_changes);
    let entry = &created.entities[&spawned.0];
    assert_eq!(entry.components[&Name::ID.0].component, Name("spawned".into()).to_bytes());
    let moved = got[2].state.as_ref().unwrap();
    let cart_pose = moved.entities.values().find_map(|e| e.components.get(&Pose::ID.0)).expect("the cart's pose");
    assert_eq!(cart_pose.component, Pose::from_xyz_rpy(7.0, 0.0, 0.0, 0.0, 0.0, 0.0).to_bytes());
    let removed = got[3].state.as_ref().unwrap();
    assert!(removed.entities[&spawned.0].remove, "{removed:?}");
}

#[test]
fn periodic_changes_go_out_at_state_hertz_and_a_request_resends_the_full_state() {
    // Something moves every step, flagged periodic.
    let mut f = fixture("<state_hertz>30</state_hertz>")
        .on_pre_update(|info, ecm| {
            let world = ecm.entities_with(&[World::ID])[0];
            let cart = ecm.child_by_name(world, "cart").unwrap();
            let x = info.iterations as f64;
            ecm.set(cart, &Pose::from_xyz_rpy(x, 0.0, 0.0, 0.0, 0.0, 0.0), Change::Periodic)?;
            Ok(())
        })
        .finalize()
        .unwrap();
    let sub = subscribe(&mut f, "/world/w/state", "gz.msgs.SerializedStepMap");
    let got: Vec<SerializedStepMap> = decode(&run_until(&mut f, &sub, |g| g.len() >= 3));
    for m in &got[1..3] {
        let state = m.state.as_ref().unwrap();
        assert!(!state.has_one_time_component_changes);
        assert_eq!(state.entities.len(), 1, "only the cart changed: {state:?}");
        let pose = state.entities.values().next().unwrap().components[&Pose::ID.0].component.clone();
        let x = iteration(m) as f64;
        assert_eq!(pose, Pose::from_xyz_rpy(x, 0.0, 0.0, 0.0, 0.0, 0.0).to_bytes(), "the latest value of its step");
    }
    assert!(
        iteration(&got[2]) > iteration(&got[1]) + 1,
        "throttled: {:?}",
        got.iter().map(iteration).collect::<Vec<_>>()
    );
    sub.take();
    let _: SerializedStepMap = call(&mut f, "/world/w/state");
    let after: Vec<SerializedStepMap> = decode(&run_until(&mut f, &sub, |g| {
        decode::<SerializedStepMap>(g).iter().any(|m| m.state.as_ref().is_some_and(|s| s.entities.len() as u64 > 10))
    }));
    assert!(!after.is_empty());
}

#[test]
fn while_paused_the_topic_sends_stats_at_half_the_rate_and_changes_at_once() {
    let spawn_now = Arc::new(AtomicBool::new(false));
    let go = spawn_now.clone();
    let mut f = fixture("<state_hertz>20</state_hertz>")
        .on_pre_update(move |_info, ecm| {
            if go.swap(false, Ordering::SeqCst) {
                let world = ecm.entities_with(&[World::ID])[0];
                ecm.create_from_sdf(SPAWNED, world)?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(10).unwrap();
    f.runner_mut().clock.paused = true;
    let sub = subscribe(&mut f, "/world/w/state", "gz.msgs.SerializedStepMap");
    let start = Instant::now();
    let got: Vec<SerializedStepMap> = decode(&run_until(&mut f, &sub, |g| g.len() >= 4));
    let elapsed = start.elapsed().as_secs_f64();
    assert!(got.iter().all(|m| m.stats.as_ref().unwrap().paused && iteration(m) == 10), "paused at 10");
    assert!(got[0].state.is_some(), "full for the new subscriber");
    assert!(got[1..].iter().all(|m| m.state.is_none()), "then the stats alone");
    // Three periods of 1/10 s (half of 20 Hz) between the first and the fourth.
    assert!(elapsed >= 0.29, "4 messages in {elapsed:.3} s");
    // A model created while paused goes out in that iteration, not at the next period.
    spawn_now.store(true, Ordering::SeqCst);
    f.run(1).unwrap();
    let now: Vec<SerializedStepMap> = decode(&sub.take());
    assert_eq!(now.len(), 1);
    let state = now[0].state.as_ref().expect("the change");
    assert!(state.has_one_time_component_changes);
    assert!(state
        .entities
        .values()
        .any(|e| e.components.get(&Name::ID.0).is_some_and(|c| c.component == Name("spawned".into()).to_bytes())));
}
