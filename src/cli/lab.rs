//! `waterline lab <experiment>`: each chapter-8 experiment as one command. An experiment is
//! a TPC-C-lite sweep (`waterline tpcc`) with the baseline and the fix compared in the same
//! run, written as CSV + SVG + a short markdown summary that states the machine and, where
//! this machine cannot show what the book saw, says so.
//!
//! | experiment | compares | book |
//! |---|---|---|
//! | `trx-shards` | the registry of read-write transactions behind 1 latch or 256 | Fig 8-1/8-2 |
//! | `readview` | vector, hybrid, csn read views; `--pin node:0,spread` for SMP vs NUMA | Fig 8-20/22, 8-24 |
//! | `double-latch` | view close under the trx-sys latch or without it, up to 2,048 clients | Fig 8-27 |
//! | `group-commit` | broadcast or point-to-point wake-ups, with wake-ups per follower | Fig 8-15/16/17 |
//! | `throttle` | unlimited, a limit of 4 per CPU, a thread pool, adaptive, up to 2,048 client threads | Fig 8-33/35/36 |
//! | `planner` | fixed and 8.0.27 range analysis over a long run, as ORDER_LINE grows | Fig 8-11/12/13 |
//! | `isolation` | READ COMMITTED and REPEATABLE READ at low conflict | 8.2 |
//! | `all-fixes` | every baseline against every fix, with and without an admission limit | Fig 8-25 |
//!
//! Every experiment is a list of `waterline tpcc` flags (its own, then the user's after
//! `--`), so anything `tpcc` can vary, a lab run can too.
//!
//! The experiments' flags and texts are in `lab/specs.rs`, what is written beside the
//! reports (RUN.md, the index) in `lab/files.rs`.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, ValueEnum};
use waterline::commit::WAKES_PER_FOLLOWER_BUCKETS;
use waterline::numa::{self, Pin, Placement};
use waterline::tpcc::plot::{self, Labels};
use waterline::tpcc::{Point, Report};

use super::tpcc::{CliResult, TpccParser, absolute, configurations, finish, load, sweep};

pub(crate) mod files;
mod served;
mod specs;

use files::{report_root, utc_now, write_index, write_run};
use specs::{QUICK, Spec, flags, planner_segments, specs};

/// The experiments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Experiment {
    /// The transaction registry behind one latch vs sharded 256 ways (Fig 8-1/8-2).
    TrxShards,
    /// Vector vs hybrid vs CSN read views (book Fig 8-20/22; with --pin node:0,spread, 8-24).
    Readview,
    /// View close under the trx-sys latch vs without it, up to 2,048 clients (Fig 8-27).
    DoubleLatch,
    /// Group commit: broadcast vs point-to-point wake-ups (Fig 8-15/16/17).
    GroupCommit,
    /// Admission: unlimited vs a limit of 4 per CPU vs a thread pool vs adaptive, clients as OS
    /// threads (Fig 8-33/35/36).
    Throttle,
    /// Range analysis: fixed vs MySQL 8.0.27 over a long run (Fig 8-11/12/13).
    Planner,
    /// READ COMMITTED vs REPEATABLE READ at low conflict.
    Isolation,
    /// Every baseline against every fix, each with and without an admission limit, durable
    /// (Fig 8-25).
    AllFixes,
    /// Over the MySQL protocol, one `waterline serve` each: a thread per connection vs the
    /// thread pool vs an admission limit (Fig 8-33/35).
    ThreadPool,
    /// Two `waterline serve` instances on half the CPUs each, run apart, then together
    /// (Fig 8-30/31/32).
    Instances,
    /// Every experiment, with an index.
    All,
}

/// `waterline lab` flags.
#[derive(Clone, Debug, Args)]
pub struct LabArgs {
    /// The experiment.
    #[arg(value_enum)]
    pub experiment: Experiment,
    /// Seconds instead of minutes: a tiny database, two client counts, one-second points.
    #[arg(long)]
    pub quick: bool,
    /// Pinning policies to compare, each a full run: none, compact, spread, node:N (all but
    /// none need the numa feature). Default: node:0,spread for `readview` on a machine
    /// with two or more NUMA nodes (SMP vs NUMA, Fig 8-24), none otherwise.
    #[arg(long, value_delimiter = ',')]
    pub pin: Vec<Pin>,
    /// Where the reports go, one directory per experiment (default:
    /// target/waterline-lab/run-<time>, or see --results).
    #[arg(long, conflicts_with = "results")]
    pub report_dir: Option<PathBuf>,
    /// Write the reports under `<DIR>/<yyyy-mm-dd>-<machine>/`: `<experiment>/`, or
    /// `lab-all/` for `all` (`-2`, `-3`, ... if taken), each with a RUN.md that says the exact
    /// command, the commit this binary was built from, when it ran and the machine.
    /// `--results results` adds a run to the repository's results.
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// The machine's name in --results folders (default: its host name).
    #[arg(long, requires = "results")]
    pub machine_name: Option<String>,
    /// More `waterline tpcc` flags, after `--`, applied after the experiment's own, e.g.
    /// `-- --warehouses 10 --clients 1,64,512 --duration 60`.
    #[arg(last = true)]
    pub tpcc: Vec<String>,
}

/// The pinning policies `spec` runs under.
fn pins(args: &LabArgs, spec: &Spec, machine: &waterline::tpcc::Machine) -> Vec<Pin> {
    if !args.pin.is_empty() {
        return args.pin.clone();
    }
    let numa = machine.topology.as_ref().is_some_and(|t| t.numa_nodes >= 2);
    if spec.experiment == Experiment::Readview && numa {
        vec![Pin::Node(0), Pin::Spread]
    } else {
        vec![Pin::None]
    }
}

/// One line of the `all` index.
struct Outcome {
    name: &'static str,
    headline: String,
    ok: bool,
}

/// Runs the experiment(s) and writes their reports.
pub fn run(args: LabArgs) -> CliResult<()> {
    let machine = numa::machine();
    let chosen: Vec<Spec> = specs(machine.cpus)
        .into_iter()
        .filter(|s| args.experiment == Experiment::All || s.experiment == args.experiment)
        .collect();
    let all = args.experiment == Experiment::All;
    let root = report_root(
        &args,
        if all { "lab-all" } else { chosen[0].name },
        &machine,
    );
    let started = utc_now();
    let profile = crate::profile();
    if !profile.is_measurement() {
        eprintln!(
            "waterline lab: this binary's build profile is {}",
            profile.stated()
        );
    }
    // Refuse what cannot work before the first experiment runs.
    for spec in &chosen {
        for pin in pins(&args, spec, &machine) {
            Placement::new(pin)?;
        }
    }
    let mut outcomes = Vec::new();
    for spec in &chosen {
        if all {
            // Each in a process of its own, which writes its RUN.md.
            outcomes.push(run_child(&args, spec, &root.join(spec.name))?);
            continue;
        }
        let began = utc_now();
        outcomes.push(run_one(&args, spec, &machine, &root)?);
        write_run(&root, spec.name, &began, &machine)?;
    }
    if all {
        write_index(&root, &chosen, &outcomes, &machine)?;
        write_run(&root, "lab all", &started, &machine)?;
    }
    let failed: Vec<&str> = outcomes.iter().filter(|o| !o.ok).map(|o| o.name).collect();
    if !failed.is_empty() {
        return Err(format!("experiment(s) with failed points: {}", failed.join(", ")).into());
    }
    Ok(())
}

/// Runs one experiment of `lab all` as `waterline lab <name> --report-dir <dir>` in a child
/// process: each experiment starts with a fresh heap and no threads of the one before (a
/// process that ran them all kept the earlier experiments' freed memory, whose engines had
/// grown to gigabytes, and a 24 GB machine ran out during the eighth). Its output passes
/// through; its `headline:` line goes to the index. An experiment that fails or dies is
/// marked so in the index, and the others still run.
fn run_child(args: &LabArgs, spec: &Spec, dir: &Path) -> CliResult<Outcome> {
    use std::io::BufRead;
    let mut command = std::process::Command::new(std::env::current_exe()?);
    // This process's huge-page setting (inherited by the child, which would reset it).
    let thp = waterline::sql::process::transparent_huge_pages();
    let thp = if thp == "off for this process" {
        "off"
    } else {
        "on"
    };
    command.args([
        "--transparent-huge-pages",
        thp,
        "lab",
        spec.name,
        "--report-dir",
    ]);
    command.arg(dir);
    if args.quick {
        command.arg("--quick");
    }
    if !args.pin.is_empty() {
        let pins: Vec<String> = args.pin.iter().map(ToString::to_string).collect();
        command.arg("--pin").arg(pins.join(","));
    }
    if !args.tpcc.is_empty() {
        command.arg("--").args(&args.tpcc);
    }
    let mut child = command.stdout(std::process::Stdio::piped()).spawn()?;
    let mut headline = None;
    if let Some(out) = child.stdout.take() {
        for line in std::io::BufReader::new(out).lines() {
            let line = line?;
            println!("{line}");
            if let Some(text) = line.strip_prefix("headline: ") {
                headline = Some(text.to_owned());
            }
        }
    }
    let status = child.wait()?;
    Ok(match headline {
        Some(headline) => Outcome {
            name: spec.name,
            headline,
            ok: status.success(),
        },
        None => Outcome {
            name: spec.name,
            headline: format!("did not finish ({status})"),
            ok: false,
        },
    })
}

/// `base` with each `--flag value` of `overrides` replacing the same flag's value (or added).
fn merge(base: Vec<String>, overrides: &[String]) -> Vec<String> {
    let pairs = |flags: &[String]| -> Vec<(String, Option<String>)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < flags.len() {
            let value = flags.get(i + 1).filter(|v| !v.starts_with("--")).cloned();
            i += if value.is_some() { 2 } else { 1 };
            out.push((flags[i - 1 - usize::from(value.is_some())].clone(), value));
        }
        out
    };
    let mut merged = pairs(&base);
    for (flag, value) in pairs(overrides) {
        match merged.iter_mut().find(|(f, _)| *f == flag) {
            Some(slot) => slot.1 = value,
            None => merged.push((flag, value)),
        }
    }
    merged
        .into_iter()
        .flat_map(|(flag, value)| std::iter::once(flag).chain(value))
        .collect()
}

/// The `waterline tpcc` flags of `spec` as `args` ask for them: the experiment's, then
/// `--quick`'s, then the user's, each replacing the flags before it.
fn tpcc_flags(args: &LabArgs, spec: &Spec, dir: &Path) -> Vec<String> {
    let mut out = spec.full.clone();
    if args.quick {
        out = merge(out, &flags(QUICK));
        out = merge(out, &spec.quick);
    }
    if matches!(
        spec.experiment,
        Experiment::GroupCommit | Experiment::AllFixes
    ) {
        let data = dir.join("data").display().to_string();
        out = merge(out, &["--data-dir".into(), data]);
    }
    merge(out, &args.tpcc)
}

fn run_one(
    args: &LabArgs,
    spec: &Spec,
    machine: &waterline::tpcc::Machine,
    dir: &Path,
) -> CliResult<Outcome> {
    let flags = tpcc_flags(args, spec, dir);
    let tpcc = TpccParser::try_parse_from(&flags)
        .map_err(|e| format!("{}: flags {flags:?}: {e}", spec.name))?
        .args;
    let configs = configurations(&tpcc)?;
    let pins = if spec.servers.is_empty() && spec.experiment != Experiment::Instances {
        pins(args, spec, machine)
    } else {
        Vec::new()
    };
    let mut reports = Vec::new();
    if spec.experiment == Experiment::Instances {
        reports.push(served::instances(&tpcc, machine.cpus, dir)?);
    } else if !spec.servers.is_empty() {
        reports.push(served::sweep_servers(&tpcc, &spec.servers, dir)?);
    }
    for pin in &pins {
        let placement = Placement::new(*pin)?;
        let labelled: Vec<_> = configs
            .iter()
            .map(|(label, knobs)| {
                let label = if pins.len() > 1 {
                    format!("{label} pin={pin}")
                } else {
                    label.clone()
                };
                (label, knobs.clone())
            })
            .collect();
        let report = if spec.experiment == Experiment::Planner {
            timeline(&tpcc, &labelled, &placement, planner_segments(args.quick))?
        } else {
            sweep(&tpcc, &labelled, &placement)?.0
        };
        reports.push(report);
    }
    // One report of every policy's points; its machine names every policy's placement.
    let pinning: Vec<String> = reports
        .iter()
        .map(|r| r.info.machine.pinning.clone())
        .collect();
    let mut report = reports.remove(0);
    for more in reports {
        report.points.extend(more.points);
    }
    report.info.machine.pinning = pinning.join(" | ");
    if let Some(data) = tpcc.knobs.engine.data_dir.as_ref() {
        // The group-commit databases are scratch: the report keeps what they measured.
        let _ = fs::remove_dir_all(data);
    }
    let result = finish(&report, dir);
    let extra = match spec.experiment {
        Experiment::GroupCommit => wakes(&report, dir)?,
        Experiment::Planner => planner_files(&report, dir)?,
        Experiment::Instances => Extra {
            section: served::totals(&report),
            files: "- `serve-instance-1.log`, `serve-instance-2.log`: the servers' logs.\n".into(),
        },
        _ => Extra::default(),
    };
    let (summary, headline) = summary(args, spec, &report, &flags, &extra);
    fs::write(dir.join("summary.md"), summary)?;
    println!("summary: {}", absolute(&dir.join("summary.md")).display());
    println!("headline: {headline}");
    Ok(Outcome {
        name: spec.name,
        headline,
        ok: result.is_ok(),
    })
}

/// The planner experiment: each configuration runs `segments` measured points back to back
/// on its own growing database, so throughput can be read against ORDER_LINE's size.
fn timeline(
    tpcc: &super::tpcc::TpccArgs,
    configs: &[(String, super::Knobs)],
    placement: &Placement,
    segments: usize,
) -> CliResult<Report> {
    placement.enter()?;
    let run = || -> CliResult<Report> {
        let loaded = load(tpcc, configs)?;
        let on_start = placement.on_start();
        let clients = tpcc.clients[0];
        let mut points = Vec::new();
        for segment in 0..segments {
            for (label, target) in loaded.targets() {
                let mut args = tpcc.clone();
                if segment > 0 {
                    args.warmup = 0.0;
                }
                points.push(loaded.point(&args, label, target, clients, on_start.as_ref())?);
            }
        }
        Ok(loaded.report(tpcc, placement, points))
    };
    let report = run();
    placement.leave()?;
    report
}

/// What an experiment adds to its summary: a section, and lines of its file list.
#[derive(Debug, Default)]
struct Extra {
    section: String,
    files: String,
}

/// The planner's timeline: `timeline.csv` and `timeline.svg`.
fn planner_files(report: &Report, dir: &Path) -> CliResult<Extra> {
    let mut csv = String::from("config,segment,measured_secs,order_lines,txn_per_sec,tpmc\n");
    let mut series: Vec<plot::Series> = Vec::new();
    for config in configs_of(report) {
        let mut elapsed = 0.0;
        let mut line = Vec::new();
        for (segment, p) in report
            .points
            .iter()
            .filter(|p| p.config == config)
            .enumerate()
        {
            elapsed += p.measurement.elapsed.as_secs_f64();
            let _ = writeln!(
                csv,
                "{config},{segment},{elapsed:.1},{},{:.1},{:.1}",
                p.order_lines,
                p.measurement.txn_per_sec(),
                p.measurement.tpmc()
            );
            line.push((p.order_lines as f64 / 1000.0, p.measurement.txn_per_sec()));
        }
        series.push((config.clone(), line));
    }
    fs::write(dir.join("timeline.csv"), csv)?;
    let mut text = String::from(
        "Throughput of each configuration's first and last segment, as its ORDER_LINE grew:\n\n\
         | config | first segment txn/s | last segment txn/s | change | ORDER_LINE rows |\n\
         |---|---|---|---|---|\n",
    );
    for config in configs_of(report) {
        let mine: Vec<&Point> = report
            .points
            .iter()
            .filter(|p| p.config == config)
            .collect();
        if let (Some(first), Some(last)) = (mine.first(), mine.last()) {
            let (a, b) = (
                first.measurement.txn_per_sec(),
                last.measurement.txn_per_sec(),
            );
            let _ = writeln!(
                text,
                "| {config} | {a:.0} | {b:.0} | {:+.0}% | {} to {} |",
                if a > 0.0 { (b / a - 1.0) * 100.0 } else { 0.0 },
                first.order_lines,
                last.order_lines
            );
        }
    }
    text.push('\n');
    plot::lines(
        &dir.join("timeline.svg"),
        Labels {
            caption: "TPC-C-lite over SQL: throughput as ORDER_LINE grows",
            x: "ORDER_LINE rows (thousands) after each segment",
            y: "transactions / s",
        },
        &series,
    )?;
    Ok(Extra {
        section: text,
        files: "- `timeline.csv` (config, segment, measured_secs, order_lines, txn_per_sec, \
                tpmc) and `timeline.svg`: each configuration's segments, back to back on its \
                own growing database.\n"
            .into(),
    })
}

/// Group commit's wake-ups per follower: `wakes.csv` and `wakes.svg`.
fn wakes(report: &Report, dir: &Path) -> CliResult<Extra> {
    let bucket_name = |i: usize| match WAKES_PER_FOLLOWER_BUCKETS[i] {
        0 => "0 (not slept)".to_owned(),
        u64::MAX => format!(">{}", WAKES_PER_FOLLOWER_BUCKETS[i - 1]),
        b if i > 0 && WAKES_PER_FOLLOWER_BUCKETS[i - 1] + 1 < b => {
            format!("{}-{b}", WAKES_PER_FOLLOWER_BUCKETS[i - 1] + 1)
        }
        b => b.to_string(),
    };
    let mut csv = String::from("config,clients,wakeups_per_follower,followers\n");
    for p in &report.points {
        if let Some(c) = p.commit {
            for (i, n) in c.wakes_per_follower.iter().enumerate() {
                let _ = writeln!(csv, "{},{},{},{n}", p.config, p.clients, bucket_name(i));
            }
        }
    }
    fs::write(dir.join("wakes.csv"), csv)?;
    let top = report.points.iter().map(|p| p.clients).max().unwrap_or(1);
    let categories: Vec<String> = (0..WAKES_PER_FOLLOWER_BUCKETS.len())
        .map(bucket_name)
        .collect();
    let series: Vec<(String, Vec<f64>)> = report
        .points
        .iter()
        .filter(|p| p.clients == top)
        .filter_map(|p| {
            let c = p.commit?;
            let total = c.followers.max(1) as f64;
            Some((
                p.config.clone(),
                c.wakes_per_follower
                    .iter()
                    .map(|&n| 100.0 * n as f64 / total)
                    .collect(),
            ))
        })
        .collect();
    let caption = format!("Wake-ups each follower needed, {top} clients");
    plot::bars(
        &dir.join("wakes.svg"),
        Labels {
            caption: &caption,
            x: "wake-ups before the follower's commit was done",
            y: "% of followers",
        },
        &categories,
        &series,
    )?;
    Ok(Extra {
        section: String::new(),
        files: format!(
            "- `wakes.csv` (config, clients, wakeups_per_follower, followers) and `wakes.svg`: \
             how many times each follower was woken ({top} clients in the chart; book Fig \
             8-15).\n"
        ),
    })
}

fn configs_of(report: &Report) -> Vec<String> {
    let mut configs: Vec<String> = Vec::new();
    for p in &report.points {
        if !configs.contains(&p.config) {
            configs.push(p.config.clone());
        }
    }
    configs
}

/// The summary (markdown) and a one-line headline for the index.
fn summary(
    args: &LabArgs,
    spec: &Spec,
    report: &Report,
    flags: &[String],
    extra: &Extra,
) -> (String, String) {
    let info = &report.info;
    let configs = configs_of(report);
    let mut clients: Vec<usize> = report.points.iter().map(|p| p.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    let mut out = format!(
        "# {}: {}\n\nBook: {}.\n\n",
        spec.name, spec.title, spec.book
    );
    let _ = writeln!(out, "- Machine: {}", info.machine.describe());
    let _ = writeln!(out, "- Built from: {}", info.build);
    let _ = writeln!(out, "- Build profile: {}", info.profile.stated());
    let _ = writeln!(
        out,
        "- Command: `waterline lab {}{}` = `waterline tpcc {}`",
        spec.name,
        if args.quick { " --quick" } else { "" },
        flags.join(" ")
    );
    if !spec.servers.is_empty() {
        let most = report.points.iter().map(|p| p.clients).max().unwrap_or(1);
        let common = served::common_flags(most).join(" ");
        for (label, flags) in &spec.servers {
            // The instances' flags are the taskset that places them.
            let command = if spec.experiment == Experiment::Instances {
                format!("{} waterline serve {common}", flags.join(" "))
            } else {
                format!("waterline serve {common} {}", flags.join(" "))
            };
            let _ = writeln!(
                out,
                "- Server for `{label}`: `{}` (one process per configuration, started and \
                 stopped by the lab)",
                command.trim_end()
            );
        }
    }
    let _ = writeln!(
        out,
        "- Workload: TPC-C-lite on {}, {} warehouse(s), {} items, {} customers/district{}; \
         {:.1} s warm-up, then {} per point.",
        info.backend,
        info.scale.warehouses,
        info.scale.items,
        info.scale.customers,
        if info.scale.is_standard() {
            ""
        } else {
            " (lite)"
        },
        info.warmup_secs,
        info.limit
    );
    let rounds = report.rounds();
    if rounds > 1 {
        let _ = writeln!(
            out,
            "- Baseline: `{}`; txn/s is the median of {rounds} alternating rounds, and a ratio \
             the median of the rounds' ratios to the baseline at the same client count; the \
             other columns are the last round's.\n",
            configs[0]
        );
    } else {
        let _ = writeln!(
            out,
            "- Baseline: `{}`; ratios are each configuration's txn/s over the baseline's at \
             the same client count (one run per point: a single measurement, not a median of \
             repeats; on a noisy machine, a few percent either way is noise).\n",
            configs[0]
        );
    }
    // What ran, as each configuration's engine and a client's session read it back.
    for config in &configs {
        if let Some(p) = report.points.iter().find(|p| &p.config == config) {
            let _ = writeln!(out, "- In force for `{config}`: {}", p.effective);
        }
    }
    out.push('\n');
    // The throughput table (for the planner: the last segment of each configuration).
    let _ = write!(out, "| clients |");
    for c in &configs {
        let _ = write!(out, " {c} txn/s |");
    }
    for c in &configs[1..] {
        let _ = write!(out, " {c} / {} |", configs[0]);
    }
    if let Some((name, _, _)) = spec.metric {
        for c in &configs {
            let _ = write!(out, " {c}: {name} |");
        }
    }
    out.push('\n');
    let columns = 1 + configs.len() * 2 - 1 + spec.metric.map_or(0, |_| configs.len());
    let _ = writeln!(out, "|{}", "---|".repeat(columns));
    let find = |config: &str, clients: usize| {
        report
            .points
            .iter()
            .rfind(|p| p.config == config && p.clients == clients)
    };
    let medians = report.medians();
    // With rounds, each configuration's median txn/s and its median ratio to the baseline;
    // with one, its point's.
    let txn = |config: &str, clients: usize| match rounds {
        1 => find(config, clients).map(|p| p.measurement.txn_per_sec()),
        _ => (medians.iter())
            .find(|m| m.config == config && m.clients == clients)
            .map(|m| m.txn_per_sec),
    };
    let ratio = |config: &str, clients: usize| match rounds {
        1 => txn(config, clients)
            .zip(txn(&configs[0], clients).filter(|b| *b > 0.0))
            .map(|(t, b)| t / b),
        _ => (medians.iter())
            .find(|m| m.config == config && m.clients == clients)
            .and_then(|m| m.against_baseline.map(|(r, _)| r)),
    };
    let mut best_ratio: Option<(f64, String, usize)> = None;
    for &n in &clients {
        let _ = write!(out, "| {n} |");
        for c in &configs {
            match txn(c, n) {
                Some(t) => {
                    let _ = write!(out, " {t:.0} |");
                }
                None => out.push_str(" - |"),
            }
        }
        for c in &configs[1..] {
            match ratio(c, n) {
                Some(r) => {
                    let _ = write!(out, " {r:.2} |");
                    if best_ratio.as_ref().is_none_or(|(best, _, _)| r > *best) {
                        best_ratio = Some((r, c.clone(), n));
                    }
                }
                _ => out.push_str(" - |"),
            }
        }
        if let Some((_, _, metric)) = spec.metric {
            for c in &configs {
                match find(c, n).and_then(metric) {
                    Some(v) => {
                        let _ = write!(out, " {} |", format_metric(v));
                    }
                    None => out.push_str(" - |"),
                }
            }
        }
        out.push('\n');
    }
    if let Some(warning) = report.steal_warning() {
        let _ = writeln!(out, "\n**{warning}.**");
    }
    // Where the time went: CPU and context switches per transaction, from /proc/self.
    out.push_str(
        "\nPer transaction, the engine's process (with the driver in-process; the server \
         alone over mysql://): CPU µs, and context switches voluntary + involuntary.\n\n| \
         clients |",
    );
    for c in &configs {
        let _ = write!(out, " {c}: CPU µs | {c}: switches |");
    }
    let _ = writeln!(out, "\n|{}", "---|".repeat(1 + 2 * configs.len()));
    for &n in &clients {
        let _ = write!(out, "| {n} |");
        for c in &configs {
            match find(c, n).and_then(Point::per_txn) {
                Some(t) => {
                    let (v, i) = t.switches;
                    let _ = write!(out, " {:.1} | {v:.2} + {i:.2} |", t.cpu_us);
                }
                None => out.push_str(" - | - |"),
            }
        }
        out.push('\n');
    }
    // What bounds each configuration on any machine: the latch whose time held per
    // transaction caps throughput lowest, next to the throughput measured here.
    let _ = write!(
        out,
        "\nThe lowest ceiling a latch sets, by configuration, next to the throughput \
         measured. {}\n\n| clients |",
        waterline::tpcc::LATCH_NOTE
    );
    for c in &configs {
        let _ = write!(
            out,
            " {c}: txn/s | {c}: lowest ceiling | {c}: trx-sys ns/txn |"
        );
    }
    let _ = writeln!(out, "\n|{}", "---|".repeat(1 + 3 * configs.len()));
    for &n in &clients {
        let _ = write!(out, "| {n} |");
        for c in &configs {
            let Some(p) = find(c, n) else {
                out.push_str(" - | - | - |");
                continue;
            };
            let ceiling = p.tightest_latch().map_or_else(
                || "not measured (no in-process engine)".to_owned(),
                |l| {
                    format!(
                        "{} ({}, {:.0} ns/txn)",
                        waterline::tpcc::txn_rate(l.ceiling().unwrap_or(0.0)),
                        l.latch,
                        l.ns_per_commit
                    )
                },
            );
            let trx_sys = (p.latches().iter())
                .find(|l| l.latch == "trx-sys")
                .map_or_else(|| "-".to_owned(), |l| format!("{:.0}", l.ns_per_commit));
            let _ = write!(
                out,
                " {:.0} | {ceiling} | {trx_sys} |",
                p.measurement.txn_per_sec()
            );
        }
        out.push('\n');
    }
    let headline = match &best_ratio {
        Some((r, c, n)) => format!(
            "largest ratio {r:.2}x ({c} vs {} at {n} clients)",
            configs[0]
        ),
        None => "no ratio (one configuration)".into(),
    };
    out.push('\n');
    if let Some((r, c, n)) = &best_ratio {
        let verdict = if (r - 1.0).abs() < 0.05 {
            "within 5% of the baseline everywhere it was best, which on this machine is within \
             run-to-run noise: no effect shown"
                .to_owned()
        } else if *r > 1.0 {
            format!("{:.0}% above the baseline", (r - 1.0) * 100.0)
        } else {
            format!("{:.0}% below the baseline", (1.0 - r) * 100.0)
        };
        let _ = writeln!(
            out,
            "Largest ratio: {r:.2} ({c} at {n} clients), {verdict}.\n"
        );
    }
    out.push_str(&extra.section);
    if let Some(limits) = (spec.limits)(&info.machine) {
        let _ = writeln!(out, "What this machine can show: {limits}\n");
    }
    let failed: Vec<String> = report
        .points
        .iter()
        .filter(|p| !p.ok())
        .map(|p| format!("{} at {} clients", p.config, p.clients))
        .collect();
    if failed.is_empty() {
        out.push_str(
            "Consistency: every point passed TPC-C's conditions 3.3.2.1-4 and had no errors.\n\n",
        );
    } else {
        let _ = writeln!(out, "Consistency: FAILED at {}.\n", failed.join(", "));
    }
    out.push_str("Files:\n\n");
    let mut used = vec!["config", "clients", "txn_per_sec", "tpmc"];
    if let Some((_, columns, _)) = spec.metric {
        used.extend(columns);
    }
    let _ = writeln!(
        out,
        "- `results.csv`, `results.json`, `throughput.svg`: every point (`waterline tpcc`'s \
         report).\n{}\nCSV columns used: {}",
        extra.files,
        used.join(", ")
    );
    (out, headline)
}

fn format_metric(v: f64) -> String {
    if v.fract() == 0.0 || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_flags_replace_earlier_ones() {
        let merged = merge(
            flags("--clients 1,8,64 --duration 20 --isolation read-committed"),
            &flags("--clients 1,4 --warehouses 2"),
        );
        assert_eq!(
            merged,
            flags("--clients 1,4 --duration 20 --isolation read-committed --warehouses 2")
        );
    }

    #[test]
    fn every_experiment_parses_full_and_quick() {
        for spec in specs(4) {
            for quick in [false, true] {
                let args = LabArgs {
                    experiment: spec.experiment,
                    quick,
                    pin: Vec::new(),
                    report_dir: None,
                    results: None,
                    machine_name: None,
                    tpcc: flags("--seed 3"),
                };
                let f = tpcc_flags(&args, &spec, Path::new("/tmp/x"));
                let tpcc = TpccParser::try_parse_from(&f).expect("parses").args;
                // In process, --compare gives the sides; over the protocol, the servers.
                let sides = configurations(&tpcc).expect("compares").len();
                assert!(sides >= 2 || spec.servers.len() >= 2, "{}", spec.name);
                assert_eq!(tpcc.seed, 3);
                assert_eq!(tpcc.duration <= 1.0, quick, "{}: {f:?}", spec.name);
                assert!(tpcc.clients.len() <= 2 || !quick, "{}: {f:?}", spec.name);
            }
        }
    }
}
