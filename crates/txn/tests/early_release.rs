//! Early lock release (`LockRelease::Early`, see `commit.rs`): a committing transaction's
//! row locks go once its record is in the log, its changes become visible only once durable.
//! The group commit here waits a second before each sync, so "in the log, not durable" lasts
//! long enough to look at. (The crash test with early release is in `crash.rs`; the scenario
//! `20_early_lock_release` shows the same steps as a script.)

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use waterline_txn::{
    Counter, Engine, EngineConfig, Isolation, Key, LockRelease, ReadOptions, StatsSnapshot, Table,
    Value,
};

const SYNC_DELAY: Duration = Duration::from_secs(1);

fn open(release: LockRelease, dir: &std::path::Path) -> (Arc<Engine>, Table) {
    let mut config = EngineConfig::default();
    config.commit.lock_release = release;
    config.commit.group.sync_delay = SYNC_DELAY;
    let (engine, _) = Engine::open_dir(dir, config).expect("the engine opens");
    let table = engine.create_table(common::account_schema()).unwrap();
    let mut trx = engine.begin();
    trx.insert(&table, vec![1.into(), 100.into()]).unwrap();
    trx.commit().unwrap();
    (Arc::new(engine), table)
}

fn balance(row: &[Value]) -> i64 {
    row[1].as_int().unwrap()
}

/// What a fresh READ COMMITTED transaction sees of account 1.
fn seen(engine: &Engine, table: &Table) -> i64 {
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    let row = trx.get(table, Key::one(1)).unwrap().unwrap();
    trx.commit().unwrap();
    balance(&row)
}

/// An engine of `release` where t1 sets account 1 to 90 and commits on another thread:
/// `t1` is that thread, `t1_done` set once its commit returned, `before` the counters
/// before it began.
struct Committing {
    _dir: tempfile::TempDir,
    engine: Arc<Engine>,
    table: Table,
    before: StatsSnapshot,
    t1: std::thread::JoinHandle<()>,
    t1_done: Arc<AtomicBool>,
}

impl Committing {
    fn start(release: LockRelease) -> Committing {
        let dir = common::temp_dir("early-release");
        let (engine, table) = open(release, dir.path());
        let before = engine.stats();
        let mut t1 = engine.begin_with(Isolation::ReadCommitted);
        assert!(
            t1.update(&table, Key::one(1), vec![1.into(), 90.into()])
                .unwrap()
        );
        let t1_done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&t1_done);
        let t1 = std::thread::spawn(move || {
            t1.commit().expect("t1 commits");
            flag.store(true, Ordering::SeqCst);
        });
        Committing {
            _dir: dir,
            engine,
            table,
            before,
            t1,
            t1_done,
        }
    }

    /// Waits until t1 released its locks early.
    fn until_released(self) -> Self {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.moved().get(Counter::EarlyLockReleases) == 0 {
            assert!(Instant::now() < deadline, "no lock was released early");
            std::thread::sleep(Duration::from_millis(1));
        }
        self
    }

    fn moved(&self) -> StatsSnapshot {
        self.engine.stats().since(&self.before)
    }

    fn t1_done(&self) -> bool {
        self.t1_done.load(Ordering::SeqCst)
    }

    /// A transaction that takes 5 from account 1 (and waits for its lock if it must).
    fn take_five(&self) -> waterline_txn::Transaction {
        let mut trx = self.engine.begin_with(Isolation::ReadCommitted);
        let five_less = |row: &[Value]| vec![row[0].clone(), (balance(row) - 5).into()];
        assert!(
            trx.update_with(&self.table, Key::one(1), five_less)
                .unwrap()
        );
        trx
    }
}

#[test]
fn a_waiter_gets_the_lock_before_the_holders_sync_and_no_reader_sees_the_holder_before_it() {
    let c = Committing::start(LockRelease::Early).until_released();
    // t2 takes the row at once and builds on t1's change, not yet durable.
    let mut t2 = c.take_five();
    let locked = t2
        .get_with(&c.table, Key::one(1), ReadOptions::FOR_UPDATE, balance)
        .unwrap();
    assert_eq!(locked, Some(85));
    // Nobody sees t1 before it is durable.
    assert_eq!(seen(&c.engine, &c.table), 100);
    assert!(
        !c.t1_done(),
        "the steps above took longer than the sync delay"
    );

    t2.commit().unwrap();
    // t2 is acknowledged only with t1 durable and visible before it.
    assert_eq!(seen(&c.engine, &c.table), 85);
    let moved = c.moved();
    c.t1.join().unwrap();
    assert_eq!(moved.get(Counter::EarlyLockReleases), 2);
    assert_eq!(moved.get(Counter::LockHoldAfterLogWriteMicros), 0);
    assert_eq!(moved.get(Counter::LockWaits), 0);
}

#[test]
fn a_locking_reader_that_writes_nothing_is_acknowledged_only_after_what_it_read_is_durable() {
    let c = Committing::start(LockRelease::Early).until_released();
    let mut t2 = c.engine.begin_with(Isolation::ReadCommitted);
    let read = t2
        .get_with(&c.table, Key::one(1), ReadOptions::FOR_SHARE, balance)
        .unwrap();
    assert_eq!(read, Some(90), "the locking read sees t1's change");
    assert!(!c.t1_done());
    // Its commit has nothing to log, but it read t1's undurable change: it goes through the
    // log behind t1 and returns only once t1 is visible.
    t2.commit().unwrap();
    assert_eq!(seen(&c.engine, &c.table), 90);
    c.t1.join().unwrap();
}

#[test]
fn after_sync_holds_the_lock_across_the_sync() {
    let c = Committing::start(LockRelease::AfterSync);
    // Let t1 reach its sync.
    std::thread::sleep(Duration::from_millis(100));
    let t2 = c.take_five();
    assert!(
        c.t1_done() || seen(&c.engine, &c.table) == 90,
        "t2 got the lock while t1 was not visible"
    );
    t2.commit().unwrap();
    let moved = c.moved();
    c.t1.join().unwrap();
    assert_eq!(moved.get(Counter::EarlyLockReleases), 0);
    assert_eq!(moved.get(Counter::LockWaits), 1);
    // t1's lock was held for (at least) the sync delay after its record was written.
    let held = Duration::from_micros(moved.get(Counter::LockHoldAfterLogWriteMicros));
    assert!(held >= SYNC_DELAY / 2, "held {held:?} after the log write");
}
