//! The SQL subset, through an embedded session: DDL, DML, queries, transactions, variables,
//! and the errors bad input gets.

use std::sync::Arc;

use waterline_server::{Response, Session, SessionConfig, Shared, SqlError};
use waterline_txn::{Engine, EngineConfig};

fn session() -> Session {
    let engine = Arc::new(Engine::open(EngineConfig::default()).unwrap());
    Session::new(
        Shared::new(engine, SessionConfig::default()),
        "root",
        Some("waterline"),
    )
    .unwrap()
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    match s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")) {
        Response::Rows { rows, .. } => rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| waterline_server::types::text(v).unwrap_or_else(|| "NULL".into()))
                    .collect()
            })
            .collect(),
        other => panic!("{sql}: no rows: {other:?}"),
    }
}

fn ok(s: &mut Session, sql: &str) -> u64 {
    match s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")) {
        Response::Done { affected, .. } => affected,
        other => panic!("{sql}: rows: {other:?}"),
    }
}

fn err(s: &mut Session, sql: &str) -> SqlError {
    s.execute(sql).expect_err(sql)
}

fn one(s: &mut Session, sql: &str) -> String {
    rows(s, sql).remove(0).remove(0)
}

fn setup(s: &mut Session) {
    ok(
        s,
        "CREATE TABLE item (i_id INT NOT NULL, i_name VARCHAR(24), i_price DECIMAL(5,2), PRIMARY KEY (i_id))",
    );
    ok(
        s,
        "CREATE TABLE stock (s_w_id INT, s_i_id INT, s_quantity INT, PRIMARY KEY (s_w_id, s_i_id), KEY idx_q (s_quantity)) ENGINE=InnoDB",
    );
    let values: Vec<String> = (1..=20)
        .map(|i| format!("({i}, 'item-{i}', {}.{:02})", i, i % 100))
        .collect();
    assert_eq!(
        ok(s, &format!("INSERT INTO item VALUES {}", values.join(", "))),
        20
    );
    let stock: Vec<String> = (1..=20)
        .map(|i| format!("(1, {i}, {})", (i * 7) % 30))
        .collect();
    ok(
        s,
        &format!(
            "INSERT INTO stock (s_w_id, s_i_id, s_quantity) VALUES {}",
            stock.join(", ")
        ),
    );
}

#[test]
fn queries_joins_aggregates_order_limit() {
    let mut s = session();
    setup(&mut s);
    assert_eq!(
        one(&mut s, "SELECT i_name FROM item WHERE i_id = 7"),
        "item-7"
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(*) FROM item WHERE i_id BETWEEN 5 AND 9"
        ),
        "5"
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT SUM(i_price) FROM item WHERE i_id IN (1, 2, 3)"
        ),
        "6.06"
    );
    assert_eq!(
        rows(&mut s, "SELECT MIN(i_id), MAX(i_id), AVG(i_id) FROM item"),
        [["1", "20", "10.5000"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT i_id FROM item WHERE i_id > 15 ORDER BY i_id DESC LIMIT 2"
        ),
        [["20"], ["19"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT i_id FROM item ORDER BY i_id LIMIT 2 OFFSET 3"
        ),
        [["4"], ["5"]]
    );
    assert_eq!(
        rows(&mut s, "SELECT i_id FROM item ORDER BY i_id LIMIT 3, 1"),
        [["4"]]
    );
    // A join, as StockLevel's second half.
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(DISTINCT s_i_id) FROM stock JOIN item ON i_id = s_i_id WHERE s_w_id = 1 AND s_quantity < 10"
        ),
        rows(&mut s, "SELECT COUNT(*) FROM stock WHERE s_quantity < 10")[0][0]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT s_quantity % 3 AS q, COUNT(*) FROM stock GROUP BY s_quantity % 3 ORDER BY q"
        ),
        [["0", "6"], ["1", "7"], ["2", "7"]]
    );
    assert_eq!(rows(&mut s, "SELECT DISTINCT s_w_id FROM stock"), [["1"]]);
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(*) FROM item WHERE (i_id, i_name) IN ((1, 'item-1'), (2, 'nope'))"
        ),
        "1"
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM item WHERE i_id = 3"),
        [["3", "item-3", "3.03"]]
    );
    assert_eq!(
        one(&mut s, "SELECT i_price * 2 + 1 FROM item WHERE i_id = 2"),
        "5.04"
    );
    assert_eq!(
        one(&mut s, "SELECT COUNT(*) FROM item WHERE i_id = 99"),
        "0"
    );
    assert_eq!(
        one(&mut s, "SELECT SUM(i_id) FROM item WHERE i_id = 99"),
        "NULL"
    );
}

#[test]
fn updates_deletes_and_auto_increment() {
    let mut s = session();
    setup(&mut s);
    let Response::Done { info, affected, .. } = s
        .execute("UPDATE stock SET s_quantity = s_quantity + 10 WHERE s_w_id = 1 AND s_i_id <= 3")
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(
        (affected, info.as_str()),
        (3, "Rows matched: 3  Changed: 3  Warnings: 0")
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = 1"
        ),
        "17"
    );
    assert_eq!(
        ok(
            &mut s,
            "UPDATE stock SET s_quantity = 17 WHERE s_w_id = 1 AND s_i_id = 1"
        ),
        0
    );
    // Changing the primary key moves the row.
    ok(&mut s, "UPDATE item SET i_id = 100 WHERE i_id = 20");
    assert_eq!(
        one(&mut s, "SELECT i_name FROM item WHERE i_id = 100"),
        "item-20"
    );
    assert_eq!(ok(&mut s, "DELETE FROM item WHERE i_id > 10"), 10);
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM item"), "10");

    ok(
        &mut s,
        "CREATE TABLE log (id BIGINT NOT NULL AUTO_INCREMENT, msg VARCHAR(20) DEFAULT 'none', at DATETIME, PRIMARY KEY (id))",
    );
    let Response::Done { last_insert_id, .. } = s
        .execute("INSERT INTO log (at) VALUES ('2026-11-21 08:00:00'), (NULL)")
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(last_insert_id, 1);
    ok(&mut s, "INSERT INTO log VALUES (10, 'ten', NULL)");
    ok(&mut s, "INSERT INTO log (msg) VALUES ('next')");
    assert_eq!(
        rows(&mut s, "SELECT id, msg FROM log ORDER BY id"),
        [["1", "none"], ["2", "none"], ["10", "ten"], ["11", "next"]]
    );
    assert_eq!(one(&mut s, "SELECT LAST_INSERT_ID()"), "11");
    assert_eq!(
        one(&mut s, "SELECT at FROM log WHERE id = 1"),
        "2026-11-21 08:00:00"
    );
    // A table without a primary key: hidden row ids.
    ok(
        &mut s,
        "CREATE TABLE history (h_c_id INT, h_amount DECIMAL(6,2))",
    );
    ok(
        &mut s,
        "INSERT INTO history VALUES (1, 10.00), (1, 5.50), (2, 1.00)",
    );
    assert_eq!(
        ok(&mut s, "UPDATE history SET h_amount = 0 WHERE h_c_id = 1"),
        2
    );
    assert_eq!(ok(&mut s, "DELETE FROM history WHERE h_c_id = 2"), 1);
    assert_eq!(one(&mut s, "SELECT SUM(h_amount) FROM history"), "0.00");
}

#[test]
fn transactions_autocommit_and_isolation() {
    let engine = Arc::new(Engine::open(EngineConfig::default()).unwrap());
    let shared = Shared::new(engine, SessionConfig::default());
    let mut a = Session::new(Arc::clone(&shared), "root", Some("waterline")).unwrap();
    let mut b = Session::new(shared, "root", Some("waterline")).unwrap();
    ok(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    ok(&mut a, "INSERT INTO t VALUES (1, 1)");
    ok(&mut a, "BEGIN");
    ok(&mut a, "UPDATE t SET v = 2 WHERE id = 1");
    assert_eq!(
        one(&mut b, "SELECT v FROM t WHERE id = 1"),
        "1",
        "uncommitted is invisible"
    );
    ok(&mut a, "ROLLBACK");
    assert_eq!(one(&mut a, "SELECT v FROM t WHERE id = 1"), "1");
    ok(&mut a, "START TRANSACTION");
    ok(&mut a, "UPDATE t SET v = 3 WHERE id = 1");
    ok(&mut a, "COMMIT");
    assert_eq!(one(&mut b, "SELECT v FROM t WHERE id = 1"), "3");
    // autocommit off: statements accumulate until COMMIT.
    ok(&mut a, "SET autocommit = 0");
    ok(&mut a, "INSERT INTO t VALUES (2, 2)");
    assert!(a.in_transaction());
    assert_eq!(one(&mut b, "SELECT COUNT(*) FROM t"), "1");
    ok(&mut a, "COMMIT");
    assert_eq!(one(&mut b, "SELECT COUNT(*) FROM t"), "2");
    ok(&mut a, "SET autocommit = 1");
    // REPEATABLE READ (the default) keeps one snapshot; READ COMMITTED sees new commits.
    ok(&mut b, "BEGIN");
    assert_eq!(one(&mut b, "SELECT v FROM t WHERE id = 2"), "2");
    ok(&mut a, "UPDATE t SET v = 20 WHERE id = 2");
    assert_eq!(one(&mut b, "SELECT v FROM t WHERE id = 2"), "2");
    ok(&mut b, "COMMIT");
    ok(
        &mut b,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    );
    assert_eq!(
        one(&mut b, "SELECT @@transaction_isolation"),
        "READ-COMMITTED"
    );
    ok(&mut b, "BEGIN");
    assert_eq!(one(&mut b, "SELECT v FROM t WHERE id = 2"), "20");
    ok(&mut a, "UPDATE t SET v = 21 WHERE id = 2");
    assert_eq!(one(&mut b, "SELECT v FROM t WHERE id = 2"), "21");
    ok(&mut b, "COMMIT");
    // A failed statement undoes only itself.
    ok(&mut a, "BEGIN");
    ok(&mut a, "INSERT INTO t VALUES (3, 3)");
    assert_eq!(
        err(&mut a, "INSERT INTO t VALUES (4, 4), (1, 1)").code,
        1062
    );
    ok(&mut a, "COMMIT");
    assert_eq!(
        rows(&mut a, "SELECT id FROM t ORDER BY id"),
        [["1"], ["2"], ["3"]]
    );
}

#[test]
fn variables_show_and_explain() {
    let mut s = session();
    setup(&mut s);
    assert_eq!(
        one(&mut s, "SELECT @@version_comment LIMIT 1"),
        "waterline, a miniature MVCC row store"
    );
    assert_eq!(one(&mut s, "SELECT @@socket"), "");
    assert_eq!(one(&mut s, "SELECT DATABASE()"), "waterline");
    assert_eq!(one(&mut s, "SELECT USER()"), "root@localhost");
    assert!(one(&mut s, "SELECT VERSION()").ends_with("-waterline"));
    ok(&mut s, "SET NAMES utf8mb4");
    ok(&mut s, "SET sql_mode = 'STRICT_TRANS_TABLES'");
    assert_eq!(rows(&mut s, "SHOW DATABASES"), [["waterline"]]);
    assert_eq!(rows(&mut s, "SHOW TABLES"), [["item"], ["stock"]]);
    assert_eq!(
        rows(&mut s, "SHOW VARIABLES LIKE 'autocommit'"),
        [["autocommit", "1"]]
    );
    let status = rows(&mut s, "SHOW STATUS LIKE 'Waterline_views%'");
    assert_eq!(status.len(), 2);
    let plan = rows(
        &mut s,
        "EXPLAIN SELECT * FROM stock WHERE s_w_id = 1 AND s_i_id BETWEEN 2 AND 5",
    );
    assert_eq!(plan[0][3], "range");
    ok(&mut s, "SET waterline_planner_mode = 'legacy8027'");
    assert_eq!(one(&mut s, "SELECT @@waterline_planner_mode"), "legacy8027");
    ok(&mut s, "CREATE DATABASE sbtest");
    ok(&mut s, "USE sbtest");
    assert_eq!(one(&mut s, "SELECT DATABASE()"), "sbtest");
    assert!(rows(&mut s, "SHOW WARNINGS").is_empty());
}

#[test]
fn create_index_and_drop_table() {
    let mut s = session();
    setup(&mut s);
    ok(&mut s, "CREATE INDEX idx_name ON item (i_name)");
    let plan = rows(
        &mut s,
        "EXPLAIN SELECT i_id FROM item WHERE i_name = 'item-4'",
    );
    assert_eq!(
        (plan[0][3].as_str(), plan[0][5].as_str()),
        ("ref", "idx_name")
    );
    assert_eq!(
        one(&mut s, "SELECT i_id FROM item WHERE i_name = 'item-4'"),
        "4"
    );
    assert_eq!(
        err(&mut s, "CREATE INDEX idx_name ON item (i_price)").code,
        1061
    );
    assert_eq!(
        err(&mut s, "CREATE UNIQUE INDEX u ON stock (s_w_id)").code,
        1062
    );
    ok(&mut s, "DROP TABLE stock");
    assert_eq!(err(&mut s, "SELECT * FROM stock").code, 1146);
    assert_eq!(err(&mut s, "DROP TABLE stock").code, 1051);
    ok(&mut s, "DROP TABLE IF EXISTS stock");
    assert_eq!(rows(&mut s, "SHOW WARNINGS").len(), 1);
    // sysbench's own table, prepared its way.
    ok(
        &mut s,
        "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) /*! ENGINE = innodb */",
    );
    ok(
        &mut s,
        "INSERT INTO sbtest1(k, c, pad) VALUES(5, 'a', 'p'),(6, 'b', 'q')",
    );
    ok(&mut s, "CREATE INDEX k_1 ON sbtest1(k)");
    assert_eq!(
        rows(&mut s, "SELECT id, c FROM sbtest1 WHERE k = 6"),
        [["2", "b"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 1 AND 2 ORDER BY c"
        ),
        [["a"], ["b"]]
    );
}

#[test]
fn bad_input_gets_mysql_errors() {
    let mut s = session();
    setup(&mut s);
    let cases = [
        ("SELEC 1", 1064),
        ("SELECT * FROM nope", 1146),
        ("SELECT nope FROM item", 1054),
        ("INSERT INTO item VALUES (1, 'dup', 1.00)", 1062),
        ("INSERT INTO item VALUES (1, 'x')", 1136),
        ("INSERT INTO item (i_id, nope) VALUES (1, 2)", 1054),
        ("INSERT INTO item VALUES (NULL, 'x', 1.00)", 1048),
        (
            "INSERT INTO item VALUES (99, 'this name is far too long for the column', 1.00)",
            1406,
        ),
        ("INSERT INTO item VALUES ('abc', 'x', 1.00)", 1366),
        ("CREATE TABLE item (a INT)", 1050),
        ("USE nowhere", 1049),
        ("SELECT @@nope", 1193),
        ("GRANT ALL ON *.* TO x", 1235),
        ("SELECT 1; SELECT 2", 1064),
        ("", 1065),
        (
            "SELECT * FROM item WHERE i_id = 9223372036854775807 + 1",
            1690,
        ),
        ("SET autocommit = NULL", 1231),
    ];
    for (sql, code) in cases {
        assert_eq!(err(&mut s, sql).code, code, "{sql}");
    }
    // Still usable afterwards.
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM item"), "20");
}
