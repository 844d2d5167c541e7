//! SELECT: bound against the catalog (the planner binds FROM and WHERE, `project.rs` the
//! select list, GROUP BY, HAVING and ORDER BY into the executor's `Output`; `group_by.rs`
//! checks ONLY_FULL_GROUP_BY, `limit.rs` reads LIMIT and OFFSET and how many rows the plan
//! may stop at), planned over the session's transaction, and run by the planner's executor,
//! whose steps (read, filter and join, group, aggregate, having, project, sort, limit) are
//! one file each in `waterline_planner::exec`. Also EXPLAIN, SELECT without FROM, UNION
//! (`union.rs`) and uncorrelated subqueries (`subquery.rs`).

use std::sync::Arc;
use std::sync::atomic::Ordering as AtomicOrdering;

use sqlparser::ast::{self, SetExpr, Statement};
use waterline_planner::Env;
use waterline_planner::bind::{BoundSelect, BoundTable, bind_query_with};
use waterline_planner::exec::execute_first;
use waterline_txn::{LockMode, LockWait, Row, Table, Value};

mod cte;
mod explain;
pub(crate) mod group_by;
mod limit;
mod project;
pub(crate) mod subquery;
pub(crate) mod union;
pub(crate) mod using;

pub(crate) use explain::{Explained, Format, explain_in};

use limit::{limit_offset, rows_wanted, usable_rows};
use project::{Projection, bind_projection, project};
pub(crate) use project::{describe, describe_in};

use crate::access::{Derived, TxnAccess, plan_failure, scans_without_index, unlock_unselected};
use crate::error::SqlError;
use crate::session::{Bound, Context, Response};

/// The query a bound SELECT, UNION or query with subqueries runs: its statement's.
fn query_of(statement: &Statement) -> Result<&ast::Query, SqlError> {
    match statement {
        Statement::Query(q) => Ok(q),
        _ => Err(SqlError::other("a query's binding for another statement")),
    }
}

fn select_of(q: &ast::Query) -> Result<&ast::Select, SqlError> {
    match q.body.as_ref() {
        SetExpr::Select(s) => Ok(s),
        other => Err(SqlError::unsupported(other)),
    }
}

/// A SELECT bound against the catalog: the handles of its tables, the planner's bound form,
/// and its select list. A prepared statement keeps one between executions.
#[derive(Debug)]
pub(crate) struct BoundQuery {
    tables: Vec<Table>,
    select: Arc<BoundSelect>,
    projection: Projection,
    lock: Option<LockMode>,
    /// `NOWAIT` or `SKIP LOCKED` after the lock clause.
    wait: LockWait,
}

impl BoundQuery {
    /// How many columns the query returns.
    pub(crate) fn width(&self) -> usize {
        self.projection.width()
    }

    /// The names of the columns it returns.
    fn column_names(&self) -> Vec<Arc<str>> {
        self.projection.column_names()
    }
}

impl Bound for BoundQuery {
    fn volatile(&self) -> bool {
        self.projection.volatile || self.select.volatile
    }

    fn run(
        &self,
        s: &mut Context<'_>,
        statement: &Statement,
        params: &[Value],
    ) -> Result<Response, SqlError> {
        run(s, query_of(statement)?, self, params)
    }
}

/// The handles of `bound`'s tables, from the catalog's `tables`.
fn handles(tables: &[Table], bound: &[BoundTable]) -> Vec<Table> {
    bound
        .iter()
        .filter_map(|b| {
            tables
                .iter()
                .find(|t| t.name().eq_ignore_ascii_case(&b.name))
                .cloned()
        })
        .collect()
}

/// EXPLAIN of a query (planned in the session's transaction, not run; a query with
/// subqueries runs them, as their values are what the query around them is planned with).
pub(crate) fn explain(
    s: &mut Context<'_>,
    q: &ast::Query,
    params: &[Value],
    format: Format,
) -> Result<Response, SqlError> {
    if subquery::has_subquery(q) {
        subquery::explain(s, q, params, format)
    } else {
        explain::explain_flat(s, q, params, format)
    }
}

/// Binds a query against the catalog's `tables`.
pub(crate) fn bind(
    s: &Context<'_>,
    tables: &[Table],
    q: &ast::Query,
) -> Result<BoundQuery, SqlError> {
    let database = s.catalog_database();
    bind_in(s, tables, q, Some(&database), None, &[])
}

/// [`bind`] with `database` (`None`: no database chosen) as the current one, the
/// statement's `derived` tables if it has any, and the subqueries flattened into `q` as
/// `semis`.
pub(crate) fn bind_in(
    s: &Context<'_>,
    tables: &[Table],
    q: &ast::Query,
    database: Option<&str>,
    derived: Option<&Derived>,
    semis: &[waterline_planner::SemiJoin],
) -> Result<BoundQuery, SqlError> {
    let select = select_of(q)?;
    let lock = q.locks.first().map(|l| match l.lock_type {
        ast::LockType::Update => LockMode::Exclusive,
        ast::LockType::Share => LockMode::Shared,
    });
    let wait = match q.locks.first().and_then(|l| l.nonblock.as_ref()) {
        None => LockWait::Wait,
        Some(ast::NonBlock::Nowait) => LockWait::NoWait,
        Some(ast::NonBlock::SkipLocked) => LockWait::SkipLocked,
    };
    // Without FROM (or FROM DUAL) there is no table to find, so no database is needed;
    // WHERE is bound all the same.
    let database = match database {
        Some(d) => d,
        None if select.from.is_empty() => "",
        None => return Err(SqlError::no_database()),
    };
    let bound = bind_query_with(
        &crate::access::SchemaCatalog {
            database,
            tables,
            derived,
        },
        q,
        Some(s),
        semis,
    )?;
    let projection = bind_projection(s, bound.visible(), q, select)?;
    Ok(BoundQuery {
        tables: handles(tables, &bound.tables),
        select: Arc::new(bound),
        projection,
        lock,
        wait,
    })
}

/// Runs a bound query: plans it for `params`, reads, and projects.
pub(crate) fn run(
    s: &mut Context<'_>,
    q: &ast::Query,
    bound: &BoundQuery,
    params: &[Value],
) -> Result<Response, SqlError> {
    let select = select_of(q)?;
    if select.from.is_empty() {
        return without_from(s, q, bound, params);
    }
    let db = s.catalog_database();
    // SERIALIZABLE: a plain SELECT in a transaction reads FOR SHARE, as InnoDB's does.
    let lock = bound
        .lock
        .or_else(|| s.serializable_read().then_some(LockMode::Shared));
    s.with_trx(|s, trx| read(s, q, bound, params, (&db, lock), trx))
}

/// A query without FROM (or FROM DUAL): one row, or none if WHERE is not true of it.
fn without_from(
    s: &Context<'_>,
    q: &ast::Query,
    bound: &BoundQuery,
    params: &[Value],
) -> Result<Response, SqlError> {
    let window = limit_offset(q, params)?;
    let env = Env::new(&[], params);
    let mut rows = vec![Vec::new()];
    for cond in &bound.select.conds {
        if !cond.is_true(env)? {
            rows.clear();
            break;
        }
    }
    project(s, &bound.projection, rows, params, window)
}

/// Plans a bound query for `params` in database `db`, reads with `trx` (locking in `lock`'s
/// mode, if any), and projects: [`run`]'s work, in a transaction of the caller's choice.
pub(crate) fn read(
    s: &mut Context<'_>,
    q: &ast::Query,
    bound: &BoundQuery,
    params: &[Value],
    (db, lock): (&str, Option<LockMode>),
    trx: &mut waterline_txn::Transaction,
) -> Result<Response, SqlError> {
    read_in(s, q, bound, params, (db, lock), trx, None, None)
}

/// Plans bound query `bound` for `params` over `access`, for the first `usable` rows if it
/// may stop there, in the session's planner mode, its trace kept if the trace is on.
fn plan(
    s: &mut Context<'_>,
    access: &TxnAccess<'_>,
    bound: &BoundQuery,
    params: &[Value],
    usable: Option<usize>,
) -> Result<waterline_planner::Plan, SqlError> {
    let plan = s
        .planner(access)
        .limit(usable)
        .optimize(Arc::clone(&bound.select), params)
        .map_err(|e| plan_failure(access, e))?;
    s.trace_plan(&plan);
    Ok(plan)
}

/// What a query block's joined rows go through before they are projected: its WHERE
/// conditions with a correlated subquery, checked per row, and its select list's
/// correlated subqueries, whose values it appends to each row as one more table (returned,
/// for the projection to read) (`subquery/correlated.rs`).
pub(crate) type RowFilter<'f> =
    &'f mut dyn FnMut(
        &mut Context<'_>,
        &mut waterline_txn::Transaction,
        &[BoundTable],
        Vec<Vec<Row>>,
    ) -> Result<(Vec<Vec<Row>>, Option<BoundTable>), SqlError>;

/// [`read`], with the statement's `derived` tables if it has any, and a filter of the joined
/// rows if the block has one (then no LIMIT is pushed into the plan).
#[allow(clippy::too_many_arguments)]
fn read_in(
    s: &mut Context<'_>,
    q: &ast::Query,
    bound: &BoundQuery,
    params: &[Value],
    (db, lock): (&str, Option<LockMode>),
    trx: &mut waterline_txn::Transaction,
    derived: Option<&Derived>,
    filter: Option<RowFilter<'_>>,
) -> Result<Response, SqlError> {
    let select = select_of(q)?;
    let window = limit_offset(q, params)?;
    let mark = trx.lock_mark();
    let access = TxnAccess::new(db, &bound.tables, trx, lock, s.watch().clone())
        .waiting(bound.wait)
        .with_derived(derived);
    let usable = usable_rows(q, select, &bound.select, window).filter(|_| filter.is_none());
    let plan = plan(s, &access, bound, params, usable)?;
    let wanted = rows_wanted(&plan, usable);
    s.scanned_without_index(scans_without_index(&plan));
    let run =
        execute_first(&plan, &access, params, wanted).map_err(|e| plan_failure(&access, e))?;
    s.shared()
        .counters
        .rows_examined
        .fetch_add(run.examined.iter().sum(), AtomicOrdering::Relaxed);
    drop(access);
    let (rows, values) = match filter {
        Some(filter) => filter(s, trx, bound.select.visible(), run.rows)?,
        None => (run.rows, None),
    };
    if lock.is_some() {
        unlock_unselected(trx, mark, &bound.tables, &bound.select.tables, &rows);
    }
    match values {
        // The select list reads the values' table, after the query's (and the hidden
        // semi-join tables, which it cannot name).
        Some(values) => {
            let mut tables = bound.select.visible().to_vec();
            let hidden = BoundTable {
                name: String::new(),
                alias: String::new(),
                schema: Arc::new(waterline_txn::TableSchema::new(String::new(), Vec::new())),
            };
            tables.resize(bound.select.tables.len(), hidden);
            tables.push(values);
            let projection = bind_projection(s, &tables, q, select)?;
            project(s, &projection, rows, params, window)
        }
        None => project(s, &bound.projection, rows, params, window),
    }
}
