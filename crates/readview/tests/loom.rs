//! Model checks of the CSN log's lock-free read path under every interleaving loom finds.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p waterline-readview --test loom --release`
//! (the CI script does). Under a normal build this file compiles to nothing.
#![cfg(loom)]

use std::sync::Arc;

use loom::thread;
use waterline_readview::{Csn, CsnLog, ReadView, TrxId, TrxState};

/// A snapshot never sees a commit that is not published, and never loses one that is: its
/// answers are exactly "ended with a CSN at or below mine", and they do not change.
#[test]
fn a_snapshot_sees_exactly_the_published_commits() {
    loom::model(|| {
        let log = Arc::new(CsnLog::with_ring_slots(4).unwrap());
        log.begin(TrxId(1)).unwrap();
        log.begin(TrxId(2)).unwrap();

        let writer = {
            let log = Arc::clone(&log);
            thread::spawn(move || {
                log.commit(TrxId(1)).unwrap();
                log.commit(TrxId(2)).unwrap();
            })
        };

        let snap = log.snapshot(None);
        let seen = [
            snap.changes_visible(TrxId(1)),
            snap.changes_visible(TrxId(2)),
        ];
        let expected = match snap.csn() {
            Csn(0) => [false, false],
            Csn(1) => [true, false],
            _ => [true, true],
        };
        assert_eq!(seen, expected, "snapshot at {:?}", snap.csn());
        writer.join().unwrap();
        // Still the same answers after every commit has finished.
        assert_eq!(
            [
                snap.changes_visible(TrxId(1)),
                snap.changes_visible(TrxId(2))
            ],
            expected
        );
    });
}

/// While the ring slides past a still-active id and its slot is reused by a newer id, a reader
/// of the old id sees it active (from the ring or the retired map), never the newer id's
/// state and never "not begun".
#[test]
fn a_reader_never_trusts_a_reused_slot() {
    loom::model(|| {
        let log = Arc::new(CsnLog::with_ring_slots(2).unwrap());
        log.begin(TrxId(1)).unwrap();

        let writer = {
            let log = Arc::clone(&log);
            thread::spawn(move || {
                // Id 3 needs the ring to start at 2: id 1 (active) retires, and id 3 takes
                // the slot id 1 had.
                log.begin(TrxId(3)).unwrap();
                log.commit(TrxId(3)).unwrap();
            })
        };

        assert_eq!(log.state(TrxId(1)), TrxState::Active);
        writer.join().unwrap();
        assert_eq!(log.state(TrxId(1)), TrxState::Active);
        assert_eq!(log.state(TrxId(3)), TrxState::Ended(Csn(1)));
    });
}
