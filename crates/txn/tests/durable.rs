//! The durable engine: what is committed survives a restart (through the log, a checkpoint,
//! or both), nothing uncommitted does, and damaged files give clear errors or a reported
//! cut, never a panic.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tempfile::TempDir;
use waterline_txn::{
    Column, ColumnType, CommitConfig, Engine, EngineConfig, FlushPolicy, Isolation, Key, KeyRange,
    ReadOptions, Row, SnapshotKind, Table, TableSchema, Tail, TxnError, Value, WalError,
    copy_keyed_row,
};

fn temp_dir() -> TempDir {
    common::temp_dir("durable")
}

fn config(snapshot: SnapshotKind) -> EngineConfig {
    EngineConfig {
        snapshot,
        commit: CommitConfig {
            segment_bytes: 2048,
            ..CommitConfig::default()
        },
        ..EngineConfig::default()
    }
}

fn open(dir: &Path, config: &EngineConfig) -> Engine {
    Engine::open_dir(dir, config.clone())
        .expect("the engine opens")
        .0
}

fn accounts(engine: &Engine) -> Table {
    engine
        .create_table(
            TableSchema::new(
                "account",
                vec![
                    Column::new("id", ColumnType::Int),
                    Column::new("balance", ColumnType::BigInt),
                    Column::nullable("owner", ColumnType::Varchar(20)),
                ],
            )
            .primary_key(&["id"])
            .unwrap()
            .index("by_owner", &["owner"], false)
            .unwrap(),
        )
        .unwrap()
}

fn heap(engine: &Engine) -> Table {
    engine
        .create_table(TableSchema::new(
            "history",
            vec![Column::new("v", ColumnType::BigInt)],
        ))
        .unwrap()
}

/// Every row of every table, as a fresh READ COMMITTED transaction sees it.
fn contents(engine: &Engine) -> Vec<(String, Vec<(Key, Row)>)> {
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    engine
        .tables()
        .iter()
        .map(|t| (t.name().to_owned(), trx.scan(t, KeyRange::All).unwrap()))
        .collect()
}

fn workload(engine: &Engine, account: &Table, history: &Table, from: i64, to: i64) {
    for i in from..to {
        let mut trx = engine.begin_with(Isolation::ReadCommitted);
        trx.insert(
            account,
            vec![i.into(), (i * 10).into(), format!("o{}", i % 3).into()],
        )
        .unwrap();
        if i % 4 == 0 && i > 0 {
            trx.update_with(account, Key::one(i - 1), |row| {
                vec![row[0].clone(), 0.into(), row[2].clone()]
            })
            .unwrap();
        }
        if i % 7 == 0 && i > 1 {
            trx.delete(account, Key::one(i - 2)).unwrap();
        }
        trx.insert(history, vec![i.into()]).unwrap();
        trx.commit().unwrap();
    }
}

#[test]
fn commits_survive_a_restart_for_every_snapshot_kind_and_flush_policy() {
    for (snapshot, flush) in [
        (SnapshotKind::Vector, FlushPolicy::EveryCommit),
        (SnapshotKind::Hybrid, FlushPolicy::Os),
        (SnapshotKind::Csn, FlushPolicy::EveryCommit),
    ] {
        let dir = temp_dir();
        let mut config = config(snapshot);
        config.commit.flush = flush;
        let before = {
            let engine = open(dir.path(), &config);
            let (account, history) = (accounts(&engine), heap(&engine));
            workload(&engine, &account, &history, 0, 60);
            contents(&engine)
        };
        let (engine, recovery) = Engine::open_dir(dir.path(), config.clone()).unwrap();
        assert_eq!(recovery.checkpoint, None);
        assert_eq!((recovery.replayed, recovery.tables_created), (60, 2));
        assert_eq!(recovery.tail, Tail::Clean);
        assert_eq!(contents(&engine), before, "{snapshot:?}");

        // Hidden row ids go on past the recovered ones; a secondary index works.
        let history = engine.table("history").unwrap();
        let mut trx = engine.begin_with(Isolation::ReadCommitted);
        let key = trx.insert(&history, vec![99.into()]).unwrap();
        assert_eq!(key, Key::one(61));
        let account = engine.table("account").unwrap();
        let by_owner = trx
            .scan_with(
                &account,
                KeyRange::Prefix(Key::one("o1")),
                ReadOptions::default().on_index("by_owner"),
                copy_keyed_row,
            )
            .unwrap();
        assert!(!by_owner.is_empty());
        trx.commit().unwrap();
    }
}

#[test]
fn what_was_not_committed_is_not_recovered() {
    let dir = temp_dir();
    let config = config(SnapshotKind::Hybrid);
    {
        let engine = open(dir.path(), &config);
        let (account, history) = (accounts(&engine), heap(&engine));
        workload(&engine, &account, &history, 0, 5);
        let mut rolled_back = engine.begin_with(Isolation::ReadCommitted);
        rolled_back
            .insert(&account, vec![100.into(), 1.into(), "x".into()])
            .unwrap();
        rolled_back.rollback();
        let mut undone = engine.begin_with(Isolation::ReadCommitted);
        undone
            .insert(&account, vec![101.into(), 1.into(), "x".into()])
            .unwrap();
        // A failing statement undoes only itself; what is left to commit is empty.
        let duplicate = undone.statement(|trx| {
            trx.delete(&account, Key::one(101))?;
            trx.insert(&account, vec![0.into(), 1.into(), "x".into()])
        });
        assert!(matches!(duplicate, Err(TxnError::DuplicateKey { .. })));
        undone.delete(&account, Key::one(101)).unwrap();
        undone.commit().unwrap();
        let mut open_at_crash = engine.begin_with(Isolation::ReadCommitted);
        open_at_crash
            .insert(&account, vec![102.into(), 1.into(), "x".into()])
            .unwrap();
        std::mem::forget(open_at_crash); // never commits, never rolls back
    }
    let engine = open(dir.path(), &config);
    let account = engine.table("account").unwrap();
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    for id in [100, 101, 102] {
        assert_eq!(trx.get(&account, Key::one(id)).unwrap(), None, "id {id}");
    }
    assert_eq!(trx.scan(&account, KeyRange::All).unwrap().len(), 5);
}

#[test]
fn a_checkpoint_taken_while_writers_run_plus_the_log_recovers_everything() {
    let dir = temp_dir();
    let config = config(SnapshotKind::Csn);
    let before = {
        let engine = open(dir.path(), &config);
        let (account, history) = (accounts(&engine), heap(&engine));
        workload(&engine, &account, &history, 0, 50);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let writers: Vec<_> = (0..2i64)
                .map(|w| {
                    let (engine, account, history, stop) = (&engine, &account, &history, &stop);
                    s.spawn(move || {
                        let mut i = 1000 + w * 100_000;
                        while !stop.load(Ordering::Relaxed) {
                            workload(engine, account, history, i, i + 1);
                            i += 1;
                        }
                    })
                })
                .collect();
            let mut reports = Vec::new();
            for _ in 0..3 {
                std::thread::sleep(std::time::Duration::from_millis(30));
                reports.push(engine.checkpoint().unwrap());
            }
            stop.store(true, Ordering::Relaxed);
            writers.into_iter().for_each(|w| w.join().unwrap());
            assert!(reports.windows(2).all(|r| r[0].lsn <= r[1].lsn));
            assert!(reports.iter().map(|r| r.segments_dropped).sum::<usize>() > 0);
        });
        workload(&engine, &account, &history, 500, 510);
        contents(&engine)
    };
    let checkpoints: Vec<PathBuf> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("checkpoint")
        })
        .collect();
    assert_eq!(
        checkpoints.len(),
        1,
        "older checkpoints are deleted: {checkpoints:?}"
    );
    let (engine, recovery) = Engine::open_dir(dir.path(), config.clone()).unwrap();
    assert!(
        recovery.checkpoint.is_some() && recovery.image_rows > 0,
        "{recovery}"
    );
    assert!(recovery.replayed >= 10, "{recovery}");
    assert_eq!(contents(&engine), before);
}

#[test]
fn the_log_since_the_last_checkpoint_is_what_a_restart_would_replay() {
    let memory = Engine::open(EngineConfig::default()).unwrap();
    assert_eq!(memory.log_since_checkpoint(), None);
    assert_eq!(memory.checkpoint_stats(), None);
    let dir = temp_dir();
    let config = config(SnapshotKind::Vector);
    let engine = open(dir.path(), &config);
    let (account, history) = (accounts(&engine), heap(&engine));
    let created = engine.log_since_checkpoint().unwrap();
    assert!(created > 0, "CREATE TABLE is logged");
    workload(&engine, &account, &history, 0, 20);
    let written = engine.log_since_checkpoint().unwrap();
    assert!(written > created);
    assert_eq!(engine.checkpoint_stats(), Some((0, 0)));
    engine.checkpoint().unwrap();
    assert_eq!(engine.log_since_checkpoint(), Some(0));
    let (taken, micros) = engine.checkpoint_stats().unwrap();
    assert_eq!(taken, 1, "counted once it is taken");
    assert!(
        micros > 0,
        "a checkpoint writes and syncs a file: it takes time"
    );
    workload(&engine, &account, &history, 20, 25);
    let after = engine.log_since_checkpoint().unwrap();
    assert!(after > 0 && after < written, "{after} of {written}");
    drop(engine);
    // A restart starts counting from the checkpoint it loaded.
    let (engine, recovery) = Engine::open_dir(dir.path(), config).unwrap();
    assert_eq!(recovery.replayed, 5, "{recovery}");
    assert_eq!(engine.log_since_checkpoint(), Some(after));
}

/// Replay runs with purge paused: the versions replayed commits leave behind wait for the
/// first purge after the engine is up (with a purge thread waking every millisecond, the
/// replay of 3,000 updates of ten rows would otherwise purge as it goes).
#[test]
fn replay_runs_with_purge_paused_and_purge_resumes_after() {
    let dir = temp_dir();
    let config = EngineConfig {
        purge_interval: Some(Duration::from_millis(1)),
        ..config(SnapshotKind::Vector)
    };
    let engine = open(dir.path(), &config);
    let account = accounts(&engine);
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    for id in 0..10 {
        trx.insert(&account, vec![id.into(), 0i64.into(), Value::Null])
            .unwrap();
    }
    trx.commit().unwrap();
    for n in 0..3_000i64 {
        let mut trx = engine.begin_with(Isolation::ReadCommitted);
        let row = vec![(n % 10).into(), n.into(), Value::Null];
        trx.update(&account, Key::one(n % 10), row).unwrap();
        trx.commit().unwrap();
    }
    drop(engine);
    let (engine, recovery) = Engine::open_dir(dir.path(), config).unwrap();
    assert_eq!(recovery.replayed, 3_001, "{recovery}");
    assert_eq!(recovery.purged_during_replay, 0);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while engine.history_len() > 0 {
        assert!(std::time::Instant::now() < deadline, "purge never resumed");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn wal_segments(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir.join("wal"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    files.sort();
    files
}

#[test]
fn a_damaged_last_record_loses_only_that_commit_and_is_reported() {
    let dir = temp_dir();
    let config = config(SnapshotKind::Vector);
    {
        let engine = open(dir.path(), &config);
        let (account, history) = (accounts(&engine), heap(&engine));
        workload(&engine, &account, &history, 0, 20);
    }
    let last = wal_segments(dir.path()).pop().unwrap();
    let mut bytes = fs::read(&last).unwrap();
    // The last record's last byte that is not zero (the segment ends in zeros written
    // ahead of the log).
    let end = bytes.iter().rposition(|&b| b != 0).unwrap();
    bytes[end] ^= 0x40;
    fs::write(&last, bytes).unwrap();

    let (engine, recovery) = Engine::open_dir(dir.path(), config.clone()).unwrap();
    assert!(matches!(recovery.tail, Tail::Damaged { .. }), "{recovery}");
    assert!(recovery.to_string().contains("damaged"), "{recovery}");
    assert_eq!(recovery.replayed, 19);
    let account = engine.table("account").unwrap();
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    assert!(trx.get(&account, Key::one(18)).unwrap().is_some());
    assert!(trx.get(&account, Key::one(19)).unwrap().is_none());
    trx.commit().unwrap();
    // The engine appends after the cut, and that survives too.
    let history = engine.table("history").unwrap();
    workload(&engine, &account, &history, 19, 21);
    let before = contents(&engine);
    drop(engine);
    let (engine, recovery) = Engine::open_dir(dir.path(), config).unwrap();
    assert_eq!(recovery.tail, Tail::Clean);
    assert_eq!(contents(&engine), before);
}

#[test]
fn a_damaged_checkpoint_or_a_missing_log_is_a_clear_error() {
    let dir = temp_dir();
    let config = config(SnapshotKind::Hybrid);
    {
        let engine = open(dir.path(), &config);
        let (account, history) = (accounts(&engine), heap(&engine));
        workload(&engine, &account, &history, 0, 30);
        engine.checkpoint().unwrap();
        workload(&engine, &account, &history, 30, 40);
    }
    let saved = dir.path().with_extension("saved");
    copy_dir(dir.path(), &saved);

    fs::remove_dir_all(dir.path().join("wal")).unwrap();
    let error = Engine::open_dir(dir.path(), config.clone()).unwrap_err();
    assert!(
        matches!(&error, TxnError::Log(wal) if matches!(**wal, WalError::Damaged { .. })),
        "{error}"
    );
    assert!(error.to_string().contains("missing"), "{error}");

    fs::remove_dir_all(dir.path()).unwrap();
    copy_dir(&saved, dir.path());
    let checkpoint = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("checkpoint-")
        })
        .unwrap();
    let image = fs::read_dir(&checkpoint)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = fs::read(&image).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    fs::write(&image, bytes).unwrap();
    let error = Engine::open_dir(dir.path(), config.clone()).unwrap_err();
    assert!(
        matches!(error, TxnError::Durability(ref m) if m.contains("damaged")),
        "{error}"
    );
    fs::remove_dir_all(&saved).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            fs::copy(&path, &target).unwrap();
        }
    }
}

#[test]
fn the_pipeline_counts_groups_and_fsyncs_and_the_flush_policy_is_checked() {
    let dir = temp_dir();
    let engine = open(dir.path(), &config(SnapshotKind::Hybrid));
    let (account, history) = (accounts(&engine), heap(&engine));
    workload(&engine, &account, &history, 0, 10);
    let stats = engine.commit_stats().unwrap();
    assert_eq!(stats.commits, 12, "ten transactions and two CREATE TABLEs");
    assert!(stats.fsyncs >= 1 && stats.fsyncs <= 12);
    assert!(
        Engine::open(EngineConfig::default())
            .unwrap()
            .commit_stats()
            .is_none()
    );

    let none = EngineConfig {
        commit: CommitConfig {
            flush: FlushPolicy::None,
            ..CommitConfig::default()
        },
        ..EngineConfig::default()
    };
    assert!(matches!(
        Engine::open_dir(temp_dir().path(), none),
        Err(TxnError::Config(_))
    ));
    let in_memory = Engine::open(EngineConfig::default()).unwrap();
    assert!(matches!(in_memory.checkpoint(), Err(TxnError::Config(_))));
}

/// A temporary table is in no catalog and its changes are never logged: a transaction that
/// writes to it and to a base table commits the base table's rows alone to the log, base
/// tables made after it keep the ids the log names, and neither recovery nor a checkpoint
/// knows it existed.
#[test]
fn a_temporary_table_is_never_logged_and_never_shifts_the_catalog() {
    let dir = temp_dir();
    let config = config(SnapshotKind::Hybrid);
    let before = {
        let engine = open(dir.path(), &config);
        let account = accounts(&engine);
        let scratch = engine
            .create_temporary_table(
                TableSchema::new("account", vec![Column::new("id", ColumnType::Int)])
                    .primary_key(&["id"])
                    .unwrap(),
            )
            .unwrap();
        assert!(scratch.is_temporary() && !account.is_temporary());
        assert_eq!(engine.tables().len(), 1, "no catalog lists it");
        assert_eq!(engine.table("account").unwrap().id(), account.id());
        let history = heap(&engine);
        let mut trx = engine.begin_with(Isolation::RepeatableRead);
        trx.insert(&scratch, vec![7.into()]).unwrap();
        trx.insert(&account, vec![1.into(), 100i64.into(), Value::Null])
            .unwrap();
        trx.insert(&history, vec![5i64.into()]).unwrap();
        trx.commit().unwrap();
        // A rolled-back write to it is undone as any other.
        let mut trx = engine.begin_with(Isolation::RepeatableRead);
        trx.insert(&scratch, vec![8.into()]).unwrap();
        trx.rollback();
        let mut trx = engine.begin_with(Isolation::RepeatableRead);
        assert_eq!(trx.scan(&scratch, KeyRange::All).unwrap().len(), 1);
        contents(&engine)
    };
    let engine = open(dir.path(), &config);
    assert_eq!(
        contents(&engine),
        before,
        "the log replays onto the same tables"
    );
    engine.checkpoint().unwrap();
    drop(engine);
    assert_eq!(contents(&open(dir.path(), &config)), before);
}

/// The start of a log segment, from its name (`wal-<lsn>.log`).
fn segment_start(path: &Path) -> u64 {
    path.file_name().unwrap().to_str().unwrap()[4..24]
        .parse()
        .unwrap()
}

/// Every file under `dir` and its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(snapshot(&path));
        } else {
            out.push((path.clone(), fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

/// Damage in the log before the checkpoint is not read (recovery starts at the
/// checkpoint); damage after it, with valid records behind it, refuses the start and changes
/// nothing; force recovery then starts with what comes before the damage and keeps the rest
/// aside.
#[test]
fn damage_before_the_checkpoint_is_ignored_and_damage_after_it_refuses_the_start() {
    let dir = temp_dir();
    let config = config(SnapshotKind::Hybrid);
    let (checkpoint, all) = {
        let engine = open(dir.path(), &config);
        let (account, history) = (accounts(&engine), heap(&engine));
        workload(&engine, &account, &history, 0, 30);
        let report = engine.checkpoint().unwrap();
        workload(&engine, &account, &history, 30, 60);
        (report.lsn.get(), contents(&engine))
    };
    let segments = wal_segments(dir.path());
    let holding = segments
        .iter()
        .rfind(|p| segment_start(p) <= checkpoint)
        .unwrap()
        .clone();
    let before_checkpoint = (checkpoint - segment_start(&holding)) as usize;
    assert!(
        before_checkpoint > 8,
        "the segment holds records before the checkpoint"
    );
    let flip = |path: &Path, at: usize| {
        let mut bytes = fs::read(path).unwrap();
        bytes[at] ^= 0x01;
        fs::write(path, bytes).unwrap();
    };
    flip(&holding, before_checkpoint / 2);
    let (engine, recovery) = Engine::open_dir(dir.path(), config.clone()).unwrap();
    assert_eq!(recovery.tail, Tail::Clean, "{recovery}");
    assert_eq!(contents(&engine), all, "every acknowledged commit");
    drop(engine);

    // A byte flipped in a segment after the checkpoint's, with more log behind it.
    let later = wal_segments(dir.path())
        .into_iter()
        .filter(|p| segment_start(p) > checkpoint)
        .nth(1)
        .expect("segments after the checkpoint's");
    flip(&later, 30);
    let before = snapshot(dir.path());
    let error = Engine::open_dir(dir.path(), config.clone()).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("damaged") && message.contains(&later.display().to_string()),
        "{message}"
    );
    assert!(
        snapshot(dir.path()) == before,
        "a refused start changed nothing"
    );

    let forced = EngineConfig {
        commit: CommitConfig {
            force_recovery: true,
            ..config.commit
        },
        ..config.clone()
    };
    let (engine, recovery) = Engine::open_dir(dir.path(), forced).unwrap();
    assert!(matches!(recovery.tail, Tail::Damaged { .. }), "{recovery}");
    assert!(recovery.to_string().contains(".cut"), "{recovery}");
    let account = engine.table("account").unwrap();
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    assert!(
        trx.get(&account, Key::one(29)).unwrap().is_some(),
        "the checkpoint's rows"
    );
    assert!(
        trx.get(&account, Key::one(59)).unwrap().is_none(),
        "the commits after the damage are what force recovery gives up"
    );
}
