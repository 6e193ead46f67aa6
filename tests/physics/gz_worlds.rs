//! gz-sim's own worlds (`$TROUPE_GZ_WORLDS`), run on rapier: their bodies end where
//! mechanics says they must.

use crate::common::*;
use plugin_api::components::{Inertial, Link, Model};
use plugin_api::math::{Pose, Vec3};
use plugin_api::{Component, EntityId, Which};
use troupe::ecm::Ecm;
use troupe::fixture::TestFixture;

/// The world position of every link's centre of mass, with its mass.
fn centres_of_mass(ecm: &Ecm) -> Vec<(f64, Vec3)> {
    let mut out = Vec::new();
    for l in ecm.query(Which::ALL, &[Link::ID]) {
        let mut world = ecm.get::<Pose>(l).unwrap_or(Pose::IDENTITY);
        let mut cur: Option<EntityId> = ecm.parent(l);
        while let Some(m) = cur.filter(|m| ecm.has::<Model>(*m)) {
            world = compose(ecm.get::<Pose>(m).unwrap_or(Pose::IDENTITY), world);
            cur = ecm.parent(m);
        }
        let i = ecm.get::<Inertial>(l).unwrap_or_default();
        out.push((i.mass, world.transform_point(i.pose.position)));
    }
    out
}

fn compose(a: Pose, b: Pose) -> Pose {
    let q = |x: plugin_api::math::Quat, y: plugin_api::math::Quat| plugin_api::math::Quat {
        w: x.w * y.w - x.x * y.x - x.y * y.y - x.z * y.z,
        x: x.w * y.x + x.x * y.w + x.y * y.z - x.z * y.y,
        y: x.w * y.y - x.x * y.z + x.y * y.w + x.z * y.x,
        z: x.w * y.z + x.x * y.y - x.y * y.x + x.z * y.w,
    };
    Pose { position: a.transform_point(b.position), rotation: q(a.rotation, b.rotation) }
}

fn mass_centre(ecm: &Ecm) -> Vec3 {
    let parts = centres_of_mass(ecm);
    let m: f64 = parts.iter().map(|p| p.0).sum();
    let s =
        parts.iter().fold(Vec3::ZERO, |acc, (mi, c)| Vec3::new(acc.x + mi * c.x, acc.y + mi * c.y, acc.z + mi * c.z));
    s.scale(1.0 / m)
}

/// shapes.sdf: five bodies whose collisions overlap at the start and no ground. Contacts
/// push them apart, but internal forces cancel: the centre of mass of the whole falls
/// freely, exactly as one body would, and does not move sideways.
#[test]
fn shapes_world_falls_with_its_centre_of_mass_in_free_fall() {
    let Some(dir) = troupe_test_machine::gz_worlds() else { return };
    let mut f = TestFixture::from_file(dir.join("shapes.sdf")).unwrap().finalize().unwrap();
    let c0 = mass_centre(f.ecm());
    let parts0 = centres_of_mass(f.ecm());
    let steps = 1000;
    f.run(steps).unwrap();
    let c = mass_centre(f.ecm());
    // Symplectic Euler with 4 substeps (see fall.rs).
    let k = (steps * 4) as f64;
    let h = 0.001 / 4.0;
    let expect_z = c0.z - G * h * h * k * (k + 1.0) / 2.0;
    eprintln!("shapes.sdf: centre of mass {c0:?} -> {c:?}, free fall says z {expect_z}");
    assert!((c.z - expect_z).abs() < 1e-3, "centre of mass z {} vs {expect_z}", c.z);
    assert!((c.x - c0.x).abs() < 1e-3 && (c.y - c0.y).abs() < 1e-3, "centre of mass drifted sideways: {c0:?} -> {c:?}");
    // And the bodies did push each other (the overlaps are not ignored): some moved sideways.
    let parts = centres_of_mass(f.ecm());
    let sideways = parts0.iter().zip(&parts).map(|(a, b)| ((a.1.x - b.1.x).powi(2) + (a.1.y - b.1.y).powi(2)).sqrt());
    let most = sideways.fold(0.0, f64::max);
    assert!(most > 0.1, "no body was pushed sideways: {parts0:?} -> {parts:?}");
}

/// distributed_standalone.sdf: a box, a two-link cylinder model and a sphere dropped on a
/// plane tilted 0.52 rad. The sphere (I = 3 kg m², m = 3 kg, r = 0.5 m) rolls down with
/// a = g sin θ / (1 + I / (m r²)) (friction 1 is enough to roll without slipping). The box
/// lands on its uphill edge, which sets it tumbling, and the slope keeps feeding it: it and
/// the cylinders go down the slope too, never sinking into it.
#[test]
fn distributed_standalone_shapes_roll_down_the_slope() {
    let Some(dir) = troupe_test_machine::gz_worlds() else { return };
    let (s, c) = 0.52f64.sin_cos();
    let normal = Vec3::new(s, 0.0, c);
    let downhill = Vec3::new(c, 0.0, -s);
    let rel = |p: Vec3| Vec3::new(p.x, p.y, p.z + 0.5); // from a point of the plane
    let (mut f, trace) =
        traced(&std::fs::read_to_string(dir.join("distributed_standalone.sdf")).unwrap(), move |ecm| {
            ["sphere", "box", "cylinder"].map(|m| model_pose(ecm, m).position)
        });
    f.run(4000).unwrap();
    let t = trace.lock().unwrap();
    let along = |i: usize, k: usize| rel(t[i][k]).dot(downhill);
    let a = along(2999, 0) - 2.0 * along(1999, 0) + along(999, 0);
    let analytic = G * s / (1.0 + 3.0 / (3.0 * 0.25));
    eprintln!("sphere rolls with a = {a:.4} m/s², analytic {analytic:.4}");
    assert!((a - analytic).abs() < 0.005 * analytic, "rolling acceleration {a} vs {analytic}");
    for (k, name) in ["sphere", "box", "cylinder"].iter().enumerate() {
        // No body sinks into the slope: the sphere's centre stays 0.5 m off it, the box's
        // and the big cylinder's at least their half-size 0.5 m (0.707 on an edge).
        let lowest = t.iter().map(|p| rel(p[k]).dot(normal)).fold(f64::MAX, f64::min);
        assert!(lowest > 0.5 - 5e-3, "{name} sank into the slope: {lowest} m from it");
        let progress = along(3999, k) - along(999, k);
        eprintln!("{name}: {progress:.3} m down the slope between t = 1 s and 4 s");
        assert!(progress > 1.0, "{name} did not go down the slope: {progress} m");
    }
    let d = rel(t[3999][0]).dot(normal);
    assert!((d - 0.5).abs() < 2e-3, "the sphere left the slope: {d}");
}
