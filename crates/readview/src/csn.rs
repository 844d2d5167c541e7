//! CSN snapshots: the book's "first approach" (8.2.2), which it did not build: a snapshot is
//! one number, and visibility asks a trx id -> commit sequence number map (as LeanStore and
//! the PostgreSQL CSN proposal do).
//!
//! ```text
//!  commit path (one writer at a time)            readers (no lock)
//!  ─────────────────────────────────             ─────────────────────────────────────────
//!  ring[id % N] = csn        (Release) ───┐      snap.csn = last_csn          (Acquire) ①
//!  last_csn     = csn        (Release) ───┴────► snap.low_limit_id = next id  (Acquire) ②
//!                                                visible(id) = ring[id] is a CSN <= snap.csn
//!
//!  ring: one AtomicU64 an id, for the ids [base, base + N):
//!      0 = not begun (a gap)     u64::MAX = active     anything else = the CSN it ended with
//!  ids that leave the ring while a snapshot may still need them (active, or ended after the
//!  purge horizon) move to a small "retired" map behind a RwLock, read only when not empty.
//! ```
//!
//! **Why a snapshot never sees an unpublished commit.** Writers (begin, commit, purge) are
//! serialised by the log's writer mutex: in the engine that is the trx-sys latch or the commit
//! stage's leader. A commit stores the CSN into the id's slot *before* it stores the new
//! `last_csn`, both with `Release`. A snapshot loads `last_csn` with `Acquire` (①), so for
//! every commit with a CSN up to the one it read, the slot store happened before its load and
//! every later read of that slot sees it. A commit whose `last_csn` store it did not see has a
//! larger CSN, and is invisible whether its slot already says so or still says "active". So a
//! snapshot's answer for an id never changes, and equals "ended before the snapshot".
//!
//! **Why `low_limit_id` is read second (②).** A transaction that ended at or before the
//! snapshot's CSN began before it ended: its `begin` stored `low_limit_id` (`Release`) before
//! the commit, which the snapshot's ① synchronised with; ② therefore reads a value above its
//! id. Ids at or above ② began after the snapshot and are invisible without a look-up.
//!
//! **Reading a ring slot while the ring slides** is a seqlock read: load `base`, load the slot,
//! load `base` again. A slide stores the new `base` (`Release`) before it clears the slots
//! the leaving ids used (`Release`), and the retired map is filled before both; a reader that
//! loaded a cleared or reused slot (`Acquire`) therefore sees the new `base` on its second
//! load and asks the retired map instead. `tests/loom.rs` checks this hand-off.
//!
//! **Group commit** gives every transaction of a group the same CSN and publishes them with one
//! store of `last_csn`, so a group becomes visible all at once.
//!
//! **The purge contract.** An id that leaves the ring after ending with a CSN at or below the
//! purge horizon is forgotten ("settled": visible to everyone). [`CsnLog::purge`] takes that
//! horizon from the caller, who must not pass a CSN above that of any snapshot still in use
//! (the transaction system knows its open views). Until purge is called, every id that leaves
//! the ring is kept in the retired map.
//!
//! Left out: a rolled-back transaction ends like a committed one (its changes are undone before
//! it ends, as InnoDB runs `trx_commit_in_memory` for both), so the log has no "aborted" state.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicU64, AtomicUsize, Mutex, Ordering, RwLock};
use crate::view::{ReadView, creator_from_max, creator_or_max};
use crate::{ActiveSetError, ConfigError, Csn, TrxId, error};

/// Default ring size: 65,536 ids (512 KiB). An id older than this many ids that is still
/// active moves to the retired map.
pub const DEFAULT_CSN_RING_SLOTS: usize = 1 << 16;

/// Slot value: the id never began (a gap in the id sequence), or has not yet.
const NOT_BEGUN: u64 = 0;
/// Slot value: the id began and has not ended.
const ACTIVE: u64 = u64::MAX;

/// What the log knows of one transaction id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrxState {
    /// Never began: a gap in the id sequence, or an id not handed out yet.
    NotBegun,
    /// Began and has not ended.
    Active,
    /// Ended (committed, or rolled back and undone) with this CSN.
    Ended(Csn),
    /// Ended so long ago that every snapshot in use sees it: the ring forgot it.
    Settled,
}

fn decode(slot: u64) -> TrxState {
    match slot {
        NOT_BEGUN => TrxState::NotBegun,
        ACTIVE => TrxState::Active,
        csn => TrxState::Ended(Csn(csn)),
    }
}

/// What only the writer reads and writes. Holding it (the writer mutex) is also the proof
/// that the caller is the one thread allowed to store to the log's atomics, so it may read them
/// `Relaxed`: every earlier store was made by an earlier holder of the mutex.
#[derive(Debug)]
struct Writer {
    horizon: Csn,
    overflow_moves: u64,
}

/// The trx id -> CSN map and the CSN clock: what CSN snapshots are taken from and consult.
///
/// Shared by reference (`Arc`); readers never lock, writers serialise on an internal mutex.
pub struct CsnLog {
    /// The CSN of the newest published commit: what a snapshot reads.
    last_csn: CachePadded<AtomicU64>,
    /// One past the largest id that began.
    low_limit_id: CachePadded<AtomicU64>,
    /// The first id the ring holds; ids below it are retired or settled.
    base: CachePadded<AtomicU64>,
    slots: Box<[AtomicU64]>,
    retired_len: AtomicUsize,
    retired: RwLock<BTreeMap<TrxId, u64>>,
    writer: Mutex<Writer>,
}

impl fmt::Debug for CsnLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CsnLog")
            .field("last_csn", &self.last_csn())
            .field("low_limit_id", &self.low_limit_id())
            .field("ring_slots", &self.slots.len())
            .field("retired", &self.retired_len.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Default for CsnLog {
    fn default() -> Self {
        CsnLog::with_ring_slots(DEFAULT_CSN_RING_SLOTS).expect("the default is a power of two")
    }
}

impl CsnLog {
    /// An empty log with [`DEFAULT_CSN_RING_SLOTS`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty log whose ring holds `slots` ids (a power of two, at least 2). Tests shrink it
    /// so that ids leave the ring early.
    pub fn with_ring_slots(slots: usize) -> Result<Self, ConfigError> {
        if slots < 2 || !slots.is_power_of_two() {
            return Err(ConfigError::CsnRing { slots });
        }
        Ok(CsnLog {
            last_csn: CachePadded::new(AtomicU64::new(Csn::ZERO.0)),
            low_limit_id: CachePadded::new(AtomicU64::new(TrxId::FIRST.0)),
            base: CachePadded::new(AtomicU64::new(0)),
            slots: (0..slots).map(|_| AtomicU64::new(NOT_BEGUN)).collect(),
            retired_len: AtomicUsize::new(0),
            retired: RwLock::new(BTreeMap::new()),
            writer: Mutex::new(Writer {
                horizon: Csn::ZERO,
                overflow_moves: 0,
            }),
        })
    }

    fn slot(&self, id: TrxId) -> &AtomicU64 {
        // The length is a power of two: the mask is `id % len`.
        &self.slots[(id.0 & (self.slots.len() as u64 - 1)) as usize]
    }

    /// The CSN of the newest published commit.
    pub fn last_csn(&self) -> Csn {
        Csn(self.last_csn.load(Ordering::Acquire))
    }

    /// One past the largest id that began.
    pub fn low_limit_id(&self) -> TrxId {
        TrxId(self.low_limit_id.load(Ordering::Acquire))
    }

    /// How many ids have left the ring while a snapshot could still need them (moved to the
    /// retired map): the CSN log's counterpart of the hybrid set's overflow moves.
    pub fn overflow_moves(&self) -> u64 {
        self.writer.lock().overflow_moves
    }

    /// Marks `id` active. Ids must arrive in increasing order.
    pub fn begin(&self, id: TrxId) -> Result<(), ActiveSetError> {
        let mut writer = self.writer.lock();
        error::check_begin(id, TrxId(self.low_limit_id.load(Ordering::Relaxed)))?;
        let capacity = self.slots.len() as u64;
        let base = self.base.load(Ordering::Relaxed);
        if id.0 >= base + capacity {
            // Slide by at least a quarter ring, so that readers see `base` change rarely.
            let new_base = (id.0 + 1 - capacity).max((base + capacity / 4).min(id.0));
            self.slide(&mut writer, new_base);
        }
        // Release: with the low_limit_id store below, a snapshot that reads the new
        // low_limit_id finds this slot "active", never "not begun".
        self.slot(id).store(ACTIVE, Ordering::Release);
        // Release: pairs with the Acquire in `snapshot_into` (②).
        self.low_limit_id.store(id.0 + 1, Ordering::Release);
        Ok(())
    }

    /// Moves the ring's start to `new_base`: the ids that leave and that a snapshot in use may
    /// still need go to the retired map first, then `base` moves, then their slots are cleared
    /// for the ids that will reuse them.
    fn slide(&self, writer: &mut Writer, new_base: u64) {
        let capacity = self.slots.len() as u64;
        // Relaxed: we hold the writer mutex (see `Writer`).
        let base = self.base.load(Ordering::Relaxed);
        let low_limit_id = self.low_limit_id.load(Ordering::Relaxed);
        let leaving = base..new_base.min(base + capacity).min(low_limit_id);
        let mut kept = Vec::new();
        for id in leaving.clone().map(TrxId) {
            // Relaxed: only the writer stores to slots, and we are the writer.
            let slot = self.slot(id).load(Ordering::Relaxed);
            if slot == ACTIVE || (slot != NOT_BEGUN && slot > writer.horizon.0) {
                kept.push((id, slot));
            }
        }
        if !kept.is_empty() {
            writer.overflow_moves += kept.len() as u64;
            let mut retired = self.retired.write();
            retired.extend(kept);
            // Release: a reader that finds the map non-empty also finds its entries (it
            // takes the read lock anyway; this orders the fast "empty" check).
            self.retired_len.store(retired.len(), Ordering::Release);
        }
        // Release: the retired entries above happen before the new base; a reader that sees
        // the new base (Acquire in `state`) and looks in the map finds them.
        self.base.store(new_base, Ordering::Release);
        for id in leaving.map(TrxId) {
            // Release: a reader that loads this cleared slot (Acquire) sees the new base on
            // its second load of `base`, and does not trust the slot.
            self.slot(id).store(NOT_BEGUN, Ordering::Release);
        }
    }

    /// Ends one transaction; see [`CsnLog::commit_group`]. A rollback ends through here too,
    /// once its changes are undone.
    pub fn commit(&self, id: TrxId) -> Result<Csn, ActiveSetError> {
        self.commit_group(&[id])
    }

    /// Ends a group of active transactions with one new CSN, published with one store, so the
    /// whole group becomes visible at once. If any id is not active, nothing changes and the
    /// error names it. An empty group publishes nothing and returns the last CSN.
    pub fn commit_group(&self, ids: &[TrxId]) -> Result<Csn, ActiveSetError> {
        let writer = self.writer.lock();
        // Relaxed: we hold the writer mutex (see `Writer`).
        let last = Csn(self.last_csn.load(Ordering::Relaxed));
        if ids.is_empty() {
            return Ok(last);
        }
        let csn = last.next().ok_or(ActiveSetError::CsnExhausted { last })?;
        for (done, &id) in ids.iter().enumerate() {
            if let Err(error) = self.transition(&writer, id, ACTIVE, csn.0) {
                // Not yet published (last_csn is unchanged), so putting back "active" is
                // invisible to every snapshot: no snapshot's CSN reaches `csn`.
                for &undo in &ids[..done] {
                    self.transition(&writer, undo, csn.0, ACTIVE)
                        .expect("an id this call just ended can be put back");
                }
                return Err(error);
            }
        }
        // Release: every slot store of this group happens before; pairs with ① in
        // `snapshot_into`.
        self.last_csn.store(csn.0, Ordering::Release);
        Ok(csn)
    }

    /// Changes `id`'s state from `from` to `to`, in the ring or in the retired map.
    fn transition(
        &self,
        _writer: &Writer,
        id: TrxId,
        from: u64,
        to: u64,
    ) -> Result<(), ActiveSetError> {
        let not_active = ActiveSetError::NotActive { id };
        // Relaxed: `_writer` proves we hold the writer mutex (see `Writer`).
        if id.0 >= self.base.load(Ordering::Relaxed) {
            if id.0 >= self.low_limit_id.load(Ordering::Relaxed) {
                return Err(not_active);
            }
            let slot = self.slot(id);
            // Relaxed: only the writer stores to slots.
            if slot.load(Ordering::Relaxed) != from {
                return Err(not_active);
            }
            // Release: pairs with the Acquire slot load in `state`; published to snapshots
            // by the later last_csn store.
            slot.store(to, Ordering::Release);
            return Ok(());
        }
        match self.retired.write().get_mut(&id) {
            Some(state) if *state == from => {
                *state = to;
                Ok(())
            }
            _ => Err(not_active),
        }
    }

    /// Declares that no snapshot still in use has a CSN below `horizon` (the transaction
    /// system's oldest open view), so ids that ended at or below it may be forgotten. A
    /// horizon above the last CSN is capped to it; a horizon never moves back.
    pub fn purge(&self, horizon: Csn) {
        let mut writer = self.writer.lock();
        let last = Csn(self.last_csn.load(Ordering::Relaxed));
        writer.horizon = writer.horizon.max(horizon.min(last));
        if self.retired_len.load(Ordering::Relaxed) > 0 {
            let horizon = writer.horizon.0;
            let mut retired = self.retired.write();
            retired.retain(|_, state| *state == ACTIVE || *state > horizon);
            self.retired_len.store(retired.len(), Ordering::Release);
        }
    }

    /// What the log knows of `id` now. Lock-free unless `id` left the ring while still needed.
    pub fn state(&self, id: TrxId) -> TrxState {
        if id >= self.low_limit_id() {
            return TrxState::NotBegun;
        }
        self.state_below_low_limit(id)
    }

    /// [`CsnLog::state`] for an id below a `low_limit_id` this thread has read (a snapshot's):
    /// such an id lies below `base + N` for every `base` read after it, so its slot is its own.
    fn state_below_low_limit(&self, id: TrxId) -> TrxState {
        // Acquire (all three loads): see the module page, "Reading a ring slot while the ring
        // slides".
        let base = self.base.load(Ordering::Acquire);
        if id.0 >= base {
            let slot = self.slot(id).load(Ordering::Acquire);
            if self.base.load(Ordering::Acquire) <= id.0 {
                return decode(slot);
            }
        }
        if self.retired_len.load(Ordering::Acquire) == 0 {
            return TrxState::Settled;
        }
        match self.retired.read().get(&id) {
            Some(&slot) => decode(slot),
            None => TrxState::Settled,
        }
    }

    /// A new snapshot of the log as it is now.
    pub fn snapshot(self: &Arc<Self>, creator: Option<TrxId>) -> CsnSnapshot {
        let mut view = CsnSnapshot {
            csn: Csn::ZERO,
            low_limit_id: TrxId::FIRST,
            creator_trx_id: TrxId::MAX,
            log: Arc::clone(self),
        };
        self.snapshot_into(&mut view, creator);
        view
    }

    /// Retakes `view` as a snapshot of this log: two atomic loads, no lock, no allocation, and
    /// no reference-count traffic when the view already belongs to this log. Returns the bytes
    /// written into the view ([`CsnSnapshot::BYTES`]).
    pub fn snapshot_into(
        self: &Arc<Self>,
        view: &mut CsnSnapshot,
        creator: Option<TrxId>,
    ) -> usize {
        if !Arc::ptr_eq(&view.log, self) {
            view.log = Arc::clone(self);
        }
        // ① Acquire: pairs with the Release store in `commit_group`.
        view.csn = Csn(self.last_csn.load(Ordering::Acquire));
        // ② Acquire, after ①: pairs with the Release store in `begin`.
        view.low_limit_id = TrxId(self.low_limit_id.load(Ordering::Acquire));
        view.creator_trx_id = creator_or_max(creator);
        CsnSnapshot::BYTES
    }
}

/// A CSN snapshot: the last published CSN, the high-water mark, the creator, and the log to
/// consult. Sees exactly the transactions that ended with a CSN at or below its own.
#[derive(Clone)]
pub struct CsnSnapshot {
    csn: Csn,
    low_limit_id: TrxId,
    creator_trx_id: TrxId,
    log: Arc<CsnLog>,
}

impl CsnSnapshot {
    /// Bytes a snapshot writes: the CSN, the high-water mark and the creator.
    pub const BYTES: usize = 3 * std::mem::size_of::<u64>();

    /// The snapshot's CSN: it sees the commits numbered up to and including this.
    pub fn csn(&self) -> Csn {
        self.csn
    }
}

impl fmt::Debug for CsnSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CsnSnapshot")
            .field("csn", &self.csn)
            .field("low_limit_id", &self.low_limit_id)
            .field("creator_trx_id", &self.creator_trx_id())
            .finish_non_exhaustive()
    }
}

impl ReadView for CsnSnapshot {
    /// Own changes: visible. At or above the high-water mark: invisible. Otherwise visible
    /// exactly when the id ended with a CSN at or below the snapshot's (never-begun gaps and
    /// settled ids are visible, as in the vector model).
    #[inline]
    fn changes_visible(&self, id: TrxId) -> bool {
        if id == self.creator_trx_id {
            return true;
        }
        if id >= self.low_limit_id {
            return false;
        }
        // The check above makes the unchecked look-up safe: see `state_below_low_limit`.
        match self.log.state_below_low_limit(id) {
            TrxState::NotBegun | TrxState::Settled => true,
            TrxState::Active => false,
            TrxState::Ended(csn) => csn <= self.csn,
        }
    }

    fn creator_trx_id(&self) -> Option<TrxId> {
        creator_from_max(self.creator_trx_id)
    }

    fn low_limit_id(&self) -> TrxId {
        self.low_limit_id
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn log(slots: usize) -> Arc<CsnLog> {
        Arc::new(CsnLog::with_ring_slots(slots).unwrap())
    }

    #[test]
    fn a_snapshot_sees_commits_up_to_its_csn() {
        let log = log(8);
        for id in 1..=3 {
            log.begin(TrxId(id)).unwrap();
        }
        assert_eq!(log.commit(TrxId(2)), Ok(Csn(1)));
        let before = log.snapshot(Some(TrxId(3)));
        assert_eq!(log.commit(TrxId(1)), Ok(Csn(2)));
        let after = log.snapshot(None);
        assert!(before.changes_visible(TrxId(2)));
        assert!(
            !before.changes_visible(TrxId(1)),
            "committed after the snapshot"
        );
        assert!(before.changes_visible(TrxId(3)), "the creator");
        assert!(!before.changes_visible(TrxId(4)), "at the high-water mark");
        assert!(after.changes_visible(TrxId(1)));
        assert!(!after.changes_visible(TrxId(3)));
    }

    #[test]
    fn a_group_becomes_visible_at_once_with_one_csn() {
        let log = log(8);
        for id in 1..=4 {
            log.begin(TrxId(id)).unwrap();
        }
        let csn = log.commit_group(&[TrxId(1), TrxId(3), TrxId(4)]).unwrap();
        assert_eq!(csn, Csn(1));
        for id in [1, 3, 4] {
            assert_eq!(log.state(TrxId(id)), TrxState::Ended(csn));
        }
        // A bad group changes nothing.
        assert_eq!(
            log.commit_group(&[TrxId(2), TrxId(3)]),
            Err(ActiveSetError::NotActive { id: TrxId(3) })
        );
        assert_eq!(log.state(TrxId(2)), TrxState::Active);
        assert_eq!(log.last_csn(), Csn(1));
        assert_eq!(
            log.commit_group(&[TrxId(2), TrxId(2)]),
            Err(ActiveSetError::NotActive { id: TrxId(2) }),
            "an id twice in one group"
        );
        assert_eq!(log.state(TrxId(2)), TrxState::Active);
    }

    #[test]
    fn a_long_transaction_outlives_the_ring() {
        let log = log(4);
        log.begin(TrxId(1)).unwrap();
        let snap = log.snapshot(None);
        for id in 2..=20 {
            log.begin(TrxId(id)).unwrap();
            log.commit(TrxId(id)).unwrap();
        }
        assert!(log.overflow_moves() > 0);
        assert_eq!(log.state(TrxId(1)), TrxState::Active);
        let late = log.snapshot(None);
        assert!(!late.changes_visible(TrxId(1)));
        assert!(late.changes_visible(TrxId(2)));
        assert!(
            !snap.changes_visible(TrxId(2)),
            "began after the old snapshot"
        );
        let csn = log.commit(TrxId(1)).unwrap();
        assert_eq!(log.state(TrxId(1)), TrxState::Ended(csn));
        assert!(!late.changes_visible(TrxId(1)));
        assert!(log.snapshot(None).changes_visible(TrxId(1)));
        // Once every snapshot in use is at or past the last CSN, the retired ids are forgotten.
        log.purge(log.last_csn());
        assert_eq!(log.state(TrxId(1)), TrxState::Settled);
        assert!(late.changes_visible(TrxId(2)));
    }

    #[test]
    fn gaps_and_reserved_ids() {
        let log = log(4);
        log.begin(TrxId(5)).unwrap();
        assert_eq!(log.state(TrxId(3)), TrxState::NotBegun);
        assert_eq!(
            log.begin(TrxId(5)),
            Err(ActiveSetError::NotIncreasing {
                id: TrxId(5),
                low_limit_id: TrxId(6)
            })
        );
        assert_eq!(
            log.begin(TrxId::MAX),
            Err(ActiveSetError::Reserved { id: TrxId::MAX })
        );
        assert_eq!(
            log.commit(TrxId(4)),
            Err(ActiveSetError::NotActive { id: TrxId(4) })
        );
        assert_eq!(
            CsnLog::with_ring_slots(6).unwrap_err(),
            ConfigError::CsnRing { slots: 6 }
        );
    }

    #[test]
    fn an_id_beyond_the_high_water_mark_has_not_begun() {
        let log = log(4);
        log.begin(TrxId(1)).unwrap();
        // 5 would share 1's slot in a 4-slot ring; it must not borrow 1's state.
        assert_eq!(log.state(TrxId(5)), TrxState::NotBegun);
        assert_eq!(log.state(TrxId(1)), TrxState::Active);
    }

    #[test]
    fn snapshot_into_keeps_the_log_reference() {
        let log = log(8);
        let mut view = log.snapshot(None);
        assert_eq!(Arc::strong_count(&log), 2);
        assert_eq!(log.snapshot_into(&mut view, None), 24);
        assert_eq!(Arc::strong_count(&log), 2, "no new reference");
    }
}
