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
use waterline::tpcc::{BackendKind, Report};

use super::super::tpcc::{CliResult, TpccArgs, sweep};

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

/// Starts `waterline serve` with `flags` on a free port, its standard error in `log`, and
/// waits until it answers; its `mysql://` address.
fn start(flags: &[String], log: &Path) -> CliResult<(Served, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let child = Command::new(std::env::current_exe()?)
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
        let (server, url) = start(&all, &dir.join(format!("serve-{label}.log")))?;
        let mut args = tpcc.clone();
        args.backend = BackendKind::Mysql(url);
        let report = sweep(
            &args,
            &[(label.clone(), args.knobs.clone())],
            &Placement::new(Pin::None)?,
        );
        drop(server);
        let report = report?;
        match merged.as_mut() {
            Some(m) => m.points.extend(report.points),
            None => merged = Some(report),
        }
    }
    merged.ok_or_else(|| "no server configurations".into())
}
