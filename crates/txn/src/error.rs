//! The errors of the transaction system. A conflict carries the data that explains it (trx
//! ids, table, key) and says whether retrying the transaction can succeed.

use waterline_readview::{ActiveSetError, ConfigError, TrxId};

use crate::key::Key;

/// Everything a transaction operation can fail with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TxnError {
    /// The row lock was not granted within `lock_wait_timeout` (MySQL error 1205). Only the
    /// failed statement is rolled back; the transaction may go on or retry.
    #[error(
        "lock wait timeout: trx {waiter} waited for trx {blocker} on {table} key {key}; \
         try restarting the transaction"
    )]
    LockWaitTimeout {
        /// The transaction that waited.
        waiter: TrxId,
        /// A transaction that held the lock when the wait gave up.
        blocker: TrxId,
        /// The table of the row.
        table: String,
        /// The row's key (or the unique secondary key value).
        key: Key,
    },
    /// A NOWAIT locking read found a row locked by another transaction (MySQL error 3572,
    /// `ER_LOCK_NOWAIT`). Only the failed statement is rolled back. (A SKIP LOCKED read
    /// passes over the row instead and never returns this.)
    #[error(
        "statement aborted because lock(s) could not be acquired immediately and NOWAIT is \
         set: {table} key {key} is locked by another transaction"
    )]
    LockNowait {
        /// The table of the row.
        table: String,
        /// The row's key.
        key: Key,
    },
    /// Waiting would close a cycle in the wait-for graph (MySQL error 1213). The requester is
    /// the victim: its whole transaction is rolled back before this is returned.
    #[error(
        "deadlock: trx {victim} would wait for trx {blocker} on {table} key {key}, which waits \
         for it (cycle {cycle:?}); the transaction was rolled back, try restarting it"
    )]
    Deadlock {
        /// The transaction chosen as victim (the one that asked last).
        victim: TrxId,
        /// The holder it would have waited for.
        blocker: TrxId,
        /// The wait-for cycle, starting at the victim.
        cycle: Vec<TrxId>,
        /// The table of the row.
        table: String,
        /// The row's key.
        key: Key,
    },
    /// A primary or unique key value exists already (MySQL error 1062).
    #[error("duplicate entry {key} for key '{index}' of table {table}")]
    DuplicateKey {
        /// The table.
        table: String,
        /// `PRIMARY` or the unique index's name.
        index: String,
        /// The duplicated value.
        key: Key,
    },
    /// A row or value does not fit the table's schema (its [`waterline_types::Refusal`] says
    /// which MySQL error it is).
    #[error(transparent)]
    Schema(#[from] waterline_types::SchemaError),
    /// No table of that name.
    #[error("unknown table {0}")]
    NoSuchTable(String),
    /// A table of that name exists already.
    #[error("table {0} already exists")]
    TableExists(String),
    /// No index of that name on the table.
    #[error("table {table} has no index {index}")]
    NoSuchIndex {
        /// The table.
        table: String,
        /// The index asked for.
        index: String,
    },
    /// The transaction ended already (committed, rolled back, or chosen as deadlock victim).
    #[error("the transaction is no longer active")]
    NotActive,
    /// An invalid [`crate::EngineConfig`].
    #[error("invalid engine configuration: {0}")]
    Config(String),
    /// The trx id or CSN space is exhausted, or the trx-sys bookkeeping refused a change; not
    /// expected in practice.
    #[error("transaction system: {0}")]
    TrxSys(String),
    /// The commit pipeline could not make the transaction durable; it was rolled back.
    #[error("commit failed: {0}")]
    Commit(String),
    /// The statement was stopped from outside while it waited for a row lock (see
    /// [`crate::Transaction::set_interrupt`]): MySQL's `KILL QUERY`. Only the statement is
    /// rolled back.
    #[error("{0}")]
    Interrupted(Interruption),
    /// The durable engine's files: opening, recovery, or a checkpoint failed (an I/O error,
    /// a damaged checkpoint, a log that does not reach back to the checkpoint).
    #[error("durability: {0}")]
    Durability(String),
}

/// Why a statement was stopped before it finished (MySQL's `killed` states).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Interruption {
    /// `KILL QUERY`: the statement, not the connection (MySQL error 1317).
    #[error("Query execution was interrupted")]
    Query,
    /// `KILL CONNECTION`, or the client has gone: the connection ends (MySQL error 1053).
    #[error("Server shutdown in progress")]
    Connection,
    /// The statement ran longer than its `max_execution_time` (MySQL error 3024).
    #[error("Query execution was interrupted, maximum statement execution time exceeded")]
    Timeout,
}

impl TxnError {
    /// Whether running the transaction again can succeed: lock wait timeouts and deadlocks.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            TxnError::LockWaitTimeout { .. } | TxnError::Deadlock { .. }
        )
    }

    /// Whether the error has already rolled back the whole transaction (not only the failed
    /// statement): a deadlock victim and a failed commit.
    pub fn rolled_back_transaction(&self) -> bool {
        matches!(self, TxnError::Deadlock { .. } | TxnError::Commit(_))
    }
}

impl From<ActiveSetError> for TxnError {
    fn from(error: ActiveSetError) -> Self {
        TxnError::TrxSys(error.to_string())
    }
}

impl From<ConfigError> for TxnError {
    fn from(error: ConfigError) -> Self {
        TxnError::Config(error.to_string())
    }
}
