//! A fair counting semaphore for async and blocking callers, with no runtime behind it.
//!
//! Admission needs three things of its semaphore: waiters go in **in arrival order** (no
//! barging: a newcomer queues behind the waiters even when a permit is free for an instant),
//! a **cancelled wait leaves the queue** (and passes on a permit it was handed but never
//! saw), and the number of permits can **grow and shrink at run time**. A queue of slots
//! under one latch does all three:
//!
//! ```text
//!  acquire ──► queue empty and a permit free? ── yes ──► Ready
//!                 │ no
//!                 └──► push a slot at the back; Pending
//!  release ──► permits += 1; while permits and a slot at the front:
//!                 pop it, mark it granted, wake its task (after the latch is let go)
//! ```
//!
//! The latch is taken once per acquire or release, never across an await or a wake-up; the
//! queue is as long as the waiters, and only a cancelled wait walks it.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use parking_lot::Mutex;

/// Permits and the waiters for them.
#[derive(Debug)]
pub(crate) struct Semaphore {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    permits: usize,
    queue: VecDeque<Arc<Slot>>,
}

/// One waiter's place in the queue. Its fields change only under the semaphore's latch.
#[derive(Debug, Default)]
struct Slot {
    inner: Mutex<SlotState>,
}

#[derive(Debug, Default)]
struct SlotState {
    granted: bool,
    waker: Option<Waker>,
}

impl Semaphore {
    pub(crate) fn new(permits: usize) -> Semaphore {
        Semaphore {
            state: Mutex::new(State {
                permits,
                queue: VecDeque::new(),
            }),
        }
    }

    /// Waits for a permit, in arrival order. Dropping the future leaves the queue.
    pub(crate) fn acquire(self: &Arc<Self>) -> Acquire {
        Acquire {
            semaphore: Arc::clone(self),
            slot: None,
            done: false,
        }
    }

    /// Adds permits: the first waiters get them at once.
    pub(crate) fn add_permits(&self, n: usize) {
        let mut wake = Vec::new();
        {
            let mut state = self.state.lock();
            state.permits += n;
            while state.permits > 0 {
                let Some(slot) = state.queue.pop_front() else {
                    break;
                };
                state.permits -= 1;
                let mut slot = slot.inner.lock();
                slot.granted = true;
                wake.extend(slot.waker.take());
            }
        }
        wake.into_iter().for_each(Waker::wake);
    }

    /// Takes up to `n` free permits away; returns how many it took.
    pub(crate) fn forget_permits(&self, n: usize) -> usize {
        let mut state = self.state.lock();
        let taken = state.permits.min(n);
        state.permits -= taken;
        taken
    }
}

/// The future of [`Semaphore::acquire`].
#[derive(Debug)]
pub(crate) struct Acquire {
    semaphore: Arc<Semaphore>,
    /// Its place in the queue, once it had to wait.
    slot: Option<Arc<Slot>>,
    /// Ready was returned: the permit belongs to the caller now.
    done: bool,
}

impl Future for Acquire {
    type Output = OwnedPermit;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<OwnedPermit> {
        let this = &mut *self;
        let mut state = this.semaphore.state.lock();
        let ready = match &this.slot {
            None if state.queue.is_empty() && state.permits > 0 => {
                state.permits -= 1;
                true
            }
            None => {
                let slot = Arc::new(Slot::default());
                slot.inner.lock().waker = Some(cx.waker().clone());
                state.queue.push_back(Arc::clone(&slot));
                this.slot = Some(slot);
                false
            }
            Some(slot) => {
                let mut slot = slot.inner.lock();
                if !slot.granted {
                    slot.waker = Some(cx.waker().clone());
                }
                slot.granted
            }
        };
        drop(state);
        if !ready {
            return Poll::Pending;
        }
        this.done = true;
        Poll::Ready(OwnedPermit {
            semaphore: Some(Arc::clone(&this.semaphore)),
        })
    }
}

impl Drop for Acquire {
    fn drop(&mut self) {
        let Some(slot) = self.slot.take().filter(|_| !self.done) else {
            return;
        };
        let granted = {
            let mut state = self.semaphore.state.lock();
            let granted = slot.inner.lock().granted;
            if !granted {
                state.queue.retain(|queued| !Arc::ptr_eq(queued, &slot));
            }
            granted
        };
        // Handed a permit it never took: the next waiter gets it.
        if granted {
            self.semaphore.add_permits(1);
        }
    }
}

/// A permit, returned to its semaphore when dropped.
#[derive(Debug)]
pub(crate) struct OwnedPermit {
    semaphore: Option<Arc<Semaphore>>,
}

impl OwnedPermit {
    /// Drops the permit without returning it: the semaphore has one permit fewer.
    pub(crate) fn forget(mut self) {
        self.semaphore = None;
    }
}

impl Drop for OwnedPermit {
    fn drop(&mut self) {
        if let Some(semaphore) = self.semaphore.take() {
            semaphore.add_permits(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Wake;

    struct Count(std::sync::atomic::AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn poll(future: &mut Acquire, waker: &Waker) -> Option<OwnedPermit> {
        match Pin::new(future).poll(&mut Context::from_waker(waker)) {
            Poll::Ready(permit) => Some(permit),
            Poll::Pending => None,
        }
    }

    #[test]
    fn waiters_go_in_arrival_order_and_a_cancelled_grant_passes_on() {
        let semaphore = Arc::new(Semaphore::new(1));
        let woken = Arc::new(Count(0.into()));
        let waker = Waker::from(Arc::clone(&woken));
        let first = poll(&mut semaphore.acquire(), &waker).expect("a free permit");
        let (mut a, mut b, mut c) = (
            semaphore.acquire(),
            semaphore.acquire(),
            semaphore.acquire(),
        );
        assert!(poll(&mut a, &waker).is_none());
        assert!(poll(&mut b, &waker).is_none());
        assert!(poll(&mut c, &waker).is_none());
        drop(first); // a is granted, but dropped before it looks: b gets the permit
        drop(a);
        let b_permit = poll(&mut b, &waker).expect("b is next");
        assert!(poll(&mut c, &waker).is_none());
        // A newcomer does not barge past c when the permit comes back.
        drop(b_permit);
        let mut late = semaphore.acquire();
        assert!(poll(&mut late, &waker).is_none());
        let c_permit = poll(&mut c, &waker).expect("c was first in the queue");
        drop(c_permit); // late is granted ...
        drop(late); // ... and gone before it looked: the permit is free again
        assert_eq!(semaphore.forget_permits(5), 1);
        assert!(woken.0.load(std::sync::atomic::Ordering::Relaxed) >= 3);
    }
}
