//! TPC-C's data, with nothing of the engine: the nine tables (spec 1.3), the random inputs
//! (spec 2.1.6, 4.3.2), and the rows of the initial database (spec 4.3.3.1) from a seed.
//! `waterline-tpcc` loads them into an engine or a server; the planner's tests load them into
//! its in-memory catalog, so both read the same data.
//!
//! The manual's chapter on TPC-C-lite: `docs/src/tpcc.md` in the repository (an mdBook:
//! `mdbook serve docs`).

pub mod generate;
pub mod random;
pub mod schema;

pub use generate::Generator;
pub use schema::{DISTRICTS, Scale, TABLES, TableDef, table};
