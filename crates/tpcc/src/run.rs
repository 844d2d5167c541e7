//! One measured point: run the driver against a loaded [`Target`], read the engine's
//! counters (and the group-commit pipeline's) and the engine process's CPU time, context
//! switches and memory over the measured time (the server's over `mysql://`), and the share
//! of this machine's CPU time the hypervisor stole meanwhile, then check consistency.

use parking_lot::Mutex;
use waterline_txn::{GroupCommitStats, StatsSnapshot};

use crate::Error;
use crate::backend::Target;
use crate::driver::{DriverOptions, OnThreadStart, Runtime};
use crate::process::Usage;
use crate::report::Point;
use crate::steal::CpuTimes;

/// The counters at one moment: the engine's, its group-commit pipeline's, the process's,
/// and this machine's CPU time (for the share the hypervisor stole).
type Reading = (
    Option<StatsSnapshot>,
    Option<GroupCommitStats>,
    Option<Usage>,
    Option<CpuTimes>,
);

/// Runs `options` against `target` and checks the database afterwards.
pub fn run_point(target: &Target, config: &str, options: &DriverOptions) -> Result<Point, Error> {
    run_point_on(target, config, options, None)
}

/// [`run_point`], with `on_start` run on every client thread (or tokio worker) as it starts.
pub fn run_point_on(
    target: &Target,
    config: &str,
    options: &DriverOptions,
    on_start: Option<&OnThreadStart>,
) -> Result<Point, Error> {
    let window: Mutex<(Reading, Reading)> = Mutex::new(Default::default());
    let on_measure = |starting: bool| {
        let now = (
            target.stats(),
            target.engine().and_then(|e| e.commit_stats()),
            target.usage(),
            CpuTimes::now(),
        );
        let mut w = window.lock();
        if starting { w.0 = now } else { w.1 = now }
    };
    let measurement = match options.runtime {
        Runtime::Threads => target.run_threads(options, on_start, &on_measure),
        Runtime::Tasks { workers } => {
            target.run_tasks(options, workers, on_start.cloned(), &on_measure)
        }
    };
    let (
        (stats_before, commit_before, usage_before, cpu_before),
        (stats_after, commit_after, usage_after, cpu_after),
    ) = window.into_inner();
    let stats = stats_before
        .zip(stats_after)
        .map(|(before, after)| after.since(&before));
    let commit = commit_before
        .zip(commit_after)
        .map(|(before, after)| after.since(&before));
    let process = usage_before
        .zip(usage_after)
        .map(|(before, after)| after.since(&before));
    let facts = target.facts()?;
    Ok(Point {
        config: config.to_owned(),
        effective: target.effective()?,
        clients: options.clients,
        round: 1,
        measurement,
        stats,
        commit,
        process,
        steal: cpu_before
            .zip(cpu_after)
            .map(|(before, after)| after.steal_share_since(&before)),
        order_lines: facts.districts.values().map(|d| d.order_lines).sum(),
        violations: facts.violations(),
    })
}
