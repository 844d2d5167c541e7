//! What the group-commit pipeline counts: commits, groups and their sizes, fsyncs, and the
//! book's wake-up metric (8.1.2).
//!
//! A *follower* is a committer whose work another thread (its group's leader) did; it waits
//! until the leader signals it done. Every time a waiting follower returns from its wait is a
//! *wake-up*; a wake-up that finds the follower's commit not done yet is *wasted* (the
//! follower goes back to sleep). Wake-up efficiency = useful wake-ups / wake-ups, where a
//! useful wake-up releases its follower. MySQL's broadcast measured 52.7%; point-to-point
//! wake-ups are 100% by construction. A follower that finds its commit already done when it
//! comes to wait is released without sleeping (no wake-up at all).

use std::sync::atomic::{AtomicU64, Ordering};

/// Upper bounds of the group-size histogram's buckets (the last bucket is open-ended).
pub const GROUP_SIZE_BUCKETS: [u64; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, u64::MAX];

/// Upper bounds of the wake-ups-per-follower histogram's buckets (book Fig 8-16/17): 0 is a
/// follower released without sleeping.
pub const WAKES_PER_FOLLOWER_BUCKETS: [u64; 7] = [0, 1, 2, 3, 7, 15, u64::MAX];

fn bucket(bounds: &[u64], value: u64) -> usize {
    bounds
        .iter()
        .position(|&upper| value <= upper)
        .unwrap_or(bounds.len() - 1)
}

/// The live counters (relaxed atomics: they are statistics, not synchronisation).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    commits: AtomicU64,
    failed: AtomicU64,
    groups: AtomicU64,
    group_sizes: [AtomicU64; GROUP_SIZE_BUCKETS.len()],
    fsyncs: AtomicU64,
    sync_micros: AtomicU64,
    bytes: AtomicU64,
    followers: AtomicU64,
    wakeups: AtomicU64,
    wasted: AtomicU64,
    wakes_per_follower: [AtomicU64; WAKES_PER_FOLLOWER_BUCKETS.len()],
    /// Nanoseconds each stage's latch was held (flush, sync, commit).
    pub(crate) stage_held: [AtomicU64; 3],
}

impl Counters {
    fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn log_bytes(&self, bytes: u64) {
        Self::add(&self.bytes, bytes);
    }

    pub(crate) fn group(&self, size: usize) {
        Self::add(&self.groups, 1);
        Self::add(
            &self.group_sizes[bucket(&GROUP_SIZE_BUCKETS, size as u64)],
            1,
        );
    }

    /// One `fdatasync`, which took `took`.
    pub(crate) fn fsync(&self, took: std::time::Duration) {
        Self::add(&self.fsyncs, 1);
        Self::add(
            &self.sync_micros,
            u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
        );
    }

    pub(crate) fn outcome(&self, committed: usize, failed: usize) {
        Self::add(&self.commits, committed as u64);
        Self::add(&self.failed, failed as u64);
    }

    /// A follower was released after `wakeups` wake-ups, of which all but the last were
    /// wasted (0: released without sleeping).
    pub(crate) fn follower(&self, wakeups: u64) {
        Self::add(&self.followers, 1);
        Self::add(&self.wakeups, wakeups);
        Self::add(&self.wasted, wakeups.saturating_sub(1));
        Self::add(
            &self.wakes_per_follower[bucket(&WAKES_PER_FOLLOWER_BUCKETS, wakeups)],
            1,
        );
    }

    pub(crate) fn snapshot(&self) -> GroupCommitStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        GroupCommitStats {
            commits: get(&self.commits),
            failed: get(&self.failed),
            groups: get(&self.groups),
            group_sizes: self.group_sizes.each_ref().map(get),
            fsyncs: get(&self.fsyncs),
            sync_micros: get(&self.sync_micros),
            bytes: get(&self.bytes),
            followers: get(&self.followers),
            wakeups: get(&self.wakeups),
            wasted_wakeups: get(&self.wasted),
            wakes_per_follower: self.wakes_per_follower.each_ref().map(get),
            stage_held_ns: self.stage_held.each_ref().map(get),
        }
    }
}

/// The pipeline's counters at one moment. Subtract two with [`GroupCommitStats::since`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupCommitStats {
    /// Commits published.
    pub commits: u64,
    /// Commits that failed (log error, or publishing failed).
    pub failed: u64,
    /// Groups formed by flush-stage leaders.
    pub groups: u64,
    /// Groups by size; bucket `i` counts groups of at most `GROUP_SIZE_BUCKETS[i]` commits
    /// (and more than the bound before it).
    pub group_sizes: [u64; GROUP_SIZE_BUCKETS.len()],
    /// `fdatasync` calls by the sync stage.
    pub fsyncs: u64,
    /// Microseconds the sync stage spent in `fdatasync`: over a measured window's length,
    /// how busy the log's disk kept the pipeline (what is left, the sync leader's idle
    /// time, is when no group was being synced).
    pub sync_micros: u64,
    /// Log bytes written.
    pub bytes: u64,
    /// Committers that waited for a leader.
    pub followers: u64,
    /// Times a waiting follower returned from its wait.
    pub wakeups: u64,
    /// Wake-ups that found the follower's commit not done.
    pub wasted_wakeups: u64,
    /// Followers by the wake-ups they needed; bucket `i` counts followers woken at most
    /// `WAKES_PER_FOLLOWER_BUCKETS[i]` times (bucket 0: released without sleeping).
    pub wakes_per_follower: [u64; WAKES_PER_FOLLOWER_BUCKETS.len()],
    /// Nanoseconds the flush, sync and commit stages' latches were held (every hold
    /// timed: a stage is taken once per group), in that order ([`STAGES`]).
    pub stage_held_ns: [u64; 3],
}

/// The names of the stages, in the order of [`GroupCommitStats::stage_held_ns`].
pub const STAGES: [&str; 3] = ["flush", "sync", "commit"];

impl GroupCommitStats {
    /// The counts since `earlier`.
    pub fn since(&self, earlier: &GroupCommitStats) -> GroupCommitStats {
        let sub = |a: u64, b: u64| a.saturating_sub(b);
        let sub_all = |a: &[u64], b: &[u64]| -> Vec<u64> {
            a.iter().zip(b).map(|(&a, &b)| sub(a, b)).collect()
        };
        GroupCommitStats {
            commits: sub(self.commits, earlier.commits),
            failed: sub(self.failed, earlier.failed),
            groups: sub(self.groups, earlier.groups),
            group_sizes: sub_all(&self.group_sizes, &earlier.group_sizes)
                .try_into()
                .unwrap_or_default(),
            fsyncs: sub(self.fsyncs, earlier.fsyncs),
            sync_micros: sub(self.sync_micros, earlier.sync_micros),
            bytes: sub(self.bytes, earlier.bytes),
            followers: sub(self.followers, earlier.followers),
            wakeups: sub(self.wakeups, earlier.wakeups),
            wasted_wakeups: sub(self.wasted_wakeups, earlier.wasted_wakeups),
            wakes_per_follower: sub_all(&self.wakes_per_follower, &earlier.wakes_per_follower)
                .try_into()
                .unwrap_or_default(),
            stage_held_ns: sub_all(&self.stage_held_ns, &earlier.stage_held_ns)
                .try_into()
                .unwrap_or_default(),
        }
    }

    /// Commits per group (flush-stage groups), if any group formed.
    pub fn mean_group_size(&self) -> Option<f64> {
        (self.groups > 0).then(|| (self.commits + self.failed) as f64 / self.groups as f64)
    }

    /// The book's wake-up efficiency: wake-ups that released their follower / wake-ups.
    /// `None` if no follower was ever woken.
    pub fn wakeup_efficiency(&self) -> Option<f64> {
        (self.wakeups > 0)
            .then(|| (self.wakeups - self.wasted_wakeups) as f64 / self.wakeups as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_hold_their_upper_bound() {
        assert_eq!(bucket(&GROUP_SIZE_BUCKETS, 1), 0);
        assert_eq!(bucket(&GROUP_SIZE_BUCKETS, 3), 2);
        assert_eq!(bucket(&GROUP_SIZE_BUCKETS, 4), 2);
        assert_eq!(bucket(&GROUP_SIZE_BUCKETS, 257), 9);
        assert_eq!(bucket(&WAKES_PER_FOLLOWER_BUCKETS, 0), 0);
        assert_eq!(bucket(&WAKES_PER_FOLLOWER_BUCKETS, 5), 4);
    }

    #[test]
    fn efficiency_counts_the_last_wake_of_each_follower_as_useful() {
        let counters = Counters::default();
        counters.follower(1);
        counters.follower(3);
        counters.follower(0);
        let stats = counters.snapshot();
        assert_eq!(
            (stats.followers, stats.wakeups, stats.wasted_wakeups),
            (3, 4, 2)
        );
        assert_eq!(stats.wakeup_efficiency(), Some(0.5));
        assert_eq!(stats.wakes_per_follower[..4], [1, 1, 0, 1]);
    }
}
