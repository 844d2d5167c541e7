//! Leader/follower group commit in three stages, as MySQL's `Commit_stage_manager` (book
//! 8.1.2), with two ways to wake the followers.
//!
//! ```text
//!            enroll_for(flush)        enroll_for(sync)         enroll_for(commit)
//!  commit ─► [flush queue] ─leader─► [sync queue] ─leader─► [commit queue] ─leader─► done
//!            write the group's        one fdatasync            publish the group in order
//!            records (one write)      (EveryCommit)            (leave the active set, CSN,
//!                                                               release locks)
//!                                                              signal_done(every follower)
//! ```
//!
//! Each stage has a queue (its own small mutex) and a stage lock (MySQL's `LOCK_log`,
//! `LOCK_sync`, `LOCK_commit`). A committer appends itself to the flush queue; if the queue
//! was empty it is the *leader*, otherwise a *follower* that waits until it is signalled
//! done. The leader takes the stage lock, then the whole queue (everyone who enrolled while
//! it waited for the lock: that is how groups grow), does the stage's work for all of them,
//! enrolls the group into the next stage's queue, and only then releases the stage lock, so
//! groups stay in order from stage to stage. If the next queue was not empty, the group joins
//! the group already forming there and the leader becomes a follower too. So every committer
//! waits at most once, and the commit stage publishes in log order.
//!
//! Wake-ups ([`Wakeup`]):
//! * `Broadcast` (the baseline, MySQL before 8.0.?): one mutex and one condition variable for
//!   every follower. `signal_done` marks the group's followers done under the mutex and
//!   notifies all; every sleeping follower wakes, re-checks its own flag, and those of later
//!   groups go back to sleep (wasted wake-ups).
//! * `Parker` (the fix): each follower sleeps on its own mutex and condition variable;
//!   `signal_done` sets each follower's outcome and wakes exactly that follower.
//!
//! Durable before visible: the commit stage runs only after the sync stage has synced the
//! group (under `EveryCommit`), and the publish callback is what makes a commit visible.
//!
//! A [`Written`] hook ([`GroupCommit::on_written`]) is told about each item, in log order,
//! as soon as the flush leader has written the group's records, before the sync: the engine
//! releases a committing transaction's row locks there (early lock release). Whatever a
//! later committer does after that point, its own record is written later, so it is synced
//! and published no earlier.
//!
//! A failure (a write or an fdatasync that fails, a publish callback that fails) fails the
//! group and stops the pipeline: every later commit fails at once with
//! [`CommitError::Stopped`], as PostgreSQL panics on a failed fsync. So a commit that built
//! on an earlier one whose locks went early can never succeed without it. The failed
//! group's records may or may not be on disk: its outcome is in doubt, and recovery decides
//! it.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::record::{Lsn, MAX_PAYLOAD_BYTES, TrxTag};
use crate::stats::{Counters, GroupCommitStats};
use crate::sync::held::Held;
use crate::sync::{CondMutex as Mutex, CondMutexGuard as MutexGuard, Condvar};
use crate::wal::{FlushPolicy, Syncer, Wal, WalError, record_bytes};

/// How a leader wakes the followers of the group it finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Wakeup {
    /// One condition variable for all followers, notified with `notify_all` (the baseline).
    Broadcast,
    /// Each follower has its own; the leader wakes exactly the followers it finished.
    #[default]
    Parker,
}

impl Wakeup {
    /// The mode's name as the command line and the reports say it.
    pub fn name(self) -> &'static str {
        match self {
            Wakeup::Broadcast => "broadcast",
            Wakeup::Parker => "parker",
        }
    }
}

/// The pipeline's knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupCommitConfig {
    /// How followers are woken.
    pub wakeup: Wakeup,
    /// How long the sync-stage leader waits for more commits before it syncs (MySQL's
    /// `binlog_group_commit_sync_delay`); zero: sync at once.
    pub sync_delay: Duration,
    /// Stop waiting as soon as this many commits are queued for the sync stage (MySQL's
    /// `binlog_group_commit_sync_no_delay_count`); zero: always wait the whole delay.
    pub sync_no_delay_count: usize,
}

impl Default for GroupCommitConfig {
    fn default() -> Self {
        GroupCommitConfig {
            wakeup: Wakeup::Parker,
            sync_delay: Duration::ZERO,
            sync_no_delay_count: 0,
        }
    }
}

/// Why a commit did not complete.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CommitError {
    /// Writing or syncing this commit's group failed. Its record may be on disk: the
    /// outcome is in doubt until recovery.
    #[error("the commit log failed ({0}); the commit's outcome is in doubt until recovery")]
    Log(Arc<WalError>),
    /// An earlier log failure stopped the pipeline; this commit was not written.
    #[error("commits are stopped after a log failure ({0}); restart to recover")]
    Stopped(Arc<WalError>),
    /// The record is larger than a log record may be ([`MAX_PAYLOAD_BYTES`]); it was
    /// refused before it reached the log.
    #[error("a commit record of {len} bytes exceeds the {MAX_PAYLOAD_BYTES}-byte maximum")]
    TooLarge {
        /// Its payload's length.
        len: usize,
    },
    /// The publish callback failed for this commit's group. The commit is not visible, but
    /// its record was written (and synced) before publishing: like [`CommitError::Log`], its
    /// outcome is in doubt, and a recovery from the log would replay it.
    #[error(
        "publishing the commit failed ({0}); its record is in the log, so its outcome is in doubt until recovery"
    )]
    Publish(String),
}

/// What a commit returns: the LSN of its record (`Lsn::START` without a log).
pub type Outcome = Result<Lsn, CommitError>;

/// Publishes a group in commit order (the commit stage's work), e.g. the engine's
/// "leave the active set, assign the CSN, release locks".
pub type Publish<T> = Box<dyn Fn(Vec<T>) -> Result<(), String> + Send + Sync>;

/// Told about one item once its record is written to the log (not yet synced), with the
/// time of the write; called by the flush leader for the group's items in log order. The
/// engine's early lock release.
pub type Written<T> = Box<dyn Fn(&mut T, Instant) + Send + Sync>;

/// Where one committer waits, and where its leader leaves its outcome.
#[derive(Debug, Default)]
struct Waiter {
    outcome: Mutex<Option<Outcome>>,
    /// Its own condition variable (`Parker` only).
    parker: Condvar,
}

/// One committer's place in a queue.
struct Entry<T> {
    tag: TrxTag,
    payload: Vec<u8>,
    item: Option<T>,
    waiter: Arc<Waiter>,
    /// Its record's LSN and where the record ends (set by the flush stage).
    lsn: Lsn,
    end: Lsn,
    /// The segment its record went to (set by the flush stage).
    segment: Option<Syncer>,
}

/// A stage: its queue and its lock (which guards the stage's state `S`).
struct Stage<T, S> {
    queue: Mutex<Vec<Entry<T>>>,
    lock: Mutex<S>,
}

impl<T, S> Stage<T, S> {
    fn new(state: S) -> Self {
        Stage {
            queue: Mutex::new(Vec::new()),
            lock: Mutex::new(state),
        }
    }

    /// MySQL's `enroll_for`: appends `group` to the queue; returns whether the queue was
    /// empty, i.e. whether the caller leads this stage for the next group.
    fn enroll(&self, group: Vec<Entry<T>>) -> bool {
        let mut queue = self.queue.lock();
        let leads = queue.is_empty();
        queue.extend(group);
        leads
    }

    /// MySQL's `fetch_queue_for`: everyone enrolled so far.
    fn fetch(&self) -> Vec<Entry<T>> {
        std::mem::take(&mut *self.queue.lock())
    }

    fn queued(&self) -> usize {
        self.queue.lock().len()
    }
}

/// The flush stage's state: the log, and the failure that stopped the pipeline.
struct FlushState {
    wal: Option<Wal>,
    stopped: Option<Arc<WalError>>,
}

/// The commit stage's state.
struct CommitState {
    /// Where the last published record ends: every record before it is visible, none after.
    published: Lsn,
}

/// A three-stage group-commit pipeline over an optional [`Wal`], committing items of type
/// `T` (the engine commits its commit tickets; a benchmark can commit numbers).
pub struct GroupCommit<T> {
    config: GroupCommitConfig,
    policy: FlushPolicy,
    flush: Stage<T, FlushState>,
    sync: Stage<T, ()>,
    commit: Stage<T, CommitState>,
    /// `Broadcast`: the one mutex and condition variable every follower waits on.
    broadcast: (Mutex<()>, Condvar),
    /// Set by a failed sync, publish or written hook, with where the failed group's
    /// records begin: that group and every later one fail. Read by the flush leader (which
    /// owns `FlushState::stopped`) and by the sync and commit stages, where a group ahead
    /// of the failed one still goes through.
    failed: Mutex<Option<(Arc<WalError>, Lsn)>>,
    publish: Publish<T>,
    written: Option<Written<T>>,
    counters: Counters,
}

impl<T> std::fmt::Debug for GroupCommit<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommit")
            .field("config", &self.config)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl<T> GroupCommit<T> {
    /// A pipeline that writes to `wal` (its flush policy decides about syncing), or keeps no
    /// log (`None`: [`FlushPolicy::None`]), and publishes each group with `publish`.
    pub fn new(config: GroupCommitConfig, wal: Option<Wal>, publish: Publish<T>) -> Self {
        let policy = wal.as_ref().map_or(FlushPolicy::None, Wal::flush_policy);
        let published = wal.as_ref().map_or(Lsn::START, Wal::end);
        GroupCommit {
            config,
            policy,
            flush: Stage::new(FlushState { wal, stopped: None }),
            sync: Stage::new(()),
            commit: Stage::new(CommitState { published }),
            broadcast: (Mutex::new(()), Condvar::default()),
            failed: Mutex::new(None),
            publish,
            written: None,
            counters: Counters::default(),
        }
    }

    /// Calls `hook` for each item once its record is written, before the sync (see
    /// [`Written`]).
    pub fn on_written(mut self, hook: Written<T>) -> Self {
        self.written = Some(hook);
        self
    }

    /// The knobs.
    pub fn config(&self) -> &GroupCommitConfig {
        &self.config
    }

    /// The flush policy (`None` if there is no log).
    pub fn flush_policy(&self) -> FlushPolicy {
        self.policy
    }

    /// The counters now.
    pub fn stats(&self) -> GroupCommitStats {
        self.counters.snapshot()
    }

    /// Commits `item` with its log record (`tag`, `payload`): returns once the record is
    /// durable (as the policy says) and `item` has been published, by this thread or by its
    /// group's leader.
    pub fn commit(&self, tag: TrxTag, payload: Vec<u8>, item: T) -> Outcome {
        if payload.len() > MAX_PAYLOAD_BYTES && self.policy != FlushPolicy::None {
            return Err(CommitError::TooLarge { len: payload.len() });
        }
        let waiter = Arc::new(Waiter::default());
        let entry = Entry {
            tag,
            payload,
            item: Some(item),
            waiter: Arc::clone(&waiter),
            lsn: Lsn::START,
            end: Lsn::START,
            segment: None,
        };
        if !self.flush.enroll(vec![entry]) {
            return self.wait(&waiter);
        }
        self.lead(&waiter)
    }

    /// The leader's path through the stages, until its group joins a group another leader
    /// leads (then it waits like a follower) or it has published.
    fn lead(&self, me: &Waiter) -> Outcome {
        // Flush: write the group's records with one write.
        let mut flush = Held::timed(self.flush.lock.lock(), &self.counters.stage_held[0]);
        let mut group = self.flush.fetch();
        self.counters.group(group.len());
        if let Err(error) = self
            .write(&mut flush, &mut group)
            .and_then(|()| self.tell_written(&mut group))
        {
            drop(flush);
            return self.fail(group, error, me);
        }
        let leads = self.sync.enroll(group);
        drop(flush);
        if !leads {
            return self.wait(me);
        }

        // Sync: one fdatasync for everything queued.
        let sync = Held::timed(self.sync.lock.lock(), &self.counters.stage_held[1]);
        self.delay_for_more();
        let group = self.sync.fetch();
        if let Err(error) = self.sync_group(&group) {
            drop(sync);
            return self.fail(group, error, me);
        }
        let leads = self.commit.enroll(group);
        drop(sync);
        if !leads {
            return self.wait(me);
        }

        // Commit: publish in order, then release every follower.
        let mut commit = Held::timed(self.commit.lock.lock(), &self.counters.stage_held[2]);
        let mut group = self.commit.fetch();
        // A group before this one failed to publish after this one was synced: this one may
        // have built on it, so it fails too.
        if let Some(error) = self.failed_at_or_before(&group) {
            drop(commit);
            return self.fail(group, CommitError::Stopped(error), me);
        }
        let items: Vec<T> = group.iter_mut().filter_map(|e| e.item.take()).collect();
        let end = group.last().map(|e| e.end);
        // A panicking callback must not leave the followers asleep forever.
        let published = std::panic::catch_unwind(AssertUnwindSafe(|| (self.publish)(items)))
            .unwrap_or_else(|_| Err("the publish callback panicked".to_owned()));
        match &published {
            Ok(()) => {
                if let Some(end) = end.filter(|_| self.policy != FlushPolicy::None) {
                    commit.published = end;
                }
            }
            // Later commits may have built on this group's (early released) changes.
            Err(message) => {
                self.stop(WalError::Unpublished(message.clone()), &group);
            }
        }
        // As MySQL's `ordered_commit`: release the commit stage, then signal the followers,
        // so the next group's leader need not wait for the wake-ups.
        drop(commit);
        match published {
            Ok(()) => {
                self.counters.outcome(group.len(), 0);
                self.signal_done(&group, |e| Ok(e.lsn));
            }
            Err(message) => {
                self.counters.outcome(0, group.len());
                self.signal_done(&group, |_| Err(CommitError::Publish(message.clone())));
            }
        }
        me.outcome
            .lock()
            .take()
            .expect("the leader's own entry is in the group it signalled")
    }

    /// Stops the pipeline at `group`, which failed: every later commit fails with
    /// [`CommitError::Stopped`]. Returns the error as recorded (an earlier one stays).
    fn stop(&self, error: WalError, group: &[Entry<T>]) -> Arc<WalError> {
        let from = group.first().map_or(Lsn::START, |e| e.lsn);
        let mut failed = self.failed.lock();
        Arc::clone(&failed.get_or_insert_with(|| (Arc::new(error), from)).0)
    }

    /// The failure that stopped the pipeline, if it stopped at or before `group` (whose
    /// records were written before a failure of a later group go through).
    fn failed_at_or_before(&self, group: &[Entry<T>]) -> Option<Arc<WalError>> {
        let at = group.first().map_or(Lsn::START, |e| e.lsn);
        let failed = self.failed.lock();
        failed
            .as_ref()
            .filter(|(_, from)| *from <= at)
            .map(|(error, _)| Arc::clone(error))
    }

    /// The [`Written`] hook for each of the group's items, in log order. A panicking hook
    /// fails the group and stops the pipeline, as a failed write would.
    fn tell_written(&self, group: &mut [Entry<T>]) -> Result<(), CommitError> {
        let Some(hook) = &self.written else {
            return Ok(());
        };
        let now = Instant::now();
        let told = std::panic::catch_unwind(AssertUnwindSafe(|| {
            for item in group.iter_mut().filter_map(|e| e.item.as_mut()) {
                hook(item, now);
            }
        }));
        told.map_err(|_| {
            let error = WalError::Unpublished("the written hook panicked".to_owned());
            CommitError::Log(self.stop(error, group))
        })
    }

    /// The flush stage's work: writes the group's records, or fails them if the pipeline is
    /// stopped.
    fn write(&self, flush: &mut FlushState, group: &mut [Entry<T>]) -> Result<(), CommitError> {
        if flush.stopped.is_none() {
            flush.stopped = self.failed.lock().as_ref().map(|(e, _)| Arc::clone(e));
        }
        if let Some(error) = &flush.stopped {
            return Err(CommitError::Stopped(Arc::clone(error)));
        }
        let Some(wal) = flush.wal.as_mut() else {
            return Ok(());
        };
        let written = wal.write_batch(group.iter().map(|e| (e.tag, e.payload.as_slice())));
        let lsns = match written {
            Ok(lsns) => lsns,
            Err(error) => {
                let error = Arc::new(error);
                flush.stopped = Some(Arc::clone(&error));
                return Err(CommitError::Log(error));
            }
        };
        let segment = wal.syncer();
        let mut bytes = 0;
        for (entry, lsn) in group.iter_mut().zip(lsns) {
            let size = record_bytes(entry.payload.len());
            bytes += size;
            entry.lsn = lsn;
            entry.end = Lsn(lsn.0 + size);
            entry.segment = Some(segment.clone());
            entry.payload = Vec::new();
        }
        self.counters.log_bytes(bytes);
        Ok(())
    }

    /// MySQL's `wait_count_or_timeout`: before syncing, sleep in tenths of `sync_delay` (but
    /// at most a millisecond at a time, where MySQL sleeps a tenth however long that is)
    /// until the delay is over or `sync_no_delay_count` commits are queued.
    fn delay_for_more(&self) {
        let delay = self.config.sync_delay;
        if delay.is_zero() {
            return;
        }
        let count = self.config.sync_no_delay_count;
        let deadline = Instant::now() + delay;
        while Instant::now() < deadline && (count == 0 || self.sync.queued() < count) {
            std::thread::sleep(
                (delay / 10).clamp(Duration::from_micros(1), Duration::from_millis(1)),
            );
        }
    }

    /// The sync stage's work: one fdatasync of the segment the group's last record went to
    /// (a batch that opened a new segment synced the previous one itself).
    fn sync_group(&self, group: &[Entry<T>]) -> Result<(), CommitError> {
        if let Some(error) = self.failed_at_or_before(group) {
            return Err(CommitError::Stopped(error));
        }
        if self.policy != FlushPolicy::EveryCommit {
            return Ok(());
        }
        let Some(segment) = group.last().and_then(|e| e.segment.as_ref()) else {
            return Ok(());
        };
        let _waiting = crate::sync::wait::begin(crate::sync::wait::Kind::Sync);
        let started = Instant::now();
        let synced = segment.sync();
        self.counters.fsync(started.elapsed());
        synced.map_err(|error| CommitError::Log(self.stop(error, group)))
    }

    /// Fails a whole group (its items are dropped unpublished) and releases its followers.
    fn fail(&self, mut group: Vec<Entry<T>>, error: CommitError, me: &Waiter) -> Outcome {
        self.counters.outcome(0, group.len());
        // Drop (roll back) the items before anyone learns of the failure.
        drop(
            group
                .iter_mut()
                .filter_map(|e| e.item.take())
                .collect::<Vec<T>>(),
        );
        self.signal_done(&group, |_| Err(error.clone()));
        me.outcome
            .lock()
            .take()
            .expect("the leader's own entry is in the group it failed")
    }

    /// MySQL's `signal_done`: hands every entry of `group` its outcome and wakes its
    /// follower, as the wake-up strategy says.
    fn signal_done(&self, group: &[Entry<T>], outcome: impl Fn(&Entry<T>) -> Outcome) {
        match self.config.wakeup {
            Wakeup::Parker => {
                for entry in group {
                    // Set under the follower's lock (so its check-then-wait cannot miss it),
                    // notify after releasing it (so the woken follower does not block on it).
                    *entry.waiter.outcome.lock() = Some(outcome(entry));
                    entry.waiter.parker.notify_one();
                }
            }
            Wakeup::Broadcast => {
                // As MySQL's `signal_done`: flags set and broadcast under the one mutex.
                let (lock, all) = &self.broadcast;
                let _held = lock.lock();
                for entry in group {
                    *entry.waiter.outcome.lock() = Some(outcome(entry));
                }
                all.notify_all();
            }
        }
    }

    /// A follower's wait until its leader signals it done; counts its wake-ups.
    fn wait(&self, me: &Waiter) -> Outcome {
        let _waiting = crate::sync::wait::begin(crate::sync::wait::Kind::GroupCommit);
        let mut wakeups = 0;
        let outcome = match self.config.wakeup {
            Wakeup::Parker => {
                let mut slot = me.outcome.lock();
                loop {
                    if let Some(outcome) = slot.take() {
                        break outcome;
                    }
                    me.parker.wait(&mut slot);
                    wakeups += 1;
                }
            }
            Wakeup::Broadcast => {
                let (lock, all) = &self.broadcast;
                let mut held: MutexGuard<'_, ()> = lock.lock();
                loop {
                    if let Some(outcome) = me.outcome.lock().take() {
                        break outcome;
                    }
                    all.wait(&mut held);
                    wakeups += 1;
                }
            }
        };
        self.counters.follower(wakeups);
        outcome
    }

    /// Runs `f` with the commit stage held, passing where the published log ends: no group
    /// is published meanwhile, so a read view opened inside `f` sees exactly the commits
    /// whose records end at or before that LSN (the commit stage publishes in log order).
    /// A checkpoint uses this to pair its image with the LSN where replay must start.
    pub fn with_publishing_paused<R>(&self, f: impl FnOnce(Lsn) -> R) -> R {
        let commit = self.commit.lock.lock();
        f(commit.published)
    }

    /// Deletes the log segments that end at or before `lsn` (a checkpoint covers them);
    /// returns how many. Without a log, nothing.
    pub fn drop_log_before(&self, lsn: Lsn) -> Result<usize, WalError> {
        match self.flush.lock.lock().wal.as_mut() {
            Some(wal) => wal.drop_before(lsn),
            None => Ok(0),
        }
    }

    /// Makes everything written to the log so far durable, whatever the flush policy (a
    /// checkpoint under `Os` must not name an LSN the log could lose). Without a log,
    /// nothing.
    pub fn sync_log(&self) -> Result<(), WalError> {
        let segment = self.flush.lock.lock().wal.as_ref().map(Wal::syncer);
        match segment {
            Some(segment) => segment.sync(),
            None => Ok(()),
        }
    }

    /// Where the log ends now (the next record's LSN); `Lsn::START` without a log.
    pub fn log_end(&self) -> Lsn {
        self.flush
            .lock
            .lock()
            .wal
            .as_ref()
            .map_or(Lsn::START, Wal::end)
    }
}
