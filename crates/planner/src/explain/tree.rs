//! `EXPLAIN FORMAT=TREE`: MySQL 8.0's iterator tree, one iterator a line, each child
//! indented four spaces under its parent, with the estimated cost and rows of each.
//!
//! A plan joins left-deep: each table after the first is joined to the tables before it by a
//! nested loop (`Nested loop inner join`), or, when the plan reads it once and keeps its
//! rows, by probing them with each row before it (`Inner hash join`, the kept table under
//! `Hash`); an outer join's inner tables make a `left join`, a semi-join's a `semijoin`, an
//! anti-join's an `antijoin`. A table's conditions stand over its access as
//! `Filter: (...)`. Const tables were read while planning: they do not appear, and a plan
//! of const tables only is `Rows fetched before execution`. The steps after the join
//! (aggregate, sort, limit) are the SQL layer's to put on top ([`Node`]).

use std::fmt::Write as _;

use crate::expr::Expr;
use crate::outer::JoinKind;
use crate::plan::{Access, Plan, TablePlan};
use crate::range::describe;

/// One iterator: its text and its children.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// What it does, as MySQL words it, with its estimates.
    pub text: String,
    /// The iterators it reads from.
    pub children: Vec<Node>,
}

impl Node {
    /// An iterator over `children`.
    pub fn new(text: impl Into<String>, children: Vec<Node>) -> Node {
        Node {
            text: text.into(),
            children,
        }
    }

    /// The tree as EXPLAIN prints it: `-> text`, children four spaces in.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(0, &mut out);
        out
    }

    fn write(&self, depth: usize, out: &mut String) {
        let _ = writeln!(out, "{}-> {}", "    ".repeat(depth), self.text);
        for c in &self.children {
            c.write(depth + 1, out);
        }
    }
}

fn estimate(cost: f64, rows: f64) -> String {
    let rows = format!("{rows:.3}");
    let rows = rows.trim_end_matches('0').trim_end_matches('.');
    format!("(cost={cost:.2} rows={rows})")
}

/// The join's iterator tree of `plan`.
pub fn tree(plan: &Plan) -> Node {
    if let Some(why) = plan.impossible {
        return Node::new(format!("Zero rows ({})", why.message()), Vec::new());
    }
    let free: Vec<(usize, &TablePlan)> = plan
        .tables
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.access, Access::Const { .. }))
        .collect();
    if free.is_empty() {
        return Node::new("Rows fetched before execution", Vec::new());
    }
    let mut node: Option<Node> = None;
    let (mut cost, mut rows) = (0.0, 1.0);
    for (pos, tp) in free {
        let leaf = table(plan, tp);
        cost += tp.cost;
        let out = tp.rows as f64 * tp.filtered / 100.0;
        // A semi-join or anti-join passes each outer row on once at most.
        let once = (plan.nests.iter())
            .any(|n| n.kind != JoinKind::Left && (n.first..=n.last).contains(&pos));
        rows *= if once { out.min(1.0) } else { out };
        node = Some(match node {
            None => leaf,
            Some(before) => {
                let kind = plan.nests.iter().find(|n| n.first == pos).map(|n| n.kind);
                let how = match (tp.join_buffer, kind) {
                    (true, None) => "Inner hash join",
                    (true, Some(JoinKind::Left)) => "Left hash join",
                    (true, Some(JoinKind::Semi)) => "Hash semijoin",
                    (true, Some(JoinKind::Anti)) => "Hash antijoin",
                    (false, None) => "Nested loop inner join",
                    (false, Some(JoinKind::Left)) => "Nested loop left join",
                    (false, Some(JoinKind::Semi)) => "Nested loop semijoin",
                    (false, Some(JoinKind::Anti)) => "Nested loop antijoin",
                };
                // The table read once is kept (under `Hash`), the rows before it probe it.
                let children = if tp.join_buffer {
                    vec![before, Node::new("Hash", vec![leaf])]
                } else {
                    vec![before, leaf]
                };
                Node::new(format!("{how}  {}", estimate(cost, rows)), children)
            }
        });
    }
    node.unwrap_or_else(|| Node::new("Rows fetched before execution", Vec::new()))
}

/// One table's access, under a `Filter` of its conditions if it has any.
fn table(plan: &Plan, tp: &TablePlan) -> Node {
    let bound = &plan.select.tables[tp.table];
    let (alias, schema) = (&bound.alias, &bound.schema);
    let covering = if tp.covering {
        "Covering index"
    } else {
        "Index"
    };
    let key = |index: crate::IndexId, key: &[Expr]| {
        let cols = index.columns(schema);
        let parts: Vec<String> = key
            .iter()
            .zip(cols)
            .map(|(e, &c)| format!("{}={}", schema.columns[c].name, e))
            .collect();
        parts.join(", ")
    };
    let access = match &tp.access {
        Access::All => format!("Table scan on {alias}"),
        Access::Index { index } => {
            format!("{covering} scan on {alias} using {}", index.name(schema))
        }
        Access::Range { index, ranges, .. } => {
            let over: Vec<String> = ranges.iter().take(8).map(describe).collect();
            let more = if ranges.len() > 8 { " OR ..." } else { "" };
            format!(
                "{covering} range scan on {alias} using {} over ({}{more})",
                index.name(schema),
                over.join(") OR (")
            )
        }
        Access::Ref { index, key: k } => format!(
            "{covering} lookup on {alias} using {} ({})",
            index.name(schema),
            key(*index, k)
        ),
        Access::EqRef { index, key: k } => format!(
            "Single-row {} lookup on {alias} using {} ({})",
            if tp.covering {
                "covering index"
            } else {
                "index"
            },
            index.name(schema),
            key(*index, k)
        ),
        Access::Const { .. } => format!("Constant row from {alias}"),
    };
    let leaf = Node::new(
        format!("{access}  {}", estimate(tp.cost, tp.rows as f64)),
        Vec::new(),
    );
    let conds: Vec<String> = tp
        .on
        .iter()
        .chain(&tp.cond)
        .map(|&i| plan.select.conds[i].to_string())
        .collect();
    if conds.is_empty() {
        return leaf;
    }
    let rows = tp.rows as f64 * tp.filtered / 100.0;
    Node::new(
        format!(
            "Filter: ({})  {}",
            conds.join(" and "),
            estimate(tp.cost, rows)
        ),
        vec![leaf],
    )
}
