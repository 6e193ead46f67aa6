//! Contacts of watched collisions: overlapping shapes report them, separate ones do not,
//! and every primitive shape has the size and axis its SDF gives it.

use crate::support::{find, find_in, motion, near, watch, world_path};
use plugin_api::components::{Contact, ContactSensorData, LinearVelocityCmd, WatchContacts};
use plugin_api::math::Vec3;
use plugin_api::{Change, EntityId};
use troupe::ecm::Ecm;
use troupe::fixture::TestFixture;

fn contacts(ecm: &Ecm, collision: EntityId) -> Vec<Contact> {
    ecm.get::<ContactSensorData>(collision)
        .unwrap_or_else(|| panic!("collision {collision} has no ContactSensorData"))
        .0
}

#[test]
fn overlapping_boxes_report_their_contact_and_separate_ones_do_not() {
    let mut f = motion()
        .on_configure(|ctx| watch(&mut ctx.ecm, &["box_a/link/c", "box_b/link/c", "box_c/link/c"]))
        .finalize()
        .unwrap();
    f.run(1).unwrap();
    let [a, b, c] = ["box_a/link/c", "box_b/link/c", "box_c/link/c"].map(|p| find(f.ecm(), p));

    let of_a = contacts(f.ecm(), a);
    assert_eq!(of_a.len(), 1, "{of_a:?}");
    let contact = &of_a[0];
    assert_eq!((contact.collision1, contact.collision2), (a, b));
    let n = contact.positions.len();
    assert!(
        n >= 1 && contact.normals.len() == n && contact.depths.len() == n && contact.forces.len() == n,
        "{contact:?}"
    );
    for i in 0..n {
        // box_a spans x -0.5..0.5, box_b 0.4..1.4: 0.1 m deep, pushed apart along x.
        assert!((contact.depths[i] - 0.1).abs() < 1e-9, "{contact:?}");
        assert!(
            near(contact.normals[i], Vec3::new(-1.0, 0.0, 0.0), 1e-9),
            "normal must point from b to a: {contact:?}"
        );
        let p = contact.positions[i];
        assert!(
            (p.x - 0.45).abs() < 1e-9 && p.z >= -1e-9 && p.z <= 1.0 + 1e-9 && (p.y - 10.0).abs() <= 0.5 + 1e-9,
            "{p:?}"
        );
        assert_eq!(contact.forces[i], Vec3::ZERO, "a kinematic engine has no contact forces");
    }
    let of_b = contacts(f.ecm(), b);
    assert_eq!(of_b.len(), 1);
    assert_eq!((of_b[0].collision1, of_b[0].collision2), (b, a));
    assert!(of_b[0].normals.iter().all(|n| near(*n, Vec3::new(1.0, 0.0, 0.0), 1e-9)), "{of_b:?}");
    // box_c is 1 m clear of box_b: watched, with no contacts.
    assert!(contacts(f.ecm(), c).is_empty());
}

#[test]
fn a_moving_box_touches_then_leaves() {
    let mut f = motion()
        .on_configure(|ctx| {
            watch(&mut ctx.ecm, &["box_c/link/c"])?;
            let c = find_in(&ctx.ecm, "box_c");
            ctx.ecm.set(c, &LinearVelocityCmd(Vec3::new(-1.0, 0.0, 0.0)), Change::OneTime)?;
            Ok(())
        })
        .on_pre_update(|info, ecm| {
            if info.iterations == 1101 {
                let c = find_in(ecm, "box_c");
                ecm.set(c, &LinearVelocityCmd(Vec3::new(1.0, 0.0, 0.0)), Change::OneTime)?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    let (b, c) = (find(f.ecm(), "box_b/link/c"), find(f.ecm(), "box_c/link/c"));
    // 1 m apart at 1 m/s: clear after 0.99 s, 0.1 m deep after 1.1 s, clear again once it
    // has backed off for more than 0.1 s.
    f.run(990).unwrap();
    assert!(contacts(f.ecm(), c).is_empty());
    f.run(110).unwrap();
    let now = contacts(f.ecm(), c);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_eq!(now[0].collision2, b);
    assert!(now[0].depths.iter().all(|d| (d - 0.1).abs() < 1e-9), "{now:?}");
    f.run(120).unwrap();
    assert!(contacts(f.ecm(), c).is_empty(), "contact left behind after separating");
}

#[test]
fn every_primitive_shape_touches_the_ground_as_deep_as_its_size_says() {
    let shapes = ["box", "sphere", "cylinder", "capsule", "ellipsoid", "mesh"];
    let paths: Vec<String> = shapes.iter().map(|s| format!("{s}/link/c")).collect();
    let watched = paths.clone();
    let mut f = TestFixture::from_file(world_path("shapes.sdf"))
        .unwrap()
        .on_configure(move |ctx| watch(&mut ctx.ecm, &watched.iter().map(String::as_str).collect::<Vec<_>>()))
        .finalize()
        .unwrap();
    f.run(1).unwrap();
    let plane = find(f.ecm(), "ground/link/plane");
    for (shape, path) in shapes.iter().zip(&paths) {
        let found = contacts(f.ecm(), find(f.ecm(), path));
        if *shape == "mesh" {
            assert!(found.is_empty(), "meshes are not collided: {found:?}");
            continue;
        }
        assert_eq!(found.len(), 1, "{shape}: {found:?}");
        assert_eq!(found[0].collision2, plane, "{shape}");
        let deepest = found[0].depths.iter().cloned().fold(f64::MIN, f64::max);
        // Every shape's lowest point is 0.01 m below the plane. The ellipsoid is a hull
        // that sticks out of it by at most 1 % of a radius (0.5 m along z).
        let allowed = if *shape == "ellipsoid" { 0.01 + 0.01 * 0.5 } else { 0.01 + 1e-9 };
        assert!(deepest >= 0.01 - 1e-9 && deepest <= allowed, "{shape}: deepest {deepest}");
        assert!(found[0].normals.iter().all(|n| near(*n, Vec3::new(0.0, 0.0, 1.0), 1e-9)), "{shape}: {found:?}");
    }
}

#[test]
fn a_collision_no_longer_watched_loses_its_contacts() {
    let mut f = motion()
        .on_configure(|ctx| watch(&mut ctx.ecm, &["box_a/link/c"]))
        .on_pre_update(|info, ecm| {
            if info.iterations == 3 {
                assert!(ecm.remove::<WatchContacts>(find_in(ecm, "box_a/link/c")));
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    let a = find(f.ecm(), "box_a/link/c");
    f.run(2).unwrap();
    assert_eq!(contacts(f.ecm(), a).len(), 1);
    f.run(1).unwrap();
    assert!(!f.ecm().has::<ContactSensorData>(a), "stale contacts left on an unwatched collision");
}
