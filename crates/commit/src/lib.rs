//! # waterline-commit: durable commits
//!
//! What is here so far: the write-ahead log ([`Wal`]). It keeps checksummed records in
//! segment files and flushes them as [`FlushPolicy`] says. Opening it scans the existing log
//! and stops cleanly at a torn or corrupt tail, reporting where ([`Tail`]). Group commit, its
//! wake-up strategies, checkpoints, recovery into the engine, and the wiring into
//! `waterline-txn`'s commit seam are the next steps (issue 4); they build on this log.
//!
//! ```text
//!  commit group ──► Wal::append_batch([(trx, redo), ...]) ── one write ── one fdatasync
//!                                                                  (EveryCommit)
//!  startup      ──► Wal::open(dir) ── scan: segment by segment, record by record:
//!                                     whole? checksum? expected LSN? ── stop at the first "no"
//! ```
//!
//! Invariants:
//! 1. A record is replayed only if all of it is on disk, its CRC32C matches, and it carries
//!    the LSN its position implies; nothing after the first record that fails is replayed.
//! 2. After `append_batch` returns `Ok` under [`FlushPolicy::EveryCommit`], the batch
//!    survives a crash.
//! 3. Opening never panics on damaged files; it reports the damage and moves unreadable
//!    segments aside instead of deleting them.
//!
//! This crate knows nothing of the engine: a record's payload is bytes and its owner a
//! [`TrxTag`].

mod record;
mod wal;

pub use record::{Damage, HEADER_BYTES, Lsn, MAX_PAYLOAD_BYTES, Record, TrxTag};
pub use wal::{FlushPolicy, Scan, Tail, Wal, WalConfig, WalError, record_bytes, scan};
