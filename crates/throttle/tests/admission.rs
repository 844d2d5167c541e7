//! Admission against 10,000 concurrent tasks: the limit holds (checked by a counter of our
//! own), waiters enter in arrival order, everyone finishes, and permits come back after
//! panics and cancellations. Then the thread pool, run-time limit changes, and the adaptive
//! limit finding a known knee (in tokio's virtual time, so the test is exact and fast).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Semaphore;
use waterline_throttle::{AdaptiveConfig, Admission, Policy};

/// Counts who is inside, independently of `Admission`, and remembers the most ever seen.
#[derive(Default)]
struct Occupancy {
    now: AtomicUsize,
    most: AtomicUsize,
}

impl Occupancy {
    fn enter(&self) {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
    }

    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }

    fn most(&self) -> usize {
        self.most.load(Ordering::SeqCst)
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

#[test]
fn ten_thousand_tasks_never_exceed_the_limit_and_all_finish() {
    let admission = Admission::new(Policy::Limit(64)).unwrap();
    let occupancy = Arc::new(Occupancy::default());
    let finished = Arc::new(AtomicUsize::new(0));
    runtime().block_on(async {
        let tasks: Vec<_> = (0..10_000)
            .map(|_| {
                let (admission, occupancy, finished) = (
                    admission.clone(),
                    Arc::clone(&occupancy),
                    Arc::clone(&finished),
                );
                tokio::spawn(async move {
                    let _permit = admission.enter().await;
                    occupancy.enter();
                    for _ in 0..3 {
                        tokio::task::yield_now().await; // statements, client round trips
                    }
                    occupancy.leave();
                    finished.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    assert_eq!(finished.load(Ordering::SeqCst), 10_000);
    assert!(
        occupancy.most() <= 64,
        "{} inside at once",
        occupancy.most()
    );
    assert_eq!(
        occupancy.most(),
        64,
        "the limit is reached, not only respected"
    );
    let metrics = admission.metrics();
    assert_eq!(
        (metrics.inside, metrics.waiting, metrics.admitted),
        (0, 0, 10_000)
    );
    assert!(
        metrics.wait_max_us >= metrics.wait_p99_us && metrics.wait_p99_us >= metrics.wait_p50_us
    );
}

#[test]
fn waiters_are_admitted_in_arrival_order() {
    // One thread: a task's arrival (its ticket) and its place in the queue happen in the
    // same poll, so arrival order is well defined.
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let admission = Admission::new(Policy::Limit(8)).unwrap();
    let arrivals = Arc::new(AtomicUsize::new(0));
    let admitted = Arc::new(Mutex::new(Vec::new()));
    rt.block_on(async {
        let tasks: Vec<_> = (0..10_000)
            .map(|_| {
                let (admission, arrivals, admitted) = (
                    admission.clone(),
                    Arc::clone(&arrivals),
                    Arc::clone(&admitted),
                );
                tokio::spawn(async move {
                    let ticket = arrivals.fetch_add(1, Ordering::SeqCst);
                    let _permit = admission.enter().await;
                    admitted.lock().push(ticket);
                    // Hold it for a varying number of polls, so releases come out of order.
                    for _ in 0..ticket % 5 {
                        tokio::task::yield_now().await;
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    let admitted = admitted.lock();
    assert_eq!(admitted.len(), 10_000);
    assert!(admitted.windows(2).all(|w| w[0] < w[1]), "not FIFO");
}

#[test]
fn permits_come_back_after_panics_and_cancellations() {
    let admission = Admission::new(Policy::Limit(16)).unwrap();
    let rt = runtime();
    rt.block_on(async {
        // 100 holders panic while inside (more than the limit, so panicked permits must
        // have come back for the later ones to enter).
        let panics: Vec<_> = (0..100)
            .map(|i| {
                let admission = admission.clone();
                tokio::spawn(async move {
                    let _permit = admission.enter().await;
                    tokio::task::yield_now().await;
                    assert!(i < 0, "a transaction fails with its permit held");
                })
            })
            .collect();
        for task in panics {
            assert!(task.await.unwrap_err().is_panic());
        }
        // 16 holders block the rest; 1,000 waiters are cancelled (half by abort, half by
        // a timeout dropping the wait).
        let holders: Vec<_> = futures_enter(&admission, 16).await;
        let waiters: Vec<_> = (0..1_000)
            .map(|i| {
                let admission = admission.clone();
                tokio::spawn(async move {
                    if i % 2 == 0 {
                        let _ =
                            tokio::time::timeout(Duration::from_millis(5), admission.enter()).await;
                    } else {
                        let _permit = admission.enter().await;
                        unreachable!("aborted while waiting");
                    }
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(20)).await;
        for (i, waiter) in waiters.into_iter().enumerate() {
            if i % 2 == 1 {
                waiter.abort();
                assert!(waiter.await.unwrap_err().is_cancelled());
            } else {
                waiter.await.unwrap();
            }
        }
        assert_eq!(admission.metrics().waiting, 0);
        drop(holders);
        // Every permit is back: all 16 can be taken at once.
        let again = tokio::time::timeout(Duration::from_secs(10), futures_enter(&admission, 16))
            .await
            .expect("16 permits are free");
        assert_eq!(admission.metrics().inside, 16);
        drop(again);
    });
    assert_eq!(admission.metrics().inside, 0);
}

/// Takes `n` permits, one after another.
async fn futures_enter(admission: &Admission, n: usize) -> Vec<waterline_throttle::Permit> {
    let mut permits = Vec::new();
    for _ in 0..n {
        permits.push(admission.enter().await);
    }
    permits
}

#[test]
fn the_limit_changes_at_run_time() {
    let admission = Admission::new(Policy::Limit(32)).unwrap();
    runtime().block_on(async {
        let first = futures_enter(&admission, 32).await;
        // Lower to 4 while 32 are inside: nobody new gets in until 28 have left.
        admission.set_limit(4).unwrap();
        let occupancy = Arc::new(Occupancy::default());
        let late: Vec<_> = (0..200)
            .map(|_| {
                let (admission, occupancy) = (admission.clone(), Arc::clone(&occupancy));
                tokio::spawn(async move {
                    let _permit = admission.enter().await;
                    occupancy.enter();
                    tokio::task::yield_now().await;
                    occupancy.leave();
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(occupancy.most(), 0, "no one enters above the new limit");
        drop(first);
        for task in late {
            task.await.unwrap();
        }
        assert!(occupancy.most() <= 4, "{}", occupancy.most());
        assert_eq!(admission.metrics().limit, Some(4));
        // Raise it again: 10 can be inside at once.
        admission.set_limit(10).unwrap();
        let ten = tokio::time::timeout(Duration::from_secs(10), futures_enter(&admission, 10))
            .await
            .expect("the raised limit admits 10");
        drop(ten);
    });
    assert!(
        Admission::new(Policy::Unlimited)
            .unwrap()
            .set_limit(3)
            .is_err()
    );
    assert!(admission.set_limit(0).is_err());
    assert!(Admission::new(Policy::Limit(0)).is_err());
}

#[test]
fn the_thread_pool_runs_at_most_n_transactions_and_survives_a_panic() {
    let admission = Admission::new(Policy::ThreadPool(3)).unwrap();
    let occupancy = Arc::new(Occupancy::default());
    let sum: usize = runtime().block_on(async {
        let tasks: Vec<_> = (0..10_000usize)
            .map(|i| {
                let (admission, occupancy) = (admission.clone(), Arc::clone(&occupancy));
                tokio::spawn(async move {
                    admission
                        .run(move || {
                            occupancy.enter();
                            std::hint::black_box((0..100).sum::<usize>());
                            occupancy.leave();
                            i
                        })
                        .await
                })
            })
            .collect();
        let mut sum = 0;
        for task in tasks {
            sum += task.await.unwrap();
        }
        sum
    });
    assert_eq!(sum, (0..10_000).sum::<usize>());
    assert!(occupancy.most() <= 3, "{}", occupancy.most());
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        admission.run_blocking(|| -> usize { panic!("a transaction bug") })
    }));
    assert!(panicked.is_err(), "the panic reaches the caller");
    assert_eq!(admission.run_blocking(|| 7), 7, "the pool lives on");
    let metrics = admission.metrics();
    assert_eq!(
        (metrics.inside, metrics.waiting, metrics.limit),
        (0, 0, Some(3))
    );
    assert_eq!(metrics.admitted, 10_002);
}

#[test]
fn a_long_wait_is_measured_as_long() {
    let admission = Admission::new(Policy::Limit(1)).unwrap();
    let held = admission.enter_blocking();
    std::thread::scope(|s| {
        let waiter = s.spawn(|| drop(admission.enter_blocking()));
        std::thread::sleep(Duration::from_millis(30));
        drop(held);
        waiter.join().unwrap();
    });
    let metrics = admission.metrics();
    assert!(metrics.wait_max_us >= 25_000, "{metrics:?}");
    assert_eq!(metrics.admitted, 2);
}

#[test]
fn blocking_enter_serves_os_threads() {
    let admission = Admission::new(Policy::Limit(2)).unwrap();
    let occupancy = Occupancy::default();
    std::thread::scope(|s| {
        for _ in 0..16 {
            s.spawn(|| {
                for _ in 0..200 {
                    let _permit = admission.enter_blocking();
                    occupancy.enter();
                    std::thread::yield_now();
                    occupancy.leave();
                }
            });
        }
    });
    assert!(occupancy.most() <= 2);
    assert_eq!(admission.metrics().admitted, 3_200);
}

/// A thread that serves a connection inside a runtime's `block_on` (as `waterline serve`'s
/// connection threads do) and begins transaction after transaction: a blocking enter must
/// not wait on anything only a return to the runtime would do. On tokio's semaphore it
/// hung at the 129th: out of cooperative budget, the semaphore deferred its own wake-up to
/// a runtime that never ran again.
#[test]
fn blocking_enter_inside_a_runtime_keeps_going() {
    for policy in [Policy::Limit(1), Policy::ThreadPool(1)] {
        let admission = Admission::new(policy).unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        let worker = admission.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            rt.block_on(async {
                for _ in 0..1_000 {
                    match &policy {
                        Policy::ThreadPool(_) => worker.run_blocking(|| ()),
                        _ => drop(worker.enter_blocking()),
                    }
                }
            });
            let _ = done.send(());
        });
        assert!(
            finished.recv_timeout(Duration::from_secs(20)).is_ok(),
            "{policy:?}: stuck after {} admissions",
            admission.metrics().admitted
        );
        assert_eq!(admission.metrics().admitted, 1_000);
    }
}

/// A resource that serves `CORES` at a time; a transaction's service takes 1 ms plus 2% for
/// every transaction inside the engine (like copying a longer active list). Its knee (the
/// peak of throughput / response time) is at `CORES` inside.
const CORES: usize = 16;

#[test]
fn the_adaptive_limit_finds_a_known_knee() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true) // virtual time: sleeps take no real time
        .build()
        .unwrap();
    for initial in [1, 1_000] {
        let config = AdaptiveConfig {
            initial,
            ..AdaptiveConfig::default()
        };
        let clock = || tokio::time::Instant::now().into_std();
        let admission = Admission::with_clock(Policy::Adaptive(config), clock).unwrap();
        let cores = Arc::new(Semaphore::new(CORES));
        let limits = rt.block_on(async {
            let clients: Vec<_> = (0..2_000)
                .map(|_| {
                    let (admission, cores) = (admission.clone(), Arc::clone(&cores));
                    tokio::spawn(async move {
                        loop {
                            let _permit = admission.enter().await;
                            let inside = admission.inside() as u32;
                            let _core = cores.acquire().await.unwrap();
                            let service = Duration::from_micros(1_000 + 20 * u64::from(inside));
                            tokio::time::sleep(service).await;
                        }
                    })
                })
                .collect();
            let mut limits = Vec::new();
            for _ in 0..60 {
                tokio::time::sleep(Duration::from_millis(500)).await;
                limits.push(admission.metrics().limit.unwrap());
            }
            clients.iter().for_each(|c| c.abort());
            limits
        });
        // The last 10 seconds of 30.
        let tail = &limits[40..];
        let (lo, hi) = (*tail.iter().min().unwrap(), *tail.iter().max().unwrap());
        assert!(
            lo * 2 >= CORES && hi <= CORES * 2,
            "from {initial}: the limit moved in {lo}..={hi}, the knee is {CORES}: {limits:?}"
        );
    }
}
