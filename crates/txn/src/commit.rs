//! The seam where the commit pipeline plugs in. A committing read-write transaction hands
//! its redo records and a [`CommitTicket`] to the engine's [`CommitPipeline`]; the pipeline
//! makes the records durable (as its flush policy says) and then publishes the ticket, alone
//! or with the rest of its group, in commit order:
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

use std::fmt;

use waterline_readview::TrxId;

use crate::error::TxnError;
use crate::key::Key;
use crate::table_id::TableId;
use crate::trx::Ending;
use crate::value::Row;

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
    fn commit(
        &self,
        trx_id: TrxId,
        redo: Vec<RedoRecord>,
        ticket: CommitTicket,
    ) -> Result<(), TxnError>;

    /// Whether the pipeline reads the redo records it is handed. A pipeline that keeps
    /// nothing says no, and transactions then do not copy their row images into redo.
    fn wants_redo(&self) -> bool {
        true
    }
}

/// Publishes at once; keeps nothing. The in-memory engine's pipeline.
#[derive(Clone, Copy, Debug, Default)]
pub struct Immediate;

impl CommitPipeline for Immediate {
    fn commit(&self, _: TrxId, _: Vec<RedoRecord>, ticket: CommitTicket) -> Result<(), TxnError> {
        ticket.publish()
    }

    fn wants_redo(&self) -> bool {
        false
    }
}
