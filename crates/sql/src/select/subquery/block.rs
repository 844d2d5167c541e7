//! One query block (one SELECT) of a statement with subqueries. A derived table it may
//! merge is merged first (`merge.rs`); then its own subqueries and derived tables (those
//! directly in it, not those inside them) run, each as a block of its own, and the block is
//! bound with their results as constants and tables, planned, and read, or explained. The
//! EXISTS and IN subqueries of WHERE that may become semi-joins wait until the rest is known,
//! and are then flattened or run (`semi.rs`). A subquery that turns out correlated is left
//! in place and its WHERE condition checked per joined row (`correlated.rs`).
//!
//! A flattened subquery's tables are the block's: EXPLAIN shows them in its rows (under a
//! new alias, `t#2`, if the block has a table of the same name), and a block left alone
//! is `SIMPLE`.
//!
//! Blocks are numbered as MySQL numbers them for EXPLAIN's `id`: the statement's first
//! SELECT is 1, and every other SELECT follows in the order of the text (a CTE's query where
//! the CTE is read; a merged derived table keeps its number). EXPLAIN's `select_type` is
//! `SIMPLE` for a statement of one block, else `PRIMARY` for the outer one, `SUBQUERY` for
//! a subquery run once, `DEPENDENT SUBQUERY` for a correlated one, and `DERIVED` for a
//! derived table, shown in the FROM of the block around it as `<derivedN>`.

use std::collections::HashSet;
use std::ops::ControlFlow;

use sqlparser::ast::{self, Expr as Ast, Query, TableFactor, Visitor};
use waterline_txn::{Column, LockMode, TableSchema, Transaction};

use super::blocks::{Blocks, Explaining, Kind};
use super::resolve::Resolve;

use super::correlated::{
    filter_rows, item_values, take_filters, take_items, with_placeholders, without_values,
};
use super::values::{column_type, table_named};
use super::{factors_mut, subquery_of};
use super::{joined, merge, semi};
use crate::access::Derived;
use crate::error::SqlError;
use crate::select::{RowFilter, bind_in, explain_in, read_in, select_of, without_from};
use crate::session::{Context, Response};
use waterline_planner::walk;

/// How many SELECTs `q` holds, its own included.
fn blocks(q: &Query) -> usize {
    struct Count(usize);
    impl Visitor for Count {
        type Break = ();
        fn pre_visit_select(&mut self, _: &ast::Select) -> ControlFlow<()> {
            self.0 += 1;
            ControlFlow::Continue(())
        }
    }
    let mut count = Count(0);
    let _ = walk::visit(q, &mut count);
    count.0
}

/// The numbers of a block's own subqueries (in expressions) and derived tables, each kind
/// in the order of the text, from `first` on.
fn child_ids(q: &Query, first: usize) -> (Vec<usize>, Vec<usize>) {
    struct Walk {
        depth: usize,
        next: usize,
        exprs: Vec<usize>,
        derived: Vec<usize>,
    }
    impl Visitor for Walk {
        type Break = ();
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &Ast) -> ControlFlow<()> {
            if self.depth == 1
                && let Some(q) = subquery_of(e)
            {
                self.exprs.push(self.next);
                self.next += blocks(q);
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_table_factor(&mut self, f: &TableFactor) -> ControlFlow<()> {
            if self.depth == 1
                && let TableFactor::Derived { subquery, .. } = f
            {
                self.derived.push(self.next);
                self.next += blocks(subquery);
            }
            ControlFlow::Continue(())
        }
    }
    let mut walk = Walk {
        depth: 0,
        next: first,
        exprs: Vec::new(),
        derived: Vec::new(),
    };
    let _ = walk::visit(q, &mut walk);
    (walk.exprs, walk.derived)
}

/// A context for a statement's blocks, answered by [`answer`]: reading with `lock` (if
/// any) in database `db`, `outer` the names of every table and alias of the statement.
pub(super) fn context<'a>(
    lock: Option<LockMode>,
    db: Option<&'a str>,
    outer: HashSet<String>,
    explain: Option<Explaining>,
) -> Blocks<'a> {
    Blocks {
        lock,
        db,
        outer,
        explain,
        current: 0,
        answer,
        answer_union,
    }
}

/// What block `q` (numbered `id`) returns, read in `trx`; `None` when `run` is false (the
/// statement is explained and this is its outer block, which is planned, not read).
pub(super) fn answer(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    st: &mut Blocks<'_>,
    q: &Query,
    (id, kind): (usize, Kind),
    run: bool,
) -> Result<Option<Response>, SqlError> {
    let parent = std::mem::replace(&mut st.current, id);
    let answered = answer_block(s, trx, st, q, (id, parent, kind), run);
    st.current = parent;
    answered
}

fn answer_block(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    st: &mut Blocks<'_>,
    q: &Query,
    (id, parent, kind): (usize, usize, Kind),
    run: bool,
) -> Result<Option<Response>, SqlError> {
    // Derived tables merged one at a time, while one can be.
    let mut merged: Option<Query> = None;
    let mut count = 0;
    loop {
        let current = merged.as_ref().unwrap_or(q);
        let next = merge::merged(current).or_else(|| {
            let (_, tables) = s.tables();
            let columns_of = |name: &str| {
                (tables.iter())
                    .find(|t| t.name().eq_ignore_ascii_case(name))
                    .map(|t| t.schema().columns.iter().map(|c| c.name.clone()).collect())
            };
            joined::merged(current, &columns_of)
        });
        let Some((query, alias)) = next else {
            break;
        };
        s.trace_note(|| format!("select #{id}: derived table {alias} merged into it"));
        merged = Some(query);
        count += 1;
    }
    let q = merged.as_ref().unwrap_or(q);
    // A merged derived table keeps its number: its blocks come after it, as MySQL numbers
    // them when it parses the statement.
    let first = id + 1 + count;
    let (expr_ids, derived_ids) = child_ids(q, first);
    let mut q = q.clone();
    let candidates = semi::candidates(s, st, &q);
    let mut resolve = Resolve::new(s, trx, st, expr_ids.clone(), 1);
    resolve.defer = semi::addresses(&q, &candidates);
    if let ControlFlow::Break(e) = walk::visit_mut(&mut q, &mut resolve) {
        return Err(e);
    }
    let Resolve {
        s,
        trx,
        st,
        mut correlated,
        deferred,
        ..
    } = resolve;
    let conds = semi::take(&mut q, &candidates);
    let candidates: Vec<_> = (deferred.into_iter().zip(candidates).zip(conds))
        .map(|((id, c), cond)| (id, c, cond))
        .collect();
    let items = match correlated.is_empty() {
        true => None,
        false => {
            let strict = s.settings().sql_mode.only_full_group_by;
            Some(take_items(&mut q, strict)?).filter(|items| !items.exprs.is_empty())
        }
    };
    let mut filters = match correlated.is_empty() {
        true => Vec::new(),
        false => take_filters(&mut q)?,
    };
    let (mut q, mut derived, names) = materialize(s, trx, st, q, derived_ids.clone())?;
    let chosen = semi::choose(
        s,
        trx,
        st,
        &mut q,
        &mut derived,
        candidates,
        &mut correlated,
    )?;
    filters.extend(chosen.filters);
    // A block whose subqueries all became semi-joins is one block in MySQL's EXPLAIN
    // (`SIMPLE`, beside a materialization's `MATERIALIZED`).
    let nested = expr_ids.len() > chosen.semis.len() + chosen.tables || !derived_ids.is_empty();
    let (_, tables) = s.tables();
    let planned = items.as_ref().map(|_| without_values(&q));
    let bound = bind_in(
        s,
        &tables,
        planned.as_ref().unwrap_or(&q),
        st.db,
        Some(&derived),
        &chosen.semis,
    )?;
    let select_type = match kind {
        Kind::Top if nested => "PRIMARY",
        Kind::Top => "SIMPLE",
        Kind::Subquery => "SUBQUERY",
        Kind::Materialized => "MATERIALIZED",
        Kind::Dependent => "DEPENDENT SUBQUERY",
        Kind::Derived => "DERIVED",
        Kind::Union => "UNION",
    };
    s.trace_note(|| format!("select #{id} ({select_type}): {q}"));
    if let Some(format) = st.explain.as_ref().map(|e| e.format) {
        let db = st.db.unwrap_or_default();
        let block = (id, select_type, format);
        let shown = planned.as_ref().unwrap_or(&q);
        let explained = explain_in(s, shown, &bound, &[], db, trx, Some(&derived), block)?;
        if let Some(e) = st.explain.as_mut() {
            e.add(explained, (id, parent, kind), &names, &filters);
        }
    }
    if st.explain.is_some() {
        for (id, sub) in &correlated {
            let planned = with_placeholders(s, sub, bound.select.visible());
            answer(s, trx, st, &planned, (*id, Kind::Dependent), false)?;
        }
    }
    if !run {
        return Ok(None);
    }
    if select_of(&q)?.from.is_empty() {
        return without_from(s, &q, &bound, &[]).map(Some);
    }
    let db = st.db.ok_or_else(SqlError::no_database)?;
    if !derived.is_empty() && bound.lock.is_some() {
        return Err(SqlError::unsupported("a locking read of a derived table"));
    }
    let lock = bound.lock.or(st.lock);
    let first = correlated.first().map_or(id, |(id, _)| *id);
    let mut filter = |s: &mut Context<'_>, trx: &mut Transaction, tables: &[_], rows| {
        let mut rows = match filters.is_empty() {
            true => rows,
            false => filter_rows(s, trx, st, (&filters, first), tables, rows)?,
        };
        let values = match &items {
            None => None,
            Some(items) => Some(item_values(s, trx, st, (items, first), tables, &mut rows)?),
        };
        Ok((rows, values))
    };
    let filter: Option<RowFilter<'_>> = match filters.is_empty() && items.is_none() {
        true => None,
        false => Some(&mut filter),
    };
    read_in(s, &q, &bound, &[], (db, lock), trx, Some(&derived), filter).map(Some)
}

/// What a UNION that is a subquery or a derived table returns (its SELECTs numbered from
/// `id`): each SELECT answered as a block of its own, the first as `kind`, the others as
/// [`Kind::Union`], combined as the UNION says (`union.rs`); each must have `width`
/// columns if given (the right side of an IN: 1241). EXPLAIN adds MySQL's `UNION RESULT`
/// row. An ORDER BY or LIMIT on the whole UNION is not built (1235).
fn answer_union(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    st: &mut Blocks<'_>,
    q: &Query,
    (id, kind): (usize, Kind),
    width: Option<usize>,
) -> Result<Response, SqlError> {
    if q.order_by.is_some() || q.limit_clause.is_some() {
        return Err(SqlError::unsupported(
            "ORDER BY or LIMIT on a UNION in a subquery",
        ));
    }
    let mut parts = Vec::new();
    crate::select::union::flatten(&q.body, false, &mut parts)?;
    let mut answers = Vec::with_capacity(parts.len());
    let (mut next, mut ids) = (id, Vec::new());
    for (k, (part, distinct)) in parts.iter().enumerate() {
        let kind = if k == 0 { kind } else { Kind::Union };
        let answered = answer(s, trx, st, part, (next, kind), true)?
            .ok_or_else(|| SqlError::other("a SELECT of a UNION returned nothing"))?;
        let width_of = |r: &Response| match r {
            Response::Rows { columns, .. } => columns.len(),
            Response::Done { .. } => 0,
        };
        if let Some(n) = width.filter(|&n| n != width_of(&answered)) {
            return Err(waterline_planner::PlanError::Operand(n).into());
        }
        if let Some((_, first)) = answers.first()
            && width_of(first) != width_of(&answered)
        {
            return Err(SqlError::new(
                1222,
                "21000",
                "The used SELECT statements have a different number of columns",
            ));
        }
        answers.push((*distinct, answered));
        ids.push(next.to_string());
        next += blocks(part);
    }
    if let Some(e) = st.explain.as_mut() {
        e.union_result(&ids);
    }
    crate::select::union::combine(answers)
}

/// Each derived table's alias, with its block's number.
type Numbers = Vec<(String, usize)>;

/// `q` with each derived table of its FROM (numbered by `ids`) run and replaced by a table
/// of its alias's name; their schemas and rows, and each alias with its number.
fn materialize(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    st: &mut Blocks<'_>,
    mut q: Query,
    ids: Vec<usize>,
) -> Result<(Query, Derived, Numbers), SqlError> {
    let mut derived = Derived::default();
    let mut names = Vec::new();
    let ast::SetExpr::Select(select) = q.body.as_mut() else {
        return Ok((q, derived, names));
    };
    let mut ids = ids.into_iter();
    for factor in factors_mut(select) {
        let TableFactor::Derived {
            lateral,
            subquery,
            alias,
            ..
        } = factor
        else {
            continue;
        };
        let id = ids.next().unwrap_or_default();
        if *lateral {
            return Err(SqlError::unsupported("LATERAL"));
        }
        let Some(alias) = alias.clone() else {
            return Err(SqlError::new(
                1248,
                "42000",
                "Every derived table must have its own alias",
            ));
        };
        let answered = match subquery.body.as_ref() {
            ast::SetExpr::Select(_) => answer(s, trx, st, subquery, (id, Kind::Derived), true)?,
            _ => Some(answer_union(
                s,
                trx,
                st,
                subquery,
                (id, Kind::Derived),
                None,
            )?),
        };
        let Some(Response::Rows { columns, rows }) = answered else {
            return Err(SqlError::other("a derived table's query returned no rows"));
        };
        let names_of_columns: Vec<String> = if alias.columns.is_empty() {
            columns.iter().map(|c| c.name.to_string()).collect()
        } else if alias.columns.len() == columns.len() {
            alias.columns.iter().map(|c| c.name.value.clone()).collect()
        } else {
            return Err(SqlError::new(
                1353,
                "HY000",
                "In definition of view, derived table or common table expression, SELECT \
                 list and column names list have different column counts",
            ));
        };
        let schema_columns = names_of_columns
            .into_iter()
            .zip(&columns)
            .enumerate()
            .map(|(i, (name, column))| {
                Column::nullable(name, column_type(column, rows.iter().map(|r| &r[i])))
            })
            .collect();
        let schema = TableSchema::new(alias.name.value.clone(), schema_columns);
        schema.validate().map_err(SqlError::from)?;
        s.trace_note(|| {
            format!(
                "select #{id}: derived table {} materialized, {} row(s)",
                alias.name,
                rows.len()
            )
        });
        derived.add(alias.name.value.clone(), schema, rows);
        names.push((alias.name.value.clone(), id));
        *factor = table_named(&alias.name);
    }
    Ok((q, derived, names))
}
