//! Subqueries that do not refer to the query around them (uncorrelated): `x [NOT] IN
//! (SELECT ...)`, `[NOT] EXISTS (SELECT ...)`, and scalar and row subqueries `(SELECT
//! ...)`, in the select list, WHERE, HAVING and ORDER BY of a SELECT; and derived tables,
//! `FROM (SELECT ...) AS d`, materialized (MySQL merges the simple ones into the outer
//! query; the rows are the same).
//!
//! Each is run once per execution, innermost first, in the statement's transaction (so in
//! its read view), before the query around it is planned, and its result takes its place as
//! constants: an IN subquery becomes the list of its rows (MySQL's subquery
//! materialization: the rows once, then a lookup per outer row, here a sorted list), EXISTS
//! a truth value, a scalar subquery its value. The statement is then bound and planned as
//! one without subqueries, so the range optimizer sees the constants. NULLs keep MySQL's
//! meaning: `x IN` an empty subquery is false and `NOT IN` true even for a NULL `x`, and a
//! NULL among the rows makes a `NOT IN` that finds no match NULL.
//!
//! A derived table runs once per execution too, after the subqueries in it, and its rows
//! become a table of its alias's name that the outer query reads whole (it has no index),
//! its columns typed as the rows' result columns are.
//!
//! Not built yet (refused with 1235): correlated subqueries, LATERAL, subqueries in
//! UPDATE, DELETE and INSERT, UNION inside a subquery, merging a derived table into the
//! outer query, and the semi-join transformations (FirstMatch, LooseScan,
//! DuplicateWeedout) MySQL chooses by cost; EXPLAIN of a query with a subquery or a
//! derived table is refused.

use std::collections::HashSet;
use std::ops::ControlFlow;

use sqlparser::ast::{self, Expr as Ast, SetExpr, Statement, TableFactor};
use waterline_txn::{LockMode, Transaction, Value};

use waterline_txn::{Column, ColumnType, TableSchema};

use super::{bind_in, read_in, select_of, without_from};
use crate::access::Derived;
use crate::error::SqlError;
use crate::session::{Bound, Response, ResultColumn, Session};
use crate::types::{FieldType, NOT_FIXED_DEC, UNSIGNED_FLAG};

/// The table factors of `select`'s FROM: each item's first table and those it joins.
fn factors_mut(select: &mut ast::Select) -> impl Iterator<Item = &mut TableFactor> {
    select.from.iter_mut().flat_map(|from| {
        std::iter::once(&mut from.relation).chain(from.joins.iter_mut().map(|j| &mut j.relation))
    })
}

/// Whether `q` has a subquery in an expression anywhere, a derived table in its FROM, or a
/// WITH clause.
pub(crate) fn has_subquery(q: &ast::Query) -> bool {
    if super::cte::has_with(q) {
        return true;
    }
    if let SetExpr::Select(select) = q.body.as_ref()
        && select.from.iter().any(|from| {
            std::iter::once(&from.relation)
                .chain(from.joins.iter().map(|j| &j.relation))
                .any(|t| matches!(t, TableFactor::Derived { .. }))
        })
    {
        return true;
    }
    ast::visit_expressions(q, |e| {
        if matches!(
            e,
            Ast::InSubquery { .. } | Ast::Subquery(_) | Ast::Exists { .. }
        ) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .is_break()
}

/// A query with subqueries: bound anew at every execution, once its subqueries have run.
#[derive(Debug)]
pub(crate) struct WithSubqueries;

impl Bound for WithSubqueries {
    fn volatile(&self) -> bool {
        true
    }

    fn run(
        &self,
        s: &mut Session,
        statement: &Statement,
        params: &[Value],
    ) -> Result<Response, SqlError> {
        run(s, super::query_of(statement)?, params)
    }
}

fn run(s: &mut Session, q: &ast::Query, params: &[Value]) -> Result<Response, SqlError> {
    let db = s.database().map(|d| d.to_string());
    let serializable = s.serializable_read();
    // Placeholders first, in the order of the text, before a CTE's query is copied to where
    // it is read.
    let inlined = super::cte::inline(&with_params(q, params)?)?;
    let answered = s.with_trx(|s, trx| {
        let lock = serializable.then_some(LockMode::Shared);
        let resolved = resolve(s, trx, &inlined, lock, db.as_deref())?;
        answer(s, trx, resolved, lock, db.as_deref())
    })?;
    let mut answered = answered;
    if let Response::Rows { columns, .. } = &mut answered {
        name_as_written(q, columns);
    }
    Ok(answered)
}

/// `q` with its placeholders replaced by `params`, in the order of the text.
fn with_params(q: &ast::Query, params: &[Value]) -> Result<ast::Query, SqlError> {
    let mut q = q.clone();
    let mut params = params.iter();
    let mut missing = false;
    let _ = ast::visit_expressions_mut(&mut q, |e| {
        if let Ast::Value(v) = &*e
            && matches!(v.value, ast::Value::Placeholder(_))
        {
            match params.next() {
                Some(p) => *e = constant(p),
                None => {
                    missing = true;
                    return ControlFlow::Break(());
                }
            }
        }
        ControlFlow::Continue(())
    });
    if missing {
        return Err(SqlError::new(
            1210,
            "HY000",
            "Incorrect arguments to EXECUTE",
        ));
    }
    Ok(q)
}

/// Names each of `columns` that an expression of `q`'s select list makes by the
/// expression's text, as MySQL names it (`(SELECT MAX(x) FROM t)`, `?`), not by the
/// constant that replaced it.
fn name_as_written(q: &ast::Query, columns: &mut [ResultColumn]) {
    let Ok(select) = select_of(q) else { return };
    if columns.len() != select.projection.len() {
        return;
    }
    for (column, item) in columns.iter_mut().zip(&select.projection) {
        match item {
            ast::SelectItem::UnnamedExpr(Ast::Value(v))
                if !matches!(v.value, ast::Value::Placeholder(_)) => {}
            ast::SelectItem::UnnamedExpr(Ast::Identifier(_) | Ast::CompoundIdentifier(_)) => {}
            ast::SelectItem::UnnamedExpr(e) => column.name = e.to_string().into(),
            _ => {}
        }
    }
}

/// What query `q` (its placeholders and expression subqueries resolved) returns, its
/// derived tables materialized first, read in `trx`.
fn answer(
    s: &mut Session,
    trx: &mut Transaction,
    q: ast::Query,
    lock: Option<LockMode>,
    db: Option<&str>,
) -> Result<Response, SqlError> {
    let (q, derived) = materialize(s, trx, q, lock, db)?;
    let (_, tables) = s.tables();
    let bound = bind_in(s, &tables, &q, db, Some(&derived))?;
    if select_of(&q)?.from.is_empty() {
        return without_from(s, &q, &bound, &[]);
    }
    let db = db.ok_or_else(SqlError::no_database)?;
    if !derived.is_empty() && bound.lock.is_some() {
        return Err(SqlError::unsupported("a locking read of a derived table"));
    }
    let lock = bound.lock.or(lock);
    read_in(s, &q, &bound, &[], (db, lock), trx, Some(&derived))
}

/// `q` with each derived table of its FROM run (its own derived tables first) and replaced
/// by a table of its alias's name, whose schema and rows are returned.
fn materialize(
    s: &mut Session,
    trx: &mut Transaction,
    mut q: ast::Query,
    lock: Option<LockMode>,
    db: Option<&str>,
) -> Result<(ast::Query, Derived), SqlError> {
    let mut derived = Derived::default();
    let SetExpr::Select(select) = q.body.as_mut() else {
        return Ok((q, derived));
    };
    for factor in factors_mut(select) {
        let TableFactor::Derived {
            lateral,
            subquery,
            alias,
            ..
        } = factor
        else {
            continue;
        };
        if *lateral {
            return Err(SqlError::unsupported("LATERAL"));
        }
        let Some(alias) = alias.clone() else {
            return Err(SqlError::new(
                1248,
                "42000",
                "Every derived table must have its own alias",
            ));
        };
        if !matches!(subquery.body.as_ref(), SetExpr::Select(_)) {
            return Err(SqlError::unsupported(format!(
                "a derived table that is not one SELECT: {subquery}"
            )));
        }
        let Response::Rows { columns, rows } = answer(s, trx, (**subquery).clone(), lock, db)?
        else {
            return Err(SqlError::other("a derived table's query returned no rows"));
        };
        let names: Vec<String> = if alias.columns.is_empty() {
            columns.iter().map(|c| c.name.to_string()).collect()
        } else if alias.columns.len() == columns.len() {
            alias.columns.iter().map(|c| c.name.value.clone()).collect()
        } else {
            return Err(SqlError::new(
                1353,
                "HY000",
                "In definition of view, derived table or common table expression, SELECT \
                 list and column names list have different column counts",
            ));
        };
        let schema_columns = names
            .into_iter()
            .zip(&columns)
            .enumerate()
            .map(|(i, (name, column))| {
                Column::nullable(name, column_type(column, rows.iter().map(|r| &r[i])))
            })
            .collect();
        let schema = TableSchema::new(alias.name.value.clone(), schema_columns);
        schema.validate().map_err(SqlError::from)?;
        derived.add(alias.name.value.clone(), schema, rows);
        *factor = table_named(&alias.name);
    }
    Ok((q, derived))
}

/// A FROM item that names table `name`.
fn table_named(name: &ast::Ident) -> TableFactor {
    TableFactor::Table {
        name: ast::ObjectName::from(vec![name.clone()]),
        alias: None,
        args: None,
        with_hints: Vec::new(),
        version: None,
        with_ordinality: false,
        partitions: Vec::new(),
        json_path: None,
        sample: None,
        index_hints: Vec::new(),
    }
}

/// A derived table's column type: what its result column says, a string as long as its
/// longest value.
fn column_type<'v>(column: &ResultColumn, values: impl Iterator<Item = &'v Value>) -> ColumnType {
    let unsigned = column.flags & UNSIGNED_FLAG != 0;
    let int = |signed: ColumnType, bytes: u8| {
        if unsigned {
            ColumnType::Unsigned(bytes)
        } else {
            signed
        }
    };
    match column.ty {
        FieldType::Tiny => int(ColumnType::TinyInt, 1),
        FieldType::Short => int(ColumnType::SmallInt, 2),
        FieldType::Int24 => int(ColumnType::MediumInt, 3),
        FieldType::Long => int(ColumnType::Int, 4),
        FieldType::LongLong => int(ColumnType::BigInt, 8),
        FieldType::NewDecimal => {
            let scale = values
                .filter_map(Value::as_decimal)
                .map(|d| d.scale())
                .max()
                .unwrap_or(0)
                .max(if column.decimals == NOT_FIXED_DEC {
                    0
                } else {
                    column.decimals
                });
            ColumnType::Decimal {
                precision: 38,
                scale: scale.min(30),
            }
        }
        FieldType::Double => ColumnType::Double,
        FieldType::DateTime => ColumnType::DateTime(column.decimals.min(6)),
        FieldType::String | FieldType::VarString => {
            let longest = values
                .filter_map(Value::as_str)
                .map(|t| t.chars().count())
                .max()
                .unwrap_or(0);
            ColumnType::Varchar(u32::try_from(longest.max(1)).unwrap_or(u32::MAX))
        }
    }
}

/// `q` with its subqueries replaced by what they return, each run in `trx` (reading in
/// `lock`'s mode, if any).
fn resolve(
    s: &mut Session,
    trx: &mut Transaction,
    q: &ast::Query,
    lock: Option<LockMode>,
    db: Option<&str>,
) -> Result<ast::Query, SqlError> {
    let outer = names_in_from(q);
    let mut q = q.clone();
    let mut failed = None;
    // After the children of each expression, so inner subqueries first.
    let _ = ast::visit_expressions_mut(&mut q, |e| {
        let replacement =
            match &*e {
                Ast::InSubquery {
                    expr,
                    subquery,
                    negated,
                } => rows_of(s, trx, subquery, lock, db, &outer)
                    .map(|rows| Some(in_list(expr, rows, *negated))),
                Ast::Exists { subquery, negated } => rows_of(s, trx, subquery, lock, db, &outer)
                    .map(|rows| {
                        Some(Ast::Value(
                            ast::Value::Boolean(rows.is_empty() == *negated).into(),
                        ))
                    }),
                Ast::Subquery(subquery) => rows_of(s, trx, subquery, lock, db, &outer)
                    .and_then(|rows| scalar(rows).map(Some)),
                _ => Ok(None),
            };
        let done = replacement.map(|r| {
            if let Some(r) = r {
                *e = r;
            }
        });
        match done {
            Ok(()) => ControlFlow::Continue(()),
            Err(err) => {
                failed = Some(err);
                ControlFlow::Break(())
            }
        }
    });
    failed.map_or(Ok(q), Err)
}

/// The rows subquery `q` returns, run in `trx`; a name it does not know that the statement's
/// tables have makes it correlated, which is refused.
fn rows_of(
    s: &mut Session,
    trx: &mut Transaction,
    q: &ast::Query,
    lock: Option<LockMode>,
    db: Option<&str>,
    outer: &HashSet<String>,
) -> Result<Vec<Vec<Value>>, SqlError> {
    if !matches!(q.body.as_ref(), SetExpr::Select(_)) {
        return Err(SqlError::unsupported(format!(
            "a subquery that is not one SELECT: {q}"
        )));
    }
    match answer(s, trx, q.clone(), lock, db) {
        Ok(answer) => Ok(answer.into_rows()),
        Err(e) if e.code == 1054 && refers_outside(&e.message, outer, s) => {
            Err(SqlError::unsupported(format!("a correlated subquery: {q}")))
        }
        Err(e) => Err(e),
    }
}

/// The table names and aliases of every FROM in `q` (lower case).
fn names_in_from(q: &ast::Query) -> HashSet<String> {
    let mut names = HashSet::new();
    let _ = ast::visit_relations(q, |name| {
        if let Some(last) = name.0.last() {
            names.insert(last.to_string().trim_matches('`').to_ascii_lowercase());
        }
        ControlFlow::<()>::Continue(())
    });
    let mut aliases = Vec::new();
    collect_aliases(q, &mut aliases);
    names.extend(aliases);
    names
}

fn collect_aliases(q: &ast::Query, out: &mut Vec<String>) {
    if let SetExpr::Select(select) = q.body.as_ref() {
        for from in &select.from {
            for factor in
                std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation))
            {
                if let TableFactor::Table { alias: Some(a), .. } = factor {
                    out.push(a.name.value.to_ascii_lowercase());
                }
            }
        }
    }
}

/// Whether the unknown column of a 1054 `message` ("Unknown column 'x.y' in ...") names a
/// table of the statement, or a column one of them has: the subquery refers outside itself.
fn refers_outside(message: &str, outer: &HashSet<String>, s: &Session) -> bool {
    let Some(name) = message.split('\'').nth(1) else {
        return false;
    };
    match name.rsplit_once('.') {
        Some((qualifier, _)) => outer.contains(&qualifier.to_ascii_lowercase()),
        None => {
            let (_, tables) = s.tables();
            tables.iter().any(|t| {
                outer.contains(&t.name().to_ascii_lowercase())
                    && t.schema()
                        .columns
                        .iter()
                        .any(|c| c.name.eq_ignore_ascii_case(name))
            })
        }
    }
}

/// A value as a constant of SQL text.
fn constant(v: &Value) -> Ast {
    let value = match v {
        Value::Null => ast::Value::Null,
        Value::Int(n) => ast::Value::Number(n.to_string(), false),
        Value::Decimal(d) => ast::Value::Number(d.to_string(), false),
        Value::Double(f) => ast::Value::Number(format!("{f:e}"), false),
        Value::Str(_) => ast::Value::SingleQuotedString(v.as_str().unwrap_or_default().to_owned()),
        Value::DateTime(t) => ast::Value::SingleQuotedString(t.to_string()),
    };
    // A negative number is a minus before it, as the parser reads one.
    if let ast::Value::Number(n, _) = &value
        && let Some(digits) = n.strip_prefix('-')
    {
        return Ast::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr: Box::new(Ast::Value(
                ast::Value::Number(digits.to_owned(), false).into(),
            )),
        };
    }
    Ast::Value(value.into())
}

/// A row as a constant: one value, or a tuple.
fn row_constant(row: &[Value]) -> Ast {
    match row {
        [one] => constant(one),
        many => Ast::Tuple(many.iter().map(constant).collect()),
    }
}

/// `expr [NOT] IN` the subquery's `rows`: the list of them, or for none, false (true for
/// NOT IN) whatever `expr` is.
fn in_list(expr: &Ast, rows: Vec<Vec<Value>>, negated: bool) -> Ast {
    if rows.is_empty() {
        return Ast::Value(ast::Value::Boolean(negated).into());
    }
    Ast::InList {
        expr: Box::new(expr.clone()),
        list: rows.iter().map(|r| row_constant(r)).collect(),
        negated,
    }
}

/// A scalar (or row) subquery's value: NULL for no row, error 1242 for more than one.
fn scalar(rows: Vec<Vec<Value>>) -> Result<Ast, SqlError> {
    match rows.as_slice() {
        [] => Ok(Ast::Value(ast::Value::Null.into())),
        [row] => Ok(row_constant(row)),
        _ => Err(SqlError::new(
            1242,
            "21000",
            "Subquery returns more than 1 row",
        )),
    }
}

/// The columns a query with subqueries returns (COM_STMT_PREPARE), without running it:
/// those of the query with each expression subquery as NULL and each derived table as an
/// empty table of the columns its query describes, named as the query names them.
pub(crate) fn describe(s: &mut Session, q: &ast::Query) -> Result<Vec<ResultColumn>, SqlError> {
    let mut stripped = super::cte::inline(q)?;
    let _ = ast::visit_expressions_mut(&mut stripped, |e| {
        if matches!(
            e,
            Ast::InSubquery { .. } | Ast::Subquery(_) | Ast::Exists { .. }
        ) {
            *e = Ast::Value(ast::Value::Null.into());
        }
        ControlFlow::<()>::Continue(())
    });
    let mut derived = Derived::default();
    if let SetExpr::Select(select) = stripped.body.as_mut() {
        for factor in factors_mut(select) {
            let TableFactor::Derived {
                subquery, alias, ..
            } = factor
            else {
                continue;
            };
            let Some(alias) = alias.clone() else {
                continue;
            };
            let columns = describe(s, subquery)?;
            let names: Vec<String> = if alias.columns.len() == columns.len() {
                alias.columns.iter().map(|c| c.name.value.clone()).collect()
            } else {
                columns.iter().map(|c| c.name.to_string()).collect()
            };
            let schema = TableSchema::new(
                alias.name.value.clone(),
                names
                    .into_iter()
                    .zip(&columns)
                    .map(|(name, c)| Column::nullable(name, column_type(c, std::iter::empty())))
                    .collect(),
            );
            derived.add(alias.name.value.clone(), schema, Vec::new());
            *factor = table_named(&alias.name);
        }
    }
    let mut columns = super::describe_in(s, &stripped, Some(&derived))?;
    name_as_written(q, &mut columns);
    Ok(columns)
}
