//! Foreign keys as InnoDB enforces them, beyond what the differential corpus compares with
//! MariaDB: the locks a check takes (a child's insert holds its parent shared, a parent's
//! delete waits for a child being inserted), cascades' depth limit, `foreign_key_checks`,
//! and a table's foreign keys, DEFAULTs and AUTO_INCREMENT column kept across a restart of
//! a durable engine, by the log and by a checkpoint.

mod common;

use common::{err, ok, one, rows, session_of, shared};

/// A child's insert locks its parent row shared until it commits: a delete of the parent
/// waits for it (and times out here), and so does an insert of a child of a parent another
/// transaction deleted but has not committed.
#[test]
fn checks_lock_what_they_read() {
    let shared = shared();
    let (mut a, mut b) = (session_of(&shared), session_of(&shared));
    ok(&mut a, "CREATE TABLE p (id INT PRIMARY KEY)");
    ok(
        &mut a,
        "CREATE TABLE c (id INT PRIMARY KEY, p_id INT, FOREIGN KEY (p_id) REFERENCES p (id))",
    );
    ok(&mut a, "INSERT INTO p VALUES (1), (2)");
    ok(&mut b, "SET innodb_lock_wait_timeout = 1");
    ok(&mut a, "BEGIN");
    ok(&mut a, "INSERT INTO c VALUES (1, 1)");
    // The parent row is held shared: B may read it, lock it shared, not delete it.
    assert_eq!(one(&mut b, "SELECT id FROM p WHERE id = 1 FOR SHARE"), "1");
    assert_eq!(err(&mut b, "DELETE FROM p WHERE id = 1").code, 1205);
    ok(&mut a, "COMMIT");
    assert_eq!(err(&mut b, "DELETE FROM p WHERE id = 1").code, 1451);
    // A parent deleted and not committed: a child's check waits for it.
    ok(&mut a, "BEGIN");
    ok(&mut a, "DELETE FROM p WHERE id = 2");
    assert_eq!(err(&mut b, "INSERT INTO c VALUES (2, 2)").code, 1205);
    ok(&mut a, "ROLLBACK");
    ok(&mut b, "INSERT INTO c VALUES (2, 2)");
    assert_eq!(
        rows(&mut b, "SELECT id, p_id FROM c"),
        [["1", "1"], ["2", "2"]]
    );
}

/// ON DELETE CASCADE through a chain of tables: 15 cascades deep works, 16 fails with 3008
/// and undoes the whole statement.
#[test]
fn cascades_stop_at_fifteen() {
    let shared = shared();
    let mut s = session_of(&shared);
    ok(&mut s, "CREATE TABLE t0 (id INT PRIMARY KEY)");
    for i in 1..=16 {
        ok(
            &mut s,
            &format!(
                "CREATE TABLE t{i} (id INT PRIMARY KEY, up INT, \
                 FOREIGN KEY (up) REFERENCES t{} (id) ON DELETE CASCADE)",
                i - 1
            ),
        );
    }
    ok(&mut s, "INSERT INTO t0 VALUES (1), (2)");
    for i in 1..=16 {
        ok(&mut s, &format!("INSERT INTO t{i} VALUES (1, 1)"));
        if i < 16 {
            ok(&mut s, &format!("INSERT INTO t{i} VALUES (2, 2)"));
        }
    }
    // Row 1's chain reaches t16: 16 cascades.
    assert_eq!(err(&mut s, "DELETE FROM t0 WHERE id = 1").code, 3008);
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t15"), "2");
    // Row 2's reaches t15: 15 cascades.
    ok(&mut s, "DELETE FROM t0 WHERE id = 2");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t15"), "1");
    // With checks off, no cascade either (as in MySQL).
    ok(&mut s, "SET foreign_key_checks = 0");
    ok(&mut s, "DELETE FROM t0 WHERE id = 1");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t1"), "1");
    assert_eq!(one(&mut s, "SELECT @@foreign_key_checks"), "0");
}

/// What CREATE TABLE and ALTER TABLE declared beyond the engine's schema (DEFAULTs, the
/// AUTO_INCREMENT column, foreign keys) comes back after a restart, from the log and from a
/// checkpoint's image.
#[test]
fn definitions_survive_a_restart() {
    common::across_restarts(
        |s| {
            ok(s, "CREATE TABLE p (id INT PRIMARY KEY)");
            ok(
                s,
                "CREATE TABLE c (id INT AUTO_INCREMENT PRIMARY KEY, p_id INT, \
                 note VARCHAR(10) NOT NULL DEFAULT 'none', n DECIMAL(5,2) DEFAULT 1.50)",
            );
            ok(
                s,
                "ALTER TABLE c ADD CONSTRAINT c_p FOREIGN KEY (p_id) REFERENCES p (id) \
                 ON DELETE CASCADE",
            );
            ok(s, "INSERT INTO p VALUES (1), (2)");
            ok(s, "INSERT INTO c (p_id) VALUES (1), (2)");
            rows(s, "SHOW CREATE TABLE c")
        },
        |s, before| {
            assert_eq!(rows(s, "SHOW CREATE TABLE c"), before);
            ok(s, "INSERT INTO c (p_id) VALUES (2)");
            assert_eq!(
                rows(s, "SELECT id, p_id, note, n FROM c ORDER BY id"),
                [
                    ["1", "1", "none", "1.50"],
                    ["2", "2", "none", "1.50"],
                    ["3", "2", "none", "1.50"]
                ]
            );
            assert_eq!(err(s, "INSERT INTO c (p_id) VALUES (3)").code, 1452);
            ok(s, "DELETE FROM p WHERE id = 2");
            assert_eq!(one(s, "SELECT COUNT(*) FROM c"), "1");
            assert_eq!(err(s, "DROP TABLE p").code, 3730);
        },
    );
}
