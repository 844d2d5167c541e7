//! LOCK TABLES and UNLOCK TABLES: MySQL's explicit table locks, which mysqldump takes
//! (`LOCK TABLES t READ` while it reads, `LOCK TABLES t WRITE` around a table's rows in its
//! dump) and which take part in nothing else here (row locks and MVCC are the engine's).
//!
//! A session's LOCK TABLES commits its transaction, gives back the table locks it held, and
//! waits until it can have all the ones it names at once: READ is shared (others may read
//! the table, nobody may write it), WRITE is exclusive. While it holds them it may use
//! those tables alone (1100 for another; temporary and system tables are free) and write
//! only those it locked WRITE (1099). Another session's statement that reads a table
//! locked WRITE, or writes one locked at all, waits until they are given back, for at most
//! the session's lock wait timeout (1205), or until KILL. UNLOCK TABLES, BEGIN and the
//! session's end give them back (UNLOCK TABLES and BEGIN commit first, as in MySQL).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use sqlparser::ast::{self, FromTable, Statement, TableFactor, TableObject, Visitor};
use waterline_txn::TableId;

use crate::error::SqlError;
use waterline_planner::walk;

/// Who holds which table locks (one per engine, shared by every session over it).
#[derive(Debug, Default)]
pub(crate) struct TableLocks {
    held: Mutex<HashMap<TableId, Holders>>,
    released: Condvar,
    /// Sessions that hold table locks: while none does, a statement checks nothing.
    holders: AtomicUsize,
}

/// The sessions (connection ids) that hold one table's lock.
#[derive(Debug, Default)]
struct Holders {
    readers: Vec<u32>,
    writer: Option<u32>,
}

impl Holders {
    /// Whether `session` may have the table for writing (`write`) or reading while the
    /// others hold what they hold.
    fn allows(&self, session: u32, write: bool) -> bool {
        let writer_ok = self.writer.is_none_or(|w| w == session);
        writer_ok && (!write || self.readers.iter().all(|&r| r == session))
    }
}

impl TableLocks {
    /// Whether any session holds a table lock.
    pub(crate) fn any(&self) -> bool {
        // Relaxed: a statement that misses a lock taken at this instant ran before it.
        self.holders.load(Ordering::Relaxed) > 0
    }

    /// Waits until every one of `tables` (each with whether it is for writing) allows
    /// `session`, then runs `then` with the table of holders locked.
    fn wait(
        &self,
        session: u32,
        tables: &[(TableId, bool)],
        (timeout, stop): (Duration, &AtomicBool),
        then: impl FnOnce(&mut HashMap<TableId, Holders>),
    ) -> Result<(), SqlError> {
        let deadline = Instant::now() + timeout;
        let mut held = self.held.lock();
        loop {
            let free = tables
                .iter()
                .all(|(t, write)| held.get(t).is_none_or(|h| h.allows(session, *write)));
            if free {
                then(&mut held);
                return Ok(());
            }
            if stop.load(Ordering::Relaxed) {
                return Err(SqlError::new(
                    1317,
                    "70100",
                    "Query execution was interrupted",
                ));
            }
            if Instant::now() >= deadline {
                return Err(SqlError::new(
                    1205,
                    "HY000",
                    "Lock wait timeout exceeded; try restarting transaction",
                ));
            }
            // A KILL sets `stop` without notifying: look again every 20 ms.
            self.released.wait_for(&mut held, Duration::from_millis(20));
        }
    }

    /// LOCK TABLES for `session`: all of `tables` at once.
    pub(crate) fn lock(
        &self,
        session: u32,
        tables: &[(TableId, bool)],
        limits: (Duration, &AtomicBool),
    ) -> Result<(), SqlError> {
        self.wait(session, tables, limits, |held| {
            for (table, write) in tables {
                let holders = held.entry(*table).or_default();
                if *write {
                    holders.writer = Some(session);
                } else {
                    holders.readers.push(session);
                }
            }
            self.holders.fetch_add(1, Ordering::Relaxed);
        })
    }

    /// Gives back every table lock of `session`.
    pub(crate) fn unlock(&self, session: u32) {
        let mut held = self.held.lock();
        held.retain(|_, h| {
            h.readers.retain(|&r| r != session);
            if h.writer == Some(session) {
                h.writer = None;
            }
            h.writer.is_some() || !h.readers.is_empty()
        });
        self.holders.fetch_sub(1, Ordering::Relaxed);
        self.released.notify_all();
    }

    /// A statement of `session` (which holds no table lock) that uses `tables`: waits while
    /// another session's lock keeps it out.
    pub(crate) fn enter(
        &self,
        session: u32,
        tables: &[(TableId, bool)],
        limits: (Duration, &AtomicBool),
    ) -> Result<(), SqlError> {
        self.wait(session, tables, limits, |_| {})
    }
}

/// A table a statement uses: its name, the alias it is given, and whether the statement
/// writes it.
#[derive(Debug)]
pub(crate) struct Used {
    pub(crate) name: String,
    pub(crate) alias: Option<String>,
    pub(crate) write: bool,
}

impl Used {
    /// What LOCK TABLES must have named for this use (MySQL's rule: a table used under an
    /// alias is locked under that alias, one used without is locked without), and what
    /// error 1100 calls it.
    pub(crate) fn key(&self) -> &str {
        self.alias
            .as_deref()
            .unwrap_or(crate::names::short(&self.name))
    }
}

/// The table a name names, if the name is one part: every name of a statement is by now
/// the engine's table (`names.rs`), but a system table's (`information_schema.t`).
fn single(name: &ast::ObjectName) -> Option<String> {
    match name.0.as_slice() {
        [ast::ObjectNamePart::Identifier(table)] => Some(table.value.clone()),
        _ => None,
    }
}

/// The base tables `statement` names, each with its alias and whether the statement writes
/// it (the target of INSERT, REPLACE, UPDATE, DELETE, TRUNCATE, ALTER or DROP).
pub(crate) fn tables_of(statement: &Statement) -> Vec<Used> {
    struct Collect {
        used: Vec<Used>,
        /// The next relation is a table factor's, already collected with its alias.
        in_factor: bool,
    }
    impl Visitor for Collect {
        type Break = ();
        fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
            if let TableFactor::Table { name, alias, .. } = factor {
                self.in_factor = true;
                if let Some(name) = single(name) {
                    self.used.push(Used {
                        name,
                        alias: alias.as_ref().map(|a| a.name.value.clone()),
                        write: false,
                    });
                }
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_relation(&mut self, name: &ast::ObjectName) -> ControlFlow<()> {
            if !std::mem::take(&mut self.in_factor)
                && let Some(name) = single(name)
            {
                self.used.push(Used {
                    name,
                    alias: None,
                    write: false,
                });
            }
            ControlFlow::Continue(())
        }
    }
    let mut collect = Collect {
        used: Vec::new(),
        in_factor: false,
    };
    let _ = walk::visit(statement, &mut collect);
    let mut named = collect.used;
    let mut written: Vec<(&ast::ObjectName, Option<&ast::TableAlias>)> = Vec::new();
    match statement {
        Statement::Insert(insert) => {
            if let TableObject::TableName(name) = &insert.table {
                written.push((name, None));
            }
        }
        Statement::Update(update) => {
            if let TableFactor::Table { name, alias, .. } = &update.table.relation {
                written.push((name, alias.as_ref()));
            }
        }
        Statement::Delete(delete) => {
            let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) = &delete.from;
            for t in from {
                if let TableFactor::Table { name, alias, .. } = &t.relation {
                    written.push((name, alias.as_ref()));
                }
            }
        }
        Statement::Truncate(truncate) => {
            written.extend(truncate.table_names.iter().map(|t| (&t.name, None)))
        }
        Statement::AlterTable(alter) => written.push((&alter.name, None)),
        Statement::Drop { names, .. } => written.extend(names.iter().map(|n| (n, None))),
        _ => {}
    }
    for (name, alias) in written {
        if let Some(table) = single(name) {
            named.push(Used {
                name: table,
                alias: alias.map(|a| a.name.value.clone()),
                write: true,
            });
        }
    }
    named
}

/// 1100: a table the session's LOCK TABLES did not name.
pub(crate) fn not_locked(name: &str) -> SqlError {
    SqlError::new(
        1100,
        "HY000",
        format!("Table '{name}' was not locked with LOCK TABLES"),
    )
}

/// 1099: a write of a table the session locked READ.
pub(crate) fn read_locked(name: &str) -> SqlError {
    SqlError::new(
        1099,
        "HY000",
        format!("Table '{name}' was locked with a READ lock and can't be updated"),
    )
}
