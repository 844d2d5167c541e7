//! Random interleavings of a few transactions, executed step by step on one thread, checked
//! against a reference model of READ COMMITTED and REPEATABLE READ, for every snapshot kind,
//! both view-close modes, and inserts locking implicitly or in the lock table.
//!
//! The model: the committed state is a map; a READ COMMITTED read sees the committed state at
//! the time of the read, a REPEATABLE READ read sees it as of the transaction's first
//! consistent read; both see their own writes over it. Writes and locking reads take an
//! exclusive lock held to the end; with `lock_wait_timeout = 0` a conflicting request fails
//! at once with a lock wait timeout, and only that statement is undone. "Churn" runs many
//! short transactions on other keys, so ids outgrow the (shrunk) bitmap windows and CSN ring
//! while the model's transactions stay open.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::time::Duration;

use proptest::prelude::*;
use waterline_txn::{
    Column, ColumnType, Engine, EngineConfig, Isolation, Key, KeyRange, SnapshotKind, Table,
    TableSchema, Transaction, TxnError, Value, ViewClose,
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
    locks: BTreeSet<i64>,
}

struct Model {
    committed: BTreeMap<i64, i64>,
    trxs: Vec<Option<ModelTrx>>,
}

impl Model {
    fn locked_by_other(&self, me: usize, k: i64) -> bool {
        self.trxs
            .iter()
            .enumerate()
            .any(|(i, t)| i != me && t.as_ref().is_some_and(|t| t.locks.contains(&k)))
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
    let mut model = Model {
        committed: BTreeMap::new(),
        trxs: (0..TRXS).map(|_| None).collect(),
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
                trxs[i] = Some(engine.begin(isolation));
                model.trxs[i] = Some(ModelTrx {
                    rr,
                    ..ModelTrx::default()
                });
            }
            Op::Churn(n) => {
                for j in 0..i64::from(n) {
                    let mut trx = engine.begin(Isolation::ReadCommitted);
                    let k = CHURN_KEY + j % 5;
                    if !trx
                        .update(&t, Key::one(k), vec![k.into(), j.into()])
                        .unwrap()
                    {
                        trx.insert(&t, vec![k.into(), j.into()]).unwrap();
                    }
                    trx.commit().unwrap();
                }
            }
            Op::Purge => {
                engine.purge();
            }
            _ => {}
        }
        let (i, trx) = match *op {
            Op::Read(i, _)
            | Op::ReadForUpdate(i, _)
            | Op::Scan(i)
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
                    let value = trx.get_with(&t, Key::one(k), |r| r[1].as_int().unwrap());
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
                let result = trx.get_for_update(&t, Key::one(k));
                if model.locked_by_other(i, k) {
                    prop_assert!(is_timeout(&result), "{}: {:?}", ctx(), result);
                } else {
                    prop_assert_eq!(value_of(result.unwrap()), model.latest(i, k), "{}", ctx());
                    model.trxs[i].as_mut().unwrap().locks.insert(k);
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
                if model.locked_by_other(i, k) {
                    prop_assert!(is_timeout(&result), "{}: {:?}", ctx(), result);
                } else {
                    prop_assert_eq!(result.unwrap(), exists || !delete, "{}", ctx());
                    let m = model.trxs[i].as_mut().unwrap();
                    m.locks.insert(k);
                    if exists || !delete {
                        m.writes.insert(k, (!delete).then(|| v_of(op)));
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
    let mut reader = engine.begin(Isolation::ReadCommitted);
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
