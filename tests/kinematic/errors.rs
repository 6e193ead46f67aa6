//! Bad input ends the run with an error naming the entity and the problem, never a panic.

use crate::support::{find_in, motion};
use plugin_api::components::{LinearVelocityCmd, World};
use plugin_api::math::Vec3;
use plugin_api::{Change, Component, EcmRead};
use troupe::fixture::TestFixture;

const BAD_BOX: &str = r#"<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <plugin filename="troupe_physics_kinematic" name="gz::sim::systems::Physics"/>
    <model name="wonky">
      <link name="link">
        <collision name="c"><geometry><box><size>1 -1 1</size></box></geometry></collision>
      </link>
    </model>
  </world>
</sdf>"#;

#[test]
fn a_box_with_a_negative_size_fails_the_load_naming_the_model() {
    let message = match TestFixture::from_sdf(BAD_BOX) {
        Ok(_) => panic!("a box of size 1 -1 1 loaded"),
        Err(e) => e.to_string(),
    };
    for part in ["model 'wonky'", "collision 'c'", "box size y", "-1"] {
        assert!(message.contains(part), "{message:?} does not say {part:?}");
    }
}

#[test]
fn a_spawned_sphere_of_radius_zero_fails_the_step_naming_the_model() {
    let mut f = motion()
        .on_pre_update(|info, ecm| {
            if info.iterations == 3 {
                let world = ecm.entities_with(&[World::ID])[0];
                ecm.create_from_sdf(
                    r#"<model name="dot"><link name="l"><collision name="c">
                         <geometry><sphere><radius>0</radius></sphere></geometry>
                       </collision></link></model>"#,
                    world,
                )?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(2).unwrap();
    let message = f.run(1).expect_err("a sphere of radius 0 was accepted").to_string();
    for part in ["model 'dot'", "sphere radius", "troupe"] {
        assert!(message.contains(part), "{message:?} does not say {part:?}");
    }
}

#[test]
fn a_velocity_command_that_is_not_finite_fails_the_step_naming_the_model() {
    let mut f = motion()
        .on_pre_update(|_, ecm| {
            let rover = find_in(ecm, "rover");
            ecm.set(rover, &LinearVelocityCmd(Vec3::new(f64::NAN, 0.0, 0.0)), Change::OneTime)?;
            Ok(())
        })
        .finalize()
        .unwrap();
    let message = f.run(1).expect_err("a NaN velocity was accepted").to_string();
    assert!(message.contains("model 'rover'") && message.contains("not finite"), "{message:?}");
}
