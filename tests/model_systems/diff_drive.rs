//! DiffDrive on `worlds/diff_drive.sdf`: the vehicle's wheels are 0.3 m in radius and
//! 1.25 m apart, the step is 1 ms.

use crate::support::*;
use plugin_api::math::Pose;
use plugin_api::msgs::{Odometry, Twist, Vector3d};
use std::f64::consts::PI;
use troupe::fixture::TestFixture;

const CMD: &str = "/model/vehicle_blue/cmd_vel";
const ODOM: &str = "/model/vehicle_blue/odometry";
/// The midpoint between the wheels in the model frame: the point wheel odometry tracks.
const AXLE: [f64; 3] = [0.554283, 0.0, -0.025];

fn twist(v: f64, w: f64) -> Twist {
    Twist {
        linear: Some(Vector3d { x: v, ..Default::default() }),
        angular: Some(Vector3d { z: w, ..Default::default() }),
        ..Default::default()
    }
}

fn load() -> TestFixture {
    no_default_config();
    TestFixture::from_file(world_file("diff_drive.sdf")).expect("worlds/diff_drive.sdf loads unchanged")
}

fn yaw(p: &Pose) -> f64 {
    p.rotation.to_rpy()[2]
}

fn angle_diff(a: f64, b: f64) -> f64 {
    (a - b + PI).rem_euclid(2.0 * PI) - PI
}

#[test]
fn drives_a_circle_of_radius_v_over_w_and_odometry_follows_the_true_pose() {
    let (v, w) = (0.5, 0.5);
    let (mut f, track) = tracking(load(), "vehicle_blue");
    let odom = subscribe::<Odometry>(&mut f, ODOM);
    f.run(1).unwrap();
    let start = track.lock().unwrap()[0].1;
    publish(&mut f, CMD, &twist(v, w));
    // Up to speed (the world limits acceleration to 2 m/s² and 4 rad/s²), then one lap.
    f.run(1000).unwrap();
    let settled = track.lock().unwrap().len();
    let lap = (2.0 * PI / w / 0.001).round() as u64;
    f.run(lap).unwrap();

    let track = track.lock().unwrap();
    let circle: Vec<[f64; 2]> = track[settled..].iter().map(|(_, p)| [p.position.x, p.position.y]).collect();
    let n = circle.len() as f64;
    let centre = circle.iter().fold([0.0, 0.0], |c, p| [c[0] + p[0] / n, c[1] + p[1] / n]);
    let dist: Vec<f64> = circle.iter().map(|p| (p[0] - centre[0]).hypot(p[1] - centre[1])).collect();
    let mean = dist.iter().sum::<f64>() / n;
    let expected = v / w;
    // The model origin is 0.554 m behind the axle, on the inside of the turn's radial line
    // only by its offset along the heading: it runs on a circle of radius √(R² + 0.554²).
    let expected_origin = expected.hypot(AXLE[0]);
    let spread = dist.iter().cloned().fold(0.0, f64::max) - dist.iter().cloned().fold(f64::MAX, f64::min);
    eprintln!("origin circle radius {mean:.4} (expected {expected_origin:.4}), spread {spread:.4}");
    assert!(
        (mean - expected_origin).abs() < 0.02 * expected_origin,
        "radius {mean}, expected {expected_origin} within 2 %"
    );
    assert!(spread < 0.02 * expected_origin, "not a circle: the distance to the centre varies by {spread}");
    // The axle midpoint itself runs on the circle of radius v/ω.
    let axle: Vec<[f64; 2]> = track[settled..]
        .iter()
        .map(|(_, p)| {
            let a = p.transform_point(plugin_api::math::Vec3::new(AXLE[0], AXLE[1], AXLE[2]));
            [a.x, a.y]
        })
        .collect();
    let c = axle.iter().fold([0.0, 0.0], |c, p| [c[0] + p[0] / n, c[1] + p[1] / n]);
    let r_axle = axle.iter().map(|p| (p[0] - c[0]).hypot(p[1] - c[1])).sum::<f64>() / n;
    eprintln!("axle circle radius {r_axle:.4} (expected {expected:.4})");
    assert!((r_axle - expected).abs() < 0.02 * expected, "axle radius {r_axle}, expected {expected} within 2 %");
    // After one lap the heading is back where it was.
    let turned = angle_diff(yaw(&track.last().unwrap().1), yaw(&track[settled].1));
    assert!(turned.abs() < 0.05, "heading after one lap differs by {turned} rad");

    // Odometry: the axle midpoint's travel in the frame where the model started.
    let msgs = take::<Odometry>(&odom);
    assert!(msgs.len() > 600, "odometry at 50 Hz over {} s: got {}", track.last().unwrap().0, msgs.len());
    let axle_at = |p: &Pose| p.transform_point(plugin_api::math::Vec3::new(AXLE[0], AXLE[1], AXLE[2]));
    let origin = axle_at(&start);
    let mut worst = (0.0f64, 0.0f64);
    for m in &msgs {
        let stamp = m.header.as_ref().and_then(|h| h.stamp.as_ref()).expect("stamped");
        let t = stamp.sec as f64 + stamp.nsec as f64 * 1e-9;
        let Some((_, truth)) = track.iter().find(|(s, _)| (s - t).abs() < 1e-6) else { continue };
        let rel = start.rotation.inverse().rotate(axle_at(truth) - origin);
        let pose = m.pose.as_ref().unwrap();
        let pos = pose.position.as_ref().unwrap();
        let q = pose.orientation.as_ref().unwrap();
        let odom_yaw = plugin_api::math::Quat { w: q.w, x: q.x, y: q.y, z: q.z }.to_rpy()[2];
        let true_yaw = angle_diff(yaw(truth), yaw(&start));
        worst.0 = worst.0.max((pos.x - rel.x).hypot(pos.y - rel.y));
        worst.1 = worst.1.max(angle_diff(odom_yaw, true_yaw).abs());
    }
    eprintln!(
        "odometry: worst position error {:.4} m, heading error {:.4} rad over {:.1} m",
        worst.0,
        worst.1,
        2.0 * PI * expected
    );
    // Bound: 2 cm (0.3 % of the 6.3 m driven) in position, 0.01 rad in heading; measured
    // 3.3 mm and 0.003 rad.
    assert!(worst.0 < 0.02, "odometry position off by {} m", worst.0);
    assert!(worst.1 < 0.01, "odometry heading off by {} rad", worst.1);
    // Its twist is the commanded one once up to speed.
    let last = msgs.last().unwrap().twist.as_ref().unwrap();
    let (lv, lw) = (last.linear.as_ref().unwrap().x, last.angular.as_ref().unwrap().z);
    assert!((lv - v).abs() < 0.01 && (lw - w).abs() < 0.01, "odometry twist {lv}, {lw}");
    let h = msgs.last().unwrap().header.as_ref().unwrap();
    let frame = |k: &str| h.data.iter().find(|d| d.key == k).map(|d| d.value[0].clone());
    assert_eq!(frame("frame_id").as_deref(), Some("vehicle_blue/odom"));
    assert_eq!(frame("child_frame_id").as_deref(), Some("vehicle_blue/chassis"));
}

#[test]
fn acceleration_limit_ramps_the_speed() {
    let (mut f, track) = tracking(load(), "vehicle_blue");
    f.run(200).unwrap();
    publish(&mut f, CMD, &twist(1.0, 0.0));
    f.run(201).unwrap();
    let t = track.lock().unwrap();
    let speed = |i: usize| {
        let (a, b) = (&t[i - 10], &t[i]);
        (b.1.position - a.1.position).length() / (b.0 - a.0)
    };
    // The world's <max_linear_acceleration> is 2 m/s²: 0.1 s after the command the speed is
    // about 0.2 m/s, 0.2 s after about 0.4 m/s (without the limit it would be 1 at once).
    let (s1, s2) = (speed(t.len() - 101), speed(t.len() - 1));
    eprintln!("speed 0.1 s after: {s1:.3}, 0.2 s after: {s2:.3}");
    assert!((s1 - 0.2).abs() < 0.05, "{s1}");
    assert!((s2 - 0.4).abs() < 0.05, "{s2}");
}

/// The diff-drive world with the vehicle's plugin element replaced by `plugin`.
fn with_plugin(plugin: &str) -> String {
    let text = std::fs::read_to_string(world_file("diff_drive.sdf")).unwrap();
    let start = text.find("<plugin filename=\"gz-sim-diff-drive-system\"").unwrap();
    let end = start + text[start..].find("</plugin>").unwrap() + "</plugin>".len();
    format!("{}{plugin}{}", &text[..start], &text[end..])
}

#[test]
fn bad_parameters_are_all_reported_naming_their_elements() {
    no_default_config();
    let e = load_error(&with_plugin(
        r#"<plugin filename="gz-sim-diff-drive-system" name="gz::sim::systems::DiffDrive">
             <right_joint>right_wheel_joint</right_joint><right_joint>no_such_joint</right_joint>
             <wheel_radius>-0.3</wheel_radius><wheel_separation>wide</wheel_separation>
             <max_linear_velocity>1</max_linear_velocity><min_linear_velocity>2</min_linear_velocity>
             <odom_publish_frequency>inf</odom_publish_frequency><topic>a b</topic>
           </plugin>"#,
    ));
    assert_mentions(
        &e,
        &[
            "DiffDrive on model \"vehicle_blue\"",
            "at least one <left_joint> is required",
            "<right_joint> \"no_such_joint\": the model has no joint of that name",
            "<wheel_radius> must be greater than 0, found -0.3",
            "<wheel_separation> must be a number, found \"wide\"",
            "<min_linear_velocity> 2 is above <max_linear_velocity> 1",
            "<odom_publish_frequency> must be a finite number",
            "<topic>: \"a b\" is not a valid topic name",
        ],
    );
}

#[test]
fn attached_to_the_world_is_an_error() {
    no_default_config();
    let text = std::fs::read_to_string(world_file("diff_drive.sdf")).unwrap().replace(
        "<light type=\"directional\"",
        "<plugin filename=\"gz-sim-diff-drive-system\" name=\"gz::sim::systems::DiffDrive\"><left_joint>a</left_joint><right_joint>b</right_joint></plugin>\n<light type=\"directional\"",
    );
    let e = load_error(&text);
    assert!(e.contains("DiffDrive must be attached to a model"), "{e}");
}
