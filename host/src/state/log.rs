//! State logs: a header naming the world, then one `SerializedStateMap` per record.
//!
//! The format (version 1; all integers little-endian; `docs/state-and-logs.md` has the
//! same description for users):
//!
//! ```text
//! file    = magic version header record*
//! magic   = "TROUPLOG"                      8 bytes
//! version = u32                             1
//! header  = u32 length, then a gz.msgs.Header whose data entries are
//!           world = [name], fingerprint = [16 hex digits], keyframe_interval = [N],
//!           troupe = [version of the writer]
//! record  = kind: u8 (1 full, 2 changed) | length: u32 | crc32: u32 | payload
//! payload = a gz.msgs.SerializedStateMap (header stamp = sim time, data iteration = [n])
//! ```
//!
//! The first record is the full state right after loading (iteration 0); its fingerprint
//! is the header's. Every step then writes one changed record. Every `keyframe_interval`
//! steps a full record with the same stamp follows the changed one (a keyframe: reading can
//! start there), and after a world reset a full record replaces the state. The CRC-32 (IEEE)
//! of the payload catches corruption that still parses as protobuf.
//!
//! A log cut short (the process was killed) reads up to its last complete record, with one
//! warning naming the file and the byte offset where it ends.

use super::{fingerprint, full_state, Stamp};
use crate::ecm::Ecm;
use plugin_api::msgs::{header, Header, SerializedStateMap};
use plugin_api::prost::Message;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The first 8 bytes of every log.
pub const MAGIC: [u8; 8] = *b"TROUPLOG";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;
/// Steps between keyframes when not configured.
pub const DEFAULT_KEYFRAME_INTERVAL: u64 = 1000;
/// Bytes before a record's payload: kind, length, CRC.
const RECORD_HEAD: usize = 9;
/// Largest header or record accepted (a corrupt length must not allocate gigabytes).
const MAX_RECORD: u32 = 1 << 30;

/// Why a log could not be written or read. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The file could not be created, written or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The log.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file does not start with the magic bytes or has another version.
    #[error("{}: {reason}", path.display())]
    NotALog {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// The log header is malformed.
    #[error("{}: log header at byte {offset}: {reason}", path.display())]
    Header {
        /// The log.
        path: PathBuf,
        /// Byte offset of the header.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A record is malformed.
    #[error("{}: record {index} at byte {offset}: {reason}", path.display())]
    Record {
        /// The log.
        path: PathBuf,
        /// 0-based record number.
        index: u64,
        /// Byte offset of the record's first byte.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
}

/// What a log's header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogHeader {
    /// The recorded world's name.
    pub world: String,
    /// [`fingerprint`] of the world's full state right after loading.
    pub fingerprint: u64,
    /// Steps between keyframes.
    pub keyframe_interval: u64,
    /// The version of Troupe that wrote the log.
    pub troupe: String,
}

impl LogHeader {
    fn to_msg(&self) -> Header {
        let entry = |key: &str, value: String| header::Map { key: key.into(), value: vec![value] };
        Header {
            stamp: None,
            data: vec![
                entry("world", self.world.clone()),
                entry("fingerprint", format!("{:016x}", self.fingerprint)),
                entry("keyframe_interval", self.keyframe_interval.to_string()),
                entry("troupe", self.troupe.clone()),
            ],
        }
    }

    fn from_msg(msg: &Header) -> Result<LogHeader, String> {
        let get = |key: &str| {
            msg.data
                .iter()
                .find(|d| d.key == key)
                .and_then(|d| d.value.first())
                .cloned()
                .ok_or_else(|| format!("no {key:?} entry"))
        };
        let fp = get("fingerprint")?;
        let interval = get("keyframe_interval")?;
        Ok(LogHeader {
            world: get("world")?,
            fingerprint: u64::from_str_radix(&fp, 16)
                .map_err(|_| format!("fingerprint {fp:?} is not 16 hex digits"))?,
            keyframe_interval: interval
                .parse()
                .map_err(|_| format!("keyframe_interval {interval:?} is not a number"))?,
            troupe: get("troupe").unwrap_or_default(),
        })
    }
}

/// A record's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// The whole state: replaces what came before.
    Full = 1,
    /// What changed in one step.
    Changed = 2,
}

/// One record read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// 0-based position in the file.
    pub index: u64,
    /// Byte offset of its first byte.
    pub offset: u64,
    /// Full or changed.
    pub kind: RecordKind,
    /// The state.
    pub state: SerializedStateMap,
}

impl Record {
    /// Sim time and iteration of the state.
    pub fn stamp(&self) -> Stamp {
        Stamp::of(&self.state)
    }
}

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it).
pub fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
                k += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    let mut crc = !0u32;
    for &b in bytes {
        crc = TABLE[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// Writes a log through a buffer. Dropping it flushes; [`LogWriter::flush`] reports errors.
pub struct LogWriter {
    out: BufWriter<File>,
    path: PathBuf,
    offset: u64,
    records: u64,
    buf: Vec<u8>,
}

impl LogWriter {
    /// Creates (or truncates) `path` and writes the magic, version and header.
    pub fn create(path: &Path, header: &LogHeader) -> Result<LogWriter, LogError> {
        let io = |source| LogError::Io { path: path.to_path_buf(), source };
        let file = File::create(path).map_err(io)?;
        let mut w = LogWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            path: path.to_path_buf(),
            offset: 0,
            records: 0,
            buf: Vec::new(),
        };
        let head = header.to_msg().encode_to_vec();
        let mut start = Vec::with_capacity(16 + head.len());
        start.extend_from_slice(&MAGIC);
        start.extend_from_slice(&VERSION.to_le_bytes());
        start.extend_from_slice(&(head.len() as u32).to_le_bytes());
        start.extend_from_slice(&head);
        w.put(&start)?;
        Ok(w)
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        self.out.write_all(bytes).map_err(|source| LogError::Io { path: self.path.clone(), source })?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Appends one record.
    pub fn write(&mut self, kind: RecordKind, state: &SerializedStateMap) -> Result<(), LogError> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        buf.resize(RECORD_HEAD, 0);
        state.encode(&mut buf).map_err(|e| LogError::Record {
            path: self.path.clone(),
            index: self.records,
            offset: self.offset,
            reason: e.to_string(),
        })?;
        let len = buf.len() - RECORD_HEAD;
        if len > MAX_RECORD as usize {
            return Err(LogError::Record {
                path: self.path.clone(),
                index: self.records,
                offset: self.offset,
                reason: format!("a state of {len} bytes is larger than a record may be ({MAX_RECORD})"),
            });
        }
        let crc = crc32(&buf[RECORD_HEAD..]);
        buf[0] = kind as u8;
        buf[1..5].copy_from_slice(&(len as u32).to_le_bytes());
        buf[5..9].copy_from_slice(&crc.to_le_bytes());
        let result = self.put(&buf);
        self.buf = buf;
        self.records += 1;
        result
    }

    /// Writes buffered bytes to the file.
    pub fn flush(&mut self) -> Result<(), LogError> {
        self.out.flush().map_err(|source| LogError::Io { path: self.path.clone(), source })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads a log record by record, without loading it whole.
pub struct LogReader {
    input: BufReader<File>,
    path: PathBuf,
    header: LogHeader,
    offset: u64,
    index: u64,
    truncated_at: Option<u64>,
}

impl LogReader {
    /// Opens `path` and reads its header.
    pub fn open(path: &Path) -> Result<LogReader, LogError> {
        // A log is read record by record (each bounded), but opening a pipe would block.
        plugin_api::files::check_regular(path).map_err(|source| LogError::Io { path: path.to_path_buf(), source })?;
        let file = File::open(path).map_err(|source| LogError::Io { path: path.to_path_buf(), source })?;
        let mut input = BufReader::with_capacity(1 << 20, file);
        let not_a_log = |reason: String| LogError::NotALog { path: path.to_path_buf(), reason };
        let mut start = [0u8; 16];
        let got =
            read_up_to(&mut input, &mut start).map_err(|source| LogError::Io { path: path.to_path_buf(), source })?;
        if got < 8 || start[..8] != MAGIC {
            return Err(not_a_log("not a Troupe state log (it does not start with \"TROUPLOG\")".into()));
        }
        if got < 16 {
            return Err(LogError::Header {
                path: path.to_path_buf(),
                offset: 8,
                reason: "the file ends inside the header".into(),
            });
        }
        let version = u32::from_le_bytes([start[8], start[9], start[10], start[11]]);
        if version != VERSION {
            return Err(not_a_log(format!("log format version {version}; this build reads version {VERSION}")));
        }
        let len = u32::from_le_bytes([start[12], start[13], start[14], start[15]]);
        let header_error = |reason: String| LogError::Header { path: path.to_path_buf(), offset: 12, reason };
        if len > MAX_RECORD {
            return Err(header_error(format!("header length {len} is implausible")));
        }
        let mut head = vec![0u8; len as usize];
        let got =
            read_up_to(&mut input, &mut head).map_err(|source| LogError::Io { path: path.to_path_buf(), source })?;
        if got < head.len() {
            return Err(header_error(format!("the file ends inside the header ({got} of {len} bytes)")));
        }
        let msg = Header::decode(head.as_slice()).map_err(|e| header_error(format!("not a gz.msgs.Header: {e}")))?;
        let header = LogHeader::from_msg(&msg).map_err(header_error)?;
        Ok(LogReader {
            input,
            path: path.to_path_buf(),
            header,
            offset: 16 + u64::from(len),
            index: 0,
            truncated_at: None,
        })
    }

    /// The log's header.
    pub fn header(&self) -> &LogHeader {
        &self.header
    }
    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Where the log was cut short, if it was (the offset of the incomplete record).
    pub fn truncated_at(&self) -> Option<u64> {
        self.truncated_at
    }

    /// The byte offset and index of the next record.
    pub fn position(&self) -> (u64, u64) {
        (self.offset, self.index)
    }

    /// Moves to the record at `offset`, which is record number `index` (a position answered
    /// by [`LogReader::position`] or a [`Record`]'s own).
    pub fn seek_to(&mut self, offset: u64, index: u64) -> Result<(), LogError> {
        self.input.seek(SeekFrom::Start(offset)).map_err(|source| LogError::Io { path: self.path.clone(), source })?;
        self.offset = offset;
        self.index = index;
        self.truncated_at = None;
        Ok(())
    }

    /// The next record; `None` at the end. A record cut short ends the log with a warning;
    /// a complete but malformed record is an error.
    pub fn next_record(&mut self) -> Result<Option<Record>, LogError> {
        if self.truncated_at.is_some() {
            return Ok(None);
        }
        let (index, offset) = (self.index, self.offset);
        let error = |reason: String| LogError::Record { path: self.path.clone(), index, offset, reason };
        let io = |source| LogError::Io { path: self.path.clone(), source };
        let mut head = [0u8; RECORD_HEAD];
        let got = read_up_to(&mut self.input, &mut head).map_err(io)?;
        if got == 0 {
            return Ok(None);
        }
        if got < RECORD_HEAD {
            return Ok(self.cut_short(got));
        }
        let kind = match head[0] {
            1 => RecordKind::Full,
            2 => RecordKind::Changed,
            k => return Err(error(format!("unknown record kind {k} (expected 1 full or 2 changed)"))),
        };
        let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]);
        if len > MAX_RECORD {
            return Err(error(format!("record length {len} is implausible")));
        }
        let crc = u32::from_le_bytes([head[5], head[6], head[7], head[8]]);
        let mut payload = vec![0u8; len as usize];
        let got_payload = read_up_to(&mut self.input, &mut payload).map_err(io)?;
        if got_payload < payload.len() {
            return Ok(self.cut_short(RECORD_HEAD + got_payload));
        }
        if crc32(&payload) != crc {
            return Err(error("checksum mismatch: the record is corrupt".into()));
        }
        let state = super::decode_state(&payload).map_err(|e| error(e.to_string()))?;
        if index == 0 && kind != RecordKind::Full {
            return Err(error("the first record must be a full state".into()));
        }
        self.index += 1;
        self.offset += (RECORD_HEAD + payload.len()) as u64;
        Ok(Some(Record { index, offset, kind, state }))
    }

    fn cut_short(&mut self, got: usize) -> Option<Record> {
        self.truncated_at = Some(self.offset);
        ::log::warn!(
            "{}: truncated: record {} at byte {} is incomplete ({got} bytes); read up to the last complete record",
            self.path.display(),
            self.index,
            self.offset
        );
        None
    }
}

/// Reads until `buf` is full or the input ends; answers the bytes read.
fn read_up_to(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// How to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordOptions {
    /// The log file to write (created or truncated).
    pub path: PathBuf,
    /// Steps between keyframes (at least 1).
    pub keyframe_interval: u64,
}

impl RecordOptions {
    /// Recording to `path` with the default keyframe interval.
    pub fn new(path: impl Into<PathBuf>) -> RecordOptions {
        RecordOptions { path: path.into(), keyframe_interval: DEFAULT_KEYFRAME_INTERVAL }
    }
}

/// Records one world: the post-load state, then every step.
pub struct Recorder {
    writer: LogWriter,
    keyframe_interval: u64,
    steps: u64,
}

impl Recorder {
    /// Creates the log and writes its header and the full state of `ecm` (call right after
    /// loading, before the first step).
    pub fn start(options: &RecordOptions, world: &str, ecm: &Ecm, stamp: Stamp) -> Result<Recorder, LogError> {
        let state = full_state(ecm, stamp);
        let header = LogHeader {
            world: world.to_string(),
            fingerprint: fingerprint(&state),
            keyframe_interval: options.keyframe_interval.max(1),
            troupe: env!("CARGO_PKG_VERSION").to_string(),
        };
        let mut writer = LogWriter::create(&options.path, &header)?;
        writer.write(RecordKind::Full, &state)?;
        Ok(Recorder { writer, keyframe_interval: header.keyframe_interval, steps: 0 })
    }

    /// Records one step: what changed, and a keyframe every `keyframe_interval` steps.
    /// Call after the systems ran and before [`Ecm::end_step`]. A paused step that changed
    /// nothing is not recorded.
    pub fn record_step(&mut self, ecm: &Ecm, stamp: Stamp, paused: bool) -> Result<(), LogError> {
        let changed = super::changed_state(ecm, stamp);
        if paused && changed.entities.is_empty() {
            return Ok(());
        }
        self.writer.write(RecordKind::Changed, &changed)?;
        self.steps += 1;
        if self.steps % self.keyframe_interval == 0 {
            // The state as the step leaves it: entities pending removal are gone by then.
            let mut keyframe = full_state(ecm, stamp);
            for id in ecm.pending_removals() {
                keyframe.entities.remove(&id.0);
            }
            self.writer.write(RecordKind::Full, &keyframe)?;
        }
        Ok(())
    }

    /// Records the whole state (after a reset replaced it).
    pub fn record_full(&mut self, ecm: &Ecm, stamp: Stamp) -> Result<(), LogError> {
        self.writer.write(RecordKind::Full, &full_state(ecm, stamp))
    }

    /// Writes everything buffered to the file.
    pub fn flush(&mut self) -> Result<(), LogError> {
        self.writer.flush()
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        self.writer.path()
    }
}

#[cfg(test)]
pub(crate) mod tests;
