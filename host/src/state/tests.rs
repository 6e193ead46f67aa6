use super::samples::samples;
use super::*;
use plugin_api::components::{Link, Model, Name, ParentEntity, Static};
use plugin_api::math::Pose;
use plugin_api::msgs::SerializedEntityMap;
use plugin_api::{Component, Which};

const STAMP: Stamp = Stamp { sim_time_ns: 1_500_000_123, iteration: 1500 };

/// One entity per sample, in catalogue order; answers (entity, type, bytes).
fn ecm_with_every_sample() -> (Ecm, Vec<(EntityId, ComponentTypeId, Vec<u8>)>) {
    let mut ecm = Ecm::new();
    let mut placed = Vec::new();
    for (ty, bytes) in samples() {
        let e = ecm.create_entity();
        ecm.set_raw(e, ty, &bytes, Change::OneTime).unwrap_or_else(|err| panic!("sample of {ty}: {err:?}"));
        placed.push((e, ty, bytes));
    }
    (ecm, placed)
}

fn encode(map: &SerializedStateMap) -> Vec<u8> {
    map.encode_to_vec()
}

#[test]
fn every_registered_component_type_has_a_sample() {
    let have: BTreeSet<ComponentTypeId> = samples().iter().map(|s| s.0).collect();
    let ecm = Ecm::new();
    let missing: Vec<&str> =
        ecm.component_types().filter(|(id, _, _)| !have.contains(id)).map(|(_, name, _)| name).collect();
    assert!(missing.is_empty(), "add a sample to host/src/state/samples.rs for: {missing:?}");
}

#[test]
fn full_state_round_trips_bit_identically_for_every_component_type() {
    let (ecm, placed) = ecm_with_every_sample();
    let bytes = encode(&full_state(&ecm, STAMP));
    let map = decode_state(&bytes).unwrap();
    assert_eq!(Stamp::of(&map), STAMP);

    let mut copy = Ecm::new();
    let done = apply_state(&mut copy, &map).unwrap();
    assert_eq!((done.created, done.set, done.skipped), (placed.len(), placed.len(), 0));
    let mut out = Vec::new();
    for (e, ty, sample) in &placed {
        out.clear();
        assert!(copy.get_raw(*e, *ty, &mut out), "{ty} on {e} lost");
        assert_eq!(&out, sample, "{} on {e} is not bit-identical", copy.component_name(*ty).unwrap());
    }
    assert_eq!(encode(&full_state(&copy, STAMP)), bytes, "state -> bytes -> state -> bytes differs");
}

#[test]
fn changed_state_of_new_entities_carries_everything() {
    let (ecm, _) = ecm_with_every_sample();
    let changed = changed_state(&ecm, STAMP);
    assert!(changed.has_one_time_component_changes);
    let full = full_state(&ecm, STAMP);
    assert_eq!(changed.entities, full.entities, "every entity is new, so changed = full");
}

fn small_world() -> (Ecm, [EntityId; 4]) {
    let mut ecm = Ecm::new();
    let model = ecm.create_entity();
    ecm.set(model, &Model, Change::OneTime).unwrap();
    ecm.set(model, &Name("m".into()), Change::OneTime).unwrap();
    ecm.set(model, &Pose::IDENTITY, Change::OneTime).unwrap();
    let links: Vec<EntityId> = (0..3)
        .map(|i| {
            let l = ecm.create_entity();
            ecm.set(l, &Link, Change::OneTime).unwrap();
            ecm.set(l, &Name(format!("l{i}")), Change::OneTime).unwrap();
            ecm.set(l, &ParentEntity(model), Change::OneTime).unwrap();
            ecm.set(l, &Pose::IDENTITY, Change::OneTime).unwrap();
            l
        })
        .collect();
    ecm.end_step();
    (ecm, [model, links[0], links[1], links[2]])
}

#[test]
fn changed_state_follows_gz_semantics() {
    let (mut ecm, [model, a, b, c]) = small_world();
    assert!(changed_state(&ecm, STAMP).entities.is_empty(), "nothing changed after end_step");

    // Periodic only: the flag stays false.
    let moved = Pose::from_xyz_rpy(0.0, 0.0, 1.0, 0.0, 0.0, 0.0);
    ecm.set(a, &moved, Change::Periodic).unwrap();
    let map = changed_state(&ecm, STAMP);
    assert!(!map.has_one_time_component_changes);
    assert_eq!(map.entities.keys().copied().collect::<Vec<_>>(), vec![a.0]);
    assert_eq!(map.entities[&a.0].components.keys().copied().collect::<Vec<_>>(), vec![Pose::ID.0]);
    assert_eq!(map.entities[&a.0].components[&Pose::ID.0].component, moved.to_bytes());

    // A removed component, an entity pending removal and a new entity.
    assert!(ecm.remove_component(b, Name::ID));
    ecm.request_remove(c, false);
    let new = ecm.create_entity();
    ecm.set(new, &Static(true), Change::OneTime).unwrap();
    let map = changed_state(&ecm, STAMP);
    assert!(map.has_one_time_component_changes);
    assert_eq!(map.entities.keys().copied().collect::<Vec<_>>(), vec![a.0, b.0, c.0, new.0]);
    let removed = &map.entities[&b.0].components[&Name::ID.0];
    assert!(removed.remove && removed.component.is_empty());
    assert!(map.entities[&c.0].remove && map.entities[&c.0].components.is_empty());
    assert_eq!(map.entities[&new.0].components.keys().copied().collect::<Vec<_>>(), vec![Static::ID.0]);
    assert!(!map.entities.contains_key(&model.0));

    // Applied to a copy taken before the step, the copy ends equal to the original.
    let (mut copy, _) = small_world();
    apply_state(&mut copy, &decode_state(&encode(&map)).unwrap()).unwrap();
    copy.end_step();
    ecm.end_step();
    assert_eq!(copy.snapshot(), ecm.snapshot());
    assert_eq!(fingerprint_ecm(&copy), fingerprint_ecm(&ecm));
}

#[test]
fn apply_creates_with_given_ids_and_moves_the_id_counter() {
    let mut ecm = Ecm::new();
    let mut map = SerializedStateMap::default();
    for id in [7u64, 3] {
        let mut entity = SerializedEntityMap { id, ..Default::default() };
        let name = Name(format!("e{id}")).to_bytes();
        entity
            .components
            .insert(Name::ID.0, SerializedComponent { r#type: Name::ID.0, component: name, remove: false });
        map.entities.insert(id, entity);
    }
    let done = apply_state(&mut ecm, &map).unwrap();
    assert_eq!((done.created, done.set), (2, 2));
    assert_eq!(ecm.get::<Name>(EntityId(7)), Some(Name("e7".into())));
    assert_eq!(ecm.create_entity(), EntityId(8), "run-time ids continue above applied ids");
    assert_eq!(ecm.change_of(EntityId(3), Name::ID), Change::OneTime, "created components are one-time");
}

#[test]
fn apply_flags_periodic_unless_the_map_says_one_time() {
    let (mut ecm, [_, a, ..]) = small_world();
    let moved = Pose::from_xyz_rpy(1.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    let mut map = SerializedStateMap::default();
    let mut entity = SerializedEntityMap { id: a.0, ..Default::default() };
    entity
        .components
        .insert(Pose::ID.0, SerializedComponent { r#type: Pose::ID.0, component: moved.to_bytes(), remove: false });
    map.entities.insert(a.0, entity);
    apply_state(&mut ecm, &map).unwrap();
    assert_eq!(ecm.change_of(a, Pose::ID), Change::Periodic);
    ecm.end_step();
    map.has_one_time_component_changes = true;
    map.entities.get_mut(&a.0).unwrap().components.get_mut(&Pose::ID.0).unwrap().component = Pose::IDENTITY.to_bytes();
    apply_state(&mut ecm, &map).unwrap();
    assert_eq!(ecm.change_of(a, Pose::ID), Change::OneTime);
}

#[test]
fn apply_removes_entities_and_components() {
    let (mut ecm, [model, a, b, c]) = small_world();
    let mut map = SerializedStateMap::default();
    map.entities.insert(model.0, SerializedEntityMap { id: model.0, remove: true, ..Default::default() });
    let mut entity = SerializedEntityMap { id: a.0, ..Default::default() };
    entity
        .components
        .insert(Name::ID.0, SerializedComponent { r#type: Name::ID.0, component: Vec::new(), remove: true });
    map.entities.insert(a.0, entity);
    let done = apply_state(&mut ecm, &map).unwrap();
    assert_eq!((done.removed, done.components_removed), (1, 1));
    assert!(!ecm.has::<Name>(a));
    assert_eq!(ecm.query(Which::REMOVED, &[]), vec![model, a, b, c], "removal is recursive, as in gz-sim");
}

#[test]
fn unknown_component_types_are_skipped_not_fatal() {
    let mut ecm = Ecm::new();
    let mut map = SerializedStateMap::default();
    let mut entity = SerializedEntityMap { id: 5, ..Default::default() };
    for ty in [42u64, 43] {
        entity.components.insert(ty, SerializedComponent { r#type: ty, component: vec![1, 2, 3], remove: false });
    }
    entity
        .components
        .insert(Static::ID.0, SerializedComponent { r#type: Static::ID.0, component: vec![1], remove: false });
    map.entities.insert(5, entity);
    let mut applier = StateApplier::new();
    let done = applier.apply(&mut ecm, &map).unwrap();
    assert_eq!((done.created, done.set, done.skipped), (1, 1, 2));
    assert_eq!(applier.warned.len(), 2, "one warning per unknown type");
    applier.apply(&mut ecm, &map).unwrap();
    assert_eq!(applier.warned.len(), 2);
    assert_eq!(ecm.get::<Static>(EntityId(5)), Some(Static(true)));
}

#[test]
fn truncated_and_garbage_messages_are_errors() {
    let (ecm, _) = ecm_with_every_sample();
    let bytes = encode(&full_state(&ecm, STAMP));
    for cut in [1, bytes.len() / 2, bytes.len() - 1] {
        let err = decode_state(&bytes[..cut]).unwrap_err();
        assert!(matches!(err, StateError::Decode(_)), "cut at {cut}: {err}");
    }
    let err = decode_state(&[0xff, 0xff, 0xff]).unwrap_err();
    assert!(err.to_string().starts_with("not a gz.msgs.SerializedStateMap"), "{err}");
}

#[test]
fn wrong_component_bytes_name_the_entity_and_component() {
    let mut ecm = Ecm::new();
    let mut map = SerializedStateMap::default();
    let mut entity = SerializedEntityMap { id: 12, ..Default::default() };
    entity
        .components
        .insert(Pose::ID.0, SerializedComponent { r#type: Pose::ID.0, component: vec![0; 20], remove: false });
    map.entities.insert(12, entity);
    let err = apply_state(&mut ecm, &decode_state(&encode(&map)).unwrap()).unwrap_err();
    match &err {
        StateError::Component { entity, component, reason } => {
            assert_eq!((*entity, component.as_str()), (12, "gz_sim_components.Pose"));
            assert!(reason.contains("more bytes"), "{reason}");
        }
        other => panic!("expected a component error, got {other}"),
    }
    assert!(err.to_string().starts_with("entity 12, component gz_sim_components.Pose: "), "{err}");
}

#[test]
fn inconsistent_keys_and_the_null_entity_are_errors() {
    let mut map = SerializedStateMap::default();
    map.entities.insert(4, SerializedEntityMap { id: 5, ..Default::default() });
    let err = decode_state(&encode(&map)).unwrap_err();
    assert_eq!(err.to_string(), "entity 4: keyed 4 but its id is 5");

    let mut map = SerializedStateMap::default();
    map.entities.insert(0, SerializedEntityMap::default());
    assert_eq!(decode_state(&encode(&map)).unwrap_err().to_string(), "entity 0: 0 is the null entity");

    let mut map = SerializedStateMap::default();
    let mut entity = SerializedEntityMap { id: 2, ..Default::default() };
    entity.components.insert(1, SerializedComponent { r#type: 2, component: vec![], remove: false });
    map.entities.insert(2, entity);
    let err = apply_state(&mut Ecm::new(), &map).unwrap_err();
    assert!(matches!(err, StateError::Component { entity: 2, .. }), "{err}");
}

#[test]
fn fingerprint_ignores_the_header_and_sees_every_value() {
    let (a, [_, link, ..]) = small_world();
    let (mut b, _) = small_world();
    assert_eq!(fingerprint(&full_state(&a, STAMP)), fingerprint(&full_state(&b, Stamp::default())));
    let nudged = Pose::from_xyz_rpy(0.0, 0.0, 1e-12, 0.0, 0.0, 0.0);
    b.set(link, &nudged, Change::Periodic).unwrap();
    assert_ne!(fingerprint_ecm(&a), fingerprint_ecm(&b));
}

#[test]
fn stamp_survives_negative_and_large_times() {
    for stamp in [Stamp { sim_time_ns: -1, iteration: 0 }, Stamp { sim_time_ns: i64::MAX, iteration: u64::MAX }] {
        let map = SerializedStateMap { header: Some(stamp.header()), ..Default::default() };
        assert_eq!(Stamp::of(&decode_state(&encode(&map)).unwrap()), stamp);
    }
}
