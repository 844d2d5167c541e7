//! The `waterline` command line: `serve` (a MySQL-protocol server), `sql` (an embedded
//! SQL shell), `tpcc` (TPC-C-lite) and `lab` (the book's experiments). Every knob of [`EngineConfig`] is a flag, so one binary runs every baseline
//! and every fix.

pub mod compare;
pub mod lab;
pub mod serve;
pub mod sql;
pub mod tpcc;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use waterline::planner::PlannerMode;
use waterline::throttle::{AdaptiveConfig, Policy};
use waterline::tpcc::native::{DeliveryClaim, StepOrder};
use waterline::txn::{
    CommitConfig, FlushPolicy, GroupCommitConfig, HybridLayout, LockRelease, Recovery, Wakeup,
};
use waterline::{Engine, EngineConfig, Isolation, SnapshotKind, ViewClose};

/// ReadView kinds (book 8.2).
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SnapshotArg {
    /// MySQL's sorted vector of active ids (the baseline).
    Vector,
    /// The book's bitmap + vector view.
    Hybrid,
    /// Commit sequence numbers.
    Csn,
}

/// How a hybrid snapshot lays out its copy.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum HybridLayoutArg {
    /// The book's: every word from the oldest active short id to the newest id.
    Book,
    /// The bitmap from where the copy is smallest, the ids before it as ids.
    Compact,
}

/// How a READ COMMITTED view closes (book 8.2.4).
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ViewCloseArg {
    /// Under the trx-sys latch (the baseline).
    Latched,
    /// Without it.
    LatchFree,
}

/// When a commit's group is synced.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FlushArg {
    /// fdatasync per group (innodb_flush_log_at_trx_commit = 1).
    EveryCommit,
    /// Written, synced by the OS (= 2).
    Os,
}

/// How group-commit followers are woken (book 8.1.2).
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum WakeupArg {
    /// One condvar, notify_all (the baseline).
    Broadcast,
    /// One parker per follower (point to point).
    Parker,
}

/// When a durable commit's row locks go.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum LockReleaseArg {
    /// After the group's fdatasync, when the commit becomes visible (the baseline).
    AfterSync,
    /// Once the commit record is written to the log, before the sync; the commit still
    /// becomes visible only once durable.
    Early,
}

/// Isolation levels.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum IsolationArg {
    /// READ COMMITTED.
    ReadCommitted,
    /// REPEATABLE READ (MySQL's default).
    RepeatableRead,
}

impl From<IsolationArg> for Isolation {
    fn from(i: IsolationArg) -> Isolation {
        match i {
            IsolationArg::ReadCommitted => Isolation::ReadCommitted,
            IsolationArg::RepeatableRead => Isolation::RepeatableRead,
        }
    }
}

/// Parses `unlimited`, `limit:N`, `pool:N` (a thread pool of N workers, the baseline) or
/// `adaptive` (admission at BEGIN, book 8.3).
fn parse_admission(s: &str) -> Result<Policy, String> {
    match s.split_once(':') {
        None if s == "unlimited" => Ok(Policy::Unlimited),
        None if s == "adaptive" => Ok(Policy::Adaptive(AdaptiveConfig::default())),
        Some(("limit", n)) => n
            .parse()
            .map(Policy::Limit)
            .map_err(|e| format!("limit:{n}: {e}")),
        Some(("pool", n)) => n
            .parse()
            .map(Policy::ThreadPool)
            .map_err(|e| format!("pool:{n}: {e}")),
        _ => Err(format!(
            "{s:?}: expected unlimited, limit:N, pool:N or adaptive"
        )),
    }
}

/// [`StepOrder`] as a flag value.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum StepOrderArg {
    /// The hottest row last.
    HotLast,
    /// The spec's order: the hottest row first.
    Spec,
}

impl From<StepOrderArg> for StepOrder {
    fn from(order: StepOrderArg) -> StepOrder {
        match order {
            StepOrderArg::HotLast => StepOrder::HotLast,
            StepOrderArg::Spec => StepOrder::Spec,
        }
    }
}

/// [`DeliveryClaim`] as a flag value.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DeliveryClaimArg {
    /// `FOR UPDATE SKIP LOCKED`: take the next order past one a concurrent Delivery holds.
    SkipLocked,
    /// `FOR UPDATE`: wait for the concurrent Delivery to commit.
    Wait,
}

impl From<DeliveryClaimArg> for DeliveryClaim {
    fn from(claim: DeliveryClaimArg) -> DeliveryClaim {
        match claim {
            DeliveryClaimArg::SkipLocked => DeliveryClaim::SkipLocked,
            DeliveryClaimArg::Wait => DeliveryClaim::Wait,
        }
    }
}

/// What a session runs with: the isolation level, the planner, and the engine's knobs.
/// Shared by `serve` and `tpcc` (whose `--compare` varies one of them).
#[derive(Clone, Debug, Args)]
pub struct Knobs {
    /// The isolation level sessions and transactions start with.
    #[arg(long, value_enum, default_value = "repeatable-read")]
    pub isolation: IsolationArg,
    /// Range analysis: fixed, or legacy8027 (MySQL 8.0.27's regression).
    #[arg(long, default_value = "fixed")]
    pub planner: PlannerMode,
    /// `waterline tpcc --backend native` only: where NewOrder and Payment lock their
    /// hottest row (the district's, the warehouse's): hot-last, or spec (first, in the
    /// order the spec lists the steps, as the SQL text does).
    #[arg(long, value_enum, default_value = "hot-last")]
    pub step_order: StepOrderArg,
    /// `waterline tpcc --backend native` only: how Delivery claims a district's oldest
    /// order: skip-locked (past one a concurrent Delivery holds), or wait (for it to commit,
    /// as the SQL text's plain FOR UPDATE does).
    #[arg(long, value_enum, default_value = "skip-locked")]
    pub delivery_claim: DeliveryClaimArg,
    /// The engine.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// The engine's knobs, as flags.
#[derive(Clone, Debug, Args)]
pub struct EngineArgs {
    /// Keep the data durably in this directory (WAL + checkpoints); without it, in memory.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// ReadView kind.
    #[arg(long, value_enum, default_value = "hybrid")]
    pub snapshot: SnapshotArg,
    /// How a READ COMMITTED view closes.
    #[arg(long, value_enum, default_value = "latch-free")]
    pub view_close: ViewCloseArg,
    /// Shards of the trx registry (1 is the pre-8.0.27 baseline).
    #[arg(long, default_value_t = 256)]
    pub trx_shards: usize,
    /// Row lock wait timeout, in seconds (innodb_lock_wait_timeout).
    #[arg(long, default_value_t = 50)]
    pub lock_wait_timeout: u64,
    /// Microseconds a row-lock waiter spins before it sleeps, while fewer transactions wait
    /// than there are CPUs (0: sleep at once, as InnoDB does)
    #[arg(long, default_value_t = 30)]
    pub lock_spin_us: u64,
    /// Nice levels a row-lock holder's thread is raised by while a transaction waits for it,
    /// until its transaction ends (priority inheritance; Linux, needs CAP_SYS_NICE; 0: off).
    /// For many more client threads than CPUs, as `serve` has.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=39))]
    pub lock_holder_boost: u8,
    /// Whether an insert locks its row implicitly (its uncommitted version is the lock, as
    /// in InnoDB) instead of entering the lock table (false: the baseline).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub implicit_insert_locks: bool,
    /// Whether REPEATABLE READ's locking reads and writes take gap and next-key locks, as
    /// InnoDB's do, so that no phantom appears (false: record locks only, the baseline).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub gap_locks: bool,
    /// Purge every this many milliseconds (0: no purge thread, and no purge at all).
    #[arg(long, default_value_t = 10)]
    pub purge_interval_ms: u64,
    /// Whether committing threads help purge (every 8th commit, up to 16 history entries,
    /// while the running transactions fill the CPUs).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub commit_purge: bool,
    /// Bytes of the hybrid global active set's bitmap window (default: the engine's, 65,536).
    #[arg(long)]
    pub hybrid_global_window_bytes: Option<usize>,
    /// Bytes of a hybrid view's bitmap window (default: the engine's).
    #[arg(long)]
    pub hybrid_view_window_bytes: Option<usize>,
    /// How a hybrid snapshot lays out its copy: the book's, every word from the oldest
    /// active short id on, or compact (never more bytes than the ids, longer under the latch).
    #[arg(long, value_enum, default_value = "book")]
    pub hybrid_layout: HybridLayoutArg,
    /// Slots of the CSN log's ring (default: the engine's).
    #[arg(long)]
    pub csn_ring_slots: Option<usize>,
    /// When the log is synced (with --data-dir).
    #[arg(long, value_enum, default_value = "every-commit")]
    pub flush: FlushArg,
    /// How group-commit followers are woken.
    #[arg(long, value_enum, default_value = "parker")]
    pub wakeup: WakeupArg,
    /// When a commit's row locks go (with --data-dir): after its group's sync, or as soon
    /// as its record is in the log (early lock release, the default; visible still only
    /// once durable).
    #[arg(long, value_enum, default_value = "early")]
    pub lock_release: LockReleaseArg,
    /// Group commit's sync delay, in microseconds (binlog_group_commit_sync_delay).
    #[arg(long, default_value_t = 0)]
    pub sync_delay_us: u64,
    /// Stop the sync delay once this many commits wait (binlog_group_commit_sync_no_delay_count).
    #[arg(long, default_value_t = 0)]
    pub sync_no_delay_count: usize,
    /// Log segment size in bytes.
    #[arg(long, default_value_t = 64 << 20)]
    pub segment_bytes: u64,
    /// With --data-dir, a log damaged other than at its torn tail: recover up to the damage
    /// and cut the log there, keeping what is cut aside (InnoDB's innodb_force_recovery;
    /// the commits after the damage are lost). Without it, such a start is refused and
    /// changes nothing.
    #[arg(long)]
    pub force_recovery: bool,
    /// Admission at BEGIN: unlimited, limit:N, pool:N (thread-pool baseline), or adaptive.
    #[arg(long, default_value = "unlimited", value_parser = parse_admission)]
    pub admission: Policy,
}

impl EngineArgs {
    /// The configuration the flags describe.
    pub fn config(&self) -> EngineConfig {
        let defaults = EngineConfig::default();
        EngineConfig {
            snapshot: match self.snapshot {
                SnapshotArg::Vector => SnapshotKind::Vector,
                SnapshotArg::Hybrid => SnapshotKind::Hybrid,
                SnapshotArg::Csn => SnapshotKind::Csn,
            },
            view_close: match self.view_close {
                ViewCloseArg::Latched => ViewClose::Latched,
                ViewCloseArg::LatchFree => ViewClose::LatchFree,
            },
            trx_shards: self.trx_shards,
            lock_wait_timeout: Duration::from_secs(self.lock_wait_timeout),
            lock_spin: Duration::from_micros(self.lock_spin_us),
            lock_holder_boost: self.lock_holder_boost,
            implicit_insert_locks: self.implicit_insert_locks,
            gap_locks: self.gap_locks,
            isolation: defaults.isolation,
            purge_interval: (self.purge_interval_ms > 0)
                .then(|| Duration::from_millis(self.purge_interval_ms)),
            commit_purge: self.commit_purge,
            hybrid_global_window_bytes: self
                .hybrid_global_window_bytes
                .unwrap_or(defaults.hybrid_global_window_bytes),
            hybrid_view_window_bytes: self
                .hybrid_view_window_bytes
                .unwrap_or(defaults.hybrid_view_window_bytes),
            hybrid_layout: match self.hybrid_layout {
                HybridLayoutArg::Book => HybridLayout::Book,
                HybridLayoutArg::Compact => HybridLayout::Compact,
            },
            csn_ring_slots: self.csn_ring_slots.unwrap_or(defaults.csn_ring_slots),
            commit: CommitConfig {
                flush: match self.flush {
                    FlushArg::EveryCommit => FlushPolicy::EveryCommit,
                    FlushArg::Os => FlushPolicy::Os,
                },
                group: GroupCommitConfig {
                    wakeup: match self.wakeup {
                        WakeupArg::Broadcast => Wakeup::Broadcast,
                        WakeupArg::Parker => Wakeup::Parker,
                    },
                    sync_delay: Duration::from_micros(self.sync_delay_us),
                    sync_no_delay_count: self.sync_no_delay_count,
                },
                lock_release: match self.lock_release {
                    LockReleaseArg::AfterSync => LockRelease::AfterSync,
                    LockReleaseArg::Early => LockRelease::Early,
                },
                segment_bytes: self.segment_bytes,
                force_recovery: self.force_recovery,
            },
            admission: self.admission,
        }
    }

    /// Opens the engine: durable if `--data-dir` is given (with what recovery did).
    pub fn open(&self) -> Result<(Arc<Engine>, Option<Recovery>), waterline::TxnError> {
        let config = self.config();
        Ok(match &self.data_dir {
            Some(dir) => {
                let (engine, recovery) = Engine::open_dir(dir, config)?;
                (Arc::new(engine), Some(recovery))
            }
            None => (Arc::new(Engine::open(config)?), None),
        })
    }
}
