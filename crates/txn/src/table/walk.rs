//! Moving along an index entry by entry, as a locking walk does (see `trx/gaps.rs`): each
//! step a fresh seek, since the walk locks between two steps and looks again after.

use std::ops::Bound;

use super::*;

impl Table {
    /// The key of the first clustered entry above `key` (deleted or not), or `None`: the
    /// entry whose gap `key` falls in, the supremum's if none.
    pub(crate) fn key_after(&self, key: &Key) -> Option<Key> {
        self.0
            .clustered
            .ordered
            .lower_bound(Bound::Excluded(key))
            .map(|e| e.key().clone())
    }

    /// The key of the first clustered entry at or above where an ascending walk of `range`
    /// starts (in the range or past it), or `None`.
    pub(crate) fn first_key_from(&self, range: &KeyRange) -> Option<Key> {
        self.0
            .clustered
            .ordered
            .range((range.start(), Bound::Unbounded))
            .find(|e| range.after_start(e.key()))
            .map(|e| e.key().clone())
    }

    /// The key of the first clustered entry above every key of `range`, or `None`: where a
    /// descending walk of it starts its gap locks.
    pub(crate) fn first_key_past(&self, range: &KeyRange) -> Option<Key> {
        let ordered = &self.0.clustered.ordered;
        let entry = match range.end() {
            Bound::Unbounded => return None,
            Bound::Excluded(k) => ordered.lower_bound(Bound::Included(&k)),
            Bound::Included(k) => ordered.lower_bound(Bound::Excluded(&k)),
        };
        entry.map(|e| e.key().clone())
    }

    /// The key of the last clustered entry below `key` (all of them if `None`), or `None`.
    pub(crate) fn key_before(&self, key: Option<&Key>) -> Option<Key> {
        let ordered = &self.0.clustered.ordered;
        let entry = match key {
            Some(key) => ordered.upper_bound(Bound::Excluded(key)),
            None => ordered.back(),
        };
        entry.map(|e| e.key().clone())
    }

    /// Whether the clustered index has an entry with key `key` (deleted or not).
    pub(crate) fn has_entry(&self, key: &Key) -> bool {
        self.0.clustered.ordered.contains_key(key)
    }

    /// The entry of secondary index `index` above `entry` (whose gap `entry` falls in), or
    /// `None` (the supremum).
    pub(crate) fn index_entry_after(&self, index: usize, entry: &IndexEntry) -> Option<IndexEntry> {
        self.0.secondary[index]
            .lower_bound(Bound::Excluded(entry))
            .map(|e| e.value().clone())
    }

    /// The first entry of secondary index `index` at or above where an ascending walk of
    /// `range` starts (in the range or past it), or `None`.
    pub(crate) fn index_first_from(&self, index: usize, range: &KeyRange) -> Option<IndexEntry> {
        self.0.secondary[index]
            .range((entry_bound(range.start()), Bound::Unbounded))
            .find(|e| range.after_start(&e.value().0))
            .map(|e| e.value().clone())
    }

    /// The first entry of secondary index `index` above every key of `range`, or `None`.
    pub(crate) fn index_first_past(&self, index: usize, range: &KeyRange) -> Option<IndexEntry> {
        let set = &self.0.secondary[index];
        let entry = match entry_bound(range.end()) {
            Bound::Unbounded => return None,
            Bound::Excluded(k) => set.lower_bound(Bound::Included(&k)),
            Bound::Included(k) => set.lower_bound(Bound::Excluded(&k)),
        };
        entry.map(|e| e.value().clone())
    }

    /// The last entry of secondary index `index` below `entry` (all of them if `None`).
    pub(crate) fn index_entry_before(
        &self,
        index: usize,
        entry: Option<&IndexEntry>,
    ) -> Option<IndexEntry> {
        let set = &self.0.secondary[index];
        let found = match entry {
            Some(entry) => set.upper_bound(Bound::Excluded(entry)),
            None => set.back(),
        };
        found.map(|e| e.value().clone())
    }

    /// Whether secondary index `index` has `entry`.
    pub(crate) fn has_index_entry(&self, index: usize, entry: &IndexEntry) -> bool {
        self.0.secondary[index].contains(entry)
    }
}

/// A locking walk's view of one index and a range of it. A position is an entry: for the
/// clustered index its primary key (and an empty second key), for a secondary index its
/// secondary key and primary key.
pub(crate) struct Walk<'a> {
    pub(crate) table: &'a Table,
    /// `None`: the clustered index.
    pub(crate) index: Option<usize>,
    pub(crate) range: &'a KeyRange,
}

impl Walk<'_> {
    fn clustered(key: Option<Key>) -> Option<IndexEntry> {
        key.map(|k| (k, Key::default()))
    }

    /// The first entry at or above where an ascending walk starts (in the range or not).
    pub(crate) fn first(&self) -> Option<IndexEntry> {
        match self.index {
            None => Self::clustered(self.table.first_key_from(self.range)),
            Some(i) => self.table.index_first_from(i, self.range),
        }
    }

    /// The entry above `at`.
    pub(crate) fn after(&self, at: &IndexEntry) -> Option<IndexEntry> {
        match self.index {
            None => Self::clustered(self.table.key_after(&at.0)),
            Some(i) => self.table.index_entry_after(i, at),
        }
    }

    /// The first entry above the range.
    pub(crate) fn first_past(&self) -> Option<IndexEntry> {
        match self.index {
            None => Self::clustered(self.table.first_key_past(self.range)),
            Some(i) => self.table.index_first_past(i, self.range),
        }
    }

    /// The entry below `at` (the last one if `None`).
    pub(crate) fn before(&self, at: Option<&IndexEntry>) -> Option<IndexEntry> {
        match self.index {
            None => Self::clustered(self.table.key_before(at.map(|e| &e.0))),
            Some(i) => self.table.index_entry_before(i, at),
        }
    }

    /// Whether entry `at` is (still) in the index.
    pub(crate) fn has(&self, at: &IndexEntry) -> bool {
        match self.index {
            None => self.table.has_entry(&at.0),
            Some(i) => self.table.has_index_entry(i, at),
        }
    }

    /// Whether entry `at` lies above the range (an ascending walk stops there).
    pub(crate) fn past_end(&self, at: &IndexEntry) -> bool {
        !self.range.before_end(&at.0)
    }

    /// Whether entry `at` lies below the range (a descending walk stops there).
    pub(crate) fn below(&self, at: &IndexEntry) -> bool {
        self.range.is_before(&at.0)
    }

    /// Whether the walk is InnoDB's unique search: every column of a unique index (the
    /// clustered one, or a unique secondary one) equal to a value, none NULL. At most one
    /// live row can match, and it needs no gap lock.
    pub(crate) fn is_unique_search(&self) -> bool {
        let KeyRange::Prefix(key) = self.range else {
            return false;
        };
        let schema = self.table.schema();
        let columns = match self.index {
            None => schema.primary_key.as_ref().map_or(1, Vec::len),
            Some(i) if schema.indexes[i].unique => schema.indexes[i].columns.len(),
            Some(_) => return false,
        };
        key.len() == columns && !key.has_null()
    }

    /// Whether `row` still holds entry `at` (a secondary entry may be stale: its row's
    /// values there changed since).
    pub(crate) fn holds(&self, at: &IndexEntry, row: &[Value]) -> bool {
        match self.index {
            None => true,
            Some(i) => project(row, &self.table.schema().indexes[i].columns) == at.0,
        }
    }

    /// The row's primary key at entry `at`.
    pub(crate) fn pk<'e>(&self, at: &'e IndexEntry) -> &'e Key {
        match self.index {
            None => &at.0,
            Some(_) => &at.1,
        }
    }

    /// The gap below entry `at` (`None`: the supremum) as [`crate::lock::LockTarget::Gap`]
    /// names it: the index, and the entry's name.
    pub(crate) fn gap(&self, at: Option<&IndexEntry>) -> (Option<usize>, Option<Key>) {
        let name = at.map(|e| match self.index {
            None => e.0.clone(),
            Some(_) => entry_name(e),
        });
        (self.index, name)
    }
}
