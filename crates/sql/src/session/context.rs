//! A statement's context: what a statement is given of its session while it runs. The
//! dispatcher (`dispatch.rs`) builds one for each statement out of the session's parts,
//! and every statement handler of the crate (`select`, `dml`, `ddl`, `alter`, `show`, ...)
//! is a function over it: the server, the settings in force, the database in use, the
//! connection's identity, the open transaction, the session's table locks and temporary
//! tables, and the statement's own clock, warnings, look-out and trace. What a connection
//! keeps between statements and no statement reaches (its prepared statements) stays in the
//! [`Session`].

use std::sync::Arc;

use super::{Session, connection, locking, statement, temporary, transaction, variables};
use waterline_txn::Value;

use crate::error::SqlError;
use crate::shared::Shared;

/// One statement's view of its session; see the module's introduction.
pub(crate) struct Context<'s> {
    /// What every session of the server shares: the engine, the catalog, the counters.
    pub(super) shared: &'s Arc<Shared>,
    /// Who is connected, and what stops the connection's statements.
    pub(super) connection: &'s connection::Connection,
    /// The database in use, the session's variables, user variables.
    pub(super) vars: &'s mut variables::Variables,
    /// The open transaction, if any, and how it began.
    pub(super) transaction: &'s mut transaction::Open,
    /// The tables LOCK TABLES gave the session.
    pub(super) locked_tables: &'s mut Vec<locking::Locked>,
    /// The session's temporary tables.
    pub(super) temporary: &'s mut temporary::Temporary,
    /// The running statement: its clock, warnings, look-out, trace.
    pub(super) statement: &'s mut statement::Current,
}

impl Session {
    /// The context a statement of this session runs in.
    pub(crate) fn context(&mut self) -> Context<'_> {
        Context {
            shared: &self.shared,
            connection: &self.connection,
            vars: &mut self.vars,
            transaction: &mut self.transaction,
            locked_tables: &mut self.locked_tables,
            temporary: &mut self.temporary,
            statement: &mut self.statement,
        }
    }
}

impl Context<'_> {
    /// What every session of the server shares.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        self.shared
    }

    /// Who is connected.
    pub(crate) fn user(&self) -> &str {
        &self.connection.user
    }

    /// The session's connection id.
    pub(crate) fn connection_id(&self) -> u32 {
        self.connection.id
    }

    /// Whether a transaction is open.
    pub(crate) fn in_transaction(&self) -> bool {
        self.transaction.trx.is_some()
    }

    /// The warnings the statement has left so far.
    pub(crate) fn warning_count(&self) -> u16 {
        u16::try_from(self.statement.warnings.len()).unwrap_or(u16::MAX)
    }

    /// Rolls back the open transaction, if any.
    pub(crate) fn abort(&mut self) {
        if let Some(trx) = self.transaction.trx.take() {
            trx.rollback();
        }
    }

    /// `USE name` (and COM_INIT_DB).
    pub(crate) fn select_database(&mut self, name: &str) -> Result<(), SqlError> {
        if !self.shared.has_database(name) {
            return Err(SqlError::unknown_database(name));
        }
        self.vars.database = Some(Arc::from(name));
        Ok(())
    }

    /// The session's variables.
    pub(crate) fn settings(&self) -> &crate::settings::Settings {
        &self.vars.settings
    }

    /// The session's variables, to change (`SET`).
    pub(crate) fn settings_mut(&mut self) -> &mut crate::settings::Settings {
        &mut self.vars.settings
    }

    /// `innodb_lock_wait_timeout`, for the open transaction too.
    pub(crate) fn set_lock_wait_timeout(&mut self, timeout: std::time::Duration) {
        self.vars.settings.lock_wait_timeout = timeout;
        if let Some(trx) = &mut self.transaction.trx {
            trx.set_lock_wait_timeout(timeout);
        }
    }

    /// The database in use, if any (`USE`).
    pub(crate) fn database(&self) -> Option<&Arc<str>> {
        self.vars.database.as_ref()
    }

    /// What stops the session's statements and says what it is doing.
    pub(crate) fn control(&self) -> &Arc<crate::control::Control> {
        &self.connection.control
    }

    /// The running statement's look-out: whether it must stop.
    pub(crate) fn watch(&self) -> &crate::control::Watch {
        &self.statement.watch
    }

    /// The running statement read a table without an index, if `yes`
    /// (`SERVER_QUERY_NO_INDEX_USED`).
    pub(crate) fn scanned_without_index(&mut self, yes: bool) {
        self.statement.no_index_used |= yes;
    }

    /// `LAST_INSERT_ID()`.
    pub(crate) fn last_insert_id(&self) -> u64 {
        self.vars.last_insert_id
    }

    /// The first AUTO_INCREMENT value the last INSERT generated.
    pub(crate) fn set_last_insert_id(&mut self, id: u64) {
        self.vars.last_insert_id = id;
    }

    /// The warnings the last statement left (SHOW WARNINGS).
    pub(crate) fn warnings(&self) -> &[(String, u16, String)] {
        &self.statement.warnings
    }

    /// A statement starts with no warnings.
    pub(crate) fn clear_warnings(&mut self) {
        self.statement.warnings.clear();
    }

    /// Adds a warning (`level` is `Note` or `Warning`) to the statement's.
    pub(crate) fn warn(&mut self, level: &str, code: u16, message: String) {
        if level == "Note" && !self.vars.settings.sql_notes {
            return;
        }
        self.statement
            .warnings
            .push((level.to_owned(), code, message));
    }

    /// User variable `@name` (any case), NULL if never set.
    pub(crate) fn user_variable(&self, name: &str) -> Value {
        (self.vars.user.get(&name.to_ascii_lowercase()).cloned()).unwrap_or(Value::Null)
    }

    /// `SET @name = value`.
    pub(crate) fn set_user_variable(&mut self, name: &str, value: Value) {
        self.vars.user.insert(name.to_ascii_lowercase(), value);
    }

    /// The statement's warnings, to add to.
    pub(crate) fn warnings_mut(&mut self) -> &mut Vec<(String, u16, String)> {
        &mut self.statement.warnings
    }

    /// When the running statement began in the session's time zone (NOW()), or with `live`
    /// the clock's time (SYSDATE()), with `fsp` fractional digits.
    pub(crate) fn now(&self, fsp: u8, live: bool) -> waterline_txn::DateTime {
        let utc = if live {
            crate::settings::utc_micros()
        } else {
            self.statement_began()
        };
        let local = utc + self.vars.settings.time_zone.offset_secs * 1_000_000;
        waterline_txn::DateTime(crate::settings::truncate_fsp(local, fsp))
    }

    /// When the running statement began, in UTC microseconds (its first look at the clock).
    pub(crate) fn statement_began(&self) -> i64 {
        if self.statement.began.get() == 0 {
            self.statement.began.set(crate::settings::utc_micros());
        }
        self.statement.began.get()
    }

    pub(crate) fn database_name(&self) -> &str {
        self.vars.database.as_deref().unwrap_or("")
    }

    /// The session uses no database (its database was dropped).
    pub(crate) fn leave_database(&mut self) {
        self.vars.database = None;
    }
}
