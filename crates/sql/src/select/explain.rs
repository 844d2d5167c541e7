//! EXPLAIN of a query: MySQL's table, a row per table of each query block, or with
//! `FORMAT=TREE` its iterator tree: the planner's join tree
//! ([`waterline_planner::explain::tree`]) under the steps after the join (aggregate,
//! HAVING, DISTINCT, sort, limit). `FORMAT=JSON` and `EXPLAIN ANALYZE` are refused.

use sqlparser::ast;
use waterline_planner::Plan;
use waterline_planner::exec::{Agg, AggFunc};
use waterline_planner::explain::{COLUMNS, ExplainRow, Node, explain_block, tree};
use waterline_txn::{Transaction, Value};

use super::limit::{limit_offset, usable_rows};
use super::{BoundQuery, bind, select_of};
use crate::access::{Derived, TxnAccess};
use crate::error::SqlError;
use crate::session::{Context, Response};

/// How EXPLAIN shows a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// MySQL's table (`FORMAT=TRADITIONAL`, the default).
    Table,
    /// The iterator tree (`FORMAT=TREE`).
    Tree,
}

impl Format {
    /// The format an EXPLAIN statement asks for; 1235 for one waterline does not write.
    pub(crate) fn of(
        analyze: bool,
        format: Option<&ast::AnalyzeFormatKind>,
    ) -> Result<Format, SqlError> {
        if analyze {
            return Err(SqlError::unsupported("EXPLAIN ANALYZE"));
        }
        let kind = match format {
            None => return Ok(Format::Table),
            Some(ast::AnalyzeFormatKind::Keyword(f) | ast::AnalyzeFormatKind::Assignment(f)) => f,
        };
        match kind {
            ast::AnalyzeFormat::TRADITIONAL => Ok(Format::Table),
            ast::AnalyzeFormat::TREE => Ok(Format::Tree),
            other => Err(SqlError::unsupported(format!("EXPLAIN FORMAT={other}"))),
        }
    }
}

/// One query block explained.
pub(crate) enum Explained {
    /// Its rows of the table.
    Rows(Vec<ExplainRow>),
    /// Its iterator tree.
    Tree(Node),
}

/// EXPLAIN of a query without subqueries (planned in the session's transaction, not run).
pub(crate) fn explain_flat(
    s: &mut Context<'_>,
    q: &ast::Query,
    params: &[Value],
    format: Format,
) -> Result<Response, SqlError> {
    let db = s.database().cloned();
    let (_, tables) = s.tables();
    let bound = bind(s, &tables, q)?;
    s.with_trx(|s, trx| {
        let db = db.as_deref().unwrap_or_default();
        let block = (1, "SIMPLE", format);
        Ok(response(explain_in(
            s, q, &bound, params, db, trx, None, block,
        )?))
    })
}

/// Query block `id` of a statement (of `select_type`), bound, planned in `trx` for
/// `params` in database `db`, with the statement's `derived` tables, and explained.
#[allow(clippy::too_many_arguments)]
pub(crate) fn explain_in(
    s: &mut Context<'_>,
    q: &ast::Query,
    bound: &BoundQuery,
    params: &[Value],
    db: &str,
    trx: &mut Transaction,
    derived: Option<&Derived>,
    (id, select_type, format): (usize, &str, Format),
) -> Result<Explained, SqlError> {
    let window = limit_offset(q, params)?;
    let usable = usable_rows(q, select_of(q)?, &bound.select, window);
    let access =
        TxnAccess::new(db, &bound.tables, trx, None, s.watch().clone()).with_derived(derived);
    let plan = super::plan(s, &access, bound, params, usable)?;
    Ok(match format {
        Format::Table => Explained::Rows(explain_block(&plan, &access, id, select_type)),
        Format::Tree => Explained::Tree(steps_after_join(q, bound, &plan, window)),
    })
}

/// The iterator tree of a block: its join under aggregate, HAVING, DISTINCT, sort, limit.
fn steps_after_join(
    q: &ast::Query,
    bound: &BoundQuery,
    plan: &Plan,
    (limit, offset): (Option<usize>, usize),
) -> Node {
    let out = bound.projection.output();
    let mut node = tree(plan);
    if !out.group_by.is_empty() || !out.aggs.is_empty() {
        let aggs: Vec<String> = out.aggs.iter().map(agg_text).collect();
        let aggs = aggs.join(", ");
        node = if out.group_by.is_empty() {
            Node::new(format!("Aggregate: {aggs}"), vec![node])
        } else if plan.needs_temporary {
            let using = Node::new("Aggregate using temporary table", vec![node]);
            Node::new("Table scan on <temporary>", vec![using])
        } else {
            Node::new(format!("Group aggregate: {aggs}"), vec![node])
        };
    }
    if let Some(having) = &out.having {
        node = Node::new(format!("Filter: {having}"), vec![node]);
    }
    if out.distinct {
        let dedup = Node::new("Temporary table with deduplication", vec![node]);
        node = Node::new("Table scan on <temporary>", vec![dedup]);
    }
    if !out.sort.is_empty()
        && let Some(ast::OrderByKind::Expressions(items)) = q.order_by.as_ref().map(|o| &o.kind)
    {
        let keys: Vec<String> = items.iter().map(ToString::to_string).collect();
        node = Node::new(format!("Sort: {}", keys.join(", ")), vec![node]);
    }
    match (limit, offset) {
        (Some(n), 0) => Node::new(format!("Limit: {n} row(s)"), vec![node]),
        (Some(n), m) => Node::new(format!("Limit/Offset: {n}/{m} row(s)"), vec![node]),
        (None, _) => node,
    }
}

/// An aggregate as MySQL's tree names it (`count(0)` for COUNT(*)).
fn agg_text(a: &Agg) -> String {
    let name = match a.func {
        AggFunc::Count => "count",
        AggFunc::Sum => "sum",
        AggFunc::Min => "min",
        AggFunc::Max => "max",
        AggFunc::Avg => "avg",
    };
    let distinct = if a.distinct { "distinct " } else { "" };
    match &a.arg {
        Some(arg) => format!("{name}({distinct}{arg})"),
        None => format!("{name}(0)"),
    }
}

/// What EXPLAIN returns: the table's rows, or the tree in one row of one column, `EXPLAIN`.
pub(crate) fn response(explained: Explained) -> Response {
    match explained {
        Explained::Rows(rows) => explain_response(rows),
        Explained::Tree(node) => Response::text(
            &["EXPLAIN"],
            vec![vec![Value::from(node.render().trim_end())]],
        ),
    }
}

/// EXPLAIN's rows as a result: `id` and `rows` are numbers, the rest text.
pub(crate) fn explain_response(rows: Vec<ExplainRow>) -> Response {
    let rows = rows
        .into_iter()
        .map(|r| {
            r.values
                .iter()
                .enumerate()
                .map(|(i, v)| match (i, v) {
                    (_, None) => Value::Null,
                    (0 | 8, Some(n)) => n
                        .parse()
                        .map_or_else(|_| Value::from(n.as_str()), Value::Int),
                    (_, Some(t)) => Value::from(t.as_str()),
                })
                .collect()
        })
        .collect();
    Response::text(&COLUMNS, rows)
}
