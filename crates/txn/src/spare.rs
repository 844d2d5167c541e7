//! Spare buffers a thread's transactions reuse: the lists a read-write transaction keeps of
//! its locks and its undo.
//!
//! A NewOrder takes about two dozen locks and writes as many versions. Started empty, each
//! list would grow 4, 8, 16, 32: four reallocations per list and transaction. A transaction
//! takes an emptied list, with the room a previous one grew, from its thread's spares at its
//! first lock or write, and the end of
//! the transaction gives it back to the spares of the thread that ends it (a group commit's
//! leader ends its followers, so a list can change threads; each thread keeps only a few).
//!
//! ```text
//!  thread's spares: [ Vec(cap 32) ]
//!        │ take at the first lock            ▲ give back at commit or rollback (cleared)
//!        ▼                                   │
//!  transaction.locks: [ (hash, lock) ... ] ──┘
//! ```

use std::cell::RefCell;

use crate::lock::Held;
use crate::undo::Undo;

thread_local! {
    /// This thread's spare lock lists.
    pub(crate) static LOCKS: Spares<Held> = const { Spares::new() };
    /// This thread's spare undo lists.
    pub(crate) static UNDO: Spares<Undo> = const { Spares::new() };
}

/// Lists a thread keeps. Two cover a transaction that ends while the next one begins.
const KEPT: usize = 2;

/// A list longer than this goes back to the allocator: a bulk load's hundred thousand undo
/// records should not stay reserved by its thread.
const MAX_CAPACITY: usize = 1024;

/// One thread's spare lists of `T`.
#[derive(Debug)]
pub(crate) struct Spares<T>(RefCell<Vec<Vec<T>>>);

impl<T> Spares<T> {
    pub(crate) const fn new() -> Spares<T> {
        Spares(RefCell::new(Vec::new()))
    }

    /// An empty list, with room if a spare had it.
    pub(crate) fn take(&self) -> Vec<T> {
        self.0.borrow_mut().pop().unwrap_or_default()
    }

    /// Empties `list` (dropping its items) and keeps it if it is worth keeping.
    pub(crate) fn give(&self, mut list: Vec<T>) {
        list.clear();
        if list.capacity() == 0 || list.capacity() > MAX_CAPACITY {
            return;
        }
        let mut spares = self.0.borrow_mut();
        if spares.len() < KEPT {
            spares.push(list);
        }
    }
}

/// Makes `list` a spare from `spares` if it has no room yet: called before a push, so that
/// a read-only transaction never takes one.
pub(crate) fn reserve<T>(spares: &'static std::thread::LocalKey<Spares<T>>, list: &mut Vec<T>) {
    if list.capacity() == 0 {
        *list = spares.with(Spares::take);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_list_comes_back_empty_with_its_room() {
        let spares = Spares::new();
        let mut list = Vec::with_capacity(32);
        list.extend(0..20);
        spares.give(list);
        let again = spares.take();
        assert!(again.is_empty());
        assert_eq!(again.capacity(), 32);
        assert_eq!(spares.take().capacity(), 0, "only one was given");
    }

    #[test]
    fn only_a_few_modest_lists_are_kept() {
        let spares = Spares::new();
        spares.give(Vec::<u8>::with_capacity(MAX_CAPACITY + 1));
        assert_eq!(spares.take().capacity(), 0, "a huge list is not kept");
        for _ in 0..KEPT + 3 {
            spares.give(Vec::<u8>::with_capacity(8));
        }
        assert_eq!(spares.0.borrow().len(), KEPT);
    }

    #[test]
    fn giving_drops_the_items() {
        let item = std::sync::Arc::new(());
        let spares = Spares::new();
        let mut list = Vec::with_capacity(4);
        list.push(std::sync::Arc::clone(&item));
        spares.give(list);
        assert_eq!(std::sync::Arc::strong_count(&item), 1);
    }
}
