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

fn posed(ecm: &mut Ecm, x: f64) -> EntityId {
    let e = ecm.create_entity();
    ecm.set(e, &Pose::from_xyz_rpy(x, 0.0, 0.0, 0.0, 0.0, 0.0), Change::OneTime).unwrap();
    ecm.set(e, &Static(false), Change::OneTime).unwrap();
    e
}

#[test]
fn lent_records_are_the_values_and_only_changed_ones_are_flagged() {
    let mut ecm = Ecm::new();
    let ids: Vec<EntityId> = (0..4).map(|i| posed(&mut ecm, i as f64)).collect();
    // One without Static: not in the query.
    let other = ecm.create_entity();
    ecm.set(other, &Pose::IDENTITY, Change::OneTime).unwrap();
    ecm.end_step();
    ecm.lend_records_mut(
        Which::ALL,
        &[Pose::ID, Static::ID],
        Pose::ID,
        Change::Periodic,
        |lent, records, bytes, changed| {
            assert_eq!(lent, ids.as_slice());
            for (i, &r) in records.iter().enumerate() {
                let record = &mut bytes[r as usize * 56..][..56];
                assert_eq!(Pose::from_bytes(record).unwrap().position.x, i as f64);
                if i % 2 == 1 {
                    let mut p = Pose::from_bytes(record).unwrap();
                    p.position.z = 9.0;
                    record.copy_from_slice(&p.to_bytes());
                    changed.push(i as u32);
                }
            }
        },
    )
    .unwrap();
    let flags: Vec<Change> = ids.iter().map(|&e| ecm.change_of(e, Pose::ID)).collect();
    assert_eq!(flags, [Change::None, Change::Periodic, Change::None, Change::Periodic]);
    assert_eq!(ecm.get::<Pose>(ids[3]).unwrap().position.z, 9.0);
    assert_eq!(ecm.get::<Pose>(ids[2]).unwrap().position.z, 0.0);
    ecm.end_step();
    assert_eq!(ecm.change_of(ids[3], Pose::ID), Change::None, "flags end with the step");
}

#[test]
fn a_one_time_flag_wins_over_a_lent_periodic_change() {
    let mut ecm = Ecm::new();
    let a = posed(&mut ecm, 1.0);
    let b = posed(&mut ecm, 2.0);
    ecm.end_step();
    ecm.mark_changed(a, Pose::ID, Change::OneTime);
    let all =
        |_: &[EntityId], records: &[u32], _: &mut [u8], changed: &mut Vec<u32>| changed.extend(0..records.len() as u32);
    ecm.lend_records_mut(Which::ALL, &[Pose::ID], Pose::ID, Change::Periodic, all).unwrap();
    assert_eq!((ecm.change_of(a, Pose::ID), ecm.change_of(b, Pose::ID)), (Change::OneTime, Change::Periodic));
    ecm.lend_records_mut(Which::ALL, &[Pose::ID], Pose::ID, Change::OneTime, all).unwrap();
    assert_eq!(ecm.change_of(b, Pose::ID), Change::OneTime);
    let err = ecm
        .lend_records_mut(Which::ALL, &[Pose::ID], Pose::ID, Change::Periodic, |_, _, _, changed| changed.push(7))
        .unwrap_err();
    assert!(err.message.contains("changed index 7 of 2"), "{err}");
}

#[test]
fn lending_follows_removals_and_answers_ascending_ids() {
    let mut ecm = Ecm::new();
    let ids: Vec<EntityId> = (0..5).map(|i| posed(&mut ecm, i as f64)).collect();
    ecm.request_remove(ids[1], false);
    ecm.end_step();
    // Reuses the freed specs slot: slot order is no longer id order.
    let late = posed(&mut ecm, 10.0);
    ecm.remove_component(ids[3], Pose::ID);
    let mut seen = Vec::new();
    ecm.lend_records(Which::ALL, &[Pose::ID], Pose::ID, |lent, records, bytes| {
        for (&id, &r) in lent.iter().zip(records) {
            seen.push((id, Pose::from_bytes(&bytes[r as usize * 56..][..56]).unwrap().position.x));
        }
    })
    .unwrap();
    assert_eq!(seen, [(ids[0], 0.0), (ids[2], 2.0), (ids[4], 4.0), (late, 10.0)]);
    let mut new = Vec::new();
    ecm.lend_records(Which::NEW, &[Pose::ID], Pose::ID, |lent, _, _| new.extend_from_slice(lent)).unwrap();
    assert_eq!(new, [late]);
}

#[test]
fn what_cannot_be_lent_is_refused() {
    let mut ecm = Ecm::new();
    let e = posed(&mut ecm, 0.0);
    ecm.set(e, &Name("n".into()), Change::OneTime).unwrap();
    let none = |_: &[EntityId], _: &[u32], _: &mut [u8], _: &mut Vec<u32>| {};
    let err = ecm.lend_records_mut(Which::ALL, &[Name::ID], Name::ID, Change::Periodic, none).unwrap_err();
    assert!(err.message.contains("no fixed size"), "{err}");
    let err = ecm.lend_records_mut(Which::ALL, &[Static::ID], Pose::ID, Change::Periodic, none).unwrap_err();
    assert!(err.message.contains("must include it"), "{err}");
    let err =
        ecm.lend_records_mut(Which::ALL, &[ParentEntity::ID], ParentEntity::ID, Change::Periodic, none).unwrap_err();
    assert!(err.message.contains("set_parent"), "{err}");
}

#[test]
fn fixed_size_third_party_components_are_lent_too() {
    let mut ecm = Ecm::new();
    let battery = ecm.register_component("acme.Battery", Some(8)).unwrap();
    let e = ecm.create_entity();
    ecm.set_raw(e, battery, &7.5f64.to_le_bytes(), Change::OneTime).unwrap();
    let err = ecm.set_raw(e, battery, &[1, 2], Change::OneTime).unwrap_err();
    assert!(err.message.contains("needs 8 bytes"), "{err}");
    ecm.end_step();
    ecm.lend_records_mut(Which::ALL, &[battery], battery, Change::OneTime, |_, records, bytes, changed| {
        bytes[records[0] as usize * 8..][..8].copy_from_slice(&1.25f64.to_le_bytes());
        changed.push(0);
    })
    .unwrap();
    let mut out = Vec::new();
    assert!(ecm.get_raw(e, battery, &mut out));
    assert_eq!((out, ecm.change_of(e, battery)), (1.25f64.to_le_bytes().to_vec(), Change::OneTime));
}

#[test]
fn for_each_mut_through_the_facade_updates_in_place_and_flags_changes() {
    use plugin_api::EcmRead;
    let mut ecm = Ecm::new();
    let ids: Vec<EntityId> = (0..3).map(|i| posed(&mut ecm, i as f64)).collect();
    ecm.end_step();
    {
        let mut access = EcmAccess::new(&mut ecm, None);
        let mut facade = plugin_api::Ecm::from_ffi(access.as_mut_obj());
        let mut visited = Vec::new();
        facade
            .for_each_mut::<Pose>(&[Static::ID], Change::Periodic, |id, pose| {
                visited.push(id);
                if pose.position.x >= 1.0 {
                    pose.position.z += 0.5;
                }
            })
            .unwrap();
        assert_eq!(visited, ids);
        let mut read = Vec::new();
        facade.for_each::<Pose>(&[], |id, pose| read.push((id, pose.position.z))).unwrap();
        assert_eq!(read, [(ids[0], 0.0), (ids[1], 0.5), (ids[2], 0.5)]);
        let err = facade.for_each_mut::<Pose>(&[Name::ID], Change::Periodic, |_, _| {}).map(|_| ());
        assert!(err.is_ok(), "no entity matches: nothing to do");
    }
    let flags: Vec<Change> = ids.iter().map(|&e| ecm.change_of(e, Pose::ID)).collect();
    assert_eq!(flags, [Change::None, Change::Periodic, Change::Periodic]);
}

#[test]
fn a_panic_inside_for_each_mut_reaches_the_caller() {
    let mut ecm = Ecm::new();
    posed(&mut ecm, 0.0);
    let mut access = EcmAccess::new(&mut ecm, None);
    let mut facade = plugin_api::Ecm::from_ffi(access.as_mut_obj());
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = facade.for_each_mut::<Pose>(&[], Change::Periodic, |_, _| panic!("boom in a lent value"));
    }));
    let payload = caught.unwrap_err();
    assert_eq!(plugin_api::panic_message(&*payload), "boom in a lent value");
}

#[test]
fn the_structure_version_moves_with_every_structural_change_and_only_then() {
    let mut ecm = Ecm::new();
    let mut last = ecm.structure_version();
    assert_ne!(last, 0, "0 means unknown to plugins");
    let mut moved = |ecm: &Ecm, what: &str, expected: bool| {
        let now = ecm.structure_version();
        assert_eq!(now != last, expected, "{what}: {last} -> {now}");
        last = now;
    };
    let a = ecm.create_entity();
    moved(&ecm, "an entity created", true);
    ecm.set(a, &Pose::IDENTITY, Change::OneTime).unwrap();
    moved(&ecm, "a component added", true);
    ecm.set(a, &Pose::from_xyz_rpy(1.0, 0.0, 0.0, 0.0, 0.0, 0.0), Change::Periodic).unwrap();
    ecm.end_step();
    moved(&ecm, "a value written, a step ended with nothing to remove", false);
    let b = ecm.create_entity();
    ecm.end_step();
    moved(&ecm, "another entity", true);
    let (ids, data) = ([a, b], [Static(true).to_bytes(), Static(false).to_bytes()].concat());
    ecm.write_many(Static::ID, &ids, &data, Change::OneTime).unwrap();
    moved(&ecm, "components added in bulk", true);
    ecm.write_many(Static::ID, &ids, &data, Change::OneTime).unwrap();
    ecm.clear_changes();
    moved(&ecm, "the same values written in bulk, flags cleared", false);
    assert!(ecm.remove_component(b, Static::ID));
    moved(&ecm, "a component removed", true);
    assert!(!ecm.remove_component(b, Static::ID));
    moved(&ecm, "removing an absent component", false);
    ecm.request_remove(b, false);
    moved(&ecm, "a removal requested", true);
    ecm.request_remove(b, false);
    moved(&ecm, "the same removal requested again", false);
    ecm.end_step();
    moved(&ecm, "the entity removed at the end of the step", true);
    let snapshot = ecm.snapshot();
    ecm.restore(&snapshot).unwrap();
    moved(&ecm, "a snapshot restored", true);
}

#[test]
fn a_query_cache_asks_the_host_again_only_after_a_structural_change() {
    use plugin_api::QueryCache;
    let mut ecm = Ecm::new();
    let a = posed(&mut ecm, 0.0);
    ecm.end_step();
    let mut cache = QueryCache::new();
    let mut access = EcmAccess::new(&mut ecm, None);
    let mut facade = plugin_api::Ecm::from_ffi(access.as_mut_obj());
    assert!(!cache.refresh(&facade), "nothing kept yet");
    assert_eq!(cache.entities_with(&facade, &[Pose::ID, Static::ID]), [a]);
    // Values written: the structure is the same, and so is the answer.
    facade.set(a, &Pose::from_xyz_rpy(2.0, 0.0, 0.0, 0.0, 0.0, 0.0), Change::Periodic).unwrap();
    assert!(cache.refresh(&facade));
    assert_eq!(cache.entities_with(&facade, &[Pose::ID, Static::ID]), [a]);
    // A new carrier: the next refresh forgets the answer and the query is asked again.
    let b = facade.create_entity(None);
    facade.set(b, &Pose::IDENTITY, Change::OneTime).unwrap();
    facade.set(b, &Static(false), Change::OneTime).unwrap();
    assert_eq!(cache.entities_with(&facade, &[Pose::ID, Static::ID]), [a], "until refreshed, the kept answer");
    assert!(!cache.refresh(&facade));
    assert_eq!(cache.entities_with(&facade, &[Pose::ID, Static::ID]), [a, b]);
    assert!(facade.remove::<Static>(a));
    assert!(!cache.refresh(&facade));
    assert_eq!(cache.entities_with(&facade, &[Pose::ID, Static::ID]), [b]);
    assert_eq!(cache.entities_with(&facade, &[Name::ID]), [] as [EntityId; 0], "each set of types has its own answer");
}
