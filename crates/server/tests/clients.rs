//! Real MySQL clients over the protocol: the Rust `mysql` crate (text and prepared
//! statements, transactions, errors, several connections), against a server on loopback.

use std::sync::Arc;
use std::time::Duration;

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use waterline_server::{Server, SessionConfig, Shared, User};
use waterline_txn::{Engine, EngineConfig};

fn start(max_connections: usize) -> u16 {
    let config = EngineConfig {
        lock_wait_timeout: Duration::from_secs(2),
        ..EngineConfig::default()
    };
    let engine = Arc::new(Engine::open(config).unwrap());
    let users = vec![
        User {
            name: "root".into(),
            password: String::new(),
        },
        User {
            name: "app".into(),
            password: "s3cret".into(),
        },
    ];
    let shared = Shared::new(
        engine,
        SessionConfig {
            users,
            ..SessionConfig::default()
        },
    );
    Server::new(shared, max_connections)
        .spawn("127.0.0.1:0".parse().unwrap())
        .unwrap()
        .port()
}

fn connect(port: u16) -> Conn {
    Conn::new(Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/waterline")).unwrap()).unwrap()
}

fn code(e: mysql::Error) -> u16 {
    match e {
        mysql::Error::MySqlError(e) => e.code,
        other => panic!("not a server error: {other}"),
    }
}

#[test]
fn text_and_prepared_statements() {
    let port = start(16);
    let mut c = connect(port);
    c.query_drop("CREATE TABLE account (id INT PRIMARY KEY, owner VARCHAR(20) NOT NULL, balance DECIMAL(12,2), opened DATETIME)").unwrap();
    c.query_drop("INSERT INTO account VALUES (1, 'ada', 100.00, '2026-01-02 03:04:05'), (2, 'bob', 50.50, NULL)").unwrap();
    let rows: Vec<(i32, String, String)> = c
        .query("SELECT id, owner, balance FROM account ORDER BY id")
        .unwrap();
    assert_eq!(
        rows,
        vec![
            (1, "ada".into(), "100.00".into()),
            (2, "bob".into(), "50.50".into())
        ]
    );

    // Prepared: parameters bound, the same statement run many times.
    let stmt = c
        .prep("SELECT owner, balance FROM account WHERE id = ?")
        .unwrap();
    assert_eq!(stmt.num_params(), 1);
    assert_eq!(stmt.num_columns(), 2);
    let row: Option<(String, String)> = c.exec_first(&stmt, (2,)).unwrap();
    assert_eq!(row, Some(("bob".into(), "50.50".into())));
    let insert = c
        .prep("INSERT INTO account (id, owner, balance) VALUES (?, ?, ?)")
        .unwrap();
    for i in 3..=10 {
        c.exec_drop(&insert, (i, format!("user{i}"), "1.25"))
            .unwrap();
    }
    let total: Option<String> = c.query_first("SELECT SUM(balance) FROM account").unwrap();
    assert_eq!(total.as_deref(), Some("160.50"));
    let count: Option<i64> = c
        .exec_first(
            "SELECT COUNT(*) FROM account WHERE id BETWEEN ? AND ?",
            (3, 6),
        )
        .unwrap();
    assert_eq!(count, Some(4));
    let opened: Option<mysql::Value> = c
        .exec_first("SELECT opened FROM account WHERE id = ?", (1,))
        .unwrap();
    assert_eq!(opened, Some(mysql::Value::Date(2026, 1, 2, 3, 4, 5, 0)));
    c.exec_drop(
        "UPDATE account SET balance = balance + ? WHERE id = ?",
        ("0.50", 1),
    )
    .unwrap();
    assert_eq!(c.affected_rows(), 1);
    let b: Option<String> = c
        .query_first("SELECT balance FROM account WHERE id = 1")
        .unwrap();
    assert_eq!(b.as_deref(), Some("100.50"));
    // Errors come back as error packets, and the connection stays usable.
    assert_eq!(
        code(c.query_drop("SELECT nope FROM account").unwrap_err()),
        1054
    );
    assert_eq!(
        code(
            c.query_drop("INSERT INTO account VALUES (1, 'dup', 0, NULL)")
                .unwrap_err()
        ),
        1062
    );
    assert_eq!(code(c.query_drop("SELEC 1").unwrap_err()), 1064);
    assert_eq!(
        code(c.query_drop("SELECT * FROM missing").unwrap_err()),
        1146
    );
    assert_eq!(
        code(c.prep("CREATE TABLE x (a INT)").map(drop).unwrap_err()),
        1295
    );
    let one: Option<i64> = c.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1));
}

#[test]
fn transactions_and_locks_across_connections() {
    let port = start(16);
    let mut a = connect(port);
    let mut b = connect(port);
    a.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    a.query_drop("INSERT INTO t VALUES (1, 0), (2, 0)").unwrap();
    a.query_drop("BEGIN").unwrap();
    a.query_drop("UPDATE t SET v = 1 WHERE id = 1").unwrap();
    let seen: Option<i32> = b.query_first("SELECT v FROM t WHERE id = 1").unwrap();
    assert_eq!(seen, Some(0));
    // b waits for a's row lock and times out (2 s here): 1205, and as in InnoDB (with
    // innodb_rollback_on_timeout off) only the statement is undone: b's transaction goes on.
    b.query_drop("BEGIN").unwrap();
    assert_eq!(
        code(b.query_drop("UPDATE t SET v = 2 WHERE id = 1").unwrap_err()),
        1205
    );
    a.query_drop("COMMIT").unwrap();
    b.query_drop("UPDATE t SET v = 2 WHERE id = 1").unwrap();
    let v: Option<i32> = a.query_first("SELECT v FROM t WHERE id = 1").unwrap();
    assert_eq!(v, Some(1), "b's update is not committed yet");
    b.query_drop("COMMIT").unwrap();
    let v: Option<i32> = a.query_first("SELECT v FROM t WHERE id = 1").unwrap();
    assert_eq!(v, Some(2));

    // A client that disconnects mid-transaction has its locks freed.
    let mut c = connect(port);
    c.query_drop("BEGIN").unwrap();
    c.query_drop("SELECT * FROM t WHERE id = 2 FOR UPDATE")
        .unwrap();
    drop(c);
    std::thread::sleep(Duration::from_millis(100));
    a.query_drop("UPDATE t SET v = 5 WHERE id = 2").unwrap();

    // A deadlock: one of the two gets 1213 and is rolled back; the other goes on.
    a.query_drop("BEGIN").unwrap();
    b.query_drop("BEGIN").unwrap();
    a.query_drop("UPDATE t SET v = 10 WHERE id = 1").unwrap();
    b.query_drop("UPDATE t SET v = 20 WHERE id = 2").unwrap();
    let other = std::thread::spawn(move || {
        let r = b.query_drop("UPDATE t SET v = 21 WHERE id = 1");
        let _ = b.query_drop("COMMIT");
        r.err().map(code)
    });
    std::thread::sleep(Duration::from_millis(200));
    let mine = a
        .query_drop("UPDATE t SET v = 11 WHERE id = 2")
        .err()
        .map(code);
    let _ = a.query_drop("COMMIT");
    let theirs = other.join().unwrap();
    let mut codes = [mine, theirs];
    codes.sort();
    assert_eq!(codes, [None, Some(1213)]);
}

#[test]
fn skip_locked_and_nowait_do_not_wait() {
    let port = start(4);
    let mut a = connect(port);
    let mut b = connect(port);
    // A queue per `k`, as TPC-C's NEW_ORDER has one per district.
    a.query_drop("CREATE TABLE q (k INT, id INT, PRIMARY KEY (k, id))")
        .unwrap();
    a.query_drop("INSERT INTO q VALUES (1, 1), (1, 2), (1, 3)")
        .unwrap();
    // In key order with a limit, the scan stops at its first row: it locks that one only.
    let oldest = "SELECT id FROM q WHERE k = 1 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED";
    a.query_drop("BEGIN").unwrap();
    let mine: Vec<i32> = a.query(oldest).unwrap();
    assert_eq!(mine, [1]);
    // b takes the oldest row a does not hold, at once.
    b.query_drop("BEGIN").unwrap();
    let theirs: Vec<i32> = b.query(oldest).unwrap();
    assert_eq!(theirs, [2]);
    // NOWAIT on a's row: 3572 at once, which fails the statement only.
    let nowait = b
        .query_drop("SELECT id FROM q WHERE k = 1 AND id = 1 FOR UPDATE NOWAIT")
        .unwrap_err();
    assert_eq!(code(nowait), 3572);
    // A point read skips the row too; b still holds row 2.
    let none: Vec<i32> = b
        .query("SELECT id FROM q WHERE k = 1 AND id = 1 FOR UPDATE SKIP LOCKED")
        .unwrap();
    assert!(none.is_empty());
    let all: Vec<i32> = b.query("SELECT id FROM q FOR UPDATE SKIP LOCKED").unwrap();
    assert_eq!(all, [2, 3]);
    a.query_drop("DELETE FROM q WHERE k = 1 AND id = 1")
        .unwrap();
    a.query_drop("COMMIT").unwrap();
    b.query_drop("COMMIT").unwrap();
    let left: Vec<i32> = a.query("SELECT id FROM q FOR UPDATE NOWAIT").unwrap();
    assert_eq!(left, [2, 3]);
    let skipped: Option<(String, u64)> = a
        .query_first("SHOW STATUS LIKE 'Waterline_lock_nowaits'")
        .unwrap();
    // b found a's row held four times: one NOWAIT, three SKIP LOCKED.
    assert_eq!(skipped.map(|(_, n)| n), Some(4));
}

#[test]
fn connection_rules() {
    let port = start(3);
    // Unknown database at connect: 1049.
    let e = Conn::new(Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/nowhere")).unwrap())
        .unwrap_err();
    assert_eq!(code(e), 1049);
    // A password user.
    let opts = OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .user(Some("app"))
        .pass(Some("s3cret"));
    let mut app = Conn::new(opts).unwrap();
    let who: Option<String> = app.query_first("SELECT USER()").unwrap();
    assert_eq!(who.as_deref(), Some("app@localhost"));
    let wrong = OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .user(Some("app"))
        .pass(Some("wrong"));
    assert_eq!(code(Conn::new(wrong).unwrap_err()), 1045);
    let stranger = OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .user(Some("eve"));
    assert_eq!(code(Conn::new(stranger).unwrap_err()), 1045);
    // Each connection its own id.
    let mut x = connect(port);
    let id_a: Option<u32> = app.query_first("SELECT CONNECTION_ID()").unwrap();
    let id_x: Option<u32> = x.query_first("SELECT CONNECTION_ID()").unwrap();
    assert_ne!(id_a, id_x);
    assert_eq!(x.connection_id(), id_x.unwrap());
    // A third connection is the limit; the fourth gets 1040.
    let _y = connect(port);
    let e = Conn::new(Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/waterline")).unwrap())
        .unwrap_err();
    assert_eq!(code(e), 1040);
}

#[test]
fn the_admission_permit_spans_the_transaction() {
    use waterline_txn::Policy;
    let config = EngineConfig {
        admission: Policy::Limit(1),
        ..EngineConfig::default()
    };
    let engine = Arc::new(Engine::open(config).unwrap());
    let shared = Shared::new(Arc::clone(&engine), SessionConfig::default());
    let port = Server::new(shared, 16)
        .spawn("127.0.0.1:0".parse().unwrap())
        .unwrap()
        .port();
    let mut a = connect(port);
    a.query_drop("CREATE TABLE t (id INT PRIMARY KEY)").unwrap();
    a.query_drop("INSERT INTO t VALUES (1)").unwrap(); // an autocommit statement: in and out
    assert_eq!(engine.admission().unwrap().metrics().inside, 0);
    a.query_drop("BEGIN").unwrap();
    assert_eq!(
        engine.admission().unwrap().metrics().inside,
        1,
        "BEGIN takes the permit"
    );
    let waiter = std::thread::spawn(move || {
        let mut b = connect(port);
        let started = std::time::Instant::now();
        let n: Option<i64> = b.query_first("SELECT COUNT(*) FROM t").unwrap();
        (n, started.elapsed())
    });
    assert!(
        eventually(|| engine.admission().unwrap().metrics().waiting == 1),
        "the other client waits at its statement"
    );
    std::thread::sleep(Duration::from_millis(300));
    a.query_drop("COMMIT").unwrap();
    let (n, waited) = waiter.join().unwrap();
    assert_eq!(n, Some(1));
    assert!(waited >= Duration::from_millis(250), "{waited:?}");
    // A client that disconnects holding the permit gives it back.
    a.query_drop("BEGIN").unwrap();
    drop(a);
    assert!(eventually(
        || engine.admission().unwrap().metrics().inside == 0
    ));
    // One connection, many transactions: each statement is admitted in turn. The 129th
    // used to hang (tokio's cooperative budget, see `waterline-throttle`'s `block_on`),
    // and TPC-C's loader with it; a read timeout turns a hang into a failure.
    let opts = OptsBuilder::from_opts(
        Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/waterline")).unwrap(),
    )
    .read_timeout(Some(Duration::from_secs(20)));
    let mut c = Conn::new(opts).unwrap();
    for id in 2..=400 {
        c.exec_drop("INSERT INTO t VALUES (?)", (id,)).unwrap();
    }
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(n, Some(400));
}

/// Polls `f` for up to 10 s (a loaded CI machine may be slow to run the other side).
fn eventually(f: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
fn clients_connecting_at_once_all_get_a_greeting() {
    use std::io::Read;
    // 300 clients connect before the server accepts any: more than the 128 that tokio's and
    // the standard library's `bind` queue, fewer than `max_connections`.
    let engine = Arc::new(Engine::open(EngineConfig::default()).unwrap());
    let server = Server::new(Shared::new(engine, SessionConfig::default()), 400);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let listener = {
        let _reactor = runtime.enter();
        server.bind("127.0.0.1:0".parse().unwrap()).unwrap()
    };
    let addr = listener.local_addr().unwrap();
    let mut clients: Vec<std::net::TcpStream> = (0..300)
        .map(|i| {
            std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("client {i} could not connect: {e}"))
        })
        .collect();
    std::thread::spawn(move || runtime.block_on(server.serve(listener)));
    for (i, client) in clients.iter_mut().enumerate() {
        client
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        // A packet header, then the handshake's protocol version, 10.
        let mut start = [0u8; 5];
        client
            .read_exact(&mut start)
            .unwrap_or_else(|e| panic!("client {i} got no greeting: {e}"));
        assert_eq!(start[4], 10, "client {i}");
    }
}

/// Integer columns go with MySQL's widths and UNSIGNED flag, and their values decode the
/// same through the text protocol, the filter's binary executions and opensrv's (the two
/// binary paths: a fresh prepared statement, and one after long data).
#[test]
fn integer_columns_have_mysql_widths_and_signs_on_both_protocols() {
    use mysql::consts::{ColumnFlags, ColumnType};
    let port = start(4);
    let mut c = connect(port);
    c.query_drop(
        "CREATE TABLE w (id INT PRIMARY KEY, t TINYINT, tu TINYINT UNSIGNED, s SMALLINT, \
         su SMALLINT UNSIGNED, m MEDIUMINT, mu MEDIUMINT UNSIGNED, iu INT UNSIGNED, \
         b BIGINT, at DATETIME(3))",
    )
    .unwrap();
    c.query_drop(
        "INSERT INTO w VALUES (1, -128, 255, -32768, 65535, -8388608, 16777215, 4294967295, \
         -9223372036854775808, '2026-11-26 12:00:00.1239')",
    )
    .unwrap();
    type Row = (i64, i64, i64, i64, i64, i64, i64, i64, i64, String);
    let wanted: Row = (
        1,
        -128,
        255,
        -32768,
        65535,
        -8388608,
        16777215,
        4294967295,
        i64::MIN,
        "2026-11-26 12:00:00.124".into(),
    );
    let sql = "SELECT id, t, tu, s, su, m, mu, iu, b, at FROM w WHERE id = ?";
    let text: Vec<Row> = c.query(sql.replace('?', "1")).unwrap();
    assert_eq!(text, std::slice::from_ref(&wanted));
    let statement = c.prep(sql).unwrap();
    let kinds: Vec<(ColumnType, bool)> = statement
        .columns()
        .iter()
        .map(|col| {
            (
                col.column_type(),
                col.flags().contains(ColumnFlags::UNSIGNED_FLAG),
            )
        })
        .collect();
    use ColumnType::*;
    assert_eq!(
        kinds,
        [
            (MYSQL_TYPE_LONG, false),
            (MYSQL_TYPE_TINY, false),
            (MYSQL_TYPE_TINY, true),
            (MYSQL_TYPE_SHORT, false),
            (MYSQL_TYPE_SHORT, true),
            (MYSQL_TYPE_INT24, false),
            (MYSQL_TYPE_INT24, true),
            (MYSQL_TYPE_LONG, true),
            (MYSQL_TYPE_LONGLONG, false),
            (MYSQL_TYPE_DATETIME, false),
        ]
    );
    type Binary = (i64, i64, i64, i64, i64, i64, i64, i64, i64, mysql::Value);
    let binary: Vec<Binary> = c.exec(&statement, (1,)).unwrap();
    let (b, w) = (&binary[0], &wanted);
    assert_eq!(
        (b.0, b.1, b.2, b.3, b.4, b.5, b.6, b.7, b.8),
        (w.0, w.1, w.2, w.3, w.4, w.5, w.6, w.7, w.8)
    );
    assert_eq!(b.9, mysql::Value::Date(2026, 11, 26, 12, 0, 0, 124_000));
}

/// A DATE column is MYSQL_TYPE_DATE: `YYYY-MM-DD` in the text protocol, a 4-byte date in
/// the binary one; a DATE parameter compares as a date.
#[test]
fn date_columns_on_both_protocols() {
    use mysql::consts::ColumnType;
    let port = start(4);
    let mut c = connect(port);
    c.query_drop("CREATE TABLE days (id INT PRIMARY KEY, d DATE)")
        .unwrap();
    c.query_drop("INSERT INTO days VALUES (1, '2026-11-27'), (2, NULL)")
        .unwrap();
    let text: Vec<(i64, Option<String>)> = c.query("SELECT id, d FROM days ORDER BY id").unwrap();
    assert_eq!(text, vec![(1, Some("2026-11-27".into())), (2, None)]);
    let statement = c
        .prep("SELECT d, CURDATE() = DATE(NOW()) FROM days WHERE d = ?")
        .unwrap();
    assert_eq!(
        statement.columns()[0].column_type(),
        ColumnType::MYSQL_TYPE_DATE
    );
    let day = mysql::Value::Date(2026, 11, 27, 0, 0, 0, 0);
    let binary: Vec<(mysql::Value, i64)> = c.exec(&statement, (day.clone(),)).unwrap();
    assert_eq!(binary, vec![(day, 1)]);
}

/// A connection that never logs in is closed after connect_timeout, and its slot of
/// max_connections is free again (a slowloris cannot hold them all).
#[test]
fn a_connection_that_never_logs_in_is_closed_after_connect_timeout() {
    let engine = Arc::new(Engine::open(EngineConfig::default()).unwrap());
    let shared = Shared::new(
        engine,
        SessionConfig {
            connect_timeout: Duration::from_secs(1),
            ..SessionConfig::default()
        },
    );
    let port = Server::new(shared, 2)
        .spawn("127.0.0.1:0".parse().unwrap())
        .unwrap()
        .port();
    let silent: Vec<std::net::TcpStream> = (0..2)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let full =
        Conn::new(Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/waterline")).unwrap());
    match full {
        Err(e) => assert_eq!(code(e), 1040, "both slots are held"),
        Ok(_) => panic!("both slots are held: no third connection"),
    }
    let started = std::time::Instant::now();
    let mut c = loop {
        match Conn::new(
            Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/waterline")).unwrap(),
        ) {
            Ok(c) => break c,
            Err(_) if started.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(e) => panic!("the silent connections were never closed: {e}"),
        }
    };
    let timeout: Option<i64> = c.query_first("SELECT @@connect_timeout").unwrap();
    assert_eq!(timeout, Some(1));
    // A logged-in connection is not held to it.
    std::thread::sleep(Duration::from_millis(1500));
    let one: Option<i64> = c.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1));
    drop(silent);
}
