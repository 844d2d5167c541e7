//! Crash tests that really kill: a child process (this test binary, running `crash_child`)
//! commits transfers on four threads and prints `ack <id>` after each commit returns; the
//! parent SIGKILLs it at a random moment, recovers the engine from the same directory, and
//! checks that every acknowledged commit is there and that no transaction is there in part.
//! The child also takes checkpoints, so kills land during checkpoints, during recovery (a
//! kill soon after a start), and during group commits. The rounds share one directory:
//! every start recovers what all the previous ones left.
//!
//! Each transfer moves `amount` from one account to another and inserts the same ledger row
//! into two tables. After recovery: both ledgers hold the same ids, and every balance is its
//! initial value plus what the ledger says moved in and out of it. A partly recovered
//! transaction would break one of the two.
//!
//! Both lock releases are tested. With `LockRelease::Early` the four threads' transfers over
//! ten accounts keep taking the locks of transfers whose commits are not durable yet, and
//! overwrite their balances: a transfer recovered without one it overwrote would leave a
//! balance the ledger does not explain.

mod common;

use common::Rng;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use waterline_txn::{
    Column, ColumnType, CommitConfig, Counter, Engine, EngineConfig, Isolation, Key, KeyRange,
    LockRelease, Table, TableSchema, TxnError,
};

const CHILD_ENV: &str = "WATERLINE_CRASH_CHILD";
/// `early` makes the child release locks early.
const RELEASE_ENV: &str = "WATERLINE_CRASH_RELEASE";
const ROUNDS: usize = 20;
const ACCOUNTS: i64 = 10;
const INITIAL: i64 = 1000;

fn config(lock_release: LockRelease) -> EngineConfig {
    EngineConfig {
        commit: CommitConfig {
            // Small segments, so checkpoints drop some and replay crosses several.
            segment_bytes: 16 << 10,
            lock_release,
            ..CommitConfig::default()
        },
        ..EngineConfig::default()
    }
}

fn ledger_schema(name: &str) -> TableSchema {
    TableSchema::new(
        name,
        vec![
            Column::new("id", ColumnType::BigInt),
            Column::new("from_id", ColumnType::Int),
            Column::new("to_id", ColumnType::Int),
            Column::new("amount", ColumnType::BigInt),
        ],
    )
    .primary_key(&["id"])
    .expect("the column exists")
}

/// The three tables, created (and the accounts funded, in one transaction) if missing.
fn tables(engine: &Engine) -> Result<[Table; 3], TxnError> {
    let table = |schema: TableSchema| match engine.table(&schema.name) {
        Ok(table) => Ok(table),
        Err(_) => engine.create_table(schema),
    };
    let accounts = table(common::account_schema())?;
    let ledger = table(ledger_schema("ledger"))?;
    let mirror = table(ledger_schema("ledger_mirror"))?;
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    if trx.scan(&accounts, KeyRange::All)?.is_empty() {
        for id in 0..ACCOUNTS {
            trx.insert(&accounts, vec![id.into(), INITIAL.into()])?;
        }
    }
    trx.commit()?;
    Ok([accounts, ledger, mirror])
}

fn transfer(
    engine: &Engine,
    [accounts, ledger, mirror]: &[Table; 3],
    id: i64,
    from: i64,
    to: i64,
    amount: i64,
) -> Result<(), TxnError> {
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    for (account, delta) in [(from, -amount), (to, amount)] {
        trx.update_with(accounts, Key::one(account), |row| {
            vec![
                row[0].clone(),
                (row[1].as_int().unwrap_or(0) + delta).into(),
            ]
        })?;
    }
    let row = vec![id.into(), from.into(), to.into(), amount.into()];
    trx.insert(ledger, row.clone())?;
    trx.insert(mirror, row)?;
    trx.commit()
}

/// The child: commits transfers until it is killed. Does nothing in a normal test run.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let release = match std::env::var(RELEASE_ENV).as_deref() {
        Ok("early") => LockRelease::Early,
        _ => LockRelease::AfterSync,
    };
    let (engine, _) = Engine::open_dir(&dir, config(release)).expect("recovery succeeds");
    let tables = tables(&engine).expect("the tables exist");
    let seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    std::thread::scope(|s| {
        for thread in 0..4u64 {
            let (engine, tables) = (&engine, &tables);
            s.spawn(move || {
                let mut rng = Rng::new(seed, thread + 1);
                // Ids are unique across rounds: the start time in ms (rounds are further
                // apart), the thread, a counter (below 2^22 in one round).
                let base = (((seed / 1_000_000) % (1 << 30)) << 26 | thread << 22) as i64;
                for n in 0.. {
                    let id = base | n;
                    let from = rng.below(ACCOUNTS as u64) as i64;
                    let to = (from + 1 + rng.below(ACCOUNTS as u64 - 1) as i64) % ACCOUNTS;
                    let amount = 1 + rng.below(100) as i64;
                    loop {
                        match transfer(engine, tables, id, from, to, amount) {
                            Ok(()) => break,
                            Err(e) if e.is_retryable() => continue,
                            Err(e) => panic!("transfer {id} failed: {e}"),
                        }
                    }
                    writeln!(std::io::stdout().lock(), "ack {id}").expect("the parent reads");
                    if thread == 0 && n % 300 == 299 {
                        engine.checkpoint().expect("the checkpoint succeeds");
                    }
                }
            });
        }
    });
}

/// Recovers `dir` in this process and checks it against the acknowledged ids.
fn check(dir: &Path, acked: &BTreeSet<i64>, round: usize) -> usize {
    let (engine, recovery) =
        Engine::open_dir(dir, config(LockRelease::AfterSync)).expect("recovery succeeds");
    let table = |name: &str| engine.table(name);
    let Ok(tables) =
        (|| Ok::<_, TxnError>([table("account")?, table("ledger")?, table("ledger_mirror")?]))()
    else {
        assert!(
            acked.is_empty(),
            "round {round}: acked commits but no tables"
        );
        return 0;
    };
    let [accounts, ledger, mirror] = tables;
    let mut trx = engine.begin_with(Isolation::RepeatableRead);
    let rows = |trx: &mut waterline_txn::Transaction, t: &Table| {
        trx.scan(t, KeyRange::All).expect("a scan succeeds")
    };
    let ledger_rows = rows(&mut trx, &ledger);
    let mirror_rows = rows(&mut trx, &mirror);
    assert_eq!(
        ledger_rows, mirror_rows,
        "round {round}: the two ledgers differ"
    );
    let ids: BTreeSet<i64> = ledger_rows
        .iter()
        .map(|(k, _)| k.values()[0].as_int().unwrap())
        .collect();
    let lost: Vec<_> = acked.difference(&ids).collect();
    assert!(
        lost.is_empty(),
        "round {round}: acknowledged but lost: {lost:?} ({recovery})"
    );

    let balances = rows(&mut trx, &accounts);
    if balances.is_empty() {
        assert!(ids.is_empty(), "round {round}: transfers without accounts");
        return 0;
    }
    let mut expected: BTreeMap<i64, i64> = (0..ACCOUNTS).map(|a| (a, INITIAL)).collect();
    for (_, row) in &ledger_rows {
        let [from, to, amount] = [1, 2, 3].map(|c| row[c].as_int().unwrap());
        *expected.get_mut(&from).unwrap() -= amount;
        *expected.get_mut(&to).unwrap() += amount;
    }
    let actual: BTreeMap<i64, i64> = balances
        .iter()
        .map(|(_, row)| (row[0].as_int().unwrap(), row[1].as_int().unwrap()))
        .collect();
    assert_eq!(
        actual, expected,
        "round {round}: balances disagree with the ledger"
    );
    ids.len()
}

#[test]
fn sigkill_loses_no_acknowledged_commit_and_leaves_no_partial_one() {
    assert_eq!(kill_and_recover(LockRelease::AfterSync), 0);
}

#[test]
fn with_early_lock_release_sigkill_loses_nothing_acknowledged_and_nothing_it_built_on() {
    let early_releases = kill_and_recover(LockRelease::Early);
    assert!(early_releases > 0, "the rounds released no lock early");
}

/// The rounds, then a short run of the same transfers in this process on what they left
/// (the killed children's counters die with them): returns how many of its transactions
/// released their locks early.
fn kill_and_recover(release: LockRelease) -> u64 {
    let dir = common::temp_dir("crash");
    let seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(7, |d| d.as_nanos() as u64)
        | 1;
    let mut rng = Rng::new(seed, 0);
    let started = Instant::now();
    let mut acked = BTreeSet::new();
    let mut recovered = 0;
    for round in 0..ROUNDS {
        let mut child = Command::new(std::env::current_exe().expect("the test binary"))
            .args([
                "crash_child",
                "--exact",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD_ENV, dir.path())
            .env(RELEASE_ENV, release.name())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the child starts");
        let stdout = child.stdout.take().expect("piped");
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .filter_map(|line| line.strip_prefix("ack ")?.parse::<i64>().ok())
                .collect::<Vec<_>>()
        });
        // From "still recovering" to "a few thousand commits in".
        std::thread::sleep(Duration::from_millis(20 + rng.below(400)));
        let exited = child.try_wait().expect("the child can be polled");
        child.kill().expect("SIGKILL is delivered");
        child.wait().expect("the child is reaped");
        let mut stderr = String::new();
        let _ = child
            .stderr
            .take()
            .expect("piped")
            .read_to_string(&mut stderr);
        assert!(
            exited.is_none(),
            "round {round} (seed {seed}): the child exited by itself: {stderr}"
        );
        acked.extend(reader.join().expect("the reader thread"));
        recovered = check(dir.path(), &acked, round);
    }
    assert!(
        !acked.is_empty(),
        "no commit was ever acknowledged (seed {seed})"
    );
    assert!(recovered >= acked.len());
    assert!(started.elapsed() < Duration::from_secs(300), "bounded time");
    eprintln!(
        "{ROUNDS} kills in {:.1?} ({}): {} commits acknowledged, all recovered (seed {seed})",
        started.elapsed(),
        release.name(),
        acked.len()
    );
    // The same workload in this process for a moment, to see what its commits did.
    let (engine, _) = Engine::open_dir(dir.path(), config(release)).expect("recovery succeeds");
    let tables = tables(&engine).expect("the tables exist");
    std::thread::scope(|s| {
        for thread in 0..4i64 {
            let (engine, tables) = (&engine, &tables);
            s.spawn(move || {
                for n in 0..200 {
                    let id = -(thread << 22 | n) - 1;
                    let from = (thread + n) % ACCOUNTS;
                    while let Err(e) = transfer(engine, tables, id, from, (from + 1) % ACCOUNTS, 1)
                    {
                        assert!(e.is_retryable(), "transfer {id} failed: {e}");
                    }
                }
            });
        }
    });
    engine.stats().get(Counter::EarlyLockReleases)
}
