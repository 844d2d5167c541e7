//! ReadView benchmarks: each group measures the baseline (`vector`, MySQL 8.0) next to the
//! book's `hybrid` view and `csn` snapshots, on the same active set, so the ratio is the result.
//!
//! * `changes_visible/{vector,hybrid,csn}/N`: 1,024 visibility tests per iteration (divide the
//!   time by 1,024, or read criterion's elements/s) against a view of N active transactions.
//! * `snapshot_open/{vector,hybrid,csn}/N`: one `snapshot_into` (reusing the view) of N active
//!   transactions: the copy the trx-sys latch is held for.
//! * `hybrid_window/{visible,open}-{2048B,8192B}/ACTIVE-over-SPAN`: the book's view window
//!   against the published patch's, when the active ids fit either window and when they are
//!   spread wider than 2048 bytes (16,384 ids) can hold.
//!
//! How the N active transactions come about (the same for every kind): 4 long-lived
//! transactions begin; 600,000 short ones begin and commit (more than the 524,288-id global
//! window, so the long-lived ones overflow into the long vector, as in a server that has run a
//! while); then N - 4 short ones begin and stay active. Probe ids are drawn uniformly from
//! `[oldest short active, low_limit_id)`, where the vector view must binary-search.
//!
//! Bytes copied per snapshot are printed before the measurements.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use waterline::readview::{
    ActiveSet, CsnLog, HybridActiveSet, HybridLayout, HybridReadView, ReadView, TrxId, VecActiveSet,
};

const ACTIVE: [u64; 5] = [16, 256, 1000, 4096, 16_384];
const LONG_LIVED: u64 = 4;
const CHURN: u64 = 600_000;
const PROBES: usize = 1024;

/// The three global structures after the same history.
struct Population {
    vector: VecActiveSet,
    hybrid: HybridActiveSet,
    /// The same hybrid set, its snapshots in the compact layout.
    compact: HybridActiveSet,
    csn: Arc<CsnLog>,
    probes: Vec<TrxId>,
}

impl Population {
    /// `active` transactions active, the newest `active - LONG_LIVED` of them spread evenly
    /// over `span` consecutive ids (`span == active - LONG_LIVED`: consecutive).
    fn new(active: u64, span: u64) -> Self {
        let mut p = Population {
            vector: VecActiveSet::new(),
            hybrid: HybridActiveSet::new(),
            compact: HybridActiveSet::new().with_layout(HybridLayout::Compact),
            csn: Arc::new(CsnLog::new()),
            probes: Vec::new(),
        };
        let mut next = 1;
        for _ in 0..LONG_LIVED {
            p.begin(TrxId(next));
            next += 1;
        }
        for _ in 0..CHURN {
            p.begin(TrxId(next));
            p.end(TrxId(next));
            next += 1;
        }
        // Nobody holds a snapshot: the CSN log may forget everything that ended.
        p.csn.purge(p.csn.last_csn());
        let short = active - LONG_LIVED;
        let first_short = next;
        for k in 0..span {
            let id = TrxId(first_short + k);
            p.begin(id);
            // Keep `short` of the `span` ids active, evenly spread, the last one included.
            let keep = (k + 1) * short / span != k * short / span;
            if !keep {
                p.end(id);
            }
        }
        assert_eq!(p.vector.len() as u64, active);
        let low_limit = p.vector.low_limit_id().0;
        // Fixed, and random enough to defeat the branch predictor.
        let mut rng = waterline::types::Rng::new(0x9E37_79B9_7F4A_7C15, 0);
        p.probes = (0..PROBES)
            .map(|_| TrxId(first_short + rng.below(low_limit - first_short)))
            .collect();
        p
    }

    fn begin(&mut self, id: TrxId) {
        self.vector.insert(id).unwrap();
        self.hybrid.insert(id).unwrap();
        self.compact.insert(id).unwrap();
        self.csn.begin(id).unwrap();
    }

    fn end(&mut self, id: TrxId) {
        self.vector.remove(id).unwrap();
        self.hybrid.remove(id).unwrap();
        self.compact.remove(id).unwrap();
        self.csn.commit(id).unwrap();
    }
}

/// How many of `probes` the view sees. The view and the probes pass through `black_box` once
/// per batch, so the compiler can neither precompute the answers nor hoist work out of the
/// loop, without adding a store and reload to every single test.
fn count_visible(view: &impl ReadView, probes: &[TrxId]) -> usize {
    let view = black_box(view);
    black_box(probes)
        .iter()
        .filter(|&&id| view.changes_visible(id))
        .count()
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50)
}

fn changes_visible(c: &mut Criterion) {
    let mut group = c.benchmark_group("changes_visible");
    group.throughput(Throughput::Elements(PROBES as u64));
    for n in ACTIVE {
        let p = Population::new(n, n - LONG_LIVED);
        let (vector, hybrid, csn) = (
            p.vector.snapshot(None),
            p.hybrid.snapshot(None),
            p.csn.snapshot(None),
        );
        let answers = count_visible(&vector, &p.probes);
        assert_eq!(answers, count_visible(&hybrid, &p.probes));
        assert_eq!(answers, count_visible(&csn, &p.probes));
        group.bench_with_input(BenchmarkId::new("vector", n), &p.probes, |b, probes| {
            b.iter(|| count_visible(&vector, probes))
        });
        group.bench_with_input(BenchmarkId::new("hybrid", n), &p.probes, |b, probes| {
            b.iter(|| count_visible(&hybrid, probes))
        });
        group.bench_with_input(BenchmarkId::new("csn", n), &p.probes, |b, probes| {
            b.iter(|| count_visible(&csn, probes))
        });
    }
    group.finish();
}

fn snapshot_open(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot_open");
    #[allow(clippy::print_stdout)] // a benchmark's report, not library output
    {
        println!("bytes copied per snapshot (fixed fields + ids or bitmap words):");
        println!(
            "{:>8} {:>10} {:>10} {:>12} {:>6} {:>8}",
            "active", "vector", "hybrid", "hybrid-compact", "csn", "hyb/vec"
        );
    }
    for n in ACTIVE {
        let p = Population::new(n, n - LONG_LIVED);
        let mut vector = p.vector.new_view();
        let mut hybrid = p.hybrid.new_view();
        let mut compact = p.compact.new_view();
        let mut csn = p.csn.snapshot(None);
        let bytes = (
            p.vector.snapshot_into(&mut vector, None),
            p.hybrid.snapshot_into(&mut hybrid, None),
            p.compact.snapshot_into(&mut compact, None),
            p.csn.snapshot_into(&mut csn, None),
        );
        #[allow(clippy::print_stdout)]
        {
            let ratio = 100.0 * bytes.1 as f64 / bytes.0 as f64;
            println!(
                "{n:>8} {:>10} {:>10} {:>12} {:>6} {ratio:>7.1}%",
                bytes.0, bytes.1, bytes.2, bytes.3
            );
        }
        group.bench_function(BenchmarkId::new("vector", n), |b| {
            b.iter(|| p.vector.snapshot_into(black_box(&mut vector), None))
        });
        group.bench_function(BenchmarkId::new("hybrid", n), |b| {
            b.iter(|| p.hybrid.snapshot_into(black_box(&mut hybrid), None))
        });
        group.bench_function(BenchmarkId::new("hybrid-compact", n), |b| {
            b.iter(|| p.compact.snapshot_into(black_box(&mut compact), None))
        });
        group.bench_function(BenchmarkId::new("csn", n), |b| {
            b.iter(|| p.csn.snapshot_into(black_box(&mut csn), None))
        });
    }
    group.finish();
}

/// The floor under `changes_visible/hybrid`: a bare bit test on the same probes and the same
/// 1,000-active population, with nothing of a view around it.
fn bit_test_floor(c: &mut Criterion) {
    let mut group = c.benchmark_group("bit_test_floor");
    group.throughput(Throughput::Elements(PROBES as u64));
    let p = Population::new(1000, 1000 - LONG_LIVED);
    let view = p.hybrid.snapshot(None);
    let (base, bits) = (view.short_min_id().0, bit_words(&p.hybrid, &view));
    group.bench_function(BenchmarkId::new("bare", 1000), |b| {
        b.iter(|| {
            let bits = black_box(bits.as_slice());
            black_box(p.probes.as_slice())
                .iter()
                .filter(|&&id| {
                    let offset = id.0 - base;
                    (bits[(offset / 64) as usize] >> (offset % 64)) & 1 == 0
                })
                .count()
        })
    });
    group.finish();
}

/// The view's bitmap words, rebuilt through the public interface.
fn bit_words(set: &HybridActiveSet, view: &HybridReadView) -> Vec<u64> {
    let base = view.short_min_id().0;
    let mut bits = vec![0u64; view.bitmap_words()];
    for (k, word) in bits.iter_mut().enumerate() {
        for bit in 0..64 {
            let id = TrxId(base + 64 * k as u64 + bit);
            if !view.changes_visible(id) && id < set.low_limit_id() {
                *word |= 1 << bit;
            }
        }
    }
    bits
}

/// The book's 2048-byte view window against the patch's 8192 bytes.
fn hybrid_window(c: &mut Criterion) {
    let mut group = c.benchmark_group("hybrid_window");
    for (active, span) in [
        (1000, 996),
        (1000, 40_000),
        (16_384, 16_380),
        (16_384, 60_000),
    ] {
        let p = Population::new(active, span);
        let param = format!("{active}-over-{span}");
        for bytes in [2048, 8192] {
            let mut view = HybridReadView::with_window_bytes(bytes).unwrap();
            let copied = p.hybrid.snapshot_into(&mut view, None);
            #[allow(clippy::print_stdout)]
            {
                println!(
                    "window {bytes:>5} B, {param:>18}: {copied:>6} bytes copied, {:>5} ids spilled to the long vector",
                    view.long_ids().len() as u64 - LONG_LIVED
                );
            }
            group.throughput(Throughput::Elements(PROBES as u64));
            group.bench_function(BenchmarkId::new(format!("visible-{bytes}B"), &param), |b| {
                b.iter(|| count_visible(&view, &p.probes))
            });
            group.throughput(Throughput::Elements(1));
            let mut reused = view.clone();
            group.bench_function(BenchmarkId::new(format!("open-{bytes}B"), &param), |b| {
                b.iter(|| p.hybrid.snapshot_into(black_box(&mut reused), None))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = changes_visible, bit_test_floor, snapshot_open, hybrid_window
}
criterion_main!(benches);
