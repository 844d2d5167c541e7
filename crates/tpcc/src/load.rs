//! The initial database (spec 4.3.3.1): ITEM once, then per warehouse its districts,
//! customers (with one HISTORY row each), orders (the last 30% undelivered, in NEW_ORDER),
//! order lines and stock.
//!
//! Every row comes from a [`Rng`] seeded by the run's seed and the warehouse (ITEM has its
//! own stream), and every date is one fixed load date, so a seed fixes the loaded database
//! whatever the number of loader threads: [`crate::native::NativeDb::checksum`] tests that.
//!
//! Rows go to a [`Sink`] in batches; warehouses load in parallel, one loader per thread, with
//! a progress bar on a terminal.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use waterline_txn::{DateTime, Decimal, Row, Value};

use crate::Error;
use crate::random::{Constants, Rng, TpccRng, last_name, nurand_a};
use crate::schema::{DISTRICTS, Scale, TABLES, TableDef};

/// Where loaded rows go: the engine's API, or INSERT statements.
pub trait Sink {
    /// Stores `rows` of `table` (one transaction, or one statement).
    fn insert(&mut self, table: &'static TableDef, rows: Vec<Row>) -> Result<(), Error>;
}

/// Rows per batch handed to a [`Sink`].
const BATCH: usize = 500;

/// The date every loaded row carries (c_since, o_entry_d, h_date, ol_delivery_d).
pub fn load_date() -> DateTime {
    DateTime::from_ymd_hms(2026, 1, 1, 0, 0, 0).expect("a valid date")
}

/// `n` hundredths as DECIMAL(_, 2).
pub fn cents(n: i64) -> Value {
    Value::Decimal(Decimal::new(n.into(), 2).expect("fits a decimal"))
}

/// `n` ten-thousandths as DECIMAL(4, 4) (tax and discount rates).
fn rate(n: i64) -> Value {
    Value::Decimal(Decimal::new(n.into(), 4).expect("fits a decimal"))
}

fn s(text: impl Into<String>) -> Value {
    Value::from(text.into())
}

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

/// Generates the rows of one load task: `None` is ITEM, `Some(w)` is warehouse `w`.
struct Generator {
    scale: Scale,
    seed: u64,
}

impl Generator {
    fn items<S: Sink>(&self, out: &mut Batcher<'_, S>) -> Result<(), Error> {
        let mut rng = Rng::new(self.seed, 0);
        for i in 1..=self.scale.items {
            out.push(
                "item",
                vec![
                    Value::Int(i),
                    Value::Int(rng.uniform(1, 10_000)),
                    s(rng.astring(14, 24)),
                    cents(rng.uniform(100, 10_000)),
                    s(rng.data(26, 50)),
                ],
            )?;
        }
        Ok(())
    }

    fn warehouse<S: Sink>(&self, w: i64, out: &mut Batcher<'_, S>) -> Result<(), Error> {
        let mut rng = Rng::new(self.seed, w as u64);
        let date = Value::DateTime(load_date());
        let mut row = vec![Value::Int(w), s(rng.astring(6, 10))];
        row.extend(address(&mut rng));
        row.extend([rate(rng.uniform(0, 2000)), cents(30_000_000)]);
        out.push("warehouse", row)?;
        for i in 1..=self.scale.items {
            let mut row = vec![
                Value::Int(w),
                Value::Int(i),
                Value::Int(rng.uniform(10, 100)),
            ];
            row.extend((0..10).map(|_| s(rng.astring(24, 24))));
            row.extend([
                Value::Int(0),
                Value::Int(0),
                Value::Int(0),
                s(rng.data(26, 50)),
            ]);
            out.push("stock", row)?;
        }
        let customers = self.scale.customers;
        let name_a = nurand_a(1000, 4);
        for d in 1..=DISTRICTS {
            let mut row = vec![Value::Int(w), Value::Int(d), s(rng.astring(6, 10))];
            row.extend(address(&mut rng));
            row.extend([
                rate(rng.uniform(0, 2000)),
                cents(3_000_000),
                Value::Int(customers + 1),
            ]);
            out.push("district", row)?;
            for c in 1..=customers {
                let last = if c <= 1000 {
                    last_name(c - 1)
                } else {
                    last_name(rng.nurand(name_a, Constants::LOAD.c_last, 0, 999))
                };
                let mut row = vec![
                    Value::Int(w),
                    Value::Int(d),
                    Value::Int(c),
                    s(rng.astring(8, 16)),
                    s("OE"),
                    s(last),
                ];
                row.extend(address(&mut rng)[..5].iter().cloned());
                row.extend([
                    s(rng.nstring(16)),
                    date.clone(),
                    s(if rng.percent(10) { "BC" } else { "GC" }),
                    cents(5_000_000),
                    rate(rng.uniform(0, 5000)),
                    cents(-1000),
                    cents(1000),
                    Value::Int(1),
                    Value::Int(0),
                    s(rng.astring(300, 500)),
                ]);
                out.push("customer", row)?;
                out.push(
                    "history",
                    vec![
                        Value::Int(c),
                        Value::Int(d),
                        Value::Int(w),
                        Value::Int(d),
                        Value::Int(w),
                        date.clone(),
                        cents(1000),
                        s(rng.astring(12, 24)),
                    ],
                )?;
            }
            // Orders: customers in a random permutation (spec 4.3.3.1).
            let mut order_customer: Vec<i64> = (1..=customers).collect();
            for i in (1..order_customer.len()).rev() {
                let j = rng.uniform(0, i as i64) as usize;
                order_customer.swap(i, j);
            }
            let first_undelivered = customers - self.scale.undelivered() + 1;
            for o in 1..=customers {
                let delivered = o < first_undelivered;
                let lines = rng.uniform(5, 15);
                out.push(
                    "orders",
                    vec![
                        Value::Int(w),
                        Value::Int(d),
                        Value::Int(o),
                        Value::Int(order_customer[o as usize - 1]),
                        date.clone(),
                        if delivered {
                            Value::Int(rng.uniform(1, 10))
                        } else {
                            Value::Null
                        },
                        Value::Int(lines),
                        Value::Int(1),
                    ],
                )?;
                for n in 1..=lines {
                    out.push(
                        "order_line",
                        vec![
                            Value::Int(w),
                            Value::Int(d),
                            Value::Int(o),
                            Value::Int(n),
                            Value::Int(rng.uniform(1, self.scale.items)),
                            Value::Int(w),
                            if delivered { date.clone() } else { Value::Null },
                            Value::Int(5),
                            if delivered {
                                cents(0)
                            } else {
                                cents(rng.uniform(1, 999_999))
                            },
                            s(rng.astring(24, 24)),
                        ],
                    )?;
                }
                if !delivered {
                    out.push(
                        "new_order",
                        vec![Value::Int(w), Value::Int(d), Value::Int(o)],
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// street_1, street_2, city, state, zip.
fn address(rng: &mut Rng) -> [Value; 5] {
    [
        s(rng.astring(10, 20)),
        s(rng.astring(10, 20)),
        s(rng.astring(10, 20)),
        s(rng.astring(2, 2).to_ascii_uppercase()),
        s(rng.zip()),
    ]
}

/// Rows a load of `scale` writes, about (order lines are 5 to 15 an order: 10 counted).
pub fn expected_rows(scale: &Scale) -> u64 {
    let per_district = scale.customers * 2 + scale.customers * 11 + scale.undelivered() + 1;
    (scale.items + scale.warehouses * (1 + scale.items + DISTRICTS * per_district)) as u64
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
                            0 => generator.items(&mut out)?,
                            w if w <= scale.warehouses => generator.warehouse(w, &mut out)?,
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
