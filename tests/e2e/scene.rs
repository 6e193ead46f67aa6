//! The scene broadcaster in a real `troupe sim`, loaded by the repository's default server
//! config (the harness otherwise runs without one) as
//! gz-sim's `gz-sim-scene-broadcaster-system`, read with the `troupe service` and
//! `troupe topic` tools. The default config loads physics too, so the box is static.

use crate::harness::{default_config, world_sdf, TestDir, Troupe};

const BODY: &str = r#"    <light type="directional" name="sun"><pose>0 0 10 0 0 0</pose></light>
    <model name="box"><static>true</static><pose>1 2 3 0 0 0</pose><link name="link"/></model>"#;

#[test]
fn scene_info_and_pose_info_from_the_command_line() {
    let dir = TestDir::new("scene-tools");
    let world = dir.write("w.sdf", &world_sdf("w", BODY));
    let mut srv = Troupe::sim(&dir).arg("--config").arg(default_config()).arg(world).args(["-r", "-v", "3"]).spawn();
    srv.wait_for_stderr("running world(s) w");

    let listed = Troupe::service(&dir).arg("-l").run();
    listed.assert_code(0);
    for s in ["/world/w/scene/info", "/world/w/state"] {
        assert!(listed.stdout.lines().any(|l| l == s), "{s} is not listed:\n{listed}");
    }

    let scene = Troupe::service(&dir)
        .args([
            "-s",
            "/world/w/scene/info",
            "--reqtype",
            "gz.msgs.Empty",
            "--reptype",
            "gz.msgs.Scene",
            "--timeout",
            "10000",
            "--req",
            "",
        ])
        .run();
    scene.assert_code(0);
    let text = &scene.stdout;
    assert!(text.contains("\nname: \"w\"\n"), "{scene}");
    assert!(text.contains("model {\n  name: \"box\"\n  id: "), "{scene}");
    assert!(text.contains("position {\n      x: 1\n      y: 2\n      z: 3\n    }"), "the box's pose:\n{scene}");
    assert!(text.contains("link {\n    id: ") && text.contains("name: \"link\""), "{scene}");
    assert!(text.contains("light {\n  name: \"sun\"\n  type: DIRECTIONAL"), "{scene}");

    let poses = Troupe::topic(&dir).args(["-e", "-t", "/world/w/pose/info", "-n", "1", "--duration", "30"]).run();
    poses.assert_code(0);
    let text = &poses.stdout;
    assert!(text.starts_with("header {\n  stamp {\n"), "stamped:\n{poses}");
    for name in ["sun", "box", "link"] {
        assert!(text.contains(&format!("pose {{\n  name: \"{name}\"\n  id: ")), "{name} is not in pose/info:\n{poses}");
    }

    let out = Troupe::service(&dir)
        .args([
            "-s",
            "/server_control",
            "--reqtype",
            "gz.msgs.ServerControl",
            "--reptype",
            "gz.msgs.Boolean",
            "--timeout",
            "10000",
            "--req",
            "stop: true",
        ])
        .run();
    out.assert_code(0);
    srv.wait().assert_code(0);
}
