//! Transaction-system benchmarks. Each group runs the baseline next to the fixes, on the same
//! data and threads, so the ratio is the result.
//!
//! * `view_open_close/{vector,hybrid,csn}-{latched,latch-free}/THREADS`: THREADS sessions
//!   each run READ COMMITTED statements that only open and close a read view (`open_view` in
//!   a statement), while 1,000 read-write transactions are held open, so every view copies
//!   an active set of 1,000. THREADS goes to 256 on purpose: far more threads than cores is
//!   where the book's collapse lives. One criterion iteration is a round of about 4,096
//!   statements spread over the threads (at least 16 a thread); the element time is wall time
//!   per statement over all threads (10^9 / it = statements per second).
//! * `point_ops/{baseline,hybrid,csn}/{read,update}-{1,2}t`: autocommit point reads (begin,
//!   get, commit) and point updates (begin, `v = v + 1`, commit) on 10,000 rows, 1 and 2
//!   threads. `baseline` is vector views closed under the latch with one registry shard;
//!   `hybrid` is the default engine; `csn` uses CSN snapshots.
//! * `batched_reads/{one-by-one,prefetched}/{16,64}`: one REPEATABLE READ transaction reads
//!   a column of 16 or 64 random rows of a 100,000-row table with ten CHAR(24) columns (a
//!   TPC-C STOCK table, larger than the cache), with [`Transaction::prefetch`] for the batch
//!   first or without. The element time is per row read.
//! * `row_copy/{to_vec,copy_row}/stock`: a copy of a TPC-C STOCK row (seventeen values, ten
//!   of them CHAR(24) text kept inline), as every update makes of the row it changes:
//!   `<[Value]>::to_vec`, the baseline, against [`copy_row`], which pushes the clones one by
//!   one (see its page for why that is faster). Criterion's time is per row; its
//!   throughput counts values.
//!
//! All configurations are set up first and run back to back for each parameter, so that drift
//! on a noisy machine does not land on one configuration. After measuring, each runs a fixed
//! number of rounds more and records
//! trx-sys latch acquisitions and view bytes per operation from the engine's `Stats` in
//! `target/criterion/<group>/waterline-counters.json` (`scripts/bench-table.py` prints it).

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{CounterFile, group, per_thread, rounds, save};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use waterline::txn::{
    Column, ColumnType, Counter, Engine, EngineConfig, Isolation, Key, ReadOptions, Rng,
    SnapshotKind, Table, TableSchema, Transaction, Value, ViewClose, copy_row,
};

const THREADS: [usize; 4] = [2, 8, 64, 256];
const HELD_OPEN: i64 = 1000;
const ROWS: i64 = 10_000;
/// Rounds run for the counters file after measuring.
const COUNTED_ROUNDS: u64 = 5;

fn engine(
    snapshot: SnapshotKind,
    view_close: ViewClose,
    shards: usize,
    purge: bool,
) -> (Engine, Table) {
    let config = EngineConfig {
        snapshot,
        view_close,
        trx_shards: shards,
        purge_interval: purge.then_some(Duration::from_millis(10)),
        ..EngineConfig::default()
    };
    let engine = Engine::open(config).expect("a valid configuration");
    let schema = TableSchema::new(
        "t",
        vec![
            Column::new("id", ColumnType::BigInt),
            Column::new("v", ColumnType::BigInt),
        ],
    )
    .primary_key(&["id"])
    .expect("the column exists");
    let table = engine.create_table(schema).expect("a new table");
    (engine, table)
}

/// Latch acquisitions and view bytes per operation over `ops` more operations.
fn counters(engine: &Engine, ops: u64, run: impl FnOnce()) -> BTreeMap<&'static str, f64> {
    let before = engine.stats();
    run();
    let delta = engine.stats().since(&before);
    let per_op = |c: Counter| delta.get(c) as f64 / ops as f64;
    BTreeMap::from([
        ("latch_per_op", per_op(Counter::TrxSysLatch)),
        ("view_bytes_per_op", per_op(Counter::ViewBytesCopied)),
        ("registry_latch_per_op", per_op(Counter::RegistryLatch)),
    ])
}

fn view_open_close(c: &mut Criterion) {
    // Every configuration is set up first (with its 1,000 transactions held open), then each
    // thread count runs all of them back to back, so drift on a noisy machine spreads evenly.
    let mut configs = Vec::new();
    for snapshot in SnapshotKind::ALL {
        for view_close in ViewClose::ALL {
            let (engine, table) = engine(snapshot, view_close, 256, false);
            let held: Vec<Transaction> = (0..HELD_OPEN)
                .map(|id| {
                    let mut trx = engine.begin_with(Isolation::ReadCommitted);
                    trx.insert(&table, vec![id.into(), 0.into()])
                        .expect("a new key");
                    trx
                })
                .collect();
            configs.push((
                format!("{}-{}", snapshot.name(), view_close.name()),
                engine,
                held,
            ));
        }
    }
    let mut group = group(c, "view_open_close");
    let mut file = CounterFile::new();
    for threads in THREADS {
        group.throughput(Throughput::Elements(per_thread(threads) * threads as u64));
        for (name, engine, _held) in &configs {
            let statement = |trx: &mut Transaction| trx.open_view().expect("a view opens");
            let session = |_| engine.begin_with(Isolation::ReadCommitted);
            group.bench_function(BenchmarkId::new(name, threads), |b| {
                b.iter_custom(|iters| rounds(threads, iters, session, statement));
            });
            let ops = COUNTED_ROUNDS * per_thread(threads) * threads as u64;
            let counted = counters(engine, ops, || {
                rounds(threads, COUNTED_ROUNDS, session, statement);
            });
            file.entry(name.clone())
                .or_default()
                .insert(threads.to_string(), counted);
        }
    }
    group.finish();
    save("view_open_close", &file);
}

fn point_ops(c: &mut Criterion) {
    let configs = [
        ("baseline", SnapshotKind::Vector, ViewClose::Latched, 1),
        ("hybrid", SnapshotKind::Hybrid, ViewClose::LatchFree, 256),
        ("csn", SnapshotKind::Csn, ViewClose::LatchFree, 256),
    ]
    .map(|(name, snapshot, view_close, shards)| {
        let (engine, table) = engine(snapshot, view_close, shards, true);
        let mut load = engine.begin_with(Isolation::ReadCommitted);
        for id in 0..ROWS {
            load.insert(&table, vec![id.into(), 0.into()])
                .expect("a new key");
        }
        load.commit().expect("the load commits");
        (name, engine, table)
    });
    // A generator per thread picks keys.
    let seed = |t: usize| Rng::new(0x9E37_79B9_7F4A_7C15, t as u64 + 1);
    let next_key = |rng: &mut Rng| Key::one(rng.below(ROWS as u64) as i64);
    let mut group = group(c, "point_ops");
    let mut file = CounterFile::new();
    for op in ["read", "update"] {
        for threads in [1usize, 2] {
            group.throughput(Throughput::Elements(per_thread(threads) * threads as u64));
            let param = format!("{op}-{threads}t");
            for (name, engine, table) in &configs {
                let run = |state: &mut Rng| {
                    let mut trx = engine.begin_with(Isolation::ReadCommitted);
                    let key = next_key(state);
                    if op == "read" {
                        assert!(trx.get(table, key).expect("a read succeeds").is_some());
                    } else {
                        let found = trx
                            .update_with(table, key, |row| {
                                vec![row[0].clone(), (row[1].as_int().unwrap_or(0) + 1).into()]
                            })
                            .expect("an update succeeds");
                        assert!(found);
                    }
                    trx.commit().expect("the commit succeeds");
                };
                group.bench_function(BenchmarkId::new(*name, &param), |b| {
                    b.iter_custom(|iters| rounds(threads, iters, seed, run));
                });
                let ops = COUNTED_ROUNDS * per_thread(threads) * threads as u64;
                let counted = counters(engine, ops, || {
                    rounds(threads, COUNTED_ROUNDS, seed, run);
                });
                file.entry((*name).to_owned())
                    .or_default()
                    .insert(param.clone(), counted);
            }
        }
    }
    group.finish();
    save("point_ops", &file);
}

/// Rows of `batched_reads`' table: with its string columns, about 60 MB of versions, well
/// over this machine's cache (a TPC-C STOCK table at one warehouse).
const WIDE_ROWS: i64 = 100_000;

fn batched_reads(c: &mut Criterion) {
    let (engine, _) = engine(SnapshotKind::Hybrid, ViewClose::LatchFree, 256, true);
    let mut columns = vec![
        Column::new("w", ColumnType::BigInt),
        Column::new("id", ColumnType::BigInt),
        Column::new("quantity", ColumnType::BigInt),
    ];
    columns.extend((1..=10).map(|d| Column::new(format!("dist_{d:02}"), ColumnType::Char(24))));
    let schema = TableSchema::new("stock", columns)
        .primary_key(&["w", "id"])
        .expect("the columns exist");
    let table = engine.create_table(schema).expect("a new table");
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    for id in 0..WIDE_ROWS {
        let mut row = vec![1.into(), id.into(), (id % 100).into()];
        row.extend((1..=10).map(|d| format!("{id:0>16}-dist-{d:02}").into()));
        load.insert(&table, row).expect("a new key");
    }
    load.commit().expect("the load commits");
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15, 0);
    let mut keys = move |n: usize| -> Vec<[i64; 2]> {
        (0..n)
            .map(|_| [1, rng.below(WIDE_ROWS as u64) as i64])
            .collect()
    };
    let mut group = group(c, "batched_reads");
    for batch in [16usize, 64] {
        group.throughput(Throughput::Elements(batch as u64));
        for prefetch in [false, true] {
            let name = if prefetch { "prefetched" } else { "one-by-one" };
            group.bench_function(BenchmarkId::new(name, batch), |b| {
                b.iter_batched(
                    || keys(batch),
                    |keys| {
                        let mut trx = engine.begin_with(Isolation::RepeatableRead);
                        if prefetch {
                            trx.prefetch(&table, keys.iter().copied());
                        }
                        let mut sum = 0;
                        for key in keys {
                            sum += trx
                                .get_with(&table, key, ReadOptions::default(), |row| {
                                    row[2].as_int().unwrap_or(0)
                                })
                                .expect("a read succeeds")
                                .expect("the row exists");
                        }
                        trx.commit().expect("the commit succeeds");
                        sum
                    },
                    criterion::BatchSize::SmallInput,
                );
            });
        }
    }
    group.finish();
}

/// A way to copy a row.
type RowCopy = fn(&[Value]) -> Vec<Value>;

fn row_copy(c: &mut Criterion) {
    let mut row: Vec<Value> = vec![17.into(), 1.into(), 55.into()];
    row.extend((1..=10).map(|d| format!("{d:0>16}-dist-{d:02}").into()));
    row.extend([Value::from(100), Value::from(3), Value::from(0)]);
    row.push("original data, short".into());
    let mut group = group(c, "row_copy");
    group.throughput(Throughput::Elements(row.len() as u64));
    let copies: [(&str, RowCopy); 2] = [("to_vec", <[Value]>::to_vec), ("copy_row", copy_row)];
    for (name, copy) in copies {
        group.bench_function(BenchmarkId::new(name, "stock"), |b| {
            b.iter(|| copy(std::hint::black_box(&row)));
        });
    }
    group.finish();
}

criterion_group!(benches, view_open_close, point_ops, batched_reads, row_copy);
criterion_main!(benches);
