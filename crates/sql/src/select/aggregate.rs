//! Grouping and aggregates, the step after the executor's rows: GROUP BY's groups in the
//! order they are first seen, and COUNT, SUM, MIN, MAX, AVG (each with DISTINCT) over each
//! group, or over all the rows when there is no GROUP BY.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use sqlparser::ast::{self, Expr as Ast, FunctionArguments};
use waterline_planner::value::{ArithOp, arith, sql_cmp};
use waterline_planner::{Expr, PlanError};
use waterline_txn::{Row, Value};

use super::project::{OutCol, eval};
use super::sort::Keyed;
use super::{env, slots};
use crate::error::SqlError;

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AggFunc {
    Count,
    Sum,
    Min,
    Max,
    Avg,
}

#[derive(Clone, Debug)]
pub(super) struct Agg {
    pub(super) func: AggFunc,
    /// `None` for COUNT(*).
    pub(super) arg: Option<Expr>,
    pub(super) distinct: bool,
}

/// The aggregate `f` calls, if it is one, and its arguments.
pub(super) fn aggregate(f: &ast::Function) -> Option<(AggFunc, &FunctionArguments)> {
    let func = match f.name.to_string().to_ascii_uppercase().as_str() {
        "COUNT" => AggFunc::Count,
        "SUM" => AggFunc::Sum,
        "MIN" => AggFunc::Min,
        "MAX" => AggFunc::Max,
        "AVG" => AggFunc::Avg,
        _ => return None,
    };
    Some((func, &f.args))
}

/// Whether `e` calls an aggregate anywhere.
pub(super) fn contains_aggregate(e: &Ast) -> bool {
    match e {
        Ast::Function(f) => aggregate(f).is_some(),
        Ast::Nested(x) => contains_aggregate(x),
        Ast::BinaryOp { left, right, .. } => contains_aggregate(left) || contains_aggregate(right),
        _ => false,
    }
}

/// The rows of a grouped query (GROUP BY, or aggregates alone): one per group, each with
/// the source values its ORDER BY keys read (from the group's first row).
pub(super) fn groups<'r>(
    (cols, group_by, aggs): (&[OutCol], &[Expr], &[Agg]),
    rows: &'r [Vec<Row>],
    params: &[Value],
    sort_keys: impl Fn(Option<&&'r Vec<Row>>) -> Result<Vec<Value>, SqlError>,
) -> Result<Vec<Keyed>, SqlError> {
    let mut index: HashMap<Vec<Value>, usize> = HashMap::new();
    let mut groups: Vec<Vec<&Vec<Row>>> = Vec::new();
    for row in rows {
        let key = group_by
            .iter()
            .map(|e| e.eval(env(&slots(row), params)))
            .collect::<Result<Vec<_>, PlanError>>()?;
        let at = *index.entry(key).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[at].push(row);
    }
    if groups.is_empty() && group_by.is_empty() {
        groups.push(Vec::new()); // aggregates over no rows: one row
    }
    let mut out = Vec::with_capacity(groups.len());
    for group in &groups {
        let values = run_aggregates(aggs, group, params)?;
        let row = cols
            .iter()
            .map(|c| eval(&c.expr, group, &values, params))
            .collect::<Result<Vec<_>, _>>()?;
        out.push((row, sort_keys(group.first())?));
    }
    Ok(out)
}

/// Each aggregate of `aggs` over the group `rows`.
fn run_aggregates(
    aggs: &[Agg],
    rows: &[&Vec<Row>],
    params: &[Value],
) -> Result<Vec<Value>, SqlError> {
    let mut out = Vec::with_capacity(aggs.len());
    for agg in aggs {
        let mut values = Vec::new();
        for row in rows {
            match &agg.arg {
                None => values.push(Value::Int(1)),
                Some(e) => {
                    let v = e.eval(env(&slots(row), params))?;
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
        let sum = |values: &[Value]| -> Result<Value, SqlError> {
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
