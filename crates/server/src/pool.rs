//! `--thread-handling pool-of-threads`: the thread pool of MariaDB and Percona Server, which
//! runs statements, not connections, on a few threads (the book's section 8.3.1, Fig 8-33).
//!
//! With one thread per connection, 2,000 connections are 2,000 threads, and when they all
//! have a statement to run the CPUs switch between them: each switch costs the cache the
//! last one warmed. The pool keeps about one statement running per group of connections
//! and one group per CPU, so that a CPU runs a statement to its end before it starts the
//! next.
//!
//! - **Groups.** Connection `id` belongs to group `id % thread_pool_size`. A connection
//!   waiting for its next command holds no thread: its socket is in its group's epoll set
//!   (one-shot), and one of the group's idle workers, the *listener*, waits in
//!   `epoll_wait`. When commands come, the listener queues their connections and then runs
//!   the first itself, so that on a group that is not busy a statement costs no hand-off
//!   between threads (MariaDB's design).
//! - **Workers.** A group's worker takes a connection from the group's queue and runs it
//!   until it waits for its next command (one statement, or one packet the server answers
//!   itself). A group runs at most `1 + thread_pool_oversubscribe` statements at once; a
//!   worker is woken (or made) for a queued connection only when none of the group's runs
//!   or listens.
//! - **Waits.** A statement that waits (a row lock, its group commit, the log's fdatasync,
//!   an admission permit) says so (`waterline_sync::wait`, MySQL's `thd_wait_begin`): it no
//!   longer counts as running, and if nothing else runs, another worker takes the queue.
//!   Without this, a COMMIT queued behind a statement waiting for its locks would wait for
//!   the stall timer.
//! - **Stalls.** Every `thread_pool_stall_limit`, a group whose queue did not move is
//!   marked stalled: one more worker is woken (or made) and the oversubscription limit
//!   does not hold until the queue moves again, so that a long statement cannot starve the
//!   statements queued behind it.
//! - **Priorities** (`thread_pool_high_prio_mode`, Percona's): with `transactions`, a
//!   connection inside a transaction goes to the high-priority queue, which is taken
//!   first, so that transactions end (and release their locks) before new ones begin;
//!   `thread_pool_high_prio_tickets` bounds how many times in a row. `statements` puts every
//!   connection there, `none` none.
//! - **Threads** idle for `thread_pool_idle_timeout` end (one per group stays); there are
//!   never more than `thread_pool_max_threads`. A group whose workers all wait gets a new
//!   one at once (so under heavy row-lock contention there are about as many threads as
//!   waiting statements, as in MariaDB); otherwise creation is throttled.
//!
//! A connection's `wait_timeout` is a timer on the server's tokio runtime, which queues
//! the connection when it fires. Not here: MariaDB's `thread_pool_prio_kickup_timer`.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use parking_lot::{Condvar, Mutex, MutexGuard};
use rustix::event::epoll;
use waterline_sql::Shared;
use waterline_sync::wait;

use crate::panics::POOL_THREAD;
use crate::wire::Registered;

/// Which connections go to the high-priority queue (Percona's `thread_pool_high_prio_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HighPrioMode {
    /// Those inside a transaction, while they have tickets.
    #[default]
    Transactions,
    /// All of them.
    Statements,
    /// None.
    None,
}

impl HighPrioMode {
    /// Its name, as `@@thread_pool_high_prio_mode` shows it.
    pub fn name(self) -> &'static str {
        match self {
            HighPrioMode::Transactions => "transactions",
            HighPrioMode::Statements => "statements",
            HighPrioMode::None => "none",
        }
    }
}

/// The pool's settings, with MariaDB's and Percona's names and defaults.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// Groups (`thread_pool_size`; default: the CPUs).
    pub size: u32,
    /// Statements a group runs at once beyond one (`thread_pool_oversubscribe`; 3).
    pub oversubscribe: u32,
    /// How long a group's queue may stand still before it is stalled
    /// (`thread_pool_stall_limit`; 500 ms).
    pub stall_limit: Duration,
    /// Workers in all (`thread_pool_max_threads`; 65,536).
    pub max_threads: u32,
    /// How long a worker with nothing to do waits before it ends
    /// (`thread_pool_idle_timeout`; 60 s).
    pub idle_timeout: Duration,
    /// Which connections are taken first (`thread_pool_high_prio_mode`).
    pub high_prio_mode: HighPrioMode,
    /// Times in a row a connection may take the high-priority queue
    /// (`thread_pool_high_prio_tickets`; 4,294,967,295).
    pub high_prio_tickets: u32,
}

impl Default for PoolConfig {
    fn default() -> PoolConfig {
        PoolConfig {
            size: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            oversubscribe: 3,
            stall_limit: Duration::from_millis(500),
            max_threads: 65_536,
            idle_timeout: Duration::from_secs(60),
            high_prio_mode: HighPrioMode::Transactions,
            high_prio_tickets: u32::MAX,
        }
    }
}

/// A connection's work: its protocol loop, which returns `Pending` while it waits for its
/// next command.
pub(crate) type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The pool: its groups, and what they share.
#[derive(Debug)]
pub(crate) struct Pool {
    common: Arc<Common>,
    groups: Arc<[Arc<Group>]>,
    stall_timer: std::sync::Once,
}

/// What every group reads.
struct Common {
    config: PoolConfig,
    /// Workers in all.
    threads: AtomicUsize,
    /// The server's status counters (`Threadpool_threads`, `Threadpool_idle_threads`).
    shared: Arc<Shared>,
    /// The server's runtime, which every worker enters (a connection's timers and
    /// sockets register with it).
    runtime: OnceLock<tokio::runtime::Handle>,
}

impl std::fmt::Debug for Common {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Common")
            .field("config", &self.config)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

/// A group of connections and its workers.
#[derive(Debug)]
struct Group {
    common: Arc<Common>,
    state: Mutex<State>,
    /// Idle workers wait here.
    work: Condvar,
    /// The sockets of the group's connections that wait for a command (one-shot).
    epoll: OwnedFd,
    /// Their wakers, by connection id (the epoll event's data).
    wakers: Mutex<HashMap<u64, Waker>>,
}

#[derive(Debug, Default)]
struct State {
    high: VecDeque<Arc<Task>>,
    low: VecDeque<Arc<Task>>,
    /// Workers of this group, and those of them that wait for work.
    threads: usize,
    idle: usize,
    /// Workers woken or made to look at the queue that have not yet looked.
    pending: usize,
    /// When the group last made a worker (for MariaDB's throttling).
    last_created: Option<std::time::Instant>,
    /// Workers running a statement (not waiting in the engine).
    active: usize,
    /// Connections taken from the queue since the stall timer last looked.
    taken: u64,
    /// The queue stood still for a stall limit: the oversubscription limit is lifted.
    stalled: bool,
    /// A worker waits in `epoll_wait`.
    listening: bool,
    /// Commands the listener heard since the stall timer last looked.
    heard: u64,
}

impl State {
    fn is_empty(&self) -> bool {
        self.high.is_empty() && self.low.is_empty()
    }

    /// Nobody runs a statement or will look at the queue, and there is a queue, or
    /// nobody listens: a worker must be woken or made.
    fn unattended(&self) -> bool {
        self.active == 0 && self.pending == 0 && (!self.is_empty() || !self.listening)
    }
}

/// One connection in the pool.
pub(crate) struct Task {
    id: u32,
    job: Mutex<Option<Job>>,
    group: Arc<Group>,
    /// In a queue, or about to be: a second wake-up does nothing.
    queued: AtomicBool,
    /// Set by the connection before it waits: it is inside a transaction.
    in_transaction: Arc<AtomicBool>,
    tickets: AtomicU32,
}

impl std::fmt::Debug for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task").field("id", &self.id).finish()
    }
}

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        let group = Arc::clone(&self.group);
        group.put(self);
    }
}

impl Pool {
    /// A pool with `config`'s groups; its workers start with the first connections.
    pub(crate) fn new(config: PoolConfig, shared: Arc<Shared>) -> io::Result<Pool> {
        let size = config.size.max(1);
        let common = Arc::new(Common {
            config,
            threads: AtomicUsize::new(0),
            shared,
            runtime: OnceLock::new(),
        });
        let groups = (0..size)
            .map(|_| {
                Ok(Arc::new(Group {
                    common: Arc::clone(&common),
                    state: Mutex::new(State::default()),
                    work: Condvar::new(),
                    epoll: epoll::create(epoll::CreateFlags::CLOEXEC)?,
                    wakers: Mutex::new(HashMap::new()),
                }))
            })
            .collect::<io::Result<_>>()?;
        Ok(Pool {
            common,
            groups,
            stall_timer: std::sync::Once::new(),
        })
    }

    /// Connection `id`'s `socket` in its group's epoll set, for the connection's waits.
    pub(crate) fn register(
        &self,
        id: u32,
        socket: Arc<dyn AsFd + Send + Sync>,
    ) -> Box<dyn Registered> {
        let group = &self.groups[id as usize % self.groups.len()];
        Box::new(Registration {
            group: Arc::clone(group),
            key: u64::from(id),
            socket,
            added: AtomicBool::new(false),
        })
    }

    /// Hands connection `id`'s `job` to its group, to run when its socket has something;
    /// called on the server's runtime. `in_transaction` is the connection's hint for the
    /// priority queues.
    pub(crate) fn start(&self, id: u32, job: Job, in_transaction: Arc<AtomicBool>) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let _ = self.common.runtime.set(runtime);
        }
        self.stall_timer.call_once(|| self.start_stall_timer());
        let group = &self.groups[id as usize % self.groups.len()];
        let task = Arc::new(Task {
            id,
            job: Mutex::new(Some(job)),
            group: Arc::clone(group),
            queued: AtomicBool::new(false),
            in_transaction,
            tickets: AtomicU32::new(self.common.config.high_prio_tickets),
        });
        // The greeting is the server's to send: run it now.
        group.put(task);
    }

    /// The thread that looks for stalled groups every stall limit, for as long as the pool
    /// is there.
    fn start_stall_timer(&self) {
        let groups = Arc::downgrade(&self.groups);
        let every = self.common.config.stall_limit.max(Duration::from_millis(1));
        let _ = std::thread::Builder::new()
            .name("waterline-stall".into())
            .spawn(move || stall_timer(&groups, every));
    }
}

/// MariaDB's `check_stall`: a group whose queue has connections and took none since the
/// last look is stalled; it gets a worker more.
fn stall_timer(groups: &Weak<[Arc<Group>]>, every: Duration) {
    loop {
        std::thread::sleep(every);
        let Some(groups) = groups.upgrade() else {
            return;
        };
        for group in groups.iter() {
            let mut state = group.state.lock();
            if state.taken == 0 && !state.is_empty() {
                state.stalled = true;
                group.wake_or_create(&mut state);
            } else if state.taken > 0 {
                state.stalled = false;
            } else if state.unattended() || (!state.listening && state.heard == 0) {
                // Nobody listens and nothing was heard since the last look (every worker
                // busy with long statements): as MariaDB's timer, wake or make a listener.
                group.wake_or_create(&mut state);
            }
            state.taken = 0;
            state.heard = 0;
        }
    }
}

impl Group {
    /// Queues `task` (a connection with something to read); wakes a worker if none of
    /// the group's runs or is about to.
    fn put(self: &Arc<Group>, task: Arc<Task>) {
        if task.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let config = &self.common.config;
        let high = match config.high_prio_mode {
            HighPrioMode::Statements => true,
            HighPrioMode::None => false,
            HighPrioMode::Transactions => {
                task.in_transaction.load(Ordering::Relaxed)
                    && task.tickets.load(Ordering::Relaxed) > 0
            }
        };
        if high {
            task.tickets.fetch_sub(1, Ordering::Relaxed);
        } else {
            task.tickets
                .store(config.high_prio_tickets, Ordering::Relaxed);
        }
        let mut state = self.state.lock();
        if high {
            state.high.push_back(task);
        } else {
            state.low.push_back(task);
        }
        if state.unattended() {
            self.wake_or_create(&mut state);
        }
    }

    /// Whether the group runs as many statements as it may.
    fn too_many_active(&self, state: &State) -> bool {
        state.active > self.common.config.oversubscribe as usize && !state.stalled
    }

    /// Tells an idle worker to look at the queue, or starts a new one if there is none
    /// (and the pool may have more). As MariaDB's: when every worker of the group waits
    /// (none runs), at once, since the statements queued may be what the waits wait for
    /// (a lock holder's COMMIT); otherwise a group that has four workers or more makes
    /// another only 50 ms after the last (100 ms from eight, 200 ms from sixteen), and the
    /// stall timer tries again.
    fn wake_or_create(self: &Arc<Group>, state: &mut MutexGuard<'_, State>) {
        if state.idle > state.pending {
            state.pending += 1;
            self.work.notify_one();
            return;
        }
        let throttle = match state.threads {
            0..4 => Duration::ZERO,
            4..8 => Duration::from_millis(50),
            8..16 => Duration::from_millis(100),
            _ => Duration::from_millis(200),
        };
        if state.active > 0 && state.last_created.is_some_and(|t| t.elapsed() < throttle) {
            return;
        }
        let common = &self.common;
        let max = common.config.max_threads.max(1) as usize;
        if common
            .threads
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < max).then_some(n + 1)
            })
            .is_err()
        {
            return;
        }
        state.threads += 1;
        state.pending += 1;
        state.last_created = Some(std::time::Instant::now());
        let group = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name(POOL_THREAD.into())
            .stack_size(waterline_sql::SESSION_STACK)
            .spawn(move || group.work());
        if spawned.is_err() {
            state.threads -= 1;
            state.pending -= 1;
            common.threads.fetch_sub(1, Ordering::Relaxed);
        } else {
            let counters = &common.shared.counters;
            counters.threadpool_threads.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A worker: takes connections from the queue and runs each until it waits for its
    /// next command; with nothing to run, listens if nobody does, or sleeps; ends after an
    /// idle timeout (unless it is the group's last).
    fn work(self: Arc<Group>) {
        let _runtime = self.common.runtime.get().map(tokio::runtime::Handle::enter);
        wait::observe(Some(Arc::new(Observer(Arc::clone(&self)))));
        let counters = &self.common.shared.counters;
        let mut state = self.state.lock();
        state.pending = state.pending.saturating_sub(1);
        loop {
            if !self.too_many_active(&state)
                && let Some(task) = state.high.pop_front().or_else(|| state.low.pop_front())
            {
                state.active += 1;
                state.taken += 1;
                MutexGuard::unlocked(&mut state, || run(&task));
                state.active -= 1;
                continue;
            }
            if !state.listening {
                state.listening = true;
                let heard = MutexGuard::unlocked(&mut state, || self.listen());
                state.listening = false;
                // A listener that heard something runs the first connection itself.
                if heard == Heard::Queued {
                    state.pending = state.pending.saturating_sub(1);
                }
                if heard == Heard::TimedOut && state.is_empty() && state.threads > 1 {
                    self.retire(&mut state);
                    return;
                }
                continue;
            }
            state.idle += 1;
            counters
                .threadpool_idle_threads
                .fetch_add(1, Ordering::Relaxed);
            let timed_out = self
                .work
                .wait_for(&mut state, self.common.config.idle_timeout)
                .timed_out();
            counters
                .threadpool_idle_threads
                .fetch_sub(1, Ordering::Relaxed);
            state.idle -= 1;
            state.pending = state.pending.saturating_sub(1);
            if timed_out && state.is_empty() && state.threads > 1 {
                self.retire(&mut state);
                return;
            }
        }
    }
}

impl Group {
    /// The listener's wait: for the group's sockets (up to an idle timeout), then the
    /// connections with a command are queued. Counts itself as pending while it queues
    /// them, so that no other worker is woken for the first. What it came to.
    fn listen(&self) -> Heard {
        let timeout = self.common.config.idle_timeout;
        let timeout = rustix::event::Timespec {
            tv_sec: timeout.as_secs() as i64,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        let mut events: Vec<epoll::Event> = Vec::with_capacity(64);
        let heard = epoll::wait(
            &self.epoll,
            rustix::buffer::spare_capacity(&mut events),
            Some(&timeout),
        );
        match heard {
            Ok(_) if events.is_empty() => return Heard::TimedOut,
            Err(_) => return Heard::Nothing,
            Ok(_) => {}
        }
        let wakers: Vec<Waker> = {
            let mut waiting = self.wakers.lock();
            events
                .iter()
                .filter_map(|e| waiting.remove(&e.data.u64()))
                .collect()
        };
        // Events of connections gone meanwhile (their registration dropped) wake nobody.
        if wakers.is_empty() {
            return Heard::Nothing;
        }
        {
            let mut state = self.state.lock();
            state.pending += 1;
            state.heard += wakers.len() as u64;
        }
        for waker in wakers {
            waker.wake();
        }
        Heard::Queued
    }

    /// A worker ends: counted out of its group, the pool and SHOW STATUS.
    fn retire(&self, state: &mut State) {
        state.threads -= 1;
        self.common.threads.fetch_sub(1, Ordering::Relaxed);
        let counters = &self.common.shared.counters;
        counters.threadpool_threads.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What the listener's wait came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Heard {
    /// Nothing for an idle timeout.
    TimedOut,
    /// Woken, but no connection to queue (an interrupted wait, a connection gone).
    Nothing,
    /// Connections queued; the listener runs the first (it counts itself as pending).
    Queued,
}

/// A pooled connection's socket in its group's epoll set.
struct Registration {
    group: Arc<Group>,
    key: u64,
    socket: Arc<dyn AsFd + Send + Sync>,
    /// In the set (later waits modify the entry).
    added: AtomicBool,
}

impl Registered for Registration {
    fn arm(&self, waker: &Waker) -> io::Result<()> {
        self.group.wakers.lock().insert(self.key, waker.clone());
        let flags = epoll::EventFlags::IN | epoll::EventFlags::RDHUP | epoll::EventFlags::ONESHOT;
        let data = epoll::EventData::new_u64(self.key);
        // A socket that has something to read already is reported at once (both add and
        // modify look), so a command that came before this is not missed.
        let socket = self.socket.as_fd();
        if self.added.swap(true, Ordering::Relaxed) {
            epoll::modify(&self.group.epoll, socket, data, flags)?;
        } else {
            epoll::add(&self.group.epoll, socket, data, flags)?;
        }
        Ok(())
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if self.added.load(Ordering::Relaxed) {
            let _ = epoll::delete(&self.group.epoll, self.socket.as_fd());
        }
        self.group.wakers.lock().remove(&self.key);
    }
}

/// Polls `task`'s connection once: until it waits for its next command, or ends. A panic
/// ends that connection alone (its drop rolls back what it left open).
fn run(task: &Arc<Task>) {
    task.queued.store(false, Ordering::Release);
    let mut job = task.job.lock();
    let Some(future) = job.as_mut() else {
        return;
    };
    let waker = Waker::from(Arc::clone(task));
    let mut cx = Context::from_waker(&waker);
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        future.as_mut().poll(&mut cx)
    })) {
        Ok(Poll::Pending) => {}
        Ok(Poll::Ready(())) => *job = None,
        Err(panic) => {
            *job = None;
            crate::panics::report_panic(task.id, &*panic);
        }
    }
}

/// A worker's ears for its statement's waits.
struct Observer(Arc<Group>);

impl wait::Observer for Observer {
    fn begin(&self, _: wait::Kind) {
        let group = &self.0;
        let mut state = group.state.lock();
        state.active -= 1;
        if state.unattended() {
            group.wake_or_create(&mut state);
        }
    }

    fn end(&self, _: wait::Kind) {
        self.0.state.lock().active += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(mode: HighPrioMode, tickets: u32) -> Pool {
        let engine = Arc::new(waterline_txn::Engine::open(Default::default()).unwrap());
        let shared = Shared::new(engine, waterline_sql::SessionConfig::default());
        let config = PoolConfig {
            size: 1,
            high_prio_mode: mode,
            high_prio_tickets: tickets,
            ..PoolConfig::default()
        };
        Pool::new(config, shared).unwrap()
    }

    /// A task that never runs (its group is marked busy, so no worker starts).
    fn task(pool: &Pool, id: u32, in_transaction: bool) -> Arc<Task> {
        let group = &pool.groups[0];
        group.state.lock().active = 1;
        Arc::new(Task {
            id,
            job: Mutex::new(None),
            group: Arc::clone(group),
            queued: AtomicBool::new(false),
            in_transaction: Arc::new(AtomicBool::new(in_transaction)),
            tickets: AtomicU32::new(pool.common.config.high_prio_tickets),
        })
    }

    fn queues(pool: &Pool) -> (Vec<u32>, Vec<u32>) {
        let state = pool.groups[0].state.lock();
        let ids = |q: &VecDeque<Arc<Task>>| q.iter().map(|t| t.id).collect();
        (ids(&state.high), ids(&state.low))
    }

    #[test]
    fn transactions_go_first_while_their_tickets_last() {
        let p = pool(HighPrioMode::Transactions, 2);
        let (idle, busy) = (task(&p, 1, false), task(&p, 2, true));
        for _ in 0..3 {
            Arc::clone(&idle).wake();
            Arc::clone(&busy).wake();
            // Taken off the queue, as a worker would.
            let mut state = p.groups[0].state.lock();
            state.high.clear();
            state.low.clear();
            drop(state);
            idle.queued.store(false, Ordering::Relaxed);
            busy.queued.store(false, Ordering::Relaxed);
        }
        // Two tickets: twice in the high queue, then low, which gives the tickets back.
        assert_eq!(busy.tickets.load(Ordering::Relaxed), 2);
        Arc::clone(&busy).wake();
        assert_eq!(queues(&p), (vec![2], vec![]));
    }

    #[test]
    fn a_second_wake_up_queues_nothing_more_and_the_modes_choose_the_queue() {
        let p = pool(HighPrioMode::Transactions, u32::MAX);
        let (idle, busy) = (task(&p, 1, false), task(&p, 2, true));
        Arc::clone(&idle).wake();
        Arc::clone(&busy).wake();
        Arc::clone(&busy).wake();
        assert_eq!(queues(&p), (vec![2], vec![1]));

        let p = pool(HighPrioMode::Statements, u32::MAX);
        Arc::clone(&task(&p, 1, false)).wake();
        assert_eq!(queues(&p), (vec![1], vec![]));

        let p = pool(HighPrioMode::None, u32::MAX);
        Arc::clone(&task(&p, 2, true)).wake();
        assert_eq!(queues(&p), (vec![], vec![2]));
    }
}
