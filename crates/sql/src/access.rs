//! The planner's view of the engine: [`Catalog`] and [`Storage`] over one transaction, and a
//! catalog of schemas only (`SchemaCatalog`, for PREPARE, which binds but reads nothing);
//! with what the statements ask of a plan (the engine's error behind a planner error,
//! whether it read a table without an index).
//!
//! Everything goes through the transaction, so const tables read while planning see the same
//! snapshot (and take the same locks, for `FOR UPDATE`) as the rows the plan reads later.
//! Estimates come from the engine's index statistics (`Table::estimate_range`: the index's
//! histogram for a large range, an exact count up to [`waterline_txn::DIVE`] entries for a
//! small one), and rows per key prefix from a walk of the index redone after a tenth of it
//! changed.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::Arc;

use waterline_planner::bind::BoundTable;
use waterline_planner::exec::Storage;
use waterline_planner::{Catalog, IndexId, PlanError, TableStats};
use waterline_txn::{
    Isolation, Key, KeyRange, LockMark, LockMode, LockWait, ReadOptions, Row, Table, TableSchema,
    Transaction, TxnError, copy_row,
};

use crate::control::Watch;
use crate::error::SqlError;

/// A statement's derived tables (`FROM (SELECT ...) AS d`) and semi-join materializations
/// (`<subqueryN>`), materialized: each one's name, schema and rows, and for each secondary
/// index of its schema the rows' keys in order (a derived table has none; a
/// materialization has MySQL's `<auto_distinct_key>` over all its columns). A name here
/// hides a table's.
#[derive(Debug, Default)]
pub(crate) struct Derived {
    tables: Vec<Materialized>,
}

#[derive(Debug)]
struct Materialized {
    name: String,
    schema: Arc<TableSchema>,
    rows: Vec<Row>,
    /// Per secondary index: each row's key over it with the row's position, in key order.
    indexes: Vec<Vec<(Key, usize)>>,
}

impl Materialized {
    /// The rows of index `index` whose keys lie in `range` (coerced to the index's
    /// columns), in key order; with the positions of their keys in the index.
    fn in_range(&self, index: usize, range: &KeyRange) -> Result<&[(Key, usize)], PlanError> {
        let columns = &self.schema.indexes[index].columns;
        let range = (range.clone())
            .try_map(|k| self.schema.check_key(columns, k))
            .map_err(|e| PlanError::Catalog(e.to_string()))?;
        let keys = &self.indexes[index];
        let start = keys.partition_point(|(k, _)| range.is_before(k));
        let end = start + keys[start..].partition_point(|(k, _)| !range.is_after(k));
        Ok(&keys[start..end])
    }
}

impl Derived {
    /// Adds derived table `name`; its schema's secondary indexes are built over `rows`.
    pub(crate) fn add(&mut self, name: String, schema: TableSchema, rows: Vec<Row>) {
        let indexes = (schema.indexes.iter())
            .map(|index| {
                let mut keys: Vec<(Key, usize)> = (rows.iter().enumerate())
                    .map(|(i, row)| {
                        let mut key = Key::default();
                        index.columns.iter().for_each(|&c| key.push(&row[c]));
                        (key, i)
                    })
                    .collect();
                keys.sort();
                keys
            })
            .collect();
        self.tables.push(Materialized {
            name,
            schema: Arc::new(schema),
            rows,
            indexes,
        });
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    fn get(&self, name: &str) -> Option<&Materialized> {
        self.tables
            .iter()
            .find(|m| m.name.eq_ignore_ascii_case(name))
    }
}

/// A transaction seen as the planner's catalog and the executor's storage.
pub struct TxnAccess<'t> {
    database: &'t str,
    tables: &'t [Table],
    derived: Option<&'t Derived>,
    trx: RefCell<&'t mut Transaction>,
    lock: Option<LockMode>,
    /// What a locking read does with a row someone else holds.
    wait: LockWait,
    /// The engine error behind the last `PlanError::Catalog`, so the session can report it
    /// with its own code (a deadlock is 1213, not 1105).
    failure: RefCell<Option<TxnError>>,
    /// Whether the statement must stop (KILL, max_execution_time, the client gone).
    watch: Watch,
}

impl<'t> TxnAccess<'t> {
    /// Access through `trx` to `tables`; reads lock rows in `lock` mode if given.
    pub fn new(
        database: &'t str,
        tables: &'t [Table],
        trx: &'t mut Transaction,
        lock: Option<LockMode>,
        watch: Watch,
    ) -> TxnAccess<'t> {
        TxnAccess {
            watch,
            database,
            tables,
            derived: None,
            trx: RefCell::new(trx),
            lock,
            wait: LockWait::Wait,
            failure: RefCell::new(None),
        }
    }

    /// The same access, whose locking reads do `wait` with a row another transaction holds
    /// (`FOR UPDATE NOWAIT`, `FOR UPDATE SKIP LOCKED`).
    pub fn waiting(self, wait: LockWait) -> TxnAccess<'t> {
        TxnAccess { wait, ..self }
    }

    /// The same access, with the statement's derived tables.
    pub(crate) fn with_derived(self, derived: Option<&'t Derived>) -> TxnAccess<'t> {
        TxnAccess { derived, ..self }
    }

    fn derived(&self, name: &str) -> Option<&Materialized> {
        self.derived.and_then(|d| d.get(name))
    }

    /// The engine error a planner or executor failure came from, if it came from one.
    pub fn take_failure(&self) -> Option<TxnError> {
        self.failure.borrow_mut().take()
    }

    /// The table handle named `name`.
    pub fn handle(&self, name: &str) -> Option<&Table> {
        self.tables
            .iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    fn must(&self, name: &str) -> Result<&Table, PlanError> {
        self.handle(name).ok_or_else(|| {
            PlanError::NoSuchTable(waterline_planner::qualified(self.database, name))
        })
    }

    fn fail(&self, e: TxnError) -> PlanError {
        let message = e.to_string();
        *self.failure.borrow_mut() = Some(e);
        PlanError::Catalog(message)
    }

    fn options(&self, limit: Option<usize>) -> ReadOptions<'static> {
        ReadOptions {
            limit,
            lock: self.lock,
            wait: self.wait,
            ..ReadOptions::default()
        }
    }

    fn read(
        &self,
        table: &Table,
        index: IndexId,
        range: KeyRange,
        limit: Option<usize>,
    ) -> Result<Vec<Row>, PlanError> {
        let mut trx = self.trx.borrow_mut();
        let schema = table.schema();
        let options = match index {
            IndexId::Primary => self.options(limit),
            IndexId::Secondary(n) => self.options(limit).on_index(&schema.indexes[n].name),
        };
        trx.scan_with(table, range, options, |_, row| copy_row(row))
            .map_err(|e| self.fail(e))
    }
}

fn position(index: IndexId) -> Option<usize> {
    match index {
        IndexId::Primary => None,
        IndexId::Secondary(n) => Some(n),
    }
}

impl Catalog for TxnAccess<'_> {
    fn database(&self) -> &str {
        self.database
    }

    fn table(&self, table: &str) -> Option<Arc<TableSchema>> {
        if let Some(m) = self.derived(table) {
            return Some(Arc::clone(&m.schema));
        }
        self.handle(table).map(Table::shared_schema)
    }

    fn stats(&self, table: &str) -> TableStats {
        if let Some(m) = self.derived(table) {
            return TableStats {
                rows: m.rows.len() as u64,
            };
        }
        TableStats {
            rows: self
                .handle(table)
                .map_or(0, |t| t.approximate_rows() as u64),
        }
    }

    fn records_in_range(&self, table: &str, index: IndexId, range: &KeyRange) -> u64 {
        if let Some(m) = self.derived(table) {
            return match index {
                IndexId::Secondary(n) => m.in_range(n, range).map_or(0, |keys| keys.len() as u64),
                IndexId::Primary => m.rows.len() as u64,
            };
        }
        self.handle(table)
            .map_or(0, |t| t.estimate_range(position(index), range))
    }

    fn rec_per_key(&self, table: &str, index: IndexId, parts: usize) -> f64 {
        if let (Some(m), IndexId::Secondary(n)) = (self.derived(table), index) {
            let keys = &m.indexes[n];
            let distinct = (keys.windows(2))
                .filter(|w| w[0].0.common_prefix(&w[1].0) < parts)
                .count()
                + 1;
            return keys.len().max(1) as f64 / distinct as f64;
        }
        let Some(t) = self.handle(table) else {
            return 1.0;
        };
        t.index_stats(position(index)).rows_per_prefix(parts)
    }

    fn read_unique(
        &self,
        table: &str,
        index: IndexId,
        key: &Key,
    ) -> Result<Option<Row>, PlanError> {
        if let Some(m) = self.derived(table) {
            return Ok(match index {
                IndexId::Secondary(n) => (m.in_range(n, &KeyRange::Prefix(key.clone()))?)
                    .first()
                    .map(|&(_, i)| m.rows[i].clone()),
                IndexId::Primary => None,
            });
        }
        let t = self.must(table)?;
        // A point read that must not wait goes the scan's way, which skips or fails.
        if index == IndexId::Primary && self.wait == LockWait::Wait {
            let mut trx = self.trx.borrow_mut();
            let row = match self.lock {
                None => trx.get(t, key.clone()),
                Some(LockMode::Exclusive) => {
                    trx.get_with(t, key.clone(), ReadOptions::FOR_UPDATE, copy_row)
                }
                Some(LockMode::Shared) => {
                    trx.get_with(t, key.clone(), ReadOptions::FOR_SHARE, copy_row)
                }
            };
            return row.map_err(|e| self.fail(e));
        }
        Ok(self
            .read(t, index, KeyRange::Prefix(key.clone()), Some(1))?
            .pop())
    }
}

impl Storage for TxnAccess<'_> {
    fn scan(
        &self,
        table: &str,
        index: IndexId,
        range: &KeyRange,
        limit: Option<usize>,
    ) -> Result<Vec<Row>, PlanError> {
        if let Some(m) = self.derived(table) {
            let IndexId::Secondary(n) = index else {
                return Err(PlanError::Internal(format!(
                    "derived table {table} read by its primary key"
                )));
            };
            return Ok((m.in_range(n, range)?.iter())
                .take(limit.unwrap_or(usize::MAX))
                .map(|&(_, i)| m.rows[i].clone())
                .collect());
        }
        let t = self.must(table)?;
        self.read(t, index, range.clone(), limit)
    }

    fn scan_all(&self, table: &str, limit: Option<usize>) -> Result<Vec<Row>, PlanError> {
        if let Some(m) = self.derived(table) {
            return Ok((m.rows.iter())
                .take(limit.unwrap_or(usize::MAX))
                .cloned()
                .collect());
        }
        let t = self.must(table)?;
        self.read(t, IndexId::Primary, KeyRange::All, limit)
    }

    fn check(&self) -> Result<(), PlanError> {
        self.watch.check().map_err(|e| self.fail(e))
    }
}

/// READ COMMITTED's end of a locking read: gives back the row locks `trx` took since `mark`
/// on rows the statement did not select, so it keeps those of `rows` (the executor's joined
/// rows, by position in `from`) alone, as InnoDB's does (see
/// [`Transaction::unlock_rows_since`]; nothing happens at other levels). A table without a
/// primary key keeps every lock: its rows do not carry the hidden row id their locks name.
pub(crate) fn unlock_unselected(
    trx: &mut Transaction,
    mark: LockMark,
    tables: &[Table],
    from: &[BoundTable],
    rows: &[Vec<Row>],
) {
    if trx.isolation() != Isolation::ReadCommitted {
        return;
    }
    let mut done = HashSet::new();
    for table in tables {
        let Some(pk) = &table.schema().primary_key else {
            continue;
        };
        if !done.insert(table.id()) {
            continue;
        }
        let positions: Vec<usize> = (0..from.len())
            .filter(|&i| from[i].name.eq_ignore_ascii_case(table.name()))
            .collect();
        let selected: HashSet<Key> = rows
            .iter()
            .flat_map(|joined| positions.iter().map(move |&i| &joined[i]))
            // An outer join's NULL row (no columns) is no row of the table.
            .filter(|row| !row.is_empty())
            .map(|row| pk.iter().map(|&c| row[c].clone()).collect())
            .collect();
        trx.unlock_rows_since(mark, table, |key| selected.contains(key));
    }
}

/// Schemas without data: binds queries, estimates nothing (PREPARE binds, reads nothing).
pub(crate) struct SchemaCatalog<'a> {
    pub(crate) database: &'a str,
    pub(crate) tables: &'a [Table],
    /// The statement's derived tables, if it has any.
    pub(crate) derived: Option<&'a Derived>,
}

impl Catalog for SchemaCatalog<'_> {
    fn database(&self) -> &str {
        self.database
    }
    fn table(&self, table: &str) -> Option<Arc<TableSchema>> {
        if let Some(m) = self.derived.and_then(|d| d.get(table)) {
            return Some(Arc::clone(&m.schema));
        }
        self.tables
            .iter()
            .find(|t| t.name().eq_ignore_ascii_case(table))
            .map(Table::shared_schema)
    }
    fn stats(&self, _: &str) -> TableStats {
        TableStats::default()
    }
    fn records_in_range(&self, _: &str, _: IndexId, _: &KeyRange) -> u64 {
        0
    }
    fn rec_per_key(&self, _: &str, _: IndexId, _: usize) -> f64 {
        1.0
    }
    fn read_unique(&self, _: &str, _: IndexId, _: &Key) -> Result<Option<Row>, PlanError> {
        Ok(None)
    }
}

/// The planner error as the client should see it: the engine's error if one caused it.
pub(crate) fn plan_failure(access: &TxnAccess<'_>, e: PlanError) -> SqlError {
    match access.take_failure() {
        Some(txn) => SqlError::from(txn),
        None => SqlError::from(e),
    }
}

/// Whether `plan` reads a table whole, by its rows or a whole index (EXPLAIN's ALL and
/// index): MySQL's SERVER_QUERY_NO_INDEX_USED.
pub(crate) fn scans_without_index(plan: &waterline_planner::Plan) -> bool {
    plan.impossible.is_none()
        && plan.tables.iter().any(|t| {
            matches!(
                t.access,
                waterline_planner::Access::All | waterline_planner::Access::Index { .. }
            )
        })
}
