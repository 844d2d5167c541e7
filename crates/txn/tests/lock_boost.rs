//! Priority inheritance for row-lock holders (`EngineConfig::lock_holder_boost`), through the
//! engine: a transaction that waits for a row raises the holder's thread until the holder's
//! transaction ends. Linux only (thread priorities are read from `/proc`).

#![cfg(target_os = "linux")]
#![allow(clippy::print_stderr)]

use std::sync::Arc;
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use waterline_txn::{
    Column, ColumnType, Counter, Engine, EngineConfig, Isolation, Key, ReadOptions, Table,
    TableSchema, Value, copy_row,
};

fn engine(boost: u8) -> (Arc<Engine>, Table) {
    let engine = Engine::open(EngineConfig {
        lock_holder_boost: boost,
        lock_spin: Duration::ZERO,
        ..EngineConfig::default()
    })
    .unwrap();
    let schema = TableSchema::new(
        "hot",
        vec![
            Column::new("id", ColumnType::Int),
            Column::new("v", ColumnType::BigInt),
        ],
    )
    .primary_key(&["id"])
    .unwrap();
    let table = engine.create_table(schema).unwrap();
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    trx.insert(&table, vec![Value::Int(1), Value::Int(0)])
        .unwrap();
    trx.commit().unwrap();
    (Arc::new(engine), table)
}

/// The calling thread's id.
fn tid() -> String {
    let link = std::fs::read_link("/proc/thread-self").unwrap();
    link.file_name().unwrap().to_string_lossy().into_owned()
}

/// Thread `tid`'s nice value (field 19 of its stat line, counted after the command name).
fn nice(tid: &str) -> i64 {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    after_name.split(' ').nth(16).unwrap().parse().unwrap()
}

/// Polls `f` until it holds, for at most 10 s.
fn eventually(mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

/// The holder of row 1 runs on its own thread, reports its thread id once it holds the
/// row, and commits when told; a waiter on another thread then asks for the row. Returns
/// the holder's nice value before, while the waiter waits (once the waiter has boosted it
/// or been denied, if `boosting`), and after the commit has returned (the commit wakes the
/// waiter as it releases the row, before it gives the thread its own priority back: the
/// waiter's end says nothing about the holder's).
fn hold_and_wait(engine: &Arc<Engine>, table: &Table, boosting: bool) -> (i64, i64, i64) {
    let (held_tx, held) = channel();
    let (commit_tx, commit) = channel::<()>();
    let (committed_tx, committed) = channel::<()>();
    let holder = {
        let (engine, table) = (Arc::clone(engine), table.clone());
        std::thread::spawn(move || {
            let mut trx = engine.begin_with(Isolation::ReadCommitted);
            trx.get_with(&table, Key::from([1]), ReadOptions::FOR_UPDATE, copy_row)
                .unwrap();
            held_tx.send(tid()).unwrap();
            commit.recv().unwrap();
            trx.commit().unwrap();
            committed_tx.send(()).unwrap();
            // Stay alive to be looked at.
            std::thread::sleep(Duration::from_millis(200));
        })
    };
    let holder_tid = held.recv().unwrap();
    let before = nice(&holder_tid);
    let waiter = {
        let (engine, table) = (Arc::clone(engine), table.clone());
        std::thread::spawn(move || {
            let mut trx = engine.begin_with(Isolation::ReadCommitted);
            trx.get_with(&table, Key::from([1]), ReadOptions::FOR_UPDATE, copy_row)
                .unwrap();
            trx.commit().unwrap();
        })
    };
    assert!(eventually(|| engine.stats().get(Counter::LockWaits) >= 1));
    let boosted_or_denied = || {
        let stats = engine.stats();
        stats.get(Counter::LockBoosts) + stats.get(Counter::LockBoostsDenied) >= 1
    };
    if boosting {
        assert!(eventually(boosted_or_denied));
    } else {
        // Neither happens; give it the time it would take.
        std::thread::sleep(Duration::from_millis(100));
        assert!(!boosted_or_denied());
    }
    let during = nice(&holder_tid);
    commit_tx.send(()).unwrap();
    committed.recv().unwrap();
    let after = nice(&holder_tid);
    waiter.join().unwrap();
    holder.join().unwrap();
    (before, during, after)
}

#[test]
fn a_waited_for_holder_runs_raised_until_it_commits() {
    let (engine, table) = engine(5);
    let (before, during, after) = hold_and_wait(&engine, &table, true);
    let stats = engine.stats();
    if stats.get(Counter::LockBoostsDenied) > 0 {
        eprintln!("no CAP_SYS_NICE here: the boost was denied");
        // Without CAP_SYS_NICE the attempt is counted and changes nothing.
        assert_eq!((stats.get(Counter::LockBoosts), during), (0, before));
    } else {
        assert_eq!(stats.get(Counter::LockBoosts), 1);
        assert_eq!(during, (before - 5).max(-20), "raised while waited for");
    }
    assert_eq!(after, before, "its own priority back at commit");
}

#[test]
fn off_by_default() {
    assert_eq!(EngineConfig::default().lock_holder_boost, 0);
    let (engine, table) = engine(0);
    let (before, during, after) = hold_and_wait(&engine, &table, false);
    assert_eq!((during, after), (before, before));
    let stats = engine.stats();
    assert_eq!(stats.get(Counter::LockBoosts), 0);
    assert_eq!(stats.get(Counter::LockBoostsDenied), 0);
}
