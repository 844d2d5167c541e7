//! Stopping statements and connections over the protocol: `KILL QUERY` of a runaway
//! statement and of a row-lock wait (only the statement is undone), `KILL CONNECTION` and
//! who may use it, `max_execution_time` as a session variable and as an optimizer hint.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use waterline_server::{Server, SessionConfig, Shared, User};
use waterline_txn::{Engine, EngineConfig};

fn start() -> u16 {
    let config = EngineConfig {
        lock_wait_timeout: Duration::from_secs(30),
        ..EngineConfig::default()
    };
    let engine = Arc::new(Engine::open(config).unwrap());
    let mut users = SessionConfig::default().users;
    users.push(User {
        name: "app".into(),
        password: String::new(),
    });
    let shared = Shared::new(
        engine,
        SessionConfig {
            users,
            ..SessionConfig::default()
        },
    );
    let port = Server::new(shared, 16)
        .spawn("127.0.0.1:0".parse().unwrap())
        .unwrap()
        .port();
    let mut c = connect(port, "root");
    c.query_drop("CREATE TABLE big (id INT PRIMARY KEY, v INT)")
        .unwrap();
    let values: Vec<String> = (0..1000).map(|i| format!("({i}, {i})")).collect();
    c.query_drop(format!("INSERT INTO big VALUES {}", values.join(",")))
        .unwrap();
    port
}

fn connect(port: u16, user: &str) -> Conn {
    Conn::new(Opts::from_url(&format!("mysql://{user}@127.0.0.1:{port}/waterline")).unwrap())
        .unwrap()
}

fn code(e: mysql::Error) -> u16 {
    match e {
        mysql::Error::MySqlError(e) => e.code,
        other => panic!("not a server error: {other}"),
    }
}

/// Runs `statement` on `c` while another connection, after `after`, runs `kill` with the
/// victim's connection id; returns the statement's error and how long it ran.
fn killed_while(port: u16, c: &mut Conn, statement: &str, kill: &str) -> (mysql::Error, Duration) {
    let id = c.connection_id();
    let kill = format!("{kill} {id}");
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        connect(port, "root").query_drop(kill).unwrap();
    });
    let started = Instant::now();
    let error = c.query_drop(statement).expect_err("stopped");
    killer.join().unwrap();
    (error, started.elapsed())
}

/// Three joined copies of a 1,000-row table: a billion rows to look at.
const RUNAWAY: &str = "SELECT COUNT(*) FROM big a, big b, big c WHERE a.v + b.v + c.v < 0";

#[test]
fn kill_query_stops_the_statement_and_keeps_the_transaction() {
    let port = start();
    let mut c = connect(port, "root");
    c.query_drop("BEGIN").unwrap();
    c.query_drop("UPDATE big SET v = -1 WHERE id = 1").unwrap();
    let (error, took) = killed_while(port, &mut c, RUNAWAY, "KILL QUERY");
    assert_eq!(code(error), 1317);
    assert!(took < Duration::from_secs(10), "{took:?}");
    // The transaction goes on, with its earlier update.
    let v: Option<i64> = c.query_first("SELECT v FROM big WHERE id = 1").unwrap();
    assert_eq!(v, Some(-1));
    c.query_drop("COMMIT").unwrap();
    // A KILL QUERY that comes between statements is forgotten by the next one.
    let id = c.connection_id();
    connect(port, "root")
        .query_drop(format!("KILL QUERY {id}"))
        .unwrap();
    let one: Option<i64> = c.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1));
}

#[test]
fn kill_query_ends_a_row_lock_wait() {
    let port = start();
    let mut holder = connect(port, "root");
    holder.query_drop("BEGIN").unwrap();
    holder
        .query_drop("SELECT v FROM big WHERE id = 7 FOR UPDATE")
        .unwrap();
    let mut waiter = connect(port, "root");
    waiter.query_drop("BEGIN").unwrap();
    waiter
        .query_drop("UPDATE big SET v = 0 WHERE id = 8")
        .unwrap();
    let (error, took) = killed_while(
        port,
        &mut waiter,
        "UPDATE big SET v = 0 WHERE id = 7",
        "KILL QUERY",
    );
    assert_eq!(code(error), 1317);
    assert!(
        took < Duration::from_secs(10),
        "not the 30 s lock-wait timeout: {took:?}"
    );
    holder.query_drop("COMMIT").unwrap();
    waiter.query_drop("COMMIT").unwrap();
    let v: Option<i64> = holder
        .query_first("SELECT v FROM big WHERE id = 8")
        .unwrap();
    assert_eq!(v, Some(0), "the statement before the killed one stays");
}

#[test]
fn kill_connection_ends_it_for_root_and_its_own_user_only() {
    let port = start();
    let mut victim = connect(port, "app");
    let (_, took) = killed_while(port, &mut victim, RUNAWAY, "KILL CONNECTION");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(
        victim.query_drop("SELECT 1").is_err(),
        "the connection is gone"
    );

    let mut app = connect(port, "app");
    let root = connect(port, "root");
    let err = app
        .query_drop(format!("KILL {}", root.connection_id()))
        .expect_err("not app's");
    assert_eq!(code(err), 1095);
    let err = app.query_drop("KILL 4000000").expect_err("no such id");
    assert_eq!(code(err), 1094);
    let other_app = connect(port, "app");
    app.query_drop(format!("KILL {}", other_app.connection_id()))
        .unwrap();
}

#[test]
fn max_execution_time_stops_a_select_and_nothing_else() {
    let port = start();
    let mut c = connect(port, "root");
    let started = Instant::now();
    let err = c
        .query_drop(format!(
            "SELECT /*+ MAX_EXECUTION_TIME(200) */ {}",
            &RUNAWAY[7..]
        ))
        .expect_err("out of time");
    assert_eq!(code(err), 3024);
    assert!(started.elapsed() < Duration::from_secs(10));

    c.query_drop("SET SESSION max_execution_time = 200")
        .unwrap();
    let limit: Option<i64> = c.query_first("SELECT @@max_execution_time").unwrap();
    assert_eq!(limit, Some(200));
    assert_eq!(code(c.query_drop(RUNAWAY).expect_err("out of time")), 3024);
    let statement = c.prep(RUNAWAY).unwrap();
    assert_eq!(
        code(c.exec_drop(&statement, ()).expect_err("prepared too")),
        3024
    );
    // A hint of 0 leaves the session's limit.
    let zero = format!("SELECT /*+ MAX_EXECUTION_TIME(0) */ {}", &RUNAWAY[7..]);
    assert_eq!(code(c.query_drop(zero).expect_err("session's")), 3024);
    // Not an UPDATE: it runs to the end (MySQL limits read-only SELECTs only).
    c.query_drop("SET SESSION max_execution_time = 1").unwrap();
    c.query_drop("UPDATE big SET v = v + 1").unwrap();
    // (A SELECT of all 1,000 rows may well take longer than 1 ms: it is the limit's to stop.)
    c.query_drop("SET SESSION max_execution_time = 0").unwrap();
    let sum: Option<i64> = c.query_first("SELECT SUM(v) FROM big").unwrap();
    assert_eq!(sum, Some((0..1000).sum::<i64>() + 1000));
}
