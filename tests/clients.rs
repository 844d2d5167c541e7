//! Python's MySQL clients (PyMySQL, mysql-connector-python, SQLAlchemy over PyMySQL) against
//! `waterline serve` as a process: rollback, autocommit and the server status flags as they
//! see them, and clients that go away without COM_QUIT or are killed mid-statement, after
//! which their row locks are free and the server's output holds no panic.
//!
//! `.ci/run` installs the Python packages and sets `WATERLINE_REQUIRE_CLIENTS=1`, which makes
//! a missing one a failure; elsewhere the tests say they were skipped.

#![allow(clippy::print_stderr)]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use mysql::prelude::Queryable;

const BIN: &str = env!("CARGO_BIN_EXE_waterline");
const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python");

fn have_python_clients() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import pymysql, mysql.connector, sqlalchemy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("WATERLINE_REQUIRE_CLIENTS").is_none(),
            "PyMySQL, mysql-connector-python and SQLAlchemy are required here"
        );
        eprintln!(
            "skipped: pip install pymysql mysql-connector-python sqlalchemy to run this test"
        );
    }
    found
}

/// `waterline serve` on a free port, its standard error in `log`.
struct Served {
    child: Child,
    port: u16,
    log: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Served {
    fn start() -> Served {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("serve.log");
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(BIN)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--lock-wait-timeout", "20", "--interactive-timeout", "3"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let served = Served {
            child,
            port,
            log,
            _dir: dir,
        };
        drop(served.connect());
        served
    }

    fn connect(&self) -> mysql::Conn {
        common::connect_to(self.port, Some("waterline"))
    }

    fn python(&self, script: &str, args: &[&str]) -> Command {
        let mut c = Command::new("python3");
        c.arg(format!("{SCRIPTS}/{script}"))
            .arg(self.port.to_string())
            .args(args);
        c
    }

    /// `gone.py PORT how` once it holds row 1 of `g` (it says "locked"), still running.
    fn gone_holding_row_1(&self, how: &str) -> Child {
        let mut client = self
            .python("gone.py", &[how])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(client.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "locked\n");
        client
    }

    /// Stops the server (SIGTERM); what it wrote to standard error must hold no panic.
    fn stop_clean(mut self) {
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        self.child.wait().unwrap();
        let log = std::fs::read_to_string(&self.log).unwrap();
        assert!(
            !log.contains("panic") && !log.contains("internal error"),
            "{log}"
        );
    }
}

/// A client program's run: it succeeded and its last line was "ok".
fn printed_ok(out: &std::process::Output) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success() && text.ends_with("ok\n"), "{text}");
}

#[test]
fn python_clients_roll_back_and_read_the_status_flags() {
    if !have_python_clients() {
        return;
    }
    let served = Served::start();
    let out = served.python("rollback.py", &[]).output().unwrap();
    printed_ok(&out);
    served.stop_clean();
}

#[test]
fn clients_gone_without_quit_or_killed_mid_statement_leave_no_lock_and_no_panic() {
    if !have_python_clients() {
        return;
    }
    let served = Served::start();
    let mut conn = served.connect();
    conn.query_drop("CREATE TABLE g (id INT PRIMARY KEY, v INT)")
        .unwrap();
    conn.query_drop("INSERT INTO g VALUES (1, 0), (2, 0)")
        .unwrap();
    conn.query_drop("SET SESSION innodb_lock_wait_timeout = 10")
        .unwrap();

    // Exits holding row 1's lock, without COM_QUIT: the server rolls it back.
    let out = served.python("gone.py", &["exit"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "locked\n");
    conn.query_drop("UPDATE g SET v = v + 10 WHERE id = 1")
        .unwrap();

    // Holds row 1, waits for row 2 (ours), and is killed while it waits.
    conn.query_drop("BEGIN").unwrap();
    conn.query_drop("UPDATE g SET v = v + 10 WHERE id = 2")
        .unwrap();
    let mut waiter = served.gone_holding_row_1("wait");
    std::thread::sleep(Duration::from_millis(300)); // into its lock wait
    waiter.kill().unwrap();
    waiter.wait().unwrap();
    // Our commit lets its statement finish; its reply finds the socket closed, and the
    // connection ends, rolling back.
    conn.query_drop("COMMIT").unwrap();
    conn.query_drop("UPDATE g SET v = v + 10 WHERE id = 1")
        .unwrap();
    let rows: Vec<(i64, i64)> = conn.query("SELECT id, v FROM g ORDER BY id").unwrap();
    assert_eq!(
        rows,
        vec![(1, 20), (2, 10)],
        "the gone clients' updates undone"
    );
    drop(conn);
    served.stop_clean();
}

/// A client killed while its statement runs for hours: the statement notices its client
/// has gone and stops, so the row lock its transaction holds is free soon after (long
/// before the statement could finish, or the waiter's lock-wait timeout end).
#[test]
fn a_statement_whose_client_has_gone_stops() {
    if !have_python_clients() {
        return;
    }
    let served = Served::start();
    let mut conn = served.connect();
    conn.query_drop("CREATE TABLE g (id INT PRIMARY KEY, v INT)")
        .unwrap();
    conn.query_drop("INSERT INTO g VALUES (1, 0), (2, 0)")
        .unwrap();
    conn.query_drop("CREATE TABLE big (id INT PRIMARY KEY)")
        .unwrap();
    let values: Vec<String> = (0..1000).map(|i| format!("({i})")).collect();
    conn.query_drop(format!("INSERT INTO big VALUES {}", values.join(",")))
        .unwrap();
    conn.query_drop("SET SESSION innodb_lock_wait_timeout = 15")
        .unwrap();
    let mut runaway = served.gone_holding_row_1("runaway");
    std::thread::sleep(Duration::from_millis(500)); // into its SELECT
    runaway.kill().unwrap();
    runaway.wait().unwrap();
    let started = Instant::now();
    conn.query_drop("UPDATE g SET v = v + 10 WHERE id = 1")
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    drop(conn);
    served.stop_clean();
}

/// mysql_kill(), interactive_timeout, net_read_timeout and wait_timeout, through PyMySQL.
#[test]
fn python_clients_meet_kill_and_the_timeouts() {
    if !have_python_clients() {
        return;
    }
    let served = Served::start();
    let out = served.python("stopping.py", &[]).output().unwrap();
    printed_ok(&out);
    served.stop_clean();
}

/// SQLAlchemy 2 creates, reflects (columns, primary, unique and foreign keys, indexes) and
/// drops a schema with foreign keys, and its Core and ORM work through them.
#[test]
fn sqlalchemy_creates_reflects_and_drops_a_schema() {
    if !have_python_clients() {
        return;
    }
    let served = Served::start();
    let out = served.python("reflect.py", &[]).output().unwrap();
    printed_ok(&out);
    served.stop_clean();
}

/// MySQL Connector/J 8.0.13, the jar BenchmarkSQL ships in `../shared/tools` (it read
/// `@@init_connect` at connect and, failing, panicked the connection thread before), and
/// MariaDB Connector/J, Debian's `libmariadb-java`: each connects, rolls back, prepares and
/// batches (`tests/java/ConnectorJ.java`).
#[test]
fn connector_j_connects_rolls_back_and_prepares() {
    let drivers = [
        (
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../shared/tools/benchmarksql/lib/mysql/mysql-connector-java-8.0.13.jar"
            ),
            "mysql",
        ),
        ("/usr/share/java/mariadb-java-client.jar", "mariadb"),
    ];
    let javac = Command::new("javac").arg("-version").output();
    let missing = drivers
        .iter()
        .find(|(jar, _)| !std::path::Path::new(jar).exists());
    if missing.is_some() || javac.is_err() {
        assert!(
            std::env::var_os("WATERLINE_REQUIRE_CLIENTS").is_none(),
            "a JDK and {missing:?} are required here"
        );
        eprintln!("skipped: no JDK, or no {missing:?}");
        return;
    }
    let classes = tempfile::tempdir().unwrap();
    let compiled = Command::new("javac")
        .arg("-d")
        .arg(classes.path())
        .arg(format!(
            "{}/tests/java/ConnectorJ.java",
            env!("CARGO_MANIFEST_DIR")
        ))
        .output()
        .unwrap();
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    for (jar, scheme) in drivers {
        let served = Served::start();
        let out = Command::new("java")
            .arg("-cp")
            .arg(format!("{}:{jar}", classes.path().display()))
            .arg("ConnectorJ")
            .arg(served.port.to_string())
            .arg(scheme)
            .output()
            .unwrap();
        printed_ok(&out);
        served.stop_clean();
    }
}
