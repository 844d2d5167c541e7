//! Isolation as InnoDB's: SERIALIZABLE (plain SELECTs in a transaction read FOR SHARE, so
//! write skew ends in a deadlock), READ UNCOMMITTED refused, and a lock-wait timeout that
//! rolls back the statement only (or, with `rollback_on_timeout`, the transaction), and a
//! consistent snapshot taken at START TRANSACTION.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{err, ok, one, rows, session_of};
use waterline_sql::{Session, SessionConfig, Shared};
use waterline_txn::{Engine, EngineConfig};

fn shared(rollback_on_timeout: bool) -> Arc<Shared> {
    let config = EngineConfig {
        lock_wait_timeout: Duration::from_secs(20),
        ..EngineConfig::default()
    };
    let engine = Arc::new(Engine::open(config).unwrap());
    Shared::new(
        engine,
        SessionConfig {
            rollback_on_timeout,
            ..SessionConfig::default()
        },
    )
}

/// Two doctors on call; each transaction checks that two are, then takes one off.
fn doctors(shared: &Arc<Shared>) -> (Session, Session) {
    let mut setup = session_of(shared);
    ok(
        &mut setup,
        "CREATE TABLE doctors (id INT PRIMARY KEY, oncall INT)",
    );
    ok(&mut setup, "INSERT INTO doctors VALUES (1, 1), (2, 1)");
    (session_of(shared), session_of(shared))
}

#[test]
fn serializable_turns_write_skew_into_a_deadlock() {
    let shared = shared(false);
    let (mut a, mut b) = doctors(&shared);
    for s in [&mut a, &mut b] {
        ok(s, "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE");
        assert_eq!(one(s, "SELECT @@transaction_isolation"), "SERIALIZABLE");
        ok(s, "BEGIN");
        assert_eq!(one(s, "SELECT COUNT(*) FROM doctors WHERE oncall = 1"), "2");
    }
    // a waits for b's shared lock on row 1; b's update of row 2 closes the cycle.
    let first = std::thread::spawn(move || {
        let updated = a
            .execute("UPDATE doctors SET oncall = 0 WHERE id = 1")
            .map(drop);
        (a, updated)
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        err(&mut b, "UPDATE doctors SET oncall = 0 WHERE id = 2").code,
        1213
    );
    let (mut a, updated) = first.join().unwrap();
    updated.unwrap();
    ok(&mut a, "COMMIT");
    let mut c = session_of(&shared);
    assert_eq!(
        rows(&mut c, "SELECT id, oncall FROM doctors ORDER BY id"),
        [["1", "0"], ["2", "1"]],
        "one doctor stays on call"
    );
}

#[test]
fn repeatable_read_lets_write_skew_commit_and_autocommit_reads_stay_consistent() {
    let shared = shared(false);
    let (mut a, mut b) = doctors(&shared);
    for s in [&mut a, &mut b] {
        ok(s, "BEGIN");
        assert_eq!(one(s, "SELECT COUNT(*) FROM doctors WHERE oncall = 1"), "2");
    }
    ok(&mut a, "UPDATE doctors SET oncall = 0 WHERE id = 1");
    ok(&mut b, "UPDATE doctors SET oncall = 0 WHERE id = 2");
    ok(&mut a, "COMMIT");
    ok(&mut b, "COMMIT");
    let mut c = session_of(&shared);
    assert_eq!(
        one(&mut c, "SELECT SUM(oncall) FROM doctors"),
        "0",
        "InnoDB's too"
    );

    // Under SERIALIZABLE an autocommit SELECT is its own transaction: a consistent read
    // that does not wait for a row another transaction holds.
    ok(&mut a, "BEGIN");
    ok(&mut a, "UPDATE doctors SET oncall = 1 WHERE id = 1");
    ok(
        &mut c,
        "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    );
    ok(&mut c, "SET SESSION innodb_lock_wait_timeout = 1");
    assert_eq!(one(&mut c, "SELECT oncall FROM doctors WHERE id = 1"), "0");
    // With autocommit off, the same SELECT reads FOR SHARE, and waits.
    ok(&mut c, "SET autocommit = 0");
    assert_eq!(
        err(&mut c, "SELECT oncall FROM doctors WHERE id = 1").code,
        1205
    );
    ok(&mut a, "ROLLBACK");
}

#[test]
fn read_uncommitted_is_refused_not_run_as_another_level() {
    let shared = shared(false);
    let mut s = session_of(&shared);
    for sql in [
        "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
        "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
        "SET SESSION transaction_isolation = 'READ-UNCOMMITTED'",
    ] {
        assert_eq!(err(&mut s, sql).code, 1235, "{sql}");
    }
    assert_eq!(
        one(&mut s, "SELECT @@transaction_isolation"),
        "REPEATABLE-READ"
    );
}

/// Session `b` holds row 2, then times out waiting for row 1 (held by `a`).
fn time_out(shared: &Arc<Shared>) -> (Session, Session) {
    let mut a = session_of(shared);
    ok(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    ok(&mut a, "INSERT INTO t VALUES (1, 0), (2, 0)");
    ok(&mut a, "BEGIN");
    ok(&mut a, "UPDATE t SET v = 1 WHERE id = 1");
    let mut b = session_of(shared);
    ok(&mut b, "SET SESSION innodb_lock_wait_timeout = 1");
    ok(&mut b, "BEGIN");
    ok(&mut b, "UPDATE t SET v = 2 WHERE id = 2");
    assert_eq!(err(&mut b, "UPDATE t SET v = 2 WHERE id = 1").code, 1205);
    (a, b)
}

#[test]
fn a_lock_wait_timeout_rolls_back_the_statement_only() {
    let shared = shared(false);
    let (mut a, mut b) = time_out(&shared);
    assert_eq!(one(&mut b, "SELECT @@innodb_rollback_on_timeout"), "0");
    assert!(b.in_transaction(), "the transaction goes on");
    assert_eq!(one(&mut b, "SELECT v FROM t WHERE id = 2"), "2");
    ok(&mut b, "COMMIT");
    ok(&mut a, "COMMIT");
    assert_eq!(
        rows(&mut a, "SELECT id, v FROM t ORDER BY id"),
        [["1", "1"], ["2", "2"]]
    );
}

#[test]
fn with_rollback_on_timeout_the_whole_transaction_goes() {
    let shared = shared(true);
    let (mut a, mut b) = time_out(&shared);
    assert_eq!(one(&mut b, "SELECT @@innodb_rollback_on_timeout"), "1");
    assert!(!b.in_transaction());
    ok(&mut a, "COMMIT");
    assert_eq!(
        rows(&mut b, "SELECT id, v FROM t ORDER BY id"),
        [["1", "1"], ["2", "0"]]
    );
}

/// `START TRANSACTION WITH CONSISTENT SNAPSHOT` (as mysqldump --single-transaction sends it,
/// in a versioned comment) opens the read view at once: a row committed after it, before
/// the transaction's first read, stays unseen; a plain START TRANSACTION sees it.
#[test]
fn consistent_snapshot_opens_the_view_at_start() {
    let shared = shared(false);
    let mut a = session_of(&shared);
    let mut b = session_of(&shared);
    ok(&mut a, "CREATE TABLE snap (id INT PRIMARY KEY)");
    ok(&mut a, "INSERT INTO snap VALUES (1)");
    // Each start, the row another session commits before the first read, and what that
    // read counts.
    let starts = [
        (
            "START TRANSACTION /*!40100 WITH CONSISTENT SNAPSHOT */",
            2,
            "1",
        ),
        ("START TRANSACTION", 3, "3"),
        (
            "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
            4,
            "3",
        ),
    ];
    for (start, id, seen) in starts {
        ok(&mut a, start);
        ok(&mut b, &format!("INSERT INTO snap VALUES ({id})"));
        assert_eq!(
            rows(&mut a, "SELECT COUNT(*) FROM snap"),
            [[seen]],
            "{start}"
        );
        ok(&mut a, "COMMIT");
    }
}
