//! Playing a state log back: the ECM follows the log instead of being simulated.
//!
//! The world is rebuilt from the log's first record (the full state after loading), so
//! playback needs neither the world file nor the plugins that wrote the log. Each played
//! step applies the next changed record and takes its clock from the record's stamp.
//! Keyframes written right after a changed record of the same step repeat what is already
//! applied and are skipped; a full record with a new stamp (the world was reset while
//! recording) replaces the state.
//!
//! Seeking goes to the last keyframe at or before the target iteration and applies the
//! changed records after it up to the target, so a seek costs at most one keyframe interval
//! of records; afterwards every entity is presented as new, so observers resend the world. Component types the log holds but this process does not know (a third-party
//! plugin's) are skipped with one warning per type.

use super::log::{LogError, LogHeader, LogReader, Record, RecordKind};
use super::{Stamp, StateApplier};
use crate::ecm::{Ecm, EcmSnapshot, EntityState};
use plugin_api::msgs::SerializedStateMap;
use plugin_api::{ComponentTypeId, EntityId};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where a full record sits in the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Keyframe {
    index: u64,
    offset: u64,
    stamp: Stamp,
}

/// Why playback could not go on.
#[derive(Debug, thiserror::Error)]
pub enum PlaybackError {
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A record could not be applied to the ECM.
    #[error("{}: record {index}: {reason}", path.display())]
    Apply {
        /// The log.
        path: PathBuf,
        /// The record.
        index: u64,
        /// What went wrong.
        reason: String,
    },
}

/// A log being played back.
pub struct Player {
    reader: LogReader,
    path: PathBuf,
    first: SerializedStateMap,
    keyframes: Vec<Keyframe>,
    last: Stamp,
    last_iteration_in_log: u64,
    applier: StateApplier,
    warned: BTreeSet<u64>,
}

impl Player {
    /// Opens a log, checks it, and indexes its keyframes (one pass over the file).
    pub fn open(path: &Path) -> Result<Player, PlaybackError> {
        let mut reader = LogReader::open(path)?;
        let mut keyframes = Vec::new();
        let mut first = None;
        let mut last_iteration_in_log = 0;
        while let Some(record) = reader.next_record()? {
            let stamp = record.stamp();
            last_iteration_in_log = last_iteration_in_log.max(stamp.iteration);
            if record.kind == RecordKind::Full {
                keyframes.push(Keyframe { index: record.index, offset: record.offset, stamp });
            }
            if first.is_none() {
                first = Some(record.state);
            }
        }
        let Some(first) = first else {
            return Err(LogError::Record {
                path: path.to_path_buf(),
                index: 0,
                offset: reader.position().0,
                reason: "the log holds no record, not even the state after loading".into(),
            }
            .into());
        };
        let mut reader = LogReader::open(path)?;
        reader.next_record()?; // the first full state, which `initial_state` hands out
        Ok(Player {
            reader,
            path: path.to_path_buf(),
            last: Stamp::of(&first),
            first,
            keyframes,
            last_iteration_in_log,
            applier: StateApplier::new(),
            warned: BTreeSet::new(),
        })
    }

    /// The log's header (world name, fingerprint).
    pub fn header(&self) -> &LogHeader {
        self.reader.header()
    }

    /// The state right after loading, from which the world is rebuilt.
    pub fn initial_state(&self) -> &SerializedStateMap {
        &self.first
    }

    /// The largest iteration the log reaches.
    pub fn last_iteration(&self) -> u64 {
        self.last_iteration_in_log
    }

    /// The stamp of the state last applied.
    pub fn position(&self) -> Stamp {
        self.last
    }

    /// Applies the next step of the log to `ecm` and answers its stamp; `None` at the end.
    pub fn apply_next(&mut self, ecm: &mut Ecm) -> Result<Option<Stamp>, PlaybackError> {
        loop {
            let Some(record) = self.reader.next_record()? else { return Ok(None) };
            let stamp = record.stamp();
            if record.kind == RecordKind::Full && stamp == self.last {
                continue; // a keyframe repeating the step just applied
            }
            self.apply(ecm, &record)?;
            return Ok(Some(stamp));
        }
    }

    /// Puts `ecm` in the state the log has at `iteration` (the last record of that
    /// iteration; the end of the log if it stops earlier) and answers its stamp.
    pub fn seek(&mut self, ecm: &mut Ecm, iteration: u64) -> Result<Stamp, PlaybackError> {
        // The last keyframe at or before the target; the first record is always one.
        let keyframe =
            self.keyframes.iter().rev().find(|k| k.stamp.iteration <= iteration).copied().unwrap_or(self.keyframes[0]);
        self.reader.seek_to(keyframe.offset, keyframe.index)?;
        let Some(record) = self.reader.next_record()? else {
            return Err(self.apply_error(keyframe.index, "the keyframe indexed at open is gone".into()));
        };
        self.apply(ecm, &record)?;
        // Apply what follows up to the target, stopping before the first later record.
        loop {
            let (offset, index) = self.reader.position();
            let Some(record) = self.reader.next_record()? else { break };
            let stamp = record.stamp();
            if stamp.iteration > iteration {
                self.reader.seek_to(offset, index)?;
                break;
            }
            if record.kind == RecordKind::Full && stamp == self.last {
                continue;
            }
            // Removals are deferred to the end of a step: finish each step as a run would.
            ecm.end_step();
            self.apply(ecm, &record)?;
        }
        ecm.end_step();
        // Observers (a scene broadcaster) must resend everything after a jump: present the
        // whole world as new, every component flagged one-time.
        let now = ecm.snapshot();
        ecm.restore(&now).map_err(|e| self.apply_error(0, e.message.into_string()))?;
        Ok(self.last)
    }

    fn apply(&mut self, ecm: &mut Ecm, record: &Record) -> Result<(), PlaybackError> {
        match record.kind {
            RecordKind::Full => {
                let snapshot = self.snapshot_of(ecm, &record.state);
                ecm.restore(&snapshot).map_err(|e| self.apply_error(record.index, e.message.into_string()))?;
            }
            RecordKind::Changed => {
                self.applier.apply(ecm, &record.state).map_err(|e| self.apply_error(record.index, e.to_string()))?;
            }
        }
        self.last = record.stamp();
        Ok(())
    }

    /// A full state as an ECM snapshot, without component types `ecm` does not know.
    fn snapshot_of(&mut self, ecm: &Ecm, state: &SerializedStateMap) -> EcmSnapshot {
        let mut entities = Vec::with_capacity(state.entities.len());
        for (&id, entity) in &state.entities {
            let mut components = Vec::with_capacity(entity.components.len());
            for (&ty, c) in &entity.components {
                let ty = ComponentTypeId(ty);
                if ecm.component_name(ty).is_none() {
                    if self.warned.insert(ty.0) {
                        ::log::warn!(
                            "{}: component type {ty} is not registered here; its values are skipped",
                            self.path.display()
                        );
                    }
                    continue;
                }
                components.push((ty, c.component.clone()));
            }
            entities.push(EntityState { id: EntityId(id), components });
        }
        EcmSnapshot { entities }
    }

    fn apply_error(&self, index: u64, reason: String) -> PlaybackError {
        PlaybackError::Apply { path: self.path.clone(), index, reason }
    }
}

/// Builds the ECM a log starts from: its first full state, with the run-time id counter
/// above every id in it.
pub fn initial_ecm(player: &mut Player) -> Result<Ecm, PlaybackError> {
    let mut ecm = Ecm::new();
    let first = player.first.clone();
    let snapshot = player.snapshot_of(&ecm, &first);
    if let Some(last) = snapshot.entities.last() {
        ecm.reserve_ids(last.id.0);
    }
    ecm.restore(&snapshot).map_err(|e| player.apply_error(0, e.message.into_string()))?;
    ecm.end_step();
    Ok(ecm)
}
