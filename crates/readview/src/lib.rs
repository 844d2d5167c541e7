//! # waterline-readview: who sees whose changes
//!
//! In an MVCC engine every row version carries the id of the transaction that wrote it. A
//! reader holds a *read view* (a snapshot) and, walking a row's versions from newest to oldest,
//! asks the view one question per version: *are the changes of transaction `id` visible to
//! me?* (`changes_visible`). The view must answer as if time had stopped when it was taken:
//! a transaction that was still active then stays invisible, even after it commits.
//!
//! The plain model every kind here must agree with (and the property tests check):
//!
//! ```text
//! changes_visible(id) = id == creator
//!                    || (id < low_limit_id && id not active when the view was taken)
//! ```
//!
//! ## Three ways to hold "active when the view was taken"
//!
//! ```text
//!                      global structure (behind the trx-sys latch)     per view
//!  ───────────────────────────────────────────────────────────────────────────────────────
//!  Vector  (MySQL 8.0)  sorted Vec<TrxId>                  copy: 8 B/id     test: binary search
//!  Hybrid  (book 8.2.3) bitmap window + long Vec           copy: 1 bit/id   test: 1 bit
//!  Csn     (book 8.2.2) trx id -> CSN map + CSN clock      copy: 24 B       test: 1 map look-up
//! ```
//!
//! * [`VecReadView`] / [`VecActiveSet`] are InnoDB as shipped: a view copies every active id
//!   while holding the global latch, and tests ids by binary search.
//! * [`HybridReadView`] / [`HybridActiveSet`] are the book's fix: ids are consecutive and most
//!   transactions are short, so a bitmap window holds the short ones at one bit each and a
//!   small vector holds the few long ones. The window slides forward; the oldest short ids
//!   overflow into the long vector. See [`hybrid`].
//! * [`CsnSnapshot`] / [`CsnLog`] are the "first approach" the book chose not to build: a
//!   snapshot is one number, the CSN of the last commit, and no list is copied at all. See
//!   [`csn`] for its memory orderings.
//!
//! ## Invariants
//!
//! 1. For every kind, `changes_visible` equals the plain model above, for every id, for as long
//!    as the view lives (`tests/model.rs`, with windows shrunk so overflow happens).
//! 2. Taking a snapshot is a pure copy: it never changes the global structure (the published
//!    patch's view creation moved ids from short to long; ours does not).
//! 3. `snapshot_into` reuses the view's buffers: no allocation once they are large enough.
//! 4. Active sets are plain data behind the caller's latch (`&mut self` to change, `&self` to
//!    copy); the CSN log serialises its own writers and is read without locks.
//!
//! ## Left out
//!
//! Locks, storage, and the trx-sys itself live in `waterline-txn`. Counters here are returned
//! (bytes copied by each snapshot) or kept in the structure (overflow moves); the engine sums
//! them into its statistics. `low_limit_no` (the purge horizon) is carried in the view but set
//! by the transaction system, which knows serialisation numbers.
//!
//! ## Example
//!
//! ```
//! use waterline_readview::{ActiveSet, HybridActiveSet, ReadView, TrxId};
//!
//! let mut active = HybridActiveSet::new();
//! for id in 1..=3 {
//!     active.insert(TrxId(id)).unwrap(); // three transactions write
//! }
//! active.remove(TrxId(2)).unwrap(); // 2 commits
//! let view = active.snapshot(None); // a read-only statement starts
//! active.remove(TrxId(1)).unwrap(); // 1 commits after the snapshot
//!
//! assert!(view.changes_visible(TrxId(2)));
//! assert!(!view.changes_visible(TrxId(1)), "committed after the view was taken");
//! assert!(!view.changes_visible(TrxId(3)), "still active");
//! assert!(!view.changes_visible(TrxId(4)), "did not exist yet");
//! ```
//!
//! The manual's chapter on read views: `docs/src/read-views.md` in the repository (an mdBook:
//! `mdbook serve docs`).

pub mod csn;
mod error;
pub mod hybrid;
mod id;
use waterline_sync as sync;
mod vector;
mod view;

pub use csn::{CsnLog, CsnSnapshot, TrxState};
pub use error::{ActiveSetError, ConfigError};
pub use hybrid::{HybridActiveSet, HybridLayout, HybridReadView};
pub use id::{Csn, TrxId};
pub use vector::{VecActiveSet, VecReadView};
pub use view::{ActiveSet, ReadView, ViewLimits};

/// Which kind of snapshot an engine uses: the knob `EngineConfig::snapshot` of the design.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SnapshotKind {
    /// MySQL 8.0's sorted vector ([`VecReadView`]): the baseline.
    Vector,
    /// The book's bitmap + vector ([`HybridReadView`]).
    #[default]
    Hybrid,
    /// Commit sequence numbers ([`CsnSnapshot`]).
    Csn,
}

impl SnapshotKind {
    /// Every kind, baseline first: for sweeps and tests.
    pub const ALL: [SnapshotKind; 3] = [
        SnapshotKind::Vector,
        SnapshotKind::Hybrid,
        SnapshotKind::Csn,
    ];

    /// The kind's name as the benchmarks and reports print it.
    pub fn name(self) -> &'static str {
        match self {
            SnapshotKind::Vector => "vector",
            SnapshotKind::Hybrid => "hybrid",
            SnapshotKind::Csn => "csn",
        }
    }
}

impl std::fmt::Display for SnapshotKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SnapshotKind {
    type Err = UnknownSnapshotKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SnapshotKind::ALL
            .into_iter()
            .find(|kind| kind.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownSnapshotKind(s.to_owned()))
    }
}

/// A snapshot kind name that is not `vector`, `hybrid` or `csn`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown snapshot kind {0:?}: expected vector, hybrid or csn")]
pub struct UnknownSnapshotKind(pub String);
