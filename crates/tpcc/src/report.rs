//! Reports: a sweep's points as CSV, JSON and an SVG plot of throughput against clients, in
//! one directory, and a text summary for the terminal.
//!
//! Definitions, as written into every JSON report:
//! - `tpmc`: NewOrder transactions completed per minute of measured time (the 1% that roll
//!   back by design included, as the spec counts them). No keying or think time, so this is
//!   not a TPC-C result and not comparable with published tpmC figures.
//! - `txn_per_sec`: transactions of all five types completed per second of measured time.
//! - latencies: from the first try to the end, retries included, in milliseconds.
//! - `process`: the engine process's CPU time (user and kernel), context switches and
//!   resident-memory growth over the measured time, per transaction (see
//!   [`crate::process`]; the server's over `mysql://`).
//! - `cpu_steal_share`: the share of the driver's machine's CPU time the hypervisor gave to
//!   other guests over the measured time ([`crate::steal::CpuTimes`]).
//! - `medians`: each configuration's throughput at each client count over the sweep's
//!   rounds (see [`Median`]): the median, the lowest and highest, and against the first
//!   configuration the median of the rounds' ratios. On a noisy machine one run says
//!   little; the rounds, taking turns, are the evidence.
//!
//! The CSV, the JSON and the summary text are written from the same points and agree column
//! for column; `plot.rs` draws them.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use plotters::prelude::*;
use serde_json::{Value as Json, json};
use waterline_txn::{Counter, GroupCommitStats, StatsSnapshot};

use crate::driver::{Limit, Measurement, Runtime};
pub use crate::host::{Machine, Topology};
use crate::input::Kind;
use crate::plot::{Labels, category_chart, draw_legend, draw_line};
use crate::process::Spent;
use crate::schema::Scale;

/// The definitions above, as the JSON report carries them.
pub const DEFINITIONS: [(&str, &str); 6] = [
    (
        "tpmc",
        "NewOrder transactions completed per minute of measured time, including the 1% that \
         roll back by design; no keying or think time, so not comparable with published tpmC",
    ),
    (
        "txn_per_sec",
        "transactions of all five types completed per second of measured time",
    ),
    (
        "latency",
        "milliseconds from a transaction's first try to its end, retries included",
    ),
    (
        "process",
        "the engine process's CPU time in user mode and in the kernel, context switches and \
         resident memory's growth, over the measured time, from /proc: this process (the \
         engine and the driver) for an in-process backend; over mysql://, the server's, as \
         a waterline server reports them in SHOW STATUS (absent for other servers)",
    ),
    (
        "cpu_steal_share",
        "the share, 0 to 1, of the CPU time of the machine the driver ran on that the \
         hypervisor gave to other guests over the measured time (steal in /proc/stat); above \
         0.05 the summary warns that the point measured the host's load as much as the engine",
    ),
    (
        "medians",
        "per configuration and client count, txn_per_sec over the rounds: the median, the \
         lowest and the highest; ratio_to_baseline is the median over the rounds of this \
         configuration's txn_per_sec divided by the first configuration's in the same round \
         (the median of its points in that round, where a timeline measured several \
         segments), and rounds_won how many of those ratios were above 1",
    ),
];

/// One configuration at one client count, over the sweep's rounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Median {
    /// The configuration's label.
    pub config: String,
    /// Clients.
    pub clients: usize,
    /// Points measured: one per round (in a timeline of segments of the same round, as
    /// `waterline lab planner` runs, one per segment).
    pub rounds: usize,
    /// Median txn/s (of an even count, the mean of the middle two).
    pub txn_per_sec: f64,
    /// Lowest txn/s of a round.
    pub lowest: f64,
    /// Highest txn/s of a round.
    pub highest: f64,
    /// Against the first configuration (the baseline), `None` for the baseline itself: the
    /// median over the rounds of the ratio of this configuration's txn/s to the baseline's
    /// in the same round (the median of the baseline's points in that round, when a
    /// timeline measured several), and how many of those ratios were above 1.
    pub against_baseline: Option<(f64, usize)>,
}

/// The median of `values` (of an even count, the mean of the middle two); `NaN` if empty.
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// One measured point: a configuration at a client count.
#[derive(Clone, Debug)]
pub struct Point {
    /// The configuration's label (`default`, or `snapshot=vector`).
    pub config: String,
    /// The configuration in force, read back from the engine and a client's session
    /// ([`crate::Target::effective`]), not from the command line.
    pub effective: String,
    /// Clients.
    pub clients: usize,
    /// Which round of the sweep (`--rounds`) this point belongs to, from 1.
    pub round: usize,
    /// What the driver measured.
    pub measurement: Measurement,
    /// The engine's counters over the measured time (in-process backends).
    pub stats: Option<StatsSnapshot>,
    /// The group-commit pipeline's counters over the measured time (in-process backends
    /// with `--data-dir`: an in-memory engine has no pipeline).
    pub commit: Option<GroupCommitStats>,
    /// What the engine's process spent over the measured time: this one in-process, the
    /// server's over `mysql://` (`None` where `/proc` cannot tell, or the server does not
    /// say).
    pub process: Option<Spent>,
    /// The share of this machine's CPU time (where the driver runs) the hypervisor gave to
    /// other guests over the measured time, 0 to 1 (see [`crate::steal::CpuTimes`]).
    pub steal: Option<f64>,
    /// ORDER_LINE rows after the run (from the consistency check's count).
    pub order_lines: i64,
    /// Consistency conditions that failed after the run (empty: all held).
    pub violations: Vec<String>,
}

impl Point {
    /// Whether the run was clean: no errors, every condition held.
    pub fn ok(&self) -> bool {
        self.violations.is_empty() && self.measurement.error_count == 0
    }

    /// What the process spent per transaction (`None` where `/proc/self` cannot tell).
    pub fn per_txn(&self) -> Option<PerTxn> {
        let n = self.measurement.completed();
        self.process.map(|p| PerTxn {
            cpu_us: p.cpu_us_per_txn(n),
            system_share: p.system_share(),
            resident_growth: p.resident_growth_per_txn(n),
            switches: p.switches_per_txn(n),
        })
    }

    /// The time held inside each latch the engine's transactions share, per committed
    /// transaction, over the point (in-process backends; empty without a commit).
    pub fn latches(&self) -> Vec<LatchHold> {
        let mut out = Vec::new();
        if let Some(stats) = &self.stats {
            let commits = stats.get(Counter::Commits);
            let mut add = |latch, shards, acquired: u64, held: u64| {
                if commits > 0 && acquired > 0 {
                    out.push(LatchHold {
                        latch,
                        shards,
                        ns_per_commit: held as f64 / commits as f64,
                        acquisitions_per_commit: acquired as f64 / commits as f64,
                    });
                }
            };
            add(
                "trx-sys",
                false,
                stats.get(Counter::TrxSysLatch),
                stats.get(Counter::TrxSysLatchHeldNs),
            );
            add(
                "registry",
                true,
                stats.get(Counter::RegistryLatch),
                stats.get(Counter::RegistryLatchHeldNs),
            );
            add(
                "lock table",
                true,
                stats.get(Counter::LockTableLatch),
                stats.get(Counter::LockTableLatchHeldNs),
            );
        }
        if let Some(c) = &self.commit
            && c.commits > 0
        {
            for (stage, held) in waterline_txn::COMMIT_STAGES.iter().zip(c.stage_held_ns) {
                out.push(LatchHold {
                    latch: stage,
                    shards: false,
                    ns_per_commit: held as f64 / c.commits as f64,
                    acquisitions_per_commit: c.groups as f64 / c.commits as f64,
                });
            }
        }
        out
    }

    /// The latch of [`Point::latches`] whose ceiling is lowest, if one has a ceiling.
    pub fn tightest_latch(&self) -> Option<LatchHold> {
        self.latches()
            .into_iter()
            .filter(|l| l.ceiling().is_some())
            .min_by(|a, b| {
                a.ceiling()
                    .partial_cmp(&b.ceiling())
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
    }

    fn consistency(&self) -> Json {
        if self.violations.is_empty() {
            json!("ok")
        } else {
            json!(self.violations)
        }
    }
}

/// How long one latch the engine's transactions share was held, per committed transaction
/// (see [`Point::latches`]): the trx-sys latch, the registry's and the lock table's shards
/// (sampled, one hold in `waterline_sync::held::SAMPLE_EVERY`), and the group-commit
/// stages (every hold).
#[derive(Clone, Copy, Debug)]
pub struct LatchHold {
    /// The latch: `trx-sys`, `registry`, `lock table`, or a group-commit stage (`flush`,
    /// `sync`, `commit`).
    pub latch: &'static str,
    /// One of many shards (the registry's, the lock table's): the time is spread over them,
    /// so it implies no single ceiling.
    pub shards: bool,
    /// Nanoseconds held per committed transaction.
    pub ns_per_commit: f64,
    /// Acquisitions per committed transaction (a group-commit stage: groups per commit).
    pub acquisitions_per_commit: f64,
}

impl LatchHold {
    /// The most transactions per second the latch lets through on any number of cores:
    /// 1e9 / the nanoseconds it is held per transaction. A bound computed from a
    /// measurement, not a measurement of a larger machine; `None` for a sharded latch.
    pub fn ceiling(&self) -> Option<f64> {
        (!self.shards && self.ns_per_commit > 0.0).then(|| 1e9 / self.ns_per_commit)
    }

    /// Nanoseconds per acquisition.
    pub fn ns_per_acquisition(&self) -> f64 {
        self.ns_per_commit / self.acquisitions_per_commit
    }

    /// "trx-sys 412 ns/txn (38 ns x 10.8), ceiling 2.43M txn/s", as the summaries say it.
    pub fn describe(&self) -> String {
        let mut out = format!(
            "{} {:.0} ns/txn ({:.0} ns x {:.2})",
            self.latch,
            self.ns_per_commit,
            self.ns_per_acquisition(),
            self.acquisitions_per_commit
        );
        match self.ceiling() {
            Some(c) => out.push_str(&format!(", ceiling {}", txn_rate(c))),
            None => out.push_str(", sharded"),
        }
        out
    }
}

/// A rate of transactions per second, in thousands or millions.
pub fn txn_rate(per_sec: f64) -> String {
    if per_sec >= 1e6 {
        format!("{:.2}M txn/s", per_sec / 1e6)
    } else {
        format!("{:.0}k txn/s", per_sec / 1e3)
    }
}

/// The summary's paragraph on what [`Point::latches`] are, for a report that has them.
pub const LATCH_NOTE: &str = "Time held inside each latch the transactions share, per \
committed transaction (the trx-sys latch and the registry's and lock table's shards sampled one \
hold in 32, the group-commit stages every hold), and the most transactions per second a latch \
held that long lets through on any number of cores (1e9 / ns): a bound computed from this \
measurement, not a measurement of a larger machine. A sharded latch spreads its time over its \
shards and implies no single bound.";

/// What the process spent per transaction (see [`crate::process::Spent`]).
#[derive(Clone, Copy, Debug)]
pub struct PerTxn {
    /// CPU µs, user and kernel.
    pub cpu_us: f64,
    /// The kernel's share of the CPU time, 0 to 1.
    pub system_share: f64,
    /// Resident memory growth, bytes.
    pub resident_growth: f64,
    /// Voluntary and involuntary context switches.
    pub switches: (f64, f64),
}

/// What was run.
#[derive(Clone, Debug)]
pub struct RunInfo {
    /// The backend (password removed).
    pub backend: String,
    /// The database's size.
    pub scale: Scale,
    /// The seed.
    pub seed: u64,
    /// Not counted.
    pub warmup_secs: f64,
    /// The measured part.
    pub limit: Limit,
    /// Threads or tasks.
    pub runtime: Runtime,
    /// The machine, and how threads were placed on it.
    pub machine: Machine,
    /// Rows loaded and how long that took.
    pub load: (u64, f64),
    /// The commit the running binary was built from (`waterline`'s build script), e.g.
    /// `1a2b3c... (with uncommitted changes)`.
    pub build: String,
    /// The Cargo profile it was built with.
    pub profile: BuildProfile,
}

/// The Cargo profile a binary was built with, as its build script recorded it: what a
/// measurement made with that binary means depends on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildProfile {
    /// The profile's name: `measure` where numbers are made, `release` for a quick optimized
    /// build, `dev` for a debug one.
    pub name: String,
    /// `opt-level`.
    pub opt_level: String,
    /// `lto` as the manifest sets it (`false` is Cargo's default, LTO within each crate only).
    pub lto: String,
    /// `codegen-units`.
    pub codegen_units: String,
}

impl BuildProfile {
    /// The profile measurements are made with (Cargo.toml's `[profile.measure]`).
    pub const MEASUREMENT: &str = "measure";

    /// For tests and for a binary that cannot say.
    pub fn unknown() -> BuildProfile {
        let unknown = || "unknown".to_owned();
        BuildProfile {
            name: unknown(),
            opt_level: unknown(),
            lto: unknown(),
            codegen_units: unknown(),
        }
    }

    /// Whether this is the measurement profile.
    pub fn is_measurement(&self) -> bool {
        self.name == Self::MEASUREMENT
    }

    /// `measure (opt-level 3, lto fat, codegen-units 1)`.
    pub fn describe(&self) -> String {
        format!(
            "{} (opt-level {}, lto {}, codegen-units {})",
            self.name, self.opt_level, self.lto, self.codegen_units
        )
    }

    /// What every report says of the profile: [`describe`](Self::describe), and for any
    /// profile but the measurement one, that it is not it.
    pub fn stated(&self) -> String {
        if self.is_measurement() {
            self.describe()
        } else {
            format!(
                "{}; not the measurement profile: build with `--profile measure` \
                 (target/measure/) for numbers to compare",
                self.describe()
            )
        }
    }

    /// For results.json.
    pub fn json(&self) -> Json {
        json!({
            "name": self.name,
            "opt_level": self.opt_level,
            "lto": self.lto,
            "codegen_units": self.codegen_units,
            "measurement_profile": self.is_measurement(),
        })
    }
}

/// A whole sweep.
#[derive(Clone, Debug)]
pub struct Report {
    /// What was run.
    pub info: RunInfo,
    /// The points, in run order.
    pub points: Vec<Point>,
}

fn scale_json(scale: &Scale) -> Json {
    json!({
        "warehouses": scale.warehouses,
        "items": scale.items,
        "customers_per_district": scale.customers,
        "standard": scale.is_standard(),
    })
}

impl Report {
    /// Rounds in the sweep (the highest round of a point; 1 for a single run).
    pub fn rounds(&self) -> usize {
        self.points.iter().map(|p| p.round).max().unwrap_or(1)
    }

    /// The configurations, in the order of their first point (the first is the baseline).
    fn configs(&self) -> Vec<&str> {
        let mut configs: Vec<&str> = Vec::new();
        for p in &self.points {
            if !configs.contains(&p.config.as_str()) {
                configs.push(&p.config);
            }
        }
        configs
    }

    /// The client counts, ascending.
    fn client_counts(&self) -> Vec<usize> {
        let mut clients: Vec<usize> = self.points.iter().map(|p| p.clients).collect();
        clients.sort_unstable();
        clients.dedup();
        clients
    }

    /// Each configuration at each client count over the rounds: by clients, then the
    /// configurations in the order of their first point.
    pub fn medians(&self) -> Vec<Median> {
        let configs = self.configs();
        // A round's txn/s of a configuration: its point's, or the median of its points when
        // a timeline measured it in several segments.
        let txn = |config: &str, clients: usize, round: usize| {
            let of_round: Vec<f64> = self
                .points
                .iter()
                .filter(|p| p.config == config && p.clients == clients && p.round == round)
                .map(|p| p.measurement.txn_per_sec())
                .collect();
            (!of_round.is_empty()).then(|| median(of_round))
        };
        let mut out = Vec::new();
        for clients in self.client_counts() {
            for config in &configs {
                let runs: Vec<(usize, f64)> = self
                    .points
                    .iter()
                    .filter(|p| p.config == *config && p.clients == clients)
                    .map(|p| (p.round, p.measurement.txn_per_sec()))
                    .collect();
                if runs.is_empty() {
                    continue;
                }
                let values: Vec<f64> = runs.iter().map(|&(_, t)| t).collect();
                let against_baseline = (*config != configs[0]).then(|| {
                    let ratios: Vec<f64> = runs
                        .iter()
                        .filter_map(|&(round, t)| {
                            txn(configs[0], clients, round)
                                .filter(|&base| base > 0.0)
                                .map(|base| t / base)
                        })
                        .collect();
                    let won = ratios.iter().filter(|&&r| r > 1.0).count();
                    (median(ratios), won)
                });
                out.push(Median {
                    config: (*config).to_owned(),
                    clients,
                    rounds: values.len(),
                    txn_per_sec: median(values.clone()),
                    lowest: values.iter().copied().fold(f64::INFINITY, f64::min),
                    highest: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    against_baseline,
                });
            }
        }
        out
    }

    /// The report as JSON.
    pub fn json(&self) -> Json {
        let info = &self.info;
        let points: Vec<Json> = self
            .points
            .iter()
            .map(|p| {
                let m = &p.measurement;
                let kinds: serde_json::Map<String, Json> = Kind::ALL
                    .iter()
                    .map(|k| {
                        let s = &m.kinds[k.index()];
                        let v = json!({
                            "committed": s.committed,
                            "rolled_back": s.rolled_back,
                            "mean_ms": s.mean_ms(),
                            "p50_ms": s.quantile_ms(0.50),
                            "p95_ms": s.quantile_ms(0.95),
                            "p99_ms": s.quantile_ms(0.99),
                            "max_ms": s.max_ms(),
                        });
                        (k.name().to_owned(), v)
                    })
                    .collect();
                let stats = p.stats.map(|s| {
                    Counter::ALL
                        .iter()
                        .map(|c| (c.name().to_owned(), json!(s.get(*c))))
                        .collect::<serde_json::Map<_, _>>()
                });
                json!({
                    "config": p.config,
                    "effective": p.effective,
                    "clients": p.clients,
                    "round": p.round,
                    "tpmc": m.tpmc(),
                    "txn_per_sec": m.txn_per_sec(),
                    "elapsed_secs": m.elapsed.as_secs_f64(),
                    "transactions": kinds,
                    "deadlock_retries": m.deadlock_retries,
                    "lock_wait_timeout_retries": m.timeout_retries,
                    "errors": m.errors,
                    "error_count": m.error_count,
                    "consistency": p.consistency(),
                    "order_lines": p.order_lines,
                    "engine_stats": stats,
                    "group_commit": p.commit.map(|c| commit_json(&c)),
                    "cpu_steal_share": p.steal,
                    "process": p.process.zip(p.per_txn()).map(|(s, t)| json!({
                        "user_secs": s.user.as_secs_f64(),
                        "system_secs": s.system.as_secs_f64(),
                        "cpu_us_per_txn": t.cpu_us,
                        "system_share": t.system_share,
                        "resident_growth_bytes": s.resident_growth,
                        "resident_growth_bytes_per_txn": t.resident_growth,
                        "voluntary_switches": s.switches.voluntary,
                        "involuntary_switches": s.switches.involuntary,
                        "voluntary_switches_per_txn": t.switches.0,
                        "involuntary_switches_per_txn": t.switches.1,
                    })),
                })
            })
            .collect();
        let limit = match info.limit {
            Limit::Duration(d) => json!({ "duration_secs": d.as_secs_f64() }),
            Limit::Count(n) => json!({ "transactions": n }),
        };
        let runtime = match info.runtime {
            Runtime::Threads => json!("threads"),
            Runtime::Tasks { workers } => json!({ "tokio_tasks_on_workers": workers }),
        };
        json!({
            "run": {
                "built_from": info.build,
                "build_profile": info.profile.json(),
                "backend": info.backend,
                "scale": scale_json(&info.scale),
                "seed": info.seed,
                "warmup_secs": info.warmup_secs,
                "limit": limit,
                "runtime": runtime,
                "cpus": info.machine.cpus,
                "machine": info.machine.json(),
                "loaded_rows": info.load.0,
                "load_secs": info.load.1,
                "rounds": self.rounds(),
            },
            "definitions": DEFINITIONS.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "points": points,
            "medians": self.medians().iter().map(|m| json!({
                "config": m.config,
                "clients": m.clients,
                "rounds": m.rounds,
                "txn_per_sec": m.txn_per_sec,
                "lowest_txn_per_sec": m.lowest,
                "highest_txn_per_sec": m.highest,
                "ratio_to_baseline": m.against_baseline.map(|(r, _)| r),
                "rounds_won": m.against_baseline.map(|(_, w)| w),
            })).collect::<Vec<_>>(),
        })
    }

    /// The report as CSV: one line per point.
    pub fn csv(&self) -> String {
        let mut out = String::from("config,clients,tpmc,txn_per_sec");
        for k in Kind::ALL {
            let n = k.name();
            let _ = write!(
                out,
                ",{n}_count,{n}_mean_ms,{n}_p50_ms,{n}_p95_ms,{n}_p99_ms,{n}_max_ms"
            );
        }
        out.push_str(",deadlock_retries,lock_wait_timeout_retries,errors,consistency,order_lines");
        out.push_str(",cpu_us_per_txn,system_share,resident_growth_bytes_per_txn");
        out.push_str(",voluntary_switches_per_txn,involuntary_switches_per_txn");
        for c in Counter::ALL {
            let _ = write!(out, ",{}", c.name());
        }
        for name in COMMIT_COLUMNS {
            let _ = write!(out, ",{name}");
        }
        out.push_str(",round,effective\n");
        for p in &self.points {
            let m = &p.measurement;
            let _ = write!(
                out,
                "{},{},{:.1},{:.1}",
                csv_field(&p.config),
                p.clients,
                m.tpmc(),
                m.txn_per_sec()
            );
            for k in Kind::ALL {
                let s = &m.kinds[k.index()];
                let _ = write!(
                    out,
                    ",{},{:.3},{:.3},{:.3},{:.3},{:.3}",
                    s.completed(),
                    s.mean_ms(),
                    s.quantile_ms(0.50),
                    s.quantile_ms(0.95),
                    s.quantile_ms(0.99),
                    s.max_ms()
                );
            }
            let consistency = if p.violations.is_empty() {
                "ok".to_owned()
            } else {
                csv_field(&p.violations.join("; "))
            };
            let _ = write!(
                out,
                ",{},{},{},{consistency},{}",
                m.deadlock_retries, m.timeout_retries, m.error_count, p.order_lines
            );
            match p.per_txn() {
                Some(t) => {
                    let _ = write!(
                        out,
                        ",{:.2},{:.4},{:.0},{:.3},{:.3}",
                        t.cpu_us, t.system_share, t.resident_growth, t.switches.0, t.switches.1
                    );
                }
                None => out.push_str(",,,,,"),
            }
            for c in Counter::ALL {
                match p.stats {
                    Some(s) => {
                        let _ = write!(out, ",{}", s.get(c));
                    }
                    None => out.push(','),
                }
            }
            match &p.commit {
                Some(c) => {
                    for value in commit_values(c) {
                        let _ = write!(out, ",{value}");
                    }
                }
                None => out.push_str(&",".repeat(COMMIT_COLUMNS.len())),
            }
            let _ = writeln!(out, ",{},{}", p.round, csv_field(&p.effective));
        }
        out
    }

    /// Throughput against clients, one line per configuration (each point the median over
    /// the rounds), as SVG; with one client count, where there is no line, a bar per
    /// configuration.
    pub fn svg(&self, path: &Path) -> io::Result<()> {
        let clients = self.client_counts();
        let configs = self.configs();
        let medians = self.medians();
        let median = |config: &str, clients: usize| {
            medians
                .iter()
                .find(|m| m.config == config && m.clients == clients)
                .map(|m| m.txn_per_sec)
        };
        let top = self
            .points
            .iter()
            .map(|p| p.measurement.txn_per_sec())
            .fold(1.0, f64::max)
            * 1.15;
        let scale = &self.info.scale;
        let rounds = self.rounds();
        let caption = format!(
            "TPC-C-lite, {}: {} warehouse(s){}{}",
            self.info.backend,
            scale.warehouses,
            if scale.is_standard() { "" } else { ", lite" },
            if rounds > 1 {
                format!(", median of {rounds} rounds")
            } else {
                String::new()
            }
        );
        let categories: Vec<String> = clients.iter().map(usize::to_string).collect();
        let labels = Labels {
            caption: &caption,
            x: "clients",
            y: "transactions / s (all five types)",
        };
        if clients.len() < 2 {
            let series: Vec<(String, Vec<f64>)> = configs
                .iter()
                .map(|config| {
                    let values = clients.iter().map(|&c| median(config, c).unwrap_or(0.0));
                    ((*config).to_owned(), values.collect())
                })
                .collect();
            return crate::plot::bars(path, labels, &categories, &series);
        }
        let plot = || -> Result<(), Box<dyn std::error::Error>> {
            let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
            root.fill(&WHITE)?;
            let mut chart = category_chart(&root, labels, &categories, top)?;
            for (i, config) in configs.iter().enumerate() {
                let series: Vec<(f64, f64)> = clients
                    .iter()
                    .enumerate()
                    .filter_map(|(x, &c)| median(config, c).map(|t| (x as f64, t)))
                    .collect();
                draw_line(&mut chart, i, config, &series)?;
            }
            draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
            root.present()?;
            Ok(())
        };
        plot().map_err(|e| io::Error::other(e.to_string()))
    }

    /// Writes `results.csv`, `results.json` and `throughput.svg` into `dir`.
    pub fn write(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)?;
        fs::write(dir.join("results.csv"), self.csv())?;
        let json = serde_json::to_string_pretty(&self.json()).map_err(io::Error::other)?;
        fs::write(dir.join("results.json"), json + "\n")?;
        self.svg(&dir.join("throughput.svg"))
    }

    /// A table for the terminal.
    pub fn summary(&self) -> String {
        let info = &self.info;
        let scale = &info.scale;
        let mut out = format!(
            "TPC-C-lite on {}: {} warehouse(s), {} items, {} customers/district{}; {} CPUs\n",
            info.backend,
            scale.warehouses,
            scale.items,
            scale.customers,
            if scale.is_standard() {
                " (the spec's scale)"
            } else {
                " (lite)"
            },
            info.machine.cpus,
        );
        let _ = writeln!(out, "machine: {}", info.machine.describe());
        let _ = writeln!(out, "built from: {}", info.build);
        let _ = writeln!(out, "build profile: {}", info.profile.stated());
        // What each configuration ran with, as its engine and a client's session said.
        for config in self.configs() {
            if let Some(p) = self.points.iter().find(|p| p.config == config) {
                let _ = writeln!(out, "{config}, in force: {}", p.effective);
            }
        }
        // With rounds, each point's label says its round.
        let rounds = self.rounds();
        let label = |p: &Point| {
            if rounds > 1 {
                format!("{} r{}", p.config, p.round)
            } else {
                p.config.clone()
            }
        };
        let width = self
            .points
            .iter()
            .map(|p| label(p).len())
            .fold(28, usize::max);
        let _ = writeln!(
            out,
            "{:<width$} {:>7} {:>11} {:>10} {:>9} {:>9} {:>9} {:>8} {:>8} {:>10} {:>6} {:>8} {:>11}  consistency",
            "config",
            "clients",
            "tpmC",
            "txn/s",
            "NO p50ms",
            "NO p99ms",
            "max ms",
            "retries",
            "errors",
            "CPU µs/txn",
            "kernel",
            "KiB/txn",
            "csw/txn v+i"
        );
        for p in &self.points {
            let m = &p.measurement;
            let no = &m.kinds[Kind::NewOrder.index()];
            let (cpu, kernel, growth, switches) = match p.per_txn() {
                Some(t) => (
                    format!("{:.1}", t.cpu_us),
                    format!("{:.0}%", t.system_share * 100.0),
                    format!("{:.1}", t.resident_growth / 1024.0),
                    format!("{:.2}+{:.2}", t.switches.0, t.switches.1),
                ),
                None => ("-".into(), "-".into(), "-".into(), "-".into()),
            };
            let _ = writeln!(
                out,
                "{:<width$} {:>7} {:>11.0} {:>10.0} {:>9.2} {:>9.2} {:>9.1} {:>8} {:>8} {cpu:>10} {kernel:>6} {growth:>8} {switches:>11}  {}",
                label(p),
                p.clients,
                m.tpmc(),
                m.txn_per_sec(),
                no.quantile_ms(0.5),
                no.quantile_ms(0.99),
                m.max_ms(),
                m.deadlock_retries + m.timeout_retries,
                m.error_count,
                if p.violations.is_empty() {
                    "ok".to_owned()
                } else {
                    format!("FAILED: {}", p.violations.join("; "))
                }
            );
            for e in &m.errors {
                let _ = writeln!(out, "    error: {e}");
            }
        }
        if self.points.iter().any(|p| !p.latches().is_empty()) {
            let _ = writeln!(out, "{LATCH_NOTE}");
            for p in &self.points {
                let latches: Vec<String> = p.latches().iter().map(LatchHold::describe).collect();
                if !latches.is_empty() {
                    let _ = writeln!(
                        out,
                        "  {} {} clients: {}",
                        label(p),
                        p.clients,
                        latches.join("; ")
                    );
                }
            }
        }
        // Over mysql:// the columns are the server's, which a reader might take for the
        // driver's.
        if self
            .points
            .iter()
            .any(|p| p.stats.is_none() && p.process.is_some())
        {
            let _ = writeln!(
                out,
                "(CPU µs/txn, kernel, switches and KiB/txn are the server's, from its SHOW \
                 STATUS, over mysql://)"
            );
        }
        if let Some(warning) = self.steal_warning() {
            let _ = writeln!(out, "{warning}");
        }
        if rounds > 1 {
            out.push_str(&self.medians_table(rounds));
        }
        out
    }

    /// The summary's table of [`Report::medians`].
    fn medians_table(&self, rounds: usize) -> String {
        let mut out = format!(
            "txn/s over {rounds} rounds (configurations taking turns, each round on freshly \
             loaded databases):\n"
        );
        let width = self.configs().iter().map(|c| c.len()).fold(28, usize::max);
        let _ = writeln!(
            out,
            "{:<width$} {:>7} {:>10} {:>10} {:>10}  against the first (median ratio, rounds won)",
            "config", "clients", "median", "lowest", "highest"
        );
        for m in self.medians() {
            let against = match m.against_baseline {
                Some((ratio, won)) => format!("{ratio:.3}, {won} of {}", m.rounds),
                None => "(baseline)".into(),
            };
            let _ = writeln!(
                out,
                "{:<width$} {:>7} {:>10.0} {:>10.0} {:>10.0}  {against}",
                m.config, m.clients, m.txn_per_sec, m.lowest, m.highest
            );
        }
        out
    }
}

/// The group-commit columns of the CSV (empty for a point without a pipeline).
pub const COMMIT_COLUMNS: [&str; 11] = [
    "gc_commits",
    "gc_groups",
    "gc_fsyncs",
    "gc_sync_ms",
    "gc_followers",
    "gc_wakeups",
    "gc_wasted_wakeups",
    "gc_wake_efficiency",
    "gc_flush_held_ns",
    "gc_sync_held_ns",
    "gc_commit_held_ns",
];

/// Wake-up efficiency (book 8.1.2): useful wake-ups / wake-ups; `None` (n/a in the CSV,
/// null in the JSON) when no follower slept, so nothing was woken.
pub fn wake_efficiency(c: &GroupCommitStats) -> Option<f64> {
    (c.wakeups > 0).then(|| (c.wakeups - c.wasted_wakeups) as f64 / c.wakeups as f64)
}

fn commit_values(c: &GroupCommitStats) -> [String; 11] {
    [
        c.commits.to_string(),
        c.groups.to_string(),
        c.fsyncs.to_string(),
        (c.sync_micros / 1000).to_string(),
        c.followers.to_string(),
        c.wakeups.to_string(),
        c.wasted_wakeups.to_string(),
        wake_efficiency(c).map_or_else(|| "n/a".into(), |e| format!("{e:.4}")),
        c.stage_held_ns[0].to_string(),
        c.stage_held_ns[1].to_string(),
        c.stage_held_ns[2].to_string(),
    ]
}

fn commit_json(c: &GroupCommitStats) -> Json {
    json!({
        "commits": c.commits,
        "groups": c.groups,
        "group_sizes": c.group_sizes,
        "fsyncs": c.fsyncs,
        "sync_ms": c.sync_micros as f64 / 1000.0,
        "followers": c.followers,
        "wakeups": c.wakeups,
        "wasted_wakeups": c.wasted_wakeups,
        "wake_efficiency": wake_efficiency(c),
        "wakes_per_follower": c.wakes_per_follower,
        "stage_held_ns": {
            "flush": c.stage_held_ns[0],
            "sync": c.stage_held_ns[1],
            "commit": c.stage_held_ns[2],
        },
    })
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn point(config: &str, clients: usize, round: usize, committed: u64) -> Point {
        let mut measurement = Measurement {
            elapsed: Duration::from_secs(1),
            ..Measurement::default()
        };
        measurement.kinds[0].committed = committed;
        Point {
            config: config.into(),
            effective: format!("{config} in force"),
            clients,
            round,
            measurement,
            stats: None,
            commit: None,
            process: None,
            steal: None,
            order_lines: 0,
            violations: Vec::new(),
        }
    }

    fn report(points: Vec<Point>) -> Report {
        Report {
            info: RunInfo {
                backend: "native".into(),
                scale: Scale {
                    warehouses: 1,
                    items: 1000,
                    customers: 100,
                },
                seed: 1,
                warmup_secs: 0.0,
                limit: Limit::Count(1),
                runtime: Runtime::Threads,
                machine: Machine::cpus_only(),
                load: (0, 0.0),
                build: "test".into(),
                profile: BuildProfile::unknown(),
            },
            points,
        }
    }

    #[test]
    fn a_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }

    #[test]
    fn the_ratio_is_the_median_of_each_rounds_ratio_not_a_ratio_of_medians() {
        // Round by round b/a is 1.5, 0.5, 1.2: median 1.2, two rounds won. The medians
        // themselves (100 and 60) would say 0.6: a round's ratio pairs the two runs that
        // shared the machine's state, and one slow stretch no longer decides.
        let r = report(vec![
            point("a", 2, 1, 100),
            point("b", 2, 1, 150),
            point("b", 2, 2, 60),
            point("a", 2, 2, 120),
            point("a", 2, 3, 50),
            point("b", 2, 3, 60),
            point("a", 8, 1, 10),
        ]);
        assert_eq!(r.rounds(), 3);
        let m = r.medians();
        assert_eq!(m.len(), 3, "a and b at 2 clients, a at 8: {m:?}");
        assert_eq!((m[0].config.as_str(), m[0].clients), ("a", 2));
        assert_eq!(
            (m[0].txn_per_sec, m[0].lowest, m[0].highest),
            (100.0, 50.0, 120.0)
        );
        assert_eq!(m[0].against_baseline, None);
        assert_eq!((m[1].config.as_str(), m[1].txn_per_sec), ("b", 60.0));
        let (ratio, won) = m[1].against_baseline.unwrap();
        assert!((ratio - 1.2).abs() < 1e-9, "{ratio}");
        assert_eq!(won, 2);
        assert_eq!(
            (m[2].config.as_str(), m[2].clients, m[2].rounds),
            ("a", 8, 1)
        );
        let summary = r.summary();
        assert!(summary.contains("txn/s over 3 rounds"), "{summary}");
        assert!(summary.contains("1.200, 2 of 3"), "{summary}");
        assert!(summary.contains("b r2"), "{summary}");
    }

    #[test]
    fn segments_of_one_round_count_against_the_baselines_median_in_that_round() {
        // A timeline (`waterline lab planner`): three segments of each configuration in one
        // round. Each of b's is set against the median of a's (100), not a's first (90).
        let r = report(vec![
            point("a", 2, 1, 90),
            point("a", 2, 1, 100),
            point("a", 2, 1, 130),
            point("b", 2, 1, 95),
            point("b", 2, 1, 120),
            point("b", 2, 1, 200),
        ]);
        let m = r.medians();
        assert_eq!((m[1].config.as_str(), m[1].rounds), ("b", 3));
        assert_eq!(m[1].txn_per_sec, 120.0);
        let (ratio, won) = m[1].against_baseline.unwrap();
        assert!((ratio - 1.2).abs() < 1e-9, "{ratio}");
        assert_eq!(won, 2);
    }

    #[test]
    fn one_round_prints_no_medians() {
        let summary = report(vec![point("default", 2, 1, 100)]).summary();
        assert!(!summary.contains("rounds"), "{summary}");
        assert!(!summary.contains(" r1"), "{summary}");
    }
}
