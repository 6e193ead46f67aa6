//! Which secondary simulates which performer: the design's grouping and assignment rule (docs/distributed.md), as
//! pure functions of the levels each performer is in and of the previous assignment.
//!
//! * **Groups.** A performer with the levels it is in (buffers included) is a group; two
//!   levels that share a performer are one group; a performer in no level is a group of its
//!   own. A group is simulated by one secondary, so one level never is split.
//! * **First assignment** (no performer has an owner yet): round-robin over the secondaries,
//!   groups with levels first in ascending order of their lowest level id, then the groups
//!   with no level (in ascending performer id).
//! * **Redistribution** (every later step): the assignment of groups to secondaries that
//!   minimises, in this order, (1) the number of idle secondaries, (2) the number of
//!   performers that change secondary, (3) the groups not kept on their current secondary,
//!   then (4) the indices of the secondaries the other groups go to (lowest first).
//!
//! A group's *current secondary* is the secondary that simulated its levels at the previous
//! step (the one holding most of them, lowest index on a tie). A group whose levels were all
//! empty has none: it goes where criteria (1) and (2) send it, else to the lowest index. A
//! group with no level follows its performer. This is what makes the design's example "P3
//! enters L3: P3 is moved to S3" come out of the rule: moving P3 (with the empty level L3)
//! or P2 (with L2) to the idle S3 each move one performer; only P2's group has a current
//! secondary (L2 was on S2), so it stays and P3 moves. Had the current secondary been taken
//! from the performers instead, both groups would be "on S2" and the rule would not decide.
//!
//! The minimisation is exact: criteria (2)-(4) become one integer cost per (group,
//! secondary), weighted so an earlier criterion always dominates a later one, and criterion
//! (1) is a shape constraint (with at least as many groups as secondaries every secondary
//! gets a group, else every group gets its own secondary), solved as an assignment problem
//! (Hungarian method, `O(n² m)`).

use std::collections::{BTreeMap, BTreeSet};

/// A performer's entity id (the same on every process: ids are a function of the world).
pub type PerformerId = u64;
/// A level's entity id.
pub type LevelId = u64;
/// The levels each performer is in (buffers included), for every performer of the world.
pub type Membership = BTreeMap<PerformerId, BTreeSet<LevelId>>;
/// Each performer's secondary, by secondary index (secondaries sorted by peer id, from 0).
pub type Owners = BTreeMap<PerformerId, usize>;

/// Performers that must be simulated together, with the levels that tie them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The performers of the group (at least one).
    pub performers: BTreeSet<PerformerId>,
    /// The levels they are in (empty for a performer in no level).
    pub levels: BTreeSet<LevelId>,
}

/// Splits the performers into groups, in the design's round-robin order: groups with levels
/// by ascending lowest level id, then groups with no level by performer id.
pub fn groups(membership: &Membership) -> Vec<Group> {
    // Union-find over levels: every level a performer is in joins the performer's first.
    let mut parent: BTreeMap<LevelId, LevelId> = BTreeMap::new();
    fn find(parent: &mut BTreeMap<LevelId, LevelId>, l: LevelId) -> LevelId {
        let p = *parent.entry(l).or_insert(l);
        if p == l {
            return l;
        }
        let root = find(parent, p);
        parent.insert(l, root);
        root
    }
    for levels in membership.values() {
        let mut it = levels.iter();
        if let Some(&first) = it.next() {
            let mut a = find(&mut parent, first);
            for &l in it {
                let b = find(&mut parent, l);
                let (lo, hi) = (a.min(b), a.max(b));
                parent.insert(hi, lo);
                a = lo;
            }
        }
    }
    let mut with_levels: BTreeMap<LevelId, Group> = BTreeMap::new();
    let mut without: Vec<Group> = Vec::new();
    for (&p, levels) in membership {
        match levels.first() {
            None => without.push(Group { performers: [p].into(), levels: BTreeSet::new() }),
            Some(&l) => {
                let root = find(&mut parent, l);
                let g = with_levels
                    .entry(root)
                    .or_insert_with(|| Group { performers: BTreeSet::new(), levels: BTreeSet::new() });
                g.performers.insert(p);
                g.levels.extend(levels.iter().copied());
            }
        }
    }
    // Roots are not always the lowest level (a union may link two roots in any order), so
    // sort by the real lowest level id.
    let mut out: Vec<Group> = with_levels.into_values().collect();
    out.sort_by_key(|g| g.levels.first().copied());
    out.extend(without);
    out
}

/// The first assignment: groups round-robined over `secondaries` in [`groups`]' order.
pub fn initial(groups: &[Group], secondaries: usize) -> Owners {
    assert!(secondaries > 0, "an assignment needs at least one secondary");
    let mut owners = Owners::new();
    for (i, g) in groups.iter().enumerate() {
        for &p in &g.performers {
            owners.insert(p, i % secondaries);
        }
    }
    owners
}

/// Where each level was simulated: the secondary of the performers in it (the lowest index
/// should they disagree, which an assignment made by this module never produces).
pub fn level_secondaries(membership: &Membership, owners: &Owners) -> BTreeMap<LevelId, usize> {
    let mut out: BTreeMap<LevelId, usize> = BTreeMap::new();
    for (p, levels) in membership {
        if let Some(&s) = owners.get(p) {
            for &l in levels {
                let e = out.entry(l).or_insert(s);
                *e = (*e).min(s);
            }
        }
    }
    out
}

/// The assignment for `membership` given the previous step's membership and owners:
/// [`initial`] when no performer of `membership` has an owner yet, else the redistribution
/// rule of the module docs. Performers no longer in `membership` are dropped.
pub fn assign(membership: &Membership, previous: &Membership, owners: &Owners, secondaries: usize) -> Owners {
    assert!(secondaries > 0, "an assignment needs at least one secondary");
    let gs = groups(membership);
    if !membership.keys().any(|p| owners.contains_key(p)) {
        return initial(&gs, secondaries);
    }
    let level_on = level_secondaries(previous, owners);
    let n = secondaries;
    let g_count = gs.len();
    if g_count == 0 {
        return Owners::new();
    }
    // Weights: K exceeds any sum of criterion-(4) terms, BIG any sum of (3)+(4) terms.
    let k = (g_count as i64) * (n as i64) + 1;
    let big = (g_count as i64) * (k + n as i64) + 1;
    let cost: Vec<Vec<i64>> = gs
        .iter()
        .map(|g| {
            let current = current_secondary(g, &level_on, owners);
            (0..n)
                .map(|s| {
                    let moves = g.performers.iter().filter(|p| owners.get(p).is_some_and(|&o| o != s)).count();
                    let keep = if current == Some(s) { 0 } else { k + s as i64 };
                    moves as i64 * big + keep
                })
                .collect()
        })
        .collect();
    let choice: Vec<usize> = if g_count < n {
        // Criterion (1): every group on its own secondary.
        min_cost_assignment(&cost)
    } else {
        // Criterion (1): every secondary gets a group. One "witness" group per secondary is
        // matched at its extra cost over that group's best secondary; every other group
        // takes its best secondary (costs are distinct per secondary, so best is unique).
        let best: Vec<usize> = cost.iter().map(|row| (0..n).min_by_key(|&s| (row[s], s)).expect("n > 0")).collect();
        let extra: Vec<Vec<i64>> =
            (0..n).map(|s| (0..g_count).map(|g| cost[g][s] - cost[g][best[g]]).collect()).collect();
        let witness = min_cost_assignment(&extra);
        let mut choice = best;
        for (s, &g) in witness.iter().enumerate() {
            choice[g] = s;
        }
        choice
    };
    let mut out = Owners::new();
    for (g, &s) in gs.iter().zip(&choice) {
        for &p in &g.performers {
            out.insert(p, s);
        }
    }
    out
}

/// The group's current secondary (see the module docs).
fn current_secondary(g: &Group, level_on: &BTreeMap<LevelId, usize>, owners: &Owners) -> Option<usize> {
    if g.levels.is_empty() {
        return g.performers.iter().find_map(|p| owners.get(p).copied());
    }
    let mut count: BTreeMap<usize, usize> = BTreeMap::new();
    for l in &g.levels {
        if let Some(&s) = level_on.get(l) {
            *count.entry(s).or_default() += 1;
        }
    }
    // Most levels first, then the lowest index (max_by_key keeps the last maximum, so
    // compare on the negated index).
    count.into_iter().max_by_key(|&(s, c)| (c, std::cmp::Reverse(s))).map(|(s, _)| s)
}

/// The changes from `old` to `new`: every performer whose owner is new or different, with
/// its new owner, in performer order.
pub fn changes(old: &Owners, new: &Owners) -> Vec<(PerformerId, usize)> {
    new.iter().filter(|(p, s)| old.get(p) != Some(s)).map(|(&p, &s)| (p, s)).collect()
}

/// The changes from `old` to `new` level placements (from [`level_secondaries`]): every
/// level whose secondary is new or different, with it, and every level no secondary holds
/// any more, with `None`; in level order.
pub fn level_changes(old: &BTreeMap<LevelId, usize>, new: &BTreeMap<LevelId, usize>) -> Vec<(LevelId, Option<usize>)> {
    let mut out: Vec<(LevelId, Option<usize>)> =
        new.iter().filter(|(l, s)| old.get(l) != Some(s)).map(|(&l, &s)| (l, Some(s))).collect();
    out.extend(old.keys().filter(|l| !new.contains_key(l)).map(|&l| (l, None)));
    out.sort_by_key(|&(l, _)| l);
    out
}

/// Minimum-cost assignment of every row to a distinct column (`rows <= columns`), by the
/// Hungarian method with potentials. Returns each row's column.
fn min_cost_assignment(cost: &[Vec<i64>]) -> Vec<usize> {
    let rows = cost.len();
    if rows == 0 {
        return Vec::new();
    }
    let cols = cost[0].len();
    assert!(rows <= cols, "more rows than columns");
    const INF: i64 = i64::MAX / 4;
    // 1-based arrays; column 0 is the virtual start.
    let mut u = vec![0i64; rows + 1];
    let mut v = vec![0i64; cols + 1];
    let mut row_of = vec![0usize; cols + 1];
    let mut way = vec![0usize; cols + 1];
    for i in 1..=rows {
        row_of[0] = i;
        let mut j0 = 0usize;
        let mut minv = vec![INF; cols + 1];
        let mut used = vec![false; cols + 1];
        loop {
            used[j0] = true;
            let i0 = row_of[j0];
            let mut delta = INF;
            let mut j1 = 0usize;
            for j in 1..=cols {
                if !used[j] {
                    let cur = cost[i0 - 1][j - 1] - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=cols {
                if used[j] {
                    u[row_of[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if row_of[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            row_of[j0] = row_of[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut out = vec![0usize; rows];
    for j in 1..=cols {
        if row_of[j] != 0 {
            out[row_of[j] - 1] = j - 1;
        }
    }
    out
}

#[cfg(test)]
#[path = "assignment_tests.rs"]
pub(crate) mod tests;
