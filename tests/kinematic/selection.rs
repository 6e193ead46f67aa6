//! Choosing the kinematic backend: by gz-sim's `<engine>` element, by `--physics-engine`,
//! and in place of the server config's physics.

use crate::support::{find, find_in};
use plugin_api::components::LinearVelocityCmd;
use plugin_api::math::{Pose, Vec3};
use plugin_api::Change;
use troupe::fixture::TestFixture;
use troupe::server::ServerOptions;

/// A world with one box and the given world-level plugins.
fn world(plugins: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <gravity>0 0 0</gravity>
    {plugins}
    <model name="box">
      <link name="link">
        <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision>
      </link>
    </model>
  </world>
</sdf>"#
    )
}

/// Loads `options`, commands the box to 1 m/s along x for 100 steps, and answers the loaded
/// systems' labels and how far the box went.
fn drive(options: ServerOptions) -> (Vec<String>, f64) {
    let mut f = TestFixture::with_options(ServerOptions { run: true, ..options })
        .unwrap()
        .on_configure(|ctx| {
            let b = find_in(&ctx.ecm, "box");
            ctx.ecm.set(b, &LinearVelocityCmd(Vec3::new(1.0, 0.0, 0.0)), Change::OneTime)?;
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(100).unwrap();
    let x = f.ecm().get::<Pose>(find(f.ecm(), "box")).unwrap().position.x;
    (f.runner().system_labels(), x)
}

fn text(world: String) -> ServerOptions {
    ServerOptions { world_text: Some((world, "<selection test>".into())), ..Default::default() }
}

fn physics_labels(labels: &[String]) -> Vec<&String> {
    labels.iter().filter(|l| l.contains("physics")).collect()
}

#[test]
fn gz_physics_with_the_tpe_engine_loads_the_kinematic_backend() {
    let plugin = r#"<plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics">
      <engine><filename>libgz-physics7-tpe-plugin.so</filename></engine>
    </plugin>"#;
    let (labels, x) = drive(text(world(plugin)));
    let physics = physics_labels(&labels);
    assert!(physics.len() == 1 && physics[0].contains("troupe_physics_kinematic"), "{labels:?}");
    assert!((x - 0.1).abs() < 1e-12, "the box went {x} m");
}

#[test]
fn physics_engine_option_loads_the_kinematic_backend() {
    let options = ServerOptions { physics_engine: Some("troupe_physics_kinematic".into()), ..text(world("")) };
    let (labels, x) = drive(options);
    assert!(physics_labels(&labels).iter().any(|l| l.contains("troupe_physics_kinematic")), "{labels:?}");
    assert!((x - 0.1).abs() < 1e-12, "the box went {x} m");
}

/// The world file names the kinematic backend and the default server config names gz-sim's
/// physics: only the world file's loads. (Before the rapier backend ships the config's
/// physics is skipped anyway; once it ships, this fails if both load.)
#[test]
fn a_world_file_physics_backend_replaces_the_config_one() {
    let plugin = r#"<plugin filename="troupe_physics_kinematic" name="gz::sim::systems::Physics"/>"#;
    let (labels, x) = drive(text(world(plugin)));
    let physics = physics_labels(&labels);
    assert!(physics.len() == 1 && physics[0].contains("troupe_physics_kinematic"), "{labels:?}");
    assert!((x - 0.1).abs() < 1e-12, "the box went {x} m");
}
