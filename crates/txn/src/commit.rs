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

use waterline_readview::TrxId;

use crate::error::TxnError;
use crate::key::Key;
use crate::table_id::TableId;
use crate::trx::Ending;
use crate::value::{Row, Value};

/// One logical change, as the log records it: the row image after the change, by key.
#[derive(Clone, Debug, PartialEq)]
pub struct RedoRecord {
    /// The table.
    pub table: TableId,
    /// The row's primary key (or hidden row id).
    pub key: Key,
    /// The row after the change; `None` for a delete.
    pub after: Option<Row>,
}

/// A transaction's changes as its commit's log record carries them, encoded change by change
/// as the transaction makes them (the `commit` entry of `redo.rs`): a commit hands the log
/// the bytes it writes, with no copy of a row image on the way (InnoDB's mini-transactions
/// write redo into their log buffer as they go, likewise). Empty for a transaction whose
/// pipeline keeps nothing ([`CommitPipeline::wants_redo`]).
#[derive(Clone, Default, PartialEq)]
pub struct Redo {
    /// The entry so far: its kind and a change count (written in [`Redo::into_payload`]),
    /// then the changes; nothing before the first change.
    bytes: Vec<u8>,
    changes: u32,
}

/// Where a savepoint found a transaction's [`Redo`]: changes after it are undone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RedoMark {
    bytes: usize,
    changes: u32,
}

impl Redo {
    /// Room for a small transaction's changes (a sysbench write_only transaction's four rows
    /// are some 800 bytes), so that most commits allocate their record once.
    const FIRST_CAPACITY: usize = 1024;

    /// How many changes it holds.
    pub fn len(&self) -> usize {
        self.changes as usize
    }

    /// Whether it holds no change.
    pub fn is_empty(&self) -> bool {
        self.changes == 0
    }

    /// The changes, decoded (for a pipeline or a test that looks at them).
    pub fn records(&self) -> Result<Vec<RedoRecord>, TxnError> {
        match crate::redo::Entry::decode(&self.clone().into_payload())? {
            crate::redo::Entry::Commit(records) => Ok(records),
            _ => Err(TxnError::Durability(
                "a redo buffer holds something other than a commit".to_owned(),
            )),
        }
    }

    /// Adds one change: the row under `key` of `table` becomes `after` (`None`: deleted).
    pub(crate) fn push(&mut self, table: TableId, key: &Key, after: Option<&[Value]>) {
        if self.bytes.is_empty() {
            self.bytes.reserve(Self::FIRST_CAPACITY);
            crate::redo::start_commit(&mut self.bytes);
        }
        crate::redo::put_change(&mut self.bytes, table, key, after);
        self.changes += 1;
    }

    pub(crate) fn mark(&self) -> RedoMark {
        RedoMark {
            bytes: self.bytes.len(),
            changes: self.changes,
        }
    }

    /// Forgets the changes made after `mark`.
    pub(crate) fn truncate(&mut self, mark: RedoMark) {
        if mark.changes < self.changes {
            self.bytes.truncate(mark.bytes);
            self.changes = mark.changes;
        }
    }

    /// The log record's payload: the whole `commit` entry.
    pub fn into_payload(mut self) -> Vec<u8> {
        if self.bytes.is_empty() {
            crate::redo::start_commit(&mut self.bytes);
        }
        crate::redo::finish_commit(&mut self.bytes, self.changes);
        self.bytes
    }
}

impl fmt::Debug for Redo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redo")
            .field("changes", &self.changes)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

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
