//! READ COMMITTED's locking as InnoDB's: a statement keeps the locks of the rows it selects
//! alone, and an UPDATE that scans the clustered index reads semi-consistently, passing
//! over the rows others hold that it would not change. The first test is MySQL's own
//! `innodb-semi-consistent` test, step for step; the second the manual's example (MySQL 8.0
//! manual 17.7.2.1, "READ COMMITTED").
//!
//! Every session gives up on a lock after a second, so a wait shows as error 1205 and the
//! sessions can take turns on one thread.

mod common;

use std::sync::Arc;

use common::{err, ok, rows, session_of};
use waterline_sql::{Session, Shared};

fn impatient(shared: &Arc<Shared>, isolation: &str) -> Session {
    let mut s = session_of(shared);
    ok(&mut s, "SET SESSION innodb_lock_wait_timeout = 1");
    ok(
        &mut s,
        &format!("SET SESSION TRANSACTION ISOLATION LEVEL {isolation}"),
    );
    ok(&mut s, "SET autocommit = 0");
    s
}

fn waits(s: &mut Session, sql: &str) {
    assert_eq!(err(s, sql).code, 1205, "{sql} must wait");
}

/// The record locks performance_schema shows, as `mode data` (READ COMMITTED takes no gap
/// locks, so there is no supremum among them).
fn record_locks(shared: &Arc<Shared>) -> Vec<String> {
    let mut c = session_of(shared);
    let mut locks: Vec<String> = rows(
        &mut c,
        "SELECT LOCK_MODE, LOCK_DATA FROM performance_schema.data_locks \
         WHERE LOCK_TYPE = 'RECORD'",
    )
    .into_iter()
    .map(|r| r.join(" "))
    .collect();
    locks.sort();
    locks
}

#[test]
fn mysql_innodb_semi_consistent_test() {
    let shared = common::shared();
    let mut a = impatient(&shared, "REPEATABLE READ");
    let mut b = impatient(&shared, "REPEATABLE READ");
    ok(&mut a, "CREATE TABLE t1 (a INT NOT NULL)");
    ok(
        &mut a,
        "INSERT INTO t1 VALUES (1), (2), (3), (4), (5), (6), (7)",
    );
    ok(&mut a, "COMMIT");
    // A full scan under REPEATABLE READ locks the whole table.
    assert_eq!(
        rows(&mut a, "SELECT * FROM t1 WHERE a = 3 LOCK IN SHARE MODE"),
        [["3"]]
    );
    waits(&mut b, "UPDATE t1 SET a = 10 WHERE a = 5");
    ok(&mut b, "COMMIT");
    ok(&mut a, "COMMIT");

    // A semi-consistent read, which keeps the lock of the row it changes alone.
    ok(
        &mut b,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    );
    assert_eq!(ok(&mut b, "UPDATE t1 SET a = 10 WHERE a = 5"), 1);
    assert_eq!(record_locks(&shared), ["X,REC_NOT_GAP 5"]);
    // a's scan locks (1) to (4), then meets b's row; the statement goes, its locks stay.
    waits(&mut a, "SELECT * FROM t1 WHERE a = 2 FOR UPDATE");
    // This one stops at the first row it selects: it holds (1) and (2).
    assert_eq!(
        rows(&mut a, "SELECT * FROM t1 WHERE a = 2 LIMIT 1 FOR UPDATE"),
        [["2"]]
    );
    // The semi-consistent read passes over a's rows, whose committed values do not match.
    assert_eq!(ok(&mut b, "UPDATE t1 SET a = 11 WHERE a = 6"), 1);
    // Those that match it waits for.
    waits(&mut b, "UPDATE t1 SET a = 12 WHERE a = 2");
    waits(&mut b, "UPDATE t1 SET a = 13 WHERE a = 1");
    ok(&mut a, "COMMIT");
    assert_eq!(ok(&mut b, "UPDATE t1 SET a = 14 WHERE a = 1"), 1);
    ok(&mut b, "COMMIT");
    assert_eq!(
        rows(&mut a, "SELECT a FROM t1 ORDER BY a"),
        [["2"], ["3"], ["4"], ["7"], ["10"], ["11"], ["14"]]
    );
}

/// The manual's example: session A changes the rows where b = 3, session B those where
/// b = 2, in a table without an index.
fn manual_example(isolation: &str) -> (Arc<Shared>, Session, Session) {
    let shared = common::shared();
    let mut a = impatient(&shared, isolation);
    let b = impatient(&shared, isolation);
    ok(&mut a, "CREATE TABLE t (a INT NOT NULL, b INT)");
    ok(
        &mut a,
        "INSERT INTO t VALUES (1, 2), (2, 3), (3, 2), (4, 3), (5, 2)",
    );
    ok(&mut a, "COMMIT");
    assert_eq!(ok(&mut a, "UPDATE t SET b = 5 WHERE b = 3"), 2);
    (shared, a, b)
}

#[test]
fn under_read_committed_updates_of_other_rows_do_not_wait() {
    let (shared, mut a, mut b) = manual_example("READ COMMITTED");
    // A keeps the two rows it changed; B's scan passes over them (their committed b is 3).
    assert_eq!(
        record_locks(&shared),
        ["X,REC_NOT_GAP 2", "X,REC_NOT_GAP 4"]
    );
    assert_eq!(ok(&mut b, "UPDATE t SET b = 4 WHERE b = 2"), 3);
    ok(&mut a, "COMMIT");
    ok(&mut b, "COMMIT");
    assert_eq!(
        rows(&mut a, "SELECT a, b FROM t ORDER BY a"),
        [["1", "4"], ["2", "5"], ["3", "4"], ["4", "5"], ["5", "4"]]
    );
}

#[test]
fn under_repeatable_read_the_same_update_waits() {
    let (_shared, _a, mut b) = manual_example("REPEATABLE READ");
    waits(&mut b, "UPDATE t SET b = 4 WHERE b = 2");
}

/// Rows 1 to 5, with v = id, under a primary key.
fn keyed(shared: &Arc<Shared>) {
    let mut s = session_of(shared);
    ok(&mut s, "CREATE TABLE t2 (id INT PRIMARY KEY, v INT)");
    ok(
        &mut s,
        "INSERT INTO t2 VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)",
    );
}

#[test]
fn a_locking_read_under_read_committed_keeps_the_rows_it_selects() {
    for (isolation, unlocked) in [("READ COMMITTED", true), ("REPEATABLE READ", false)] {
        let shared = common::shared();
        keyed(&shared);
        let mut a = impatient(&shared, isolation);
        let mut b = impatient(&shared, isolation);
        assert_eq!(
            rows(&mut a, "SELECT id FROM t2 WHERE v = 3 FOR UPDATE"),
            [["3"]]
        );
        waits(&mut b, "SELECT id FROM t2 WHERE id = 3 FOR UPDATE");
        let other = "SELECT id FROM t2 WHERE id = 4 FOR UPDATE";
        if unlocked {
            assert_eq!(rows(&mut b, other), [["4"]], "{isolation}");
        } else {
            waits(&mut b, other);
        }
    }
}

#[test]
fn a_delete_under_read_committed_waits_for_rows_it_would_not_delete() {
    let shared = common::shared();
    keyed(&shared);
    let mut a = impatient(&shared, "READ COMMITTED");
    let mut b = impatient(&shared, "READ COMMITTED");
    ok(&mut a, "UPDATE t2 SET v = 10 WHERE id = 1");
    // MySQL reads semi-consistently for an UPDATE only: B's DELETE waits at row 1 ...
    waits(&mut b, "DELETE FROM t2 WHERE v = 5");
    // ... where its UPDATE passes over it.
    assert_eq!(ok(&mut b, "UPDATE t2 SET v = 50 WHERE v = 5"), 1);
    ok(&mut b, "COMMIT");
    // Once it has its rows, a DELETE keeps those it deletes alone.
    waits(&mut b, "DELETE FROM t2 WHERE v = 2");
    ok(&mut a, "COMMIT");
    assert_eq!(ok(&mut b, "DELETE FROM t2 WHERE v = 2"), 1);
    assert_eq!(record_locks(&shared), ["X,REC_NOT_GAP 2"]);
    ok(&mut a, "UPDATE t2 SET v = 30 WHERE id = 3");
    ok(&mut a, "COMMIT");
    ok(&mut b, "COMMIT");
}
