//! ONLY_FULL_GROUP_BY, as MySQL checks it when it binds a grouped query's select list.

use waterline_planner::ColumnRef;
use waterline_planner::Expr;
use waterline_planner::bind::BoundTable;

use crate::error::SqlError;
use crate::session::Session;

/// ONLY_FULL_GROUP_BY: every column a grouped query's select list reads outside an aggregate
/// is grouped, or belongs to a table whose whole primary key is grouped (so it has one
/// value per group); a select item that is itself a GROUP BY expression is grouped.
pub(super) fn full_group_by(
    s: &Session,
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
    let determined = |t: usize, c: usize| {
        grouped.contains(&(t, c))
            || tables[t]
                .schema
                .primary_key
                .as_ref()
                .is_some_and(|pk| pk.iter().all(|&k| grouped.contains(&(t, k))))
    };
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
        let name = format!(
            "{}.{}.{}",
            s.database_name(),
            tables[c.table].alias,
            tables[c.table].schema.columns[c.column].name
        );
        return Err(if group_by.is_empty() {
            SqlError::new(
                1140,
                "42000",
                format!(
                    "In aggregated query without GROUP BY, expression #{} of SELECT list \
                     contains nonaggregated column '{name}'; this is incompatible with \
                     sql_mode=only_full_group_by",
                    i + 1
                ),
            )
        } else {
            SqlError::new(
                1055,
                "42000",
                format!(
                    "Expression #{} of SELECT list is not in GROUP BY clause and contains \
                     nonaggregated column '{name}' which is not functionally dependent on \
                     columns in GROUP BY clause; this is incompatible with \
                     sql_mode=only_full_group_by",
                    i + 1
                ),
            )
        });
    }
    Ok(())
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
