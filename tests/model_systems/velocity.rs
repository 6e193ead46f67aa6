//! VelocityControl against physics: a box dragged over a floor with friction and pushed back
//! by a persistent wrench holds its commanded velocity; a new command changes it.

use crate::support::*;
use plugin_api::msgs::{Twist, Vector3d};
use troupe::fixture::TestFixture;

/// A 10 kg box resting on a floor with friction 1, velocity-controlled at 1 m/s forward from
/// the start and pushed back by a persistent 20 N (the load).
fn world() -> String {
    physics_world(
        "0.001",
        r#"  <plugin filename="gz-sim-apply-link-wrench-system" name="gz::sim::systems::ApplyLinkWrench">
    <persistent><entity_name>cart</entity_name><entity_type>model</entity_type><force>-20 0 0</force></persistent>
    <verbose>false</verbose>
  </plugin>
  <model name="floor"><static>true</static><link name="link"><collision name="c">
    <geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>
    <surface><friction><ode><mu>1</mu><mu2>1</mu2></ode></friction></surface></collision></link></model>
  <model name="cart"><pose>0 0 0.1 0 0 0</pose>
    <link name="body">
      <inertial><mass>10</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
      <collision name="c"><geometry><box><size>0.4 0.4 0.2</size></box></geometry>
        <surface><friction><ode><mu>1</mu><mu2>1</mu2></ode></friction></surface></collision>
    </link>
    <plugin filename="gz-sim-velocity-control-system" name="gz::sim::systems::VelocityControl">
      <initial_linear>1 0 0</initial_linear>
    </plugin>
  </model>"#,
    )
}

#[test]
fn holds_its_velocity_under_load_and_follows_new_commands() {
    no_default_config();
    let (mut f, track) = tracking(TestFixture::from_sdf(&world()).unwrap(), "cart");
    f.run(1500).unwrap();
    {
        let t = track.lock().unwrap();
        let n = t.len();
        let (a, b) = (&t[n - 1001], &t[n - 1]);
        let v = (b.1.position - a.1.position).scale(1.0 / (b.0 - a.0));
        eprintln!("held velocity under friction and 20 N: {v:?}");
        // Friction (≈98 N) and the 20 N load act within each step after physics set the
        // velocity: the step loses at most (98 + 20)/10 · 0.001 ≈ 0.012 m/s.
        assert!((v.x - 1.0).abs() < 0.02, "vx = {}, expected 1 m/s within 2 %", v.x);
        assert!(v.y.abs() < 1e-3, "vy = {}", v.y);
    }
    let cmd = Twist { linear: Some(Vector3d { y: 0.5, ..Default::default() }), ..Default::default() };
    publish(&mut f, "/model/cart/cmd_vel", &cmd);
    f.run(600).unwrap();
    let t = track.lock().unwrap();
    let n = t.len();
    let (a, b) = (&t[n - 501], &t[n - 1]);
    let v = (b.1.position - a.1.position).scale(1.0 / (b.0 - a.0));
    eprintln!("after the new command: {v:?}");
    assert!(v.x.abs() < 0.02 && (v.y - 0.5).abs() < 0.02, "{v:?}");
}

#[test]
fn an_unknown_link_is_an_error_naming_it() {
    no_default_config();
    let e = load_error(&world().replace(
        "<initial_linear>1 0 0</initial_linear>",
        "<link_name>wheel</link_name><initial_angular>0 0 x</initial_angular>",
    ));
    assert_mentions(
        &e,
        &[
            "VelocityControl on model \"cart\"",
            "<link_name> \"wheel\": the model has no link of that name",
            "<initial_angular> must be three finite numbers",
        ],
    );
}
