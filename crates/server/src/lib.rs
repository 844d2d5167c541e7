//! # waterline-server: SQL and the MySQL protocol
//!
//! A [`Session`] parses a statement with sqlparser (MySQL dialect), plans it with
//! `waterline-planner` over the session's transaction, and executes it over `waterline-txn`.
//! [`Server`] speaks the MySQL protocol through opensrv-mysql, so the clients people already
//! use (the `mysql`/`mariadb` CLI, PyMySQL, the Rust `mysql` crate, sysbench) connect to it.
//!
//! ```
//! use std::sync::Arc;
//! use waterline_server::{Response, Session, SessionConfig, Shared};
//! use waterline_txn::{Engine, EngineConfig, Value};
//!
//! let engine = Arc::new(Engine::open(EngineConfig::default())?);
//! let shared = Shared::new(engine, SessionConfig::default());
//! let mut session = Session::new(shared, "root", Some("waterline"))?;
//! session.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")?;
//! session.execute("INSERT INTO t VALUES (1, 'one'), (2, 'two')")?;
//! let Response::Rows { rows, .. } = session.execute("SELECT v FROM t WHERE id = 2")? else { panic!() };
//! assert_eq!(rows, vec![vec![Value::from("two")]]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod access;
mod binary;
mod control;
mod ddl;
mod dml;
pub mod error;
mod functions;
mod parse;
mod perf_schema;
pub mod protocol;
mod select;
mod server;
mod session;
mod shared;
mod socket;
mod status;
pub mod types;
mod vars;
pub mod wire;
mod writer;

pub use error::SqlError;
pub use parse::MAX_OPERATOR_CHAIN;
pub use server::Server;
pub use session::{Response, ResultColumn, Session};
pub use shared::{Counters, Listening, SessionConfig, Shared, TableMeta, Timeouts, User};
pub use socket::Socket;

/// The version string clients see: MySQL 8.0's protocol, and who answers.
pub const VERSION: &str = "8.0.36-waterline";

/// The default connection limit.
pub const MAX_CONNECTIONS_DEFAULT: u32 = 1024;
