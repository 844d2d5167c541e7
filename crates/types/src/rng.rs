//! One small deterministic random number generator for the whole project: TPC-C-lite's
//! inputs and loader, the tests' workloads and kill times, the benchmarks' key choices.

/// SplitMix64: small, fast, and fixed forever (a checksum of TPC-C-lite's loaded database
/// depends on every number it draws, so it must not change with a dependency's version).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for stream `stream` of seed `seed` (a client, a loaded warehouse, a test
    /// thread): each pair gives its own sequence.
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut rng = Rng(seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F));
        rng.next_u64();
        rng
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn uniform(&mut self, lo: i64, hi: i64) -> i64 {
        debug_assert!(lo <= hi);
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `percent` / 100.
    pub fn percent(&mut self, percent: i64) -> bool {
        self.uniform(1, 100) <= percent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_and_a_stream_fix_the_sequence() {
        let a: Vec<u64> = (0..4).map(|_| Rng::new(7, 1).next_u64()).collect();
        assert!(a.iter().all(|x| *x == a[0]));
        assert_ne!(Rng::new(7, 1).next_u64(), Rng::new(7, 2).next_u64());
        let mut rng = Rng::new(1, 0);
        for _ in 0..1000 {
            assert!((3..=5).contains(&rng.uniform(3, 5)));
            assert!(rng.below(7) < 7);
        }
    }
}
