//! The synchronisation primitives of waterline's lock-free hand-offs (the read views' CSN
//! log, the purge horizon and the trx-sys latch, group commit's leader/follower hand-off),
//! in one place so that `RUSTFLAGS="--cfg loom"` swaps them for loom's model-checked
//! versions in every crate's `tests/loom.rs` at once.
//!
//! They have parking_lot's shape whichever is compiled: `lock()` returns the guard, a
//! condition variable waits on `&mut guard`, and no lock is ever poisoned (a panic while
//! one is held, such as a failing publish callback in group commit, must not make every
//! later user panic too).
//!
//! Without loom, [`Mutex`] and [`RwLock`] are parking_lot's own (the trx-sys latch is one).
//! A condition variable and its mutex ([`Condvar`], [`CondMutex`]) are the standard
//! library's futex-based ones: their `notify_all` wakes every waiter, the thundering herd
//! that group commit's broadcast baseline is measured with, where parking_lot's would
//! requeue the waiters on the mutex and wake one.
//!
//! [`held`] times how long latches are held, sampled, for the engine's statistics.
//!
//! The manual's chapter on how it is tested (the loom models): `docs/src/testing.md` in the repository (an mdBook:
//! `mdbook serve docs`).

pub mod held;
pub mod wait;

#[cfg(not(loom))]
use std::sync as imp;

#[cfg(loom)]
use loom::sync as imp;

#[cfg(not(loom))]
pub use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
#[cfg(not(loom))]
pub use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub use shaped::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub use shaped::{Condvar, Mutex as CondMutex, MutexGuard as CondMutexGuard};

/// The standard library's (or loom's) locks in parking_lot's shape.
mod shaped {
    use std::ops::{Deref, DerefMut};

    use super::imp;

    #[cfg(loom)]
    pub use imp::{RwLockReadGuard, RwLockWriteGuard};

    /// A mutex whose `lock()` returns the guard.
    #[derive(Debug, Default)]
    pub struct Mutex<T>(imp::Mutex<T>);

    /// Its guard; a [`Condvar`] takes it out and puts it back while it waits.
    #[derive(Debug)]
    pub struct MutexGuard<'a, T>(Option<imp::MutexGuard<'a, T>>);

    impl<T> Mutex<T> {
        /// A mutex around `value`.
        pub fn new(value: T) -> Self {
            Mutex(imp::Mutex::new(value))
        }

        /// Waits for the lock.
        pub fn lock(&self) -> MutexGuard<'_, T> {
            let held = self
                .0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            MutexGuard(Some(held))
        }

        /// The lock if it is free now; `None` without waiting if it is held.
        pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
            match self.0.try_lock() {
                Ok(held) => Some(MutexGuard(Some(held))),
                Err(std::sync::TryLockError::Poisoned(poisoned)) => {
                    Some(MutexGuard(Some(poisoned.into_inner())))
                }
                Err(std::sync::TryLockError::WouldBlock) => None,
            }
        }
    }

    impl<T> Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            self.0.as_deref().expect("a guard is held outside a wait")
        }
    }

    impl<T> DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            self.0
                .as_deref_mut()
                .expect("a guard is held outside a wait")
        }
    }

    /// A condition variable over [`Mutex`], with parking_lot's `wait(&mut guard)`.
    #[derive(Debug, Default)]
    pub struct Condvar(imp::Condvar);

    impl Condvar {
        /// Releases the guard's lock, waits for a notification, and takes the lock again.
        pub fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
            let held = guard.0.take().expect("a guard is held outside a wait");
            let woken = self
                .0
                .wait(held)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            guard.0 = Some(woken);
        }

        /// Wakes one waiter.
        pub fn notify_one(&self) {
            self.0.notify_one();
        }

        /// Wakes every waiter.
        pub fn notify_all(&self) {
            self.0.notify_all();
        }
    }

    /// A reader-writer lock with parking_lot's `read()` and `write()`.
    #[cfg(loom)]
    #[derive(Debug, Default)]
    pub struct RwLock<T>(imp::RwLock<T>);

    #[cfg(loom)]
    impl<T> RwLock<T> {
        /// A lock around `value`.
        pub fn new(value: T) -> Self {
            RwLock(imp::RwLock::new(value))
        }

        /// Waits to read.
        pub fn read(&self) -> RwLockReadGuard<'_, T> {
            self.0
                .read()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        }

        /// Waits to write.
        pub fn write(&self) -> RwLockWriteGuard<'_, T> {
            self.0
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        }
    }
}
