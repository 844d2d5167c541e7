//! The subqueries of a block's expressions (or of an UPDATE's or DELETE's) replaced with
//! what they return: an IN subquery by the list of its rows, EXISTS by a truth value, a
//! scalar subquery by its value. A correlated one is left in place, for the block to run
//! per row (`correlated.rs`).

use std::ops::ControlFlow;

use sqlparser::ast::{self, Expr as Ast, Query, VisitorMut};
use waterline_planner::walk;
use waterline_txn::Transaction;

use super::blocks::{Blocks, Kind};
use super::values::{in_list, scalar};
use super::{refers_outside, subquery_of};
use crate::error::SqlError;
use crate::session::{Context, Response};

/// Replaces each subquery in an expression of UPDATE or DELETE `statement` with what it
/// returns; the correlated ones it leaves, and returns.
pub(super) fn resolve_statement(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    st: &mut Blocks<'_>,
    statement: &mut ast::Statement,
) -> Result<Vec<(usize, Query)>, SqlError> {
    let mut resolve = Resolve::new(s, trx, st, Vec::new(), 0);
    match walk::visit_mut(statement, &mut resolve) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(resolve.correlated),
    }
}

/// A subquery's number of columns and its rows.
type Answered = (usize, Vec<Vec<waterline_txn::Value>>);

/// Replaces each subquery in an expression of the block with what it returns.
pub(super) struct Resolve<'b, 'a, 'c> {
    pub(super) s: &'b mut Context<'c>,
    pub(super) trx: &'b mut Transaction,
    pub(super) st: &'b mut Blocks<'a>,
    /// The subquery expressions to leave as they are (by address): the block's semi-join
    /// candidates, chosen for after the rest is known (`semi.rs`).
    pub(super) defer: Vec<*const Ast>,
    /// The numbers of the subqueries left so, in the order met.
    pub(super) deferred: Vec<usize>,
    /// What the subqueries it runs are ([`Kind::Subquery`] unless said).
    pub(super) kind: Kind,
    /// The numbers of the block's subqueries, in the order of the text.
    ids: std::vec::IntoIter<usize>,
    depth: usize,
    /// The depth of queries at which the expressions to resolve stand: 1 in a query block,
    /// 0 in an UPDATE or DELETE.
    base: usize,
    /// The correlated subqueries met (left in place), with their numbers.
    pub(super) correlated: Vec<(usize, Query)>,
}

impl<'b, 'a, 'c> Resolve<'b, 'a, 'c> {
    /// A resolver of the subqueries numbered `ids` (in the order of the text), standing in
    /// expressions at query depth `base` (1 in a query block, 0 in a lone expression).
    pub(super) fn new(
        s: &'b mut Context<'c>,
        trx: &'b mut Transaction,
        st: &'b mut Blocks<'a>,
        ids: Vec<usize>,
        base: usize,
    ) -> Resolve<'b, 'a, 'c> {
        Resolve {
            s,
            trx,
            st,
            defer: Vec::new(),
            deferred: Vec::new(),
            kind: Kind::Subquery,
            ids: ids.into_iter(),
            depth: 0,
            base,
            correlated: Vec::new(),
        }
    }

    /// The correlated subqueries met (left in place), with their numbers.
    pub(super) fn into_correlated(self) -> Vec<(usize, Query)> {
        self.correlated
    }

    /// The rows subquery `q` returns, with its number of columns (which must be `width`, if
    /// given, in each SELECT of a UNION: 1241); `None` if a name it does not know is one the
    /// statement's tables have: it is correlated, left for the block to run per row.
    fn rows(&mut self, q: &Query, width: Option<usize>) -> Result<Option<Answered>, SqlError> {
        let id = self.ids.next().unwrap_or_default();
        let answered = match q.body.as_ref() {
            ast::SetExpr::Select(_) => {
                (self.st.answer)(self.s, self.trx, self.st, q, (id, self.kind), true)
            }
            _ => (self.st.answer_union)(self.s, self.trx, self.st, q, (id, self.kind), width)
                .map(Some),
        };
        match answered {
            Ok(answer) => {
                let width = match &answer {
                    Some(Response::Rows { columns, .. }) => columns.len(),
                    _ => 0,
                };
                let rows = answer.map(Response::into_rows).unwrap_or_default();
                self.s.trace_note(|| {
                    format!(
                        "select #{id}: run once (not correlated), its {} row(s) made constants of the query around it",
                        rows.len()
                    )
                });
                Ok(Some((width, rows)))
            }
            Err(e)
                if e.code == 1054
                    && refers_outside(&e.message, &self.st.outer, self.s)
                    && !matches!(q.body.as_ref(), ast::SetExpr::Select(_)) =>
            {
                Err(SqlError::unsupported(
                    "a UNION subquery that reads the query around it",
                ))
            }
            Err(e) if e.code == 1054 && refers_outside(&e.message, &self.st.outer, self.s) => {
                self.s
                    .trace_note(|| format!("select #{id}: correlated, run per row"));
                self.correlated.push((id, q.clone()));
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

impl VisitorMut for Resolve<'_, '_, '_> {
    type Break = SqlError;

    fn pre_visit_query(&mut self, _: &mut Query) -> ControlFlow<SqlError> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<SqlError> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    /// After the expression's children: a subquery's own subqueries are its block's to run.
    fn post_visit_expr(&mut self, e: &mut Ast) -> ControlFlow<SqlError> {
        if self.depth != self.base {
            return ControlFlow::Continue(());
        }
        let Some(q) = subquery_of(e) else {
            return ControlFlow::Continue(());
        };
        if self.defer.iter().any(|&d| std::ptr::eq(d, e)) {
            self.deferred.push(self.ids.next().unwrap_or_default());
            return ControlFlow::Continue(());
        }
        let expected = match &*e {
            Ast::InSubquery { expr, .. } => Some(arity(expr)),
            _ => None,
        };
        let (width, rows) = match self.rows(&q.clone(), expected) {
            Ok(Some(answered)) => answered,
            Ok(None) => return ControlFlow::Continue(()),
            Err(err) => return ControlFlow::Break(err),
        };
        let replacement = match &*e {
            Ast::InSubquery { expr, .. } if width != arity(expr) => {
                Err(waterline_planner::PlanError::Operand(arity(expr)).into())
            }
            Ast::InSubquery { expr, negated, .. } => Ok(in_list(expr, rows, *negated)),
            Ast::Exists { negated, .. } => Ok(Ast::Value(
                ast::Value::Boolean(rows.is_empty() == *negated).into(),
            )),
            _ => scalar(rows),
        };
        match replacement {
            Ok(r) => {
                *e = r;
                ControlFlow::Continue(())
            }
            Err(err) => ControlFlow::Break(err),
        }
    }
}

/// How many values `x` is: the length of a row, else 1.
pub(super) fn arity(x: &Ast) -> usize {
    match x {
        Ast::Tuple(items) => items.len(),
        _ => 1,
    }
}
