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

use sqlparser::ast::{self, Expr as Ast, Query, TableFactor, Visitor, VisitorMut};
use waterline_planner::explain::{ExplainRow, Node};
use waterline_txn::{Column, LockMode, TableSchema, Transaction};

use super::correlated::{
    filter_rows, item_values, take_filters, take_items, with_placeholders, without_values,
};
use super::values::{column_type, in_list, scalar, table_named};
use super::{factors_mut, refers_outside, subquery_of};
use super::{joined, merge, semi};
use crate::access::Derived;
use crate::error::SqlError;
use crate::select::{
    Explained, Format, RowFilter, bind_in, explain_in, read_in, select_of, without_from,
};
use crate::session::{Response, Session};
use waterline_planner::walk;

/// What the blocks of one statement share.
pub(super) struct Context<'a> {
    /// The mode of a locking read (SERIALIZABLE's FOR SHARE), if any.
    pub(super) lock: Option<LockMode>,
    /// The database in use.
    pub(super) db: Option<&'a str>,
    /// Every table name and alias of the statement (lower case): a name a block does not
    /// know that is one of these makes the block correlated.
    pub(super) outer: HashSet<String>,
    /// EXPLAIN's rows or trees, when the statement is explained.
    pub(super) explain: Option<Explaining>,
    /// The number of the block being answered (0: none yet).
    pub(super) current: usize,
}

/// A statement's EXPLAIN while its blocks are planned.
pub(super) struct Explaining {
    pub(super) format: Format,
    /// The table's rows, of every block.
    pub(super) rows: Vec<ExplainRow>,
    /// Each block's tree: its number, the number of the block it is in, what it is.
    pub(super) trees: Vec<(usize, usize, Kind, Node)>,
}

impl Explaining {
    /// A new one, in `format`.
    pub(super) fn new(format: Format) -> Explaining {
        Explaining {
            format,
            rows: Vec::new(),
            trees: Vec::new(),
        }
    }

    /// Block `id`'s EXPLAIN (its derived tables' aliases with their numbers, and its
    /// correlated conditions, checked after its join).
    fn add(
        &mut self,
        explained: Explained,
        (id, parent, kind): (usize, usize, Kind),
        names: &[(String, usize)],
        filters: &[Ast],
    ) {
        match explained {
            Explained::Rows(mut rows) => {
                if !filters.is_empty()
                    && let Some(extra) = rows.last_mut().map(|r| &mut r.values[10])
                    && !extra.as_deref().unwrap_or_default().contains("Using where")
                {
                    *extra = Some(match extra.take() {
                        Some(e) => format!("Using where; {e}"),
                        None => "Using where".to_owned(),
                    });
                }
                self.rows.extend(rows.into_iter().map(|mut row| {
                    if let Some((_, n)) = names
                        .iter()
                        .find(|(alias, _)| row.values[2].as_deref() == Some(alias.as_str()))
                    {
                        row.values[2] = Some(format!("<derived{n}>"));
                    }
                    row
                }));
            }
            Explained::Tree(mut node) => {
                if !filters.is_empty() {
                    let conds: Vec<String> = filters.iter().map(ToString::to_string).collect();
                    node = Node::new(format!("Filter: ({})", conds.join(" and ")), vec![node]);
                }
                self.trees.push((id, parent, kind, node));
            }
        }
    }

    /// MySQL's `UNION RESULT` row for a UNION of blocks `ids`: after them, with no id.
    fn union_result(&mut self, ids: &[String]) {
        if self.format != Format::Table {
            return;
        }
        let mut values: [Option<String>; 11] = Default::default();
        values[1] = Some("UNION RESULT".to_owned());
        values[2] = Some(format!("<union{}>", ids.join(",")));
        values[3] = Some("ALL".to_owned());
        values[10] = Some("Using temporary".to_owned());
        self.rows.push(ExplainRow { values });
    }

    /// The statement's tree: block `id`'s, with the blocks in it under it.
    pub(super) fn tree(&self, id: usize) -> Node {
        let Some((_, _, _, node)) = self.trees.iter().find(|t| t.0 == id) else {
            return Node::new(format!("Select #{id}"), Vec::new());
        };
        let mut node = node.clone();
        let mut inner: Vec<&(usize, usize, Kind, Node)> =
            self.trees.iter().filter(|t| t.1 == id).collect();
        inner.sort_by_key(|t| t.0);
        for &(n, _, kind, _) in inner {
            let what = match kind {
                Kind::Subquery => "subquery; run only once",
                Kind::Materialized => "subquery; materialized once",
                Kind::Dependent => "subquery in condition; dependent",
                Kind::Derived => "derived table; materialized",
                Kind::Union => "union",
                Kind::Top => "query",
            };
            node.children.push(Node::new(
                format!("Select #{n} ({what})"),
                vec![self.tree(n)],
            ));
        }
        node
    }
}

/// Where a block stands in its statement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Kind {
    /// The statement's outer block.
    Top,
    /// A subquery in an expression.
    Subquery,
    /// An IN or EXISTS subquery of WHERE that could have been flattened, run once instead
    /// by cost: into a `<subqueryN>` table (MySQL's semi-join materialization) or into
    /// constants (its subquery materialization).
    Materialized,
    /// A correlated subquery in an expression, run per row of the block around it.
    Dependent,
    /// A derived table.
    Derived,
    /// A SELECT of a UNION after the first (the first is what the UNION is).
    Union,
}

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

/// What block `q` (numbered `id`) returns, read in `trx`; `None` when `run` is false (the
/// statement is explained and this is its outer block, which is planned, not read).
pub(super) fn answer(
    s: &mut Session,
    trx: &mut Transaction,
    st: &mut Context<'_>,
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
    s: &mut Session,
    trx: &mut Transaction,
    st: &mut Context<'_>,
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
    let mut filter = |s: &mut Session, trx: &mut Transaction, tables: &[_], rows| {
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
    s: &mut Session,
    trx: &mut Transaction,
    st: &mut Context<'_>,
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

/// Replaces each subquery in an expression of UPDATE or DELETE `statement` with what it
/// returns; the correlated ones it leaves, and returns.
pub(super) fn resolve_statement(
    s: &mut Session,
    trx: &mut Transaction,
    st: &mut Context<'_>,
    statement: &mut ast::Statement,
) -> Result<Vec<(usize, Query)>, SqlError> {
    let mut resolve = Resolve::new(s, trx, st, Vec::new(), 0);
    match walk::visit_mut(statement, &mut resolve) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(resolve.correlated),
    }
}

/// A subquery's number of columns and its rows.
type Answered = (usize, Vec<Vec<waterline_txn::Value>>);

/// Replaces each subquery in an expression of the block with what it returns.
pub(super) struct Resolve<'b, 'a> {
    s: &'b mut Session,
    trx: &'b mut Transaction,
    st: &'b mut Context<'a>,
    /// The subquery expressions to leave as they are (by address): the block's semi-join
    /// candidates, chosen for after the rest is known (`semi.rs`).
    pub(super) defer: Vec<*const Ast>,
    /// The numbers of the subqueries left so, in the order met.
    deferred: Vec<usize>,
    /// What the subqueries it runs are ([`Kind::Subquery`] unless said).
    pub(super) kind: Kind,
    /// The numbers of the block's subqueries, in the order of the text.
    ids: std::vec::IntoIter<usize>,
    depth: usize,
    /// The depth of queries at which the expressions to resolve stand: 1 in a query block,
    /// 0 in an UPDATE or DELETE.
    base: usize,
    /// The correlated subqueries met (left in place), with their numbers.
    correlated: Vec<(usize, Query)>,
}

impl<'b, 'a> Resolve<'b, 'a> {
    /// A resolver of the subqueries numbered `ids` (in the order of the text), standing in
    /// expressions at query depth `base` (1 in a query block, 0 in a lone expression).
    pub(super) fn new(
        s: &'b mut Session,
        trx: &'b mut Transaction,
        st: &'b mut Context<'a>,
        ids: Vec<usize>,
        base: usize,
    ) -> Resolve<'b, 'a> {
        Resolve {
            s,
            trx,
            st,
            defer: Vec::new(),
            deferred: Vec::new(),
            kind: Kind::Subquery,
            ids: ids.into_iter(),
            depth: 0,
            base,
            correlated: Vec::new(),
        }
    }

    /// The correlated subqueries met (left in place), with their numbers.
    pub(super) fn into_correlated(self) -> Vec<(usize, Query)> {
        self.correlated
    }

    /// The rows subquery `q` returns, with its number of columns (which must be `width`, if
    /// given, in each SELECT of a UNION: 1241); `None` if a name it does not know is one the
    /// statement's tables have: it is correlated, left for the block to run per row.
    fn rows(&mut self, q: &Query, width: Option<usize>) -> Result<Option<Answered>, SqlError> {
        let id = self.ids.next().unwrap_or_default();
        let answered = match q.body.as_ref() {
            ast::SetExpr::Select(_) => answer(self.s, self.trx, self.st, q, (id, self.kind), true),
            _ => answer_union(self.s, self.trx, self.st, q, (id, self.kind), width).map(Some),
        };
        match answered {
            Ok(answer) => {
                let width = match &answer {
                    Some(Response::Rows { columns, .. }) => columns.len(),
                    _ => 0,
                };
                let rows = answer.map(Response::into_rows).unwrap_or_default();
                self.s.trace_note(|| {
                    format!(
                        "select #{id}: run once (not correlated), its {} row(s) made constants of the query around it",
                        rows.len()
                    )
                });
                Ok(Some((width, rows)))
            }
            Err(e)
                if e.code == 1054
                    && refers_outside(&e.message, &self.st.outer, self.s)
                    && !matches!(q.body.as_ref(), ast::SetExpr::Select(_)) =>
            {
                Err(SqlError::unsupported(
                    "a UNION subquery that reads the query around it",
                ))
            }
            Err(e) if e.code == 1054 && refers_outside(&e.message, &self.st.outer, self.s) => {
                self.s
                    .trace_note(|| format!("select #{id}: correlated, run per row"));
                self.correlated.push((id, q.clone()));
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

impl VisitorMut for Resolve<'_, '_> {
    type Break = SqlError;

    fn pre_visit_query(&mut self, _: &mut Query) -> ControlFlow<SqlError> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<SqlError> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    /// After the expression's children: a subquery's own subqueries are its block's to run.
    fn post_visit_expr(&mut self, e: &mut Ast) -> ControlFlow<SqlError> {
        if self.depth != self.base {
            return ControlFlow::Continue(());
        }
        let Some(q) = subquery_of(e) else {
            return ControlFlow::Continue(());
        };
        if self.defer.iter().any(|&d| std::ptr::eq(d, e)) {
            self.deferred.push(self.ids.next().unwrap_or_default());
            return ControlFlow::Continue(());
        }
        let expected = match &*e {
            Ast::InSubquery { expr, .. } => Some(arity(expr)),
            _ => None,
        };
        let (width, rows) = match self.rows(&q.clone(), expected) {
            Ok(Some(answered)) => answered,
            Ok(None) => return ControlFlow::Continue(()),
            Err(err) => return ControlFlow::Break(err),
        };
        let replacement = match &*e {
            Ast::InSubquery { expr, .. } if width != arity(expr) => {
                Err(waterline_planner::PlanError::Operand(arity(expr)).into())
            }
            Ast::InSubquery { expr, negated, .. } => Ok(in_list(expr, rows, *negated)),
            Ast::Exists { negated, .. } => Ok(Ast::Value(
                ast::Value::Boolean(rows.is_empty() == *negated).into(),
            )),
            _ => scalar(rows),
        };
        match replacement {
            Ok(r) => {
                *e = r;
                ControlFlow::Continue(())
            }
            Err(err) => ControlFlow::Break(err),
        }
    }
}

/// How many values `x` is: the length of a row, else 1.
pub(super) fn arity(x: &Ast) -> usize {
    match x {
        Ast::Tuple(items) => items.len(),
        _ => 1,
    }
}

/// Each derived table's alias, with its block's number.
type Numbers = Vec<(String, usize)>;

/// `q` with each derived table of its FROM (numbered by `ids`) run and replaced by a table
/// of its alias's name; their schemas and rows, and each alias with its number.
fn materialize(
    s: &mut Session,
    trx: &mut Transaction,
    st: &mut Context<'_>,
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
