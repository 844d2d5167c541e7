//! The executor. A query's rows go through these steps, one file each, in this order:
//!
//! | step | file | what it does |
//! |---|---|---|
//! | read | `read.rs` | each table's access path (const, eq_ref, ref, range, index, ALL) over a [`Storage`] |
//! | filter, join | `join.rs` | each table's conditions; nested loops in the plan's order, or a hash table |
//! | group | `group.rs` | GROUP BY's groups in the order they come |
//! | aggregate | `aggregate.rs` | COUNT, SUM, MIN, MAX, AVG (DISTINCT) over each group |
//! | having | `having.rs` | HAVING's condition, per group (or per row, without grouping) |
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
mod having;
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
pub use read::Storage;
pub use sort::{SortKey, compare_for_sort};

/// A SELECT's steps after the join, bound: its select list, GROUP BY, aggregates, HAVING,
/// ORDER BY and DISTINCT.
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// The select list, one expression per output column; in a grouped query its
    /// [`Expr::Agg`]s read the group's aggregates, and its columns the group's first row.
    pub exprs: Vec<Expr>,
    /// GROUP BY's expressions.
    pub group_by: Vec<Expr>,
    /// The aggregates the select list, HAVING and ORDER BY call ([`Expr::Agg`] numbers
    /// them).
    pub aggs: Vec<Agg>,
    /// HAVING's condition.
    pub having: Option<Expr>,
    /// ORDER BY's keys, each with `true` for DESC; empty when the plan's order is the query's
    /// or there is no ORDER BY.
    pub sort: Vec<(SortKey, bool)>,
    /// SELECT DISTINCT.
    pub distinct: bool,
}

impl Output {
    /// The output rows of the joined `rows`: grouped, aggregated, filtered by HAVING,
    /// projected, sorted, and cut to `(limit, offset)`.
    pub fn finish(
        &self,
        rows: Vec<Vec<Row>>,
        params: &[Value],
        window: (Option<usize>, usize),
    ) -> Result<Vec<Vec<Value>>, PlanError> {
        // Each output row, with the values its ORDER BY expressions read.
        let mut out: Vec<sort::Keyed> = Vec::new();
        let emit = |out: &mut Vec<sort::Keyed>, env: Env<'_>| -> Result<(), PlanError> {
            if having::keeps(self.having.as_ref(), env)? {
                out.push((
                    project::project(&self.exprs, env)?,
                    sort::source_keys(&self.sort, env)?,
                ));
            }
            Ok(())
        };
        if !self.group_by.is_empty() || !self.aggs.is_empty() {
            for members in group::group(&self.group_by, !self.aggs.is_empty(), &rows, params)? {
                let aggs = aggregate::aggregate(&self.aggs, &members, params)?;
                // The group's scalars read its first row; a group of no rows (aggregates over
                // nothing) reads NULL for every column.
                let slots = match members.first() {
                    Some(row) => slots(row),
                    None => smallvec::smallvec![Some(&NO_ROW); crate::table_map::MAX_TABLES],
                };
                emit(
                    &mut out,
                    Env {
                        rows: &slots,
                        params,
                        aggs: &aggs,
                    },
                )?;
            }
        } else {
            out.reserve(rows.len());
            for row in &rows {
                emit(&mut out, Env::new(&slots(row), params))?;
            }
        }
        sort::sort(&mut out, &self.sort);
        let rows = out.into_iter().map(|(r, _)| r).collect();
        Ok(limit::window(rows, self.distinct, window))
    }
}

/// A row of no columns: every column of it reads NULL.
static NO_ROW: Row = Vec::new();

/// A joined row as expressions read it, one slot per table: on the stack up to four tables.
fn slots(row: &[Row]) -> SmallVec<[Option<&Row>; 4]> {
    row.iter().map(Some).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::ColumnRef;

    fn column(n: usize) -> Expr {
        Expr::Column(ColumnRef {
            table: 0,
            column: n,
            name: format!("t.c{n}"),
        })
    }

    fn count_star() -> Agg {
        Agg {
            func: AggFunc::Count,
            arg: None,
            distinct: false,
        }
    }

    fn sum(n: usize) -> Agg {
        Agg {
            func: AggFunc::Sum,
            arg: Some(column(n)),
            distinct: false,
        }
    }

    /// `SELECT c0, COUNT(*), SUM(c1), SUM(c1) / COUNT(*) FROM t GROUP BY c0
    /// ORDER BY 2 DESC, c0 LIMIT 2 OFFSET 1` over one table's joined rows.
    #[test]
    fn finish_groups_aggregates_projects_sorts_and_cuts() {
        let rows: Vec<Vec<Row>> = [(1, 10), (2, 5), (1, 20), (3, 1), (2, 7), (1, 30)]
            .into_iter()
            .map(|(a, b)| vec![vec![Value::Int(a), Value::Int(b)]])
            .collect();
        let output = Output {
            exprs: vec![
                column(0),
                Expr::Agg(0),
                Expr::Agg(1),
                Expr::Arith(
                    crate::value::ArithOp::Div,
                    Box::new(Expr::Agg(1)),
                    Box::new(Expr::Agg(0)),
                ),
            ],
            group_by: vec![column(0)],
            aggs: vec![count_star(), sum(1)],
            having: None,
            sort: vec![(SortKey::Out(1), true), (SortKey::Src(column(0)), false)],
            distinct: false,
        };
        let out = output.finish(rows, &[], (Some(2), 1)).unwrap();
        let text: Vec<Vec<String>> = out
            .iter()
            .map(|r| r.iter().map(ToString::to_string).collect())
            .collect();
        // Groups by count: 1 (3 rows), 2 (2), 3 (1); the offset skips group 1.
        assert_eq!(
            text,
            [["2", "2", "12", "6.0000"], ["3", "1", "1", "1.0000"]]
        );
    }

    /// HAVING keeps the groups it is true of (NULL is not true), reading their aggregates;
    /// without grouping it filters rows.
    #[test]
    fn having_keeps_the_groups_it_is_true_of() {
        use crate::expr::CmpOp;
        let rows: Vec<Vec<Row>> = [(1, Some(10)), (2, None), (1, Some(20)), (3, Some(1))]
            .into_iter()
            .map(|(a, b)| vec![vec![Value::Int(a), b.map_or(Value::Null, Value::Int)]])
            .collect();
        let more_than = |e: Expr, n: i64| {
            Expr::Cmp(
                CmpOp::Gt,
                Box::new(e),
                Box::new(Expr::Literal(Value::Int(n))),
            )
        };
        let grouped = Output {
            exprs: vec![column(0), Expr::Agg(1)],
            group_by: vec![column(0)],
            aggs: vec![count_star(), sum(1)],
            // HAVING COUNT(*) > 1 OR SUM(c1) > 0: group 2's SUM is NULL, so it goes.
            having: Some(Expr::Or(vec![
                more_than(Expr::Agg(0), 1),
                more_than(Expr::Agg(1), 0),
            ])),
            ..Output::default()
        };
        let out = grouped.finish(rows.clone(), &[], (None, 0)).unwrap();
        assert_eq!(
            out,
            [
                [Value::Int(1), Value::Int(30)],
                [Value::Int(3), Value::Int(1)]
            ]
        );
        let plain = Output {
            exprs: vec![column(0)],
            having: Some(more_than(column(0), 1)),
            ..Output::default()
        };
        let out = plain.finish(rows, &[], (None, 0)).unwrap();
        assert_eq!(out, [[Value::Int(2)], [Value::Int(3)]]);
    }

    /// Aggregates over no rows are one row (COUNT 0, SUM NULL); without them, no rows.
    #[test]
    fn aggregates_over_nothing_are_one_row() {
        let count = Output {
            exprs: vec![Expr::Agg(0), Expr::Agg(1)],
            aggs: vec![count_star(), sum(0)],
            ..Output::default()
        };
        assert_eq!(
            count.finish(Vec::new(), &[], (None, 0)).unwrap(),
            [[Value::Int(0), Value::Null]]
        );
        let plain = Output {
            exprs: vec![column(0)],
            distinct: true,
            ..Output::default()
        };
        let rows = vec![vec![vec![Value::Int(7)]], vec![vec![Value::Int(7)]]];
        assert_eq!(
            plain.finish(rows, &[], (None, 0)).unwrap(),
            [[Value::Int(7)]]
        );
    }
}
