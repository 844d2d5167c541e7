//! Common table expressions: `WITH name [(columns)] AS (SELECT ...) [, ...] SELECT ...`,
//! non-recursive. Each reference to a CTE in a FROM becomes a derived table of the CTE's
//! query, aliased as the reference is (or by the CTE's name), so it is run and read as
//! `subquery.rs` runs a derived table. A CTE sees the CTEs before it in its WITH and those of
//! the queries around it; an inner WITH's name hides an outer one; a name qualified by a
//! database is a table, never a CTE; and inside its own query a CTE's name is the table of
//! that name, as MySQL reads a non-recursive WITH.
//!
//! MySQL materializes a CTE once however often the query reads it; here each reference runs
//! the query, in the statement's read view, so the rows are the same. `WITH RECURSIVE` is
//! refused.

use std::ops::ControlFlow;

use sqlparser::ast::{self, Query, TableAlias, TableFactor, VisitorMut};

use crate::error::SqlError;
use waterline_planner::walk;

/// Whether `q` or a query in it has a WITH clause.
pub(crate) fn has_with(q: &Query) -> bool {
    struct Finder;
    impl ast::Visitor for Finder {
        type Break = ();
        fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
            if q.with.is_some() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
    }
    walk::visit(q, &mut Finder).is_break()
}

/// `q` with every WITH clause in it gone, each reference to a CTE replaced by a derived
/// table of its query.
pub(crate) fn inline(q: &Query) -> Result<Query, SqlError> {
    let mut q = q.clone();
    if !has_with(&q) {
        return Ok(q);
    }
    let mut names = Names::default();
    if let ControlFlow::Break(e) = walk::visit_mut(&mut q, &mut names) {
        return Err(e);
    }
    let _ = walk::visit_mut(
        &mut q,
        &mut Expand {
            bodies: &names.bodies,
        },
    );
    Ok(q)
}

/// The table name a reference to CTE number `n` carries between the two passes: no
/// identifier of SQL text can hold it.
fn marker(n: usize) -> String {
    format!("\u{0}cte{n}")
}

/// A CTE's query (its own references already markers) and its column names.
struct Body {
    query: Box<Query>,
    columns: Vec<ast::TableAliasColumnDef>,
}

/// The first pass: takes each WITH out of its query and turns each reference to one of its
/// CTEs into a marker, by scope.
#[derive(Default)]
struct Names {
    /// The CTEs in scope, innermost WITH last: name and body number.
    scopes: Vec<Vec<(String, usize)>>,
    /// Per query being visited, whether it opened a scope.
    opened: Vec<bool>,
    bodies: Vec<Body>,
}

impl Names {
    fn find(&self, name: &str) -> Option<usize> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, b)| *b)
    }
}

impl VisitorMut for Names {
    type Break = SqlError;

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<SqlError> {
        let Some(with) = q.with.take() else {
            self.opened.push(false);
            return ControlFlow::Continue(());
        };
        if with.recursive {
            return ControlFlow::Break(SqlError::unsupported("WITH RECURSIVE"));
        }
        self.scopes.push(Vec::new());
        self.opened.push(true);
        for cte in with.cte_tables {
            let name = cte.alias.name.value.clone();
            let scope = self.scopes.last().map(Vec::as_slice).unwrap_or_default();
            if scope.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name)) {
                return ControlFlow::Break(SqlError::new(
                    1066,
                    "42000",
                    format!("Not unique table/alias: '{name}'"),
                ));
            }
            let mut query = cte.query;
            walk::visit_mut(&mut query, self)?;
            self.bodies.push(Body {
                query,
                columns: cte.alias.columns,
            });
            let n = self.bodies.len() - 1;
            if let Some(scope) = self.scopes.last_mut() {
                scope.push((name, n));
            }
        }
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<SqlError> {
        if self.opened.pop() == Some(true) {
            self.scopes.pop();
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<SqlError> {
        if let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = factor
            && let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice()
            && let Some(n) = self.find(&id.value)
        {
            let alias = alias.get_or_insert_with(|| TableAlias {
                explicit: false,
                name: id.clone(),
                columns: Vec::new(),
                at: None,
            });
            if alias.columns.is_empty() {
                alias.columns = self.bodies[n].columns.clone();
            }
            *name = ast::ObjectName::from(vec![ast::Ident::new(marker(n))]);
        }
        ControlFlow::Continue(())
    }
}

/// The second pass: each marker becomes a derived table of its CTE's query (whose own
/// markers the visit then reaches).
struct Expand<'a> {
    bodies: &'a [Body],
}

impl VisitorMut for Expand<'_> {
    type Break = ();

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { name, alias, .. } = factor
            && let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice()
            && let Some(n) = (0..self.bodies.len()).find(|&n| id.value == marker(n))
        {
            *factor = TableFactor::Derived {
                lateral: false,
                subquery: self.bodies[n].query.clone(),
                alias: alias.take(),
                sample: None,
            };
        }
        ControlFlow::Continue(())
    }
}
