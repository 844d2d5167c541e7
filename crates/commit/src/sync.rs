//! The locks and condition variables of the leader/follower hand-off (`group.rs`), in one
//! place so that `RUSTFLAGS="--cfg loom"` swaps them for loom's model-checked versions
//! (`tests/loom.rs`). Both shapes ignore poisoning: a panicking publish callback must not
//! leave every later commit panicking on a poisoned lock.

#[cfg(not(loom))]
use std::sync as imp;

#[cfg(loom)]
use loom::sync as imp;

pub(crate) use imp::MutexGuard;

/// A mutex whose `lock()` returns the guard.
#[derive(Debug, Default)]
pub(crate) struct Mutex<T>(imp::Mutex<T>);

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Mutex(imp::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A condition variable over [`Mutex`].
#[derive(Debug, Default)]
pub(crate) struct Condvar(imp::Condvar);

impl Condvar {
    pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.0
            .wait(guard)
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn notify_one(&self) {
        self.0.notify_one();
    }

    pub(crate) fn notify_all(&self) {
        self.0.notify_all();
    }
}
