//! UNION [ALL | DISTINCT]: each SELECT bound and run as its own query, in one statement of
//! the session's transaction (so in one read view), its rows appended in order; a DISTINCT
//! union removes the duplicates of everything to its left (MySQL's rule when ALL and
//! DISTINCT mix); then the whole result's ORDER BY, over its columns, and LIMIT.
//!
//! The result's columns are named by the first SELECT. Each SELECT may have its own
//! parenthesized ORDER BY and LIMIT. INTERSECT, EXCEPT and a UNION nested on the right of
//! another are refused.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

use sqlparser::ast::{self, Expr as Ast, SetExpr, SetOperator, SetQuantifier};
use waterline_txn::{LockMode, Table, Value};

use super::limit::limit_offset;
use super::{BoundQuery, bind, read, select_of, without_from};
use crate::error::SqlError;
use crate::session::{Bound, Context, Response, ResultColumn};
use crate::types::{ColumnMeta, value_field_type};

/// One SELECT of a UNION, bound.
#[derive(Debug)]
struct Part {
    /// Its text as a query of its own.
    query: ast::Query,
    bound: BoundQuery,
    /// Its `?`s among the statement's.
    params: Range<usize>,
    /// Whether the UNION that joins it to the parts before is DISTINCT.
    distinct: bool,
}

/// A UNION bound against the catalog.
#[derive(Debug)]
pub(crate) struct BoundUnion {
    parts: Vec<Part>,
    /// ORDER BY: result column and DESC.
    order: Vec<(usize, bool)>,
}

/// Whether `q` is a set operation (UNION, INTERSECT, EXCEPT) rather than one SELECT.
pub(crate) fn is_union(q: &ast::Query) -> bool {
    matches!(q.body.as_ref(), SetExpr::SetOperation { .. })
}

/// `e`'s SELECTs in order, each as a query of its own and with whether the UNION before it
/// is DISTINCT.
pub(crate) fn flatten(
    e: &SetExpr,
    distinct: bool,
    out: &mut Vec<(ast::Query, bool)>,
) -> Result<(), SqlError> {
    match e {
        SetExpr::SetOperation {
            op: SetOperator::Union,
            set_quantifier,
            left,
            right,
        } => {
            if matches!(right.as_ref(), SetExpr::SetOperation { .. }) {
                return Err(SqlError::unsupported(
                    "a UNION nested on the right of another",
                ));
            }
            let distinct_right = match set_quantifier {
                SetQuantifier::All => false,
                SetQuantifier::Distinct | SetQuantifier::None => true,
                other => return Err(SqlError::unsupported(format!("UNION {other}"))),
            };
            flatten(left, distinct, out)?;
            flatten(right, distinct_right, out)
        }
        SetExpr::SetOperation { op, .. } => Err(SqlError::unsupported(op)),
        SetExpr::Select(_) => {
            out.push((query_of(e.clone()), distinct));
            Ok(())
        }
        SetExpr::Query(q) => {
            out.push(((**q).clone(), distinct));
            Ok(())
        }
        other => Err(SqlError::unsupported(other)),
    }
}

/// `body` as a query with nothing around it.
fn query_of(body: SetExpr) -> ast::Query {
    ast::Query {
        with: None,
        body: Box::new(body),
        order_by: None,
        limit_clause: None,
        fetch: None,
        locks: Vec::new(),
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: Vec::new(),
    }
}

/// Binds a UNION against the catalog's `tables`.
pub(crate) fn bind_union(
    s: &Context<'_>,
    tables: &[Table],
    q: &ast::Query,
) -> Result<BoundUnion, SqlError> {
    if !q.locks.is_empty() {
        return Err(SqlError::unsupported("a locking clause on a UNION"));
    }
    if q.with.is_some() {
        return Err(SqlError::unsupported("WITH"));
    }
    let mut flat = Vec::new();
    flatten(&q.body, false, &mut flat)?;
    let mut parts: Vec<Part> = Vec::with_capacity(flat.len());
    let mut at = 0;
    for (query, distinct) in flat {
        let bound = bind(s, tables, &query)?;
        if let Some(first) = parts.first()
            && bound.width() != first.bound.width()
        {
            return Err(SqlError::new(
                1222,
                "21000",
                "The used SELECT statements have a different number of columns",
            ));
        }
        let n = crate::parse::placeholders(&query);
        parts.push(Part {
            query,
            bound,
            params: at..at + n,
            distinct,
        });
        at += n;
    }
    let names = parts[0].bound.column_names();
    let mut order = Vec::new();
    if let Some(ob) = &q.order_by {
        let ast::OrderByKind::Expressions(items) = &ob.kind else {
            return Err(SqlError::unsupported("ORDER BY ALL"));
        };
        for item in items {
            let desc = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
            let column = match &item.expr {
                Ast::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                    let text = v.value.to_string();
                    match text.parse::<usize>() {
                        Ok(n) if (1..=names.len()).contains(&n) => n - 1,
                        _ => return Err(SqlError::unknown_column(&text, "order clause")),
                    }
                }
                Ast::Identifier(id) => names
                    .iter()
                    .position(|n| n.eq_ignore_ascii_case(&id.value))
                    .ok_or_else(|| SqlError::unknown_column(&id.value, "order clause"))?,
                Ast::CompoundIdentifier(ids) if ids.len() > 1 => {
                    return Err(SqlError::new(
                        1250,
                        "42000",
                        format!(
                            "Table '{}' from one of the SELECTs cannot be used in global \
                             ORDER clause",
                            ids[ids.len() - 2].value
                        ),
                    ));
                }
                other => {
                    return Err(SqlError::unsupported(format!(
                        "ORDER BY {other} on a UNION"
                    )));
                }
            };
            order.push((column, desc));
        }
    }
    Ok(BoundUnion { parts, order })
}

impl Bound for BoundUnion {
    fn volatile(&self) -> bool {
        self.parts.iter().any(|p| p.bound.volatile())
    }

    fn run(
        &self,
        s: &mut Context<'_>,
        statement: &ast::Statement,
        params: &[Value],
    ) -> Result<Response, SqlError> {
        run(s, super::query_of(statement)?, self, params)
    }
}

/// Runs a bound UNION.
fn run(
    s: &mut Context<'_>,
    q: &ast::Query,
    bound: &BoundUnion,
    params: &[Value],
) -> Result<Response, SqlError> {
    let window = limit_offset(q, params)?;
    let db = s.catalog_database().to_string();
    let lock = s.serializable_read().then_some(LockMode::Shared);
    let answers = s.with_trx(|s, trx| {
        let mut answers = Vec::with_capacity(bound.parts.len());
        for part in &bound.parts {
            let params =
                &params[part.params.start.min(params.len())..part.params.end.min(params.len())];
            let from = select_of(&part.query).map_or(true, |sel| !sel.from.is_empty());
            answers.push(if from {
                read(s, &part.query, &part.bound, params, (&db, lock), trx)?
            } else {
                without_from(s, &part.query, &part.bound, params)?
            });
        }
        Ok(answers)
    })?;
    let distinct = bound.parts.iter().map(|p| p.distinct);
    let Response::Rows { columns, mut rows } = combine(distinct.zip(answers).collect())? else {
        return Err(SqlError::other("a UNION without rows"));
    };
    if !bound.order.is_empty() {
        rows.sort_by(|a, b| {
            for &(i, desc) in &bound.order {
                let o = waterline_planner::exec::compare_for_sort(&a[i], &b[i]);
                let o = if desc { o.reverse() } else { o };
                if o.is_ne() {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
    }
    let (limit, offset) = window;
    let rows = rows
        .into_iter()
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    Ok(Response::Rows { columns, rows })
}

/// The result of a UNION's SELECTs (`answers`, each with whether the UNION before it is
/// DISTINCT): their rows appended in order, a DISTINCT one removing the duplicates of
/// everything to its left; the columns named by the first, a column whose SELECTs disagree
/// on its type typed by its first value.
pub(crate) fn combine(answers: Vec<(bool, Response)>) -> Result<Response, SqlError> {
    let mut columns: Option<Vec<ResultColumn>> = None;
    let mut metas = Vec::new();
    let mut rows: Vec<Vec<Value>> = Vec::new();
    for (distinct, answer) in answers {
        let Response::Rows {
            columns: cols,
            rows: part_rows,
        } = answer
        else {
            return Err(SqlError::other("a SELECT of a UNION returned no rows"));
        };
        metas.push(
            cols.iter()
                .map(|c| (c.ty, c.flags, c.decimals))
                .collect::<Vec<_>>(),
        );
        columns.get_or_insert(cols);
        rows.extend(part_rows);
        if distinct {
            let mut seen = HashSet::new();
            rows.retain(|r| seen.insert(r.clone()));
        }
    }
    let mut columns = columns.unwrap_or_default();
    // A column whose SELECTs disagree on its type takes the type of its first value.
    for (i, column) in columns.iter_mut().enumerate() {
        if metas.iter().any(|m| m[i] != metas[0][i]) {
            let ty = rows
                .iter()
                .map(|r| &r[i])
                .find(|v| !v.is_null())
                .map_or(crate::types::FieldType::VarString, value_field_type);
            *column = ResultColumn::new(
                Arc::clone(&column.name),
                "".into(),
                ColumnMeta::computed(ty),
            );
        }
    }
    Ok(Response::Rows { columns, rows })
}

/// The columns a UNION returns: its first SELECT's (COM_STMT_PREPARE).
pub(crate) fn describe(s: &mut Context<'_>, q: &ast::Query) -> Result<Vec<ResultColumn>, SqlError> {
    let mut flat = Vec::new();
    flatten(&q.body, false, &mut flat)?;
    let (first, _) = flat
        .into_iter()
        .next()
        .ok_or_else(|| SqlError::other("a UNION without a SELECT"))?;
    super::describe(s, &first)
}
