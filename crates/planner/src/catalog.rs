//! What the planner needs to know about tables: their schemas, how many rows they hold, how
//! many keys fall in a range, and (for const tables) one row by a unique key.
//!
//! The server implements [`Catalog`] over the engine's tables; [`crate::MemCatalog`] is an
//! in-memory implementation for tests, scenario files and teaching.

use std::sync::Arc;

use waterline_types::{Key, KeyRange, Row, TableSchema};

use crate::PlanError;

/// An index of a table: the clustered primary key, or a secondary index by its position in
/// [`TableSchema::indexes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IndexId {
    /// The primary key (InnoDB's clustered index).
    Primary,
    /// `schema.indexes[n]`.
    Secondary(usize),
}

impl IndexId {
    /// Every index of `schema`: the primary key first (if the table has one).
    pub fn all(schema: &TableSchema) -> Vec<IndexId> {
        IndexId::iter(schema).collect()
    }

    /// [`IndexId::all`], without collecting them.
    pub fn iter(schema: &TableSchema) -> impl Iterator<Item = IndexId> {
        let primary = schema.primary_key.as_ref().map(|_| IndexId::Primary);
        primary
            .into_iter()
            .chain((0..schema.indexes.len()).map(IndexId::Secondary))
    }

    /// The index's column positions, in key order.
    pub fn columns(self, schema: &TableSchema) -> &[usize] {
        match self {
            IndexId::Primary => schema.primary_key.as_deref().unwrap_or(&[]),
            IndexId::Secondary(n) => &schema.indexes[n].columns,
        }
    }

    /// Whether two rows may not share a full key.
    pub fn is_unique(self, schema: &TableSchema) -> bool {
        match self {
            IndexId::Primary => true,
            IndexId::Secondary(n) => schema.indexes[n].unique,
        }
    }

    /// Whether reading this index gives every column `used` marks (a secondary entry holds
    /// its columns and the primary key's; the clustered index holds the whole row).
    pub fn covers(self, schema: &TableSchema, used: &[bool]) -> bool {
        let index = self.columns(schema);
        let primary = schema.primary_key.as_deref().unwrap_or(&[]);
        self == IndexId::Primary
            || used
                .iter()
                .enumerate()
                .all(|(c, &used)| !used || index.contains(&c) || primary.contains(&c))
    }

    /// The name EXPLAIN shows: `PRIMARY`, or the index's name.
    pub fn name(self, schema: &TableSchema) -> &str {
        match self {
            IndexId::Primary => "PRIMARY",
            IndexId::Secondary(n) => &schema.indexes[n].name,
        }
    }
}

/// Table statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableStats {
    /// The number of rows (an estimate is fine: InnoDB's is one).
    pub rows: u64,
}

/// `database.table`, as MySQL's messages name a table; `table` itself if it has its
/// database in its name already (the SQL layer names a table of a database other than its
/// home one `db.table`).
pub fn qualified(database: &str, table: &str) -> String {
    if table.contains('.') {
        table.to_owned()
    } else {
        format!("{database}.{table}")
    }
}

/// A table's own name, without the database `table` may have in its name (see
/// [`qualified`]): what a table is called in a query that gives it no alias.
pub fn own_name(table: &str) -> &str {
    table.split_once('.').map_or(table, |(_, t)| t)
}

/// The planner's view of the tables. Every method may be approximate except
/// [`Catalog::read_unique`], whose row is used as the const table's values.
pub trait Catalog {
    /// The current database's name (EXPLAIN's `ref` column prints `db.table.column`).
    fn database(&self) -> &str;

    /// The schema of `table`, if it exists (shared: a statement binds to it without a copy).
    fn table(&self, table: &str) -> Option<Arc<TableSchema>>;

    /// Statistics of `table`.
    fn stats(&self, table: &str) -> TableStats;

    /// How many keys of `index` fall in `range`, as InnoDB's `records_in_range`: count them up
    /// to a cap, or estimate. The range's bounds are key prefixes, in the index's column
    /// order, already coerced to the columns' types.
    fn records_in_range(&self, table: &str, index: IndexId, range: &KeyRange) -> u64;

    /// The average number of rows that share one value of `index`'s first `parts` columns
    /// (MySQL's `rec_per_key`), used for `ref` access whose key is not known at planning time.
    fn rec_per_key(&self, table: &str, index: IndexId, parts: usize) -> f64;

    /// The row whose unique `index` equals `key` (a full key), if any. The planner reads const
    /// tables with it, as MySQL does while optimizing.
    fn read_unique(&self, table: &str, index: IndexId, key: &Key)
    -> Result<Option<Row>, PlanError>;
}
