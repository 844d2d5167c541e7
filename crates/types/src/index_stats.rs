//! Index statistics for planners, kept per index and recomputed only when the index has
//! changed by a tenth, as InnoDB's persistent statistics are (`innodb_stats_auto_recalc`
//! recalculates a table once 10% of its rows changed).
//!
//! Planning asks two questions many times per second: how many rows share a key prefix
//! (`rec_per_key`), and how many entries fall in a range (`records_in_range`). Answering
//! either by walking the index on every statement cost the SQL backend about a third of its
//! time under TPC-C (StockLevel's `s_w_id = ?` counted 100,000 STOCK entries per query). So:
//!
//! - **distinct prefixes**: one walk of the whole index counts the distinct values of every
//!   key prefix; rows per prefix is entries / distinct.
//! - **an equi-depth histogram**: the same walk keeps every `step`-th key; the entries in a
//!   range are about `step` times the kept keys inside it.
//! - **a short dive for small ranges**: [``Table::estimate_range` (in the engine)`] takes the
//!   histogram's answer for a large range, and counts a small one exactly up to [`DIVE`]
//!   entries, so small ranges (a customer's orders, one last name) stay exact.
//!
//! The walk sees physical entries (deleted or not yet purged ones too), like InnoDB's
//! sampling: these are estimates.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use crate::key::Key;
use crate::range::KeyRange;

/// Entries a range estimate counts exactly before it turns to the histogram.
pub const DIVE: usize = 256;

/// Keys kept by the histogram (at most; fewer for a small index).
const BUCKETS: usize = 1024;

/// An index's statistics, as of one walk.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexStats {
    /// Entries walked.
    pub entries: u64,
    /// `distinct[p - 1]`: distinct values of the first `p` key columns.
    distinct: Vec<u64>,
    /// Every `step`-th key, ascending (the first key is kept).
    boundaries: Vec<Key>,
    step: u64,
}

impl IndexStats {
    /// Statistics over the index `entries` (ascending by `key_of`), which number about
    /// `len` (a hint to size the histogram; the walk counts them anyway). Keys are borrowed
    /// from the entries: only the histogram's copy them. The engine's tables call it; so can
    /// any other catalog over sorted keys.
    pub fn compute<E>(
        entries: impl Iterator<Item = E>,
        key_of: impl Fn(&E) -> &Key,
        len: usize,
    ) -> IndexStats {
        let step = (len / BUCKETS).max(1) as u64;
        let mut distinct: Vec<u64> = Vec::new();
        let mut boundaries = Vec::new();
        let mut last: Option<E> = None;
        let mut count = 0u64;
        for entry in entries {
            let key = key_of(&entry);
            let parts = key.len();
            if distinct.len() < parts {
                distinct.resize(parts, 0);
            }
            // The first column where this key differs from the last: every longer prefix is new.
            let same = last.as_ref().map_or(0, |l| key_of(l).common_prefix(key));
            for d in distinct.iter_mut().take(parts).skip(same) {
                *d += 1;
            }
            if count.is_multiple_of(step) {
                boundaries.push(key.clone());
            }
            count += 1;
            last = Some(entry);
        }
        let entries = count;
        IndexStats {
            entries,
            distinct,
            boundaries,
            step,
        }
    }

    /// Rows per distinct value of the first `parts` columns (MySQL's `rec_per_key`); 1.0
    /// for an empty index.
    pub fn rows_per_prefix(&self, parts: usize) -> f64 {
        let distinct = match parts.min(self.distinct.len()) {
            0 => 1,
            p => self.distinct[p - 1].max(1),
        };
        (self.entries as f64 / distinct as f64).max(1.0)
    }

    /// About how many entries fall in `range`: the histogram's kept keys inside it, times
    /// the step.
    pub fn estimate(&self, range: &KeyRange) -> u64 {
        let first = self.boundaries.partition_point(|k| range.is_before(k));
        let end = self.boundaries.partition_point(|k| !range.is_after(k));
        (end.saturating_sub(first) as u64 * self.step).min(self.entries)
    }

    /// Whether an index that now holds `len` entries has changed by more than a tenth since.
    fn stale(&self, len: usize) -> bool {
        let then = self.entries as usize;
        len.abs_diff(then) > then / 10
    }
}

/// One index's cached statistics.
#[derive(Debug, Default)]
pub struct StatsSlot {
    current: Mutex<Option<Arc<IndexStats>>>,
    /// Set while one planner recomputes: the others use the stale statistics meanwhile.
    refreshing: AtomicBool,
}

impl StatsSlot {
    /// The statistics, recomputed with `walk` if there are none or the index (now `len`
    /// entries) changed by a tenth.
    pub fn get(&self, len: usize, walk: impl FnOnce() -> IndexStats) -> Arc<IndexStats> {
        let current = self.current.lock().clone();
        match current {
            Some(stats) if !stats.stale(len) => stats,
            // Acquire/Release: the flag only elects one refresher; the mutex publishes.
            Some(stale)
                if self
                    .refreshing
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_err() =>
            {
                stale
            }
            _ => {
                let fresh = self.refresh(walk);
                self.refreshing.store(false, Ordering::Release);
                fresh
            }
        }
    }

    /// The statistics recomputed with `walk` now, whatever changed (ANALYZE TABLE).
    pub fn refresh(&self, walk: impl FnOnce() -> IndexStats) -> Arc<IndexStats> {
        let fresh = Arc::new(walk());
        *self.current.lock() = Some(Arc::clone(&fresh));
        fresh
    }
}

#[cfg(test)]
mod tests {
    use std::ops::Bound;

    use super::*;

    fn k(values: &[i64]) -> Key {
        Key::from(
            values
                .iter()
                .map(|&v| crate::Value::Int(v))
                .collect::<Vec<_>>(),
        )
    }

    /// 10 warehouses x 1,000 items, as STOCK's primary key.
    fn stock() -> IndexStats {
        let keys: Vec<Key> = (1..=10)
            .flat_map(|w| (1..=1000).map(move |i| k(&[w, i])))
            .collect();
        IndexStats::compute(keys.iter(), |k| k, 10_000)
    }

    #[test]
    fn distinct_prefixes_give_rows_per_key() {
        let stats = stock();
        assert_eq!(stats.entries, 10_000);
        assert_eq!(stats.rows_per_prefix(1), 1000.0);
        assert_eq!(stats.rows_per_prefix(2), 1.0);
        assert_eq!(stats.rows_per_prefix(0), 10_000.0);
        let empty: [Key; 0] = [];
        assert_eq!(
            IndexStats::compute(empty.iter(), |k| k, 0).rows_per_prefix(1),
            1.0
        );
    }

    #[test]
    fn the_histogram_estimates_ranges_within_a_bucket_or_two() {
        let stats = stock();
        let close = |range: KeyRange, exact: u64| {
            let got = stats.estimate(&range);
            assert!(
                got.abs_diff(exact) <= 2 * stats.step,
                "{range:?}: {got} vs {exact}"
            );
        };
        close(KeyRange::Prefix(k(&[3])), 1000);
        // A prefix past the first boundaries (a walk checks only the keys from its start,
        // the binary search checks keys below the range too).
        for w in 1..=10 {
            close(KeyRange::Prefix(k(&[w])), 1000);
            close(KeyRange::Prefix(k(&[w, 7])), 1);
        }
        close(KeyRange::All, 10_000);
        close(KeyRange::Prefix(k(&[11])), 0);
        close(
            KeyRange::Between(Bound::Included(k(&[2, 500])), Bound::Excluded(k(&[5]))),
            2501,
        );
        close(
            KeyRange::Between(Bound::Excluded(k(&[9])), Bound::Unbounded),
            1000,
        );
    }

    #[test]
    fn a_key_prefix_is_estimated_wherever_it_lies() {
        // CUSTOMER's primary key: one warehouse, 10 districts x 3,000 customers.
        let keys: Vec<Key> = (1..=10)
            .flat_map(|d| (1..=3000).map(move |c| k(&[1, d, c])))
            .collect();
        let stats = IndexStats::compute(keys.iter(), |k| k, keys.len());
        for d in 1..=10 {
            let got = stats.estimate(&KeyRange::Prefix(k(&[1, d])));
            assert!(got.abs_diff(3000) <= 2 * stats.step, "district {d}: {got}");
        }
        assert_eq!(stats.estimate(&KeyRange::Prefix(k(&[1, 11]))), 0);
        assert_eq!(stats.estimate(&KeyRange::Prefix(k(&[0]))), 0);
    }

    #[test]
    fn statistics_are_recomputed_after_a_tenth_changed() {
        let slot = StatsSlot::default();
        let walks = std::cell::Cell::new(0);
        let walk = |n: usize| {
            walks.set(walks.get() + 1);
            let keys: Vec<Key> = (0..n as i64).map(|i| k(&[i])).collect();
            IndexStats::compute(keys.iter(), |k| k, n)
        };
        assert_eq!(slot.get(1000, || walk(1000)).entries, 1000);
        assert_eq!(
            slot.get(1090, || walk(1090)).entries,
            1000,
            "9% is not stale"
        );
        assert_eq!(slot.get(1101, || walk(1101)).entries, 1101);
        assert_eq!(walks.get(), 2);
    }
}
