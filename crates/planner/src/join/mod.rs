//! Join planning, in MySQL's order (`JOIN::make_join_plan`):
//! 1. propagate equalities (`a = b AND b = 5` gives `a = 5`);
//! 2. evaluate constant conditions ("Impossible WHERE");
//! 3. find and read the const tables (a primary or unique key equal to constants);
//! 4. analyse ranges on every other table (`test_quick_select`), with the const tables as
//!    previous and read tables, or without them in [`PlannerMode::Legacy8027`];
//! 5. choose each table's access and the join order with the least cost;
//! 6. attach each condition to the first table where it can be checked.

use std::borrow::Cow;
use std::sync::Arc;

use waterline_types::{Key, KeyRange, Row, Value};

use crate::bind::BoundSelect;
use crate::catalog::{Catalog, IndexId};
use crate::cost;
use crate::expr::{CmpOp, ColumnRef, Env, Expr, row_refs};
use crate::outer::JoinKind;
use crate::plan::{Access, Impossible, Nest, Plan, TablePlan};
use crate::range::{
    KeyTree, RangeParam, SelTree, describe, get_mm_tree, get_mm_tree_and, key_ranges,
};
use crate::table_map::TableMap;
use crate::trace::Trace;

mod access;
use crate::value::{KeyBound, key_bound, truth};
use crate::{PlanError, PlannerMode};

/// A range access found by range analysis, and which conditions it uses.
#[derive(Clone, Debug)]
struct RangeCandidate {
    index: IndexId,
    ranges: Vec<KeyRange>,
    parts: usize,
    rows: u64,
    /// Per condition (of `Optimizer::conds`): whether the ranges guarantee it.
    consumed: Vec<bool>,
}

struct Optimizer<'a> {
    catalog: &'a dyn Catalog,
    mode: PlannerMode,
    select: &'a BoundSelect,
    params: &'a [Value],
    /// The query's conditions, then the derived equalities: the statement's own, borrowed,
    /// when there are none (a one-table statement, planned at each execution).
    conds: Cow<'a, [Expr]>,
    /// How many of `conds` are the query's own (the rest are derived).
    own: usize,
    const_rows: Vec<Option<Row>>,
    const_tables: TableMap,
    trace: Trace,
}

/// Plans a bound SELECT.
pub fn optimize(
    catalog: &dyn Catalog,
    mode: PlannerMode,
    select: Arc<BoundSelect>,
    params: &[Value],
    trace: bool,
    limit: Option<usize>,
) -> Result<Plan, PlanError> {
    let n = select.tables.len();
    let own = select.conds.len();
    let derived = propagate_equalities(&select);
    let conds = if derived.is_empty() {
        Cow::Borrowed(&select.conds[..])
    } else {
        Cow::Owned([&select.conds[..], &derived].concat())
    };
    let mut opt = Optimizer {
        catalog,
        mode,
        select: &select,
        params,
        conds,
        own,
        const_rows: vec![None; n],
        const_tables: TableMap::EMPTY,
        trace: Trace::new(trace),
    };
    let outcome = opt.run();
    let trace = std::mem::take(&mut opt.trace);
    let (tables, nests, impossible, cost) = match outcome? {
        Ok((tables, nests, cost)) => (tables, nests, None, cost),
        Err(why) => (Vec::new(), Vec::new(), Some(why), 0.0),
    };
    let mut plan = Plan {
        select,
        tables,
        nests,
        impossible,
        ordered_by_index: false,
        backward: false,
        needs_temporary: false,
        mode,
        cost,
        trace,
    };
    crate::order::analyse(&mut plan);
    if let Some(limit) = limit {
        crate::order::prefer_ordering_index(&mut plan, limit);
    }
    Ok(plan)
}

/// `a = b` and `b = <constant>` give `a = <constant>` (MySQL's multiple equalities, reduced
/// to what range analysis and const detection need). Only between columns of one type.
fn propagate_equalities(select: &BoundSelect) -> Vec<Expr> {
    let ty = |c: &ColumnRef| select.tables[c.table].schema.columns[c.column].ty;
    let mut classes: Vec<Vec<ColumnRef>> = Vec::new();
    // An outer join's ON says nothing of the rows outside it.
    let conds = || {
        select
            .conds
            .iter()
            .enumerate()
            .filter(|(i, _)| select.on_of(*i).is_none())
            .map(|(_, c)| c)
    };
    for cond in conds() {
        if let Expr::Cmp(CmpOp::Eq, a, b) = cond
            && let (Expr::Column(x), Expr::Column(y)) = (a.as_ref(), b.as_ref())
            && ty(x) == ty(y)
        {
            let find = |cs: &[Vec<ColumnRef>], c: &ColumnRef| cs.iter().position(|k| k.contains(c));
            match (find(&classes, x), find(&classes, y)) {
                (Some(i), Some(j)) if i != j => {
                    let merged = classes.remove(j.max(i));
                    classes[j.min(i)].extend(merged);
                }
                (Some(_), Some(_)) => {}
                (Some(i), None) => classes[i].push(y.clone()),
                (None, Some(j)) => classes[j].push(x.clone()),
                (None, None) => classes.push(vec![x.clone(), y.clone()]),
            }
        }
    }
    let mut derived = Vec::new();
    for cond in conds() {
        let Expr::Cmp(CmpOp::Eq, a, b) = cond else {
            continue;
        };
        let (col, value) = match (a.as_ref(), b.as_ref()) {
            (Expr::Column(c), v) | (v, Expr::Column(c)) if v.used_tables().is_empty() => (c, v),
            _ => continue,
        };
        for class in classes.iter().filter(|k| k.contains(col)) {
            for other in class.iter().filter(|o| *o != col) {
                let eq = Expr::Cmp(
                    CmpOp::Eq,
                    Box::new(Expr::Column(other.clone())),
                    Box::new(value.clone()),
                );
                if !select.conds.contains(&eq) && !derived.contains(&eq) {
                    derived.push(eq);
                }
            }
        }
    }
    derived
}

impl Optimizer<'_> {
    fn eval(&self, e: &Expr) -> Result<Value, PlanError> {
        let rows = row_refs(&self.const_rows);
        e.eval(Env::new(&rows, self.params))
    }

    /// Every outer join's and anti-join's inner tables.
    fn inner_tables(&self) -> TableMap {
        (self.select.outer_joins.iter())
            .filter(|j| j.matches_only())
            .fold(TableMap::EMPTY, |m, j| m | j.inner)
    }

    /// A value `t.col = value` gives, among the conditions, using only `known` tables.
    fn eq_value(&self, t: usize, col: usize, known: TableMap) -> Option<&Expr> {
        let me = TableMap::table(t);
        let applicable = self
            .conds
            .iter()
            .enumerate()
            .filter(|(i, _)| self.select.applies(*i, t))
            .map(|(_, c)| c);
        let candidates = applicable.filter_map(|c| match c {
            Expr::Cmp(CmpOp::Eq, a, b) => match (a.as_ref(), b.as_ref()) {
                (Expr::Column(x), v) | (v, Expr::Column(x)) if x.table == t && x.column == col => {
                    Some(v)
                }
                _ => None,
            },
            _ => None,
        });
        let mut usable =
            candidates.filter(|v| known.contains(v.used_tables()) && !v.used_tables().overlaps(me));
        // A constant first: it makes the best key.
        usable
            .clone()
            .find(|v| v.used_tables().is_empty())
            .or_else(|| usable.next())
    }

    /// A key value coerced to the column's type; `Err(())` if no row can have it.
    fn key_value(&self, t: usize, col: usize, v: &Expr) -> Option<Result<Value, ()>> {
        let ty = self.select.tables[t].schema.columns[col].ty;
        match key_bound(ty, &self.eval(v).ok()?)? {
            KeyBound::Exact(v) => Some(Ok(v)),
            KeyBound::Between { .. } | KeyBound::Null => Some(Err(())),
        }
    }

    #[allow(clippy::type_complexity)]
    fn run(&mut self) -> Result<Result<(Vec<TablePlan>, Vec<Nest>, f64), Impossible>, PlanError> {
        self.trace
            .line(0, || format!("planner mode: {:?}", self.mode));
        for d in &self.conds[self.own..] {
            self.trace.line(0, || format!("equality propagation: {d}"));
        }
        // Constant arithmetic is evaluated once, so an overflow is an error, as in MySQL.
        for c in &self.conds[..self.own] {
            let mut failed = None;
            c.visit(&mut |e| {
                if failed.is_none()
                    && matches!(e, Expr::Arith(..) | Expr::Neg(_))
                    && e.used_tables().is_empty()
                    && !e.has_params()
                {
                    failed = e.eval(Env::new(&[], &[])).err();
                }
            });
            if let Some(e) = failed {
                return Err(e);
            }
        }
        // Constant conditions (an outer join's ON is its match's, not the query's).
        for (i, c) in self.conds[..self.own].iter().enumerate() {
            if c.used_tables().is_empty() && self.select.on_of(i).is_none() {
                match self.eval(c) {
                    Ok(v) if truth(&v) == Some(true) => {}
                    Ok(_) => return Ok(Err(Impossible::Where)),
                    Err(PlanError::MissingParam(_)) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        let mut consts = self.find_const_tables()?;
        if consts.iter().any(|t| self.const_rows[t.table].is_none()) {
            return Ok(Err(Impossible::NoConstRow));
        }
        for (i, c) in self.conds[..self.own].iter().enumerate() {
            let used = c.used_tables();
            if !used.is_empty()
                && self.const_tables.contains(used)
                && self.select.on_of(i).is_none()
            {
                match self.eval(c) {
                    Ok(v) if truth(&v) == Some(true) => {}
                    Ok(_) => return Ok(Err(Impossible::AfterConstTables)),
                    Err(PlanError::MissingParam(_)) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        let rest: Vec<usize> = (0..self.select.tables.len())
            .filter(|&t| !self.const_tables.overlaps(TableMap::table(t)))
            .collect();
        let mut ranges = vec![Vec::new(); self.select.tables.len()];
        for &t in &rest {
            match self.test_quick_select(t)? {
                Some(found) => ranges[t] = found,
                // An outer join's ON that no row meets: the inner table matches nothing (it
                // reads no range), and its outer rows still come, NULL-filled.
                None if self.inner_tables().overlaps(TableMap::table(t)) => {
                    let schema = &self.select.tables[t].schema;
                    if let Some(&index) = IndexId::all(schema).first() {
                        ranges[t] = vec![RangeCandidate {
                            index,
                            ranges: Vec::new(),
                            parts: 0,
                            rows: 0,
                            consumed: vec![false; self.conds.len()],
                        }];
                    }
                }
                None => return Ok(Err(Impossible::Where)),
            }
        }
        let (mut tables, cost) = self.choose_join_order(&rest, &ranges)?;
        // Planning is done with the const tables' rows: they move into their plans.
        for tp in &mut consts {
            if let Access::Const { row, .. } = &mut tp.access {
                *row = self.const_rows[tp.table].take();
            }
        }
        consts.append(&mut tables);
        let nests = self.attach_conditions(&mut consts);
        Ok(Ok((consts, nests, cost)))
    }

    /// Step 3: tables whose primary or unique key is fully bound to constants (or to columns
    /// of const tables) are read now, one row each, into `const_rows` (their plans get them
    /// when planning is done).
    fn find_const_tables(&mut self) -> Result<Vec<TablePlan>, PlanError> {
        let mut found = Vec::new();
        'again: loop {
            let inner = self.inner_tables();
            for t in 0..self.select.tables.len() {
                // An outer join's inner table may have no matching row and still give rows.
                if self.const_tables.overlaps(TableMap::table(t))
                    || inner.overlaps(TableMap::table(t))
                {
                    continue;
                }
                let table = &self.select.tables[t];
                for index in IndexId::iter(&table.schema).filter(|i| i.is_unique(&table.schema)) {
                    let columns = index.columns(&table.schema);
                    let mut key = Key::default();
                    let mut bound = 0;
                    let mut impossible = false;
                    for &col in columns {
                        let value = self.eq_value(t, col, self.const_tables);
                        match value.and_then(|v| self.key_value(t, col, v)) {
                            Some(Ok(v)) => {
                                key.push(&v);
                                bound += 1;
                            }
                            Some(Err(())) => impossible = true,
                            None => break,
                        }
                    }
                    if !impossible && bound < columns.len() {
                        continue;
                    }
                    let row = if impossible {
                        None
                    } else {
                        self.catalog.read_unique(&table.name, index, &key)?
                    };
                    self.trace.line(0, || {
                        let what = if row.is_some() { "one row" } else { "no row" };
                        format!(
                            "const table {}: {} = {key}: {what}",
                            table.alias,
                            index.name(&table.schema)
                        )
                    });
                    self.const_tables = self.const_tables | TableMap::table(t);
                    self.const_rows[t] = row;
                    found.push(TablePlan {
                        table: t,
                        access: Access::Const {
                            index,
                            key,
                            row: None,
                        },
                        possible_keys: vec![index],
                        rows: 1,
                        filtered: 100.0,
                        cond: Vec::new(),
                        on: Vec::new(),
                        using_where: false,
                        covering: false,
                        join_buffer: false,
                        cost: cost::SEEK + cost::ROW_READ,
                    });
                    continue 'again;
                }
            }
            return Ok(found);
        }
    }

    /// Step 4 (MySQL's `test_quick_select`): the range candidates of table `t`, or `None` if
    /// the condition is impossible.
    fn test_quick_select(&mut self, t: usize) -> Result<Option<Vec<RangeCandidate>>, PlanError> {
        let table = &self.select.tables[t];
        let indexes = IndexId::all(&table.schema);
        let inner = TableMap::INNER_TABLE_BIT;
        let (prev_tables, read_tables) = match self.mode {
            PlannerMode::Fixed => (self.const_tables | inner, self.const_tables | inner),
            // 8.0.27 (commit 9a13c1c6) called test_quick_select without the const tables.
            PlannerMode::Legacy8027 => (inner, inner),
        };
        let current_table = TableMap::table(t);
        self.trace
            .line(0, || format!("test_quick_select: table {}", table.alias));
        self.trace.map(1, "prev_tables", prev_tables);
        self.trace.map(1, "read_tables", read_tables);
        self.trace.map(1, "current_table", current_table);
        let rows = row_refs(&self.const_rows);
        let env = Env::new(&rows, self.params);
        // Another outer join's ON limits nothing here: it stands as TRUE.
        let conds: Cow<'_, [Expr]> = if (0..self.conds.len()).all(|i| self.select.applies(i, t)) {
            Cow::Borrowed(&self.conds[..])
        } else {
            Cow::Owned(
                (self.conds.iter().enumerate())
                    .map(|(i, c)| match self.select.applies(i, t) {
                        true => c.clone(),
                        false => Expr::Literal(Value::Int(1)),
                    })
                    .collect(),
            )
        };
        // One parameter set for the traced analysis of the whole condition, then for each
        // condition alone (untraced), to learn which conditions each index's ranges guarantee.
        let mut trace = std::mem::take(&mut self.trace);
        let mut scratch = Trace::new(false);
        let (tree, alone) = {
            let mut param = RangeParam {
                table: t,
                alias: &table.alias,
                schema: &table.schema,
                indexes: &indexes,
                prev_tables,
                read_tables,
                current_table,
                env,
                trace: &mut trace,
            };
            let tree = get_mm_tree_and(&mut param, &conds);
            param.trace = &mut scratch;
            let alone: Vec<SelTree> = conds.iter().map(|c| get_mm_tree(&mut param, c)).collect();
            (tree, alone)
        };
        self.trace = trace;
        let SelTree::Keys(keys) = tree else {
            self.trace.line(1, || "impossible range".into());
            return Ok(None);
        };
        let mut found = Vec::new();
        for (i, (index, key)) in indexes.iter().zip(&keys).enumerate() {
            let KeyTree::Arg(arg) = key else { continue };
            let Some((ranges, parts)) = key_ranges(arg, index.columns(&table.schema).len()) else {
                continue;
            };
            // A point of a unique index holds at most one row: MySQL counts it as one
            // without a dive into the index (UNIQUE_RANGE), so a long IN list on a primary
            // key costs no index reads to plan.
            let width = index.columns(&table.schema).len();
            let unique = index.is_unique(&table.schema);
            let rows: u64 = ranges
                .iter()
                .map(|r| match r {
                    KeyRange::Prefix(key) if unique && key.len() == width => 1,
                    r => self.catalog.records_in_range(&table.name, *index, r),
                })
                .sum();
            let consumed = alone
                .iter()
                .map(|tree| match tree {
                    SelTree::Keys(k) => matches!(&k[i], KeyTree::Arg(a) if a.max_part() < parts),
                    SelTree::Impossible => false,
                })
                .collect();
            self.trace.line(1, || {
                format!(
                    "range on {}: {} range(s), {rows} rows",
                    index.name(&table.schema),
                    ranges.len()
                )
            });
            for r in ranges.iter().take(8) {
                self.trace.line(2, || describe(r));
            }
            found.push(RangeCandidate {
                index: *index,
                ranges,
                parts,
                rows,
                consumed,
            });
        }
        if found.is_empty() {
            self.trace.line(1, || "no range".into());
        }
        Ok(Some(found))
    }

    /// Step 5: every order of the non-const tables (up to 4; beyond, FROM order), each table
    /// with its cheapest access given the tables before it; the cheapest order wins, ties
    /// going to FROM order.
    fn choose_join_order(
        &mut self,
        rest: &[usize],
        ranges: &[Vec<RangeCandidate>],
    ) -> Result<(Vec<TablePlan>, f64), PlanError> {
        if rest.is_empty() {
            // Every table is const: nothing to order (most statements of an OLTP workload).
            return Ok((Vec::new(), 0.0));
        }
        let joins = &self.select.outer_joins;
        let orders: Vec<Vec<usize>> = if rest.len() <= 4 {
            (permutations(rest).into_iter())
                .filter(|o| crate::outer::order_ok(o, joins, self.const_tables))
                .collect()
        } else {
            vec![crate::outer::from_order(rest, joins, self.const_tables)]
        };
        let mut best: Option<(Vec<TablePlan>, f64)> = None;
        for order in orders {
            let mut known = self.const_tables;
            let mut fanout = 1.0;
            // The fanout before an open semi-join or anti-join: at most one row per outer
            // row comes out of it.
            let mut before_nest: Option<f64> = None;
            let mut total = 0.0;
            let mut plans = Vec::new();
            self.trace.line(0, || {
                let names: Vec<&str> = order
                    .iter()
                    .map(|&t| self.select.tables[t].alias.as_str())
                    .collect();
                format!("join order {}:", names.join(", "))
            });
            for (pos, &t) in order.iter().enumerate() {
                let c = self.best_access(t, known, fanout, pos > 0, &ranges[t]);
                self.trace.line(1, || {
                    let schema = &self.select.tables[t].schema;
                    let key = c
                        .access
                        .index()
                        .map_or(String::new(), |i| format!(" on {}", i.name(schema)));
                    let alias = &self.select.tables[t].alias;
                    format!(
                        "{alias}: {}{key}, {} rows, filtered {:.2}%, cost {:.1}",
                        c.access.kind(),
                        c.rows,
                        c.filtered,
                        c.cost
                    )
                });
                total += c.cost;
                let me = TableMap::table(t);
                let nest = joins
                    .iter()
                    .find(|j| j.kind != JoinKind::Left && j.inner.overlaps(me));
                if nest.is_some() {
                    before_nest.get_or_insert(fanout);
                }
                fanout *= (c.rows as f64 * c.filtered / 100.0).max(1.0);
                known = known | me;
                if let Some(j) = nest
                    && known.contains(j.inner)
                {
                    fanout = before_nest.take().unwrap_or(fanout);
                }
                plans.push(self.table_plan(t, c, &ranges[t], known));
            }
            self.trace.line(1, || format!("total cost {total:.1}"));
            if best.as_ref().is_none_or(|(_, c)| total < *c) {
                best = Some((plans, total));
            }
        }
        Ok(best.unwrap_or_default())
    }

    /// Step 6: each of the query's conditions goes to the first table (in join order) after
    /// which every table it uses has a row; one that reads an outer join's inner tables, to
    /// the last of them or later (it is checked after the match, on NULL rows too); an outer
    /// join's ON, to its inner tables (the first of them or later), as what decides the
    /// match. Other conditions on constants and const tables were checked while planning,
    /// unless a parameter was missing.
    fn attach_conditions(&self, tables: &mut [TablePlan]) -> Vec<Nest> {
        // By outer join: a semi-join whose tables are all const has no nest.
        let slots: Vec<Option<Nest>> = (self.select.outer_joins.iter().enumerate())
            .map(|(join, j)| {
                // A semi-join's table may be const: it is read once, outside the nest.
                let at = |t: &TablePlan| {
                    j.inner.overlaps(TableMap::table(t.table))
                        && !matches!(t.access, Access::Const { .. })
                };
                Some(Nest {
                    kind: j.kind,
                    first: tables.iter().position(at)?,
                    last: tables.iter().rposition(at)?,
                    join,
                })
            })
            .collect();
        let nests = slots.iter().flatten().copied().collect();
        if tables.is_empty() {
            return nests;
        }
        for (i, c) in self.conds[..self.own].iter().enumerate() {
            let used = c.used_tables();
            let on = self.select.on_of(i);
            if on.is_none() && self.const_tables.contains(used) && !c.has_params() {
                continue;
            }
            let mut known = TableMap::EMPTY;
            let mut at = tables
                .iter()
                .position(|tp| {
                    known = known | TableMap::table(tp.table);
                    known.contains(used)
                })
                .unwrap_or(0);
            for (j, nest) in self.select.outer_joins.iter().zip(&slots) {
                if let Some(nest) = nest
                    && on.is_none()
                    && j.matches_only()
                    && j.inner.overlaps(used)
                {
                    at = at.max(nest.last);
                }
            }
            match on.and_then(|k| slots[k].as_ref()) {
                Some(nest) => tables[at.max(nest.first)].on.push(i),
                None => tables[at].cond.push(i),
            }
        }
        nests
    }
}

fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, first);
            out.push(p);
        }
    }
    out
}
