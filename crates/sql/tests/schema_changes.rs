//! Databases as namespaces of tables, ALTER TABLE and RENAME TABLE, through embedded
//! sessions: each database has its own tables, `db.t` names a table anywhere a table is
//! named, CREATE/DROP DATABASE, every ALTER TABLE operation alone and several at once (all
//! or nothing), and all of it after a restart of a durable engine.

mod common;

use std::sync::Arc;

use common::{err, ok, one, rows, session_of, shared};

#[test]
fn each_database_has_its_own_tables() {
    let shared = shared();
    let mut s = session_of(&shared);
    ok(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(5))");
    ok(&mut s, "INSERT INTO t VALUES (1, 'home')");
    assert_eq!(ok(&mut s, "CREATE DATABASE shop"), 1);
    assert_eq!(err(&mut s, "CREATE DATABASE shop").code, 1007);
    ok(&mut s, "CREATE SCHEMA IF NOT EXISTS shop");
    assert_eq!(
        rows(&mut s, "SHOW CREATE DATABASE shop"),
        [[
            "shop",
            "CREATE DATABASE `shop` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin */"
        ]]
    );
    assert_eq!(err(&mut s, "SHOW CREATE SCHEMA nodb").code, 1049);
    ok(
        &mut s,
        "CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(5))",
    );
    ok(&mut s, "INSERT INTO shop.t VALUES (1, 'shop'), (2, 'shop')");
    assert_eq!(one(&mut s, "SELECT v FROM t"), "home");
    assert_eq!(one(&mut s, "SELECT count(*) FROM shop.t"), "2");
    // A table qualified by its database, and named by its own name in a column.
    assert_eq!(
        rows(&mut s, "SELECT t.v, shop.t.id FROM shop.t WHERE t.id = 2"),
        [["shop", "2"]]
    );
    // Two databases' tables in one statement.
    assert_eq!(
        rows(
            &mut s,
            "SELECT a.v, b.v FROM waterline.t a JOIN shop.t b ON a.id = b.id"
        ),
        [["home", "shop"]]
    );
    ok(&mut s, "USE shop");
    assert_eq!(one(&mut s, "SELECT DATABASE()"), "shop");
    assert_eq!(one(&mut s, "SELECT count(*) FROM t"), "2");
    assert_eq!(rows(&mut s, "SHOW TABLES"), [["t"]]);
    ok(&mut s, "UPDATE t SET v = 'x' WHERE t.id = 1");
    ok(&mut s, "INSERT INTO waterline.t SELECT id + 10, v FROM t");
    assert_eq!(one(&mut s, "SELECT count(*) FROM waterline.t"), "3");
    assert_eq!(
        err(&mut s, "SELECT * FROM nosuch").message,
        "Table 'shop.nosuch' doesn't exist"
    );
    assert_eq!(err(&mut s, "SELECT * FROM nodb.t").code, 1146);
    assert_eq!(err(&mut s, "CREATE TABLE nodb.t (a INT)").code, 1049);
    assert_eq!(err(&mut s, "CREATE TABLE `a.b` (a INT)").code, 1103);
    assert_eq!(
        rows(
            &mut s,
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES \
             ORDER BY TABLE_SCHEMA"
        ),
        [["shop", "t"], ["waterline", "t"]]
    );
    // A prepared statement keeps the database it was prepared in.
    let (id, _, _) = s.prepare("SELECT count(*) FROM t").unwrap();
    ok(&mut s, "USE waterline");
    assert_eq!(common::prepared_rows(&mut s, id, &[]), [["2"]]);
    // Without a database in use, a table needs its database.
    let mut none = waterline_sql::Session::connect(Arc::clone(&shared), "root", None).unwrap();
    assert_eq!(err(&mut none, "SELECT * FROM t").code, 1046);
    assert_eq!(one(&mut none, "SELECT v FROM shop.t WHERE id = 2"), "shop");
    assert_eq!(
        rows(&mut none, "WITH c AS (SELECT 1 AS x) SELECT x FROM c"),
        [["1"]]
    );
    // DROP DATABASE: its tables go, a session in it is in none.
    ok(&mut s, "USE shop");
    assert_eq!(ok(&mut s, "DROP DATABASE shop"), 1);
    assert_eq!(one(&mut s, "SELECT DATABASE()"), "NULL");
    assert_eq!(err(&mut none, "SELECT * FROM shop.t").code, 1146);
    assert_eq!(err(&mut s, "DROP DATABASE shop").code, 1008);
    ok(&mut s, "DROP DATABASE IF EXISTS shop");
    assert_eq!(err(&mut s, "DROP DATABASE information_schema").code, 1044);
    assert_eq!(rows(&mut s, "SHOW DATABASES"), [["waterline"]]);
}

/// A foreign key may reference a table of another database; DROP DATABASE of the parent's
/// is refused while it does (3730).
#[test]
fn foreign_keys_across_databases() {
    let shared = shared();
    let mut s = session_of(&shared);
    ok(&mut s, "CREATE DATABASE ref");
    ok(&mut s, "CREATE TABLE ref.p (id INT PRIMARY KEY)");
    ok(&mut s, "INSERT INTO ref.p VALUES (1)");
    ok(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES ref.p (id))",
    );
    ok(&mut s, "INSERT INTO c VALUES (1, 1)");
    let e = err(&mut s, "INSERT INTO c VALUES (2, 2)");
    assert_eq!(
        e.message,
        "Cannot add or update a child row: a foreign key constraint fails (`waterline`.`c`, \
         CONSTRAINT `c_ibfk_1` FOREIGN KEY (`p`) REFERENCES `ref`.`p` (`id`))"
    );
    assert_eq!(err(&mut s, "DROP DATABASE ref").code, 3730);
    assert_eq!(
        rows(
            &mut s,
            "SELECT REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME \
             FROM information_schema.KEY_COLUMN_USAGE WHERE CONSTRAINT_NAME = 'c_ibfk_1'"
        ),
        [["ref", "p"]]
    );
}

#[test]
fn alter_table_changes_columns_and_keeps_the_rows() {
    let mut s = session_of(&shared());
    ok(
        &mut s,
        "CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(10))",
    );
    ok(&mut s, "INSERT INTO p VALUES (1, 'one'), (2, 'two')");
    let done = s
        .execute("ALTER TABLE p ADD COLUMN note VARCHAR(20) NOT NULL DEFAULT 'x' AFTER id, ADD n INT NOT NULL, ADD INDEX by_name (name)")
        .unwrap();
    match done {
        waterline_sql::Response::Done { affected, info, .. } => {
            assert_eq!(
                (affected, info.as_str()),
                (2, "Records: 2  Duplicates: 0  Warnings: 0")
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        rows(&mut s, "SELECT * FROM p ORDER BY id"),
        [["1", "x", "one", "0"], ["2", "x", "two", "0"]]
    );
    assert_eq!(rows(&mut s, "SELECT id FROM p WHERE name = 'two'"), [["2"]]);
    // A value that does not fit: nothing changes.
    assert_eq!(
        err(&mut s, "ALTER TABLE p MODIFY name VARCHAR(2)").code,
        1265
    );
    assert_eq!(
        err(&mut s, "ALTER TABLE p DROP COLUMN n, DROP COLUMN nosuch").code,
        1091
    );
    assert_eq!(rows(&mut s, "SELECT n FROM p WHERE id = 1"), [["0"]]);
    ok(
        &mut s,
        "ALTER TABLE p CHANGE note remark VARCHAR(30) DEFAULT 'r', DROP COLUMN n, RENAME COLUMN name TO label",
    );
    ok(&mut s, "INSERT INTO p (id, label) VALUES (3, 'three')");
    assert_eq!(
        rows(&mut s, "SELECT * FROM p ORDER BY id"),
        [["1", "x", "one"], ["2", "x", "two"], ["3", "r", "three"]]
    );
    assert_eq!(
        rows(&mut s, "SHOW CREATE TABLE p")[0][1],
        "CREATE TABLE `p` (\n  `id` int NOT NULL,\n  `remark` varchar(30) DEFAULT 'r',\n  \
         `label` varchar(10) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `by_name` (`label`)\n) \
         ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
    );
    ok(&mut s, "ALTER TABLE p ALTER COLUMN remark DROP DEFAULT");
    ok(&mut s, "DROP INDEX by_name ON p");
    assert_eq!(err(&mut s, "ALTER TABLE p DROP INDEX by_name").code, 1091);
    // A unique index over duplicates is refused, and leaves the table as it was.
    ok(&mut s, "UPDATE p SET remark = 'x'");
    assert_eq!(
        err(
            &mut s,
            "ALTER TABLE p ADD UNIQUE (remark), ADD COLUMN z INT"
        )
        .code,
        1062
    );
    assert_eq!(rows(&mut s, "SHOW COLUMNS FROM p").len(), 3);
    ok(
        &mut s,
        "ALTER TABLE p DROP PRIMARY KEY, ADD PRIMARY KEY (label)",
    );
    assert_eq!(
        rows(&mut s, "SELECT label FROM p"),
        [["one"], ["three"], ["two"]]
    );
    // An AUTO_INCREMENT column added numbers the rows and counts on from them, and
    // AUTO_INCREMENT = n moves it on.
    ok(
        &mut s,
        "ALTER TABLE p ADD COLUMN seq INT AUTO_INCREMENT UNIQUE FIRST",
    );
    ok(&mut s, "INSERT INTO p (id, label) VALUES (5, 'five')");
    assert_eq!(one(&mut s, "SELECT seq FROM p WHERE id = 5"), "4");
    ok(&mut s, "ALTER TABLE p AUTO_INCREMENT = 100");
    ok(&mut s, "INSERT INTO p (id, label) VALUES (4, 'four')");
    assert_eq!(
        rows(&mut s, "SELECT seq FROM p ORDER BY seq"),
        [["1"], ["2"], ["3"], ["4"], ["100"]]
    );
    assert_eq!(
        err(&mut s, "ALTER TABLE p ADD INDEX (seq), ALGORITHM=INSTANT").code,
        1846
    );
}

/// The foreign keys of a table follow ALTER TABLE and RENAME TABLE of their parent, and
/// what they need cannot be dropped.
#[test]
fn foreign_keys_follow_their_parent() {
    let mut s = session_of(&shared());
    ok(&mut s, "CREATE TABLE p (id INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT INTO p VALUES (1, 1), (2, 2)");
    ok(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))",
    );
    ok(&mut s, "INSERT INTO c VALUES (10, 1)");
    assert_eq!(err(&mut s, "ALTER TABLE p DROP COLUMN id").code, 1829);
    assert_eq!(err(&mut s, "ALTER TABLE c DROP COLUMN pid").code, 1828);
    assert_eq!(err(&mut s, "ALTER TABLE c DROP INDEX c_ibfk_1").code, 1553);
    assert_eq!(err(&mut s, "ALTER TABLE c MODIFY pid BIGINT").code, 1832);
    assert_eq!(err(&mut s, "ALTER TABLE p MODIFY id VARCHAR(5)").code, 1833);
    // A foreign key whose rows fail adds nothing, not even its index.
    ok(&mut s, "CREATE TABLE e (id INT PRIMARY KEY, p INT)");
    ok(&mut s, "INSERT INTO e VALUES (1, 9)");
    assert_eq!(
        err(
            &mut s,
            "ALTER TABLE e ADD FOREIGN KEY (p) REFERENCES p (id)"
        )
        .code,
        1452
    );
    assert_eq!(rows(&mut s, "SHOW INDEX FROM e").len(), 1);
    ok(
        &mut s,
        "ALTER TABLE p RENAME COLUMN id TO pk, ADD COLUMN w INT",
    );
    ok(&mut s, "RENAME TABLE p TO parent");
    assert!(rows(&mut s, "SHOW CREATE TABLE c")[0][1].contains("REFERENCES `parent` (`pk`)"));
    assert_eq!(err(&mut s, "INSERT INTO c VALUES (11, 9)").code, 1452);
    assert_eq!(err(&mut s, "DELETE FROM parent WHERE pk = 1").code, 1451);
    ok(&mut s, "DELETE FROM parent WHERE pk = 2");
    ok(&mut s, "CREATE DATABASE other");
    ok(&mut s, "ALTER TABLE parent RENAME TO other.p3");
    assert!(rows(&mut s, "SHOW CREATE TABLE c")[0][1].contains("REFERENCES `other`.`p3` (`pk`)"));
    assert_eq!(err(&mut s, "RENAME TABLE c TO other.p3").code, 1050);
    assert_eq!(err(&mut s, "RENAME TABLE nosuch TO x").code, 1146);
    // ADD FOREIGN KEY with other operations: the rows are checked on the new table.
    ok(&mut s, "CREATE TABLE d (id INT PRIMARY KEY, p INT)");
    ok(&mut s, "INSERT INTO d VALUES (1, 5)");
    assert_eq!(
        err(
            &mut s,
            "ALTER TABLE d ADD COLUMN z INT, ADD FOREIGN KEY (p) REFERENCES other.p3 (pk)"
        )
        .code,
        1452
    );
    assert_eq!(rows(&mut s, "SHOW COLUMNS FROM d").len(), 2);
}

/// Databases, ALTER TABLE's copies and renames come back after a restart, from the log and
/// from a checkpoint.
#[test]
fn schema_changes_survive_a_restart() {
    common::across_restarts(
        |s| {
            for sql in [
                "CREATE DATABASE empty",
                "CREATE DATABASE shop",
                "CREATE TABLE shop.p (id INT PRIMARY KEY, v INT NOT NULL DEFAULT 7)",
                "INSERT INTO shop.p (id) VALUES (1), (2)",
                "CREATE TABLE c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES shop.p (id))",
                "INSERT INTO c VALUES (1, 2)",
                "ALTER TABLE shop.p ADD COLUMN w VARCHAR(4) DEFAULT 'w' FIRST, DROP COLUMN v",
                "RENAME TABLE shop.p TO shop.parent",
                "CREATE DATABASE gone",
                "CREATE TABLE gone.t (a INT)",
                "DROP DATABASE gone",
            ] {
                ok(s, sql);
            }
            rows(s, "SHOW CREATE TABLE shop.parent")
        },
        |s, before| {
            assert_eq!(
                rows(s, "SHOW DATABASES"),
                [["empty"], ["shop"], ["waterline"]]
            );
            assert_eq!(rows(s, "SHOW CREATE TABLE shop.parent"), before);
            assert_eq!(
                rows(s, "SELECT * FROM shop.parent ORDER BY id"),
                [["w", "1"], ["w", "2"]]
            );
            assert!(
                rows(s, "SHOW CREATE TABLE c")[0][1].contains("REFERENCES `shop`.`parent` (`id`)")
            );
            assert_eq!(err(s, "DELETE FROM shop.parent WHERE id = 2").code, 1451);
            assert_eq!(rows(s, "SHOW TABLES FROM shop"), [["parent"]]);
        },
    );
}
