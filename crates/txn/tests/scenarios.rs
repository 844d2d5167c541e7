//! Isolation scenarios that read like documentation: each file in `tests/scenarios/` is a
//! goldenscript of session commands with the engine's recorded answers under each block.
//! Every script runs for every snapshot kind and both view-close modes, and must produce the
//! same text. `UPDATE_GOLDENFILES=1 cargo test -p waterline-txn --test scenarios` rewrites the
//! files from what the engine answers now; review the diff with `git diff`.
//!
//! ```text
//! # A comment.
//! t1: begin rc
//! t1: get 1
//! ---
//! t1: ok
//! t1: (1, 100, NULL)
//! ```
//!
//! Each session (`t1`, `t2`, ... the command's prefix) runs in its own thread, so a command
//! that waits for a row lock prints `waiting` and its answer appears at the end of the block
//! of the command that released it. Trx ids are printed as the session that owns them, so
//! the output does not depend on id numbering. A `[stats]` tag before a command prints the
//! engine counters it moved (views opened and closed, bytes copied into views, trx-sys latch
//! acquisitions, lock waits, deadlocks, ...), so a script shows each mechanism at work.
//!
//! The table is `t(id INT PRIMARY KEY, v BIGINT, tag VARCHAR(8) NULL UNIQUE)`.
//!
//! Commands: `tN: begin rc|rr|serializable` (SERIALIZABLE: REPEATABLE READ whose `get` and
//! `scan LO HI` lock FOR SHARE, as InnoDB's plain SELECTs in a transaction do), `tN: get
//! ID`, `tN: get_for_update ID`, `tN: get_for_share ID`, `tN: scan [LO HI]`, `tN:
//! scan_for_update LO HI`, `tN: scan_skip_locked LO HI LIMIT|all` and `tN: scan_nowait LO HI
//! LIMIT|all` (FOR UPDATE SKIP LOCKED / NOWAIT), `tN: insert ID V [TAG]`, `tN: set ID V`, `tN:
//! add ID DELTA` (a negative DELTA in quotes), `tN: delete ID`, `tN: commit`, `tN: rollback`,
//! `tN: statement "CMD; CMD..."` (one statement); `purge`, `wait` (until every waiting
//! session has answered), `engine snapshot=vector|hybrid|csn view_close=latched|latch-free
//! [lock_release=after-sync|early sync_delay_ms=N]` (starts over on a fresh engine of that
//! kind, whatever the test runs; with `lock_release`, a durable one in a temporary directory
//! whose group commit waits `sync_delay_ms` before each sync, so a commit shows as waiting
//! while its record is in the log and not yet durable).

use std::collections::BTreeMap;
use std::error::Error;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use waterline_txn::{
    Column, ColumnType, Counter, Engine, EngineConfig, Isolation, Key, KeyRange, LockMode,
    LockRelease, LockWait, ReadOptions, SnapshotKind, StatsSnapshot, Table, TableSchema,
    Transaction, TrxId, TxnError, Value, ViewClose, copy_keyed_row, copy_row,
};

/// How long a command may take before it is reported as waiting.
const BLOCKED_AFTER: Duration = Duration::from_millis(150);

/// A durable engine's lock release and sync delay, and its directory.
type Durable = (LockRelease, Duration, tempfile::TempDir);

fn engine(
    snapshot: SnapshotKind,
    view_close: ViewClose,
    durable: Option<&Durable>,
) -> (Arc<Engine>, Table) {
    let mut config = EngineConfig {
        snapshot,
        view_close,
        lock_wait_timeout: Duration::from_millis(600),
        purge_interval: None,
        ..EngineConfig::default().with_tiny_windows()
    };
    let engine = match durable {
        None => Engine::open(config).unwrap(),
        Some((release, delay, dir)) => {
            config.commit.lock_release = *release;
            config.commit.group.sync_delay = *delay;
            Engine::open_dir(dir.path(), config).unwrap().0
        }
    };
    let schema = TableSchema::new(
        "t",
        vec![
            Column::new("id", ColumnType::Int),
            Column::new("v", ColumnType::BigInt),
            Column::nullable("tag", ColumnType::Varchar(8)),
        ],
    )
    .primary_key(&["id"])
    .unwrap()
    .index("tag", &["tag"], true)
    .unwrap();
    let table = engine.create_table(schema).unwrap();
    (Arc::new(engine), table)
}

/// What a session thread answers: the lines to print, and its trx id now.
type Answer = (Vec<String>, Option<TrxId>);

struct Session {
    commands: Sender<String>,
    answers: Receiver<Answer>,
    waiting: bool,
}

fn spawn_session(engine: Arc<Engine>, table: Table) -> Session {
    let (commands, inbox) = channel::<String>();
    let (outbox, answers) = channel();
    std::thread::spawn(move || {
        let mut trx: Option<Transaction> = None;
        let mut serializable = false;
        for command in inbox {
            let lines = run(&engine, &table, (&mut trx, &mut serializable), &command);
            let id = trx.as_ref().and_then(Transaction::id);
            if outbox.send((lines, id)).is_err() {
                break;
            }
        }
    });
    Session {
        commands,
        answers,
        waiting: false,
    }
}

fn value(word: &str) -> Value {
    match word.parse::<i64>() {
        Ok(n) => Value::Int(n),
        Err(_) if word.eq_ignore_ascii_case("null") => Value::Null,
        Err(_) => Value::from(word.trim_matches('\'')),
    }
}

fn row_text(row: &[Value]) -> String {
    Key::from(row).to_string()
}

/// Runs one session command; the lines it answers (errors included).
fn run(
    engine: &Engine,
    t: &Table,
    (trx, serializable): (&mut Option<Transaction>, &mut bool),
    command: &str,
) -> Vec<String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    if let ["begin", level] = words[..] {
        let isolation = match level {
            "rr" | "serializable" => Isolation::RepeatableRead,
            _ => Isolation::ReadCommitted,
        };
        *serializable = level == "serializable";
        *trx = Some(engine.begin_with(isolation));
        return vec!["ok".into()];
    }
    let serializable = *serializable;
    let Some(current) = trx.as_mut() else {
        return vec!["no transaction".into()];
    };
    let result = match words[..] {
        ["commit"] => trx
            .take()
            .unwrap()
            .commit()
            .map(|()| vec!["committed".into()]),
        ["rollback"] => {
            trx.take().unwrap().rollback();
            Ok(vec!["rolled back".into()])
        }
        ["statement", ..] => {
            let body = command.trim_start_matches("statement").to_owned();
            current.statement(|trx| {
                let mut lines = Vec::new();
                for part in body.split(';') {
                    let words: Vec<&str> = part.split_whitespace().collect();
                    lines.extend(step(trx, t, &words, serializable)?);
                }
                Ok(lines)
            })
        }
        _ => step(current, t, &words, serializable),
    };
    match result {
        Ok(lines) => lines,
        Err(error) => {
            if error.rolled_back_transaction() {
                *trx = None;
            }
            vec![format!("error: {}", describe(&error))]
        }
    }
}

/// One command; with `serializable`, plain reads lock FOR SHARE, as InnoDB's SERIALIZABLE
/// makes them (it is REPEATABLE READ otherwise).
fn step(
    trx: &mut Transaction,
    t: &Table,
    words: &[&str],
    serializable: bool,
) -> Result<Vec<String>, TxnError> {
    let found = |ok: bool| vec![if ok { "ok" } else { "not found" }.to_owned()];
    let rows = |rows: Vec<(Key, Vec<Value>)>| {
        if rows.is_empty() {
            vec!["(no rows)".to_owned()]
        } else {
            rows.iter().map(|(_, row)| row_text(row)).collect()
        }
    };
    let one = |row: Option<Vec<Value>>| vec![row.map_or("not found".into(), |r| row_text(&r))];
    let between = |lo: &str, hi: &str| {
        KeyRange::Between(
            Bound::Included(Key::one(value(lo))),
            Bound::Included(Key::one(value(hi))),
        )
    };
    Ok(match *words {
        ["get", id] if serializable => {
            one(trx.get_with(t, Key::one(value(id)), ReadOptions::FOR_SHARE, copy_row)?)
        }
        ["scan", lo, hi] if serializable => {
            let options = ReadOptions {
                lock: Some(LockMode::Shared),
                ..ReadOptions::default()
            };
            rows(trx.scan_with(t, between(lo, hi), options, copy_keyed_row)?)
        }
        ["get", id] => one(trx.get(t, Key::one(value(id)))?),
        ["get_for_update", id] => {
            one(trx.get_with(t, Key::one(value(id)), ReadOptions::FOR_UPDATE, copy_row)?)
        }
        ["get_for_share", id] => {
            one(trx.get_with(t, Key::one(value(id)), ReadOptions::FOR_SHARE, copy_row)?)
        }
        ["scan"] => rows(trx.scan(t, KeyRange::All)?),
        ["scan", lo, hi] => rows(trx.scan(t, between(lo, hi))?),
        ["scan_for_update", lo, hi] => {
            let options = ReadOptions {
                lock: Some(LockMode::Exclusive),
                ..ReadOptions::default()
            };
            rows(trx.scan_with(t, between(lo, hi), options, copy_keyed_row)?)
        }
        [kind @ ("scan_skip_locked" | "scan_nowait"), lo, hi, limit] => {
            let options = ReadOptions {
                lock: Some(LockMode::Exclusive),
                wait: if kind == "scan_nowait" {
                    LockWait::NoWait
                } else {
                    LockWait::SkipLocked
                },
                limit: (limit != "all").then(|| limit.parse().expect("a row count")),
                ..ReadOptions::default()
            };
            rows(trx.scan_with(t, between(lo, hi), options, copy_keyed_row)?)
        }
        ["insert", id, v] => trx
            .insert(t, vec![value(id), value(v), Value::Null])
            .map(|_| found(true))?,
        ["insert", id, v, tag] => trx
            .insert(t, vec![value(id), value(v), value(tag)])
            .map(|_| found(true))?,
        ["set", id, v] => found(trx.update_with(t, Key::one(value(id)), |row| {
            vec![row[0].clone(), value(v), row[2].clone()]
        })?),
        ["add", id, delta] => found(trx.update_with(t, Key::one(value(id)), |row| {
            let sum = row[1].as_int().unwrap() + value(delta).as_int().unwrap();
            vec![row[0].clone(), sum.into(), row[2].clone()]
        })?),
        ["delete", id] => found(trx.delete(t, Key::one(value(id)))?),
        _ => vec![format!("unknown command {words:?}")],
    })
}

/// The error with trx ids left for the runner to name (`trx#N`).
fn describe(error: &TxnError) -> String {
    match error {
        TxnError::LockWaitTimeout {
            waiter,
            blocker,
            table,
            key,
        } => format!(
            "lock wait timeout: trx#{} waited for trx#{} on {table} {key} (retryable)",
            waiter.get(),
            blocker.get()
        ),
        TxnError::Deadlock {
            victim,
            cycle,
            table,
            key,
            ..
        } => format!(
            "deadlock on {table} {key}: cycle {}; trx#{} rolled back (retryable)",
            cycle
                .iter()
                .map(|id| format!("trx#{}", id.get()))
                .collect::<Vec<_>>()
                .join(" -> "),
            victim.get()
        ),
        other => other.to_string(),
    }
}

/// Runs a script's commands (see the module page): each session's commands go to its
/// thread; what a command does not answer within [`BLOCKED_AFTER`] shows as `waiting`, and
/// its answer is printed when it comes, at the end of a later block.
struct Runner {
    engine: Arc<Engine>,
    /// The durable engine's settings and directory (kept while the engine lives).
    _durable: Option<Durable>,
    table: Table,
    sessions: BTreeMap<String, Session>,
    /// Which session each trx id belongs to, to print names instead of ids.
    names: BTreeMap<u64, String>,
    /// Answers of sessions that waited, for the end of the block.
    released: String,
}

impl Runner {
    fn new(snapshot: SnapshotKind, view_close: ViewClose, durable: Option<Durable>) -> Runner {
        let (engine, table) = engine(snapshot, view_close, durable.as_ref());
        Runner {
            engine,
            _durable: durable,
            table,
            sessions: BTreeMap::new(),
            names: BTreeMap::new(),
            released: String::new(),
        }
    }

    /// `lines` with trx ids printed as the sessions that own them, one per line.
    fn text(&self, lines: Vec<String>, who: Option<&str>) -> String {
        let mut out = String::new();
        for mut line in lines {
            for (id, name) in &self.names {
                line = line.replace(&format!("trx#{id} "), &format!("{name} "));
                line = line.replace(&format!("trx#{id};"), &format!("{name};"));
            }
            if let Some(who) = who {
                out.push_str(who);
                out.push_str(": ");
            }
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// Collects the answers of waiting sessions that came within `patience`.
    fn collect_released(&mut self, patience: Duration) {
        let mut answered = Vec::new();
        for (who, session) in self.sessions.iter_mut().filter(|(_, s)| s.waiting) {
            if let Ok((lines, id)) = session.answers.recv_timeout(patience) {
                session.waiting = false;
                answered.push((who.clone(), lines, id));
            }
        }
        for (who, lines, id) in answered {
            if let Some(id) = id {
                self.names.insert(id.get(), who.clone());
            }
            let text = self.text(lines, Some(&who));
            self.released.push_str(&text);
        }
    }
}

impl goldenscript::Runner for Runner {
    type Command = goldenscript::Command;

    fn run(
        &mut self,
        command: &goldenscript::Command,
        context: &goldenscript::Context,
    ) -> Result<String, Box<dyn Error>> {
        let mut text = command.name.clone();
        for arg in &command.args {
            match arg {
                goldenscript::Argument::Positional(value) => {
                    text.push(' ');
                    text.push_str(value);
                }
                goldenscript::Argument::KeyValue(..) if command.name == "engine" => {}
                _ => return Err(format!("{text}: no key=value arguments here").into()),
            }
        }
        let before = self.engine.stats();
        let mut patience = Duration::from_millis(200);
        let answer = match &context.prefix {
            Some(who) => {
                let (engine, table) = (Arc::clone(&self.engine), self.table.clone());
                let session = self
                    .sessions
                    .entry(who.clone())
                    .or_insert_with(|| spawn_session(engine, table));
                session.commands.send(text)?;
                match session.answers.recv_timeout(BLOCKED_AFTER) {
                    Ok((lines, id)) => {
                        if let Some(id) = id {
                            self.names.insert(id.get(), who.clone());
                        }
                        self.text(lines, None)
                    }
                    Err(RecvTimeoutError::Timeout) => {
                        session.waiting = true;
                        "waiting\n".to_owned()
                    }
                    Err(RecvTimeoutError::Disconnected) => return Err(format!("{who} died").into()),
                }
            }
            None if command.name == "engine" => {
                // Starts over on a fresh engine (the sessions end, rolled back): a script
                // that shows one configuration's counters picks it itself.
                let mut args = command.consume_args();
                let snapshot: SnapshotKind =
                    args.take_key("snapshot").unwrap_or("hybrid").parse()?;
                let view_close = match args.take_key("view_close").unwrap_or("latch-free") {
                    "latched" => ViewClose::Latched,
                    "latch-free" => ViewClose::LatchFree,
                    other => return Err(format!("view_close={other}?").into()),
                };
                let release = match args.take_key("lock_release") {
                    None => None,
                    Some("after-sync") => Some(LockRelease::AfterSync),
                    Some("early") => Some(LockRelease::Early),
                    Some(other) => return Err(format!("lock_release={other}?").into()),
                };
                let delay: u64 = args.take_key("sync_delay_ms").unwrap_or("0").parse()?;
                args.reject_next()?;
                let durable = match release {
                    Some(release) => {
                        Some((release, Duration::from_millis(delay), tempfile::tempdir()?))
                    }
                    None => None,
                };
                // The old engine (and its directory) goes first.
                self.sessions.clear();
                *self = Runner::new(snapshot, view_close, durable);
                String::new()
            }
            None if text == "purge" => {
                let report = self.engine.purge();
                format!("purge: {} versions\n", report.versions)
            }
            None if text == "wait" => {
                patience = Duration::from_secs(5);
                String::new()
            }
            None => return Err(format!("unknown command {text:?}").into()),
        };
        self.collect_released(patience);
        let mut out = answer;
        if context.tags.contains("stats") {
            out.push_str(&stats_line(&self.engine.stats().since(&before)));
        }
        Ok(out)
    }

    fn end_block(&mut self, _: &goldenscript::Block) -> Result<String, Box<dyn Error>> {
        Ok(std::mem::take(&mut self.released))
    }
}

/// The `[stats]` tag's line: the engine counters a command moved (those that depend on
/// timing, spinning and priority boosts, and the sampled times latches were held, left out).
fn stats_line(moved: &StatsSnapshot) -> String {
    let timing = [
        Counter::TrxSysLatchHeldNs,
        Counter::RegistryLatchHeldNs,
        Counter::LockTableLatchHeldNs,
        Counter::LockSpinGrants,
        Counter::LockBoosts,
        Counter::LockBoostsDenied,
        Counter::LockHoldAfterLogWriteMicros,
    ];
    let counts: Vec<String> = Counter::ALL
        .iter()
        .filter(|&&c| moved.get(c) > 0 && !timing.contains(&c))
        .map(|&c| format!("{}={}", c.name(), moved.get(c)))
        .collect();
    format!("stats: {}\n", counts.join(" "))
}

fn check_all(snapshot: SnapshotKind, view_close: ViewClose) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no scenarios in {}", dir.display());
    for file in files {
        let mut runner = Runner::new(snapshot, view_close, None);
        if let Err(e) = goldenscript::run(&mut runner, &file) {
            panic!(
                "{} under {snapshot} / {}: {e}",
                file.display(),
                view_close.name()
            );
        }
    }
}

#[test]
fn vector_latched() {
    check_all(SnapshotKind::Vector, ViewClose::Latched);
}

#[test]
fn vector_latch_free() {
    check_all(SnapshotKind::Vector, ViewClose::LatchFree);
}

#[test]
fn hybrid_latched() {
    check_all(SnapshotKind::Hybrid, ViewClose::Latched);
}

#[test]
fn hybrid_latch_free() {
    check_all(SnapshotKind::Hybrid, ViewClose::LatchFree);
}

#[test]
fn csn_latched() {
    check_all(SnapshotKind::Csn, ViewClose::Latched);
}

#[test]
fn csn_latch_free() {
    check_all(SnapshotKind::Csn, ViewClose::LatchFree);
}
