//! Admission benchmarks (book 8.3): the same contended workload at 1 to 10,000 clients under
//! each admission policy, so the ratio to `unlimited` is the result.
//!
//! * `admission/{unlimited,limit-512,pool-2,adaptive}/CLIENTS`: CLIENTS tokio tasks
//!   (on a runtime with one worker thread per core) run transactions against a model of
//!   trx-sys: `begin` appends the transaction's id to one mutex-protected active list, each
//!   of 3 statements copies the whole list under the mutex (a READ COMMITTED view of the
//!   baseline kind), and `commit` removes the id. Before each statement and before the
//!   commit the client waits 1 ms: its round trip (tokio's timer granularity; a client on
//!   another host). So every transaction inside, even one waiting for its client, makes
//!   every statement dearer, as in the book.
//!   - `unlimited`, `limit-512` (the book's setting) and `adaptive` (from its default start,
//!     16) hold a permit from begin to commit. A limit far below the knee costs what it
//!     must: a limit of 8 runs 8 transactions per round-trip time, about 950 a second here
//!     at every client count, which is why it is not in the sweep.
//!   - `pool-2` is a thread pool with one thread a core that runs each request (begin, a
//!     statement, commit) as it comes, as Percona's pool does: it limits the threads
//!     working, not the transactions inside.
//!
//!   One criterion iteration is a round of at least 256 transactions (at least 2 a client);
//!   the element time is wall time per transaction (10^9 / it = transactions per second).
//!
//! After measuring, each configuration runs 2 rounds more and records the p50 and p99 time
//! per transaction (from asking to enter until commit, in microseconds), the p99 wait for
//! admission, and the limit at the end in `target/criterion/admission/waterline-counters.json`.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{CounterFile, save};
use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use parking_lot::Mutex;
use waterline::throttle::{AdaptiveConfig, Admission, Policy};

const CLIENTS: [usize; 5] = [1, 16, 128, 1024, 10_000];
const STATEMENTS: usize = 3;
const TRANSACTIONS_PER_ROUND: usize = 256;
const COUNTED_ROUNDS: u64 = 2;
/// A client's round trip between two requests.
const ROUND_TRIP: Duration = Duration::from_millis(1);

/// The contended part of a transaction system: one latch over the active list.
#[derive(Default)]
struct TrxSysModel {
    active: Mutex<Vec<u64>>,
    next: AtomicU64,
}

impl TrxSysModel {
    fn begin(&self) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.active.lock().push(id);
        id
    }

    fn statement(&self) {
        let view = self.active.lock().clone();
        std::hint::black_box(view);
    }

    fn commit(&self, id: u64) {
        let mut active = self.active.lock();
        if let Some(at) = active.iter().position(|&a| a == id) {
            active.swap_remove(at);
        }
    }

    /// A transaction whose permit (if any) the caller holds throughout.
    async fn transaction(&self) {
        let id = self.begin();
        for _ in 0..STATEMENTS {
            tokio::time::sleep(ROUND_TRIP).await;
            self.statement();
        }
        tokio::time::sleep(ROUND_TRIP).await;
        self.commit(id);
    }

    /// The same transaction with every request run by the pool.
    async fn transaction_in_requests(self: &Arc<Self>, pool: &Admission) {
        let sys = Arc::clone(self);
        let id = pool.run(move || sys.begin()).await;
        for _ in 0..STATEMENTS {
            tokio::time::sleep(ROUND_TRIP).await;
            let sys = Arc::clone(self);
            pool.run(move || sys.statement()).await;
        }
        tokio::time::sleep(ROUND_TRIP).await;
        let sys = Arc::clone(self);
        pool.run(move || sys.commit(id)).await;
    }
}

fn per_client(clients: usize) -> u64 {
    (TRANSACTIONS_PER_ROUND / clients).max(2) as u64
}

/// Runs `rounds` rounds on `clients` tasks; returns the wall time from the start signal
/// and every transaction's time (asking to enter to commit), in microseconds.
fn run(
    rt: &tokio::runtime::Runtime,
    admission: &Admission,
    sys: &Arc<TrxSysModel>,
    clients: usize,
    rounds: u64,
) -> (Duration, Vec<u64>) {
    let each = per_client(clients) * rounds;
    rt.block_on(async {
        let start = Arc::new(tokio::sync::Barrier::new(clients + 1));
        let tasks: Vec<_> = (0..clients)
            .map(|_| {
                let (admission, sys, start) =
                    (admission.clone(), Arc::clone(sys), Arc::clone(&start));
                tokio::spawn(async move {
                    start.wait().await;
                    let mut times = Vec::with_capacity(each as usize);
                    for _ in 0..each {
                        let asked = Instant::now();
                        if let Policy::ThreadPool(_) = admission.policy() {
                            sys.transaction_in_requests(&admission).await;
                        } else {
                            let _permit = admission.enter().await;
                            sys.transaction().await;
                        }
                        times.push(asked.elapsed().as_micros() as u64);
                    }
                    times
                })
            })
            .collect();
        start.wait().await;
        let began = Instant::now();
        let mut times = Vec::new();
        for task in tasks {
            times.extend(task.await.expect("a client task"));
        }
        (began.elapsed(), times)
    })
}

fn quantile(sorted: &[u64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q) as usize] as f64
}

fn admission(c: &mut Criterion) {
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .enable_time()
        .build()
        .expect("a runtime");
    let policies = [
        Policy::Unlimited,
        Policy::Limit(512),
        Policy::ThreadPool(cores),
        Policy::Adaptive(AdaptiveConfig::default()),
    ];
    let mut group = c.benchmark_group("admission");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    // Long enough for the adaptive limit to find its way from its start.
    group.warm_up_time(Duration::from_secs(2));
    group.measurement_time(Duration::from_secs(2));
    let mut file = CounterFile::new();
    for clients in CLIENTS {
        group.throughput(Throughput::Elements(per_client(clients) * clients as u64));
        for policy in policies {
            let admission = Admission::new(policy).expect("a valid policy");
            let sys = Arc::new(TrxSysModel::default());
            group.bench_function(BenchmarkId::new(policy.name(), clients), |b| {
                b.iter_custom(|iters| run(&rt, &admission, &sys, clients, iters).0);
            });
            let (_, mut times) = run(&rt, &admission, &sys, clients, COUNTED_ROUNDS);
            times.sort_unstable();
            let metrics = admission.metrics();
            file.entry(policy.name()).or_default().insert(
                clients.to_string(),
                BTreeMap::from([
                    ("p50_us", quantile(&times, 0.5)),
                    ("p99_us", quantile(&times, 0.99)),
                    ("admission_wait_p99_us", metrics.wait_p99_us as f64),
                    ("limit_at_end", metrics.limit.map_or(-1.0, |l| l as f64)),
                ]),
            );
        }
    }
    group.finish();
    save("admission", &file);
}

criterion_group!(benches, admission);
criterion_main!(benches);
