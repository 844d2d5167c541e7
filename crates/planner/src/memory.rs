//! `MemCatalog`: tables held in memory with sorted indexes, a [`Catalog`] and a [`Storage`].
//! Its `records_in_range` counts exactly (two binary searches), so EXPLAIN's estimates on it
//! are the true counts, which makes scenario files deterministic. For tests, scenario files and
//! teaching; the engine's tables are planned through the server's catalog.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use waterline_types::{IndexStats, Key, KeyRange, Row, TableSchema};

use crate::PlanError;
use crate::catalog::{Catalog, IndexId, TableStats};
use crate::exec::Storage;

struct MemIndex {
    id: IndexId,
    /// (key, row position), sorted.
    entries: Vec<(Key, usize)>,
    /// `rec_per_key[p]`: rows per distinct value of the first `p + 1` columns.
    rec_per_key: Vec<f64>,
}

struct MemTable {
    schema: Arc<TableSchema>,
    rows: Vec<Row>,
    indexes: Vec<MemIndex>,
}

/// An in-memory catalog with data.
pub struct MemCatalog {
    database: String,
    tables: BTreeMap<String, MemTable>,
}

impl MemCatalog {
    /// An empty catalog for database `database`.
    pub fn new(database: &str) -> MemCatalog {
        MemCatalog {
            database: database.to_owned(),
            tables: BTreeMap::new(),
        }
    }

    /// Adds (or replaces) a table with its rows, and builds its indexes.
    pub fn load(&mut self, schema: TableSchema, rows: Vec<Row>) -> Result<(), PlanError> {
        schema
            .validate()
            .map_err(|e| PlanError::Catalog(e.to_string()))?;
        let rows = rows
            .into_iter()
            .map(|r| {
                schema
                    .check_row(r)
                    .map_err(|e| PlanError::Catalog(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let indexes = IndexId::all(&schema)
            .into_iter()
            .map(|id| {
                let cols = id.columns(&schema);
                let mut entries: Vec<(Key, usize)> = rows
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (cols.iter().map(|&c| r[c].clone()).collect(), i))
                    .collect();
                entries.sort();
                let stats = IndexStats::compute(entries.iter(), |e| &e.0, entries.len());
                let rec_per_key = (1..=cols.len()).map(|p| stats.rows_per_prefix(p)).collect();
                MemIndex {
                    id,
                    entries,
                    rec_per_key,
                }
            })
            .collect();
        self.tables.insert(
            schema.name.to_ascii_lowercase(),
            MemTable {
                schema: Arc::new(schema),
                rows,
                indexes,
            },
        );
        Ok(())
    }

    fn get(&self, table: &str) -> Result<&MemTable, PlanError> {
        self.tables
            .get(&table.to_ascii_lowercase())
            .ok_or_else(|| PlanError::NoSuchTable(crate::catalog::qualified(&self.database, table)))
    }

    /// Every row of `table`, in load order.
    pub fn rows(&self, table: &str) -> Result<&[Row], PlanError> {
        Ok(&self.get(table)?.rows)
    }

    fn span(
        &self,
        table: &str,
        index: IndexId,
        range: &KeyRange,
    ) -> Result<(&MemTable, &MemIndex, usize, usize), PlanError> {
        let t = self.get(table)?;
        let idx = t
            .indexes
            .iter()
            .find(|i| i.id == index)
            .ok_or_else(|| PlanError::Internal(format!("{table} has no index {index:?}")))?;
        let (lo, hi) = match range {
            KeyRange::All => (Bound::Unbounded, Bound::Unbounded),
            KeyRange::Prefix(p) => (Bound::Included(p.clone()), Bound::Included(p.clone())),
            KeyRange::Between(lo, hi) => (lo.clone(), hi.clone()),
        };
        let below = |k: &Key| match &lo {
            Bound::Included(p) => k.cmp_prefix(p).is_lt(),
            Bound::Excluded(p) => k.cmp_prefix(p).is_le(),
            Bound::Unbounded => false,
        };
        let above = |k: &Key| match &hi {
            Bound::Included(p) => k.cmp_prefix(p).is_gt(),
            Bound::Excluded(p) => k.cmp_prefix(p).is_ge(),
            Bound::Unbounded => false,
        };
        let start = idx.entries.partition_point(|(k, _)| below(k));
        let end = idx.entries.partition_point(|(k, _)| !above(k)).max(start);
        Ok((t, idx, start, end))
    }
}

impl Catalog for MemCatalog {
    fn database(&self) -> &str {
        &self.database
    }

    fn table(&self, table: &str) -> Option<Arc<TableSchema>> {
        self.tables
            .get(&table.to_ascii_lowercase())
            .map(|t| Arc::clone(&t.schema))
    }

    fn stats(&self, table: &str) -> TableStats {
        TableStats {
            rows: self.get(table).map_or(0, |t| t.rows.len() as u64),
        }
    }

    fn records_in_range(&self, table: &str, index: IndexId, range: &KeyRange) -> u64 {
        self.span(table, index, range)
            .map_or(0, |(_, _, s, e)| (e - s) as u64)
    }

    fn rec_per_key(&self, table: &str, index: IndexId, parts: usize) -> f64 {
        let Ok(t) = self.get(table) else { return 1.0 };
        t.indexes
            .iter()
            .find(|i| i.id == index)
            .and_then(|i| i.rec_per_key.get(parts.saturating_sub(1)).copied())
            .unwrap_or(1.0)
    }

    fn read_unique(
        &self,
        table: &str,
        index: IndexId,
        key: &Key,
    ) -> Result<Option<Row>, PlanError> {
        let (t, idx, start, end) = self.span(table, index, &KeyRange::Prefix(key.clone()))?;
        Ok((start < end).then(|| t.rows[idx.entries[start].1].clone()))
    }
}

impl Storage for MemCatalog {
    fn scan(
        &self,
        table: &str,
        index: IndexId,
        range: &KeyRange,
        limit: Option<usize>,
    ) -> Result<Vec<Row>, PlanError> {
        let (t, idx, start, end) = self.span(table, index, range)?;
        Ok(idx.entries[start..end]
            .iter()
            .take(limit.unwrap_or(usize::MAX))
            .map(|(_, i)| t.rows[*i].clone())
            .collect())
    }

    fn scan_all(&self, table: &str, limit: Option<usize>) -> Result<Vec<Row>, PlanError> {
        let t = self.get(table)?;
        if t.schema.primary_key.is_some() {
            return self.scan(table, IndexId::Primary, &KeyRange::All, limit);
        }
        let n = limit.unwrap_or(usize::MAX);
        Ok(t.rows.iter().take(n).cloned().collect())
    }
}
