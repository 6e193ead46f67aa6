//! Shared helpers: the test worlds, finding entities by scoped name, world poses.

use plugin_api::components::{Collision, Name, WatchContacts, World};
use plugin_api::math::{Pose, Quat, Vec3};
use plugin_api::{Change, EcmRead, EntityId};
use troupe::ecm::Ecm;
use troupe::fixture::TestFixture;

/// A world file of `worlds/test/kinematic/`.
pub fn world_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../worlds/test/kinematic").join(name)
}

/// The text of a world file of `worlds/test/kinematic/`.
pub fn world_text(name: &str) -> String {
    let path = world_path(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The motion world, loaded and running.
pub fn motion() -> TestFixture {
    TestFixture::from_file(world_path("motion.sdf")).unwrap_or_else(|e| panic!("motion.sdf: {e}"))
}

/// The entity at `path` (`model/link/collision`) below the world, in the host's ECM.
pub fn find(ecm: &Ecm, path: &str) -> EntityId {
    let world = ecm.query(plugin_api::Which::ALL, &[<World as plugin_api::Component>::ID])[0];
    let mut current = world;
    for part in path.split('/') {
        current = ecm
            .children(current)
            .find(|c| ecm.get::<Name>(*c).is_some_and(|n| n.0 == part))
            .unwrap_or_else(|| panic!("no entity {path:?} (stuck at {part:?})"));
    }
    current
}

/// The same through a plugin-side ECM (in hooks).
pub fn find_in(ecm: &impl EcmRead, path: &str) -> EntityId {
    let mut current = ecm.entities_with(&[<World as plugin_api::Component>::ID])[0];
    for part in path.split('/') {
        current = ecm.child_by_name(current, part).unwrap_or_else(|| panic!("no entity {path:?} (stuck at {part:?})"));
    }
    current
}

/// Pose of `entity` in the world: its Pose composed with its ancestors' up to the world.
pub fn world_pose(ecm: &Ecm, entity: EntityId) -> Pose {
    let mut pose = ecm.get::<Pose>(entity).unwrap_or_else(|| panic!("entity {entity} has no Pose"));
    let mut e = entity;
    while let Some(parent) = ecm.parent(e) {
        match ecm.get::<Pose>(parent) {
            Some(p) => pose = p * pose,
            None => break,
        }
        e = parent;
    }
    pose
}

/// Asks physics for the contacts of the collisions at `paths` (call in a configure hook).
pub fn watch(ecm: &mut plugin_api::Ecm<'_>, paths: &[&str]) -> plugin_api::Result {
    for p in paths {
        let c = find_in(ecm, p);
        assert!(ecm.has::<Collision>(c), "{p} is not a collision");
        ecm.set(c, &WatchContacts, Change::OneTime)?;
    }
    Ok(())
}

/// Whether two vectors are within `tol` of each other (Euclidean).
pub fn near(a: Vec3, b: Vec3, tol: f64) -> bool {
    (a - b).length() <= tol
}

/// The angle between two rotations, rad.
pub fn angle_between(a: Quat, b: Quat) -> f64 {
    let d = (a.inverse() * b).normalized();
    2.0 * d.w.abs().min(1.0).acos()
}
