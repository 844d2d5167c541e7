//! # waterline-sql: SQL over the engine, embeddable
//!
//! A [`Session`] parses a statement with sqlparser (MySQL dialect), plans it with
//! `waterline-planner` over the session's transaction, and executes it over `waterline-txn`,
//! answering as MySQL 8.0 does: its errors and codes, its variables, its result column types.
//! It needs no async runtime and speaks no protocol; `waterline-server` puts sessions on the
//! MySQL protocol.
//!
//! ```
//! use std::sync::Arc;
//! use waterline_sql::Session;
//! use waterline_txn::{Engine, Value};
//!
//! let engine = Arc::new(Engine::in_memory());
//! let mut session = Session::new(&engine);
//! session.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")?;
//! session.execute("INSERT INTO t VALUES (1, 'one'), (2, 'two')")?;
//! let rows = session.execute("SELECT v FROM t WHERE id = 2")?.into_rows();
//! assert_eq!(rows, [[Value::from("two")]]);
//! # Ok::<(), waterline_sql::SqlError>(())
//! ```
//!
//! The manual's chapter on the SQL layer: `docs/src/sql.md` in the repository (an mdBook:
//! `mdbook serve docs`).

mod access;
mod alter;
mod control;
mod ddl;
mod dml;
mod engine_status;
pub mod error;
pub mod foreign;
mod functions;
mod information_schema;
mod names;
mod parse;
pub mod process;
mod select;
mod session;
mod settings;
mod shared;
mod show;
mod system_views;
mod table_locks;
pub mod types;
mod vars;
mod write;

pub use control::Peer;
pub use error::SqlError;
pub use parse::{MAX_EXPRESSION_DEPTH, SESSION_STACK};
pub use session::{Response, ResultColumn, Session};
pub use shared::{Counters, Listening, SessionConfig, Shared, TableMeta, Timeouts, User};
pub use types::FieldType;

/// The version string clients see: MySQL 8.0's, and who answers.
pub const VERSION: &str = "8.0.36-waterline";

/// The default connection limit.
pub const MAX_CONNECTIONS_DEFAULT: u32 = 1024;
