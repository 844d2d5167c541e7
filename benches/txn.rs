//! Transaction-system benchmarks. Each group runs the baseline next to the fixes, on the same
//! data and threads, so the ratio is the result.
//!
//! * `view_open_close/{vector,hybrid,csn}-{latched,latch-free}/THREADS`: THREADS sessions
//!   each run READ COMMITTED statements that only open and close a read view (`open_view` in
//!   a statement), while 1,000 read-write transactions are held open, so every view copies
//!   an active set of 1,000. THREADS goes to 256 on purpose: far more threads than cores is
//!   where the book's collapse lives. Time is per statement, over all threads (divide 10^9 by
//!   it for statements per second).
//! * `point_ops/{baseline,hybrid,csn}/{read,update}-{1,2}t`: autocommit point reads (begin,
//!   get, commit) and point updates (begin, `v = v + 1`, commit) on 10,000 rows, 1 and 2
//!   threads. `baseline` is vector views closed under the latch with one registry shard;
//!   `hybrid` is the default engine; `csn` uses CSN snapshots.
//!
//! After measuring, each configuration runs a fixed number of operations more and records
//! trx-sys latch acquisitions and view bytes per operation from the engine's `Stats` in
//! `target/criterion/<group>/waterline-counters.json` (`scripts/bench-table.py` prints it).

use std::collections::BTreeMap;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use waterline::txn::{
    Column, ColumnType, Counter, Engine, EngineConfig, Isolation, Key, SnapshotKind, Table,
    TableSchema, Transaction, ViewClose,
};

const THREADS: [usize; 4] = [2, 8, 64, 256];
const HELD_OPEN: i64 = 1000;
const ROWS: i64 = 10_000;
/// Operations per configuration for the counters file.
const COUNTED_OPS: u64 = 20_000;
/// Each thread runs at least this many operations per sample, so that waking the threads
/// (milliseconds for 256 of them on 2 cores) stays a small part of a sample.
const MIN_OPS_PER_THREAD: u64 = 4_000;

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

/// Runs `op` about `iters` times (at least `MIN_OPS_PER_THREAD` a thread) spread over
/// `threads` threads, each with its own state from `init`; returns the wall time scaled to
/// `iters` operations (spawning excluded, the start signal and the slowest thread included).
fn spread<S>(
    threads: usize,
    iters: u64,
    init: impl Fn(usize) -> S + Sync,
    op: impl Fn(&mut S, u64) + Sync,
) -> Duration {
    let per_thread = iters.div_ceil(threads as u64).max(MIN_OPS_PER_THREAD);
    let barrier = Barrier::new(threads + 1);
    let mut started = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let (barrier, init, op) = (&barrier, &init, &op);
            s.spawn(move || {
                let mut state = init(t);
                barrier.wait();
                for i in 0..per_thread {
                    op(&mut state, i);
                }
            });
        }
        barrier.wait();
        started = Instant::now();
    });
    let elapsed = started.elapsed();
    elapsed.mul_f64(iters as f64 / (per_thread * threads as u64) as f64)
}

/// Latch acquisitions and view bytes per operation over `ops` more operations.
fn counters(engine: &Engine, ops: u64, run: impl FnOnce(u64)) -> BTreeMap<&'static str, f64> {
    let before = engine.stats();
    run(ops);
    let delta = engine.stats().since(&before);
    let per_op = |c: Counter| delta.get(c) as f64 / ops as f64;
    BTreeMap::from([
        ("latch_per_op", per_op(Counter::TrxSysLatch)),
        ("view_bytes_per_op", per_op(Counter::ViewBytesCopied)),
        ("registry_latch_per_op", per_op(Counter::RegistryLatch)),
    ])
}

type CounterFile = BTreeMap<String, BTreeMap<String, BTreeMap<&'static str, f64>>>;

fn save(group: &str, counters: &CounterFile) {
    let dir = std::path::Path::new("target/criterion").join(group);
    let mut json = String::from("{");
    for (i, (function, params)) in counters.iter().enumerate() {
        json += &format!("{}\"{function}\": {{", if i > 0 { ", " } else { "" });
        for (j, (param, values)) in params.iter().enumerate() {
            let fields: Vec<String> = values
                .iter()
                .map(|(k, v)| format!("\"{k}\": {v:.3}"))
                .collect();
            json += &format!(
                "{}\"{param}\": {{{}}}",
                if j > 0 { ", " } else { "" },
                fields.join(", ")
            );
        }
        json += "}";
    }
    json += "}\n";
    if std::fs::create_dir_all(&dir).is_ok() {
        // Best effort: the counters are a side table; the timings are criterion's.
        let _ = std::fs::write(dir.join("waterline-counters.json"), json);
    }
}

fn view_open_close(c: &mut Criterion) {
    let mut group = c.benchmark_group("view_open_close");
    group.throughput(Throughput::Elements(1));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(1));
    let mut file = CounterFile::new();
    for snapshot in SnapshotKind::ALL {
        for view_close in ViewClose::ALL {
            let (engine, table) = engine(snapshot, view_close, 256, false);
            let held: Vec<Transaction> = (0..HELD_OPEN)
                .map(|id| {
                    let mut trx = engine.begin(Isolation::ReadCommitted);
                    trx.insert(&table, vec![id.into(), 0.into()])
                        .expect("a new key");
                    trx
                })
                .collect();
            let name = format!("{}-{}", snapshot.name(), view_close.name());
            let statement = |trx: &mut Transaction, _: u64| trx.open_view().expect("a view opens");
            let session = |_| engine.begin(Isolation::ReadCommitted);
            for threads in THREADS {
                group.bench_with_input(
                    BenchmarkId::new(&name, threads),
                    &threads,
                    |b, &threads| {
                        b.iter_custom(|iters| spread(threads, iters, session, statement));
                    },
                );
                let counted = counters(&engine, COUNTED_OPS, |ops| {
                    spread(threads, ops, session, statement);
                });
                file.entry(name.clone())
                    .or_default()
                    .insert(threads.to_string(), counted);
            }
            drop(held);
        }
    }
    group.finish();
    save("view_open_close", &file);
}

fn point_ops(c: &mut Criterion) {
    let mut group = c.benchmark_group("point_ops");
    group.throughput(Throughput::Elements(1));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(1));
    let configs = [
        ("baseline", SnapshotKind::Vector, ViewClose::Latched, 1),
        ("hybrid", SnapshotKind::Hybrid, ViewClose::LatchFree, 256),
        ("csn", SnapshotKind::Csn, ViewClose::LatchFree, 256),
    ];
    let mut file = CounterFile::new();
    for (name, snapshot, view_close, shards) in configs {
        let (engine, table) = engine(snapshot, view_close, shards, true);
        let mut load = engine.begin(Isolation::ReadCommitted);
        for id in 0..ROWS {
            load.insert(&table, vec![id.into(), 0.into()])
                .expect("a new key");
        }
        load.commit().expect("the load commits");
        // A per-thread xorshift state picks keys.
        let seed = |t: usize| 0x9E37_79B9_7F4A_7C15u64 ^ (t as u64 + 1);
        let next_key = |state: &mut u64| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            Key::one((*state % ROWS as u64) as i64)
        };
        let read = |state: &mut u64, _: u64| {
            let mut trx = engine.begin(Isolation::ReadCommitted);
            let row = trx.get(&table, next_key(state)).expect("a read succeeds");
            assert!(row.is_some());
            trx.commit().expect("a read-only commit");
        };
        let update = |state: &mut u64, _: u64| {
            let mut trx = engine.begin(Isolation::ReadCommitted);
            let found = trx
                .update_with(&table, next_key(state), |row| {
                    vec![row[0].clone(), (row[1].as_int().unwrap_or(0) + 1).into()]
                })
                .expect("an update succeeds");
            assert!(found);
            trx.commit().expect("the update commits");
        };
        for threads in [1usize, 2] {
            for (op, run) in [
                ("read", &read as &(dyn Fn(&mut u64, u64) + Sync)),
                ("update", &update),
            ] {
                let param = format!("{op}-{threads}t");
                group.bench_with_input(BenchmarkId::new(name, &param), &threads, |b, &threads| {
                    b.iter_custom(|iters| spread(threads, iters, seed, run));
                });
                let counted = counters(&engine, COUNTED_OPS, |ops| {
                    spread(threads, ops, seed, run);
                });
                file.entry(name.to_owned())
                    .or_default()
                    .insert(param, counted);
            }
        }
    }
    group.finish();
    save("point_ops", &file);
}

criterion_group!(benches, view_open_close, point_ops);
criterion_main!(benches);
