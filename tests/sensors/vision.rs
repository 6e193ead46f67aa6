//! The logical camera's model set and the lidar's ranges.

use crate::common::*;
use plugin_api::components::Name;
use plugin_api::msgs::{LaserScan, LogicalCameraImage, PointCloudPacked};
use plugin_api::{Component, Which};

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
    assert!(
        (p.x - 3.0).abs() < 1e-12 && (p.y - 1.0).abs() < 1e-12 && (p.z - 0.2).abs() < 1e-12,
        "relative to the camera: {p:?}"
    );
}

/// A lidar at 1 m height sweeping 181 rays over ±90°, a wall whose face is 2.5 m ahead and
/// a sphere of radius 0.5 whose centre is 2 m to the left.
pub(crate) fn lidar_world(block_name: &str) -> String {
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
        let cloud: Vec<PointCloudPacked> =
            plugin_api::prost::Message::decode(points.take()[0].payload.as_slice()).map(|m| vec![m]).unwrap();
        let c = &cloud[0];
        assert_eq!((c.width, c.height, c.point_step, c.data.len()), (181, 3, 16, 543 * 16));
        let at = |k: usize, o: usize| f32::from_le_bytes(c.data[k * 16 + o..k * 16 + o + 4].try_into().unwrap());
        assert!((at(181 + 90, 0) - 2.5).abs() < 0.01 && at(181 + 90, 4).abs() < 1e-4, "the point ahead is at x = 2.5");
    }
}

/// Runs [`lidar_world`] on `physics` with `sensors_xml` for one scan; answers its ranges
/// and the log lines the run added.
fn scan_on(physics: &str, sensors_xml: &str) -> (Vec<f64>, Vec<String>) {
    let before = log_lines().len();
    let mut f = load(&world_on(physics, sensors_xml, "", &lidar_world("lidar")));
    let sub = subscribe(&mut f, &topic("robot", "link", "scanner", "scan"), "gz.msgs.LaserScan");
    let got: Vec<LaserScan> = run_and_take(&mut f, &sub, 100);
    assert_eq!(got.len(), 1, "{physics} {sensors_xml}: one scan in 0.1 s at 10 Hz");
    drop(f);
    (got[0].ranges.clone(), log_lines()[before..].to_vec())
}

fn says(lines: &[String], text: &str) -> bool {
    lines.iter().any(|l| l.contains(text))
}

const THROUGH_PHYSICS: &str = "casting rays through the physics backend's ray caster";
const OWN_GEOMETRY: &str = "casting rays against the sensors system's own geometry";

#[test]
fn both_ray_cast_paths_and_the_kinematic_backend_give_the_same_ranges() {
    let (caster, caster_log) = scan_on("gz-sim-physics-system", "");
    assert!(
        says(&caster_log, THROUGH_PHYSICS) && !says(&caster_log, OWN_GEOMETRY),
        "rapier offers a ray caster: {caster_log:?}"
    );
    let (own, own_log) = scan_on("gz-sim-physics-system", "<ray_casts>own</ray_casts>");
    assert!(says(&own_log, OWN_GEOMETRY) && !says(&own_log, THROUGH_PHYSICS), "<ray_casts>own: {own_log:?}");
    let (kinematic, kinematic_log) = scan_on("troupe_physics_kinematic", "<ray_casts>physics</ray_casts>");
    assert!(says(&kinematic_log, OWN_GEOMETRY), "the kinematic backend offers no caster: {kinematic_log:?}");
    assert!(
        says(&kinematic_log, "offers no ray caster"),
        "asking for physics casts without a caster warns: {kinematic_log:?}"
    );

    for (name, ranges) in [("rapier's caster", &caster), ("own geometry", &own), ("kinematic backend", &kinematic)] {
        assert_eq!(ranges.len(), 543, "{name}");
        let row = &ranges[181..362];
        assert!((row[90] - 2.5).abs() < 0.01, "{name}: the wall is 2.5 m ahead, read {}", row[90]);
        assert!((row[180] - 1.5).abs() < 0.01, "{name}: the rock is 1.5 m left, read {}", row[180]);
        assert!((row[60] - 2.5 / 30f64.to_radians().cos()).abs() < 0.01, "{name}: 30° right, read {}", row[60]);
        assert!(row[0].is_infinite() && row[0] > 0.0, "{name}: nothing to the right, read {}", row[0]);
    }
    // Every ray, not only the checked ones: the same hits, to well within the resolution.
    let mut hits = 0;
    for (i, ((a, b), c)) in caster.iter().zip(&own).zip(&kinematic).enumerate() {
        if a.is_infinite() || b.is_infinite() || c.is_infinite() {
            assert!(a == b && b == c, "ray {i}: a hit through one path only: caster {a}, own {b}, kinematic {c}");
            continue;
        }
        hits += 1;
        // Far inside the range resolution: both intersect boxes and spheres exactly.
        assert!((a - b).abs() < 1e-6 && (b - c).abs() < 1e-6, "ray {i}: caster {a}, own {b}, kinematic {c}");
    }
    assert!(hits > 300, "most rays hit the wall or the rock: {hits}");
}

#[test]
fn a_bad_ray_casts_setting_is_a_warning_and_the_default_is_used() {
    let (ranges, lines) = scan_on("gz-sim-physics-system", "<ray_casts>gpu</ray_casts>");
    assert!(says(&lines, "<ray_casts> must be auto, physics or own, not \"gpu\""), "{lines:?}");
    assert!(says(&lines, THROUGH_PHYSICS), "auto: through rapier's caster: {lines:?}");
    assert!((ranges[181 + 90] - 2.5).abs() < 0.01);
}

#[test]
fn the_caster_leaves_out_the_sensors_own_link_and_sees_moved_shapes() {
    // The lidar sits inside its own link's sphere (radius 0.05): without the exclusion every
    // ray would stop 5 cm away. A dynamic ball falling through the beam must be seen where
    // physics put it in this step.
    let lidar = sensor(
        "scanner",
        "gpu_lidar",
        100.0,
        "<lidar><scan><horizontal><samples>1</samples></horizontal><vertical><samples>1</samples></vertical></scan>\
         <range><min>0.01</min><max>10</max><resolution>0.01</resolution></range></lidar>",
    );
    let body = ball("robot", "0 0 1 0 0 0", 0.05, true, &lidar) + &ball("falling", "3 0 1.3 0 0 0", 0.2, false, "");
    let mut f = load(&world("", &body));
    let sub = subscribe(&mut f, &topic("robot", "link", "scanner", "scan"), "gz.msgs.LaserScan");
    let mut seen = 0;
    for _ in 0..40 {
        let scans: Vec<LaserScan> = run_and_take(&mut f, &sub, 10);
        let ecm = f.ecm();
        let ball = ecm
            .query(Which::ALL, &[Name::ID])
            .into_iter()
            .find(|e| ecm.get::<Name>(*e).is_some_and(|n| n.0 == "falling"))
            .unwrap();
        let z = ecm.get::<plugin_api::math::Pose>(ball).unwrap().position.z;
        for s in scans {
            let r = s.ranges[0];
            assert!(r > 1.0, "its own link is left out: read {r}");
            // The ball covers the beam (z = 1) while its centre is within 0.2 of it.
            if (z - 1.0).abs() < 0.19 {
                assert!((r - (3.0 - (0.04f64 - (z - 1.0).powi(2)).sqrt())).abs() < 0.01, "ball at z {z}: read {r}");
                seen += 1;
            } else if (z - 1.0).abs() > 0.21 {
                assert!(r.is_infinite(), "ball at z {z} is off the beam: read {r}");
            }
        }
    }
    assert!(seen > 0, "the falling ball crossed the beam while scanned");
}
