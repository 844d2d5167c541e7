//! Time held inside a latch, sampled: about one acquisition in [`SAMPLE_EVERY`], drawn at
//! random on each thread, reads the clock when the latch is taken and when it is given
//! back, and stands for `SAMPLE_EVERY` holds. Summed over a run, the holds counted so
//! estimate the whole time the latch was held, at two clock reads per `SAMPLE_EVERY`
//! acquisitions; drawn at random, not every n-th, so that a transaction that takes a latch
//! a fixed number of times does not have the same one of them sampled each time.
//!
//! The time held per transaction is what bounds throughput as cores are added: a latch held
//! h ns per transaction lets at most 1e9 / h transactions through per second, on any number
//! of cores. That bound can be measured on a laptop; contention cannot.

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// One acquisition in this many (on average) is timed.
pub const SAMPLE_EVERY: u64 = 32;

thread_local! {
    /// The thread's xorshift state (never 0), each thread's seeded differently.
    static DRAW: Cell<u64> = Cell::new({
        static THREADS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        // Relaxed: only makes the seeds differ.
        let n = THREADS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // splitmix64's finalizer: neighbouring numbers, far-apart seeds.
        let mut z = n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) | 1
    });
}

/// When a timed hold began (nothing for a hold not sampled), and how many holds it stands
/// for.
#[derive(Debug)]
#[must_use = "the hold is counted when it is stopped"]
pub struct HoldClock(Option<Instant>, u64);

impl HoldClock {
    /// A hold begins now; sampled about one time in [`SAMPLE_EVERY`].
    #[inline]
    pub fn start() -> HoldClock {
        let sampled = DRAW.with(|d| {
            let mut x = d.get();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            d.set(x);
            x % SAMPLE_EVERY == 0
        });
        HoldClock(sampled.then(Instant::now), SAMPLE_EVERY)
    }

    /// A hold begins now, timed whatever the draw: for a latch taken rarely and held long
    /// (a group-commit stage, once per group), where two clock reads cost next to nothing.
    #[inline]
    pub fn always() -> HoldClock {
        HoldClock(Some(Instant::now()), 1)
    }

    /// The nanoseconds of holding the hold stands for: its length times the holds it
    /// stands for ([`SAMPLE_EVERY`] if sampled, 1 if always timed), 0 if not sampled.
    #[inline]
    pub fn stop(&self) -> u64 {
        self.0.map_or(0, |began| {
            let ns = u64::try_from(began.elapsed().as_nanos()).unwrap_or(u64::MAX);
            ns.saturating_mul(self.1)
        })
    }
}

/// A latch's guard that, when it is given back, adds the time it was held to a counter
/// cell (`into`): the latch is the guard's, the clock this wrapper's.
#[derive(Debug)]
pub struct Held<'a, G> {
    guard: G,
    clock: HoldClock,
    into: &'a AtomicU64,
}

impl<'a, G> Held<'a, G> {
    /// `guard`, just taken, its hold sampled ([`HoldClock::start`]) into `into`.
    #[inline]
    pub fn sampled(guard: G, into: &'a AtomicU64) -> Self {
        Held {
            guard,
            clock: HoldClock::start(),
            into,
        }
    }

    /// `guard`, just taken, its hold timed ([`HoldClock::always`]) into `into`, in
    /// nanoseconds.
    #[inline]
    pub fn timed(guard: G, into: &'a AtomicU64) -> Self {
        Held {
            guard,
            clock: HoldClock::always(),
            into,
        }
    }

    /// The guard itself, for what asks for proof that the latch is held.
    pub fn guard(&self) -> &G {
        &self.guard
    }

    /// Runs `f`, which gives the latch back for a while (a condition variable's wait,
    /// `MutexGuard::unlocked`): the time until then is counted, the time without it is not.
    pub fn unlocked<R>(&mut self, f: impl FnOnce(&mut G) -> R) -> R {
        self.count();
        let r = f(&mut self.guard);
        // The same kind of clock again: a timed hold's weight is 1.
        self.clock = if self.clock.1 == 1 {
            HoldClock::always()
        } else {
            HoldClock::start()
        };
        r
    }

    #[inline]
    fn count(&self) {
        let ns = self.clock.stop();
        if ns > 0 {
            // Relaxed: a statistic, summed by readers at any time.
            self.into.fetch_add(ns, Ordering::Relaxed);
        }
    }
}

impl<G: Deref> Deref for Held<'_, G> {
    type Target = G::Target;

    #[inline]
    fn deref(&self) -> &G::Target {
        &self.guard
    }
}

impl<G: DerefMut> DerefMut for Held<'_, G> {
    #[inline]
    fn deref_mut(&mut self) -> &mut G::Target {
        &mut self.guard
    }
}

impl<G> Drop for Held<'_, G> {
    /// Counted while the latch is still held: the guard goes after.
    fn drop(&mut self) {
        self.count();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_one_hold_in_sample_every_is_timed() {
        let n = 64_000;
        let sampled = (0..n).filter(|_| HoldClock::start().0.is_some()).count() as u64;
        let expected = n / SAMPLE_EVERY;
        assert!(
            sampled > expected / 2 && sampled < expected * 2,
            "{sampled} of {n} sampled, {expected} expected"
        );
    }

    #[test]
    fn a_sampled_hold_stands_for_sample_every_holds() {
        let clock = HoldClock(Some(Instant::now()), SAMPLE_EVERY);
        std::thread::sleep(std::time::Duration::from_millis(2));
        let ns = clock.stop();
        assert!(ns >= 2_000_000 * SAMPLE_EVERY, "{ns}");
        assert_eq!(HoldClock(None, SAMPLE_EVERY).stop(), 0);
    }
}
