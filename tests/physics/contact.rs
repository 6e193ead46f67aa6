//! Resting, sliding, bouncing, and the contacts physics reports.

use crate::common::*;
use plugin_api::components::{Collision, ContactSensorData, WatchContacts};
use plugin_api::{Change, EcmRead};
use troupe::fixture::TestFixture;

#[test]
fn a_sphere_comes_to_rest_on_a_plane_at_its_radius() {
    let sdf = world(&(ground("") + &sphere("ball", "0.3 -0.2 1 0 0 0", 0.25, 2.0, "")));
    let (mut f, trace) = traced(&sdf, |ecm| model_pose(ecm, "ball").position);
    f.run(3000).unwrap();
    let t = trace.lock().unwrap();
    let end = t[2999];
    assert!((end.z - 0.25).abs() < 2e-3, "rest height {} vs radius 0.25", end.z);
    // At rest, not merely passing through: the last 500 steps moved it less than 0.1 mm.
    assert!((t[2499].z - end.z).abs() < 1e-4 && (t[2499].x - end.x).abs() < 1e-4, "{:?} -> {end:?}", t[2499]);
    // Dropped straight down: no sideways drift.
    assert!((end.x - 0.3).abs() < 1e-6 && (end.y + 0.2).abs() < 1e-6, "{end:?}");
}

/// A 0.2 m box on a plane tilted by `angle` about y, both with friction `mu`. Returns how
/// far it moved along the slope in `seconds` after settling for 0.1 s.
fn incline_slide(angle: f64, mu: f64, ground_mu: f64, seconds: f64) -> f64 {
    let (s, c) = angle.sin_cos();
    // The box's centre 0.1 m above the slope, at x = 0, rotated with it.
    let (x, z) = (0.1 * s, 0.1 * c);
    let ramp = format!(
        r#"<model name="ramp"><static>true</static><pose>0 0 0 0 {angle} 0</pose><link name="link"><collision name="col">
  <geometry><box><size>40 4 0.2</size></box></geometry><pose>0 0 -0.1 0 0 0</pose>{}</collision></link></model>"#,
        surface(ground_mu, 0.0)
    );
    let body = ramp + &cube("block", &format!("{x} 0 {z} 0 {angle} 0"), [0.2, 0.2, 0.2], 1.0, &surface(mu, 0.0));
    let (mut f, trace) = traced(&world(&body), |ecm| model_pose(ecm, "block").position);
    let settle = 100;
    let steps = settle + (seconds * 1000.0) as u64;
    f.run(steps).unwrap();
    let t = trace.lock().unwrap();
    let (a, b) = (t[settle as usize - 1], t[steps as usize - 1]);
    // Distance along the slope's downhill direction (+x tilted by the angle: (c, 0, -s)).
    let d = (b.x - a.x) * c - (b.z - a.z) * s;
    eprintln!("incline {angle} rad, mu {mu} on {ground_mu}: moved {d:.5} m in {seconds} s");
    d
}

#[test]
fn a_box_on_an_incline_slides_when_mu_is_below_tan_angle_and_holds_above() {
    let angle: f64 = 0.3; // tan = 0.309
    let t = 1.0;
    // mu 0.2 < tan: slides with a = g (sin - mu cos).
    let slid = incline_slide(angle, 0.2, 1.0, t);
    let a = G * (angle.sin() - 0.2 * angle.cos());
    let expect = 0.5 * a * t * t + a * 0.1 * t; // it already moves during the 0.1 s settle
    assert!((slid - expect).abs() < 0.02 * expect, "slid {slid} m, expected about {expect} m");
    // mu 0.5 > tan: holds.
    let held = incline_slide(angle, 0.5, 1.0, t);
    assert!(held.abs() < 1e-3, "moved {held} m with mu 0.5 > tan {}", angle.tan());
    // Friction combines by minimum: a slippery ramp under a grippy box slides it too.
    let slid_on_ice = incline_slide(angle, 1.0, 0.2, t);
    assert!((slid_on_ice - expect).abs() < 0.02 * expect, "slid {slid_on_ice} m on a mu 0.2 ramp");
}

/// Drops a ball of restitution `e_ball` from 1 m (bottom) onto a ground of restitution
/// `e_ground`; answers the apex height (of the bottom) after the first bounce.
fn rebound(e_ball: f64, e_ground: f64) -> f64 {
    let r = 0.1;
    let sdf =
        world(&(ground(&surface(1.0, e_ground)) + &sphere("ball", "0 0 1.1 0 0 0", r, 1.0, &surface(1.0, e_ball))));
    let (mut f, trace) = traced(&sdf, |ecm| model_pose(ecm, "ball").position.z);
    f.run(2500).unwrap();
    let t = trace.lock().unwrap();
    // First contact: the lowest point before it goes up again.
    let low = (1..t.len()).find(|&i| t[i] >= t[i - 1]).expect("it bounced or rested");
    let apex = t[low..].iter().cloned().fold(f64::MIN, f64::max) - r;
    eprintln!("restitution {e_ball} x {e_ground}: apex {apex:.4} m after a 1 m drop");
    apex
}

#[test]
fn a_bouncing_ball_rebounds_to_restitution_squared_times_the_drop() {
    // Combined restitution is the product: 0.8 × 1 = 0.8, so the apex is 0.64 m.
    let h = rebound(0.8, 1.0);
    assert!((h - 0.64).abs() < 0.03, "apex {h} m, expected 0.64 m");
    let h = rebound(0.5, 1.0);
    assert!((h - 0.25).abs() < 0.02, "apex {h} m, expected 0.25 m");
    // The ground's default restitution 0 cancels the ball's: no bounce.
    let h = rebound(0.8, 0.0);
    assert!(h < 0.005, "apex {h} m with a ground of restitution 0");
}

#[test]
fn watched_collisions_report_their_contacts_with_force_balancing_weight() {
    let sdf = world(&(ground("") + &cube("crate", "0 0 0.3 0 0 0", [0.4, 0.4, 0.4], 3.0, "")));
    let mut f = TestFixture::from_sdf(&sdf)
        .unwrap()
        .on_configure(|ctx| {
            let ecm = &mut ctx.ecm;
            let crate_col = ecm
                .entities_with(&[<Collision as plugin_api::Component>::ID])
                .into_iter()
                .find(|c| ecm.parent(*c).and_then(|l| ecm.parent(l)) == ecm.entity_by_name("crate"))
                .expect("the crate's collision");
            ecm.set(crate_col, &WatchContacts, Change::OneTime)?;
            Ok(())
        })
        .finalize()
        .unwrap();
    f.run(1500).unwrap();
    let ecm = f.ecm();
    let col = ecm.query(plugin_api::Which::ALL, &[<WatchContacts as plugin_api::Component>::ID])[0];
    let data = ecm.get::<ContactSensorData>(col).expect("contacts written");
    assert_eq!(data.0.len(), 1, "{data:?}");
    let c = &data.0[0];
    assert_eq!(c.collision1, col);
    let ground_col = ecm.children(id(&f, "link")).next().expect("ground collision");
    assert_eq!(c.collision2, ground_col);
    assert!(c.positions.len() >= 3, "a face resting on a plane touches at several points: {c:?}");
    for (p, n) in c.positions.iter().zip(&c.normals) {
        assert!(p.z.abs() < 2e-3, "contact point {p:?} not on the floor");
        assert!((n.z - 1.0).abs() < 1e-9, "normal {n:?} should point up, from the ground to the crate");
    }
    let fz: f64 = c.forces.iter().map(|f| f.z).sum();
    assert!((fz - 3.0 * G).abs() < 0.02 * 3.0 * G, "contact force {fz} N vs weight {} N", 3.0 * G);
}

/// Two overlapping links of one model, without gravity: SDFormat's default
/// `<self_collide>false</self_collide>` lets them overlap; `true` pushes them apart.
#[test]
fn links_of_one_model_collide_only_when_it_self_collides() {
    let gap_after = |self_collide: bool| {
        let link = |name: &str, x: f64| {
            format!(
                r#"<link name="{name}"><pose>{x} 0 1 0 0 0</pose><gravity>false</gravity>{}
  <collision name="col"><geometry><box><size>0.4 0.4 0.4</size></box></geometry></collision></link>"#,
                inertial(1.0, [0.03, 0.03, 0.03])
            )
        };
        let sdf = world(&format!(
            r#"<model name="twins"><self_collide>{self_collide}</self_collide>{}{}</model>"#,
            link("a", 0.0),
            link("b", 0.2)
        ));
        let mut f = load(&sdf);
        f.run(500).unwrap();
        // b's pose is relative to the model frame, which follows a (the canonical link).
        pose(&f, "b").position.x
    };
    let apart = gap_after(true);
    let overlapping = gap_after(false);
    // Rapier resolves a deep overlap gradually (a capped corrective velocity): 0.39 m here.
    assert!(apart > 0.35, "self-colliding links still overlap: b at {apart} from a");
    assert!((overlapping - 0.2).abs() < 1e-9, "links of a non-self-colliding model pushed each other: {overlapping}");
}

/// Every primitive, dropped upright onto a plane, comes to rest at its half-height along z:
/// SDF's cylinders and capsules lie along z, an ellipsoid rests on its pole.
#[test]
fn each_primitive_rests_at_its_half_height() {
    let shapes = [
        ("box", "<box><size>0.3 0.4 0.6</size></box>", 0.3),
        ("sphere", "<sphere><radius>0.2</radius></sphere>", 0.2),
        ("cylinder", "<cylinder><radius>0.2</radius><length>0.8</length></cylinder>", 0.4),
        ("capsule", "<capsule><radius>0.1</radius><length>0.5</length></capsule>", 0.35),
        ("ellipsoid", "<ellipsoid><radii>0.3 0.2 0.15</radii></ellipsoid>", 0.15),
    ];
    let mut body = ground("");
    for (i, (name, geometry, _)) in shapes.iter().enumerate() {
        body += &format!(
            r#"<model name="{name}"><pose>{} 0 1 0 0 0</pose><link name="link">{}
  <collision name="col"><geometry>{geometry}</geometry></collision></link></model>"#,
            i as f64 * 2.0,
            inertial(1.0, [0.01, 0.01, 0.01])
        );
    }
    let mut f = load(&world(&body));
    f.run(2500).unwrap();
    for (name, _, half) in shapes {
        let p = pose(&f, name);
        assert!((p.position.z - half).abs() < 2e-3, "{name} rests at z {} instead of {half}", p.position.z);
        let tilt = p.rotation.rotate(plugin_api::math::Vec3::new(0.0, 0.0, 1.0)).z;
        assert!(tilt > 0.999, "{name} fell over: {p:?}");
    }
}

/// Two collisions touch only if their `<collide_bitmask>`s share a bit.
#[test]
fn collide_bitmasks_without_a_common_bit_pass_through() {
    let mask = |m: &str| format!("<surface><contact><collide_bitmask>{m}</collide_bitmask></contact></surface>");
    let z_after = |ball_mask: &str| {
        let body = ground(&mask("0x02")) + &sphere("ball", "0 0 1 0 0 0", 0.1, 1.0, &mask(ball_mask));
        let mut f = load(&world(&body));
        f.run(1000).unwrap();
        pose(&f, "ball").position.z
    };
    let shared = z_after("0x03");
    assert!((shared - 0.1).abs() < 2e-3, "masks sharing bit 0x02 should collide: z {shared}");
    let apart = z_after("0x01");
    assert!(apart < -1.0, "masks 0x01 and 0x02 share no bit, yet the ball stopped at {apart}");
}
