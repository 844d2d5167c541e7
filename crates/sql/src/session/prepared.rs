//! Prepared statements: parsed and bound once, planned at every execution (as in MySQL), and
//! bound again when the catalog or the database in use has changed since.

use std::sync::Arc;

use sqlparser::ast::Statement;
use waterline_txn::Value;

use super::{Response, ResultColumn, Session};
use crate::error::SqlError;

/// A prepared statement.
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    pub(crate) statement: Arc<Statement>,
    pub(crate) params: usize,
    /// Its binding from an earlier execution, to run again while it is good.
    binding: Option<Arc<Binding>>,
    /// Its `MAX_EXECUTION_TIME(N)` optimizer hint, if a SELECT has one.
    hint: Option<u64>,
}

/// A SELECT, INSERT, UPDATE or DELETE with its names resolved against the catalog: tables to
/// handles, columns to positions, `?` to parameter numbers. A prepared statement is bound
/// once and planned at every execution, as in MySQL.
#[derive(Debug)]
pub(crate) enum Bound {
    Query(crate::select::BoundQuery),
    Insert(crate::dml::BoundInsert),
    Update(crate::dml::BoundUpdate),
    Delete(crate::dml::BoundDelete),
}

impl Bound {
    /// Whether it holds a value of this moment (NOW(), @@autocommit), so it is not kept.
    fn volatile(&self) -> bool {
        match self {
            Bound::Query(q) => q.volatile(),
            Bound::Insert(i) => i.volatile,
            Bound::Update(u) => u.volatile,
            Bound::Delete(d) => d.volatile(),
        }
    }
}

/// A binding and what it was bound against: it is good while the catalog version and the
/// session's database are the same (MySQL re-prepares a statement whose tables changed).
#[derive(Debug)]
pub(crate) struct Binding {
    version: u64,
    database: Option<Arc<str>>,
    pub(super) bound: Bound,
}

impl Session {
    /// Prepares a statement: its id, its parameter count, and (for a SELECT) its columns.
    pub fn prepare(&mut self, sql: &str) -> Result<(u32, usize, Vec<ResultColumn>), SqlError> {
        let statement = match crate::parse::one(sql)? {
            crate::parse::Parsed::Statement(s) => s,
            crate::parse::Parsed::Special(_) => {
                return Err(SqlError::new(
                    1295,
                    "HY000",
                    "This command is not supported in the prepared statement protocol yet",
                ));
            }
        };
        let params = crate::parse::count_params(&statement);
        let preparable = matches!(
            *statement,
            Statement::Query(_)
                | Statement::Insert(_)
                | Statement::Update(_)
                | Statement::Delete(_)
                | Statement::Set(_)
                | Statement::StartTransaction { .. }
                | Statement::Commit { .. }
                | Statement::Rollback { .. }
        );
        if !preparable {
            return Err(SqlError::new(
                1295,
                "HY000",
                "This command is not supported in the prepared statement protocol yet",
            ));
        }
        if let Statement::Query(q) = statement.as_ref()
            && crate::perf_schema::view_of(q, self.database.as_deref())?.is_some()
        {
            return Err(SqlError::new(
                1295,
                "HY000",
                "This command is not supported in the prepared statement protocol yet",
            ));
        }
        let columns = match statement.as_ref() {
            Statement::Query(q) => self.describe(q)?,
            _ => Vec::new(),
        };
        let id = self.next_statement;
        self.next_statement = self.next_statement.wrapping_add(1).max(1);
        self.prepared.insert(
            id,
            Prepared {
                statement: Arc::from(statement),
                params,
                binding: None,
                hint: crate::parse::max_execution_time_hint(sql),
            },
        );
        Ok((id, params, columns))
    }

    /// Runs prepared statement `id` with `params`.
    pub fn execute_prepared(&mut self, id: u32, params: &[Value]) -> Result<Response, SqlError> {
        self.start_statement()?;
        self.forget_stale_bindings();
        let prepared = self
            .prepared
            .get(&id)
            .cloned()
            .ok_or_else(|| SqlError::unknown_statement(id, "EXECUTE"))?;
        if params.len() != prepared.params {
            return Err(SqlError::new(
                1210,
                "HY000",
                "Incorrect arguments to EXECUTE",
            ));
        }
        if let Statement::Query(_) = *prepared.statement {
            self.limit_select(prepared.hint);
        }
        let good = |b: &Binding| b.version == self.catalog_version() && b.database == self.database;
        let binding = match prepared.binding {
            Some(b) if good(&b) => b,
            _ => match self.bind(&prepared.statement)? {
                Some(b) => {
                    let b = Arc::new(b);
                    if !b.bound.volatile()
                        && let Some(p) = self.prepared.get_mut(&id)
                    {
                        p.binding = Some(Arc::clone(&b));
                    }
                    b
                }
                None => return self.run(&prepared.statement, params),
            },
        };
        self.warnings.clear();
        self.run_bound(&prepared.statement, &binding.bound, params)
    }

    /// After DDL, drops every kept binding made before it: a binding holds its tables'
    /// handles, and a dropped table's rows live as long as its last handle. So a statement
    /// that is never run again keeps a dropped table only until its session's next statement.
    pub(super) fn forget_stale_bindings(&mut self) {
        let version = self.catalog_version();
        if version != self.bindings_checked {
            for p in self.prepared.values_mut() {
                if p.binding.as_ref().is_some_and(|b| b.version != version) {
                    p.binding = None;
                }
            }
            self.bindings_checked = version;
        }
    }

    /// Binds `statement` against the catalog if it is a SELECT, INSERT, UPDATE or DELETE.
    pub(super) fn bind(&self, statement: &Statement) -> Result<Option<Binding>, SqlError> {
        if !matches!(
            statement,
            Statement::Query(_)
                | Statement::Insert(_)
                | Statement::Update(_)
                | Statement::Delete(_)
        ) {
            return Ok(None);
        }
        let (version, tables) = self.tables();
        let bound = match statement {
            Statement::Query(q) => Bound::Query(crate::select::bind(self, &tables, q)?),
            Statement::Insert(i) => Bound::Insert(crate::dml::bind_insert(self, &tables, i)?),
            Statement::Update(u) => Bound::Update(crate::dml::bind_update(self, &tables, u)?),
            Statement::Delete(d) => Bound::Delete(crate::dml::bind_delete(self, &tables, d)?),
            _ => return Ok(None),
        };
        Ok(Some(Binding {
            version,
            database: self.database.clone(),
            bound,
        }))
    }

    /// Runs `statement`, bound as `bound`, with `params`.
    pub(super) fn run_bound(
        &mut self,
        statement: &Statement,
        bound: &Bound,
        params: &[Value],
    ) -> Result<Response, SqlError> {
        match (statement, bound) {
            (Statement::Query(q), Bound::Query(b)) => crate::select::run(self, q, b, params),
            (_, Bound::Insert(b)) => crate::dml::insert(self, b, params),
            (_, Bound::Update(b)) => crate::dml::update(self, b, params),
            (_, Bound::Delete(b)) => crate::dml::delete(self, b, params),
            (_, Bound::Query(_)) => Err(SqlError::other("a query's binding for another statement")),
        }
    }

    /// The parameter count of prepared statement `id`.
    pub fn prepared_params(&self, id: u32) -> Option<usize> {
        self.prepared.get(&id).map(|p| p.params)
    }

    /// Forgets prepared statement `id`.
    pub fn close_prepared(&mut self, id: u32) {
        self.prepared.remove(&id);
    }
}
