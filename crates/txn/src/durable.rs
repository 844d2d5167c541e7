//! The durable engine's commit pipeline: commits go through the group commit into the log
//! (`waterline-commit`), and DDL is logged the same way before it takes effect. Checkpoints
//! and recovery, which open an engine over it, are in `recovery.rs`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use parking_lot::Mutex;
use waterline_commit::{GroupCommit, Lsn, TrxTag, Wal};
use waterline_readview::TrxId;

use crate::commit::{CommitPipeline, CommitTicket};
use crate::config::LockRelease;
use crate::error::TxnError;
use crate::redo::{Entry, Redo};
use crate::schema::TableSchema;

pub(crate) fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> TxnError {
    let path = path.to_owned();
    move |error| TxnError::Io {
        what,
        path,
        source: Arc::new(error),
    }
}

/// The engine's pipeline: commits go through the group commit into the log.
pub(crate) struct Durable {
    pub(crate) group: GroupCommit<Option<CommitTicket>>,
    pub(crate) dir: PathBuf,
    /// One checkpoint at a time.
    pub(crate) checkpointing: Mutex<()>,
    /// Where replay after a crash would start: the newest checkpoint's LSN (`Lsn::START`
    /// before the first).
    pub(crate) replay_from: AtomicU64,
    /// Checkpoints taken since the engine opened, and the microseconds they took in all
    /// (`Engine::checkpoint_stats`).
    pub(crate) checkpoints: AtomicU64,
    pub(crate) checkpoint_micros: AtomicU64,
}

impl fmt::Debug for Durable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Durable")
            .field("dir", &self.dir)
            .field("group", &self.group)
            .finish_non_exhaustive()
    }
}

impl CommitPipeline for Durable {
    fn commit(&self, trx_id: TrxId, redo: Redo, ticket: CommitTicket) -> Result<(), TxnError> {
        if redo.is_empty() && !ticket.may_follow_released() {
            // Its changes were all undone: nothing to log, nothing to wait for.
            return ticket.publish();
        }
        // With nothing to log but early-released commits in flight, it may have read (with a
        // lock) a change not durable yet: its empty record, behind that change's in the
        // log, acknowledges it only once what it read is durable and visible.
        self.group
            .commit(TrxTag(trx_id.get()), redo.into_payload(), Some(ticket))
            .map(drop)
            .map_err(TxnError::Commit)
    }
}

impl Durable {
    /// The pipeline over `wal`, whose replay starts at `replay_from`: a group's tickets are
    /// published once it is durable, and with `lock_release` Early their locks go as soon as
    /// their record is written.
    pub(crate) fn new(
        dir: &Path,
        group: waterline_commit::GroupCommitConfig,
        wal: Wal,
        replay_from: Lsn,
        lock_release: LockRelease,
    ) -> Durable {
        Durable {
            group: GroupCommit::new(
                group,
                Some(wal),
                Box::new(|tickets: Vec<Option<CommitTicket>>| {
                    CommitTicket::publish_group(tickets.into_iter().flatten().collect())
                        .map_err(|error| error.to_string())
                }),
            )
            .on_written(Box::new(move |ticket: &mut Option<CommitTicket>, at| {
                if let Some(ticket) = ticket {
                    ticket.written(at, lock_release == LockRelease::Early);
                }
            })),
            dir: dir.to_owned(),
            checkpointing: Mutex::new(()),
            replay_from: AtomicU64::new(replay_from.get()),
            checkpoints: AtomicU64::new(0),
            checkpoint_micros: AtomicU64::new(0),
        }
    }

    /// Logs a `CREATE TABLE` (durably, as a commit) before the table can be used.
    pub(crate) fn log_create_table(&self, schema: &TableSchema) -> Result<(), TxnError> {
        self.log_ddl(&Entry::CreateTable(schema.clone()))
    }

    /// Logs a DDL entry durably (under the catalog lock, as CREATE TABLE).
    pub(crate) fn log_ddl(&self, entry: &Entry) -> Result<(), TxnError> {
        let payload = entry.encode();
        self.group
            .commit(TrxTag(0), payload, None)
            .map(drop)
            .map_err(TxnError::Commit)
    }
}
