//! Gap and next-key locks beyond the scenario scripts: what purge leaves in the index for
//! them, descending walks, an inserter's own lock after it split a gap, and phantoms under
//! concurrency (locking walks that repeat while inserters and deleters run); and READ
//! COMMITTED's release of the rows a statement locked but did not select.

use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use waterline_txn::{
    Column, ColumnType, Engine, EngineConfig, Isolation, Key, KeyRange, LockMode, ReadOptions, Rng,
    Table, TableSchema, Transaction, TxnError, Value, copy_keyed_row, copy_row,
};

fn engine(timeout: Duration) -> (Engine, Table) {
    engine_with(EngineConfig {
        purge_interval: None,
        lock_wait_timeout: timeout,
        ..EngineConfig::default()
    })
}

/// An engine of `config` with table `t(id, v)`.
fn engine_with(config: EngineConfig) -> (Engine, Table) {
    let engine = Engine::open(config).unwrap();
    let schema = TableSchema::new(
        "t",
        vec![
            Column::new("id", ColumnType::BigInt),
            Column::new("v", ColumnType::BigInt),
        ],
    )
    .primary_key(&["id"])
    .unwrap();
    let table = engine.create_table(schema).unwrap();
    (engine, table)
}

/// `s(id, grp)` with a non-unique index on `grp`.
fn grouped(engine: &Engine) -> Table {
    let schema = TableSchema::new(
        "s",
        vec![
            Column::new("id", ColumnType::BigInt),
            Column::new("grp", ColumnType::BigInt),
        ],
    )
    .primary_key(&["id"])
    .unwrap()
    .index("by_grp", &["grp"], false)
    .unwrap();
    engine.create_table(schema).unwrap()
}

fn row(id: i64) -> Vec<Value> {
    vec![id.into(), 0.into()]
}

fn load(engine: &Engine, t: &Table, ids: &[i64]) {
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    for &id in ids {
        trx.insert(t, row(id)).unwrap();
    }
    trx.commit().unwrap();
}

fn between(lo: i64, hi: i64) -> KeyRange {
    KeyRange::Between(Bound::Included(Key::one(lo)), Bound::Included(Key::one(hi)))
}

fn for_update(reverse: bool) -> ReadOptions<'static> {
    ReadOptions {
        lock: Some(LockMode::Exclusive),
        reverse,
        ..ReadOptions::default()
    }
}

fn ids(rows: Vec<(Key, Vec<Value>)>) -> Vec<i64> {
    rows.into_iter()
        .map(|(_, r)| r[0].as_int().unwrap())
        .collect()
}

/// Whether inserting `id` in a transaction of its own times out now.
fn insert_waits(engine: &Engine, t: &Table, id: i64) -> bool {
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    match trx.insert(t, row(id)) {
        Ok(_) => {
            trx.rollback();
            false
        }
        Err(TxnError::LockWaitTimeout { .. }) => true,
        Err(other) => panic!("insert {id}: {other}"),
    }
}

#[test]
fn a_gap_lock_keeps_a_dead_entry_in_the_index_until_it_is_released() {
    let (engine, t) = engine(Duration::ZERO);
    load(&engine, &t, &[10, 20, 30]);
    let mut delete = engine.begin_with(Isolation::ReadCommitted);
    assert!(delete.delete(&t, Key::one(20)).unwrap());
    delete.commit().unwrap();
    let mut reader = engine.begin_with(Isolation::RepeatableRead);
    let rows = reader.scan_with(&t, between(15, 25), for_update(false), copy_keyed_row);
    assert!(rows.unwrap().is_empty());
    engine.purge();
    assert_eq!(t.approximate_rows(), 3, "the locked entry 20 stays");
    assert!(
        insert_waits(&engine, &t, 18),
        "the gap below 20 is still locked"
    );
    assert!(insert_waits(&engine, &t, 25), "the gap below 30 too");
    assert!(!insert_waits(&engine, &t, 35));
    reader.commit().unwrap();
    engine.purge();
    assert_eq!(
        t.approximate_rows(),
        2,
        "purge removed it once the lock was gone"
    );
    assert!(!insert_waits(&engine, &t, 18));
}

#[test]
fn an_insert_takes_back_a_dead_entry_a_gap_lock_kept() {
    let (engine, t) = engine(Duration::ZERO);
    load(&engine, &t, &[10, 20, 30]);
    let mut delete = engine.begin_with(Isolation::ReadCommitted);
    assert!(delete.delete(&t, Key::one(20)).unwrap());
    delete.commit().unwrap();
    // A lock on the gap below 30 only: an insert of 20 itself need not wait.
    let mut reader = engine.begin_with(Isolation::RepeatableRead);
    assert!(
        reader
            .get_with(&t, Key::one(25), ReadOptions::FOR_UPDATE, copy_row)
            .unwrap()
            .is_none()
    );
    let mut holder = engine.begin_with(Isolation::RepeatableRead);
    let rows = holder.scan_with(&t, between(15, 19), for_update(false), copy_keyed_row);
    assert!(rows.unwrap().is_empty(), "locks the gap below 20");
    engine.purge();
    assert_eq!(t.approximate_rows(), 3);
    let mut insert = engine.begin_with(Isolation::ReadCommitted);
    insert.insert(&t, vec![20.into(), 7.into()]).unwrap();
    insert.commit().unwrap();
    engine.purge();
    holder.commit().unwrap();
    reader.commit().unwrap();
    engine.purge();
    let mut check = engine.begin_with(Isolation::ReadCommitted);
    assert_eq!(
        check.get(&t, Key::one(20)).unwrap(),
        Some(vec![20.into(), 7.into()]),
        "the row taken back is in the index and survives purge"
    );
    assert_eq!(t.approximate_rows(), 3);
}

#[test]
fn a_descending_walk_locks_the_gap_above_its_range() {
    let (engine, t) = engine(Duration::ZERO);
    load(&engine, &t, &[10, 20, 30]);
    let mut reader = engine.begin_with(Isolation::RepeatableRead);
    let rows = reader.scan_with(&t, between(12, 22), for_update(true), copy_keyed_row);
    assert_eq!(ids(rows.unwrap()), [20]);
    assert!(insert_waits(&engine, &t, 25), "above 20, below 30: locked");
    assert!(insert_waits(&engine, &t, 15), "below 20: locked");
    assert!(!insert_waits(&engine, &t, 5), "below 10: free");
    assert!(!insert_waits(&engine, &t, 35));
    reader.commit().unwrap();
}

#[test]
fn an_inserter_keeps_its_gap_lock_on_both_sides_of_its_new_row() {
    let (engine, t) = engine(Duration::ZERO);
    load(&engine, &t, &[10, 20]);
    let mut trx = engine.begin_with(Isolation::RepeatableRead);
    assert!(
        trx.get_with(&t, Key::one(15), ReadOptions::FOR_UPDATE, copy_row)
            .unwrap()
            .is_none()
    );
    trx.insert(&t, row(15)).unwrap();
    assert!(insert_waits(&engine, &t, 12), "below the new row");
    assert!(insert_waits(&engine, &t, 17), "above it");
    trx.commit().unwrap();
    assert!(!insert_waits(&engine, &t, 12));
}

/// Whether writing `row` to `t` (an insert, or an update if its key exists) times out now.
fn write_waits(engine: &Engine, t: &Table, row: Vec<Value>) -> bool {
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    let key = Key::one(row[0].clone());
    let result = match trx.update(t, key, row.clone()) {
        Ok(true) => Ok(()),
        Ok(false) => trx.insert(t, row).map(|_| ()),
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => {
            trx.rollback();
            false
        }
        Err(TxnError::LockWaitTimeout { .. }) => true,
        Err(other) => panic!("{other}"),
    }
}

#[test]
fn a_walk_through_a_secondary_index_locks_its_gaps() {
    let (engine, _) = engine(Duration::ZERO);
    let s = grouped(&engine);
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    for (id, grp) in [(1, 10), (2, 20), (3, 20), (4, 30), (5, 40)] {
        load.insert(&s, vec![id.into(), grp.into()]).unwrap();
    }
    load.commit().unwrap();
    for reverse in [false, true] {
        let mut reader = engine.begin_with(Isolation::RepeatableRead);
        let options = for_update(reverse);
        let rows = reader.scan_with(
            &s,
            KeyRange::Prefix(Key::one(20)),
            options.on_index("by_grp"),
            copy_keyed_row,
        );
        let mut found = ids(rows.unwrap());
        found.sort();
        assert_eq!(found, [2, 3]);
        let new = |id: i64, grp: i64| vec![Value::from(id), Value::from(grp)];
        assert!(
            write_waits(&engine, &s, new(9, 20)),
            "a new row in the group"
        );
        assert!(
            write_waits(&engine, &s, new(9, 15)),
            "in the gap below the group"
        );
        assert!(write_waits(&engine, &s, new(9, 25)), "in the gap above it");
        assert!(
            write_waits(&engine, &s, new(5, 20)),
            "row 5 moving into the group"
        );
        assert!(
            !write_waits(&engine, &s, new(9, 35)),
            "above the next entry"
        );
        assert!(
            !write_waits(&engine, &s, new(9, 5)),
            "below the entry below"
        );
        reader.commit().unwrap();
    }
    assert!(!write_waits(&engine, &s, vec![9.into(), 20.into()]));
}

/// A write whose entry in one index went in before its entry in another found a locked gap,
/// and which then gave up, leaves the first entry to purge.
#[test]
fn an_entry_of_a_write_that_gave_up_goes_to_purge() {
    let (engine, _) = engine(Duration::ZERO);
    let schema = TableSchema::new(
        "w",
        vec![
            Column::new("id", ColumnType::BigInt),
            Column::new("a", ColumnType::BigInt),
            Column::new("b", ColumnType::BigInt),
        ],
    )
    .primary_key(&["id"])
    .unwrap()
    .index("by_a", &["a"], false)
    .unwrap()
    .index("by_b", &["b"], false)
    .unwrap();
    let w = engine.create_table(schema).unwrap();
    let row = |id: i64, a: i64, b: i64| vec![Value::from(id), Value::from(a), Value::from(b)];
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    load.insert(&w, row(1, 10, 100)).unwrap();
    load.insert(&w, row(2, 20, 200)).unwrap();
    load.commit().unwrap();
    let mut reader = engine.begin_with(Isolation::RepeatableRead);
    let range = KeyRange::Prefix(Key::one(200));
    let rows = reader.scan_with(
        &w,
        range,
        for_update(false).on_index("by_b"),
        copy_keyed_row,
    );
    assert_eq!(ids(rows.unwrap()), [2]);
    // by_a's entry (30, 3) goes in; by_b's (200, 3) finds the gap above 200 locked.
    assert!(write_waits(&engine, &w, row(3, 30, 200)));
    assert_eq!(w.records_in_range(Some(0), &KeyRange::All, 10), 3);
    reader.commit().unwrap();
    engine.purge();
    assert_eq!(
        w.records_in_range(Some(0), &KeyRange::All, 10),
        2,
        "purge took it out"
    );
}

#[test]
fn with_gap_locks_off_repeatable_read_locks_records_only() {
    let (engine, t) = engine_with(EngineConfig {
        purge_interval: None,
        lock_wait_timeout: Duration::ZERO,
        gap_locks: false,
        ..EngineConfig::default()
    });
    load(&engine, &t, &[10, 20, 30]);
    let mut reader = engine.begin_with(Isolation::RepeatableRead);
    let rows = reader.scan_with(&t, between(10, 20), for_update(false), copy_keyed_row);
    assert_eq!(ids(rows.unwrap()), [10, 20]);
    assert!(
        !insert_waits(&engine, &t, 15),
        "the phantom of the baseline"
    );
    let mut writer = engine.begin_with(Isolation::ReadCommitted);
    assert!(
        writer.update(&t, Key::one(20), row(20)).is_err(),
        "the row is locked"
    );
    writer.rollback();
    reader.commit().unwrap();
}

/// A locking read of every column of a unique index, equal to a value: a live row is locked
/// alone (InnoDB's REC_NOT_GAP), a missing one locks the gap it would go in.
#[test]
fn a_unique_search_locks_a_live_row_alone() {
    let (engine, _) = engine(Duration::ZERO);
    let schema = TableSchema::new(
        "u",
        vec![
            Column::new("id", ColumnType::BigInt),
            Column::new("code", ColumnType::BigInt),
        ],
    )
    .primary_key(&["id"])
    .unwrap()
    .index("by_code", &["code"], true)
    .unwrap();
    let u = engine.create_table(schema).unwrap();
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    for (id, code) in [(10, 100), (20, 200), (30, 300)] {
        load.insert(&u, vec![id.into(), code.into()]).unwrap();
    }
    load.commit().unwrap();
    let new = |id: i64, code: i64| vec![Value::from(id), Value::from(code)];
    let mut reader = engine.begin_with(Isolation::RepeatableRead);
    let by_code = |trx: &mut Transaction, code: i64| {
        let range = KeyRange::Prefix(Key::one(code));
        ids(trx
            .scan_with(
                &u,
                range,
                for_update(false).on_index("by_code"),
                copy_keyed_row,
            )
            .unwrap())
    };
    assert_eq!(by_code(&mut reader, 200), [20]);
    let by_id = reader.scan_with(
        &u,
        KeyRange::Prefix(Key::one(30)),
        for_update(false),
        copy_keyed_row,
    );
    assert_eq!(ids(by_id.unwrap()), [30]);
    assert!(
        !write_waits(&engine, &u, new(15, 150)),
        "no gap below 200 or 20"
    );
    assert!(
        !write_waits(&engine, &u, new(25, 250)),
        "no gap below 300 or 30"
    );
    assert!(
        write_waits(&engine, &u, new(20, 201)),
        "row 20 itself is locked"
    );
    assert!(by_code(&mut reader, 260).is_empty());
    assert!(
        write_waits(&engine, &u, new(26, 270)),
        "260's gap, below 300"
    );
    reader.commit().unwrap();
}

#[test]
fn read_committed_takes_no_gap_locks() {
    let (engine, t) = engine(Duration::ZERO);
    load(&engine, &t, &[10, 20, 30]);
    let mut reader = engine.begin_with(Isolation::ReadCommitted);
    let rows = reader.scan_with(&t, between(10, 20), for_update(false), copy_keyed_row);
    assert_eq!(ids(rows.unwrap()), [10, 20]);
    assert!(
        reader
            .get_with(&t, Key::one(25), ReadOptions::FOR_UPDATE, copy_row)
            .unwrap()
            .is_none()
    );
    assert!(!insert_waits(&engine, &t, 15));
    assert!(!insert_waits(&engine, &t, 26));
    reader.commit().unwrap();
}

/// Readers repeat a locking walk of a range inside one transaction, through the primary key
/// or a secondary index, and must get the same rows both times, while writers insert rows,
/// move them between groups and delete them, and purge runs: the walk's locks, not its
/// luck, keep the range still.
#[test]
fn a_repeated_locking_walk_sees_no_phantom_under_concurrency() {
    let (engine, _) = engine(Duration::from_secs(5));
    let s = grouped(&engine);
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    for id in (0..200).step_by(4) {
        load.insert(&s, vec![id.into(), (id % 50).into()]).unwrap();
    }
    load.commit().unwrap();
    let stop = AtomicBool::new(false);
    let walks = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for reader in 0..2u64 {
            let (engine, s, stop, walks) = (&engine, &s, &stop, &walks);
            scope.spawn(move || {
                let mut rng = Rng::new(0x6A95, reader);
                while !stop.load(Ordering::Relaxed) {
                    let (by_grp, reverse) = (rng.percent(50), rng.percent(50));
                    let lo = rng.uniform(0, if by_grp { 44 } else { 179 });
                    let hi = lo + if by_grp { 5 } else { 20 };
                    let mut trx = engine.begin_with(Isolation::RepeatableRead);
                    let walk = |trx: &mut Transaction| {
                        let rows = if by_grp {
                            trx.scan_with(
                                s,
                                between(lo, hi),
                                for_update(reverse).on_index("by_grp"),
                                copy_keyed_row,
                            )
                        } else {
                            trx.scan_with(s, between(lo, hi), for_update(reverse), copy_keyed_row)
                        };
                        rows.map(|rows| {
                            let mut rows: Vec<Vec<Value>> =
                                rows.into_iter().map(|(_, r)| r).collect();
                            rows.sort_by_key(|r| r[0].as_int());
                            rows
                        })
                    };
                    let Ok(first) = walk(&mut trx) else { continue };
                    std::thread::yield_now();
                    let again = walk(&mut trx).expect("every lock is held already");
                    let what = if by_grp { "groups" } else { "ids" };
                    assert_eq!(first, again, "a phantom in {what} [{lo}, {hi}]");
                    trx.commit().unwrap();
                    walks.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        for writer in 0..2u64 {
            let (engine, s, stop) = (&engine, &s, &stop);
            scope.spawn(move || {
                let mut rng = Rng::new(0x6A95, 99 + writer);
                while !stop.load(Ordering::Relaxed) {
                    let id = rng.uniform(0, 199);
                    let grp = rng.uniform(0, 49);
                    let mut trx: Transaction = engine.begin_with(Isolation::ReadCommitted);
                    let done = match rng.below(3) {
                        0 => trx.insert(s, vec![id.into(), grp.into()]).map(|_| ()),
                        1 => trx
                            .update(s, Key::one(id), vec![id.into(), grp.into()])
                            .map(|_| ()),
                        _ => trx.delete(s, Key::one(id)).map(|_| ()),
                    };
                    match done {
                        Ok(()) => trx.commit().unwrap(),
                        Err(_) => trx.rollback(),
                    }
                    if rng.below(16) == 0 {
                        engine.purge();
                    }
                }
            });
        }
        std::thread::sleep(Duration::from_secs(4));
        stop.store(true, Ordering::Relaxed);
    });
    assert!(
        walks.load(Ordering::Relaxed) > 10,
        "the readers got to walk"
    );
}

#[test]
fn read_committed_gives_back_the_rows_a_statement_locked_but_did_not_select() {
    let (engine, t) = engine(Duration::ZERO);
    load(&engine, &t, &[1, 2, 3, 4]);
    for (isolation, released) in [
        (Isolation::ReadCommitted, true),
        (Isolation::RepeatableRead, false),
    ] {
        let mut trx = engine.begin_with(isolation);
        // Held before the statement: stays, selected or not.
        trx.get_with(&t, Key::one(1), ReadOptions::FOR_UPDATE, copy_row)
            .unwrap();
        let mark = trx.lock_mark();
        let read = trx.scan_with(&t, KeyRange::All, for_update(false), copy_keyed_row);
        assert_eq!(ids(read.unwrap()), [1, 2, 3, 4]);
        // The statement selected row 3.
        let gone = trx.unlock_rows_since(mark, &t, |key| *key == Key::one(3));
        assert_eq!(gone, if released { 2 } else { 0 }, "{isolation:?}");
        for (id, free) in [(1, false), (2, released), (3, false), (4, released)] {
            let mut other = engine.begin_with(Isolation::ReadCommitted);
            let got = other.get_with(&t, Key::one(id), ReadOptions::FOR_UPDATE, copy_row);
            assert_eq!(got.is_ok(), free, "{isolation:?}: row {id}");
            other.rollback();
        }
        trx.rollback();
    }
}
