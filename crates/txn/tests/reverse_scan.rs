//! A backward scan walks from the high end of its range: for any range, limit and table
//! contents it returns what the forward scan returns, reversed and cut to the limit, on the
//! clustered index and on a secondary one, with and without row locks.

use std::ops::Bound;
use waterline_txn::copy_keyed_row;

use proptest::prelude::*;
use waterline_txn::{
    Column, ColumnType, Engine, EngineConfig, Isolation, Key, KeyRange, LockMode, ReadOptions,
    TableSchema, Value,
};

fn key(values: Vec<i64>) -> Key {
    Key::from(values.into_iter().map(Value::Int).collect::<Vec<_>>())
}

/// A bound on keys of one or two small INT values (a prefix of `(a, b)` or of `(c, a)`).
fn bound() -> impl Strategy<Value = Bound<Key>> {
    let key = prop::collection::vec(-1i64..6, 1..=2).prop_map(key);
    prop_oneof![
        Just(Bound::Unbounded),
        key.clone().prop_map(Bound::Included),
        key.prop_map(Bound::Excluded),
    ]
}

fn range() -> impl Strategy<Value = KeyRange> {
    prop_oneof![
        Just(KeyRange::All),
        prop::collection::vec(-1i64..6, 0..=2).prop_map(|k| KeyRange::Prefix(key(k))),
        (bound(), bound()).prop_map(|(lo, hi)| KeyRange::Between(lo, hi)),
    ]
}

proptest! {
    #[test]
    fn a_backward_scan_is_the_forward_scan_reversed(
        rows in prop::collection::btree_map((0i64..5, 0i64..5), 0i64..5, 0..24),
        deleted in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        range in range(),
        limit in prop::option::of(0usize..5),
        lock in prop::option::of(Just(LockMode::Shared)),
    ) {
        let engine = Engine::open(EngineConfig::default()).unwrap();
        let schema = TableSchema::new(
            "t",
            vec![
                Column::new("a", ColumnType::Int),
                Column::new("b", ColumnType::Int),
                Column::new("c", ColumnType::Int),
            ],
        )
        .primary_key(&["a", "b"])
        .unwrap()
        .index("by_c", &["c", "a"], false)
        .unwrap();
        let table = engine.create_table(schema).unwrap();
        let mut trx = engine.begin_with(Isolation::RepeatableRead);
        for (&(a, b), &c) in &rows {
            trx.insert(&table, vec![a.into(), b.into(), c.into()]).unwrap();
        }
        trx.commit().unwrap();
        // Deleted rows stay in the indexes until purge: the walks pass over them.
        let keys: Vec<_> = rows.keys().collect();
        let mut trx = engine.begin_with(Isolation::RepeatableRead);
        if !keys.is_empty() {
            for index in &deleted {
                let &(a, b) = *index.get(&keys);
                trx.delete(&table, Key::from([a, b])).unwrap();
            }
        }

        let forward = ReadOptions { limit: None, reverse: false, lock, ..ReadOptions::default() };
        let backward = ReadOptions { limit, reverse: true, lock, ..ReadOptions::default() };
        let expect = |mut all: Vec<(Key, Vec<Value>)>| {
            all.reverse();
            all.truncate(limit.unwrap_or(usize::MAX));
            all
        };
        let all = trx.scan_with(&table, range.clone(), forward, copy_keyed_row).unwrap();
        prop_assert_eq!(trx.scan_with(&table, range.clone(), backward, copy_keyed_row).unwrap(), expect(all));
        let all = trx.scan_with(&table, range.clone(), forward.on_index("by_c"), copy_keyed_row).unwrap();
        prop_assert_eq!(trx.scan_with(&table, range, backward.on_index("by_c"), copy_keyed_row).unwrap(), expect(all));
    }
}
