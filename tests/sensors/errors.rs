//! Bad sensor blocks: a warning naming the sensor and its line, the sensor skipped, the
//! others and the server running.

use crate::common::*;
use plugin_api::msgs::Imu;

#[test]
fn bad_sensor_blocks_warn_with_name_and_line_and_are_skipped() {
    let bad = [
        sensor("weird", "sonic_screwdriver", 10.0, ""),
        sensor("backwards", "imu", -5.0, ""),
        sensor(
            "blind",
            "gpu_lidar",
            10.0,
            "<lidar><scan><horizontal><samples>10</samples></horizontal></scan></lidar>",
        ),
        sensor("numb", "contact", 10.0, "<contact/>"),
        sensor("myopic", "logical_camera", 10.0, "<logical_camera><near>1</near></logical_camera>"),
    ]
    .join("\n");
    let good = sensor("fine", "imu", 10.0, "");
    let sdf = world("", &ball("probe", "0 0 1 0 0 0", 0.1, true, &format!("\n{bad}\n{good}")));
    let mut f = load(&sdf);
    let sub = subscribe(&mut f, &topic("probe", "link", "fine", "imu"), "gz.msgs.IMU");
    let got: Vec<Imu> = run_and_take(&mut f, &sub, 1000);
    assert_eq!(got.len(), 10, "the good sensor runs");
    let lines = log_lines();
    let line_of = |name: &str| sdf.lines().position(|l| l.contains(&format!("name=\"{name}\""))).unwrap() + 1;
    for (name, what) in [
        ("weird", "unknown sensor type"),
        ("backwards", "update_rate"),
        ("blind", "<range>"),
        ("numb", "<collision>"),
        ("myopic", "<far>"),
    ] {
        let at = format!("<sensors test world>:{}", line_of(name));
        let found = lines.iter().find(|l| l.contains(&format!("\"{name}\"")));
        let found = found.unwrap_or_else(|| panic!("no warning names {name}: {lines:#?}"));
        assert!(
            found.contains("[WARN]") && found.contains(what) && found.contains(&at),
            "{name}: {found} (wanted {what} and {at})"
        );
    }
}
