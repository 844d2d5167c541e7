//! TPC-C's random inputs (spec 2.1.6 and 4.3.2): uniform integers, NURand, last names,
//! random strings. One [`Rng`] per client or per loaded warehouse, seeded from the run's seed,
//! so a seed fixes the loaded database and each client's input stream.

/// SplitMix64: small, fast, and fixed forever (a checksum of the loaded database depends on
/// every number it draws, so it must not change with a dependency's version).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for stream `stream` of run seed `seed` (a client, or a warehouse's loader).
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

    /// True with probability `percent` / 100.
    pub fn percent(&mut self, percent: i64) -> bool {
        self.uniform(1, 100) <= percent
    }

    /// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x (spec
    /// 2.1.6): skewed toward some values, as real customers and items are.
    pub fn nurand(&mut self, a: i64, c: i64, x: i64, y: i64) -> i64 {
        (((self.uniform(0, a) | self.uniform(x, y)) + c) % (y - x + 1)) + x
    }

    /// A random alphanumeric string of `lo..=hi` characters (spec 4.3.2.2's a-string).
    pub fn astring(&mut self, lo: i64, hi: i64) -> String {
        const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let len = self.uniform(lo, hi);
        (0..len)
            .map(|_| CHARS[self.uniform(0, CHARS.len() as i64 - 1) as usize] as char)
            .collect()
    }

    /// A random string of `len` digits (n-string).
    pub fn nstring(&mut self, len: i64) -> String {
        (0..len)
            .map(|_| char::from(b'0' + self.uniform(0, 9) as u8))
            .collect()
    }

    /// An a-string of `lo..=hi` characters where 10% hold "ORIGINAL" at a random place
    /// (I_DATA and S_DATA, spec 4.3.3.1).
    pub fn data(&mut self, lo: i64, hi: i64) -> String {
        let mut s = self.astring(lo, hi);
        if self.percent(10) {
            let at = self.uniform(0, s.len() as i64 - 8) as usize;
            s.replace_range(at..at + 8, "ORIGINAL");
        }
        s
    }

    /// A zip code: 4 random digits and "11111" (spec 4.3.2.7).
    pub fn zip(&mut self) -> String {
        format!("{}11111", self.nstring(4))
    }
}

/// NURand's run-time constants C (spec 2.1.6.1). C_LAST differs from the one used at load by
/// 66, which the spec's rule for the two allows (65..=119, not 96 or 112).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constants {
    /// C for customer last names.
    pub c_last: i64,
    /// C for customer ids.
    pub c_id: i64,
    /// C for item ids.
    pub ol_i_id: i64,
}

impl Constants {
    /// The constants used to load the database.
    pub const LOAD: Constants = Constants {
        c_last: 157,
        c_id: 259,
        ol_i_id: 7911,
    };
    /// The constants used while running.
    pub const RUN: Constants = Constants {
        c_last: 223,
        c_id: 259,
        ol_i_id: 7911,
    };
}

/// NURand's A for a range of `n` values: 8191 for 100,000 items, 1023 for 3,000 customers,
/// 255 for 1,000 last names, as the spec gives. For any range it is the smallest 2^k - 1 at
/// least `n / divisor` (13 for items, 3 for customers, 4 for names gives the spec's three),
/// so a smaller "lite" range keeps the spec's skew.
pub fn nurand_a(n: i64, divisor: i64) -> i64 {
    let target = (n / divisor).max(1);
    let mut a = 1;
    while a < target {
        a = a * 2 + 1;
    }
    a.min(n)
}

/// A customer's last name: the syllables of the three digits of `n` (0..=999), spec 4.3.2.3.
pub fn last_name(n: i64) -> String {
    const SYLLABLES: [&str; 10] = [
        "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
    ];
    let n = n as usize;
    format!(
        "{}{}{}",
        SYLLABLES[n / 100],
        SYLLABLES[n / 10 % 10],
        SYLLABLES[n % 10]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nurand_a_matches_the_spec_at_full_scale() {
        assert_eq!(nurand_a(100_000, 13), 8191);
        assert_eq!(nurand_a(3000, 3), 1023);
        assert_eq!(nurand_a(1000, 4), 255);
        assert!(nurand_a(10, 13) >= 1);
    }

    #[test]
    fn last_names_are_the_spec_syllables() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn a_seed_fixes_the_stream() {
        let a: Vec<u64> = (0..4).map(|_| Rng::new(7, 1).next_u64()).collect();
        assert!(a.iter().all(|x| *x == a[0]));
        assert_ne!(Rng::new(7, 1).next_u64(), Rng::new(7, 2).next_u64());
        let mut rng = Rng::new(1, 0);
        for _ in 0..10_000 {
            let n = rng.nurand(1023, 259, 1, 3000);
            assert!((1..=3000).contains(&n));
        }
        let s = Rng::new(3, 3).data(26, 50);
        assert!((26..=50).contains(&(s.len() as i64)));
    }
}
