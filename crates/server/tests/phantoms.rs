//! Next-key locks and SERIALIZABLE over the protocol, with the Rust `mysql` crate: a locking
//! read under REPEATABLE READ keeps new rows out of what it read (through the primary key
//! or a secondary index), READ COMMITTED does not, and a bank whose transfers read balances
//! with plain SELECTs under SERIALIZABLE never loses money.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use waterline_server::{Server, SessionConfig, Shared};
use waterline_txn::{Engine, EngineConfig, Rng};

fn start() -> u16 {
    let config = EngineConfig {
        lock_wait_timeout: Duration::from_secs(10),
        ..EngineConfig::default()
    };
    let engine = Arc::new(Engine::open(config).unwrap());
    let shared = Shared::new(engine, SessionConfig::default());
    Server::new(shared, 32)
        .spawn("127.0.0.1:0".parse().unwrap())
        .unwrap()
        .port()
}

fn connect(port: u16) -> Conn {
    let url = format!("mysql://root@127.0.0.1:{port}/waterline");
    Conn::new(Opts::from_url(&url).unwrap()).unwrap()
}

fn code(result: Result<(), mysql::Error>) -> Option<u16> {
    match result {
        Ok(()) => None,
        Err(mysql::Error::MySqlError(e)) => Some(e.code),
        Err(other) => panic!("not a server error: {other}"),
    }
}

/// A connection that gives up on a lock after one second.
fn impatient(port: u16) -> Conn {
    let mut c = connect(port);
    c.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    c
}

fn ids(c: &mut Conn, sql: &str) -> Vec<i32> {
    c.query(sql).unwrap()
}

#[test]
fn a_locking_read_keeps_phantoms_out_under_repeatable_read_only() {
    let port = start();
    let mut a = connect(port);
    a.query_drop("CREATE TABLE t (id INT PRIMARY KEY, grp INT, KEY by_grp (grp))")
        .unwrap();
    a.query_drop("INSERT INTO t VALUES (10, 1), (20, 2), (40, 4)")
        .unwrap();
    // Rows enough that the planner reads ranges, not the whole (covering) index.
    let filler: Vec<String> = (100..300).map(|i| format!("({i}, {i})")).collect();
    a.query_drop(format!("INSERT INTO t VALUES {}", filler.join(", ")))
        .unwrap();
    let mut b = impatient(port);
    let range = "SELECT id FROM t WHERE id BETWEEN 10 AND 30 FOR UPDATE";
    a.query_drop("BEGIN").unwrap();
    assert_eq!(ids(&mut a, range), [10, 20]);
    for id in [30, 15, 5] {
        let insert = format!("INSERT INTO t VALUES ({id}, 9)");
        assert_eq!(code(b.query_drop(&insert)), Some(1205), "{insert}");
    }
    assert_eq!(
        code(b.query_drop("INSERT INTO t VALUES (50, 9)")),
        None,
        "above 40"
    );
    assert_eq!(ids(&mut a, range), [10, 20], "no phantom");
    a.query_drop("COMMIT").unwrap();
    assert_eq!(code(b.query_drop("INSERT INTO t VALUES (30, 3)")), None);

    // Through the secondary index: the group and the gaps around it.
    let group = "SELECT id FROM t WHERE grp = 2 FOR UPDATE";
    a.query_drop("BEGIN").unwrap();
    assert_eq!(ids(&mut a, group), [20]);
    for (id, grp) in [(21, 2), (22, 1), (23, 3)] {
        let insert = format!("INSERT INTO t VALUES ({id}, {grp})");
        assert_eq!(code(b.query_drop(&insert)), Some(1205), "{insert}");
    }
    let moving = "UPDATE t SET grp = 2 WHERE id = 40";
    assert_eq!(code(b.query_drop(moving)), Some(1205), "{moving}");
    assert_eq!(ids(&mut a, group), [20], "no phantom");
    a.query_drop("COMMIT").unwrap();

    // READ COMMITTED locks the rows it reads, not the gaps: the phantom appears.
    a.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
        .unwrap();
    a.query_drop("BEGIN").unwrap();
    assert_eq!(ids(&mut a, range), [10, 20, 30]);
    assert_eq!(code(b.query_drop("INSERT INTO t VALUES (25, 9)")), None);
    assert_eq!(ids(&mut a, range), [10, 20, 25, 30]);
    a.query_drop("COMMIT").unwrap();
}

/// Two transactions that each read a missing key FOR UPDATE (gap locks, which never conflict)
/// and then insert into that gap wait for each other: one is chosen as the deadlock's
/// victim (1213), and the other's insert goes in.
#[test]
fn two_inserters_into_a_gap_they_both_locked_deadlock() {
    let port = start();
    let mut a = connect(port);
    a.query_drop("CREATE TABLE t (id INT PRIMARY KEY)").unwrap();
    a.query_drop("INSERT INTO t VALUES (10), (20)").unwrap();
    let mut b = connect(port);
    for (c, id) in [(&mut a, 15), (&mut b, 16)] {
        c.query_drop("BEGIN").unwrap();
        let read = format!("SELECT id FROM t WHERE id = {id} FOR UPDATE");
        assert!(ids(c, &read).is_empty());
    }
    let first = std::thread::spawn(move || {
        let result = a.query_drop("INSERT INTO t VALUES (15)");
        (a, result)
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(code(b.query_drop("INSERT INTO t VALUES (16)")), Some(1213));
    let (mut a, inserted) = first.join().unwrap();
    inserted.unwrap();
    a.query_drop("COMMIT").unwrap();
    assert_eq!(ids(&mut b, "SELECT id FROM t ORDER BY id"), [10, 15, 20]);
}

/// Transfers that read both balances with plain SELECTs and write back what they computed:
/// under REPEATABLE READ two of them can read the same balance and one update is lost;
/// under SERIALIZABLE the SELECTs lock FOR SHARE, so the loser of a race gets a deadlock
/// (1213) and retries, and the total never changes, as an auditor's SERIALIZABLE SUM sees
/// throughout.
#[test]
fn a_serializable_bank_keeps_its_total() {
    const ACCOUNTS: i64 = 8;
    let port = start();
    let mut setup = connect(port);
    setup
        .query_drop("CREATE TABLE account (id INT PRIMARY KEY, balance BIGINT)")
        .unwrap();
    let values: Vec<String> = (0..ACCOUNTS).map(|i| format!("({i}, 1000)")).collect();
    setup
        .query_drop(format!("INSERT INTO account VALUES {}", values.join(", ")))
        .unwrap();
    let stop = AtomicBool::new(false);
    let (transfers, retries, audits) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        for worker in 0..4u64 {
            let (stop, transfers, retries) = (&stop, &transfers, &retries);
            s.spawn(move || {
                let mut c = connect(port);
                c.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE")
                    .unwrap();
                let mut rng = Rng::new(0xBA2C, worker);
                while !stop.load(Ordering::Relaxed) {
                    let from = rng.uniform(0, ACCOUNTS - 1);
                    let to = (from + rng.uniform(1, ACCOUNTS - 1)) % ACCOUNTS;
                    let amount = rng.uniform(0, 49);
                    match transfer(&mut c, from, to, amount) {
                        Ok(()) => transfers.fetch_add(1, Ordering::Relaxed),
                        Err(1213 | 1205) => retries.fetch_add(1, Ordering::Relaxed),
                        Err(other) => panic!("transfer: error {other}"),
                    };
                }
            });
        }
        let (stop, audits) = (&stop, &audits);
        s.spawn(move || {
            let mut c = connect(port);
            c.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE")
                .unwrap();
            while !stop.load(Ordering::Relaxed) {
                c.query_drop("BEGIN").unwrap();
                let total: Result<Option<i64>, _> =
                    c.query_first("SELECT SUM(balance) FROM account");
                match total {
                    Ok(total) => {
                        assert_eq!(total, Some(ACCOUNTS * 1000), "the audit's total");
                        audits.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(mysql::Error::MySqlError(e)) if [1213, 1205].contains(&e.code) => {}
                    Err(other) => panic!("audit: {other}"),
                }
                c.query_drop("ROLLBACK").unwrap();
            }
        });
        std::thread::sleep(Duration::from_secs(3));
        stop.store(true, Ordering::Relaxed);
    });
    let total: Option<i64> = setup
        .query_first("SELECT SUM(balance) FROM account")
        .unwrap();
    assert_eq!(total, Some(ACCOUNTS * 1000));
    assert!(transfers.load(Ordering::Relaxed) > 20, "transfers ran");
    assert!(audits.load(Ordering::Relaxed) > 0, "audits ran");
}

/// One transfer in its own transaction, balances read without FOR UPDATE; the error code
/// of a statement that failed (the transaction is rolled back then).
fn transfer(c: &mut Conn, from: i64, to: i64, amount: i64) -> Result<(), u16> {
    let attempt = |c: &mut Conn| -> Result<(), mysql::Error> {
        c.query_drop("BEGIN")?;
        let read = |c: &mut Conn, id: i64| -> Result<i64, mysql::Error> {
            let sql = format!("SELECT balance FROM account WHERE id = {id}");
            Ok(c.query_first(sql)?.expect("every account exists"))
        };
        let (a, b) = (read(c, from)?, read(c, to)?);
        c.query_drop(format!(
            "UPDATE account SET balance = {} WHERE id = {from}",
            a - amount
        ))?;
        c.query_drop(format!(
            "UPDATE account SET balance = {} WHERE id = {to}",
            b + amount
        ))?;
        c.query_drop("COMMIT")
    };
    let result = attempt(c);
    if result.is_err() {
        c.query_drop("ROLLBACK").unwrap();
    }
    match result {
        Ok(()) => Ok(()),
        Err(mysql::Error::MySqlError(e)) => Err(e.code),
        Err(other) => panic!("transfer: {other}"),
    }
}

/// `performance_schema.data_locks` shows the next-key locks of a locking range read, the
/// gap lock past it and the insert that waits for it; `data_lock_waits` says who waits for
/// whom.
#[test]
fn data_locks_shows_what_blocks() {
    let port = start();
    let mut a = connect(port);
    a.query_drop("CREATE TABLE t (id INT PRIMARY KEY)").unwrap();
    a.query_drop("INSERT INTO t VALUES (10), (20), (30)")
        .unwrap();
    let filler: Vec<String> = (100..300).map(|i| format!("({i})")).collect();
    a.query_drop(format!("INSERT INTO t VALUES {}", filler.join(", ")))
        .unwrap();
    a.query_drop("BEGIN").unwrap();
    assert_eq!(
        ids(
            &mut a,
            "SELECT id FROM t WHERE id BETWEEN 10 AND 20 FOR UPDATE"
        ),
        [10, 20]
    );
    let a_trx: u64 = {
        let mut c = connect(port);
        let rows: Vec<u64> = c
            .query("SELECT DISTINCT ENGINE_TRANSACTION_ID FROM performance_schema.data_locks")
            .unwrap();
        assert_eq!(rows.len(), 1, "one transaction holds locks");
        rows[0]
    };
    let mut b = connect(port);
    let waiter = std::thread::spawn(move || b.query_drop("INSERT INTO t VALUES (15)"));
    std::thread::sleep(Duration::from_millis(300));
    let mut c = connect(port);
    let locks: Vec<(u64, String, String, String, String, String)> = c
        .query(
            "SELECT ENGINE_TRANSACTION_ID, OBJECT_NAME, INDEX_NAME, LOCK_MODE, LOCK_STATUS, \
             LOCK_DATA FROM performance_schema.data_locks ORDER BY LOCK_STATUS, LOCK_DATA",
        )
        .unwrap();
    let shown: Vec<(bool, &str, &str, &str, &str)> = locks
        .iter()
        .map(|(trx, table, index, mode, status, data)| {
            let _ = status;
            (
                *trx == a_trx,
                table.as_str(),
                index.as_str(),
                mode.as_str(),
                data.as_str(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (true, "t", "PRIMARY", "X", "10"),
            (true, "t", "PRIMARY", "X", "20"),
            (true, "t", "PRIMARY", "X,GAP", "30"),
            (false, "t", "PRIMARY", "X,GAP,INSERT_INTENTION", "20"),
        ],
        "{locks:?}"
    );
    assert_eq!(locks[3].4, "WAITING");
    let waits: Vec<(u64, u64)> = c
        .query(
            "SELECT REQUESTING_ENGINE_TRANSACTION_ID, BLOCKING_ENGINE_TRANSACTION_ID \
             FROM performance_schema.data_lock_waits",
        )
        .unwrap();
    assert_eq!(waits.len(), 1);
    assert_eq!(waits[0].0, locks[3].0);
    assert_eq!(waits[0].1, a_trx);
    a.query_drop("COMMIT").unwrap();
    waiter.join().unwrap().unwrap();
    let left: Option<u64> = c
        .query_first("SELECT COUNT(*) FROM performance_schema.data_locks")
        .unwrap();
    assert_eq!(left, Some(0), "every lock released");
    assert_eq!(
        code(c.query_drop("SELECT * FROM performance_schema.no_such_table")),
        Some(1146)
    );
}
