//! # waterline-txn: the transaction system and row store
//!
//! The engine the book's chapter 8 measures: a trx-sys whose global latch, active set and
//! view open/close decide whether throughput climbs or collapses as connections grow, over a
//! multi-version row store with READ COMMITTED and REPEATABLE READ.
//!
//! ## The model
//!
//! ```text
//!  Engine ──► Transaction ── first write ──► TrxSys::begin_rw: id, active set, registry shard
//!               │  consistent read ──► view (RC: per statement, RR: per transaction)
//!               │                      walk version chain until view.sees(writer)
//!               │  write ──► row lock (wait / timeout / deadlock) ──► push version + undo
//!               └─ commit ──► CommitPipeline (durability seam) ──► CommitTicket::publish:
//!                             leave active set, commit number, stamp versions, release locks
//!  purge thread ──► horizon = min(open views' limits) ──► unlink versions nobody can see
//! ```
//!
//! - [`TrxSys`] (`trx_sys.rs`): ids, the active set of the configured [`SnapshotKind`]
//!   behind the cache-padded trx-sys latch, the registry of live read-write transactions in
//!   `trx_shards` shards, view open and close ([`ViewClose`]).
//! - `horizon.rs`: the purge horizon, and the argument (checked by loom) that a latch-free
//!   view close cannot let purge remove a version an open view needs.
//! - `version.rs`, `table.rs`: version chains (newest first, roll pointers, delete marks), a
//!   clustered skip-list index per table, secondary indexes whose hits are rechecked.
//! - `hash_index.rs`: the hash map beside each clustered index that point lookups use;
//!   `flat_map.rs`: its shards, linear-probing tables of (hash, record) slots.
//! - Values, keys (bytes that sort as their values do), schemas, key ranges and index
//!   statistics are `waterline-types`', which the planner shares; the engine keeps each
//!   index's statistics there, recomputed after a tenth of the index changed.
//! - `lock.rs`: record, gap, next-key and insert-intention locks (InnoDB's modes), lock-wait
//!   timeout, wait-for-graph deadlock detection; the victim's error is typed and retryable.
//!   `trx/gaps.rs`: which of them a walk, a point read and an insert take.
//! - `trx.rs`: the embedded API ([`Transaction`]), statements; `undo.rs`: what a rollback
//!   pops.
//! - `shared.rs`: what every transaction of an engine shares (trx-sys, locks, catalog,
//!   pipeline, history), and the purge steps committing threads take.
//! - `spare.rs`: the lock and undo lists a thread's transactions reuse.
//! - `purge.rs`: the history list of committed changes that purge visits.
//! - `commit.rs`: the seam where the WAL and group commit plug in ([`CommitPipeline`]), and
//!   a ticket's end of its transaction (publish, or roll back).
//! - `redo.rs`: what a commit's log record holds ([`Redo`], encoded as the changes are made).
//! - `durable.rs`: the durable engine's pipeline, `waterline-commit`'s group commit into its
//!   log, one record per transaction; `recovery.rs`, above the engine: opening one
//!   ([`Engine::open_dir`], [`Recovery`]) and checkpoints from a read view
//!   ([`Engine::checkpoint`]).
//!
//! The files stack without a cycle: `redo`, `undo` and `shared` below `commit`, `commit`
//! below `trx`, `durable` below `engine`, `recovery` above it.
//!
//! ## Invariants
//!
//! 1. A transaction sees its own changes and exactly the changes of transactions its view
//!    sees (`readview`'s invariant), never an uncommitted change of another.
//! 2. Every write happens under the row's exclusive lock, held until the writer ends; so a
//!    chain's versions are in commit order and only its head may be uncommitted.
//! 3. Durable before visible: a commit is published only by the pipeline, after it made the
//!    redo durable; an unpublished commit is rolled back.
//! 4. Purge never unlinks a version an open or future view can reach.
//!
//! ## Left out
//!
//! SERIALIZABLE (the SQL layer builds it as InnoDB does, from REPEATABLE READ and shared
//! locks), READ UNCOMMITTED, savepoints by name, DDL
//! beyond CREATE TABLE, changing a primary key in place, and a buffer pool: everything is in
//! memory, and a durable engine keeps its data as a checkpoint image plus the log after it
//! (recovery reads all of it back at startup).
//!
//! The manual's chapter on the engine, the trx-sys latch, purge and row locks: `docs/src/embedding.md`, `trx-sys.md`, `purge.md` and `locks.md` in the repository (an mdBook:
//! `mdbook serve docs`).

mod boost;
mod commit;
mod config;
mod durable;
mod engine;
mod error;
mod flat_map;
mod hash_index;
pub mod horizon;
mod lock;
mod prefetch;
mod purge;
mod recovery;
mod redo;
mod shared;
mod spare;
mod stats;
use waterline_sync as sync;
mod table;
mod table_id;
mod trx;
mod trx_sys;
mod undo;
mod version;

pub use commit::{CommitPipeline, CommitTicket, Immediate};
pub use config::{CommitConfig, EngineConfig, Isolation, LockRelease, ViewClose};
pub use engine::Engine;
pub use error::{Interruption, TxnError};
pub use lock::{DataLock, DataLockWait, LockMode, LockWait};
pub use purge::PurgeReport;
pub use recovery::{CheckpointReport, Recovery};
pub use redo::{Redo, RedoRecord};
pub use stats::{Counter, Stats, StatsSnapshot};
pub use table::Table;
pub use table_id::TableId;
pub use trx::{LockMark, ReadOptions, Savepoint, Transaction, copy_keyed_row};
pub use trx_sys::{TrxInfo, TrxSys};
pub use waterline_types::{
    Column, ColumnType, DIVE, DateTime, Decimal, INLINE_KEY_BYTES, IndexDef, IndexStats, Key,
    KeyRange, MAX_DECIMAL_SCALE, Refusal, Rng, Row, SchemaError, TableSchema, Text, Value,
    copy_row,
};
// The engine's own paths to the vocabulary it shares with the planner.
pub use waterline_commit::{
    CommitError, FlushPolicy, GroupCommitConfig, GroupCommitStats, Lsn, STAGES as COMMIT_STAGES,
    Tail, Wakeup, WalError,
};
pub use waterline_readview::{
    ActiveSetError, ConfigError as ReadViewConfigError, HybridLayout, SnapshotKind, TrxId,
};
pub use waterline_throttle::{
    AdaptiveConfig, Admission, Metrics as AdmissionMetrics, Policy, ThrottleError,
};
use waterline_types::{index_stats, key, schema, value};
