//! The `waterline` command itself: the embedded shell, and `serve` on a data directory that
//! survives a kill -9 (a real process, a real client).

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

const BIN: &str = env!("CARGO_BIN_EXE_waterline");

#[test]
fn the_sql_shell_runs_statements() {
    let out = Command::new(BIN)
        .args(["sql", "--snapshot", "vector", "--view-close", "latched", "-e"])
        .arg("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(5)); INSERT INTO t VALUES (1, 'a;b'); SELECT v FROM t; SELECT nope FROM t")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("| a;b |"),
        "a quoted ; is no separator:\n{text}"
    );
    assert!(text.contains("ERROR 1054 (42S22)"), "{text}");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn serve(dir: &std::path::Path, port: u16) -> Child {
    Command::new(BIN)
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--flush",
            "every-commit",
            "--wakeup",
            "broadcast",
            "--admission",
            "limit:64",
        ])
        .arg("--data-dir")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn connect(port: u16) -> mysql::Conn {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match mysql::Conn::new(
            mysql::Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/waterline")).unwrap(),
        ) {
            Ok(c) => return c,
            Err(e) if Instant::now() > deadline => panic!("server did not come up: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

#[test]
fn serve_keeps_acknowledged_commits_across_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut server = serve(dir.path(), port);
    let mut c = connect(port);
    c.query_drop("CREATE TABLE ledger (id INT PRIMARY KEY, amount DECIMAL(8,2))")
        .unwrap();
    c.query_drop("CREATE INDEX by_amount ON ledger (amount)")
        .unwrap();
    for i in 1..=50 {
        c.exec_drop("INSERT INTO ledger VALUES (?, ?)", (i, format!("{i}.25")))
            .unwrap();
    }
    server.kill().unwrap(); // SIGKILL
    server.wait().unwrap();

    let port = free_port();
    let mut server = serve(dir.path(), port);
    let mut c = connect(port);
    let (n, sum): (i64, String) = c
        .query_first("SELECT COUNT(*), SUM(amount) FROM ledger")
        .unwrap()
        .unwrap();
    assert_eq!((n, sum.as_str()), (50, "1287.50"));
    let plan: Vec<mysql::Row> = c
        .query("EXPLAIN SELECT id FROM ledger WHERE amount = 7.25")
        .unwrap();
    let key: Option<String> = plan[0].get(5);
    assert_eq!(key.as_deref(), Some("by_amount"), "the index came back too");
    server.kill().unwrap();
    server.wait().unwrap();
}

/// Waits up to 20 s for `child` to exit; kills it and fails if it does not.
fn exits_within(mut child: Child, what: &str) -> std::process::Output {
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("{what}: still running after 20 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// `SELECT COUNT(*), SUM(v) FROM t` on a new connection to the server at `port`.
fn count_and_sum(port: u16) -> (i64, i64) {
    connect(port)
        .query_first("SELECT COUNT(*), SUM(v) FROM t")
        .unwrap()
        .unwrap()
}

/// Sends `signal` to `server`, which must exit successfully within 20 s; its standard error.
fn signalled(server: Child, signal: rustix::process::Signal) -> String {
    let pid = rustix::process::Pid::from_child(&server);
    rustix::process::kill_process(pid, signal).unwrap();
    let out = exits_within(server, &format!("serve after {signal:?}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

#[test]
fn serve_stops_on_sigterm_removes_its_socket_and_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let socket = dir.path().join("wl.sock");
    let port = free_port();
    let start = |with_socket: bool| {
        let mut command = Command::new(BIN);
        command
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .arg("--data-dir")
            .arg(&data);
        if with_socket {
            command.arg("--socket").arg(&socket);
        }
        command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let server = start(true);
    let mut c = connect(port);
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    for i in 1..=20 {
        c.exec_drop("INSERT INTO t VALUES (?, ?)", (i, i * 10))
            .unwrap();
    }
    assert!(socket.exists());
    // A second server on the live socket fails, and leaves the first one's file alone.
    let second = Command::new(BIN)
        .args(["serve", "--listen", &format!("127.0.0.1:{}", free_port())])
        .arg("--socket")
        .arg(&socket)
        .output()
        .unwrap();
    assert!(!second.status.success());
    assert!(socket.exists(), "the live server's socket file stays");
    let stderr = signalled(server, rustix::process::Signal::TERM);
    assert!(stderr.contains("SIGTERM: shutting down"), "{stderr}");
    assert!(
        stderr.contains("checkpoint at log position") && stderr.contains("20 rows"),
        "{stderr}"
    );
    assert!(!socket.exists(), "the socket file is gone");
    drop(c);

    // The next start loads the checkpoint and has no log to replay.
    let server = start(false);
    let (n, sum) = count_and_sum(port);
    assert_eq!((n, sum), (20, 2100));
    let stderr = signalled(server, rustix::process::Signal::INT);
    assert!(
        stderr.contains("loaded the checkpoint") && stderr.contains("replayed 0 transactions"),
        "{stderr}"
    );
    assert!(stderr.contains("SIGINT: shutting down"), "{stderr}");
}

#[test]
fn serve_checkpoints_as_its_log_grows_so_a_crash_replays_only_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let start = || {
        Command::new(BIN)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--checkpoint-log-bytes", "4096", "--data-dir"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let checkpointed = || {
        std::fs::read_dir(dir.path()).unwrap().any(|entry| {
            let name = entry.unwrap().file_name();
            name.to_string_lossy().starts_with("checkpoint-")
        })
    };
    let mut server = start();
    let mut c = connect(port);
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    // A commit each: well over 4096 bytes of log.
    for i in 1..=200 {
        c.exec_drop("INSERT INTO t VALUES (?, ?)", (i, i * 10))
            .unwrap();
    }
    // The server looks at its log every second; SHOW STATUS counts a checkpoint once it is
    // done (after its image is renamed into place).
    let status = |c: &mut mysql::Conn, name: &str| -> u64 {
        c.query_first::<(String, u64), _>(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
            .unwrap()
            .map_or(0, |(_, n)| n)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !checkpointed() || status(&mut c, "Waterline_checkpoints") == 0 {
        assert!(Instant::now() < deadline, "no checkpoint after 20 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(status(&mut c, "Waterline_checkpoint_us") > 0);
    for i in 201..=205 {
        c.exec_drop("INSERT INTO t VALUES (?, ?)", (i, i * 10))
            .unwrap();
    }
    drop(c);
    server.kill().unwrap(); // SIGKILL: no checkpoint at shutdown
    let out = server.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("checkpoint at log position"), "{stderr}");

    let server = start();
    let (n, sum) = count_and_sum(port);
    assert_eq!((n, sum), (205, 211_150));
    let stderr = signalled(server, rustix::process::Signal::TERM);
    assert!(stderr.contains("loaded the checkpoint"), "{stderr}");
    let replayed: u64 = stderr
        .split_once("replayed ")
        .and_then(|(_, rest)| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no replay count: {stderr}"));
    assert!(
        (5..200).contains(&replayed),
        "the checkpoint covers the first commits, the log the last five: {stderr}"
    );
}

/// `waterline GLOBAL.. tpcc ARGS..` on a lite database (300 items, 30 customers a
/// district), its report in `dir`; it must succeed. Its standard output.
fn lite_tpcc(global: &[&str], args: &[&str], dir: &std::path::Path) -> String {
    let out = Command::new(BIN)
        .args(global)
        .args(["tpcc", "--items", "300", "--customers", "30"])
        .args(args)
        .arg("--report-dir")
        .arg(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn tpcc_runs_a_comparison_and_writes_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = lite_tpcc(
        &[],
        &[
            "--warmup",
            "0.1",
            "--count",
            "200",
            "--clients",
            "1,2",
            "--compare",
            "snapshot=vector,csn",
        ],
        dir.path(),
    );
    assert!(
        stdout.contains("snapshot=vector") && stdout.contains("snapshot=csn"),
        "{stdout}"
    );
    assert!(
        stdout.contains("(lite)"),
        "a small database is called lite: {stdout}"
    );
    assert!(!stdout.contains("FAILED"), "{stdout}");
    let csv = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        5,
        "2 configurations x 2 client counts + header"
    );
    // Every type's maximum latency is reported, and is no shorter than its 99th percentile.
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|c| *c == name).expect(name);
    for row in csv.lines().skip(1) {
        let fields: Vec<&str> = row.split(',').collect();
        for kind in [
            "new_order",
            "payment",
            "order_status",
            "delivery",
            "stock_level",
        ] {
            let value = |c: &str| {
                fields[column(&format!("{kind}_{c}"))]
                    .parse::<f64>()
                    .unwrap()
            };
            assert!(value("max_ms") >= value("p99_ms"), "{kind}: {row}");
        }
        assert!(
            fields[column("new_order_max_ms")].parse::<f64>().unwrap() > 0.0,
            "{row}"
        );
    }
    assert!(stdout.contains("max ms"), "{stdout}");
    for file in ["results.json", "throughput.svg"] {
        assert!(dir.path().join(file).exists(), "{file}");
    }
    // The profile the binary was built with, as its build script recorded it (the tests run
    // a debug build), and that it is not the one numbers are compared with.
    assert!(
        stdout.contains("build profile: dev (opt-level 0, lto false, codegen-units 256); not the measurement profile"),
        "{stdout}"
    );
}

#[test]
fn version_names_the_commit_and_the_build_profile() {
    let out = Command::new(BIN).arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&out.stdout);
    assert!(
        version.contains("(built from ")
            && version.contains("; profile dev: opt-level 0, lto false, codegen-units 256)"),
        "{version}"
    );
}

#[test]
fn tpcc_rounds_take_turns_and_report_medians() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = lite_tpcc(
        &[],
        &[
            "--warmup",
            "0",
            "--count",
            "200",
            "--clients",
            "2",
            "--rounds",
            "3",
            "--compare",
            "snapshot=vector,csn",
        ],
        dir.path(),
    );
    assert!(stdout.contains("txn/s over 3 rounds"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap())
            .unwrap();
    assert_eq!(json["run"]["rounds"], 3);
    // Every other round runs the configurations in reverse order.
    let order: Vec<(String, u64)> = json["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["config"].as_str().unwrap().to_owned(),
                p["round"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("snapshot=vector", 1),
        ("snapshot=csn", 1),
        ("snapshot=csn", 2),
        ("snapshot=vector", 2),
        ("snapshot=vector", 3),
        ("snapshot=csn", 3),
    ];
    assert_eq!(
        order,
        expected.map(|(c, r)| (c.to_owned(), r)).to_vec(),
        "{stdout}"
    );
    // The medians: the baseline has no ratio; the other's ratio is the median of its three
    // rounds' ratios, recomputed here from the points.
    let medians = json["medians"].as_array().unwrap();
    assert_eq!(medians.len(), 2);
    assert_eq!(medians[0]["config"], "snapshot=vector");
    assert!(medians[0]["ratio_to_baseline"].is_null());
    let txn = |config: &str, round: u64| {
        json["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["config"] == config && p["round"] == round)
            .unwrap()["txn_per_sec"]
            .as_f64()
            .unwrap()
    };
    let mut ratios: Vec<f64> = (1..=3)
        .map(|r| txn("snapshot=csn", r) / txn("snapshot=vector", r))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let csn = &medians[1];
    assert_eq!(csn["config"], "snapshot=csn");
    assert_eq!(csn["rounds"], 3);
    assert!((csn["ratio_to_baseline"].as_f64().unwrap() - ratios[1]).abs() < 1e-9);
    let won = ratios.iter().filter(|&&r| r > 1.0).count();
    assert_eq!(csn["rounds_won"], won);
    let csv = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 7, "six points + header");
    assert!(csv.lines().next().unwrap().ends_with(",round,effective"));
}

#[test]
fn tpcc_compares_how_delivery_claims_orders() {
    let dir = tempfile::tempdir().unwrap();
    // Each run ends with the consistency checks, which a lost or doubly delivered order
    // fails (NEW_ORDER's ids per district stay contiguous; every order line is counted).
    let stdout = lite_tpcc(
        &[],
        &[
            "--warmup",
            "0",
            "--count",
            "600",
            "--clients",
            "4",
            "--compare",
            "delivery-claim=wait,skip-locked",
        ],
        dir.path(),
    );
    assert!(
        stdout.contains("native (hot-last step order, each config's Delivery)"),
        "{stdout}"
    );
    for config in ["delivery-claim=wait ", "delivery-claim=skip-locked "] {
        let line = stdout.lines().find(|l| l.starts_with(config));
        assert!(
            line.is_some_and(|l| l.ends_with(" ok")),
            "{config}: {stdout}"
        );
    }
}

#[test]
fn tpcc_reports_the_transparent_huge_pages_in_force() {
    let run = |setting: &str| {
        let dir = tempfile::tempdir().unwrap();
        let stdout = lite_tpcc(
            &["--transparent-huge-pages", setting],
            &["--warmup", "0", "--count", "50"],
            dir.path(),
        );
        let json = std::fs::read_to_string(dir.path().join("results.json")).unwrap();
        (stdout, json)
    };
    let (off, off_json) = run("off");
    let (on, _) = run("on");
    // The kernel says so in /proc/<pid>/status since Linux 5.0.
    let kernel_says = std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|status| status.contains("THP_enabled:"));
    if kernel_says {
        assert!(
            off.contains("transparent huge pages: off for this process"),
            "{off}"
        );
        assert!(
            off_json.contains(r#""transparent_huge_pages": "off for this process""#),
            "{off_json}"
        );
    }
    assert!(on.contains("transparent huge pages: "), "{on}");
    assert!(!on.contains("off for this process"), "{on}");
}

#[test]
fn tpcc_refuses_what_cannot_work() {
    for (args, expected) in [
        (&["--compare", "snapshot=sideways"][..], "snapshot=sideways"),
        (
            &["--backend", "postgres://x"][..],
            "expected native, sql, or mysql://",
        ),
        (&["--customers", "3"][..], "at least"),
        (&["--rounds", "0"][..], "--rounds needs 1 or more"),
    ] {
        let out = Command::new(BIN).arg("tpcc").args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// Every point's configuration, as the report's JSON states it (read back from the engine).
fn effective_configs(dir: &std::path::Path) -> Vec<(String, String)> {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    json["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["config"].as_str().unwrap().to_owned(),
                p["effective"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn tpcc_reports_the_configuration_each_point_ran_with() {
    // The compared knob changes per configuration; every other flag holds for all of them,
    // on each in-process backend (the SQL backend's isolation is read back from a session).
    for (backend, compare, wanted) in [
        (
            "native",
            "snapshot=vector,hybrid",
            ["snapshot=vector,", "snapshot=hybrid,"],
        ),
        (
            "sql",
            "view-close=latched,latch-free",
            ["view_close=latched,", "view_close=latch-free,"],
        ),
        (
            "sql",
            "planner=fixed,legacy8027",
            ["planner=fixed", "planner=legacy8027"],
        ),
        (
            "native",
            "trx-shards=1,256",
            ["trx_shards=1,", "trx_shards=256,"],
        ),
        (
            "native",
            "preset=baseline,fixed+limit",
            [
                "snapshot=vector, view_close=latched, trx_shards=1,",
                "snapshot=hybrid, view_close=latch-free, trx_shards=256,",
            ],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let stdout = lite_tpcc(
            &[],
            &[
                "--backend",
                backend,
                "--warmup",
                "0",
                "--count",
                "50",
                "--clients",
                "2",
                "--isolation",
                "read-committed",
                "--lock-wait-timeout",
                "7",
                "--compare",
                compare,
            ],
            dir.path(),
        );
        let points = effective_configs(dir.path());
        assert_eq!(points.len(), 2, "{stdout}");
        for ((label, effective), wanted) in points.iter().zip(wanted) {
            assert!(effective.contains(wanted), "{label}: {effective}");
            assert!(
                effective.contains("isolation=READ-COMMITTED")
                    && effective.contains("lock_wait_timeout=7 s"),
                "{label} kept the other flags: {effective}"
            );
            assert!(
                stdout.contains(effective.as_str()),
                "the summary says it: {stdout}"
            );
        }
    }
}

#[test]
fn serve_shuts_down_on_shutdown_from_root_and_refuses_it_to_others() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let server = Command::new(BIN)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--user", "root", "--user", "app:s3cret"])
        .arg("--data-dir")
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut root = connect(port);
    root.query_drop("CREATE TABLE t (id INT PRIMARY KEY)")
        .unwrap();
    root.query_drop("INSERT INTO t VALUES (1), (2)").unwrap();
    let mut app = mysql::Conn::new(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port)
            .user(Some("app"))
            .pass(Some("s3cret"))
            .prefer_socket(false),
    )
    .unwrap();
    match app.query_drop("SHUTDOWN") {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1227, "{e}"),
        other => panic!("app may not shut the server down: {other:?}"),
    }
    root.query_drop("SHUTDOWN").unwrap();
    let out = exits_within(server, "serve after SHUTDOWN");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("SHUTDOWN: shutting down") && stderr.contains("2 rows"),
        "a clean stop, with its checkpoint: {stderr}"
    );
}
