//! The errors of the transaction system. A conflict carries the data that explains it (trx
//! ids, table, key) and says whether retrying the transaction can succeed.

use std::path::PathBuf;
use std::sync::Arc;

use waterline_commit::{CommitError, WalError};
use waterline_readview::{ActiveSetError, ConfigError, TrxId};
use waterline_throttle::ThrottleError;

use crate::key::Key;

/// Everything a transaction operation can fail with. An error of a part below (the log, the
/// group commit, the active set, admission) is carried as that part's own error, so a
/// caller can tell a full disk from a damaged file ([`std::error::Error::source`]).
#[derive(Debug, Clone, thiserror::Error)]
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
    /// An invalid [`crate::EngineConfig`], or an operation the engine's configuration does
    /// not allow (a checkpoint of an in-memory engine).
    #[error("invalid engine configuration: {0}")]
    Config(String),
    /// An invalid read-view configuration (its bitmap windows).
    #[error("invalid engine configuration: {0}")]
    ReadViewConfig(#[from] ConfigError),
    /// An invalid admission policy.
    #[error("invalid engine configuration: {0}")]
    Admission(#[from] ThrottleError),
    /// The trx-sys bookkeeping refused a change (an id out of order, a reserved id); not
    /// expected in practice.
    #[error("transaction system: {0}")]
    TrxSys(#[from] ActiveSetError),
    /// The trx id space is exhausted (after 2^64 - 2 transactions).
    #[error("transaction system: trx ids exhausted")]
    TrxIdsExhausted,
    /// The commit pipeline could not make the transaction durable; it was rolled back.
    #[error("commit failed: {0}")]
    Commit(#[source] CommitError),
    /// The statement was stopped from outside while it waited for a row lock (see
    /// [`crate::Transaction::set_interrupt`]): MySQL's `KILL QUERY`. Only the statement is
    /// rolled back.
    #[error("{0}")]
    Interrupted(Interruption),
    /// The log's files (opening, scanning or writing the log or a checkpoint image).
    #[error("durability: {0}")]
    Log(#[source] Arc<WalError>),
    /// A file or directory of the durable engine could not be created, read, renamed,
    /// removed or synced.
    #[error("durability: {what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// On which file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// What the durable engine's files hold cannot be used: a damaged checkpoint, a log that
    /// does not reach back to it, a record naming a table that was never created.
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

impl PartialEq for TxnError {
    /// The same kind of failure with the same details. The errors of the parts below hold OS
    /// errors, which do not compare, so errors compare by what they say.
    fn eq(&self, other: &TxnError) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl From<WalError> for TxnError {
    fn from(error: WalError) -> Self {
        TxnError::Log(Arc::new(error))
    }
}
