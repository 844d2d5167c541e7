//! # waterline-commit: durable commits
//!
//! The write-ahead log ([`Wal`]) and the leader/follower group-commit pipeline
//! ([`GroupCommit`]) that writes to it, as MySQL's binlog group commit (book 8.1.2). The
//! pipeline has three stages (flush: one write for the group; sync: one fdatasync; commit:
//! publish in order), and two ways to wake the followers a leader worked for ([`Wakeup`]):
//! one condition variable broadcast to all (the baseline) or one parker each (the fix). It
//! counts what the book measured ([`GroupCommitStats`]): group sizes, fsyncs, and the wake-up
//! efficiency.
//!
//! ```text
//!  commit ──► flush queue ─leader─► Wal::write_batch   (one write per group)
//!         ──► sync queue  ─leader─► Syncer::sync       (one fdatasync, EveryCommit)
//!         ──► commit queue─leader─► publish(group)     (in log order) ─► signal_done
//!  startup ─► Wal::open_from(dir, checkpoint) ── scan from there, record by record:
//!                               whole? checksum? expected LSN? ── stop at the first "no"
//!                               torn tail? cut it : refuse, change nothing (unless forced)
//! ```
//!
//! Invariants:
//! 1. A record is replayed only if all of it is on disk, its CRC32C matches, and it carries
//!    the LSN its position implies; nothing after the first record that fails is replayed.
//! 2. Durable before visible: a commit is published only after its record is synced (under
//!    [`FlushPolicy::EveryCommit`]), and `commit` returns only after it is published.
//! 3. Groups are published in log order, so the published commits are always a prefix of
//!    the log ([`GroupCommit::with_publishing_paused`] names where it ends).
//! 4. With [`Wakeup::Parker`] a follower is woken at most once, and never in vain.
//! 5. Opening never panics on damaged files and never loses an acknowledged record on its
//!    own: it cuts only a torn tail (nothing valid after the damage); other damage refuses
//!    the open with every byte unchanged, and a forced open keeps what it cuts aside.
//! 6. The [`Written`] hook (the engine's early lock release) sees each item after its record
//!    is written and before it is published, in log order, so whatever another committer
//!    does after seeing it is logged, synced and published after it; and after any failure
//!    (write, sync, publish) every later commit fails, so none can outlive one it built on.
//!
//! This crate knows nothing of the engine: a record's payload is bytes, its owner a
//! [`TrxTag`], and what a commit publishes is any `T`.
//!
//! The manual's chapter on group commit and recovery: `docs/src/group-commit.md` and `recovery.md` in the repository (an mdBook:
//! `mdbook serve docs`).

mod group;
mod record;
mod stats;
use waterline_sync as sync;
mod wal;

pub use group::{CommitError, GroupCommit, GroupCommitConfig, Outcome, Publish, Wakeup, Written};
pub use record::{Damage, HEADER_BYTES, Lsn, MAX_PAYLOAD_BYTES, Record, TrxTag};
pub use stats::{GROUP_SIZE_BUCKETS, GroupCommitStats, STAGES, WAKES_PER_FOLLOWER_BUCKETS};
pub use wal::{
    FlushPolicy, PREALLOCATE_BYTES, Scan, Syncer, Tail, Wal, WalConfig, WalError, record_bytes,
    scan,
};
