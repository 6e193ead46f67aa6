//! `troupe log diff`: rebuild the state at every step of two logs and find the first
//! step, entity and component where they differ.
//!
//! Step 0 is the state right after loading (the first record); step n is the state after
//! the n-th changed record. Full records met on the way (keyframes, resets) replace the
//! state. At each step the clocks are compared first (iteration and sim time), then the
//! entities in ascending id order and their components in ascending type order; the first
//! mismatch is reported with both values.
//!
//! With `--performers` only the entities of performers (each performer's model and its
//! descendants) are compared: a distributed run's primary and a standalone run load
//! different plugins (the primary no physics), so the rest of their worlds may differ.
//! With `--by-iteration` a step is an iteration: the state after the last record of each
//! iteration is compared, so logs that carried out the same commands while paused in a
//! different number of paused steps (a distributed primary needs one more: the command goes
//! down with the next step) compare equal when they agree at every iteration's end.
//! The level bookkeeping `PerformerLevels` is left out: a distributed primary's level
//! manager decides from the secondaries' answers of a step, so it writes at step n what a
//! standalone level manager writes at the start of step n + 1 (the same decision).

use super::describe::{describe, same_value, type_name};
use super::log::{LogError, LogReader, Record, RecordKind};
use super::Stamp;
use plugin_api::components::{Name, ParentEntity, Performer, PerformerLevels};
use plugin_api::msgs::SerializedStateMap;
use plugin_api::{Component, ComponentTypeId};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// A world state rebuilt from a log: entity id → component type → bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StateView {
    /// The entities and their components.
    pub entities: BTreeMap<u64, BTreeMap<u64, Vec<u8>>>,
}

impl StateView {
    /// Applies a record: a full state replaces everything, a changed one is merged.
    pub fn apply(&mut self, kind: RecordKind, state: &SerializedStateMap) {
        if kind == RecordKind::Full {
            self.entities.clear();
        }
        for (&id, entity) in &state.entities {
            if entity.remove {
                self.entities.remove(&id);
                continue;
            }
            let components = self.entities.entry(id).or_default();
            for (&ty, component) in &entity.components {
                if component.remove {
                    components.remove(&ty);
                } else {
                    components.insert(ty, component.component.clone());
                }
            }
        }
    }

    fn parent(&self, id: u64) -> Option<u64> {
        let e = self.entities.get(&id)?;
        e.get(&ParentEntity::ID.0).and_then(|b| ParentEntity::from_bytes(b).ok()).map(|p| p.0 .0).filter(|p| *p != 0)
    }

    /// The view of the performers only: every performer's model and its descendants, without
    /// their `PerformerLevels` (see the module doc).
    pub fn performers(&self) -> StateView {
        let models: std::collections::BTreeSet<u64> = self
            .entities
            .iter()
            .filter(|(_, c)| c.contains_key(&Performer::ID.0))
            .filter_map(|(&id, _)| self.parent(id))
            .collect();
        let mut out = StateView::default();
        for (&id, components) in &self.entities {
            let mut current = Some(id);
            // Bounded: a corrupt log may hold a parent cycle.
            for _ in 0..64 {
                match current {
                    Some(c) if models.contains(&c) => {
                        let mut components = components.clone();
                        components.remove(&PerformerLevels::ID.0);
                        out.entities.insert(id, components);
                        break;
                    }
                    Some(c) => current = self.parent(c),
                    None => break,
                }
            }
        }
        out
    }

    /// `world::model::link` from the `Name` and `ParentEntity` components (`?` where
    /// unnamed).
    pub fn scoped_name(&self, id: u64) -> String {
        let mut parts = Vec::new();
        let mut current = Some(id);
        // Bounded: a corrupt log may hold a parent cycle.
        for _ in 0..64 {
            let Some(e) = current.and_then(|c| self.entities.get(&c)) else { break };
            let name = e.get(&Name::ID.0).and_then(|b| Name::from_bytes(b).ok()).map_or("?".to_string(), |n| n.0);
            parts.push(name);
            current = e
                .get(&ParentEntity::ID.0)
                .and_then(|b| ParentEntity::from_bytes(b).ok())
                .map(|p| p.0 .0)
                .filter(|p| *p != 0);
        }
        parts.reverse();
        parts.join("::")
    }
}

/// Which log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The first log given.
    A,
    /// The second log given.
    B,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::A => "A",
            Side::B => "B",
        })
    }
}

/// What differs at the first differing step.
#[derive(Clone, Debug, PartialEq)]
pub enum Mismatch {
    /// The clocks differ.
    Clock {
        /// A's stamp.
        a: Stamp,
        /// B's stamp.
        b: Stamp,
    },
    /// An entity exists in one log only.
    Entity {
        /// The entity.
        entity: u64,
        /// Its scoped name.
        name: String,
        /// The log that has it.
        only_in: Side,
    },
    /// A component exists on the entity in one log only.
    Component {
        /// The entity.
        entity: u64,
        /// Its scoped name.
        name: String,
        /// The component's name.
        component: String,
        /// The log that has it.
        only_in: Side,
        /// Its value there.
        value: String,
    },
    /// A component's values differ.
    Value {
        /// The entity.
        entity: u64,
        /// Its scoped name.
        name: String,
        /// The component's name.
        component: String,
        /// A's value.
        a: String,
        /// B's value.
        b: String,
    },
}

/// The result of comparing two logs.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every step of both logs matches.
    Same {
        /// Steps compared after the initial state.
        steps: u64,
    },
    /// The first difference.
    Different {
        /// The step (0: the state after loading).
        step: u64,
        /// A's clock at that step.
        stamp: Stamp,
        /// What differs.
        mismatch: Mismatch,
    },
    /// Every step both logs hold matches, but one log goes on.
    Shorter {
        /// The log that ends first.
        shorter: Side,
        /// Steps it holds.
        steps: u64,
        /// Steps the other holds (at least one more; counted to its end).
        other_steps: u64,
    },
}

/// What [`diff_logs`] found, with notes about the headers and truncation.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffReport {
    /// The comparison.
    pub outcome: Outcome,
    /// Differences of the headers (world, fingerprint) and truncated logs, for the reader.
    pub notes: Vec<String>,
}

impl DiffReport {
    /// Whether the logs hold the same states.
    pub fn identical(&self) -> bool {
        matches!(self.outcome, Outcome::Same { .. })
    }
}

/// Compares the states of two views; the first mismatch in id, then type order.
pub fn first_mismatch(a: &StateView, b: &StateView, tolerance: f64) -> Option<Mismatch> {
    let mut ia = a.entities.iter().peekable();
    let mut ib = b.entities.iter().peekable();
    loop {
        match (ia.peek(), ib.peek()) {
            (None, None) => return None,
            (Some((&id, _)), None) => {
                return Some(Mismatch::Entity { entity: id, name: a.scoped_name(id), only_in: Side::A })
            }
            (None, Some((&id, _))) => {
                return Some(Mismatch::Entity { entity: id, name: b.scoped_name(id), only_in: Side::B })
            }
            (Some((&x, _)), Some((&y, _))) if x < y => {
                return Some(Mismatch::Entity { entity: x, name: a.scoped_name(x), only_in: Side::A })
            }
            (Some((&x, _)), Some((&y, _))) if y < x => {
                return Some(Mismatch::Entity { entity: y, name: b.scoped_name(y), only_in: Side::B })
            }
            (Some((&id, ca)), Some((_, cb))) => {
                if let Some(m) = component_mismatch(id, ca, cb, a, tolerance) {
                    return Some(m);
                }
                ia.next();
                ib.next();
            }
        }
    }
}

fn component_mismatch(
    id: u64,
    ca: &BTreeMap<u64, Vec<u8>>,
    cb: &BTreeMap<u64, Vec<u8>>,
    view: &StateView,
    tolerance: f64,
) -> Option<Mismatch> {
    let name = || view.scoped_name(id);
    let types: std::collections::BTreeSet<u64> = ca.keys().chain(cb.keys()).copied().collect();
    for ty in types {
        let t = ComponentTypeId(ty);
        match (ca.get(&ty), cb.get(&ty)) {
            (Some(x), Some(y)) if same_value(t, x, y, tolerance) => {}
            (Some(x), Some(y)) => {
                return Some(Mismatch::Value {
                    entity: id,
                    name: name(),
                    component: type_name(t),
                    a: describe(t, x),
                    b: describe(t, y),
                })
            }
            (Some(x), None) => {
                return Some(Mismatch::Component {
                    entity: id,
                    name: name(),
                    component: type_name(t),
                    only_in: Side::A,
                    value: describe(t, x),
                })
            }
            (None, Some(y)) => {
                return Some(Mismatch::Component {
                    entity: id,
                    name: name(),
                    component: type_name(t),
                    only_in: Side::B,
                    value: describe(t, y),
                })
            }
            (None, None) => {}
        }
    }
    None
}

/// One log being replayed into a view, step by step.
struct Replay {
    reader: LogReader,
    view: StateView,
    stamp: Stamp,
}

impl Replay {
    fn open(path: &Path) -> Result<Replay, LogError> {
        let mut reader = LogReader::open(path)?;
        let mut view = StateView::default();
        let first = reader.next_record()?.ok_or_else(|| LogError::Record {
            path: path.to_path_buf(),
            index: 0,
            offset: 0,
            reason: "the log holds no complete record".into(),
        })?;
        view.apply(first.kind, &first.state);
        Ok(Replay { stamp: first.stamp(), reader, view })
    }

    /// Advances to the state at the end of the next iteration: past every changed record
    /// of the same iteration (paused steps, commands); false at the end.
    fn step_iteration(&mut self) -> Result<bool, LogError> {
        if !self.step()? {
            return Ok(false);
        }
        loop {
            let at = (self.reader.position(), self.view.clone(), self.stamp);
            match self.reader.next_record()? {
                Some(Record { kind, state, .. })
                    if Stamp::of(&state).iteration == self.stamp.iteration
                        || kind == RecordKind::Full && Stamp::of(&state) == self.stamp =>
                {
                    self.view.apply(kind, &state);
                    if kind == RecordKind::Changed {
                        self.stamp = Stamp::of(&state);
                    }
                }
                Some(_) => {
                    let ((offset, index), view, stamp) = at;
                    self.reader.seek_to(offset, index)?;
                    self.view = view;
                    self.stamp = stamp;
                    return Ok(true);
                }
                None => return Ok(true),
            }
        }
    }

    /// Advances to the state after the next changed record; false at the end.
    fn step(&mut self) -> Result<bool, LogError> {
        while let Some(Record { kind, state, .. }) = self.reader.next_record()? {
            self.view.apply(kind, &state);
            if kind == RecordKind::Changed {
                self.stamp = Stamp::of(&state);
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Compares two logs (see the module doc). `tolerance` applies to float components.
pub fn diff_logs(a: &Path, b: &Path, tolerance: f64) -> Result<DiffReport, LogError> {
    diff_logs_with(a, b, &DiffOptions { tolerance, ..DiffOptions::default() })
}

/// How [`diff_logs_with`] compares.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiffOptions {
    /// Largest difference between two floats still counted as equal.
    pub tolerance: f64,
    /// Compare only the performers' entities (see [`StateView::performers`]).
    pub performers_only: bool,
    /// Compare the state at the end of each iteration: consecutive records of one iteration
    /// (paused steps, commands carried out while paused) count as one step.
    pub by_iteration: bool,
    /// Compare only these components (names as `troupe log diff` prints them, e.g.
    /// `gz_sim_components.Pose`, or the part after the last dot); empty: all.
    pub components: Vec<String>,
}

/// Compares two logs as `options` say (see the module doc).
pub fn diff_logs_with(a: &Path, b: &Path, options: &DiffOptions) -> Result<DiffReport, LogError> {
    let tolerance = options.tolerance;
    let mut ra = Replay::open(a)?;
    let mut rb = Replay::open(b)?;
    let mut notes = Vec::new();
    let (ha, hb) = (ra.reader.header().clone(), rb.reader.header().clone());
    if ha.world != hb.world {
        notes.push(format!("the logs are of different worlds: A {:?}, B {:?}", ha.world, hb.world));
    }
    if ha.fingerprint != hb.fingerprint {
        notes.push(format!(
            "the loaded worlds differ: fingerprint A {:016x}, B {:016x}",
            ha.fingerprint, hb.fingerprint
        ));
    }
    let mut step = 0u64;
    let outcome = loop {
        if ra.stamp != rb.stamp {
            break Outcome::Different { step, stamp: ra.stamp, mismatch: Mismatch::Clock { a: ra.stamp, b: rb.stamp } };
        }
        let found = if options.performers_only || !options.components.is_empty() {
            let narrow = |v: &StateView| {
                let mut v = if options.performers_only { v.performers() } else { v.clone() };
                if !options.components.is_empty() {
                    for components in v.entities.values_mut() {
                        components.retain(|&ty, _| {
                            // Names and parents stay, for the report's scoped names.
                            if ty == Name::ID.0 || ty == ParentEntity::ID.0 {
                                return true;
                            }
                            let name = type_name(ComponentTypeId(ty));
                            let short = name.rsplit('.').next().unwrap_or(&name).to_string();
                            options.components.iter().any(|c| *c == name || *c == short)
                        });
                    }
                }
                v
            };
            first_mismatch(&narrow(&ra.view), &narrow(&rb.view), tolerance)
        } else {
            first_mismatch(&ra.view, &rb.view, tolerance)
        };
        if let Some(mismatch) = found {
            break Outcome::Different { step, stamp: ra.stamp, mismatch };
        }
        let advance = |r: &mut Replay| if options.by_iteration { r.step_iteration() } else { r.step() };
        match (advance(&mut ra)?, advance(&mut rb)?) {
            (true, true) => step += 1,
            (false, false) => break Outcome::Same { steps: step },
            (more_a, _) => {
                let (shorter, longer) = if more_a { (Side::B, &mut ra) } else { (Side::A, &mut rb) };
                let mut other_steps = step + 1;
                while advance(longer)? {
                    other_steps += 1;
                }
                break Outcome::Shorter { shorter, steps: step, other_steps };
            }
        }
    };
    for (side, r) in [(Side::A, &ra), (Side::B, &rb)] {
        if let Some(at) = r.reader.truncated_at() {
            notes.push(format!(
                "{side} ({}) is truncated at byte {at}; compared up to its last complete record",
                r.reader.path().display()
            ));
        }
    }
    Ok(DiffReport { outcome, notes })
}

fn secs(ns: i64) -> f64 {
    ns as f64 / 1e9
}

impl fmt::Display for DiffReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        match &self.outcome {
            Outcome::Same { steps } => writeln!(f, "no difference: the initial state and {steps} steps match"),
            Outcome::Shorter { shorter, steps, other_steps } => writeln!(
                f,
                "log {shorter} is shorter: it ends after step {steps}, the other goes on to step {other_steps}; \
                 the {steps} steps both hold match"
            ),
            Outcome::Different { step, stamp, mismatch } => {
                write!(
                    f,
                    "first difference at step {step} (iteration {}, sim time {:.9} s)",
                    stamp.iteration,
                    secs(stamp.sim_time_ns)
                )?;
                match mismatch {
                    Mismatch::Clock { a, b } => writeln!(
                        f,
                        ": the clocks differ\n  A: iteration {}, sim time {:.9} s\n  B: iteration {}, sim time {:.9} s",
                        a.iteration,
                        secs(a.sim_time_ns),
                        b.iteration,
                        secs(b.sim_time_ns)
                    ),
                    Mismatch::Entity { entity, name, only_in } => {
                        writeln!(f, "\n  entity {entity} ({name}) exists only in {only_in}")
                    }
                    Mismatch::Component { entity, name, component, only_in, value } => writeln!(
                        f,
                        "\n  entity {entity} ({name}), component {component}: only in {only_in}\n  {only_in}: {value}"
                    ),
                    Mismatch::Value { entity, name, component, a, b } => {
                        writeln!(f, "\n  entity {entity} ({name}), component {component}\n  A: {a}\n  B: {b}")
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
