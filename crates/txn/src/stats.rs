//! What the transaction system did, counted cheaply: each thread adds to one of a few
//! cache-padded counter blocks (chosen once per thread), so counting never contends on one
//! line; reading sums the blocks and can happen at any time.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

/// The counters, named for what they count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(usize)]
pub enum Counter {
    /// Read views opened.
    ViewsOpened,
    /// Read views closed.
    ViewsClosed,
    /// Bytes copied into read views at open.
    ViewBytesCopied,
    /// Acquisitions of the global trx-sys latch (view open, latched view close, trx id
    /// assignment, commit, purge).
    TrxSysLatch,
    /// Acquisitions of the trx-sys latch that found it held and waited (contention).
    TrxSysLatchWaits,
    /// Acquisitions of a registry shard's latch.
    RegistryLatch,
    /// Acquisitions of a registry shard's latch that found it held and waited.
    RegistryLatchWaits,
    /// Nanoseconds the trx-sys latch was held, estimated from sampled holds (see
    /// `waterline_sync::held`).
    TrxSysLatchHeldNs,
    /// Nanoseconds registry shards' latches were held, estimated likewise.
    RegistryLatchHeldNs,
    /// Acquisitions of a lock-table shard's latch (every row and gap lock request,
    /// release, and check).
    LockTableLatch,
    /// Nanoseconds lock-table shards' latches were held, estimated likewise; the time a
    /// waiter sleeps or spins with the latch given back is not counted.
    LockTableLatchHeldNs,
    /// Read-write transactions begun (trx ids assigned).
    RwTrxBegun,
    /// Transactions committed.
    Commits,
    /// Transactions rolled back.
    Rollbacks,
    /// Row lock requests that had to wait.
    LockWaits,
    /// Lock waits that ended while the waiter spun, before it slept
    /// ([`crate::EngineConfig::lock_spin`]).
    LockSpinGrants,
    /// Lock waits that timed out.
    LockWaitTimeouts,
    /// Row locks a NOWAIT or SKIP LOCKED read found held and did not wait for
    /// ([`crate::LockWait`]).
    LockNowaits,
    /// Deadlocks detected.
    Deadlocks,
    /// Lock holders' threads raised in priority for a waiter
    /// ([`crate::EngineConfig::lock_holder_boost`]).
    LockBoosts,
    /// Lock holders' threads a waiter was not allowed to raise (no `CAP_SYS_NICE`).
    LockBoostsDenied,
    /// Row versions unlinked by purge.
    VersionsPurged,
    /// Purge passes run (by the purge thread, or [`crate::Engine::purge`]).
    PurgeRuns,
    /// Purge steps committing threads ran ([`crate::EngineConfig::commit_purge`]).
    CommitPurges,
    /// Transactions whose row locks were released once their commit record was in the log,
    /// before it was durable ([`crate::LockRelease::Early`]).
    EarlyLockReleases,
    /// Microseconds, summed over durable commits, that row locks were held after the
    /// transaction's commit record was written to the log: the time the sync (and the
    /// commit stage) kept them. Zero for a commit whose locks went early.
    LockHoldAfterLogWriteMicros,
}

const COUNTERS: usize = Counter::LockHoldAfterLogWriteMicros as usize + 1;

impl Counter {
    /// Every counter, in declaration order.
    pub const ALL: [Counter; COUNTERS] = [
        Counter::ViewsOpened,
        Counter::ViewsClosed,
        Counter::ViewBytesCopied,
        Counter::TrxSysLatch,
        Counter::TrxSysLatchWaits,
        Counter::RegistryLatch,
        Counter::RegistryLatchWaits,
        Counter::TrxSysLatchHeldNs,
        Counter::RegistryLatchHeldNs,
        Counter::LockTableLatch,
        Counter::LockTableLatchHeldNs,
        Counter::RwTrxBegun,
        Counter::Commits,
        Counter::Rollbacks,
        Counter::LockWaits,
        Counter::LockSpinGrants,
        Counter::LockWaitTimeouts,
        Counter::LockNowaits,
        Counter::Deadlocks,
        Counter::LockBoosts,
        Counter::LockBoostsDenied,
        Counter::VersionsPurged,
        Counter::PurgeRuns,
        Counter::CommitPurges,
        Counter::EarlyLockReleases,
        Counter::LockHoldAfterLogWriteMicros,
    ];

    /// A snake_case name, for reports.
    pub fn name(self) -> &'static str {
        match self {
            Counter::ViewsOpened => "views_opened",
            Counter::ViewsClosed => "views_closed",
            Counter::ViewBytesCopied => "view_bytes_copied",
            Counter::TrxSysLatch => "trx_sys_latch",
            Counter::TrxSysLatchWaits => "trx_sys_latch_waits",
            Counter::RegistryLatch => "registry_latch",
            Counter::RegistryLatchWaits => "registry_latch_waits",
            Counter::TrxSysLatchHeldNs => "trx_sys_latch_held_ns",
            Counter::RegistryLatchHeldNs => "registry_latch_held_ns",
            Counter::LockTableLatch => "lock_table_latch",
            Counter::LockTableLatchHeldNs => "lock_table_latch_held_ns",
            Counter::RwTrxBegun => "rw_trx_begun",
            Counter::Commits => "commits",
            Counter::Rollbacks => "rollbacks",
            Counter::LockWaits => "lock_waits",
            Counter::LockSpinGrants => "lock_spin_grants",
            Counter::LockWaitTimeouts => "lock_wait_timeouts",
            Counter::LockNowaits => "lock_nowaits",
            Counter::Deadlocks => "deadlocks",
            Counter::LockBoosts => "lock_boosts",
            Counter::LockBoostsDenied => "lock_boosts_denied",
            Counter::VersionsPurged => "versions_purged",
            Counter::PurgeRuns => "purge_runs",
            Counter::CommitPurges => "commit_purges",
            Counter::EarlyLockReleases => "early_lock_releases",
            Counter::LockHoldAfterLogWriteMicros => "lock_hold_after_log_write_us",
        }
    }
}
const BLOCKS: usize = 16;

/// A reading of every counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    values: [u64; COUNTERS],
}

impl StatsSnapshot {
    /// The value of one counter.
    pub fn get(&self, counter: Counter) -> u64 {
        self.values[counter as usize]
    }

    /// The counts since an earlier reading.
    pub fn since(&self, earlier: &StatsSnapshot) -> StatsSnapshot {
        let mut values = [0; COUNTERS];
        for (i, v) in values.iter_mut().enumerate() {
            *v = self.values[i].saturating_sub(earlier.values[i]);
        }
        StatsSnapshot { values }
    }
}

/// Sharded counters. `Stats::add` is one relaxed `fetch_add` on a line few threads share.
#[derive(Debug)]
pub struct Stats {
    blocks: Box<[CachePadded<[AtomicU64; COUNTERS]>]>,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            blocks: (0..BLOCKS)
                .map(|_| CachePadded::new(std::array::from_fn(|_| AtomicU64::new(0))))
                .collect(),
        }
    }
}

/// A small number fixed per thread, to spread threads over shards of anything.
pub(crate) fn thread_hint() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        // Relaxed: only spreads threads over blocks; no data hangs on it.
        static BLOCK: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    BLOCK.with(|b| *b)
}

impl Stats {
    /// Adds `n` to `counter`.
    #[inline]
    pub fn add(&self, counter: Counter, n: u64) {
        // Relaxed: a statistic; readers want a sum, not an order with other memory.
        self.blocks[thread_hint() % BLOCKS][counter as usize].fetch_add(n, Ordering::Relaxed);
    }

    /// The calling thread's cell of `counter`, to add to directly (a held latch's time,
    /// `waterline_sync::held::Held`).
    #[inline]
    pub(crate) fn cell(&self, counter: Counter) -> &AtomicU64 {
        &self.blocks[thread_hint() % BLOCKS][counter as usize]
    }

    /// Adds one to `counter`.
    #[inline]
    pub fn incr(&self, counter: Counter) {
        self.add(counter, 1);
    }

    /// Sums the blocks.
    pub fn snapshot(&self) -> StatsSnapshot {
        let mut values = [0; COUNTERS];
        for block in self.blocks.iter() {
            for (sum, counter) in values.iter_mut().zip(block.iter()) {
                // Relaxed: see `add`.
                *sum += counter.load(Ordering::Relaxed);
            }
        }
        StatsSnapshot { values }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use waterline_sync::held::Held;

    #[test]
    fn counts_from_many_threads_add_up() {
        let stats = Stats::default();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        stats.incr(Counter::Commits);
                    }
                });
            }
        });
        let reading = stats.snapshot();
        assert_eq!(reading.get(Counter::Commits), 4000);
        assert_eq!(reading.since(&reading).get(Counter::Commits), 0);
    }

    /// Holds of a known length, timed one in `SAMPLE_EVERY` at random, add up to about
    /// their whole; the time the latch is given back inside a hold is not counted.
    #[test]
    fn a_latch_held_a_known_time_is_reported_within_bounds() {
        let stats = Stats::default();
        let latch = parking_lot::Mutex::new(());
        let hold = std::time::Duration::from_micros(20);
        let holds = 4000u32;
        let spin = |d: std::time::Duration| {
            let began = std::time::Instant::now();
            while began.elapsed() < d {
                std::hint::spin_loop();
            }
        };
        for _ in 0..holds {
            let mut held = Held::sampled(latch.lock(), stats.cell(Counter::TrxSysLatchHeldNs));
            spin(hold);
            held.unlocked(|g| parking_lot::MutexGuard::unlocked(g, || spin(hold)));
        }
        let reported = stats.snapshot().get(Counter::TrxSysLatchHeldNs) as f64;
        let truth = f64::from(holds) * hold.as_nanos() as f64;
        // About 125 sampled holds: within a factor of 1.5 on any machine, preemption aside
        // (which can only lengthen a hold).
        assert!(
            reported > truth / 1.5 && reported < truth * 3.0,
            "reported {reported} ns held, {truth} ns true"
        );
    }
}
