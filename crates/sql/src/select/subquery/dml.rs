//! UPDATE and DELETE with subqueries in their SET or WHERE: each subquery runs first, in the
//! statement's transaction, reading FOR SHARE as InnoDB's reads in a statement that writes
//! do (in READ COMMITTED, a consistent read), and its result takes its place as constants;
//! the statement then runs as one without subqueries, in the same transaction. A subquery
//! that reads the table being changed is MySQL's 1093; one that reads the row being changed
//! (correlated) is refused with 1235.

use std::ops::ControlFlow;

use sqlparser::ast::{self, FromTable, Statement};
use waterline_txn::{Isolation, LockMode, Value};

use super::block::{Context, resolve_statement};
use super::{contains_subquery, factors, subquery_of, with_params};
use crate::dml::{bind_delete, bind_update, delete_in, update_in};
use crate::error::SqlError;
use crate::session::{Bound, Response, Session};

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
        s: &mut Session,
        statement: &Statement,
        params: &[Value],
    ) -> Result<Response, SqlError> {
        let mut statement = with_params(statement, params)?;
        let target = target_of(&statement)?;
        refuse_reading_target(&statement, &target)?;
        let db = s.database().map(|d| d.to_string());
        s.with_trx(|s, trx| {
            let lock = (trx.isolation() != Isolation::ReadCommitted).then_some(LockMode::Shared);
            let mut st = Context {
                lock,
                db: db.as_deref(),
                outer: std::iter::once(target.to_ascii_lowercase()).collect(),
                explain: None,
                current: 0,
            };
            if !resolve_statement(s, trx, &mut st, &mut statement)?.is_empty() {
                return Err(SqlError::unsupported(
                    "a correlated subquery in UPDATE or DELETE",
                ));
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
    let _ = ast::visit_expressions(statement, |e| {
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
