//! The driver: N clients, each with its own connection and input stream, run the mix with no
//! think time. A warm-up runs first and is not counted; then the run is measured for a
//! duration or until a number of transactions.
//!
//! ```text
//!  start ──warm-up──► measuring ──duration / count──► stop ──► join clients, merge stats
//!         (not counted)   each transaction that starts while measuring and ends before
//!                         stop is counted, with its latency (retries included)
//! ```
//!
//! Clients are OS threads (each owns a [`Client`]) or tokio tasks (each an [`AsyncClient`];
//! up to 10,000 on a few worker threads). A task waits without holding a thread for what is
//! outside the process (a server's replies) and for the engine's admission permit; in
//! process, it then runs its transaction to the end without yielding, so a task never holds
//! row locks while parked.
//!
//! A deadlock or lock wait timeout is retried (up to [`MAX_RETRIES`] times) and counted; any
//! other error stops the run and is reported.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use parking_lot::Mutex;

use crate::client::{AsyncClient, Client, Failure, Outcome, RetryReason};
use crate::input::{Input, InputGen, Kind};
use crate::schema::Scale;

/// Retries of one transaction before it counts as failed.
pub const MAX_RETRIES: u32 = 100;

/// How long a client may take to connect before the run fails. A server whose queue of
/// connections not yet accepted overflowed leaves the client's socket open and silent (Linux
/// with SYN cookies), and a run must end with an error then, not wait forever.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// How clients are run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// One OS thread per client.
    Threads,
    /// One tokio task per client, on this many worker threads.
    Tasks {
        /// Worker threads.
        workers: usize,
    },
}

/// When the measured part ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// After this long.
    Duration(Duration),
    /// After this many transactions (all clients together).
    Count(u64),
}

impl std::fmt::Display for Limit {
    /// `10 s` or `4000 transactions`, as a report says it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Duration(d) => write!(f, "{} s", d.as_secs_f64()),
            Limit::Count(n) => write!(f, "{n} transactions"),
        }
    }
}

/// Runs on each thread that runs clients as it starts (an OS-thread client, or a tokio worker
/// for [`Runtime::Tasks`]), with the thread's number: where the `waterline lab` pins threads
/// to CPUs.
pub type OnThreadStart = Arc<dyn Fn(usize) + Send + Sync>;

/// What one run does.
#[derive(Clone, Copy, Debug)]
pub struct DriverOptions {
    /// Clients.
    pub clients: usize,
    /// Threads or tasks.
    pub runtime: Runtime,
    /// Not counted.
    pub warmup: Duration,
    /// The measured part.
    pub limit: Limit,
    /// Seeds the clients' input streams.
    pub seed: u64,
    /// The database's size (input ranges).
    pub scale: Scale,
}

/// Per transaction type.
#[derive(Clone, Debug)]
pub struct KindStats {
    /// Committed.
    pub committed: u64,
    /// Rolled back on purpose (NewOrder's 1%).
    pub rolled_back: u64,
    /// Latency in microseconds, retries included.
    pub latency: Histogram<u64>,
}

impl Default for KindStats {
    fn default() -> KindStats {
        KindStats {
            committed: 0,
            rolled_back: 0,
            // 1 µs to 10 minutes at 3 significant digits; longer waits are clamped.
            latency: Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid bounds"),
        }
    }
}

impl KindStats {
    /// Transactions that ran to their end.
    pub fn completed(&self) -> u64 {
        self.committed + self.rolled_back
    }

    /// A latency quantile, in milliseconds.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        self.latency.value_at_quantile(q) as f64 / 1000.0
    }

    /// The mean latency, in milliseconds: times the count, the clients' time in this type.
    pub fn mean_ms(&self) -> f64 {
        self.latency.mean() / 1000.0
    }

    /// The longest latency, in milliseconds (to the histogram's three significant digits;
    /// 0 when none completed).
    pub fn max_ms(&self) -> f64 {
        self.latency.max() as f64 / 1000.0
    }
}

/// What one run measured.
#[derive(Clone, Debug, Default)]
pub struct Measurement {
    /// The measured time.
    pub elapsed: Duration,
    /// Per transaction type, in [`Kind::ALL`] order.
    pub kinds: [KindStats; 5],
    /// Retries after a deadlock.
    pub deadlock_retries: u64,
    /// Retries after a lock wait timeout.
    pub timeout_retries: u64,
    /// Errors that stopped the run (the first few), and how many there were.
    pub errors: Vec<String>,
    /// Count of errors.
    pub error_count: u64,
}

impl Measurement {
    fn merge(&mut self, other: Measurement) {
        for (mine, theirs) in self.kinds.iter_mut().zip(other.kinds) {
            mine.committed += theirs.committed;
            mine.rolled_back += theirs.rolled_back;
            mine.latency
                .add(&theirs.latency)
                .expect("histograms with the same bounds merge");
        }
        self.deadlock_retries += other.deadlock_retries;
        self.timeout_retries += other.timeout_retries;
        self.error_count += other.error_count;
        for e in other.errors {
            if self.errors.len() < 5 {
                self.errors.push(e);
            }
        }
    }

    /// Transactions that ran to their end, all types.
    pub fn completed(&self) -> u64 {
        self.kinds.iter().map(KindStats::completed).sum()
    }

    /// Transactions per second, all types.
    pub fn txn_per_sec(&self) -> f64 {
        self.completed() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The longest latency of any transaction type, in milliseconds.
    pub fn max_ms(&self) -> f64 {
        self.kinds.iter().map(KindStats::max_ms).fold(0.0, f64::max)
    }

    /// tpmC: NewOrder transactions completed per minute of measured time, including the 1%
    /// that roll back by design (they are business transactions the spec counts, 5.4.2).
    pub fn tpmc(&self) -> f64 {
        self.kinds[Kind::NewOrder.index()].completed() as f64 * 60.0
            / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn record(&mut self, input: &Input, result: &Result<Outcome, Failure>, latency: Duration) {
        let stats = &mut self.kinds[input.kind().index()];
        match result {
            Ok(Outcome::Committed) => stats.committed += 1,
            Ok(Outcome::RolledBack) => stats.rolled_back += 1,
            Err(_) => return,
        }
        let micros = latency.as_micros().min(u128::from(u64::MAX)) as u64;
        stats.latency.saturating_record(micros.max(1));
    }

    fn error(&mut self, message: String) {
        self.error_count += 1;
        if self.errors.len() < 5 {
            self.errors.push(message);
        }
    }
}

/// Where the clients count what they measure: a few shards of [`Measurement`], each client
/// always in the same one.
///
/// A measurement holds five latency histograms of 172 KB each (1 µs to 10 minutes at three
/// significant digits). One per client would take gigabytes at 10,000 clients, and, since
/// freshly allocated memory is only backed when first written, the kernel would back each
/// client's pages as it recorded its first measured transactions, inside the measured
/// window, where the page faults would be measured as the workload's. So the shards are
/// written once before the clients start, and there are at most [`Tally::SHARDS`];
/// a client holds its shard's lock only to record one transaction, so clients sharing one
/// rarely meet.
struct Tally {
    shards: Box<[CachePadded<Mutex<Measurement>>]>,
}

impl Tally {
    /// Enough that a few clients never share and many rarely wait; few enough that their
    /// histograms (860 KB a shard) stay small next to the engine.
    const SHARDS: usize = 64;

    fn new(clients: usize) -> Tally {
        let shards = (0..clients.clamp(1, Tally::SHARDS))
            .map(|_| {
                let mut measurement = Measurement::default();
                for kind in &mut measurement.kinds {
                    // Writes every count now, so the pages are backed before measuring.
                    kind.latency.clear();
                }
                CachePadded::new(Mutex::new(measurement))
            })
            .collect();
        Tally { shards }
    }

    /// Client `client`'s shard.
    fn shard(&self, client: usize) -> &Mutex<Measurement> {
        &self.shards[client % self.shards.len()]
    }

    /// Transactions measured so far (committed or rolled back) and errors.
    fn so_far(&self) -> (u64, u64) {
        self.shards.iter().fold((0, 0), |(done, errors), shard| {
            let m = shard.lock();
            let kinds: u64 = m.kinds.iter().map(|k| k.committed + k.rolled_back).sum();
            (done + kinds, errors + m.error_count)
        })
    }

    /// The shards merged, with the measured time.
    fn total(self, elapsed: Duration) -> Measurement {
        let mut shards = self.shards.into_iter().map(|s| s.into_inner().into_inner());
        let mut total = shards.next().expect("at least one shard");
        for shard in shards {
            total.merge(shard);
        }
        total.elapsed = elapsed;
        total
    }
}

/// The phase flags every client reads.
#[derive(Debug)]
struct Control {
    measuring: AtomicBool,
    stop: AtomicBool,
    /// Transactions still to count (count mode).
    remaining: AtomicI64,
}

impl Control {
    fn new(limit: Limit) -> Control {
        let remaining = match limit {
            Limit::Count(n) => i64::try_from(n).unwrap_or(i64::MAX),
            Limit::Duration(_) => i64::MAX,
        };
        Control {
            measuring: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            remaining: AtomicI64::new(remaining),
        }
    }

    // Relaxed throughout: the flags only start and stop counting; the counts themselves
    // reach the main thread through the join.
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn measuring(&self) -> bool {
        self.measuring.load(Ordering::Relaxed)
    }

    /// Counts one measured transaction; false once the count is reached.
    fn count_one(&self) -> bool {
        self.remaining.fetch_sub(1, Ordering::Relaxed) > 0
    }
}

/// One transaction's tries: whether it counts, when it started, how often it was retried.
struct Attempt {
    measured: bool,
    started: Instant,
    retries: u32,
}

impl Attempt {
    fn start(control: &Control) -> Attempt {
        Attempt {
            measured: control.measuring(),
            started: Instant::now(),
            retries: 0,
        }
    }

    /// Whether to run the transaction again after `result` (a retryable failure, with
    /// retries left); counts the retry.
    fn again(
        &mut self,
        result: &Result<Outcome, Failure>,
        control: &Control,
        stats: &Mutex<Measurement>,
    ) -> bool {
        let Err(Failure::Retry(reason)) = result else {
            return false;
        };
        if self.retries >= MAX_RETRIES || control.stopped() {
            return false;
        }
        self.retries += 1;
        if self.measured {
            let mut stats = stats.lock();
            match reason {
                RetryReason::Deadlock => stats.deadlock_retries += 1,
                RetryReason::LockWaitTimeout => stats.timeout_retries += 1,
            }
        }
        true
    }

    /// Records the final `result`; false if the client must stop.
    fn settle(
        self,
        input: &Input,
        result: Result<Outcome, Failure>,
        control: &Control,
        stats: &Mutex<Measurement>,
    ) -> bool {
        let latency = self.started.elapsed();
        match &result {
            Err(Failure::Fatal(message)) => {
                stats
                    .lock()
                    .error(format!("{}: {message}", input.kind().name()));
                control.stop.store(true, Ordering::Relaxed);
                return false;
            }
            Err(Failure::Retry(reason)) if !control.stopped() => {
                stats.lock().error(format!(
                    "{}: gave up after {MAX_RETRIES} retries ({reason})",
                    input.kind().name()
                ));
                control.stop.store(true, Ordering::Relaxed);
                return false;
            }
            _ => {}
        }
        if self.measured && !control.stopped() {
            if control.count_one() {
                stats.lock().record(input, &result, latency);
            } else {
                control.stop.store(true, Ordering::Relaxed);
            }
        }
        true
    }
}

/// Waits out the warm-up and the measured part, showing a live line on stderr meanwhile;
/// returns the measured time.
fn supervise(
    control: &Control,
    options: &DriverOptions,
    tally: &Tally,
    on_measure: &dyn Fn(bool),
) -> Duration {
    let bar = progress_line();
    let warmup = options.warmup;
    let began = Instant::now();
    wait(control, Some(warmup), &mut || {
        bar.set_message(format!(
            "warm-up: {:.1} of {:.1} s",
            began.elapsed().as_secs_f64(),
            warmup.as_secs_f64()
        ));
    });
    on_measure(true);
    control.measuring.store(true, Ordering::Relaxed);
    let started = Instant::now();
    let limit = match options.limit {
        Limit::Duration(d) => Some(d),
        Limit::Count(_) => None,
    };
    wait(control, limit, &mut || {
        if bar.is_hidden() {
            return;
        }
        let (done, errors) = tally.so_far();
        let secs = started.elapsed().as_secs_f64();
        bar.set_message(format!(
            "measuring: {secs:.1}{} s, {done} transactions, {:.0} txn/s so far, {errors} error(s)",
            limit.map_or(String::new(), |d| format!(" of {:.1}", d.as_secs_f64())),
            done as f64 / secs.max(1e-3)
        ));
    });
    control.stop.store(true, Ordering::Relaxed);
    let elapsed = started.elapsed();
    bar.finish_and_clear();
    on_measure(false);
    elapsed
}

/// The live line of a running point on stderr. indicatif draws nothing when stderr is not a
/// terminal (a log file, a pipe, CI), so reports and logs stay free of it.
fn progress_line() -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
    bar.set_style(ProgressStyle::with_template("{msg}").expect("a fixed template parses"));
    bar
}

/// Sleeps until `control` stops or `limit` (if any) has passed, calling `tick` every quarter
/// of a second.
fn wait(control: &Control, limit: Option<Duration>, tick: &mut dyn FnMut()) {
    let start = Instant::now();
    let mut next_tick = start;
    while !control.stopped() {
        let now = Instant::now();
        if limit.is_some_and(|d| now >= start + d) {
            break;
        }
        if now >= next_tick {
            tick();
            next_tick = now + Duration::from_millis(250);
        }
        let left = limit.map_or(Duration::from_millis(1), |d| {
            (start + d).saturating_duration_since(now)
        });
        std::thread::sleep(left.min(Duration::from_millis(10)));
    }
}

/// Runs `options.clients` OS-thread clients made by `connect` (called on each client's
/// thread with its number). `on_measure(true)` runs as measuring starts, `(false)` as it
/// ends (for engine counters).
pub fn run_threads<F>(options: &DriverOptions, connect: F, on_measure: &dyn Fn(bool)) -> Measurement
where
    F: Fn(usize) -> Result<Box<dyn Client>, Failure> + Sync,
{
    let control = Control::new(options.limit);
    let tally = Tally::new(options.clients);
    let elapsed = std::thread::scope(|scope| {
        for client in 0..options.clients {
            let (control, connect) = (&control, &connect);
            let stats = tally.shard(client);
            std::thread::Builder::new()
                .name(format!("tpcc-{client}"))
                .stack_size(1 << 20)
                .spawn_scoped(scope, move || match connect(client) {
                    Ok(mut conn) => {
                        let mut inputs = InputGen::new(options.scale, options.seed, client);
                        while !control.stopped() {
                            let input = inputs.next_input();
                            let mut attempt = Attempt::start(control);
                            let result = loop {
                                let result = conn.run(&input);
                                if !attempt.again(&result, control, stats) {
                                    break result;
                                }
                            };
                            if !attempt.settle(&input, result, control, stats) {
                                break;
                            }
                        }
                    }
                    Err(e) => {
                        let message = format!("client {client} could not connect: {e}");
                        stats.lock().error(message);
                        control.stop.store(true, Ordering::Relaxed);
                    }
                })
                .expect("a client thread starts");
        }
        supervise(&control, options, &tally, on_measure)
    });
    tally.total(elapsed)
}

/// The error of a client that has no connection after `limit`.
fn no_connection(limit: Duration) -> Failure {
    Failure::Fatal(format!("no connection within {limit:?}"))
}

/// `connecting`'s connection, or an error once `limit` has passed without one.
async fn within<C>(
    limit: Duration,
    connecting: impl Future<Output = Result<C, Failure>>,
) -> Result<C, Failure> {
    tokio::time::timeout(limit, connecting)
        .await
        .unwrap_or_else(|_| Err(no_connection(limit)))
}

/// `connect`'s connection, made on a thread of its own, or an error once `limit` has passed
/// without one: a blocking client has no other way out of a connection that never completes.
/// The connecting thread is left behind then, and the run stops with the error.
pub fn blocking_within<C: Send + 'static>(
    limit: Duration,
    connect: impl FnOnce() -> Result<C, Failure> + Send + 'static,
) -> Result<C, Failure> {
    let (done, connected) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("tpcc-connect".into())
        .spawn(move || {
            // The receiver is gone only if it gave up waiting.
            let _ = done.send(connect());
        })
        .map_err(|e| Failure::Fatal(format!("a thread to connect on: {e}")))?;
    match connected.recv_timeout(limit) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(no_connection(limit)),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err(Failure::Fatal("the thread connecting panicked".into()))
        }
    }
}

/// Runs `options.clients` clients made by `connect` (with the client's number) as tokio
/// tasks on `workers` threads; each worker runs `on_start` as it starts.
pub fn run_tasks<C, F, Fut>(
    options: &DriverOptions,
    workers: usize,
    connect: F,
    on_measure: &dyn Fn(bool),
    on_start: Option<OnThreadStart>,
) -> Measurement
where
    C: AsyncClient,
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Result<C, Failure>> + Send + 'static,
{
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(workers.max(1)).enable_all();
    if let Some(on_start) = on_start {
        let next = std::sync::atomic::AtomicUsize::new(0);
        // Relaxed: only numbers the workers.
        builder.on_thread_start(move || on_start(next.fetch_add(1, Ordering::Relaxed)));
    }
    let runtime = builder.build().expect("a tokio runtime starts");
    let control = Arc::new(Control::new(options.limit));
    let tally = Arc::new(Tally::new(options.clients));
    let tasks: Vec<_> = (0..options.clients)
        .map(|client| {
            let (control, tally) = (Arc::clone(&control), Arc::clone(&tally));
            let options = *options;
            let connecting = connect(client);
            runtime.spawn(async move {
                let stats = tally.shard(client);
                match within(CONNECT_TIMEOUT, connecting).await {
                    Ok(mut conn) => {
                        let mut inputs = InputGen::new(options.scale, options.seed, client);
                        while !control.stopped() {
                            let input = inputs.next_input();
                            let mut attempt = Attempt::start(&control);
                            let result = loop {
                                let result = conn.run(&input).await;
                                if !attempt.again(&result, &control, stats) {
                                    break result;
                                }
                            };
                            if !attempt.settle(&input, result, &control, stats) {
                                break;
                            }
                            tokio::task::yield_now().await;
                        }
                        conn.close().await;
                    }
                    Err(e) => {
                        let message = format!("client {client} could not connect: {e}");
                        stats.lock().error(message);
                        control.stop.store(true, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    let elapsed = supervise(&control, options, &tally, on_measure);
    runtime.block_on(async {
        for task in tasks {
            task.await.expect("a client task does not panic");
        }
    });
    let tally = Arc::into_inner(tally).expect("every client task has ended");
    tally.total(elapsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Scale;

    #[test]
    fn a_connection_that_never_comes_is_an_error_not_a_hang() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let silent = std::future::pending::<Result<(), Failure>>();
        let result = runtime.block_on(within(Duration::from_millis(20), silent));
        assert!(
            matches!(&result, Err(Failure::Fatal(m)) if m == "no connection within 20ms"),
            "{result:?}"
        );
        let prompt = async { Ok::<_, Failure>(7) };
        let result = runtime.block_on(within(Duration::from_secs(60), prompt));
        assert!(matches!(result, Ok(7)));
    }

    #[test]
    fn ten_thousand_clients_share_sixty_four_shards_and_every_count_reaches_the_total() {
        let clients = 10_000;
        let tally = Tally::new(clients);
        assert_eq!(tally.shards.len(), Tally::SHARDS);
        assert_eq!(Tally::new(2).shards.len(), 2, "a few clients never share");

        let mut inputs = InputGen::new(Scale::standard(1), 7, 0);
        let mut kinds = [0u64; 5];
        for client in 0..clients {
            let input = inputs.next_input();
            kinds[input.kind().index()] += 1;
            let latency = Duration::from_micros(client as u64 + 1);
            let shard = tally.shard(client);
            shard
                .lock()
                .record(&input, &Ok(Outcome::Committed), latency);
            if client % 1000 == 0 {
                shard.lock().deadlock_retries += 1;
            }
        }
        let total = tally.total(Duration::from_secs(1));
        assert_eq!(total.completed(), clients as u64);
        assert_eq!(total.deadlock_retries, 10);
        for kind in Kind::ALL {
            let stats = &total.kinds[kind.index()];
            assert_eq!(stats.committed, kinds[kind.index()], "{}", kind.name());
            assert_eq!(stats.latency.len(), kinds[kind.index()], "{}", kind.name());
        }
        let all = total.max_ms();
        assert!(
            (9.99..=10.01).contains(&all),
            "the slowest (10 ms) was recorded, to three digits: {all}"
        );
        assert_eq!(total.elapsed, Duration::from_secs(1));
    }
}
