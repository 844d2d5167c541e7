//! The log against damaged files: a torn tail, a flipped byte in the last record and in the
//! middle, an empty file, a missing segment. Opening must never panic and never lose an
//! acknowledged record on its own: a torn tail (nothing valid after the damage) is cut and
//! the log appends cleanly after it; any other damage refuses to open and leaves every byte
//! as it was, unless forced, which cuts there and keeps what it cut aside.

use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use tempfile::TempDir;
use waterline_commit::{
    Damage, FlushPolicy, Lsn, Tail, TrxTag, Wal, WalConfig, WalError, record_bytes, scan,
};

/// A fresh directory, removed when dropped.
fn temp_dir(name: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("waterline-wal-{name}-"))
        .tempdir()
        .expect("a temporary directory")
}

/// Small segments, so that a few records span several files.
const SMALL: WalConfig = WalConfig {
    segment_bytes: 100,
    flush: FlushPolicy::EveryCommit,
    preallocate_bytes: 0,
};

/// As [`SMALL`], but each segment is extended with zeros ahead of the writes (64 bytes at a
/// time, never past the segment's 100 bytes but by a batch), so the last one ends in zeros.
const SMALL_AHEAD: WalConfig = WalConfig {
    preallocate_bytes: 64,
    ..SMALL
};

fn payload(i: u64) -> Vec<u8> {
    format!("record number {i}").into_bytes()
}

/// Writes `n` records, two per batch; returns their LSNs.
fn write(dir: &Path, n: u64) -> Vec<Lsn> {
    write_with(dir, n, SMALL)
}

fn write_with(dir: &Path, n: u64, config: WalConfig) -> Vec<Lsn> {
    let (mut wal, _) = Wal::open(dir, config).unwrap();
    let mut lsns = Vec::new();
    for pair in (0..n).collect::<Vec<_>>().chunks(2) {
        let payloads: Vec<Vec<u8>> = pair.iter().map(|&i| payload(i)).collect();
        let batch = pair
            .iter()
            .zip(&payloads)
            .map(|(&i, p)| (TrxTag(i), p.as_slice()));
        lsns.extend(wal.append_batch(batch).unwrap());
    }
    lsns
}

fn segment_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    files.sort();
    files
}

fn trx_tags(scan: &waterline_commit::Scan) -> Vec<u64> {
    scan.records.iter().map(|r| r.trx.0).collect()
}

#[test]
fn records_round_trip_across_segments() {
    let dir = temp_dir("roundtrip");
    let lsns = write(dir.path(), 10);
    assert!(
        segment_files(dir.path()).len() > 2,
        "small segments roll over"
    );
    let (wal, scan) = Wal::open(dir.path(), SMALL).unwrap();
    assert_eq!(scan.tail, Tail::Clean);
    assert_eq!(trx_tags(&scan), (0..10).collect::<Vec<_>>());
    assert_eq!(scan.records.iter().map(|r| r.lsn).collect::<Vec<_>>(), lsns);
    assert_eq!(scan.records[3].payload, payload(3));
    let size: u64 = (0..10).map(|i| record_bytes(payload(i).len())).sum();
    assert_eq!(wal.end(), Lsn(size));
}

#[test]
fn a_torn_tail_is_cut_and_the_log_goes_on_after_it() {
    let dir = temp_dir("torn");
    write(dir.path(), 6);
    let last = segment_files(dir.path()).pop().unwrap();
    let len = fs::metadata(&last).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&last)
        .unwrap()
        .set_len(len - 3)
        .unwrap();

    let (mut wal, scan) = Wal::open(dir.path(), SMALL).unwrap();
    assert_eq!(trx_tags(&scan), vec![0, 1, 2, 3, 4]);
    match &scan.tail {
        Tail::Damaged {
            segment, damage, ..
        } => {
            assert_eq!(segment, &last);
            assert!(matches!(damage, Damage::Truncated { .. }), "{damage}");
        }
        other => panic!("expected a torn tail, got {other:?}"),
    }
    wal.append_batch([(TrxTag(99), b"after the tear".as_slice())])
        .unwrap();
    drop(wal);
    let again = scan_ok(dir.path());
    assert_eq!(trx_tags(&again), vec![0, 1, 2, 3, 4, 99]);
}

fn scan_ok(dir: &Path) -> waterline_commit::Scan {
    let scan = scan(dir).unwrap();
    assert_eq!(scan.tail, Tail::Clean);
    scan
}

#[test]
fn a_flipped_byte_in_the_last_record_loses_only_that_record() {
    let dir = temp_dir("flip-last");
    write(dir.path(), 6);
    let last = segment_files(dir.path()).pop().unwrap();
    let mut bytes = fs::read(&last).unwrap();
    let at = bytes.len() - 2;
    bytes[at] ^= 0x40;
    fs::write(&last, bytes).unwrap();

    let (_, scan) = Wal::open(dir.path(), SMALL).unwrap();
    assert_eq!(trx_tags(&scan), vec![0, 1, 2, 3, 4]);
    assert!(matches!(
        scan.tail,
        Tail::Damaged {
            damage: Damage::BadChecksum,
            ..
        }
    ));
}

/// Every file of `dir` and its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let bytes = fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

/// Opening refuses, says where, and changes nothing.
fn refuses_unchanged(dir: &Path, wanted: &str) {
    let before = snapshot(dir);
    let error = Wal::open(dir, SMALL).unwrap_err();
    assert!(
        matches!(error, WalError::Damaged { .. }) && error.to_string().contains(wanted),
        "{error}"
    );
    assert!(snapshot(dir) == before, "a refused open changed the log");
}

#[test]
fn a_flipped_byte_in_the_middle_refuses_the_open_unless_forced() {
    let dir = temp_dir("flip-middle");
    write(dir.path(), 10);
    let files = segment_files(dir.path());
    let middle = &files[1];
    let mut bytes = fs::read(middle).unwrap();
    bytes[30] ^= 0x01; // inside the segment's first record's payload
    fs::write(middle, bytes).unwrap();
    let before = scan(dir.path()).unwrap();
    refuses_unchanged(dir.path(), "the segments after it would be lost");

    // Forced: replay up to the damage, cut there, keep what is cut aside.
    let (mut wal, scan) = Wal::open_from(dir.path(), SMALL, Lsn::START, true).unwrap();
    assert_eq!(
        scan,
        waterline_commit::Scan {
            orphaned: scan.orphaned.clone(),
            ..before
        }
    );
    match &scan.tail {
        Tail::Damaged {
            segment,
            offset,
            lsn,
            damage,
        } => {
            assert_eq!((segment, *offset, *lsn), (middle, 0, scan.end));
            assert_eq!(*damage, Damage::BadChecksum);
        }
        other => panic!("expected damage, got {other:?}"),
    }
    assert!(scan.records.len() < 10);
    assert_eq!(
        scan.orphaned.len(),
        files.len() - 2,
        "the segments after it are kept aside"
    );
    assert!(scan.orphaned.iter().all(|p| p.exists()));
    assert!(
        middle.with_extension("log.cut").exists(),
        "what was cut is kept"
    );
    wal.append_batch([(TrxTag(7), b"new".as_slice())]).unwrap();
    drop(wal);
    let again = scan_ok(dir.path());
    assert_eq!(again.records.len(), scan.records.len() + 1);
}

#[test]
fn a_damaged_record_with_valid_ones_after_it_in_the_last_segment_refuses_the_open() {
    let dir = temp_dir("flip-last-segment");
    let big = WalConfig {
        segment_bytes: 1 << 20,
        flush: FlushPolicy::EveryCommit,
        preallocate_bytes: 0,
    };
    let (mut wal, _) = Wal::open(dir.path(), big).unwrap();
    for i in 0..10 {
        wal.append_batch([(TrxTag(i), payload(i).as_slice())])
            .unwrap();
    }
    drop(wal);
    let only = segment_files(dir.path()).pop().unwrap();
    let mut bytes = fs::read(&only).unwrap();
    bytes[40] ^= 0x01;
    fs::write(&only, bytes).unwrap();
    let before = snapshot(dir.path());
    let error = Wal::open(dir.path(), big).unwrap_err();
    assert!(error.to_string().contains("bytes follow it"), "{error}");
    assert!(snapshot(dir.path()) == before);
}

#[test]
fn an_empty_file_is_an_empty_log() {
    let dir = temp_dir("empty");
    fs::create_dir_all(dir.path()).unwrap();
    fs::write(dir.path().join("wal-00000000000000000000.log"), b"").unwrap();
    let (mut wal, scan) = Wal::open(dir.path(), SMALL).unwrap();
    assert_eq!(
        (scan.records.len(), scan.end, &scan.tail),
        (0, Lsn::START, &Tail::Clean)
    );
    wal.append_batch([(TrxTag(1), b"first".as_slice())])
        .unwrap();
    assert_eq!(scan_ok(dir.path()).records.len(), 1);
}

#[test]
fn a_missing_segment_refuses_the_open_unless_forced() {
    let dir = temp_dir("missing");
    write(dir.path(), 10);
    let files = segment_files(dir.path());
    assert!(files.len() >= 3);
    let first_len = scan(dir.path())
        .unwrap()
        .records
        .iter()
        .take_while(|r| {
            r.lsn.0
                < files[1].file_name().unwrap().to_str().unwrap()[4..24]
                    .parse::<u64>()
                    .unwrap()
        })
        .count();
    fs::remove_file(&files[1]).unwrap();
    refuses_unchanged(dir.path(), "the next segment");

    let (_, scan) = Wal::open_from(dir.path(), SMALL, Lsn::START, true).unwrap();
    assert_eq!(scan.records.len(), first_len);
    match &scan.tail {
        Tail::MissingSegment {
            expected, found, ..
        } => {
            assert_eq!(*expected, scan.end);
            assert_eq!(found, &files[2]);
        }
        other => panic!("expected a missing segment, got {other:?}"),
    }
    assert_eq!(scan.orphaned.len(), files.len() - 2);
}

#[test]
fn a_checkpoint_drops_the_segments_it_covers() {
    let dir = temp_dir("checkpoint");
    let lsns = write(dir.path(), 10);
    let (mut wal, _) = Wal::open(dir.path(), SMALL).unwrap();
    let before = segment_files(dir.path()).len();
    let dropped = wal.drop_before(lsns[6]).unwrap();
    assert!(dropped > 0 && segment_files(dir.path()).len() == before - dropped);
    // What is left still scans: it starts at a later segment, and records from lsns[6] on
    // are all there.
    let rest = scan(dir.path()).unwrap();
    assert_eq!(rest.tail, Tail::Clean);
    assert!(rest.records.iter().any(|r| r.lsn == lsns[6]));
    assert_eq!(rest.records.last().unwrap().lsn, lsns[9]);
}

/// One segment, extended 4 KiB ahead of the writes.
const ONE_AHEAD: WalConfig = WalConfig {
    segment_bytes: 1 << 20,
    flush: FlushPolicy::EveryCommit,
    preallocate_bytes: 4096,
};

/// Writes six records into [`ONE_AHEAD`] and lets `damage` change the segment's bytes
/// (given the records' LSNs).
fn damage_ahead(dir: &Path, damage: impl FnOnce(&mut [u8], &[Lsn])) {
    let lsns = write_with(dir, 6, ONE_AHEAD);
    let only = segment_files(dir).pop().unwrap();
    let mut bytes = fs::read(&only).unwrap();
    damage(&mut bytes, &lsns);
    fs::write(&only, bytes).unwrap();
}

/// The start LSN in a segment's name.
fn start_of(file: &Path) -> u64 {
    file.file_name().unwrap().to_str().unwrap()[4..24]
        .parse()
        .unwrap()
}

#[test]
fn a_segment_extended_ahead_ends_in_zeros_that_scan_as_its_end() {
    let dir = temp_dir("ahead");
    let lsns = write_with(dir.path(), 10, ONE_AHEAD);
    let only = segment_files(dir.path()).pop().unwrap();
    let written: u64 = (0..10).map(|i| record_bytes(payload(i).len())).sum();
    assert_eq!(
        fs::metadata(&only).unwrap().len(),
        4096,
        "extended a chunk ahead"
    );
    assert!(
        fs::read(&only).unwrap()[written as usize..]
            .iter()
            .all(|&b| b == 0)
    );

    let (mut wal, scan) = Wal::open(dir.path(), ONE_AHEAD).unwrap();
    assert_eq!(scan.tail, Tail::Clean);
    assert_eq!(trx_tags(&scan), (0..10).collect::<Vec<_>>());
    assert_eq!(wal.end(), Lsn(written));
    // The next batch overwrites the zeros, right after the last record.
    let next = wal
        .append_batch([(TrxTag(10), payload(10).as_slice())])
        .unwrap();
    assert_eq!(next, vec![Lsn(written)]);
    drop(wal);
    let again = scan_ok(dir.path());
    assert_eq!(trx_tags(&again), (0..11).collect::<Vec<_>>());
    assert_eq!(
        again.records[..10]
            .iter()
            .map(|r| r.lsn)
            .collect::<Vec<_>>(),
        lsns
    );
}

#[test]
fn only_the_last_segment_extended_ahead_ends_in_zeros() {
    let dir = temp_dir("ahead-segments");
    write_with(dir.path(), 12, SMALL_AHEAD);
    let files = segment_files(dir.path());
    assert!(files.len() > 2);
    for pair in files.windows(2) {
        let len = fs::metadata(&pair[0]).unwrap().len();
        assert_eq!(
            len,
            start_of(&pair[1]) - start_of(&pair[0]),
            "{:?}",
            pair[0]
        );
    }
    let end = scan_ok(dir.path()).end.0;
    let last = files.last().unwrap();
    assert!(fs::metadata(last).unwrap().len() >= end - start_of(last));
}

#[test]
fn a_record_lost_to_zeros_at_the_tail_is_a_torn_tail() {
    let dir = temp_dir("ahead-torn");
    damage_ahead(dir.path(), |bytes, lsns| {
        // The last record's second half never reached the disk.
        let half = lsns[5].0 as usize + record_bytes(payload(5).len()) as usize / 2;
        bytes[half..].fill(0);
    });
    let (mut wal, scan) = Wal::open(dir.path(), ONE_AHEAD).unwrap();
    assert_eq!(trx_tags(&scan), vec![0, 1, 2, 3, 4]);
    assert!(matches!(scan.tail, Tail::Damaged { .. }), "{:?}", scan.tail);
    wal.append_batch([(TrxTag(99), b"after the tear".as_slice())])
        .unwrap();
    drop(wal);
    assert_eq!(trx_tags(&scan_ok(dir.path())), vec![0, 1, 2, 3, 4, 99]);
}

#[test]
fn a_record_lost_to_zeros_before_a_valid_one_refuses_the_open() {
    let dir = temp_dir("ahead-hole");
    damage_ahead(dir.path(), |bytes, lsns| {
        bytes[lsns[2].0 as usize..lsns[3].0 as usize].fill(0);
    });
    let before = snapshot(dir.path());
    let error = Wal::open(dir.path(), ONE_AHEAD).unwrap_err();
    assert!(error.to_string().contains("bytes follow it"), "{error}");
    assert!(snapshot(dir.path()) == before);
}

proptest! {
    /// Any cut and any flipped byte of any segment: opening never panics, and either
    /// refuses and changes nothing, or keeps every record but those of the last segment from
    /// the damage on (a torn tail), and the log is clean and appendable afterwards; with
    /// segments extended ahead (zeros after the last record) or not.
    #[test]
    fn any_damage_is_refused_unchanged_or_loses_only_a_torn_tail(n in 1u64..12, ahead: bool, cut in any::<prop::sample::Index>(), flip in any::<Option<(prop::sample::Index, u8)>>()) {
        let config = if ahead { SMALL_AHEAD } else { SMALL };
        let dir = temp_dir("prop");
        write_with(dir.path(), n, config);
        let files = segment_files(dir.path());
        let file = &files[cut.index(files.len())];
        let last = file == files.last().unwrap();
        // Records in the segments before the damaged one: never lost.
        let file_start = start_of(file);
        let safe = scan(dir.path()).unwrap().records.iter().filter(|r| r.lsn.0 < file_start).count();
        let mut bytes = fs::read(file).unwrap();
        if let Some((at, mask)) = flip.filter(|_| !bytes.is_empty()) {
            let i = at.index(bytes.len());
            bytes[i] ^= mask.max(1);
        } else {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        fs::write(file, &bytes).unwrap();
        let before = snapshot(dir.path());
        match Wal::open(dir.path(), config) {
            Err(error) => {
                prop_assert!(matches!(error, WalError::Damaged { .. }), "{}", error);
                prop_assert!(snapshot(dir.path()) == before, "a refused open changed the log");
            }
            Ok((mut wal, scan)) => {
                let tags = trx_tags(&scan);
                prop_assert_eq!(&tags, &(0..tags.len() as u64).collect::<Vec<_>>());
                if scan.tail != Tail::Clean {
                    prop_assert!(last, "only the last segment's tail is cut: {:?}", scan.tail);
                    prop_assert!(tags.len() >= safe);
                } else {
                    prop_assert!(tags.len() as u64 == n || last, "clean but short");
                }
                wal.append_batch([(TrxTag(1000), b"after".as_slice())]).unwrap();
                drop(wal);
                let again = scan_ok(dir.path());
                prop_assert_eq!(again.records.len(), tags.len() + 1);
            }
        }
    }
}
