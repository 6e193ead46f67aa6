use super::*;
use plugin_api::components::{Name, Static};
use plugin_api::math::Pose;

fn named(ecm: &mut Ecm, name: &str) -> EntityId {
    let e = ecm.create_entity();
    ecm.set(e, &Name(name.into()), Change::OneTime).unwrap();
    e
}

#[test]
fn ids_are_never_reused_and_file_ids_are_kept() {
    let mut ecm = Ecm::new();
    ecm.reserve_ids(10);
    ecm.create_with_id(EntityId(3)).unwrap();
    let a = ecm.create_entity();
    assert_eq!(a, EntityId(11));
    ecm.request_remove(a, true);
    ecm.end_step();
    let b = ecm.create_entity();
    assert_eq!(b, EntityId(12), "a removed id must not come back");
    assert!(ecm.create_with_id(EntityId(3)).is_err());
    ecm.create_with_id(EntityId(40)).unwrap();
    assert_eq!(ecm.create_entity(), EntityId(41), "run-time ids continue above explicit ones");
}

#[test]
fn removal_is_deferred_and_recursive() {
    let mut ecm = Ecm::new();
    let parent = named(&mut ecm, "p");
    let child = named(&mut ecm, "c");
    ecm.set(child, &ParentEntity(parent), Change::OneTime).unwrap();
    assert_eq!(ecm.children(parent).collect::<Vec<_>>(), vec![child]);
    ecm.request_remove(parent, true);
    assert!(ecm.has_entity(child) && ecm.is_marked_for_removal(child));
    assert_eq!(ecm.query(Which::ALL, &[Name::ID]), vec![parent, child], "queries still see them");
    assert_eq!(ecm.query(Which::REMOVED, &[Name::ID]), vec![parent, child]);
    ecm.end_step();
    assert!(!ecm.has_entity(parent) && !ecm.has_entity(child));
    assert!(ecm.query(Which::ALL, &[Name::ID]).is_empty());
}

#[test]
fn change_tracking_follows_gz_semantics() {
    let mut ecm = Ecm::new();
    let e = named(&mut ecm, "e");
    assert_eq!(ecm.change_of(e, Name::ID), Change::OneTime, "creation is a one-time change");
    assert_eq!(ecm.query(Which::NEW, &[Name::ID]), vec![e]);
    ecm.end_step();
    assert_eq!(ecm.change_of(e, Name::ID), Change::None);
    assert!(ecm.query(Which::NEW, &[Name::ID]).is_empty());
    ecm.set(e, &Pose::IDENTITY, Change::Periodic).unwrap();
    ecm.end_step();
    let moved = Pose::from_xyz_rpy(1.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    assert!(ecm.set(e, &moved, Change::Periodic).unwrap());
    assert_eq!(ecm.change_of(e, Pose::ID), Change::Periodic);
    assert!(!ecm.set(e, &moved, Change::OneTime).unwrap(), "same value: no change");
    assert_eq!(ecm.change_of(e, Pose::ID), Change::Periodic);
    assert!(ecm.remove_component(e, Pose::ID));
    assert_eq!(ecm.removed_components(), &[(e, Pose::ID)]);
}

#[test]
fn queries_are_ascending_and_intersect() {
    let mut ecm = Ecm::new();
    let ids: Vec<_> = (0..50).map(|i| named(&mut ecm, &format!("e{i}"))).collect();
    for (i, e) in ids.iter().enumerate() {
        if i % 3 == 0 {
            ecm.set(*e, &Static(true), Change::OneTime).unwrap();
        }
    }
    // Free some specs slots and reuse them with higher ids, so slot order != id order.
    for e in &ids[..10] {
        ecm.request_remove(*e, false);
    }
    ecm.end_step();
    let late: Vec<_> = (0..5).map(|i| named(&mut ecm, &format!("late{i}"))).collect();
    for e in &late {
        ecm.set(*e, &Static(true), Change::OneTime).unwrap();
    }
    let got = ecm.query(Which::ALL, &[Name::ID, Static::ID]);
    let mut want: Vec<_> = ids[10..].iter().enumerate().filter(|(i, _)| (i + 10) % 3 == 0).map(|(_, e)| *e).collect();
    want.extend(&late);
    assert_eq!(got, want);
    assert!(ecm.query(Which::ALL, &[ComponentTypeId(42)]).is_empty(), "unknown type matches nothing");
}

#[test]
fn bulk_read_and_write_round_trip() {
    let mut ecm = Ecm::new();
    let ids: Vec<_> = (0..4).map(|i| named(&mut ecm, &format!("b{i}"))).collect();
    for (i, e) in ids.iter().enumerate() {
        ecm.set(*e, &Pose::from_xyz_rpy(i as f64, 0.0, 0.0, 0.0, 0.0, 0.0), Change::None).unwrap();
    }
    let (mut got, mut data) = (Vec::new(), Vec::new());
    ecm.query_read(Which::ALL, &[Pose::ID], Pose::ID, &mut got, &mut data).unwrap();
    assert_eq!(got, ids);
    assert_eq!(data.len(), 4 * 56);
    let mut moved = Vec::new();
    for chunk in data.chunks_exact(56) {
        let mut p = Pose::from_bytes(chunk).unwrap();
        p.position.z = 5.0;
        moved.extend(p.to_bytes());
    }
    ecm.end_step();
    ecm.write_many(Pose::ID, &ids, &moved, Change::Periodic).unwrap();
    assert_eq!(ecm.get::<Pose>(ids[2]).unwrap().position.z, 5.0);
    assert_eq!(ecm.change_of(ids[2], Pose::ID), Change::Periodic);
    let err = ecm.write_many(Pose::ID, &ids, &moved[..10], Change::Periodic).unwrap_err();
    assert!(err.message.contains("10 bytes for 4 entities"), "{err}");
    let err = ecm.read_many(Name::ID, &ids, &mut Vec::new()).unwrap_err();
    assert!(err.message.contains("no fixed size"), "{err}");
}

#[test]
fn third_party_components_by_name() {
    let mut ecm = Ecm::new();
    let id = ecm.register_component("acme.Battery", Some(8)).unwrap();
    assert_eq!(id, ComponentTypeId::of_name("acme.Battery"));
    assert_eq!(ecm.register_component("acme.Battery", Some(8)).unwrap(), id);
    assert!(ecm.register_component("acme.Battery", None).is_err(), "size changed");
    let e = ecm.create_entity();
    ecm.set_raw(e, id, &7.5f64.to_le_bytes(), Change::OneTime).unwrap();
    let mut out = Vec::new();
    assert!(ecm.get_raw(e, id, &mut out));
    assert_eq!(out, 7.5f64.to_le_bytes());
    assert_eq!(ecm.query(Which::ALL, &[id]), vec![e]);
    let err = ecm.set_raw(e, ComponentTypeId(1), &[], Change::OneTime).unwrap_err();
    assert!(err.message.contains("not registered"), "{err}");
}

#[test]
fn malformed_bytes_are_refused_without_side_effects() {
    let mut ecm = Ecm::new();
    let e = ecm.create_entity();
    let err = ecm.set_raw(e, Pose::ID, &[1, 2, 3], Change::OneTime).unwrap_err();
    assert!(err.message.contains("gz_sim_components.Pose"), "{err}");
    assert!(!ecm.has::<Pose>(e));
}

#[test]
fn snapshot_restore_keeps_ids_and_drops_later_entities() {
    let mut ecm = Ecm::new();
    ecm.reserve_ids(5);
    ecm.create_with_id(EntityId(1)).unwrap();
    ecm.set(EntityId(1), &Name("world".into()), Change::OneTime).unwrap();
    ecm.create_with_id(EntityId(2)).unwrap();
    ecm.set(EntityId(2), &ParentEntity(EntityId(1)), Change::OneTime).unwrap();
    let snap = ecm.snapshot();
    ecm.end_step();
    let spawned = named(&mut ecm, "spawned");
    ecm.request_remove(EntityId(2), true);
    ecm.end_step();
    ecm.restore(&snap).unwrap();
    assert_eq!(ecm.snapshot(), snap);
    assert!(!ecm.has_entity(spawned));
    assert_eq!(ecm.children(EntityId(1)).collect::<Vec<_>>(), vec![EntityId(2)]);
    assert!(ecm.create_entity().0 > spawned.0, "ids are not reused after a reset");
}
