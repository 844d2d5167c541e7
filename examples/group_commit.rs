//! Many threads committing 100-byte records through the group-commit pipeline, as the
//! `group_commit` bench does, once, with the pipeline's counters printed: small enough to run
//! under `perf stat` and see where a commit's time goes (context switches, CPU per commit).
//!
//! ```text
//! cargo run --release --example group_commit -- <broadcast|parker> <every-commit|os|none> <threads> <commits>
//! perf stat -e task-clock,context-switches target/release/examples/group_commit parker every-commit 256 200000
//! ```
//!
//! The log goes to a fresh directory under the system's temp dir, removed at the end.

use std::sync::Barrier;
use std::time::Instant;

use waterline::commit::{
    FlushPolicy, GroupCommit, GroupCommitConfig, TrxTag, Wakeup, Wal, WalConfig,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: group_commit <broadcast|parker> <every-commit|os|none> <threads> <commits>";
    let [wakeup, flush, threads, commits] = args.as_slice() else {
        return Err(usage.into());
    };
    let wakeup = match wakeup.as_str() {
        "broadcast" => Wakeup::Broadcast,
        "parker" => Wakeup::Parker,
        _ => return Err(usage.into()),
    };
    let flush = match flush.as_str() {
        "every-commit" => FlushPolicy::EveryCommit,
        "os" => FlushPolicy::Os,
        "none" => FlushPolicy::None,
        _ => return Err(usage.into()),
    };
    let threads: u64 = threads.parse().map_err(|_| usage)?;
    let per_thread = commits.parse::<u64>().map_err(|_| usage)? / threads.max(1);

    let dir = std::env::temp_dir().join(format!("waterline-group-commit-{}", std::process::id()));
    let wal = match flush {
        FlushPolicy::None => None,
        flush => Some(
            Wal::open(
                &dir,
                WalConfig {
                    flush,
                    ..WalConfig::default()
                },
            )?
            .0,
        ),
    };
    let config = GroupCommitConfig {
        wakeup,
        ..GroupCommitConfig::default()
    };
    let pipeline = GroupCommit::new(config, wal, Box::new(|_: Vec<u64>| Ok(())));
    let start = Barrier::new(threads as usize + 1);
    let began = std::thread::scope(|s| {
        for t in 0..threads {
            let (pipeline, start) = (&pipeline, &start);
            s.spawn(move || {
                start.wait();
                for i in 0..per_thread {
                    let n = t << 32 | i;
                    pipeline
                        .commit(TrxTag(n), vec![0xA5; 100], n)
                        .expect("the commit succeeds");
                }
            });
        }
        start.wait();
        Instant::now() // the scope joins the committers before it returns
    });
    let seconds = began.elapsed().as_secs_f64();
    let stats = pipeline.stats();
    let per = |n: u64| n as f64 / stats.commits.max(1) as f64;
    eprintln!(
        "{} commits in {seconds:.3} s = {:.0} commits/s; flush groups of {:.2}, {} commits per fsync, \
         {:.2} wake-ups and {:.2} wasted a commit, wake-up efficiency {}",
        stats.commits,
        stats.commits as f64 / seconds,
        stats.mean_group_size().unwrap_or(0.0),
        match stats.fsyncs {
            0 => "no fsync, so no".to_owned(),
            n => format!("{:.1}", stats.commits as f64 / n as f64),
        },
        per(stats.wakeups),
        per(stats.wasted_wakeups),
        stats
            .wakeup_efficiency()
            .map_or("n/a (nobody slept)".to_owned(), |e| format!(
                "{:.1}%",
                e * 100.0
            )),
    );
    drop(pipeline);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
