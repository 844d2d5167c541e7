//! Whether rows already arrive in ORDER BY / GROUP BY order from the first table's index, or
//! need a sort ("Using filesort") or a temporary table ("Using temporary").

use crate::catalog::IndexId;
use crate::expr::{CmpOp, Expr};
use crate::plan::{Access, Plan};
use crate::table_map::TableMap;

/// Sets `ordered_by_index`, `backward` and `needs_temporary` of a finished plan.
pub(crate) fn analyse(plan: &mut Plan) {
    let const_tables = plan
        .tables
        .iter()
        .filter(|t| matches!(t.access, Access::Const { .. }))
        .fold(TableMap::EMPTY, |m, t| m | TableMap::table(t.table));
    let order: Vec<(&Expr, bool)> = plan.select.order_by.iter().map(|(e, d)| (e, *d)).collect();
    let group: Vec<(&Expr, bool)> = plan.select.group_by.iter().map(|e| (e, false)).collect();
    let (ordered, backward) = index_order(plan, const_tables, &order, true);
    plan.ordered_by_index = order.is_empty() || ordered;
    plan.backward = ordered && backward && !order.is_empty();
    plan.needs_temporary = !group.is_empty() && !index_order(plan, const_tables, &group, false).0;
}

/// Whether the first non-const table's index gives rows in the order of `keys` (all one
/// direction if `directed`), and whether that is the index read backwards.
fn index_order(
    plan: &Plan,
    const_tables: TableMap,
    keys: &[(&Expr, bool)],
    directed: bool,
) -> (bool, bool) {
    if plan.impossible.is_some() {
        return (true, false);
    }
    let Some(first) = plan
        .tables
        .iter()
        .find(|t| !const_tables.overlaps(TableMap::table(t.table)))
    else {
        // Every table is const: one row at most.
        return (true, false);
    };
    let schema = &plan.select.tables[first.table].schema;
    let index = match first.access.index() {
        Some(index) => index,
        // A full scan walks the clustered index: rows come in primary key order (without
        // a primary key, in hidden row id order, which no ORDER BY names).
        None if schema.primary_key.is_some() => IndexId::Primary,
        None => return (false, false),
    };
    // Columns of the first table bound to one value by an equality: any order on them holds.
    let fixed = |col: usize| {
        plan.select.conds.iter().any(|c| match c {
            Expr::Cmp(CmpOp::Eq, a, b) => match (a.as_ref(), b.as_ref()) {
                (Expr::Column(x), v) | (v, Expr::Column(x)) => {
                    x.table == first.table
                        && x.column == col
                        && const_tables.contains(v.used_tables())
                }
                _ => false,
            },
            _ => false,
        })
    };
    let mut wanted = Vec::new();
    for &(e, desc) in keys {
        match e {
            Expr::Column(c) if const_tables.overlaps(TableMap::table(c.table)) => {}
            Expr::Column(c) if c.table == first.table => {
                if !fixed(c.column) {
                    wanted.push((c.column, desc));
                }
            }
            _ => return (false, false),
        }
    }
    if wanted.is_empty() {
        return (true, false);
    }
    let mut cols: Vec<usize> = index.columns(schema).to_vec();
    if index != IndexId::Primary {
        // A secondary entry ends with the primary key, so it orders by it too.
        cols.extend(schema.primary_key.iter().flatten());
    }
    let free = cols.iter().copied().skip_while(|&c| fixed(c));
    let matches = free.take(wanted.len()).eq(wanted.iter().map(|w| w.0));
    let desc = wanted[0].1;
    let one_direction = !directed || wanted.iter().all(|w| w.1 == desc);
    (matches && one_direction, directed && desc)
}
