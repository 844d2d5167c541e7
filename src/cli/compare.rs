//! `waterline compare`: two builds of waterline, or waterline and MariaDB, in alternating
//! pairs (baseline, then candidate, in one sitting) over one of the project's workloads, and
//! the results folder that says what ran, where, and what it measured.
//!
//! | workload | a run is | measured |
//! |---|---|---|
//! | `tpcc` | `BINARY tpcc ARGS` on its embedded engine, or with `--server` (or a MariaDB side) the candidate's `tpcc --backend mysql://` against each server | txn/s |
//! | `sysbench` | `sysbench ARGS run` against each side's server (prepared once) | transactions/s |
//! | `benchmarksql` | BenchmarkSQL's `runBenchmark.sh` against each side's server (loaded once) | tpmC |
//! | `bench` | `BINARY ARGS --noplot`, each side a criterion bench binary | µs per iteration, each benchmark |
//!
//! Servers run side by side for the whole comparison, each started here at the same
//! durability and isolation and read back (a mismatch stops the comparison before it
//! measures anything); the idle one is stopped (SIGSTOP) while the other runs, so its
//! background work cannot take the other's CPU. Every run records the share of the
//! machine's CPU time the hypervisor stole meanwhile; the summary warns of runs that lost
//! more than [`STEAL_WARN`](waterline::tpcc::steal::STEAL_WARN).
//!
//! Writes `<results>/<yyyy-mm-dd>-<machine>/<name>/`: `RUN.md` (the command, both sides,
//! their build profiles, what each server reported, the machine), `pairs.csv` (every run)
//! and `summary.md` (each pair's ratio candidate / baseline and their median).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::str::FromStr;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use mysql::prelude::Queryable;
use waterline::tpcc::steal::{CpuTimes, STEAL_WARN};

use super::lab::files::{command_line, dated_dir, utc_now};
use super::tpcc::CliResult;

/// The workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Workload {
    /// TPC-C-lite (`waterline tpcc`).
    Tpcc,
    /// sysbench; its test name is the first of the arguments after `--`.
    Sysbench,
    /// BenchmarkSQL 5.0 (`../shared/tools/benchmarksql`, or `--benchmarksql DIR`).
    Benchmarksql,
    /// A criterion bench binary (`cargo bench --no-run` prints where it is).
    Bench,
}

/// One side of the comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Side {
    /// A binary: `waterline`, or a criterion bench binary for `bench`.
    Binary(PathBuf),
    /// Debian's MariaDB server (`/usr/sbin/mariadbd`), started here.
    MariaDb,
}

impl FromStr for Side {
    type Err = String;

    fn from_str(s: &str) -> Result<Side, String> {
        if s == "mariadb" {
            return Ok(Side::MariaDb);
        }
        let path = PathBuf::from(s);
        if !path.is_file() {
            return Err(format!("{s}: no such binary (or say mariadb)"));
        }
        Ok(Side::Binary(
            path.canonicalize().map_err(|e| e.to_string())?,
        ))
    }
}

/// What the servers keep of each commit: the same on both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Durability {
    /// waterline in memory; MariaDB writes its log without syncing it
    /// (innodb_flush_log_at_trx_commit=0).
    Memory,
    /// waterline `--data-dir` with `--flush every-commit`; MariaDB syncs at every commit
    /// (innodb_flush_log_at_trx_commit=1).
    Durable,
}

/// The isolation level both servers run at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Isolation {
    /// READ COMMITTED.
    ReadCommitted,
    /// REPEATABLE READ (MySQL's default).
    RepeatableRead,
}

/// `waterline compare` flags.
#[derive(Clone, Debug, Args)]
pub struct CompareArgs {
    /// The results folder's name (under `<results>/<yyyy-mm-dd>-<machine>/`).
    pub name: String,
    /// What each run runs.
    #[arg(value_enum)]
    pub workload: Workload,
    /// The baseline: a binary (a waterline build; a criterion bench binary for `bench`), or
    /// `mariadb`.
    #[arg(long)]
    pub base: Side,
    /// The candidate, likewise.
    #[arg(long)]
    pub new: Side,
    /// Alternating pairs.
    #[arg(long, default_value_t = 3)]
    pub pairs: usize,
    /// Run `tpcc` against each side as a server, over the protocol (implied by a MariaDB
    /// side; `sysbench` and `benchmarksql` always do).
    #[arg(long)]
    pub server: bool,
    /// What the servers keep of each commit.
    #[arg(long, value_enum, default_value_t = Durability::Memory)]
    pub durability: Durability,
    /// The candidate's durability, where durability is what is compared (what it costs one
    /// build): then the servers must report the same isolation, and each the durability
    /// it was asked for.
    #[arg(long, value_enum)]
    pub new_durability: Option<Durability>,
    /// The servers' isolation level.
    #[arg(long, value_enum, default_value_t = Isolation::RepeatableRead)]
    pub isolation: Isolation,
    /// A `waterline serve` flag for each waterline server (repeat it for more), e.g.
    /// `--serve-flag=--thread-pool`.
    #[arg(long = "serve-flag", allow_hyphen_values = true)]
    pub serve_flags: Vec<String>,
    /// Where BenchmarkSQL's kit is.
    #[arg(long, default_value = "../shared/tools/benchmarksql")]
    pub benchmarksql: PathBuf,
    /// The folder the dated results folders go in.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// The machine's name in the results folder's name (default: its host name).
    #[arg(long)]
    pub machine_name: Option<String>,
    /// The workload's arguments, after `--`: `waterline tpcc` flags; sysbench's test and
    /// flags (`oltp_read_write --threads=16 --time=10`); BenchmarkSQL's `warehouses=1
    /// terminals=8 runMins=1` property overrides; a bench binary's filter and criterion
    /// flags.
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// The two sides, in the order each pair runs them.
const SIDES: [&str; 2] = ["base", "new"];

/// What one run measured of one benchmark.
struct Measured {
    /// The benchmark (the workload's name, or a criterion benchmark's id).
    benchmark: String,
    /// The workload's measure ([`metric`]).
    value: f64,
    /// Transactions committed in the measured time, where the workload counts them.
    transactions: Option<u64>,
    /// The 95th-percentile latency, where the workload reports it (tpcc: NewOrder's).
    p95_ms: Option<f64>,
    /// The share of CPU time stolen over the measured time, where the run measured it
    /// itself (tpcc: without its load); else the whole run's is taken.
    steal: Option<f64>,
    /// The configuration the engine reported, where the run has its own (embedded tpcc).
    reported: Option<String>,
}

/// One measured run of one side.
struct Run {
    pair: usize,
    side: &'static str,
    measured: Measured,
    /// The server's deadlocks (`Innodb_deadlocks`) per 1,000 transactions in the run.
    deadlocks_per_1000: Option<f64>,
    /// Checkpoints a waterline server took during the run (`Waterline_checkpoints`): one
    /// wrote the whole database meanwhile.
    checkpoints: Option<u64>,
    /// What the engine or server said it ran with.
    reported: String,
}

/// What a workload measures: the column, its unit, and whether more is better.
struct Metric {
    unit: &'static str,
    higher_is_better: bool,
}

fn metric(workload: Workload) -> Metric {
    match workload {
        Workload::Tpcc => Metric {
            unit: "txn/s",
            higher_is_better: true,
        },
        Workload::Sysbench => Metric {
            unit: "tps",
            higher_is_better: true,
        },
        Workload::Benchmarksql => Metric {
            unit: "tpmC",
            higher_is_better: true,
        },
        Workload::Bench => Metric {
            unit: "µs",
            higher_is_better: false,
        },
    }
}

/// Runs the comparison and writes its folder.
pub fn run(args: CompareArgs) -> CliResult<()> {
    if args.pairs == 0 {
        return Err("--pairs must be at least 1".into());
    }
    let machine = waterline::numa::machine();
    let dir = dated_dir(
        &args.results,
        args.machine_name.as_deref(),
        &machine,
        &args.name,
    );
    let started = utc_now();
    let work = tempfile::tempdir()?;
    // BenchmarkSQL's kit, copied and built here (the shared one is left as it is).
    let kit = work.path().join("kit");
    let served = args.workload != Workload::Bench
        && (args.server
            || args.workload != Workload::Tpcc
            || [&args.base, &args.new].contains(&&Side::MariaDb));
    if args.workload == Workload::Bench
        && !matches!((&args.base, &args.new), (Side::Binary(_), Side::Binary(_)))
    {
        return Err("bench compares two bench binaries".into());
    }
    let mut servers = Vec::new();
    if served {
        for (k, side) in [&args.base, &args.new].into_iter().enumerate() {
            let durability = match k {
                1 => args.new_durability.unwrap_or(args.durability),
                _ => args.durability,
            };
            let dir = work.path().join(SIDES[k]);
            servers.push(Server::start(side, &args, durability, free_port()?, &dir)?);
        }
        check_equal(&args, &servers)?;
        if args.workload == Workload::Benchmarksql {
            build_kit(&args.benchmarksql, &kit)?;
        }
        for server in &servers {
            prepare(&args, server, &kit)?;
        }
    }
    let mut runs = Vec::new();
    for pair in 1..=args.pairs {
        for (k, side) in SIDES.into_iter().enumerate() {
            if let [base, new] = &servers[..] {
                let (running, idle) = if k == 0 { (base, new) } else { (new, base) };
                idle.signal("STOP");
                running.signal("CONT");
            }
            let server = servers.get(k);
            let deadlocks = server.and_then(|s| s.status("Innodb_deadlocks"));
            let checkpoints = server.and_then(|s| s.status("Waterline_checkpoints"));
            let before = CpuTimes::now();
            let out = work.path().join(format!("{side}-{pair}"));
            let measured = measure(&args, k, servers.get(k), &kit, &out)?;
            let stolen = CpuTimes::now()
                .zip(before)
                .map(|(after, before)| after.steal_share_since(&before));
            let since = |before: Option<u64>, counter: &str| {
                before
                    .zip(server.and_then(|s| s.status(counter)))
                    .map(|(before, after)| after.saturating_sub(before))
            };
            let deadlocks = since(deadlocks, "Innodb_deadlocks");
            let checkpoints = since(checkpoints, "Waterline_checkpoints");
            for mut measured in measured {
                eprintln!(
                    "pair {pair} {side}: {} {:.2} {}",
                    measured.benchmark,
                    measured.value,
                    metric(args.workload).unit
                );
                measured.steal = measured.steal.or(stolen);
                let reported = match (&measured.reported, servers.get(k)) {
                    (Some(said), _) => said.clone(),
                    (None, Some(server)) => server.reported.clone(),
                    (None, None) => String::new(),
                };
                let deadlocks_per_1000 = deadlocks
                    .zip(measured.transactions.filter(|&n| n > 0))
                    .map(|(d, n)| 1000.0 * d as f64 / n as f64);
                runs.push(Run {
                    pair,
                    side,
                    measured,
                    deadlocks_per_1000,
                    checkpoints,
                    reported,
                });
            }
        }
    }
    for server in &servers {
        server.signal("CONT");
    }
    fs::create_dir_all(&dir)?;
    write_pairs(&dir, &runs)?;
    let summary = summary(&args, &runs);
    fs::write(dir.join("summary.md"), &summary)?;
    fs::write(
        dir.join("RUN.md"),
        run_md(&args, &servers, &started, &machine),
    )?;
    print!("{summary}");
    println!("results: {}", dir.display());
    // The repository's index of its results, where this is the repository.
    let index = Path::new("scripts/results-index.py");
    if args.results == Path::new("results") && index.is_file() {
        let indexed = Command::new("python3").arg(index).status();
        if !indexed.is_ok_and(|s| s.success()) {
            eprintln!("waterline compare: scripts/results-index.py failed; run it again");
        }
    }
    Ok(())
}

/// Refuses two servers that do not report the same durability and isolation (or, with
/// `--new-durability`, the same isolation and each the durability it was asked for).
fn check_equal(args: &CompareArgs, servers: &[Server]) -> CliResult<()> {
    let [base, new] = servers else {
        return Ok(());
    };
    let equal = match args.new_durability {
        None => base.reported == new.reported,
        Some(_) => base.isolation == new.isolation,
    };
    if !equal {
        return Err(format!(
            "refused: the baseline reports {}, the candidate {}: not equal durability and \
             isolation",
            base.reported, new.reported
        )
        .into());
    }
    for (server, asked) in [
        (base, args.durability),
        (new, args.new_durability.unwrap_or(args.durability)),
    ] {
        let flush = match asked {
            Durability::Memory => "0",
            Durability::Durable => "1",
        };
        if server.flush != flush {
            return Err(format!(
                "refused: a server asked for {asked:?} reports innodb_flush_log_at_trx_commit={}",
                server.flush
            )
            .into());
        }
    }
    Ok(())
}

/// A port nobody listens on now.
fn free_port() -> CliResult<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// A server one side runs, for the whole comparison.
struct Server {
    child: Child,
    port: u16,
    /// What it reported of its durability and isolation.
    reported: String,
    /// Its `innodb_flush_log_at_trx_commit`, as it reported it.
    flush: String,
    /// Its isolation level, as it reported it.
    isolation: String,
    /// How it was started, for RUN.md.
    described: String,
}

impl Server {
    fn start(
        side: &Side,
        args: &CompareArgs,
        durability: Durability,
        port: u16,
        dir: &Path,
    ) -> CliResult<Server> {
        fs::create_dir_all(dir)?;
        let log = fs::File::create(dir.join("server.log"))?;
        let (isolation, mariadb_isolation) = match args.isolation {
            Isolation::ReadCommitted => ("read-committed", "READ-COMMITTED"),
            Isolation::RepeatableRead => ("repeatable-read", "REPEATABLE-READ"),
        };
        let (child, described) = match side {
            Side::Binary(binary) => {
                let mut command = Command::new(binary);
                command.args(["--transparent-huge-pages", "off", "serve", "--listen"]);
                command.arg(format!("127.0.0.1:{port}"));
                command.args(["--database", "tpcc", "--database", "sbtest", "--database"]);
                command.args(["benchmarksql", "--max-connections", "2000", "--isolation"]);
                command.arg(isolation);
                if durability == Durability::Durable {
                    command.arg("--data-dir").arg(dir.join("data"));
                    command.args(["--flush", "every-commit"]);
                }
                command.args(&args.serve_flags);
                let described = format!(
                    "`waterline serve` ({}), isolation {isolation}, {}{}",
                    describe_binary(binary),
                    match durability {
                        Durability::Memory => "in memory".to_owned(),
                        Durability::Durable => "--data-dir, --flush every-commit".to_owned(),
                    },
                    if args.serve_flags.is_empty() {
                        String::new()
                    } else {
                        format!(", {}", args.serve_flags.join(" "))
                    }
                );
                let child = command.stdout(log.try_clone()?).stderr(log).spawn()?;
                (child, described)
            }
            Side::MariaDb => {
                let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
                let data = dir.join("data");
                let tmp = dir.join("tmp");
                fs::create_dir_all(&data)?;
                fs::create_dir_all(&tmp)?;
                let installed = Command::new("mariadb-install-db")
                    .arg("--no-defaults")
                    .arg(format!("--datadir={}", data.display()))
                    .arg(format!("--tmpdir={}", tmp.display()))
                    .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
                    .arg(format!("--user={user}"))
                    .stdout(Stdio::null())
                    .status()?;
                if !installed.success() {
                    return Err("mariadb-install-db failed".into());
                }
                let flush = match durability {
                    Durability::Memory => "0",
                    Durability::Durable => "1",
                };
                let child = Command::new("/usr/sbin/mariadbd")
                    .arg("--no-defaults")
                    .arg(format!("--datadir={}", data.display()))
                    .arg(format!("--tmpdir={}", tmp.display()))
                    .arg(format!("--socket={}", dir.join("sock").display()))
                    .arg(format!("--port={port}"))
                    .args(["--bind-address=127.0.0.1", "--skip-log-bin"])
                    .arg(format!("--user={user}"))
                    .args([
                        "--innodb-buffer-pool-size=2G",
                        "--innodb-log-file-size=512M",
                    ])
                    .arg(format!("--innodb-flush-log-at-trx-commit={flush}"))
                    .arg(format!("--transaction-isolation={mariadb_isolation}"))
                    .args([
                        "--character-set-server=utf8mb4",
                        "--collation-server=utf8mb4_bin",
                    ])
                    .arg("--max-connections=2000")
                    .stdout(log.try_clone()?)
                    .stderr(log)
                    .spawn()?;
                let version = Command::new("/usr/sbin/mariadbd")
                    .arg("--version")
                    .output()
                    .map(|o| {
                        let text = String::from_utf8_lossy(&o.stdout).into_owned();
                        text.split_whitespace().collect::<Vec<_>>().join(" ")
                    })
                    .unwrap_or_default();
                let described = format!(
                    "{version}, binary log off, 2 GiB buffer pool, \
                     innodb_flush_log_at_trx_commit={flush}, isolation {mariadb_isolation}"
                );
                (child, described)
            }
        };
        let mut server = Server {
            child,
            port,
            reported: String::new(),
            flush: String::new(),
            isolation: String::new(),
            described,
        };
        let mut conn = server.connect(Duration::from_secs(30))?;
        for db in ["tpcc", "sbtest", "benchmarksql"] {
            conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS {db}"))?;
        }
        // MariaDB 10.11 has no @@transaction_isolation; both have @@tx_isolation.
        let (flush, isolation): (String, String) = conn
            .query_first("SELECT @@innodb_flush_log_at_trx_commit, @@tx_isolation")?
            .ok_or("the server did not say its durability and isolation")?;
        server.reported = format!("innodb_flush_log_at_trx_commit={flush}, isolation {isolation}");
        server.flush = flush;
        server.isolation = isolation;
        if let Side::Binary(_) = side {
            let durability: Option<String> = conn.query_first("SELECT @@waterline_durability")?;
            if let Some(d) = durability {
                let _ = write!(server.described, "; it reports waterline_durability={d}");
            }
        }
        Ok(server)
    }

    /// A connection as root, waiting up to `patience` for the server to answer.
    fn connect(&mut self, patience: Duration) -> CliResult<mysql::Conn> {
        let url = format!("mysql://root@127.0.0.1:{}/", self.port);
        let began = Instant::now();
        loop {
            match mysql::Conn::new(mysql::Opts::from_url(&url)?) {
                Ok(conn) => return Ok(conn),
                Err(error) if began.elapsed() > patience => {
                    return Err(format!(
                        "the server on port {} did not answer: {error}",
                        self.port
                    )
                    .into());
                }
                Err(_) => {
                    if let Some(status) = self.child.try_wait()? {
                        return Err(
                            format!("the server on port {} exited: {status}", self.port).into()
                        );
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
    }

    /// A counter of `SHOW GLOBAL STATUS`, if the server has it.
    fn status(&self, name: &str) -> Option<u64> {
        let url = format!("mysql://root@127.0.0.1:{}/", self.port);
        let mut conn = mysql::Conn::new(mysql::Opts::from_url(&url).ok()?).ok()?;
        let row: Option<(String, String)> = conn
            .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
            .ok()?;
        row?.1.parse().ok()
    }

    /// Sends the server `SIGSTOP` or `SIGCONT`.
    fn signal(&self, signal: &str) {
        let _ = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.signal("CONT");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `--version` of a waterline binary: the commit it was built from and its build profile.
fn describe_binary(binary: &Path) -> String {
    let version = Command::new(binary)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    match version.split_once('(') {
        Some((_, rest)) => rest.trim_end_matches(')').to_owned(),
        None => format!("{}: says nothing of its build", binary.display()),
    }
}

/// The commit a waterline binary says it was built from (`--version`), if it says.
fn built_from(binary: &Path) -> Option<String> {
    let described = describe_binary(binary);
    let rest = described.strip_prefix("built from ")?;
    Some(rest.split("; profile").next()?.to_owned())
}

/// The sysbench flags that reach `server`.
fn sysbench_common(server: &Server) -> Vec<String> {
    vec![
        "--db-driver=mysql".into(),
        "--mysql-host=127.0.0.1".into(),
        format!("--mysql-port={}", server.port),
        "--mysql-user=root".into(),
        "--mysql-db=sbtest".into(),
    ]
}

/// Loads what the workload reads, once per server: sysbench's tables, BenchmarkSQL's
/// warehouses. (`tpcc` loads afresh at every run.)
fn prepare(args: &CompareArgs, server: &Server, kit: &Path) -> CliResult<()> {
    match args.workload {
        Workload::Sysbench => {
            let (test, flags) = args
                .args
                .split_first()
                .ok_or("sysbench needs its test after --, e.g. -- oltp_read_write")?;
            let status = Command::new("sysbench")
                .arg(test)
                .args(sysbench_common(server))
                .args(sysbench_sizes(flags))
                .arg("prepare")
                .stdout(Stdio::null())
                .status()?;
            if !status.success() {
                return Err(format!("sysbench {test} prepare failed").into());
            }
        }
        Workload::Benchmarksql => {
            let props = benchmarksql_props(args, server, kit)?;
            let status = Command::new("./runDatabaseBuild.sh")
                .arg(&props)
                .current_dir(kit.join("run"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()?;
            if !status.success() {
                return Err("BenchmarkSQL's runDatabaseBuild.sh failed".into());
            }
        }
        Workload::Tpcc | Workload::Bench => {}
    }
    Ok(())
}

/// Of sysbench's flags, those that say what `prepare` makes: the tables and their size
/// (one table of 10,000 rows unless said).
fn sysbench_sizes(flags: &[String]) -> Vec<String> {
    let mut sizes: Vec<String> = flags
        .iter()
        .filter(|f| f.starts_with("--tables=") || f.starts_with("--table-size="))
        .cloned()
        .collect();
    if !sizes.iter().any(|f| f.starts_with("--tables=")) {
        sizes.push("--tables=1".into());
    }
    if !sizes.iter().any(|f| f.starts_with("--table-size=")) {
        sizes.push("--table-size=10000".into());
    }
    sizes
}

/// BenchmarkSQL's kit, copied from `from` to `to` and built (`ant`).
fn build_kit(from: &Path, to: &Path) -> CliResult<()> {
    let copied = Command::new("cp").arg("-r").arg(from).arg(to).status()?;
    if !copied.success() {
        return Err(format!("cannot copy BenchmarkSQL's kit from {}", from.display()).into());
    }
    let built = Command::new("ant")
        .arg("-q")
        .current_dir(to)
        .stdout(Stdio::null())
        .status()?;
    if !built.success() {
        return Err("BenchmarkSQL's kit did not build (ant)".into());
    }
    Ok(())
}

/// A BenchmarkSQL properties file for `server`, in the kit's run folder: the kit's
/// `props.mysql` (its Connector/J URL options kept) pointed at the server, its
/// `resultDirectory` off, and the `key=value` overrides given after `--`.
fn benchmarksql_props(args: &CompareArgs, server: &Server, kit: &Path) -> CliResult<PathBuf> {
    let run = kit.join("run");
    let template = fs::read_to_string(run.join("props.mysql"))
        .map_err(|e| format!("{}: {e}", run.join("props.mysql").display()))?;
    let mut lines: Vec<String> = Vec::new();
    for line in template.lines() {
        let key = line.split('=').next().unwrap_or_default().trim();
        if let Some(over) = args.args.iter().find(|a| a.split('=').next() == Some(key)) {
            lines.push(over.clone());
        } else if key == "resultDirectory" {
            lines.push(format!("//{line}"));
        } else {
            let target = format!("127.0.0.1:{}/tpcc", server.port);
            lines.push(line.replace("localhost:4000/tpcc", &target));
        }
    }
    let path = run.join(format!("props.{}", server.port));
    fs::write(&path, lines.join("\n") + "\n")?;
    Ok(path)
}

/// One run of side `k` (its server, if served): each benchmark's value, with the steal the
/// run measured itself over its measured time, if it did.
fn measure(
    args: &CompareArgs,
    k: usize,
    server: Option<&Server>,
    kit: &Path,
    out: &Path,
) -> CliResult<Vec<Measured>> {
    let side = if k == 0 { &args.base } else { &args.new };
    match args.workload {
        Workload::Tpcc => {
            let (driver, backend) = match server {
                None => (side_binary(side)?, None),
                Some(server) => (
                    driver(args)?,
                    Some(format!("mysql://root@127.0.0.1:{}/tpcc", server.port)),
                ),
            };
            let mut command = Command::new(driver);
            command.args(["--transparent-huge-pages", "off", "tpcc", "--report-dir"]);
            command.arg(out);
            if let Some(backend) = backend {
                command.args(["--backend", &backend]);
            }
            command.args(&args.args);
            let log = out.with_extension("log");
            let status = command
                .stdout(fs::File::create(&log)?)
                .stderr(fs::File::create(log.with_extension("err"))?)
                .status()?;
            if !status.success() {
                return Err(format!("tpcc failed; see {}", log.display()).into());
            }
            let json: serde_json::Value =
                serde_json::from_str(&fs::read_to_string(out.join("results.json"))?)?;
            let point = &json["points"][0];
            let tps = point["txn_per_sec"]
                .as_f64()
                .ok_or("results.json has no txn_per_sec")?;
            let types = point["transactions"].as_object();
            let committed = types.map(|t| {
                t.values()
                    .filter_map(|x| x["committed"].as_u64())
                    .sum::<u64>()
            });
            Ok(vec![Measured {
                benchmark: "tpcc".into(),
                value: tps,
                transactions: committed,
                p95_ms: point["transactions"]["new_order"]["p95_ms"].as_f64(),
                steal: point["cpu_steal_share"].as_f64(),
                reported: point["effective"].as_str().map(str::to_owned),
            }])
        }
        Workload::Sysbench => {
            let server = server.ok_or("sysbench runs against a server")?;
            let (test, flags) = args.args.split_first().ok_or("sysbench needs its test")?;
            let output = Command::new("sysbench")
                .arg(test)
                .args(sysbench_common(server))
                .args(flags)
                .arg("run")
                .output()?;
            let text = String::from_utf8_lossy(&output.stdout);
            let tps = sysbench_tps(&text).ok_or_else(|| {
                format!(
                    "sysbench reported no transactions: {}",
                    String::from_utf8_lossy(&output.stderr)
                )
            })?;
            Ok(vec![Measured {
                benchmark: test.clone(),
                value: tps,
                transactions: sysbench_field(&text, "transactions:"),
                p95_ms: sysbench_field(&text, "95th percentile:"),
                steal: None,
                reported: None,
            }])
        }
        Workload::Benchmarksql => {
            let server = server.ok_or("BenchmarkSQL runs against a server")?;
            let props = kit.join("run").join(format!("props.{}", server.port));
            let output = Command::new("./runBenchmark.sh")
                .arg(&props)
                .current_dir(kit.join("run"))
                .output()?;
            let text = String::from_utf8_lossy(&output.stdout);
            let tpmc = benchmarksql_tpmc(&text).ok_or_else(|| {
                let tail: Vec<&str> = text.lines().rev().take(20).collect();
                format!("BenchmarkSQL reported no tpmC: {}", tail.join(" / "))
            })?;
            Ok(vec![Measured {
                benchmark: "benchmarksql".into(),
                value: tpmc,
                transactions: None,
                p95_ms: None,
                steal: None,
                reported: None,
            }])
        }
        Workload::Bench => {
            // As `cargo bench` runs it: without --bench criterion only tests each once.
            let output = Command::new(side_binary(side)?)
                .arg("--bench")
                .args(&args.args)
                .arg("--noplot")
                .output()?;
            let text = String::from_utf8_lossy(&output.stdout);
            let estimates = criterion_estimates(&text);
            if estimates.is_empty() {
                return Err(format!(
                    "the bench binary reported no estimate: {}",
                    String::from_utf8_lossy(&output.stderr)
                )
                .into());
            }
            let measured = estimates.into_iter().map(|(benchmark, us)| Measured {
                benchmark,
                value: us,
                transactions: None,
                p95_ms: None,
                steal: None,
                reported: None,
            });
            Ok(measured.collect())
        }
    }
}

fn side_binary(side: &Side) -> CliResult<&Path> {
    match side {
        Side::Binary(binary) => Ok(binary),
        Side::MariaDb => Err("this workload runs a binary on each side".into()),
    }
}

/// The binary whose `tpcc` drives both servers: the candidate's if it is one, else the
/// baseline's.
fn driver(args: &CompareArgs) -> CliResult<&Path> {
    side_binary(&args.new).or_else(|_| side_binary(&args.base))
}

/// The first number after `label` in sysbench's report (`transactions:`, `95th
/// percentile:`).
fn sysbench_field<T: FromStr>(report: &str, label: &str) -> Option<T> {
    let line = report.lines().find(|l| l.trim_start().starts_with(label))?;
    line.trim_start()[label.len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// sysbench's `transactions: N (X per sec.)`.
fn sysbench_tps(report: &str) -> Option<f64> {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with("transactions:"))?;
    line.split('(')
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// BenchmarkSQL's `Measured tpmC (NewOrders) = X`.
fn benchmarksql_tpmc(report: &str) -> Option<f64> {
    let line = report.lines().find(|l| l.contains("Measured tpmC"))?;
    line.rsplit('=').next()?.trim().parse().ok()
}

/// Each benchmark of criterion's report with the middle of its time estimate, in µs:
/// `id  time: [low mid high]`, the id on the line itself or on the line before.
fn criterion_estimates(report: &str) -> Vec<(String, f64)> {
    let mut found = Vec::new();
    let mut id = String::new();
    for line in report.lines() {
        let (head, rest) = match line.split_once("time:") {
            Some((head, rest)) => (head.trim(), Some(rest)),
            None => (line.trim(), None),
        };
        if !head.is_empty() && !head.contains(' ') {
            id = head.to_owned();
        }
        let Some(rest) = rest else { continue };
        let words: Vec<&str> = rest
            .trim()
            .trim_start_matches('[')
            .split_whitespace()
            .collect();
        let (Some(value), Some(unit)) = (words.get(2), words.get(3)) else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        let scale = match *unit {
            "ps" => 1e-6,
            "ns" => 1e-3,
            "µs" | "us" => 1.0,
            "ms" => 1e3,
            "s" => 1e6,
            _ => continue,
        };
        if !id.is_empty() {
            found.push((std::mem::take(&mut id), value * scale));
        }
    }
    found
}

fn write_pairs(dir: &Path, runs: &[Run]) -> CliResult<()> {
    let mut csv = String::from(
        "pair,side,benchmark,value,transactions,p95_ms,deadlocks_per_1000,checkpoints,steal_pct,\
         reported\n",
    );
    let or_na = |v: Option<String>| v.unwrap_or_else(|| "n/a".into());
    for r in runs {
        let m = &r.measured;
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{},\"{}\"",
            r.pair,
            r.side,
            m.benchmark,
            m.value,
            or_na(m.transactions.map(|n| n.to_string())),
            or_na(m.p95_ms.map(|p| format!("{p:.2}"))),
            or_na(r.deadlocks_per_1000.map(|d| format!("{d:.2}"))),
            or_na(r.checkpoints.map(|n| n.to_string())),
            or_na(m.steal.map(|s| format!("{:.1}", 100.0 * s))),
            r.reported.replace('"', "'")
        );
    }
    fs::write(dir.join("pairs.csv"), csv)?;
    Ok(())
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

fn summary(args: &CompareArgs, runs: &[Run]) -> String {
    let metric = metric(args.workload);
    let unit = metric.unit;
    let mut out = format!(
        "# {}: candidate against baseline, {} alternating pairs\n\n",
        args.name, args.pairs
    );
    let mut benchmarks: Vec<&str> = Vec::new();
    for r in runs {
        if !benchmarks.contains(&r.measured.benchmark.as_str()) {
            benchmarks.push(&r.measured.benchmark);
        }
    }
    for benchmark in benchmarks {
        let value = |pair: usize, side: &str| {
            runs.iter()
                .find(|r| r.pair == pair && r.side == side && r.measured.benchmark == benchmark)
                .map(|r| r.measured.value)
        };
        let _ = writeln!(
            out,
            "## {benchmark}\n\n| pair | baseline {unit} | candidate {unit} | ratio |\n|---|---|---|---|"
        );
        let mut ratios = Vec::new();
        for pair in 1..=args.pairs {
            if let (Some(base), Some(new)) = (value(pair, "base"), value(pair, "new")) {
                let ratio = new / base;
                ratios.push(ratio);
                let _ = writeln!(out, "| {pair} | {base:.2} | {new:.2} | {ratio:.3} |");
            }
        }
        let better = if metric.higher_is_better {
            "above 1 the candidate is faster"
        } else {
            "below 1 the candidate is faster"
        };
        match median(ratios) {
            Some(m) => {
                let _ = writeln!(
                    out,
                    "\nMedian ratio (candidate / baseline): {m:.3} ({better}).\n"
                );
            }
            None => out.push_str("\nNo complete pair.\n\n"),
        }
        for side in SIDES {
            let mine: Vec<&Run> = runs
                .iter()
                .filter(|r| r.side == side && r.measured.benchmark == benchmark)
                .collect();
            let p95 = median(mine.iter().filter_map(|r| r.measured.p95_ms).collect());
            let deadlocks = median(mine.iter().filter_map(|r| r.deadlocks_per_1000).collect());
            let mut facts = Vec::new();
            if let Some(p) = p95 {
                facts.push(format!("p95 latency {p:.2} ms"));
            }
            if let Some(d) = deadlocks {
                facts.push(format!("deadlocks per 1,000 transactions {d:.2}"));
            }
            if !facts.is_empty() {
                let who = if side == "new" {
                    "candidate"
                } else {
                    "baseline"
                };
                let _ = writeln!(out, "- {who}, median: {}", facts.join(", "));
            }
        }
        out.push('\n');
    }
    let stolen: Vec<(f64, &Run)> = runs
        .iter()
        .filter_map(|r| r.measured.steal.map(|s| (s, r)))
        .collect();
    if let Some(most) = stolen.iter().map(|(s, _)| *s).max_by(f64::total_cmp) {
        let all: Vec<f64> = stolen.iter().map(|(s, _)| *s).collect();
        let _ = writeln!(
            out,
            "CPU time stolen by the hypervisor during the runs: median {:.1}%, at most {:.1}%.",
            100.0 * median(all).unwrap_or_default(),
            100.0 * most
        );
        let busy: Vec<String> = stolen
            .iter()
            .filter(|(s, _)| *s > STEAL_WARN)
            .map(|(_, r)| {
                format!(
                    "pair {} {}",
                    r.pair,
                    if r.side == "new" {
                        "candidate"
                    } else {
                        "baseline"
                    }
                )
            })
            .collect();
        if !busy.is_empty() {
            let _ = writeln!(
                out,
                "\n**Warning:** {} run(s) lost more than {:.0}% of their CPU time to other guests \
                 ({}): those ratios measure the host's load as much as the sides.",
                busy.len(),
                100.0 * STEAL_WARN,
                busy.join(", ")
            );
        }
    }
    out
}

fn describe_side(workload: Workload, side: &Side, server: Option<&Server>) -> String {
    match (server, side) {
        (Some(server), _) => format!("{}; it reported {}", server.described, server.reported),
        // A bench binary says nothing of its build: its name is cargo's hash of it. The
        // report says so rather than leave the profile out in silence.
        (None, Side::Binary(binary)) if workload == Workload::Bench => format!(
            "`{}` (a criterion bench binary; build profile not recorded: a bench binary \
             cannot say it, and `cargo bench` builds the `bench` profile, which inherits \
             `measure`, unless told otherwise)",
            binary.display()
        ),
        (None, Side::Binary(binary)) => {
            format!("`{}` ({})", binary.display(), describe_binary(binary))
        }
        (None, Side::MariaDb) => "MariaDB".into(),
    }
}

fn run_md(
    args: &CompareArgs,
    servers: &[Server],
    started: &str,
    machine: &waterline::tpcc::Machine,
) -> String {
    let what = match (args.workload, servers.is_empty()) {
        (Workload::Tpcc, true) => "`waterline tpcc` on each side's embedded engine (its engine's \
             configuration in each run's results.json, `effective`)"
            .to_owned(),
        (Workload::Tpcc, false) => format!(
            "`waterline tpcc --backend mysql://` against each server, driven by {}",
            driver(args).map_or("?".into(), describe_binary)
        ),
        (Workload::Sysbench, _) => "sysbench against each server, its tables prepared once".into(),
        (Workload::Benchmarksql, _) => {
            "BenchmarkSQL 5.0 (unmodified) against each server, loaded once".into()
        }
        (Workload::Bench, _) => "each side's criterion bench binary".into(),
    };
    let mut md = format!(
        "# {}\n\n- command: `{}`\n- workload: {what}; arguments `{}`\n- baseline: {}\n- \
         candidate: {}\n",
        args.name,
        command_line(),
        args.args.join(" "),
        describe_side(args.workload, &args.base, servers.first()),
        describe_side(args.workload, &args.new, servers.get(1)),
    );
    // The candidate's commit, which the results index lists.
    if let Side::Binary(binary) = &args.new
        && args.workload != Workload::Bench
        && let Some(commit) = built_from(binary)
    {
        let _ = writeln!(md, "- built from: {commit} (the candidate)");
    }
    if !servers.is_empty() {
        let _ = writeln!(
            md,
            "- both servers at equal durability and isolation, as they reported them; the idle \
             one stopped (SIGSTOP) while the other ran"
        );
    }
    let _ = writeln!(
        md,
        "- pairs: {}, baseline first in each\n- compared by: `waterline compare` built from {}\n- \
         ran: {started} to {} UTC\n- machine: {}",
        args.pairs,
        crate::BUILD,
        utc_now(),
        machine.describe()
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criterion_estimates_are_read_in_microseconds_with_their_ids() {
        let report = "engine_commit/memory/write_only\n                        time:   [20.1 µs 21.1 µs 22.0 µs]\n\
                      snapshot_open/hybrid/1000 time:   [20.5 ns 21.0 ns 21.4 ns]\n\
                      Found 3 outliers\n";
        assert_eq!(
            criterion_estimates(report),
            vec![
                ("engine_commit/memory/write_only".to_owned(), 21.1),
                ("snapshot_open/hybrid/1000".to_owned(), 0.021),
            ]
        );
    }

    #[test]
    fn sysbench_and_benchmarksql_reports_are_read() {
        let sysbench = "    transactions:                        12345  (1234.50 per sec.)\n";
        assert_eq!(sysbench_tps(sysbench), Some(1234.5));
        let bmsql = "term-00, Measured tpmC (NewOrders) = 5123.45\n";
        assert_eq!(benchmarksql_tpmc(bmsql), Some(5123.45));
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![3.0, 1.0, 2.0, 4.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
    }
}
