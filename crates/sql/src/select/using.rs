//! `JOIN ... USING (c, ...)` and `NATURAL JOIN`, as MySQL reads them, rewritten before a
//! statement is bound into what the rest of the crate knows: each becomes `ON left.c =
//! right.c AND ...`, where `left.c` is the one table on the join's left side with a column
//! `c` (or the column an earlier USING made of it; none is 1054, two are 1052), and NATURAL
//! names every column both sides have.
//!
//! The columns a USING joins are one column of the result (MySQL's coalesced column): the
//! left side's for an inner or LEFT JOIN, the right side's for a RIGHT JOIN. So, in the
//! query block of the join,
//! - an unqualified name of one of them is that column (not ambiguous), everywhere but in
//!   the subqueries of the block (which have their own names) and where it names a select
//!   item's alias;
//! - `SELECT *` lists them first, in the order the joins made them, then every table's other
//!   columns in FROM order (`t.*` still lists all of `t`'s).
//!
//! A USING whose sides are not named tables or derived tables with known column names, or
//! inside parentheses, is not built (1235).

use std::ops::ControlFlow;

use sqlparser::ast::{
    self, Expr as Ast, Ident, JoinConstraint, JoinOperator, Query, SelectItem, SetExpr, Statement,
    TableFactor, VisitorMut,
};
use waterline_planner::semijoin::and_all;

use crate::error::SqlError;
use waterline_planner::walk;

/// A table of a FROM as USING sees it: the name it goes by, its columns, and which of
/// them a USING made part of a coalesced column.
struct Entry {
    alias: String,
    columns: Vec<String>,
    joined: Vec<bool>,
}

impl Entry {
    fn position(&self, column: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(column))
    }
}

/// Rewrites every USING and NATURAL join of `statement`'s queries; `columns_of` gives a
/// table's columns by its engine name.
pub(crate) fn rewrite(
    statement: &mut Statement,
    columns_of: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Result<(), SqlError> {
    struct Rewrite<'c> {
        columns_of: &'c dyn Fn(&str) -> Option<Vec<String>>,
    }
    impl VisitorMut for Rewrite<'_> {
        type Break = SqlError;
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<SqlError> {
            let order_by = q.order_by.as_mut();
            let result = match q.body.as_mut() {
                SetExpr::Select(select) => rewrite_select(select, order_by, self.columns_of),
                body => rewrite_parts(body, self.columns_of),
            };
            match result {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => ControlFlow::Break(e),
            }
        }
    }
    if !uses_using(statement) {
        return Ok(());
    }
    match walk::visit_mut(statement, &mut Rewrite { columns_of }) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(e) => Err(e),
    }
}

/// Whether a SELECT of `statement` (a UNION's parts too) joins by USING or NATURAL; one
/// inside parentheses is left to the binder, which refuses it.
fn uses_using(statement: &Statement) -> bool {
    struct Find;
    impl ast::Visitor for Find {
        type Break = ();
        fn pre_visit_select(&mut self, select: &ast::Select) -> ControlFlow<()> {
            let found = (select.from.iter())
                .flat_map(|f| &f.joins)
                .any(|j| using_of(&j.join_operator).is_some());
            match found {
                true => ControlFlow::Break(()),
                false => ControlFlow::Continue(()),
            }
        }
    }
    walk::visit(statement, &mut Find).is_break()
}

/// A join's USING or NATURAL constraint, if it has one.
fn using_of(op: &JoinOperator) -> Option<&JoinConstraint> {
    let c = match op {
        JoinOperator::Join(c)
        | JoinOperator::Inner(c)
        | JoinOperator::Left(c)
        | JoinOperator::LeftOuter(c)
        | JoinOperator::Right(c)
        | JoinOperator::RightOuter(c)
        | JoinOperator::CrossJoin(c)
        | JoinOperator::FullOuter(c)
        | JoinOperator::StraightJoin(c) => c,
        _ => return None,
    };
    matches!(c, JoinConstraint::Using(_) | JoinConstraint::Natural).then_some(c)
}

/// The SELECTs of a UNION's parts (ORDER BY of the whole names its output columns).
fn rewrite_parts(
    body: &mut SetExpr,
    columns_of: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Result<(), SqlError> {
    match body {
        SetExpr::Select(select) => rewrite_select(select, None, columns_of),
        SetExpr::SetOperation { left, right, .. } => {
            rewrite_parts(left, columns_of)?;
            rewrite_parts(right, columns_of)
        }
        _ => Ok(()),
    }
}

fn unsupported(what: &str) -> SqlError {
    SqlError::unsupported(format!("USING or NATURAL {what}"))
}

/// The entry of a FROM factor.
fn entry_of(
    factor: &TableFactor,
    columns_of: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Result<Entry, SqlError> {
    let (alias, columns) = match factor {
        TableFactor::Table { name, alias, .. } => {
            let engine = waterline_planner::bind::object_name(name).map_err(SqlError::from)?;
            let columns = columns_of(&engine).ok_or_else(|| unsupported("with this table"))?;
            let alias = alias.as_ref().map_or_else(
                || crate::names::short(&engine).to_owned(),
                |a| a.name.value.clone(),
            );
            (alias, columns)
        }
        TableFactor::Derived {
            subquery,
            alias: Some(alias),
            ..
        } => {
            let SetExpr::Select(select) = subquery.body.as_ref() else {
                return Err(unsupported("with a derived table that is a UNION"));
            };
            let columns = super::subquery::output_names(select, &alias.columns)
                .ok_or_else(|| unsupported("with this derived table"))?;
            (alias.name.value.clone(), columns)
        }
        _ => return Err(unsupported("with a parenthesized join")),
    };
    Ok(Entry {
        joined: vec![false; columns.len()],
        alias,
        columns,
    })
}

fn column(alias: &str, name: &str) -> Ast {
    Ast::CompoundIdentifier(vec![
        Ident::with_quote('`', alias),
        Ident::with_quote('`', name),
    ])
}

/// One SELECT's USING and NATURAL joins (and what they mean for its names and `*`).
fn rewrite_select(
    select: &mut ast::Select,
    order_by: Option<&mut ast::OrderBy>,
    columns_of: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Result<(), SqlError> {
    let here = (select.from.iter())
        .flat_map(|f| &f.joins)
        .any(|j| using_of(&j.join_operator).is_some());
    if !here {
        return Ok(());
    }
    // Every table of the FROM, and the coalesced columns: name and what it stands for.
    let mut entries: Vec<Entry> = Vec::new();
    let mut coalesced: Vec<(String, Ast)> = Vec::new();
    // `*`: per FROM item, its coalesced columns, then its tables' others.
    let mut star: Vec<SelectItem> = Vec::new();
    for from in &mut select.from {
        let start = entries.len();
        let mut item: Vec<(String, Ast)> = Vec::new();
        // The order of the item's tables in `*`: a RIGHT JOIN with USING puts its right
        // table first, as MySQL does.
        let mut order: Vec<usize> = vec![start];
        entries.push(entry_of(&from.relation, columns_of)?);
        for join in &mut from.joins {
            let right = entry_of(&join.relation, columns_of)?;
            let Some(constraint) = using_of(&join.join_operator) else {
                order.push(entries.len());
                entries.push(right);
                continue;
            };
            let names: Vec<String> = match constraint {
                JoinConstraint::Using(names) => (names.iter())
                    .map(|n| {
                        n.0.last()
                            .and_then(|p| p.as_ident())
                            .map(|i| i.value.clone())
                            .ok_or_else(|| unsupported("of this column"))
                    })
                    .collect::<Result<_, _>>()?,
                // Every column both sides have, in the left side's order.
                _ => {
                    let mut common: Vec<String> = item.iter().map(|(n, _)| n.clone()).collect();
                    for e in &entries[start..] {
                        for (c, joined) in e.columns.iter().zip(&e.joined) {
                            if !joined && !common.iter().any(|n| n.eq_ignore_ascii_case(c)) {
                                common.push(c.clone());
                            }
                        }
                    }
                    common.retain(|c| right.position(c).is_some());
                    common
                }
            };
            let right_side = matches!(
                join.join_operator,
                JoinOperator::Right(_) | JoinOperator::RightOuter(_)
            );
            let mut right = right;
            let mut conds = Vec::new();
            for name in &names {
                let unknown = || {
                    SqlError::new(
                        1054,
                        "42S22",
                        format!("Unknown column '{name}' in 'from clause'"),
                    )
                };
                // The left side's column: a coalesced one, or the one table's that has it.
                let left = match item.iter().position(|(n, _)| n.eq_ignore_ascii_case(name)) {
                    Some(i) => item[i].1.clone(),
                    None => {
                        let mut found = (start..entries.len()).filter_map(|e| {
                            let c = entries[e].position(name)?;
                            (!entries[e].joined[c]).then_some((e, c))
                        });
                        let (e, c) = found.next().ok_or_else(unknown)?;
                        if found.next().is_some() {
                            return Err(SqlError::new(
                                1052,
                                "23000",
                                format!("Column '{name}' in from clause is ambiguous"),
                            ));
                        }
                        entries[e].joined[c] = true;
                        column(&entries[e].alias, &entries[e].columns[c])
                    }
                };
                let r = right.position(name).ok_or_else(unknown)?;
                right.joined[r] = true;
                let right_column = column(&right.alias, &right.columns[r]);
                conds.push(Ast::BinaryOp {
                    left: Box::new(left.clone()),
                    op: ast::BinaryOperator::Eq,
                    right: Box::new(right_column.clone()),
                });
                let stands = if right_side { right_column } else { left };
                match item.iter().position(|(n, _)| n.eq_ignore_ascii_case(name)) {
                    Some(i) => item[i].1 = stands,
                    None => item.push((right.columns[r].clone(), stands)),
                }
            }
            let on = and_all(conds).unwrap_or(Ast::Value(ast::Value::Boolean(true).into()));
            let constraint = JoinConstraint::On(on);
            join.join_operator = match &join.join_operator {
                JoinOperator::Left(_) | JoinOperator::LeftOuter(_) => {
                    JoinOperator::Left(constraint)
                }
                JoinOperator::Right(_) | JoinOperator::RightOuter(_) => {
                    JoinOperator::Right(constraint)
                }
                JoinOperator::FullOuter(_) => JoinOperator::FullOuter(constraint),
                _ => JoinOperator::Join(constraint),
            };
            match right_side {
                true => order.insert(0, entries.len()),
                false => order.push(entries.len()),
            }
            entries.push(right);
        }
        star.extend(item.iter().map(|(name, e)| SelectItem::ExprWithAlias {
            expr: e.clone(),
            alias: Ident::with_quote('`', name),
        }));
        star.extend(order.iter().map(|&i| &entries[i]).flat_map(|e| {
            (e.columns.iter().zip(&e.joined))
                .filter(|(_, joined)| !**joined)
                .map(|(c, _)| SelectItem::UnnamedExpr(column(&e.alias, c)))
        }));
        coalesced.extend(item);
    }
    let aliases: Vec<String> = (select.projection.iter())
        .filter_map(|item| match item {
            SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.to_ascii_lowercase()),
            _ => None,
        })
        .collect();
    let mut names = Names {
        coalesced: &coalesced,
        skip: &[],
        depth: 0,
    };
    let mut projection = Vec::with_capacity(select.projection.len());
    for mut item in std::mem::take(&mut select.projection) {
        match item {
            SelectItem::Wildcard(_) => projection.extend(star.iter().cloned()),
            SelectItem::UnnamedExpr(Ast::Identifier(ref id))
                if coalesced
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case(&id.value)) =>
            {
                // Named as written.
                let alias = id.clone();
                let mut expr = Ast::Identifier(id.clone());
                let _ = walk::visit_mut(&mut expr, &mut names);
                projection.push(SelectItem::ExprWithAlias { expr, alias });
            }
            _ => {
                let _ = walk::visit_mut(&mut item, &mut names);
                projection.push(item);
            }
        }
    }
    select.projection = projection;
    for from in &mut select.from {
        for join in &mut from.joins {
            let _ = walk::visit_mut(&mut join.join_operator, &mut names);
        }
    }
    if let Some(e) = &mut select.selection {
        let _ = walk::visit_mut(e, &mut names);
    }
    // GROUP BY, HAVING and ORDER BY may name a select item's alias instead.
    names.skip = &aliases;
    let _ = walk::visit_mut(&mut select.group_by, &mut names);
    if let Some(e) = &mut select.having {
        let _ = walk::visit_mut(e, &mut names);
    }
    if let Some(ob) = order_by {
        let _ = walk::visit_mut(ob, &mut names);
    }
    Ok(())
}

/// Replaces the unqualified names of coalesced columns (not those in `skip`) by what they
/// stand for, outside subqueries.
struct Names<'a> {
    coalesced: &'a [(String, Ast)],
    skip: &'a [String],
    depth: usize,
}

impl VisitorMut for Names<'_> {
    type Break = ();
    fn pre_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
    fn pre_visit_expr(&mut self, e: &mut Ast) -> ControlFlow<()> {
        if self.depth == 0
            && let Ast::Identifier(id) = e
            && !self.skip.contains(&id.value.to_ascii_lowercase())
            && let Some((_, stands)) =
                (self.coalesced.iter()).find(|(n, _)| n.eq_ignore_ascii_case(&id.value))
        {
            *e = stands.clone();
        }
        ControlFlow::Continue(())
    }
}
