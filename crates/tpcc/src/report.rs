//! Reports: a sweep's points as CSV, JSON and an SVG plot of throughput against clients, in
//! one directory, and a text summary for the terminal.
//!
//! Definitions, as written into every JSON report:
//! - `tpmc`: NewOrder transactions completed per minute of measured time (the 1% that roll
//!   back by design included, as the spec counts them). No keying or think time, so this is
//!   not a TPC-C result and not comparable with published tpmC figures.
//! - `txn_per_sec`: transactions of all five types completed per second of measured time.
//! - latencies: from the first try to the end, retries included, in milliseconds.
//! - `process`: this process's CPU time (user and kernel) and resident-memory growth over
//!   the measured time, per transaction (see [`crate::process`]).

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use plotters::prelude::*;
use serde_json::{Value as Json, json};
use waterline_txn::{Counter, GroupCommitStats, StatsSnapshot};

use crate::driver::{Limit, Measurement, Runtime};
use crate::input::Kind;
use crate::plot::{Labels, category_chart, draw_legend, draw_line};
use crate::process::{Spent, transparent_huge_pages};
use crate::schema::Scale;

/// The definitions above, as the JSON report carries them.
pub const DEFINITIONS: [(&str, &str); 4] = [
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
        "this process's CPU time in user mode and in the kernel, and its resident memory's \
         growth, over the measured time, from /proc/self: the engine's and the driver's for \
         an in-process backend, the driver's alone for mysql://",
    ),
];

/// One measured point: a configuration at a client count.
#[derive(Clone, Debug)]
pub struct Point {
    /// The configuration's label (`default`, or `snapshot=vector`).
    pub config: String,
    /// Clients.
    pub clients: usize,
    /// What the driver measured.
    pub measurement: Measurement,
    /// The engine's counters over the measured time (in-process backends).
    pub stats: Option<StatsSnapshot>,
    /// The group-commit pipeline's counters over the measured time (in-process backends
    /// with `--data-dir`: an in-memory engine has no pipeline).
    pub commit: Option<GroupCommitStats>,
    /// What the process spent over the measured time (`None` where `/proc/self` cannot
    /// tell).
    pub process: Option<Spent>,
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

    /// CPU µs per transaction, the kernel's share of it, and resident-memory growth in
    /// bytes per transaction.
    fn per_txn(&self) -> Option<(f64, f64, f64)> {
        let n = self.measurement.completed();
        self.process.map(|p| {
            (
                p.cpu_us_per_txn(n),
                p.system_share(),
                p.resident_growth_per_txn(n),
            )
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

/// The machine's topology, as hwloc reports it (the `numa` feature).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Processor packages (sockets).
    pub packages: usize,
    /// NUMA nodes.
    pub numa_nodes: usize,
    /// Cores.
    pub cores: usize,
    /// Processing units (hardware threads).
    pub pus: usize,
    /// The hwloc library's version.
    pub hwloc: String,
}

/// The machine a run ran on, as far as this build can tell, and how its threads were placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Logical CPUs this process may use.
    pub cpus: usize,
    /// The topology; `None` when built without the `numa` feature.
    pub topology: Option<Topology>,
    /// How client threads were pinned and memory bound (`none` when not).
    pub pinning: String,
    /// Whether this process's memory may be backed by transparent huge pages, as the
    /// kernel says (see [`crate::process::transparent_huge_pages`]).
    pub huge_pages: String,
}

impl Machine {
    /// This machine without a topology: only its CPU count is known.
    pub fn cpus_only() -> Machine {
        Machine {
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            topology: None,
            pinning: "none".into(),
            huge_pages: transparent_huge_pages(),
        }
    }

    /// One line: `2 CPUs: 1 package, 1 NUMA node, 2 cores, 2 PUs (hwloc 2.9.0); pinning: none;
    /// transparent huge pages: off for this process`.
    pub fn describe(&self) -> String {
        let topology = match &self.topology {
            Some(t) => format!(
                "{} package(s), {} NUMA node(s), {} core(s), {} PU(s) (hwloc {})",
                t.packages, t.numa_nodes, t.cores, t.pus, t.hwloc
            ),
            None => "topology unknown (built without the numa feature)".into(),
        };
        format!(
            "{} CPUs: {topology}; pinning: {}; transparent huge pages: {}",
            self.cpus, self.pinning, self.huge_pages
        )
    }

    fn json(&self) -> Json {
        let topology = self.topology.as_ref().map(|t| {
            json!({
                "packages": t.packages,
                "numa_nodes": t.numa_nodes,
                "cores": t.cores,
                "pus": t.pus,
                "hwloc": t.hwloc,
            })
        });
        json!({
            "cpus": self.cpus,
            "topology": topology,
            "pinning": self.pinning,
            "transparent_huge_pages": self.huge_pages,
        })
    }
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
    /// The isolation level.
    pub isolation: String,
    /// Rows loaded and how long that took.
    pub load: (u64, f64),
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
                    "clients": p.clients,
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
                    "process": p.process.zip(p.per_txn()).map(|(s, (cpu, share, growth))| json!({
                        "user_secs": s.user.as_secs_f64(),
                        "system_secs": s.system.as_secs_f64(),
                        "cpu_us_per_txn": cpu,
                        "system_share": share,
                        "resident_growth_bytes": s.resident_growth,
                        "resident_growth_bytes_per_txn": growth,
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
                "backend": info.backend,
                "scale": scale_json(&info.scale),
                "seed": info.seed,
                "warmup_secs": info.warmup_secs,
                "limit": limit,
                "runtime": runtime,
                "cpus": info.machine.cpus,
                "machine": info.machine.json(),
                "isolation": info.isolation,
                "loaded_rows": info.load.0,
                "load_secs": info.load.1,
            },
            "definitions": DEFINITIONS.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "points": points,
        })
    }

    /// The report as CSV: one line per point.
    pub fn csv(&self) -> String {
        let mut out = String::from("config,clients,tpmc,txn_per_sec");
        for k in Kind::ALL {
            let n = k.name();
            let _ = write!(
                out,
                ",{n}_count,{n}_mean_ms,{n}_p50_ms,{n}_p95_ms,{n}_p99_ms"
            );
        }
        out.push_str(",deadlock_retries,lock_wait_timeout_retries,errors,consistency,order_lines");
        out.push_str(",cpu_us_per_txn,system_share,resident_growth_bytes_per_txn");
        for c in Counter::ALL {
            let _ = write!(out, ",{}", c.name());
        }
        for name in COMMIT_COLUMNS {
            let _ = write!(out, ",{name}");
        }
        out.push('\n');
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
                    ",{},{:.3},{:.3},{:.3},{:.3}",
                    s.completed(),
                    s.mean_ms(),
                    s.quantile_ms(0.50),
                    s.quantile_ms(0.95),
                    s.quantile_ms(0.99)
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
                Some((cpu, share, growth)) => {
                    let _ = write!(out, ",{cpu:.2},{share:.4},{growth:.0}");
                }
                None => out.push_str(",,,"),
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
            out.push('\n');
        }
        out
    }

    /// Throughput against clients, one line per configuration, as SVG.
    pub fn svg(&self, path: &Path) -> io::Result<()> {
        let mut clients: Vec<usize> = self.points.iter().map(|p| p.clients).collect();
        clients.sort_unstable();
        clients.dedup();
        let mut configs: Vec<&str> = Vec::new();
        for p in &self.points {
            if !configs.contains(&p.config.as_str()) {
                configs.push(&p.config);
            }
        }
        let top = self
            .points
            .iter()
            .map(|p| p.measurement.txn_per_sec())
            .fold(1.0, f64::max)
            * 1.15;
        let plot = || -> Result<(), Box<dyn std::error::Error>> {
            let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
            root.fill(&WHITE)?;
            let scale = &self.info.scale;
            let caption = format!(
                "TPC-C-lite, {}: {} warehouse(s){}",
                self.info.backend,
                scale.warehouses,
                if scale.is_standard() { "" } else { ", lite" }
            );
            let categories: Vec<String> = clients.iter().map(usize::to_string).collect();
            let labels = Labels {
                caption: &caption,
                x: "clients",
                y: "transactions / s (all five types)",
            };
            let mut chart = category_chart(&root, labels, &categories, top)?;
            for (i, config) in configs.iter().enumerate() {
                let series: Vec<(f64, f64)> = clients
                    .iter()
                    .enumerate()
                    .filter_map(|(x, c)| {
                        self.points
                            .iter()
                            .find(|p| p.config == *config && p.clients == *c)
                            .map(|p| (x as f64, p.measurement.txn_per_sec()))
                    })
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
            "TPC-C-lite on {}: {} warehouse(s), {} items, {} customers/district{}; {}; {} CPUs\n",
            info.backend,
            scale.warehouses,
            scale.items,
            scale.customers,
            if scale.is_standard() {
                " (the spec's scale)"
            } else {
                " (lite)"
            },
            info.isolation,
            info.machine.cpus,
        );
        let _ = writeln!(out, "machine: {}", info.machine.describe());
        let _ = writeln!(
            out,
            "{:<28} {:>7} {:>11} {:>10} {:>9} {:>9} {:>8} {:>8} {:>10} {:>6} {:>8}  consistency",
            "config",
            "clients",
            "tpmC",
            "txn/s",
            "NO p50ms",
            "NO p99ms",
            "retries",
            "errors",
            "CPU µs/txn",
            "kernel",
            "KiB/txn"
        );
        for p in &self.points {
            let m = &p.measurement;
            let no = &m.kinds[Kind::NewOrder.index()];
            let (cpu, kernel, growth) = match p.per_txn() {
                Some((cpu, share, growth)) => (
                    format!("{cpu:.1}"),
                    format!("{:.0}%", share * 100.0),
                    format!("{:.1}", growth / 1024.0),
                ),
                None => ("-".into(), "-".into(), "-".into()),
            };
            let _ = writeln!(
                out,
                "{:<28} {:>7} {:>11.0} {:>10.0} {:>9.2} {:>9.2} {:>8} {:>8} {cpu:>10} {kernel:>6} {growth:>8}  {}",
                p.config,
                p.clients,
                m.tpmc(),
                m.txn_per_sec(),
                no.quantile_ms(0.5),
                no.quantile_ms(0.99),
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
        // Over mysql:// the process is the driver alone: its CPU and memory say nothing of
        // the server's, which a reader of the columns would otherwise assume.
        if self
            .points
            .iter()
            .any(|p| p.stats.is_none() && p.process.is_some())
        {
            let _ = writeln!(
                out,
                "(CPU µs/txn, kernel and KiB/txn are this driver process's; the server's are \
                 not measured over mysql://)"
            );
        }
        out
    }
}

/// The group-commit columns of the CSV (empty for a point without a pipeline).
pub const COMMIT_COLUMNS: [&str; 7] = [
    "gc_commits",
    "gc_groups",
    "gc_fsyncs",
    "gc_followers",
    "gc_wakeups",
    "gc_wasted_wakeups",
    "gc_wake_efficiency",
];

/// Wake-up efficiency (book 8.1.2): useful wake-ups / wake-ups; 1 when nobody slept.
pub fn wake_efficiency(c: &GroupCommitStats) -> f64 {
    if c.wakeups == 0 {
        1.0
    } else {
        (c.wakeups - c.wasted_wakeups) as f64 / c.wakeups as f64
    }
}

fn commit_values(c: &GroupCommitStats) -> [String; 7] {
    [
        c.commits.to_string(),
        c.groups.to_string(),
        c.fsyncs.to_string(),
        c.followers.to_string(),
        c.wakeups.to_string(),
        c.wasted_wakeups.to_string(),
        format!("{:.4}", wake_efficiency(c)),
    ]
}

fn commit_json(c: &GroupCommitStats) -> Json {
    json!({
        "commits": c.commits,
        "groups": c.groups,
        "group_sizes": c.group_sizes,
        "fsyncs": c.fsyncs,
        "followers": c.followers,
        "wakeups": c.wakeups,
        "wasted_wakeups": c.wasted_wakeups,
        "wake_efficiency": wake_efficiency(c),
        "wakes_per_follower": c.wakes_per_follower,
    })
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}
