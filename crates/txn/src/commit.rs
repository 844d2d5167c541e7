//! The seam where the commit pipeline plugs in. A committing read-write transaction hands
//! its [`Redo`] (its changes, encoded for the log as it made them) and a [`CommitTicket`] to
//! the engine's [`CommitPipeline`]; the pipeline makes the redo durable (as its flush policy
//! says) and then publishes the ticket, alone or with the rest of its group, in commit order:
//!
//! ```text
//!  Transaction::commit ─► pipeline.commit(trx_id, redo, ticket)
//!                            flush + sync (the pipeline's business)
//!                            CommitTicket::publish_group([tickets...])
//!                               trx-sys: remove from active set, one commit number / CSN
//!                               stamp versions, leave the registry, release row locks
//! ```
//!
//! Durable before visible: nothing becomes visible before `publish`. A ticket dropped without
//! being published rolls its transaction back, so a pipeline that fails cannot leave
//! half-committed data behind. [`Immediate`] publishes at once and keeps nothing durable: the
//! in-memory engine, and the baseline the durable pipelines are measured against.
//!
//! # Early lock release
//!
//! With `LockRelease::AfterSync` (the baseline) `publish` releases the row locks, so a
//! durable commit holds them across its group's fdatasync: every transaction queued on a
//! hot row (TPC-C's WAREHOUSE in every Payment) waits for the disk once per holder.
//! `LockRelease::Early` (the default) releases them when the commit record has been written
//! to the log, before the sync ([`CommitTicket::written`], called by the group-commit flush
//! stage), while the changes stay invisible until `publish`, after the sync: early lock
//! release as in Aether (Johnson et al., VLDB 2010) and Controlled Lock Violation (Graefe et al.,
//! SIGMOD 2013), keeping "durable before visible". What each party can observe, with T1
//! released and T2 granted one of its locks:
//!
//! - **A reader** (a consistent read) cannot see T1: T1 is still active in every read view
//!   until it is published, and it is published only once durable. T1's versions are marked
//!   released (`version.rs`), which only says they no longer lock their rows.
//! - **A writer or locking reader** (T2) reads and overwrites T1's newest versions, as a
//!   lock waiter in InnoDB would once T1 committed. T2's own commit record is written after
//!   T1's (T1's was in the log before the lock went), so T2 is synced and published after
//!   T1, never before: no commit is visible or acknowledged without the ones it read or
//!   overwrote. T2 with nothing to log (it only read under a lock) still commits through
//!   the log, behind T1, while any released transaction has not ended
//!   ([`CommitTicket::may_follow_released`]). Until T2 commits, what T2's client sees of
//!   T1 (rows, or a duplicate-key error against T1's insert) is part of T2's unacknowledged
//!   work, as its own writes are; InnoDB, which releases before its flush, shows as much.
//! - **Recovery** replays a prefix of the log: if T2's record survived, T1's, before it,
//!   did too. If T1's sync fails, the pipeline stops and every later commit fails (T2's
//!   included), and T1's versions are unlinked from under T2's (`Chain::pop`) as both roll
//!   back.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use waterline_readview::TrxId;

use crate::error::TxnError;
use crate::lock::Held;
use crate::purge::Tables;
use crate::redo::Redo;
use crate::shared::Shared;
use crate::spare::{LOCKS, UNDO};
use crate::stats::Counter;
use crate::undo::{Undo, undo_all};

/// A committing transaction's right to become visible. Publish it (alone or in a group)
/// once its redo is durable; dropping it unpublished rolls the transaction back.
pub struct CommitTicket {
    pub(crate) ending: Option<Ending>,
}

impl fmt::Debug for CommitTicket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommitTicket")
            .field("trx_id", &self.trx_id())
            .finish()
    }
}

impl CommitTicket {
    /// The committing transaction's id.
    pub fn trx_id(&self) -> Option<TrxId> {
        self.ending.as_ref().map(Ending::trx_id)
    }

    /// Its commit record is in the log, written at `at` (not synced yet). With `release`,
    /// its row locks go now (early lock release, below); either way the time its locks are
    /// then held for the sync is counted ([`crate::Counter::LockHoldAfterLogWriteMicros`]).
    pub fn written(&mut self, at: std::time::Instant, release: bool) {
        if let Some(ending) = self.ending.as_mut() {
            ending.written(at, release);
        }
    }

    /// Whether a transaction released early and not ended yet could have handed this one
    /// a lock: then, even with nothing to log, it must commit behind it in the log.
    pub fn may_follow_released(&self) -> bool {
        self.ending
            .as_ref()
            .is_some_and(Ending::may_follow_released)
    }

    /// Makes this transaction visible.
    pub fn publish(self) -> Result<(), TxnError> {
        CommitTicket::publish_group(vec![self])
    }

    /// Makes a group visible at once, in the given order: one trx-sys latch acquisition
    /// (Vector/Hybrid) or one CSN (Csn) for the whole group.
    pub fn publish_group(mut tickets: Vec<CommitTicket>) -> Result<(), TxnError> {
        let endings: Vec<Ending> = tickets.iter_mut().filter_map(|t| t.ending.take()).collect();
        let Some(first) = endings.first() else {
            return Ok(());
        };
        let shared = first.shared();
        let ids: Vec<TrxId> = endings.iter().map(Ending::trx_id).collect();
        let no = match shared.trx_sys.commit_group(&ids) {
            Ok(no) => no,
            Err(error) => {
                endings.into_iter().for_each(Ending::roll_back);
                return Err(error);
            }
        };
        for ending in endings {
            ending.finish_commit(no);
        }
        Ok(())
    }
}

impl Drop for CommitTicket {
    fn drop(&mut self) {
        if let Some(ending) = self.ending.take() {
            ending.roll_back();
        }
    }
}

/// An engine's commit pipeline, as [`Shared`] holds it.
pub(crate) type Pipeline = Arc<dyn CommitPipeline>;

/// Where commits go after the transaction system has prepared them.
pub trait CommitPipeline: Send + Sync + fmt::Debug {
    /// Makes `redo` durable as the pipeline's policy says, then publishes `ticket` (or lets
    /// another thread, its group's leader, publish it) before returning. An error means the
    /// transaction did not commit; the ticket must then be dropped unpublished.
    fn commit(&self, trx_id: TrxId, redo: Redo, ticket: CommitTicket) -> Result<(), TxnError>;

    /// Whether the pipeline reads the redo it is handed. A pipeline that keeps nothing says
    /// no, and transactions then do not encode their changes.
    fn wants_redo(&self) -> bool {
        true
    }
}

/// Publishes at once; keeps nothing. The in-memory engine's pipeline.
#[derive(Clone, Copy, Debug, Default)]
pub struct Immediate;

impl CommitPipeline for Immediate {
    fn commit(&self, _: TrxId, _: Redo, ticket: CommitTicket) -> Result<(), TxnError> {
        ticket.publish()
    }

    fn wants_redo(&self) -> bool {
        false
    }
}

/// What ending a read-write transaction needs: its id, undo, and locks.
#[derive(Debug)]
pub(crate) struct Ending {
    pub(crate) shared: Arc<Shared<Pipeline>>,
    pub(crate) id: TrxId,
    pub(crate) tables: Tables,
    pub(crate) undo: Vec<Undo>,
    pub(crate) locks: Vec<Held>,
    /// When its commit record was written to the log (a durable pipeline's flush stage), if
    /// it kept its locks: from then on they are held for the sync alone.
    pub(crate) written: Option<Instant>,
    /// Whether its locks were released early, once its record was written (`commit.rs`).
    pub(crate) released: bool,
}

impl Ending {
    pub(crate) fn trx_id(&self) -> TrxId {
        self.id
    }

    pub(crate) fn shared(&self) -> &Arc<Shared<Pipeline>> {
        &self.shared
    }

    /// Its commit record is in the log (at `at`). With `release`, its row locks go now,
    /// before the record is durable and the transaction visible (early lock release,
    /// `commit.rs`): its versions are marked released first, so a transaction granted one
    /// of the locks finds them no longer locking.
    pub(crate) fn written(&mut self, at: Instant, release: bool) {
        if !release {
            self.written = Some(at);
            return;
        }
        for undo in &self.undo {
            undo.version.set_released();
        }
        self.released = true;
        self.shared.released.fetch_add(1, Ordering::SeqCst);
        self.shared.locks.release_all(self.id, &self.locks);
        self.locks.clear();
        self.shared.stats.incr(Counter::EarlyLockReleases);
    }

    /// See [`CommitTicket::may_follow_released`].
    pub(crate) fn may_follow_released(&self) -> bool {
        self.shared.released.load(Ordering::SeqCst) > 0
    }

    /// Releases the locks it still holds and counts how long they were held after its
    /// commit record was written.
    pub(crate) fn end_locks(&mut self) {
        if let Some(written) = self.written.take() {
            let held = u64::try_from(written.elapsed().as_micros()).unwrap_or(u64::MAX);
            self.shared
                .stats
                .add(Counter::LockHoldAfterLogWriteMicros, held);
        }
        self.shared.locks.end(self.id, &self.locks);
    }

    /// After the transaction ended (committed or rolled back) and its locks went: it no
    /// longer counts as released and unpublished.
    fn end_release(&self) {
        if self.released {
            self.shared.released.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// After the transaction became visible with commit number `no`.
    pub(crate) fn finish_commit(mut self, no: u64) {
        for undo in &self.undo {
            undo.version.set_committed(no);
        }
        self.shared.trx_sys.deregister(self.id);
        self.end_locks();
        self.end_release();
        LOCKS.with(|spares| spares.give(self.locks));
        // A version with nothing below it (a new row) leaves purge nothing to cut: only
        // records with older versions go to the history list. Two thirds of a NewOrder's
        // writes are such inserts.
        let mut touched = Vec::with_capacity(self.undo.len());
        touched.extend(
            self.undo
                .iter()
                .filter(|undo| undo.version.has_prev())
                .map(Undo::touched),
        );
        UNDO.with(|spares| spares.give(self.undo));
        self.shared.history.push(no, self.tables, touched);
        self.shared.stats.incr(Counter::Commits);
    }

    /// Undoes every change, newest first, then ends the transaction and releases its locks.
    /// (A transaction whose locks went early is rolled back only when its commit failed in
    /// the log, and then every commit after it fails too: see `Chain::pop`.)
    pub(crate) fn roll_back(mut self) {
        undo_all(
            &self.shared.locks,
            &self.shared.history,
            &self.tables,
            self.undo.iter(),
        );
        UNDO.with(|spares| spares.give(std::mem::take(&mut self.undo)));
        // An id that began cannot fail to end; if the bookkeeping disagrees, the engine is
        // already inconsistent and the debug build says so.
        let ended = self.shared.trx_sys.end_rolled_back(self.id);
        debug_assert!(ended.is_ok(), "ending {} failed: {ended:?}", self.id);
        self.shared.trx_sys.deregister(self.id);
        self.end_locks();
        self.end_release();
        LOCKS.with(|spares| spares.give(self.locks));
        self.shared.stats.incr(Counter::Rollbacks);
    }
}
