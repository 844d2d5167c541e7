//! Subqueries: `x [NOT] IN (SELECT ...)`, `[NOT] EXISTS (SELECT ...)`, and scalar and row
//! subqueries `(SELECT ...)`, in the select list, WHERE, HAVING and ORDER BY of a SELECT;
//! derived tables, `FROM (SELECT ...) AS d`, materialized (MySQL merges the simple ones into
//! the outer query; the rows are the same); and CTEs (`cte.rs`), read as derived tables.
//!
//! Each SELECT is a query block of its own (`block.rs`), numbered and named in EXPLAIN as
//! MySQL numbers and names the blocks it does not merge or transform (`PRIMARY`,
//! `SUBQUERY`, `DEPENDENT SUBQUERY`, `DERIVED`, `<derivedN>`). `block.rs` is the only file
//! that answers blocks; what runs inside one (`resolve.rs`, `correlated.rs`, `semi.rs`)
//! answers the blocks inside it through the statement's `Blocks` (`blocks.rs`).
//!
//! An `EXISTS` or `IN` subquery that is one of WHERE's conditions (or its negation) may
//! instead become a semi-join (an anti-join) of the block: its tables join the block's, read
//! after the outer tables it names, and an outer row goes on at its first match (MySQL's
//! FirstMatch). Or an `IN` runs once and its distinct rows become a table `<subqueryN>` the
//! block joins (MySQL's semi-join materialization, `materialization.rs`). `semi.rs` chooses
//! by cost.
//!
//! A subquery that does not refer to the query around it runs once per execution, innermost
//! first, in the statement's transaction (so in its read view), before the query around it
//! is planned, and its result takes its place as constants: an IN subquery becomes the list
//! of its rows (MySQL's subquery materialization: the rows once, then a lookup per outer
//! row, here a sorted list), EXISTS a truth value, a scalar subquery its value. The block is
//! then bound and planned as one without subqueries, so the range optimizer sees the
//! constants. NULLs keep MySQL's meaning: `x IN` an empty subquery is false and `NOT IN` true
//! even for a NULL `x`, and a NULL among the rows makes a `NOT IN` that finds no match NULL.
//! A correlated subquery that is not flattened runs per row of the block around it
//! (`correlated.rs`).
//!
//! A derived table is merged into the query around it where MySQL would merge it
//! (`merge.rs`, `joined.rs`); any other runs once per execution, after the subqueries in it, and its rows
//! become a table of its alias's name that the outer query reads whole (it has no index),
//! its columns typed as the rows' result columns are.
//!
//! Subqueries in UPDATE and DELETE run first, as constants, or make the statement a query
//! of the rows to change if correlated (`dml.rs`); INSERT ... SELECT's
//! query is read as any query with subqueries is ([`read_in`]).
//!
//! A correlated subquery in a grouped block may read only columns with one value per
//! group (ONLY_FULL_GROUP_BY's 1055 and 1140 otherwise, as in MySQL).
//!
//! Not built yet (refused with 1235): a correlated subquery in an outer join's ON, or, without
//! ONLY_FULL_GROUP_BY, one in a grouped block reading a column not grouped; LATERAL; a
//! UNION inside a subquery that reads the query around it, or with its own ORDER BY or
//! LIMIT (one that does not runs once, each SELECT a block of its own, as a derived table
//! that is a UNION does). A derived table beside a RIGHT JOIN is
//! materialized rather than merged. Of MySQL's semi-join strategies FirstMatch and
//! materialization are built, not LooseScan or DuplicateWeedout: a correlated subquery
//! FirstMatch may not serve runs per row instead.

use std::collections::HashSet;
use std::ops::ControlFlow;

use sqlparser::ast::{self, Expr as Ast, SetExpr, Statement, TableFactor};
use waterline_txn::{Column, LockMode, TableSchema, Transaction, Value};

mod block;
mod blocks;
mod correlated;
pub(crate) mod dml;
mod joined;
mod materialization;
mod merge;
pub(crate) use merge::output_names;
mod resolve;
mod semi;
mod values;

use block::{answer, context};
use blocks::{Explaining, Kind};
use values::{column_type, constant, table_named};

use super::{Explained, Format, select_of};
use crate::access::Derived;
use crate::error::SqlError;
use crate::session::{Bound, Context, Response, ResultColumn};
use waterline_planner::walk;

/// The table factors of `select`'s FROM: each item's first table and those it joins, and
/// the tables inside a parenthesized join rather than the join.
fn factors_mut(select: &mut ast::Select) -> impl Iterator<Item = &mut TableFactor> {
    fn leaves<'a>(from: &'a mut ast::TableWithJoins, out: &mut Vec<&'a mut TableFactor>) {
        let relations = std::iter::once(&mut from.relation)
            .chain(from.joins.iter_mut().map(|j| &mut j.relation));
        for relation in relations {
            match relation {
                TableFactor::NestedJoin {
                    table_with_joins, ..
                } => leaves(table_with_joins, out),
                other => out.push(other),
            }
        }
    }
    let mut out = Vec::new();
    select
        .from
        .iter_mut()
        .for_each(|from| leaves(from, &mut out));
    out.into_iter()
}

/// [`factors_mut`], to read.
fn factors(select: &ast::Select) -> impl Iterator<Item = &TableFactor> {
    fn leaves<'a>(from: &'a ast::TableWithJoins, out: &mut Vec<&'a TableFactor>) {
        for relation in
            std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation))
        {
            match relation {
                TableFactor::NestedJoin {
                    table_with_joins, ..
                } => leaves(table_with_joins, out),
                other => out.push(other),
            }
        }
    }
    let mut out = Vec::new();
    select.from.iter().for_each(|from| leaves(from, &mut out));
    out.into_iter()
}

/// The query of subquery expression `e`, if it is one.
fn subquery_of(e: &Ast) -> Option<&ast::Query> {
    match e {
        Ast::InSubquery { subquery, .. }
        | Ast::Exists { subquery, .. }
        | Ast::Subquery(subquery) => Some(subquery),
        _ => None,
    }
}

/// Whether `node` has a subquery expression anywhere in it.
fn contains_subquery(node: &impl ast::Visit) -> bool {
    walk::exprs(node, |e| match subquery_of(e) {
        Some(_) => ControlFlow::Break(()),
        None => ControlFlow::Continue(()),
    })
    .is_break()
}

/// Query block `q`'s own expressions: its select list, WHERE, ONs, GROUP BY, HAVING and
/// ORDER BY (not those of the derived tables in its FROM).
fn own_exprs(q: &ast::Query) -> Vec<&Ast> {
    let SetExpr::Select(select) = q.body.as_ref() else {
        return Vec::new();
    };
    let mut exprs: Vec<&Ast> = select
        .projection
        .iter()
        .filter_map(|item| match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                Some(e)
            }
            _ => None,
        })
        .collect();
    exprs.extend(select.selection.iter());
    exprs.extend(select.having.iter());
    for join in select.from.iter().flat_map(|f| &f.joins) {
        if let ast::JoinOperator::Join(ast::JoinConstraint::On(e))
        | ast::JoinOperator::Inner(ast::JoinConstraint::On(e))
        | ast::JoinOperator::Left(ast::JoinConstraint::On(e))
        | ast::JoinOperator::LeftOuter(ast::JoinConstraint::On(e))
        | ast::JoinOperator::Right(ast::JoinConstraint::On(e))
        | ast::JoinOperator::RightOuter(ast::JoinConstraint::On(e)) = &join.join_operator
        {
            exprs.push(e);
        }
    }
    if let ast::GroupByExpr::Expressions(group, _) = &select.group_by {
        exprs.extend(group.iter());
    }
    if let Some(ast::OrderBy {
        kind: ast::OrderByKind::Expressions(items),
        ..
    }) = &q.order_by
    {
        exprs.extend(items.iter().map(|o| &o.expr));
    }
    exprs
}

/// Whether `q` has a subquery in an expression anywhere, a derived table in its FROM, or a
/// WITH clause.
pub(crate) fn has_subquery(q: &ast::Query) -> bool {
    if super::cte::has_with(q) {
        return true;
    }
    if let SetExpr::Select(select) = q.body.as_ref()
        && factors(select).any(|t| matches!(t, TableFactor::Derived { .. }))
    {
        return true;
    }
    contains_subquery(q)
}

/// A query with subqueries: bound anew at every execution, once its subqueries have run.
#[derive(Debug)]
pub(crate) struct WithSubqueries;

impl Bound for WithSubqueries {
    fn volatile(&self) -> bool {
        true
    }

    fn run(
        &self,
        s: &mut Context<'_>,
        statement: &Statement,
        params: &[Value],
    ) -> Result<Response, SqlError> {
        run(s, super::query_of(statement)?, params)
    }
}

fn run(s: &mut Context<'_>, q: &ast::Query, params: &[Value]) -> Result<Response, SqlError> {
    let lock = s.serializable_read().then_some(LockMode::Shared);
    let mut answered = s.with_trx(|s, trx| read_in(s, trx, q, params, lock))?;
    if let Response::Rows { columns, .. } = &mut answered {
        name_as_written(q, columns);
    }
    Ok(answered)
}

/// What query `q` (with subqueries, derived tables or CTEs) returns for `params`, read in
/// `trx`, in `lock`'s mode if any: a statement's query (a SELECT, INSERT ... SELECT's).
pub(crate) fn read_in(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    q: &ast::Query,
    params: &[Value],
    lock: Option<LockMode>,
) -> Result<Response, SqlError> {
    let db = Some(s.catalog_database().to_string());
    // Placeholders first, in the order of the text, before a CTE's query is copied to where
    // it is read.
    let inlined = super::cte::inline(&with_params(q, params)?)?;
    let mut st = context(lock, db.as_deref(), names_in_from(&inlined), None);
    answer(s, trx, &mut st, &inlined, (1, Kind::Top), true)?
        .ok_or_else(|| SqlError::other("a query that returned nothing"))
}

/// EXPLAIN of a query with subqueries: a row per table of each of its blocks, by block
/// number, or the tree of each block with the blocks in it under it. The subqueries run (in
/// the session's transaction), as the blocks around them are planned with what they return.
pub(crate) fn explain(
    s: &mut Context<'_>,
    q: &ast::Query,
    params: &[Value],
    format: Format,
) -> Result<Response, SqlError> {
    let db = s.catalog_database();
    let inlined = super::cte::inline(&with_params(q, params)?)?;
    let explaining = s.with_trx(|s, trx| {
        let mut st = context(
            None,
            Some(&db),
            names_in_from(&inlined),
            Some(Explaining::new(format)),
        );
        answer(s, trx, &mut st, &inlined, (1, Kind::Top), false)?;
        st.explain
            .ok_or_else(|| SqlError::other("an EXPLAIN that explained nothing"))
    })?;
    let explained = match format {
        Format::Table => {
            let mut rows = explaining.rows;
            // By block; a UNION RESULT row (no id) after the last block of its UNION.
            rows.sort_by_key(|r| match r.values[0].as_deref() {
                Some(id) => (id.parse::<usize>().unwrap_or_default(), false),
                None => {
                    let table = r.values[2].as_deref().unwrap_or_default();
                    let last = table.trim_end_matches('>').rsplit([',', 'n']).next();
                    (last.and_then(|n| n.parse().ok()).unwrap_or_default(), true)
                }
            });
            Explained::Rows(rows)
        }
        Format::Tree => Explained::Tree(explaining.tree(1)),
    };
    Ok(super::explain::response(explained))
}

/// `q` (a query or a statement) with its placeholders replaced by `params`, in the order
/// of the text.
fn with_params<T: ast::VisitMut + Clone>(q: &T, params: &[Value]) -> Result<T, SqlError> {
    let mut q = q.clone();
    let mut params = params.iter();
    let mut missing = false;
    let _ = walk::exprs_mut(&mut q, |e| {
        if let Ast::Value(v) = &*e
            && matches!(v.value, ast::Value::Placeholder(_))
        {
            match params.next() {
                Some(p) => *e = constant(p),
                None => {
                    missing = true;
                    return ControlFlow::Break(());
                }
            }
        }
        ControlFlow::Continue(())
    });
    if missing {
        return Err(SqlError::new(
            1210,
            "HY000",
            "Incorrect arguments to EXECUTE",
        ));
    }
    Ok(q)
}

/// Names each of `columns` that an expression of `q`'s select list makes by the
/// expression's text, as MySQL names it (`(SELECT MAX(x) FROM t)`, `?`), not by the
/// constant that replaced it.
fn name_as_written(q: &ast::Query, columns: &mut [ResultColumn]) {
    let Ok(select) = select_of(q) else { return };
    if columns.len() != select.projection.len() {
        return;
    }
    for (column, item) in columns.iter_mut().zip(&select.projection) {
        match item {
            ast::SelectItem::UnnamedExpr(Ast::Value(v))
                if !matches!(v.value, ast::Value::Placeholder(_)) => {}
            ast::SelectItem::UnnamedExpr(Ast::Identifier(_) | Ast::CompoundIdentifier(_)) => {}
            ast::SelectItem::UnnamedExpr(e) => column.name = e.to_string().into(),
            _ => {}
        }
    }
}

/// The table names and aliases of every FROM in `q` (lower case).
fn names_in_from(q: &ast::Query) -> HashSet<String> {
    let mut names = HashSet::new();
    let _ = walk::relations(q, |name| {
        if let Some(last) = name.0.last().and_then(|p| p.as_ident()) {
            names.insert(crate::names::short(&last.value).to_ascii_lowercase());
        }
        ControlFlow::<()>::Continue(())
    });
    let mut aliases = Vec::new();
    collect_aliases(q, &mut aliases);
    names.extend(aliases);
    names
}

fn collect_aliases(q: &ast::Query, out: &mut Vec<String>) {
    if let SetExpr::Select(select) = q.body.as_ref() {
        for factor in factors(select) {
            if let TableFactor::Table { alias: Some(a), .. } = factor {
                out.push(a.name.value.to_ascii_lowercase());
            }
        }
    }
}

/// Whether the unknown column of a 1054 `message` ("Unknown column 'x.y' in ...") names a
/// table of the statement, or a column one of them has: the subquery refers outside itself.
fn refers_outside(message: &str, outer: &HashSet<String>, s: &Context<'_>) -> bool {
    let Some(name) = message.split('\'').nth(1) else {
        return false;
    };
    match name.rsplit_once('.') {
        Some((qualifier, _)) => outer.contains(&qualifier.to_ascii_lowercase()),
        None => {
            let (_, tables) = s.tables();
            tables.iter().any(|t| {
                outer.contains(&t.name().to_ascii_lowercase())
                    && t.schema()
                        .columns
                        .iter()
                        .any(|c| c.name.eq_ignore_ascii_case(name))
            })
        }
    }
}

/// The columns a query with subqueries returns (COM_STMT_PREPARE), without running it:
/// those of the query with each expression subquery as NULL and each derived table as an
/// empty table of the columns its query describes, named as the query names them.
pub(crate) fn describe(s: &mut Context<'_>, q: &ast::Query) -> Result<Vec<ResultColumn>, SqlError> {
    let mut stripped = super::cte::inline(q)?;
    let _ = walk::exprs_mut(&mut stripped, |e| {
        if matches!(
            e,
            Ast::InSubquery { .. } | Ast::Subquery(_) | Ast::Exists { .. }
        ) {
            *e = Ast::Value(ast::Value::Null.into());
        }
        ControlFlow::<()>::Continue(())
    });
    let mut derived = Derived::default();
    if let SetExpr::Select(select) = stripped.body.as_mut() {
        for factor in factors_mut(select) {
            let TableFactor::Derived {
                subquery, alias, ..
            } = factor
            else {
                continue;
            };
            let Some(alias) = alias.clone() else {
                continue;
            };
            let columns = match super::union::is_union(subquery) {
                true => super::union::describe(s, subquery)?,
                false => describe(s, subquery)?,
            };
            let names: Vec<String> = if alias.columns.len() == columns.len() {
                alias.columns.iter().map(|c| c.name.value.clone()).collect()
            } else {
                columns.iter().map(|c| c.name.to_string()).collect()
            };
            let schema = TableSchema::new(
                alias.name.value.clone(),
                names
                    .into_iter()
                    .zip(&columns)
                    .map(|(name, c)| Column::nullable(name, column_type(c, std::iter::empty())))
                    .collect(),
            );
            derived.add(alias.name.value.clone(), schema, Vec::new());
            *factor = table_named(&alias.name);
        }
    }
    let mut columns = super::describe_in(s, &stripped, Some(&derived))?;
    name_as_written(q, &mut columns);
    Ok(columns)
}
