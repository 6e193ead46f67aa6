//! The machines driven by hand, message by message: handshake, mismatches, duplicates,
//! timeouts, stop at a step boundary.

use super::*;
use crate::distributed::assignment::tests::{L1, L2, L3, P1, P2, P3};
use crate::distributed::messages::{envelope::Body, Role};
use crate::distributed::peer::envelope;

fn primary(n: usize) -> Primary {
    let cfg = PrimaryConfig {
        me: peer(Role::Primary, "p"),
        secondaries: n,
        world_fingerprint: FINGERPRINT,
        timing: timing(),
    };
    Primary::new(cfg, Duration::ZERO)
}

/// Delivers everything instantly between the primary and the secondaries until quiet;
/// returns the events, primary first.
fn pump(now: Duration, p: &mut Primary, ss: &mut [Secondary]) -> (Vec<PrimaryEvent>, Vec<Vec<SecondaryEvent>>) {
    let mut pe = Vec::new();
    let mut se = vec![Vec::new(); ss.len()];
    loop {
        let mut busy = false;
        while let Some(t) = p.poll_transmit() {
            busy = true;
            for s in ss.iter_mut() {
                let to_me = match &t.to {
                    Destination::AllSecondaries => true,
                    Destination::Secondary(id) => *id == s_id(s),
                    Destination::Primary => false,
                };
                if to_me {
                    s.handle_message(now, t.msg.clone());
                }
            }
        }
        for s in ss.iter_mut() {
            while let Some(t) = s.poll_transmit() {
                busy = true;
                p.handle_message(now, t.msg);
            }
        }
        if !busy {
            break;
        }
    }
    while let Some(e) = p.poll_event() {
        pe.push(e);
    }
    for (i, s) in ss.iter_mut().enumerate() {
        while let Some(e) = s.poll_event() {
            se[i].push(e);
        }
    }
    (pe, se)
}

fn s_id(s: &Secondary) -> String {
    s.peer().id.clone()
}

fn secondaries(n: usize) -> Vec<Secondary> {
    (1..=n).map(|i| Secondary::new(secondary_config(&format!("s{i}")), Duration::ZERO)).collect()
}

fn failed(o: Option<&Outcome>) -> RunError {
    match o {
        Some(Outcome::Failed(e)) => e.clone(),
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn no_handover(_: &[PerformerId]) -> SerializedStateMap {
    SerializedStateMap::default()
}

#[test]
fn primary_waits_for_exactly_n_secondaries() {
    let mut p = primary(3);
    let mut ss = secondaries(2);
    let (pe, _) = pump(Duration::ZERO, &mut p, &mut ss);
    assert!(pe.is_empty(), "two of three joined: {pe:?}");
    assert_eq!(
        p.begin_step(Duration::ZERO, StepInput::default(), &Membership::new(), no_handover),
        Err(StepRefused::NotReady)
    );
    ss.push(Secondary::new(secondary_config("s3"), Duration::ZERO));
    let (pe, se) = pump(Duration::ZERO, &mut p, &mut ss);
    assert_eq!(pe.len(), 1);
    let PrimaryEvent::Ready(peers) = &pe[0] else { panic!("{pe:?}") };
    assert_eq!(peers.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(), ["s1", "s2", "s3"]);
    for (i, ev) in se.iter().enumerate() {
        assert!(matches!(ev[..], [SecondaryEvent::Enabled { index, count: 3, .. }] if index == i), "{ev:?}");
    }
}

#[test]
fn version_mismatch_names_the_peer_on_both_sides() {
    let mut p = primary(1);
    let mut s = Secondary::new(secondary_config("s1"), Duration::ZERO);
    let mut join = s.poll_transmit().unwrap().msg;
    join.protocol_version = 99;
    p.handle_message(Duration::ZERO, join);
    let err = failed(p.outcome());
    assert_eq!((err.cause, err.peer.id.as_str(), err.peer.role), (Cause::VersionMismatch, "s1", Role::Secondary));
    assert!(err.detail.contains("99"), "{err}");
    assert!(err.to_string().contains("secondary s1 (sim://s1)"), "{err}");
    // The primary tells the secondary, which ends naming itself as the peer at fault.
    let (_, se) = pump(Duration::ZERO, &mut p, &mut [s]);
    let SecondaryEvent::Ended(Outcome::Failed(e)) = &se[0][0] else { panic!("{se:?}") };
    assert_eq!((e.cause, e.peer.id.as_str()), (Cause::VersionMismatch, "s1"));
    assert_eq!(e.reported_by.as_ref().map(|p| p.id.as_str()), Some("p"));
}

#[test]
fn a_secondary_refuses_a_primary_of_another_version() {
    let mut s = Secondary::new(secondary_config("s1"), Duration::ZERO);
    let mut hb = envelope(Body::Heartbeat(messages::Heartbeat { peer: Some(peer(Role::Primary, "p").info()) }));
    hb.protocol_version = PROTOCOL_VERSION + 1;
    s.handle_message(Duration::ZERO, hb);
    let err = failed(s.outcome());
    assert_eq!((err.cause, err.peer.id.as_str(), err.peer.role), (Cause::VersionMismatch, "p", Role::Primary));
}

#[test]
fn fingerprint_mismatch_ends_the_run_naming_the_secondary() {
    let mut p = primary(2);
    let mut ss = secondaries(1);
    let mut odd = secondary_config("s2");
    odd.world_fingerprint = 1;
    ss.push(Secondary::new(odd, Duration::ZERO));
    let (pe, se) = pump(Duration::ZERO, &mut p, &mut ss);
    let err = failed(p.outcome());
    assert_eq!((err.cause, err.peer.id.as_str()), (Cause::FingerprintMismatch, "s2"));
    assert!(err.detail.contains("0x0000000000000001"), "{err}");
    assert!(matches!(pe.last(), Some(PrimaryEvent::Ended(_))));
    // Both secondaries hear why (s1 had joined; s2 is the one refused).
    for (i, s) in ss.iter().enumerate() {
        let e = failed(s.outcome());
        assert_eq!((e.cause, e.peer.id.as_str()), (Cause::FingerprintMismatch, "s2"), "{i}: {se:?}");
    }
}

#[test]
fn a_secondary_checks_the_primarys_fingerprint_too() {
    let mut s = Secondary::new(secondary_config("s1"), Duration::ZERO);
    let ctl = messages::PeerControl {
        peer: Some(peer(Role::Primary, "p").info()),
        enable_sim: true,
        secondary_index: 0,
        secondaries: 1,
        world_fingerprint: 5,
    };
    s.handle_message(Duration::ZERO, envelope(Body::Control(ctl)));
    let err = failed(s.outcome());
    assert_eq!((err.cause, err.peer.id.as_str()), (Cause::FingerprintMismatch, "p"));
    // It tells the primary, which names the secondary that refused it.
    let mut p = primary(1);
    while let Some(t) = s.poll_transmit() {
        p.handle_message(Duration::ZERO, t.msg);
    }
    let perr = failed(p.outcome());
    assert_eq!((perr.cause, perr.peer.id.as_str()), (Cause::FingerprintMismatch, "s1"));
}

/// Handshake of n secondaries and step 1 begun with P1 in L1; returns everything.
fn running(n: usize) -> (Primary, Vec<Secondary>) {
    let mut p = primary(n);
    let mut ss = secondaries(n);
    pump(Duration::ZERO, &mut p, &mut ss);
    assert!(p.begin_step(Duration::ZERO, StepInput::default(), &membership(&[(1, &[10])]), no_handover).is_ok());
    (p, ss)
}

#[test]
fn an_answer_is_applied_once_and_a_repeated_step_is_answered_not_rerun() {
    let (mut p, mut ss) = running(1);
    let step = p.poll_transmit().unwrap();
    assert!(matches!(step.msg.body, Some(Body::Step(_))));
    ss[0].handle_message(Duration::ZERO, step.msg.clone());
    assert!(
        matches!(ss[0].poll_event(), Some(SecondaryEvent::Step(StepOrder { seq: 1, ref take, .. })) if take == &[1])
    );
    // The step again while it runs: ignored.
    ss[0].handle_message(Duration::ZERO, step.msg.clone());
    assert_eq!(ss[0].poll_transmit(), None);
    ss[0].complete_step(1, SerializedStateMap::default(), Vec::new()).unwrap();
    let answer = ss[0].poll_transmit().unwrap();
    // The step once more after answering: the same answer again, no second run.
    ss[0].handle_message(Duration::ZERO, step.msg);
    assert_eq!(ss[0].poll_transmit().as_ref(), Some(&answer));
    assert_eq!(ss[0].poll_event(), None);
    // The primary applies the answer once.
    p.handle_message(Duration::ZERO, answer.msg.clone());
    p.handle_message(Duration::ZERO, answer.msg.clone());
    let events: Vec<_> = std::iter::from_fn(|| p.poll_event()).collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(matches!(&events[0], PrimaryEvent::StepComplete { seq: 1, answers, .. } if answers.len() == 1));
    assert_eq!(p.duplicates_ignored(), 1);
    // An old answer arriving during step 2 is ignored too.
    p.begin_step(Duration::ZERO, StepInput::default(), &membership(&[(1, &[10])]), no_handover).unwrap();
    p.handle_message(Duration::ZERO, answer.msg);
    assert_eq!(p.poll_event(), None);
    assert_eq!(p.duplicates_ignored(), 2);
    assert_eq!(p.completed_seq(), 1);
}

#[test]
fn no_second_step_before_every_answer() {
    let (mut p, mut ss) = running(2);
    assert_eq!(
        p.begin_step(Duration::ZERO, StepInput::default(), &Membership::new(), no_handover),
        Err(StepRefused::InFlight(1))
    );
    let (_, se) = pump(Duration::ZERO, &mut p, &mut ss);
    assert!(se.iter().all(|e| matches!(e[..], [SecondaryEvent::Step(_)])));
    ss[0].complete_step(1, SerializedStateMap::default(), Vec::new()).unwrap();
    let (pe, _) = pump(Duration::ZERO, &mut p, &mut ss);
    assert!(pe.is_empty(), "one answer of two: {pe:?}");
    assert_eq!(
        p.begin_step(Duration::ZERO, StepInput::default(), &Membership::new(), no_handover),
        Err(StepRefused::InFlight(1))
    );
    ss[1].complete_step(1, SerializedStateMap::default(), Vec::new()).unwrap();
    let (pe, _) = pump(Duration::ZERO, &mut p, &mut ss);
    assert!(matches!(pe[..], [PrimaryEvent::StepComplete { seq: 1, .. }]));
    assert_eq!(p.begin_step(Duration::ZERO, StepInput::default(), &Membership::new(), no_handover), Ok(2));
}

#[test]
fn the_topics_the_answers_carry_reach_the_driver_once_each_in_secondary_order() {
    let (mut p, mut ss) = running(2);
    pump(Duration::ZERO, &mut p, &mut ss);
    let t = |name: &str| crate::distributed::messages::Topic { name: name.into(), msg_type: "gz.msgs.IMU".into() };
    ss[1].complete_step(1, SerializedStateMap::default(), vec![t("/b"), t("/both")]).unwrap();
    ss[0].complete_step(1, SerializedStateMap::default(), vec![t("/both"), t("/a")]).unwrap();
    let (pe, _) = pump(Duration::ZERO, &mut p, &mut ss);
    let [PrimaryEvent::StepComplete { seq: 1, topics, .. }] = &pe[..] else { panic!("one completed step: {pe:?}") };
    assert_eq!(topics, &[t("/both"), t("/a"), t("/b")]);
}

#[test]
fn a_missing_answer_ends_the_run_naming_the_secondary_after_the_step_timeout() {
    let (mut p, mut ss) = running(2);
    pump(Duration::ZERO, &mut p, &mut ss);
    ss[0].complete_step(1, SerializedStateMap::default(), Vec::new()).unwrap();
    // s2 never answers but stays alive (heartbeats keep coming).
    let mut now = Duration::ZERO;
    while p.outcome().is_none() {
        now += Duration::from_millis(50);
        assert!(now < Duration::from_secs(10), "the primary hangs");
        p.handle_tick(now);
        ss[0].handle_tick(now);
        ss[1].handle_tick(now);
        pump(now, &mut p, &mut ss);
    }
    let err = failed(p.outcome());
    assert_eq!((err.cause, err.peer.id.as_str()), (Cause::StepAnswerTimeout, "s2"));
    assert!(err.detail.contains("step 1 answered by 1 of 2"), "{err}");
    assert!(now > timing().step_timeout);
    // Every secondary heard it.
    for s in &ss {
        assert_eq!(failed(s.outcome()).peer.id, "s2");
    }
}

#[test]
fn a_silent_primary_is_lost_after_the_peer_timeout() {
    let (mut p, mut ss) = running(1);
    pump(Duration::ZERO, &mut p, &mut ss);
    let mut now = Duration::ZERO;
    while ss[0].outcome().is_none() {
        now += Duration::from_millis(50);
        assert!(now < Duration::from_secs(10), "the secondary hangs");
        ss[0].handle_tick(now);
    }
    let err = failed(ss[0].outcome());
    assert_eq!((err.cause, err.peer.id.as_str(), err.peer.role), (Cause::HeartbeatTimeout, "p", Role::Primary));
    assert!(now > timing().peer_timeout);
}

#[test]
fn a_late_join_ends_the_run_for_everyone_naming_the_joiner() {
    let (mut p, mut ss) = running(2);
    ss.push(Secondary::new(secondary_config("late"), Duration::ZERO));
    pump(Duration::ZERO, &mut p, &mut ss);
    let err = failed(p.outcome());
    assert_eq!((err.cause, err.peer.id.as_str()), (Cause::LateJoin, "late"));
    for s in &ss {
        let e = failed(s.outcome());
        assert_eq!((e.cause, e.peer.id.as_str()), (Cause::LateJoin, "late"));
    }
}

#[test]
fn a_leaving_secondary_ends_the_run_naming_it() {
    let (mut p, mut ss) = running(2);
    ss[1].leave("SIGTERM");
    pump(Duration::ZERO, &mut p, &mut ss);
    let err = failed(p.outcome());
    assert_eq!((err.cause, err.peer.id.as_str(), err.detail.as_str()), (Cause::PeerLeft, "s2", "SIGTERM"));
    assert_eq!(failed(ss[0].outcome()).peer.id, "s2");
}

#[test]
fn stop_waits_for_the_step_boundary_then_ends_every_machine_cleanly() {
    let (mut p, mut ss) = running(2);
    pump(Duration::ZERO, &mut p, &mut ss);
    p.request_stop(Duration::ZERO);
    assert!(p.outcome().is_none(), "step 1 is in flight");
    for s in &mut ss {
        s.complete_step(1, SerializedStateMap::default(), Vec::new()).unwrap();
    }
    let (pe, _) = pump(Duration::ZERO, &mut p, &mut ss);
    assert!(
        matches!(
            pe[..],
            [PrimaryEvent::StepComplete { seq: 1, .. }, PrimaryEvent::Ended(Outcome::Stopped { after_seq: 1 })]
        ),
        "{pe:?}"
    );
    for s in &ss {
        assert_eq!(s.outcome(), Some(&Outcome::Stopped { after_seq: 1 }));
        assert_eq!(s.outcome().unwrap().exit_code(), 0);
    }
}

#[test]
fn join_timeout_when_configured() {
    let mut t = timing();
    t.join_timeout = Some(Duration::from_secs(1));
    let cfg = PrimaryConfig { me: peer(Role::Primary, "p"), secondaries: 2, world_fingerprint: FINGERPRINT, timing: t };
    let mut p = Primary::new(cfg, Duration::ZERO);
    let mut ss = secondaries(1);
    pump(Duration::ZERO, &mut p, &mut ss);
    p.handle_tick(Duration::from_millis(900));
    assert!(p.outcome().is_none());
    p.handle_tick(Duration::from_millis(1100));
    let err = failed(p.outcome());
    assert_eq!(err.cause, Cause::JoinTimeout);
    assert!(err.detail.contains("1 of 2"), "{err}");
}

#[test]
fn without_a_join_timeout_the_primary_waits() {
    let mut p = primary(2);
    p.handle_tick(Duration::from_secs(3600));
    assert!(p.outcome().is_none());
}

#[test]
fn a_stop_during_the_handshake_ends_joined_and_joining_secondaries_cleanly() {
    let mut p = primary(3);
    let mut ss = secondaries(2);
    pump(Duration::ZERO, &mut p, &mut ss);
    p.request_stop(Duration::ZERO);
    // A third secondary's Join arrives while stopping: not a late join.
    ss.push(Secondary::new(secondary_config("s3"), Duration::ZERO));
    pump(Duration::ZERO, &mut p, &mut ss);
    assert_eq!(p.outcome(), Some(&Outcome::Stopped { after_seq: 0 }));
    for s in &ss[..2] {
        assert_eq!(s.outcome(), Some(&Outcome::Stopped { after_seq: 0 }));
    }
}

// ---- Levels: which secondary holds which level (the design's worked examples, docs/distributed.md).

/// Begins a step with `m`, delivers it, and answers it on every secondary; returns each
/// secondary's order and the step message the primary sent.
fn level_step(p: &mut Primary, ss: &mut [Secondary], m: &Membership) -> (Vec<StepOrder>, messages::Step) {
    p.begin_step(Duration::ZERO, StepInput::default(), m, no_handover).unwrap();
    let sent = p.poll_transmit().unwrap();
    let Some(Body::Step(step)) = sent.msg.body.clone() else { panic!("{sent:?}") };
    for s in ss.iter_mut() {
        s.handle_message(Duration::ZERO, sent.msg.clone());
    }
    let (_, se) = pump(Duration::ZERO, p, ss);
    let orders: Vec<StepOrder> = se
        .into_iter()
        .map(|evs| match &evs[..] {
            [SecondaryEvent::Step(o)] => o.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    for (s, o) in ss.iter_mut().zip(&orders) {
        s.complete_step(o.seq, SerializedStateMap::default(), Vec::new()).unwrap();
    }
    let (pe, _) = pump(Duration::ZERO, p, ss);
    assert!(matches!(pe[..], [PrimaryEvent::StepComplete { .. }]), "{pe:?}");
    (orders, step)
}

fn held(orders: &[StepOrder]) -> Vec<Vec<LevelId>> {
    orders.iter().map(|o| o.levels.iter().copied().collect()).collect()
}

/// Seed 001's start (P1 in L1 on S1, P2 and P3 in L2 on S2, S3 idle), then `next`.
fn seed_levels(next: Membership) -> (Vec<StepOrder>, Vec<StepOrder>, messages::Step) {
    let mut p = primary(3);
    let mut ss = secondaries(3);
    pump(Duration::ZERO, &mut p, &mut ss);
    let start = membership(&[(P1, &[L1]), (P2, &[L2]), (P3, &[L2])]);
    let (first, _) = level_step(&mut p, &mut ss, &start);
    let (second, step) = level_step(&mut p, &mut ss, &next);
    (first, second, step)
}

#[test]
fn seed_start_l1_on_s1_l2_on_s2_and_s3_holds_nothing() {
    let mut p = primary(3);
    let mut ss = secondaries(3);
    pump(Duration::ZERO, &mut p, &mut ss);
    let start = membership(&[(P1, &[L1]), (P2, &[L2]), (P3, &[L2])]);
    let (orders, step) = level_step(&mut p, &mut ss, &start);
    assert_eq!(held(&orders), [vec![L1], vec![L2], vec![]]);
    assert_eq!(orders[0].levels_gained, [L1]);
    assert_eq!(
        step.levels.iter().map(|a| (a.level, a.secondary_id.as_str())).collect::<Vec<_>>(),
        [(L1, "s1"), (L2, "s2")]
    );
    assert_eq!(p.level_owners(), &[(L1, 0), (L2, 1)].into());
    // The same membership again: the step carries no level (only changes travel), and
    // every secondary keeps what it holds.
    let (orders, step) = level_step(&mut p, &mut ss, &start);
    assert!(step.levels.is_empty(), "{:?}", step.levels);
    assert_eq!(held(&orders), [vec![L1], vec![L2], vec![]]);
    assert!(orders.iter().all(|o| o.levels_gained.is_empty() && o.levels_lost.is_empty()));
    assert_eq!(ss[1].levels(), &[L2].into());
}

#[test]
fn seed_p1_enters_l3_s1_drops_l1_and_takes_l3() {
    let (_, orders, step) = seed_levels(membership(&[(P1, &[L3]), (P2, &[L2]), (P3, &[L2])]));
    assert_eq!(held(&orders), [vec![L3], vec![L2], vec![]]);
    assert_eq!((orders[0].levels_gained.as_slice(), orders[0].levels_lost.as_slice()), (&[L3][..], &[L1][..]));
    // L1 has no performer left: "no secondary" (empty id) tells everyone to drop it.
    assert_eq!(
        step.levels.iter().map(|a| (a.level, a.secondary_id.as_str())).collect::<Vec<_>>(),
        [(L1, ""), (L3, "s1")]
    );
}

#[test]
fn seed_p1_enters_l2_s1_holds_nothing() {
    let (_, orders, _) = seed_levels(membership(&[(P1, &[L2]), (P2, &[L2]), (P3, &[L2])]));
    assert_eq!(held(&orders), [vec![], vec![L2], vec![]]);
    assert_eq!(orders[0].levels_lost, [L1]);
    assert_eq!(orders[1].take, [P1]);
}

#[test]
fn seed_p2_and_p3_enter_l1_s2_takes_l1_and_s1_holds_nothing() {
    let (_, orders, _) = seed_levels(membership(&[(P1, &[L1]), (P2, &[L1]), (P3, &[L1])]));
    assert_eq!(held(&orders), [vec![], vec![L1], vec![]]);
    assert_eq!((orders[1].levels_gained.as_slice(), orders[1].levels_lost.as_slice()), (&[L1][..], &[L2][..]));
    assert_eq!(orders[0].levels_lost, [L1]);
}

#[test]
fn seed_p3_enters_l3_s3_takes_l3() {
    let (_, orders, _) = seed_levels(membership(&[(P1, &[L1]), (P2, &[L2]), (P3, &[L3])]));
    assert_eq!(held(&orders), [vec![L1], vec![L2], vec![L3]]);
    assert_eq!(orders[2].take, [P3]);
    assert_eq!(orders[2].levels_gained, [L3]);
}

#[test]
fn seed_p2_enters_l1_levels_stay_where_they_are() {
    let (_, orders, step) = seed_levels(membership(&[(P1, &[L1]), (P2, &[L1]), (P3, &[L2])]));
    assert_eq!(held(&orders), [vec![L1], vec![L2], vec![]]);
    assert!(step.levels.is_empty(), "only P2 moves: {:?}", step.levels);
    assert_eq!(orders[0].take, [P2]);
}

#[test]
fn a_performer_straddling_two_levels_brings_both_to_its_secondary() {
    // P1 in L1's buffer and in L3, P3 in L3: one group {P1, P3, L1, L3} on one secondary,
    // which simulates both performers; L2 elsewhere with P2.
    let mut p = primary(3);
    let mut ss = secondaries(3);
    pump(Duration::ZERO, &mut p, &mut ss);
    level_step(&mut p, &mut ss, &membership(&[(P1, &[L1]), (P2, &[L2]), (P3, &[L2])]));
    let (orders, _) = level_step(&mut p, &mut ss, &membership(&[(P1, &[L1, L3]), (P2, &[L2]), (P3, &[L3])]));
    let h = (0..3).find(|&i| orders[i].levels.contains(&L1)).expect("someone holds L1");
    assert_eq!(orders[h].levels, [L1, L3].into());
    assert!(ss[h].owned().contains(&P1) && ss[h].owned().contains(&P3), "{:?}", ss[h].owned());
    let other = (0..3).find(|&i| orders[i].levels.contains(&L2)).expect("someone holds L2");
    assert_ne!(other, h);
    assert_eq!(ss[other].owned(), &[P2].into());
}
