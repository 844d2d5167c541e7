//! The session's transaction: opened by BEGIN or by the first statement that needs one (at
//! the isolation SET TRANSACTION chose), each statement run as one engine statement, and
//! committed after the statement when autocommit made it the statement's own.

use std::sync::atomic::Ordering;

use waterline_txn::Transaction;

use super::{Context, Response, Session};
use crate::error::SqlError;

/// The session's transaction, if one is open, and how it began.
#[derive(Debug)]
pub(super) struct Open {
    pub(super) trx: Option<Transaction>,
    /// The level the open transaction began at.
    pub(super) level: crate::settings::Level,
    /// Whether the open transaction is READ ONLY.
    pub(super) read_only: bool,
    /// The open transaction's savepoints (SAVEPOINT), oldest first.
    pub(super) savepoints: Vec<(String, waterline_txn::Savepoint)>,
}

impl Open {
    /// No transaction open; the next begins at the server's isolation.
    pub(super) fn new(shared: &crate::shared::Shared) -> Open {
        Open {
            trx: None,
            level: crate::settings::Level::Engine(shared.config.isolation),
            read_only: false,
            savepoints: Vec::new(),
        }
    }
}

impl Session {
    /// BEGIN for async callers: ends the open transaction as BEGIN does (committing it),
    /// then begins one, waiting for the engine's admission permit without blocking the
    /// thread (BEGIN through [`Session::execute`] blocks it). A client that runs sessions as
    /// tokio tasks needs this: a worker thread blocked waiting for a permit could be the
    /// one the permit's holder needs to finish.
    pub async fn begin_async(&mut self) -> Result<(), SqlError> {
        self.context().begin_async().await
    }
}

impl Context<'_> {
    /// BEGIN for async callers ([`Session::begin_async`]).
    async fn begin_async(&mut self) -> Result<(), SqlError> {
        self.shared
            .counters
            .questions
            .fetch_add(1, Ordering::Relaxed);
        self.unlock_tables()?;
        self.commit()?;
        self.take_next_modes();
        let trx = (self.shared.engine)
            .begin_async(self.transaction.level.engine())
            .await;
        self.transaction.trx = Some(self.adopt(trx));
        Ok(())
    }

    /// Runs `f` as one statement of the session's transaction, opening one if none is open
    /// and committing it after if it is the statement's own (autocommit).
    pub(crate) fn with_trx<R>(
        &mut self,
        f: impl FnOnce(&mut Self, &mut Transaction) -> Result<R, SqlError>,
    ) -> Result<R, SqlError> {
        let own = self.transaction.trx.is_none() && self.vars.settings.autocommit;
        let mut trx = match self.transaction.trx.take() {
            Some(t) => t,
            None => self.begin_trx(),
        };
        let savepoint = trx.savepoint();
        let mut inner = None;
        let outcome = trx.statement(|t| {
            inner = Some(f(self, t));
            Ok(())
        });
        let result = match (outcome, inner) {
            (Err(e), _) => Err(SqlError::from(e)),
            (Ok(()), Some(Err(e))) => {
                if trx.is_active() {
                    trx.rollback_to(savepoint);
                }
                Err(e)
            }
            (Ok(()), Some(Ok(r))) => Ok(r),
            (Ok(()), None) => Err(SqlError::other("statement did not run")),
        };
        match &result {
            Err(e)
                if e.ends_transaction(self.shared.config.rollback_on_timeout)
                    || !trx.is_active() =>
            {
                self.shared
                    .counters
                    .implicit_rollbacks
                    .fetch_add(1, Ordering::Relaxed);
                trx.rollback();
            }
            Err(_) if own => trx.rollback(),
            Ok(_) if own => trx.commit().map_err(SqlError::from)?,
            _ => {
                self.transaction.trx = Some(trx);
            }
        }
        result
    }

    /// Whether a plain SELECT now reads `FOR SHARE`: in a SERIALIZABLE transaction, open
    /// or about to open with autocommit off (an autocommit SELECT stays a consistent read).
    pub(crate) fn serializable_read(&self) -> bool {
        let level = match self.transaction.trx {
            Some(_) => self.transaction.level,
            None if !self.vars.settings.autocommit => self
                .vars
                .settings
                .next_isolation
                .unwrap_or(self.vars.settings.isolation),
            None => return false,
        };
        level == crate::settings::Level::Serializable
    }

    fn begin_trx(&mut self) -> Transaction {
        self.take_next_modes();
        let trx = self
            .shared
            .engine
            .begin_with(self.transaction.level.engine());
        self.adopt(trx)
    }

    /// The isolation level and access mode of the transaction beginning now: SET
    /// TRANSACTION's for the next one if it said, else the session's.
    fn take_next_modes(&mut self) {
        self.transaction.level =
            (self.vars.settings.next_isolation.take()).unwrap_or(self.vars.settings.isolation);
        self.transaction.read_only =
            (self.vars.settings.next_read_only.take()).unwrap_or(self.vars.settings.read_only);
    }

    /// `trx`, beginning now, made the session's: its lock wait timeout, the KILL flag, its
    /// trx id reported for INNODB_TRX, and no savepoints yet.
    fn adopt(&mut self, mut trx: Transaction) -> Transaction {
        trx.set_lock_wait_timeout(self.vars.settings.lock_wait_timeout);
        trx.set_interrupt(self.connection.control.stop_flag());
        trx.report_id_to(self.connection.control.trx_began(self.open_trx()));
        self.transaction.savepoints.clear();
        trx
    }

    /// The transaction beginning now, as INNODB_TRX shows it.
    fn open_trx(&self) -> crate::control::OpenTrx {
        crate::control::OpenTrx {
            started: self.now(0, true),
            since: std::time::Instant::now(),
            isolation: match self.transaction.level {
                crate::settings::Level::Serializable => "SERIALIZABLE",
                crate::settings::Level::Engine(waterline_txn::Isolation::ReadCommitted) => {
                    "READ COMMITTED"
                }
                crate::settings::Level::Engine(_) => "REPEATABLE READ",
            },
            read_only: self.transaction.read_only,
            foreign_key_checks: self.vars.settings.foreign_key_checks,
            unique_checks: self.vars.settings.unique_checks,
        }
    }

    /// Runs `f` with a transaction of its own (READ COMMITTED, begun now) in place of the
    /// session's, which is kept as it was, with its savepoints: a read of system tables,
    /// made for the statement, sees them whatever the session's transaction has seen. With
    /// no database in use, `f` runs in `database` (a system table needs none).
    pub(crate) fn in_own_transaction<R>(
        &mut self,
        database: &str,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let no_database = self.vars.database.is_none();
        if no_database {
            self.vars.database = Some(std::sync::Arc::from(database));
        }
        let kept = (
            self.transaction.trx.take(),
            std::mem::take(&mut self.transaction.savepoints),
        );
        let mut trx = (self.shared.engine).begin_with(waterline_txn::Isolation::ReadCommitted);
        trx.set_lock_wait_timeout(self.vars.settings.lock_wait_timeout);
        trx.set_interrupt(self.connection.control.stop_flag());
        self.transaction.trx = Some(trx);
        let result = f(self);
        if let Some(trx) = self.transaction.trx.take() {
            trx.rollback();
        }
        (self.transaction.trx, self.transaction.savepoints) = kept;
        if no_database {
            self.vars.database = None;
        }
        result
    }

    /// SAVEPOINT name: marks where the open transaction is (a savepoint of the same name
    /// moves here). Outside a transaction it marks nothing, as in MySQL with autocommit.
    pub(crate) fn savepoint(&mut self, name: &str) {
        let Some(trx) = self.transaction.trx.as_ref() else {
            return;
        };
        self.transaction
            .savepoints
            .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.transaction
            .savepoints
            .push((name.to_owned(), trx.savepoint()));
    }

    /// ROLLBACK TO SAVEPOINT name (`rollback`) or RELEASE SAVEPOINT name: the changes made
    /// since it are undone (their row locks stay, as InnoDB's do), or it is forgotten; the
    /// savepoints set after it are forgotten either way. 1305 for a name not set.
    pub(crate) fn back_to_savepoint(&mut self, name: &str, rollback: bool) -> Result<(), SqlError> {
        let at = (self.transaction.trx.as_ref())
            .and_then(|_| {
                (self.transaction.savepoints.iter()).position(|(n, _)| n.eq_ignore_ascii_case(name))
            })
            .ok_or_else(|| {
                SqlError::new(1305, "42000", format!("SAVEPOINT {name} does not exist"))
            })?;
        if rollback {
            let (_, savepoint) = self.transaction.savepoints[at];
            self.transaction.savepoints.truncate(at + 1);
            if let Some(trx) = self.transaction.trx.as_mut() {
                trx.rollback_to(savepoint);
            }
        } else {
            self.transaction.savepoints.truncate(at);
        }
        Ok(())
    }

    /// START TRANSACTION (BEGIN): commits the open transaction, if any, and opens one;
    /// `read_only` is its READ ONLY or READ WRITE, if it says.
    pub(crate) fn start_transaction(&mut self, read_only: Option<bool>) -> Result<(), SqlError> {
        self.unlock_tables()?;
        self.commit()?;
        if read_only.is_some() {
            self.vars.settings.next_read_only = read_only;
        }
        self.transaction.trx = Some(self.begin_trx());
        Ok(())
    }

    /// COMMIT or ROLLBACK AND CHAIN: the open transaction ends (`commit`: committed), and a
    /// new one begins at once at its isolation level and access mode.
    pub(crate) fn end_and_chain(&mut self, commit: bool) -> Result<(), SqlError> {
        let (level, read_only) = (self.transaction.level, self.transaction.read_only);
        if commit {
            self.commit()?;
        } else {
            self.abort();
        }
        self.vars.settings.next_isolation = Some(level);
        self.start_transaction(Some(read_only))
    }

    /// 1792 if `statement` changes a table other than a temporary one and the transaction
    /// it runs in (the open one, or the one it would open) is READ ONLY.
    pub(crate) fn may_write(&self, statement: &sqlparser::ast::Statement) -> Result<(), SqlError> {
        let read_only = match self.transaction.trx {
            Some(_) => self.transaction.read_only,
            None => (self.vars.settings.next_read_only).unwrap_or(self.vars.settings.read_only),
        };
        if !read_only
            || !matches!(
                statement,
                sqlparser::ast::Statement::Insert(_)
                    | sqlparser::ast::Statement::Update(_)
                    | sqlparser::ast::Statement::Delete(_)
            )
        {
            return Ok(());
        }
        let writes_base_table = (crate::table_locks::tables_of(statement).into_iter())
            .any(|used| used.write && self.temporary_table(&used.name).is_none());
        if writes_base_table {
            return Err(SqlError::new(
                1792,
                "25006",
                "Cannot execute statement in a READ ONLY transaction.",
            ));
        }
        Ok(())
    }

    /// `START TRANSACTION WITH CONSISTENT SNAPSHOT`: a new transaction whose read view
    /// opens now, so it sees what was committed before this statement and nothing after
    /// (under READ COMMITTED a view lasts one statement: there it changes nothing, as in
    /// MySQL).
    pub(crate) fn start_with_snapshot(&mut self, read_only: Option<bool>) -> Result<(), SqlError> {
        self.start_transaction(read_only)?;
        if let Some(trx) = self.transaction.trx.as_mut() {
            trx.open_view()?;
        }
        Ok(())
    }

    /// COMMIT (and implicit commits): ends the open transaction.
    pub(crate) fn commit(&mut self) -> Result<Response, SqlError> {
        match self.transaction.trx.take() {
            Some(trx) => trx
                .commit()
                .map(|()| Response::done(0))
                .map_err(SqlError::from),
            None => Ok(Response::done(0)),
        }
    }
}
