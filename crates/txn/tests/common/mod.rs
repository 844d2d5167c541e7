//! Helpers the integration tests share.
#![allow(dead_code)] // each test binary uses its own part

/// xorshift64: a small deterministic generator, enough for test workloads and kill times.
pub struct Rng(pub u64);

impl Rng {
    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A fresh directory named `waterline-<what>-...`, removed when dropped.
pub fn temp_dir(what: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("waterline-{what}-"))
        .tempdir()
        .expect("a temporary directory")
}
