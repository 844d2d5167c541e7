//! The purge horizon: which row versions no open view can still need, and why closing a view
//! without the trx-sys latch (book 8.2.4, [`crate::ViewClose::LatchFree`]) is safe.
//!
//! Every transaction that may open views owns a [`ViewSlot`]: one word, `0` when its view is
//! closed, otherwise the view's *limit*: every commit numbered below it is visible to the view.
//!
//! | snapshot kind  | commit number `no` of a version      | a view's limit          |
//! |----------------|--------------------------------------|-------------------------|
//! | Vector, Hybrid | trx-sys `next_id` at commit (InnoDB's `trx->no`) | `next_id` at open (`low_limit_no`) |
//! | Csn            | the commit's CSN                     | the snapshot's CSN + 1  |
//!
//! Purge computes `horizon = min(limit of every open view, limit a view opened now would get)`
//! and may unlink any version that has a newer version with `no < horizon`: every open view
//! and every later one sees that newer version, so none walks past it.
//!
//! ```text
//!   reader (Vector/Hybrid)                 purge
//!   ──────────────────────                 ───────────────────────────────────
//!   latch { snapshot; slot := next_id }    latch { h := next_id; h := min(h, every slot) }
//!   read versions ...                      unlink versions shadowed by a commit with no < h
//!   slot := 0          (no latch)
//! ```
//!
//! **Why the latch-free close is safe.** InnoDB's patch was "not sure if it is ok in theory";
//! the argument is short. Opening happens under the trx-sys latch, and so does purge's scan,
//! so a scan either precedes an open (then the view's limit is at least the `next_id` the
//! scan used, so `h` is no larger than the view's limit) or follows it and sees the slot.
//! Closing is the only unlatched step, and it only ever turns a limit into `0`. A scan that
//! still reads the old limit is merely conservative (it keeps versions a little longer). A
//! scan that reads the `0` read it from the close's store, which is a release that the
//! scan's read acquires (`AcqRel` swaps and reads-by-RMW, so the slot's history is one chain
//! of read-modify-writes, each synchronising with the one before): every read the view made
//! happened before the close, hence before purge unlinks anything. `tests/loom.rs` checks
//! this hand-off, including a close and re-open racing a scan.
//!
//! **CSN views open without the latch**, so the slot store can race the scan. The reader
//! stores a limit it read from the log before its snapshot (so no larger than the
//! snapshot's), then takes the snapshot. Every write to a slot is a swap and purge reads a
//! slot with a read-modify-write, so the slot's modification order is one chain of RMWs,
//! each synchronising with the one before. Either purge's RMW comes after the reader's swap
//! (it sees the limit), or before it: then the reader's swap synchronises with it, so the
//! last CSN purge read before scanning happens before the reader's snapshot, which reads
//! that CSN or a later one; the view's limit is at least purge's `h`. Both cases leave every
//! version the view needs. `tests/loom.rs` runs this interleaving too, but loom does not
//! flag a deliberately broken variant (the scan reading slots with a plain load, which
//! allows the store-buffering outcome), so here the argument above, not loom, is the
//! evidence; the latched model above does fail when its protocol is broken.

use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicU64, Mutex, MutexGuard, Ordering};

/// A slot's value when its view is closed.
const CLOSED: u64 = 0;

/// One transaction's published view limit (see the module page). Cache-padded: each is
/// written by its own thread at every view open and close.
#[derive(Debug, Default)]
pub struct ViewSlot {
    limit: CachePadded<AtomicU64>,
}

impl ViewSlot {
    /// Publishes an opened view's `limit` (nonzero). `_latch` proves the caller holds the
    /// trx-sys latch under which the view was taken and under which purge scans.
    pub fn open_latched<T>(&self, limit: u64, _latch: &MutexGuard<'_, T>) {
        debug_assert_ne!(limit, CLOSED);
        // AcqRel RMW: continues the slot's chain of RMWs (see the module page).
        self.limit.swap(limit, Ordering::AcqRel);
    }

    /// Publishes `limit` without the latch (CSN views). The caller takes its snapshot after
    /// this returns, and `limit` must not exceed the limit that snapshot will have.
    pub fn open_unlatched(&self, limit: u64) {
        debug_assert_ne!(limit, CLOSED);
        // AcqRel RMW: synchronises with purge's last slot RMW (module page, "CSN views").
        self.limit.swap(limit, Ordering::AcqRel);
    }

    /// Marks the view closed: one atomic swap, no latch. The view's reads happen before it
    /// (Release part of the AcqRel), which a scan that reads `0` acquires.
    pub fn close(&self) {
        self.limit.swap(CLOSED, Ordering::AcqRel);
    }

    /// The open view's limit, or `None` when closed. A read-modify-write, so that it reads
    /// the latest value in the slot's modification order (purge calls this; readers never).
    pub fn limit(&self) -> Option<u64> {
        // AcqRel RMW: acquires the close (see `close`); latest in modification order.
        match self.limit.fetch_add(0, Ordering::AcqRel) {
            CLOSED => None,
            limit => Some(limit),
        }
    }
}

/// Every transaction's view slot, pooled so that a transaction reuses a slot instead of
/// registering a new one: taking and returning one touches a shard latch only. A slot comes
/// back with the view object its last user left (`V`), so that view buffers are reused as
/// InnoDB reuses views from `MVCC::m_free`.
#[derive(Debug)]
pub struct ViewSlots<V = ()> {
    shards: Box<[CachePadded<Mutex<SlotShard<V>>>]>,
}

#[derive(Debug)]
struct SlotShard<V> {
    all: Vec<Arc<ViewSlot>>,
    free: Vec<(Arc<ViewSlot>, Option<V>)>,
}

impl<V> ViewSlots<V> {
    /// Slots spread over `shards` latches (at least one).
    pub fn new(shards: usize) -> ViewSlots<V> {
        ViewSlots {
            shards: (0..shards.max(1))
                .map(|_| {
                    CachePadded::new(Mutex::new(SlotShard {
                        all: Vec::new(),
                        free: Vec::new(),
                    }))
                })
                .collect(),
        }
    }

    /// A closed slot for a new transaction, with the view object left by its last user.
    pub fn take(&self, hint: usize) -> (Arc<ViewSlot>, Option<V>) {
        let mut shard = self.shards[hint % self.shards.len()].lock();
        if let Some(free) = shard.free.pop() {
            return free;
        }
        let slot = Arc::new(ViewSlot::default());
        shard.all.push(Arc::clone(&slot));
        (slot, None)
    }

    /// Closes `slot` and returns it, with a view object to reuse, to the pool.
    pub fn give_back(&self, slot: Arc<ViewSlot>, view: Option<V>, hint: usize) {
        slot.close();
        self.shards[hint % self.shards.len()]
            .lock()
            .free
            .push((slot, view));
    }

    /// `min(upto, the limit of every open view)`: the purge horizon when `upto` is the limit a
    /// view opened now would get. Vector/Hybrid callers hold the trx-sys latch.
    pub fn horizon(&self, upto: u64) -> u64 {
        self.horizon_and_open(upto).0
    }

    /// [`ViewSlots::horizon`], and how many views the scan found open.
    pub fn horizon_and_open(&self, upto: u64) -> (u64, usize) {
        let mut horizon = upto;
        let mut open = 0;
        for shard in self.shards.iter() {
            for slot in shard.lock().all.iter() {
                if let Some(limit) = slot.limit() {
                    horizon = horizon.min(limit);
                    open += 1;
                }
            }
        }
        (horizon, open)
    }

    /// How many views are open now.
    pub fn open_views(&self) -> usize {
        self.horizon_and_open(u64::MAX).1
    }
}
