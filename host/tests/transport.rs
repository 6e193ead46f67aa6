//! The transport inside one server, through the test fixture: world control, step size
//! changes, systems added while running, and a plugin's own services and topics through
//! the real `troupe_testing` library (an in-process node: no sockets).

use plugin_api::components::Physics;
use plugin_api::components::{Model, Name};
use plugin_api::msgs::{
    entity, Boolean, Empty, Entity, EntityPluginV, Plugin, StringMsg, Time, WorldControl, WorldReset, WorldStatistics,
};
use plugin_api::prost::Message;
use plugin_api::{events, Change, Component, EcmRead, Which};
use std::time::Duration;
use troupe::fixture::TestFixture;
use troupe::transport::{Answer, TopicOptions};

const WAIT: Duration = Duration::from_secs(30);

fn world(body: &str) -> String {
    format!(
        r#"<?xml version="1.0"?><sdf version="1.9"><world name="w">
        <physics><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
        {body}</world></sdf>"#
    )
}

fn no_config() {
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
}

/// Calls a service of the fixture's node (answered at once: the world's own services are
/// served on the caller's thread).
fn call(f: &mut TestFixture, service: &str, req: &impl Message) -> Answer {
    f.server().node().call(service, &req.encode_to_vec(), WAIT).unwrap()
}

fn control(f: &mut TestFixture, req: WorldControl) {
    let answer = call(f, "/world/w/control", &req);
    assert_eq!(answer, Answer::Ok(Boolean { data: true, ..Default::default() }.encode_to_vec()));
}

#[test]
fn control_requests_apply_at_the_next_step_with_gz_semantics() {
    no_config();
    let mut f = TestFixture::from_sdf(&world("")).unwrap().finalize().unwrap();
    let stats = f.server().node().subscribe("/world/w/stats", "gz.msgs.WorldStatistics").unwrap();
    f.run(3).unwrap();
    assert_eq!(f.runner().clock.iterations(), 3);
    control(&mut f, WorldControl { pause: true, ..Default::default() });
    assert!(!f.runner().clock.paused, "nothing changes before the next step boundary");
    f.run(5).unwrap();
    assert_eq!((f.runner().clock.iterations(), f.runner().clock.paused), (3, true));
    // Seven steps while paused: seven iterations, then paused again.
    control(&mut f, WorldControl { pause: true, multi_step: 7, ..Default::default() });
    f.run(20).unwrap();
    assert_eq!((f.runner().clock.iterations(), f.runner().clock.paused), (10, true));
    // step / multi_step while running are ignored (they only act when paused), as gz-sim.
    control(&mut f, WorldControl { pause: false, multi_step: 7, ..Default::default() });
    f.run(4).unwrap();
    assert_eq!((f.runner().clock.iterations(), f.runner().clock.paused), (14, false));
    // Run to 20 ms and pause there.
    control(&mut f, WorldControl { run_to_sim_time: Some(Time { sec: 0, nsec: 20_000_000 }), ..Default::default() });
    f.run(50).unwrap();
    assert_eq!(f.runner().clock.info().sim_time_ns, 20_000_000);
    assert!(f.runner().clock.paused);
    // Rewinding the clock only.
    control(
        &mut f,
        WorldControl {
            pause: true,
            reset: Some(WorldReset { time_only: true, ..Default::default() }),
            ..Default::default()
        },
    );
    f.run(1).unwrap();
    assert_eq!(f.runner().clock.info().sim_time_ns, 0);
    // The stats topic told the story (throttled to 10 Hz: at least the first message).
    let first = stats.take().into_iter().next().expect("a stats message");
    let first = WorldStatistics::decode(first.payload.as_slice()).unwrap();
    assert_eq!(first.iterations, 1);
    // A request that is not a WorldControl is answered false; the world is untouched.
    let bad = f.server().node().call("/world/w/control", &[0xff, 0xff], WAIT).unwrap();
    assert!(matches!(bad, Answer::Failed(_)), "{bad:?}");
    f.run(2).unwrap();
    assert!(f.runner().clock.paused);
}

#[test]
fn a_changed_physics_component_sets_the_step_size_from_the_next_step() {
    no_config();
    let mut f = TestFixture::from_sdf(&world(""))
        .unwrap()
        .on_pre_update(|info, ecm| {
            if info.iterations == 3 {
                let world = ecm.entity_by_name("w").unwrap();
                let mut physics = ecm.get::<Physics>(world).unwrap();
                physics.max_step_size = 0.004;
                ecm.set(world, &physics, Change::OneTime)?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(5).unwrap();
    // Steps 1-3 of 1 ms, then 4 and 5 of 4 ms.
    assert_eq!(f.runner().clock.info().sim_time_ns, 3_000_000 + 2 * 4_000_000);
}

#[test]
fn a_plugin_serves_and_relays_through_the_transport() {
    no_config();
    let echo = r#"<plugin filename="troupe_testing" name="testing::Echo">
        <service>/world/w/shout</service><input>/in</input><output>/out</output></plugin>"#;
    let mut f = TestFixture::from_sdf(&world(echo)).unwrap().finalize().unwrap();
    let node = f.server().node().clone();
    // Requests wait for the plugin's pre_update: call from another thread while stepping.
    let caller = {
        let node = node.clone();
        std::thread::spawn(move || {
            let req = |text: &str| StringMsg { data: text.into(), ..Default::default() }.encode_to_vec();
            (
                node.call("/world/w/shout", &req("hi"), WAIT).unwrap(),
                node.call("/world/w/shout", &req(""), WAIT).unwrap(),
            )
        })
    };
    while !caller.is_finished() {
        f.run(1).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    let (loud, empty) = caller.join().unwrap();
    assert_eq!(loud, Answer::Ok(StringMsg { data: "HI".into(), ..Default::default() }.encode_to_vec()));
    assert!(matches!(empty, Answer::Failed(_)), "an empty text is answered false: {empty:?}");
    let out = node.subscribe("/out", "gz.msgs.StringMsg").unwrap();
    let input = node.advertise("/in", "gz.msgs.StringMsg", TopicOptions::default()).unwrap();
    node.publish(input, &StringMsg { data: "relay".into(), ..Default::default() }.encode_to_vec()).unwrap();
    f.run(1).unwrap();
    let got: Vec<String> = out.take().iter().map(|m| StringMsg::decode(m.payload.as_slice()).unwrap().data).collect();
    assert_eq!(got, vec!["relay".to_string()]);
    // A reset makes the system afresh; its service is offered again, not refused as taken.
    f.runner_mut().request_reset();
    f.run(2).unwrap();
    let caller = std::thread::spawn(move || {
        node.call("/world/w/shout", &StringMsg { data: "again".into(), ..Default::default() }.encode_to_vec(), WAIT)
    });
    while !caller.is_finished() {
        f.run(1).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        caller.join().unwrap().unwrap(),
        Answer::Ok(StringMsg { data: "AGAIN".into(), ..Default::default() }.encode_to_vec())
    );
}

#[test]
fn systems_added_while_running_load_and_are_listed() {
    no_config();
    let mut f =
        TestFixture::from_sdf(&world(r#"<model name="m"><link name="l"/></model>"#)).unwrap().finalize().unwrap();
    let listed = |f: &mut TestFixture| {
        let answer = call(f, "/world/w/system/info", &Empty::default());
        let Answer::Ok(bytes) = answer else { panic!("{answer:?}") };
        EntityPluginV::decode(bytes.as_slice()).unwrap().plugins.into_iter().map(|p| p.name).collect::<Vec<_>>()
    };
    assert!(!listed(&mut f).contains(&"testing::Order".to_string()));
    let ecm = f.ecm();
    let model = ecm
        .query(Which::ALL, &[Model::ID])
        .into_iter()
        .find(|e| ecm.get::<Name>(*e).is_some_and(|n| n.0 == "m"))
        .unwrap();
    let add = |entity: u64| EntityPluginV {
        entity: Some(Entity { id: entity, r#type: entity::Type::Model as i32, ..Default::default() }),
        plugins: vec![Plugin {
            name: "testing::Order".into(),
            filename: "troupe_testing".into(),
            innerxml: "<label>added</label>".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let events = f.runner().events().clone();
    events.emit(events::ADD_SYSTEM, &add(model.0).encode_to_vec());
    // An entity that does not exist is refused with a warning; nothing loads.
    events.emit(events::ADD_SYSTEM, &add(999_999).encode_to_vec());
    events.emit(events::ADD_SYSTEM, b"\xff\xff");
    f.run(3).unwrap();
    let names = listed(&mut f);
    assert_eq!(names.iter().filter(|n| *n == "testing::Order").count(), 1, "{names:?}");
}

#[test]
fn control_state_applies_its_state_at_the_next_step() {
    use plugin_api::math::Pose;
    use plugin_api::msgs::WorldControlState;
    no_config();
    let mut f = TestFixture::from_sdf(&world(r#"<model name="m"><pose>0 0 1 0 0 0</pose><link name="l"/></model>"#))
        .unwrap()
        .on_pre_update(|info, ecm| {
            if info.iterations == 2 {
                let m = ecm.entity_by_name("m").unwrap();
                ecm.set(m, &Pose::from_xyz_rpy(0.0, 0.0, 5.0, 0.0, 0.0, 0.0), Change::OneTime)?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    let initial = troupe::state::full_state(f.ecm(), troupe::state::Stamp::default());
    let z = |f: &TestFixture| {
        let ecm = f.ecm();
        let m = ecm
            .query(Which::ALL, &[Model::ID])
            .into_iter()
            .find(|e| ecm.get::<Name>(*e).is_some_and(|n| n.0 == "m"))
            .unwrap();
        ecm.get::<Pose>(m).unwrap().position.z
    };
    f.run(3).unwrap();
    assert_eq!(z(&f), 5.0);
    let req = WorldControlState {
        world_control: Some(WorldControl { pause: true, ..Default::default() }),
        state: Some(initial),
        ..Default::default()
    };
    control_state(&mut f, req);
    f.run(1).unwrap();
    assert_eq!(z(&f), 1.0, "the state of the request was applied");
    assert!(f.runner().clock.paused, "and its control part");
}

fn control_state(f: &mut TestFixture, req: plugin_api::msgs::WorldControlState) {
    let answer = call(f, "/world/w/control/state", &req);
    assert_eq!(answer, Answer::Ok(Boolean { data: true, ..Default::default() }.encode_to_vec()));
}
