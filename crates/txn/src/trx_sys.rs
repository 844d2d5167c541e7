//! The transaction system (InnoDB's `trx_sys`): trx id assignment, the global active set
//! behind the trx-sys latch, the sharded registry of live read-write transactions, and read
//! view open / close.
//!
//! ```text
//!              ┌──────── trx-sys latch (one, cache-padded) ────────┐
//!   begin rw ─►│ next_id++ ; active.insert(id)                     │ ─► registry[id % shards]
//!   open view ►│ view := copy of active ; slot := next_id          │
//!   commit ───►│ active.remove(id) ; no := next_id++               │ ─► registry shard, locks
//!   purge ────►│ h := min(next_id, open slots)                     │
//!              └───────────────────────────────────────────────────┘
//!   close view: Latched  -> latch { slot := 0 }      LatchFree -> slot := 0 (horizon.rs)
//! ```
//!
//! With [`SnapshotKind::Csn`] the active set is the [`CsnLog`]: views open with two atomic
//! loads and no latch, and commit takes the log's writer mutex instead of the trx-sys latch.
//! Read-only transactions never get an id and never enter the active set (as InnoDB).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_utils::CachePadded;
use waterline_readview::{
    ActiveSet, Csn, CsnLog, CsnSnapshot, HybridActiveSet, HybridReadView, ReadView, SnapshotKind,
    TrxId, VecActiveSet, VecReadView,
};

use crate::config::{EngineConfig, Isolation, ViewClose};
use crate::error::TxnError;
use crate::horizon::{ViewSlot, ViewSlots};
use crate::stats::{Counter, Stats};
use crate::sync::held::Held;
use crate::sync::{Mutex, MutexGuard};

/// The global active set, one variant per snapshot kind.
#[derive(Debug)]
enum ActiveList {
    Vector(VecActiveSet),
    Hybrid(HybridActiveSet),
    /// The ids live in the [`CsnLog`], outside the latch.
    Csn,
}

/// What the trx-sys latch protects.
#[derive(Debug)]
pub(crate) struct Latched {
    active: ActiveList,
    /// InnoDB's `max_trx_id`: the next trx id, and (Vector/Hybrid) the next commit number.
    next_id: TrxId,
}

/// A read view of whichever kind the engine uses, with its purge limit.
#[derive(Clone, Debug)]
pub(crate) enum View {
    Vector(VecReadView),
    Hybrid(HybridReadView),
    Csn(CsnSnapshot),
}

impl View {
    /// Whether changes of `id` are visible to this view (own changes are decided by the
    /// caller, which knows its trx id even when the view was opened before it had one).
    #[inline]
    pub(crate) fn sees(&self, id: TrxId) -> bool {
        match self {
            View::Vector(v) => v.changes_visible(id),
            View::Hybrid(v) => v.changes_visible(id),
            View::Csn(v) => v.changes_visible(id),
        }
    }
}

/// A live read-write transaction, as the registry lists it (InnoDB's
/// `INFORMATION_SCHEMA.INNODB_TRX`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrxInfo {
    /// Its id.
    pub id: TrxId,
    /// Its isolation level.
    pub isolation: Isolation,
    /// When it got its id (its first write).
    pub started: Instant,
}

/// One shard of the registry of live read-write transactions (MySQL 8.0.27's `Trx_shard`).
type RegistryShard = CachePadded<parking_lot::Mutex<HashMap<TrxId, TrxInfo>>>;

/// The transaction system. See the module page.
#[derive(Debug)]
pub struct TrxSys {
    kind: SnapshotKind,
    view_close: ViewClose,
    latch: CachePadded<Mutex<Latched>>,
    csn: Arc<CsnLog>,
    slots: ViewSlots<View>,
    registry: Box<[RegistryShard]>,
    stats: Arc<Stats>,
}

impl TrxSys {
    /// A transaction system with no transactions yet.
    pub(crate) fn new(config: &EngineConfig, stats: Arc<Stats>) -> Result<TrxSys, TxnError> {
        let active = match config.snapshot {
            SnapshotKind::Vector => ActiveList::Vector(VecActiveSet::default()),
            SnapshotKind::Hybrid => ActiveList::Hybrid(
                HybridActiveSet::with_windows(
                    config.hybrid_global_window_bytes,
                    config.hybrid_view_window_bytes,
                )?
                .with_layout(config.hybrid_layout),
            ),
            SnapshotKind::Csn => ActiveList::Csn,
        };
        let csn_slots = match config.snapshot {
            SnapshotKind::Csn => config.csn_ring_slots,
            _ => 2,
        };
        Ok(TrxSys {
            kind: config.snapshot,
            view_close: config.view_close,
            latch: CachePadded::new(Mutex::new(Latched {
                active,
                next_id: TrxId::FIRST,
            })),
            csn: Arc::new(CsnLog::with_ring_slots(csn_slots)?),
            slots: ViewSlots::new(config.trx_shards.min(64)),
            registry: (0..config.trx_shards)
                .map(|_| CachePadded::new(parking_lot::Mutex::new(HashMap::new())))
                .collect(),
            stats,
        })
    }

    /// The trx-sys latch, counting the acquisitions that had to wait for it (the book's
    /// Fig 8-1 measures this latch's contention).
    fn lock(&self) -> Held<'_, MutexGuard<'_, Latched>> {
        self.stats.incr(Counter::TrxSysLatch);
        let guard = self.latch.try_lock().unwrap_or_else(|| {
            self.stats.incr(Counter::TrxSysLatchWaits);
            self.latch.lock()
        });
        Held::sampled(guard, self.stats.cell(Counter::TrxSysLatchHeldNs))
    }

    /// The latch of `id`'s registry shard, held, counting the acquisitions that waited.
    fn shard(&self, id: TrxId) -> Held<'_, parking_lot::MutexGuard<'_, HashMap<TrxId, TrxInfo>>> {
        self.stats.incr(Counter::RegistryLatch);
        let shard = &self.registry[(id.get() % self.registry.len() as u64) as usize];
        let guard = shard.try_lock().unwrap_or_else(|| {
            self.stats.incr(Counter::RegistryLatchWaits);
            shard.lock()
        });
        Held::sampled(guard, self.stats.cell(Counter::RegistryLatchHeldNs))
    }

    /// The snapshot kind.
    pub fn kind(&self) -> SnapshotKind {
        self.kind
    }

    /// Assigns a trx id at a transaction's first write: enters the active set (under the
    /// latch) and the registry (under one shard's latch).
    pub(crate) fn begin_rw(&self, isolation: Isolation) -> Result<TrxId, TxnError> {
        let id = {
            let mut latched = self.lock();
            let id = latched.next_id;
            let next = id.next().ok_or(TxnError::TrxIdsExhausted)?;
            match &mut latched.active {
                ActiveList::Vector(set) => set.insert(id)?,
                ActiveList::Hybrid(set) => set.insert(id)?,
                ActiveList::Csn => self.csn.begin(id)?,
            }
            latched.next_id = next;
            id
        };
        let info = TrxInfo {
            id,
            isolation,
            started: Instant::now(),
        };
        self.shard(id).insert(id, info);
        self.stats.incr(Counter::RwTrxBegun);
        Ok(id)
    }

    /// Makes a group of transactions visible at once (the commit stage): removes them from
    /// the active set and returns their commit number (see `horizon.rs`). Vector/Hybrid take
    /// the trx-sys latch once for the whole group; Csn publishes one CSN for it.
    pub(crate) fn commit_group(&self, ids: &[TrxId]) -> Result<u64, TxnError> {
        match self.kind {
            SnapshotKind::Csn => Ok(self.csn.commit_group(ids)?.get()),
            _ => {
                let mut latched = self.lock();
                let no = latched.next_id;
                let next = no.next().ok_or(TxnError::TrxIdsExhausted)?;
                remove_all(&mut latched.active, ids)?;
                latched.next_id = next;
                Ok(no.get())
            }
        }
    }

    /// Ends a transaction whose changes were undone: leaves the active set without a commit
    /// number (Csn: ends with a CSN like a commit; nothing of it is left to see).
    pub(crate) fn end_rolled_back(&self, id: TrxId) -> Result<(), TxnError> {
        match self.kind {
            SnapshotKind::Csn => {
                self.csn.commit(id)?;
            }
            _ => remove_all(&mut self.lock().active, &[id])?,
        }
        Ok(())
    }

    /// Removes an ended transaction from the registry.
    pub(crate) fn deregister(&self, id: TrxId) {
        self.shard(id).remove(&id);
    }

    /// A view slot for a new transaction, with a view object to reuse.
    pub(crate) fn take_slot(&self, hint: usize) -> (Arc<ViewSlot>, Option<View>) {
        self.slots.take(hint)
    }

    /// Returns a transaction's slot, and its view object for reuse, when it ends.
    pub(crate) fn give_back_slot(&self, slot: Arc<ViewSlot>, view: Option<View>, hint: usize) {
        self.slots.give_back(slot, view, hint);
    }

    /// Opens a view into `view` (reusing its buffers when it is of the right kind) and
    /// publishes its limit in `slot`. Vector/Hybrid copy the active set under the latch.
    pub(crate) fn open_view(
        &self,
        slot: &ViewSlot,
        view: &mut Option<View>,
        creator: Option<TrxId>,
    ) {
        let bytes = match self.kind {
            SnapshotKind::Csn => {
                // A limit no larger than the snapshot's (it reads the log after this load).
                let limit = self.csn.last_csn().get() + 1;
                slot.open_unlatched(limit);
                match view {
                    Some(View::Csn(snapshot)) => self.csn.snapshot_into(snapshot, creator),
                    _ => {
                        *view = Some(View::Csn(self.csn.snapshot(creator)));
                        CsnSnapshot::BYTES
                    }
                }
            }
            _ => {
                let latched = self.lock();
                let bytes = snapshot_into(&latched.active, view, creator);
                slot.open_latched(latched.next_id.get(), latched.guard());
                bytes
            }
        };
        self.stats.incr(Counter::ViewsOpened);
        self.stats.add(Counter::ViewBytesCopied, bytes as u64);
    }

    /// Closes a view: under the trx-sys latch (Latched, InnoDB's `view_close(view, true)`) or
    /// with one atomic swap (LatchFree); see `horizon.rs` for why both are safe.
    pub(crate) fn close_view(&self, slot: &ViewSlot) {
        match self.view_close {
            ViewClose::Latched => {
                let _latched = self.lock();
                slot.close();
            }
            ViewClose::LatchFree => slot.close(),
        }
        self.stats.incr(Counter::ViewsClosed);
    }

    /// The purge horizon: no open or future view needs a version shadowed by a commit
    /// numbered below it. Csn also lets the log forget ids every snapshot sees.
    pub(crate) fn purge_horizon(&self) -> u64 {
        self.purge_horizon_and_readers().0
    }

    /// [`TrxSys::purge_horizon`], and how many views were open when it was taken: the
    /// transactions reading at that moment.
    pub(crate) fn purge_horizon_and_readers(&self) -> (u64, usize) {
        match self.kind {
            SnapshotKind::Csn => {
                let upto = self.csn.last_csn().get() + 1;
                let (horizon, open) = self.slots.horizon_and_open(upto);
                self.csn.purge(Csn(horizon - 1));
                (horizon, open)
            }
            _ => {
                let latched = self.lock();
                self.slots.horizon_and_open(latched.next_id.get())
            }
        }
    }

    /// The live read-write transactions, oldest first.
    pub fn live_transactions(&self) -> Vec<TrxInfo> {
        let mut all: Vec<TrxInfo> = self
            .registry
            .iter()
            .flat_map(|shard| shard.lock().values().cloned().collect::<Vec<_>>())
            .collect();
        all.sort_by_key(|info| info.id);
        all
    }

    /// Views open now.
    pub fn open_views(&self) -> usize {
        self.slots.open_views()
    }

    /// How many ids moved from the short window to the long list (Hybrid) or from the ring
    /// to the retired map (Csn); `0` for Vector.
    pub fn overflow_moves(&self) -> u64 {
        match &self.latch.lock().active {
            ActiveList::Vector(_) => 0,
            ActiveList::Hybrid(set) => set.overflow_moves(),
            ActiveList::Csn => self.csn.overflow_moves(),
        }
    }
}

fn remove_all(active: &mut ActiveList, ids: &[TrxId]) -> Result<(), TxnError> {
    for &id in ids {
        match active {
            ActiveList::Vector(set) => set.remove(id)?,
            ActiveList::Hybrid(set) => set.remove(id)?,
            ActiveList::Csn => unreachable!("CSN transactions end in the log"),
        }
    }
    Ok(())
}

/// Copies `active` into `view`, reusing the view's buffers when it has the right kind.
fn snapshot_into(active: &ActiveList, view: &mut Option<View>, creator: Option<TrxId>) -> usize {
    match (active, view) {
        (ActiveList::Vector(set), Some(View::Vector(v))) => set.snapshot_into(v, creator),
        (ActiveList::Hybrid(set), Some(View::Hybrid(v))) => set.snapshot_into(v, creator),
        (ActiveList::Vector(set), view) => {
            let mut v = set.new_view();
            let bytes = set.snapshot_into(&mut v, creator);
            *view = Some(View::Vector(v));
            bytes
        }
        (ActiveList::Hybrid(set), view) => {
            let mut v = set.new_view();
            let bytes = set.snapshot_into(&mut v, creator);
            *view = Some(View::Hybrid(v));
            bytes
        }
        (ActiveList::Csn, _) => unreachable!("CSN views are taken from the log"),
    }
}
