//! Random interleavings of a few transactions, executed step by step on one thread, checked
//! against a reference model of READ COMMITTED and REPEATABLE READ, for every snapshot kind,
//! both view-close modes, and inserts locking implicitly or in the lock table.
//!
//! The model: the committed state is a map; a READ COMMITTED read sees the committed state at
//! the time of the read, a REPEATABLE READ read sees it as of the transaction's first
//! consistent read; both see their own writes over it. Writes and locking reads take
//! exclusive locks held to the end; with `lock_wait_timeout = 0` a conflicting request fails
//! at once with a lock wait timeout, and only that statement is undone (its locks stay).
//!
//! Locks are InnoDB's: under READ COMMITTED, record locks on the keys read or written; under
//! REPEATABLE READ, a point read or write locks the record alone if its row exists, the
//! record and the gap below it if its entry is a deleted row, and only the gap it would go
//! in if there is no entry; a locking range walk takes a next-key lock (gap, then record) on
//! each entry and a gap lock past the range. An insert of a new entry waits for nobody but
//! the holders of a lock on its gap, and one that holds such a lock itself extends it below
//! the new entry. Gaps are named by the entry above them, so the model keeps the index's
//! entries: a key gets one when first inserted and loses it when purge finds its row deleted
//! (purge runs only while no model transaction is open, so no lock keeps an entry).
//!
//! "Churn" runs many short transactions on other keys (above the model's), so ids outgrow
//! the (shrunk) bitmap windows and CSN ring while the model's transactions stay open.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::time::Duration;

use proptest::prelude::*;
use waterline_txn::{
    Column, ColumnType, Engine, EngineConfig, Isolation, Key, KeyRange, LockMode, ReadOptions,
    SnapshotKind, Table, TableSchema, Transaction, TxnError, Value, ViewClose, copy_keyed_row,
    copy_row,
};

const TRXS: usize = 3;
const KEYS: i64 = 4;
const CHURN_KEY: i64 = 100;

#[derive(Clone, Debug)]
enum Op {
    Begin(usize, bool),
    Read(usize, i64),
    ReadForUpdate(usize, i64),
    Scan(usize),
    ScanForUpdate(usize),
    Write(usize, i64, i64),
    Delete(usize, i64),
    Commit(usize),
    Rollback(usize),
    Churn(u8),
    Purge,
}

fn op() -> impl Strategy<Value = Op> {
    let t = 0..TRXS;
    let k = 0..KEYS;
    prop_oneof![
        2 => (t.clone(), any::<bool>()).prop_map(|(t, rr)| Op::Begin(t, rr)),
        3 => (t.clone(), k.clone()).prop_map(|(t, k)| Op::Read(t, k)),
        1 => (t.clone(), k.clone()).prop_map(|(t, k)| Op::ReadForUpdate(t, k)),
        1 => t.clone().prop_map(Op::Scan),
        1 => t.clone().prop_map(Op::ScanForUpdate),
        3 => (t.clone(), k.clone(), 0..100i64).prop_map(|(t, k, v)| Op::Write(t, k, v)),
        1 => (t.clone(), k).prop_map(|(t, k)| Op::Delete(t, k)),
        2 => t.clone().prop_map(Op::Commit),
        1 => t.prop_map(Op::Rollback),
        1 => (1..80u8).prop_map(Op::Churn),
        1 => Just(Op::Purge),
    ]
}

/// One model transaction.
#[derive(Default)]
struct ModelTrx {
    rr: bool,
    snapshot: Option<BTreeMap<i64, i64>>,
    writes: BTreeMap<i64, Option<i64>>,
    /// Record locks.
    locks: BTreeSet<i64>,
    /// Gap locks, each named by the entry above its gap (`None`: the supremum).
    gaps: BTreeSet<Option<i64>>,
}

struct Model {
    committed: BTreeMap<i64, i64>,
    trxs: Vec<Option<ModelTrx>>,
    /// The clustered index's entries.
    entries: BTreeSet<i64>,
    /// Whether inserts lock implicitly (else the row lock comes before the gap's check).
    implicit: bool,
}

impl Model {
    fn others(&self, me: usize) -> impl Iterator<Item = &ModelTrx> {
        self.trxs
            .iter()
            .enumerate()
            .filter(move |&(i, _)| i != me)
            .filter_map(|(_, t)| t.as_ref())
    }

    fn locked_by_other(&self, me: usize, k: i64) -> bool {
        self.others(me).any(|t| t.locks.contains(&k))
    }

    fn gap_locked_by_other(&self, me: usize, next: Option<i64>) -> bool {
        self.others(me).any(|t| t.gaps.contains(&next))
    }

    /// The first entry above `k`: the one whose gap `k` falls in.
    fn next_entry(&self, k: i64) -> Option<i64> {
        self.entries.range(k + 1..).next().copied()
    }

    fn trx(&mut self, me: usize) -> &mut ModelTrx {
        self.trxs[me].as_mut().unwrap()
    }

    /// The locks a point read or write of `k` takes once no other transaction holds `k`.
    fn lock_point(&mut self, me: usize, k: i64) {
        let rr = self.trx(me).rr;
        if !rr {
            self.trx(me).locks.insert(k);
        } else if !self.entries.contains(&k) {
            let next = self.next_entry(k);
            self.trx(me).gaps.insert(next);
        } else {
            let deleted = self.latest(me, k).is_none();
            let trx = self.trx(me);
            trx.locks.insert(k);
            if deleted {
                trx.gaps.insert(Some(k));
            }
        }
    }

    /// A locking walk of `[0, KEYS)`: the rows it returns, or `Err` where it timed out (the
    /// locks taken before stay).
    fn scan_for_update(&mut self, me: usize) -> Result<BTreeMap<i64, i64>, ()> {
        let rr = self.trx(me).rr;
        let mut rows = BTreeMap::new();
        let walked: Vec<i64> = self.entries.range(0..KEYS).copied().collect();
        for k in walked {
            if rr {
                self.trx(me).gaps.insert(Some(k));
            }
            if self.locked_by_other(me, k) {
                return Err(());
            }
            let newest = self.latest(me, k);
            if let Some(v) = newest {
                rows.insert(k, v);
            }
            // READ COMMITTED lets go of a deleted row's lock it had only just taken.
            if rr || newest.is_some() {
                self.trx(me).locks.insert(k);
            }
        }
        if rr {
            let past = self.entries.range(KEYS..).next().copied();
            self.trx(me).gaps.insert(past);
        }
        Ok(rows)
    }

    /// An insert of new row `k`: `Ok` once inserted, `Err` where it timed out (with what it
    /// left behind: an entry, an explicit row lock).
    fn insert(&mut self, me: usize, k: i64) -> Result<(), ()> {
        if !self.implicit {
            if self.locked_by_other(me, k) {
                return Err(());
            }
            self.trx(me).locks.insert(k);
        }
        if !self.entries.contains(&k) {
            let next = self.next_entry(k);
            if self.gap_locked_by_other(me, next) {
                return Err(());
            }
            self.entries.insert(k);
            if self.trx(me).gaps.contains(&next) {
                self.trx(me).gaps.insert(Some(k));
            }
        }
        if self.locked_by_other(me, k) {
            return Err(());
        }
        self.trx(me).locks.insert(k);
        Ok(())
    }

    /// The newest value `me` would write over: its own write, else the committed one.
    fn latest(&self, me: usize, k: i64) -> Option<i64> {
        let trx = self.trxs[me].as_ref().unwrap();
        match trx.writes.get(&k) {
            Some(own) => *own,
            None => self.committed.get(&k).copied(),
        }
    }

    /// What a consistent read of `me` sees.
    fn view(&mut self, me: usize) -> BTreeMap<i64, i64> {
        let committed = self.committed.clone();
        let trx = self.trxs[me].as_mut().unwrap();
        let mut seen = if trx.rr {
            trx.snapshot.get_or_insert(committed).clone()
        } else {
            committed
        };
        for (&k, v) in &trx.writes {
            match v {
                Some(v) => seen.insert(k, *v),
                None => seen.remove(&k),
            };
        }
        seen
    }
}

fn table(engine: &Engine) -> Table {
    let schema = TableSchema::new(
        "t",
        vec![
            Column::new("k", ColumnType::BigInt),
            Column::new("v", ColumnType::BigInt),
        ],
    )
    .primary_key(&["k"])
    .unwrap();
    engine.create_table(schema).unwrap()
}

fn value_of(row: Option<Vec<Value>>) -> Option<i64> {
    row.map(|r| r[1].as_int().unwrap())
}

fn is_timeout(result: &Result<impl std::fmt::Debug, TxnError>) -> bool {
    matches!(result, Err(TxnError::LockWaitTimeout { .. }))
}

fn run(
    (kind, close, implicit): (SnapshotKind, ViewClose, bool),
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let config = EngineConfig {
        snapshot: kind,
        view_close: close,
        implicit_insert_locks: implicit,
        lock_wait_timeout: Duration::ZERO,
        purge_interval: None,
        ..EngineConfig::default().with_tiny_windows()
    };
    let engine = Engine::open(config).unwrap();
    let t = table(&engine);
    // The churn's rows exist from the start: its transactions update them, and never insert
    // into a gap a model transaction may hold.
    let mut setup = engine.begin_with(Isolation::ReadCommitted);
    for k in CHURN_KEY..CHURN_KEY + 5 {
        setup.insert(&t, vec![k.into(), 0.into()]).unwrap();
    }
    setup.commit().unwrap();
    let mut model = Model {
        committed: BTreeMap::new(),
        trxs: (0..TRXS).map(|_| None).collect(),
        entries: (CHURN_KEY..CHURN_KEY + 5).collect(),
        implicit,
    };
    let mut trxs: Vec<Option<Transaction>> = (0..TRXS).map(|_| None).collect();
    let all = KeyRange::Between(
        Bound::Included(Key::one(0)),
        Bound::Excluded(Key::one(KEYS)),
    );
    for (step, op) in ops.iter().enumerate() {
        let ctx = || format!("step {step}: {op:?}");
        match *op {
            Op::Begin(i, rr) if trxs[i].is_none() => {
                let isolation = if rr {
                    Isolation::RepeatableRead
                } else {
                    Isolation::ReadCommitted
                };
                trxs[i] = Some(engine.begin_with(isolation));
                model.trxs[i] = Some(ModelTrx {
                    rr,
                    ..ModelTrx::default()
                });
            }
            Op::Churn(n) => {
                for j in 0..i64::from(n) {
                    let mut trx = engine.begin_with(Isolation::ReadCommitted);
                    let k = CHURN_KEY + j % 5;
                    let row = vec![k.into(), j.into()];
                    assert!(trx.update(&t, Key::one(k), row).unwrap());
                    trx.commit().unwrap();
                }
            }
            Op::Purge if model.trxs.iter().all(Option::is_none) => {
                engine.purge();
                let committed = &model.committed;
                model
                    .entries
                    .retain(|k| *k >= CHURN_KEY || committed.contains_key(k));
            }
            _ => {}
        }
        let (i, trx) = match *op {
            Op::Read(i, _)
            | Op::ReadForUpdate(i, _)
            | Op::Scan(i)
            | Op::ScanForUpdate(i)
            | Op::Write(i, _, _)
            | Op::Delete(i, _)
            | Op::Commit(i)
            | Op::Rollback(i) => match trxs[i].as_mut() {
                Some(trx) => (i, trx),
                None => continue,
            },
            _ => continue,
        };
        match *op {
            Op::Read(_, k) => {
                // Odd keys through `get_with`, which hands out the row without a copy.
                let got = if k % 2 == 1 {
                    let value = trx.get_with(&t, Key::one(k), ReadOptions::default(), |r| {
                        r[1].as_int().unwrap()
                    });
                    value.unwrap()
                } else {
                    value_of(trx.get(&t, Key::one(k)).unwrap())
                };
                let want = model.view(i).get(&k).copied();
                prop_assert_eq!(got, want, "{}", ctx());
            }
            Op::Scan(_) => {
                let rows = trx.scan(&t, all.clone()).unwrap();
                let got: BTreeMap<i64, i64> = rows
                    .into_iter()
                    .map(|(_, r)| (r[0].as_int().unwrap(), r[1].as_int().unwrap()))
                    .collect();
                prop_assert_eq!(got, model.view(i), "{}", ctx());
            }
            Op::ReadForUpdate(_, k) => {
                let result = trx.get_with(&t, Key::one(k), ReadOptions::FOR_UPDATE, copy_row);
                if model.locked_by_other(i, k) {
                    prop_assert!(is_timeout(&result), "{}: {:?}", ctx(), result);
                } else {
                    prop_assert_eq!(value_of(result.unwrap()), model.latest(i, k), "{}", ctx());
                    model.lock_point(i, k);
                }
            }
            Op::ScanForUpdate(_) => {
                let options = ReadOptions {
                    lock: Some(LockMode::Exclusive),
                    ..ReadOptions::default()
                };
                let result = trx.scan_with(&t, all.clone(), options, copy_keyed_row);
                match model.scan_for_update(i) {
                    Err(()) => prop_assert!(is_timeout(&result), "{}: {:?}", ctx(), result),
                    Ok(want) => {
                        let got: BTreeMap<i64, i64> = result
                            .unwrap()
                            .into_iter()
                            .map(|(_, r)| (r[0].as_int().unwrap(), r[1].as_int().unwrap()))
                            .collect();
                        prop_assert_eq!(got, want, "{}", ctx());
                    }
                }
            }
            Op::Write(_, k, _) | Op::Delete(_, k) => {
                let exists = model.trxs[i].is_some() && model.latest(i, k).is_some();
                let delete = matches!(op, Op::Delete(..));
                let row = vec![Value::Int(k), Value::Int(v_of(op))];
                let result = match (delete, exists) {
                    (true, _) => trx.delete(&t, Key::one(k)),
                    // Odd values through `modify`, the fused locking read and write.
                    (false, true) if v_of(op) % 2 == 1 => trx
                        .modify(&t, Key::one(k), |r| {
                            r[1] = Value::Int(v_of(op));
                            Ok::<_, TxnError>(())
                        })
                        .map(|changed| changed.is_some()),
                    (false, true) => trx.update(&t, Key::one(k), row),
                    (false, false) => trx.insert(&t, row).map(|_| true),
                };
                let done = if !exists && !delete {
                    model.insert(i, k).is_ok()
                } else if model.locked_by_other(i, k) {
                    false
                } else {
                    model.lock_point(i, k);
                    true
                };
                if !done {
                    prop_assert!(is_timeout(&result), "{}: {:?}", ctx(), result);
                } else {
                    prop_assert_eq!(result.unwrap(), exists || !delete, "{}", ctx());
                    if exists || !delete {
                        model.trx(i).writes.insert(k, (!delete).then(|| v_of(op)));
                    }
                }
            }
            Op::Commit(_) => {
                trxs[i].take().unwrap().commit().unwrap();
                let m = model.trxs[i].take().unwrap();
                for (k, v) in m.writes {
                    match v {
                        Some(v) => model.committed.insert(k, v),
                        None => model.committed.remove(&k),
                    };
                }
            }
            Op::Rollback(_) => {
                trxs[i].take().unwrap().rollback();
                model.trxs[i] = None;
            }
            _ => unreachable!("handled above"),
        }
    }
    // Everything ends; a fresh reader sees exactly the committed model.
    drop(trxs);
    let mut reader = engine.begin_with(Isolation::ReadCommitted);
    let rows = reader.scan(&t, all).unwrap();
    let got: BTreeMap<i64, i64> = rows
        .into_iter()
        .map(|(_, r)| (r[0].as_int().unwrap(), r[1].as_int().unwrap()))
        .collect();
    prop_assert_eq!(got, model.committed);
    engine.purge();
    prop_assert_eq!(
        engine.trx_sys().open_views(),
        0,
        "READ COMMITTED closed its view"
    );
    Ok(())
}

fn v_of(op: &Op) -> i64 {
    match op {
        Op::Write(_, _, v) => *v,
        _ => 0,
    }
}

/// A snapshot kind, a view-close mode, and whether inserts lock implicitly.
fn kinds() -> impl Strategy<Value = (SnapshotKind, ViewClose, bool)> {
    (
        prop::sample::select(SnapshotKind::ALL.to_vec()),
        prop::sample::select(ViewClose::ALL.to_vec()),
        any::<bool>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn interleavings_match_the_isolation_model(
        config in kinds(),
        ops in prop::collection::vec(op(), 1..60),
    ) {
        run(config, &ops)?;
    }
}
