//! A statement's start and end in a session: counting it, its clock, its time limit, and
//! `KILL` (the machinery is `control.rs`'s; this is the session's side of it).

use std::sync::atomic::Ordering;

use waterline_txn::{Interruption, TxnError};

use super::{Context, Response};
use crate::control::Watch;
use crate::error::SqlError;

/// The running (or last) statement: what it reads of the clock, what it found, whether it
/// must stop, and its optimizer trace.
#[derive(Debug)]
pub(super) struct Current {
    /// When the running statement first asked for the time (UTC microseconds; 0: not yet):
    /// NOW() is this, however often a statement calls it, as in MySQL (SYSDATE() reads the
    /// clock). Read from the clock only by a statement that needs it.
    pub(super) began: std::cell::Cell<i64>,
    /// The running (or last) statement read a table without an index.
    pub(super) no_index_used: bool,
    /// Its warnings (SHOW WARNINGS): level, code, message.
    pub(super) warnings: Vec<(String, u16, String)>,
    /// Its look-out: whether it must stop.
    pub(super) watch: Watch,
    /// The optimizer trace of the running and the last statement.
    pub(super) traces: super::trace::Traces,
}

impl Current {
    /// Before the session's first statement, watched through `control`.
    pub(super) fn new(control: &std::sync::Arc<crate::control::Control>) -> Current {
        Current {
            began: std::cell::Cell::new(0),
            no_index_used: false,
            warnings: Vec::new(),
            watch: Watch::new(control, None),
            traces: super::trace::Traces::default(),
        }
    }
}

impl Context<'_> {
    /// A statement starts: counted, the clock unread, a `KILL QUERY` that came between
    /// statements forgotten. A killed connection runs nothing more (1053).
    pub(crate) fn start_statement(&mut self) -> Result<(), SqlError> {
        self.shared
            .counters
            .questions
            .fetch_add(1, Ordering::Relaxed);
        self.statement.began.set(0);
        self.statement.no_index_used = false;
        self.discard_trace();
        if self.connection.control.connection_killed() {
            return Err(TxnError::Interrupted(Interruption::Connection).into());
        }
        self.connection.control.begin_statement();
        self.statement.watch = Watch::new(&self.connection.control, None);
        self.arm_sleep();
        Ok(())
    }

    /// SLEEP, on this thread, stops when the statement's watch says to (KILL QUERY, or
    /// its time is out).
    fn arm_sleep(&self) {
        let watch = self.statement.watch.clone();
        waterline_planner::set_interrupt(Some(std::rc::Rc::new(move || watch.must_stop())));
    }

    /// A SELECT may run for its `MAX_EXECUTION_TIME(N)` hint's N milliseconds if it has
    /// one (and N is not 0), else for the session's `max_execution_time` (0: no limit).
    pub(crate) fn limit_select(&mut self, hint: Option<u64>) {
        let limit = hint
            .filter(|&ms| ms > 0)
            .map(std::time::Duration::from_millis)
            .unwrap_or(self.vars.settings.timeouts.max_execution);
        if !limit.is_zero() {
            self.statement.watch = Watch::new(&self.connection.control, Some(limit));
            self.arm_sleep();
        }
    }

    /// `KILL [CONNECTION | QUERY] id`. Killing this session's own statement or connection
    /// ends the KILL itself with the killed statement's error, as in MySQL.
    pub(crate) fn kill(
        &mut self,
        modifier: Option<sqlparser::ast::KillType>,
        id: u64,
    ) -> Result<Response, SqlError> {
        let connection = match modifier {
            None | Some(sqlparser::ast::KillType::Connection) => true,
            Some(sqlparser::ast::KillType::Query) => false,
            Some(sqlparser::ast::KillType::Mutation) => {
                return Err(SqlError::parse("KILL MUTATION"));
            }
        };
        self.shared
            .controls
            .kill(id, connection, &self.connection.user)?;
        self.statement.watch.check()?;
        Ok(Response::done(0))
    }
}

/// What the planner reads of the session while it evaluates a statement's expressions: the
/// session-valued functions (`functions.rs`) and the time zone.
impl waterline_planner::SessionValues for Context<'_> {
    fn value(
        &self,
        e: &sqlparser::ast::Expr,
    ) -> Result<Option<waterline_txn::Value>, waterline_planner::PlanError> {
        crate::functions::session_value(self, e)
            .map_err(|e| waterline_planner::PlanError::Session(e.code, e.state, e.message))
    }

    fn utc_offset_secs(&self) -> i64 {
        self.settings().time_zone.offset_secs
    }
}
