//! The MariaDB client tools against `waterline serve`, as a user runs them: `mariadb-dump`
//! (plain, which takes LOCK TABLES; `--single-transaction`; `--lock-all-tables`, which takes
//! FLUSH TABLES WITH READ LOCK) of a database whose dump
//! loads into a fresh server with the same tables (`SHOW CREATE TABLE`) and rows;
//! a dump of several databases (`--databases`); `mariadb-slap`, which makes and drops its own
//! schema; `mariadb-admin status` and `processlist`; the `mariadb` client's `status`.
//!
//! `.ci/run` installs them (Debian's mariadb-client) and sets `WATERLINE_REQUIRE_CLIENTS=1`,
//! which makes their absence a failure.

#![allow(clippy::print_stderr)]

mod common;

use std::process::{Command, Output, Stdio};

use common::{Served, connect};
use mysql::prelude::Queryable;

fn have_tools() -> bool {
    let found = Command::new("mariadb-dump")
        .arg("--version")
        .output()
        .is_ok();
    if !found {
        assert!(
            std::env::var_os("WATERLINE_REQUIRE_CLIENTS").is_none(),
            "mariadb-dump is required here"
        );
        eprintln!("skipped: apt-get install mariadb-client to run this test");
    }
    found
}

/// `tool` with `args` against the server on `port`, its output; it must succeed.
fn run(tool: &str, port: u16, args: &[&str], input: Option<&[u8]>) -> Output {
    let mut command = Command::new(tool);
    command
        .args(["-h", "127.0.0.1", "-P", &port.to_string(), "-u", "root"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    if let Some(input) = input {
        std::io::Write::write_all(&mut stdin, input).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Each table's SHOW CREATE TABLE and rows (in primary key order), by table.
fn contents(conn: &mut mysql::Conn) -> Vec<(String, String, Vec<Vec<mysql::Value>>)> {
    let tables: Vec<String> = conn.query("SHOW TABLES").unwrap();
    tables
        .into_iter()
        .map(|t| {
            let (_, create): (String, String) = conn
                .query_first(format!("SHOW CREATE TABLE `{t}`"))
                .unwrap()
                .unwrap();
            let rows: Vec<mysql::Row> = conn
                .query(format!("SELECT * FROM `{t}` ORDER BY 1"))
                .unwrap();
            let rows = rows.into_iter().map(|row| row.unwrap()).collect();
            (t, create, rows)
        })
        .collect()
}

#[test]
fn a_dump_loads_back_with_the_same_tables_and_rows() {
    if !have_tools() {
        return;
    }
    let from = Served::start(false);
    let mut conn = connect(from.port);
    for sql in [
        "CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL DEFAULT 'none', \
         at DATETIME(3), day DATE, amount DECIMAL(8,2) DEFAULT 1.50, ratio DOUBLE, \
         UNIQUE KEY u_name (name))",
        "CREATE TABLE child (id BIGINT AUTO_INCREMENT PRIMARY KEY, parent_id INT, \
         note TEXT, flag TINYINT UNSIGNED, KEY k_note (flag), \
         CONSTRAINT child_parent FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE CASCADE)",
        "INSERT INTO parent VALUES (1, 'it''s', '2026-01-02 03:04:05.678', '2026-01-02', 12.34, 0.5), \
         (2, 'back\\\\slash', NULL, NULL, NULL, NULL), (3, 'ünï \"q\"', '2000-02-29 00:00:00', '1999-12-31', -1.00, -2.25)",
        "INSERT INTO child (parent_id, note, flag) VALUES (1, 'a', 1), (1, NULL, 255), (NULL, '', 0), (3, 'line\\nbreak', NULL)",
    ] {
        conn.query_drop(sql).unwrap();
    }
    let expected = contents(&mut conn);
    assert_eq!(expected.len(), 2);
    for options in [
        &[][..],
        &["--single-transaction"][..],
        &["--lock-all-tables"][..],
    ] {
        let mut args = options.to_vec();
        args.push("tpcc");
        let dump = run("mariadb-dump", from.port, &args, None).stdout;
        let text = String::from_utf8_lossy(&dump);
        assert!(
            text.contains("CONSTRAINT `child_parent` FOREIGN KEY"),
            "{text}"
        );
        let to = Served::start(false);
        run("mariadb", to.port, &["tpcc"], Some(&dump));
        let mut copy = connect(to.port);
        assert_eq!(contents(&mut copy), expected, "{options:?}");
        // The copy's foreign key is enforced.
        let refused = copy
            .query_drop("INSERT INTO child (parent_id) VALUES (99)")
            .unwrap_err();
        assert!(refused.to_string().contains("1452"), "{refused}");
    }
}

#[test]
fn admin_and_client_status_and_processlist() {
    if !have_tools() {
        return;
    }
    let served = Served::start(false);
    let mut idle = connect(served.port);
    idle.query_drop("SELECT 1").unwrap();
    let status = run("mariadb-admin", served.port, &["status"], None).stdout;
    assert!(String::from_utf8_lossy(&status).starts_with("Uptime:"));
    let list =
        String::from_utf8_lossy(&run("mariadb-admin", served.port, &["processlist"], None).stdout)
            .into_owned();
    assert!(
        list.contains("Sleep") && list.contains("show processlist"),
        "{list}"
    );
    // The Host column: where each client is.
    assert!(list.contains("| 127.0.0.1:"), "{list}");
    let client = run("mariadb", served.port, &["tpcc", "-e", "status"], None);
    let text = String::from_utf8_lossy(&client.stdout);
    assert!(
        text.contains("Server version:\t\t8.0.36-waterline"),
        "{text}"
    );
    assert!(
        client.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&client.stderr)
    );
}

/// A dump of several databases (`--databases`, which writes CREATE DATABASE and USE) loads
/// into a fresh server with each table in its own database, a foreign key across the two
/// included.
#[test]
fn a_dump_of_several_databases_loads_back() {
    if !have_tools() {
        return;
    }
    let from = Served::start(false);
    let mut conn = connect(from.port);
    for sql in [
        "CREATE DATABASE shop",
        "CREATE TABLE shop.item (id INT PRIMARY KEY, name VARCHAR(10))",
        "INSERT INTO shop.item VALUES (1, 'one'), (2, 'two')",
        "CREATE DATABASE crm",
        "CREATE TABLE crm.item (id INT PRIMARY KEY, shop_item INT, \
         FOREIGN KEY (shop_item) REFERENCES shop.item (id))",
        "INSERT INTO crm.item VALUES (10, 2)",
    ] {
        conn.query_drop(sql).unwrap();
    }
    let of = |conn: &mut mysql::Conn, db: &str| {
        conn.query_drop(format!("USE {db}")).unwrap();
        contents(conn)
    };
    let expected = [of(&mut conn, "shop"), of(&mut conn, "crm")];
    assert!(expected[1][0].1.contains("REFERENCES `shop`.`item` (`id`)"));
    let dump = run(
        "mariadb-dump",
        from.port,
        &["--databases", "shop", "crm"],
        None,
    )
    .stdout;
    let to = Served::start(false);
    run("mariadb", to.port, &[], Some(&dump));
    let mut copy = connect(to.port);
    assert_eq!([of(&mut copy, "shop"), of(&mut copy, "crm")], expected);
    let refused = copy
        .query_drop("INSERT INTO crm.item VALUES (11, 3)")
        .unwrap_err();
    assert!(refused.to_string().contains("1452"), "{refused}");
}

/// mariadb-slap makes its own schema (CREATE SCHEMA, tables with SERIAL and UUID()), runs
/// its load from several connections, and drops the schema.
#[test]
fn mariadb_slap_runs_and_cleans_up() {
    if !have_tools() {
        return;
    }
    let served = Served::start(false);
    for load in ["mixed", "update", "key", "write"] {
        let out = run(
            "mariadb-slap",
            served.port,
            &[
                "--concurrency=4",
                "--iterations=1",
                "--auto-generate-sql",
                &format!("--auto-generate-sql-load-type={load}"),
                "--auto-generate-sql-add-autoincrement",
                "--auto-generate-sql-secondary-indexes=2",
                "--number-of-queries=200",
            ],
            None,
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("Number of clients running queries: 4"),
            "{load}: {text}"
        );
        assert!(
            out.stderr.is_empty(),
            "{load}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut conn = connect(served.port);
    let databases: Vec<String> = conn.query("SHOW DATABASES").unwrap();
    assert!(!databases.iter().any(|d| d == "mysqlslap"), "{databases:?}");
}
