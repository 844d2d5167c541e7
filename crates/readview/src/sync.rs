//! The synchronisation primitives of the lock-free parts, in one place so that
//! `RUSTFLAGS="--cfg loom"` swaps them for loom's model-checked versions (`tests/loom.rs`).
//!
//! Locks expose parking_lot's shape (`lock()` returns the guard); under loom a thin wrapper
//! gives loom's locks the same shape.

#[cfg(not(loom))]
pub(crate) use parking_lot::{Mutex, RwLock};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom_locks::{Mutex, RwLock};

#[cfg(loom)]
mod loom_locks {
    /// loom's mutex with parking_lot's `lock()`.
    #[derive(Debug)]
    pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Self {
            Mutex(loom::sync::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
            self.0.lock().expect("no panics while the lock is held")
        }
    }

    /// loom's reader-writer lock with parking_lot's `read()` and `write()`.
    #[derive(Debug)]
    pub(crate) struct RwLock<T>(loom::sync::RwLock<T>);

    impl<T> RwLock<T> {
        pub(crate) fn new(value: T) -> Self {
            RwLock(loom::sync::RwLock::new(value))
        }

        pub(crate) fn read(&self) -> loom::sync::RwLockReadGuard<'_, T> {
            self.0.read().expect("no panics while the lock is held")
        }

        pub(crate) fn write(&self) -> loom::sync::RwLockWriteGuard<'_, T> {
            self.0.write().expect("no panics while the lock is held")
        }
    }
}
