//! The logical camera's model set and the lidar's ranges.

use crate::common::*;
use plugin_api::msgs::{LaserScan, LogicalCameraImage, PointCloudPacked};

#[test]
fn a_logical_camera_sees_exactly_the_models_inside_its_frustum() {
    let cam = sensor(
        "cam",
        "logical_camera",
        10.0,
        "<logical_camera><near>0.5</near><far>5</far><horizontal_fov>1.0</horizontal_fov><aspect_ratio>1</aspect_ratio></logical_camera>",
    );
    let body = ball("post", "0 0 1 0 0 0", 0.05, true, &cam)
        + &block("ahead", "2 0 1 0 0 0", "0.2 0.2 0.2")
        + &block("ahead_left", "3 1 1.2 0 0 0", "0.2 0.2 0.2")
        + &block("too_wide", "2 3 1 0 0 0", "0.2 0.2 0.2")
        + &block("too_high", "2 0 3 0 0 0", "0.2 0.2 0.2")
        + &block("too_far", "6 0 1 0 0 0", "0.2 0.2 0.2")
        + &block("too_near", "0.3 0 1 0 0 0", "0.2 0.2 0.2")
        + &block("behind", "-2 0 1 0 0 0", "0.2 0.2 0.2");
    let mut f = load(&world("", &body));
    let sub = subscribe(&mut f, &topic("post", "link", "cam", "logical_camera"), "gz.msgs.LogicalCameraImage");
    let got: Vec<LogicalCameraImage> = run_and_take(&mut f, &sub, 100);
    let seen: Vec<&str> = got[0].model.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(seen, ["ahead", "ahead_left"]);
    let p = got[0].model[1].pose.as_ref().unwrap().position.clone().unwrap();
    assert!((p.x - 3.0).abs() < 1e-12 && (p.y - 1.0).abs() < 1e-12 && (p.z - 0.2).abs() < 1e-12, "relative to the camera: {p:?}");
}

/// A lidar at 1 m height sweeping 181 rays over ±90°, a wall whose face is 2.5 m ahead and
/// a sphere of radius 0.5 whose centre is 2 m to the left.
fn lidar_world(block_name: &str) -> String {
    let lidar = sensor(
        "scanner",
        "gpu_lidar",
        10.0,
        &format!(
            "<{block_name}><scan><horizontal><samples>181</samples><resolution>1</resolution><min_angle>-1.5707963267948966</min_angle>\
             <max_angle>1.5707963267948966</max_angle></horizontal><vertical><samples>3</samples><min_angle>-0.1</min_angle><max_angle>0.1</max_angle></vertical></scan>\
             <range><min>0.1</min><max>10</max><resolution>0.01</resolution></range></{block_name}>"
        ),
    );
    ball("robot", "0 0 1 0 0 0", 0.05, true, &lidar)
        + &block("wall", "3 0 1 0 0 0", "1 10 4")
        + &ball("rock", "0 2 1 0 0 0", 0.5, true, "")
}

#[test]
fn lidar_ranges_to_a_wall_and_a_sphere_are_within_the_range_resolution() {
    for block_name in ["lidar", "ray"] {
        let mut f = load(&world("", &lidar_world(block_name)));
        let scan_topic = topic("robot", "link", "scanner", "scan");
        let sub = subscribe(&mut f, &scan_topic, "gz.msgs.LaserScan");
        let points = subscribe(&mut f, &format!("{scan_topic}/points"), "gz.msgs.PointCloudPacked");
        let got: Vec<LaserScan> = run_and_take(&mut f, &sub, 100);
        assert_eq!(got.len(), 1);
        let s = &got[0];
        assert_eq!((s.count, s.vertical_count, s.ranges.len()), (181, 3, 543));
        // The middle row: ray 90 straight ahead, ray 180 to the left (+y).
        let row = &s.ranges[181..362];
        assert!((row[90] - 2.5).abs() < 0.01, "{block_name}: the wall is 2.5 m ahead, read {}", row[90]);
        assert!((row[180] - 1.5).abs() < 0.01, "{block_name}: the rock's surface is 1.5 m left, read {}", row[180]);
        assert!(row[0].is_infinite() && row[0] > 0.0, "nothing to the right within 10 m: {}", row[0]);
        // 30° to the right, the wall is 2.5 / cos 30° away.
        let i = 90 - 30;
        assert!((row[i] - 2.5 / 30f64.to_radians().cos()).abs() < 0.01, "{}", row[i]);
        // The upper row tilts up 0.1 rad: the wall is further along the ray.
        assert!((s.ranges[362 + 90] - 2.5 / 0.1f64.cos()).abs() < 0.01);
        let cloud: Vec<PointCloudPacked> = plugin_api::prost::Message::decode(points.take()[0].payload.as_slice()).map(|m| vec![m]).unwrap();
        let c = &cloud[0];
        assert_eq!((c.width, c.height, c.point_step, c.data.len()), (181, 3, 16, 543 * 16));
        let at = |k: usize, o: usize| f32::from_le_bytes(c.data[k * 16 + o..k * 16 + o + 4].try_into().unwrap());
        assert!((at(181 + 90, 0) - 2.5).abs() < 0.01 && at(181 + 90, 4).abs() < 1e-4, "the point ahead is at x = 2.5");
    }
}
