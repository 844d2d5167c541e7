//! Stopping what runs: `KILL [CONNECTION | QUERY] id`, `max_execution_time`, and a client
//! that has gone while its statement runs.
//!
//! Every session has a [`Control`], registered with the server's [`Shared`] under its
//! connection id for as long as the session lives. `KILL` (from any session) sets its flags;
//! `KILL CONNECTION` also shuts the connection's socket down, so a thread waiting for the
//! next command wakes to end of stream. A running statement carries a [`Watch`] and calls
//! [`Watch::check`] for each row it reads (the executor's loop, the DML's) and the engine
//! looks at the same flag while a row-lock wait sleeps: a killed statement stops at its next
//! row, or within `LOCK_WAIT_SLICE` of a lock wait, and is rolled back alone, as in MySQL.
//! Every [`CHECK_EVERY`] rows the watch also reads the clock, for `max_execution_time`, and
//! at most every [`PEER_LOOK_EVERY`] asks the socket whether the client is still there (a
//! `poll` for `POLLRDHUP`, which reads nothing), so a statement whose client has gone stops
//! instead of keeping a core busy for nobody.
//!
//! A control also says what its session is doing (SHOW PROCESSLIST,
//! `information_schema.PROCESSLIST`): the statement it runs, since when, in which database.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use waterline_txn::{Interruption, TxnError};

use crate::SqlError;

/// What stopping a connection needs of its client's end, whatever carries it: the server
/// implements it for its sockets, and attaches one to each session it serves.
pub trait Peer: Send + Sync {
    /// Whether the client has closed its end (or the connection broke): a look that does
    /// not wait and reads nothing, so a command the client sent ahead stays unread.
    fn gone(&self) -> bool;
    /// Ends the connection: the thread serving it reads end of stream, the client too.
    fn close(&self);
    /// Where the client is (the processlist's Host): `ip:port`, or `localhost`.
    fn host(&self) -> String;
}

/// Rows between two looks at the clock (and, at most every [`PEER_LOOK_EVERY`], at the
/// socket): the kill flag itself is read at every row.
pub(crate) const CHECK_EVERY: u32 = 256;

/// The least time between two looks at whether the client is still connected.
pub(crate) const PEER_LOOK_EVERY: Duration = Duration::from_millis(50);

/// What can stop one session's statements and end its connection.
pub(crate) struct Control {
    id: u32,
    /// The session's user (who may kill it: itself, and root).
    user: Mutex<String>,
    /// Set by every `KILL`: the running statement stops. The session's transactions hold it
    /// too, so that a row-lock wait ends (see `Transaction::set_interrupt`). Cleared when the
    /// next statement starts, unless the connection is killed.
    stop: Arc<AtomicBool>,
    /// `KILL CONNECTION`, or the client found gone: the connection ends.
    connection: AtomicBool,
    /// The connection's socket, once it has one (an embedded session has none).
    peer: OnceLock<Arc<dyn Peer>>,
    /// What the session is doing.
    activity: Mutex<Activity>,
    /// The session's open transaction, if any (INNODB_TRX).
    trx: Mutex<Option<OpenTrx>>,
    /// Its trx id, once it has one (0: none yet), stored by the engine.
    trx_id: Arc<std::sync::atomic::AtomicU64>,
}

/// A session's open transaction as `information_schema.INNODB_TRX` shows it.
#[derive(Clone, Debug)]
pub(crate) struct OpenTrx {
    /// When it began (the session's time zone).
    pub(crate) started: waterline_txn::DateTime,
    pub(crate) since: Instant,
    /// Its isolation level, in INNODB_TRX's words (`REPEATABLE READ`).
    pub(crate) isolation: &'static str,
    pub(crate) read_only: bool,
    pub(crate) foreign_key_checks: bool,
    pub(crate) unique_checks: bool,
}

/// What a session is doing: since when, in which database, and the statement it runs
/// (`None`: waiting for the client's next command).
#[derive(Debug)]
struct Activity {
    since: Instant,
    db: Option<Arc<str>>,
    running: Option<Running>,
}

/// A statement a session runs, as PROCESSLIST's Info shows it.
#[derive(Clone, Debug)]
pub(crate) enum Running {
    /// Sent as text.
    Text(Arc<str>),
    /// A prepared statement executed (shown as its statement, rendered when asked).
    Prepared(Arc<sqlparser::ast::Statement>),
}

/// One row of SHOW PROCESSLIST.
#[derive(Clone, Debug)]
pub(crate) struct Process {
    pub(crate) id: u32,
    pub(crate) user: String,
    /// Where the client is (empty for an embedded session).
    pub(crate) host: String,
    pub(crate) db: Option<Arc<str>>,
    /// MySQL's Command: `Query`, `Execute` or `Sleep`.
    pub(crate) command: &'static str,
    /// Seconds in this command.
    pub(crate) time: u64,
    /// The statement, if one runs.
    pub(crate) info: Option<String>,
    /// The open transaction and its trx id (`None` before its first write or lock).
    pub(crate) trx: Option<(OpenTrx, Option<u64>)>,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("id", &self.id)
            .field("stop", &self.stop)
            .field("connection", &self.connection)
            .finish_non_exhaustive()
    }
}

impl Control {
    /// The flag the session's transactions give the engine's lock waits.
    pub(crate) fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// The session's user, who may kill its statements and connection (as root may).
    pub(crate) fn set_user(&self, user: &str) {
        user.clone_into(&mut self.user.lock());
    }

    /// The socket `close` and the statements' looks go to.
    pub(crate) fn attach(&self, peer: Arc<dyn Peer>) {
        let _ = self.peer.set(peer);
    }

    /// The session starts running `running` in database `db`.
    pub(crate) fn busy(&self, running: Running, db: Option<&Arc<str>>) {
        *self.activity.lock() = Activity {
            since: Instant::now(),
            db: db.cloned(),
            running: Some(running),
        };
    }

    /// The session waits for its client's next command, in database `db`.
    pub(crate) fn idle(&self, db: Option<&Arc<str>>) {
        *self.activity.lock() = Activity {
            since: Instant::now(),
            db: db.cloned(),
            running: None,
        };
    }

    fn process(&self) -> Process {
        let activity = self.activity.lock();
        Process {
            id: self.id,
            user: self.user.lock().clone(),
            host: self.peer.get().map_or_else(String::new, |p| p.host()),
            db: activity.db.clone(),
            command: match &activity.running {
                None => "Sleep",
                Some(Running::Text(_)) => "Query",
                Some(Running::Prepared(_)) => "Execute",
            },
            time: activity.since.elapsed().as_secs(),
            info: activity.running.as_ref().map(|r| match r {
                Running::Text(sql) => sql.to_string(),
                Running::Prepared(statement) => statement.to_string(),
            }),
            trx: self.trx.lock().clone().map(|open| {
                let id = self.trx_id.load(Ordering::Relaxed);
                (open, (id != 0).then_some(id))
            }),
        }
    }

    /// The session's transaction `open` began: returns where the engine is to put its id.
    pub(crate) fn trx_began(&self, open: OpenTrx) -> Arc<std::sync::atomic::AtomicU64> {
        self.trx_id.store(0, Ordering::Relaxed);
        *self.trx.lock() = Some(open);
        Arc::clone(&self.trx_id)
    }

    /// The session has no open transaction (after a statement that ended it).
    pub(crate) fn trx_ended(&self) {
        *self.trx.lock() = None;
    }

    /// A statement starts: a `KILL QUERY` that came between statements is forgotten, as in
    /// MySQL; a killed connection stays killed.
    pub(crate) fn begin_statement(&self) {
        if !self.connection_killed() {
            self.stop.store(false, Ordering::Release);
        }
    }

    /// Whether the connection has been killed (or its client found gone).
    pub(crate) fn connection_killed(&self) -> bool {
        self.connection.load(Ordering::Acquire)
    }

    /// `KILL QUERY` (`connection` false) or `KILL CONNECTION`.
    fn kill(&self, connection: bool) {
        if connection {
            self.connection.store(true, Ordering::Release);
        }
        self.stop.store(true, Ordering::Release);
        if connection && let Some(peer) = self.peer.get() {
            peer.close();
        }
    }

    /// Why the running statement must stop, if it must.
    fn stopped(&self) -> Option<Interruption> {
        if !self.stop.load(Ordering::Relaxed) {
            return None;
        }
        Some(if self.connection_killed() {
            Interruption::Connection
        } else {
            Interruption::Query
        })
    }
}

/// The controls of a server's live sessions, by connection id.
#[derive(Debug, Default)]
pub(crate) struct Controls(Mutex<HashMap<u32, Arc<Control>>>);

impl Controls {
    /// Registers the session `id` of `user`.
    pub(crate) fn register(&self, id: u32, user: &str) -> Arc<Control> {
        let control = Arc::new(Control {
            id,
            user: Mutex::new(user.to_owned()),
            stop: Arc::new(AtomicBool::new(false)),
            connection: AtomicBool::new(false),
            peer: OnceLock::new(),
            activity: Mutex::new(Activity {
                since: Instant::now(),
                db: None,
                running: None,
            }),
            trx: Mutex::new(None),
            trx_id: Arc::default(),
        });
        self.0.lock().insert(id, Arc::clone(&control));
        control
    }

    /// What every live session is doing, by connection id.
    pub(crate) fn processes(&self) -> Vec<Process> {
        let controls: Vec<Arc<Control>> = self.0.lock().values().cloned().collect();
        let mut rows: Vec<Process> = controls.iter().map(|c| c.process()).collect();
        rows.sort_by_key(|p| p.id);
        rows
    }

    /// The session `id` has ended.
    pub(crate) fn unregister(&self, id: u32) {
        self.0.lock().remove(&id);
    }

    /// `KILL [CONNECTION | QUERY] id` from a session of `user`: error 1094 for an id no
    /// session has, 1095 for another user's session unless `user` is root.
    pub(crate) fn kill(&self, id: u64, connection: bool, user: &str) -> Result<(), SqlError> {
        let target = u32::try_from(id)
            .ok()
            .and_then(|id| self.0.lock().get(&id).cloned());
        let Some(target) = target else {
            return Err(SqlError::new(
                1094,
                "HY000",
                format!("Unknown thread id: {id}"),
            ));
        };
        if user != "root" && *target.user.lock() != user {
            return Err(SqlError::new(
                1095,
                "HY000",
                format!("You are not owner of thread {id}"),
            ));
        }
        target.kill(connection);
        Ok(())
    }
}

/// One statement's look-out: the session's [`Control`] and the statement's deadline.
/// Cloned into whatever reads rows for the statement; each clone counts its own rows.
#[derive(Clone, Debug)]
pub(crate) struct Watch {
    control: Arc<Control>,
    /// When `max_execution_time` runs out.
    deadline: Option<Instant>,
    rows: Cell<u32>,
    /// When the socket may next be asked whether the client is there.
    next_look: Cell<Option<Instant>>,
}

impl Watch {
    /// A watch for a statement of `control`'s session that may run for `limit` at most.
    pub(crate) fn new(control: &Arc<Control>, limit: Option<Duration>) -> Watch {
        Watch {
            control: Arc::clone(control),
            deadline: limit.map(|l| Instant::now() + l),
            rows: Cell::new(0),
            next_look: Cell::new(None),
        }
    }

    /// Called for every row a statement reads: an error once it must stop (the caller
    /// returns it; the statement is rolled back).
    pub(crate) fn check(&self) -> Result<(), TxnError> {
        if let Some(why) = self.control.stopped() {
            return Err(TxnError::Interrupted(why));
        }
        let rows = self.rows.get().wrapping_add(1);
        self.rows.set(rows);
        if !rows.is_multiple_of(CHECK_EVERY)
            || (self.deadline.is_none() && self.control.peer.get().is_none())
        {
            return Ok(());
        }
        self.look()
    }

    /// Whether the statement must stop now: killed, out of time, or its client gone (what
    /// SLEEP asks between its short waits, so every time, not every so many rows).
    pub(crate) fn must_stop(&self) -> bool {
        self.control.stopped().is_some() || self.look().is_err()
    }

    /// The clock and the socket.
    fn look(&self) -> Result<(), TxnError> {
        let now = Instant::now();
        if self.deadline.is_some_and(|d| now >= d) {
            return Err(TxnError::Interrupted(Interruption::Timeout));
        }
        let Some(peer) = self.control.peer.get() else {
            return Ok(());
        };
        if self.next_look.get().is_some_and(|at| now < at) {
            return Ok(());
        }
        self.next_look.set(Some(now + PEER_LOOK_EVERY));
        if peer.gone() {
            self.control.kill(true);
            return Err(TxnError::Interrupted(Interruption::Connection));
        }
        Ok(())
    }
}
