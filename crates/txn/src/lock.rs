//! Row locks: record, gap and next-key locks (InnoDB's), held until the transaction ends,
//! with waiting, a lock-wait timeout and deadlock detection.
//!
//! ```text
//!  lock table: shard[hash(table, target)] = latch
//!      (table, target) -> holders [(trx, S|X)], waiters FIFO [(trx, what it wants, waiter)]
//!      target: Row(pk)          the record
//!              Unique(i, key)   a unique secondary value
//!              Gap(index, next) the gap below index entry `next` (None: the supremum)
//!  wait-for graph (one latch, taken only by a request that must wait):
//!      waiter -> the holders it waits for
//! ```
//!
//! # Lock modes
//!
//! An index (the clustered one here) is a row of entries with a gap below each and one above
//! the last, the supremum's. InnoDB locks the entries and the gaps:
//!
//! ```text
//!   entries:         10          20          30      supremum
//!   gaps:      (..10)   (10..20)    (20..30)    (30..)
//!
//!   SELECT ... WHERE id BETWEEN 10 AND 20 FOR UPDATE, REPEATABLE READ:
//!              [ gap ][rec 10][  gap  ][rec 20][  gap  ]
//!              next-key 10     next-key 20      gap only (below 30, the first past the range)
//!   INSERT 15: the gap (10..20) is locked by another transaction: the insert waits
//!   INSERT 35: the gap (30..) is free: it goes in
//! ```
//!
//! - a **record lock** (`REC_NOT_GAP` in `data_locks`) locks the entry: a `Row` target;
//! - a **gap lock** (`GAP`) locks the gap below it: a `Gap` target. Gap locks only keep
//!   inserts out, so they never conflict with each other, in either mode;
//! - a **next-key lock** is both, the record and the gap below it: InnoDB's one lock is
//!   two entries of this table here, taken gap first;
//! - an **insert intention** (`INSERT_INTENTION`) is what an insert asks of the gap its new
//!   entry goes in: it waits for the gap locks other transactions hold there, and nobody
//!   waits for it, so inserters into one gap do not wait for each other.
//!
//! Whether a request waits for a lock another transaction holds (InnoDB's
//! `lock_rec_has_to_wait`; the lock model test checks the table against this matrix):
//!
//! ```text
//!                       held:  record S   record X   gap S/X   (insert intention: never held)
//!   request record S             -          wait        -
//!   request record X            wait        wait        -
//!   request gap S/X              -           -          -
//!   request insert intention     -           -         wait
//! ```
//!
//! Which locks a statement takes (`trx/gaps.rs`): under REPEATABLE READ (and SERIALIZABLE) a
//! locking read or write locks a row that exists with a record lock when it reads one key,
//! takes next-key locks on what a range walk reads (on the clustered index or a secondary
//! one) and a gap lock past its end, and locks the gap a missing key would go in; READ
//! COMMITTED takes record locks only. Every new entry, clustered or secondary, asks for its
//! gap first. A gap is named by the entry above it, so an entry with a lock on its gap stays
//! in the index when purge finds it dead (`Table::unlink_dead`), until the lock is gone.
//!
//! # Waiting
//!
//! A request that conflicts first records its edges in the wait-for graph; if the graph then
//! has a cycle through the requester, the requester is the victim (InnoDB weighs the
//! transactions and picks the lighter; choosing the one that closed the cycle is simpler and
//! also guarantees progress). Otherwise it queues on the lock, spins for a moment while few
//! transactions wait (`EngineConfig::lock_spin`), then sleeps on its own condvar until woken
//! or its deadline. A grant to a lock with a queue adds an edge
//! from each waiter it blocks, since those waiters are not woken to record it themselves.
//!
//! Wake-ups are point to point, as InnoDB's lock release grants the waiting locks that no
//! longer conflict and signals each one's transaction: a release (or a waiter leaving the
//! queue) wakes only the waiters that could now be granted, in queue order, counting each
//! woken one as a holder: the first exclusive waiter of a free lock, a run of shared ones,
//! or an upgrade queued behind a waiter that it blocks. A broadcast on the shard
//! would wake every waiter of every lock in it, and with TPC-C's hot WAREHOUSE row (every
//! Payment updates it) that is dozens of threads woken to find the lock taken again.
//! A request may still take a free lock ahead of the queue (barging): InnoDB does not allow
//! it, but it keeps a woken waiter from holding up a free lock while it is scheduled.
//!
//! Differences from InnoDB: a next-key lock on an entry of a secondary index locks the row it
//! points to (the clustered record), since rows are what writers lock here, so it can block
//! a writer of that row that InnoDB would not; and past a range's end a walk takes a gap lock
//! on the next entry where InnoDB takes a next-key lock (the same inserts wait, fewer
//! writers).
//!
//! The `data_locks` view is `lock/view.rs`; the tests are `lock/tests.rs`.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex, MutexGuard};
use smallvec::{SmallVec, smallvec};
use waterline_readview::TrxId;

use crate::boost::Boost;
use crate::error::{Interruption, TxnError};
use crate::hash_index::{HashedMap, hash_of, shard_of};
use crate::key::Key;
use crate::stats::{Counter, Stats};
use crate::sync::held::Held as HeldLatch;
use crate::table_id::TableId;

/// Lock modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockMode {
    /// FOR SHARE: others may read-lock too, nobody may write.
    Shared,
    /// FOR UPDATE and every write.
    Exclusive,
}

/// What a locking read does with a row another transaction holds in a conflicting mode
/// (MySQL 8.0's `FOR UPDATE [NOWAIT | SKIP LOCKED]`).
///
/// `SkipLocked` is for queues: two consumers that each take "the oldest unclaimed entry"
/// (TPC-C's Delivery takes a district's oldest NEW_ORDER row) take different entries at
/// once instead of the second waiting for the first to commit and then passing over the
/// entry the first deleted. What one consumer skips, another holds, so the outcome is that
/// of running them one after the other, provided the holder does not roll back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LockWait {
    /// Wait for the holder to end (up to the lock-wait timeout). The default.
    #[default]
    Wait,
    /// Fail the statement at once with [`TxnError::LockNowait`] (MySQL error 3572).
    NoWait,
    /// Pass over the row as if the scan had not found it.
    SkipLocked,
}

/// What is locked.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LockTarget {
    /// A row, by primary key: the record part of InnoDB's record and next-key locks.
    Row(Key),
    /// A value of a unique secondary index (stands in for InnoDB's next-key lock on it).
    Unique(usize, Key),
    /// The gap below an entry of an index: the clustered index (`None`) or a secondary one;
    /// the entry's key (for a secondary index, its key then the primary key), or `None` for
    /// the supremum, the gap above the last entry. The gap part of a next-key lock.
    Gap(Option<usize>, Option<Key>),
}

impl LockTarget {
    /// Whether it names a gap.
    pub(crate) fn is_gap(&self) -> bool {
        matches!(self, LockTarget::Gap(..))
    }

    /// The key it names, for error messages (the supremum's is empty).
    pub(crate) fn key(&self) -> Key {
        match self {
            LockTarget::Row(k) | LockTarget::Unique(_, k) | LockTarget::Gap(_, Some(k)) => {
                k.clone()
            }
            LockTarget::Gap(_, None) => Key::default(),
        }
    }
}

/// A lock's full name: table and target.
pub(crate) type LockKey = (TableId, LockTarget);

/// A lock as its transaction keeps it until release: its hash and its name.
pub(crate) type Held = (u64, LockKey);

/// The hash of lock `(table, target)`, made from `key_hash`, the hash of the target's key,
/// which the caller computes once for the lock and for its record lookup.
pub(crate) fn lock_hash(table: TableId, target: &LockTarget, key_hash: u64) -> u64 {
    let kind = match target {
        LockTarget::Row(_) => u64::MAX,
        LockTarget::Unique(index, _) => *index as u64,
        LockTarget::Gap(index, _) => u64::MAX - 1 - index.map_or(0, |i| i as u64 + 1),
    };
    hash_of(&(table.0, kind, key_hash))
}

/// The hash of a gap target's key: its entry's [`hash_of`], or 0 for the supremum.
pub(crate) fn gap_key_hash(next: Option<&Key>) -> u64 {
    next.map_or(0, hash_of)
}

/// The lock on the gap below entry `next` (`None`: the supremum) of `index` (`None`: the
/// clustered index) of `table`, with its [`lock_hash`].
pub(crate) fn gap_lock(table: TableId, index: Option<usize>, next: Option<Key>) -> Held {
    let key_hash = gap_key_hash(next.as_ref());
    let target = LockTarget::Gap(index, next);
    (lock_hash(table, &target, key_hash), (table, target))
}

/// One lock: who holds it and who waits for it.
#[derive(Debug, Default)]
struct Lock {
    /// Usually one: inline, so taking a free lock allocates nothing for it.
    holders: SmallVec<[(TrxId, LockMode); 1]>,
    /// Waiting transactions, first come first; each spins on its own flag, then sleeps on
    /// its own condvar (with the shard's latch).
    waiters: VecDeque<(TrxId, Want, Arc<Waiter>)>,
}

/// A queued request's wake-up: a flag it spins on for a while (see
/// [`crate::EngineConfig::lock_spin`]), and a condvar it then sleeps on with the shard's latch.
#[derive(Debug, Default)]
struct Waiter {
    woken: AtomicBool,
    condvar: Condvar,
}

impl Waiter {
    /// Wakes the waiter, spinning or asleep; called under the shard's latch, which the
    /// waiter holds whenever it decides to sleep, so no wake-up falls between its last look
    /// at the flag and its sleep.
    fn wake(&self) {
        self.woken.store(true, Ordering::Release);
        self.condvar.notify_one();
    }
}

/// How long a row-lock wait that can be interrupted sleeps before it looks at its flag
/// again (a release wakes it sooner): the most a `KILL QUERY` waits to be noticed.
pub(crate) const LOCK_WAIT_SLICE: Duration = Duration::from_millis(20);

/// Whether a request's interrupt flag is set.
fn interrupted(flag: Option<&AtomicBool>) -> bool {
    flag.is_some_and(|f| f.load(Ordering::Acquire))
}

/// What a request asks of its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    /// A lock in this mode: on a row, shared or exclusive; on a gap, a gap lock (whose mode
    /// only shows in `data_locks`: gap locks never conflict with each other).
    Lock(LockMode),
    /// To insert into a gap (InnoDB's insert-intention lock): it waits while another
    /// transaction holds a gap lock on it, and nobody ever waits for it. It is never held:
    /// the insert happens under the lock table's latch once nothing stands in the way.
    Intention,
}

/// Whether `trx` may have `want` next to `holders` of a row lock, or of a gap lock if
/// `gap`.
fn compatible(holders: &[(TrxId, LockMode)], trx: TrxId, want: Want, gap: bool) -> bool {
    match (gap, want) {
        (true, Want::Lock(_)) => true,
        (true, Want::Intention) | (false, Want::Intention) => {
            holders.iter().all(|&(t, _)| t == trx)
        }
        (false, Want::Lock(mode)) => holders
            .iter()
            .all(|&(t, m)| t == trx || (mode == LockMode::Shared && m == LockMode::Shared)),
    }
}

/// What an insert into a gap did (see [`LockManager::insert_into_gap`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Gapped {
    /// The entry is in the index.
    Inserted,
    /// The gap is no longer the one the key falls in (an entry came or went): look again.
    Moved,
    /// The inserter holds a gap lock on this gap, which must first be extended to the gap
    /// below the new entry (InnoDB's `lock_rec_inherit_to_gap_if_gap_lock`).
    MineFirst,
}

impl Lock {
    /// Nobody holds or awaits it: its entry can go.
    fn unused(&self) -> bool {
        self.holders.is_empty() && self.waiters.is_empty()
    }

    /// Wakes the waiters that can be granted now, in queue order, as if each woken one took
    /// its lock: the first exclusive waiter of a free lock, a run of shared ones, or an
    /// upgrade waiting behind a waiter it blocks. Nobody else is woken.
    fn wake_grantable(&self, gap: bool) {
        for i in self.grantable(gap) {
            self.waiters[i].2.wake();
        }
    }

    /// The positions in the queue of the waiters [`Lock::wake_grantable`] wakes. A gap's
    /// waiters are inserters, which block nobody once they go.
    fn grantable(&self, gap: bool) -> Vec<usize> {
        if self.waiters.is_empty() {
            return Vec::new();
        }
        let mut holders = self.holders.clone();
        let mut woken = Vec::new();
        for (i, &(trx, want, _)) in self.waiters.iter().enumerate() {
            if compatible(&holders, trx, want, gap) {
                if let Want::Lock(mode) = want {
                    holders.push((trx, mode));
                }
                woken.push(i);
            }
        }
        woken
    }
}

#[derive(Debug, Default)]
struct Shard {
    /// Found by the request key's hash, computed once per request (for the shard and the
    /// probes).
    locks: Mutex<HashedMap<LockKey, Lock>>,
}

/// The lock table. See the module page.
#[derive(Debug)]
pub(crate) struct LockManager {
    shards: Box<[CachePadded<Shard>]>,
    waits_for: Mutex<HashMap<TrxId, Vec<TrxId>>>,
    stats: Arc<Stats>,
    /// How long a waiter spins before it sleeps ([`crate::EngineConfig::lock_spin`]).
    spin: Duration,
    /// A waiter spins only while fewer requests than this wait, itself included: the CPU
    /// count, so that at most one CPU fewer spin and a holder has one to finish on.
    spin_below: usize,
    /// Requests queued on some lock now.
    waiting: AtomicUsize,
    /// Priority inheritance for holders, if on ([`crate::EngineConfig::lock_holder_boost`]).
    boost: Option<Boost>,
}

/// A lock request (who, what, how, and how long it may wait).
pub(crate) struct Request<'a> {
    pub(crate) trx: TrxId,
    pub(crate) key: LockKey,
    /// The key's [`lock_hash`].
    pub(crate) hash: u64,
    pub(crate) mode: LockMode,
    pub(crate) timeout: Duration,
    /// Fail with [`TxnError::Interrupted`] once this is set, waiting or not.
    pub(crate) interrupt: Option<&'a AtomicBool>,
    /// Fail with [`TxnError::LockNowait`] instead of waiting, queueing nothing (for
    /// [`LockWait::NoWait`] and [`LockWait::SkipLocked`]).
    pub(crate) nowait: bool,
    /// For error messages.
    pub(crate) table_name: &'a str,
}

impl LockManager {
    /// A lock table of `shards` shards whose waiters spin for `spin` before they sleep and
    /// raise the holders' threads by `boost` nice levels (0: not at all).
    pub(crate) fn new(shards: usize, stats: Arc<Stats>, spin: Duration, boost: u8) -> LockManager {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        LockManager {
            boost: Boost::new(boost),
            spin,
            spin_below: cpus,
            waiting: AtomicUsize::new(0),
            shards: (0..shards.max(1))
                .map(|_| CachePadded::new(Shard::default()))
                .collect(),
            waits_for: Mutex::new(HashMap::new()),
            stats,
        }
    }

    fn shard(&self, hash: u64) -> &Shard {
        &self.shards[shard_of(hash, self.shards.len())]
    }

    /// The latch of the shard of the locks whose [`lock_hash`] is `hash`, held (and its
    /// holding timed, sampled).
    fn latch(&self, hash: u64) -> HeldLatch<'_, MutexGuard<'_, HashedMap<LockKey, Lock>>> {
        self.stats.incr(Counter::LockTableLatch);
        HeldLatch::sampled(
            self.shard(hash).locks.lock(),
            self.stats.cell(Counter::LockTableLatchHeldNs),
        )
    }

    /// Grants the lock, waiting if needed. `Ok(true)` when newly taken (the caller records it
    /// for release), `Ok(false)` when the transaction held it already in this or a stronger
    /// mode. A gap lock is granted at once.
    pub(crate) fn acquire(&self, request: Request<'_>) -> Result<bool, TxnError> {
        let want = Want::Lock(request.mode);
        self.request(request, want, &mut |_| Gapped::Inserted)
            .map(|(newly, _)| newly)
    }

    /// Inserts into the gap `request` names (its mode is ignored): waits while another
    /// transaction holds a gap lock on it (insert intention), then runs `insert` under the
    /// lock table's latch, so that no gap lock is granted between its check and the insert.
    /// `insert` is told whether this transaction holds a gap lock on the gap itself.
    pub(crate) fn insert_into_gap(
        &self,
        request: Request<'_>,
        insert: &mut dyn FnMut(bool) -> Gapped,
    ) -> Result<Gapped, TxnError> {
        self.request(request, Want::Intention, insert)
            .map(|(_, gapped)| gapped)
    }

    /// [`LockManager::insert_into_gap`] without waiting: `None` if another transaction holds
    /// a lock on the gap. For a writer under its record's latch, which must not wait there.
    pub(crate) fn try_insert_into_gap(
        &self,
        trx: TrxId,
        key: &LockKey,
        hash: u64,
        insert: impl FnOnce(bool) -> Gapped,
    ) -> Option<Gapped> {
        let mut locks = self.latch(hash);
        let mut mine = false;
        if let Some(lock) = locks.get_mut(hash, key) {
            if lock.holders.iter().any(|&(t, _)| t != trx) {
                return None;
            }
            mine = !lock.holders.is_empty();
        }
        Some(insert(mine))
    }

    /// Runs `f` under the latch of gap lock `key` (whose [`lock_hash`] is `hash`) if nobody
    /// holds it, and says whether it ran: purge unlinks an entry this way, so that the gap
    /// below it never loses a lock by merging with the one above.
    pub(crate) fn unless_gap_held(&self, key: &LockKey, hash: u64, f: impl FnOnce()) -> bool {
        let mut locks = self.latch(hash);
        if locks
            .get_mut(hash, key)
            .is_some_and(|lock| !lock.holders.is_empty())
        {
            return false;
        }
        f();
        true
    }

    /// [`LockManager::acquire`] (with `want` a lock) or [`LockManager::insert_into_gap`]:
    /// whether newly taken, and what `insert` did.
    fn request(
        &self,
        request: Request<'_>,
        want: Want,
        insert: &mut dyn FnMut(bool) -> Gapped,
    ) -> Result<(bool, Gapped), TxnError> {
        let Request {
            trx,
            key,
            hash,
            mode,
            timeout,
            interrupt,
            nowait,
            table_name,
        } = request;
        let gap = key.1.is_gap();
        let intention = want == Want::Intention;
        let mut locks = self.latch(hash);
        // The common case, one hash probe and no clock read: nobody holds or awaits the lock,
        // or this transaction holds it already.
        match locks.get_mut(hash, &key) {
            None if intention => return Ok((false, insert(false))),
            None => {
                let lock = Lock {
                    holders: smallvec![(trx, mode)],
                    waiters: VecDeque::new(),
                };
                locks.insert(hash, key, lock);
                drop(locks);
                if let Some(boost) = &self.boost {
                    boost.holding(trx);
                }
                return Ok((true, Gapped::Inserted));
            }
            Some(lock)
                if !intention && lock.holders.iter().any(|&(t, m)| t == trx && m >= mode) =>
            {
                return Ok((false, Gapped::Inserted));
            }
            Some(_) => {}
        }
        // Read once something stands in the way: the wait is measured from here.
        let deadline = Instant::now() + timeout;
        // Set once queued: this request's own waiter.
        let mut queued: Option<Arc<Waiter>> = None;
        // Set at the first sleep in a thread pool's worker; told its end after the latch.
        let mut waiting = None;
        let outcome = loop {
            if locks.get_mut(hash, &key).is_none() {
                locks.insert(hash, key.clone(), Lock::default());
            }
            let lock = locks.get_mut(hash, &key).expect("inserted above");
            let mine = lock.holders.iter().position(|&(t, _)| t == trx);
            if !intention
                && let Some(i) = mine
                && lock.holders[i].1 >= mode
            {
                break Ok((false, Gapped::Inserted));
            }
            if compatible(&lock.holders, trx, want, gap) {
                if intention {
                    break Ok((false, insert(mine.is_some())));
                }
                match mine {
                    Some(i) => lock.holders[i].1 = mode,
                    None => lock.holders.push((trx, mode)),
                }
                // Waiters this grant blocks now wait for us too: without the edge, a cycle
                // we close later would go unseen until a lock-wait timeout.
                let blocked: Vec<TrxId> = lock
                    .waiters
                    .iter()
                    .filter(|&&(t, w, _)| t != trx && !compatible(&[(trx, mode)], t, w, gap))
                    .map(|&(t, _, _)| t)
                    .collect();
                if !blocked.is_empty() {
                    let mut graph = self.waits_for.lock();
                    for waiter in blocked {
                        let edges = graph.entry(waiter).or_default();
                        if !edges.contains(&trx) {
                            edges.push(trx);
                        }
                    }
                }
                break Ok((mine.is_none(), Gapped::Inserted));
            }
            if nowait {
                // Before any queue entry or wait-for edge: nobody waits for this request.
                self.stats.incr(Counter::LockNowaits);
                break Err(TxnError::LockNowait {
                    table: table_name.to_owned(),
                    key: key.1.key(),
                });
            }
            let blockers: Vec<TrxId> = lock
                .holders
                .iter()
                .filter(|&&(t, m)| !compatible(&[(t, m)], trx, want, gap))
                .map(|&(t, _)| t)
                .collect();
            if interrupted(interrupt) {
                break Err(TxnError::Interrupted(Interruption::Query));
            }
            if Instant::now() >= deadline {
                self.stats.incr(Counter::LockWaitTimeouts);
                break Err(TxnError::LockWaitTimeout {
                    waiter: trx,
                    blocker: blockers[0],
                    table: table_name.to_owned(),
                    key: key.1.key(),
                });
            }
            if let Some(cycle) = self.wait_for(trx, blockers.clone()) {
                self.stats.incr(Counter::Deadlocks);
                break Err(TxnError::Deadlock {
                    victim: trx,
                    blocker: cycle.get(1).copied().unwrap_or(blockers[0]),
                    cycle,
                    table: table_name.to_owned(),
                    key: key.1.key(),
                });
            }
            let waiter = match &queued {
                Some(waiter) => Arc::clone(waiter),
                None => {
                    self.stats.incr(Counter::LockWaits);
                    self.waiting.fetch_add(1, Ordering::Relaxed);
                    let waiter = Arc::new(Waiter::default());
                    lock.waiters.push_back((trx, want, Arc::clone(&waiter)));
                    queued = Some(Arc::clone(&waiter));
                    if let Some(boost) = &self.boost {
                        // Queued already, so a release meanwhile wakes us; system calls
                        // are not made under the shard's latch.
                        locks.unlocked(|g| {
                            MutexGuard::unlocked(g, || {
                                boost.waiting_for(&blockers, &self.stats);
                            })
                        });
                    }
                    waiter
                }
            };
            if self.spins() {
                // The holder is likely running on another CPU and about to end: waiting for
                // it awake skips the sleep and the wake-up, each a trip through the kernel.
                let until = deadline.min(Instant::now() + self.spin);
                let woke = locks.unlocked(|g| {
                    MutexGuard::unlocked(g, || {
                        while !waiter.woken.load(Ordering::Acquire) {
                            if Instant::now() >= until {
                                return false;
                            }
                            for _ in 0..64 {
                                std::hint::spin_loop();
                            }
                        }
                        true
                    })
                });
                if woke {
                    self.stats.incr(Counter::LockSpinGrants);
                }
            }
            // A thread pool's worker says it sleeps, so that the pool runs another statement
            // meanwhile (perhaps the holder's COMMIT): once for the whole wait, not per
            // slice (hundreds of waiters waking every slice would count as running), and
            // outside the latch.
            if waiting.is_none() && crate::sync::wait::observed() {
                waiting = Some(locks.unlocked(|g| {
                    MutexGuard::unlocked(g, || {
                        crate::sync::wait::begin(crate::sync::wait::Kind::RowLock)
                    })
                }));
            }
            // Under the latch again: a wake-up is either in the flag already or still to come.
            if !waiter.woken.swap(false, Ordering::Acquire) {
                let until = match interrupt {
                    Some(_) => deadline.min(Instant::now() + LOCK_WAIT_SLICE),
                    None => deadline,
                };
                locks.unlocked(|g| waiter.condvar.wait_until(g, until));
                waiter.woken.store(false, Ordering::Relaxed);
            }
        };
        if queued.is_some() {
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            self.waits_for.lock().remove(&trx);
            if let Some(lock) = locks.get_mut(hash, &key) {
                lock.waiters.retain(|&(t, _, _)| t != trx);
                // A waiter that was counted on to take the lock may have left without it.
                lock.wake_grantable(gap);
            }
        }
        locks.remove_if(hash, &key, Lock::unused);
        drop(locks);
        drop(waiting);
        if let (Ok((true, _)), Some(boost)) = (&outcome, &self.boost) {
            boost.holding(trx);
        }
        outcome
    }

    /// Whether `trx` could take `key` (whose [`lock_hash`] is `hash`) exclusively without
    /// waiting: nobody else holds it or waits for it. An insert that finds its key free
    /// takes no lock-table entry (its uncommitted version locks the row implicitly).
    pub(crate) fn is_free_for(&self, trx: TrxId, key: &LockKey, hash: u64) -> bool {
        let mut locks = self.latch(hash);
        locks.get_mut(hash, key).is_none_or(|lock| {
            lock.waiters.is_empty() && lock.holders.iter().all(|&(t, _)| t == trx)
        })
    }

    /// Waits, up to `timeout`, while `pending()` says `writer`'s uncommitted insert still
    /// locks the row `key` of `table_name` implicitly (see `trx.rs`). The wait is an edge
    /// `trx -> writer` in the wait-for graph, so a cycle through it is a deadlock as any
    /// other; `trx` is its victim when its own edge closes the cycle.
    ///
    /// A lock-table waiter sleeps until the releaser wakes it; an implicit lock has no
    /// entry to queue on, so this waiter polls, spinning first, then sleeping a little
    /// longer each time (up to a millisecond). Such waits are rare: only a row another
    /// transaction has just inserted and not committed is locked this way.
    pub(crate) fn wait_for_writer(
        &self,
        trx: TrxId,
        writer: TrxId,
        (timeout, interrupt): (Duration, Option<&AtomicBool>),
        (table_name, key): (&str, &Key),
        pending: impl Fn() -> bool,
    ) -> Result<(), TxnError> {
        if !pending() {
            return Ok(());
        }
        let timed_out = || {
            self.stats.incr(Counter::LockWaitTimeouts);
            TxnError::LockWaitTimeout {
                waiter: trx,
                blocker: writer,
                table: table_name.to_owned(),
                key: key.clone(),
            }
        };
        // As for a lock-table request: a zero timeout fails before any wait-for edge.
        if timeout.is_zero() {
            return Err(timed_out());
        }
        self.stats.incr(Counter::LockWaits);
        let deadline = Instant::now() + timeout;
        if let Some(boost) = &self.boost {
            boost.waiting_for(&[writer], &self.stats);
        }
        if let Some(cycle) = self.wait_for(trx, vec![writer]) {
            self.stats.incr(Counter::Deadlocks);
            return Err(TxnError::Deadlock {
                victim: trx,
                blocker: cycle.get(1).copied().unwrap_or(writer),
                cycle,
                table: table_name.to_owned(),
                key: key.clone(),
            });
        }
        let spin_until = Instant::now() + self.spin;
        let mut pause = Duration::from_micros(20);
        let _waiting = crate::sync::wait::begin(crate::sync::wait::Kind::RowLock);
        let outcome = loop {
            if !pending() {
                break Ok(());
            }
            if interrupted(interrupt) {
                break Err(TxnError::Interrupted(Interruption::Query));
            }
            let now = Instant::now();
            if now >= deadline {
                break Err(timed_out());
            }
            if now < spin_until && self.spins() {
                for _ in 0..64 {
                    std::hint::spin_loop();
                }
            } else {
                std::thread::sleep(pause.min(deadline - now));
                pause = (pause * 2).min(Duration::from_millis(1));
            }
        };
        self.waits_for.lock().remove(&trx);
        outcome
    }

    /// Whether a queued request spins before it sleeps.
    fn spins(&self) -> bool {
        !self.spin.is_zero() && self.waiting.load(Ordering::Relaxed) < self.spin_below
    }

    /// Records that `trx` waits for `blockers`; returns the cycle (starting at `trx`) if that
    /// closes one, and then records nothing.
    fn wait_for(&self, trx: TrxId, blockers: Vec<TrxId>) -> Option<Vec<TrxId>> {
        let mut graph = self.waits_for.lock();
        graph.insert(trx, blockers);
        let cycle = find_cycle(&graph, trx);
        if cycle.is_some() {
            graph.remove(&trx);
        }
        cycle
    }

    /// Transaction `trx` ended: releases the locks it `held`, then gives its thread back
    /// its own priority if a waiter raised it.
    pub(crate) fn end(&self, trx: TrxId, held: &[Held]) {
        self.release_all(trx, held);
        if let Some(boost) = &self.boost {
            boost.ended(trx);
        }
    }

    /// Releases every lock in `held` held by `trx`, waking the waiters that can go now.
    pub(crate) fn release_all(&self, trx: TrxId, held: &[Held]) {
        for (hash, key) in held {
            let mut locks = self.latch(*hash);
            locks.update(*hash, key, |lock| {
                lock.holders.retain(|&mut (t, _)| t != trx);
                lock.wake_grantable(key.1.is_gap());
                !lock.unused()
            });
        }
    }
}

/// A path `start -> ... -> start` in the wait-for graph, if any (depth-first).
fn find_cycle(graph: &HashMap<TrxId, Vec<TrxId>>, start: TrxId) -> Option<Vec<TrxId>> {
    let mut path = vec![start];
    let mut stack: Vec<std::slice::Iter<'_, TrxId>> =
        vec![graph.get(&start).map(|v| v.iter()).unwrap_or_default()];
    let mut seen = std::collections::HashSet::new();
    while let Some(edges) = stack.last_mut() {
        match edges.next() {
            Some(&next) if next == start => return Some(path),
            Some(&next) => {
                if seen.insert(next) {
                    path.push(next);
                    stack.push(graph.get(&next).map(|v| v.iter()).unwrap_or_default());
                }
            }
            None => {
                stack.pop();
                path.pop();
            }
        }
    }
    None
}

mod view;

pub use view::{DataLock, DataLockWait};

#[cfg(test)]
mod model;

#[cfg(test)]
mod tests;
