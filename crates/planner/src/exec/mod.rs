//! The executor. A query's rows go through these steps, one file each, in this order:
//!
//! | step | file | what it does |
//! |---|---|---|
//! | read | `read.rs` | each table's access path (const, eq_ref, ref, range, index, ALL) over a [`Storage`] |
//! | filter, join | `join.rs` | each table's conditions; nested loops in the plan's order, or a hash table |
//! | group | `group.rs` | GROUP BY's groups in the order they come |
//! | aggregate | `aggregate.rs` | COUNT, SUM, MIN, MAX, AVG (DISTINCT) over each group |
//! | project | `project.rs` | the select list, per row or per group |
//! | sort | `sort.rs` | ORDER BY the index does not give ("Using filesort") |
//! | limit | `limit.rs` | DISTINCT, OFFSET, LIMIT |
//!
//! [`execute_first`] does the first two: what UPDATE and DELETE need, and what the planner's
//! tests compare with a plan's estimates. [`Output::finish`] does the rest, for a SELECT.
//! `waterline-sql` binds a select list into an [`Output`] and names the result's columns;
//! it runs no step of its own.

mod aggregate;
mod group;
mod join;
mod limit;
mod project;
mod read;
mod sort;

use smallvec::SmallVec;
use waterline_types::{Row, Value};

use crate::PlanError;
use crate::expr::{Env, Expr};

pub use aggregate::{Agg, AggFunc};
pub use join::{Execution, execute, execute_first};
pub use project::SelectExpr;
pub use read::Storage;
pub use sort::SortKey;

/// A SELECT's steps after the join, bound: its select list, GROUP BY, aggregates, ORDER BY
/// and DISTINCT.
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// The select list, one expression per output column.
    pub exprs: Vec<SelectExpr>,
    /// GROUP BY's expressions.
    pub group_by: Vec<Expr>,
    /// The aggregates the select list calls ([`SelectExpr::Agg`] numbers them).
    pub aggs: Vec<Agg>,
    /// ORDER BY's keys, each with `true` for DESC; empty when the plan's order is the query's
    /// or there is no ORDER BY.
    pub sort: Vec<(SortKey, bool)>,
    /// SELECT DISTINCT.
    pub distinct: bool,
}

impl Output {
    /// The output rows of the joined `rows`: grouped, aggregated, projected, sorted, and
    /// cut to `(limit, offset)`.
    pub fn finish(
        &self,
        rows: Vec<Vec<Row>>,
        params: &[Value],
        window: (Option<usize>, usize),
    ) -> Result<Vec<Vec<Value>>, PlanError> {
        let keys = |row: Option<&&Vec<Row>>| sort::source_keys(&self.sort, row, params);
        // Each output row, with the source values its ORDER BY keys read.
        let mut out: Vec<sort::Keyed> = Vec::new();
        if !self.group_by.is_empty() || !self.aggs.is_empty() {
            for members in group::group(&self.group_by, !self.aggs.is_empty(), &rows, params)? {
                let aggs = aggregate::aggregate(&self.aggs, &members, params)?;
                let row = self.project(&members, &aggs, params)?;
                out.push((row, keys(members.first())?));
            }
        } else {
            out.reserve(rows.len());
            for row in &rows {
                let one = [row];
                out.push((self.project(&one, &[], params)?, keys(Some(&row))?));
            }
        }
        sort::sort(&mut out, &self.sort);
        let rows = out.into_iter().map(|(r, _)| r).collect();
        Ok(limit::window(rows, self.distinct, window))
    }

    fn project(
        &self,
        rows: &[&Vec<Row>],
        aggs: &[Value],
        params: &[Value],
    ) -> Result<Vec<Value>, PlanError> {
        self.exprs
            .iter()
            .map(|e| e.eval(rows, aggs, params))
            .collect()
    }
}

/// A joined row as expressions read it, one slot per table: on the stack up to four tables.
fn slots(row: &[Row]) -> SmallVec<[Option<&Row>; 4]> {
    row.iter().map(Some).collect()
}

fn env<'r>(slots: &'r [Option<&'r Row>], params: &'r [Value]) -> Env<'r> {
    Env {
        rows: slots,
        params,
    }
}
