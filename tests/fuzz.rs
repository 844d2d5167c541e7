//! The server survives whatever SQL a client sends: `waterline serve` as a process, and a
//! proptest that takes the differential corpus's statements, mutates them (bytes changed,
//! cut, doubled, fragments of SQL and of nonsense put in, parentheses nested deep, operator
//! chains grown long and split by parentheses) and sends each as a text query or as a
//! prepared statement with random parameters. A statement may fail as it likes; the process must stay up, every lost
//! connection must be the server closing one connection (a reconnect works), and its
//! standard error must hold no panic.
//!
//! `WATERLINE_FUZZ_CASES` sets the number of cases (default 3,000; `.ci/run` runs more).
//! The client logs in as a user without the SHUTDOWN privilege: a mutation that happens to
//! spell `SHUTDOWN` is refused, as it must be.

#![allow(clippy::print_stderr)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

const BIN: &str = env!("CARGO_BIN_EXE_waterline");
const CORPUS: &str = include_str!("differential/corpus.sql");

/// What a mutation may put in.
const FRAGMENTS: &[&str] = &[
    "(",
    ")",
    "((((",
    "))))",
    ",",
    ";",
    "'",
    "\"",
    "`",
    "\\",
    "/*",
    "*/",
    "/*+ ",
    "-- ",
    "#",
    "?",
    "NULL",
    "SELECT ",
    " FROM ",
    " WHERE ",
    " AND ",
    " OR ",
    " NOT ",
    " IN (",
    " LIKE ",
    " UNION ",
    " UNION ALL SELECT 1",
    " IN (SELECT 1)",
    " EXISTS (SELECT ",
    "(SELECT 1) ",
    " FROM (SELECT 1 AS x) AS d ",
    " HAVING ",
    " ON DUPLICATE KEY UPDATE ",
    " + INTERVAL 1 MONTH",
    " ESCAPE '!'",
    " JOIN ",
    " LEFT JOIN ",
    " RIGHT JOIN ",
    "WITH w AS (SELECT 1 AS a) ",
    "EXPLAIN FORMAT=TREE ",
    " WHERE EXISTS (SELECT 1 FROM t AS i WHERE i.id = ",
    " WHERE a IN (SELECT id FROM t AS i WHERE i.a = ",
    "DELETE FROM t WHERE id IN (SELECT ",
    " ON ",
    " GROUP BY ",
    " ORDER BY ",
    " LIMIT ",
    " FOR UPDATE",
    "+",
    "-",
    "*",
    "/",
    "%",
    " DIV ",
    "=",
    "<=>",
    "!=",
    "@@",
    "@",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "1e308",
    "0.000000000000000000000000001",
    "'2026-02-30 25:61:61.9999999'",
    "CAST(",
    "COUNT(*)",
    "SUM(",
    "NOW(6)",
    "\u{0}",
    "é",
    "\u{FFFD}",
    "\u{1F600}",
    " KILL QUERY 1",
    " SHUTDOWN",
    "SET SESSION wait_timeout = 1",
];

/// One change to a statement's text.
#[derive(Clone, Debug)]
enum Mutation {
    Byte(usize, u8),
    Cut(usize, usize),
    Double(usize, usize),
    Put(usize, usize),
    Nest(usize),
    Chain(usize, usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Byte(at, b)),
        (any::<usize>(), 1..20usize).prop_map(|(at, n)| Mutation::Cut(at, n)),
        (any::<usize>(), 1..40usize).prop_map(|(at, n)| Mutation::Double(at, n)),
        (any::<usize>(), 0..FRAGMENTS.len()).prop_map(|(at, f)| Mutation::Put(at, f)),
        (1..3_000usize).prop_map(Mutation::Nest),
        (0..6usize, 1..6_000usize, 1..8usize)
            .prop_map(|(op, n, groups)| Mutation::Chain(op, n, groups)),
    ]
}

/// `text` changed by `m` (at a char boundary; lossy where a byte breaks UTF-8).
fn apply(text: &str, m: &Mutation) -> String {
    let bytes = text.as_bytes();
    let at = |n: usize| {
        if bytes.is_empty() {
            0
        } else {
            n % (bytes.len() + 1)
        }
    };
    let mut out = bytes.to_vec();
    match *m {
        Mutation::Byte(n, b) if !out.is_empty() => {
            let i = n % out.len();
            out[i] = b;
        }
        Mutation::Byte(..) => {}
        Mutation::Cut(n, len) => {
            let i = at(n);
            out.drain(i..(i + len).min(out.len()));
        }
        Mutation::Double(n, len) => {
            let i = at(n);
            let piece = out[i..(i + len).min(out.len())].to_vec();
            out.splice(i..i, piece);
        }
        Mutation::Put(n, f) => {
            let i = at(n);
            out.splice(i..i, FRAGMENTS[f].bytes());
        }
        Mutation::Nest(depth) => {
            return format!("SELECT {}1{}", "(".repeat(depth), ")".repeat(depth));
        }
        Mutation::Chain(op, n, groups) => {
            // `n` operators, split into `groups` left-nested parenthesized pieces: as deep
            // as one chain of them all.
            let op = ["+", "*", " OR ", " AND ", "-", " = "][op];
            let mut chain = format!("SELECT {}1", "(".repeat(groups - 1));
            for i in 1..=n {
                if i % (n / groups + 1) == 0
                    && chain.matches('(').count() > chain.matches(')').count()
                {
                    chain.push(')');
                }
                chain.push_str(op);
                chain.push('1');
            }
            chain.push_str(&")".repeat(chain.matches('(').count() - chain.matches(')').count()));
            return chain;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn param() -> impl Strategy<Value = mysql::Value> {
    prop_oneof![
        Just(mysql::Value::NULL),
        any::<i64>().prop_map(mysql::Value::Int),
        any::<u64>().prop_map(mysql::Value::UInt),
        any::<f64>().prop_map(mysql::Value::Double),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(mysql::Value::Bytes),
        (
            0u16..10_000,
            0u8..=255,
            0u8..=255,
            0u8..=255,
            0u8..=255,
            0u8..=255,
            any::<u32>()
        )
            .prop_map(|(y, mo, d, h, mi, s, us)| mysql::Value::Date(y, mo, d, h, mi, s, us)),
    ]
}

struct Server {
    child: Child,
    port: u16,
    log: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    fn connect(&mut self) -> mysql::Conn {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            assert!(
                self.child.try_wait().unwrap().is_none(),
                "the server died: {}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            let opts = mysql::OptsBuilder::new()
                .ip_or_hostname(Some("127.0.0.1"))
                .tcp_port(self.port)
                .user(Some("fuzz"))
                .db_name(Some("waterline"))
                .prefer_socket(false);
            match mysql::Conn::new(opts) {
                Ok(c) => return c,
                Err(e) if Instant::now() > deadline => panic!("no connection: {e}"),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

/// Runs `sql` (prepared with `params` if given) and reads what comes back; `false` when the
/// connection was lost (its error was not a server's).
fn run(conn: &mut mysql::Conn, sql: &str, params: Option<&[mysql::Value]>) -> bool {
    let outcome = match params {
        None => conn.query_iter(sql).map(|r| r.count()),
        Some(params) => conn.prep(sql).and_then(|stmt| {
            let values: Vec<mysql::Value> = params
                .iter()
                .cycle()
                .take(stmt.num_params() as usize)
                .cloned()
                .collect();
            let values = if values.is_empty() {
                mysql::Params::Empty
            } else {
                mysql::Params::Positional(values)
            };
            let read = conn.exec_iter(&stmt, values).map(|r| r.count());
            let _ = conn.close(stmt);
            read
        }),
    };
    !matches!(outcome, Err(e) if !matches!(e, mysql::Error::MySqlError(_)))
}

#[test]
fn mutated_statements_never_end_the_server() {
    let cases: u32 = std::env::var("WATERLINE_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3_000);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(BIN)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args([
            "--user",
            "root",
            "--user",
            "fuzz",
            "--lock-wait-timeout",
            "1",
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut server = Server {
        child,
        port,
        log,
        _dir: dir,
    };
    let seeds: Vec<&str> = CORPUS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("--"))
        .collect();
    let mut conn = server.connect();
    for seed in &seeds {
        run(&mut conn, seed, None);
    }
    let started = Instant::now();
    let (lost, run_count) = (std::cell::Cell::new(0u32), std::cell::Cell::new(0u32));
    let conn = std::cell::RefCell::new(conn);
    let server = std::cell::RefCell::new(server);
    let strategy = (
        0..seeds.len(),
        proptest::collection::vec(mutation(), 1..4),
        proptest::option::weighted(0.25, proptest::collection::vec(param(), 1..4)),
    );
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        // Once the server is dead every case fails: shrinking would only blur the statement
        // that killed it.
        max_shrink_iters: 0,
        ..Config::default()
    });
    let result = runner.run(&strategy, |(seed, mutations, params)| {
        let sql = mutations
            .iter()
            .fold(seeds[seed].to_owned(), |sql, m| apply(&sql, m));
        run_count.set(run_count.get() + 1);
        let kept = run(&mut conn.borrow_mut(), &sql, params.as_deref());
        if !kept {
            // A dying server closes its sockets before it can be reaped.
            std::thread::sleep(Duration::from_millis(100));
        }
        let alive = server.borrow_mut().child.try_wait().unwrap().is_none();
        prop_assert!(alive, "the server died on: {sql:?} with {params:?}");
        if !kept {
            // The server closed this connection (KILL, wait_timeout, 1153...): it must still
            // be up and take a new one.
            lost.set(lost.get() + 1);
            *conn.borrow_mut() = server.borrow_mut().connect();
        }
        Ok::<(), TestCaseError>(())
    });
    let mut server = server.into_inner();
    let log_text = std::fs::read_to_string(&server.log).unwrap_or_default();
    eprintln!(
        "{} mutated statements in {:.1} s: {} connections lost and made again, the server \
         up: {}",
        run_count.get(),
        started.elapsed().as_secs_f64(),
        lost.get(),
        server.child.try_wait().unwrap().is_none()
    );
    let _ = server.child.kill();
    let _ = server.child.wait();
    result.unwrap();
    assert!(
        !log_text.contains("panic") && !log_text.contains("internal error"),
        "{log_text}"
    );
}
