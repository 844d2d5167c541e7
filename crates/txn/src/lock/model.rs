//! The lock table against a reference: random requests of every kind (shared and exclusive
//! row locks, gap locks, inserts into gaps) by a few transactions on a few rows and gaps, and
//! transactions ending, each answered at once (a lock-wait timeout of zero), checked against
//! a serial model whose conflicts come from InnoDB's compatibility matrix written out as a
//! table.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

const TRXS: u64 = 3;
const KEYS: i64 = 3;

/// What a request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ask {
    RowS,
    RowX,
    GapS,
    GapX,
    Insert,
}

/// InnoDB's matrix (`lock_rec_has_to_wait`), with a next-key lock as its record part and its
/// gap part: whether a request must wait for a lock another transaction holds. Rows: the
/// request; columns: the lock held (row S, row X, gap S, gap X). A held gap lock blocks only
/// inserts; a row lock blocks only row locks, by mode.
const WAITS: [(Ask, [bool; 4]); 5] = [
    (Ask::RowS, [false, true, false, false]),
    (Ask::RowX, [true, true, false, false]),
    (Ask::GapS, [false, false, false, false]),
    (Ask::GapX, [false, false, false, false]),
    (Ask::Insert, [false, false, true, true]),
];

fn column(ask: Ask) -> usize {
    match ask {
        Ask::RowS => 0,
        Ask::RowX => 1,
        Ask::GapS => 2,
        Ask::GapX => 3,
        Ask::Insert => unreachable!("an insert is never held"),
    }
}

fn must_wait(ask: Ask, held: Ask) -> bool {
    let row = WAITS.iter().find(|(a, _)| *a == ask).expect("every ask");
    row.1[column(held)]
}

#[derive(Clone, Debug)]
enum Op {
    Ask(u64, Ask, i64),
    End(u64),
}

fn op() -> impl Strategy<Value = Op> {
    let ask = prop::sample::select(vec![
        Ask::RowS,
        Ask::RowX,
        Ask::GapS,
        Ask::GapX,
        Ask::Insert,
    ]);
    prop_oneof![
        6 => (0..TRXS, ask, 0..KEYS).prop_map(|(t, a, k)| Op::Ask(t, a, k)),
        1 => (0..TRXS).prop_map(Op::End),
    ]
}

fn target(ask: Ask, k: i64) -> LockTarget {
    match ask {
        Ask::RowS | Ask::RowX => LockTarget::Row(Key::one(k)),
        // The last gap is the supremum's.
        _ => LockTarget::Gap(None, (k < KEYS - 1).then(|| Key::one(k))),
    }
}

fn mode(ask: Ask) -> LockMode {
    match ask {
        Ask::RowS | Ask::GapS => LockMode::Shared,
        _ => LockMode::Exclusive,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn the_lock_table_follows_the_compatibility_matrix(ops in prop::collection::vec(op(), 1..80)) {
        let stats = Arc::new(Stats::default());
        let locks = LockManager::new(2, Arc::clone(&stats), Duration::ZERO, 0);
        // The model: per lock, who holds it and how (the stronger mode if asked twice).
        let mut model: BTreeMap<(bool, i64), BTreeMap<u64, Ask>> = BTreeMap::new();
        let mut held: BTreeMap<u64, Vec<Held>> = BTreeMap::new();
        for op in ops {
            match op {
                Op::End(t) => {
                    locks.end(TrxId(t), &held.remove(&t).unwrap_or_default());
                    for holders in model.values_mut() {
                        holders.remove(&t);
                    }
                }
                Op::Ask(t, ask, k) => {
                    let target = target(ask, k);
                    let gap = target.is_gap();
                    let key_hash = match &target {
                        LockTarget::Gap(_, None) => 0,
                        other => hash_of(&other.key()),
                    };
                    let hash = lock_hash(TableId(0), &target, key_hash);
                    let request = Request {
                        trx: TrxId(t),
                        key: (TableId(0), target.clone()),
                        hash,
                        mode: mode(ask),
                        timeout: Duration::ZERO,
                        interrupt: None,
                        nowait: false,
                        table_name: "t",
                    };
                    let holders = model.entry((gap, k)).or_default();
                    let blocked = holders
                        .iter()
                        .any(|(&other, &h)| other != t && must_wait(ask, h));
                    if ask == Ask::Insert {
                        let mut ran = false;
                        let result = locks.insert_into_gap(request, &mut |_| {
                            ran = true;
                            Gapped::Inserted
                        });
                        prop_assert_eq!(ran, !blocked, "insert into gap {} by {}", k, t);
                        prop_assert_eq!(result.is_err(), blocked);
                        continue;
                    }
                    let result = locks.acquire(request);
                    if blocked {
                        prop_assert!(
                            matches!(result, Err(TxnError::LockWaitTimeout { .. })),
                            "{:?} on {} by {}: {:?}", ask, k, t, result
                        );
                        continue;
                    }
                    let before = holders.get(&t).copied();
                    // Held already in this or a stronger mode: nothing new to record.
                    let stronger = before.is_some_and(|b| mode(b) >= mode(ask));
                    let newly = result.expect("granted");
                    prop_assert_eq!(newly, before.is_none(), "{:?} on {} by {}", ask, k, t);
                    if !stronger {
                        holders.insert(t, ask);
                    }
                    if newly {
                        held.entry(t).or_default().push((hash, (TableId(0), target)));
                    }
                }
            }
        }
        prop_assert_eq!(stats.snapshot().get(Counter::Deadlocks), 0);
        for (t, list) in held {
            locks.end(TrxId(t), &list);
        }
        let empty = locks.shards.iter().all(|s| s.locks.lock().is_empty());
        prop_assert!(empty, "every lock released");
    }
}
