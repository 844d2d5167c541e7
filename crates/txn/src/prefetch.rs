//! Software prefetch: asking for a cache line before it is read, so that the misses of a
//! batch of independent lookups overlap instead of following one another.
//!
//! A point lookup on a table larger than the cache misses three or four times in a row:
//! the hash slot, the record it points to, the version the record points to, and the
//! version's values. Each miss must finish before the next address is known, and each
//! latch taken on the way (a locked instruction) waits for the loads before it, so a loop
//! of lookups runs at one miss at a time. When the keys are known up front (TPC-C's
//! NewOrder knows its ten items, StockLevel its two hundred), a pass that only *asks* for
//! each key's first line, then a pass that asks for each second line, and so on, keeps
//! many misses in flight: this is the "interleaving" of Psaropoulos et al. (VLDB 2017),
//! level by level instead of with coroutines.
//!
//! A prefetch is a hint: it cannot fault or change what a load returns, and a wrong one
//! costs only bandwidth. On targets without one these are no-ops.

/// Asks for the cache line holding `value`.
#[inline(always)]
pub(crate) fn line<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    safe_arch::prefetch_t0(value);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Asks for every cache line `values` spans.
#[inline(always)]
pub(crate) fn lines<T>(values: &[T]) {
    // One element in every 64 bytes, or every element if they are larger.
    let step = (64 / std::mem::size_of::<T>().max(1)).max(1);
    for value in values.iter().step_by(step) {
        line(value);
    }
    if let Some(last) = values.last() {
        line(last);
    }
}
