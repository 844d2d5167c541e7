//! A plan: for each table, in join order, how it is read (its access path), what is checked on
//! each row, and the estimates EXPLAIN shows.

use std::sync::Arc;

use waterline_types::{ColumnType, Key, KeyRange, Row, TableSchema};

use crate::PlannerMode;
use crate::bind::BoundSelect;
use crate::catalog::IndexId;
use crate::expr::Expr;
use crate::trace::Trace;

/// How a table is read (EXPLAIN's `type`), best first.
#[derive(Clone, Debug, PartialEq)]
pub enum Access {
    /// At most one row, found by a primary or unique key equal to constants and read while
    /// planning (`const`).
    Const {
        /// The unique index.
        index: IndexId,
        /// Its full key.
        key: Key,
        /// The row (`None`: no row, so the query returns nothing).
        row: Option<Row>,
    },
    /// One row per row of the earlier tables, by a unique key (`eq_ref`).
    EqRef {
        /// The unique index.
        index: IndexId,
        /// One expression per key part, over constants and earlier tables.
        key: Vec<Expr>,
    },
    /// The rows whose index prefix equals the key (`ref`).
    Ref {
        /// The index.
        index: IndexId,
        /// One expression per key part used.
        key: Vec<Expr>,
    },
    /// The rows in some key ranges of one index (`range`).
    Range {
        /// The index.
        index: IndexId,
        /// The ranges, ascending and disjoint.
        ranges: Vec<KeyRange>,
        /// The most key parts a range uses.
        parts: usize,
    },
    /// Every entry of a covering secondary index (`index`).
    Index {
        /// The index.
        index: IndexId,
    },
    /// Every row (`ALL`).
    All,
}

impl Access {
    /// EXPLAIN's `type`.
    pub fn kind(&self) -> &'static str {
        match self {
            Access::Const { .. } => "const",
            Access::EqRef { .. } => "eq_ref",
            Access::Ref { .. } => "ref",
            Access::Range { .. } => "range",
            Access::Index { .. } => "index",
            Access::All => "ALL",
        }
    }

    /// The index used, if any.
    pub fn index(&self) -> Option<IndexId> {
        match self {
            Access::Const { index, .. }
            | Access::EqRef { index, .. }
            | Access::Ref { index, .. }
            | Access::Range { index, .. }
            | Access::Index { index } => Some(*index),
            Access::All => None,
        }
    }

    /// How many key parts the access uses (for `key_len`).
    pub fn parts(&self, schema: &TableSchema) -> usize {
        match self {
            Access::Const { key, .. } => key.len(),
            Access::EqRef { key, .. } | Access::Ref { key, .. } => key.len(),
            Access::Range { parts, .. } => *parts,
            Access::Index { index } => index.columns(schema).len(),
            Access::All => 0,
        }
    }
}

/// An outer join's (or a semi-join's, an anti-join's) inner tables in a plan: positions
/// `first..=last` of [`Plan::tables`]. An outer join's nest may hold another's (`a LEFT
/// JOIN (b LEFT JOIN c ON ..) ON ..`); nests are otherwise apart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nest {
    /// What the nest does with an outer row.
    pub kind: crate::outer::JoinKind,
    /// The position of the first.
    pub first: usize,
    /// The position of the last.
    pub last: usize,
    /// Its join: its position in [`BoundSelect::outer_joins`](crate::BoundSelect), whose
    /// ON conditions ([`BoundSelect::on_of`](crate::BoundSelect::on_of)) decide its match.
    pub join: usize,
}

impl Nest {
    /// Whether plan position `pos` is one of its tables.
    pub fn holds(&self, pos: usize) -> bool {
        (self.first..=self.last).contains(&pos)
    }
}

/// One table of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct TablePlan {
    /// The table's FROM position.
    pub table: usize,
    /// How it is read.
    pub access: Access,
    /// Indexes some condition could use (EXPLAIN's `possible_keys`).
    pub possible_keys: Vec<IndexId>,
    /// Estimated rows read per lookup (per row of the earlier tables for `ref`/`eq_ref`).
    pub rows: u64,
    /// Estimated percentage of those rows that pass the conditions the access does not use.
    pub filtered: f64,
    /// Conditions checked on each row read (every condition that can be checked here; the
    /// ones the access already guarantees are checked again, which is cheap and safe), by
    /// position in the query's [`BoundSelect::conds`](crate::BoundSelect): a prepared
    /// statement's plan, made at every execution, copies none of them.
    pub cond: Vec<usize>,
    /// An outer join's ON conditions checked on each row read here (by position in the
    /// query's conditions): what decides whether the outer row found a match.
    pub on: Vec<usize>,
    /// Whether a condition the access does not guarantee remains ("Using where").
    pub using_where: bool,
    /// Whether the index holds every column the query reads ("Using index").
    pub covering: bool,
    /// Whether the table is read once and joined through a hash table (its access does not
    /// depend on the earlier tables).
    pub join_buffer: bool,
    /// Estimated cost of reading the table for the whole query (see [`crate::cost`]).
    pub cost: f64,
}

/// Why a query reads nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Impossible {
    /// A condition is false for every row ("Impossible WHERE").
    Where,
    /// A condition on const tables is false ("Impossible WHERE noticed after reading const tables").
    AfterConstTables,
    /// A const table has no matching row ("no matching row in const table").
    NoConstRow,
}

impl Impossible {
    /// EXPLAIN's `Extra`.
    pub fn message(self) -> &'static str {
        match self {
            Impossible::Where => "Impossible WHERE",
            Impossible::AfterConstTables => "Impossible WHERE noticed after reading const tables",
            Impossible::NoConstRow => "no matching row in const table",
        }
    }
}

/// A planned SELECT (or the WHERE of an UPDATE/DELETE, as a one-table select).
#[derive(Clone, Debug)]
pub struct Plan {
    /// The bound query (shared: a prepared statement binds once and plans each execution).
    pub select: Arc<BoundSelect>,
    /// The tables in join order: const tables first.
    pub tables: Vec<TablePlan>,
    /// Each outer join's, semi-join's and anti-join's inner tables in `tables`, in the
    /// order of the query's [`outer_joins`](crate::BoundSelect::outer_joins) (a semi-join
    /// whose tables are all const has none).
    pub nests: Vec<Nest>,
    /// Set if the query can return no row.
    pub impossible: Option<Impossible>,
    /// Whether rows come out in ORDER BY order from the index (no sort needed).
    pub ordered_by_index: bool,
    /// Whether the first table's index is read backwards for ORDER BY ... DESC.
    pub backward: bool,
    /// Whether GROUP BY needs a temporary table (rows do not arrive grouped).
    pub needs_temporary: bool,
    /// The mode the plan was made in.
    pub mode: PlannerMode,
    /// Estimated total cost.
    pub cost: f64,
    /// The optimizer trace.
    pub trace: Trace,
}

impl Plan {
    /// The plan of the table at FROM position `table`.
    pub fn table(&self, table: usize) -> Option<&TablePlan> {
        self.tables.iter().find(|t| t.table == table)
    }

    /// The estimated rows of the whole join: the product of each table's rows × filtered.
    pub fn estimated_rows(&self) -> f64 {
        self.tables
            .iter()
            .map(|t| t.rows as f64 * t.filtered / 100.0)
            .product()
    }
}

/// Bytes of a key part, as MySQL's EXPLAIN `key_len` counts them (utf8mb4: 4 bytes a
/// character; 2 more for a VARCHAR's length; 1 more if the column may be NULL).
pub fn key_part_len(ty: ColumnType, nullable: bool) -> usize {
    let bytes = match ty {
        ColumnType::TinyInt => 1,
        ColumnType::SmallInt => 2,
        ColumnType::MediumInt => 3,
        ColumnType::Int => 4,
        ColumnType::Unsigned(bytes) => usize::from(bytes),
        ColumnType::BigInt | ColumnType::Double => 8,
        ColumnType::Date => 3,
        // MySQL's DATETIME(fsp): 5 bytes, and 1 per 2 digits of a second.
        ColumnType::DateTime(fsp) => 5 + usize::from(fsp).div_ceil(2),
        ColumnType::Char(n) => 4 * n as usize,
        ColumnType::Varchar(n) => 4 * n as usize + 2,
        ColumnType::Decimal { precision, scale } => {
            // MySQL's binary DECIMAL: 4 bytes per 9 digits, on each side of the point.
            let digits = |d: u8| 4 * (d as usize / 9) + [0, 1, 1, 2, 2, 3, 3, 4, 4][d as usize % 9];
            digits(precision - scale) + digits(scale)
        }
    };
    bytes + usize::from(nullable)
}

/// EXPLAIN's `key_len` of the first `parts` columns of `index`.
pub fn key_len(schema: &TableSchema, index: IndexId, parts: usize) -> usize {
    index.columns(schema)[..parts]
        .iter()
        .map(|&c| key_part_len(schema.columns[c].ty, schema.columns[c].nullable))
        .sum()
}
