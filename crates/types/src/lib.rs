//! waterline's vocabulary: what the engine stores and the planner reasons about, with no
//! engine behind it, so the planner can be read and tested without one.
//!
//! - [`Value`] and [`Row`]: SQL values as MySQL compares and stores them
//!   (`value.rs`).
//! - [`Key`]: index keys in a byte encoding whose byte order is the values' order, so the
//!   engine's skip lists compare bytes (`key.rs`).
//! - [`TableSchema`]: columns, primary key and secondary indexes, and the checks a row
//!   passes before it is stored (`schema.rs`).
//! - [`KeyRange`]: the keys an index scan reads (`range.rs`).
//! - [`IndexStats`]: rows per key prefix and a histogram, the planner's estimates
//!   (`index_stats.rs`).
//! - [`Rng`]: the one deterministic random number generator, for TPC-C-lite's inputs, the
//!   tests and the benchmarks (`rng.rs`).
//!
//! The manual's chapter on the engine, embedded: `docs/src/embedding.md` in the repository (an mdBook:
//! `mdbook serve docs`).

mod declare;
pub mod error;
pub mod index_stats;
pub mod key;
pub mod range;
pub mod rng;
pub mod schema;
pub mod value;

pub use error::{Refusal, SchemaError};
pub use index_stats::{DIVE, IndexStats, StatsSlot};
pub use key::{INLINE_KEY_BYTES, Key};
pub use range::KeyRange;
pub use rng::Rng;
pub use schema::{Column, ColumnType, IndexDef, TableSchema, project};
pub use value::{DateTime, Decimal, MAX_DECIMAL_SCALE, Row, Text, Value, copy_row};
