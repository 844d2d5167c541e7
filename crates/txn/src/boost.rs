//! Priority inheritance for row-lock holders ([`crate::EngineConfig::lock_holder_boost`]).
//!
//! With a thread per client (a MySQL-protocol connection, a benchmark's OS-thread client)
//! and more clients than CPUs, a transaction that holds a hot row waits for a CPU at every
//! step, behind threads that will only queue for that same row. When a transaction has to
//! wait for a lock, the threads of the transactions holding it are raised by `levels` nice
//! levels (the scheduler gives them a larger share and wakes them sooner) until their
//! transactions end, as a real-time kernel lends a mutex holder its waiter's priority.
//! MySQL's thread pool gets at the same effect by serving connections with an open
//! transaction first (`thread_pool_high_prio_mode = transactions`).
//!
//! Raising a priority (lowering the nice value) needs `CAP_SYS_NICE` on Linux; without it
//! the attempt fails and is counted ([`Counter::LockBoostsDenied`]), and nothing else
//! changes. Elsewhere than Linux it is never attempted (counted the same way).
//!
//! A thread is the one that took its transaction's first lock: a transaction that moves to
//! another thread between statements keeps boosting the first. Several transactions on one
//! thread share its boost: the thread's own nice value comes back when the last of them ends.

use std::collections::HashMap;

use parking_lot::Mutex;
use waterline_readview::TrxId;

use crate::stats::{Counter, Stats};

/// An OS thread id.
type Tid = i32;

/// The lock holders' threads, while boosting is on.
#[derive(Debug)]
pub(crate) struct Boost {
    levels: i32,
    state: Mutex<State>,
}

/// What a waiter did to a holder's thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    /// Nothing yet: nobody waited for the transaction.
    Untried,
    /// Boosted (or found boosted by another transaction on the same thread).
    Boosted,
    /// Not allowed to: tried once per transaction.
    Denied,
}

#[derive(Debug, Default)]
struct State {
    /// Each transaction holding locks: its thread, and what was done to it.
    holders: HashMap<TrxId, (Tid, Mark)>,
    /// Each boosted thread: its own nice value, and how many transactions boost it.
    boosted: HashMap<Tid, (i32, u32)>,
}

impl Boost {
    /// Boosting by `levels` nice levels; `None` for 0 (off).
    pub(crate) fn new(levels: u8) -> Option<Boost> {
        (levels > 0).then(|| Boost {
            levels: i32::from(levels),
            state: Mutex::new(State::default()),
        })
    }

    /// `trx` took a lock on the calling thread: the thread to boost if someone waits.
    pub(crate) fn holding(&self, trx: TrxId) {
        let Some(tid) = os::current() else {
            return;
        };
        self.state
            .lock()
            .holders
            .entry(trx)
            .or_insert((tid, Mark::Untried));
    }

    /// A transaction is about to wait for `blockers`: boosts each one's thread, tried once
    /// per transaction.
    pub(crate) fn waiting_for(&self, blockers: &[TrxId], stats: &Stats) {
        let mut state = self.state.lock();
        let State { holders, boosted } = &mut *state;
        for blocker in blockers {
            let Some((tid, mark)) = holders.get_mut(blocker) else {
                continue;
            };
            if *mark != Mark::Untried {
                continue;
            }
            if let Some((_, count)) = boosted.get_mut(tid) {
                *count += 1;
                *mark = Mark::Boosted;
                continue;
            }
            let raised = os::nice(*tid).and_then(|own| {
                os::set_nice(*tid, (own - self.levels).max(os::HIGHEST)).map(|()| own)
            });
            if let Some(own) = raised {
                boosted.insert(*tid, (own, 1));
                *mark = Mark::Boosted;
                stats.incr(Counter::LockBoosts);
            } else {
                *mark = Mark::Denied;
                stats.incr(Counter::LockBoostsDenied);
            }
        }
    }

    /// `trx` ended: its thread gets its own priority back unless another transaction still
    /// boosts it.
    pub(crate) fn ended(&self, trx: TrxId) {
        let mut state = self.state.lock();
        let Some((tid, Mark::Boosted)) = state.holders.remove(&trx) else {
            return;
        };
        if let Some((own, count)) = state.boosted.get_mut(&tid) {
            *count -= 1;
            if *count == 0 {
                let own = *own;
                state.boosted.remove(&tid);
                // The thread may be gone (a transaction moved off it); then there is
                // nothing to restore.
                let _ = os::set_nice(tid, own);
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod os {
    use rustix::process::{Pid, getpriority_process, setpriority_process};

    use super::Tid;

    /// The highest priority a nice value gives.
    pub(super) const HIGHEST: i32 = -20;

    /// The calling thread's id (asked of the kernel once per thread).
    pub(super) fn current() -> Option<Tid> {
        thread_local! {
            static TID: Tid = rustix::thread::gettid().as_raw_nonzero().get();
        }
        Some(TID.with(|tid| *tid))
    }

    /// Thread `tid`'s nice value. (On Linux, a thread id names that thread alone to
    /// `getpriority` and `setpriority`, not its process.)
    pub(super) fn nice(tid: Tid) -> Option<i32> {
        getpriority_process(Some(Pid::from_raw(tid)?)).ok()
    }

    /// Sets thread `tid`'s nice value.
    pub(super) fn set_nice(tid: Tid, nice: i32) -> Option<()> {
        setpriority_process(Some(Pid::from_raw(tid)?), nice).ok()
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    use super::Tid;

    pub(super) const HIGHEST: i32 = -20;

    pub(super) fn current() -> Option<Tid> {
        Some(0)
    }

    pub(super) fn nice(_: Tid) -> Option<i32> {
        None
    }

    pub(super) fn set_nice(_: Tid, _: i32) -> Option<()> {
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::sync::Arc;
    use std::sync::mpsc;

    use super::*;

    /// A thread that registers as `trx`'s holder, reports its id, and waits to be let go.
    fn holder(
        boost: &Arc<Boost>,
        trx: TrxId,
    ) -> (Tid, mpsc::Sender<()>, std::thread::JoinHandle<()>) {
        let (tid_tx, tid_rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let boost = Arc::clone(boost);
        let handle = std::thread::spawn(move || {
            boost.holding(trx);
            tid_tx.send(os::current().unwrap()).unwrap();
            let _ = go_rx.recv();
        });
        (tid_rx.recv().unwrap(), go_tx, handle)
    }

    #[test]
    fn a_waited_for_holder_is_boosted_until_its_last_transaction_ends() {
        let boost = Arc::new(Boost::new(5).unwrap());
        let stats = Stats::default();
        let (tid, go, handle) = holder(&boost, TrxId(1));
        // A second transaction on the same thread.
        boost
            .state
            .lock()
            .holders
            .insert(TrxId(2), (tid, Mark::Untried));
        let own = os::nice(tid).unwrap();

        boost.waiting_for(&[TrxId(1)], &stats);
        if stats.snapshot().get(Counter::LockBoostsDenied) == 1 {
            // No CAP_SYS_NICE here: nothing changed, nothing to undo.
            assert_eq!(os::nice(tid), Some(own));
            // Tried once per transaction.
            boost.waiting_for(&[TrxId(1)], &stats);
            assert_eq!(stats.snapshot().get(Counter::LockBoostsDenied), 1);
            boost.ended(TrxId(1));
            boost.ended(TrxId(2));
            assert_eq!(os::nice(tid), Some(own));
        } else {
            assert_eq!(stats.snapshot().get(Counter::LockBoosts), 1);
            assert_eq!(os::nice(tid), Some((own - 5).max(os::HIGHEST)));
            // Once per transaction: a second waiter changes nothing.
            boost.waiting_for(&[TrxId(1)], &stats);
            assert_eq!(stats.snapshot().get(Counter::LockBoosts), 1);
            // The other transaction on that thread boosts it too: it stays up until both end.
            boost.waiting_for(&[TrxId(2)], &stats);
            assert_eq!(
                stats.snapshot().get(Counter::LockBoosts),
                1,
                "the thread was up already"
            );
            boost.ended(TrxId(1));
            assert_eq!(os::nice(tid), Some((own - 5).max(os::HIGHEST)));
            boost.ended(TrxId(2));
            assert_eq!(os::nice(tid), Some(own), "its own priority back");
        }
        let state = boost.state.lock();
        assert!(state.boosted.is_empty() && state.holders.is_empty());
        drop(state);
        go.send(()).unwrap();
        handle.join().unwrap();
    }

    #[test]
    fn a_holder_nobody_waits_for_keeps_its_priority() {
        let boost = Arc::new(Boost::new(5).unwrap());
        let stats = Stats::default();
        let (tid, go, handle) = holder(&boost, TrxId(7));
        let own = os::nice(tid).unwrap();
        boost.waiting_for(&[TrxId(8)], &stats);
        assert_eq!(os::nice(tid), Some(own));
        boost.ended(TrxId(7));
        assert!(boost.state.lock().holders.is_empty());
        assert_eq!(stats.snapshot().get(Counter::LockBoosts), 0);
        go.send(()).unwrap();
        handle.join().unwrap();
    }

    #[test]
    fn zero_levels_is_off() {
        assert!(Boost::new(0).is_none());
    }
}
