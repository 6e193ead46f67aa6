//! Recording a run and playing it back through the test fixture: the played-back world goes
//! through the same poses at the same iterations, seeks land on the recorded state, and bad
//! logs are clear errors.

use plugin_api::components::{Model, Name};
use plugin_api::math::{Pose, Quat, Vec3};
use plugin_api::{Change, Component, EcmRead, EcmView, EntityId, UpdateInfo};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use troupe::fixture::TestFixture;
use troupe::server::ServerOptions;

const WORLD: &str = r#"<?xml version="1.0"?><sdf version="1.9"><world name="played">
    <physics><max_step_size>0.002</max_step_size><real_time_factor>0</real_time_factor></physics>
    <model name="mover"><link name="body"><pose>0 0 0.5 0 0 0</pose></link></model>
    <model name="doomed"><link name="l"/></model>
    </world></sdf>"#;

/// What `pose/info` would carry at one step: the clock and every pose, by entity.
#[derive(Clone, Debug, PartialEq)]
struct Frame {
    iterations: u64,
    sim_time_ns: i64,
    poses: Vec<(EntityId, String, Pose)>,
}

fn frame(info: &UpdateInfo, ecm: &EcmView<'_>) -> Frame {
    let poses = ecm
        .entities_with(&[Pose::ID])
        .into_iter()
        .map(|e| (e, ecm.get::<Name>(e).map(|n| n.0).unwrap_or_default(), ecm.get::<Pose>(e).unwrap_or_default()))
        .collect();
    Frame { iterations: info.iterations, sim_time_ns: info.sim_time_ns, poses }
}

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("troupe-playback-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn join(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Records `steps` steps of a world where one model moves and turns every step, a model is
/// spawned at iteration 5 and another removed at iteration 8, with a keyframe every 4 steps;
/// answers the frames the original run saw.
fn record(dir: &Scratch, steps: u64) -> (PathBuf, Vec<Frame>) {
    let log = dir.join("run.tlog");
    let config = dir.join("record.config");
    std::fs::write(
        &config,
        format!(
            "<server_config><plugins/><record><record_path>{}</record_path><keyframe_interval>4</keyframe_interval></record></server_config>",
            log.display()
        ),
    )
    .unwrap();
    let frames = Arc::new(Mutex::new(Vec::new()));
    let seen = frames.clone();
    let opts = ServerOptions {
        world_text: Some((WORLD.to_string(), "<playback test>".into())),
        run: true,
        config: Some(config),
        ..Default::default()
    };
    let mut f = TestFixture::with_options(opts)
        .unwrap()
        .on_pre_update(|info, ecm| {
            let mover = ecm.entity_by_name("mover").expect("mover");
            let t = info.iterations as f64;
            let pose =
                Pose { position: Vec3::new(0.1 * t, -0.05 * t, 0.0), rotation: Quat::from_rpy(0.0, 0.0, 0.2 * t) };
            ecm.set(mover, &pose, Change::Periodic)?;
            if info.iterations == 5 {
                ecm.create_from_sdf(
                    r#"<model name="late"><pose>1 2 3 0 0 0</pose><link name="l"/></model>"#,
                    EntityId(1),
                )?;
            }
            if info.iterations == 8 {
                let doomed = ecm.entity_by_name("doomed").expect("doomed");
                ecm.request_remove(doomed);
            }
            Ok(())
        })
        .on_post_update(move |info, ecm| {
            seen.lock().unwrap().push(frame(info, ecm));
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(steps).unwrap();
    f.runner_mut().flush_recording().unwrap();
    let frames = frames.lock().unwrap().clone();
    (log, frames)
}

fn player(log: &PathBuf) -> (TestFixture, Arc<Mutex<Vec<Frame>>>) {
    let frames = Arc::new(Mutex::new(Vec::new()));
    let seen = frames.clone();
    let f = TestFixture::playback(log)
        .unwrap_or_else(|e| panic!("{e}"))
        .on_post_update(move |info, ecm| {
            seen.lock().unwrap().push(frame(info, ecm));
            Ok(())
        })
        .finalize()
        .unwrap();
    (f, frames)
}

#[test]
fn playback_goes_through_the_recorded_poses_at_the_recorded_iterations() {
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
    let dir = Scratch::new("same");
    let (log, original) = record(&dir, 12);
    assert_eq!(original.len(), 12);
    assert!(original[6].poses.iter().any(|(_, n, _)| n == "late"), "the spawned model is in the run");
    assert!(!original[9].poses.iter().any(|(_, n, _)| n == "doomed"), "the removed model is gone");

    let (mut f, played) = player(&log);
    assert_eq!(f.runner().name(), "played");
    assert_eq!(f.runner().player().map(|p| p.last_iteration()), Some(12));
    f.run(12).unwrap();
    let played = played.lock().unwrap().clone();
    assert_eq!(played.len(), original.len());
    for (i, (a, b)) in original.iter().zip(&played).enumerate() {
        assert_eq!(a, b, "step {i} differs between the run and its playback");
    }
    assert!(!f.runner().stop_requested(), "the log has not ended yet");
    f.run(1).unwrap();
    assert!(f.runner().stop_requested(), "playback stops at the end of the log");
    assert_eq!(f.runner().clock.iterations(), 12, "the world stays at the last recorded state");
}

#[test]
fn seek_lands_on_the_recorded_state_forwards_and_backwards() {
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
    let dir = Scratch::new("seek");
    let (log, original) = record(&dir, 12);
    let (mut f, played) = player(&log);
    let at = |f: &TestFixture| {
        let view_poses: Vec<(EntityId, Pose)> = f
            .ecm()
            .query(plugin_api::Which::ALL, &[Pose::ID])
            .into_iter()
            .map(|e| (e, f.ecm().get::<Pose>(e).unwrap()))
            .collect();
        (f.runner().clock.iterations(), view_poses)
    };
    let recorded = |i: usize| {
        let fr = &original[i - 1];
        (fr.iterations, fr.poses.iter().map(|(e, _, p)| (*e, *p)).collect::<Vec<_>>())
    };
    // Forwards past a keyframe (every 4 steps) and past the spawn; then one more step.
    f.seek(10).unwrap();
    assert_eq!(at(&f), recorded(10));
    f.run(1).unwrap();
    assert_eq!(played.lock().unwrap().last().cloned(), Some(original[10].clone()));
    // Backwards to before the spawn and the removal: both undone.
    f.seek(3).unwrap();
    assert_eq!(at(&f), recorded(3));
    let names: Vec<String> = f
        .ecm()
        .query(plugin_api::Which::ALL, &[Model::ID])
        .into_iter()
        .filter_map(|e| f.ecm().get::<Name>(e))
        .map(|n| n.0)
        .collect();
    assert_eq!(names, ["mover", "doomed"]);
    // Beyond the end: the last recorded state.
    f.seek(1000).unwrap();
    assert_eq!(at(&f), recorded(12));
}

#[test]
fn bad_logs_and_bad_combinations_are_clear_errors() {
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
    let dir = Scratch::new("errors");
    let missing = dir.join("nope.tlog");
    let err = TestFixture::playback(&missing).err().expect("a missing log is an error").to_string();
    assert!(err.contains("nope.tlog"), "{err}");

    let not_a_log = dir.join("world.sdf");
    std::fs::write(&not_a_log, WORLD).unwrap();
    let err = TestFixture::playback(&not_a_log).err().expect("an SDF is not a log").to_string();
    assert!(err.contains("world.sdf") && err.contains("not a Troupe state log"), "{err}");

    let (log, _) = record(&dir, 3);
    let with_world = ServerOptions { playback: Some(log.clone()), world_file: Some(not_a_log), ..Default::default() };
    let err = TestFixture::with_options(with_world).err().expect("a world file and a log").to_string();
    assert!(err.contains("do not give a world file"), "{err}");

    // A log cut inside its first record has no state to start from.
    let bytes = std::fs::read(&log).unwrap();
    let header_len = 16 + u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let cut = dir.join("cut.tlog");
    std::fs::write(&cut, &bytes[..header_len + 5]).unwrap();
    let err = TestFixture::playback(&cut).err().expect("no first record").to_string();
    assert!(err.contains("cut.tlog") && err.contains("holds no record"), "{err}");
}
