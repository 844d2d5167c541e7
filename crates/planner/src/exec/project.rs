//! Project: the select list's values for one row, or for one group (its scalars read the
//! group's first row, its aggregates the group's values).

use waterline_types::{Row, Value};

use crate::PlanError;
use crate::expr::Expr;
use crate::value::{ArithOp, arith};

use super::{env, slots};

/// A select-list expression, bound: scalar parts over the row, aggregates over the group.
#[derive(Clone, Debug)]
pub enum SelectExpr {
    /// An expression over the row.
    Scalar(Expr),
    /// The group's value of aggregate number `n` ([`super::Output::aggs`]).
    Agg(usize),
    /// Arithmetic over aggregates (`SUM(a) / COUNT(*)`).
    Arith(ArithOp, Box<SelectExpr>, Box<SelectExpr>),
}

impl SelectExpr {
    /// Calls `f` on each scalar part (those a GROUP BY must determine).
    pub fn scalars(&self, f: &mut impl FnMut(&Expr)) {
        match self {
            SelectExpr::Scalar(e) => f(e),
            SelectExpr::Agg(_) => {}
            SelectExpr::Arith(_, a, b) => {
                a.scalars(f);
                b.scalars(f);
            }
        }
    }

    /// Its value for a group (`rows`, at least one unless the query has only aggregates
    /// and no rows) whose aggregates came to `aggs`.
    pub(super) fn eval(
        &self,
        rows: &[&Vec<Row>],
        aggs: &[Value],
        params: &[Value],
    ) -> Result<Value, PlanError> {
        Ok(match self {
            SelectExpr::Agg(i) => aggs[*i].clone(),
            SelectExpr::Arith(op, a, b) => arith(
                *op,
                &a.eval(rows, aggs, params)?,
                &b.eval(rows, aggs, params)?,
            )?,
            SelectExpr::Scalar(e) => match rows.first() {
                Some(row) => e.eval(env(&slots(row), params))?,
                // No row (an aggregate over nothing): scalars over columns are NULL.
                None => e.eval(env(&[], params)).unwrap_or(Value::Null),
            },
        })
    }
}
