//! Bank transfers under concurrency, for every knob combination: writers move money between
//! accounts (in both lock orders, so deadlocks happen and are retried), readers check that
//! every snapshot sums to the same total, and purge runs in the background all the while.
//! Bounded in time: each combination runs for `RUN_FOR`.

mod common;

use common::Rng;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use waterline_txn::{
    Column, ColumnType, Counter, Engine, EngineConfig, Isolation, Key, KeyRange, SnapshotKind,
    TableSchema, TxnError, ViewClose,
};

const ACCOUNTS: i64 = 16;
const START: i64 = 1_000;
const RUN_FOR: Duration = Duration::from_millis(400);

fn transfer(engine: &Engine, table: &waterline_txn::Table, rng: &mut Rng) -> Result<(), TxnError> {
    let from = rng.below(ACCOUNTS as u64) as i64;
    let to = (from + 1 + rng.below(ACCOUNTS as u64 - 1) as i64) % ACCOUNTS;
    let amount = rng.below(50) as i64;
    let isolation = if rng.below(2) == 0 {
        Isolation::ReadCommitted
    } else {
        Isolation::RepeatableRead
    };
    let mut trx = engine.begin_with(isolation);
    let add = |delta: i64| {
        move |row: &[waterline_txn::Value]| {
            vec![row[0].clone(), (row[1].as_int().unwrap() + delta).into()]
        }
    };
    assert!(trx.update_with(table, Key::one(from), add(-amount))?);
    if rng.below(2) == 0 {
        assert!(trx.update_with(table, Key::one(to), add(amount))?);
    } else {
        // The fused locking read and write: the same change, one lookup.
        let credited = trx.modify(table, Key::one(to), |row| {
            row[1] = (row[1].as_int().unwrap() + amount).into();
            Ok::<_, TxnError>(())
        })?;
        assert_eq!(credited, Some(()));
    }
    trx.commit()
}

fn audit(engine: &Engine, table: &waterline_txn::Table, rng: &mut Rng) -> Result<(), TxnError> {
    if rng.below(2) == 0 {
        // One statement: consistent at either level.
        let isolation = if rng.below(2) == 0 {
            Isolation::ReadCommitted
        } else {
            Isolation::RepeatableRead
        };
        let mut trx = engine.begin_with(isolation);
        let rows = trx.scan(table, KeyRange::All)?;
        assert_eq!(rows.len() as i64, ACCOUNTS);
        let sum: i64 = rows.iter().map(|(_, r)| r[1].as_int().unwrap()).sum();
        assert_eq!(sum, ACCOUNTS * START, "a scan saw money appear or vanish");
        trx.commit()
    } else {
        // Many statements under REPEATABLE READ: one snapshot for all of them.
        let mut trx = engine.begin_with(Isolation::RepeatableRead);
        let mut sum = 0;
        for id in 0..ACCOUNTS {
            sum += trx
                .get(table, Key::one(id))?
                .expect("accounts are never deleted")[1]
                .as_int()
                .unwrap();
        }
        assert_eq!(
            sum,
            ACCOUNTS * START,
            "a REPEATABLE READ transaction saw two snapshots"
        );
        trx.commit()
    }
}

fn run(snapshot: SnapshotKind, view_close: ViewClose, trx_shards: usize) {
    let config = EngineConfig {
        snapshot,
        view_close,
        trx_shards,
        lock_wait_timeout: Duration::from_secs(2),
        purge_interval: Some(Duration::from_millis(1)),
        ..EngineConfig::default().with_tiny_windows()
    };
    let engine = Engine::open(config).unwrap();
    let schema = TableSchema::new(
        "account",
        vec![
            Column::new("id", ColumnType::BigInt),
            Column::new("balance", ColumnType::BigInt),
        ],
    )
    .primary_key(&["id"])
    .unwrap();
    let table = engine.create_table(schema).unwrap();
    let mut setup = engine.begin_with(Isolation::ReadCommitted);
    for id in 0..ACCOUNTS {
        setup.insert(&table, vec![id.into(), START.into()]).unwrap();
    }
    setup.commit().unwrap();

    let stop = AtomicBool::new(false);
    let (transfers, audits, retries) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        for thread in 0..4u64 {
            let (engine, table, stop) = (&engine, &table, &stop);
            let (transfers, audits, retries) = (&transfers, &audits, &retries);
            s.spawn(move || {
                let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15, thread + 1);
                while !stop.load(Ordering::Relaxed) {
                    let writer = thread < 3;
                    let result = if writer {
                        transfer(engine, table, &mut rng)
                    } else {
                        audit(engine, table, &mut rng)
                    };
                    match result {
                        Ok(()) if writer => transfers.fetch_add(1, Ordering::Relaxed),
                        Ok(()) => audits.fetch_add(1, Ordering::Relaxed),
                        Err(error) if error.is_retryable() => {
                            retries.fetch_add(1, Ordering::Relaxed)
                        }
                        Err(error) => panic!("unexpected error: {error}"),
                    };
                }
            });
        }
        let started = Instant::now();
        while started.elapsed() < RUN_FOR {
            std::thread::sleep(Duration::from_millis(10));
        }
        stop.store(true, Ordering::Relaxed);
    });

    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    let sum: i64 = trx
        .scan(&table, KeyRange::All)
        .unwrap()
        .iter()
        .map(|(_, r)| r[1].as_int().unwrap())
        .sum();
    assert_eq!(sum, ACCOUNTS * START);
    drop(trx);
    assert!(transfers.load(Ordering::Relaxed) > 0 && audits.load(Ordering::Relaxed) > 0);
    let stats = engine.stats();
    eprintln!(
        "{snapshot}/{}/{trx_shards}: transfers {} audits {} retries {} deadlocks {} waits {} purged {}",
        view_close.name(),
        transfers.load(Ordering::Relaxed),
        audits.load(Ordering::Relaxed),
        retries.load(Ordering::Relaxed),
        stats.get(Counter::Deadlocks),
        stats.get(Counter::LockWaits),
        stats.get(Counter::VersionsPurged)
    );
    // No lock is held for the 2 s timeout in a 400 ms run: a timeout is a deadlock that
    // detection missed, or a waiter nobody woke.
    assert_eq!(stats.get(Counter::LockWaitTimeouts), 0);
    assert_eq!(
        engine.trx_sys().live_transactions(),
        vec![],
        "every transaction ended"
    );
    assert_eq!(engine.trx_sys().open_views(), 0);
    assert!(stats.get(Counter::PurgeRuns) > 0);
    assert_eq!(
        stats.get(Counter::ViewsOpened),
        stats.get(Counter::ViewsClosed),
        "every view opened was closed"
    );
    // After everything ended, one purge pass leaves one version per account.
    engine.purge();
    engine.purge();
    assert_eq!(table.approximate_rows() as i64, ACCOUNTS);
}

#[test]
fn transfers_keep_the_total_under_every_knob_combination() {
    for snapshot in SnapshotKind::ALL {
        for view_close in ViewClose::ALL {
            for shards in [1usize, 256] {
                run(snapshot, view_close, shards);
            }
        }
    }
}
