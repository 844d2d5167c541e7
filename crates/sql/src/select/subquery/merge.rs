//! Derived tables merged into the query around them, as MySQL's `derived_merge` merges
//! them: `SELECT COUNT(*) FROM (SELECT a FROM t WHERE b < 5) AS d WHERE a > 1` is run as
//! `SELECT COUNT(*) FROM t WHERE b < 5 AND a > 1`, so the planner sees the base table, its
//! indexes and every condition, and no rows are materialized.
//!
//! Merged here: a derived table that is the query's only FROM item, whose query is one
//! SELECT over base tables (joined in any way) without DISTINCT, GROUP BY, HAVING,
//! aggregates, LIMIT or a subquery in its select list, and whose outer query names only its
//! columns (by the derived table's alias or alone) and has no subquery of its own. Its
//! ORDER BY goes, as MySQL drops it. The outer query's columns are named as written. One
//! joined to other tables is merged by `joined.rs`. Any other derived table is materialized
//! (`block.rs`), as MySQL does for the ones it cannot merge.

use std::ops::ControlFlow;

use sqlparser::ast::{self, Expr as Ast, Query, SelectItem, SetExpr, TableFactor};

use super::{contains_subquery, own_exprs};
use waterline_planner::walk;

/// The aggregate functions, which keep a derived table from being merged.
const AGGREGATES: [&str; 8] = [
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "GROUP_CONCAT",
    "BIT_AND",
    "BIT_OR",
];

/// `q` with its derived table merged into it, and the derived table's alias; `None` if it
/// has none MySQL's rules (as far as built here) let merge.
pub(super) fn merged(q: &Query) -> Option<(Query, String)> {
    let SetExpr::Select(outer) = q.body.as_ref() else {
        return None;
    };
    let [from] = outer.from.as_slice() else {
        return None;
    };
    let TableFactor::Derived {
        lateral: false,
        subquery,
        alias: Some(alias),
        ..
    } = &from.relation
    else {
        return None;
    };
    if !from.joins.is_empty() || own_exprs(q).into_iter().any(contains_subquery) {
        return None;
    }
    let inner = mergeable(subquery)?;
    let names = output_names(inner, &alias.columns)?;
    let exprs: Vec<&Ast> = inner
        .projection
        .iter()
        .map(|item| match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let alias_name = alias.name.value.clone();
    let subst = Subst {
        alias: &alias_name,
        names: &names,
        exprs: &exprs,
    };
    let own_aliases: Vec<String> = outer
        .projection
        .iter()
        .filter_map(|item| match item {
            SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.to_ascii_lowercase()),
            _ => None,
        })
        .collect();
    // A select alias that is also a column's name: ORDER BY and HAVING would mean the
    // alias, a substitution the column. Such a query is materialized instead.
    let clash = own_aliases
        .iter()
        .any(|a| names.iter().any(|n| n.eq_ignore_ascii_case(a)));
    if clash || !subst.names_only(q, &own_aliases) {
        return None;
    }
    let mut merged = q.clone();
    let SetExpr::Select(select) = merged.body.as_mut() else {
        return None;
    };
    let mut projection = Vec::new();
    for item in std::mem::take(&mut select.projection) {
        match item {
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                projection.extend(names.iter().zip(&exprs).map(|(name, e)| {
                    SelectItem::ExprWithAlias {
                        expr: (*e).clone(),
                        alias: ast::Ident::new(name),
                    }
                }));
            }
            SelectItem::UnnamedExpr(e) => {
                let name = match &e {
                    Ast::Identifier(id) => id.value.clone(),
                    Ast::CompoundIdentifier(ids) => ids.last()?.value.clone(),
                    other => other.to_string(),
                };
                let replaced = subst.apply(&e);
                projection.push(if replaced == e {
                    SelectItem::UnnamedExpr(e)
                } else {
                    SelectItem::ExprWithAlias {
                        expr: replaced,
                        alias: ast::Ident::new(name),
                    }
                });
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                projection.push(SelectItem::ExprWithAlias {
                    expr: subst.apply(&expr),
                    alias,
                });
            }
            _ => return None,
        }
    }
    select.projection = projection;
    let outer_where = select.selection.take().map(|w| subst.apply(&w));
    select.selection = match (inner.selection.clone(), outer_where) {
        (Some(a), Some(b)) => Some(Ast::BinaryOp {
            left: Box::new(Ast::Nested(Box::new(a))),
            op: ast::BinaryOperator::And,
            right: Box::new(Ast::Nested(Box::new(b))),
        }),
        (a, b) => a.or(b),
    };
    if let ast::GroupByExpr::Expressions(exprs, _) = &mut select.group_by {
        for e in exprs.iter_mut() {
            *e = subst.apply(e);
        }
    }
    select.having = select.having.take().map(|h| subst.apply(&h));
    select.from = inner.from.clone();
    if let Some(ast::OrderBy {
        kind: ast::OrderByKind::Expressions(items),
        ..
    }) = &mut merged.order_by
    {
        for o in items.iter_mut() {
            o.expr = subst.apply(&o.expr);
        }
    }
    Some((merged, alias_name))
}

/// The derived table's SELECT, if MySQL's rules let it merge.
pub(super) fn mergeable(q: &Query) -> Option<&ast::Select> {
    let SetExpr::Select(select) = q.body.as_ref() else {
        return None;
    };
    let grouped = match &select.group_by {
        ast::GroupByExpr::Expressions(exprs, _) => !exprs.is_empty(),
        ast::GroupByExpr::All(_) => true,
    };
    // Tables joined one after another: no derived table, no parenthesized join.
    let plain_from = (select.from.iter())
        .flat_map(|f| std::iter::once(&f.relation).chain(f.joins.iter().map(|j| &j.relation)))
        .all(|t| matches!(t, TableFactor::Table { args: None, .. }));
    let projection_ok = select.projection.iter().all(|item| match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
            !has_aggregate(e) && !contains_subquery(e)
        }
        _ => false,
    });
    let ok = q.with.is_none()
        && q.limit_clause.is_none()
        && q.locks.is_empty()
        && select.distinct.is_none()
        && !grouped
        && select.having.is_none()
        && !select.from.is_empty()
        && plain_from
        && projection_ok;
    ok.then_some(select)
}

/// The names of the derived table's columns: its column list, or its select items' names.
pub(crate) fn output_names(
    select: &ast::Select,
    list: &[ast::TableAliasColumnDef],
) -> Option<Vec<String>> {
    if !list.is_empty() {
        return (list.len() == select.projection.len())
            .then(|| list.iter().map(|c| c.name.value.clone()).collect());
    }
    let names: Vec<String> = select
        .projection
        .iter()
        .map(|item| match item {
            SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.clone()),
            SelectItem::UnnamedExpr(Ast::Identifier(id)) => Some(id.value.clone()),
            SelectItem::UnnamedExpr(Ast::CompoundIdentifier(ids)) => {
                ids.last().map(|i| i.value.clone())
            }
            SelectItem::UnnamedExpr(e) => Some(e.to_string()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    // Two columns of one name are MySQL's 1060: the materializing path reports it.
    let unique = names
        .iter()
        .enumerate()
        .all(|(i, n)| !names[..i].iter().any(|m| m.eq_ignore_ascii_case(n)));
    unique.then_some(names)
}

fn has_aggregate(e: &Ast) -> bool {
    walk::exprs(e, |x| match x {
        Ast::Function(f)
            if AGGREGATES
                .iter()
                .any(|a| f.name.to_string().eq_ignore_ascii_case(a)) =>
        {
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

/// The outer query's references to the derived table's columns, and their replacements.
struct Subst<'a> {
    alias: &'a str,
    names: &'a [String],
    exprs: &'a [&'a Ast],
}

impl Subst<'_> {
    /// The derived table's column a name is, if it is one.
    fn column(&self, e: &Ast) -> Option<usize> {
        let name = match e {
            Ast::Identifier(id) => &id.value,
            Ast::CompoundIdentifier(ids) => match ids.as_slice() {
                [q, c] if q.value.eq_ignore_ascii_case(self.alias) => &c.value,
                _ => return None,
            },
            _ => return None,
        };
        self.names.iter().position(|n| n.eq_ignore_ascii_case(name))
    }

    /// Whether every name in the outer query (FROM aside) is a column of the derived table,
    /// or one of the query's own select aliases (which ORDER BY and HAVING may name).
    fn names_only(&self, q: &Query, own_aliases: &[String]) -> bool {
        let mut outer = q.clone();
        if let SetExpr::Select(select) = outer.body.as_mut() {
            select.from.clear();
        }
        !walk::exprs(&outer, |e| match e {
            Ast::Identifier(id)
                if self.column(e).is_none()
                    && !own_aliases.contains(&id.value.to_ascii_lowercase()) =>
            {
                ControlFlow::Break(())
            }
            Ast::CompoundIdentifier(_) if self.column(e).is_none() => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        })
        .is_break()
    }

    /// `e` with each column of the derived table replaced by its expression.
    fn apply(&self, e: &Ast) -> Ast {
        let mut e = e.clone();
        let _ = walk::exprs_mut(&mut e, |x| {
            if let Some(i) = self.column(x) {
                *x = match self.exprs[i] {
                    simple @ (Ast::Identifier(_) | Ast::CompoundIdentifier(_) | Ast::Value(_)) => {
                        simple.clone()
                    }
                    other => Ast::Nested(Box::new(other.clone())),
                };
            }
            ControlFlow::<()>::Continue(())
        });
        e
    }
}
