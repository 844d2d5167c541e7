//! ONLY_FULL_GROUP_BY, as MySQL checks it when it binds a grouped query's select list.

use waterline_planner::ColumnRef;
use waterline_planner::Expr;
use waterline_planner::bind::BoundTable;

use crate::error::SqlError;
use crate::session::Context;

/// ONLY_FULL_GROUP_BY: every column a grouped query's select list reads outside an aggregate
/// is grouped, or belongs to a table whose whole primary key is grouped (so it has one
/// value per group); a select item that is itself a GROUP BY expression is grouped.
pub(super) fn full_group_by(
    s: &Context<'_>,
    tables: &[BoundTable],
    exprs: &[Expr],
    group_by: &[Expr],
) -> Result<(), SqlError> {
    let grouped: Vec<(usize, usize)> = group_by
        .iter()
        .filter_map(|e| match e {
            Expr::Column(c) => Some((c.table, c.column)),
            _ => None,
        })
        .collect();
    let determined = |t: usize, c: usize| determined(tables, &grouped, (t, c));
    for (i, expr) in exprs.iter().enumerate() {
        let mut loose = None;
        ungrouped_columns(expr, group_by, &mut |c| {
            if loose.is_none() && !determined(c.table, c.column) {
                loose = Some(c.clone());
            }
        });
        let Some(c) = loose else {
            continue;
        };
        return Err(nonaggregated(
            s,
            tables,
            (c.table, c.column),
            i + 1,
            group_by.is_empty(),
        ));
    }
    Ok(())
}

/// Whether column (table, column) of `tables` has one value per group when the `grouped`
/// columns are: it is one of them, or its table's whole primary key is.
pub(crate) fn determined(
    tables: &[BoundTable],
    grouped: &[(usize, usize)],
    (table, column): (usize, usize),
) -> bool {
    grouped.contains(&(table, column))
        || (tables[table].schema.primary_key.as_ref())
            .is_some_and(|pk| pk.iter().all(|&k| grouped.contains(&(table, k))))
}

/// ONLY_FULL_GROUP_BY's error for column `column` (table, column) of `tables`, read by
/// expression number `position` of the select list of a query that aggregates without
/// GROUP BY (1140) or groups by columns that do not determine it (1055).
pub(crate) fn nonaggregated(
    s: &Context<'_>,
    tables: &[BoundTable],
    (table, column): (usize, usize),
    position: usize,
    without_group_by: bool,
) -> SqlError {
    let name = format!(
        "{}.{}.{}",
        s.database_name(),
        tables[table].alias,
        tables[table].schema.columns[column].name
    );
    if without_group_by {
        SqlError::new(
            1140,
            "42000",
            format!(
                "In aggregated query without GROUP BY, expression #{position} of SELECT list \
                 contains nonaggregated column '{name}'; this is incompatible with \
                 sql_mode=only_full_group_by"
            ),
        )
    } else {
        SqlError::new(
            1055,
            "42000",
            format!(
                "Expression #{position} of SELECT list is not in GROUP BY clause and contains \
                 nonaggregated column '{name}' which is not functionally dependent on \
                 columns in GROUP BY clause; this is incompatible with \
                 sql_mode=only_full_group_by"
            ),
        )
    }
}

/// Calls `f` on each column `e` reads outside its aggregates and outside its parts that are
/// GROUP BY expressions.
fn ungrouped_columns(e: &Expr, group_by: &[Expr], f: &mut impl FnMut(&ColumnRef)) {
    if group_by.contains(e) {
        return;
    }
    match e {
        Expr::Column(c) => f(c),
        Expr::Agg(_) => {}
        other => other.children(&mut |child| ungrouped_columns(child, group_by, f)),
    }
}
