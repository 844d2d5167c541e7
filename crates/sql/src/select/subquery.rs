//! Subqueries that do not refer to the query around them (uncorrelated): `x [NOT] IN
//! (SELECT ...)`, `[NOT] EXISTS (SELECT ...)`, and scalar and row subqueries `(SELECT
//! ...)`, in the select list, WHERE, HAVING and ORDER BY of a SELECT.
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
//! Not built yet (refused with 1235): correlated subqueries, subqueries in FROM (derived
//! tables), in UPDATE, DELETE and INSERT, UNION inside a subquery, and the semi-join
//! transformations (FirstMatch, LooseScan, DuplicateWeedout) MySQL chooses by cost; EXPLAIN
//! of a query with a subquery is refused.

use std::collections::HashSet;
use std::ops::ControlFlow;

use sqlparser::ast::{self, Expr as Ast, SetExpr, Statement, TableFactor};
use waterline_txn::{LockMode, Transaction, Value};

use super::{bind, read, select_of, without_from};
use crate::error::SqlError;
use crate::session::{Bound, Response, ResultColumn, Session};

/// Whether `q` has a subquery in an expression anywhere.
pub(crate) fn has_subquery(q: &ast::Query) -> bool {
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
        let Statement::Query(q) = statement else {
            return Err(SqlError::other("a query's binding for another statement"));
        };
        run(s, q, params)
    }
}

fn run(s: &mut Session, q: &ast::Query, params: &[Value]) -> Result<Response, SqlError> {
    let db = s.database().map(|d| d.to_string());
    let serializable = s.serializable_read();
    s.with_trx(|s, trx| {
        let lock = serializable.then_some(LockMode::Shared);
        let resolved = resolve(s, trx, q, params, lock, db.as_deref())?;
        let (_, tables) = s.tables();
        let bound = bind(s, &tables, &resolved)?;
        if select_of(&resolved)?.from.is_empty() {
            return without_from(s, &resolved, &bound, &[]);
        }
        let db = db.as_deref().ok_or_else(SqlError::no_database)?;
        let lock = bound.lock.or(lock);
        read(s, &resolved, &bound, &[], (db, lock), trx)
    })
}

/// `q` with its placeholders replaced by `params` and its subqueries by what they return,
/// each run in `trx` (reading in `lock`'s mode, if any).
fn resolve(
    s: &mut Session,
    trx: &mut Transaction,
    q: &ast::Query,
    params: &[Value],
    lock: Option<LockMode>,
    db: Option<&str>,
) -> Result<ast::Query, SqlError> {
    let outer = names_in_from(q);
    let mut q = q.clone();
    let mut params = params.iter();
    let mut failed = None;
    // After the children of each expression (so inner subqueries first, and placeholders
    // in the order of the text).
    let _ = ast::visit_expressions_mut(&mut q, |e| {
        let replacement = match &*e {
            Ast::Value(v) if matches!(v.value, ast::Value::Placeholder(_)) => match params.next() {
                Some(p) => Ok(Some(constant(p))),
                None => Err(SqlError::new(
                    1210,
                    "HY000",
                    "Incorrect arguments to EXECUTE",
                )),
            },
            Ast::InSubquery {
                expr,
                subquery,
                negated,
            } => rows_of(s, trx, subquery, lock, db, &outer)
                .map(|rows| Some(in_list(expr, rows, *negated))),
            Ast::Exists { subquery, negated } => {
                rows_of(s, trx, subquery, lock, db, &outer).map(|rows| {
                    Some(Ast::Value(
                        ast::Value::Boolean(rows.is_empty() == *negated).into(),
                    ))
                })
            }
            Ast::Subquery(subquery) => {
                rows_of(s, trx, subquery, lock, db, &outer).and_then(|rows| scalar(rows).map(Some))
            }
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
    let (_, tables) = s.tables();
    let bound = match bind(s, &tables, q) {
        Ok(b) => b,
        Err(e) if e.code == 1054 && refers_outside(&e.message, outer, s) => {
            return Err(SqlError::unsupported(format!("a correlated subquery: {q}")));
        }
        Err(e) => return Err(e),
    };
    let answer = if select_of(q)?.from.is_empty() {
        without_from(s, q, &bound, &[])?
    } else {
        let db = db.ok_or_else(SqlError::no_database)?;
        read(s, q, &bound, &[], (db, bound.lock.or(lock)), trx)?
    };
    Ok(answer.into_rows())
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

/// The columns a query with subqueries returns (COM_STMT_PREPARE): those of the query with
/// each subquery as NULL, named as the query names them.
pub(crate) fn describe(s: &mut Session, q: &ast::Query) -> Result<Vec<ResultColumn>, SqlError> {
    let mut stripped = q.clone();
    let _ = ast::visit_expressions_mut(&mut stripped, |e| {
        if matches!(
            e,
            Ast::InSubquery { .. } | Ast::Subquery(_) | Ast::Exists { .. }
        ) {
            *e = Ast::Value(ast::Value::Null.into());
        }
        ControlFlow::<()>::Continue(())
    });
    let mut columns = super::describe(s, &stripped)?;
    if let (Ok(original), Ok(select)) = (select_of(q), select_of(&stripped))
        && original.projection.len() == select.projection.len()
        && columns.len() == original.projection.len()
    {
        for (column, item) in columns.iter_mut().zip(&original.projection) {
            if let ast::SelectItem::UnnamedExpr(e) = item {
                column.name = e.to_string().into();
            }
        }
    }
    Ok(columns)
}
