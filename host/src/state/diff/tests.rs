use super::*;
use crate::state::log::tests::{record, TempPath};

#[test]
fn two_recordings_of_the_same_run_do_not_differ() {
    let (a, b) = (TempPath::new("same-a"), TempPath::new("same-b"));
    record(&a.0, 6, 0.25, 4);
    record(&b.0, 6, 0.25, 1000);
    let report = diff_logs(&a.0, &b.0, 0.0).unwrap();
    assert_eq!(report.outcome, Outcome::Same { steps: 6 }, "keyframes do not count as steps");
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    assert!(report.to_string().starts_with("no difference"));
}

#[test]
fn the_first_differing_step_entity_and_component_are_reported() {
    let (a, b) = (TempPath::new("diff-a"), TempPath::new("diff-b"));
    record(&a.0, 5, 0.25, 1000);
    record(&b.0, 5, 0.25 + 1e-9, 1000);
    let report = diff_logs(&a.0, &b.0, 0.0).unwrap();
    match &report.outcome {
        Outcome::Different { step: 1, stamp, mismatch: Mismatch::Value { entity: 1, name, component, a, b } } => {
            assert_eq!(stamp.iteration, 1);
            assert_eq!((name.as_str(), component.as_str()), ("link0", "gz_sim_components.Pose"));
            assert!(a.contains("z: 0.25") && b.contains("z: 0.250000001"), "{a} / {b}");
        }
        other => panic!("unexpected outcome {other:?}"),
    }
    let text = report.to_string();
    assert!(text.contains("first difference at step 1 (iteration 1, sim time 0.001000000 s)"), "{text}");
    assert!(text.contains("entity 1 (link0), component gz_sim_components.Pose"), "{text}");
    // Within tolerance, the float difference is no difference.
    assert_eq!(diff_logs(&a.0, &b.0, 1e-6).unwrap().outcome, Outcome::Same { steps: 5 });
}

#[test]
fn a_shorter_log_is_reported() {
    let (a, b) = (TempPath::new("short-a"), TempPath::new("short-b"));
    record(&a.0, 3, 0.25, 1000);
    record(&b.0, 5, 0.25, 1000);
    let report = diff_logs(&a.0, &b.0, 0.0).unwrap();
    assert_eq!(report.outcome, Outcome::Shorter { shorter: Side::A, steps: 3, other_steps: 5 });
    assert!(!report.identical());
    let report = diff_logs(&b.0, &a.0, 0.0).unwrap();
    assert_eq!(report.outcome, Outcome::Shorter { shorter: Side::B, steps: 3, other_steps: 5 });
}

#[test]
fn views_follow_full_and_changed_records() {
    let mut view = StateView::default();
    let mut full = SerializedStateMap::default();
    for id in [1u64, 2] {
        full.entities.insert(id, plugin_api::msgs::SerializedEntityMap { id, ..Default::default() });
    }
    view.apply(RecordKind::Full, &full);
    let mut changed = SerializedStateMap::default();
    changed.entities.insert(2, plugin_api::msgs::SerializedEntityMap { id: 2, remove: true, ..Default::default() });
    changed.entities.insert(3, plugin_api::msgs::SerializedEntityMap { id: 3, ..Default::default() });
    view.apply(RecordKind::Changed, &changed);
    assert_eq!(view.entities.keys().copied().collect::<Vec<_>>(), vec![1, 3]);
    let only_three = SerializedStateMap { entities: [(3, changed.entities[&3].clone())].into(), ..Default::default() };
    view.apply(RecordKind::Full, &only_three);
    assert_eq!(view.entities.keys().copied().collect::<Vec<_>>(), vec![3], "a full record replaces the state");

    let other = StateView { entities: [(3, BTreeMap::new()), (4, BTreeMap::new())].into() };
    assert_eq!(
        first_mismatch(&view, &other, 0.0),
        Some(Mismatch::Entity { entity: 4, name: "?".into(), only_in: Side::B })
    );
}
