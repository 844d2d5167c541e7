//! A derived table joined to other tables, merged as MySQL's `derived_merge` merges it:
//! `SELECT c.name, d.n FROM c JOIN (SELECT o_c, o_n AS n FROM o WHERE o_x > 0) AS d ON
//! d.o_c = c.id` is run as `SELECT c.name, o.o_n FROM c JOIN o ON o.o_c = c.id WHERE
//! o.o_x > 0`: the derived table's tables take its place in FROM, its WHERE (and the ONs
//! of its inner joins) join the outer WHERE, and each of its columns the outer query
//! names becomes the expression it stands for.
//!
//! Merged here (`merge.rs` says what a mergeable derived table is): one in a FROM of inner
//! joins and LEFT JOINs, beside named tables and other mergeable derived tables (merged
//! next), whose own joins are inner. On a LEFT JOIN's inner side, the derived table's
//! tables stand in parentheses (`c LEFT JOIN (o JOIN l) ON ...`) and its conditions join
//! that ON, since they decide the match; such a one is merged only if each of its columns
//! is a column of its tables, NULL when the join finds no row (`1 AS one` would not be).
//! A RIGHT JOIN in the FROM leaves it materialized. Every name is
//! resolved first, so that none changes meaning: the derived table's names are qualified
//! by its tables (renamed `t#2` where an outer table has the name), and an outer name that
//! could be a column of both the derived table and another table leaves it materialized,
//! as does anything else this does not know (the statement's own error then comes from the
//! materializing path).

use std::ops::ControlFlow;

use sqlparser::ast::{
    self, Expr as Ast, Ident, JoinConstraint, JoinOperator, Query, SelectItem, SetExpr, TableFactor,
};

use waterline_planner::semijoin::and_all;

use super::merge::{mergeable, output_names};
use super::{contains_subquery, own_exprs};
use waterline_planner::walk;

/// A FROM table's alias and columns.
struct Entry {
    alias: String,
    columns: Vec<String>,
}

impl Entry {
    fn has(&self, column: &str) -> bool {
        self.columns.iter().any(|c| c.eq_ignore_ascii_case(column))
    }
}

/// `q` with its first derived table that is joined to other tables merged, and that
/// table's alias; `None` if there is none this can merge. `columns_of` gives a named
/// table's columns.
pub(super) fn merged(
    q: &Query,
    columns_of: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Option<(Query, String)> {
    let SetExpr::Select(outer) = q.body.as_ref() else {
        return None;
    };
    let inner_joins = |joins: &[ast::Join]| {
        joins.iter().all(|j| {
            matches!(
                &j.join_operator,
                JoinOperator::Join(c) | JoinOperator::Inner(c) | JoinOperator::CrossJoin(c)
                    if matches!(c, JoinConstraint::On(_) | JoinConstraint::None)
            )
        })
    };
    // The outer FROM may also have LEFT JOINs (not RIGHT: a derived table on one's inner
    // side would need its WHERE in that ON, which this does not place).
    let outer_joins = |joins: &[ast::Join]| {
        joins.iter().all(|j| {
            inner_joins(std::slice::from_ref(j))
                || matches!(
                    &j.join_operator,
                    JoinOperator::Left(JoinConstraint::On(_))
                        | JoinOperator::LeftOuter(JoinConstraint::On(_))
                )
        })
    };
    let factors: Vec<&TableFactor> = outer
        .from
        .iter()
        .flat_map(|f| std::iter::once(&f.relation).chain(f.joins.iter().map(|j| &j.relation)))
        .collect();
    if factors.len() < 2
        || !outer.from.iter().all(|f| outer_joins(&f.joins))
        || own_exprs(q).into_iter().any(contains_subquery)
    {
        return None;
    }
    // The derived table to merge, and every other factor a named table.
    let at = factors.iter().position(|f| {
        matches!(f, TableFactor::Derived { lateral: false, alias: Some(_), subquery, .. }
            if mergeable(subquery).is_some_and(|s| s.from.iter().all(|f| inner_joins(&f.joins))))
    })?;
    let TableFactor::Derived {
        subquery,
        alias: Some(alias),
        ..
    } = factors[at]
    else {
        return None;
    };
    let inner = mergeable(subquery)?;
    // On a LEFT JOIN's inner side, the derived table's rows are NULL where the join finds
    // none: so each of its columns must be a column of its tables (NULL then too, where an
    // expression such as `1` or `IFNULL(x, 0)` would not be).
    let left_join = left_join_at(outer, at);
    if left_join.is_some()
        && !inner.projection.iter().all(|item| {
            matches!(
                item,
                SelectItem::UnnamedExpr(Ast::Identifier(_) | Ast::CompoundIdentifier(_))
                    | SelectItem::ExprWithAlias {
                        expr: Ast::Identifier(_) | Ast::CompoundIdentifier(_),
                        ..
                    }
            )
        })
    {
        return None;
    }
    let mut others = Vec::new();
    for (i, f) in factors.iter().enumerate() {
        if i != at {
            others.push(named_entry(f, columns_of).or_else(|| derived_entry(f))?);
        }
    }
    let names = output_names(inner, &alias.columns)?;
    // The derived table's tables, renamed where an outer table has the name.
    let mut renamed: Vec<(String, String)> = Vec::new();
    let mut inner_entries = Vec::new();
    let mut inner_factors = Vec::new();
    let mut conds: Vec<Ast> = Vec::new();
    for from in &inner.from {
        let items = std::iter::once((&from.relation, None)).chain(from.joins.iter().map(|j| {
            match &j.join_operator {
                JoinOperator::Join(JoinConstraint::On(e))
                | JoinOperator::Inner(JoinConstraint::On(e))
                | JoinOperator::CrossJoin(JoinConstraint::On(e)) => (&j.relation, Some(e)),
                _ => (&j.relation, None),
            }
        }));
        for (factor, on) in items {
            let mut entry = named_entry(factor, columns_of)?;
            let taken = |a: &str| {
                (others.iter().chain(&inner_entries))
                    .any(|e: &Entry| e.alias.eq_ignore_ascii_case(a))
            };
            let mut factor = factor.clone();
            let written = entry.alias.clone();
            if taken(&written) {
                let fresh = (2..)
                    .map(|n| format!("{written}#{n}"))
                    .find(|a| !taken(a))?;
                if let TableFactor::Table { alias, .. } = &mut factor {
                    *alias = Some(ast::TableAlias {
                        explicit: true,
                        name: Ident::with_quote('`', fresh.clone()),
                        columns: Vec::new(),
                        at: None,
                    });
                }
                entry.alias = fresh;
            }
            renamed.push((written, entry.alias.clone()));
            inner_entries.push(entry);
            inner_factors.push(factor);
            conds.extend(on.cloned());
        }
    }
    conds.extend(inner.selection.clone());
    // Qualify the derived table's expressions by its tables.
    let mut failed = false;
    let mut qualify = |e: &Ast| -> Ast {
        let mut e = e.clone();
        let _ = walk::exprs_mut(&mut e, |x| {
            match x {
                Ast::Identifier(id) if !id.value.starts_with('@') => {
                    let mut found = inner_entries.iter().filter(|t| t.has(&id.value));
                    match (found.next(), found.next()) {
                        (Some(t), None) => *x = qualified(&t.alias, &id.value),
                        _ => failed = true,
                    }
                }
                Ast::CompoundIdentifier(ids) if ids.len() == 2 => {
                    let now = renamed
                        .iter()
                        .zip(&inner_entries)
                        .find(|((was, _), _)| was.eq_ignore_ascii_case(&ids[0].value));
                    match now {
                        Some(((_, now), t)) if t.has(&ids[1].value) => {
                            ids[0] = Ident::with_quote('`', now.clone());
                        }
                        _ => failed = true,
                    }
                }
                Ast::CompoundIdentifier(_) => failed = true,
                _ => {}
            }
            ControlFlow::<()>::Continue(())
        });
        e
    };
    let exprs: Vec<Ast> = inner
        .projection
        .iter()
        .map(|item| match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                Some(qualify(e))
            }
            _ => None,
        })
        .collect::<Option<_>>()?;
    let conds: Vec<Ast> = conds.iter().map(&mut qualify).collect();
    if failed {
        return None;
    }
    // The outer query's names: the derived table's columns become their expressions.
    let d = alias.name.value.clone();
    let own_aliases: Vec<String> = (outer.projection.iter())
        .filter_map(|item| match item {
            SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.to_ascii_lowercase()),
            _ => None,
        })
        .collect();
    if own_aliases
        .iter()
        .any(|a| names.iter().any(|n| n.eq_ignore_ascii_case(a)))
    {
        return None;
    }
    let column_of_d = |x: &Ast| -> Option<usize> {
        match x {
            Ast::CompoundIdentifier(ids)
                if ids.len() == 2 && ids[0].value.eq_ignore_ascii_case(&d) =>
            {
                names
                    .iter()
                    .position(|n| n.eq_ignore_ascii_case(&ids[1].value))
            }
            Ast::Identifier(id) => names.iter().position(|n| n.eq_ignore_ascii_case(&id.value)),
            _ => None,
        }
    };
    let mut ambiguous = false;
    let mut unknown = false;
    let mut subst = |e: &Ast| -> Ast {
        let mut e = e.clone();
        let _ = walk::exprs_mut(&mut e, |x| {
            match x {
                Ast::CompoundIdentifier(ids)
                    if ids.len() == 2 && ids[0].value.eq_ignore_ascii_case(&d) =>
                {
                    match column_of_d(x) {
                        Some(i) => *x = nested(&exprs[i]),
                        None => unknown = true,
                    }
                }
                Ast::Identifier(id) if !id.value.starts_with('@') => {
                    let in_others = others.iter().filter(|t| t.has(&id.value)).count();
                    match (column_of_d(x), in_others) {
                        (Some(_), n) if n > 0 => ambiguous = true,
                        (Some(i), _) => *x = nested(&exprs[i]),
                        (None, _) => {}
                    }
                }
                _ => {}
            }
            ControlFlow::<()>::Continue(())
        });
        e
    };
    let mut merged = q.clone();
    let SetExpr::Select(select) = merged.body.as_mut() else {
        return None;
    };
    let mut projection = Vec::new();
    for item in std::mem::take(&mut select.projection) {
        match item {
            SelectItem::Wildcard(_) => {
                let mut k = 0;
                for i in 0..factors.len() {
                    if i == at {
                        projection.extend(names.iter().zip(&exprs).map(|(name, e)| {
                            SelectItem::ExprWithAlias {
                                expr: e.clone(),
                                alias: Ident::new(name),
                            }
                        }));
                    } else {
                        let t = &others[k];
                        k += 1;
                        projection.extend(
                            t.columns
                                .iter()
                                .map(|c| SelectItem::UnnamedExpr(qualified(&t.alias, c))),
                        );
                    }
                }
            }
            SelectItem::QualifiedWildcard(
                ast::SelectItemQualifiedWildcardKind::ObjectName(name),
                _,
            ) if name.0.len() == 1
                && name.0[0]
                    .as_ident()
                    .is_some_and(|i| i.value.eq_ignore_ascii_case(&d)) =>
            {
                projection.extend(names.iter().zip(&exprs).map(|(name, e)| {
                    SelectItem::ExprWithAlias {
                        expr: e.clone(),
                        alias: Ident::new(name),
                    }
                }));
            }
            SelectItem::UnnamedExpr(e) => {
                let replaced = subst(&e);
                projection.push(if replaced == e {
                    SelectItem::UnnamedExpr(e)
                } else {
                    let name = match &e {
                        Ast::Identifier(id) => id.value.clone(),
                        Ast::CompoundIdentifier(ids) => ids.last()?.value.clone(),
                        other => other.to_string(),
                    };
                    SelectItem::ExprWithAlias {
                        expr: replaced,
                        alias: Ident::new(name),
                    }
                });
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                projection.push(SelectItem::ExprWithAlias {
                    expr: subst(&expr),
                    alias,
                });
            }
            other => projection.push(other),
        }
    }
    select.projection = projection;
    let outer_where = select.selection.take().map(|w| subst(&w));
    // On a LEFT JOIN's inner side, the derived table's conditions decide that join's
    // match: they join its ON. Anywhere else they filter, as WHERE does.
    let (conds, on_conds) = match left_join {
        Some(_) => (Vec::new(), conds),
        None => (conds, Vec::new()),
    };
    select.selection =
        and_all((conds.into_iter().chain(outer_where)).map(|c| Ast::Nested(Box::new(c))));
    if let ast::GroupByExpr::Expressions(exprs, _) = &mut select.group_by {
        for e in exprs.iter_mut() {
            *e = subst(e);
        }
    }
    select.having = select.having.take().map(|h| subst(&h));
    if let Some(ast::OrderBy {
        kind: ast::OrderByKind::Expressions(items),
        ..
    }) = &mut merged.order_by
    {
        for o in items.iter_mut() {
            // A select alias stays the alias.
            if !matches!(&o.expr, Ast::Identifier(id) if own_aliases.contains(&id.value.to_ascii_lowercase()))
            {
                o.expr = subst(&o.expr);
            }
        }
    }
    // The derived table's tables in its place, the first where it stood, the others
    // right before, as inner joins without a condition.
    let SetExpr::Select(select) = merged.body.as_mut() else {
        return None;
    };
    let mut seen = 0;
    'items: for from in &mut select.from {
        if seen == at {
            let mut rest = inner_factors.clone();
            from.relation = rest.remove(0);
            let cross = rest.into_iter().map(cross_join);
            from.joins.splice(0..0, cross);
            break 'items;
        }
        seen += 1;
        for j in 0..from.joins.len() {
            if seen == at && left_join.is_some() {
                // `c LEFT JOIN (t1 JOIN t2) ON (on) AND (the derived table's conditions)`.
                let mut rest = inner_factors.clone();
                let first = rest.remove(0);
                from.joins[j].relation = match rest.is_empty() {
                    true => first,
                    false => TableFactor::NestedJoin {
                        table_with_joins: Box::new(ast::TableWithJoins {
                            relation: first,
                            joins: rest.into_iter().map(cross_join).collect(),
                        }),
                        alias: None,
                    },
                };
                break 'items;
            }
            if seen == at {
                let mut rest = inner_factors.clone();
                from.joins[j].relation = rest.pop()?;
                let cross: Vec<ast::Join> = rest.into_iter().map(cross_join).collect();
                from.joins.splice(j..j, cross);
                break 'items;
            }
            seen += 1;
        }
    }
    let mut on_conds = Some(on_conds);
    let mut seen = 0;
    for from in &mut select.from {
        seen += 1;
        for j in &mut from.joins {
            if let JoinOperator::Join(JoinConstraint::On(e))
            | JoinOperator::Inner(JoinConstraint::On(e))
            | JoinOperator::CrossJoin(JoinConstraint::On(e))
            | JoinOperator::Left(JoinConstraint::On(e))
            | JoinOperator::LeftOuter(JoinConstraint::On(e)) = &mut j.join_operator
            {
                *e = subst(e);
                if left_join == Some(seen)
                    && let Some(more) = on_conds.take()
                {
                    let all = std::iter::once(e.clone()).chain(more);
                    *e = and_all(all.map(|c| Ast::Nested(Box::new(c))))?;
                }
            }
            seen += 1;
        }
    }
    if ambiguous || unknown {
        return None;
    }
    Some((merged, d))
}

/// If factor number `at` of `select`'s FROM (counting each item's first table and its
/// joins) is the inner side of a LEFT JOIN, `Some(at)`.
fn left_join_at(select: &ast::Select, at: usize) -> Option<usize> {
    let mut seen = 0;
    for from in &select.from {
        seen += 1;
        for j in &from.joins {
            if seen == at {
                return matches!(
                    j.join_operator,
                    JoinOperator::Left(_) | JoinOperator::LeftOuter(_)
                )
                .then_some(at);
            }
            seen += 1;
        }
    }
    None
}

/// Another derived table this could merge next: its alias and the names of its columns.
fn derived_entry(factor: &TableFactor) -> Option<Entry> {
    let TableFactor::Derived {
        lateral: false,
        subquery,
        alias: Some(alias),
        ..
    } = factor
    else {
        return None;
    };
    Some(Entry {
        alias: alias.name.value.clone(),
        columns: output_names(mergeable(subquery)?, &alias.columns)?,
    })
}

/// A named table's alias and columns; `None` for anything else, or a table not known.
fn named_entry(
    factor: &TableFactor,
    columns_of: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Option<Entry> {
    let TableFactor::Table {
        name,
        alias,
        args: None,
        ..
    } = factor
    else {
        return None;
    };
    let table = name.0.last()?.as_ident()?.value.clone();
    let columns = columns_of(&table)?;
    Some(Entry {
        alias: alias.as_ref().map_or_else(
            || crate::names::short(&table).to_owned(),
            |a| a.name.value.clone(),
        ),
        columns,
    })
}

fn qualified(alias: &str, column: &str) -> Ast {
    Ast::CompoundIdentifier(vec![Ident::with_quote('`', alias), Ident::new(column)])
}

/// An expression where a column stood: parenthesized unless it is a name or a constant.
fn nested(e: &Ast) -> Ast {
    match e {
        Ast::Identifier(_) | Ast::CompoundIdentifier(_) | Ast::Value(_) => e.clone(),
        other => Ast::Nested(Box::new(other.clone())),
    }
}

/// `factor` as an inner join without a condition.
fn cross_join(factor: TableFactor) -> ast::Join {
    ast::Join {
        relation: factor,
        global: false,
        join_operator: JoinOperator::CrossJoin(JoinConstraint::None),
    }
}
