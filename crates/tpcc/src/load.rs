//! Loading the initial database that `waterline-tpcc-data`'s [`Generator`] makes from a
//! seed: a seed fixes the loaded database whatever the number of loader threads
//! ([`crate::native::NativeDb::checksum`] tests that).
//!
//! Rows go to a [`Sink`] in batches; warehouses load in parallel, one loader per thread, with
//! a progress bar on a terminal.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use waterline_tpcc_data::Generator;
use waterline_txn::Row;

use crate::Error;
use crate::schema::{Scale, TABLES, TableDef};

pub use waterline_tpcc_data::generate::{cents, expected_rows, load_date};

/// Where loaded rows go: the engine's API, or INSERT statements.
pub trait Sink {
    /// Stores `rows` of `table` (one transaction, or one statement).
    fn insert(&mut self, table: &'static TableDef, rows: Vec<Row>) -> Result<(), Error>;
}

/// Rows per batch handed to a [`Sink`].
const BATCH: usize = 500;

/// Buffers rows per table and hands them to the sink `BATCH` at a time.
struct Batcher<'a, S: Sink> {
    sink: &'a mut S,
    /// Rows waiting, by position in [`TABLES`].
    pending: [Vec<Row>; TABLES.len()],
    rows: &'a AtomicU64,
    progress: &'a ProgressBar,
}

impl<S: Sink> Batcher<'_, S> {
    fn push(&mut self, table: &'static str, row: Row) -> Result<(), Error> {
        let i = TABLES
            .iter()
            .position(|t| t.name == table)
            .expect("a TPC-C table");
        self.pending[i].push(row);
        if self.pending[i].len() >= BATCH {
            self.send(i)?;
        }
        Ok(())
    }

    fn send(&mut self, i: usize) -> Result<(), Error> {
        let rows = std::mem::take(&mut self.pending[i]);
        let n = rows.len() as u64;
        self.sink.insert(&TABLES[i], rows)?;
        self.rows.fetch_add(n, Ordering::Relaxed);
        self.progress.inc(n);
        Ok(())
    }

    fn finish(mut self) -> Result<(), Error> {
        for i in 0..TABLES.len() {
            if !self.pending[i].is_empty() {
                self.send(i)?;
            }
        }
        Ok(())
    }
}

/// What a load did.
#[derive(Clone, Copy, Debug)]
pub struct LoadReport {
    /// Rows written.
    pub rows: u64,
    /// How long it took.
    pub elapsed: Duration,
}

/// Loads `scale` with `seed` through `threads` loaders, each with its own sink from
/// `sink` (called once per thread). ITEM and each warehouse are separate tasks.
pub fn load<S, F>(scale: Scale, seed: u64, threads: usize, sink: F) -> Result<LoadReport, Error>
where
    S: Sink,
    F: Fn() -> Result<S, Error> + Sync,
{
    scale.validate().map_err(Error::Config)?;
    let started = std::time::Instant::now();
    let generator = Generator { scale, seed };
    let next = AtomicI64::new(0);
    let rows = AtomicU64::new(0);
    let progress = ProgressBar::new(expected_rows(&scale));
    progress.set_style(
        ProgressStyle::with_template("loading {bar:40} {pos}/{len} rows, {per_sec}, eta {eta}")
            .expect("a valid template"),
    );
    let threads = threads.clamp(1, scale.warehouses as usize + 1);
    let results: Vec<Result<(), Error>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut sink = sink()?;
                    let mut out = Batcher {
                        sink: &mut sink,
                        pending: Default::default(),
                        rows: &rows,
                        progress: &progress,
                    };
                    loop {
                        // Relaxed: a task number only needs to be unique.
                        let task = next.fetch_add(1, Ordering::Relaxed);
                        match task {
                            0 => generator.items(&mut |table, row| out.push(table, row))?,
                            w if w <= scale.warehouses => {
                                generator.warehouse(w, &mut |table, row| out.push(table, row))?
                            }
                            _ => break,
                        }
                    }
                    out.finish()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a loader thread does not panic"))
            .collect()
    });
    progress.finish_and_clear();
    results.into_iter().collect::<Result<(), Error>>()?;
    Ok(LoadReport {
        rows: rows.into_inner(),
        elapsed: started.elapsed(),
    })
}
