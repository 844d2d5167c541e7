//! Telling a thread pool that a thread is about to wait: MySQL's `thd_wait_begin` and
//! `thd_wait_end`.
//!
//! A statement-level thread pool (`waterline serve --thread-handling pool-of-threads`)
//! keeps about one statement running per group of connections. A statement that waits for
//! a row lock, for its group commit's leader or for an admission permit is not running:
//! if the pool went on counting it, a statement queued behind it (perhaps the very COMMIT
//! that would release the lock) would wait for the pool's stall timer. So the places where
//! the engine waits say so, with [`begin`], and the pool's worker threads listen with
//! [`observe`]; on any other thread nobody listens and a wait costs one thread-local read.
//!
//! Waits nest (a lock wait inside an admitted transaction): only the outermost is told, so
//! an observer sees `begin` and `end` in pairs.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

/// What a thread waits for (MySQL's `thd_wait_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A row lock another transaction holds (`THD_WAIT_ROW_LOCK`).
    RowLock,
    /// The group commit's leader, to write and sync its group (`THD_WAIT_GROUP_COMMIT`).
    GroupCommit,
    /// The log's fdatasync (`THD_WAIT_DISKIO`).
    Sync,
    /// An admission permit.
    Admission,
}

/// Hears a thread's waits begin and end (a thread pool's worker).
pub trait Observer: Send + Sync {
    /// The thread is about to wait.
    fn begin(&self, kind: Kind);
    /// It runs again.
    fn end(&self, kind: Kind);
}

thread_local! {
    static OBSERVER: RefCell<Option<Arc<dyn Observer>>> = const { RefCell::new(None) };
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Makes `observer` hear this thread's waits from now on (`None`: nobody).
pub fn observe(observer: Option<Arc<dyn Observer>>) {
    OBSERVER.with(|o| *o.borrow_mut() = observer);
}

/// Whether anyone hears this thread's waits (a caller that must drop a latch to tell them
/// can skip that).
pub fn observed() -> bool {
    OBSERVER.with(|o| o.borrow().is_some())
}

/// A wait in progress; its drop says it ended.
#[must_use = "the wait ends when this is dropped"]
pub struct Waiting {
    kind: Kind,
    told: Option<Arc<dyn Observer>>,
}

impl std::fmt::Debug for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiting")
            .field("kind", &self.kind)
            .field("told", &self.told.is_some())
            .finish()
    }
}

/// This thread is about to wait for `kind`, until the returned value is dropped.
pub fn begin(kind: Kind) -> Waiting {
    let depth = DEPTH.with(|d| d.replace(d.get() + 1));
    let told = if depth == 0 {
        OBSERVER.with(|o| o.borrow().clone())
    } else {
        None
    };
    if let Some(observer) = &told {
        observer.begin(kind);
    }
    Waiting { kind, told }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        if let Some(observer) = &self.told {
            observer.end(self.kind);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Log(Mutex<Vec<String>>);

    impl Observer for Log {
        fn begin(&self, kind: Kind) {
            self.0.lock().unwrap().push(format!("begin {kind:?}"));
        }
        fn end(&self, kind: Kind) {
            self.0.lock().unwrap().push(format!("end {kind:?}"));
        }
    }

    #[test]
    fn only_the_outermost_wait_is_told_and_only_to_this_threads_observer() {
        let log = Arc::new(Log::default());
        observe(Some(log.clone()));
        {
            let _admission = begin(Kind::Admission);
            let _lock = begin(Kind::RowLock);
        }
        drop(begin(Kind::GroupCommit));
        std::thread::spawn(|| drop(begin(Kind::Sync)))
            .join()
            .unwrap();
        observe(None);
        drop(begin(Kind::RowLock));
        assert_eq!(
            *log.0.lock().unwrap(),
            [
                "begin Admission",
                "end Admission",
                "begin GroupCommit",
                "end GroupCommit"
            ]
        );
    }
}
