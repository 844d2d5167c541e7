//! Clients written by others, from Debian's packages: sysbench 1.0.20 (prepare, then
//! oltp_read_write for 10 s at 8 threads with and without prepared statements, and
//! oltp_point_select; oltp_read_write at 64 threads in the thread pool) and the mariadb command-line client (batch, and interactive with its
//! table-name completion, which sends COM_FIELD_LIST), over TCP and through the
//! Unix-domain socket.
//!
//! `.ci/run` installs both and sets `WATERLINE_REQUIRE_CLIENTS=1`, which makes a missing one
//! a failure; elsewhere the tests say they were skipped.

#![allow(clippy::print_stderr)]

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use waterline_server::{Server, SessionConfig, Shared};
use waterline_txn::{Engine, EngineConfig};

fn have(program: &str) -> bool {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("WATERLINE_REQUIRE_CLIENTS").is_none(),
            "{program} is required here but not installed"
        );
        eprintln!("skipped: {program} is not installed (apt-get install sysbench mariadb-client)");
    }
    found
}

fn start() -> u16 {
    server()
        .spawn("127.0.0.1:0".parse().unwrap())
        .unwrap()
        .port()
}

fn server() -> Server {
    let config = EngineConfig {
        lock_wait_timeout: Duration::from_secs(5),
        ..EngineConfig::default()
    };
    let engine = Arc::new(Engine::open(config).unwrap());
    let databases = vec!["sbtest".into(), "waterline".into()];
    let shared = Shared::new(
        engine,
        SessionConfig {
            databases,
            ..SessionConfig::default()
        },
    );
    Server::new(shared, 256)
}

fn sysbench(port: u16, test: &str, extra: &[&str]) -> String {
    let out = Command::new("sysbench")
        .arg(test)
        .args([
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            "--mysql-user=root",
            "--mysql-db=sbtest",
            "--tables=1",
            "--table-size=10000",
        ])
        .arg(format!("--mysql-port={port}"))
        .args(extra)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && !text.contains("FATAL"),
        "sysbench {test} {extra:?} failed:\n{text}"
    );
    text
}

/// The number after `label` in sysbench's report.
fn figure(report: &str, label: &str) -> f64 {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label} in\n{report}"));
    line[line.find(':').unwrap() + 1..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn sysbench_oltp_runs_clean() {
    if !have("sysbench") {
        return;
    }
    let port = start();
    sysbench(port, "oltp_read_write", &["prepare"]);
    for mode in [&[][..], &["--db-ps-mode=disable"][..]] {
        let mut args = vec!["--threads=8", "--time=10", "run"];
        args.extend_from_slice(mode);
        let report = sysbench(port, "oltp_read_write", &args);
        let (trx, ignored) = (
            figure(&report, "transactions:"),
            figure(&report, "ignored errors:"),
        );
        eprintln!("oltp_read_write {mode:?}: {trx} transactions, {ignored} retried (deadlocks)");
        assert!(trx > 0.0);
    }
    let report = sysbench(
        port,
        "oltp_point_select",
        &["--threads=8", "--time=5", "run"],
    );
    assert!(figure(&report, "queries:") > 0.0);
    sysbench(port, "oltp_read_write", &["cleanup"]);
}

/// The same load through the thread pool (two groups): prepared and text statements,
/// transactions that wait for each other's row locks, 64 connections.
#[test]
fn sysbench_oltp_runs_clean_in_the_thread_pool() {
    if !have("sysbench") {
        return;
    }
    let pool = waterline_server::PoolConfig {
        size: 2,
        ..waterline_server::PoolConfig::default()
    };
    let port = server()
        .thread_pool(pool)
        .unwrap()
        .spawn("127.0.0.1:0".parse().unwrap())
        .unwrap()
        .port();
    sysbench(port, "oltp_read_write", &["prepare"]);
    for mode in [&[][..], &["--db-ps-mode=disable"][..]] {
        let mut args = vec!["--threads=64", "--time=5", "run"];
        args.extend_from_slice(mode);
        let report = sysbench(port, "oltp_read_write", &args);
        let trx = figure(&report, "transactions:");
        eprintln!("pooled oltp_read_write {mode:?}: {trx} transactions");
        assert!(trx > 0.0);
    }
    sysbench(port, "oltp_read_write", &["cleanup"]);
}

fn mariadb(port: u16, args: &[&str]) -> String {
    let out = Command::new("mariadb")
        .args(["-h", "127.0.0.1", "-u", "root", "-P"])
        .arg(port.to_string())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mariadb {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_mariadb_cli_works() {
    if !have("mariadb") {
        return;
    }
    let port = start();
    let out = mariadb(
        port,
        &[
            "waterline",
            "-e",
            "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(5)); INSERT INTO t VALUES (1,'one'); SELECT v FROM t WHERE id = 1; SELECT VERSION()",
        ],
    );
    assert!(out.contains("one") && out.contains("-waterline"), "{out}");
    // Interactive, with table-name completion: it sends COM_FIELD_LIST, no -A needed.
    if have("script") {
        let out = Command::new("script")
            .args([
                "-qc",
                &format!("mariadb -h 127.0.0.1 -P {port} -u root waterline"),
                "/dev/null",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(b"SELECT COUNT(*) AS n FROM t;\nquit\n")?;
                child.wait_with_output()
            })
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("Reading table information") && text.contains("Bye"),
            "{text}"
        );
    }
}

/// The CLI through the Unix-domain socket (`serve --socket`), as local clients of MySQL
/// connect; the server reports where it listens.
#[test]
fn the_mariadb_cli_connects_through_the_socket() {
    if !have("mariadb") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("waterline.sock");
    let server = server();
    let port = server
        .clone()
        .spawn("127.0.0.1:0".parse().unwrap())
        .unwrap()
        .port();
    server.spawn_unix(&path).unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(
        mode & 0o777,
        0o777,
        "every user may connect, as to mysqld's socket"
    );
    let out = Command::new("mariadb")
        .arg("-S")
        .arg(&path)
        .args(["-u", "root", "-N", "waterline", "-e"])
        .arg(
            "CREATE TABLE s (id INT PRIMARY KEY); INSERT INTO s VALUES (7); SELECT id FROM s; \
             SELECT @@socket, @@port, @@max_connections",
        )
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "7");
    assert_eq!(lines[1], format!("{}\t{port}\t256", path.display()));
}
