//! What the multi-threaded benches share: rounds of operations on many threads with a
//! clean start signal, criterion group settings, and the side file of engine counters.

#![allow(dead_code)] // each bench uses its own part

use std::collections::BTreeMap;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{Criterion, SamplingMode};

/// Operations in one round (one criterion iteration), spread evenly over the threads.
pub const OPS_PER_ROUND: usize = 4096;

/// Operations each thread runs per round: a round is about `OPS_PER_ROUND` operations, at
/// least 16 a thread.
pub fn per_thread(threads: usize) -> u64 {
    (OPS_PER_ROUND / threads).max(16) as u64
}

/// Runs `rounds` rounds on `threads` threads (each with its own state from `init`): every
/// thread does `per_thread(threads) * rounds` operations. Returns the wall time from the
/// start signal until the last thread is done (spawning excluded). Criterion's throughput is
/// set to one round's operations, so its per-element time is the time per operation.
pub fn rounds<S>(
    threads: usize,
    rounds: u64,
    init: impl Fn(usize) -> S + Sync,
    op: impl Fn(&mut S) + Sync,
) -> Duration {
    let ops = per_thread(threads) * rounds;
    // Two barriers: the clock starts only when every thread is ready, and before any can go
    // (a single barrier let this thread read the clock after others had already worked).
    let (ready, go) = (Barrier::new(threads + 1), Barrier::new(threads + 1));
    let mut started = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let (ready, go, init, op) = (&ready, &go, &init, &op);
            s.spawn(move || {
                let mut state = init(t);
                ready.wait();
                go.wait();
                for _ in 0..ops {
                    op(&mut state);
                }
            });
        }
        ready.wait();
        started = Instant::now();
        go.wait();
    });
    started.elapsed()
}

/// Counters by function, then parameter, then name.
pub type CounterFile = BTreeMap<String, BTreeMap<String, BTreeMap<&'static str, f64>>>;

pub fn save(group: &str, counters: &CounterFile) {
    // Next to criterion's own results, which follow CARGO_TARGET_DIR too.
    let target = std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| "target".into());
    let dir = std::path::Path::new(&target).join("criterion").join(group);
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

pub fn group<'a>(c: &'a mut Criterion, name: &str) -> criterion::BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(1));
    group
}
