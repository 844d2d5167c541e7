//! One measured point: run the driver against a loaded [`Target`], read the engine's
//! counters over the measured time, then check consistency.

use parking_lot::Mutex;
use waterline_txn::StatsSnapshot;

use crate::Error;
use crate::backend::Target;
use crate::driver::{DriverOptions, Runtime, run_tasks, run_threads};
use crate::report::Point;

/// Runs `options` against `target` and checks the database afterwards.
pub fn run_point(target: &Target, config: &str, options: &DriverOptions) -> Result<Point, Error> {
    let window: Mutex<(Option<StatsSnapshot>, Option<StatsSnapshot>)> = Mutex::new((None, None));
    let on_measure = |starting: bool| {
        let now = target.stats();
        let mut w = window.lock();
        if starting { w.0 = now } else { w.1 = now }
    };
    let measurement = match options.runtime {
        Runtime::Threads => run_threads(options, |_| target.connect(), &on_measure),
        Runtime::Tasks { workers } => {
            let db = target.native().ok_or_else(|| {
                Error::Config(
                    "tokio tasks need the native backend (SQL clients block their thread); \
                     use --runtime threads"
                        .into(),
                )
            })?;
            run_tasks(options, workers, db, &on_measure)
        }
    };
    let stats = match window.into_inner() {
        (Some(before), Some(after)) => Some(after.since(&before)),
        _ => None,
    };
    let violations = target.facts()?.violations();
    Ok(Point {
        config: config.to_owned(),
        clients: options.clients,
        measurement,
        stats,
        violations,
    })
}
