//! # waterline-throttle: transaction throttling
//!
//! Past the "knee", more concurrent transactions only add latch contention, a longer active
//! list for every read view to copy, and response-time chaos (book 4.8.2 and 8.3). Limiting
//! how many transactions are *inside* the engine keeps throughput at the knee however many
//! clients come. The book limited to 512 and stayed flat up to 10,000 connections, ahead of
//! the Percona thread pool everywhere; its code was never published, and MySQL's equivalent
//! is Enterprise-only.
//!
//! [`Admission`] takes a permit before a transaction enters and returns it when the
//! transaction ends (the [`Permit`] is dropped). The [`Policy`] decides:
//!
//! | policy | what it does | book |
//! |---|---|---|
//! | `Unlimited` | everyone enters at once; counts only | the collapse it is there to show |
//! | `Limit(n)` | at most `n` inside; the rest wait FIFO (a fair semaphore, `semaphore.rs`) | 8.3.2, Fig 8-34 |
//! | `ThreadPool(n)` | `n` worker threads run queued requests ([`Admission::run`]: a statement or a whole transaction) | 8.3.1, the baseline |
//! | `Adaptive(config)` | a `Limit` whose `n` a controller moves toward the knee | not in the book |
//!
//! The adaptive controller is a gradient limiter after TCP Vegas and Netflix's
//! concurrency-limits; `adaptive.rs` documents the algorithm and its parameters.
//!
//! Invariants (tested with 10,000 concurrent tasks in `tests/admission.rs`):
//! 1. With `Limit(n)`, no more than `n` are ever inside (after a run-time decrease, once the
//!    transactions over the new limit have ended).
//! 2. Waiters are admitted in arrival order.
//! 3. A permit comes back whatever ends its holder: commit, rollback, error, panic,
//!    cancellation.
//!
//! This crate knows nothing of the engine: a "transaction" is whatever runs between
//! [`Admission::enter`] and dropping the permit, or the closure given to [`Admission::run`].
//!
//! The manual's chapter on admission and the thread pool: `docs/src/admission.md` in the repository (an mdBook:
//! `mdbook serve docs`).

mod adaptive;
mod admission;
mod pool;
mod semaphore;

pub use adaptive::AdaptiveConfig;
pub use admission::{Admission, Clock, Permit};

/// How transactions are admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    /// No limit.
    Unlimited,
    /// At most this many inside.
    Limit(usize),
    /// This many worker threads run queued requests ([`Admission::run`]), as a thread pool
    /// does: it limits the threads working, not the transactions inside.
    ThreadPool(usize),
    /// A limit moved by a controller toward the knee.
    Adaptive(AdaptiveConfig),
}

impl Policy {
    /// A short name, for reports and benchmark ids.
    pub fn name(&self) -> String {
        match self {
            Policy::Unlimited => "unlimited".into(),
            Policy::Limit(n) => format!("limit-{n}"),
            Policy::ThreadPool(n) => format!("pool-{n}"),
            Policy::Adaptive(_) => "adaptive".into(),
        }
    }

    /// Checks the numbers that can be wrong.
    pub fn validate(&self) -> Result<(), ThrottleError> {
        match self {
            Policy::Limit(0) | Policy::ThreadPool(0) => Err(ThrottleError::Config(format!(
                "{self:?}: a limit or a pool needs at least 1"
            ))),
            Policy::Adaptive(config) => config.validate(),
            _ => Ok(()),
        }
    }
}

/// Admission's gauges and counters at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metrics {
    /// Transactions inside now.
    pub inside: usize,
    /// Transactions waiting to enter now.
    pub waiting: usize,
    /// Transactions admitted so far.
    pub admitted: u64,
    /// The current limit (`Limit`, `Adaptive`: the semaphore's; `ThreadPool`: its threads);
    /// `None` when unlimited.
    pub limit: Option<usize>,
    /// Median wait before admission, in microseconds.
    pub wait_p50_us: u64,
    /// 99th-percentile wait, in microseconds.
    pub wait_p99_us: u64,
    /// Longest wait, in microseconds.
    pub wait_max_us: u64,
}

/// What can go wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ThrottleError {
    /// An invalid policy or limit.
    #[error("invalid throttle configuration: {0}")]
    Config(String),
}
