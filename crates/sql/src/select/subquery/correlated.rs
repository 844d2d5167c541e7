//! Correlated subqueries: a subquery that reads a column of the query block around it
//! (`WHERE EXISTS (SELECT 1 FROM o WHERE o.c_id = c.id)`), MySQL's DEPENDENT SUBQUERY, run
//! for each joined row of that block with the row's values in place of the references (two
//! levels deep too: a reference to the block two levels out is that block's value when the
//! middle one is run). The result of each distinct set of values is kept for the statement,
//! as MySQL's subquery cache keeps it.
//!
//! Such a subquery may stand in WHERE's conditions (joined by AND, at any depth in one of
//! them): the block is planned and read without those conditions, and they are checked on
//! each joined row before grouping and projection. Elsewhere (the select list, HAVING, ON,
//! ORDER BY) it is refused with 1235. An EXISTS or IN that can become a semi-join does
//! (`semi.rs`) unless `optimizer_switch` says not to.

use std::collections::HashMap;
use std::ops::ControlFlow;

use sqlparser::ast::{self, Expr as Ast, Query, SetExpr, TableFactor, VisitMut, VisitorMut};
use waterline_planner::BoundTable;
use waterline_planner::semijoin::{and_all, where_conjuncts};
use waterline_planner::value::truth;
use waterline_txn::{Row, Transaction, Value};

use super::block::{Context, Kind, answer};
use super::values::constant;
use super::{contains_subquery, factors, own_exprs};
use crate::error::SqlError;
use crate::session::{Response, Session};

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
    if own_exprs(q).into_iter().any(contains_subquery) {
        return Err(SqlError::unsupported(
            "a correlated subquery outside the conditions of WHERE",
        ));
    }
    Ok(filters)
}

/// The joined `rows` of a block over `tables` for which every one of `filters` is true.
pub(super) fn filter_rows(
    s: &mut Session,
    trx: &mut Transaction,
    st: &mut Context<'_>,
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
                    let answered = answer(s, trx, st, &template, (id, Kind::Subquery), true);
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
pub(super) fn with_placeholders(s: &Session, q: &Query, tables: &[BoundTable]) -> Query {
    let mut q = q.clone();
    let mut visitor = Substitute {
        s,
        tables,
        value: &|_, _| Ast::Value(ast::Value::Placeholder("?".into()).into()),
        scopes: Vec::new(),
    };
    let _ = q.visit(&mut visitor);
    q
}

/// `e` with each reference to a column of the block's `tables` (one no query inside `e`
/// has a table for) replaced by `value(table, column)`.
fn substitute(
    s: &Session,
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
    let _ = e.visit(&mut visitor);
    e
}

/// A table of an inner query's FROM, as a name resolves against it: its name or alias, and
/// its columns (`None`: not known, so any name may be one).
type Scope = Vec<(String, Option<Vec<String>>)>;

struct Substitute<'a> {
    s: &'a Session,
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
                        alias.as_ref().map_or(table, |a| a.name.value.clone()),
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
