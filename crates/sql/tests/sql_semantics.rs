//! What MySQL makes of values and sessions, through an embedded session: session values
//! in every position, session variables, integer ranges and strictness, DATETIME's
//! fractions, REPLACE, temporary tables, SLEEP and KILL QUERY.

mod common;

use common::{err, ok, one, prepared_rows, rows, session, session_of, shared};
use std::sync::Arc;
use std::time::{Duration, Instant};

use waterline_sql::Response;

#[test]
fn session_time_functions_work_in_every_position() {
    let mut s = session();
    ok(&mut s, "CREATE TABLE ev (id INT PRIMARY KEY, at DATETIME)");
    ok(
        &mut s,
        "INSERT INTO ev VALUES (1, NOW()), (2, '2000-01-01 00:00:00')",
    );
    // UPDATE's SET and WHERE, DELETE's WHERE, a query's WHERE: each refused before.
    assert_eq!(
        ok(
            &mut s,
            "UPDATE ev SET at = NOW() WHERE at < '2001-01-01' + 0 OR at < NOW()"
        ),
        1
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM ev WHERE at <= CURRENT_TIMESTAMP"),
        [["1"], ["2"]]
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(*) FROM ev WHERE at <= UTC_TIMESTAMP(6)"
        ),
        "2"
    );
    assert_eq!(ok(&mut s, "DELETE FROM ev WHERE at <= NOW(3)"), 2);
    // A prepared statement reads the time at each execution, not once.
    let (id, _, _) = s.prepare("SELECT NOW(6) = NOW(6)").unwrap();
    assert_eq!(prepared_rows(&mut s, id, &[]), [["1"]]);
    assert_eq!(err(&mut s, "SELECT NOW(7)").code, 1426);
    // The session's time zone moves NOW() and not UTC_TIMESTAMP().
    ok(&mut s, "SET time_zone = '+05:00'");
    assert_eq!(one(&mut s, "SELECT NOW() > UTC_TIMESTAMP()"), "1");
    ok(&mut s, "SET time_zone = '-05:00'");
    assert_eq!(one(&mut s, "SELECT NOW() < UTC_TIMESTAMP()"), "1");
    ok(&mut s, "SET time_zone = '+05:00'");
    assert_eq!(one(&mut s, "SELECT @@time_zone"), "+05:00");
    assert_eq!(err(&mut s, "SET time_zone = 'Europe/Paris'").code, 1298);
}

#[test]
fn session_variables_read_back_what_is_in_force() {
    let shared = shared();
    let (mut a, mut b) = (session_of(&shared), session_of(&shared));
    ok(&mut a, "CREATE TABLE lw (id INT PRIMARY KEY, v INT)");
    ok(&mut a, "INSERT INTO lw VALUES (1, 0)");
    assert_eq!(one(&mut a, "SELECT @@innodb_lock_wait_timeout"), "50");
    ok(&mut a, "SET SESSION innodb_lock_wait_timeout = 1");
    assert_eq!(
        one(&mut a, "SELECT @@session.innodb_lock_wait_timeout"),
        "1"
    );
    assert_eq!(
        one(&mut a, "SELECT @@global.innodb_lock_wait_timeout"),
        "50"
    );
    assert_eq!(one(&mut b, "SELECT @@innodb_lock_wait_timeout"), "50");
    // The session's timeout is the one its lock waits get.
    ok(&mut b, "BEGIN");
    ok(&mut b, "UPDATE lw SET v = 1 WHERE id = 1");
    let started = std::time::Instant::now();
    assert_eq!(err(&mut a, "UPDATE lw SET v = 2 WHERE id = 1").code, 1205);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    ok(&mut b, "ROLLBACK");
    ok(&mut a, "SET innodb_lock_wait_timeout = 0");
    assert_eq!(rows(&mut a, "SHOW WARNINGS")[0][1], "1292");
    assert_eq!(one(&mut a, "SELECT @@innodb_lock_wait_timeout"), "1");

    assert_eq!(
        one(&mut a, "SELECT @@sql_mode"),
        "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,\
         ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
    );
    ok(
        &mut a,
        "SET sql_mode = 'no_engine_substitution,traditional'",
    );
    assert_eq!(
        one(&mut a, "SELECT @@sql_mode"),
        "STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,\
         ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
    );
    // A mode that would change how SQL parses is refused, not ignored.
    assert_eq!(err(&mut a, "SET sql_mode = 'ANSI_QUOTES'").code, 1231);
    for (var, off) in [
        ("foreign_key_checks", "0"),
        ("unique_checks", "OFF"),
        ("autocommit", "0"),
    ] {
        ok(&mut a, &format!("SET {var} = {off}"));
        assert_eq!(one(&mut a, &format!("SELECT @@{var}")), "0", "{var}");
        assert_eq!(one(&mut b, &format!("SELECT @@{var}")), "1", "{var}");
    }
    ok(
        &mut a,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    );
    assert_eq!(
        one(&mut a, "SELECT @@transaction_isolation"),
        "READ-COMMITTED"
    );
    assert_eq!(
        one(&mut b, "SELECT @@transaction_isolation"),
        "REPEATABLE-READ"
    );
    // One value for every session is the command line's: SET GLOBAL is refused, not taken
    // as the session's.
    assert_eq!(
        err(&mut a, "SET GLOBAL innodb_lock_wait_timeout = 3").code,
        1235
    );
    assert_eq!(err(&mut a, "SET @@global.autocommit = 1").code, 1235);
    assert_eq!(one(&mut a, "SELECT @@autocommit"), "0");
}

#[test]
fn integer_ranges_strict_and_not() {
    let mut s = session();
    ok(
        &mut s,
        "CREATE TABLE n (id INT PRIMARY KEY, t TINYINT, sm SMALLINT, m MEDIUMINT, \
         tu TINYINT UNSIGNED, u INT UNSIGNED, b BIGINT, d DECIMAL(4,1), v VARCHAR(3))",
    );
    // MySQL 8.0's default sql_mode is strict: each of these is 1264 (or 1406), not stored.
    for (column, value) in [
        ("t", "128"),
        ("t", "-129"),
        ("sm", "70000"),
        ("m", "8388608"),
        ("tu", "256"),
        ("tu", "-1"),
        ("u", "-1"),
        ("u", "4294967296"),
        ("b", "9223372036854775808"),
        ("d", "1000"),
        ("t", "'300'"),
        ("t", "127.5"),
    ] {
        let e = err(
            &mut s,
            &format!("INSERT INTO n (id, {column}) VALUES (1, {value})"),
        );
        assert_eq!(e.code, 1264, "{column} = {value}: {e}");
        assert!(
            e.message.contains(&format!("column '{column}' at row 1")),
            "{e}"
        );
    }
    assert_eq!(
        err(&mut s, "INSERT INTO n (id, v) VALUES (1, 'abcd')").code,
        1406
    );
    ok(
        &mut s,
        "INSERT INTO n VALUES (1, -128, 32767, -8388608, 255, 4294967295, -9223372036854775808, 999.94, 'abc')",
    );
    assert_eq!(
        rows(&mut s, "SELECT t, sm, m, tu, u, b, d, v FROM n"),
        [[
            "-128",
            "32767",
            "-8388608",
            "255",
            "4294967295",
            "-9223372036854775808",
            "999.9",
            "abc"
        ]]
    );
    // A rounded value that lands out of range is out of range; an UPDATE checks as INSERT.
    assert_eq!(err(&mut s, "UPDATE n SET tu = tu + 1").code, 1264);
    assert_eq!(one(&mut s, "SELECT tu FROM n"), "255");
    // Without strictness: clamped, with a warning for each.
    ok(&mut s, "SET sql_mode = ''");
    ok(
        &mut s,
        "INSERT INTO n (id, t, u, d, v) VALUES (2, 300, -5, -1000, 'abcdef')",
    );
    let warnings = rows(&mut s, "SHOW WARNINGS");
    let codes: Vec<&str> = warnings.iter().map(|w| w[1].as_str()).collect();
    assert_eq!(codes, ["1264", "1264", "1264", "1265"]);
    assert_eq!(
        rows(&mut s, "SELECT t, u, d, v FROM n WHERE id = 2"),
        [["127", "0", "-999.9", "abc"]]
    );
    match s.execute("UPDATE n SET t = t + 1 WHERE id = 2").unwrap() {
        Response::Done { info, .. } => assert!(info.ends_with("Warnings: 1"), "{info}"),
        other => panic!("{other:?}"),
    }
    // A constant outside a column's range finds nothing, and fails nothing.
    assert!(rows(&mut s, "SELECT id FROM n WHERE t = 300").is_empty());
}

#[test]
fn datetime_keeps_its_digits_of_a_second_and_rounds_the_rest() {
    let mut s = session();
    ok(
        &mut s,
        "CREATE TABLE dt (id INT PRIMARY KEY, a DATETIME, b DATETIME(3), c TIMESTAMP(6))",
    );
    // What Python's str(datetime.now()) and isoformat() send.
    ok(
        &mut s,
        "INSERT INTO dt VALUES (1, '2026-11-26 12:00:00.5', '2026-11-26 12:00:00.12351', \
         '2026-11-26T12:00:00.123456')",
    );
    ok(
        &mut s,
        "INSERT INTO dt VALUES (2, '2026-12-31 23:59:59.999999', NULL, NULL)",
    );
    assert_eq!(
        rows(&mut s, "SELECT a, b, c FROM dt ORDER BY id"),
        [
            [
                "2026-11-26 12:00:01",
                "2026-11-26 12:00:00.124",
                "2026-11-26 12:00:00.123456"
            ],
            ["2027-01-01 00:00:00", "NULL", "NULL"]
        ]
    );
    assert_eq!(err(&mut s, "CREATE TABLE bad (a DATETIME(7))").code, 1426);
    // TIME has no type here: refused, not stored as something else.
    assert_eq!(err(&mut s, "CREATE TABLE d (a TIME)").code, 1235);
}

/// DATE keeps a day: a time of day is cut off with note 1265, it shows as YYYY-MM-DD, a
/// DATETIME compares with it as its midnight, and it survives a restart from the log
/// (its own value kind in keys and in the redo log).
#[test]
fn date_keeps_the_day() {
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        let (engine, _) =
            waterline_txn::Engine::open_dir(dir.path(), waterline_txn::EngineConfig::default())
                .unwrap();
        Arc::new(engine)
    };
    let engine = open();
    let shared = waterline_sql::Shared::new(engine, waterline_sql::SessionConfig::default());
    let mut s = session_of(&shared);
    ok(
        &mut s,
        "CREATE TABLE d (id INT PRIMARY KEY, at DATE, KEY k_at (at))",
    );
    ok(
        &mut s,
        "INSERT INTO d VALUES (1, '2026-02-03 04:05:06'), (2, '2026-02-04')",
    );
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        [["Note", "1265", "Data truncated for column 'at' at row 1"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id, at FROM d WHERE at >= '2026-02-03 00:00:00' ORDER BY at"
        ),
        [["1", "2026-02-03"], ["2", "2026-02-04"]]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM d WHERE at = '2026-02-03 04:05:06'"),
        Vec::<Vec<String>>::new()
    );
    drop(s);
    drop(shared);
    let engine = open();
    let shared = waterline_sql::Shared::new(engine, waterline_sql::SessionConfig::default());
    let mut s = session_of(&shared);
    assert_eq!(
        rows(
            &mut s,
            "SELECT id, at, DATE_ADD(at, INTERVAL 1 DAY) FROM d WHERE at = '2026-02-04'"
        ),
        [["2", "2026-02-04", "2026-02-05"]]
    );
}

#[test]
fn replace_deletes_what_its_row_collides_with_then_inserts() {
    let mut s = session();
    ok(
        &mut s,
        "CREATE TABLE r (id INT PRIMARY KEY, e VARCHAR(10), v INT, UNIQUE KEY ue (e))",
    );
    ok(&mut s, "INSERT INTO r VALUES (1, 'a', 1), (2, 'b', 2)");
    // MySQL's affected rows: one for the insert, one for each row deleted first.
    assert_eq!(ok(&mut s, "REPLACE INTO r VALUES (1, 'a', 10)"), 2);
    assert_eq!(ok(&mut s, "REPLACE INTO r VALUES (3, 'c', 3)"), 1);
    assert_eq!(
        ok(&mut s, "REPLACE INTO r (id, e, v) VALUES (1, 'b', 5)"),
        3
    );
    assert_eq!(
        rows(&mut s, "SELECT id, e, v FROM r ORDER BY id"),
        [["1", "b", "5"], ["3", "c", "3"]]
    );
    // A NULL in a unique key collides with nothing.
    ok(&mut s, "REPLACE INTO r VALUES (4, NULL, 4), (5, NULL, 5)");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM r"), "4");
    // INSERT IGNORE leaves the duplicate out, with MySQL's warning.
    ok(&mut s, "INSERT IGNORE INTO r VALUES (1, 'x', 0)");
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        [["Warning", "1062", "Duplicate entry '1' for key 'PRIMARY'"]]
    );
    assert!(
        rows(&mut s, "SHOW TABLES LIKE 't'").is_empty(),
        "no table of that name"
    );
    assert_eq!(
        rows(&mut s, "SHOW FULL TABLES LIKE 'r%'"),
        [["r", "BASE TABLE"]]
    );
}

#[test]
fn temporary_tables_are_the_sessions_own() {
    let shared = shared();
    let (mut a, mut b) = (session_of(&shared), session_of(&shared));
    ok(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    ok(&mut a, "INSERT INTO t VALUES (1, 10)");
    let (read, _, _) = a.prepare("SELECT * FROM t").unwrap();
    assert_eq!(prepared_rows(&mut a, read, &[]), [["1", "10"]]);
    // Inside a transaction: CREATE TEMPORARY TABLE does not commit it.
    ok(&mut a, "BEGIN");
    ok(&mut a, "UPDATE t SET v = 11");
    ok(
        &mut a,
        "CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, w VARCHAR(5), n INT AUTO_INCREMENT, KEY (n))",
    );
    assert_eq!(err(&mut a, "CREATE TEMPORARY TABLE t (x INT)").code, 1050);
    ok(
        &mut a,
        "INSERT INTO t (id, w) VALUES (5, 'mine'), (6, 'also')",
    );
    // It hides the base table of its name, from this session alone, prepared statements
    // included.
    assert_eq!(
        rows(&mut a, "SELECT id, w, n FROM t ORDER BY id"),
        [["5", "mine", "1"], ["6", "also", "2"]]
    );
    assert_eq!(
        prepared_rows(&mut a, read, &[]),
        [["5", "mine", "1"], ["6", "also", "2"]]
    );
    assert_eq!(rows(&mut b, "SELECT id, v FROM t"), [["1", "10"]]);
    assert_eq!(
        rows(&mut b, "SHOW TABLES"),
        [["t"]],
        "SHOW TABLES lists no temporary table"
    );
    ok(&mut a, "ROLLBACK");
    // The rollback undid the base table's update and the temporary table's rows (the table
    // itself stays, as in MySQL).
    assert!(rows(&mut a, "SELECT id FROM t").is_empty());
    ok(&mut a, "DROP TEMPORARY TABLE t");
    assert_eq!(rows(&mut a, "SELECT id, v FROM t"), [["1", "10"]]);
    assert_eq!(
        err(&mut a, "DROP TEMPORARY TABLE t").code,
        1051,
        "only temporary ones"
    );
    // DROP TABLE drops the temporary table first.
    ok(&mut a, "CREATE TEMPORARY TABLE t (id INT)");
    ok(&mut a, "DROP TABLE t");
    assert_eq!(rows(&mut a, "SELECT id, v FROM t"), [["1", "10"]]);
    // A session's temporary tables go with it.
    ok(
        &mut b,
        "CREATE TEMPORARY TABLE scratch (id INT PRIMARY KEY)",
    );
    ok(&mut b, "INSERT INTO scratch VALUES (1)");
    assert_eq!(err(&mut a, "SELECT id FROM scratch").code, 1146);
    drop(b);
    let mut c = session_of(&shared);
    assert_eq!(err(&mut c, "SELECT id FROM scratch").code, 1146);
    ok(
        &mut c,
        "CREATE TEMPORARY TABLE scratch (id INT PRIMARY KEY)",
    );
    assert!(rows(&mut c, "SELECT id FROM scratch").is_empty());
    assert_eq!(err(&mut c, "CREATE INDEX k ON scratch (id)").code, 1235);
}

/// SLEEP waits and returns 0; a KILL QUERY from another session ends the wait at once and
/// SLEEP returns 1, as in MySQL, and the session goes on. It is not a constant: in WHERE it
/// is evaluated per row, never while planning.
#[test]
fn sleep_waits_and_kill_query_ends_it() {
    let shared = shared();
    let mut a = session_of(&shared);
    let id = rows(&mut a, "SELECT CONNECTION_ID()")[0][0].clone();
    let started = Instant::now();
    assert_eq!(rows(&mut a, "SELECT SLEEP(0.2)"), [["0"]]);
    assert!(started.elapsed() >= Duration::from_millis(200));
    ok(&mut a, "CREATE TABLE s (id INT PRIMARY KEY)");
    ok(&mut a, "INSERT INTO s VALUES (1), (2), (3)");
    let started = Instant::now();
    assert_eq!(
        rows(&mut a, "SELECT id FROM s WHERE SLEEP(0.1) = 0").len(),
        3
    );
    assert!(started.elapsed() >= Duration::from_millis(300));
    let killer = std::thread::spawn({
        let shared = Arc::clone(&shared);
        move || {
            std::thread::sleep(Duration::from_millis(300));
            let mut b = session_of(&shared);
            ok(&mut b, &format!("KILL QUERY {id}"));
        }
    });
    let started = Instant::now();
    assert_eq!(rows(&mut a, "SELECT SLEEP(60)"), [["1"]]);
    assert!(started.elapsed() < Duration::from_secs(30));
    killer.join().unwrap();
    assert_eq!(rows(&mut a, "SELECT SLEEP(0)"), [["0"]]);
    assert_eq!(err(&mut a, "SELECT SLEEP(-1)").code, 1210);
    assert_eq!(err(&mut a, "SELECT SLEEP(NULL)").code, 1210);
}

/// SHOW CREATE TABLE's text creates the same table again (the same text back), and
/// DESCRIBE shows each column's type, NULL, key, DEFAULT and AUTO_INCREMENT as MySQL 8.0.
#[test]
fn show_create_table_round_trips_and_describe_agrees() {
    let mut s = session();
    ok(
        &mut s,
        "CREATE TABLE u (id INT NOT NULL AUTO_INCREMENT, email VARCHAR(20), grp INT DEFAULT 7, \
         price DECIMAL(6,2) DEFAULT 1.25, at DATETIME(3), d DATE, s CHAR(3) NOT NULL DEFAULT 'x''y', \
         big BIGINT UNSIGNED, f DOUBLE, PRIMARY KEY (id), UNIQUE KEY u_email (email), KEY k_grp (grp, d))",
    );
    let text = |s: &mut waterline_sql::Session| rows(s, "SHOW CREATE TABLE u")[0][1].clone();
    let first = text(&mut s);
    assert!(first.starts_with("CREATE TABLE `u` (\n  `id` int NOT NULL AUTO_INCREMENT,\n"));
    assert!(first.contains("  `s` char(3) NOT NULL DEFAULT 'x''y',\n"));
    assert!(first.contains("  UNIQUE KEY `u_email` (`email`),\n  KEY `k_grp` (`grp`,`d`)\n)"));
    ok(&mut s, "DROP TABLE u");
    ok(&mut s, &first);
    assert_eq!(text(&mut s), first);
    assert_eq!(
        rows(&mut s, "DESCRIBE u"),
        [
            ["id", "int", "NO", "PRI", "NULL", "auto_increment"],
            ["email", "varchar(20)", "YES", "UNI", "NULL", ""],
            ["grp", "int", "YES", "MUL", "7", ""],
            ["price", "decimal(6,2)", "YES", "", "1.25", ""],
            ["at", "datetime(3)", "YES", "", "NULL", ""],
            ["d", "date", "YES", "", "NULL", ""],
            ["s", "char(3)", "NO", "", "x'y", ""],
            ["big", "bigint unsigned", "YES", "", "NULL", ""],
            ["f", "double", "YES", "", "NULL", ""],
        ]
    );
    assert_eq!(
        rows(&mut s, "SHOW FULL COLUMNS FROM u LIKE 'e%'")[0][..4],
        ["email", "varchar(20)", "utf8mb4_bin", "YES"]
    );
    assert_eq!(err(&mut s, "SHOW CREATE TABLE nope").code, 1146);
    assert_eq!(err(&mut s, "DESCRIBE nope").code, 1146);
}
