//! A session: one client's connection state (database, autocommit, isolation, the open
//! transaction, prepared statements) and the statement dispatcher.
//!
//! Transactions follow MySQL: with autocommit on, a statement outside BEGIN ... COMMIT is a
//! transaction of its own. The admission permit is taken when a transaction begins (BEGIN, or
//! the first statement that needs one) and given back when it ends. A deadlock or a lock wait
//! timeout rolls the whole transaction back, since clients such as sysbench retry from BEGIN
//! without sending ROLLBACK.

use std::sync::Arc;

use waterline_txn::{Table, Value};

use crate::error::SqlError;
use crate::shared::Shared;

mod connection;
mod dispatch;
mod locking;
mod naming;
mod prepared;
mod response;
mod statement;
mod temporary;
mod trace;
mod transaction;
mod variables;

pub(crate) use prepared::{Binding, Bound, Prepared};
pub use response::{
    Response, ResultColumn, SERVER_QUERY_NO_INDEX_USED, SERVER_STATUS_AUTOCOMMIT,
    SERVER_STATUS_IN_TRANS,
};

/// One client's session: a connection's state, each part in the file of `session/` that
/// keeps it.
pub struct Session {
    shared: Arc<Shared>,
    /// Who logged in, and what `KILL` reaches the session through (`connection.rs`).
    connection: connection::Connection,
    /// The database in use, the session's variables, user variables (`variables.rs`).
    vars: variables::Variables,
    /// The open transaction and how it began (`transaction.rs`).
    transaction: transaction::Open,
    /// The tables LOCK TABLES gave the session: name, id, and whether locked WRITE
    /// (`locking.rs`).
    locked_tables: Vec<locking::Locked>,
    /// The session's temporary tables (`temporary.rs`).
    temporary: temporary::Temporary,
    /// Prepared statements (`prepared.rs`).
    prepared: prepared::Statements,
    /// The running (or last) statement: its clock, warnings, look-out, trace
    /// (`statement.rs`).
    statement: statement::Current,
}

impl Session {
    /// A session of root over `engine`, in the `waterline` database: the embedded way in.
    /// The sessions made so share one [`Shared`] (connection ids, KILL, status counters)
    /// while any of them lives; every session over the engine shares its databases and
    /// table metadata.
    ///
    /// Statements walk their expressions recursively: a thread that runs statements it does
    /// not control (a user's) should have [`SESSION_STACK`](crate::SESSION_STACK) of stack.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use waterline_sql::Session;
    /// use waterline_txn::{Engine, Value};
    ///
    /// let engine = Arc::new(Engine::in_memory());
    /// let mut s = Session::new(&engine);
    /// s.execute("CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(10))")?;
    /// s.execute("INSERT INTO t (v) VALUES ('one'), ('two')")?;
    /// let mut other = Session::new(&engine);
    /// other.execute("INSERT INTO t (v) VALUES ('three')")?;
    /// let rows = s.execute("SELECT id FROM t WHERE v = 'three'")?.into_rows();
    /// assert_eq!(rows, [[Value::Int(3)]]);
    /// # Ok::<(), waterline_sql::SqlError>(())
    /// ```
    pub fn new(engine: &Arc<waterline_txn::Engine>) -> Session {
        engine
            .extension::<crate::shared::Embedded>()
            .shared(engine)
            .session()
    }

    /// A session of `user` on `shared`, in `database` if given (error 1049 if it does not
    /// exist): what a server makes for a connection.
    pub fn connect(
        shared: Arc<Shared>,
        user: &str,
        database: Option<&str>,
    ) -> Result<Session, SqlError> {
        if let Some(db) = database
            && !shared.has_database(db)
        {
            return Err(SqlError::unknown_database(db));
        }
        let connection_id = shared.connection_id();
        let control = shared.controls.register(connection_id, user);
        Ok(Session {
            statement: statement::Current::new(&control),
            connection: connection::Connection {
                id: connection_id,
                user: user.to_owned(),
                control,
            },
            vars: variables::Variables::new(&shared, database),
            transaction: transaction::Open::new(&shared),
            locked_tables: Vec::new(),
            temporary: temporary::Temporary::default(),
            prepared: prepared::Statements::default(),
            shared,
        })
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

    /// This session's connection id.
    pub fn connection_id(&self) -> u32 {
        self.connection.id
    }

    /// Whether a transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.transaction.trx.is_some()
    }

    /// The server status flags MySQL sends in every OK and EOF packet: `SERVER_STATUS_IN_TRANS`
    /// while a transaction is open, `SERVER_STATUS_AUTOCOMMIT` while autocommit is on. Clients
    /// act on them: PyMySQL, for one, sends `SET autocommit=0` only if the flag says it is on.
    pub fn server_status(&self) -> u16 {
        let mut flags = 0;
        if self.transaction.trx.is_some() {
            flags |= SERVER_STATUS_IN_TRANS;
        }
        if self.vars.settings.autocommit {
            flags |= SERVER_STATUS_AUTOCOMMIT;
        }
        if self.statement.no_index_used {
            flags |= SERVER_QUERY_NO_INDEX_USED;
        }
        flags
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

    /// The warnings the last statement left (the count OK and EOF packets carry).
    pub fn warning_count(&self) -> u16 {
        u16::try_from(self.statement.warnings.len()).unwrap_or(u16::MAX)
    }

    /// COM_RESET_CONNECTION: the session as a new one starts, in the same database and for
    /// the same user: its transaction rolled back, its variables back to their defaults,
    /// its prepared statements gone.
    pub fn reset(&mut self) {
        self.abort();
        self.vars.settings = crate::settings::Settings::new(&self.shared);
        self.vars.last_insert_id = 0;
        self.statement.warnings.clear();
        self.prepared.by_id.clear();
        self.drop_all_temporary();
    }

    /// Rolls back the open transaction, if any (a client that went away).
    pub fn abort(&mut self) {
        if let Some(trx) = self.transaction.trx.take() {
            trx.rollback();
        }
    }

    pub(crate) fn database_name(&self) -> &str {
        self.vars.database.as_deref().unwrap_or("")
    }

    /// The session uses no database (its database was dropped).
    pub(crate) fn leave_database(&mut self) {
        self.vars.database = None;
    }

    /// `USE name` (and COM_INIT_DB).
    pub fn select_database(&mut self, name: &str) -> Result<(), SqlError> {
        if !self.shared.has_database(name) {
            return Err(SqlError::unknown_database(name));
        }
        self.vars.database = Some(Arc::from(name));
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.abort();
        if !self.locked_tables.is_empty() {
            self.shared.table_locks.unlock(self.connection.id);
        }
        self.drop_all_temporary();
        self.shared.controls.unregister(self.connection.id);
    }
}
