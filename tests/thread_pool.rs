//! `waterline serve --thread-handling pool-of-threads` as a process: 2,000 connections
//! served by a few threads (counted in `/proc`) with none starved, a row lock wait that
//! lets the holder's COMMIT run at once, and idle connections timed out and killed while
//! they hold no thread.

#![allow(clippy::print_stderr)]

mod common;

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::{connect_to, free_port};
use mysql::prelude::Queryable;

/// `waterline serve` with the thread pool and `extra` flags; killed when dropped.
struct Pooled {
    child: Child,
    port: u16,
}

impl Pooled {
    fn start(extra: &[&str]) -> Pooled {
        let port = free_port();
        let child = Command::new(common::BIN)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--thread-handling", "pool-of-threads"])
            .args(extra)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let server = Pooled { child, port };
        drop(server.connect());
        server
    }

    fn connect(&self) -> mysql::Conn {
        connect_to(self.port, Some("waterline"))
    }

    /// The server's threads now, from `/proc`.
    fn threads(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/task", self.child.id())).map_or(0, Iterator::count)
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn status(c: &mut mysql::Conn, name: &str) -> u64 {
    let row: (String, u64) = c
        .query_first(format!("SHOW STATUS LIKE '{name}'"))
        .unwrap()
        .unwrap();
    row.1
}

const CONNECTIONS: usize = 2_000;
/// The pool's threads at most (`--thread-pool-max-threads`).
const MAX_THREADS: usize = 32;

#[test]
fn two_thousand_connections_run_on_a_few_threads_and_every_statement_completes() {
    // This process holds a socket and a thread per connection.
    let mut limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let wanted = (CONNECTIONS * 2 + 256) as u64;
    if limit.current.is_some_and(|c| c < wanted) {
        limit.current = Some(limit.maximum.map_or(wanted, |m| m.min(wanted)));
        rustix::process::setrlimit(rustix::process::Resource::Nofile, limit).unwrap();
    }
    // Under row-lock waits the pool makes a thread per waiting statement (as MariaDB's):
    // the bound is thread_pool_max_threads.
    let server = Pooled::start(&[
        "--thread-pool-size",
        "2",
        "--thread-pool-max-threads",
        &MAX_THREADS.to_string(),
        "--max-connections",
        &(CONNECTIONS + 50).to_string(),
        "--lock-wait-timeout",
        "120",
    ]);
    let mut admin = server.connect();
    admin
        .query_drop("CREATE TABLE own (id INT PRIMARY KEY, n INT NOT NULL)")
        .unwrap();
    admin
        .query_drop("CREATE TABLE hot (id INT PRIMARY KEY, n INT NOT NULL)")
        .unwrap();
    let rows: Vec<String> = (0..CONNECTIONS).map(|i| format!("({i}, 0)")).collect();
    admin
        .query_drop(format!("INSERT INTO own VALUES {}", rows.join(",")))
        .unwrap();
    admin
        .query_drop("INSERT INTO hot VALUES (0, 0), (1, 0), (2, 0), (3, 0)")
        .unwrap();
    let idle_threads = server.threads();

    let start = Arc::new(Barrier::new(CONNECTIONS + 1));
    let done = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..CONNECTIONS)
        .map(|i| {
            let (start, done, port) = (Arc::clone(&start), Arc::clone(&done), server.port);
            std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(move || {
                    let mut c = connect_to(port, Some("waterline"));
                    start.wait();
                    // A transaction of its own row, and a hot row (lock waits) in autocommit.
                    c.query_drop("BEGIN").unwrap();
                    c.query_drop(format!("UPDATE own SET n = n + 1 WHERE id = {i}"))
                        .unwrap();
                    let n: Option<i64> = c
                        .query_first(format!("SELECT n FROM own WHERE id = {i}"))
                        .unwrap();
                    assert_eq!(n, Some(1));
                    c.query_drop("COMMIT").unwrap();
                    c.query_drop(format!("UPDATE hot SET n = n + 1 WHERE id = {}", i % 4))
                        .unwrap();
                    done.fetch_add(1, Ordering::Relaxed);
                    // Stay connected until every client is done: the pool serves them all.
                    c
                })
                .unwrap()
        })
        .collect();
    // Every client has connected and logged in once all pass the barrier.
    start.wait();
    let connected_threads = server.threads();
    let sampling = Arc::new(AtomicBool::new(true));
    let most = Arc::new(AtomicUsize::new(connected_threads));
    let sampler = {
        let (sampling, most, pid) = (Arc::clone(&sampling), Arc::clone(&most), server.child.id());
        std::thread::spawn(move || {
            while sampling.load(Ordering::Relaxed) {
                let n = std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count);
                most.fetch_max(n, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let began = Instant::now();
    let connections: Vec<mysql::Conn> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    sampling.store(false, Ordering::Relaxed);
    sampler.join().unwrap();
    let most = most.load(Ordering::Relaxed);
    let pool_threads = status(&mut admin, "Threadpool_threads");
    eprintln!(
        "{CONNECTIONS} connections: server threads {idle_threads} before they connected, \
         {connected_threads} once connected, at most {most} while they ran ({:.1} s); \
         Threadpool_threads {pool_threads}",
        began.elapsed().as_secs_f64()
    );
    assert_eq!(done.load(Ordering::Relaxed), CONNECTIONS);
    let own: i64 = admin
        .query_first("SELECT SUM(n) FROM own")
        .unwrap()
        .unwrap();
    let hot: i64 = admin
        .query_first("SELECT SUM(n) FROM hot")
        .unwrap()
        .unwrap();
    assert_eq!((own, hot), (CONNECTIONS as i64, CONNECTIONS as i64));
    assert_eq!(
        status(&mut admin, "Threads_connected"),
        CONNECTIONS as u64 + 1
    );
    // Connected and idle, 2,000 connections hold no thread (a listener per group at
    // most); running, the pool's at most, beside the server's own few.
    assert!(
        connected_threads <= idle_threads + 2,
        "{connected_threads} threads for idle connections (from {idle_threads})"
    );
    assert!(
        most <= idle_threads + MAX_THREADS,
        "{most} threads for {CONNECTIONS} connections"
    );
    assert!(pool_threads <= MAX_THREADS as u64, "{pool_threads}");
    drop(connections);
}

#[test]
fn a_statement_waiting_for_a_row_lock_lets_the_holders_commit_run_at_once() {
    // One group, and a stall limit no test waits for: only the wait's hand-off can run the
    // holder's COMMIT while the waiter's statement occupies the group.
    let server = Pooled::start(&[
        "--thread-pool-size",
        "1",
        "--thread-pool-oversubscribe",
        "0",
        "--thread-pool-stall-limit",
        "600000",
    ]);
    let mut holder = server.connect();
    holder
        .query_drop("CREATE TABLE t (id INT PRIMARY KEY, n INT NOT NULL)")
        .unwrap();
    holder.query_drop("INSERT INTO t VALUES (1, 0)").unwrap();
    holder.query_drop("BEGIN").unwrap();
    holder
        .query_drop("UPDATE t SET n = 1 WHERE id = 1")
        .unwrap();
    let port = server.port;
    let waiter = std::thread::spawn(move || {
        let mut c = connect_to(port, Some("waterline"));
        c.query_drop("SET innodb_lock_wait_timeout = 60").unwrap();
        let began = Instant::now();
        c.query_drop("UPDATE t SET n = n + 10 WHERE id = 1")
            .unwrap();
        began.elapsed()
    });
    std::thread::sleep(Duration::from_millis(500));
    let began = Instant::now();
    holder.query_drop("COMMIT").unwrap();
    let commit = began.elapsed();
    let waited = waiter.join().unwrap();
    let n: i64 = holder
        .query_first("SELECT n FROM t WHERE id = 1")
        .unwrap()
        .unwrap();
    assert_eq!(n, 11);
    assert!(commit < Duration::from_secs(5), "COMMIT took {commit:?}");
    assert!(
        waited < Duration::from_secs(10),
        "the waiter took {waited:?}"
    );
}

#[test]
fn an_idle_pooled_connection_times_out_and_can_be_killed() {
    let server = Pooled::start(&["--thread-pool-size", "1"]);
    let mut idle = server.connect();
    idle.query_drop("SET SESSION wait_timeout = 1").unwrap();
    std::thread::sleep(Duration::from_millis(2_500));
    // The server sent 4031 and closed; the `mysql` crate, reading that packet as the
    // reply's, says its sequence number is wrong.
    let e = idle.query_drop("SELECT 1").unwrap_err();
    eprintln!("after wait_timeout: {e}");

    let mut victim = server.connect();
    let id: u64 = victim
        .query_first("SELECT CONNECTION_ID()")
        .unwrap()
        .unwrap();
    let mut admin = server.connect();
    admin.query_drop(format!("KILL {id}")).unwrap();
    assert!(victim.query_drop("SELECT 1").is_err());
    let deadline = Instant::now() + Duration::from_secs(5);
    while status(&mut admin, "Threads_connected") != 1 {
        assert!(Instant::now() < deadline, "the killed connection stayed");
        std::thread::sleep(Duration::from_millis(50));
    }
}
