//! The embedded API's less travelled paths: tables without a primary key, secondary index
//! rechecks, ordered and limited scans, bad input, and the commit seam.

use std::ops::Bound;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use waterline_txn::{
    Column, ColumnType, CommitError, CommitPipeline, CommitTicket, Counter, Decimal, Engine,
    EngineConfig, Isolation, Key, KeyRange, LockMode, LockWait, ReadOptions, Redo, RedoRecord,
    SnapshotKind, Table, TableSchema, TrxId, TxnError, Value, WalError, copy_keyed_row, copy_row,
};

fn config() -> EngineConfig {
    EngineConfig {
        purge_interval: None,
        lock_wait_timeout: Duration::ZERO,
        ..EngineConfig::default()
    }
}

fn customers(engine: &Engine) -> Table {
    let schema = TableSchema::new(
        "customer",
        vec![
            Column::new("w", ColumnType::Int),
            Column::new("id", ColumnType::Int),
            Column::new("last", ColumnType::Varchar(16)),
            Column::new(
                "balance",
                ColumnType::Decimal {
                    precision: 12,
                    scale: 2,
                },
            ),
        ],
    )
    .primary_key(&["w", "id"])
    .unwrap()
    .index("by_last", &["w", "last"], false)
    .unwrap();
    engine.create_table(schema).unwrap()
}

fn customer(w: i64, id: i64, last: &str, balance: &str) -> Vec<Value> {
    vec![
        w.into(),
        id.into(),
        last.into(),
        Value::Decimal(balance.parse::<Decimal>().unwrap()),
    ]
}

#[test]
fn a_table_without_primary_key_gets_hidden_row_ids() {
    let engine = Engine::open(config()).unwrap();
    let log = engine
        .create_table(TableSchema::new(
            "log",
            vec![Column::new("msg", ColumnType::Varchar(8))],
        ))
        .unwrap();
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    let a = trx.insert(&log, vec!["same".into()]).unwrap();
    let b = trx.insert(&log, vec!["same".into()]).unwrap();
    assert_ne!(a, b, "equal rows are distinct rows");
    trx.commit().unwrap();
    let mut reader = engine.begin_with(Isolation::ReadCommitted);
    assert_eq!(reader.scan(&log, KeyRange::All).unwrap().len(), 2);
    assert_eq!(reader.get(&log, a).unwrap(), Some(vec!["same".into()]));
}

#[test]
fn secondary_hits_are_rechecked_against_the_visible_version() {
    let engine = Engine::open(config()).unwrap();
    let t = customers(&engine);
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    load.insert(&t, customer(1, 1, "ABLE", "10.00")).unwrap();
    load.insert(&t, customer(1, 2, "BAKER", "20.00")).unwrap();
    load.insert(&t, customer(1, 3, "ABLE", "30.00")).unwrap();
    load.insert(&t, customer(2, 1, "ABLE", "40.00")).unwrap();
    load.commit().unwrap();

    let by_last = |trx: &mut waterline_txn::Transaction, last: &str| {
        let range = KeyRange::Prefix(Key::from(vec![1.into(), last.into()]));
        let rows = trx
            .scan_with(
                &t,
                range,
                ReadOptions::default().on_index("by_last"),
                copy_keyed_row,
            )
            .unwrap();
        rows.into_iter()
            .map(|(_, r)| r[1].as_int().unwrap())
            .collect::<Vec<_>>()
    };
    let mut old = engine.begin_with(Isolation::RepeatableRead);
    assert_eq!(by_last(&mut old, "ABLE"), vec![1, 3]);

    // Customer 1 changes name: a new entry (BAKER, 1); the old (ABLE, 1) entry stays for
    // the old reader and must not match for anyone who sees the new version.
    let mut rename = engine.begin_with(Isolation::ReadCommitted);
    rename
        .update(&t, Key::from([1, 1]), customer(1, 1, "BAKER", "10.00"))
        .unwrap();
    assert_eq!(
        by_last(&mut rename, "ABLE"),
        vec![3],
        "own change seen through the index"
    );
    rename.commit().unwrap();

    let mut new = engine.begin_with(Isolation::ReadCommitted);
    assert_eq!(by_last(&mut new, "ABLE"), vec![3]);
    assert_eq!(by_last(&mut new, "BAKER"), vec![1, 2]);
    assert_eq!(
        by_last(&mut old, "ABLE"),
        vec![1, 3],
        "the old snapshot still finds it"
    );
    assert_eq!(by_last(&mut old, "BAKER"), vec![2]);
    old.commit().unwrap();

    // With no old view left, purge drops the stale entry; answers do not change.
    assert!(engine.purge().versions >= 1);
    assert_eq!(by_last(&mut new, "ABLE"), vec![3]);
    let locked = ReadOptions {
        lock: Some(LockMode::Shared),
        ..ReadOptions::default()
    };
    let range = KeyRange::Prefix(Key::from(vec![1.into(), "BAKER".into()]));
    assert_eq!(
        new.scan_with(&t, range, locked.on_index("by_last"), copy_keyed_row)
            .unwrap()
            .len(),
        2
    );
    assert!(matches!(
        new.scan_with(
            &t,
            KeyRange::All,
            ReadOptions::default().on_index("nope"),
            copy_keyed_row
        ),
        Err(TxnError::NoSuchIndex { .. })
    ));
}

#[test]
fn prefetch_is_only_a_hint() {
    let engine = Engine::open(config()).unwrap();
    let t = customers(&engine);
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    for id in 1..=50 {
        load.insert(&t, customer(1, id, "ABLE", "10.00")).unwrap();
    }
    load.commit().unwrap();
    let mut trx = engine.begin_with(Isolation::RepeatableRead);
    // Present rows, missing rows, a key in the wrong types, a partial key, no keys at all:
    // nothing fails, nothing is read into the transaction or locked.
    trx.prefetch(&t, (1..=60).map(|id| [1, id]));
    trx.prefetch(&t, [Key::one("not an int"), Key::one(1)]);
    trx.prefetch(&t, std::iter::empty::<Key>());
    assert_eq!(
        trx.id(),
        None,
        "a prefetch does not make the transaction read-write"
    );
    let mut other = engine.begin_with(Isolation::RepeatableRead);
    other
        .update(&t, Key::from([1, 7]), customer(1, 7, "BAKER", "1.00"))
        .unwrap();
    other.commit().unwrap();
    // What the lookups then read is what they would have read without it.
    let last = trx.get_with(&t, Key::from([1, 7]), ReadOptions::default(), |row| {
        row[2].clone()
    });
    assert_eq!(last.unwrap(), Some("BAKER".into()));
    assert_eq!(trx.get(&t, Key::from([1, 55])).unwrap(), None);
    trx.commit().unwrap();
}

#[test]
fn modify_writes_once_and_get_with_reads_without_a_copy() {
    let engine = Engine::open(config()).unwrap();
    let t = customers(&engine);
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    load.insert(&t, customer(1, 1, "ABLE", "10.00")).unwrap();
    load.insert(&t, customer(1, 2, "BAKER", "20.00")).unwrap();
    load.commit().unwrap();
    let balance = |row: &[Value]| row[3].as_decimal().unwrap().to_string();

    let mut trx = engine.begin_with(Isolation::RepeatableRead);
    // f's value comes back; the row is written once, with its index entries.
    let old = trx
        .modify(&t, Key::from([1, 1]), |row| {
            let old = balance(row);
            row[2] = "CHARLIE".into();
            row[3] = Value::Decimal("11.00".parse().unwrap());
            Ok::<_, TxnError>(old)
        })
        .unwrap();
    assert_eq!(old.as_deref(), Some("10.00"));
    // No such row: nothing to change, and f does not run.
    let none = trx.modify(&t, Key::from([1, 9]), |_| -> Result<(), TxnError> {
        unreachable!("no row to change")
    });
    assert_eq!(none.unwrap(), None);
    // f fails: nothing is written, and its own error comes back.
    let failed = trx.modify(&t, Key::from([1, 2]), |row| {
        row[3] = Value::Decimal("0.00".parse().unwrap());
        Err::<(), _>(Refused("refused"))
    });
    assert!(matches!(failed, Err(Refused("refused"))));
    // The key cannot change.
    let moved = trx.modify(&t, Key::from([1, 2]), |row| {
        row[1] = 3.into();
        Ok::<_, TxnError>(())
    });
    assert!(matches!(moved, Err(TxnError::Schema(_))), "{moved:?}");
    // The changed copy is checked against the schema: a value of the wrong type is refused,
    // and one of another type the column takes is stored in the column's type.
    let mistyped = trx.modify(&t, Key::from([1, 2]), |row| {
        row[3] = "lots".into();
        Ok::<_, TxnError>(())
    });
    assert!(matches!(mistyped, Err(TxnError::Schema(_))), "{mistyped:?}");
    trx.modify(&t, Key::from([1, 2]), |row| {
        row[3] = 20.into();
        Ok::<_, TxnError>(())
    })
    .unwrap();
    assert_eq!(
        trx.get_with(&t, Key::from([1, 2]), ReadOptions::default(), balance)
            .unwrap()
            .as_deref(),
        Some("20.00")
    );
    assert_eq!(
        trx.get_with(&t, Key::from([1, 1]), ReadOptions::default(), balance)
            .unwrap()
            .as_deref(),
        Some("11.00"),
        "a transaction reads its own change"
    );
    let by_last = |trx: &mut waterline_txn::Transaction, last: &str| {
        let prefix = Key::from(vec![1.into(), last.into()]);
        let rows = trx.scan_with(
            &t,
            KeyRange::Prefix(prefix),
            ReadOptions::default().on_index("by_last"),
            copy_keyed_row,
        );
        rows.unwrap()
            .into_iter()
            .map(|(k, _)| k)
            .collect::<Vec<_>>()
    };
    assert_eq!(by_last(&mut trx, "CHARLIE"), vec![Key::from([1, 1])]);
    assert!(by_last(&mut trx, "ABLE").is_empty());
    trx.commit().unwrap();

    // A change that leaves the indexed columns alone keeps the row in the index.
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    trx.modify(&t, Key::from([1, 2]), |row| {
        row[3] = Value::Decimal("21.00".parse().unwrap());
        Ok::<_, TxnError>(())
    })
    .unwrap();
    trx.commit().unwrap();
    engine.purge();
    let mut reader = engine.begin_with(Isolation::ReadCommitted);
    assert_eq!(by_last(&mut reader, "BAKER"), vec![Key::from([1, 2])]);
    assert_eq!(
        reader
            .get_with(&t, Key::from([1, 2]), ReadOptions::default(), balance)
            .unwrap()
            .as_deref(),
        Some("21.00")
    );
    assert_eq!(
        reader
            .get_with(&t, Key::from([1, 9]), ReadOptions::default(), balance)
            .unwrap(),
        None
    );
}

/// An error of the caller's own, for `modify`.
#[derive(Debug)]
struct Refused(&'static str);

impl From<TxnError> for Refused {
    fn from(error: TxnError) -> Self {
        panic!("unexpected engine error {error}")
    }
}

#[test]
fn scans_walk_ranges_in_order_forwards_and_backwards_with_limits() {
    let engine = Engine::open(config()).unwrap();
    let t = customers(&engine);
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    for w in 1..=3 {
        for id in 1..=5 {
            trx.insert(&t, customer(w, id, "X", "0")).unwrap();
        }
    }
    let keys = |rows: Vec<(Key, Vec<Value>)>| rows.into_iter().map(|(k, _)| k).collect::<Vec<_>>();
    let w2 = KeyRange::Prefix(Key::one(2));
    let last_two = ReadOptions {
        limit: Some(2),
        reverse: true,
        ..ReadOptions::default()
    };
    assert_eq!(
        keys(
            trx.scan_with(&t, w2.clone(), last_two, copy_keyed_row)
                .unwrap()
        ),
        vec![Key::from([2, 5]), Key::from([2, 4])]
    );
    let first = ReadOptions {
        limit: Some(1),
        ..ReadOptions::default()
    };
    assert_eq!(
        keys(trx.scan_with(&t, w2, first, copy_keyed_row).unwrap()),
        vec![Key::from([2, 1])]
    );
    let between = KeyRange::Between(
        Bound::Excluded(Key::one(1)),
        Bound::Included(Key::from([3, 2])),
    );
    assert_eq!(trx.scan(&t, between).unwrap().len(), 7);
    trx.delete(&t, Key::from([2, 3])).unwrap();
    assert_eq!(
        trx.scan(&t, KeyRange::Prefix(Key::one(2))).unwrap().len(),
        4
    );
    // scan_with hands each row to the caller in place, with the same order, limit and view.
    let ids = |key: &Key, row: &[Value]| (key.values()[1].as_int(), row[1].as_int());
    assert_eq!(
        trx.scan_with(&t, KeyRange::Prefix(Key::one(2)), last_two, ids)
            .unwrap(),
        vec![(Some(5), Some(5)), (Some(4), Some(4))]
    );
    let all = trx
        .scan_with(
            &t,
            KeyRange::Prefix(Key::one(2)),
            ReadOptions::default(),
            ids,
        )
        .unwrap();
    assert_eq!(
        all.iter().map(|(k, _)| k.unwrap()).collect::<Vec<_>>(),
        [1, 2, 4, 5]
    );
    trx.commit().unwrap();
    let mut other = engine.begin_with(Isolation::RepeatableRead);
    let locked = ReadOptions {
        lock: Some(LockMode::Exclusive),
        ..ReadOptions::default()
    };
    let ids = other
        .scan_with(&t, KeyRange::Prefix(Key::one(3)), locked, |_, row| {
            row[1].as_int()
        })
        .unwrap();
    assert_eq!(ids, [Some(1), Some(2), Some(3), Some(4), Some(5)]);
}

#[test]
fn bad_input_gets_a_typed_error_and_changes_nothing() {
    let engine = Engine::open(config()).unwrap();
    let t = customers(&engine);
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    trx.insert(&t, customer(1, 1, "A", "1")).unwrap();
    let errors = [
        trx.insert(&t, vec![1.into()]).unwrap_err(),
        trx.insert(&t, customer(1, 2, "NAME-TOO-LONG-FOR-16", "1"))
            .unwrap_err(),
        trx.insert(&t, customer(1, 2, "A", "12345678901.00"))
            .unwrap_err(),
        trx.update(&t, Key::from([1, 1]), customer(1, 9, "A", "1"))
            .unwrap_err(),
        trx.get(&t, Key::from(vec!["one".into()])).unwrap_err(),
    ];
    for error in &errors {
        assert!(matches!(error, TxnError::Schema(_)), "{error}");
        assert!(!error.is_retryable());
    }
    assert_eq!(trx.scan(&t, KeyRange::All).unwrap().len(), 1);
    assert!(matches!(
        engine.table("nope"),
        Err(TxnError::NoSuchTable(_))
    ));
    let again = TableSchema::new("CUSTOMER", vec![Column::new("a", ColumnType::Int)]);
    assert!(matches!(
        engine.create_table(again),
        Err(TxnError::TableExists(_))
    ));
    let zero_shards = EngineConfig {
        trx_shards: 0,
        ..config()
    };
    assert!(matches!(
        Engine::open(zero_shards),
        Err(TxnError::Config(_))
    ));
}

#[test]
fn dropping_an_active_transaction_rolls_it_back() {
    let engine = Engine::open(config()).unwrap();
    let t = customers(&engine);
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    trx.insert(&t, customer(1, 1, "A", "1")).unwrap();
    let id = trx.id().unwrap();
    assert_eq!(engine.trx_sys().live_transactions()[0].id, id);
    drop(trx);
    assert!(engine.trx_sys().live_transactions().is_empty());
    let mut reader = engine.begin_with(Isolation::ReadCommitted);
    assert!(reader.scan(&t, KeyRange::All).unwrap().is_empty());
    // The key is free again: its lock went with the rollback.
    reader.insert(&t, customer(1, 1, "B", "2")).unwrap();
    reader.commit().unwrap();
    assert_eq!(engine.stats().get(Counter::Rollbacks), 1);
}

/// A pipeline that refuses every commit: the ticket is dropped unpublished.
#[derive(Debug)]
struct Failing;

impl CommitPipeline for Failing {
    fn commit(&self, _: TrxId, _: Redo, _: CommitTicket) -> Result<(), TxnError> {
        let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
        Err(TxnError::Commit(CommitError::Log(Arc::new(WalError::Io {
            op: "write",
            path: "wal-0.log".into(),
            source: full,
        }))))
    }
}

#[test]
fn a_failed_commit_leaves_nothing_visible_and_releases_the_locks() {
    let engine = Engine::with_pipeline(config(), Arc::new(Failing)).unwrap();
    let t = customers(&engine);
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    trx.insert(&t, customer(1, 1, "A", "1")).unwrap();
    let error = trx.commit().unwrap_err();
    assert!(error.rolled_back_transaction());
    let mut reader = engine.begin_with(Isolation::ReadCommitted);
    assert_eq!(reader.get(&t, Key::from([1, 1])).unwrap(), None);
    assert!(engine.trx_sys().live_transactions().is_empty());
    // A read-only transaction never reaches the pipeline.
    reader.commit().unwrap();
}

/// A two-member group commit: the first committer waits; the second publishes both tickets
/// as one group and wakes it. The redo each brought is kept for inspection.
#[derive(Debug, Default)]
struct PairCommit {
    state: Mutex<Pair>,
    published: Condvar,
}

#[derive(Debug, Default)]
struct Pair {
    tickets: Vec<CommitTicket>,
    redo: Vec<RedoRecord>,
    groups: u64,
}

impl CommitPipeline for PairCommit {
    fn commit(&self, _: TrxId, redo: Redo, ticket: CommitTicket) -> Result<(), TxnError> {
        let mut state = self.state.lock().unwrap();
        state.redo.extend(redo.records()?);
        state.tickets.push(ticket);
        if state.tickets.len() == 2 {
            let group = std::mem::take(&mut state.tickets);
            CommitTicket::publish_group(group)?;
            state.groups += 1;
            self.published.notify_all();
            return Ok(());
        }
        let group = state.groups;
        let _published = self
            .published
            .wait_while(state, |s| s.groups == group)
            .unwrap();
        Ok(())
    }
}

#[test]
fn a_group_is_published_at_once_and_redo_describes_the_changes() {
    for kind in SnapshotKind::ALL {
        let pipeline = Arc::new(PairCommit::default());
        let config = EngineConfig {
            snapshot: kind,
            ..config()
        };
        let engine = Engine::with_pipeline(config, Arc::clone(&pipeline) as _).unwrap();
        let t = customers(&engine);
        std::thread::scope(|s| {
            let follower = s.spawn(|| {
                let mut first = engine.begin_with(Isolation::ReadCommitted);
                first.insert(&t, customer(1, 1, "A", "1")).unwrap();
                first.commit().unwrap();
            });
            // Wait until the follower's ticket is parked in the pipeline.
            while pipeline.state.lock().unwrap().tickets.is_empty() {
                std::thread::yield_now();
            }
            let mut reader = engine.begin_with(Isolation::ReadCommitted);
            assert_eq!(
                reader.get(&t, Key::from([1, 1])).unwrap(),
                None,
                "{kind}: not published"
            );
            let mut second = engine.begin_with(Isolation::ReadCommitted);
            second.insert(&t, customer(1, 2, "B", "2")).unwrap();
            second.commit().unwrap(); // publishes both
            follower.join().unwrap();
            assert_eq!(reader.scan(&t, KeyRange::All).unwrap().len(), 2, "{kind}");
        });
        let state = pipeline.state.lock().unwrap();
        assert_eq!(state.groups, 1);
        let keys: Vec<&Key> = state.redo.iter().map(|r| &r.key).collect();
        assert_eq!(keys, [&Key::from([1, 1]), &Key::from([1, 2])]);
        assert!(
            state
                .redo
                .iter()
                .all(|r| r.table == t.id() && r.after.is_some())
        );
    }
}

#[test]
fn purge_visits_what_commits_and_rollbacks_left_behind() {
    let engine = Engine::open(config()).unwrap();
    let t = customers(&engine);
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    load.insert(&t, customer(1, 1, "A", "1")).unwrap();
    load.insert(&t, customer(1, 2, "B", "2")).unwrap();
    load.commit().unwrap();

    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    // A failed statement empties the record of (1, 3) it had inserted.
    let failed = trx.statement(|trx| {
        trx.insert(&t, customer(1, 3, "C", "3"))?;
        trx.insert(&t, customer(1, 1, "dup", "0"))
    });
    assert!(matches!(failed, Err(TxnError::DuplicateKey { .. })));
    trx.update(&t, Key::from([1, 2]), customer(1, 2, "B", "20"))
        .unwrap();
    trx.delete(&t, Key::from([1, 1])).unwrap();
    trx.commit().unwrap();
    let mut undone = engine.begin_with(Isolation::ReadCommitted);
    undone.insert(&t, customer(1, 4, "D", "4")).unwrap();
    undone.rollback();

    assert_eq!(
        t.approximate_rows(),
        4,
        "(1,1) delete-marked, (1,3) and (1,4) empty"
    );
    // The failed statement, the update and delete, the rollback; not the load, whose
    // new rows have no older version to cut.
    assert_eq!(engine.history_len(), 3);
    let report = engine.purge();
    assert_eq!(engine.history_len(), 0);
    // (1,2): its old version; (1,1): the delete mark and the version below it.
    assert_eq!(report.versions, 3);
    assert_eq!(t.approximate_rows(), 1);
    let mut reader = engine.begin_with(Isolation::ReadCommitted);
    assert_eq!(reader.scan(&t, KeyRange::All).unwrap().len(), 1);
}

/// Commits `n` updates of customer (1, 1), each its own transaction.
fn update_balance(engine: &Engine, t: &Table, n: usize) {
    for i in 0..n {
        let mut trx = engine.begin_with(Isolation::ReadCommitted);
        let balance = (i % 100).to_string();
        trx.update(t, Key::from([1, 1]), customer(1, 1, "A", &balance))
            .unwrap();
        trx.commit().unwrap();
    }
}

#[test]
fn committing_threads_purge_but_never_what_an_open_view_reads() {
    // A purge thread that never comes round: whatever is purged, the commits purged.
    let slow_thread = |commit_purge| EngineConfig {
        purge_interval: Some(Duration::from_secs(3600)),
        commit_purge,
        ..config()
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let engine = Engine::open(slow_thread(true)).unwrap();
    let t = customers(&engine);
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    load.insert(&t, customer(1, 1, "A", "7")).unwrap();
    load.insert(&t, customer(1, 2, "B", "0")).unwrap();
    load.commit().unwrap();
    let first = || customer(1, 1, "A", "7");
    // Transactions reading another row, one for every CPU but the committing thread's, as
    // at TPC-C with as many clients as CPUs: commits help purge only then.
    let readers = |engine: &Engine| -> Vec<_> {
        (1..cpus)
            .map(|_| {
                let mut reader = engine.begin_with(Isolation::RepeatableRead);
                reader.get(&t, [1, 2]).unwrap();
                reader
            })
            .collect()
    };

    // An old snapshot pins the first version: 96 commits (12 purge steps) cut nothing.
    let mut old = engine.begin_with(Isolation::RepeatableRead);
    assert_eq!(old.get(&t, [1, 1]).unwrap(), Some(first()));
    let mut busy = readers(&engine);
    update_balance(&engine, &t, 96);
    assert_eq!(engine.stats().get(Counter::CommitPurges), 12);
    assert_eq!(engine.stats().get(Counter::VersionsPurged), 0);
    assert_eq!(engine.history_len(), 96);
    assert_eq!(old.get(&t, [1, 1]).unwrap(), Some(first()));
    old.commit().unwrap();

    // With the snapshots gone and fresh readers (which need none of the 96), a step every
    // 8 commits visits up to 16 entries, 8 more than came in: 12 steps take the 96 and no
    // more, since the readers need the 96 new commits' versions.
    for reader in busy.drain(..) {
        reader.commit().unwrap();
    }
    busy = readers(&engine);
    update_balance(&engine, &t, 96);
    assert_eq!(engine.history_len(), 96);
    assert!(engine.stats().get(Counter::VersionsPurged) >= 96);
    assert_eq!(
        engine.stats().get(Counter::PurgeRuns),
        0,
        "the thread never ran"
    );
    for reader in busy {
        reader.commit().unwrap();
    }

    // With no other transaction running and a CPU to spare (if the machine has one), the
    // commits leave purge to the thread.
    let purged = engine.stats().get(Counter::VersionsPurged);
    update_balance(&engine, &t, 16);
    if cpus > 1 {
        assert_eq!(engine.stats().get(Counter::VersionsPurged), purged);
        assert_eq!(engine.history_len(), 112);
    }

    // Without the commits' help, the list only grows until the thread comes round.
    let engine = Engine::open(slow_thread(false)).unwrap();
    let t = customers(&engine);
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    load.insert(&t, customer(1, 1, "A", "7")).unwrap();
    load.commit().unwrap();
    let _busy = readers(&engine);
    update_balance(&engine, &t, 64);
    assert_eq!(engine.history_len(), 64);
    assert_eq!(engine.stats().get(Counter::CommitPurges), 0);
}

#[test]
fn a_transaction_can_move_to_another_thread_and_commit_there() {
    let engine = Engine::open(config()).unwrap();
    let t = customers(&engine);
    let mut trx = engine.begin_with(Isolation::RepeatableRead);
    trx.insert(&t, customer(1, 1, "A", "1")).unwrap();
    let table = t.clone();
    std::thread::spawn(move || {
        trx.insert(&table, customer(1, 2, "B", "2")).unwrap();
        trx.commit().unwrap();
    })
    .join()
    .unwrap();
    let mut reader = engine.begin_with(Isolation::ReadCommitted);
    assert_eq!(reader.scan(&t, KeyRange::All).unwrap().len(), 2);
}

#[test]
fn planner_estimates_are_exact_for_small_ranges_and_close_for_large_ones() {
    let engine = Engine::open(config()).unwrap();
    let table = customers(&engine);
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    for w in 1..=4 {
        for id in 1..=3000 {
            let last = format!("name{}", id % 1000);
            trx.insert(&table, customer(w, id, &last, "0.00")).unwrap();
        }
    }
    trx.commit().unwrap();
    let between = |lo: [i64; 2], hi: [i64; 2]| {
        KeyRange::Between(
            Bound::Included(Key::from(lo)),
            Bound::Excluded(Key::from(hi)),
        )
    };
    // Small: counted.
    assert_eq!(table.estimate_range(None, &between([2, 10], [2, 20])), 10);
    let one_name = KeyRange::Prefix(Key::from([Value::Int(3), Value::from("name7")]));
    assert_eq!(table.estimate_range(Some(0), &one_name), 3);
    // Large: from the histogram, within two of its buckets (12,000 / 1,024 entries each).
    let warehouse = table.estimate_range(None, &KeyRange::Prefix(Key::from([2])));
    assert!(warehouse.abs_diff(3000) <= 24, "{warehouse}");
    let two = table.estimate_range(None, &between([1, 1500], [3, 1500]));
    assert!(two.abs_diff(6000) <= 24, "{two}");
    let stats = table.index_stats(Some(0));
    assert_eq!(stats.entries, 12_000);
    assert_eq!(stats.rows_per_prefix(1), 3000.0);
    assert_eq!(stats.rows_per_prefix(2), 3.0);
    // The statistics stay until a tenth of the index changed.
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    for id in 3001..=4000 {
        trx.insert(&table, customer(4, id, "late", "0.00")).unwrap();
    }
    trx.commit().unwrap();
    assert_eq!(table.index_stats(Some(0)).entries, 12_000, "8% changed");
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    for id in 4001..=4300 {
        trx.insert(&table, customer(4, id, "later", "0.00"))
            .unwrap();
    }
    trx.commit().unwrap();
    assert_eq!(table.index_stats(Some(0)).entries, 13_300, "11% changed");
}

/// Queue consumers with `FOR UPDATE SKIP LOCKED`: each takes the oldest entry nobody else
/// holds, deletes it and commits, and every seventh claim is rolled back instead, so that
/// entry returns to the queue for someone to take again. Every entry is taken exactly once,
/// and nobody waits for anybody.
#[test]
fn skip_locked_consumers_take_every_entry_once() {
    const ENTRIES: i64 = 2_000;
    let engine = Arc::new(
        Engine::open(EngineConfig {
            lock_wait_timeout: Duration::from_secs(30),
            ..EngineConfig::default()
        })
        .unwrap(),
    );
    let queue = engine
        .create_table(
            TableSchema::new("queue", vec![Column::new("id", ColumnType::Int)])
                .primary_key(&["id"])
                .unwrap(),
        )
        .unwrap();
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    for id in 0..ENTRIES {
        trx.insert(&queue, vec![id.into()]).unwrap();
    }
    trx.commit().unwrap();
    let claim = ReadOptions {
        limit: Some(1),
        lock: Some(LockMode::Exclusive),
        wait: LockWait::SkipLocked,
        ..ReadOptions::default()
    };
    let consumers: Vec<_> = (0..4)
        .map(|_| {
            let (engine, queue) = (Arc::clone(&engine), queue.clone());
            std::thread::spawn(move || {
                let mut taken = Vec::new();
                for claims in 1.. {
                    let mut trx = engine.begin_with(Isolation::ReadCommitted);
                    let Some((key, row)) = trx
                        .scan_with(&queue, KeyRange::All, claim, copy_keyed_row)
                        .unwrap()
                        .pop()
                    else {
                        // Nothing unclaimed: done once the queue is empty, not merely held.
                        let left = trx.scan(&queue, KeyRange::All).unwrap().len();
                        trx.commit().unwrap();
                        if left == 0 {
                            return taken;
                        }
                        std::thread::yield_now();
                        continue;
                    };
                    assert!(trx.delete(&queue, key).unwrap());
                    if claims % 7 == 0 {
                        trx.rollback();
                    } else {
                        trx.commit().unwrap();
                        taken.push(row[0].as_int().unwrap());
                    }
                }
                unreachable!("the loop returns")
            })
        })
        .collect();
    let mut taken: Vec<i64> = consumers
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    taken.sort_unstable();
    assert_eq!(taken, (0..ENTRIES).collect::<Vec<_>>());
    let stats = engine.stats();
    assert_eq!(stats.get(Counter::LockWaits), 0, "nobody waited");
    assert_eq!(stats.get(Counter::LockWaitTimeouts), 0);
}

/// A row-lock wait ends soon after its interrupt flag is set (`KILL QUERY`), with
/// `Interrupted` rather than a timeout; only the statement is undone, the transaction goes
/// on, and a later lock request fails at once while the flag stays set.
#[test]
fn an_interrupt_ends_a_lock_wait_and_leaves_the_transaction() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use waterline_txn::Interruption;
    let engine = Engine::open(EngineConfig {
        lock_wait_timeout: Duration::from_secs(60),
        ..config()
    })
    .unwrap();
    let t = engine
        .create_table(
            TableSchema::new("t", vec![Column::new("id", ColumnType::Int)])
                .primary_key(&["id"])
                .unwrap(),
        )
        .unwrap();
    let mut setup = engine.begin_with(Isolation::RepeatableRead);
    setup.insert(&t, vec![1.into()]).unwrap();
    setup.insert(&t, vec![2.into()]).unwrap();
    setup.commit().unwrap();
    let mut holder = engine.begin_with(Isolation::RepeatableRead);
    holder
        .get_with(&t, Key::one(1), ReadOptions::FOR_UPDATE, copy_row)
        .unwrap();

    let flag = Arc::new(AtomicBool::new(false));
    let mut waiter = engine.begin_with(Isolation::RepeatableRead);
    waiter.set_interrupt(Arc::clone(&flag));
    waiter
        .get_with(&t, Key::one(2), ReadOptions::FOR_UPDATE, copy_row)
        .unwrap();
    let killer = {
        let flag = Arc::clone(&flag);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            flag.store(true, Ordering::Release);
        })
    };
    let started = std::time::Instant::now();
    let waited = waiter.get_with(&t, Key::one(1), ReadOptions::FOR_UPDATE, copy_row);
    killer.join().unwrap();
    assert_eq!(waited, Err(TxnError::Interrupted(Interruption::Query)));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(waiter.is_active(), "only the statement ends");
    assert_eq!(
        waiter.get_with(&t, Key::one(1), ReadOptions::FOR_UPDATE, copy_row),
        Err(TxnError::Interrupted(Interruption::Query)),
        "the flag stays set until its owner clears it"
    );
    flag.store(false, Ordering::Release);
    holder.commit().unwrap();
    assert!(
        waiter
            .get_with(&t, Key::one(1), ReadOptions::FOR_UPDATE, copy_row)
            .unwrap()
            .is_some()
    );
    waiter.commit().unwrap();
}
