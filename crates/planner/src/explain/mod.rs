//! EXPLAIN in MySQL's tabular form, and as its iterator tree (`FORMAT=TREE`, [`tree`]).

mod tree;

pub use tree::{Node, tree};

use std::fmt::Write as _;

use crate::catalog::Catalog;
use crate::expr::Expr;
use crate::outer::JoinKind;
use crate::plan::{Access, Plan, TablePlan, key_len};
use crate::table_map::TableMap;

/// The columns of an EXPLAIN row, in MySQL's order.
pub const COLUMNS: [&str; 11] = [
    "id",
    "select_type",
    "table",
    "type",
    "possible_keys",
    "key",
    "key_len",
    "ref",
    "rows",
    "filtered",
    "Extra",
];

/// One row of EXPLAIN; `None` prints as NULL.
#[derive(Clone, Debug, PartialEq)]
pub struct ExplainRow {
    /// The values, one per [`COLUMNS`] entry.
    pub values: [Option<String>; 11],
}

impl ExplainRow {
    /// The value of column `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        let i = COLUMNS.iter().position(|c| *c == name)?;
        self.values[i].as_deref()
    }
}

/// The EXPLAIN rows of a plan of a statement of one query block.
pub fn explain(plan: &Plan, catalog: &dyn Catalog) -> Vec<ExplainRow> {
    explain_block(plan, catalog, 1, "SIMPLE")
}

/// The EXPLAIN rows of query block number `id` of a statement, of `select_type` (`SIMPLE`,
/// `PRIMARY`, `SUBQUERY`, `DERIVED`).
pub fn explain_block(
    plan: &Plan,
    catalog: &dyn Catalog,
    id: usize,
    select_type: &str,
) -> Vec<ExplainRow> {
    let head = [Some(id.to_string()), Some(select_type.to_owned())];
    if let Some(why) = plan.impossible {
        let mut values: [Option<String>; 11] = Default::default();
        values[..2].clone_from_slice(&head);
        values[10] = Some(why.message().to_owned());
        return vec![ExplainRow { values }];
    }
    if plan.tables.is_empty() {
        let mut values: [Option<String>; 11] = Default::default();
        values[..2].clone_from_slice(&head);
        values[10] = Some("No tables used".to_owned());
        return vec![ExplainRow { values }];
    }
    let const_tables = plan
        .tables
        .iter()
        .filter(|t| matches!(t.access, Access::Const { .. }))
        .fold(TableMap::EMPTY, |m, t| m | TableMap::table(t.table));
    let first_free = plan
        .tables
        .iter()
        .position(|t| !matches!(t.access, Access::Const { .. }));
    plan.tables
        .iter()
        .enumerate()
        .map(|(pos, tp)| {
            let schema = &plan.select.tables[tp.table].schema;
            let index = tp.access.index();
            let names = |list: &[crate::IndexId]| {
                (!list.is_empty()).then(|| {
                    list.iter()
                        .map(|i| i.name(schema))
                        .collect::<Vec<_>>()
                        .join(",")
                })
            };
            let key_len = index.and_then(|i| {
                let parts = tp.access.parts(schema);
                (parts > 0).then(|| key_len(schema, i, parts).to_string())
            });
            let mut extra = Vec::new();
            if tp.using_where {
                extra.push("Using where");
            }
            if tp.covering && !matches!(tp.access, Access::Const { .. }) {
                extra.push("Using index");
            }
            if Some(pos) == first_free {
                if plan.backward {
                    extra.push("Backward index scan");
                }
                if plan.needs_temporary {
                    extra.push("Using temporary");
                }
                if !plan.ordered_by_index {
                    extra.push("Using filesort");
                }
            }
            if tp.join_buffer
                && matches!(
                    tp.access,
                    Access::All | Access::Index { .. } | Access::Range { .. }
                )
            {
                extra.push("Using join buffer (hash join)");
            }
            // A semi-join's last table: the outer row goes on at its first match, back to
            // the table before the nest (MySQL's FirstMatch); an anti-join's: its first
            // match drops the outer row.
            let first_match;
            match plan
                .nests
                .iter()
                .find(|n| n.last == pos)
                .map(|n| (n.kind, n.first))
            {
                Some((JoinKind::Semi, first)) => {
                    // The nearest table before it that is not in another semi-join.
                    let back = (0..first).rev().find(|&p| {
                        !(plan.nests.iter())
                            .any(|n| n.kind == JoinKind::Semi && (n.first..=n.last).contains(&p))
                    });
                    first_match = match back {
                        Some(before) => {
                            let t = plan.tables[before].table;
                            format!("FirstMatch({})", plan.select.tables[t].alias)
                        }
                        None => "FirstMatch".to_owned(),
                    };
                    extra.push(&first_match);
                }
                Some((JoinKind::Anti, _)) => extra.push("Not exists"),
                _ => {}
            }
            ExplainRow {
                values: [
                    head[0].clone(),
                    head[1].clone(),
                    Some(plan.select.tables[tp.table].alias.clone()),
                    Some(tp.access.kind().into()),
                    names(&tp.possible_keys),
                    index.map(|i| i.name(schema).to_owned()),
                    key_len,
                    refs(tp, catalog, const_tables),
                    Some(tp.rows.to_string()),
                    Some(format!("{:.2}", tp.filtered)),
                    (!extra.is_empty()).then(|| extra.join("; ")),
                ],
            }
        })
        .collect()
}

/// EXPLAIN's `ref`: per key part, `const` (a constant or a const table's column), the earlier
/// table's column as `db.table.column`, or `func`.
fn refs(tp: &TablePlan, catalog: &dyn Catalog, const_tables: TableMap) -> Option<String> {
    let key: Vec<String> = match &tp.access {
        Access::Const { key, .. } => (0..key.len()).map(|_| "const".to_owned()).collect(),
        Access::EqRef { key, .. } | Access::Ref { key, .. } => key
            .iter()
            .map(|e| match e {
                e if const_tables.contains(e.used_tables()) => "const".to_owned(),
                Expr::Column(c) => format!("{}.{}", catalog.database(), c.name),
                _ => "func".to_owned(),
            })
            .collect(),
        _ => return None,
    };
    Some(key.join(","))
}

/// The rows as MySQL's client prints a result: a box of `+---+`, `| x |` lines.
pub fn table(rows: &[ExplainRow]) -> String {
    let cell = |v: &Option<String>| v.clone().unwrap_or_else(|| "NULL".to_owned());
    let mut widths: Vec<usize> = COLUMNS.iter().map(|c| c.len()).collect();
    for r in rows {
        for (w, v) in widths.iter_mut().zip(&r.values) {
            *w = (*w).max(cell(v).len());
        }
    }
    let rule: String = widths
        .iter()
        .fold("+".to_owned(), |s, w| s + &"-".repeat(w + 2) + "+");
    let mut out = String::new();
    let line = |out: &mut String, cells: Vec<String>| {
        let mut s = "|".to_owned();
        for (c, w) in cells.iter().zip(&widths) {
            let _ = write!(s, " {c:<w$} |");
        }
        out.push_str(&s);
        out.push('\n');
    };
    out.push_str(&rule);
    out.push('\n');
    line(&mut out, COLUMNS.iter().map(|c| (*c).to_owned()).collect());
    out.push_str(&rule);
    out.push('\n');
    for r in rows {
        line(&mut out, r.values.iter().map(cell).collect());
    }
    out.push_str(&rule);
    out.push('\n');
    out
}
