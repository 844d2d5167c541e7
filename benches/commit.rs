//! Group-commit benchmarks (book 8.1.2): the broadcast wake-up baseline next to
//! point-to-point parkers, with and without an fdatasync per group, on the same threads.
//!
//! * `group_commit/{every-commit,none}-{broadcast,parker}/THREADS`: THREADS committer threads
//!   each commit records of 100 bytes through a [`GroupCommit`] pipeline as fast as they
//!   can. `every-commit` writes a real log (in cargo's target tmp dir) and syncs it once per
//!   group; `none` keeps no log, so only the stages and wake-ups cost. One criterion
//!   iteration is a round of about 16,384 commits spread over the threads (at least 64 a
//!   thread, so that the start and the tail of a round, where groups are small, weigh
//!   little); the element time is wall time per commit over all threads (10^9 / it =
//!   commits per second).
//!
//! * `engine_commit/{memory,log-os}/write_only`: one thread runs sysbench oltp_write_only's
//!   transaction on the engine itself (no SQL, no protocol): on a 10,000-row `sbtest` table
//!   (`id` primary key, `k` indexed, `c` CHAR(120), `pad` CHAR(60)) it updates one row's
//!   `k`, another's `c`, deletes a third and inserts it again, and commits. `memory` is the
//!   in-memory engine; `log-os` opens it on a directory (in cargo's target tmp dir) with
//!   `FlushPolicy::Os`, so every commit encodes its redo and goes through the group commit's
//!   stages and a `write` to the log, but nothing waits for a disk. The difference is what a
//!   durable commit costs the committing thread's CPU before any sync: the part of
//!   durability's price that does not depend on the machine's disk. The element time is
//!   per transaction.
//!
//! After measuring, each `group_commit` configuration runs a few rounds more and records,
//! from the pipeline's own counters, the mean group size, fsyncs per commit, and the wake-up
//! efficiency (useful wake-ups / wake-ups) in `target/criterion/group_commit/
//! waterline-counters.json` (`scripts/bench-table.py group_commit` prints it).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{CounterFile, group, per_thread, rounds, save};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use waterline::commit::{
    FlushPolicy, GroupCommit, GroupCommitConfig, TrxTag, Wakeup, Wal, WalConfig,
};
use waterline::txn::{
    Column, ColumnType, CommitConfig, Engine, EngineConfig, Isolation, Key, Rng, Table,
    TableSchema, Value,
};

const THREADS: [usize; 5] = [1, 4, 16, 64, 256];
/// Rounds run for the counters file after measuring.
const COUNTED_ROUNDS: u64 = 3;
/// A commit record's payload, about a small OLTP transaction's redo.
const PAYLOAD_BYTES: usize = 100;
/// Commits in one of the harness's operations: rounds of 4,096 operations are 16,384
/// commits.
const COMMITS_PER_OP: u64 = 4;

/// A fresh log directory under cargo's tmp dir (a real disk: fdatasync costs what it costs).
fn log_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("group_commit-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn pipeline(flush: FlushPolicy, wakeup: Wakeup, dir: &Path) -> GroupCommit<u64> {
    let wal = (flush != FlushPolicy::None).then(|| {
        let config = WalConfig {
            flush,
            ..WalConfig::default()
        };
        Wal::open(dir, config).expect("the log opens").0
    });
    let config = GroupCommitConfig {
        wakeup,
        ..GroupCommitConfig::default()
    };
    // Publishing is the engine's business; here it only has to take the group.
    GroupCommit::new(
        config,
        wal,
        Box::new(|group: Vec<u64>| {
            std::hint::black_box(group);
            Ok(())
        }),
    )
}

fn group_commit(c: &mut Criterion) {
    let mut group = group(c, "group_commit");
    let mut file = CounterFile::new();
    let configs = [FlushPolicy::EveryCommit, FlushPolicy::None].map(|flush| {
        [Wakeup::Broadcast, Wakeup::Parker].map(|wakeup| {
            let policy = if flush == FlushPolicy::None {
                "none"
            } else {
                "every-commit"
            };
            let waker = if wakeup == Wakeup::Parker {
                "parker"
            } else {
                "broadcast"
            };
            (format!("{policy}-{waker}"), flush, wakeup)
        })
    });
    for threads in THREADS {
        let commits_per_round = per_thread(threads) * threads as u64 * COMMITS_PER_OP;
        group.throughput(Throughput::Elements(commits_per_round));
        for (name, flush, wakeup) in configs.iter().flatten() {
            let dir = log_dir(name);
            let pipeline = pipeline(*flush, *wakeup, &dir);
            let commit = |n: &mut u64| {
                for _ in 0..COMMITS_PER_OP {
                    *n += 1;
                    let payload = vec![0xA5; PAYLOAD_BYTES];
                    pipeline
                        .commit(TrxTag(*n), payload, *n)
                        .expect("the commit succeeds");
                }
            };
            let seed = |t: usize| (t as u64) << 40;
            group.bench_function(BenchmarkId::new(name, threads), |b| {
                b.iter_custom(|iters| rounds(threads, iters, seed, commit));
            });
            let before = pipeline.stats();
            rounds(threads, COUNTED_ROUNDS, seed, commit);
            let delta = pipeline.stats().since(&before);
            let per_commit = |n: u64| n as f64 / delta.commits.max(1) as f64;
            file.entry(name.clone()).or_default().insert(
                threads.to_string(),
                BTreeMap::from([
                    ("mean_group_size", delta.mean_group_size().unwrap_or(0.0)),
                    ("fsyncs_per_commit", per_commit(delta.fsyncs)),
                    // 0: no fsync at all (policy none).
                    (
                        "commits_per_fsync",
                        match delta.fsyncs {
                            0 => 0.0,
                            n => delta.commits as f64 / n as f64,
                        },
                    ),
                    ("wakeups_per_commit", per_commit(delta.wakeups)),
                    ("wasted_per_commit", per_commit(delta.wasted_wakeups)),
                    // -1: no follower slept, so there was nothing to be efficient about.
                    (
                        "wakeup_efficiency",
                        delta.wakeup_efficiency().unwrap_or(-1.0),
                    ),
                ]),
            );
            drop(pipeline);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    group.finish();
    save("group_commit", &file);
}

/// Rows of `engine_commit`'s table, as sysbench's `--table-size=10000`.
const SBTEST_ROWS: i64 = 10_000;
/// The seed of the table's contents and of the ids the transactions pick.
const SBTEST_SEED: u64 = 0x5B7E_5700;

/// A sysbench row: `id`, `k`, `c` (CHAR(120)) and `pad` (CHAR(60)), as `prepare` fills them.
fn sbtest_row(id: i64, k: i64, rng: &mut Rng) -> Vec<Value> {
    let digits = |n: usize, rng: &mut Rng| -> String {
        (0..n)
            .map(|i| {
                if i % 12 == 11 {
                    '-'
                } else {
                    char::from(b'0' + rng.below(10) as u8)
                }
            })
            .collect()
    };
    vec![
        id.into(),
        k.into(),
        digits(119, rng).into(),
        digits(59, rng).into(),
    ]
}

/// The engine and its loaded `sbtest` table, in memory or on `dir` with the log written at
/// every commit and never synced.
fn sbtest_engine(dir: Option<&Path>) -> (Engine, Table) {
    let engine = match dir {
        Some(dir) => {
            let config = EngineConfig {
                commit: CommitConfig {
                    flush: FlushPolicy::Os,
                    ..CommitConfig::default()
                },
                ..EngineConfig::default()
            };
            Engine::open_dir(dir, config).expect("the engine opens").0
        }
        None => Engine::open(EngineConfig::default()).expect("a valid configuration"),
    };
    let schema = TableSchema::new(
        "sbtest1",
        vec![
            Column::new("id", ColumnType::BigInt),
            Column::new("k", ColumnType::BigInt),
            Column::new("c", ColumnType::Char(120)),
            Column::new("pad", ColumnType::Char(60)),
        ],
    )
    .primary_key(&["id"])
    .and_then(|s| s.index("k_1", &["k"], false))
    .expect("the columns exist");
    let table = engine.create_table(schema).expect("a new table");
    let mut rng = Rng::new(SBTEST_SEED, 1);
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    for id in 1..=SBTEST_ROWS {
        let k = rng.below(SBTEST_ROWS as u64) as i64;
        load.insert(&table, sbtest_row(id, k, &mut rng))
            .expect("a new key");
    }
    load.commit().expect("the load commits");
    (engine, table)
}

fn engine_commit(c: &mut Criterion) {
    let dir = log_dir("engine_commit");
    let configs = [
        ("memory", sbtest_engine(None)),
        ("log-os", sbtest_engine(Some(&dir))),
    ];
    let mut group = group(c, "engine_commit");
    group.throughput(Throughput::Elements(1));
    for (name, (engine, table)) in &configs {
        let mut rng = Rng::new(SBTEST_SEED, 2);
        let mut id = || Key::one(rng.below(SBTEST_ROWS as u64) as i64 + 1);
        group.bench_function(BenchmarkId::new(*name, "write_only"), |b| {
            b.iter(|| {
                let (a, b, gone) = (id(), id(), id());
                let mut trx = engine.begin_with(Isolation::ReadCommitted);
                trx.update_with(table, a, |row| {
                    let mut row = row.to_vec();
                    row[1] = (row[1].as_int().unwrap_or(0) + 1).into();
                    row
                })
                .expect("an update succeeds");
                trx.update_with(table, b, |row| {
                    let mut row = row.to_vec();
                    row[2] = "updated-c-".repeat(12).into();
                    row
                })
                .expect("an update succeeds");
                let old = trx
                    .get(table, gone.clone())
                    .expect("a read succeeds")
                    .expect("every id exists");
                trx.delete(table, gone).expect("a delete succeeds");
                trx.insert(table, old).expect("the id is free again");
                trx.commit().expect("the commit succeeds");
            });
        });
    }
    group.finish();
    drop(configs);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, group_commit, engine_commit);
criterion_main!(benches);
