//! The log against damaged files: a torn tail, a flipped byte in the last record and in the
//! middle, an empty file, a missing segment. Opening must report where the valid log ends,
//! keep every record before it, never panic, and append cleanly afterwards.

use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use tempfile::TempDir;
use waterline_commit::{
    Damage, FlushPolicy, Lsn, Tail, TrxTag, Wal, WalConfig, record_bytes, scan,
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
};

fn payload(i: u64) -> Vec<u8> {
    format!("record number {i}").into_bytes()
}

/// Writes `n` records, two per batch; returns their LSNs.
fn write(dir: &Path, n: u64) -> Vec<Lsn> {
    let (mut wal, _) = Wal::open(dir, SMALL).unwrap();
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

#[test]
fn a_flipped_byte_in_the_middle_stops_recovery_there_and_says_where() {
    let dir = temp_dir("flip-middle");
    write(dir.path(), 10);
    let files = segment_files(dir.path());
    let middle = &files[1];
    let mut bytes = fs::read(middle).unwrap();
    bytes[30] ^= 0x01; // inside the segment's first record's payload
    fs::write(middle, bytes).unwrap();
    let before = scan(dir.path()).unwrap();

    let (mut wal, scan) = Wal::open(dir.path(), SMALL).unwrap();
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
    wal.append_batch([(TrxTag(7), b"new".as_slice())]).unwrap();
    drop(wal);
    let again = scan_ok(dir.path());
    assert_eq!(again.records.len(), scan.records.len() + 1);
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
fn a_missing_segment_ends_the_log_before_it() {
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

    let (_, scan) = Wal::open(dir.path(), SMALL).unwrap();
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

proptest! {
    /// Any cut and any flipped byte: opening never panics, keeps a prefix of what was
    /// written, and the log is clean and appendable afterwards.
    #[test]
    fn any_damage_leaves_a_valid_prefix(n in 1u64..12, cut in any::<prop::sample::Index>(), flip in any::<Option<(prop::sample::Index, u8)>>()) {
        let dir = temp_dir("prop");
        write(dir.path(), n);
        let files = segment_files(dir.path());
        let file = &files[cut.index(files.len())];
        let mut bytes = fs::read(file).unwrap();
        if let Some((at, mask)) = flip.filter(|_| !bytes.is_empty()) {
            let i = at.index(bytes.len());
            bytes[i] ^= mask.max(1);
        } else {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        fs::write(file, &bytes).unwrap();
        let (mut wal, scan) = Wal::open(dir.path(), SMALL).unwrap();
        let tags = trx_tags(&scan);
        prop_assert_eq!(&tags, &(0..tags.len() as u64).collect::<Vec<_>>());
        wal.append_batch([(TrxTag(1000), b"after".as_slice())]).unwrap();
        drop(wal);
        let again = scan_ok(dir.path());
        prop_assert_eq!(again.records.len(), tags.len() + 1);
    }
}
