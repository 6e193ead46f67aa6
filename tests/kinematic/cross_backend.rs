//! One world text on every physics backend, only the plugin's `filename` changed: a link
//! with a velocity command moves by v·t on each, and the kinematic backend reports the
//! contact between the two overlapping boxes.

use crate::support::{find, find_in, near, watch, world_pose, world_text};
use plugin_api::components::{ContactSensorData, LinearVelocityCmd};
use plugin_api::math::Vec3;
use plugin_api::Change;
use troupe::fixture::TestFixture;

/// The physics libraries the world must behave the same on.
const BACKENDS: &[&str] = &["troupe_physics_kinematic", "troupe_physics_rapier"];

/// The motion world as written names the kinematic backend.
const WRITTEN: &str = r#"filename="troupe_physics_kinematic""#;

/// How close a dynamic engine must come to v·t (its velocity integration is exact for a
/// constant velocity without forces, but may round differently).
const TOLERANCE: f64 = 1e-6;

#[test]
fn a_commanded_link_moves_v_t_on_every_backend() {
    let text = world_text("motion.sdf");
    assert_eq!(text.matches(WRITTEN).count(), 1, "motion.sdf must name its physics plugin once");
    let v = Vec3::new(0.5, -0.25, 0.125);
    for backend in BACKENDS {
        let world = text.replace(WRITTEN, &format!("filename=\"{backend}\""));
        let mut f = TestFixture::from_sdf(&world)
            .unwrap_or_else(|e| panic!("{backend}: {e}"))
            .on_configure(move |ctx| {
                watch(&mut ctx.ecm, &["box_a/link/c"])?;
                let tip = find_in(&ctx.ecm, "arm/tip");
                ctx.ecm.set(tip, &LinearVelocityCmd(v), Change::OneTime)?;
                Ok(())
            })
            .finalize()
            .unwrap_or_else(|e| panic!("{backend}: {e}"));
        assert!(
            f.runner().system_labels().iter().any(|l| l.contains(backend)),
            "{backend} not loaded: {:?}",
            f.runner().system_labels()
        );
        let tip = find(f.ecm(), "arm/tip");
        let w0 = world_pose(f.ecm(), tip);
        f.run(500).unwrap_or_else(|e| panic!("{backend}: {e}"));

        let t = f.runner().clock.info().sim_time();
        let w = world_pose(f.ecm(), tip);
        let expected = w0.position + w0.rotation.rotate(v).scale(t);
        assert!(near(w.position, expected, TOLERANCE), "{backend}: tip at {:?}, expected {expected:?}", w.position);

        if *backend == "troupe_physics_kinematic" {
            let (a, b) = (find(f.ecm(), "box_a/link/c"), find(f.ecm(), "box_b/link/c"));
            let contacts = f.ecm().get::<ContactSensorData>(a).map(|c| c.0).unwrap_or_default();
            assert!(contacts.len() == 1 && contacts[0].collision2 == b, "{backend}: {contacts:?}");
        }
    }
}
