//! The SQL subset, through an embedded session: DDL, DML, queries, transactions, variables,
//! and the errors bad input gets. Queries and errors are scripts (`tests/scripts/`).

mod common;

use std::sync::Arc;

use common::{err, ok, one, prepared_rows, rows, session};
use waterline_sql::{Response, Session, SessionConfig, Shared};
use waterline_txn::{Engine, EngineConfig, Value};

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

/// An async BEGIN waits for the admission permit without holding its thread: on a runtime
/// with one thread, the holder's task still runs to its COMMIT and lets the waiter in.
#[test]
fn an_async_begin_waits_for_the_permit_without_blocking_the_thread() {
    let config = EngineConfig {
        admission: waterline_txn::Policy::Limit(1),
        ..EngineConfig::default()
    };
    let engine = Arc::new(Engine::open(config).unwrap());
    let shared = Shared::new(Arc::clone(&engine), SessionConfig::default());
    let mut a = Session::connect(Arc::clone(&shared), "root", Some("waterline")).unwrap();
    let mut b = Session::connect(shared, "root", Some("waterline")).unwrap();
    ok(&mut a, "CREATE TABLE t (id INT PRIMARY KEY)");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let admission = engine.admission().unwrap();
    let seen = runtime.block_on(async {
        a.begin_async().await.unwrap();
        assert!(a.in_transaction());
        assert_eq!(admission.metrics().inside, 1, "BEGIN takes the permit");
        let waiter = async {
            b.begin_async().await.unwrap();
            ok(&mut b, "INSERT INTO t VALUES (2)");
            ok(&mut b, "COMMIT");
        };
        let holder = async {
            // The waiter has been polled and parked before this runs.
            tokio::task::yield_now().await;
            let waiting = admission.metrics().waiting;
            ok(&mut a, "INSERT INTO t VALUES (1)");
            ok(&mut a, "COMMIT");
            waiting
        };
        let (waiting, ()) = tokio::join!(holder, waiter);
        waiting
    });
    assert_eq!(seen, 1, "the second BEGIN waited for the permit");
    assert_eq!(admission.metrics().inside, 0);
    assert_eq!(one(&mut a, "SELECT COUNT(*) FROM t"), "2");
}

#[test]
fn transactions_autocommit_and_isolation() {
    let engine = Arc::new(Engine::open(EngineConfig::default()).unwrap());
    let shared = Shared::new(engine, SessionConfig::default());
    let mut a = Session::connect(Arc::clone(&shared), "root", Some("waterline")).unwrap();
    let mut b = Session::connect(shared, "root", Some("waterline")).unwrap();
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
    ok(&mut a, "BEGIN WORK");
    ok(&mut a, "ROLLBACK");
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
        [["autocommit", "ON"]]
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

/// The statements of TPC-C as go-tpc writes them (its DDL, and each transaction's SQL with
/// the values bound), so the TPC-C driver's SQL backends have what they need.
#[test]
fn tpcc_in_sql_as_go_tpc_writes_it() {
    let mut s = session();
    for ddl in [
        "CREATE TABLE IF NOT EXISTS warehouse (w_id INT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4, 4), w_ytd DECIMAL(12, 2), PRIMARY KEY (w_id))",
        "CREATE TABLE IF NOT EXISTS district (d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20), d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4, 4), d_ytd DECIMAL(12, 2), d_next_o_id INT, PRIMARY KEY (d_w_id, d_id))",
        "CREATE TABLE IF NOT EXISTS customer (c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), c_credit CHAR(2), c_credit_lim DECIMAL(12, 2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR(500), PRIMARY KEY(c_w_id, c_d_id, c_id), INDEX idx_customer (c_w_id, c_d_id, c_last, c_first))",
        "CREATE TABLE IF NOT EXISTS history (h_c_id INT NOT NULL, h_c_d_id INT NOT NULL, h_c_w_id INT NOT NULL, h_d_id INT NOT NULL, h_w_id INT NOT NULL, h_date DATETIME, h_amount DECIMAL(6, 2), h_data VARCHAR(24), INDEX idx_h_w_id (h_w_id), INDEX idx_h_c_w_id (h_c_w_id))",
        "CREATE TABLE IF NOT EXISTS new_order (no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL, PRIMARY KEY(no_w_id, no_d_id, no_o_id))",
        "CREATE TABLE IF NOT EXISTS orders (o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, o_c_id INT, o_entry_d DATETIME, o_carrier_id INT, o_ol_cnt INT, o_all_local INT, PRIMARY KEY(o_w_id, o_d_id, o_id), INDEX idx_order (o_w_id, o_d_id, o_c_id, o_id))",
        "CREATE TABLE IF NOT EXISTS order_line (ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, ol_number INT NOT NULL, ol_i_id INT NOT NULL, ol_supply_w_id INT, ol_delivery_d DATETIME, ol_quantity INT, ol_amount DECIMAL(6, 2), ol_dist_info CHAR(24), PRIMARY KEY(ol_w_id, ol_d_id, ol_o_id, ol_number))",
        "CREATE TABLE IF NOT EXISTS stock (s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT, s_dist_01 CHAR(24), s_ytd INT, s_order_cnt INT, s_remote_cnt INT, s_data VARCHAR(50), PRIMARY KEY(s_w_id, s_i_id))",
        "CREATE TABLE IF NOT EXISTS item (i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5, 2), i_data VARCHAR(50), PRIMARY KEY(i_id))",
    ] {
        ok(&mut s, ddl);
    }
    ok(
        &mut s,
        "INSERT INTO warehouse VALUES (1, 'w1', 's1', 's2', 'c', 'st', '123456789', 0.1000, 300000.00)",
    );
    ok(
        &mut s,
        "INSERT INTO district VALUES (1, 1, 'd1', 's1', 's2', 'c', 'st', '123456789', 0.0500, 30000.00, 3001)",
    );
    ok(
        &mut s,
        "INSERT INTO customer VALUES (7, 1, 1, 'ada', 'OE', 'BARBARBAR', 'GC', 50000.00, 0.1000, -10.00, 10.00, 1, 0, 'data'), (8, 1, 1, 'bob', 'OE', 'BARBARBAR', 'BC', 50000.00, 0.2000, -10.00, 10.00, 1, 0, 'data')",
    );
    ok(
        &mut s,
        "INSERT INTO item VALUES (1, 1, 'one', 1.00, 'x'), (2, 2, 'two', 2.00, 'ORIGINAL y')",
    );
    ok(
        &mut s,
        "INSERT INTO stock VALUES (1, 1, 50, 'dist', 0, 0, 0, 'd'), (2, 1, 5, 'dist', 0, 0, 0, 'd')",
    );
    ok(
        &mut s,
        "INSERT INTO orders VALUES (3000, 1, 1, 7, '2026-11-21 00:00:00', NULL, 2, 1)",
    );
    ok(&mut s, "INSERT INTO new_order VALUES (3000, 1, 1)");
    ok(
        &mut s,
        "INSERT INTO order_line VALUES (3000, 1, 1, 1, 1, 1, NULL, 5, 5.00, 'info'), (3000, 1, 1, 2, 2, 1, NULL, 5, 10.00, 'info')",
    );

    // NewOrder.
    ok(&mut s, "BEGIN");
    assert_eq!(
        rows(
            &mut s,
            "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = 1 AND c_w_id = w_id AND c_d_id = 1 AND c_id = 7"
        ),
        [["0.1000", "BARBARBAR", "GC", "0.1000"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT d_next_o_id, d_tax FROM district WHERE d_id = 1 AND d_w_id = 1 FOR UPDATE"
        ),
        [["3001", "0.0500"]]
    );
    ok(
        &mut s,
        "UPDATE district SET d_next_o_id = 3001 + 1 WHERE d_id = 1 AND d_w_id = 1",
    );
    ok(
        &mut s,
        "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (3001, 1, 1, 7, '2026-11-21 01:00:00', 2, 1)",
    );
    ok(
        &mut s,
        "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (3001, 1, 1)",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT i_price, i_name, i_data, i_id FROM item WHERE i_id IN (1, 2)"
        )
        .len(),
        2
    );
    assert_eq!(rows(&mut s, "SELECT s_quantity, s_data, s_i_id, s_dist_01 FROM stock WHERE (s_w_id, s_i_id) IN ((1, 1), (1, 2)) FOR UPDATE").len(), 2);
    ok(
        &mut s,
        "UPDATE stock SET s_quantity = 45, s_ytd = s_ytd + 5, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + 0 WHERE s_i_id = 1 AND s_w_id = 1",
    );
    ok(
        &mut s,
        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (3001, 1, 1, 1, 1, 1, 5, 5.00, 'dist'), (3001, 1, 1, 2, 2, 1, 5, 10.00, 'dist')",
    );
    ok(&mut s, "COMMIT");
    // Payment (by last name).
    ok(&mut s, "BEGIN");
    ok(
        &mut s,
        "UPDATE warehouse SET w_ytd = w_ytd + 10.00 WHERE w_id = 1",
    );
    ok(
        &mut s,
        "UPDATE district SET d_ytd = d_ytd + 10.00 WHERE d_w_id = 1 AND d_id = 1",
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT count(c_id) namecnt FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_last = 'BARBARBAR'"
        ),
        "2"
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_last = 'BARBARBAR' ORDER BY c_first"
        ),
        [["7"], ["8"]]
    );
    ok(
        &mut s,
        "UPDATE customer SET c_balance = c_balance - 10.00, c_ytd_payment = c_ytd_payment + 10.00, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 7",
    );
    ok(
        &mut s,
        "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (1, 1, 7, 1, 1, '2026-11-21 02:00:00', 10.00, 'w1    d1')",
    );
    ok(&mut s, "COMMIT");
    // OrderStatus.
    assert_eq!(
        rows(
            &mut s,
            "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_c_id = 7 ORDER BY o_id DESC LIMIT 1"
        ),
        [["3001", "NULL", "2026-11-21 01:00:00"]]
    );
    assert_eq!(rows(&mut s, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = 3001").len(), 2);
    // Delivery.
    ok(&mut s, "BEGIN");
    assert_eq!(
        one(
            &mut s,
            "SELECT no_o_id FROM new_order WHERE no_w_id = 1 AND no_d_id = 1 ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE"
        ),
        "3000"
    );
    assert_eq!(
        ok(
            &mut s,
            "DELETE FROM new_order WHERE (no_w_id, no_d_id, no_o_id) IN ((1, 1, 3000))"
        ),
        1
    );
    assert_eq!(
        ok(
            &mut s,
            "UPDATE orders SET o_carrier_id = 3 WHERE (o_w_id, o_d_id, o_id) IN ((1, 1, 3000))"
        ),
        1
    );
    assert_eq!(
        ok(
            &mut s,
            "UPDATE order_line SET ol_delivery_d = '2026-11-21 03:00:00' WHERE (ol_w_id, ol_d_id, ol_o_id) IN ((1, 1, 3000))"
        ),
        2
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT o_d_id, o_c_id, SUM(ol_amount) FROM orders, order_line WHERE o_id = ol_o_id AND o_d_id = ol_d_id AND o_w_id = ol_w_id AND (o_w_id, o_d_id, o_id) IN ((1, 1, 3000)) GROUP BY o_d_id, o_c_id"
        ),
        [["1", "7", "15.00"]]
    );
    ok(
        &mut s,
        "UPDATE customer SET c_balance = c_balance + 15.00, c_delivery_cnt = c_delivery_cnt + 1 WHERE (c_w_id, c_d_id, c_id) IN ((1, 1, 7))",
    );
    ok(&mut s, "COMMIT");
    // StockLevel, in go-tpc's form and in BenchmarkSQL's join.
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(DISTINCT (s_i_id)) stock_count FROM order_line, stock WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id < 3002 AND ol_o_id >= 3002 - 20 AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < 10"
        ),
        "1"
    );
    assert_eq!(rows(&mut s, "SELECT ol_i_id FROM district JOIN order_line ON ol_w_id = d_w_id AND ol_d_id = d_id AND ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id WHERE d_w_id = 1 AND d_id = 1").len(), 4);
}

/// Two sessions on one engine whose lock waits time out after 200 ms.
fn two_sessions() -> (Session, Session) {
    let config = EngineConfig {
        lock_wait_timeout: std::time::Duration::from_millis(200),
        ..EngineConfig::default()
    };
    let engine = Arc::new(Engine::open(config).unwrap());
    let shared = Shared::new(engine, SessionConfig::default());
    let a = Session::connect(Arc::clone(&shared), "root", Some("waterline")).unwrap();
    let b = Session::connect(shared, "root", Some("waterline")).unwrap();
    (a, b)
}

#[test]
fn a_limit_in_index_order_stops_the_read_and_its_locks() {
    let (mut a, mut b) = two_sessions();
    ok(
        &mut a,
        "CREATE TABLE new_order (w INT, o INT, v INT, PRIMARY KEY (w, o))",
    );
    ok(
        &mut a,
        "INSERT INTO new_order VALUES (1, 1, 0), (1, 2, 0), (1, 3, 5), (1, 4, 5), (2, 1, 0)",
    );
    // Delivery's oldest-order query locks the row it returns and no other.
    ok(&mut a, "BEGIN");
    assert_eq!(
        rows(
            &mut a,
            "SELECT o FROM new_order WHERE w = 1 ORDER BY o LIMIT 1 FOR UPDATE"
        ),
        [["1"]]
    );
    assert_eq!(
        ok(&mut b, "UPDATE new_order SET v = 1 WHERE w = 1 AND o = 2"),
        1
    );
    assert_eq!(
        err(&mut b, "UPDATE new_order SET v = 1 WHERE w = 1 AND o = 1").code,
        1205
    );
    ok(&mut a, "COMMIT");
    // Conditions the index does not check drop rows after the limited read: the answer is
    // still the unlimited one, cut.
    assert_eq!(
        rows(
            &mut a,
            "SELECT o FROM new_order WHERE w = 1 AND v = 5 ORDER BY o LIMIT 1"
        ),
        [["3"]]
    );
    assert_eq!(
        rows(
            &mut a,
            "SELECT o FROM new_order WHERE w = 1 ORDER BY o LIMIT 2 OFFSET 1"
        ),
        [["2"], ["3"]]
    );
    // Not in index order: every row is read and sorted first.
    assert_eq!(
        rows(&mut a, "SELECT o FROM new_order ORDER BY v DESC, o LIMIT 1"),
        [["3"]]
    );
    assert_eq!(
        rows(&mut a, "SELECT COUNT(*) FROM new_order LIMIT 1"),
        [["5"]]
    );
}

#[test]
fn a_limit_in_secondary_index_order_reads_that_index() {
    let (mut a, mut b) = two_sessions();
    // A job queue taken oldest first: the newest ids were created first.
    ok(
        &mut a,
        "CREATE TABLE job (id INT, created INT, state INT, PRIMARY KEY (id), KEY by_created (created))",
    );
    let values: Vec<String> = (1..=50)
        .map(|id| format!("({id}, {}, {})", 100 - id, id % 2))
        .collect();
    ok(
        &mut a,
        &format!("INSERT INTO job VALUES {}", values.join(", ")),
    );
    // The job's state is not in the index: each entry taken is looked up.
    let oldest = "SELECT id, state FROM job ORDER BY created LIMIT 1 FOR UPDATE SKIP LOCKED";
    let plan = rows(&mut a, &format!("EXPLAIN {oldest}")).remove(0);
    assert_eq!(
        (plan[3].as_str(), plan[5].as_str()),
        ("index", "by_created")
    );
    // Each consumer locks the entry it takes and no other, so the second takes the next
    // one. Scanning the table to sort it, the first locked all fifty and the second found
    // none.
    ok(&mut a, "BEGIN");
    assert_eq!(rows(&mut a, oldest), [["50", "0"]]);
    ok(&mut b, "BEGIN");
    assert_eq!(rows(&mut b, oldest), [["49", "1"]]);
    assert_eq!(ok(&mut b, "UPDATE job SET state = 2 WHERE id = 1"), 1);
    assert_eq!(
        err(&mut b, "UPDATE job SET state = 2 WHERE id = 50").code,
        1205
    );
    ok(&mut b, "ROLLBACK");
    ok(&mut a, "COMMIT");
    // The answers are the scan-and-sort ones: with a filter the index does not check,
    // with OFFSET, backwards (which still sorts), and with an aggregate.
    assert_eq!(
        rows(
            &mut a,
            "SELECT id, state FROM job WHERE state = 0 ORDER BY created LIMIT 3"
        ),
        [["50", "0"], ["48", "0"], ["46", "0"]]
    );
    assert_eq!(
        rows(
            &mut a,
            "SELECT id, state FROM job ORDER BY created LIMIT 2 OFFSET 3"
        ),
        [["47", "1"], ["46", "0"]]
    );
    assert_eq!(
        rows(
            &mut a,
            "SELECT id, state FROM job ORDER BY created DESC LIMIT 1"
        ),
        [["1", "1"]]
    );
    assert_eq!(
        rows(
            &mut a,
            "SELECT MIN(state) FROM job ORDER BY created LIMIT 1"
        ),
        [["0"]]
    );
}

#[test]
fn a_prepared_statement_is_bound_once_and_again_after_ddl() {
    let mut s = session();
    setup(&mut s);
    let (select, _, _) = s
        .prepare("SELECT i_name, i_price FROM item WHERE i_id = ?")
        .unwrap();
    let (update, _, _) = s
        .prepare("UPDATE item SET i_price = i_price + ? WHERE i_id = ?")
        .unwrap();
    let (insert, _, _) = s
        .prepare("INSERT INTO item (i_id, i_name) VALUES (?, ?)")
        .unwrap();
    let (delete, _, _) = s.prepare("DELETE FROM item WHERE i_id = ?").unwrap();
    // Executed again and again with other values, through the kept binding.
    for i in [3, 5, 3] {
        assert_eq!(
            prepared_rows(&mut s, select, &[Value::Int(i)]),
            vec![vec![format!("item-{i}"), format!("{i}.{i:02}")]]
        );
    }
    s.execute_prepared(update, &[Value::Int(10), Value::Int(5)])
        .unwrap();
    s.execute_prepared(insert, &[Value::Int(99), Value::from("new")])
        .unwrap();
    assert_eq!(
        one(&mut s, "SELECT i_price FROM item WHERE i_id = 5"),
        "15.05"
    );
    assert_eq!(
        one(&mut s, "SELECT i_name FROM item WHERE i_id = 99"),
        "new"
    );
    s.execute_prepared(delete, &[Value::Int(99)]).unwrap();
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM item"), "20");

    // The table again, its columns in another order: every statement binds anew.
    ok(&mut s, "DROP TABLE item");
    let e = s.execute_prepared(select, &[Value::Int(3)]).unwrap_err();
    assert_eq!(e.code, 1146, "{e}");
    ok(
        &mut s,
        "CREATE TABLE item (i_price DECIMAL(5,2), i_name VARCHAR(24), i_id INT NOT NULL, PRIMARY KEY (i_id))",
    );
    s.execute_prepared(insert, &[Value::Int(7), Value::from("seven")])
        .unwrap();
    // NULL + 2 is NULL: the row matches and does not change.
    assert!(matches!(
        s.execute_prepared(update, &[Value::Int(2), Value::Int(7)]),
        Ok(Response::Done { affected: 0, .. })
    ));
    assert_eq!(
        prepared_rows(&mut s, select, &[Value::Int(7)]),
        vec![vec!["seven".to_owned(), "NULL".to_owned()]]
    );
    ok(&mut s, "UPDATE item SET i_price = 1 WHERE i_id = 7");
    s.execute_prepared(update, &[Value::Int(2), Value::Int(7)])
        .unwrap();
    assert_eq!(
        prepared_rows(&mut s, select, &[Value::Int(7)]),
        vec![vec!["seven".to_owned(), "3.00".to_owned()]]
    );
    s.execute_prepared(delete, &[Value::Int(7)]).unwrap();
    assert!(prepared_rows(&mut s, select, &[Value::Int(7)]).is_empty());

    // A session value is read at every execution, not kept from the first.
    let (autocommit, _, _) = s.prepare("SELECT @@autocommit").unwrap();
    assert_eq!(prepared_rows(&mut s, autocommit, &[]), vec![vec!["1"]]);
    ok(&mut s, "SET autocommit = 0");
    assert_eq!(prepared_rows(&mut s, autocommit, &[]), vec![vec!["0"]]);
}
