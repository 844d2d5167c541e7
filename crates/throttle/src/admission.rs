//! The admission semaphore (book 8.3.2, Figure 8-34): before a transaction starts it takes a
//! permit; if the limit is reached it waits, in arrival order; when a transaction ends, its
//! permit goes to the first waiter.
//!
//! ```text
//!  enter ──► limit reached? ── no ──► inside (permit held) ──► commit / rollback / drop
//!                 │ yes                                             │ permit returned:
//!                 └──► wait (FIFO: `semaphore.rs`) ◄────────────────┘ first waiter goes in
//! ```
//!
//! A [`Permit`] is RAII: it is returned when dropped, whatever ends the transaction (commit,
//! rollback, an error, a panic unwinding through it, a cancelled task, a client that went
//! away). Cancelling a wait (dropping the `enter` future) leaves the queue. The limit can be
//! changed at run time: raising it admits waiters at once; lowering it takes free permits
//! away now and the rest as transactions end, so `inside` never exceeds the new limit once
//! those have ended.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::Instant;

use crate::adaptive::Controller;
use crate::pool::ThreadPool;
use crate::semaphore::{OwnedPermit, Semaphore};
use crate::{Metrics, Policy, ThrottleError};
use hdrhistogram::Histogram;
use parking_lot::Mutex;

/// Where admission reads the time: `Instant::now`, or a test's virtual clock.
pub type Clock = fn() -> Instant;

/// Gauges and counters, shared with pool jobs (which must not own the pool).
#[derive(Debug)]
struct Gauges {
    clock: Clock,
    inside: AtomicUsize,
    waiting: AtomicUsize,
    admitted: AtomicU64,
    /// Admissions that did not wait (a whole microsecond), counted here rather than in
    /// `waits`, so the common uncontended path takes no lock.
    no_wait: AtomicU64,
    /// Waits before admission of a microsecond or more, in microseconds.
    waits: Mutex<Histogram<u64>>,
}

impl Gauges {
    fn admitted(&self, requested: Instant) {
        self.inside.fetch_add(1, Ordering::Relaxed);
        self.admitted.fetch_add(1, Ordering::Relaxed);
        let waited = (self.clock)()
            .saturating_duration_since(requested)
            .as_micros()
            .min(u128::from(u64::MAX)) as u64;
        if waited == 0 {
            self.no_wait.fetch_add(1, Ordering::Relaxed);
        } else {
            // `record`, not `saturating_record`: the histogram grows to fit; saturating
            // would clamp to its current (initially tiny) highest value.
            let _ = self.waits.lock().record(waited);
        }
    }
}

/// The limit and the permits owed after a decrease.
#[derive(Debug)]
struct Limited {
    semaphore: Arc<Semaphore>,
    limit: Mutex<usize>,
    /// Permits to forget as transactions end (a decrease larger than the free permits).
    debt: AtomicUsize,
    controller: Option<Mutex<Controller>>,
}

#[derive(Debug)]
struct Inner {
    policy: Policy,
    gauges: Arc<Gauges>,
    /// `Limit` and `Adaptive`.
    limited: Option<Limited>,
    /// `ThreadPool`.
    pool: Option<ThreadPool>,
}

/// Transaction admission, as a [`Policy`] says. Cheap to clone (one shared state).
#[derive(Clone, Debug)]
pub struct Admission {
    inner: Arc<Inner>,
}

/// The right to be inside: returned when dropped.
#[derive(Debug)]
pub struct Permit {
    permit: Option<OwnedPermit>,
    inner: Arc<Inner>,
    entered: Instant,
}

/// Undoes the `waiting` count when a wait ends, however it ends (admitted or cancelled).
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Admission {
    /// Admission under `policy`.
    pub fn new(policy: Policy) -> Result<Admission, ThrottleError> {
        Admission::with_clock(policy, Instant::now)
    }

    /// Admission whose waits and controller read `clock` (a test runs the adaptive limit in
    /// virtual time so).
    pub fn with_clock(policy: Policy, clock: Clock) -> Result<Admission, ThrottleError> {
        policy.validate()?;
        let limited = |limit: usize, controller: Option<Controller>| Limited {
            semaphore: Arc::new(Semaphore::new(limit)),
            limit: Mutex::new(limit),
            debt: AtomicUsize::new(0),
            controller: controller.map(Mutex::new),
        };
        let (limited, pool) = match policy {
            Policy::Unlimited => (None, None),
            Policy::Limit(n) => (Some(limited(n, None)), None),
            Policy::Adaptive(config) => (
                Some(limited(config.initial, Some(Controller::new(config)))),
                None,
            ),
            Policy::ThreadPool(n) => (None, Some(ThreadPool::new(n))),
        };
        let gauges = Arc::new(Gauges {
            clock,
            inside: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            admitted: AtomicU64::new(0),
            no_wait: AtomicU64::new(0),
            waits: Mutex::new(Histogram::new(3).expect("3 significant digits are valid")),
        });
        Ok(Admission {
            inner: Arc::new(Inner {
                policy,
                gauges,
                limited,
                pool,
            }),
        })
    }

    /// The policy it was built with.
    pub fn policy(&self) -> Policy {
        self.inner.policy
    }

    /// Waits (in FIFO order) until the transaction may enter. With `ThreadPool`, this admits
    /// at once: the pool limits what runs through [`Admission::run`], not who enters.
    pub async fn enter(&self) -> Permit {
        let clock = self.inner.gauges.clock;
        let requested = clock();
        let permit = match &self.inner.limited {
            None => None,
            Some(limited) => {
                let _waiting = Waiting::new(&self.inner.gauges.waiting);
                Some(limited.semaphore.acquire().await)
            }
        };
        self.inner.gauges.admitted(requested);
        Permit {
            permit,
            inner: Arc::clone(&self.inner),
            entered: clock(),
        }
    }

    /// [`Admission::enter`] for an OS thread: blocks it while waiting. Do not call it on an
    /// async runtime's worker thread (it would block the runtime).
    pub fn enter_blocking(&self) -> Permit {
        block_on(self.enter())
    }

    /// Runs a request `f` (a statement, or a whole transaction) under the policy: with
    /// `ThreadPool`, queued for a worker thread (FIFO) and run there; otherwise here, holding
    /// a permit. A panic in `f` reaches the caller, after the permit or the worker is free
    /// again.
    pub async fn run<R, F>(&self, f: F) -> R
    where
        R: Send + 'static,
        F: FnOnce() -> R + Send + 'static,
    {
        let Some(pool) = &self.inner.pool else {
            let _permit = self.enter().await;
            return f();
        };
        let (done, result) = handoff();
        let gauges = Arc::clone(&self.inner.gauges);
        let requested = (gauges.clock)();
        let waiting = Arc::clone(&gauges);
        waiting.waiting.fetch_add(1, Ordering::Relaxed);
        pool.submit(Box::new(move || {
            gauges.waiting.fetch_sub(1, Ordering::Relaxed);
            gauges.admitted(requested);
            let outcome = panic::catch_unwind(AssertUnwindSafe(f));
            gauges.inside.fetch_sub(1, Ordering::Relaxed);
            done.send(outcome);
        }));
        match result.await {
            Ok(value) => value,
            Err(panic) => panic::resume_unwind(panic),
        }
    }

    /// [`Admission::run`] for an OS thread.
    pub fn run_blocking<R, F>(&self, f: F) -> R
    where
        R: Send + 'static,
        F: FnOnce() -> R + Send + 'static,
    {
        block_on(self.run(f))
    }

    /// Changes the limit (`Limit` and `Adaptive`; an adaptive controller will move it again
    /// from there). An error for `Unlimited` and `ThreadPool`, which have no limit to change.
    pub fn set_limit(&self, limit: usize) -> Result<(), ThrottleError> {
        if limit == 0 {
            return Err(ThrottleError::Config("a limit must be at least 1".into()));
        }
        let limited = self.inner.limited.as_ref().ok_or_else(|| {
            ThrottleError::Config(format!("{:?} has no limit to change", self.inner.policy))
        })?;
        limited.resize(limit);
        Ok(())
    }

    /// Transactions inside now (cheap: one load; [`Admission::metrics`] copies the wait
    /// histogram).
    pub fn inside(&self) -> usize {
        self.inner.gauges.inside.load(Ordering::Relaxed)
    }

    /// The gauges and counters now.
    pub fn metrics(&self) -> Metrics {
        let gauges = &self.inner.gauges;
        let mut waits = gauges.waits.lock().clone();
        let _ = waits.record_n(0, gauges.no_wait.load(Ordering::Relaxed));
        let limit = match (&self.inner.limited, &self.inner.pool) {
            (Some(limited), _) => Some(*limited.limit.lock()),
            (None, Some(pool)) => Some(pool.threads()),
            (None, None) => None,
        };
        Metrics {
            inside: gauges.inside.load(Ordering::Relaxed),
            waiting: gauges.waiting.load(Ordering::Relaxed),
            admitted: gauges.admitted.load(Ordering::Relaxed),
            limit,
            wait_p50_us: waits.value_at_quantile(0.5),
            wait_p99_us: waits.value_at_quantile(0.99),
            wait_max_us: waits.max(),
        }
    }
}

impl Limited {
    fn resize(&self, new: usize) {
        let mut limit = self.limit.lock();
        if new > *limit {
            let mut grow = new - *limit;
            // Forgive debt first: those permits were never taken away.
            let forgiven = self
                .debt
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| {
                    Some(d - d.min(grow))
                })
                .map_or(0, |d| d.min(grow));
            grow -= forgiven;
            self.semaphore.add_permits(grow);
        } else {
            let shrink = *limit - new;
            let taken = self.semaphore.forget_permits(shrink);
            self.debt.fetch_add(shrink - taken, Ordering::AcqRel);
        }
        *limit = new;
    }

    /// Whether a returning permit pays off debt instead of going back.
    fn pay_debt(&self) -> bool {
        self.debt
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| d.checked_sub(1))
            .is_ok()
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let gauges = &self.inner.gauges;
        let inside = gauges.inside.fetch_sub(1, Ordering::Relaxed);
        let Some(limited) = &self.inner.limited else {
            return;
        };
        if let Some(permit) = self.permit.take()
            && limited.pay_debt()
        {
            permit.forget();
        }
        if let Some(controller) = &limited.controller {
            // try_lock: no transaction ever waits for the controller (a latch on every
            // commit is what throttling is there to avoid). One that ends while another is
            // being sampled goes unsampled; a window's median needs samples, not all of them.
            let now = (gauges.clock)();
            let sample = controller
                .try_lock()
                .and_then(|mut c| c.sample(now.duration_since(self.entered), inside, now));
            if let Some(limit) = sample {
                limited.resize(limit);
            }
        }
    }
}

/// Wakes a blocked thread.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs a future to completion on this thread, parking between polls. Nothing here needs a
/// runtime: the semaphore and the hand-off wake the thread themselves, so this works as well
/// inside a runtime's `block_on` (a `waterline serve` connection thread) as outside one.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
        return value;
    }
    // A thread pool's worker says it sleeps, so that the pool runs another statement.
    let _waiting = waterline_sync::wait::begin(waterline_sync::wait::Kind::Admission);
    loop {
        std::thread::park();
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}

/// A pool job's result on its way back to the waiting caller.
type Outcome<R> = std::thread::Result<R>;

/// One value from a pool worker to the caller that waits for it.
struct Handoff<R> {
    slot: Mutex<(Option<Outcome<R>>, Option<Waker>)>,
}

struct Sender<R>(Arc<Handoff<R>>);
struct Receiver<R>(Arc<Handoff<R>>);

fn handoff<R>() -> (Sender<R>, Receiver<R>) {
    let shared = Arc::new(Handoff {
        slot: Mutex::new((None, None)),
    });
    (Sender(Arc::clone(&shared)), Receiver(shared))
}

impl<R> Sender<R> {
    fn send(self, outcome: Outcome<R>) {
        let waker = {
            let mut slot = self.0.slot.lock();
            slot.0 = Some(outcome);
            slot.1.take()
        };
        waker.into_iter().for_each(Waker::wake);
    }
}

impl<R> Future for Receiver<R> {
    type Output = Outcome<R>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome<R>> {
        let mut slot = self.0.slot.lock();
        match slot.0.take() {
            Some(outcome) => Poll::Ready(outcome),
            None => {
                slot.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
