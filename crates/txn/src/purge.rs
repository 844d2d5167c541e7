//! Purge and its history list (InnoDB's `trx_sys->rseg_history`): every committed
//! transaction hands the records it modified to purge, tagged with its commit number, except
//! the rows it inserted new, which have no older version to cut (InnoDB, too, frees insert
//! undo at commit and hands only update undo to purge). A
//! purge pass takes the horizon (`horizon.rs`) and visits the records of every transaction
//! that committed below it, so its cost follows the writes to clean up, not the size of the
//! tables.
//!
//! ```text
//!  commit (no = 41) ──► history: [ (no 17, records) (no 23, ...) ... (no 41, ...) ]
//!                                   ▲ a pass pops from here while no < horizon
//!  visiting a record: unlink every version below the newest one committed before the
//!  horizon; a record whose newest version is a delete mark (or that a rollback emptied)
//!  leaves the clustered index, and index entries no remaining version carries go too.
//! ```
//!
//! A rolled-back transaction's emptied records (inserts it undid) are entered with number 0,
//! so the next pass removes them. With purge off and never called, the list only grows, as
//! InnoDB's history list length grows when purge lags.

use std::collections::VecDeque;

use parking_lot::Mutex;

use crate::lock::LockManager;
use crate::table::{Kept, Table};
use crate::version::RecordRef;

/// What one purge pass did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PurgeReport {
    /// The horizon it used: versions shadowed by a commit numbered below it were unlinked.
    pub horizon: u64,
    /// Versions unlinked.
    pub versions: u64,
}

/// A record to visit, with its table's position in the transaction's [`Tables`] (the
/// record may have left the index since, which the visit notices).
pub(crate) type Touched = (u32, RecordRef);

/// The tables a transaction changed, each held once: its undo records and history entries
/// name them by position. A handle per change would add and drop a reference on the table's
/// shared count at every write, a cache line all clients and purge would pass around.
pub(crate) type Tables = Vec<Table>;

/// One transaction's records, with the commit number they wait for.
#[derive(Debug)]
struct Entry {
    no: u64,
    tables: Tables,
    records: Vec<Touched>,
}

/// The history list. Entries arrive roughly in commit-number order (a transaction enters
/// after its commit is published); a pass stops at the first entry it may not visit yet.
#[derive(Debug, Default)]
pub(crate) struct History {
    list: Mutex<VecDeque<Entry>>,
    /// Dead records and entries left in their index because a gap lock hangs on them (see
    /// [`Table::unlink_dead`]): every pass tries them again.
    deferred: Mutex<Vec<Kept>>,
}

impl History {
    /// Enters `records` (deduplicated) of `tables` to be visited once the horizon passes
    /// `no`.
    pub(crate) fn push(&self, no: u64, tables: Tables, mut records: Vec<Touched>) {
        if records.is_empty() {
            return;
        }
        records.sort_by_key(|(_, record)| RecordRef::as_ptr(record));
        records.dedup_by(|a, b| RecordRef::ptr_eq(&a.1, &b.1));
        self.list.lock().push_back(Entry {
            no,
            tables,
            records,
        });
    }

    /// Whether no transaction waits for purge.
    pub(crate) fn is_empty(&self) -> bool {
        self.list.lock().is_empty()
    }

    /// Transactions waiting for purge (InnoDB's "history list length").
    pub(crate) fn len(&self) -> usize {
        self.list.lock().len()
    }

    /// One pass: visits the records of every entry committed below `horizon`, in order.
    /// Returns the versions unlinked.
    pub(crate) fn purge(&self, horizon: u64, locks: &LockManager) -> u64 {
        self.purge_some(horizon, usize::MAX, locks)
    }

    /// Like [`History::purge`], but visits at most `most` entries (a committing thread's
    /// step, see [`crate::EngineConfig::commit_purge`]).
    pub(crate) fn purge_some(&self, horizon: u64, most: usize, locks: &LockManager) -> u64 {
        self.retry_deferred(locks);
        let mut versions = 0;
        for _ in 0..most {
            let entry = {
                let mut list = self.list.lock();
                match list.front() {
                    Some(entry) if entry.no < horizon => list.pop_front(),
                    _ => None,
                }
            };
            let Some(entry) = entry else {
                return versions;
            };
            prefetch(&entry.records);
            let mut kept = Vec::new();
            for (table, record) in &entry.records {
                let table = &entry.tables[*table as usize];
                versions += table.purge_record(record, horizon, locks, &mut kept);
            }
            self.keep(kept);
        }
        versions
    }

    /// Enters what gap locks kept in an index, for the next passes to try again.
    pub(crate) fn keep(&self, mut kept: Vec<Kept>) {
        if !kept.is_empty() {
            self.deferred.lock().append(&mut kept);
        }
    }

    /// Tries again to take out of their index the dead entries gap locks kept there.
    fn retry_deferred(&self, locks: &LockManager) {
        let mut deferred = self.deferred.lock();
        if !deferred.is_empty() {
            deferred.retain(|kept| !kept.retry(locks));
        }
    }
}

/// Prefetches what visiting `records` reads, level by level (see `prefetch.rs`): the
/// records, then their newest versions' headers, then the headers and then the values of
/// the versions below, which the visit usually cuts and frees (freeing reads every value,
/// to find the strings on the heap).
/// A transaction's records were last touched when it ran, and are rarely still cached.
fn prefetch(records: &[Touched]) {
    for (_, record) in records {
        crate::prefetch::line(&**record);
    }
    for (_, record) in records {
        record.prefetch_newest();
    }
    for values in [false, true] {
        for (_, record) in records {
            record.prefetch_below_newest(values);
        }
    }
}
