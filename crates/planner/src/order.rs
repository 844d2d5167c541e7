//! Whether rows already arrive in ORDER BY / GROUP BY order from the first table's index, or
//! need a sort ("Using filesort") or a temporary table ("Using temporary").

use crate::catalog::IndexId;
use crate::cost;
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
    let (ordered, backward) = index_order(plan, const_tables, &order, true, None);
    plan.ordered_by_index = order.is_empty() || ordered;
    plan.backward = ordered && backward && !order.is_empty();
    plan.needs_temporary =
        !group.is_empty() && !index_order(plan, const_tables, &group, false, None).0;
}

/// For a query that wants only its first `limit` rows in ORDER BY order, and whose one table
/// is read by a full scan and then sorted: reads an index that gives that order instead,
/// if reading about `limit` of its entries (and looking each row up) costs less than the
/// scan. This is MySQL's `test_if_cheaper_ordering`: the executor then stops at the limit,
/// and a locking read locks only the rows it returns, where the scan read (and locked)
/// every row to sort them.
///
/// The entries to read are `limit` divided by the fraction of rows the conditions pass (a
/// filter that passes one row in ten reads ten entries a row). Only an ascending order is
/// taken, as the executor stops early only reading forwards. Run after [`analyse`], which it
/// runs again if it changes the access.
pub(crate) fn prefer_ordering_index(plan: &mut Plan, limit: usize) {
    let [first] = plan.tables.as_slice() else {
        return;
    };
    if plan.impossible.is_some()
        || plan.ordered_by_index
        || plan.select.order_by.is_empty()
        || !plan.select.group_by.is_empty()
        || !matches!(first.access, Access::All | Access::Index { .. })
    {
        return;
    }
    let order: Vec<(&Expr, bool)> = plan.select.order_by.iter().map(|(e, d)| (e, *d)).collect();
    let schema = &plan.select.tables[first.table].schema;
    let pass = (first.filtered / 100.0).max(f64::MIN_POSITIVE);
    let entries = ((limit as f64 / pass).ceil() as u64).min(first.rows);
    let mut best = None;
    for index in IndexId::all(schema) {
        let (ordered, backward) = index_order(plan, TableMap::EMPTY, &order, true, Some(index));
        if !ordered || backward {
            continue;
        }
        let covering = index.covers(schema, &plan.select.used_columns[first.table]);
        let read = match index {
            IndexId::Primary => cost::ROW_READ,
            _ if covering => cost::INDEX_ENTRY_READ,
            _ => cost::ROW_READ + cost::LOOKUP,
        };
        let cost = entries as f64 * (read + cost::ROW_EVALUATE);
        plan.trace.line(0, || {
            format!(
                "index for ORDER BY ... LIMIT {limit}: {} in order, {entries} entries, cost \
                 {cost:.2} against {:.2}",
                index.name(schema),
                first.cost
            )
        });
        if cost < first.cost && best.is_none_or(|(_, c, _)| cost < c) {
            best = Some((index, cost, covering));
        }
    }
    let Some((index, cost, covering)) = best else {
        return;
    };
    plan.trace.line(0, || {
        format!("chosen: {}, read in order", index.name(schema))
    });
    let first = &mut plan.tables[0];
    first.access = Access::Index { index };
    first.covering = covering && index != IndexId::Primary;
    first.rows = entries;
    first.cost = cost;
    plan.cost = cost;
    analyse(plan);
}

/// Whether the first non-const table's index (or `index`, read whole) gives rows in the
/// order of `keys` (all one direction if `directed`), and whether that is the index read
/// backwards.
fn index_order(
    plan: &Plan,
    const_tables: TableMap,
    keys: &[(&Expr, bool)],
    directed: bool,
    index: Option<IndexId>,
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
    let index = match index.or(first.access.index()) {
        Some(index) => index,
        // A full scan walks the clustered index: rows come in primary key order (without
        // a primary key, in hidden row id order, which no ORDER BY names).
        None if schema.primary_key.is_some() => IndexId::Primary,
        None => return (false, false),
    };
    // Columns of the first table bound to one value by an equality: any order on them holds.
    let fixed = |col: usize| {
        let conds = plan.select.conds.iter().enumerate();
        let own = conds.filter(|(i, _)| plan.select.on_of(*i).is_none());
        own.map(|(_, c)| c).any(|c| match c {
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
