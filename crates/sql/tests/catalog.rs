//! What tools that read and copy a database rely on, through embedded sessions:
//! `information_schema` as tables (joined, in subqueries; INNODB_TRX and SHOW ENGINE INNODB
//! STATUS for lock waits), LOCK TABLES as mysqldump takes it, user variables (mysqldump saves and restores settings in them), `sql_notes`,
//! `ALTER TABLE ... DISABLE KEYS`.

mod common;

use common::{err, ok, one, rows, session, session_of, shared};

#[test]
fn information_schema_is_queried_as_tables() {
    let mut s = session();
    ok(
        &mut s,
        "CREATE TABLE p (id INT PRIMARY KEY, code VARCHAR(8) NOT NULL DEFAULT 'x', UNIQUE KEY u_code (code))",
    );
    ok(
        &mut s,
        "CREATE TABLE c (id INT AUTO_INCREMENT PRIMARY KEY, p_id INT, \
         CONSTRAINT c_p FOREIGN KEY (p_id) REFERENCES p (id) ON DELETE SET NULL)",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT TABLE_NAME, TABLE_TYPE, ENGINE FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME"
        ),
        [["c", "BASE TABLE", "InnoDB"], ["p", "BASE TABLE", "InnoDB"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT COLUMN_NAME, COLUMN_DEFAULT, IS_NULLABLE, COLUMN_TYPE, COLUMN_KEY \
             FROM information_schema.COLUMNS WHERE TABLE_NAME = 'p' ORDER BY ORDINAL_POSITION"
        ),
        [
            ["id", "NULL", "NO", "int", "PRI"],
            ["code", "x", "NO", "varchar(8)", "UNI"]
        ]
    );
    // Two system tables joined, as ORMs read foreign keys.
    assert_eq!(
        rows(
            &mut s,
            "SELECT k.CONSTRAINT_NAME, k.COLUMN_NAME, k.REFERENCED_TABLE_NAME, r.DELETE_RULE \
             FROM information_schema.KEY_COLUMN_USAGE k \
             JOIN information_schema.REFERENTIAL_CONSTRAINTS r \
               ON r.CONSTRAINT_NAME = k.CONSTRAINT_NAME AND r.TABLE_NAME = k.TABLE_NAME \
             WHERE k.TABLE_SCHEMA = 'waterline'"
        ),
        [["c_p", "p_id", "p", "SET NULL"]]
    );
    // In a subquery, and beside a table of the database.
    ok(&mut s, "INSERT INTO p VALUES (1, 'p'), (2, 'c')");
    assert_eq!(
        rows(
            &mut s,
            "SELECT code FROM p WHERE code IN (SELECT TABLE_NAME FROM information_schema.TABLES) \
             ORDER BY code"
        ),
        [["c"], ["p"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE FROM information_schema.STATISTICS \
             WHERE TABLE_NAME = 'c' ORDER BY NON_UNIQUE DESC"
        ),
        [["c_p", "1", "p_id", "1"], ["PRIMARY", "1", "id", "0"]]
    );
    assert_eq!(
        one(&mut s, "SELECT COUNT(*) FROM information_schema.TRIGGERS"),
        "0"
    );
    assert_eq!(
        err(&mut s, "SELECT * FROM information_schema.NO_SUCH_TABLE").code,
        1146
    );
    // The database's name in any case, as MySQL takes it.
    assert_eq!(
        err(&mut s, "SELECT * FROM INFORMATION_SCHEMA.NO_SUCH_TABLE").code,
        1146
    );
    assert_eq!(
        one(&mut s, "SELECT COUNT(*) FROM Performance_Schema.data_locks"),
        "0"
    );
}

/// LOCK TABLES as mysqldump uses it: the holder may use only what it locked, and write
/// only what it locked WRITE; others wait for what the locks keep from them.
#[test]
fn lock_tables_keeps_others_out_until_unlock() {
    let shared = shared();
    let (mut a, mut b) = (session_of(&shared), session_of(&shared));
    ok(&mut a, "CREATE TABLE r (id INT PRIMARY KEY)");
    ok(&mut a, "CREATE TABLE w (id INT PRIMARY KEY)");
    ok(&mut a, "CREATE TABLE other (id INT PRIMARY KEY)");
    ok(&mut b, "SET innodb_lock_wait_timeout = 1");
    ok(&mut a, "LOCK TABLES r READ, w WRITE");
    assert_eq!(err(&mut a, "SELECT * FROM other").code, 1100);
    assert_eq!(err(&mut a, "INSERT INTO r VALUES (1)").code, 1099);
    ok(&mut a, "INSERT INTO w VALUES (1)");
    // Another session reads what is locked READ, not what is locked WRITE, and writes
    // neither.
    assert_eq!(one(&mut b, "SELECT COUNT(*) FROM r"), "0");
    assert_eq!(err(&mut b, "INSERT INTO r VALUES (2)").code, 1205);
    assert_eq!(err(&mut b, "SELECT COUNT(*) FROM w").code, 1205);
    ok(&mut b, "INSERT INTO other VALUES (1)");
    // B waits on its own LOCK TABLES too.
    assert_eq!(err(&mut b, "LOCK TABLES w READ").code, 1205);
    ok(&mut a, "UNLOCK TABLES");
    assert_eq!(one(&mut b, "SELECT COUNT(*) FROM w"), "1");
    // BEGIN gives table locks back too.
    ok(&mut a, "LOCK TABLES w WRITE");
    ok(&mut a, "BEGIN");
    ok(&mut b, "INSERT INTO w VALUES (2)");
    ok(&mut a, "COMMIT");
    // A table locked under an alias is used under it, and one locked without is used
    // without (MySQL's rule), each name with its own mode.
    ok(&mut a, "LOCK TABLES r AS x READ, r WRITE");
    assert_eq!(one(&mut a, "SELECT COUNT(*) FROM r AS x"), "0");
    assert_eq!(
        err(&mut a, "SELECT COUNT(*) FROM r AS y").message,
        "Table 'y' was not locked with LOCK TABLES"
    );
    ok(&mut a, "INSERT INTO r SELECT id + 10 FROM r AS x");
    assert_eq!(err(&mut a, "DELETE x FROM r AS x").code, 1099);
    ok(&mut a, "LOCK TABLES r AS x READ");
    assert_eq!(err(&mut a, "SELECT COUNT(*) FROM r").code, 1100);
    // So does the session's end.
    ok(&mut a, "LOCK TABLES r WRITE");
    drop(a);
    ok(&mut b, "INSERT INTO r VALUES (3)");
    ok(&mut b, "UNLOCK TABLES");
}

/// FLUSH: TABLES ... WITH READ LOCK locks tables READ as LOCK TABLES does (every base
/// table of every database if none is named), until UNLOCK TABLES; what waterline has no
/// cache of is flushed at once; what MySQL's grammar does not have is 1064.
#[test]
fn flush_with_read_lock_keeps_writers_out() {
    let shared = shared();
    let (mut a, mut b) = (session_of(&shared), session_of(&shared));
    ok(&mut a, "CREATE TABLE t (id INT PRIMARY KEY)");
    ok(&mut a, "CREATE DATABASE other");
    ok(&mut a, "CREATE TABLE other.u (id INT PRIMARY KEY)");
    ok(&mut b, "SET innodb_lock_wait_timeout = 1");
    for nothing in [
        "FLUSH TABLES",
        "FLUSH LOCAL TABLES t",
        "FLUSH PRIVILEGES",
        "FLUSH STATUS, HOSTS",
        "FLUSH NO_WRITE_TO_BINLOG BINARY LOGS",
        "flush logs",
    ] {
        ok(&mut a, nothing);
    }
    for wrong in ["FLUSH", "FLUSH NOTHING", "FLUSH STATUS,", "FLUSH TABLES t,"] {
        assert_eq!(err(&mut a, wrong).code, 1064, "{wrong}");
    }
    assert_eq!(err(&mut a, "FLUSH TABLES t FOR EXPORT").code, 1235);
    ok(&mut a, "FLUSH TABLES WITH READ LOCK");
    assert_eq!(one(&mut b, "SELECT COUNT(*) FROM other.u"), "0");
    assert_eq!(err(&mut b, "INSERT INTO t VALUES (1)").code, 1205);
    assert_eq!(err(&mut b, "INSERT INTO other.u VALUES (1)").code, 1205);
    assert_eq!(err(&mut a, "INSERT INTO t VALUES (1)").code, 1099);
    ok(&mut a, "UNLOCK TABLES");
    ok(&mut b, "INSERT INTO other.u VALUES (1)");
    ok(&mut a, "FLUSH TABLES other.u WITH READ LOCK");
    assert_eq!(err(&mut b, "INSERT INTO other.u VALUES (2)").code, 1205);
    ok(&mut b, "INSERT INTO t VALUES (2)");
    ok(&mut a, "UNLOCK TABLES");
}

/// What a dump sets at its start and restores at its end: user variables keep values (NULL
/// until set), `SET x = @saved` reads them, `sql_notes = 0` keeps notes out of the
/// warnings, and ALTER TABLE ... DISABLE KEYS is note 1031.
#[test]
fn dump_settings_are_saved_and_restored() {
    let mut s = session();
    ok(&mut s, "CREATE TABLE t (id INT PRIMARY KEY)");
    assert_eq!(one(&mut s, "SELECT @nothing IS NULL"), "1");
    ok(
        &mut s,
        "SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0",
    );
    ok(&mut s, "SET @OLD_TIME_ZONE=@@TIME_ZONE");
    ok(&mut s, "SET TIME_ZONE='+00:00'");
    assert_eq!(one(&mut s, "SELECT @@foreign_key_checks"), "0");
    assert_eq!(one(&mut s, "SELECT @old_foreign_key_checks"), "1");
    ok(&mut s, "/*!40000 ALTER TABLE `t` DISABLE KEYS */");
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        [[
            "Note",
            "1031",
            "Table storage engine for 't' doesn't have this option"
        ]]
    );
    ok(&mut s, "SET SQL_NOTES = 0");
    ok(&mut s, "ALTER TABLE t ENABLE KEYS");
    assert!(rows(&mut s, "SHOW WARNINGS").is_empty());
    assert_eq!(err(&mut s, "ALTER TABLE nope ENABLE KEYS").code, 1146);
    ok(&mut s, "SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS");
    ok(&mut s, "SET TIME_ZONE=@OLD_TIME_ZONE");
    assert_eq!(one(&mut s, "SELECT @@foreign_key_checks"), "1");
    assert_eq!(one(&mut s, "SELECT @@time_zone"), "SYSTEM");
}

/// Who waits on whom, as a performance engineer asks: `information_schema.INNODB_TRX`
/// and `SHOW ENGINE INNODB STATUS` show a transaction waiting for a row lock, the lock,
/// and the transaction that holds it; SHOW PROCESSLIST shows what each session runs.
#[test]
fn innodb_trx_and_engine_status_show_a_lock_wait() {
    let shared = shared();
    let (mut a, mut b, mut c) = (
        session_of(&shared),
        session_of(&shared),
        session_of(&shared),
    );
    ok(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    ok(&mut a, "INSERT INTO t VALUES (1, 1)");
    ok(&mut a, "BEGIN");
    ok(&mut a, "UPDATE t SET v = 2 WHERE id = 1");
    let waiter = b.connection_id().to_string();
    let blocked = std::thread::spawn(move || {
        ok(&mut b, "UPDATE t SET v = 3 WHERE id = 1");
    });
    let query = format!(
        "SELECT trx_state, trx_query, trx_rows_locked FROM information_schema.INNODB_TRX \
         WHERE trx_mysql_thread_id = {waiter}"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while rows(&mut c, &query)
        .first()
        .is_none_or(|r| r[0] != "LOCK WAIT")
    {
        assert!(std::time::Instant::now() < deadline, "B never waited");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        rows(&mut c, &query),
        [["LOCK WAIT", "UPDATE t SET v = 3 WHERE id = 1", "0"]]
    );
    let holder = one(
        &mut c,
        &format!(
            "SELECT trx_id FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = {}",
            a.connection_id()
        ),
    );
    let report = rows(&mut c, "SHOW ENGINE INNODB STATUS")
        .remove(0)
        .remove(2);
    assert!(
        report.contains("TRX HAS BEEN WAITING FOR THIS LOCK TO BE GRANTED")
            && report.contains(&format!("held by transaction {holder}")),
        "{report}"
    );
    let list = rows(&mut c, "SHOW PROCESSLIST");
    assert!(
        list.iter().any(|r| r[0] == waiter
            && r[4] == "Query"
            && r[7] == "UPDATE t SET v = 3 WHERE id = 1"),
        "{list:?}"
    );
    ok(&mut a, "COMMIT");
    blocked.join().unwrap();
    assert_eq!(one(&mut c, "SELECT v FROM t"), "3");
    assert_eq!(
        one(&mut c, "SELECT COUNT(*) FROM information_schema.INNODB_TRX"),
        "0"
    );
}

/// What a commit's acknowledgement means is read back from the engine, so a comparison with
/// another server can check it is made at equal durability.
#[test]
fn durability_is_read_back_from_the_engine() {
    let mut s = session();
    assert_eq!(
        rows(
            &mut s,
            "SELECT @@innodb_flush_log_at_trx_commit, @@waterline_durability, \
             @@waterline_lock_release"
        ),
        [["0", "in-memory", "n/a"]]
    );
    let dir = tempfile::tempdir().unwrap();
    for (flush, release, expected) in [
        (
            waterline_txn::FlushPolicy::EveryCommit,
            waterline_txn::LockRelease::AfterSync,
            ["1", "fdatasync-per-group", "after-sync"],
        ),
        (
            waterline_txn::FlushPolicy::Os,
            waterline_txn::LockRelease::Early,
            ["2", "os-write", "early"],
        ),
    ] {
        let mut config = waterline_txn::EngineConfig::default();
        config.commit.flush = flush;
        config.commit.lock_release = release;
        let (engine, _) = waterline_txn::Engine::open_dir(dir.path(), config).unwrap();
        let shared = waterline_sql::Shared::new(
            std::sync::Arc::new(engine),
            waterline_sql::SessionConfig::default(),
        );
        let mut s = session_of(&shared);
        assert_eq!(
            rows(
                &mut s,
                "SELECT @@innodb_flush_log_at_trx_commit, @@waterline_durability, \
                 @@waterline_lock_release"
            ),
            [expected]
        );
    }
}

/// INNODB_TRX shows a transaction's access mode as START TRANSACTION gave it.
#[test]
fn innodb_trx_shows_a_read_only_start() {
    let shared = shared();
    let (mut a, mut c) = (session_of(&shared), session_of(&shared));
    ok(&mut a, "START TRANSACTION READ ONLY");
    let query = format!(
        "SELECT trx_is_read_only FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = {}",
        a.connection_id()
    );
    assert_eq!(one(&mut c, &query), "1");
    ok(&mut a, "COMMIT AND CHAIN");
    assert_eq!(one(&mut c, &query), "1");
    ok(&mut a, "START TRANSACTION");
    assert_eq!(one(&mut c, &query), "0");
}
