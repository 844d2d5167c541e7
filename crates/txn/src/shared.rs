//! What every transaction of an engine shares (the engine owns it, each transaction holds
//! it), and the purge steps committing threads take while the running transactions fill the
//! CPUs.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::RwLock;

use crate::config::EngineConfig;
use crate::lock::LockManager;
use crate::purge::{History, PurgeReport};
use crate::stats::{Counter, Stats};
use crate::table::Table;
use crate::table_id::TableId;
use crate::trx_sys::TrxSys;

/// What every transaction of an engine shares. `P` is the commit pipeline, always
/// `Arc<dyn CommitPipeline>` ([`crate::commit::Pipeline`]): a parameter only so that this
/// file sits below the commit seam, whose tickets end transactions in it.
#[derive(Debug)]
pub(crate) struct Shared<P> {
    pub(crate) config: EngineConfig,
    pub(crate) trx_sys: TrxSys,
    pub(crate) locks: LockManager,
    pub(crate) stats: Arc<Stats>,
    pub(crate) catalog: RwLock<Vec<Table>>,
    /// Bumped by every change of the catalog (CREATE TABLE, CREATE INDEX, DROP TABLE), under
    /// its write lock: a prepared statement's binding is good while this has not moved.
    pub(crate) catalog_version: AtomicU64,
    /// What a layer above keeps with each table of the catalog, by id (see
    /// [`crate::Engine::set_table_attributes`]); changed under the catalog's write lock.
    pub(crate) attributes: parking_lot::Mutex<std::collections::HashMap<TableId, Arc<str>>>,
    /// What a layer above keeps with the engine (see [`crate::Engine::set_attributes`]).
    pub(crate) engine_attributes: parking_lot::Mutex<Option<Arc<str>>>,
    /// The next temporary table's number (its id is this in `TEMPORARY_TABLE_IDS` (`engine.rs`)).
    pub(crate) next_temporary: std::sync::atomic::AtomicU32,
    pub(crate) pipeline: P,
    /// Committed (and rolled-back) transactions' records, waiting for purge.
    pub(crate) history: History,
    /// Set while recovery replays the log: the purge thread and the committing threads'
    /// purge steps wait (an explicit [`crate::Engine::purge`] still runs).
    pub(crate) purge_paused: AtomicBool,
    /// The CPUs this process may use: committing threads help purge only while the
    /// transactions running fill them.
    pub(crate) cpus: usize,
    /// Transactions whose locks went early (`commit.rs`) and that have not ended yet: while
    /// there are any, a transaction that locked something and logged nothing commits
    /// through the log, behind what it may have read (`durable.rs`).
    pub(crate) released: std::sync::atomic::AtomicUsize,
}

/// A committing thread considers a purge step after every this many of its commits
/// ([`EngineConfig::commit_purge`])...
const COMMIT_PURGE_EVERY: u64 = 8;
/// ...which visits at most this many history entries: twice its share, so that the clients
/// keep the list short and the purge thread finds little left.
const COMMIT_PURGE_ENTRIES: usize = 16;

/// Whether a committing thread takes a purge step, with `readers` other transactions
/// reading (views open) on `cpus` CPUs: only while they and it fill the CPUs. With a CPU
/// to spare, the purge thread runs there without delaying anyone, and a step would only
/// lengthen this thread's path.
fn commit_purge_due(readers: usize, cpus: usize) -> bool {
    readers + 1 >= cpus
}

impl<P> Shared<P> {
    pub(crate) fn purge(&self) -> PurgeReport {
        let horizon = self.trx_sys.purge_horizon();
        let versions = self.history.purge(horizon, &self.locks);
        self.stats.incr(Counter::PurgeRuns);
        self.stats.add(Counter::VersionsPurged, versions);
        PurgeReport { horizon, versions }
    }

    /// After a commit: every [`COMMIT_PURGE_EVERY`]th commit of this thread, one bounded
    /// purge step, if [`EngineConfig::commit_purge`] is on and [`commit_purge_due`].
    pub(crate) fn help_purge(&self) {
        thread_local! {
            static COMMITS: Cell<u64> = const { Cell::new(0) };
        }
        if !self.config.commit_purge
            || self.config.purge_interval.is_none()
            || self.purge_paused.load(Ordering::Relaxed)
        {
            return;
        }
        let due = COMMITS.with(|commits| {
            let n = commits.get().wrapping_add(1);
            commits.set(n);
            n % COMMIT_PURGE_EVERY == 0
        });
        if !due || self.history.is_empty() {
            return;
        }
        let (horizon, readers) = self.trx_sys.purge_horizon_and_readers();
        if !commit_purge_due(readers, self.cpus) {
            return;
        }
        let versions = self
            .history
            .purge_some(horizon, COMMIT_PURGE_ENTRIES, &self.locks);
        self.stats.incr(Counter::CommitPurges);
        self.stats.add(Counter::VersionsPurged, versions);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_help_purge_only_while_the_transactions_fill_the_cpus() {
        // One client on two CPUs: the purge thread has the other one.
        assert!(!commit_purge_due(0, 2));
        // Two clients on two CPUs: a purge thread would be a third runnable thread.
        assert!(commit_purge_due(1, 2));
        assert!(commit_purge_due(63, 2));
        assert!(commit_purge_due(0, 1));
        assert!(!commit_purge_due(7, 64));
    }
}
