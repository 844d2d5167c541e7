//! The engine's knobs that belong to the transaction system. Each one switches between the
//! baseline the book measured and the fix it describes, so both run in one engine.

use std::time::Duration;

use waterline_commit::{FlushPolicy, GroupCommitConfig, Wakeup};
use waterline_readview::SnapshotKind;
use waterline_readview::csn::DEFAULT_CSN_RING_SLOTS;
use waterline_readview::hybrid::{DEFAULT_VIEW_WINDOW_BYTES, GLOBAL_WINDOW_BYTES, HybridLayout};
use waterline_throttle::Policy;

use crate::error::TxnError;

/// How a READ COMMITTED statement closes its view (book 8.2.4, "Avoiding Double Latch
/// Problems").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ViewClose {
    /// The baseline: `mutex_enter(&trx_sys->mutex); view_close(view, true); mutex_exit(..)`.
    /// Every statement takes the global trx-sys latch twice: once to open, once to close.
    Latched,
    /// The fix: `view_close(view, false)`. The view is marked closed with one atomic store;
    /// the latch is taken only to open. Why purge stays correct: `trx_sys.rs`, "view close".
    #[default]
    LatchFree,
}

impl ViewClose {
    /// Both modes, baseline first.
    pub const ALL: [ViewClose; 2] = [ViewClose::Latched, ViewClose::LatchFree];

    /// The mode's name as benchmarks print it.
    pub fn name(self) -> &'static str {
        match self {
            ViewClose::Latched => "latched",
            ViewClose::LatchFree => "latch-free",
        }
    }
}

/// A transaction's isolation level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Isolation {
    /// A view per statement, closed at the statement's end: the level the book's TPC-C runs
    /// use, and the one whose view open/close rate the chapter is about.
    #[default]
    ReadCommitted,
    /// One view per transaction, opened at its first consistent read (as InnoDB): snapshot
    /// isolation for plain reads. Write skew is allowed.
    RepeatableRead,
}

/// Every knob of the transaction system. `EngineConfig::default()` is MySQL 8.0.27+ with the
/// book's fixes on: hybrid views, latch-free view close, 256 registry shards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// The ReadView kind and the global active set it is copied from (book 8.2.1-8.2.3).
    pub snapshot: SnapshotKind,
    /// Whether a READ COMMITTED view closes under the trx-sys latch (book 8.2.4).
    pub view_close: ViewClose,
    /// Shards of the registry of live read-write transactions. `1` is the pre-8.0.27 baseline
    /// (one latch for every begin and commit); MySQL 8.0.27 uses 256 (`TRX_SHARDS_N`).
    pub trx_shards: usize,
    /// How long a writer waits for a row lock before it gets
    /// [`TxnError::LockWaitTimeout`] (InnoDB's `innodb_lock_wait_timeout`, 50 s by default).
    /// Zero means "do not wait": fail at once if the lock is held.
    pub lock_wait_timeout: Duration,
    /// How long a transaction that must wait for a row lock first spins for it before it
    /// sleeps, while fewer transactions wait for locks than there are CPUs (so a spinner
    /// leaves the holder a CPU). Zero sleeps at once, as InnoDB's row-lock waits do; InnoDB
    /// spins only on its latches (`innodb_spin_wait_delay`). 30 µs by default: on a
    /// 2-CPU machine, TPC-C's hot rows are held for about that long, and a sleep and
    /// wake-up costs more (see the README's measurements).
    pub lock_spin: Duration,
    /// How many nice levels a row-lock holder's thread is raised by while a transaction waits
    /// for it, until its transaction ends (priority inheritance, Linux only, needs
    /// `CAP_SYS_NICE`; see `boost.rs`). 0 (the default) leaves threads' priorities alone.
    /// For a thread per client and more clients than CPUs: the holder of a hot row then
    /// waits less for a CPU at each of its steps.
    pub lock_holder_boost: u8,
    /// Whether an insert locks its new row implicitly, as InnoDB's inserts do: the row's
    /// uncommitted version is the lock, and the lock table gets no entry unless someone
    /// already holds or awaits the key. A transaction that locks the row meanwhile waits
    /// for the inserter to end. On by default; `false` enters every insert's lock in the
    /// lock table (the baseline).
    pub implicit_insert_locks: bool,
    /// Whether REPEATABLE READ (and SERIALIZABLE) lock gaps, as InnoDB's next-key locking
    /// does, so that a locking read sees no phantom; every new index entry then asks for its
    /// gap first. On by default; `false` locks records only, under every level, and inserts
    /// check no gap (the baseline: phantoms of a locking read come back).
    pub gap_locks: bool,
    /// The isolation level of [`crate::Engine::begin`] (REPEATABLE READ, InnoDB's default);
    /// [`crate::Engine::begin_with`] takes another.
    pub isolation: Isolation,
    /// How often the background purge runs; `None` runs no purge at all, neither the thread
    /// nor the commits' steps ([`EngineConfig::commit_purge`]): call [`crate::Engine::purge`]
    /// yourself.
    pub purge_interval: Option<Duration>,
    /// Whether committing threads help purge (while purge runs at all: `purge_interval` is
    /// `Some`). After every 8th commit, a thread visits up to 16 transactions' records from
    /// the history list (PostgreSQL's backends prune the pages they visit in the same
    /// spirit), if the transactions reading at that moment and itself fill the CPUs. On by
    /// default: with as many clients as CPUs, a purge thread is one thread too many, and a
    /// lock holder it preempts, or a woken waiter it delays, holds up the others; and a
    /// client frees the old versions of the rows it just wrote while they are still in its
    /// cache. With a CPU to spare, the purge thread runs there and the commits leave purge
    /// to it (see the README's measurements).
    pub commit_purge: bool,
    /// Bytes of the hybrid global active set's bitmap window (65,536 in the book).
    pub hybrid_global_window_bytes: usize,
    /// Bytes of a hybrid view's bitmap window.
    pub hybrid_view_window_bytes: usize,
    /// How a hybrid snapshot lays out its copy: the book's (`Book`, the default) or
    /// `Compact` (never more bytes than the ids, but longer under the latch).
    pub hybrid_layout: HybridLayout,
    /// Slots of the CSN log's id ring.
    pub csn_ring_slots: usize,
    /// How a durable engine ([`crate::Engine::open_dir`]) logs and group-commits; an
    /// in-memory engine ([`crate::Engine::open`]) keeps no log and ignores it.
    pub commit: CommitConfig,
    /// Admission at [`crate::Engine::begin`] (book 8.3): `Unlimited` (default, no permit),
    /// `Limit(n)` or `Adaptive`. `ThreadPool` is refused: a pool runs whole transactions,
    /// see `waterline_throttle::Admission::run`.
    pub admission: Policy,
}

/// When a durable commit's row locks go (see `commit.rs`, "Early lock release").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum LockRelease {
    /// In the commit stage, after the group's sync, with the publish: every lock is held
    /// across the fdatasync. MySQL's order with the binary log on (the baseline).
    AfterSync,
    /// In the flush stage, once the commit record is written to the log (Aether's early lock
    /// release; the default): a waiter goes on while the holder's sync runs. Its changes
    /// still become visible only after they are durable, and a transaction that took a
    /// released lock commits after it in the log.
    #[default]
    Early,
}

impl LockRelease {
    /// The mode's name as the command line and the reports say it.
    pub fn name(self) -> &'static str {
        match self {
            LockRelease::AfterSync => "after-sync",
            LockRelease::Early => "early",
        }
    }
}

/// The durable engine's log and group commit (book 8.1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitConfig {
    /// When a commit's group is synced: `EveryCommit` (fdatasync per group, InnoDB's
    /// `innodb_flush_log_at_trx_commit = 1`) or `Os` (= 2). `None` keeps no log: only an
    /// in-memory engine can have it.
    pub flush: FlushPolicy,
    /// Wake-up strategy and sync delay of the group-commit pipeline.
    pub group: GroupCommitConfig,
    /// When a commit's row locks go: after the sync (the baseline) or once its record is
    /// in the log (the default).
    pub lock_release: LockRelease,
    /// Log segment size: a new segment file starts once one holds this many bytes.
    pub segment_bytes: u64,
    /// Recovery with a log damaged other than at its torn tail: `false` (the default)
    /// refuses to open and changes nothing; `true` (InnoDB's `innodb_force_recovery`)
    /// replays up to the damage and cuts the log there, keeping what it cuts aside
    /// (`<segment>.cut`, `*.orphan`): the commits after the damage are lost.
    pub force_recovery: bool,
}

impl Default for CommitConfig {
    fn default() -> Self {
        CommitConfig {
            flush: FlushPolicy::EveryCommit,
            group: GroupCommitConfig::default(),
            lock_release: LockRelease::default(),
            segment_bytes: 64 << 20,
            force_recovery: false,
        }
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            snapshot: SnapshotKind::default(),
            view_close: ViewClose::default(),
            trx_shards: 256,
            lock_wait_timeout: Duration::from_secs(50),
            lock_spin: Duration::from_micros(30),
            lock_holder_boost: 0,
            implicit_insert_locks: true,
            gap_locks: true,
            isolation: Isolation::RepeatableRead,
            purge_interval: Some(Duration::from_millis(10)),
            commit_purge: true,
            hybrid_global_window_bytes: GLOBAL_WINDOW_BYTES,
            hybrid_view_window_bytes: DEFAULT_VIEW_WINDOW_BYTES,
            hybrid_layout: HybridLayout::default(),
            csn_ring_slots: DEFAULT_CSN_RING_SLOTS,
            commit: CommitConfig::default(),
            admission: Policy::Unlimited,
        }
    }
}

impl EngineConfig {
    /// The pre-book baseline: sorted-vector views closed under the latch, one registry shard,
    /// group-commit followers woken by broadcast, row locks held across the sync.
    pub fn baseline() -> Self {
        EngineConfig {
            snapshot: SnapshotKind::Vector,
            view_close: ViewClose::Latched,
            trx_shards: 1,
            commit: CommitConfig {
                group: GroupCommitConfig {
                    wakeup: Wakeup::Broadcast,
                    ..GroupCommitConfig::default()
                },
                lock_release: LockRelease::AfterSync,
                ..CommitConfig::default()
            },
            ..EngineConfig::default()
        }
    }

    /// Shrinks the bitmap windows and the CSN ring to a few dozen ids, so that tests reach the
    /// short -> long overflow and the ring slide with a handful of transactions.
    pub fn with_tiny_windows(mut self) -> Self {
        self.hybrid_global_window_bytes = 16;
        self.hybrid_view_window_bytes = 8;
        self.csn_ring_slots = 8;
        self
    }

    /// Checks the knobs that can be wrong.
    pub fn validate(&self) -> Result<(), TxnError> {
        if self.trx_shards == 0 {
            return Err(TxnError::Config("trx_shards must be at least 1".into()));
        }
        self.admission.validate()?;
        if self.commit.segment_bytes == 0 {
            return Err(TxnError::Config(
                "commit.segment_bytes must be positive".into(),
            ));
        }
        if self.purge_interval == Some(Duration::ZERO) {
            return Err(TxnError::Config(
                "purge_interval must be positive (None turns purge off)".into(),
            ));
        }
        Ok(())
    }
}
