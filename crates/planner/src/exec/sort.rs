//! Sort: ORDER BY when the plan's index does not give the order ("Using filesort"), by
//! output columns or by expressions over the source row (or the group's first row), NULLs
//! first as MySQL sorts them, stably.

use std::cmp::Ordering;

use waterline_types::Value;

use crate::PlanError;
use crate::expr::{Env, Expr};
use crate::value::sql_cmp;

/// An output row, with the source values its ORDER BY keys read.
pub(super) type Keyed = (Vec<Value>, Vec<Value>);

/// An ORDER BY key: an output column, or an expression over the source row (in a grouped
/// query, over the group's first row and its aggregates).
#[derive(Clone, Debug)]
pub enum SortKey {
    /// Output column number `n` (from 0).
    Out(usize),
    /// An expression over the source row.
    Src(Expr),
}

/// The values of the expression keys of `sort` for the row or group in `env`.
pub(super) fn source_keys(sort: &[(SortKey, bool)], env: Env<'_>) -> Result<Vec<Value>, PlanError> {
    sort.iter()
        .filter_map(|(k, _)| match k {
            SortKey::Src(e) => Some(e.eval(env)),
            SortKey::Out(_) => None,
        })
        .collect()
}

/// Sorts `out` (rows with their source keys) by `sort` (each key with `true` for DESC).
pub(super) fn sort(out: &mut [Keyed], sort: &[(SortKey, bool)]) {
    if sort.is_empty() {
        return;
    }
    out.sort_by(|(a, sa), (b, sb)| {
        let mut src = 0;
        for (key, desc) in sort {
            let (x, y) = match key {
                SortKey::Out(i) => (&a[*i], &b[*i]),
                SortKey::Src(_) => {
                    src += 1;
                    (&sa[src - 1], &sb[src - 1])
                }
            };
            let o = compare_for_sort(x, y);
            let o = if *desc { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
}

/// How ORDER BY orders two values: NULL first, then as SQL compares them (values it cannot
/// order are equal, so the sort keeps their order).
pub fn compare_for_sort(x: &Value, y: &Value) -> Ordering {
    match (x.is_null(), y.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => sql_cmp(x, y).unwrap_or(Ordering::Equal),
    }
}
