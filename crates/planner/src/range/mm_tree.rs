//! From a condition to a [`SelTree`]: MySQL's `get_mm_tree`, `get_full_func_mm_tree`,
//! `get_mm_parts` and `get_mm_leaf`, for the table being analysed (the *current table*).
//!
//! A predicate `column op value` bounds an index that has `column` as a key part when two
//! things hold:
//! 1. **`param_comp`**: the value uses no table outside `prev_tables | read_tables |
//!    current_table`. This is the test the 8.0.27 regression broke: called without the const
//!    tables, a value that reads a const table's column looked unusable.
//! 2. **The value is known now**: it uses only read tables (const tables, whose row the
//!    planner has read) and constants. A value that reads an earlier, not yet read table
//!    passes (1) but not (2): MySQL then re-analyses for each row of the earlier table
//!    ("Range checked for each record"); waterline leaves such a predicate to ref access or
//!    to the filter.

use std::ops::Bound;

use waterline_types::{TableSchema, Value};

use super::{KeyTree, SelArg, SelTree, tree_and, tree_or};
use crate::catalog::IndexId;
use crate::expr::{CmpOp, ColumnRef, Env, Expr};
use crate::range::Interval;
use crate::table_map::TableMap;
use crate::trace::{ParamComp, Trace};
use crate::value::{KeyBound, key_bound, truth};

/// The inputs of range analysis for one table (MySQL's `RANGE_OPT_PARAM`).
pub struct RangeParam<'a> {
    /// The table's FROM position.
    pub table: usize,
    /// Its name in the query.
    pub alias: &'a str,
    /// Its schema.
    pub schema: &'a TableSchema,
    /// Its indexes, in the order of the trees of a [`SelTree`].
    pub indexes: &'a [IndexId],
    /// Tables before this one (MySQL adds `INNER_TABLE_BIT`).
    pub prev_tables: TableMap,
    /// Tables whose row is known (MySQL adds `INNER_TABLE_BIT`).
    pub read_tables: TableMap,
    /// This table.
    pub current_table: TableMap,
    /// The rows of the read tables, and the parameters.
    pub env: Env<'a>,
    /// Where the analysis is recorded.
    pub trace: &'a mut Trace,
}

impl RangeParam<'_> {
    fn any(&self) -> SelTree {
        SelTree::any(self.indexes.len())
    }

    /// The column, if `e` is a column of the current table.
    fn own_column<'e>(&self, e: &'e Expr) -> Option<&'e ColumnRef> {
        match e {
            Expr::Column(c) if c.table == self.table => Some(c),
            _ => None,
        }
    }

    /// Whether `value` is known now (uses only read tables) and what it is.
    fn known(&self, value: &Expr) -> Option<Value> {
        if !self.read_tables.contains(value.used_tables()) {
            return None;
        }
        value.eval(self.env).ok()
    }
}

/// The tree of `cond` for the current table (MySQL's `get_mm_tree`).
pub fn get_mm_tree(param: &mut RangeParam<'_>, cond: &Expr) -> SelTree {
    match cond {
        Expr::And(list) => get_mm_tree_and(param, list),
        Expr::Or(list) => {
            let trees = list.iter().map(|c| get_mm_tree(param, c)).collect();
            tree_or_all(trees)
        }
        // A condition on constants and read tables only is true or false now.
        c if param.read_tables.contains(c.used_tables()) => {
            match c.eval(param.env).map(|v| truth(&v)) {
                Ok(Some(true)) => param.any(),
                Ok(_) => SelTree::Impossible,
                Err(_) => param.any(),
            }
        }
        Expr::Cmp(CmpOp::Eq, l, r)
            if matches!((l.as_ref(), r.as_ref()), (Expr::Row(_), Expr::Row(_))) =>
        {
            let (Expr::Row(xs), Expr::Row(ys)) = (l.as_ref(), r.as_ref()) else {
                unreachable!()
            };
            if xs.len() != ys.len() {
                return param.any();
            }
            let pairs = xs
                .iter()
                .zip(ys)
                .map(|(x, y)| Expr::Cmp(CmpOp::Eq, Box::new(x.clone()), Box::new(y.clone())));
            get_mm_tree(param, &Expr::And(pairs.collect()))
        }
        Expr::Cmp(op, l, r) => {
            let mut tree = param.any();
            if let Some(c) = param.own_column(l) {
                tree = tree_and(tree, get_full_func_mm_tree(param, c, *op, r));
            }
            if let Some(c) = param.own_column(r) {
                tree = tree_and(tree, get_full_func_mm_tree(param, c, op.swapped(), l));
            }
            tree
        }
        Expr::Between {
            expr,
            low,
            high,
            negated: false,
        } => {
            let both = Expr::And(vec![
                Expr::Cmp(CmpOp::Ge, expr.clone(), low.clone()),
                Expr::Cmp(CmpOp::Le, expr.clone(), high.clone()),
            ]);
            get_mm_tree(param, &both)
        }
        Expr::InList {
            expr,
            list,
            negated: false,
            ..
        } => {
            let alternatives = list
                .iter()
                .map(|v| Expr::Cmp(CmpOp::Eq, expr.clone(), Box::new(v.clone())));
            get_mm_tree(param, &Expr::Or(alternatives.collect()))
        }
        Expr::IsNull(e, negated) => match param.own_column(e) {
            Some(c) => {
                let interval = if *negated {
                    Interval {
                        lo: Bound::Excluded(Value::Null),
                        hi: Bound::Unbounded,
                    }
                } else {
                    Interval::point(Value::Null)
                };
                get_mm_parts(param, c, &interval)
            }
            None => param.any(),
        },
        _ => param.any(),
    }
}

/// The OR of `trees`, merged pairwise in rounds: each `tree_or` sorts and merges the
/// intervals of both sides, so ORing an IN list's thousands of points one by one into a
/// growing tree cost time quadratic in the list; in rounds it is `n log² n`.
fn tree_or_all(mut trees: Vec<SelTree>) -> SelTree {
    while trees.len() > 1 {
        let mut merged = Vec::with_capacity(trees.len().div_ceil(2));
        let mut pairs = trees.into_iter();
        while let Some(a) = pairs.next() {
            merged.push(match pairs.next() {
                Some(b) => tree_or(a, b),
                None => a,
            });
        }
        trees = merged;
    }
    trees.pop().unwrap_or(SelTree::Impossible)
}

/// The tree of the conjunction of `conds` (an `AND` of them, without building one: the
/// planner asks this of a statement's conditions at every execution).
pub fn get_mm_tree_and(param: &mut RangeParam<'_>, conds: &[Expr]) -> SelTree {
    conds
        .iter()
        .fold(param.any(), |t, c| tree_and(t, get_mm_tree(param, c)))
}

/// The tree of `field op value` (MySQL's `get_full_func_mm_tree`).
fn get_full_func_mm_tree(
    param: &mut RangeParam<'_>,
    field: &ColumnRef,
    op: CmpOp,
    value: &Expr,
) -> SelTree {
    let param_comp = !(param.prev_tables | param.read_tables | param.current_table);
    let used = value.used_tables();
    let usable = !used.overlaps(param_comp);
    if param.trace.enabled() {
        let predicate = format!("{} {} {value}", field.name, op.symbol());
        param
            .trace
            .line(1, || format!("get_full_func_mm_tree: {predicate}"));
        param.trace.map(2, "value used_tables", used);
        param.trace.map(2, "param_comp", param_comp);
        param.trace.param_comps.push(ParamComp {
            table: param.alias.to_owned(),
            predicate,
            param_comp,
            usable,
        });
    }
    if !usable {
        param.trace.line(2, || {
            "value uses a table in param_comp: no range from this predicate".into()
        });
        return param.any();
    }
    let Some(v) = param.known(value) else {
        param.trace.line(2, || {
            "value is not known yet (an earlier table's row): no range now".into()
        });
        return param.any();
    };
    param.trace.line(2, || format!("value = {v}"));
    let ty = param.schema.columns[field.column].ty;
    match leaf(op, key_bound(ty, &v)) {
        Err(()) => {
            param
                .trace
                .line(2, || "no value can match: impossible range".into());
            SelTree::Impossible
        }
        Ok(None) => {
            param
                .trace
                .line(2, || "the value cannot bound this column's index".into());
            param.any()
        }
        Ok(Some(list)) => list.iter().fold(SelTree::Impossible, |t, iv| {
            tree_or(t, get_mm_parts(param, field, iv))
        }),
    }
}

/// One interval (or none) for `op` against a bound (MySQL's `get_mm_leaf`). `Ok(None)` means
/// no usable range, `Err(())` an impossible one.
fn leaf(op: CmpOp, bound: Option<KeyBound>) -> Result<Option<Vec<Interval>>, ()> {
    // Comparisons are never true for NULL, so ranges start after it (NULL sorts first).
    let above_null = Bound::Excluded(Value::Null);
    let iv = |lo, hi| Interval { lo, hi };
    Ok(Some(match bound {
        None => return Ok(None),
        Some(KeyBound::Null) => return Err(()),
        Some(KeyBound::Exact(v)) => match op {
            CmpOp::Eq => vec![Interval::point(v)],
            CmpOp::Lt => vec![iv(above_null, Bound::Excluded(v))],
            CmpOp::Le => vec![iv(above_null, Bound::Included(v))],
            CmpOp::Gt => vec![iv(Bound::Excluded(v), Bound::Unbounded)],
            CmpOp::Ge => vec![iv(Bound::Included(v), Bound::Unbounded)],
            CmpOp::Ne => vec![
                iv(above_null, Bound::Excluded(v.clone())),
                iv(Bound::Excluded(v), Bound::Unbounded),
            ],
        },
        Some(KeyBound::Between { floor, ceil }) => match op {
            CmpOp::Eq => return Err(()),
            CmpOp::Lt | CmpOp::Le => vec![iv(above_null, Bound::Included(floor))],
            CmpOp::Gt | CmpOp::Ge => vec![iv(Bound::Included(ceil), Bound::Unbounded)],
            CmpOp::Ne => return Ok(None),
        },
    }))
}

/// A tree with `interval(index)` on every index that has `field` as a key part (MySQL's
/// `get_mm_parts`).
fn get_mm_parts(param: &RangeParam<'_>, field: &ColumnRef, interval: &Interval) -> SelTree {
    let keys = param
        .indexes
        .iter()
        .map(|&index| {
            let part = index
                .columns(param.schema)
                .iter()
                .position(|&c| c == field.column);
            match part {
                Some(part) => SelArg::leaf(part, interval.clone()),
                None => KeyTree::Any,
            }
        })
        .collect();
    SelTree::Keys(keys)
}
