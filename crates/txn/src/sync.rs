//! The synchronisation primitives of the purge-horizon protocol (`horizon.rs`), in one place
//! so that `RUSTFLAGS="--cfg loom"` swaps them for loom's model-checked versions
//! (`tests/loom.rs`). Locks expose parking_lot's shape (`lock()` returns the guard).

#[cfg(not(loom))]
pub(crate) use parking_lot::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(loom)]
pub(crate) use loom::sync::MutexGuard;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom_mutex::Mutex;

#[cfg(loom)]
mod loom_mutex {
    /// loom's mutex with parking_lot's `lock()`.
    #[derive(Debug, Default)]
    pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Self {
            Mutex(loom::sync::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
            self.0.lock().expect("no panics while the lock is held")
        }
    }
}
