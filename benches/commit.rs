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
//! After measuring, each configuration runs a few rounds more and records, from the
//! pipeline's own counters, the mean group size, fsyncs per commit, and the wake-up
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

criterion_group!(benches, group_commit);
criterion_main!(benches);
