//! Step 5's inner part: the cheapest access path to one table, given the tables before it
//! (MySQL's `best_access_path`), and MySQL's default selectivities for what it leaves to the
//! filter.

use waterline_types::{Key, KeyRange};

use super::{Optimizer, RangeCandidate};
use crate::catalog::IndexId;
use crate::cost::{self, filter};
use crate::expr::{CmpOp, Expr};
use crate::plan::{Access, TablePlan};
use crate::table_map::TableMap;
use crate::value::key_bound;

/// One table's chosen access, while join orders are compared.
#[derive(Clone, Debug)]
pub(super) struct Choice {
    pub(super) access: Access,
    pub(super) rows: u64,
    pub(super) filtered: f64,
    pub(super) cost: f64,
    pub(super) using_where: bool,
    pub(super) covering: bool,
    pub(super) join_buffer: bool,
}

/// MySQL's default selectivity of a condition.
fn selectivity(cond: &Expr) -> f64 {
    match cond {
        Expr::Cmp(CmpOp::Eq, ..) | Expr::IsNull(_, false) => filter::EQUALITY,
        Expr::Cmp(CmpOp::Ne, ..) => 1.0 - filter::EQUALITY,
        Expr::Cmp(..) => filter::INEQUALITY,
        Expr::Between { negated: false, .. } => filter::BETWEEN,
        Expr::InList {
            list,
            negated: false,
            ..
        } => (list.len() as f64 * filter::EQUALITY).min(0.5),
        _ => filter::ALLPASS,
    }
}

impl Optimizer<'_> {
    /// Whether `t.col = v` can look up `col`'s index: a value known now must make a key
    /// bound for the column's type; a column of an earlier table must have the same type.
    fn ref_compatible(&self, t: usize, col: usize, v: &Expr) -> bool {
        let ty = self.select.tables[t].schema.columns[col].ty;
        match v {
            Expr::Column(c) if !self.const_tables.overlaps(TableMap::table(c.table)) => {
                self.select.tables[c.table].schema.columns[c.column].ty == ty
            }
            _ => match self.eval(v) {
                Ok(value) => key_bound(ty, &value).is_some(),
                // A parameter without a value, or an expression over earlier tables.
                Err(_) => true,
            },
        }
    }

    pub(super) fn table_plan(
        &self,
        t: usize,
        c: Choice,
        ranges: &[RangeCandidate],
        known: TableMap,
    ) -> TablePlan {
        let schema = &self.select.tables[t].schema;
        let mut possible: Vec<IndexId> = ranges.iter().map(|r| r.index).collect();
        for index in IndexId::all(schema) {
            let first = index.columns(schema)[0];
            if self.eq_value(t, first, known).is_some() && !possible.contains(&index) {
                possible.push(index);
            }
        }
        possible.sort();
        TablePlan {
            table: t,
            access: c.access,
            possible_keys: possible,
            rows: c.rows,
            filtered: c.filtered,
            cond: Vec::new(),
            on: Vec::new(),
            using_where: c.using_where,
            covering: c.covering,
            join_buffer: c.join_buffer,
            cost: c.cost,
        }
    }

    /// The cheapest access to `t` when `known` tables are before it and produce `fanout` rows.
    pub(super) fn best_access(
        &self,
        t: usize,
        known: TableMap,
        fanout: f64,
        joined: bool,
        ranges: &[RangeCandidate],
    ) -> Choice {
        let table = &self.select.tables[t];
        let schema = &table.schema;
        let me = TableMap::table(t);
        // The query's conditions checked at this table (not those on const tables alone).
        let here: Vec<usize> = (0..self.own)
            .filter(|&i| {
                let used = self.conds[i].used_tables();
                used.overlaps(me) && (known | me).contains(used) && self.select.applies(i, t)
            })
            .collect();
        let covering_of = |index: IndexId| index.covers(schema, &self.select.used_columns[t]);
        // The clustered index covers every column.
        let row_cost = |index: IndexId| match index {
            i if covering_of(i) => cost::ROW_READ,
            _ => cost::ROW_READ + cost::LOOKUP,
        };
        let finish = |access: Access,
                      rows: u64,
                      cost: f64,
                      consumed: &dyn Fn(usize) -> bool,
                      guaranteed: bool| {
            let left: Vec<usize> = here.iter().copied().filter(|&i| !consumed(i)).collect();
            let filtered = 100.0
                * left
                    .iter()
                    .map(|&i| selectivity(&self.conds[i]))
                    .product::<f64>();
            let covering = access
                .index()
                .is_some_and(|i| i != IndexId::Primary && covering_of(i));
            let depends = matches!(&access, Access::EqRef { .. })
                || matches!(&access, Access::Ref { key, .. } if key.iter().any(|k| k.used_tables().overlaps(!self.const_tables)));
            Choice {
                rows,
                filtered,
                cost,
                using_where: if guaranteed {
                    !left.is_empty()
                } else {
                    !here.is_empty()
                },
                covering,
                join_buffer: joined && !depends,
                access,
            }
        };
        let stats_rows = self.catalog.stats(&table.name).rows;
        let mut best: Option<Choice> = None;
        let mut consider = |c: Choice| {
            if best.as_ref().is_none_or(|b| c.cost < b.cost) {
                best = Some(c);
            }
        };
        // ref / eq_ref.
        for index in IndexId::all(schema) {
            let cols = index.columns(schema);
            let mut key = Vec::new();
            for &col in cols {
                match self.eq_value(t, col, known) {
                    Some(v) if self.ref_compatible(t, col, v) => key.push(v.clone()),
                    _ => break,
                }
            }
            if key.is_empty() {
                continue;
            }
            let parts = key.len();
            let depends = key
                .iter()
                .any(|k| k.used_tables().overlaps(!self.const_tables));
            let unique = index.is_unique(schema) && parts == cols.len();
            let rows = if unique {
                1
            } else if !depends {
                let mut values = Vec::new();
                for (k, &col) in key.iter().zip(cols) {
                    match self.key_value(t, col, k) {
                        Some(Ok(v)) => values.push(v),
                        _ => break,
                    }
                }
                if values.len() == parts {
                    self.catalog.records_in_range(
                        &table.name,
                        index,
                        &KeyRange::Prefix(Key::from(values)),
                    )
                } else {
                    self.catalog.rec_per_key(&table.name, index, parts).ceil() as u64
                }
            } else {
                self.catalog.rec_per_key(&table.name, index, parts).ceil() as u64
            };
            let lookups = if depends { fanout } else { 1.0 };
            let cost =
                lookups * (cost::SEEK + rows as f64 * (row_cost(index) + cost::ROW_EVALUATE));
            let used_cols = &cols[..parts];
            let consumed = |i: usize| {
                match &self.conds[i] {
                Expr::Cmp(CmpOp::Eq, a, b) => [a, b].iter().any(|s| {
                    matches!(s.as_ref(), Expr::Column(c) if c.table == t && used_cols.contains(&c.column))
                }),
                _ => false,
            }
            };
            let access = if unique && depends {
                Access::EqRef { index, key }
            } else {
                Access::Ref { index, key }
            };
            consider(finish(access, rows, cost, &consumed, true));
        }
        for r in ranges {
            let cost = r.ranges.len() as f64 * cost::SEEK
                + r.rows as f64 * (row_cost(r.index) + cost::ROW_EVALUATE);
            let access = Access::Range {
                index: r.index,
                ranges: r.ranges.clone(),
                parts: r.parts,
            };
            let cost = cost
                + if joined {
                    fanout * cost::ROW_EVALUATE
                } else {
                    0.0
                };
            consider(finish(access, r.rows, cost, &|i| r.consumed[i], false));
        }
        let probe = if joined {
            fanout * cost::ROW_EVALUATE
        } else {
            0.0
        };
        for index in IndexId::all(schema) {
            if index != IndexId::Primary && covering_of(index) {
                let cost =
                    stats_rows as f64 * (cost::INDEX_ENTRY_READ + cost::ROW_EVALUATE) + probe;
                consider(finish(
                    Access::Index { index },
                    stats_rows,
                    cost,
                    &|_| false,
                    false,
                ));
            }
        }
        let cost = stats_rows as f64 * (cost::ROW_READ + cost::ROW_EVALUATE) + probe;
        consider(finish(Access::All, stats_rows, cost, &|_| false, false));
        best.expect("ALL is always possible")
    }
}
