//! Correlated subqueries: a subquery that reads a column of the query block around it
//! (`WHERE EXISTS (SELECT 1 FROM o WHERE o.c_id = c.id)`), MySQL's DEPENDENT SUBQUERY, run
//! for each joined row of that block with the row's values in place of the references (two
//! levels deep too: a reference to the block two levels out is that block's value when the
//! middle one is run). The result of each distinct set of values is kept for the statement,
//! as MySQL's subquery cache keeps it.
//!
//! Such a subquery may stand in WHERE's conditions (joined by AND, at any depth in one of
//! them): the block is planned and read without those conditions, and they are checked on
//! each joined row before grouping and projection. It may stand in the select list of a
//! block: there each one becomes a column of a table of the block's
//! values, [`VALUES`], whose row the block's joined rows get after they are read and
//! filtered, so that projection, ORDER BY and DISTINCT read it as any column; in ORDER BY
//! and HAVING too. In a grouped block the values' columns join GROUP BY, and a subquery may
//! read only columns with one value per group (ONLY_FULL_GROUP_BY's 1055 and 1140
//! otherwise). In an inner join's ON it is checked as WHERE's are; in an outer join's ON,
//! which decides a match, it is refused with 1235. An
//! EXISTS or IN of WHERE that can become a semi-join does (`semi.rs`) unless
//! `optimizer_switch` says not to.

use std::collections::HashMap;
use std::ops::ControlFlow;

use sqlparser::ast::{self, Expr as Ast, Query, SetExpr, TableFactor, VisitorMut};
use std::sync::Arc;
use waterline_planner::BoundTable;
use waterline_planner::semijoin::{and_all, where_conjuncts};
use waterline_planner::value::truth;

use waterline_txn::{Column, Row, TableSchema, Transaction, Value};

use super::blocks::{Blocks, Kind};
use super::values::{column_type, constant};
use super::{contains_subquery, factors, own_exprs};
use crate::error::SqlError;
use crate::session::{Context, Response, ResultColumn};
use waterline_planner::walk;

/// The name of the table of the values of a block's correlated select-list subqueries
/// (not one a FROM can name: `*` leaves it out).
pub(crate) const VALUES: &str = "<subquery>";

/// A block's correlated subqueries outside WHERE, each a column of [`VALUES`].
pub(super) struct Items {
    /// The subqueries, `c0`, `c1`, ... in order.
    pub(super) exprs: Vec<Ast>,
    /// A grouped block's GROUP BY as written (empty for a block that aggregates without
    /// one): every column of the block a subquery reads must be one of them, so that its
    /// value is one per group.
    pub(super) group_by: Option<Vec<Ast>>,
    /// Each subquery's position in the select list (from 1; `None` in HAVING or ORDER BY),
    /// for ONLY_FULL_GROUP_BY's errors.
    positions: Vec<Option<usize>>,
    /// Whether `sql_mode` has ONLY_FULL_GROUP_BY: a column not grouped is its error
    /// (1055, 1140) rather than one waterline does not support.
    only_full_group_by: bool,
}

/// Replaces each correlated subquery in `q`'s select list, ORDER BY and HAVING by a column
/// of [`VALUES`] (`` `<subquery>`.`c0` ``, `c1`, ...), and returns them in that order. In a
/// block with GROUP BY, the columns join its GROUP BY (a subquery's value is one per
/// group: checked as the values are made); in one that aggregates without GROUP BY, a
/// subquery may read no column of the block outside an aggregate: ONLY_FULL_GROUP_BY's
/// 1140 (without that mode, 1235).
pub(super) fn take_items(q: &mut Query, only_full_group_by: bool) -> Result<Items, SqlError> {
    struct Take(Vec<Ast>);
    impl VisitorMut for Take {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &mut Ast) -> ControlFlow<()> {
            if super::subquery_of(e).is_some() {
                let taken = std::mem::replace(e, value_column(self.0.len()));
                self.0.push(taken);
            }
            ControlFlow::Continue(())
        }
    }
    let mut items = Items {
        exprs: Vec::new(),
        group_by: None,
        positions: Vec::new(),
        only_full_group_by,
    };
    let order_by = q.order_by.as_ref().is_some_and(contains_subquery);
    let SetExpr::Select(select) = q.body.as_mut() else {
        return Ok(items);
    };
    if !order_by
        && !select.projection.iter().any(contains_subquery)
        && !select.having.as_ref().is_some_and(contains_subquery)
    {
        return Ok(items);
    }
    let mut take = Take(Vec::new());
    for (i, item) in select.projection.iter_mut().enumerate() {
        let _ = walk::visit_mut(item, &mut take);
        items.positions.resize(take.0.len(), Some(i + 1));
    }
    if let Some(h) = &mut select.having {
        let _ = walk::visit_mut(h, &mut take);
    }
    if let Some(ob) = &mut q.order_by {
        let _ = walk::visit_mut(ob, &mut take);
    }
    items.positions.resize(take.0.len(), None);
    // Aggregates of the block itself (the subqueries' own are taken out by now).
    let aggregates = select.having.is_some()
        || select.projection.iter().any(|item| match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                waterline_planner::bind::contains_aggregate(e)
            }
            _ => false,
        });
    match &mut select.group_by {
        ast::GroupByExpr::Expressions(exprs, _) if !exprs.is_empty() => {
            items.group_by = Some(exprs.clone());
            exprs.extend((0..take.0.len()).map(value_column));
        }
        _ if aggregates && only_full_group_by => items.group_by = Some(Vec::new()),
        _ if aggregates => {
            return Err(SqlError::unsupported(
                "a correlated subquery in a query that aggregates without GROUP BY",
            ));
        }
        _ => {}
    }
    items.exprs = take.0;
    Ok(items)
}

/// Column `k` of [`VALUES`].
fn value_column(k: usize) -> Ast {
    Ast::CompoundIdentifier(vec![
        ast::Ident::with_quote('`', VALUES),
        ast::Ident::with_quote('`', format!("c{k}")),
    ])
}

/// `q` as the planner binds it: each [`VALUES`] column a NULL (the planner does not read
/// that table; the projection is bound again once its values are known).
pub(super) fn without_values(q: &Query) -> Query {
    let mut q = q.clone();
    let _ = walk::exprs_mut(&mut q, |e| {
        if let Ast::CompoundIdentifier(ids) = e
            && ids.first().is_some_and(|i| i.value == VALUES)
        {
            *e = Ast::Value(ast::Value::Null.into());
        }
        ControlFlow::<()>::Continue(())
    });
    q
}

/// Appends to each joined row of a block over `tables` the values of its correlated
/// select-list subqueries `items` (a row of [`VALUES`]); returns that table, its columns
/// typed as the subqueries' results are.
pub(super) fn item_values(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    st: &mut Blocks<'_>,
    (items, id): (&Items, usize),
    tables: &[BoundTable],
    rows: &mut [Vec<Row>],
) -> Result<BoundTable, SqlError> {
    // In a grouped block, the columns a subquery may read: GROUP BY's.
    let grouped: Option<Vec<(usize, usize)>> = items.group_by.as_ref().map(|exprs| {
        (exprs.iter())
            .filter_map(|e| column_at(s, tables, e))
            .collect()
    });
    if let Some(allowed) = &grouped {
        check_grouped(s, tables, items, allowed)?;
    }
    let items = &items.exprs;
    let explain = st.explain.take();
    let mut template = select_one();
    let mut known: HashMap<String, Value> = HashMap::new();
    let mut columns: Vec<Option<ResultColumn>> = vec![None; items.len()];
    let mut outcome = Ok(());
    'rows: for row in rows.iter_mut() {
        let mut values = Vec::with_capacity(items.len());
        for (k, item) in items.iter().enumerate() {
            let e = substitute(s, item, tables, &|t, c| {
                constant(row[t].get(c).unwrap_or(&Value::Null))
            });
            let key = e.to_string();
            let value = match known.get(&key) {
                Some(v) => v.clone(),
                None => {
                    if let SetExpr::Select(select) = template.body.as_mut() {
                        select.projection = vec![ast::SelectItem::UnnamedExpr(e)];
                    }
                    match (st.answer)(s, trx, st, &template, (id, Kind::Subquery), true) {
                        Ok(Some(Response::Rows { rows, columns: cs })) => {
                            if columns[k].is_none() {
                                columns[k] = cs.into_iter().next();
                            }
                            let v = rows.into_iter().next().and_then(|r| r.into_iter().next());
                            let v = v.unwrap_or(Value::Null);
                            known.insert(key, v.clone());
                            v
                        }
                        Ok(_) => Value::Null,
                        Err(e) => {
                            outcome = Err(e);
                            break 'rows;
                        }
                    }
                }
            };
            values.push(value);
        }
        row.push(values);
    }
    st.explain = explain;
    outcome?;
    let schema_columns = columns
        .iter()
        .enumerate()
        .map(|(k, column)| {
            let ty = match column {
                Some(c) => column_type(c, rows.iter().filter_map(|r| r.last()?.get(k))),
                None => waterline_txn::ColumnType::BigInt,
            };
            Column::nullable(format!("c{k}"), ty)
        })
        .collect();
    Ok(BoundTable {
        name: VALUES.to_owned(),
        alias: VALUES.to_owned(),
        schema: Arc::new(TableSchema::new(VALUES.to_owned(), schema_columns)),
    })
}

/// In a grouped block (grouped by the `allowed` columns of `tables`), that no subquery of
/// `items` reads a column of the block without one value per group: as ONLY_FULL_GROUP_BY
/// checks a select list, whatever the rows.
fn check_grouped(
    s: &Context<'_>,
    tables: &[BoundTable],
    items: &Items,
    allowed: &[(usize, usize)],
) -> Result<(), SqlError> {
    for (item, position) in items.exprs.iter().zip(&items.positions) {
        let read = std::cell::RefCell::new(Vec::new());
        substitute(s, item, tables, &|t, c| {
            read.borrow_mut().push((t, c));
            Ast::Value(ast::Value::Null.into())
        });
        let loose = (read.into_inner().into_iter())
            .find(|&tc| !crate::select::group_by::determined(tables, allowed, tc));
        match (loose, position) {
            (None, _) => {}
            (Some(tc), Some(n)) if items.only_full_group_by => {
                let without = items.group_by.as_ref().is_some_and(Vec::is_empty);
                return Err(crate::select::group_by::nonaggregated(
                    s, tables, tc, *n, without,
                ));
            }
            (Some(_), _) => {
                return Err(SqlError::unsupported(
                    "a correlated subquery in a grouped query that reads a column not in GROUP BY",
                ));
            }
        }
    }
    Ok(())
}

/// Takes out of `q`'s WHERE the conditions (conjuncts) with a subquery in them: after the
/// uncorrelated ones were run, those are the correlated ones. A subquery left anywhere
/// else in the block is refused.
pub(super) fn take_filters(q: &mut Query) -> Result<Vec<Ast>, SqlError> {
    let SetExpr::Select(select) = q.body.as_mut() else {
        return Ok(Vec::new());
    };
    let mut filters = Vec::new();
    if let Some(selection) = select.selection.take() {
        let mut keep = Vec::new();
        for c in where_conjuncts(&selection) {
            match contains_subquery(c) {
                true => filters.push(c.clone()),
                false => keep.push(c.clone()),
            }
        }
        select.selection = and_all(keep);
    }
    // An inner join's ON filters as WHERE does: its correlated conditions are checked on
    // the joined rows too (a LEFT JOIN's decide its match, which this cannot do).
    let right = |f: &ast::TableWithJoins| {
        (f.joins.iter()).any(|j| {
            matches!(
                j.join_operator,
                ast::JoinOperator::Right(_) | ast::JoinOperator::RightOuter(_)
            )
        })
    };
    // (Not before a RIGHT JOIN, whose match the inner joins on its left side decide.)
    let items = select.from.iter_mut().filter(|f| !right(f));
    for join in items.flat_map(|f| f.joins.iter_mut()) {
        if let ast::JoinOperator::Join(ast::JoinConstraint::On(on))
        | ast::JoinOperator::Inner(ast::JoinConstraint::On(on)) = &mut join.join_operator
            && contains_subquery(on)
        {
            let mut keep = Vec::new();
            for c in where_conjuncts(on) {
                match contains_subquery(c) {
                    true => filters.push(c.clone()),
                    false => keep.push(c.clone()),
                }
            }
            *on = and_all(keep).unwrap_or(Ast::Value(ast::Value::Boolean(true).into()));
        }
    }
    let on = (select.from.iter())
        .flat_map(|f| &f.joins)
        .any(|j| contains_subquery(&j.join_operator));
    if own_exprs(q).into_iter().any(contains_subquery) {
        return Err(SqlError::unsupported(match on {
            true => "a correlated subquery in an outer join's ON",
            false => "a correlated subquery outside the conditions of WHERE",
        }));
    }
    Ok(filters)
}

/// The joined `rows` of a block over `tables` for which every one of `filters` is true.
pub(super) fn filter_rows(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    st: &mut Blocks<'_>,
    (filters, id): (&[Ast], usize),
    tables: &[BoundTable],
    rows: Vec<Vec<Row>>,
) -> Result<Vec<Vec<Row>>, SqlError> {
    // The per-row queries are not the statement's blocks: EXPLAIN does not list them.
    let explain = st.explain.take();
    let mut template = select_one();
    let mut known: HashMap<String, bool> = HashMap::new();
    let mut kept = Vec::with_capacity(rows.len());
    let mut outcome = Ok(());
    'rows: for row in rows {
        for f in filters {
            let e = substitute(s, f, tables, &|t, c| {
                constant(row[t].get(c).unwrap_or(&Value::Null))
            });
            let key = e.to_string();
            let pass = match known.get(&key) {
                Some(&pass) => pass,
                None => {
                    if let SetExpr::Select(select) = template.body.as_mut() {
                        select.projection = vec![ast::SelectItem::UnnamedExpr(e)];
                    }
                    let answered = (st.answer)(s, trx, st, &template, (id, Kind::Subquery), true);
                    let pass = match answered {
                        Ok(Some(Response::Rows { rows, .. })) => {
                            rows.first().and_then(|r| r.first()).and_then(truth) == Some(true)
                        }
                        Ok(_) => false,
                        Err(e) => {
                            outcome = Err(e);
                            break 'rows;
                        }
                    };
                    known.insert(key, pass);
                    pass
                }
            };
            if !pass {
                continue 'rows;
            }
        }
        kept.push(row);
    }
    st.explain = explain;
    outcome.map(|()| kept)
}

/// `SELECT 1`, whose select list a filter replaces.
fn select_one() -> Query {
    let parsed =
        sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::MySqlDialect {}, "SELECT 1");
    match parsed.ok().and_then(|mut v| v.pop()) {
        Some(ast::Statement::Query(q)) => *q,
        _ => unreachable!("SELECT 1 parses"),
    }
}

/// `q` (a correlated subquery) with its references to the block's `tables` made `?`
/// placeholders: what EXPLAIN plans it as (a value known only per row).
pub(super) fn with_placeholders(s: &Context<'_>, q: &Query, tables: &[BoundTable]) -> Query {
    let mut q = q.clone();
    let mut visitor = Substitute {
        s,
        tables,
        value: &|_, _| Ast::Value(ast::Value::Placeholder("?".into()).into()),
        scopes: Vec::new(),
    };
    let _ = walk::visit_mut(&mut q, &mut visitor);
    q
}

/// `e` with each reference to a column of the block's `tables` (one no query inside `e`
/// has a table for) replaced by `value(table, column)`.
fn substitute(
    s: &Context<'_>,
    e: &Ast,
    tables: &[BoundTable],
    value: &dyn Fn(usize, usize) -> Ast,
) -> Ast {
    let mut e = e.clone();
    let mut visitor = Substitute {
        s,
        tables,
        value,
        scopes: Vec::new(),
    };
    let _ = walk::visit_mut(&mut e, &mut visitor);
    e
}

/// The column of the block's `tables` expression `e` names, if it is one.
fn column_at(s: &Context<'_>, tables: &[BoundTable], e: &Ast) -> Option<(usize, usize)> {
    let resolver = Substitute {
        s,
        tables,
        value: &|_, _| Ast::Value(ast::Value::Null.into()),
        scopes: Vec::new(),
    };
    match e {
        Ast::Identifier(id) => resolver.outer(None, &id.value),
        Ast::CompoundIdentifier(ids) if ids.len() == 2 => {
            resolver.outer(Some(&ids[0].value), &ids[1].value)
        }
        _ => None,
    }
}

/// A table of an inner query's FROM, as a name resolves against it: its name or alias, and
/// its columns (`None`: not known, so any name may be one).
type Scope = Vec<(String, Option<Vec<String>>)>;

struct Substitute<'a> {
    s: &'a Context<'a>,
    tables: &'a [BoundTable],
    value: &'a dyn Fn(usize, usize) -> Ast,
    /// The FROMs of the queries being visited, innermost last.
    scopes: Vec<Scope>,
}

impl Substitute<'_> {
    fn scope_of(&self, q: &Query) -> Scope {
        let SetExpr::Select(select) = q.body.as_ref() else {
            return Vec::new();
        };
        let (_, catalog) = self.s.tables();
        factors(select)
            .filter_map(|factor| match factor {
                TableFactor::Table { name, alias, .. } => {
                    let table = name.0.last()?.as_ident()?.value.clone();
                    let columns = catalog
                        .iter()
                        .find(|t| t.name().eq_ignore_ascii_case(&table))
                        .map(|t| t.schema().columns.iter().map(|c| c.name.clone()).collect());
                    Some((
                        alias.as_ref().map_or_else(
                            || crate::names::short(&table).to_owned(),
                            |a| a.name.value.clone(),
                        ),
                        columns,
                    ))
                }
                TableFactor::Derived {
                    subquery, alias, ..
                } => {
                    let alias = alias.as_ref()?;
                    let columns = if alias.columns.is_empty() {
                        output_names(subquery)
                    } else {
                        Some(alias.columns.iter().map(|c| c.name.value.clone()).collect())
                    };
                    Some((alias.name.value.clone(), columns))
                }
                _ => None,
            })
            .collect()
    }

    /// Whether an inner query has a table `qualifier` (or, without one, a column `name`).
    fn inner(&self, qualifier: Option<&str>, name: &str) -> bool {
        self.scopes
            .iter()
            .flatten()
            .any(|(table, columns)| match qualifier {
                Some(q) => table.eq_ignore_ascii_case(q),
                None => columns
                    .as_ref()
                    .is_none_or(|cs| cs.iter().any(|c| c.eq_ignore_ascii_case(name))),
            })
    }

    /// The block's column a name is, if exactly one.
    fn outer(&self, qualifier: Option<&str>, name: &str) -> Option<(usize, usize)> {
        let mut found = self.tables.iter().enumerate().filter_map(|(t, table)| {
            if qualifier.is_some_and(|q| !table.alias.eq_ignore_ascii_case(q)) {
                return None;
            }
            let c = table
                .schema
                .columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(name))?;
            Some((t, c))
        });
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }
}

/// The names of a query's result columns, if its select list says them all.
fn output_names(q: &Query) -> Option<Vec<String>> {
    let SetExpr::Select(select) = q.body.as_ref() else {
        return None;
    };
    select
        .projection
        .iter()
        .map(|item| match item {
            ast::SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.clone()),
            ast::SelectItem::UnnamedExpr(Ast::Identifier(id)) => Some(id.value.clone()),
            ast::SelectItem::UnnamedExpr(Ast::CompoundIdentifier(ids)) => {
                ids.last().map(|i| i.value.clone())
            }
            ast::SelectItem::UnnamedExpr(e) => Some(e.to_string()),
            _ => None,
        })
        .collect()
}

impl VisitorMut for Substitute<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        let scope = self.scope_of(q);
        self.scopes.push(scope);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.scopes.pop();
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Ast) -> ControlFlow<()> {
        let (qualifier, name) = match &*e {
            Ast::Identifier(id) => (None, id.value.as_str()),
            Ast::CompoundIdentifier(ids) if ids.len() == 2 => {
                (Some(ids[0].value.as_str()), ids[1].value.as_str())
            }
            _ => return ControlFlow::Continue(()),
        };
        if !self.inner(qualifier, name)
            && let Some((t, c)) = self.outer(qualifier, name)
        {
            *e = (self.value)(t, c);
        }
        ControlFlow::Continue(())
    }
}
