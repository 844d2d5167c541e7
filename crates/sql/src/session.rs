//! A session: one client's connection state (database, autocommit, isolation, the open
//! transaction, prepared statements) and the statement dispatcher, which runs each
//! statement over a [`Context`] made of the session's parts (`session/context.rs`).
//!
//! Transactions follow MySQL: with autocommit on, a statement outside BEGIN ... COMMIT is a
//! transaction of its own. The admission permit is taken when a transaction begins (BEGIN, or
//! the first statement that needs one) and given back when it ends. A deadlock or a lock wait
//! timeout rolls the whole transaction back, since clients such as sysbench retry from BEGIN
//! without sending ROLLBACK.

use std::sync::Arc;

use waterline_txn::Table;

use crate::error::SqlError;
use crate::shared::Shared;

mod connection;
mod context;
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

pub(crate) use context::Context;
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
        self.context().drop_all_temporary();
    }

    /// Rolls back the open transaction, if any (a client that went away).
    pub fn abort(&mut self) {
        self.context().abort();
    }

    /// `USE name` (and COM_INIT_DB).
    pub fn select_database(&mut self, name: &str) -> Result<(), SqlError> {
        self.context().select_database(name)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.abort();
        if !self.locked_tables.is_empty() {
            self.shared.table_locks.unlock(self.connection.id);
        }
        self.context().drop_all_temporary();
        self.shared.controls.unregister(self.connection.id);
    }
}
