//! Version chains: a record is a chain of row versions, newest first, each pointing at the one
//! it replaced (InnoDB's roll pointer). A reader walks the chain until its view sees the
//! version's writer; a writer (holding the row lock) pushes a new head; rollback pops it;
//! purge cuts the chain below the newest version every view sees.
//!
//! ```text
//!  record ─► v3 (trx 9, uncommitted) ─► v2 (trx 7, no 12) ─► v1 (trx 4, no 8) ─► ∅
//!            a view that does not see 9 but sees 7 reads v2; purge with horizon > 12
//!            unlinks v1 (every view sees v2 or newer).
//! ```
//!
//! Versions of one record are committed in chain order: a writer holds the row's exclusive
//! lock until it ends, so only the head (and the versions right below it, by the same
//! writer) can be uncommitted. With early lock release (`commit.rs`) a writer lets go of its
//! locks once its commit record is in the log, before it is durable and visible: its
//! versions are then *released*, still uncommitted, and the next writer may push over them.
//! That writer's commit record comes later in the log, so it commits later: chain order
//! holds.

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{RwLock, RwLockWriteGuard};
use smallvec::SmallVec;
use triomphe::{Arc, HeaderWithLength, ThinArc};
use waterline_readview::TrxId;

use crate::key::Key;
use crate::trx_sys::View;
use crate::value::{Row, Value, copy_row};

/// Commit number of a version whose writer has not committed.
const UNCOMMITTED: u64 = 0;

/// Commit number of a version whose writer has not committed but has released its locks:
/// its commit record is in the log (early lock release, `commit.rs`). Larger than every
/// horizon, so purge treats it as uncommitted.
const RELEASED: u64 = u64::MAX;

/// What a version knows besides its row image.
#[derive(Debug)]
pub(crate) struct Header {
    /// InnoDB's `DB_TRX_ID`: the writer.
    trx_id: TrxId,
    /// The writer's commit number once committed (see `horizon.rs`); purge reads it.
    no: AtomicU64,
    /// A delete mark: the version has no row image.
    deleted: bool,
    /// InnoDB's `DB_ROLL_PTR`: the version this one replaced.
    prev: RwLock<Option<Version>>,
}

/// One version of a row, a shared handle: the header and the row image in one allocation.
///
/// One allocation, not a version pointing at a vector of values: a read reaches the values
/// without a second pointer chase (a likely cache miss), a write allocates once and purge
/// frees once. The handle is one pointer (the length lives in the allocation), which keeps
/// a [`Record`] within one cache line.
#[derive(Clone, Debug)]
pub(crate) struct Version(ThinArc<Header, Value>);

impl Version {
    /// A version by `trx_id` with image `row` (`None`: a delete mark) over `prev`.
    ///
    /// The row's values are copied into the version as one block of bytes
    /// (`from_header_and_vec`), not one at a time out of an iterator, where each value
    /// would pass through the stack in pieces that stall the next read of them (see
    /// [`crate::value::copy_row`]).
    fn new(trx_id: TrxId, row: Option<Row>, prev: Option<Version>) -> Version {
        let header = Header::new(trx_id, row.is_none(), prev);
        let row = row.unwrap_or_default();
        let header = HeaderWithLength::new(header, row.len());
        Version(Arc::into_thin(Arc::from_header_and_vec(header, row)))
    }

    fn header(&self) -> &Header {
        &self.0.header.header
    }

    /// The writer.
    pub(crate) fn trx_id(&self) -> TrxId {
        self.header().trx_id
    }

    /// The row image; `None` for a delete mark.
    pub(crate) fn row(&self) -> Option<&[Value]> {
        (!self.header().deleted).then_some(&self.0.slice)
    }

    /// Whether both handles are the same version.
    pub(crate) fn same(&self, other: &Version) -> bool {
        std::ptr::eq(&*self.0, &*other.0)
    }

    /// Stamps the writer's commit number (after the commit is visible).
    pub(crate) fn set_committed(&self, no: u64) {
        // Release: purge's Acquire load sees a commit number only after the commit.
        self.header().no.store(no, Ordering::Release);
    }

    /// Marks the version released: its writer's commit record is in the log and its locks
    /// are about to go (early lock release). Before the locks go, so a transaction granted
    /// one finds the version released and does not wait for it as an implicit lock.
    pub(crate) fn set_released(&self) {
        self.header().no.store(RELEASED, Ordering::Release);
    }

    fn committed_before(&self, horizon: u64) -> bool {
        // Acquire: pairs with `set_committed`.
        let no = self.header().no.load(Ordering::Acquire);
        no != UNCOMMITTED && no != RELEASED && no < horizon
    }

    /// Whether the version still locks its row: its writer has neither committed nor
    /// released its locks (it is running, or rolling back). Such a version is the implicit
    /// lock of InnoDB's inserts (see `trx.rs`).
    pub(crate) fn locks_row(&self) -> bool {
        self.header().no.load(Ordering::Acquire) == UNCOMMITTED
    }

    /// Whether the writer released its locks and has not committed yet.
    pub(crate) fn is_released(&self) -> bool {
        self.header().no.load(Ordering::Acquire) == RELEASED
    }

    /// Whether an older version hangs below this one (purge may have cut it since).
    pub(crate) fn has_prev(&self) -> bool {
        self.header().prev.read().is_some()
    }

    fn prev(&self) -> Option<Version> {
        self.header().prev.read().clone()
    }

    /// Unlinks and returns the versions below this one.
    fn take_prev(&self) -> Option<Version> {
        self.header().prev.write().take()
    }
}

impl Header {
    fn new(trx_id: TrxId, deleted: bool, prev: Option<Version>) -> Header {
        Header {
            trx_id,
            no: AtomicU64::new(UNCOMMITTED),
            deleted,
            prev: RwLock::new(prev),
        }
    }
}

/// A row version its writer is still filling in. It is the only handle to its allocation,
/// so its values change in place until [`Chain::push_draft`] makes it a chain's head: an
/// update copies the newest row straight into its new version, with no row vector in
/// between to allocate, fill, move out of and free.
#[derive(Debug)]
pub(crate) struct Draft(Version);

impl Draft {
    /// A copy of `row`, by `trx_id`: copied into a vector first, then into the version as
    /// one block (see [`Version::new`]). Two allocations, the vector's freed at once and
    /// reused by the next copy, cost less than cloning straight into the version did.
    pub(crate) fn copy_of(trx_id: TrxId, row: &[Value]) -> Draft {
        Draft(Version::new(trx_id, Some(copy_row(row)), None))
    }

    /// A version of `row`, by `trx_id`.
    pub(crate) fn of(trx_id: TrxId, row: Row) -> Draft {
        Draft(Version::new(trx_id, Some(row), None))
    }

    /// The values.
    pub(crate) fn values(&self) -> &[Value] {
        &self.0.0.slice
    }

    /// Runs `f` on the values, which it may change.
    pub(crate) fn change<R>(&mut self, f: impl FnOnce(&mut [Value]) -> R) -> R {
        self.0.0.with_arc_mut(|arc| {
            let only = Arc::get_mut(arc).expect("a draft has no other handle");
            f(only.slice_mut())
        })
    }
}

impl Drop for Header {
    /// Drops an unlinked tail iteratively: a long chain must not recurse once per version.
    fn drop(&mut self) {
        let mut next = self.prev.get_mut().take();
        while let Some(version) = next {
            // The last handle to it: unlink its tail first, so that dropping it recurses
            // no further. Nobody else can clone a version nobody else holds.
            next = if ThinArc::strong_count(&version.0) == 1 {
                version.take_prev()
            } else {
                None
            };
        }
    }
}

/// The head of a chain, and whether purge removed the record from its index.
#[derive(Debug, Default)]
pub(crate) struct Chain {
    head: Option<Version>,
    /// Set by purge (under this latch) before it unlinks the record from the clustered index:
    /// a writer that finds it set must look the key up again.
    pub(crate) removed: bool,
}

impl Chain {
    /// The newest row image (committed or the caller's own, when the caller holds the row
    /// lock); `None` if deleted or never committed.
    pub(crate) fn latest_row(&self) -> Option<&[Value]> {
        self.head.as_ref().and_then(Version::row)
    }

    /// The newest version if another transaction than `me` wrote it and has neither
    /// committed nor released its locks: that transaction's insert locks the row implicitly
    /// (see `trx.rs`).
    pub(crate) fn pending_other(&self, me: TrxId) -> Option<&Version> {
        self.head
            .as_ref()
            .filter(|v| v.trx_id() != me && v.locks_row())
    }

    /// Pushes `draft` as the new head (the caller holds the row lock).
    pub(crate) fn push_draft(&mut self, draft: Draft) -> Version {
        let Draft(version) = draft;
        *version.header().prev.write() = self.head.take();
        self.head = Some(version.clone());
        version
    }

    /// Pushes a new head written by `trx_id` (the caller holds the row lock).
    pub(crate) fn push(&mut self, trx_id: TrxId, row: Option<Row>) -> Version {
        let version = Version::new(trx_id, row, self.head.take());
        self.head = Some(version.clone());
        version
    }

    /// Whether the chain has no version (an insert was undone).
    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// Every row image in the chain, newest first.
    pub(crate) fn rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        let mut next = self.head.clone();
        while let Some(version) = next {
            rows.extend(version.row().map(copy_row));
            next = version.prev();
        }
        rows
    }

    /// Undoes `version`. Undo runs newest first, so it is the head, unless its writer had
    /// released its locks (early lock release) and a later writer pushed over it: then its
    /// commit failed in the log, every later commit fails too, and it is unlinked from
    /// under the later versions, which are undone in their turn.
    pub(crate) fn pop(&mut self, version: &Version) {
        if self.head.as_ref().is_some_and(|h| h.same(version)) {
            self.head = version.prev();
            return;
        }
        assert!(
            version.is_released(),
            "undo must pop the transaction's own newest version"
        );
        let mut next = self.head.clone();
        while let Some(above) = next {
            let below = above.prev();
            if below.as_ref().is_some_and(|b| b.same(version)) {
                *above.header().prev.write() = version.prev();
                return;
            }
            next = below;
        }
        unreachable!("a released version being undone is in its chain");
    }
}

/// A shared handle to a record. triomphe's `Arc` keeps no weak count, and with the
/// one-pointer [`Version`] handle a record takes one 64-byte allocation: a lookup that
/// compares its key and then reads its chain touches one cache line, not two.
pub(crate) type RecordRef = Arc<Record>;

/// A clustered index entry: one row's primary key and version chain.
#[derive(Debug)]
pub(crate) struct Record {
    /// The row's primary key (or hidden row id). The hash index finds a record by it, and
    /// undo and purge, which hold the record, need no copy of their own.
    pub(crate) key: Key,
    chain: RwLock<Chain>,
}

/// The versions one purge pass keeps or cuts: usually one or two, so inline (purge runs
/// for every record a commit changed, and these were four allocations each time).
type Versions = SmallVec<[Version; 4]>;

/// What a purge pass did to one record.
pub(crate) struct Purged {
    /// The record itself is dead (marked removed): the caller unlinks it from the index.
    pub(crate) dead: bool,
    /// Versions unlinked.
    pub(crate) versions: u64,
}

impl Record {
    /// An empty record for `key` (an insert pushes the first version).
    pub(crate) fn new(key: Key) -> Record {
        Record {
            key,
            chain: RwLock::default(),
        }
    }

    /// Prefetches the first line of the newest version: its header (see `prefetch.rs`).
    pub(crate) fn prefetch_newest(&self) {
        if let Some(head) = &self.chain.read().head {
            crate::prefetch::line(head.header());
        }
    }

    /// Prefetches the newest version's values: their length is in its header, so this
    /// waits for the line [`Record::prefetch_newest`] asked for.
    pub(crate) fn prefetch_newest_row(&self) {
        if let Some(head) = &self.chain.read().head {
            crate::prefetch::lines(&head.0.slice);
        }
    }

    /// Prefetches the header of the version below the newest one (what purge cuts), or,
    /// with `values`, its values (whose length that header holds).
    pub(crate) fn prefetch_below_newest(&self, values: bool) {
        if let Some(head) = &self.chain.read().head
            && let Some(below) = &*head.header().prev.read()
        {
            if values {
                crate::prefetch::lines(&below.0.slice);
            } else {
                crate::prefetch::line(below.header());
            }
        }
    }

    /// Under one latch: `Err` with the newest version if it is another transaction's
    /// uncommitted one (see [`Chain::pending_other`]), else the newest version if it is a
    /// row and not a delete mark (what [`Record::latest_row`] copies, shared instead).
    pub(crate) fn latest_unless_pending(&self, me: TrxId) -> Result<Option<Version>, Version> {
        let chain = self.chain.read();
        if let Some(pending) = chain.pending_other(me) {
            return Err(pending.clone());
        }
        Ok(chain.head.as_ref().filter(|v| v.row().is_some()).cloned())
    }

    /// Whether `version` is still the newest version and still uncommitted: a waiter for
    /// its writer waits while this holds (a commit stamps it, a rollback pops it).
    pub(crate) fn still_pending(&self, version: &Version) -> bool {
        let chain = self.chain.read();
        chain.head.as_ref().is_some_and(|h| h.same(version)) && version.locks_row()
    }

    /// The chain, for a writer.
    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, Chain> {
        self.chain.write()
    }

    /// Every row image in the chain (delete marks skipped), newest first.
    pub(crate) fn rows(&self) -> Vec<Row> {
        self.chain.read().rows()
    }

    /// The newest row image (see [`Chain::latest_row`]).
    pub(crate) fn latest_row(&self) -> Option<Row> {
        self.chain.read().latest_row().map(copy_row)
    }

    /// The version `view` sees: the newest written by `me` or by a transaction the view
    /// sees (it may be a delete mark); `None` if there is none.
    pub(crate) fn visible_version(&self, view: &View, me: Option<TrxId>) -> Option<Version> {
        let mut next = self.chain.read().head.clone();
        while let Some(version) = next {
            let writer = version.trx_id();
            if Some(writer) == me || view.sees(writer) {
                return Some(version);
            }
            next = version.prev();
        }
        None
    }

    /// Unlinks every version below the newest one committed before `horizon`. If that one is
    /// the head and a delete mark (or the chain is empty), the record itself is dead: it is
    /// marked removed and the caller unlinks it from the index. `unindex(removed, kept)` runs
    /// under the record's latch, so no writer adds an index entry meanwhile.
    pub(crate) fn purge(
        &self,
        horizon: u64,
        unindex: impl FnOnce(&[&[Value]], &[&[Value]]),
    ) -> Option<Purged> {
        let mut chain = self.chain.write();
        let mut kept: Versions = SmallVec::new();
        let mut next = chain.head.clone();
        let mut cut = None;
        while let Some(version) = next {
            if version.committed_before(horizon) {
                cut = Some(version);
                break;
            }
            next = version.prev();
            kept.push(version);
        }
        let dead_head = chain.head.is_none()
            || cut
                .as_ref()
                .is_some_and(|v| kept.is_empty() && v.row().is_none());
        let tail = match &cut {
            Some(version) if dead_head => {
                chain.head = None;
                Some(version.clone())
            }
            Some(version) => version.take_prev(),
            None if dead_head => None,
            None => return None,
        };
        if dead_head {
            chain.removed = true;
        } else if let Some(version) = cut {
            kept.push(version);
        }
        let mut removed: Versions = SmallVec::new();
        let mut next = tail;
        while let Some(version) = next {
            next = version.prev();
            removed.push(version);
        }
        let removed_rows: SmallVec<[&[Value]; 4]> =
            removed.iter().filter_map(Version::row).collect();
        let kept_rows: SmallVec<[&[Value]; 4]> = kept.iter().filter_map(Version::row).collect();
        unindex(&removed_rows, &kept_rows);
        drop(chain);
        // The cut versions are freed here, after the latch: readers of the record need not
        // wait for their memory to go back.
        Some(Purged {
            dead: dead_head,
            versions: removed.len() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> TrxId {
        TrxId(n)
    }

    #[test]
    fn a_version_holds_its_header_and_row_in_one_handle() {
        let mut chain = Chain::default();
        let first = chain.push(id(1), Some(vec![Value::Int(1), Value::from("a")]));
        let mark = chain.push(id(2), None);
        assert_eq!(first.trx_id(), id(1));
        assert_eq!(first.row(), Some(&[Value::Int(1), Value::from("a")][..]));
        assert_eq!(mark.row(), None, "a delete mark has no image");
        assert!(mark.has_prev() && !first.has_prev());
        assert_eq!(chain.latest_row(), None);
        chain.pop(&mark);
        assert!(chain.head.as_ref().is_some_and(|h| h.same(&first)));
    }

    #[test]
    fn a_record_fits_one_cache_line() {
        // The reference count, the key, the chain's latch, head and flag.
        assert_eq!(std::mem::size_of::<Version>(), 8);
        assert_eq!(std::mem::size_of::<Record>() + 8, 64);
    }

    #[test]
    fn a_long_chain_drops_without_recursing_and_a_held_tail_survives() {
        // Deep enough that one stack frame per version would overflow a test thread.
        let mut chain = Chain::default();
        let mut held = None;
        for n in 1..=200_000 {
            let version = chain.push(id(n), Some(vec![Value::Int(n as i64)]));
            if n == 10 {
                held = Some(version);
            }
        }
        drop(chain);
        let held = held.expect("kept");
        assert_eq!(held.row(), Some(&[Value::Int(10)][..]));
        assert!(held.has_prev(), "the versions below a held one stay linked");
    }
}
