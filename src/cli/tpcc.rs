//! `waterline tpcc`: TPC-C-lite against the engine in process (`native`, `sql`) or any
//! MySQL-protocol server (`mysql://...`), over a sweep of client counts and, with
//! `--compare`, of one knob's values, with a report directory of CSV, JSON and SVG.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::{Args, Parser, ValueEnum};
use waterline::numa::{Pin, Placement};
use waterline::tpcc::{
    BackendKind, DriverOptions, Limit, Report, RunInfo, Runtime, Scale, Settings, Target,
    run_point_on,
};

use waterline::EngineConfig;

use super::{DeliveryClaimArg, Knobs, StepOrderArg};

/// What a command of this module returns.
pub type CliResult<T> = Result<T, Box<dyn std::error::Error>>;

/// How clients run.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum RuntimeArg {
    /// One OS thread per client.
    Threads,
    /// One tokio task per client.
    Tasks,
}

/// [`Knobs`] as a parser of their own, so `--compare` can re-parse one flag onto a copy.
#[derive(Clone, Debug, Parser)]
#[command(no_binary_name = true)]
struct KnobParser {
    #[command(flatten)]
    knobs: Knobs,
}

/// [`TpccArgs`] as a parser of their own, for `waterline lab`, which builds each
/// experiment's run from flags (its defaults, then the user's).
#[derive(Clone, Debug, Parser)]
#[command(no_binary_name = true, args_override_self = true)]
pub struct TpccParser {
    /// The flags.
    #[command(flatten)]
    pub args: TpccArgs,
}

/// `waterline tpcc` flags.
#[derive(Clone, Debug, Args)]
pub struct TpccArgs {
    /// native, sql, or mysql://user:password@host:port/database.
    #[arg(long, default_value = "native")]
    pub backend: BackendKind,
    /// Warehouses (the TPC-C scale factor).
    #[arg(long, default_value_t = 1)]
    pub warehouses: i64,
    /// Items (the spec's 100,000; fewer makes a "lite" database, stated in the report).
    #[arg(long, default_value_t = 100_000)]
    pub items: i64,
    /// Customers per district (the spec's 3,000; fewer is "lite").
    #[arg(long, default_value_t = 3000)]
    pub customers: i64,
    /// Client counts to sweep, comma-separated (1,8,64,256,1024).
    #[arg(long, value_delimiter = ',', default_value = "8")]
    pub clients: Vec<usize>,
    /// Seconds measured per point.
    #[arg(long, default_value_t = 30.0)]
    pub duration: f64,
    /// Measure this many transactions per point instead of a duration.
    #[arg(long)]
    pub count: Option<u64>,
    /// Seconds of warm-up before each point (not counted).
    #[arg(long, default_value_t = 5.0)]
    pub warmup: f64,
    /// OS threads or tokio tasks.
    #[arg(long, value_enum, default_value = "threads")]
    pub runtime: RuntimeArg,
    /// Tokio worker threads for `--runtime tasks` (default: one per CPU).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Seeds the load and the clients' inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Loader threads (default: one per CPU).
    #[arg(long)]
    pub load_threads: Option<usize>,
    /// Compare a knob's values in one run: KNOB=V1,V2 (a flag name without dashes, as
    /// snapshot=vector,hybrid or admission=unlimited,limit:64), or presets of several knobs:
    /// preset=baseline,baseline+limit,fixed,fixed+limit (every mechanism before the book's
    /// work, or every fix; +limit: an admission limit of 4 per CPU). Each value gets its own
    /// freshly loaded database; the points run back to back per client count.
    #[arg(long, value_name = "KNOB=V1,V2,...")]
    pub compare: Option<String>,
    /// Run the whole sweep this many times, each round on freshly loaded databases, and
    /// report each point's median, lowest and highest txn/s over the rounds (and with
    /// `--compare`, the median of each round's ratio to the first value). With `--compare`
    /// the values take turns: every other round runs them in reverse order.
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    /// Where the report goes (default: target/waterline-tpcc/<time>).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// Where client threads run: none, compact, spread, or node:N (everything on NUMA node
    /// N). Anything but none needs the `numa` feature.
    #[arg(long, default_value = "none")]
    pub pin: Pin,
    /// The knobs (`--compare` varies one of them).
    #[command(flatten)]
    pub knobs: Knobs,
}

/// The configurations to run: a label and its knobs.
pub fn configurations(args: &TpccArgs) -> Result<Vec<(String, Knobs)>, String> {
    let Some(compare) = &args.compare else {
        return Ok(vec![("default".into(), args.knobs.clone())]);
    };
    let (knob, values) = compare
        .split_once('=')
        .ok_or_else(|| format!("--compare {compare:?}: expected KNOB=V1,V2"))?;
    // The knobs' flags alone, parsed by a parser without defaults: `try_update_from` would
    // put every flag with a default back to it (clap sees them all as given), so
    // `--isolation read-committed --compare snapshot=...` ran REPEATABLE READ.
    let command = <KnobParser as clap::CommandFactory>::command()
        .mut_args(|a| a.default_value(None).required(false));
    values
        .split(',')
        .map(|value| {
            let flags = if knob == "preset" {
                preset(value).ok_or_else(|| {
                    format!(
                        "--compare preset={value}: expected one of {}",
                        PRESETS.join(", ")
                    )
                })?
            } else {
                vec![format!("--{knob}"), value.to_owned()]
            };
            let matches = command
                .clone()
                .try_get_matches_from(flags)
                .map_err(|e| format!("--compare {knob}={value}: {}", e.kind()))?;
            let mut knobs = args.knobs.clone();
            clap::FromArgMatches::update_from_arg_matches(&mut knobs, &matches)
                .map_err(|e| format!("--compare {knob}={value}: {}", e.kind()))?;
            Ok((format!("{knob}={value}"), knobs))
        })
        .collect()
}

/// The values of `--compare preset=...`.
pub const PRESETS: [&str; 4] = ["baseline", "baseline+limit", "fixed", "fixed+limit"];

/// The flags of a preset: `baseline` is every mechanism as it was before the book's work
/// (`EngineConfig::baseline`: sorted-vector views closed under the trx-sys latch, one
/// registry shard, group-commit followers woken by broadcast, row locks held across the
/// sync), `fixed` every fix (the defaults: hybrid views closed without the latch, 256
/// shards, point-to-point wake-ups, early lock release);
/// `+limit` adds an admission limit of [`admission_limit`] transactions.
fn preset(name: &str) -> Option<Vec<String>> {
    let (base, limited) = match name.strip_suffix("+limit") {
        Some(base) => (base, true),
        None => (name, false),
    };
    let config = match base {
        "baseline" => EngineConfig::baseline(),
        "fixed" => EngineConfig::default(),
        _ => return None,
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let admission = if limited {
        format!("limit:{}", admission_limit(cpus))
    } else {
        "unlimited".into()
    };
    let flags = [
        ("--snapshot", config.snapshot.name().to_owned()),
        ("--view-close", config.view_close.name().to_owned()),
        ("--trx-shards", config.trx_shards.to_string()),
        ("--wakeup", config.commit.group.wakeup.name().to_owned()),
        (
            "--lock-release",
            config.commit.lock_release.name().to_owned(),
        ),
        ("--admission", admission),
    ];
    Some(
        flags
            .into_iter()
            .flat_map(|(flag, value)| [flag.to_owned(), value])
            .collect(),
    )
}

/// The admission limit the lab and `preset=...+limit` use on a machine of `cpus` CPUs: four
/// per CPU (the book's 512 would be a 128-CPU machine's; on a few CPUs it never binds).
pub fn admission_limit(cpus: usize) -> usize {
    4 * cpus
}

fn settings(knobs: &Knobs, data_dir: Option<PathBuf>) -> Settings {
    Settings {
        engine: knobs.engine.config(),
        data_dir,
        isolation: knobs.isolation.into(),
        planner: knobs.planner,
        order: knobs.step_order.into(),
        claim: knobs.delivery_claim.into(),
    }
}

fn default_report_dir() -> PathBuf {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    PathBuf::from("target/waterline-tpcc").join(format!("run-{secs}"))
}

/// Checks what cannot work before anything is loaded.
fn validate(args: &TpccArgs, configs: &[(String, Knobs)]) -> CliResult<()> {
    args.scale().validate()?;
    if args.rounds == 0 {
        return Err("--rounds needs 1 or more".into());
    }
    if args.clients.is_empty() || args.clients.contains(&0) {
        return Err("--clients needs one or more counts above 0".into());
    }
    let pooled = configs.iter().any(|(_, k)| {
        matches!(
            k.engine.admission,
            waterline::throttle::Policy::ThreadPool(_)
        )
    });
    if pooled && args.backend != BackendKind::Native {
        return Err(
            "--admission pool:N needs --backend native (SQL sessions do not run on the pool)"
                .into(),
        );
    }
    if let Some(dir) = &args.knobs.engine.data_dir
        && dir.exists()
        && dir.read_dir()?.next().is_some()
    {
        return Err(format!(
            "--data-dir {}: must be empty or absent (a fresh load goes there)",
            dir.display()
        )
        .into());
    }
    Ok(())
}

impl TpccArgs {
    fn scale(&self) -> Scale {
        Scale {
            warehouses: self.warehouses,
            items: self.items,
            customers: self.customers,
        }
    }

    fn runtime(&self) -> Runtime {
        match self.runtime {
            RuntimeArg::Threads => Runtime::Threads,
            RuntimeArg::Tasks => Runtime::Tasks {
                workers: self.workers.unwrap_or_else(cpus),
            },
        }
    }

    fn limit(&self) -> Limit {
        match self.count {
            Some(n) => Limit::Count(n),
            None => Limit::Duration(Duration::from_secs_f64(self.duration.max(0.001))),
        }
    }
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The loaded databases of one sweep, one per configuration.
pub struct Loaded {
    targets: Vec<(String, Target)>,
    load: (u64, f64),
}

/// Loads one database per configuration (on the calling thread's placement, which its
/// loader threads inherit).
pub fn load(args: &TpccArgs, configs: &[(String, Knobs)]) -> CliResult<Loaded> {
    let mut targets = Vec::new();
    let mut load = (0, 0.0);
    for (i, (label, knobs)) in configs.iter().enumerate() {
        let data_dir = knobs.engine.data_dir.as_ref().map(|d| {
            if configs.len() > 1 {
                d.join(format!("config-{i}"))
            } else {
                d.clone()
            }
        });
        eprintln!(
            "{label}: loading {} warehouse(s) into {}",
            args.warehouses, args.backend
        );
        let threads = args.load_threads.unwrap_or_else(cpus);
        let (target, report) = Target::create(
            &args.backend,
            &settings(knobs, data_dir),
            args.scale(),
            args.seed,
            threads,
        )?;
        eprintln!(
            "{label}: loaded {} rows in {:.1} s",
            report.rows,
            report.elapsed.as_secs_f64()
        );
        load = (report.rows, report.elapsed.as_secs_f64());
        targets.push((label.clone(), target));
    }
    Ok(Loaded { targets, load })
}

impl Loaded {
    /// Runs every client count against every database, back to back per client count, with
    /// `placement`'s thread pinning.
    pub fn run(&self, args: &TpccArgs, placement: &Placement) -> CliResult<Report> {
        let on_start = placement.on_start();
        let mut points = Vec::new();
        for &clients in &args.clients {
            for (label, target) in &self.targets {
                points.push(self.point(args, label, target, clients, on_start.as_ref())?);
            }
        }
        Ok(self.report(args, placement, points))
    }

    /// One point: `clients` clients against configuration `label`'s database.
    pub fn point(
        &self,
        args: &TpccArgs,
        label: &str,
        target: &Target,
        clients: usize,
        on_start: Option<&waterline::tpcc::OnThreadStart>,
    ) -> CliResult<waterline::tpcc::Point> {
        eprintln!(
            "{label}: {clients} clients, {:.1} s warm-up, then {}",
            args.warmup,
            args.limit()
        );
        let options = DriverOptions {
            clients,
            runtime: args.runtime(),
            warmup: Duration::from_secs_f64(args.warmup.max(0.0)),
            limit: args.limit(),
            seed: args.seed,
            scale: args.scale(),
        };
        Ok(run_point_on(target, label, &options, on_start)?)
    }

    /// The databases, by configuration label.
    pub fn targets(&self) -> &[(String, Target)] {
        &self.targets
    }

    /// A report of `points`, run as `args` say on this sweep's databases.
    pub fn report(
        &self,
        args: &TpccArgs,
        placement: &Placement,
        points: Vec<waterline::tpcc::Point>,
    ) -> Report {
        Report {
            info: RunInfo {
                backend: match args.backend {
                    // Which order NewOrder and Payment ran in (see `StepOrderArg`).
                    // and how Delivery claimed orders (see `DeliveryClaimArg`).
                    BackendKind::Native => {
                        let compared = |knob: &str| {
                            args.compare
                                .as_ref()
                                .is_some_and(|c| c.starts_with(&format!("{knob}=")))
                        };
                        format!(
                            "native ({} step order, {} Delivery)",
                            match args.knobs.step_order {
                                _ if compared("step-order") => "each config's",
                                StepOrderArg::HotLast => "hot-last",
                                StepOrderArg::Spec => "spec",
                            },
                            match args.knobs.delivery_claim {
                                _ if compared("delivery-claim") => "each config's",
                                DeliveryClaimArg::SkipLocked => "skip-locked",
                                DeliveryClaimArg::Wait => "waiting",
                            }
                        )
                    }
                    ref other => other.to_string(),
                },
                scale: args.scale(),
                seed: args.seed,
                warmup_secs: args.warmup,
                limit: args.limit(),
                runtime: args.runtime(),
                machine: placement.machine(),
                load: self.load,
                build: crate::BUILD.into(),
                profile: crate::profile(),
            },
            points,
        }
    }
}

/// Validates, places, loads and runs `configs` as `args` say: the whole sweep.
pub fn sweep(
    args: &TpccArgs,
    configs: &[(String, Knobs)],
    placement: &Placement,
) -> CliResult<(Report, Loaded)> {
    validate(args, configs)?;
    placement.enter()?;
    let report = rounds(args, configs, placement);
    placement.leave()?;
    report
}

/// The sweep's rounds (`--rounds`), each on freshly loaded databases (the last round's
/// dropped first, so its memory is reused), the configurations in reverse order every other
/// round: a configuration that always ran first, or always second, would carry whatever
/// that place costs (a machine warming up, memory the one before freed) into every
/// comparison. The last round's databases are returned with the report, for the caller to
/// drop or to leave to the process's exit.
fn rounds(
    args: &TpccArgs,
    configs: &[(String, Knobs)],
    placement: &Placement,
) -> CliResult<(Report, Loaded)> {
    let mut report: Option<Report> = None;
    let mut last = None;
    for round in 1..=args.rounds {
        let mut order: Vec<(String, Knobs)> = configs.to_vec();
        if round % 2 == 0 {
            order.reverse();
        }
        if args.rounds > 1 {
            eprintln!("round {round} of {}", args.rounds);
            // Each round loads into directories of its own: the last round's are not empty.
            for (_, knobs) in &mut order {
                knobs.engine.data_dir = knobs
                    .engine
                    .data_dir
                    .take()
                    .map(|d| d.join(format!("round-{round}")));
            }
        }
        // The round before's databases go before this round's are loaded.
        drop(last.take());
        let loaded = load(args, &order)?;
        let mut this = loaded.run(args, placement)?;
        last = Some(loaded);
        for point in &mut this.points {
            point.round = round;
        }
        match &mut report {
            None => report = Some(this),
            Some(report) => report.points.append(&mut this.points),
        }
    }
    report
        .zip(last)
        .ok_or_else(|| "--rounds needs 1 or more".into())
}

/// Writes `report` into `dir`, prints its summary, and fails if a point failed.
pub fn finish(report: &Report, dir: &Path) -> CliResult<()> {
    report.write(dir)?;
    print!("{}", report.summary());
    println!("report: {}", absolute(dir).display());
    let failed = report.points.iter().filter(|p| !p.ok()).count();
    if failed > 0 {
        return Err(format!(
            "{failed} point(s) failed: an error, or a consistency condition did not hold"
        )
        .into());
    }
    Ok(())
}

/// `path` from the root, for a line a user copies into another shell (as given if the
/// current directory cannot be read).
pub fn absolute(path: &Path) -> std::path::PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// Runs the sweep; an error if any point failed its checks or stopped on an error.
pub fn run(args: TpccArgs) -> CliResult<()> {
    let configs = configurations(&args)?;
    let placement = Placement::new(args.pin)?;
    let (report, databases) = sweep(&args, &configs, &placement)?;
    let dir = args.report_dir.clone().unwrap_or_else(default_report_dir);
    let finished = finish(&report, &dir);
    // The process ends here: its exit gives the databases' memory back at once, where
    // dropping them would free millions of rows one by one (seconds after a 30 s run) before
    // the command returns. Nothing is lost: every commit the run acknowledged is as durable
    // as its flush policy made it, and a later open of a data directory recovers from its
    // log.
    std::mem::forget(databases);
    finished
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every knob set away from its default.
    const AWAY: [(&str, &str); 23] = [
        ("isolation", "read-committed"),
        ("planner", "legacy8027"),
        ("step-order", "spec"),
        ("delivery-claim", "wait"),
        ("snapshot", "vector"),
        ("view-close", "latched"),
        ("trx-shards", "1"),
        ("lock-wait-timeout", "7"),
        ("lock-spin-us", "0"),
        ("lock-holder-boost", "3"),
        ("implicit-insert-locks", "false"),
        ("gap-locks", "false"),
        ("purge-interval-ms", "5"),
        ("commit-purge", "false"),
        ("hybrid-global-window-bytes", "4096"),
        ("hybrid-layout", "compact"),
        ("csn-ring-slots", "1024"),
        ("flush", "os"),
        ("wakeup", "broadcast"),
        ("lock-release", "early"),
        ("sync-delay-us", "10"),
        ("segment-bytes", "1048576"),
        ("admission", "limit:4"),
    ];

    fn parse(flags: &[String]) -> TpccArgs {
        TpccParser::try_parse_from(flags).unwrap().args
    }

    #[test]
    fn compare_changes_its_knob_and_keeps_every_other_flag() {
        let all: Vec<String> = AWAY
            .iter()
            .flat_map(|(k, v)| [format!("--{k}"), (*v).to_owned()])
            .collect();
        // Each knob family in turn is compared, against each of the others set away from
        // its default.
        for (knob, value) in AWAY {
            let default = <KnobParser as clap::CommandFactory>::command()
                .get_arguments()
                .find(|a| a.get_long() == Some(knob))
                .and_then(|a| a.get_default_values().first().cloned())
                .map_or("1".to_owned(), |v| v.to_string_lossy().into_owned());
            let mut flags = all.clone();
            flags.extend(["--compare".into(), format!("{knob}={default},{value}")]);
            let configs = configurations(&parse(&flags)).unwrap();
            for ((label, knobs), v) in configs.iter().zip([&default, &value.to_owned()]) {
                let mut wanted = all.clone();
                wanted.extend([format!("--{knob}"), v.clone()]);
                assert_eq!(label, &format!("{knob}={v}"));
                assert_eq!(
                    format!("{knobs:?}"),
                    format!("{:?}", parse(&wanted).knobs),
                    "--compare {knob}={v} changed another flag"
                );
            }
        }
    }
}
