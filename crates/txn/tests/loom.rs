//! loom models of the purge-horizon protocol (`src/horizon.rs`): a view closed without the
//! trx-sys latch, and a CSN view opened without it, racing purge's horizon computation.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p waterline-txn --test loom --release`.
//!
//! Each model has a committing writer (its new version N shadows an old version V), a
//! reader, and purge, which "frees" V when N's commit number is below its horizon. The
//! reader asserts, at the last moment its view is open, that V was not freed if its view does
//! not see N. loom explores every interleaving and every value a load may return, so a
//! horizon that could pass a view still reading V fails the assertion in some execution.
//! The latched model does fail when the slot is published after the latch is released. The
//! CSN model did not fail when purge's slot reads were weakened to plain loads (loom does not
//! produce that store-buffering outcome), so `src/horizon.rs` carries the argument for it.
#![cfg(loom)]

use std::sync::Arc;

use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use loom::thread;
use waterline_readview::{CsnLog, ReadView, TrxId};
use waterline_sync::Mutex;
use waterline_txn::horizon::ViewSlots;

/// What the trx-sys latch protects in the model: whether the writer left the active set,
/// and `next_id` (the next commit number).
struct Latched {
    committed: bool,
    next_id: u64,
}

/// Frees V if N committed below the horizon.
fn purge_frees(horizon: u64, n_no: &AtomicU64, v_freed: &AtomicBool) {
    // Acquire: pairs with the writer's Release stamp, as `Version::committed_before`.
    let no = n_no.load(Ordering::Acquire);
    if no != 0 && no < horizon {
        v_freed.store(true, Ordering::Release);
    }
}

/// Vector/Hybrid: views open under the latch, close with one swap (LatchFree), and the
/// reader closes and re-opens while the writer commits and purge scans.
#[test]
fn latch_free_close_never_lets_purge_free_a_needed_version() {
    loom::model(|| {
        let latch = Arc::new(Mutex::new(Latched {
            committed: false,
            next_id: 2,
        }));
        let slots = Arc::new(ViewSlots::<()>::new(1));
        let n_no = Arc::new(AtomicU64::new(0));
        let v_freed = Arc::new(AtomicBool::new(false));

        let writer = {
            let (latch, n_no) = (Arc::clone(&latch), Arc::clone(&n_no));
            thread::spawn(move || {
                let no = {
                    let mut latched = latch.lock();
                    latched.committed = true;
                    latched.next_id += 1;
                    latched.next_id - 1
                };
                // Release: the engine stamps versions after publishing the commit.
                n_no.store(no, Ordering::Release);
            })
        };
        let reader = {
            let (latch, slots, v_freed) =
                (Arc::clone(&latch), Arc::clone(&slots), Arc::clone(&v_freed));
            thread::spawn(move || {
                let (slot, _) = slots.take(0);
                for _ in 0..2 {
                    let sees_n = {
                        let latched = latch.lock();
                        slot.open_latched(latched.next_id, &latched);
                        latched.committed
                    };
                    if !sees_n {
                        assert!(
                            !v_freed.load(Ordering::Acquire),
                            "purge freed a version an open view still needs"
                        );
                    }
                    slot.close();
                }
            })
        };
        let horizon = {
            let latched = latch.lock();
            slots.horizon(latched.next_id)
        };
        purge_frees(horizon, &n_no, &v_freed);
        writer.join().unwrap();
        reader.join().unwrap();
    });
}

/// Csn: the view opens without the latch (slot swap, then snapshot) while purge reads the
/// last CSN and scans.
#[test]
fn unlatched_csn_open_never_lets_purge_free_a_needed_version() {
    loom::model(|| {
        let log = Arc::new(CsnLog::with_ring_slots(4).unwrap());
        log.begin(TrxId(1)).unwrap();
        let slots = Arc::new(ViewSlots::<()>::new(1));
        let n_no = Arc::new(AtomicU64::new(0));
        let v_freed = Arc::new(AtomicBool::new(false));

        let writer = {
            let (log, n_no) = (Arc::clone(&log), Arc::clone(&n_no));
            thread::spawn(move || {
                let csn = log.commit(TrxId(1)).unwrap();
                n_no.store(csn.get(), Ordering::Release);
            })
        };
        let reader = {
            let (log, slots, v_freed) =
                (Arc::clone(&log), Arc::clone(&slots), Arc::clone(&v_freed));
            thread::spawn(move || {
                let (slot, _) = slots.take(0);
                slot.open_unlatched(log.last_csn().get() + 1);
                let view = log.snapshot(None);
                if !view.changes_visible(TrxId(1)) {
                    assert!(
                        !v_freed.load(Ordering::Acquire),
                        "purge freed a version an open CSN view still needs"
                    );
                }
                slot.close();
            })
        };
        let upto = log.last_csn().get() + 1;
        let horizon = slots.horizon(upto);
        purge_frees(horizon, &n_no, &v_freed);
        writer.join().unwrap();
        reader.join().unwrap();
    });
}
