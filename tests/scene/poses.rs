//! `pose/info` and `dynamic_pose/info`: contents, stamps and rates.

use crate::support::{decode, fixture, run_until, subscribe};
use plugin_api::msgs::PoseV;
use std::time::{Duration, Instant};

fn names(v: &PoseV) -> Vec<&str> {
    v.pose.iter().map(|p| p.name.as_str()).collect()
}

#[test]
fn pose_info_carries_models_links_visuals_and_lights_stamped_with_sim_time() {
    let mut f = fixture("").finalize().unwrap();
    f.run(50).unwrap();
    let sub = subscribe(&mut f, "/world/w/pose/info", "gz.msgs.Pose_V");
    let got: Vec<PoseV> = decode(&run_until(&mut f, &sub, |g| !g.is_empty()));
    let v = &got[0];
    assert_eq!(
        names(v),
        ["sun", "ground", "ground_link", "ground_visual", "cart", "chassis", "headlamp", "wheel", "mast", "mast_link"],
        "in entity order"
    );
    let cart = v.pose.iter().find(|p| p.name == "cart").unwrap();
    let pos = cart.position.clone().unwrap();
    assert_eq!((pos.x, pos.y, pos.z), (1.0, 2.0, 0.5));
    let stamp = v.header.as_ref().and_then(|h| h.stamp).expect("a stamp");
    // The first step the subscriber saw was the 51st, 1 ms each.
    assert_eq!((stamp.sec, stamp.nsec), (0, 51_000_000));
}

#[test]
fn dynamic_pose_info_leaves_static_models_out() {
    let mut f = fixture("").finalize().unwrap();
    let sub = subscribe(&mut f, "/world/w/dynamic_pose/info", "gz.msgs.Pose_V");
    let got: Vec<PoseV> = decode(&run_until(&mut f, &sub, |g| !g.is_empty()));
    assert_eq!(names(&got[0]), ["cart", "chassis", "wheel", "mast", "mast_link"]);
}

/// Steps as fast as possible for `wall`, answering how many messages each subscription got.
fn count_over(
    f: &mut troupe::fixture::TestFixture,
    subs: &[&troupe::transport::Subscription],
    wall: Duration,
) -> (Vec<usize>, f64, u64) {
    let start = Instant::now();
    let mut steps = 0;
    while start.elapsed() < wall {
        f.run(1).unwrap();
        steps += 1;
    }
    let elapsed = start.elapsed().as_secs_f64();
    (subs.iter().map(|s| s.take().len()).collect(), elapsed, steps)
}

#[test]
fn pose_topics_are_throttled_by_wall_time() {
    let mut f = fixture("<dynamic_pose_hertz>20</dynamic_pose_hertz>").finalize().unwrap();
    let all = subscribe(&mut f, "/world/w/pose/info", "gz.msgs.Pose_V");
    let dynamic = subscribe(&mut f, "/world/w/dynamic_pose/info", "gz.msgs.Pose_V");
    let (counts, elapsed, steps) = count_over(&mut f, &[&all, &dynamic], Duration::from_millis(700));
    assert!(steps > 100, "the world stepped only {steps} times in {elapsed:.2} s");
    // A message at the start, then at most one per period.
    assert!(
        counts[0] >= 2 && counts[0] as f64 <= 60.0 * elapsed + 1.0,
        "pose/info: {} messages in {elapsed:.2} s, {steps} steps",
        counts[0]
    );
    assert!(
        counts[1] >= 2 && counts[1] as f64 <= 20.0 * elapsed + 1.0,
        "dynamic_pose/info: {} messages in {elapsed:.2} s",
        counts[1]
    );
}
