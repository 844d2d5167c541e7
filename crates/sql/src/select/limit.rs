//! DISTINCT and LIMIT / OFFSET, the last steps: what the statement's window keeps, and how
//! many rows the executor may stop after when the plan gives them in order.

use sqlparser::ast::{self, Expr as Ast, GroupByExpr, SelectItem};
use waterline_planner::bind::{Binder, BoundSelect};
use waterline_txn::Value;

use crate::error::SqlError;
use waterline_planner::bind::contains_aggregate;

/// A LIMIT or OFFSET value. Its placeholders are the statement's last ones.
fn limit_value(e: &Ast, base: usize, params: &[Value]) -> Result<usize, SqlError> {
    let mut binder = Binder::new(&[]);
    binder.set_param_base(base);
    let v = binder
        .expr(e, "limit clause")?
        .eval(waterline_planner::Env::new(&[], params))?;
    match v {
        Value::Int(n) if n >= 0 => Ok(n as usize),
        // MySQL's grammar takes only an unsigned integer (or a `?`) in LIMIT.
        other if !is_placeholder(e) => Err(SqlError::parse(format!(
            "LIMIT takes an unsigned integer, not {other}"
        ))),
        other => Err(SqlError::new(
            1210,
            "HY000",
            format!("Incorrect arguments to LIMIT: {other}"),
        )),
    }
}

fn is_placeholder(e: &Ast) -> bool {
    matches!(e, Ast::Value(v) if matches!(v.value, ast::Value::Placeholder(_)))
}

/// A query's LIMIT and OFFSET (OFFSET 0 if absent).
pub(super) fn limit_offset(
    q: &ast::Query,
    params: &[Value],
) -> Result<(Option<usize>, usize), SqlError> {
    Ok(match &q.limit_clause {
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
            let l_params = usize::from(limit.as_ref().is_some_and(is_placeholder));
            let o_params = usize::from(offset.as_ref().is_some_and(|o| is_placeholder(&o.value)));
            let base = params.len().saturating_sub(l_params + o_params);
            (
                limit
                    .as_ref()
                    .map(|l| limit_value(l, base, params))
                    .transpose()?,
                offset
                    .as_ref()
                    .map(|o| limit_value(&o.value, base + l_params, params))
                    .transpose()?
                    .unwrap_or(0),
            )
        }
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
            let o_params = usize::from(is_placeholder(offset));
            let base = params
                .len()
                .saturating_sub(o_params + usize::from(is_placeholder(limit)));
            (
                Some(limit_value(limit, base + o_params, params)?),
                limit_value(offset, base, params)?,
            )
        }
        None => (None, 0),
    })
}

/// How many rows of its plan's output the query can use if the plan gives them in the
/// query's order: LIMIT + OFFSET, when nothing between the plan and the LIMIT (grouping,
/// aggregates, HAVING, DISTINCT) needs more rows and the planner sees the whole ORDER BY (it skips
/// items naming select-list aliases, and then cannot vouch for the order). The planner
/// takes it to prefer an index that gives the order ([`Planner::limit`]); [`rows_wanted`]
/// then says whether the plan does.
pub(super) fn usable_rows(
    q: &ast::Query,
    select: &ast::Select,
    bound: &BoundSelect,
    (limit, offset): (Option<usize>, usize),
) -> Option<usize> {
    let order_items = match &q.order_by {
        Some(ob) => match &ob.kind {
            ast::OrderByKind::Expressions(items) => items.len(),
            ast::OrderByKind::All(_) => return None,
        },
        None => 0,
    };
    let aggregates = select.projection.iter().any(|item| match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
            contains_aggregate(e)
        }
        _ => false,
    });
    let grouped = match &select.group_by {
        GroupByExpr::Expressions(exprs, _) => !exprs.is_empty(),
        GroupByExpr::All(_) => true,
    };
    if bound.order_by.len() != order_items
        || aggregates
        || grouped
        || select.having.is_some()
        || select.distinct.is_some()
    {
        return None;
    }
    limit.map(|l| l.saturating_add(offset))
}

/// The rows the executor may stop after: [`usable_rows`], if the plan's order is the
/// query's (its first table's index gives the ORDER BY, read forwards, or there is none).
/// Delivery's `ORDER BY no_o_id LIMIT 1 FOR UPDATE` then reads and locks one row per
/// district instead of all of the district's NEW_ORDER rows.
pub(super) fn rows_wanted(plan: &waterline_planner::Plan, usable: Option<usize>) -> Option<usize> {
    usable.filter(|_| plan.ordered_by_index && !plan.backward)
}
