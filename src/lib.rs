//! # waterline
//!
//! A miniature MVCC row store for studying why transaction systems stop scaling, and what
//! fixes them: the MySQL 8.0 scalability work of Bin Wang's book (chapter 8), each mechanism
//! next to the baseline it replaced, switchable in one engine.
//!
//! This facade re-exports the parts. The default features add the `waterline` command
//! (`cli`) and with it [`server`] and [`tpcc`]; `default-features = false` leaves the engine
//! and SQL, without the protocol's runtime, opensrv, plotters or MySQL clients.
//!
//! * [`types`]: values, keys and their byte encoding, schemas, key ranges and index
//!   statistics, which the engine and the planner share.
//! * [`readview`]: InnoDB's sorted-vector read view, the book's hybrid bitmap + vector view,
//!   and CSN snapshots, with the global active-transaction sets they are copied from.
//! * [`txn`]: the transaction system and row store: [`Engine`], [`Transaction`], READ
//!   COMMITTED and REPEATABLE READ, row locks, purge, and the commit seam.
//! * [`commit`]: the write-ahead log and the three-stage leader/follower group commit with
//!   broadcast or point-to-point wake-ups.
//! * [`throttle`]: transaction admission: a fair semaphore, a thread-pool baseline, and an
//!   adaptive limit that finds the knee.
//! * [`sql`]: SQL sessions over the engine, embeddable (no async runtime, no protocol).
//! * [`server`]: the MySQL protocol over those sessions (`waterline serve`; feature
//!   `server`).
//! * [`planner`]: the range optimizer: table maps, range analysis, access paths, EXPLAIN, and
//!   MySQL 8.0.27's `param_comp` regression as `PlannerMode::Legacy8027`.
//! * [`tpcc`]: TPC-C-lite: schema, loader, the five transactions (typed API and SQL), the
//!   driver, consistency checks and reports (`waterline tpcc`; feature `tpcc`).
//! * [`numa`]: the machine's topology and the thread pinning policies of `waterline lab`
//!   (hwloc, with the `numa` feature).
//!
//! The manual is the book in the repository's `docs/` (an mdBook: `mdbook serve docs`): a
//! chapter per mechanism, in the order of Bin Wang's chapter 8, each with the code it
//! walks through; `docs/src/architecture.md` has the crate graph and one transaction's walk.

#[cfg(feature = "tpcc")]
pub mod numa;

pub use waterline_commit as commit;
pub use waterline_planner as planner;
pub use waterline_readview as readview;
pub use waterline_readview::{ReadView, SnapshotKind, TrxId};
#[cfg(feature = "server")]
pub use waterline_server as server;
pub use waterline_sql as sql;
pub use waterline_throttle as throttle;
#[cfg(feature = "tpcc")]
pub use waterline_tpcc as tpcc;
pub use waterline_txn as txn;
pub use waterline_txn::{Engine, EngineConfig, Isolation, Transaction, TxnError, ViewClose};
pub use waterline_types as types;

/// The README's examples, compiled and run as doctests so that they stay true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The book's chapters (`docs/src/`), whose Rust examples run as doctests so that they stay
/// true; `mdbook build docs` renders the same files.
#[cfg(doctest)]
pub mod book {
    macro_rules! chapters {
        ($($name:ident: $file:literal),* $(,)?) => {$(
            #[doc = include_str!(concat!("../docs/src/", $file))]
            pub struct $name;
        )*};
    }
    chapters! {
        Introduction: "introduction.md",
        Architecture: "architecture.md",
        Embedding: "embedding.md",
        ReadViews: "read-views.md",
        TrxSys: "trx-sys.md",
        Purge: "purge.md",
        Locks: "locks.md",
        GroupCommit: "group-commit.md",
        Recovery: "recovery.md",
        Admission: "admission.md",
        RangeOptimizer: "range-optimizer.md",
        Sql: "sql.md",
        Tpcc: "tpcc.md",
        Lab: "lab.md",
        Results: "results.md",
        Testing: "testing.md",
    }
}
