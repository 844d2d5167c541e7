//! UPDATE and DELETE with subqueries in their SET or WHERE: each subquery runs first, in the
//! statement's transaction, reading FOR SHARE as InnoDB's reads in a statement that writes
//! do (in READ COMMITTED, a consistent read), and its result takes its place as constants;
//! the statement then runs as one without subqueries, in the same transaction. A subquery
//! that reads the table being changed is MySQL's 1093.
//!
//! One that reads the row being changed (correlated: `UPDATE d SET ytd = (SELECT SUM(h)
//! FROM h WHERE h.d = d.id)`, `DELETE FROM o WHERE NOT EXISTS (SELECT ...)`) makes the
//! statement a query first: the target's rows that WHERE keeps (in ORDER BY order, up to
//! LIMIT), locked FOR UPDATE, by primary key, with the values of SET's correlated
//! subqueries for each, read as any query with subqueries is (`block.rs`); then each row is
//! changed by its primary key, with those values in place of its subqueries. A SET
//! subquery that reads a column an earlier assignment of the same SET changes would see the
//! old value here, the new one in MySQL: refused (1235), as is a target without a primary
//! key.

use std::ops::ControlFlow;

use sqlparser::ast::{self, FromTable, Statement};
use waterline_txn::{Isolation, LockMode, Value};

use super::block::{answer, context};
use super::blocks::{Blocks, Kind};
use super::resolve::resolve_statement;
use super::{contains_subquery, factors, subquery_of, with_params};
use crate::dml::{bind_delete, bind_update, delete_in, update_in};
use crate::error::SqlError;
use crate::session::{Bound, Context, Response};
use waterline_planner::walk;

/// Whether UPDATE or DELETE `statement` has a subquery in an expression.
pub(crate) fn has_subquery(statement: &Statement) -> bool {
    matches!(statement, Statement::Update(_) | Statement::Delete(_)) && contains_subquery(statement)
}

/// An UPDATE or DELETE with subqueries: bound anew at every execution, once they have run.
#[derive(Debug)]
pub(crate) struct DmlWithSubqueries;

impl Bound for DmlWithSubqueries {
    fn volatile(&self) -> bool {
        true
    }

    fn run(
        &self,
        s: &mut Context<'_>,
        statement: &Statement,
        params: &[Value],
    ) -> Result<Response, SqlError> {
        let mut statement = with_params(statement, params)?;
        let target = target_of(&statement)?;
        refuse_reading_target(&statement, &target)?;
        let db = Some(s.catalog_database().to_string());
        s.with_trx(|s, trx| {
            let lock = (trx.isolation() != Isolation::ReadCommitted).then_some(LockMode::Shared);
            let outer = std::iter::once(target.to_ascii_lowercase()).collect();
            let mut st = context(lock, db.as_deref(), outer, None);
            if !resolve_statement(s, trx, &mut st, &mut statement)?.is_empty() {
                return per_row(s, trx, &mut st, &statement, &target);
            }
            let (_, tables) = s.tables();
            match &statement {
                Statement::Update(u) => {
                    let bound = bind_update(s, &tables, u)?;
                    let mut warnings = Vec::new();
                    let (matched, changed) = update_in(s, trx, &bound, &[], &mut warnings)?;
                    s.warnings_mut().append(&mut warnings);
                    let warned = s.warning_count();
                    Ok(Response::Done {
                        affected: changed,
                        last_insert_id: 0,
                        info: format!(
                            "Rows matched: {matched}  Changed: {changed}  Warnings: {warned}"
                        ),
                    })
                }
                Statement::Delete(d) => {
                    let bound = bind_delete(s, &tables, d)?;
                    Ok(Response::done(delete_in(s, trx, &bound, &[])?))
                }
                other => Err(SqlError::unsupported(other)),
            }
        })
    }
}

/// The name of the table an UPDATE or DELETE changes.
fn target_of(statement: &Statement) -> Result<String, SqlError> {
    let relation = match statement {
        Statement::Update(u) => &u.table.relation,
        Statement::Delete(d) => match &d.from {
            FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => match t.as_slice() {
                [one] => &one.relation,
                _ => return Err(SqlError::unsupported("a multi-table DELETE")),
            },
        },
        other => return Err(SqlError::unsupported(other)),
    };
    match relation {
        ast::TableFactor::Table { name, .. } => Ok(name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.value.clone())
            .unwrap_or_default()),
        other => Err(SqlError::unsupported(format!("changing {other}"))),
    }
}

/// MySQL's 1093: a subquery of the statement reads the table it changes (outside a derived
/// table, which MySQL materializes first).
fn refuse_reading_target(statement: &Statement, target: &str) -> Result<(), SqlError> {
    let mut reads = false;
    let _ = walk::exprs(statement, |e| {
        if let Some(q) = subquery_of(e)
            && let ast::SetExpr::Select(select) = q.body.as_ref()
        {
            reads |= factors(select).any(|t| match t {
                ast::TableFactor::Table { name, .. } => name
                    .0
                    .last()
                    .and_then(|p| p.as_ident())
                    .is_some_and(|i| i.value.eq_ignore_ascii_case(target)),
                _ => false,
            });
        }
        ControlFlow::<()>::Continue(())
    });
    if reads {
        return Err(SqlError::new(
            1093,
            "HY000",
            format!("You can't specify target table '{target}' for update in FROM clause"),
        ));
    }
    Ok(())
}

/// A correlated UPDATE or DELETE on `target`: its rows found by a locking query, then
/// changed one by one by primary key.
fn per_row(
    s: &mut Context<'_>,
    trx: &mut waterline_txn::Transaction,
    st: &mut Blocks<'_>,
    statement: &Statement,
    target: &str,
) -> Result<Response, SqlError> {
    let (_, tables) = s.tables();
    let table = tables
        .iter()
        .find(|t| t.name().eq_ignore_ascii_case(target))
        .ok_or_else(|| SqlError::no_table(st.db.unwrap_or_default(), target))?;
    let schema = table.schema();
    let Some(pk) = schema.primary_key.clone() else {
        return Err(SqlError::unsupported(
            "a correlated subquery in UPDATE or DELETE of a table without a primary key",
        ));
    };
    let pk_names: Vec<String> = pk.iter().map(|&c| schema.columns[c].name.clone()).collect();
    let (relation, selection, order_by, limit, assignments) = match statement {
        Statement::Update(u) => (
            u.table.relation.to_string(),
            u.selection.as_ref(),
            &u.order_by,
            u.limit.as_ref(),
            &u.assignments[..],
        ),
        Statement::Delete(d) => {
            let relation = match &d.from {
                FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t
                    .first()
                    .map(|t| t.relation.to_string())
                    .unwrap_or_default(),
            };
            (
                relation,
                d.selection.as_ref(),
                &d.order_by,
                d.limit.as_ref(),
                &[][..],
            )
        }
        other => return Err(SqlError::unsupported(other)),
    };
    // SET's subqueries, in order, each read by the query as a column.
    let mut subqueries = Vec::new();
    let mut assigned: Vec<String> = Vec::new();
    for a in assignments {
        let here = outermost_subqueries(&a.value);
        for q in &here {
            if reads_any(q, &assigned) {
                return Err(SqlError::unsupported(
                    "a subquery in SET that reads a column an earlier assignment changes",
                ));
            }
        }
        subqueries.extend(here);
        if let ast::AssignmentTarget::ColumnName(name) = &a.target
            && let Some(last) = name.0.last().and_then(|p| p.as_ident())
        {
            assigned.push(last.value.clone());
        }
    }
    let columns: Vec<String> = (pk_names.iter().map(|n| format!("`{n}`")))
        .chain(subqueries.iter().map(ToString::to_string))
        .collect();
    let mut sql = format!("SELECT {} FROM {relation}", columns.join(", "));
    if let Some(w) = selection {
        sql.push_str(&format!(" WHERE {w}"));
    }
    if !order_by.is_empty() {
        let items: Vec<String> = order_by.iter().map(ToString::to_string).collect();
        sql.push_str(&format!(" ORDER BY {}", items.join(", ")));
    }
    if let Some(limit) = limit {
        sql.push_str(&format!(" LIMIT {limit}"));
    }
    sql.push_str(" FOR UPDATE");
    let parsed = sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::MySqlDialect {}, &sql);
    let query = match parsed.map_err(SqlError::parse)?.pop() {
        Some(Statement::Query(q)) => *q,
        _ => return Err(SqlError::other("a correlated UPDATE or DELETE's query")),
    };
    let rows = match answer(s, trx, st, &query, (1, Kind::Top), true)? {
        Some(Response::Rows { rows, .. }) => rows,
        _ => Vec::new(),
    };
    let key = |row: &[Value]| -> ast::Expr {
        let conds = pk_names.iter().zip(row).map(|(n, v)| ast::Expr::BinaryOp {
            left: Box::new(ast::Expr::Identifier(ast::Ident::with_quote(
                '`',
                n.clone(),
            ))),
            op: ast::BinaryOperator::Eq,
            right: Box::new(super::values::constant(v)),
        });
        waterline_planner::semijoin::and_all(conds)
            .unwrap_or(ast::Expr::Value(ast::Value::Boolean(false).into()))
    };
    let (mut matched, mut changed) = (0, 0);
    let mut warnings = Vec::new();
    for row in &rows {
        let (_, tables) = s.tables();
        match statement {
            Statement::Update(u) => {
                let mut u = u.clone();
                let mut values = row[pk.len()..].iter();
                for a in &mut u.assignments {
                    replace_outermost(&mut a.value, &mut |_| {
                        super::values::constant(values.next().unwrap_or(&Value::Null))
                    });
                }
                u.selection = Some(key(row));
                u.order_by.clear();
                u.limit = None;
                let bound = bind_update(s, &tables, &u)?;
                let (m, c) = update_in(s, trx, &bound, &[], &mut warnings)?;
                matched += m;
                changed += c;
            }
            Statement::Delete(d) => {
                let mut d = d.clone();
                d.selection = Some(key(row));
                d.order_by.clear();
                d.limit = None;
                let bound = bind_delete(s, &tables, &d)?;
                changed += delete_in(s, trx, &bound, &[])?;
            }
            other => return Err(SqlError::unsupported(other)),
        }
    }
    s.warnings_mut().append(&mut warnings);
    Ok(match statement {
        Statement::Update(_) => {
            let warned = s.warning_count();
            Response::Done {
                affected: changed,
                last_insert_id: 0,
                info: format!("Rows matched: {matched}  Changed: {changed}  Warnings: {warned}"),
            }
        }
        _ => Response::done(changed),
    })
}

/// The subquery expressions of `e` not inside another, in order.
fn outermost_subqueries(e: &ast::Expr) -> Vec<ast::Expr> {
    let mut found = Vec::new();
    let mut e = e.clone();
    replace_outermost(&mut e, &mut |q| {
        found.push(q.clone());
        ast::Expr::Value(ast::Value::Null.into())
    });
    found
}

/// Replaces each subquery expression of `e` not inside another, in order, by what `with`
/// makes of it.
fn replace_outermost(e: &mut ast::Expr, with: &mut dyn FnMut(&ast::Expr) -> ast::Expr) {
    struct Replace<'w>(&'w mut dyn FnMut(&ast::Expr) -> ast::Expr);
    impl ast::VisitorMut for Replace<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
            if subquery_of(e).is_some() {
                *e = (self.0)(e);
            }
            ControlFlow::Continue(())
        }
    }
    let _ = walk::visit_mut(e, &mut Replace(with));
}

/// Whether `e` names a column called one of `names` (by its last part: conservative, a
/// column of the subquery's own tables of that name counts too).
fn reads_any(e: &ast::Expr, names: &[String]) -> bool {
    walk::exprs(e, |x| {
        let name = match x {
            ast::Expr::Identifier(id) => Some(&id.value),
            ast::Expr::CompoundIdentifier(ids) => ids.last().map(|i| &i.value),
            _ => None,
        };
        match name.is_some_and(|n| names.iter().any(|m| m.eq_ignore_ascii_case(n))) {
            true => ControlFlow::Break(()),
            false => ControlFlow::Continue(()),
        }
    })
    .is_break()
}
