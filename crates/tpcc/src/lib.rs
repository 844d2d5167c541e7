//! # waterline-tpcc: TPC-C-lite
//!
//! The workload behind every figure of the book's chapter 8 (BenchmarkSQL's TPC-C), against
//! waterline in process or against any MySQL-protocol server, with the same driver:
//!
//! ```text
//!  schema ──► load (seeded, parallel) ──► driver: N clients × the mix, warm-up, measure
//!                                           │   native: typed API   sql: embedded sessions
//!                                           │   mysql://: any server, same SQL text
//!                                           ▼
//!                     consistency checks (3.3.2.1-4) ──► report: CSV, JSON, SVG
//! ```
//!
//! - [`schema`]: the nine tables, once, as engine schemas and as `CREATE TABLE`.
//! - [`load`]: the spec's initial database (4.3.3.1), scaled by warehouses; items and
//!   customers can be fewer for a "lite" run, which every report states.
//! - [`input`]: the five transactions' inputs and the 45/43/4/4/4 mix, with NURand, 1%
//!   NewOrder rollbacks, 60% customers by last name, remote warehouses when W > 1.
//! - [`native`] and [`sql`]: the transactions, over the typed API and as SQL.
//! - [`driver`]: clients as OS threads or tokio tasks, retries, latency histograms.
//! - [`check`]: the consistency conditions; a violation fails the run.
//! - [`report`]: what each number means, and the files; [`plot`]: the lab's other charts;
//!   [`process`]: the CPU time and memory the process spent over the measured window;
//!   [`steal`]: the machine's CPU time the hypervisor took meanwhile.
//!
//! What "lite" leaves out of TPC-C: keying and think times (clients send back to back),
//! terminals bound to a district, the deferred Delivery queue (Delivery is one transaction),
//! the 90th-percentile response-time limits, and the pricing and durability clauses.
//!
//! The manual's chapter on TPC-C-lite: `docs/src/tpcc.md` in the repository (an mdBook:
//! `mdbook serve docs`).

pub mod backend;
pub mod check;
pub mod client;
pub mod conn;
pub mod driver;
pub mod host;
pub mod input;
pub mod load;
pub mod native;
pub mod plot;
pub use waterline_sql::process;
pub use waterline_tpcc_data::random;
pub mod report;
pub mod run;
pub use waterline_tpcc_data::schema;
pub mod sql;
pub mod steal;
pub mod values;

pub use backend::{BackendKind, Settings, Target};
pub use driver::{DriverOptions, Limit, Measurement, OnThreadStart, Runtime};
pub use host::Host;
pub use process::transparent_huge_pages;
pub use report::{
    BuildProfile, LATCH_NOTE, LatchHold, Machine, Point, Report, RunInfo, Topology, txn_rate,
};
pub use run::{run_point, run_point_on};
pub use schema::Scale;

/// What can go wrong outside a transaction: configuration, loading, checking, reporting.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting that cannot work.
    #[error("{0}")]
    Config(String),
    /// The engine refused something.
    #[error(transparent)]
    Txn(#[from] waterline_txn::TxnError),
    /// A statement or connection failed.
    #[error("{0}")]
    Client(String),
    /// Writing the report.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

impl From<client::Failure> for Error {
    fn from(f: client::Failure) -> Error {
        match f {
            client::Failure::Fatal(message) => Error::Client(message),
            client::Failure::Retry(reason) => Error::Client(reason.to_string()),
        }
    }
}
