//! Prepared statements: parsed and bound once, planned at every execution (as in MySQL), and
//! bound again when the catalog or the database in use has changed since.

use std::sync::Arc;

use sqlparser::ast::Statement;
use waterline_txn::Value;

use super::{Context, Response, Session};
use crate::error::SqlError;

/// The session's prepared statements, by id.
#[derive(Debug)]
pub(super) struct Statements {
    pub(super) by_id: std::collections::HashMap<u32, Prepared>,
    /// The next statement's id.
    pub(super) next_id: u32,
    /// The catalog version the kept bindings were last checked against.
    pub(super) checked: u64,
}

impl Default for Statements {
    fn default() -> Statements {
        Statements {
            by_id: std::collections::HashMap::new(),
            next_id: 1,
            checked: 0,
        }
    }
}

/// A prepared statement.
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    pub(crate) statement: Arc<Statement>,
    pub(crate) params: usize,
    /// Its binding from an earlier execution, to run again while it is good.
    pub(crate) binding: Option<Arc<Binding>>,
    /// Its `MAX_EXECUTION_TIME(N)` optimizer hint, if a SELECT has one.
    pub(crate) hint: Option<u64>,
}

/// A SELECT, INSERT, UPDATE or DELETE with its names resolved against the catalog: tables to
/// handles, columns to positions, `?` to parameter numbers. A prepared statement is bound
/// once and planned at every execution, as in MySQL. Each statement binds itself and runs
/// from its binding (`select/`, `dml/`).
pub(crate) trait Bound: std::fmt::Debug + Send + Sync {
    /// Whether it holds a value of this moment (NOW(), @@autocommit), so it is not kept.
    fn volatile(&self) -> bool;

    /// Runs `statement`, bound as `self`, with `params`.
    fn run(
        &self,
        s: &mut Context<'_>,
        statement: &Statement,
        params: &[Value],
    ) -> Result<Response, SqlError>;
}

/// A binding and what it was bound against: it is good while the catalog version and the
/// session's database are the same (MySQL re-prepares a statement whose tables changed).
#[derive(Debug)]
pub(crate) struct Binding {
    pub(crate) version: u64,
    pub(crate) database: Option<Arc<str>>,
    pub(crate) bound: Box<dyn Bound>,
}

impl Binding {
    /// Whether it still names what it named: the catalog and `s`'s database are the same.
    pub(crate) fn is_current(&self, s: &Context<'_>) -> bool {
        self.version == s.catalog_version() && self.database == s.vars.database
    }
}

impl Session {
    /// After DDL, drops every kept binding made before it: a binding holds its tables'
    /// handles, and a dropped table's rows live as long as its last handle. So a statement
    /// that is never run again keeps a dropped table only until its session's next statement.
    pub(crate) fn forget_stale_bindings(&mut self) {
        let version = self.context().catalog_version();
        if version != self.prepared.checked {
            for p in self.prepared.by_id.values_mut() {
                if p.binding.as_ref().is_some_and(|b| b.version != version) {
                    p.binding = None;
                }
            }
            self.prepared.checked = version;
        }
    }

    /// Keeps `prepared` under a new id, which it returns.
    pub(crate) fn keep_prepared(&mut self, prepared: Prepared) -> u32 {
        let id = self.prepared.next_id;
        self.prepared.next_id = self.prepared.next_id.wrapping_add(1).max(1);
        self.prepared.by_id.insert(id, prepared);
        id
    }

    /// Prepared statement `id`.
    pub(crate) fn prepared(&self, id: u32) -> Option<Prepared> {
        self.prepared.by_id.get(&id).cloned()
    }

    /// Keeps `binding` with prepared statement `id`, for its next executions.
    pub(crate) fn keep_binding(&mut self, id: u32, binding: Arc<Binding>) {
        if let Some(p) = self.prepared.by_id.get_mut(&id) {
            p.binding = Some(binding);
        }
    }

    /// The parameter count of prepared statement `id`.
    pub fn prepared_params(&self, id: u32) -> Option<usize> {
        self.prepared.by_id.get(&id).map(|p| p.params)
    }

    /// Forgets prepared statement `id`.
    pub fn close_prepared(&mut self, id: u32) {
        self.prepared.by_id.remove(&id);
    }
}
