//! Autocommit point reads in a loop (begin, get, commit) on 10,000 rows, one thread: the
//! cost of one read with nothing else going on, small enough to run under callgrind.
//!
//! ```text
//! cargo run --release --example point_reads -- <baseline|hybrid|csn> <reads> [--purge]
//! valgrind --tool=callgrind target/release/examples/point_reads hybrid 20000
//! ```
//!
//! `--purge` runs the background purge every 10 ms, as `benches/txn.rs` does. The example
//! prints the mean wall time per read to stderr.

use std::time::{Duration, Instant};

use waterline::txn::{Column, ColumnType, Key, Rng, SnapshotKind, TableSchema};
use waterline::{Engine, EngineConfig, Isolation};

const ROWS: i64 = 10_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: point_reads <baseline|hybrid|csn> <reads> [--purge]";
    let (Some(kind), Some(reads)) = (args.first(), args.get(1)) else {
        return Err(usage.into());
    };
    let reads: u32 = reads.parse().map_err(|_| usage)?;
    let mut config = match kind.as_str() {
        "baseline" => EngineConfig::baseline(),
        "hybrid" => EngineConfig::default(),
        "csn" => EngineConfig {
            snapshot: SnapshotKind::Csn,
            ..EngineConfig::default()
        },
        _ => return Err(usage.into()),
    };
    let purge = args.iter().any(|a| a == "--purge");
    config.purge_interval = purge.then_some(Duration::from_millis(10));
    let engine = Engine::open(config)?;
    let schema = TableSchema::new(
        "t",
        vec![
            Column::new("id", ColumnType::BigInt),
            Column::new("v", ColumnType::BigInt),
        ],
    )
    .primary_key(&["id"])?;
    let table = engine.create_table(schema)?;
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    for id in 0..ROWS {
        load.insert(&table, vec![id.into(), 0.into()])?;
    }
    load.commit()?;

    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15, 0);
    let started = Instant::now();
    for _ in 0..reads {
        let mut trx = engine.begin_with(Isolation::ReadCommitted);
        let row = trx.get(&table, Key::one(rng.below(ROWS as u64) as i64))?;
        assert!(row.is_some(), "every key was loaded");
        trx.commit()?;
    }
    let per_read = started.elapsed() / reads.max(1);
    eprintln!(
        "{kind}{}: {per_read:?} per read",
        if purge { " with purge" } else { "" }
    );
    Ok(())
}
