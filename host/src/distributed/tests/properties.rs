//! Properties over many seeds on the simulated network: every fault the seed draws
//! (loss, delay, reordering, duplication, partitions, late joins, leaves, slow secondaries)
//! ends the run the way the protocol promises, and the lockstep invariants hold throughout
//! (checked inside [`Cluster`]: no step before all answers, one run per step per secondary,
//! one owner per performer, answers applied once and for their own step).

use super::*;

const SEEDS: u64 = 500;
/// Simulated time after which a run that has not ended counts as a hang.
const LIMIT: Duration = Duration::from_secs(300);

fn lossy(rng: &mut Rng) -> LinkConfig {
    LinkConfig {
        loss: rng.below(20) as f64 / 100.0,
        duplicate: rng.below(10) as f64 / 100.0,
        reorder: rng.below(10) as f64 / 100.0,
        delay_min: Duration::from_millis(1),
        delay_max: Duration::from_millis(1 + rng.below(40)),
    }
}

/// Memberships for `steps` steps: performers wander between levels.
fn wandering(rng: &mut Rng, steps: u64) -> Vec<Membership> {
    let performers = 1 + rng.below(6);
    let levels = 1 + rng.below(4);
    let pick = |rng: &mut Rng| -> BTreeSet<LevelId> { (0..rng.below(3)).map(|_| 100 + rng.below(levels)).collect() };
    let mut m: Membership = (1..=performers).map(|p| (p, pick(rng))).collect();
    let mut out = Vec::new();
    for _ in 0..steps {
        for p in 1..=performers {
            if rng.chance(0.15) {
                m.insert(p, pick(rng));
            }
        }
        out.push(m.clone());
    }
    out
}

/// A cluster with a random size, links, script and secondary speed, all from `seed`.
fn random_cluster(seed: u64) -> Cluster<SimNet> {
    let mut net = SimNet::new(seed);
    let n = 1 + net.rng().below(4) as usize;
    let link = lossy(net.rng());
    let mut rng = Rng::new(seed.wrapping_mul(31));
    let script = wandering(&mut rng, 40);
    let mut c = Cluster::new(net, seed, n, link, script);
    c.max_compute_ticks = c.rng.below(4);
    c
}

fn assert_clean_invariants(seed: u64, c: &Cluster<SimNet>) {
    assert!(c.violations.is_empty(), "seed {seed}: {:#?}", c.violations);
}

fn failure(seed: u64, who: &str, o: &Option<Outcome>) -> RunError {
    match o {
        Some(Outcome::Failed(e)) => e.clone(),
        other => panic!("seed {seed}: {who} ended {other:?}, expected a failure"),
    }
}

#[test]
fn a_normal_stop_ends_every_machine_cleanly_after_the_same_step() {
    let mut handovers = 0;
    let mut level_moves = 0;
    for seed in 0..SEEDS {
        let mut c = random_cluster(seed);
        let stop = 1 + c.rng.below(25);
        c.stop_after = Some(stop);
        assert!(
            c.run(LIMIT),
            "seed {seed}: hang (primary {:?}, secondaries {:?})",
            c.primary_outcome,
            c.secondary_outcomes
        );
        assert_clean_invariants(seed, &c);
        assert_eq!(c.primary_outcome, Some(Outcome::Stopped { after_seq: stop }), "seed {seed}");
        for (i, o) in c.secondary_outcomes.iter().enumerate() {
            assert_eq!(o, &Some(Outcome::Stopped { after_seq: stop }), "seed {seed}: secondary {i}");
        }
        assert_eq!(c.completed, (1..=stop).collect::<Vec<_>>(), "seed {seed}");
        handovers += c.handovers.len();
        level_moves += c.level_moves;
    }
    // Levels changed secondary (or were dropped) after the first step in many runs.
    assert!(level_moves > SEEDS as usize, "only {level_moves} level moves in {SEEDS} runs");
    // The scripts move performers: the properties were checked across real hand-overs.
    assert!(handovers > SEEDS as usize, "only {handovers} hand-overs in {SEEDS} runs");
}

/// Runs `seed` until step 1 completed, then until every machine ended, with `action`
/// done at a random moment (between steps or mid-step) within the next second.
fn with_fault(seed: u64, action: impl Fn(usize) -> Action) -> (Cluster<SimNet>, usize) {
    let mut c = random_cluster(seed);
    let victim = c.rng.below(c.ids.len() as u64) as usize;
    run_until_started(seed, &mut c, 1);
    let at = c.now + TICK * (1 + c.rng.below(100)) as u32;
    c.actions.push((at, action(victim)));
    assert!(
        c.run(LIMIT),
        "seed {seed}: hang (primary {:?}, secondaries {:?})",
        c.primary_outcome,
        c.secondary_outcomes
    );
    assert_clean_invariants(seed, &c);
    (c, victim)
}

/// Runs until step `k` completed (the run has surely started).
fn run_until_started(seed: u64, c: &mut Cluster<SimNet>, k: u64) {
    while (c.completed.len() as u64) < k {
        assert!(c.primary_outcome.is_none(), "seed {seed}: ended before step {k}: {:?}", c.primary_outcome);
        assert!(c.now < LIMIT, "seed {seed}: step {k} never completed");
        c.run(c.now + TICK);
    }
}

#[test]
fn a_partition_ends_the_run_naming_the_cut_peer() {
    for seed in 0..SEEDS {
        let (c, victim) = with_fault(seed, Action::Partition);
        let lost = &c.ids[victim];
        let p = failure(seed, "primary", &c.primary_outcome);
        assert_eq!(&p.peer.id, lost, "seed {seed}: primary names {p}");
        assert!(matches!(p.cause, Cause::HeartbeatTimeout | Cause::StepAnswerTimeout), "seed {seed}: {p}");
        let cut = failure(seed, lost, &c.secondary_outcomes[victim]);
        assert_eq!((cut.peer.id.as_str(), cut.cause), ("p", Cause::HeartbeatTimeout), "seed {seed}: {cut}");
        for (i, o) in c.secondary_outcomes.iter().enumerate() {
            if i != victim {
                let e = failure(seed, &c.ids[i], o);
                assert_eq!(&e.peer.id, lost, "seed {seed}: {} names {e}", c.ids[i]);
            }
        }
    }
}

#[test]
fn a_leaving_secondary_ends_the_run_naming_it() {
    for seed in 0..SEEDS {
        let (c, victim) = with_fault(seed, Action::Leave);
        let gone = &c.ids[victim];
        let p = failure(seed, "primary", &c.primary_outcome);
        assert_eq!(&p.peer.id, gone, "seed {seed}: {p}");
        // Its Leave may be lost on the way; then its silence names it.
        assert!(
            matches!(p.cause, Cause::PeerLeft | Cause::HeartbeatTimeout | Cause::StepAnswerTimeout),
            "seed {seed}: {p}"
        );
        for (i, o) in c.secondary_outcomes.iter().enumerate() {
            let e = failure(seed, &c.ids[i], o);
            assert_eq!(&e.peer.id, gone, "seed {seed}: {} names {e}", c.ids[i]);
        }
    }
}

#[test]
fn a_late_join_ends_the_run_for_everyone_as_seed_001_says() {
    for seed in 0..SEEDS {
        let mut c = random_cluster(seed);
        let k = 1 + c.rng.below(10);
        run_until_started(seed, &mut c, k);
        c.actions.push((c.now + TICK, Action::LateJoin("late".into())));
        assert!(
            c.run(LIMIT),
            "seed {seed}: hang (primary {:?}, secondaries {:?})",
            c.primary_outcome,
            c.secondary_outcomes
        );
        assert_clean_invariants(seed, &c);
        let p = failure(seed, "primary", &c.primary_outcome);
        assert_eq!((p.cause, p.peer.id.as_str()), (Cause::LateJoin, "late"), "seed {seed}: {p}");
        for (i, o) in c.secondary_outcomes.iter().enumerate() {
            let e = failure(seed, &c.ids[i], o);
            assert_eq!((e.cause, e.peer.id.as_str()), (Cause::LateJoin, "late"), "seed {seed}: {} ended {e}", c.ids[i]);
        }
    }
}

#[test]
fn the_same_seed_replays_the_same_run() {
    for seed in [3, 77, 4242] {
        let run = |seed| {
            let (c, _) = with_fault(seed, Action::Partition);
            (c.completed, c.handovers, c.primary_outcome, c.secondary_outcomes, c.now)
        };
        assert_eq!(run(seed), run(seed), "seed {seed}");
    }
}
