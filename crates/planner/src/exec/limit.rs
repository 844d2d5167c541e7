//! Limit: DISTINCT, then OFFSET and LIMIT, over the sorted output rows.

use std::collections::HashSet;

use waterline_types::Value;

/// The rows DISTINCT and the window `(limit, offset)` keep, in order.
pub(super) fn window(
    mut rows: Vec<Vec<Value>>,
    distinct: bool,
    (limit, offset): (Option<usize>, usize),
) -> Vec<Vec<Value>> {
    if distinct {
        let mut seen = HashSet::new();
        rows.retain(|r| seen.insert(r.clone()));
    }
    rows.into_iter()
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .collect()
}
