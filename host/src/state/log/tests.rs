use super::*;
use crate::state::changed_state;
use plugin_api::components::{Link, Name};
use plugin_api::math::Pose;
use plugin_api::{Change, EntityId};

/// A fresh path in the temp directory, removed on drop.
pub(crate) struct TempPath(pub PathBuf);

impl TempPath {
    pub(crate) fn new(tag: &str) -> TempPath {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        TempPath(std::env::temp_dir().join(format!("troupe-log-test-{}-{tag}-{n}.tlog", std::process::id())))
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn world(links: usize) -> (Ecm, Vec<EntityId>) {
    let mut ecm = Ecm::new();
    let ids = (0..links)
        .map(|i| {
            let e = ecm.create_entity();
            ecm.set(e, &Link, Change::OneTime).unwrap();
            ecm.set(e, &Name(format!("link{i}")), Change::OneTime).unwrap();
            ecm.set(e, &Pose::IDENTITY, Change::OneTime).unwrap();
            e
        })
        .collect();
    ecm.end_step();
    (ecm, ids)
}

/// Records `steps` steps moving every link up by `dz` per step.
pub(crate) fn record(path: &Path, steps: u64, dz: f64, keyframe_interval: u64) -> Vec<SerializedStateMap> {
    let (mut ecm, links) = world(3);
    let options = RecordOptions { path: path.to_path_buf(), keyframe_interval };
    let mut rec = Recorder::start(&options, "w", &ecm, Stamp::default()).unwrap();
    let mut changed = Vec::new();
    for step in 1..=steps {
        for &l in &links {
            ecm.set(l, &Pose::from_xyz_rpy(0.0, 0.0, dz * step as f64, 0.0, 0.0, 0.0), Change::Periodic).unwrap();
        }
        let stamp = Stamp { sim_time_ns: step as i64 * 1_000_000, iteration: step };
        changed.push(changed_state(&ecm, stamp));
        rec.record_step(&ecm, stamp, false).unwrap();
        ecm.end_step();
    }
    rec.flush().unwrap();
    changed
}

fn read_all(path: &Path) -> Result<(LogReader, Vec<Record>), LogError> {
    let mut reader = LogReader::open(path)?;
    let mut out = Vec::new();
    while let Some(r) = reader.next_record()? {
        out.push(r);
    }
    Ok((reader, out))
}

#[test]
fn crc32_matches_the_reference_value() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}

#[test]
fn a_recorded_log_reads_back_record_for_record() {
    let path = TempPath::new("roundtrip");
    let changed = record(&path.0, 5, 0.5, 2);
    let (reader, records) = read_all(&path.0).unwrap();
    let (ecm, _) = world(3);
    assert_eq!(reader.header().world, "w");
    assert_eq!(reader.header().fingerprint, crate::state::fingerprint_ecm(&ecm));
    assert_eq!(reader.header().keyframe_interval, 2);
    assert_eq!(reader.truncated_at(), None);
    let kinds: Vec<RecordKind> = records.iter().map(|r| r.kind).collect();
    use RecordKind::{Changed as C, Full as F};
    assert_eq!(kinds, vec![F, C, C, F, C, C, F, C], "initial full, then a keyframe after every 2nd step");
    let read_changed: Vec<&SerializedStateMap> = records.iter().filter(|r| r.kind == C).map(|r| &r.state).collect();
    assert_eq!(read_changed, changed.iter().collect::<Vec<_>>());
    assert_eq!(records[3].stamp(), Stamp { sim_time_ns: 2_000_000, iteration: 2 }, "a keyframe has its step's stamp");
    assert_eq!(records.iter().map(|r| r.index).collect::<Vec<_>>(), (0..8).collect::<Vec<_>>());
}

#[test]
fn paused_steps_without_changes_are_not_recorded() {
    let path = TempPath::new("paused");
    let (mut ecm, links) = world(1);
    let mut rec = Recorder::start(&RecordOptions::new(&path.0), "w", &ecm, Stamp::default()).unwrap();
    rec.record_step(&ecm, Stamp::default(), true).unwrap();
    ecm.set(links[0], &Name("renamed".into()), Change::OneTime).unwrap();
    rec.record_step(&ecm, Stamp::default(), true).unwrap();
    rec.record_step(&ecm, Stamp { sim_time_ns: 1, iteration: 1 }, false).unwrap();
    rec.flush().unwrap();
    let (_, records) = read_all(&path.0).unwrap();
    assert_eq!(records.len(), 3, "the full state, the paused step that renamed, the running step");
}

#[test]
fn a_truncated_log_reads_up_to_its_last_complete_record() {
    let path = TempPath::new("truncated");
    record(&path.0, 4, 0.5, 1000);
    let bytes = std::fs::read(&path.0).unwrap();
    let (_, whole) = read_all(&path.0).unwrap();
    let last = whole.last().unwrap().offset as usize;
    for cut in [last + 1, last + RECORD_HEAD, bytes.len() - 1] {
        std::fs::write(&path.0, &bytes[..cut]).unwrap();
        let (reader, records) = read_all(&path.0).unwrap();
        assert_eq!(records.len(), whole.len() - 1, "cut at {cut}");
        assert_eq!(reader.truncated_at(), Some(last as u64));
    }
    // Cut exactly at a record boundary: a complete log, nothing to warn about.
    std::fs::write(&path.0, &bytes[..last]).unwrap();
    let (reader, records) = read_all(&path.0).unwrap();
    assert_eq!((records.len(), reader.truncated_at()), (whole.len() - 1, None));
}

#[test]
fn corrupt_logs_are_errors_naming_file_record_and_offset() {
    let path = TempPath::new("corrupt");
    record(&path.0, 2, 0.5, 1000);
    let good = std::fs::read(&path.0).unwrap();
    let (_, records) = read_all(&path.0).unwrap();
    let second = records[1].offset as usize;

    let mut bad = good.clone();
    bad[second + RECORD_HEAD + 3] ^= 0x40;
    std::fs::write(&path.0, &bad).unwrap();
    let err = read_all(&path.0).err().unwrap().to_string();
    let expected = format!("{}: record 1 at byte {second}: checksum mismatch", path.0.display());
    assert!(err.starts_with(&expected), "{err}");

    let mut bad = good.clone();
    bad[second] = 9;
    std::fs::write(&path.0, &bad).unwrap();
    let err = read_all(&path.0).err().unwrap().to_string();
    assert!(err.contains("record 1 at byte") && err.contains("unknown record kind 9"), "{err}");

    std::fs::write(&path.0, b"<?xml version=\"1.0\"?><sdf/>").unwrap();
    let err = LogReader::open(&path.0).err().unwrap().to_string();
    assert!(err.contains("not a Troupe state log"), "{err}");

    let mut bad = good.clone();
    bad[8] = 7;
    std::fs::write(&path.0, &bad).unwrap();
    let err = LogReader::open(&path.0).err().unwrap().to_string();
    assert!(err.contains("log format version 7"), "{err}");

    std::fs::write(&path.0, &good[..20]).unwrap();
    let err = LogReader::open(&path.0).err().unwrap().to_string();
    assert!(err.contains("log header") && err.contains("ends inside the header"), "{err}");

    let missing = TempPath::new("missing");
    let err = LogReader::open(&missing.0).err().unwrap().to_string();
    assert!(err.starts_with(&missing.0.display().to_string()), "{err}");
}

#[test]
fn a_state_that_fails_to_parse_is_an_error_even_with_a_good_checksum() {
    let path = TempPath::new("garbage");
    record(&path.0, 1, 0.5, 1000);
    let mut bytes = std::fs::read(&path.0).unwrap();
    let (_, records) = read_all(&path.0).unwrap();
    let at = records[1].offset as usize;
    let garbage = [0xffu8, 0xff, 0xff];
    bytes.truncate(at);
    bytes.push(2);
    bytes.extend_from_slice(&(garbage.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&crc32(&garbage).to_le_bytes());
    bytes.extend_from_slice(&garbage);
    std::fs::write(&path.0, &bytes).unwrap();
    let err = read_all(&path.0).err().unwrap().to_string();
    assert!(err.contains(&format!("record 1 at byte {at}: not a gz.msgs.SerializedStateMap")), "{err}");
}
