//! What the blocks of one statement with subqueries share while they are answered: the
//! [`Blocks`], EXPLAIN's rows or trees as they are made, and where each block stands.

use std::collections::HashSet;

use sqlparser::ast::{Expr as Ast, Query};
use waterline_planner::explain::{ExplainRow, Node};
use waterline_txn::{LockMode, Transaction};

use crate::error::SqlError;
use crate::select::{Explained, Format};
use crate::session::{Context, Response};

/// What the blocks of one statement share.
pub(super) struct Blocks<'a> {
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
    /// How a block is answered (`block.rs`'s `answer`)...
    pub(super) answer: Answer,
    /// ...and a UNION of blocks.
    pub(super) answer_union: AnswerUnion,
}

/// What block `q` (numbered, and of a kind) returns, read in the transaction; `None` when
/// the bool (run) is false. Handed down in the [`Blocks`], so that what runs inside a block
/// (its subqueries' resolution, a correlated subquery per row, a semi-join's
/// materialization) answers the blocks inside it without naming `block.rs`, which calls it:
/// the recursion is in one file.
pub(super) type Answer = fn(
    &mut Context<'_>,
    &mut Transaction,
    &mut Blocks<'_>,
    &Query,
    (usize, Kind),
    bool,
) -> Result<Option<Response>, SqlError>;

/// What a UNION of blocks returns, each SELECT with the given number of columns if one is
/// given.
pub(super) type AnswerUnion = fn(
    &mut Context<'_>,
    &mut Transaction,
    &mut Blocks<'_>,
    &Query,
    (usize, Kind),
    Option<usize>,
) -> Result<Response, SqlError>;

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
    pub(super) fn add(
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
    pub(super) fn union_result(&mut self, ids: &[String]) {
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
