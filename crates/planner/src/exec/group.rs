//! Group: GROUP BY's groups, in the order their first rows come (MySQL's temporary table
//! keeps that order too when nothing sorts after it); with aggregates and no GROUP BY, all
//! the rows are one group, even none.

use std::collections::HashMap;

use waterline_types::{Row, Value};

use crate::PlanError;
use crate::expr::{Env, Expr};

use super::slots;

/// The joined rows `rows` in groups by the values of `group_by`, each group in arrival order;
/// with `aggregates` and no GROUP BY, one group of every row (one even if there is none).
pub(super) fn group<'r>(
    group_by: &[Expr],
    aggregates: bool,
    rows: &'r [Vec<Row>],
    params: &[Value],
) -> Result<Vec<Vec<&'r Vec<Row>>>, PlanError> {
    let mut index: HashMap<Vec<Value>, usize> = HashMap::new();
    let mut groups: Vec<Vec<&Vec<Row>>> = Vec::new();
    for row in rows {
        let key = group_by
            .iter()
            .map(|e| e.eval(Env::new(&slots(row), params)))
            .collect::<Result<Vec<_>, PlanError>>()?;
        let at = *index.entry(key).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[at].push(row);
    }
    if groups.is_empty() && group_by.is_empty() && aggregates {
        groups.push(Vec::new()); // aggregates over no rows: one row
    }
    Ok(groups)
}
