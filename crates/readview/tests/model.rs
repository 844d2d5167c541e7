//! Invariant 1 of the design: for every snapshot kind, `changes_visible(id)` equals the plain
//! model "id == creator || (id < low_limit_id && id not active at the snapshot)".
//!
//! Random histories of begin (short- or long-lived, with gaps in the ids), end (commit or
//! rollback: the same to visibility), snapshot, dropping a snapshot, and CSN purge drive the
//! three kinds and a `BTreeSet` model side by side. The windows are shrunk (a 128-id global
//! bitmap, 64-id views, an 8-slot CSN ring) so that short -> long overflow, view spill and CSN
//! retirement happen within a few dozen ids. Every snapshot is checked against the model for
//! every id up to past the high-water mark when it is taken, and again at the end of the
//! history, so an answer that changes after later commits is caught too.

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::sample::Index;
use waterline_readview::{
    ActiveSet, Csn, CsnLog, CsnSnapshot, HybridActiveSet, HybridLayout, HybridReadView, ReadView,
    TrxId, VecActiveSet, VecReadView,
};

#[derive(Debug, Clone)]
enum Op {
    /// A transaction gets its id; `gap` ids are skipped first (ids consumed elsewhere).
    Begin { gap: u64, long: bool },
    /// A short-lived transaction ends.
    EndShort(Index),
    /// A long-lived transaction ends (rare: they are long-lived).
    EndLong(Index),
    /// A statement takes a view; its creator is an active transaction or none.
    Snapshot(Option<Index>),
    /// A snapshot is no longer in use.
    Drop(Index),
    /// Purge moves the CSN horizon to the oldest snapshot in use.
    Purge,
}

fn op() -> impl Strategy<Value = Op> {
    let gap = prop_oneof![8 => Just(0u64), 3 => 1u64..6, 1 => 60u64..300];
    prop_oneof![
        40 => (gap, prop::bool::weighted(0.1)).prop_map(|(gap, long)| Op::Begin { gap, long }),
        32 => any::<Index>().prop_map(Op::EndShort),
        2 => any::<Index>().prop_map(Op::EndLong),
        12 => prop::option::weighted(0.7, any::<Index>()).prop_map(Op::Snapshot),
        6 => any::<Index>().prop_map(Op::Drop),
        4 => Just(Op::Purge),
    ]
}

/// A snapshot of every kind, taken at one moment, with what the model says it must see.
struct Taken {
    active: BTreeSet<u64>,
    low_limit: u64,
    creator: Option<u64>,
    vector: VecReadView,
    hybrid: HybridReadView,
    /// The book's layout of the same set.
    book: HybridReadView,
    csn: CsnSnapshot,
}

impl Taken {
    fn model(&self, id: u64) -> bool {
        Some(id) == self.creator || (id < self.low_limit && !self.active.contains(&id))
    }

    fn check(&self, views: [(&str, &dyn Fn(TrxId) -> bool); 4], upto: u64) {
        for id in 0..upto {
            let expected = self.model(id);
            for (kind, visible) in &views {
                assert_eq!(
                    visible(TrxId(id)),
                    expected,
                    "{kind}: id {id}, low_limit {}, creator {:?}, active {:?}",
                    self.low_limit,
                    self.creator,
                    self.active
                );
            }
        }
    }

    fn check_all(&self, upto: u64) {
        self.check(
            [
                ("vector", &|id| self.vector.changes_visible(id)),
                ("hybrid", &|id| self.hybrid.changes_visible(id)),
                ("hybrid, book layout", &|id| self.book.changes_visible(id)),
                ("csn", &|id| self.csn.changes_visible(id)),
            ],
            upto,
        );
    }
}

struct World {
    next: u64,
    short: Vec<u64>,
    long: Vec<u64>,
    vector: VecActiveSet,
    hybrid: HybridActiveSet,
    book: HybridActiveSet,
    csn: Arc<CsnLog>,
    taken: Vec<Taken>,
    // Views reused across snapshots, to check that `snapshot_into` resets everything.
    reused: (VecReadView, HybridReadView, HybridReadView, CsnSnapshot),
}

impl World {
    fn new() -> Self {
        let hybrid = HybridActiveSet::with_windows(16, 8)
            .unwrap()
            .with_layout(HybridLayout::Compact);
        let book = hybrid.clone().with_layout(HybridLayout::Book);
        let csn = Arc::new(CsnLog::with_ring_slots(8).unwrap());
        let reused = (
            VecReadView::default(),
            hybrid.new_view(),
            book.new_view(),
            csn.snapshot(None),
        );
        World {
            next: 1,
            short: Vec::new(),
            long: Vec::new(),
            vector: VecActiveSet::new(),
            hybrid,
            book,
            csn,
            taken: Vec::new(),
            reused,
        }
    }

    fn active(&self) -> BTreeSet<u64> {
        self.short.iter().chain(&self.long).copied().collect()
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Begin { gap, long } => self.begin(*gap, *long),
            Op::EndShort(pick) => self.end(false, |len| pick.index(len)),
            Op::EndLong(pick) => self.end(true, |len| pick.index(len)),
            Op::Snapshot(creator) => {
                self.snapshot(creator.as_ref().map(|pick| |len| pick.index(len)))
            }
            Op::Drop(pick) => self.drop_snapshot(|len| pick.index(len)),
            Op::Purge => self.purge(),
        }
        self.check_sets();
    }

    fn begin(&mut self, gap: u64, long: bool) {
        let id = self.next + gap;
        self.next = id + 1;
        self.vector.insert(TrxId(id)).unwrap();
        self.hybrid.insert(TrxId(id)).unwrap();
        self.book.insert(TrxId(id)).unwrap();
        self.csn.begin(TrxId(id)).unwrap();
        if long {
            &mut self.long
        } else {
            &mut self.short
        }
        .push(id);
    }

    /// Ends the short (or long) transaction at position `pick(len)`, if there is one.
    fn end(&mut self, long: bool, pick: impl FnOnce(usize) -> usize) {
        let from = if long {
            &mut self.long
        } else {
            &mut self.short
        };
        if from.is_empty() {
            return;
        }
        let id = TrxId(from.remove(pick(from.len())));
        self.vector.remove(id).unwrap();
        self.hybrid.remove(id).unwrap();
        self.book.remove(id).unwrap();
        self.csn.commit(id).unwrap();
    }

    fn drop_snapshot(&mut self, pick: impl FnOnce(usize) -> usize) {
        if !self.taken.is_empty() {
            self.taken.swap_remove(pick(self.taken.len()));
        }
    }

    fn purge(&mut self) {
        let horizon = self.taken.iter().map(|t| t.csn.csn()).min();
        self.csn.purge(horizon.unwrap_or(Csn(u64::MAX)));
    }

    /// Takes a snapshot of every kind; its creator is the active transaction at `creator(len)`.
    fn snapshot(&mut self, creator: Option<impl FnOnce(usize) -> usize>) {
        let active = self.active();
        let creator = creator
            .filter(|_| !active.is_empty())
            .map(|pick| *active.iter().nth(pick(active.len())).unwrap());
        let trx = creator.map(TrxId);
        let taken = Taken {
            active,
            low_limit: self.next_low_limit(),
            creator,
            vector: self.vector.snapshot(trx),
            hybrid: self.hybrid.snapshot(trx),
            book: self.book.snapshot(trx),
            csn: self.csn.snapshot(trx),
        };
        let upto = taken.low_limit + 3;
        taken.check_all(upto);
        let (vector, hybrid, book, csn) = &mut self.reused;
        let vector_bytes = self.vector.snapshot_into(vector, trx);
        let hybrid_bytes = self.hybrid.snapshot_into(hybrid, trx);
        self.book.snapshot_into(book, trx);
        self.csn.snapshot_into(csn, trx);
        // The compact layout never copies more than the ids would, but for the bitmap's base.
        assert!(
            hybrid_bytes <= vector_bytes + 8,
            "hybrid {hybrid_bytes} B, vector {vector_bytes} B, active {:?}, view {:?}",
            taken.active,
            hybrid
        );
        taken.check(
            [
                ("reused vector", &|id| vector.changes_visible(id)),
                ("reused hybrid", &|id| hybrid.changes_visible(id)),
                ("reused hybrid, book layout", &|id| book.changes_visible(id)),
                ("reused csn", &|id| csn.changes_visible(id)),
            ],
            upto,
        );
        self.taken.push(taken);
    }

    /// The model's high-water mark: one past the largest id that began.
    fn next_low_limit(&self) -> u64 {
        self.vector.low_limit_id().0
    }

    fn check_sets(&self) {
        let active = self.active();
        assert_eq!(self.vector.len(), active.len());
        assert_eq!(self.hybrid.len(), active.len());
        let oldest = active.first().copied().map(TrxId);
        assert_eq!(self.vector.oldest(), oldest);
        assert_eq!(self.hybrid.oldest(), oldest);
        assert_eq!(self.hybrid.low_limit_id(), self.vector.low_limit_id());
        assert_eq!(self.csn.low_limit_id(), self.vector.low_limit_id());
        for &id in &active {
            assert!(self.hybrid.contains(TrxId(id)), "hybrid lost {id}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn every_kind_agrees_with_the_model(ops in prop::collection::vec(op(), 1..400)) {
        let mut world = World::new();
        for op in &ops {
            world.apply(op);
        }
        let upto = world.next_low_limit() + 3;
        for taken in &world.taken {
            taken.check_all(upto);
        }
    }
}

/// Long transactions that outlive many windows: every one of them overflows, and views
/// taken while they run must still see them as active.
#[test]
fn long_transactions_across_many_windows() {
    let mut world = World::new();
    world.begin(0, true);
    world.begin(0, true);
    let no_creator: Option<fn(usize) -> usize> = None;
    for round in 0..2_000u64 {
        world.begin(round % 3, false);
        if round % 7 == 0 {
            world.snapshot(no_creator);
        }
        world.end(false, |_| 0);
        if round % 50 == 0 {
            world.drop_snapshot(|_| 0);
            world.purge();
        }
        world.check_sets();
    }
    assert!(world.hybrid.overflow_moves() > 0);
    assert!(world.csn.overflow_moves() > 0);
    let upto = world.next_low_limit() + 3;
    for taken in &world.taken {
        taken.check_all(upto);
    }
}

/// Active ids as a few stragglers far below a dense run of recent ones (and sometimes
/// scattered ids alone): the spread that made the book's layout copy more than the vector.
fn stragglers_and_a_run() -> impl Strategy<Value = BTreeSet<u64>> {
    (
        prop::collection::btree_set(1u64..200_000, 0..12),
        200_000u64..300_000,
        0usize..1_500,
        1u64..4,
    )
        .prop_map(|(stragglers, start, run, step)| {
            let mut ids = stragglers;
            ids.extend((0..run as u64).map(|k| start + k * step));
            ids
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// With the book's sizes, whatever the spread: the compact layout copies at most what
    /// the vector does (and the bitmap's base), at most 300 bytes for 1,000 dense ids, and
    /// answers as the model does; the book's layout answers the same.
    #[test]
    fn a_compact_copy_is_never_larger_than_the_ids(ids in stragglers_and_a_run()) {
        let mut vector = VecActiveSet::new();
        let mut compact = HybridActiveSet::new().with_layout(HybridLayout::Compact);
        let mut book = HybridActiveSet::new().with_layout(HybridLayout::Book);
        // Ids between the active ones were consumed by transactions that have ended.
        let last = ids.last().copied().unwrap_or(0);
        for &id in &ids {
            vector.insert(TrxId(id)).unwrap();
            compact.insert(TrxId(id)).unwrap();
            book.insert(TrxId(id)).unwrap();
        }
        let (mut v, mut c, mut b) = (vector.new_view(), compact.new_view(), book.new_view());
        let vector_bytes = vector.snapshot_into(&mut v, None);
        let compact_bytes = compact.snapshot_into(&mut c, None);
        book.snapshot_into(&mut b, None);
        prop_assert!(compact_bytes <= vector_bytes + 8, "{compact_bytes} > {vector_bytes} + 8");
        for id in (0..=last + 70).step_by(7).chain(ids.iter().copied()) {
            let expected = id <= last && !ids.contains(&id);
            prop_assert_eq!(c.changes_visible(TrxId(id)), expected, "compact, id {}", id);
            prop_assert_eq!(b.changes_visible(TrxId(id)), expected, "book, id {}", id);
        }
    }
}

#[test]
fn a_thousand_dense_ids_copy_under_300_bytes_in_either_layout() {
    for layout in [HybridLayout::Compact, HybridLayout::Book] {
        let mut set = HybridActiveSet::new().with_layout(layout);
        for id in 1..=1_000 {
            set.insert(TrxId(id)).unwrap();
        }
        let mut view = set.new_view();
        assert!(set.snapshot_into(&mut view, None) <= 300, "{layout:?}");
    }
}
