//! Outer joins. `a LEFT JOIN b ON cond` returns each row of `a` with the rows of `b` that
//! `cond` matches, or with NULLs for `b`'s columns when none does; `x RIGHT JOIN t ON cond` is
//! bound as `t LEFT JOIN x ON cond`. The inner tables (`b`, `x`) are read in a join order after
//! the tables before them in FROM and next to one another, and the executor
//! (`exec/join.rs`) marks whether an outer row found a match among them.
//!
//! An ON condition decides the match only: it is never used to make a table const, to
//! propagate an equality to another table, to make the query impossible, or to limit an
//! outer table's rows; it can give the inner table its access path (`ref`, `range`). WHERE
//! and the ONs of inner joins are checked after the match, on NULL-filled rows too. As
//! MySQL's `simplify_joins` does, an outer join whose NULL rows a WHERE condition rejects
//! (`b.x = 1` is never true of a NULL `b.x`) is bound as an inner join.
//!
//! A parenthesized join on an outer join's inner side (`a LEFT JOIN (b JOIN c ON p) ON q`)
//! is one nest: its inner tables are `b` and `c`, and `p` and `q` both decide the match.
//! A LEFT JOIN in it is a nest inside that nest (`a LEFT JOIN (b LEFT JOIN c ON p) ON q`:
//! `{c}` inside `{b, c}`): `c` matches `b` by `p`, and a row of `b` with its `c` (or NULLs)
//! matches `a` by `q`; the executor marks each nest's match from the innermost out. Not
//! built: a RIGHT JOIN inside parentheses, or one whose left side has an outer join,
//! refused with 1235.
//!
//! Semi-joins and anti-joins are nests of the same kind ([`JoinKind`]): the tables of an
//! `EXISTS` or `IN` subquery the SQL layer flattened into the query around it (MySQL's
//! semi-join transformation), read after the outer tables their conditions name. A semi-join
//! passes an outer row on at its first match and stops (MySQL's FirstMatch strategy), so no
//! outer row comes twice; its conditions are the query's like WHERE's (they may make a table
//! const or give an equality to propagate, since an outer row without a match is dropped
//! anyway). An anti-join (`NOT EXISTS`, `NOT IN`) passes an outer row on, NULL-filled, only
//! when nothing matches, and stops at the first match; its conditions decide the match only,
//! as an outer join's ON does.

use crate::expr::Expr;
use crate::table_map::TableMap;

/// What a nest of inner tables does with an outer row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    /// LEFT JOIN: every match, or one NULL-filled row.
    Left,
    /// Semi-join (EXISTS, IN): the outer row once, at its first match.
    Semi,
    /// Anti-join (NOT EXISTS, NOT IN): the outer row once if nothing matches.
    Anti,
}

/// One outer join, as a LEFT JOIN; or a semi-join or anti-join.
#[derive(Clone, Debug, PartialEq)]
pub struct OuterJoin {
    /// What it is.
    pub kind: JoinKind,
    /// Its inner tables: NULLs for an outer row that no row of them matches.
    pub inner: TableMap,
    /// The tables every join order puts before the inner ones: those before the join in
    /// FROM (a RIGHT JOIN's: its right table, and the FROM items before its own); a
    /// semi-join's or anti-join's: the outer tables its conditions read.
    pub after: TableMap,
}

impl OuterJoin {
    /// Whether its conditions decide a match only (an outer join's ON, an anti-join's),
    /// rather than filter the query's rows (a semi-join's, as WHERE's do).
    pub fn matches_only(&self) -> bool {
        self.kind != JoinKind::Semi
    }
}

/// Binds as inner joins the outer joins whose NULL rows a condition that is not an outer
/// join's ON (`on_of[i]` is `None`) rejects; their ONs become such conditions too, which may
/// reject another's NULLs in turn.
pub(crate) fn simplify(joins: &mut Vec<OuterJoin>, on_of: &mut [Option<usize>], conds: &[Expr]) {
    loop {
        let rejected = joins.iter().position(|j| {
            j.kind == JoinKind::Left
                && conds
                    .iter()
                    .zip(on_of.iter())
                    .any(|(c, on)| on.is_none() && rejects_null(c, j.inner))
        });
        let Some(k) = rejected else { return };
        joins.remove(k);
        for on in on_of.iter_mut() {
            *on = match *on {
                Some(j) if j == k => None,
                Some(j) if j > k => Some(j - 1),
                other => other,
            };
        }
    }
}

/// Whether condition `c` is never true when every column of `tables` is NULL (MySQL's
/// null-rejecting condition), as far as its form shows.
fn rejects_null(c: &Expr, tables: TableMap) -> bool {
    match c {
        Expr::Cmp(_, a, b) => strict(a, tables) || strict(b, tables),
        Expr::IsNull(e, true) => strict(e, tables),
        Expr::Between {
            expr, low, high, ..
        } => strict(expr, tables) || strict(low, tables) || strict(high, tables),
        Expr::InList { expr, .. } => strict(expr, tables),
        Expr::And(list) => list.iter().any(|c| rejects_null(c, tables)),
        Expr::Or(list) => list.iter().all(|c| rejects_null(c, tables)),
        _ => false,
    }
}

/// Whether `e` is NULL whenever every column of `tables` is (a column of them, or
/// arithmetic over one).
fn strict(e: &Expr, tables: TableMap) -> bool {
    match e {
        Expr::Column(c) => tables.overlaps(TableMap::table(c.table)),
        Expr::Arith(_, a, b) => strict(a, tables) || strict(b, tables),
        Expr::Neg(e) => strict(e, tables),
        _ => false,
    }
}

/// Whether join order `order` (FROM positions, after the const tables `known`) reads every
/// outer join's inner tables after the tables it follows and next to one another.
pub(crate) fn order_ok(order: &[usize], joins: &[OuterJoin], known: TableMap) -> bool {
    joins.iter().all(|j| {
        let at: Vec<usize> = order
            .iter()
            .enumerate()
            .filter(|(_, t)| j.inner.overlaps(TableMap::table(**t)))
            .map(|(i, _)| i)
            .collect();
        let Some((&first, &last)) = at.first().zip(at.last()) else {
            return true;
        };
        let before = order[..first]
            .iter()
            .fold(known, |m, &t| m | TableMap::table(t));
        last - first + 1 == at.len() && before.contains(j.after & !j.inner)
    })
}

/// A join order for `tables` (FROM positions) that [`order_ok`] accepts, as close to FROM
/// order as it can be: each step takes the first table whose outer joins allow it.
pub(crate) fn from_order(tables: &[usize], joins: &[OuterJoin], known: TableMap) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::with_capacity(tables.len());
    let mut left: Vec<usize> = tables.to_vec();
    while !left.is_empty() {
        let done = order.iter().fold(known, |m, &t| m | TableMap::table(t));
        // Inside an outer join's inner tables, the rest of them come first (of the
        // innermost such join, when one holds another).
        let open = (joins.iter())
            .filter(|j| j.inner.overlaps(done & !known) && !done.contains(j.inner))
            .min_by_key(|j| j.inner.positions().count());
        let pick = left
            .iter()
            .position(|&t| {
                let me = TableMap::table(t);
                open.is_none_or(|j| j.inner.overlaps(me))
                    && joins
                        .iter()
                        .filter(|j| j.inner.overlaps(me))
                        .all(|j| done.contains(j.after & !j.inner))
            })
            .unwrap_or(0);
        order.push(left.remove(pick));
    }
    order
}
