//! The differential test: every statement of `tests/differential/corpus.sql`, run in order on
//! one connection to waterline and one to a MariaDB 10.11 the test starts from Debian's
//! `mariadb-server` in a temporary directory (`mariadb-install-db`, then `mariadbd
//! --no-defaults`), compared for error codes, column names and types, rows, affected rows,
//! last insert ids and warning counts. A difference fails the test unless
//! `tests/differential/known-differences.md` lists it with its reason.
//!
//! `.ci/run` installs MariaDB and sets `WATERLINE_REQUIRE_CLIENTS=1`, which makes a missing
//! one a failure; elsewhere the test says it was skipped.

#![allow(clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

mod common;

use common::{connect_to, free_port};
use mysql::prelude::Queryable;
use waterline::server::{Server, SessionConfig, Shared};
use waterline::{Engine, EngineConfig};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/differential");

/// The MariaDB server's two programs, where Debian puts them.
fn mariadb_programs() -> Option<(PathBuf, PathBuf)> {
    let find = |name: &str| {
        ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"]
            .iter()
            .map(|d| Path::new(d).join(name))
            .find(|p| p.exists())
    };
    let found = find("mariadb-install-db").zip(find("mariadbd"));
    if found.is_none() {
        assert!(
            std::env::var_os("WATERLINE_REQUIRE_CLIENTS").is_none(),
            "mariadb-server is required here but not installed"
        );
        eprintln!("skipped: apt-get install mariadb-server to run the differential test");
    }
    found
}

/// A MariaDB server on a free port, in a data directory of its own; killed when dropped.
struct MariaDb {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl MariaDb {
    fn start(install: &Path, server: &Path) -> MariaDb {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        // A temporary directory of its own: two servers bootstrapping at once in /tmp
        // collide on their temporary tables' file names.
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let out = Command::new(install)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--tmpdir={}", tmp.display()))
            .args([
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--user=root",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "mariadb-install-db: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let child = Command::new(server)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", dir.path().join("sock").display()))
            .arg(format!("--tmpdir={}", tmp.display()))
            .arg(format!("--port={port}"))
            .args([
                "--bind-address=127.0.0.1",
                "--user=root",
                "--innodb-buffer-pool-size=32M",
                "--skip-log-bin",
                "--character-set-server=utf8mb4",
                "--collation-server=utf8mb4_bin",
            ])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("server.log")).unwrap())
            .spawn()
            .unwrap();
        MariaDb {
            child,
            port,
            _dir: dir,
        }
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a statement gave a client.
#[derive(Debug, PartialEq)]
enum Outcome {
    Error(u16),
    Done {
        columns: Vec<(String, String)>,
        rows: Vec<Vec<Option<String>>>,
        affected: u64,
        insert_id: u64,
        warnings: u16,
    },
}

fn run(conn: &mut mysql::Conn, sql: &str) -> Outcome {
    let mut result = match conn.query_iter(sql) {
        Ok(r) => r,
        Err(mysql::Error::MySqlError(e)) => return Outcome::Error(e.code),
        Err(e) => panic!("{sql}: {e}"),
    };
    let mut columns = Vec::new();
    let mut rows = Vec::new();
    if let Some(set) = result.iter() {
        columns = set
            .columns()
            .as_ref()
            .iter()
            .map(|c| {
                (
                    c.name_str().into_owned(),
                    format!("{:?}", c.column_type()).replace("MYSQL_TYPE_", ""),
                )
            })
            .collect();
        for row in set {
            let row = match row {
                Ok(row) => row,
                Err(mysql::Error::MySqlError(e)) => return Outcome::Error(e.code),
                Err(e) => panic!("{sql}: {e}"),
            };
            rows.push(
                row.unwrap()
                    .into_iter()
                    .map(|v| match v {
                        mysql::Value::NULL => None,
                        mysql::Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
                        other => Some(format!("{other:?}")),
                    })
                    .collect(),
            );
        }
    }
    Outcome::Done {
        columns,
        rows,
        affected: result.affected_rows(),
        insert_id: result.last_insert_id().unwrap_or(0),
        warnings: result.warnings(),
    }
}

/// One way two outcomes differ: the aspect (`error`, `columns`, `types`, `rows`,
/// `affected`, `insert_id`, `warnings`) and each side's value.
#[derive(Debug)]
struct Difference {
    aspect: &'static str,
    ours: String,
    theirs: String,
}

fn differences(ours: &Outcome, theirs: &Outcome) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut differ = |aspect: &'static str, a: String, b: String| {
        if a != b {
            out.push(Difference {
                aspect,
                ours: a,
                theirs: b,
            });
        }
    };
    match (ours, theirs) {
        (
            Outcome::Done {
                columns: c1,
                rows: r1,
                affected: a1,
                insert_id: i1,
                warnings: w1,
            },
            Outcome::Done {
                columns: c2,
                rows: r2,
                affected: a2,
                insert_id: i2,
                warnings: w2,
            },
        ) => {
            let names = |c: &[(String, String)]| c.iter().map(|c| c.0.clone()).collect::<Vec<_>>();
            let types = |c: &[(String, String)]| c.iter().map(|c| c.1.clone()).collect::<Vec<_>>();
            differ(
                "columns",
                format!("{:?}", names(c1)),
                format!("{:?}", names(c2)),
            );
            differ(
                "types",
                format!("{:?}", types(c1)),
                format!("{:?}", types(c2)),
            );
            differ("rows", format!("{r1:?}"), format!("{r2:?}"));
            differ("affected", a1.to_string(), a2.to_string());
            differ("insert_id", i1.to_string(), i2.to_string());
            differ("warnings", w1.to_string(), w2.to_string());
        }
        (a, b) => differ("error", describe(a), describe(b)),
    }
    out
}

fn describe(o: &Outcome) -> String {
    match o {
        Outcome::Error(code) => format!("error {code}"),
        Outcome::Done { .. } => "ok".into(),
    }
}

/// A reviewed difference: the statement it holds for (`*`: every statement), the aspect,
/// and (optionally) the value on each side.
struct Known {
    statement: String,
    aspect: String,
    ours: String,
    theirs: String,
}

impl Known {
    fn covers(&self, statement: &str, d: &Difference) -> bool {
        (self.statement == "*" || self.statement == statement)
            && self.aspect == d.aspect
            && (self.ours.is_empty() || self.ours == d.ours)
            && (self.theirs.is_empty() || self.theirs == d.theirs)
    }
}

/// The table rows of the known-differences file: `| statement | aspect | ours | theirs |
/// reason |`, each cell in backticks where it is code. Every row must give a reason.
fn known_differences() -> Vec<Known> {
    let text = std::fs::read_to_string(format!("{DIR}/known-differences.md")).unwrap();
    let cell = |c: &str| c.trim().trim_matches('`').to_owned();
    text.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| statement") && !l.starts_with("|-"))
        .map(|l| {
            let cells: Vec<String> = l
                .trim()
                .trim_matches('|')
                .replace("\\|", "\u{0}")
                .split('|')
                .map(|c| cell(&c.replace('\u{0}', "|")))
                .collect();
            assert!(
                cells.len() == 5 && !cells[4].is_empty(),
                "a known difference needs statement, aspect, ours, theirs and a reason: {l}"
            );
            Known {
                statement: cells[0].clone(),
                aspect: cells[1].clone(),
                ours: cells[2].clone(),
                theirs: cells[3].clone(),
            }
        })
        .collect()
}

/// The statements of `file` in the test's folder, one to a line (`--` lines are comments).
fn statements_of(file: &str) -> Vec<String> {
    std::fs::read_to_string(format!("{DIR}/{file}"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("--"))
        .map(|l| l.trim_end_matches(';').to_owned())
        .collect()
}

#[test]
fn waterline_answers_as_mariadb_does() {
    let Some((install, server)) = mariadb_programs() else {
        return;
    };
    let mariadb = MariaDb::start(&install, &server);
    let mut admin = connect_to(mariadb.port, None);
    admin.query_drop("CREATE DATABASE waterline").unwrap();
    let mut theirs = connect_to(mariadb.port, Some("waterline"));
    // MySQL 8.0's default sql_mode, which waterline starts with (MariaDB's differs).
    theirs
        .query_drop(
            "SET SESSION sql_mode = 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,\
             NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
        )
        .unwrap();

    let engine = Arc::new(Engine::open(EngineConfig::default()).unwrap());
    let shared = Shared::new(engine, SessionConfig::default());
    let addr = Server::new(shared, 16)
        .spawn("127.0.0.1:0".parse().unwrap())
        .unwrap();
    let mut ours = connect_to(addr.port(), Some("waterline"));

    let known = known_differences();
    let mut used = vec![false; known.len()];
    let statements = statements_of("corpus.sql");
    assert!(statements.len() >= 300, "{} statements", statements.len());
    let mut unexplained = Vec::new();
    for (n, sql) in statements.iter().enumerate() {
        let (a, b) = (run(&mut ours, sql), run(&mut theirs, sql));
        for d in differences(&a, &b) {
            match known.iter().position(|k| k.covers(sql, &d)) {
                Some(i) => used[i] = true,
                None => unexplained.push(format!(
                    "#{} {sql}\n    {}: waterline {} | MariaDB {}",
                    n + 1,
                    d.aspect,
                    d.ours,
                    d.theirs
                )),
            }
        }
    }
    let stale: Vec<String> = known
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|(k, _)| format!("{} ({})", k.statement, k.aspect))
        .collect();
    eprintln!(
        "{} statements, {} known differences ({} used)",
        statements.len(),
        known.len(),
        used.iter().filter(|u| **u).count()
    );
    assert!(
        unexplained.is_empty(),
        "{} differences from MariaDB are neither fixed nor listed in known-differences.md:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
    assert!(
        stale.is_empty(),
        "known differences that no longer happen (remove them):\n{}",
        stale.join("\n")
    );
}

/// TPC-C's consistency conditions 3.3.2.1 to 3.3.2.12, written as plain SQL (derived tables,
/// outer joins, correlated subqueries) in `tests/differential/tpcc-consistency.sql`, run on
/// one initial database loaded by the TPC-C driver into waterline and into MariaDB: each
/// answer is MariaDB's but for the differences `known-differences.md` lists (none reads a
/// date, which is the moment of loading), and every `ok` column is 1.
#[test]
fn tpcc_consistency_conditions_agree_with_mariadb() {
    use waterline::tpcc::{BackendKind, Scale, Settings, Target};
    let Some((install, server)) = mariadb_programs() else {
        return;
    };
    let mariadb = MariaDb::start(&install, &server);
    connect_to(mariadb.port, None)
        .query_drop("CREATE DATABASE tpcc")
        .unwrap();
    let scale = Scale {
        warehouses: 1,
        items: 1000,
        customers: 30,
    };
    let settings = Settings::default();
    let url = format!("mysql://root@127.0.0.1:{}/tpcc", mariadb.port);
    Target::create(&BackendKind::Mysql(url), &settings, scale, 11, 1).expect("MariaDB loads");
    let (target, _) = Target::create(&BackendKind::Sql, &settings, scale, 11, 1).expect("loads");
    let Target::Sql { shared, .. } = &target else {
        panic!("an embedded SQL target");
    };
    let addr = Server::new(Arc::clone(shared), 4)
        .spawn("127.0.0.1:0".parse().unwrap())
        .unwrap();
    let mut ours = connect_to(addr.port(), Some("tpcc"));
    let mut theirs = connect_to(mariadb.port, Some("tpcc"));
    let queries = statements_of("tpcc-consistency.sql");
    assert_eq!(queries.len(), 15);
    let mut failures = Vec::new();
    for sql in &queries {
        let (a, b) = (run(&mut ours, sql), run(&mut theirs, sql));
        let known = known_differences();
        for d in differences(&a, &b) {
            if known.iter().any(|k| k.covers(sql, &d)) {
                continue;
            }
            failures.push(format!(
                "{sql}\n    {}: waterline {} | MariaDB {}",
                d.aspect, d.ours, d.theirs
            ));
        }
        if let Outcome::Done { columns, rows, .. } = &a
            && let Some(ok) = columns.iter().position(|(name, _)| name == "ok")
        {
            assert!(!rows.is_empty(), "{sql}: no rows");
            {
                for row in rows {
                    assert_eq!(row[ok].as_deref(), Some("1"), "{sql}: {row:?}");
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
