//! The rule's unit tests: the design's worked examples (docs/distributed.md) (S1-S3, L1-L3, P1-P3), grouping, and
//! an exhaustive check that the minimisation is exact on many small random cases.

use super::*;

// Seed 001's names for its worked examples' levels and performers (the protocol's
// machine tests use them too).
pub(crate) const L1: LevelId = 1;
pub(crate) const L2: LevelId = 2;
pub(crate) const L3: LevelId = 3;
pub(crate) const P1: PerformerId = 11;
pub(crate) const P2: PerformerId = 12;
pub(crate) const P3: PerformerId = 13;
const S1: usize = 0;
const S2: usize = 1;
const S3: usize = 2;

fn membership(entries: &[(PerformerId, &[LevelId])]) -> Membership {
    entries.iter().map(|(p, ls)| (*p, ls.iter().copied().collect())).collect()
}

/// Seed 001 "Initially": P1 in L1, P2 and P3 in L2, L3 empty.
fn seed_start() -> Membership {
    membership(&[(P1, &[L1]), (P2, &[L2]), (P3, &[L2])])
}

fn owners(entries: &[(PerformerId, usize)]) -> Owners {
    entries.iter().copied().collect()
}

/// Runs one redistribution from the seed's initial situation.
fn from_seed_start(next: Membership) -> (Owners, Vec<(PerformerId, usize)>) {
    let start = seed_start();
    let first = assign(&start, &Membership::new(), &Owners::new(), 3);
    let new = assign(&next, &start, &first, 3);
    let moves = changes(&first, &new);
    (new, moves)
}

fn idle(o: &Owners, n: usize) -> Vec<usize> {
    (0..n).filter(|s| !o.values().any(|v| v == s)).collect()
}

#[test]
fn seed_initial_l1_on_s1_l2_on_s2_s3_idle() {
    let o = assign(&seed_start(), &Membership::new(), &Owners::new(), 3);
    assert_eq!(o, owners(&[(P1, S1), (P2, S2), (P3, S2)]));
    assert_eq!(idle(&o, 3), vec![S3]);
}

#[test]
fn seed_p1_enters_l3_no_reassignment() {
    let (o, moves) = from_seed_start(membership(&[(P1, &[L3]), (P2, &[L2]), (P3, &[L2])]));
    assert_eq!(moves, vec![], "no reassignments");
    assert_eq!(o, owners(&[(P1, S1), (P2, S2), (P3, S2)]), "S1 simulates L3, S2 L2");
    assert_eq!(
        level_secondaries(&membership(&[(P1, &[L3]), (P2, &[L2]), (P3, &[L2])]), &o),
        [(L2, S2), (L3, S1)].into()
    );
}

#[test]
fn seed_p1_enters_l2_p1_moves_to_s2_s1_idle() {
    let (o, moves) = from_seed_start(membership(&[(P1, &[L2]), (P2, &[L2]), (P3, &[L2])]));
    assert_eq!(moves, vec![(P1, S2)]);
    assert_eq!(idle(&o, 3), vec![S1, S3]);
    assert!(!o.values().any(|&s| s == S1), "S1 is idle");
}

#[test]
fn seed_p2_and_p3_enter_l1_together_p1_moves_to_s2_s1_idle() {
    let (o, moves) = from_seed_start(membership(&[(P1, &[L1]), (P2, &[L1]), (P3, &[L1])]));
    assert_eq!(moves, vec![(P1, S2)]);
    assert_eq!(o, owners(&[(P1, S2), (P2, S2), (P3, S2)]));
    assert!(!o.values().any(|&s| s == S1), "S1 is idle");
}

#[test]
fn seed_p3_enters_l3_p3_moves_to_s3() {
    let (o, moves) = from_seed_start(membership(&[(P1, &[L1]), (P2, &[L2]), (P3, &[L3])]));
    assert_eq!(moves, vec![(P3, S3)]);
    assert_eq!(o, owners(&[(P1, S1), (P2, S2), (P3, S3)]));
    assert_eq!(idle(&o, 3), Vec::<usize>::new());
}

#[test]
fn seed_p2_enters_l1_p2_moves_to_s1() {
    let (o, moves) = from_seed_start(membership(&[(P1, &[L1]), (P2, &[L1]), (P3, &[L2])]));
    assert_eq!(moves, vec![(P2, S1)]);
    assert_eq!(o, owners(&[(P1, S1), (P2, S1), (P3, S2)]));
}

#[test]
fn levels_sharing_a_performer_are_one_group_and_free_performers_are_their_own() {
    // P1 straddles L1 and L3 (a buffer overlap), P2 is in L3: one group {P1, P2, L1, L3}.
    let m = membership(&[(P1, &[L1, L3]), (P2, &[L3]), (P3, &[]), (20, &[L2])]);
    let gs = groups(&m);
    assert_eq!(gs.len(), 3);
    assert_eq!(gs[0].performers, [P1, P2].into());
    assert_eq!(gs[0].levels, [L1, L3].into());
    assert_eq!(gs[1].performers, [20].into());
    assert_eq!(gs[2].performers, [P3].into(), "a performer in no level comes last, alone");
    assert!(gs[2].levels.is_empty());
}

#[test]
fn chains_of_levels_merge_whatever_the_union_order() {
    // L5-L4 via P1, L4-L3 via P2, L3-L1 via P3: all one group, lowest level L1.
    let m = membership(&[(1, &[4, 5]), (2, &[3, 4]), (3, &[1, 3]), (4, &[2])]);
    let gs = groups(&m);
    assert_eq!(gs.len(), 2);
    assert_eq!(gs[0].levels, [1, 3, 4, 5].into());
    assert_eq!(gs[1].levels, [2].into());
}

#[test]
fn initial_round_robin_levels_first_then_free_performers_continuing() {
    // Levels 2 and 7 go to S1, S2; free performers continue at S3, then wrap to S1.
    let m = membership(&[(1, &[]), (2, &[7]), (3, &[2]), (4, &[])]);
    let o = assign(&m, &Membership::new(), &Owners::new(), 3);
    assert_eq!(o, owners(&[(3, 0), (2, 1), (1, 2), (4, 0)]));
}

#[test]
fn a_new_performer_costs_no_move_and_fills_an_idle_secondary() {
    let start = seed_start();
    let first = assign(&start, &Membership::new(), &Owners::new(), 3);
    let mut next = start.clone();
    next.insert(14, BTreeSet::new());
    let o = assign(&next, &start, &first, 3);
    assert_eq!(changes(&first, &o), vec![(14, S3)]);
}

#[test]
fn removed_performers_are_dropped() {
    let start = seed_start();
    let first = assign(&start, &Membership::new(), &Owners::new(), 3);
    let next = membership(&[(P1, &[L1]), (P2, &[L2])]);
    let o = assign(&next, &start, &first, 3);
    assert_eq!(o, owners(&[(P1, S1), (P2, S2)]));
}

#[test]
fn no_performers_no_owners() {
    assert!(assign(&Membership::new(), &Membership::new(), &Owners::new(), 2).is_empty());
}

/// The four criteria of a complete assignment, as the module docs order them.
fn score(gs: &[Group], choice: &[usize], prev: &Membership, old: &Owners, n: usize) -> (usize, usize, usize, usize) {
    let level_on = level_secondaries(prev, old);
    let used: BTreeSet<usize> = choice.iter().copied().collect();
    let mut moves = 0;
    let mut not_kept = 0;
    let mut index_sum = 0;
    for (g, &s) in gs.iter().zip(choice) {
        moves += g.performers.iter().filter(|p| old.get(p).is_some_and(|&o| o != s)).count();
        if current_secondary(g, &level_on, old) != Some(s) {
            not_kept += 1;
            index_sum += s;
        }
    }
    (n - used.len(), moves, not_kept, index_sum)
}

/// A tiny deterministic generator for the exhaustive check.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
    fn membership(&mut self, performers: u64, levels: u64) -> Membership {
        (1..=performers)
            .map(|p| {
                let ls: BTreeSet<LevelId> = (0..self.below(3)).map(|_| 100 + self.below(levels)).collect();
                (p, ls)
            })
            .collect()
    }
    /// A random small case: secondaries, a membership, its first assignment, and the next
    /// step's membership of the same performers.
    fn case(&mut self) -> (usize, Membership, Owners, Membership) {
        let n = 1 + self.below(4) as usize;
        let performers = 1 + self.below(6);
        let levels = 1 + self.below(5);
        let prev = self.membership(performers, levels);
        let first = assign(&prev, &Membership::new(), &Owners::new(), n);
        let next = self.membership(performers, levels);
        (n, prev, first, next)
    }
}

#[test]
fn redistribution_is_the_exact_lexicographic_minimum() {
    let mut rng = Rng(7);
    for case in 0..400 {
        let (n, prev, old, next) = rng.case();
        let got = assign(&next, &prev, &old, n);
        let gs = groups(&next);
        let got_choice: Vec<usize> = gs.iter().map(|g| got[g.performers.first().unwrap()]).collect();
        // Every group on one secondary.
        for g in &gs {
            assert!(g.performers.iter().all(|p| got[p] == got[g.performers.first().unwrap()]), "case {case}");
        }
        // Brute force over all n^g choices.
        let mut best = None;
        let total = (n as u64).pow(gs.len() as u32);
        for code in 0..total {
            let mut c = code;
            let choice: Vec<usize> = gs
                .iter()
                .map(|_| {
                    let s = (c % n as u64) as usize;
                    c /= n as u64;
                    s
                })
                .collect();
            let sc = score(&gs, &choice, &prev, &old, n);
            if best.is_none_or(|b| sc < b) {
                best = Some(sc);
            }
        }
        assert_eq!(score(&gs, &got_choice, &prev, &old, n), best.unwrap(), "case {case}: {prev:?} -> {next:?} on {n}");
    }
}

/// What lets the primary skip the rule while the membership stays the same.
#[test]
fn an_assignment_is_kept_while_the_membership_stays_the_same() {
    let mut rng = Rng(11);
    for case in 0..400 {
        let (n, prev, first, next) = rng.case();
        assert_eq!(assign(&prev, &prev, &first, n), first, "case {case}: the first assignment of {prev:?} on {n}");
        let later = assign(&next, &prev, &first, n);
        assert_eq!(assign(&next, &next, &later, n), later, "case {case}: {prev:?} -> {next:?} on {n}");
    }
}

#[test]
fn hungarian_finds_the_minimum_on_a_rectangular_matrix() {
    let cost = vec![vec![4, 1, 3, 9], vec![2, 0, 5, 9], vec![3, 2, 2, 9]];
    let got = min_cost_assignment(&cost);
    let total: i64 = got.iter().enumerate().map(|(r, &c)| cost[r][c]).sum();
    assert_eq!(total, 5, "{got:?}"); // 1 + 2 + 2
    let distinct: BTreeSet<usize> = got.iter().copied().collect();
    assert_eq!(distinct.len(), 3);
}

#[test]
fn level_changes_list_new_moved_and_dropped_levels_in_level_order() {
    let old: BTreeMap<LevelId, usize> = [(L1, S1), (L2, S2)].into();
    // L1 moves to S2, L2 loses its performers, L3 appears on S3.
    let new: BTreeMap<LevelId, usize> = [(L1, S2), (L3, S3)].into();
    assert_eq!(level_changes(&old, &new), [(L1, Some(S2)), (L2, None), (L3, Some(S3))]);
    assert_eq!(level_changes(&new, &new), []);
    assert_eq!(level_changes(&BTreeMap::new(), &old), [(L1, Some(S1)), (L2, Some(S2))]);
}
