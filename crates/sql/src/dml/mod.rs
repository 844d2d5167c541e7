//! INSERT, UPDATE and DELETE over the session's transaction. Each statement is one engine
//! statement: if any row fails, every change of the statement is undone. INSERT (its
//! sources, AUTO_INCREMENT, duplicates: REPLACE, IGNORE, ON DUPLICATE KEY UPDATE) is
//! `insert.rs`; this file binds the target table and assignments the three share, and runs
//! UPDATE and DELETE.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use sqlparser::ast::{self, AssignmentTarget, Expr as Ast, FromTable, Statement, TableFactor};
use waterline_planner::bind::{Binder, BoundSelect, BoundTable, object_name};
use waterline_planner::exec::execute;
use waterline_planner::{Access, Env, Expr, IndexId, Planner};
use waterline_txn::{
    Isolation, Key, KeyRange, LockMode, ReadOptions, Row, Table, TableSchema, Transaction, Value,
    copy_keyed_row, copy_row,
};

use crate::access::{TxnAccess, plan_failure};
use crate::error::SqlError;
use crate::session::{Bound, Context, Response};
use crate::types::store;
use crate::write::Checks;

mod insert;

pub(crate) use insert::{bind_insert, implicit_default};

/// Assignments bound: each target column's position and its expression.
type Assignments = Vec<(usize, Expr)>;

/// The database and the handle of table `name`, from the catalog's `tables`.
fn table_handle(
    s: &Context<'_>,
    tables: &[Table],
    name: &ast::ObjectName,
) -> Result<(Arc<str>, Table), SqlError> {
    let db = s.catalog_database();
    let name = object_name(name)?;
    let table = tables
        .iter()
        .find(|t| t.name().eq_ignore_ascii_case(&name))
        .cloned()
        .ok_or_else(|| SqlError::no_table(&db, &name))?;
    Ok((db, table))
}

/// The WHERE of an UPDATE or DELETE of `table`, bound.
fn bind_filter(
    s: &Context<'_>,
    db: &str,
    table: &Table,
    selection: Option<&Ast>,
) -> Result<Arc<BoundSelect>, SqlError> {
    let catalog = crate::access::SchemaCatalog {
        database: db,
        tables: std::slice::from_ref(table),
        derived: None,
    };
    let filter = Planner::new(&catalog).bind_where(table.name(), selection, Some(s))?;
    Ok(Arc::new(filter))
}

fn single_table(from: &ast::TableWithJoins) -> Result<&ast::ObjectName, SqlError> {
    match &from.relation {
        TableFactor::Table { name, .. } if from.joins.is_empty() => Ok(name),
        _ => Err(SqlError::unsupported("a multi-table UPDATE or DELETE")),
    }
}

/// Whether `row` of the table `filter` (a bound WHERE of one table) reads meets it.
fn selects(filter: &BoundSelect, row: &Row, params: &[Value]) -> Result<bool, SqlError> {
    let slots = [Some(row)];
    let env = Env::new(&slots, params);
    for c in &filter.conds {
        if !c.is_true(env)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The rows of `table` that `filter` (its bound WHERE) selects, with their primary keys,
/// locked for update; `update` for an UPDATE, which may read semi-consistently.
///
/// Under READ COMMITTED the statement keeps the locks of these rows alone, as InnoDB's does:
/// - An UPDATE that scans the clustered index (not a unique search) reads
///   **semi-consistently**: it reads each row's version as of the statement's view without a
///   lock, and only a row whose version meets WHERE is locked (waiting for a holder), read
///   again at its newest and kept if it still meets WHERE. So it passes over the rows other
///   transactions hold that it would not change, where InnoDB reads the last committed
///   version of a locked row ("semi-consistent read", MySQL 8.0 manual 17.7.2.1).
/// - Otherwise (DELETE, or a search of a secondary index) every row read is locked, waiting
///   for a holder, and the rows WHERE rejects are unlocked afterwards (InnoDB's
///   `unlock_row`).
///
/// Under REPEATABLE READ and SERIALIZABLE every row read stays locked, with the gaps.
fn target_rows(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    (db, table): (&str, &Table),
    filter: &Arc<BoundSelect>,
    params: &[Value],
    update: bool,
) -> Result<Vec<(Key, Row)>, SqlError> {
    let committed = trx.isolation() == Isolation::ReadCommitted;
    let mark = trx.lock_mark();
    let (rows, locked) = candidates(s, trx, (db, table), filter, params, committed && update)?;
    if !committed {
        return Ok(rows);
    }
    if locked {
        let selected: HashSet<&Key> = rows.iter().map(|(key, _)| key).collect();
        trx.unlock_rows_since(mark, table, |key| selected.contains(key));
        return Ok(rows);
    }
    let mut kept = Vec::with_capacity(rows.len());
    for (key, _) in rows {
        s.watch().check()?;
        let mark = trx.lock_mark();
        match trx.get_with(table, key.clone(), ReadOptions::FOR_UPDATE, copy_row)? {
            Some(row) if selects(filter, &row, params)? => kept.push((key, row)),
            _ => {
                trx.unlock_rows_since(mark, table, |_| false);
            }
        }
    }
    Ok(kept)
}

/// The rows of `table` that `filter` selects, and whether they were read locked: without a
/// lock if `semi_consistent` and the plan scans the clustered index, locked for update
/// otherwise.
fn candidates(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    (db, table): (&str, &Table),
    filter: &Arc<BoundSelect>,
    params: &[Value],
    semi_consistent: bool,
) -> Result<(Vec<(Key, Row)>, bool), SqlError> {
    if table.schema().primary_key.is_none() {
        // No primary key: only the hidden row id finds a row again; read them all with it.
        s.scanned_without_index(true);
        let lock = (!semi_consistent).then_some(LockMode::Exclusive);
        let options = ReadOptions {
            lock,
            ..ReadOptions::default()
        };
        let mut out = Vec::new();
        for (key, row) in trx.scan_with(table, KeyRange::All, options, copy_keyed_row)? {
            s.watch().check()?;
            if selects(filter, &row, params)? {
                out.push((key, row));
            }
        }
        return Ok((out, lock.is_some()));
    }
    let pk = table.schema().primary_key.clone().unwrap_or_default();
    let tables = std::slice::from_ref(table);
    let access = TxnAccess::new(
        db,
        tables,
        trx,
        Some(LockMode::Exclusive),
        s.watch().clone(),
    );
    let plan = s
        .planner(&access)
        .optimize(Arc::clone(filter), params)
        .map_err(|e| plan_failure(&access, e))?;
    s.trace_plan(&plan);
    let semi_consistent = semi_consistent && scans_clustered(&plan);
    let access = if semi_consistent {
        drop(access);
        TxnAccess::new(db, tables, trx, None, s.watch().clone())
    } else {
        access
    };
    let run = execute(&plan, &access, params).map_err(|e| plan_failure(&access, e))?;
    s.scanned_without_index(crate::access::scans_without_index(&plan));
    s.shared()
        .counters
        .rows_examined
        .fetch_add(run.examined.iter().sum(), Ordering::Relaxed);
    let rows = run
        .rows
        .into_iter()
        .map(|mut joined| {
            let row = joined.swap_remove(0);
            (pk.iter().map(|&c| row[c].clone()).collect(), row)
        })
        .collect();
    Ok((rows, !semi_consistent))
}

/// Whether `plan` (of one table) walks its clustered index: every row, or a range or a
/// prefix of the primary key. InnoDB reads semi-consistently there only, not in a unique
/// search and not through a secondary index.
fn scans_clustered(plan: &waterline_planner::Plan) -> bool {
    plan.impossible.is_none()
        && plan.tables.iter().all(|t| match &t.access {
            Access::All => true,
            Access::Range { index, .. } | Access::Ref { index, .. } => *index == IndexId::Primary,
            _ => false,
        })
}

/// An UPDATE bound against the catalog.
#[derive(Debug)]
pub(crate) struct BoundUpdate {
    db: Arc<str>,
    table: Table,
    /// Column and new value, in SET order.
    sets: Vec<(usize, Expr)>,
    /// How many placeholders SET has (WHERE's come after them).
    set_params: usize,
    filter: Arc<BoundSelect>,
    /// The foreign keys around the table, resolved with the binding.
    checks: Arc<Checks>,
    /// Whether SET holds a session value of this moment (NOW()): then it is not kept.
    volatile: bool,
}

/// Binds UPDATE t SET c = expr, ... [WHERE ...].
pub(crate) fn bind_update(
    s: &Context<'_>,
    tables: &[Table],
    up: &ast::Update,
) -> Result<BoundUpdate, SqlError> {
    if up.from.is_some() || up.limit.is_some() || !up.order_by.is_empty() {
        return Err(SqlError::unsupported("UPDATE with FROM, ORDER BY or LIMIT"));
    }
    let (db, table) = table_handle(s, tables, single_table(&up.table)?)?;
    let schema = table.shared_schema();
    let bound = [BoundTable {
        name: table.name().to_owned(),
        alias: crate::names::short(table.name()).to_owned(),
        schema: Arc::clone(&schema),
    }];
    let mut binder = Binder::new(&bound).with_session(s);
    let sets = bind_assignments(&schema, &up.assignments, &mut binder)?;
    let filter = bind_filter(s, &db, &table, up.selection.as_ref())?;
    Ok(BoundUpdate {
        volatile: binder.volatile || filter.volatile,
        checks: Checks::of(s, &table)?,
        db,
        table,
        sets,
        set_params: binder.param_count(),
        filter,
    })
}

/// `SET col = expr, ...` bound: each target column's position and its expression.
fn bind_assignments(
    schema: &TableSchema,
    assignments: &[ast::Assignment],
    binder: &mut Binder<'_>,
) -> Result<Assignments, SqlError> {
    assignments
        .iter()
        .map(|a| {
            let AssignmentTarget::ColumnName(c) = &a.target else {
                return Err(SqlError::unsupported("an assignment to a tuple"));
            };
            let c = object_name(c)?;
            let pos = schema
                .columns
                .iter()
                .position(|col| col.name.eq_ignore_ascii_case(&c))
                .ok_or_else(|| SqlError::unknown_column(&c, "field list"))?;
            Ok((pos, binder.expr(&a.value, "field list")?))
        })
        .collect()
}

/// Runs a bound UPDATE with `params`.
pub(crate) fn update(
    s: &mut Context<'_>,
    bound: &BoundUpdate,
    params: &[Value],
) -> Result<Response, SqlError> {
    let mut warnings = Vec::new();
    let (matched, changed) =
        s.with_trx(|s, trx| update_in(s, trx, bound, params, &mut warnings))?;
    s.warnings_mut().append(&mut warnings);
    let warned = s.warning_count();
    Ok(Response::Done {
        affected: changed,
        last_insert_id: 0,
        info: format!("Rows matched: {matched}  Changed: {changed}  Warnings: {warned}"),
    })
}

/// [`update`]'s work in `trx`: the rows matched and changed, its warnings added to
/// `warnings`.
pub(crate) fn update_in(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    bound: &BoundUpdate,
    params: &[Value],
    warnings: &mut Vec<(String, u16, String)>,
) -> Result<(u64, u64), SqlError> {
    let BoundUpdate {
        db,
        table,
        sets,
        filter,
        checks,
        ..
    } = bound;
    let schema = table.shared_schema();
    let (set_values, where_values) = params.split_at(bound.set_params.min(params.len()));
    let strict = s.settings().sql_mode.strict;
    let targets = target_rows(s, trx, (db, table), filter, where_values, true)?;
    let (mut matched, mut changed) = (0u64, 0u64);
    for (key, old) in targets {
        s.watch().check()?;
        matched += 1;
        let mut new = old.clone();
        for (pos, e) in sets {
            // MySQL evaluates assignments left to right, each seeing the ones before.
            let v = e.eval(Env::new(&[Some(&new)], set_values))?;
            new[*pos] = store(&schema.columns[*pos], v, strict, matched as usize, warnings)?;
        }
        if new == old {
            continue;
        }
        changed += 1;
        checks.update(s, trx, table, (key, &old), new)?;
    }
    Ok((matched, changed))
}

/// A DELETE bound against the catalog.
#[derive(Debug)]
pub(crate) struct BoundDelete {
    db: Arc<str>,
    table: Table,
    filter: Arc<BoundSelect>,
    /// The foreign keys around the table, resolved with the binding.
    checks: Arc<Checks>,
}

impl Bound for BoundDelete {
    fn volatile(&self) -> bool {
        self.filter.volatile
    }

    fn run(
        &self,
        s: &mut Context<'_>,
        _: &Statement,
        params: &[Value],
    ) -> Result<Response, SqlError> {
        delete(s, self, params)
    }
}

impl Bound for BoundUpdate {
    fn volatile(&self) -> bool {
        self.volatile
    }

    fn run(
        &self,
        s: &mut Context<'_>,
        _: &Statement,
        params: &[Value],
    ) -> Result<Response, SqlError> {
        update(s, self, params)
    }
}

/// Binds DELETE FROM t [WHERE ...].
pub(crate) fn bind_delete(
    s: &Context<'_>,
    tables: &[Table],
    del: &ast::Delete,
) -> Result<BoundDelete, SqlError> {
    if del.limit.is_some()
        || !del.order_by.is_empty()
        || del.using.is_some()
        || !del.tables.is_empty()
    {
        return Err(SqlError::unsupported(
            "DELETE with USING, ORDER BY, LIMIT or several tables",
        ));
    }
    let from = match &del.from {
        FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
    };
    let [one] = from.as_slice() else {
        return Err(SqlError::unsupported("a multi-table DELETE"));
    };
    let (db, table) = table_handle(s, tables, single_table(one)?)?;
    let filter = bind_filter(s, &db, &table, del.selection.as_ref())?;
    let checks = Checks::of(s, &table)?;
    Ok(BoundDelete {
        db,
        table,
        filter,
        checks,
    })
}

/// Runs a bound DELETE with `params`.
pub(crate) fn delete(
    s: &mut Context<'_>,
    bound: &BoundDelete,
    params: &[Value],
) -> Result<Response, SqlError> {
    let deleted = s.with_trx(|s, trx| delete_in(s, trx, bound, params))?;
    Ok(Response::done(deleted))
}

/// [`delete`]'s work in `trx`: the rows deleted.
pub(crate) fn delete_in(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    bound: &BoundDelete,
    params: &[Value],
) -> Result<u64, SqlError> {
    let BoundDelete {
        db,
        table,
        filter,
        checks,
    } = bound;
    let targets = target_rows(s, trx, (db, table), filter, params, false)?;
    let mut n = 0;
    for (key, old) in targets {
        s.watch().check()?;
        if checks.delete(s, trx, table, key, &old)? {
            n += 1;
        }
    }
    Ok(n)
}
