//! Aggregate: COUNT, SUM, MIN, MAX and AVG, each with DISTINCT, over one group's rows; NULLs
//! are left out, as SQL says, and SUM and AVG of nothing are NULL.

use std::cmp::Ordering;
use std::collections::HashSet;

use waterline_types::{Row, Value};

use crate::PlanError;
use crate::expr::{Env, Expr};
use crate::value::{ArithOp, arith, sql_cmp};

use super::slots;

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFunc {
    /// COUNT.
    Count,
    /// SUM.
    Sum,
    /// MIN.
    Min,
    /// MAX.
    Max,
    /// AVG.
    Avg,
}

/// One aggregate of a select list, bound.
#[derive(Clone, Debug)]
pub struct Agg {
    /// Which function.
    pub func: AggFunc,
    /// Its argument; `None` for COUNT(*).
    pub arg: Option<Expr>,
    /// `COUNT(DISTINCT x)` and the like.
    pub distinct: bool,
}

/// Each aggregate of `aggs` over the group `rows`.
pub(super) fn aggregate(
    aggs: &[Agg],
    rows: &[&Vec<Row>],
    params: &[Value],
) -> Result<Vec<Value>, PlanError> {
    let mut out = Vec::with_capacity(aggs.len());
    for agg in aggs {
        let mut values = Vec::new();
        for row in rows {
            match &agg.arg {
                None => values.push(Value::Int(1)),
                Some(e) => {
                    let v = e.eval(Env::new(&slots(row), params))?;
                    if !v.is_null() {
                        values.push(v);
                    }
                }
            }
        }
        if agg.distinct {
            let mut seen = HashSet::new();
            values.retain(|v| seen.insert(v.clone()));
        }
        let sum = |values: &[Value]| -> Result<Value, PlanError> {
            let mut total = Value::Null;
            for v in values {
                total = if total.is_null() {
                    arith(ArithOp::Add, &Value::Int(0), v)?
                } else {
                    arith(ArithOp::Add, &total, v)?
                };
            }
            Ok(total)
        };
        let pick = |want: Ordering| {
            values
                .iter()
                .cloned()
                .reduce(|a, b| if sql_cmp(&b, &a) == Some(want) { b } else { a })
                .unwrap_or(Value::Null)
        };
        out.push(match agg.func {
            AggFunc::Count => Value::Int(values.len() as i64),
            AggFunc::Sum => sum(&values)?,
            AggFunc::Min => pick(Ordering::Less),
            AggFunc::Max => pick(Ordering::Greater),
            AggFunc::Avg if values.is_empty() => Value::Null,
            AggFunc::Avg => arith(
                ArithOp::Div,
                &sum(&values)?,
                &Value::Int(values.len() as i64),
            )?,
        });
    }
    Ok(out)
}
