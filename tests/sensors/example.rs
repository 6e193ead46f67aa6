//! `worlds/sensors.sdf`, the example of `docs/sensors.md`: every sensor publishes where the
//! documentation says.

use crate::common::*;
use plugin_api::msgs::{Contacts, Imu, LaserScan, LogicalCameraImage, Wrench};
use troupe::fixture::TestFixture;

#[test]
fn the_documented_example_world_publishes_every_sensor() {
    troupe::fixture::capture_log();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../worlds/sensors.sdf");
    let mut f = TestFixture::from_file(path).unwrap().finalize().unwrap();
    let imu = subscribe(&mut f, "/world/sensors/model/ball/link/link/sensor/imu/imu", "gz.msgs.IMU");
    let bumper = subscribe(&mut f, "/world/sensors/model/ball/link/link/sensor/bumper/contact", "gz.msgs.Contacts");
    let load_cell =
        subscribe(&mut f, "/world/sensors/model/crane/joint/cable/sensor/load_cell/forcetorque", "gz.msgs.Wrench");
    let camera = subscribe(
        &mut f,
        "/world/sensors/model/post/link/link/sensor/camera/logical_camera",
        "gz.msgs.LogicalCameraImage",
    );
    let lidar = subscribe(&mut f, "/lidar", "gz.msgs.LaserScan");
    let others = [
        ("/world/sensors/model/ball/link/link/sensor/altimeter/altimeter", "gz.msgs.Altimeter"),
        ("/world/sensors/model/ball/link/link/sensor/barometer/air_pressure", "gz.msgs.FluidPressure"),
        ("/world/sensors/model/ball/link/link/sensor/compass/magnetometer", "gz.msgs.Magnetometer"),
        ("/world/sensors/model/ball/link/link/sensor/gps/navsat", "gz.msgs.NavSat"),
        ("/lidar/points", "gz.msgs.PointCloudPacked"),
    ]
    .map(|(t, m)| (t, subscribe(&mut f, t, m)));
    f.run(1000).unwrap();
    assert_eq!(take::<Imu>(&imu).len(), 100);
    assert!(!take::<Contacts>(&bumper).is_empty(), "the ball lands on the table");
    let w = take::<Wrench>(&load_cell);
    assert_eq!(w.len(), 10);
    let fz = w.last().unwrap().force.clone().unwrap().z;
    assert!((fz + 2.0 * G).abs() < 0.2, "the hook's weight {fz}");
    let seen = take::<LogicalCameraImage>(&camera);
    let names: Vec<&str> = seen.last().unwrap().model.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["table", "ball"]);
    let scans = take::<LaserScan>(&lidar);
    assert_eq!((scans.len(), scans[0].ranges.len()), (10, 640 * 16));
    for (t, sub) in &others {
        assert!(!sub.take().is_empty(), "{t}");
    }
}
