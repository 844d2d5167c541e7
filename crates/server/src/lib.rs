//! # waterline-server: the MySQL protocol
//!
//! [`Server`] puts [`waterline_sql`] sessions on the MySQL protocol through opensrv-mysql,
//! so the clients people already use (the `mysql`/`mariadb` CLI, PyMySQL, the Rust `mysql`
//! crate, sysbench, Connector/J) connect to it. It maps the sessions' results onto the wire
//! (text and binary rows, status flags, warnings) and answers the commands opensrv does not
//! know. SQL itself is `waterline-sql`'s; this crate re-exports its session types, so a
//! server user needs one import.
//!
//! The manual's chapter on the SQL layer and the MySQL protocol: `docs/src/sql.md` in the repository (an mdBook:
//! `mdbook serve docs`).

mod binary;
mod packet;
mod panics;
mod pool;
pub mod protocol;
mod server;
mod socket;
mod statements;
mod status;
pub mod wire;
mod writer;

pub use pool::{HighPrioMode, PoolConfig};
pub use server::Server;
pub use socket::Socket;
pub use waterline_sql::{
    Counters, FieldType, Listening, MAX_CONNECTIONS_DEFAULT, MAX_EXPRESSION_DEPTH, Response,
    ResultColumn, Session, SessionConfig, Shared, SqlError, TableMeta, Timeouts, User, VERSION,
    error, types,
};
