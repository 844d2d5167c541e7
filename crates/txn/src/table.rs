//! Tables: a clustered primary index (a concurrent ordered skip list from key to version
//! chain) and secondary indexes (ordered sets of `(secondary key, primary key)`).
//!
//! A secondary entry is added when a version with that key value is written and never
//! changed in place; readers recheck every hit against the clustered version they see
//! (InnoDB does the same for secondary index records it cannot prove visible). Purge drops an
//! entry once no remaining version of its row carries that value.

use std::ops::Bound;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use crossbeam_skiplist::SkipSet;
use smallvec::SmallVec;

use crate::KeyRange;
use crate::hash_index::{Clustered, hash_of};
use crate::index_stats::{DIVE, IndexStats, StatsSlot};
use crate::key::Key;
use crate::lock::{LockManager, gap_lock};
use crate::schema::{TableSchema, project};
use crate::table_id::TableId;
use crate::value::Value;
use crate::version::{Chain, RecordRef};

mod walk;

pub(crate) use walk::Walk;

/// An entry of a secondary index: the row's values in the index's columns, then its
/// primary key.
pub(crate) type IndexEntry = (Key, Key);

/// The key that names secondary entry `entry` in a gap lock: its secondary key, then its
/// primary key.
pub(crate) fn entry_name(entry: &IndexEntry) -> Key {
    let mut name = entry.0.clone();
    for value in entry.1.iter() {
        name.push(&value);
    }
    name
}

/// A bound on secondary keys as a bound on `(secondary key, primary key)` entries: an
/// entry sorts at or above `(k, no key)` exactly when its secondary key is at or above `k`.
fn entry_bound(bound: Bound<Key>) -> Bound<(Key, Key)> {
    match bound {
        Bound::Included(k) => Bound::Included((k, Key::default())),
        Bound::Excluded(k) => Bound::Excluded((k, Key::default())),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// One statistics slot per index: the clustered index, then the secondary ones.
fn stats_slots(schema: &TableSchema) -> Box<[StatsSlot]> {
    (0..=schema.indexes.len())
        .map(|_| StatsSlot::default())
        .collect()
}

/// A table: schema, clustered index, secondary indexes. Cheap to clone (a handle).
#[derive(Clone, Debug)]
pub struct Table(pub(crate) Arc<TableInner>);

/// A table's state. CREATE INDEX makes a new `TableInner` that shares the clustered index
/// and the existing secondary indexes with the old one and adds the new index; the old one
/// keeps a link to it (`successor`), so a transaction still holding the old handle keeps the
/// new index up to date when it writes.
#[derive(Debug)]
pub(crate) struct TableInner {
    pub(crate) id: TableId,
    pub(crate) schema: Arc<TableSchema>,
    pub(crate) clustered: Arc<Clustered>,
    /// One set per secondary index: `(secondary key, primary key)`.
    pub(crate) secondary: Vec<Arc<SkipSet<(Key, Key)>>>,
    /// The next hidden row id, for a table without a primary key (InnoDB's `DB_ROW_ID`).
    next_row_id: Arc<AtomicI64>,
    /// The table with one more index, once CREATE INDEX made it.
    successor: OnceLock<Table>,
    /// Set by DROP TABLE: the table is gone from the catalog's names (its id stays taken).
    dropped: AtomicBool,
    /// A temporary table ([`crate::Engine::create_temporary_table`]): in no catalog, and
    /// its changes are never logged.
    temporary: bool,
    /// Planner statistics: the clustered index's, then each secondary index's.
    stats: Box<[StatsSlot]>,
}

impl Table {
    pub(crate) fn new(id: TableId, schema: TableSchema) -> Table {
        Table::new_as(id, schema, false)
    }

    /// A temporary table (its id outside the catalog's).
    pub(crate) fn new_temporary(id: TableId, schema: TableSchema) -> Table {
        Table::new_as(id, schema, true)
    }

    fn new_as(id: TableId, schema: TableSchema, temporary: bool) -> Table {
        let stats = stats_slots(&schema);
        let secondary = schema
            .indexes
            .iter()
            .map(|_| Arc::new(SkipSet::new()))
            .collect();
        Table(Arc::new(TableInner {
            id,
            schema: Arc::new(schema),
            clustered: Arc::new(Clustered::default()),
            secondary,
            next_row_id: Arc::new(AtomicI64::new(1)),
            successor: OnceLock::new(),
            dropped: AtomicBool::new(false),
            temporary,
            stats,
        }))
    }

    /// CREATE INDEX: the same table with `schema` (this table's schema plus one index at the
    /// end), its entries built from every version of every row. The new index is linked as
    /// this handle's successor *before* the build, so a writer through this handle indexes
    /// into it too: a version pushed before the build reaches its record is found by the
    /// build, one pushed after is indexed by its writer (the record's latch orders the two).
    pub(crate) fn with_index(&self, schema: TableSchema) -> Table {
        let def = schema.indexes.last().expect("one index more").clone();
        let stats = stats_slots(&schema);
        let set = Arc::new(SkipSet::new());
        let mut secondary = self.0.secondary.clone();
        secondary.push(Arc::clone(&set));
        let next = Table(Arc::new(TableInner {
            id: self.0.id,
            schema: Arc::new(schema),
            clustered: Arc::clone(&self.0.clustered),
            secondary,
            next_row_id: Arc::clone(&self.0.next_row_id),
            successor: OnceLock::new(),
            dropped: AtomicBool::new(false),
            temporary: self.0.temporary,
            stats,
        }));
        let _ = self.0.successor.set(next.clone());
        for entry in self.0.clustered.ordered.iter() {
            for row in entry.value().rows() {
                set.get_or_insert((project(&row, &def.columns), entry.key().clone()));
            }
        }
        next
    }

    /// RENAME TABLE: the same rows and indexes under `schema` (this table's, renamed).
    pub(crate) fn renamed(&self, schema: TableSchema) -> Table {
        let stats = stats_slots(&schema);
        Table(Arc::new(TableInner {
            id: self.0.id,
            schema: Arc::new(schema),
            clustered: Arc::clone(&self.0.clustered),
            secondary: self.0.secondary.clone(),
            next_row_id: Arc::clone(&self.0.next_row_id),
            successor: OnceLock::new(),
            dropped: AtomicBool::new(false),
            temporary: self.0.temporary,
            stats,
        }))
    }

    /// Whether both handles are the same table state (a table and its CREATE INDEX successor
    /// are not).
    pub(crate) fn same(&self, other: &Table) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Marks the table dropped.
    pub(crate) fn mark_dropped(&self) {
        // Relaxed: read under the catalog lock, which orders it.
        self.0.dropped.store(true, Ordering::Relaxed);
    }

    /// Whether DROP TABLE removed the table.
    pub fn is_dropped(&self) -> bool {
        self.0.dropped.load(Ordering::Relaxed)
    }

    /// The table's id.
    pub fn id(&self) -> TableId {
        self.0.id
    }

    /// Whether it is a temporary table: its creator's alone, in no catalog, never logged.
    pub fn is_temporary(&self) -> bool {
        self.0.temporary
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.0.schema.name
    }

    /// The table's schema.
    pub fn schema(&self) -> &TableSchema {
        &self.0.schema
    }

    /// The table's schema, shared: what a planner binds a statement to, without copying
    /// every column's name for each statement.
    pub fn shared_schema(&self) -> Arc<TableSchema> {
        Arc::clone(&self.0.schema)
    }

    /// Clustered index entries, including rows deleted or not yet purged: a statistic for
    /// planners and tests, not a count of visible rows.
    pub fn approximate_rows(&self) -> usize {
        self.0.clustered.len()
    }

    /// How many entries of an index fall in `range`, counted up to `cap`: the clustered index
    /// if `index` is `None`, else secondary index `index` (by position in the schema). Like
    /// InnoDB's `records_in_range`, it counts physical entries, visible to anyone or not (a
    /// row being deleted or updated may be counted twice), so it is an estimate for planners.
    ///
    /// # Panics
    /// If `index` is not an index of the table.
    pub fn records_in_range(&self, index: Option<usize>, range: &KeyRange, cap: usize) -> usize {
        // Counted in place: a copy of each key would cost more than the walk.
        match index {
            None => self.clustered_in(range).take(cap).count(),
            Some(i) => self.secondary_in(i, range).take(cap).count(),
        }
    }

    /// An index's statistics (clustered if `index` is `None`): cached, and recomputed by a
    /// walk of the whole index once its size moved by a tenth (see `index_stats.rs`).
    ///
    /// # Panics
    /// If `index` is not an index of the table.
    pub fn index_stats(&self, index: Option<usize>) -> Arc<IndexStats> {
        let slot = &self.0.stats[index.map_or(0, |i| i + 1)];
        let len = self.index_len(index);
        slot.get(len, || self.walk_stats(index, len))
    }

    /// An index's statistics from a walk of all its `len` entries.
    fn walk_stats(&self, index: Option<usize>, len: usize) -> IndexStats {
        match index {
            None => IndexStats::compute(self.0.clustered.ordered.iter(), |e| e.key(), len),
            Some(i) => IndexStats::compute(self.0.secondary[i].iter(), |e| &e.value().0, len),
        }
    }

    /// ANALYZE TABLE: every index's statistics recomputed now, by a walk of the whole index
    /// (as InnoDB's ANALYZE TABLE recomputes its persistent statistics), not when the index
    /// has changed by a tenth.
    pub fn analyze(&self) {
        for index in std::iter::once(None).chain((0..self.0.secondary.len()).map(Some)) {
            let len = self.index_len(index);
            self.0.stats[index.map_or(0, |i| i + 1)].refresh(|| self.walk_stats(index, len));
        }
    }

    /// Entries of an index (clustered if `index` is `None`), visible or not.
    fn index_len(&self, index: Option<usize>) -> usize {
        match index {
            None => self.0.clustered.len(),
            Some(i) => self.0.secondary[i].len(),
        }
    }

    /// About how many entries of an index fall in `range`, as InnoDB's `records_in_range`:
    /// from the index's histogram if that says the range is large, else counted exactly up
    /// to [`DIVE`] entries (small ranges, where the histogram is coarsest, stay exact).
    ///
    /// # Panics
    /// If `index` is not an index of the table.
    pub fn estimate_range(&self, index: Option<usize>, range: &KeyRange) -> u64 {
        let stats = self.index_stats(index);
        let len = self.index_len(index);
        // Scaled to the index's size now: it may have grown by up to a tenth since.
        let scaled = stats.estimate(range) as f64 * len as f64 / stats.entries.max(1) as f64;
        let estimate = scaled as u64;
        if estimate > 2 * DIVE as u64 {
            return estimate;
        }
        match self.records_in_range(index, range, DIVE) {
            counted if counted < DIVE => counted as u64,
            _ => estimate.max(DIVE as u64),
        }
    }

    /// The largest key of the clustered index, visible or not (to resume an AUTO_INCREMENT
    /// counter past every key ever written).
    pub fn last_key(&self) -> Option<Key> {
        self.0.clustered.ordered.back().map(|e| e.key().clone())
    }

    /// The largest key of secondary index `index` (by position in the schema), visible or
    /// not; `None` if it is empty.
    ///
    /// # Panics
    /// If `index` is not an index of the table.
    pub fn last_index_key(&self, index: usize) -> Option<Key> {
        self.0.secondary[index].back().map(|e| e.value().0.clone())
    }

    /// The primary key of `row`, or a new hidden row id for a table without one.
    pub(crate) fn primary_key_of(&self, row: &[Value]) -> Key {
        match &self.0.schema.primary_key {
            Some(columns) => project(row, columns),
            // Relaxed: only uniqueness matters.
            None => Key::one(self.0.next_row_id.fetch_add(1, Ordering::Relaxed)),
        }
    }

    /// Recovery: a row with primary key `key` exists, so a hidden row id must never hand out
    /// `key` (or anything below it) again.
    pub(crate) fn saw_key(&self, key: &Key) {
        if self.0.schema.primary_key.is_none()
            && let [Value::Int(id)] = key.values().as_slice()
        {
            self.0
                .next_row_id
                .fetch_max(id.saturating_add(1), Ordering::Relaxed);
        }
    }

    /// The primary key's columns (the hidden row id counts as column 0 of a one-column key).
    pub(crate) fn check_primary_key(&self, key: Key) -> Result<Key, crate::TxnError> {
        match &self.0.schema.primary_key {
            Some(columns) => Ok(self.0.schema.check_key(columns, key)?),
            None => Ok(key),
        }
    }

    /// The record for `key`, if the clustered index has one.
    pub(crate) fn record(&self, key: &Key) -> Option<RecordRef> {
        self.0.clustered.get(key, hash_of(key))
    }

    /// Prefetches what lookups of keys with these [`hash_of`]s will read (see
    /// `prefetch.rs`).
    pub(crate) fn prefetch(&self, hashes: &[u64]) {
        self.0.clustered.prefetch(hashes);
    }

    /// [`Table::record`], for a caller that has the key's [`hash_of`] already (it locked
    /// the row by it).
    pub(crate) fn record_hashed(&self, key: &Key, hash: u64) -> Option<RecordRef> {
        self.0.clustered.get(key, hash)
    }

    /// The record for `key` (whose [`hash_of`] is `hash`), created empty if absent. The
    /// caller holds the row lock; it must check `removed` under the record's latch and call
    /// again if set.
    pub(crate) fn record_for_insert(&self, key: &Key, hash: u64) -> RecordRef {
        self.0.clustered.get_or_insert(key, hash)
    }

    /// Unlinks `record` from the clustered index if it is still the entry for its key.
    pub(crate) fn unlink(&self, record: &RecordRef) {
        self.0.clustered.remove(record);
    }

    /// The newest handle of this table: the one with every index CREATE INDEX has added.
    pub(crate) fn latest(&self) -> &Table {
        let mut table = self;
        while let Some(next) = table.0.successor.get() {
            table = next;
        }
        table
    }

    /// The secondary entries `row` needs that are not already there for `old`, the row it
    /// replaces (still the chain's head): an index whose columns the update leaves alone
    /// has the entry, kept by `old` until purge, which keeps it for `row` then. Each with
    /// its index's position. Call it on [`Table::latest`].
    pub(crate) fn entries_to_add(
        &self,
        row: &[Value],
        pk: &Key,
        old: Option<&[Value]>,
    ) -> SmallVec<[(usize, IndexEntry); 2]> {
        self.0
            .schema
            .indexes
            .iter()
            .enumerate()
            .filter(|(_, def)| old.is_none_or(|old| def.columns.iter().any(|&c| old[c] != row[c])))
            .map(|(i, def)| (i, (project(row, &def.columns), pk.clone())))
            .collect()
    }

    /// Adds entry `entry` to secondary index `index` (under the record's latch). Never with
    /// `insert`: on an existing entry it removes, then re-adds it, and a scan passing in
    /// between would miss a row that never left the index.
    pub(crate) fn add_entry(&self, index: usize, entry: IndexEntry) {
        self.0.secondary[index].get_or_insert(entry);
    }

    /// Clustered entries in `range`, ascending.
    fn clustered_in<'a>(
        &'a self,
        range: &'a KeyRange,
    ) -> impl Iterator<Item = crossbeam_skiplist::map::Entry<'a, Key, RecordRef>> {
        self.0
            .clustered
            .ordered
            .range((range.start(), Bound::Unbounded))
            .skip_while(|e| !range.after_start(e.key()))
            .take_while(|e| range.before_end(e.key()))
    }

    /// Primary keys of clustered entries in `range`, ascending.
    pub(crate) fn keys_in<'a>(
        &'a self,
        range: &'a KeyRange,
    ) -> impl Iterator<Item = (Key, RecordRef)> + 'a {
        self.clustered_in(range)
            .map(|e| (e.key().clone(), RecordRef::clone(e.value())))
    }

    /// Primary keys of clustered entries in `range`, descending: the walk starts at the
    /// range's high end, so `ORDER BY pk DESC LIMIT 1` reads one entry, not the range.
    pub(crate) fn keys_in_rev<'a>(
        &'a self,
        range: &'a KeyRange,
    ) -> impl Iterator<Item = (Key, RecordRef)> + 'a {
        self.0
            .clustered
            .ordered
            .range((range.start(), range.end()))
            .rev()
            .take_while(|e| !range.is_before(e.key()))
            .map(|e| (e.key().clone(), RecordRef::clone(e.value())))
    }

    /// Entries of secondary index `index` in `range`, ascending.
    fn secondary_in<'a>(
        &'a self,
        index: usize,
        range: &'a KeyRange,
    ) -> impl Iterator<Item = crossbeam_skiplist::set::Entry<'a, (Key, Key)>> {
        self.0.secondary[index]
            .range((entry_bound(range.start()), Bound::Unbounded))
            .skip_while(|e| !range.after_start(&e.value().0))
            .take_while(|e| range.before_end(&e.value().0))
    }

    /// `(secondary key, primary key)` entries of index `index` in `range`, descending (see
    /// [`Table::keys_in_rev`]).
    pub(crate) fn index_entries_rev<'a>(
        &'a self,
        index: usize,
        range: &'a KeyRange,
    ) -> impl Iterator<Item = (Key, Key)> + 'a {
        self.0.secondary[index]
            .range((entry_bound(range.start()), entry_bound(range.end())))
            .rev()
            .take_while(|e| !range.is_before(&e.value().0))
            .map(|e| e.value().clone())
    }

    /// `(secondary key, primary key)` entries of index `index` in `range`, ascending.
    pub(crate) fn index_entries<'a>(
        &'a self,
        index: usize,
        range: &'a KeyRange,
    ) -> impl Iterator<Item = (Key, Key)> + 'a {
        self.secondary_in(index, range).map(|e| e.value().clone())
    }

    /// Purges one record (see `purge.rs`): returns the versions unlinked, and what stays
    /// in an index although dead because a lock hangs on the gap below it (see
    /// [`Table::unlink_dead`]). A record left dead leaves the clustered index.
    pub(crate) fn purge_record(
        &self,
        record: &RecordRef,
        horizon: u64,
        locks: &LockManager,
        kept: &mut Vec<Kept>,
    ) -> u64 {
        let pk = &record.key;
        let purged = record.purge(horizon, |removed, rows| {
            self.unindex(pk, removed, rows, locks, kept);
        });
        let Some(purged) = purged else {
            return 0;
        };
        if purged.dead && !self.unlink_dead(record, locks) {
            kept.push(Kept::Record(self.clone(), RecordRef::clone(record)));
        }
        purged.versions
    }

    /// Unlinks a record purge found dead from the clustered index, unless an insert has
    /// brought it back since (under its latch, which an insert takes to revive it) or a
    /// transaction holds a lock on the gap below it: without the entry, that gap would merge
    /// into the one above, and an insert into it would pass the lock. InnoDB moves such
    /// locks to the next record instead (`lock_rec_inherit_to_gap`); here the entry stays
    /// until the locks are gone, and purge tries again. Returns whether it is done.
    pub(crate) fn unlink_dead(&self, record: &RecordRef, locks: &LockManager) -> bool {
        let chain = record.write();
        if !chain.removed {
            return true;
        }
        let (hash, key) = gap_lock(self.id(), None, Some(record.key.clone()));
        let done = locks.unless_gap_held(&key, hash, || self.unlink(record));
        drop(chain);
        done
    }

    /// Whether `record` is still its key's entry in the clustered index.
    pub(crate) fn is_indexed(&self, record: &RecordRef) -> bool {
        self.0
            .clustered
            .get(&record.key, hash_of(&record.key))
            .is_some_and(|r| RecordRef::ptr_eq(&r, record))
    }

    /// After undo popped a version with image `row` from `chain` (whose latch the caller
    /// holds): drops the secondary entries only that image had (see [`Table::unindex`]).
    pub(crate) fn unindex_undone(
        &self,
        pk: &Key,
        row: &[Value],
        chain: &Chain,
        locks: &LockManager,
        kept: &mut Vec<Kept>,
    ) {
        let rows = chain.rows();
        let rows: Vec<&[Value]> = rows.iter().map(Vec::as_slice).collect();
        self.unindex(pk, &[row], &rows, locks, kept);
    }

    /// Drops secondary entries of `removed` row images that no `rows` image shares, under
    /// the record's latch, except an entry with a lock on the gap below it, which stays
    /// (into `kept`) for purge to try again.
    fn unindex(
        &self,
        pk: &Key,
        removed: &[&[Value]],
        rows: &[&[Value]],
        locks: &LockManager,
        kept: &mut Vec<Kept>,
    ) {
        if let Some(next) = self.0.successor.get() {
            return next.unindex(pk, removed, rows, locks, kept);
        }
        for (i, def) in self.0.schema.indexes.iter().enumerate() {
            for row in removed {
                let shared = rows
                    .iter()
                    .any(|k| def.columns.iter().all(|&c| k[c] == row[c]));
                if shared {
                    continue;
                }
                let entry = (project(row, &def.columns), pk.clone());
                if !self.remove_entry(i, &entry, locks) {
                    kept.push(Kept::Entry(self.clone(), i, entry));
                }
            }
        }
    }

    /// Removes `entry` from secondary index `index` unless a lock hangs on the gap below it;
    /// says whether it is gone.
    fn remove_entry(&self, index: usize, entry: &IndexEntry, locks: &LockManager) -> bool {
        let (hash, key) = gap_lock(self.id(), Some(index), Some(entry_name(entry)));
        locks.unless_gap_held(&key, hash, || {
            self.0.secondary[index].remove(entry);
        })
    }

    /// Purge's next try at an entry a gap lock kept (see [`Table::unindex`]): removes it if
    /// no lock hangs on its gap now and no version of its row carries it again. Says
    /// whether it is done with it.
    pub(crate) fn retry_entry(
        &self,
        index: usize,
        entry: &IndexEntry,
        locks: &LockManager,
    ) -> bool {
        let columns = &self.0.schema.indexes[index].columns;
        match self.record(&entry.1) {
            Some(record) => {
                let chain = record.write();
                let rows = chain.rows();
                if rows.iter().any(|row| project(row, columns) == entry.0) {
                    return true;
                }
                self.remove_entry(index, entry, locks)
            }
            None => self.remove_entry(index, entry, locks),
        }
    }
}

/// What purge (or undo) left in an index although dead, because a lock hangs on the gap
/// below it: a clustered record, or a secondary entry with its index's position.
#[derive(Debug)]
pub(crate) enum Kept {
    Record(Table, RecordRef),
    Entry(Table, usize, IndexEntry),
}

impl Kept {
    /// Tries again to take it out of its index; says whether that is done.
    pub(crate) fn retry(&self, locks: &LockManager) -> bool {
        match self {
            Kept::Record(table, record) => table.unlink_dead(record, locks),
            Kept::Entry(table, index, entry) => table.retry_entry(*index, entry, locks),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(values: &[i64]) -> Key {
        values.iter().map(|&v| Value::Int(v)).collect()
    }

    #[test]
    fn prefix_bounds_behave_like_sql_ranges_on_an_index_prefix() {
        let range = KeyRange::Between(Bound::Included(k(&[2])), Bound::Included(k(&[3])));
        assert!(!range.contains(&k(&[1, 9])));
        assert!(range.contains(&k(&[2, 0])));
        assert!(range.contains(&k(&[3, 9])));
        assert!(!range.contains(&k(&[4])));
        let open = KeyRange::Between(Bound::Excluded(k(&[2])), Bound::Excluded(k(&[3])));
        assert!(!open.contains(&k(&[2, 5])));
        assert!(!open.contains(&k(&[3, 0])));
        let prefix = KeyRange::Prefix(k(&[1, 2]));
        assert!(prefix.contains(&k(&[1, 2, 3])));
        assert!(!prefix.contains(&k(&[1, 3])));
        assert!(!prefix.contains(&k(&[1])));
        assert!(KeyRange::All.contains(&k(&[])));
    }
}
