//! `/world/<w>/level/set_performer` (StringMsg -> Boolean), over the server's in-process
//! transport node while the fixture steps.

use crate::support::{load, seed_world_path, Levels};
use plugin_api::components::{Geometry, Performer, PerformerRef};
use plugin_api::math::Vec3;
use plugin_api::msgs::{Boolean, StringMsg};
use plugin_api::prost::Message;
use plugin_api::{Component, Which};
use std::time::{Duration, Instant};
use troupe::transport::Answer;

/// Calls set_performer with `name` from another thread while stepping; answers the
/// Boolean's data (false for a call answered false).
fn set_performer(w: &mut Levels, name: &str) -> bool {
    let node = w.f.server().node().clone();
    let bytes = StringMsg { data: name.into(), ..Default::default() }.encode_to_vec();
    let handle =
        std::thread::spawn(move || node.call("/world/default/level/set_performer", &bytes, Duration::from_secs(20)));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !handle.is_finished() {
        assert!(Instant::now() < deadline, "set_performer never answered");
        w.f.run(1).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    match handle.join().unwrap().expect("the call was served") {
        Answer::Ok(bytes) => {
            let data = Boolean::decode(bytes.as_slice()).unwrap().data;
            assert!(data, "answered true with data false");
            true
        }
        Answer::Failed(_) => false,
        Answer::Error(e) => panic!("set_performer: {e}"),
    }
}

fn seed() -> Levels {
    let mut w = load(&std::fs::read_to_string(seed_world_path()).unwrap(), true);
    w.f.run(1).unwrap();
    w.goto("R1", 100.0, 100.0);
    w.goto("R2", 100.0, 100.0);
    w.goto("R3", 100.0, -100.0);
    assert!(!w.level_loaded("L1") && !w.level_loaded("L2") && !w.level_loaded("L3"));
    w
}

#[test]
fn a_model_made_a_performer_loads_levels() {
    let mut w = seed();
    w.goto("R4", 5.0, 5.0);
    assert!(!w.level_loaded("L2"), "R4 is not a performer yet");
    assert!(set_performer(&mut w, "R4"));
    w.f.run(1).unwrap();
    assert!(w.level_loaded("L2"));
    assert!(w.models().contains("M2"));
    let ecm = w.ecm();
    let perf = ecm
        .query(Which::ALL, &[Performer::ID])
        .into_iter()
        .find(|p| ecm.get::<PerformerRef>(*p).is_some_and(|r| r.0 == "R4"))
        .expect("a performer for R4");
    assert_eq!(ecm.parent(perf), w.id("R4"));
    assert_eq!(
        ecm.get::<Geometry>(perf),
        Some(Geometry::Box { size: Vec3::new(1.0, 1.0, 1.0) }),
        "sized by R4's collision"
    );
    assert_eq!(w.performer_levels("perf_R4"), ["L2"]);
    w.goto("R4", 100.0, 0.0);
    assert!(!w.level_loaded("L2"));
}

#[test]
fn unknown_models_and_performers_already_are_answered_false() {
    let mut w = seed();
    assert!(!set_performer(&mut w, "no_such_model"), "a name that does not exist");
    assert!(!set_performer(&mut w, ""), "an empty name");
    assert!(!set_performer(&mut w, "R1"), "R1 is a performer already");
    assert!(!set_performer(&mut w, "sun"), "a light is not a model");
    // Nothing is retried: a later model of that name is not made a performer by itself.
    w.f.run(5).unwrap();
    assert_eq!(w.ecm().query(Which::ALL, &[Performer::ID]).len(), 3);
}
