//! Experiments over the MySQL protocol: each configuration is a `waterline serve` process of
//! its own (this binary), started with the configuration's flags, loaded and measured by
//! the driver over `mysql://`, then stopped. What ran is read back from each server (its
//! `@@thread_handling`, pool size, admission), and its CPU and context switches from its
//! SHOW STATUS.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use waterline::numa::{Pin, Placement};
use waterline::tpcc::{BackendKind, Point, Report};

use super::super::tpcc::{CliResult, TpccArgs, load, sweep};

/// A server's flags beyond its configuration's: a database for the driver, and room for
/// the largest client count (MySQL's default of 151 connections would refuse the rest).
pub(super) fn common_flags(most_clients: usize) -> Vec<String> {
    vec![
        "--database".into(),
        "tpcc".into(),
        "--max-connections".into(),
        (most_clients + 64).to_string(),
    ]
}

/// A running `waterline serve`, stopped when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `waterline serve` with `flags` on a free port (on `cpus` only, a `taskset` CPU
/// list, if given), its standard error in `log`, and waits until it answers; its `mysql://`
/// address.
fn start(flags: &[String], cpus: Option<&str>, log: &Path) -> CliResult<(Served, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut command = match cpus {
        // util-linux's taskset, before the server makes its first thread: all inherit it.
        Some(list) => {
            let mut c = Command::new("taskset");
            c.args(["-c", list]).arg(std::env::current_exe()?);
            c
        }
        None => Command::new(std::env::current_exe()?),
    };
    let child = command
        .arg("serve")
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(flags)
        .stdout(Stdio::null())
        .stderr(fs::File::create(log)?)
        .spawn()?;
    let mut served = Served(child);
    let url = format!("mysql://root@127.0.0.1:{port}/tpcc");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if waterline::tpcc::conn::MysqlConn::connect(&url).is_ok() {
            return Ok((served, url));
        }
        if let Some(status) = served.0.try_wait()? {
            return Err(format!(
                "waterline serve {} exited ({status}): see {}",
                flags.join(" "),
                log.display()
            )
            .into());
        }
        if Instant::now() > deadline {
            return Err(format!("waterline serve {} never answered", flags.join(" ")).into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs `tpcc`'s sweep against one server per configuration in `servers` (label, `serve`
/// flags), one after the other; one report of all their points. Each server's log is
/// `serve-<label>.log` in `dir`.
pub(super) fn sweep_servers(
    tpcc: &TpccArgs,
    servers: &[(String, Vec<String>)],
    dir: &Path,
) -> CliResult<Report> {
    fs::create_dir_all(dir)?;
    let most = tpcc.clients.iter().copied().max().unwrap_or(1);
    let mut merged: Option<Report> = None;
    for (label, flags) in servers {
        let mut all = common_flags(most);
        all.extend(flags.iter().cloned());
        let (server, url) = start(
            &all,
            None,
            &dir.join(format!("serve-{}.log", label.replace(':', "-"))),
        )?;
        let mut args = tpcc.clone();
        args.backend = BackendKind::Mysql(url);
        let report = sweep(
            &args,
            &[(label.clone(), args.knobs.clone())],
            &Placement::new(Pin::None)?,
        )
        .map(|(report, _connections)| report);
        drop(server);
        let report = report?;
        match merged.as_mut() {
            Some(m) => m.points.extend(report.points),
            None => merged = Some(report),
        }
    }
    merged.ok_or_else(|| "no server configurations".into())
}

/// The CPUs of instance `i` (0 or 1) of two on a machine of `cpus`: the first half and the
/// second (on a NUMA machine numbered node by node, one node each), as a `taskset` list;
/// both get them all on one CPU.
pub(super) fn half(i: usize, cpus: usize) -> String {
    if cpus < 2 {
        return "0".into();
    }
    let half = cpus / 2;
    let (first, last) = if i == 0 {
        (0, half - 1)
    } else {
        (half, cpus - 1)
    };
    if first == last {
        first.to_string()
    } else {
        format!("{first}-{last}")
    }
}

/// The CPUs process `pid` may run on, as the kernel says (`Cpus_allowed_list`).
fn allowed_cpus(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|v| v.trim().to_owned())
        })
        .unwrap_or_else(|| "?".into())
}

/// Figs 8-30 to 8-32: two `waterline serve` instances, each on half the CPUs, each loaded;
/// then per client count each run alone (`instance-N apart`), then both at once
/// (`instance-N together`), `tpcc.clients` clients each. One report of all the points.
pub(super) fn instances(tpcc: &TpccArgs, cpus: usize, dir: &Path) -> CliResult<Report> {
    fs::create_dir_all(dir)?;
    let most = tpcc.clients.iter().copied().max().unwrap_or(1);
    let mut servers = Vec::new();
    let mut loaded = Vec::new();
    for i in 0..2 {
        let list = half(i, cpus);
        let log = dir.join(format!("serve-instance-{}.log", i + 1));
        let (server, url) = start(&common_flags(most), Some(&list), &log)?;
        let pinned = allowed_cpus(server.0.id());
        let mut args = tpcc.clone();
        args.backend = BackendKind::Mysql(url);
        let label = format!("instance-{}", i + 1);
        eprintln!("{label}: waterline serve on CPUs {pinned}");
        let db = load(&args, &[(label.clone(), args.knobs.clone())])?;
        servers.push((server, pinned));
        loaded.push((label, args, db));
    }
    let placement = Placement::new(Pin::None)?;
    let mut points: Vec<Point> = Vec::new();
    for &clients in &tpcc.clients {
        for (label, args, db) in &loaded {
            let (_, target) = &db.targets()[0];
            points.push(db.point(args, &format!("{label} apart"), target, clients, None)?);
        }
        let together: Vec<Result<Point, String>> = std::thread::scope(|scope| {
            let runs: Vec<_> = loaded
                .iter()
                .map(|(label, args, db)| {
                    scope.spawn(move || {
                        let (_, target) = &db.targets()[0];
                        let name = format!("{label} together");
                        db.point(args, &name, target, clients, None)
                            .map_err(|e| e.to_string())
                    })
                })
                .collect();
            runs.into_iter()
                .map(|r| r.join().unwrap_or_else(|_| Err("a driver panicked".into())))
                .collect()
        });
        for p in together {
            points.push(p?);
        }
    }
    let (_, args, db) = &loaded[0];
    let mut report = db.report(args, &placement, points);
    report.info.backend = format!(
        "two waterline serve instances over mysql://, on CPUs {} and {}",
        servers[0].1, servers[1].1
    );
    drop(servers);
    Ok(report)
}

/// Fig 8-32's table: per client count, the two instances' throughput summed, apart and
/// together.
pub(super) fn totals(report: &Report) -> String {
    let mut clients: Vec<usize> = report.points.iter().map(|p| p.clients).collect();
    clients.sort_unstable();
    clients.dedup();
    let sum = |n: usize, how: &str| -> f64 {
        report
            .points
            .iter()
            .filter(|p| p.clients == n && p.config.ends_with(how))
            .map(|p| p.measurement.txn_per_sec())
            .sum()
    };
    let mut out = String::from(
        "Fig 8-32, the total: both instances' txn/s summed, each run alone (apart) and both \
         at once (together), at the same client count each.\n\n\
         | clients each | apart, summed | together, summed | together / apart |\n\
         |---|---|---|---|\n",
    );
    for n in clients {
        let (apart, together) = (sum(n, " apart"), sum(n, " together"));
        let ratio = if apart > 0.0 { together / apart } else { 0.0 };
        out.push_str(&format!(
            "| {n} | {apart:.0} | {together:.0} | {ratio:.2} |\n"
        ));
    }
    out.push('\n');
    out
}
