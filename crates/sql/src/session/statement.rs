//! A statement's start and end in a session: counting it, its clock, its time limit, and
//! `KILL` (the machinery is `control.rs`'s; this is the session's side of it).

use std::sync::atomic::Ordering;

use waterline_txn::{Interruption, TxnError};

use super::{Response, Session};
use crate::control::Watch;
use crate::error::SqlError;

impl Session {
    /// A statement starts: counted, the clock unread, a `KILL QUERY` that came between
    /// statements forgotten. A killed connection runs nothing more (1053).
    pub(crate) fn start_statement(&mut self) -> Result<(), SqlError> {
        self.shared
            .counters
            .questions
            .fetch_add(1, Ordering::Relaxed);
        self.statement_began.set(0);
        self.no_index_used = false;
        self.discard_trace();
        if self.control.connection_killed() {
            return Err(TxnError::Interrupted(Interruption::Connection).into());
        }
        self.control.begin_statement();
        self.watch = Watch::new(&self.control, None);
        self.arm_sleep();
        Ok(())
    }

    /// SLEEP, on this thread, stops when the statement's watch says to (KILL QUERY, or
    /// its time is out).
    fn arm_sleep(&self) {
        let watch = self.watch.clone();
        waterline_planner::set_interrupt(Some(std::rc::Rc::new(move || watch.must_stop())));
    }

    /// A SELECT may run for its `MAX_EXECUTION_TIME(N)` hint's N milliseconds if it has
    /// one (and N is not 0), else for the session's `max_execution_time` (0: no limit).
    pub(crate) fn limit_select(&mut self, hint: Option<u64>) {
        let limit = hint
            .filter(|&ms| ms > 0)
            .map(std::time::Duration::from_millis)
            .unwrap_or(self.settings.timeouts.max_execution);
        if !limit.is_zero() {
            self.watch = Watch::new(&self.control, Some(limit));
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
        self.shared.controls.kill(id, connection, &self.user)?;
        self.watch.check()?;
        Ok(Response::done(0))
    }
}
