//! INSERT and REPLACE: their rows from VALUES or a query, made whole (AUTO_INCREMENT as
//! InnoDB hands it out, defaults, each value stored as its column's type), and what happens
//! to a row that would duplicate a key: REPLACE deletes what it collides with, INSERT IGNORE
//! leaves the row out, ON DUPLICATE KEY UPDATE updates the row it collides with.

use std::sync::Arc;

use sqlparser::ast::{self, Expr as Ast, SetExpr, Statement, TableObject};
use waterline_planner::bind::{Binder, BoundTable, object_name};
use waterline_planner::{Env, Expr};
use waterline_txn::{
    Column, ColumnType, Isolation, Key, KeyRange, LockMode, ReadOptions, Row, Table, Transaction,
    Value, copy_keyed_row, copy_row,
};

use super::{Assignments, bind_assignments, table_handle};
use crate::error::SqlError;
use crate::session::{Bound, Context, Response};
use crate::shared::{TableMeta, meta_key};
use crate::types::store;
use crate::write::Checks;
use waterline_planner::walk;

/// What an INSERT stores in NOT NULL `column` that it leaves out and that has no DEFAULT:
/// under a strict `sql_mode` nothing (error 1364, as MySQL); otherwise the type's implicit
/// default with warning 1364 (0, an empty string). A DATETIME has no implicit default
/// waterline can store (MySQL's is the zero date), so it is refused in either mode.
fn no_default(
    column: &Column,
    strict: bool,
    warnings: &mut Vec<crate::types::Warning>,
) -> Result<Value, SqlError> {
    let message = format!("Field '{}' doesn't have a default value", column.name);
    match implicit_default(column) {
        Some(v) if !strict => {
            warnings.push(("Warning".into(), 1364, message));
            Ok(v)
        }
        _ => Err(SqlError::new(1364, "HY000", message)),
    }
}

/// The value MySQL gives a NOT NULL column that gets none it can take: the type's zero (an
/// empty string, 0); `None` for a DATETIME, whose zero waterline does not have.
pub(crate) fn implicit_default(column: &Column) -> Option<Value> {
    match column.ty {
        ColumnType::Char(_) | ColumnType::Varchar(_) => Some(Value::from("")),
        ColumnType::Double => Some(Value::Double(0.0)),
        ColumnType::DateTime(_) => None,
        _ => Some(Value::Int(0)), // integers, and a DECIMAL (stored as its zero)
    }
}

/// The table's metadata.
fn meta(s: &Context<'_>, table: &Table) -> TableMeta {
    s.shared().catalog.meta_of(&s.shared().engine, table)
}

/// Reserves `n` AUTO_INCREMENT values past `at_least - 1`; returns the first.
fn reserve_ids(s: &Context<'_>, table: &Table, column: usize, n: i64, at_least: i64) -> i64 {
    let mut all = s.shared().catalog.meta.lock();
    let meta = all.entry(meta_key(table)).or_default();
    if meta.next_id == 0 {
        // After a restart, or a new AUTO_INCREMENT column: past the largest value of the
        // key the column leads (it leads one: CREATE and ALTER check it).
        let schema = table.schema();
        let leads = |columns: &[usize]| columns.first() == Some(&column);
        let last = if schema.primary_key.as_deref().is_some_and(leads) {
            table.last_key()
        } else {
            (schema.indexes.iter())
                .position(|ix| leads(&ix.columns))
                .and_then(|i| table.last_index_key(i))
        };
        let last = last.and_then(|k| k.iter().next().as_ref().and_then(Value::as_int));
        meta.next_id = last.unwrap_or(0) + 1;
    }
    meta.next_id = meta.next_id.max(at_least);
    let first = meta.next_id;
    meta.next_id += n;
    first
}

/// How many AUTO_INCREMENT values an INSERT ... SELECT of `n` rows takes: MySQL asks the
/// engine for 1, then 2, 4, ... up to 65,536 at a time (`handler::update_auto_increment`,
/// as it cannot know the number of rows), and InnoDB's interleaved lock mode gives them;
/// what the last request took beyond the rows is lost, so the next statement's values
/// start after it, as in MySQL.
fn bulk_reservation(n: i64) -> i64 {
    let (mut total, mut requests) = (0i64, 0u32);
    while total < n {
        total += 1 << requests.min(16);
        requests += 1;
    }
    total
}

fn is_default(e: &Ast) -> bool {
    matches!(e, Ast::Identifier(id) if id.value.eq_ignore_ascii_case("DEFAULT"))
}

/// An INSERT bound against the catalog.
#[derive(Debug)]
pub(crate) struct BoundInsert {
    table: Table,
    /// REPLACE: a row that has the new row's primary or unique key is deleted first.
    replace: bool,
    /// INSERT IGNORE: a row that would duplicate a key is left out, and a value a column
    /// cannot take is made one it can, each with a warning instead of an error.
    ignore: bool,
    source: Source,
    /// ON DUPLICATE KEY UPDATE's assignments, over the existing row (table 0) and the row
    /// the INSERT would have written (table 1, reached only as `new.col` or `VALUES(col)`).
    on_duplicate: Option<Assignments>,
    /// The foreign keys around the table, resolved with the binding.
    checks: Arc<Checks>,
    /// Whether a value is a session value of this moment (NOW()): then it is not kept.
    volatile: bool,
}

/// Where an INSERT's rows come from.
#[derive(Debug)]
enum Source {
    /// VALUES: per row, per column of the table, the expression giving its value (`None`:
    /// the column's default).
    Values(Vec<Vec<Option<Expr>>>),
    /// INSERT ... SELECT: the query (the statement's source) and, for each of its output
    /// columns in order, the table column it fills.
    Select(Box<crate::select::BoundQuery>, Vec<usize>),
    /// INSERT ... SELECT whose query has subqueries, derived tables or CTEs: run as such a
    /// query is (`select/subquery`), bound at each execution; the table column each output
    /// column fills.
    Query(Vec<usize>),
}

/// Binds INSERT INTO t [(columns)] VALUES (...), (...).
pub(crate) fn bind_insert(
    s: &Context<'_>,
    tables: &[Table],
    ins: &ast::Insert,
) -> Result<BoundInsert, SqlError> {
    let TableObject::TableName(name) = &ins.table else {
        return Err(SqlError::unsupported("INSERT INTO a table function"));
    };
    let (_, table) = table_handle(s, tables, name)?;
    let on_duplicate = bind_on_duplicate(s, &table, ins)?;
    let schema = table.shared_schema();
    let positions: Vec<usize> = if ins.columns.is_empty() {
        (0..schema.columns.len()).collect()
    } else {
        ins.columns
            .iter()
            .map(|c| {
                let c = object_name(c)?;
                schema
                    .columns
                    .iter()
                    .position(|col| col.name.eq_ignore_ascii_case(&c))
                    .ok_or_else(|| SqlError::unknown_column(&c, "field list"))
            })
            .collect::<Result<_, _>>()?
    };
    let Some(source) = &ins.source else {
        return Err(SqlError::unsupported("INSERT ... SET"));
    };
    if crate::select::subquery::has_subquery(source) {
        return Ok(BoundInsert {
            checks: Checks::of(s, &table)?,
            table,
            replace: ins.replace_into,
            ignore: ins.ignore,
            source: Source::Query(positions),
            on_duplicate: on_duplicate.map(|(sets, _)| sets),
            volatile: true,
        });
    }
    let SetExpr::Values(values) = source.body.as_ref() else {
        let query = crate::select::bind(s, tables, source)?;
        if query.width() != positions.len() {
            return Err(SqlError::column_count(1));
        }
        let volatile = query.volatile() || on_duplicate.as_ref().is_some_and(|(_, v)| *v);
        return Ok(BoundInsert {
            checks: Checks::of(s, &table)?,
            table,
            replace: ins.replace_into,
            ignore: ins.ignore,
            source: Source::Select(Box::new(query), positions),
            on_duplicate: on_duplicate.map(|(sets, _)| sets),
            volatile,
        });
    };
    let mut binder = Binder::new(&[]).with_session(s);
    let mut rows = Vec::with_capacity(values.rows.len());
    for (i, exprs) in values.rows.iter().enumerate() {
        // `VALUES ()` with no column list: a row of defaults, as in MySQL.
        let defaults = exprs.is_empty() && ins.columns.is_empty();
        if exprs.len() != positions.len() && !defaults {
            return Err(SqlError::column_count(i + 1));
        }
        let mut row: Vec<Option<Expr>> = vec![None; schema.columns.len()];
        for (e, &pos) in exprs.iter().zip(&positions) {
            if !is_default(e) {
                row[pos] = Some(binder.expr(e, "field list")?);
            }
        }
        rows.push(row);
    }
    Ok(BoundInsert {
        checks: Checks::of(s, &table)?,
        table,
        replace: ins.replace_into,
        ignore: ins.ignore,
        source: Source::Values(rows),
        volatile: binder.volatile || on_duplicate.as_ref().is_some_and(|(_, v)| *v),
        on_duplicate: on_duplicate.map(|(sets, _)| sets),
    })
}

/// The name `VALUES(col)` is bound through when the INSERT gives its row no alias: one no
/// SQL text can write.
const VALUES_ROW: &str = "\0values";

/// ON DUPLICATE KEY UPDATE's assignments, bound (and whether they read a session value of
/// this moment); `None` without the clause. Its `?`s come after the rest of the statement's.
fn bind_on_duplicate(
    s: &Context<'_>,
    table: &Table,
    ins: &ast::Insert,
) -> Result<Option<(Assignments, bool)>, SqlError> {
    use std::ops::ControlFlow;
    let sets = match &ins.on {
        None => return Ok(None),
        Some(ast::OnInsert::DuplicateKeyUpdate(sets)) => sets,
        Some(other) => return Err(SqlError::unsupported(other)),
    };
    let alias = match &ins.insert_alias {
        None => VALUES_ROW.to_owned(),
        Some(a) if a.col_aliases.as_ref().is_none_or(Vec::is_empty) => object_name(&a.row_alias)?,
        Some(_) => return Err(SqlError::unsupported("a row alias with column aliases")),
    };
    let schema = table.shared_schema();
    let bound = [crate::names::short(table.name()), alias.as_str()].map(|alias| BoundTable {
        name: table.name().to_owned(),
        alias: alias.to_owned(),
        schema: Arc::clone(&schema),
    });
    // VALUES(col) is `alias.col`.
    let mut sets = sets.clone();
    let _ = walk::exprs_mut(&mut sets, |e| {
        if let Ast::Function(f) = e
            && f.name.to_string().eq_ignore_ascii_case("VALUES")
            && let ast::FunctionArguments::List(list) = &f.args
            && let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(Ast::Identifier(c)))] =
                list.args.as_slice()
        {
            *e = Ast::CompoundIdentifier(vec![ast::Ident::new(alias.as_str()), c.clone()]);
        }
        ControlFlow::<()>::Continue(())
    });
    // The statement's other `?`s, numbered first.
    let before = crate::parse::placeholders(&ins.source);
    let mut binder = Binder::new(&bound).with_session(s).qualified_only(1);
    binder.set_param_base(before);
    let sets = bind_assignments(&schema, &sets, &mut binder)?;
    Ok(Some((sets, binder.volatile)))
}

/// The rows `bound` inserts, per column of the table (`None`: its default): its VALUES
/// evaluated, or its query run in `trx`, reading the source rows as InnoDB's INSERT ...
/// SELECT does (locking them FOR SHARE, except in READ COMMITTED).
fn source_rows(
    s: &mut Context<'_>,
    bound: &BoundInsert,
    statement: &Statement,
    params: &[Value],
    trx: &mut Transaction,
) -> Result<Vec<Vec<Option<Value>>>, SqlError> {
    match &bound.source {
        Source::Values(rows) => rows
            .iter()
            .map(|exprs| {
                exprs
                    .iter()
                    .map(|e| {
                        e.as_ref()
                            .map(|e| e.eval(Env::new(&[], params)))
                            .transpose()
                    })
                    .collect::<Result<_, _>>()
                    .map_err(SqlError::from)
            })
            .collect(),
        Source::Select(_, positions) | Source::Query(positions) => {
            let Statement::Insert(ast::Insert {
                source: Some(q), ..
            }) = statement
            else {
                return Err(SqlError::other("an INSERT's binding for another statement"));
            };
            let db = s.catalog_database();
            let lock = (trx.isolation() != Isolation::ReadCommitted).then_some(LockMode::Shared);
            // The query's own `?`s (ON DUPLICATE KEY UPDATE's come after them).
            let own = &params[..crate::parse::placeholders(q).min(params.len())];
            let result = match &bound.source {
                Source::Select(query, _) => {
                    crate::select::read(s, q, query, own, (&db, lock), trx)?
                }
                _ => crate::select::subquery::read_in(s, trx, q, own, lock)?,
            };
            let width = bound.table.shared_schema().columns.len();
            result
                .into_rows()
                .into_iter()
                .enumerate()
                .map(|(i, values)| {
                    if values.len() != positions.len() {
                        return Err(SqlError::column_count(i + 1));
                    }
                    let mut row = vec![None; width];
                    for (v, &pos) in values.into_iter().zip(positions) {
                        row[pos] = Some(v);
                    }
                    Ok(row)
                })
                .collect()
        }
    }
}

/// Runs a bound INSERT with `params`.
pub(crate) fn insert(
    s: &mut Context<'_>,
    bound: &BoundInsert,
    statement: &Statement,
    params: &[Value],
) -> Result<Response, SqlError> {
    let (n, first_id) = s.with_trx(|s, trx| {
        let rows = source_rows(s, bound, statement, params, trx)?;
        let bulk = matches!(bound.source, Source::Select(..) | Source::Query(_));
        let Completed { rows, auto } = complete_rows(s, &bound.table, rows, bulk, bound.ignore)?;
        // Generated values go to the rows inserted, in order: a row that updates a
        // duplicate instead gives its value back to the next, as MySQL's handler does.
        let checks = &bound.checks;
        let mut next_id = auto.as_ref().and_then(|(col, generated)| {
            let first = generated.iter().position(|&g| g)?;
            rows[first][*col].as_int()
        });
        let (mut affected, mut first_id) = (0, 0);
        for (i, mut row) in rows.into_iter().enumerate() {
            let generated = auto.as_ref().is_some_and(|(_, g)| g[i]);
            if let (Some((col, _)), Some(id), true) = (&auto, next_id, generated) {
                row[*col] = Value::Int(id);
            }
            if let Some(sets) = &bound.on_duplicate
                && let Some(n) =
                    update_duplicate(s, trx, (&bound.table, checks), &row, (sets, params))?
            {
                affected += n;
                continue;
            }
            if bound.replace {
                affected += delete_conflicts(s, trx, (&bound.table, checks), &row)?;
            } else if bound.ignore
                && let Some(duplicate) = conflicts(trx, &bound.table, &row, LockMode::Shared)?
                    .into_iter()
                    .next()
            {
                // Left out, as a failed insert is: its generated value is given back.
                s.warn("Warning", 1062, duplicate.message());
                continue;
            }
            let explicit = auto
                .as_ref()
                .filter(|_| !generated)
                .and_then(|(col, _)| row[*col].as_int());
            checks.insert(s, trx, &bound.table, row)?;
            affected += 1;
            match (generated, next_id) {
                (true, Some(id)) => {
                    if first_id == 0 {
                        first_id = id;
                    }
                    next_id = Some(id + 1);
                }
                // An explicit value moves the counter past it once its row is in.
                _ => {
                    if let (Some(v), Some((col, _))) = (explicit, &auto) {
                        reserve_ids(s, &bound.table, *col, 0, v.saturating_add(1));
                    }
                }
            }
        }
        Ok((affected, first_id))
    })?;
    if first_id > 0 {
        s.set_last_insert_id(first_id as u64);
    }
    Ok(Response::Done {
        affected: n,
        last_insert_id: first_id as u64,
        info: String::new(),
    })
}

/// An INSERT's rows made whole, and what AUTO_INCREMENT took for them.
struct Completed {
    rows: Vec<Row>,
    /// The AUTO_INCREMENT column, if the table has one, and for each row whether its value
    /// was generated (from a block reserved for the statement, in row order).
    auto: Option<(usize, Vec<bool>)>,
}

/// `rows` made whole for `table`: AUTO_INCREMENT values taken, defaults put in, each value
/// stored as its column's type (with the sql_mode's errors or warnings). The statement
/// reserves one value per row that takes one; a `bulk` insert (INSERT ... SELECT: its
/// number of rows unknown until it has run) reserves as InnoDB does for one, see
/// [`bulk_reservation`]. With `ignore` (INSERT IGNORE), values are stored as without a
/// strict sql_mode, and a NULL for a NOT NULL column is its type's implicit default.
fn complete_rows(
    s: &mut Context<'_>,
    table: &Table,
    mut rows: Vec<Vec<Option<Value>>>,
    bulk: bool,
    ignore: bool,
) -> Result<Completed, SqlError> {
    let schema = table.shared_schema();
    let meta = meta(s, table);
    // AUTO_INCREMENT: NULL, 0 (unless sql_mode has NO_AUTO_VALUE_ON_ZERO) or nothing takes
    // the next value.
    let zero_is_a_value = s.settings().sql_mode.no_auto_value_on_zero;
    let auto = meta.auto_increment.map(|col| {
        let generated: Vec<bool> = rows
            .iter()
            .map(|r| match &r[col] {
                None | Some(Value::Null) => true,
                Some(Value::Int(0)) => !zero_is_a_value,
                _ => false,
            })
            .collect();
        let needed = generated.iter().filter(|&&g| g).count() as i64;
        let reserved = if bulk {
            bulk_reservation(needed)
        } else {
            needed
        };
        let first = reserve_ids(s, table, col, reserved, 1);
        let takers = rows.iter_mut().zip(&generated).filter(|(_, g)| **g);
        for (id, (r, _)) in (first..).zip(takers) {
            r[col] = Some(Value::Int(id));
        }
        (col, generated)
    });
    let mut full: Vec<Row> = Vec::with_capacity(rows.len());
    let strict = s.settings().sql_mode.strict && !ignore;
    for (n, r) in rows.into_iter().enumerate() {
        let mut row = Vec::with_capacity(r.len());
        for (i, v) in r.into_iter().enumerate() {
            let column = &schema.columns[i];
            let v = match v.or_else(|| meta.defaults.get(i).cloned().flatten()) {
                Some(Value::Null) if ignore && !column.nullable => match implicit_default(column) {
                    Some(zero) => {
                        s.warn(
                            "Warning",
                            1048,
                            format!("Column '{}' cannot be null", column.name),
                        );
                        zero
                    }
                    None => Value::Null,
                },
                Some(v) => v,
                None if column.nullable => Value::Null,
                None => no_default(column, strict, s.warnings_mut())?,
            };
            row.push(store(
                &schema.columns[i],
                v,
                strict,
                n + 1,
                s.warnings_mut(),
            )?);
        }
        full.push(row);
    }
    Ok(Completed { rows: full, auto })
}

/// A row that an inserted row would duplicate.
struct Duplicate {
    /// The existing row's primary key.
    pk: Key,
    /// The key it shares with the new row: its index's name and its values.
    index: String,
    key: Key,
}

impl Duplicate {
    /// MySQL's text for it (error 1062, or INSERT IGNORE's warning).
    fn message(&self) -> String {
        let values: Vec<String> = self
            .key
            .iter()
            .map(|v| v.to_string().trim_matches('\'').to_owned())
            .collect();
        format!(
            "Duplicate entry '{}' for key '{}'",
            values.join("-"),
            self.index
        )
    }
}

/// The rows of `table` that `row` would duplicate: the one with its primary key, then those
/// with one of its unique keys, in the table's order of indexes; each locked in `mode` (the
/// row, or the gap where one would be), as InnoDB locks a duplicate it finds (exclusively
/// for REPLACE and ON DUPLICATE KEY UPDATE, shared for INSERT IGNORE).
fn conflicts(
    trx: &mut Transaction,
    table: &Table,
    row: &Row,
    mode: LockMode,
) -> Result<Vec<Duplicate>, SqlError> {
    let schema = table.shared_schema();
    let mut found: Vec<Duplicate> = Vec::new();
    let options = ReadOptions {
        lock: Some(mode),
        ..ReadOptions::default()
    };
    if let Some(pk) = &schema.primary_key {
        let key: Key = pk.iter().map(|&c| row[c].clone()).collect();
        if trx
            .get_with(table, key.clone(), options, copy_row)?
            .is_some()
        {
            found.push(Duplicate {
                pk: key.clone(),
                index: "PRIMARY".into(),
                key,
            });
        }
    }
    for index in schema.indexes.iter().filter(|i| i.unique) {
        // A NULL in a unique key conflicts with nothing.
        if index.columns.iter().any(|&c| row[c].is_null()) {
            continue;
        }
        let key: Key = index.columns.iter().map(|&c| row[c].clone()).collect();
        for (pk, _) in trx.scan_with(
            table,
            KeyRange::Prefix(key.clone()),
            options.on_index(&index.name),
            copy_keyed_row,
        )? {
            if !found.iter().any(|d| d.pk == pk) {
                found.push(Duplicate {
                    pk,
                    index: index.name.clone(),
                    key: key.clone(),
                });
            }
        }
    }
    Ok(found)
}

/// REPLACE's first step for `row`: deletes the rows it would duplicate ([`conflicts`]), as
/// MySQL's REPLACE does before it inserts. Returns how many it deleted (each counts as an
/// affected row).
fn delete_conflicts(
    s: &Context<'_>,
    trx: &mut Transaction,
    (table, checks): (&Table, &Checks),
    row: &Row,
) -> Result<u64, SqlError> {
    let doomed = conflicts(trx, table, row, LockMode::Exclusive)?;
    for duplicate in &doomed {
        let Some(old) = trx.get_with(
            table,
            duplicate.pk.clone(),
            ReadOptions::FOR_UPDATE,
            copy_row,
        )?
        else {
            continue;
        };
        checks.delete(s, trx, table, duplicate.pk.clone(), &old)?;
    }
    Ok(doomed.len() as u64)
}

/// ON DUPLICATE KEY UPDATE for `row`: if it would duplicate a row ([`conflicts`]: the
/// first), that row is updated by `sets` instead (each reads the row as the assignments
/// before it left it, and `row` as the table after it, `new.col` or `VALUES(col)`).
/// Returns `None` when there is no duplicate (insert `row`), else the affected rows MySQL
/// counts: 2 for a changed row, 0 for one the update left as it was.
fn update_duplicate(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    (table, checks): (&Table, &Checks),
    row: &Row,
    (sets, params): (&[(usize, Expr)], &[Value]),
) -> Result<Option<u64>, SqlError> {
    let Some(Duplicate { pk: key, .. }) = conflicts(trx, table, row, LockMode::Exclusive)?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    let Some(old) = trx.get_with(table, key.clone(), ReadOptions::FOR_UPDATE, copy_row)? else {
        return Err(SqlError::other("a duplicate row went away under its lock"));
    };
    let schema = table.shared_schema();
    let strict = s.settings().sql_mode.strict;
    let mut new = old.clone();
    for (pos, e) in sets {
        let v = e.eval(Env::new(&[Some(&new), Some(row)], params))?;
        new[*pos] = store(&schema.columns[*pos], v, strict, 1, s.warnings_mut())?;
    }
    if new == old {
        return Ok(Some(0));
    }
    checks.update(s, trx, table, (key, &old), new)?;
    Ok(Some(2))
}

impl Bound for BoundInsert {
    fn volatile(&self) -> bool {
        self.volatile
    }

    fn run(
        &self,
        s: &mut Context<'_>,
        statement: &Statement,
        params: &[Value],
    ) -> Result<Response, SqlError> {
        insert(s, self, statement, params)
    }
}

#[cfg(test)]
mod tests {
    /// 1, then 2, 4, 8 ... values a request, up to 65,536: what MySQL takes for an INSERT
    /// ... SELECT of n rows.
    #[test]
    fn a_bulk_insert_reserves_as_mysql_does() {
        let taken: Vec<i64> = [0, 1, 2, 3, 4, 6, 7, 8]
            .into_iter()
            .map(super::bulk_reservation)
            .collect();
        assert_eq!(taken, [0, 1, 3, 3, 7, 7, 7, 15]);
        // 17 requests reach 2^17 - 1; every later one takes 65,536.
        assert_eq!(super::bulk_reservation(131_072), 131_071 + 65_536);
    }
}
