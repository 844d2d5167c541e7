//! Unit tests of the lock table: deadlock cycles (through a queued waiter, with their
//! path), and how a release wakes spinning and sleeping waiters.

use super::*;

fn row(n: i64) -> LockKey {
    (TableId(0), LockTarget::Row(Key::one(n)))
}

fn held(n: i64) -> Held {
    let key = row(n);
    (lock_hash(key.0, &key.1, hash_of(&Key::one(n))), key)
}

fn take(locks: &LockManager, trx: u64, n: i64) -> Result<bool, TxnError> {
    let (hash, key) = held(n);
    locks.acquire(Request {
        trx: TrxId(trx),
        hash,
        key,
        mode: LockMode::Exclusive,
        timeout: Duration::from_secs(30),
        interrupt: None,
        nowait: false,
        table_name: "t",
    })
}

/// Two waiters queue on B; the first is granted it and then asks for A, which the
/// second holds. The second was never woken to record that it now waits for the first,
/// so the grant must have recorded it: the cycle is a deadlock at once, not a 30 s
/// lock-wait timeout.
#[test]
fn a_cycle_through_a_queued_waiter_is_a_deadlock() {
    let stats = Arc::new(Stats::default());
    let locks = LockManager::new(4, Arc::clone(&stats), Duration::ZERO, 0);
    let (a, b) = (1, 2);
    assert!(take(&locks, 1, a).unwrap());
    assert!(take(&locks, 2, b).unwrap());
    let waits_now = |n| {
        while stats.snapshot().get(Counter::LockWaits) < n {
            std::thread::yield_now();
        }
    };
    std::thread::scope(|s| {
        let first = s.spawn(|| {
            take(&locks, 3, b).unwrap();
            take(&locks, 3, a)
        });
        waits_now(1);
        let second = s.spawn(|| take(&locks, 1, b));
        waits_now(2);
        locks.release_all(TrxId(2), &[held(b)]);
        let error = first.join().unwrap().unwrap_err();
        assert!(matches!(error, TxnError::Deadlock { .. }), "{error}");
        locks.release_all(TrxId(3), &[held(b)]);
        assert!(second.join().unwrap().unwrap());
    });
    assert_eq!(stats.snapshot().get(Counter::LockWaitTimeouts), 0);
}

/// Holds lock 1 for trx 1 while trx 2 waits for it, releases it after `hold`, and
/// returns how many of the (one) waits ended while spinning.
fn wait_with_spin(spin: Duration, hold: Duration) -> u64 {
    let stats = Arc::new(Stats::default());
    let mut locks = LockManager::new(4, Arc::clone(&stats), spin, 0);
    // Spin whatever this machine's CPU count: the test is about the hand-off.
    locks.spin_below = 2;
    assert!(take(&locks, 1, 1).unwrap());
    std::thread::scope(|s| {
        let waiter = s.spawn(|| take(&locks, 2, 1));
        while stats.snapshot().get(Counter::LockWaits) < 1 {
            std::thread::yield_now();
        }
        std::thread::sleep(hold);
        locks.release_all(TrxId(1), &[held(1)]);
        assert!(waiter.join().unwrap().unwrap(), "the waiter gets the lock");
    });
    assert_eq!(locks.waiting.load(Ordering::Relaxed), 0);
    stats.snapshot().get(Counter::LockSpinGrants)
}

/// A waiter spinning when the lock is released takes it without sleeping; one whose spin
/// ran out sleeps and is still woken; with no spin, every waiter sleeps.
#[test]
fn a_spinning_waiter_takes_a_released_lock_and_a_sleeping_one_is_woken() {
    assert_eq!(wait_with_spin(Duration::from_secs(30), Duration::ZERO), 1);
    assert_eq!(
        wait_with_spin(Duration::from_nanos(1), Duration::from_millis(50)),
        0
    );
    assert_eq!(wait_with_spin(Duration::ZERO, Duration::ZERO), 0);
}

/// A release wakes the waiters that can go, and only those.
#[test]
fn a_release_wakes_the_grantable_waiters() {
    let mut lock = Lock::default();
    lock.holders.push((TrxId(9), LockMode::Shared));
    for (trx, mode) in [
        (1, LockMode::Exclusive),
        (2, LockMode::Shared),
        (3, LockMode::Shared),
        (9, LockMode::Exclusive),
    ] {
        lock.waiters
            .push_back((TrxId(trx), Want::Lock(mode), Arc::new(Waiter::default())));
    }
    let woken = |lock: &Lock| -> Vec<u64> {
        lock.grantable(false)
            .into_iter()
            .map(|i| lock.waiters[i].0.0)
            .collect()
    };
    // 9 holds S: the readers may join it; the writer and 9's upgrade must wait.
    assert_eq!(woken(&lock), [2, 3]);
    lock.waiters.retain(|(t, _, _)| t.0 == 1 || t.0 == 9);
    // Only 9 holds it: its upgrade goes, ahead of writer 1, which it blocks.
    assert_eq!(woken(&lock), [9]);
    lock.holders.clear();
    assert_eq!(woken(&lock), [1]);
}

#[test]
fn a_cycle_is_found_with_its_path() {
    let graph: HashMap<TrxId, Vec<TrxId>> = [
        (TrxId(1), vec![TrxId(2)]),
        (TrxId(2), vec![TrxId(4), TrxId(3)]),
        (TrxId(3), vec![TrxId(1)]),
    ]
    .into();
    assert_eq!(
        find_cycle(&graph, TrxId(1)),
        Some(vec![TrxId(1), TrxId(2), TrxId(3)])
    );
    assert_eq!(find_cycle(&graph, TrxId(4)), None);
}
