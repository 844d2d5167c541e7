//! The [`SqlConn`]s: waterline's embedded SQL session, in process, and a MySQL-protocol
//! connection to any server (`waterline serve`, MySQL, MariaDB), blocking (the `mysql` crate)
//! for clients on OS threads or async (`mysql_async`) for clients that are tokio tasks.

use std::collections::HashMap;
use std::time::Duration;

use mysql::prelude::Queryable as _;
use mysql_async::prelude::Queryable as _;
use waterline_sql::{Response, Session, Shared, SqlError};
use waterline_txn::{DateTime, Row, Value};

use crate::client::{Close, Failure};
use crate::driver::{CONNECT_TIMEOUT, blocking_within};
use crate::sql::SqlConn;

fn sql_failure(e: SqlError) -> Failure {
    Failure::from_code(e.code, &e.message)
}

/// An embedded session, with its prepared statements by text.
pub struct EmbeddedConn {
    session: Session,
    prepared: HashMap<&'static str, u32>,
}

impl EmbeddedConn {
    /// A session of `root` in `database`.
    pub fn new(shared: std::sync::Arc<Shared>, database: &str) -> Result<EmbeddedConn, Failure> {
        let session = Session::connect(shared, "root", Some(database)).map_err(sql_failure)?;
        Ok(EmbeddedConn {
            session,
            prepared: HashMap::new(),
        })
    }

    fn run(&mut self, sql: &'static str, params: &[Value]) -> Result<Response, Failure> {
        let id = match self.prepared.get(sql) {
            Some(id) => *id,
            None => {
                let (id, _, _) = self.session.prepare(sql).map_err(sql_failure)?;
                self.prepared.insert(sql, id);
                id
            }
        };
        self.session
            .execute_prepared(id, params)
            .map_err(sql_failure)
    }
}

// The session's calls are synchronous; only BEGIN may wait (for the engine's admission).
impl SqlConn for EmbeddedConn {
    async fn begin(&mut self) -> Result<(), Failure> {
        self.session.begin_async().await.map_err(sql_failure)
    }

    async fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, Failure> {
        match self.run(sql, params)? {
            Response::Rows { rows, .. } => Ok(rows),
            Response::Done { .. } => Err(Failure::Fatal(format!("no result set: {sql}"))),
        }
    }

    async fn exec(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, Failure> {
        match self.run(sql, params)? {
            Response::Done { affected, .. } => Ok(affected),
            Response::Rows { .. } => Err(Failure::Fatal(format!("a result set: {sql}"))),
        }
    }

    async fn text(&mut self, sql: &str) -> Result<(), Failure> {
        self.session.execute(sql).map(drop).map_err(sql_failure)
    }
}

impl Close for EmbeddedConn {}

impl Drop for EmbeddedConn {
    fn drop(&mut self) {
        self.session.abort();
    }
}

/// A MySQL-protocol connection for a client on an OS thread: the blocking `mysql` crate,
/// one thread per connection as BenchmarkSQL's JDBC clients have, with its prepared
/// statements by text. It is the lighter client (README, "SQL over the MySQL protocol"),
/// and the driver shares the CPUs with the server it measures.
pub struct MysqlConn {
    conn: mysql::Conn,
    prepared: HashMap<&'static str, mysql::Statement>,
}

/// A MySQL-protocol connection for a client that is a tokio task: the `mysql_async` crate.
/// Statements are prepared on first use and kept in the connection's cache, by text.
pub struct MysqlAsyncConn {
    conn: mysql_async::Conn,
}

/// Prepared statements an async connection keeps: room for all of the transactions' and
/// the checks' (about 35). A smaller cache would close a statement when it evicts it, and
/// prepare it again at its next use.
const STATEMENT_CACHE: usize = 64;

fn server_failure(code: u16, message: &str) -> Failure {
    Failure::from_code(code, message)
}

fn mysql_failure(e: mysql::Error) -> Failure {
    match e {
        mysql::Error::MySqlError(e) => server_failure(e.code, &e.message),
        other => Failure::Fatal(other.to_string()),
    }
}

fn mysql_async_failure(e: mysql_async::Error) -> Failure {
    match e {
        mysql_async::Error::Server(e) => server_failure(e.code, &e.message),
        other => Failure::Fatal(other.to_string()),
    }
}

// Both crates' values are `mysql_common`'s (one version for both), so these serve both.

fn to_mysql(v: &Value) -> mysql::Value {
    use mysql::Value as V;
    match v {
        Value::Null => V::NULL,
        Value::Int(n) => V::Int(*n),
        Value::Double(x) => V::Double(*x),
        Value::Str(s) => V::Bytes(s.as_bytes().to_vec()),
        Value::Decimal(d) => V::Bytes(d.to_string().into_bytes()),
        Value::DateTime(t) => V::Bytes(t.to_string().into_bytes()),
        Value::Date(t) => V::Bytes(t.day().into_bytes()),
    }
}

fn from_mysql(v: mysql::Value) -> Value {
    use mysql::Value as V;
    match v {
        V::NULL => Value::Null,
        V::Int(n) => Value::Int(n),
        V::UInt(n) => Value::Int(n as i64),
        V::Float(x) => Value::Double(f64::from(x)),
        V::Double(x) => Value::Double(x),
        V::Bytes(b) => Value::from(String::from_utf8_lossy(&b).into_owned()),
        V::Date(y, m, d, hh, mm, ss, _) => DateTime::from_ymd_hms(
            i32::from(y),
            u32::from(m),
            u32::from(d),
            u32::from(hh),
            u32::from(mm),
            u32::from(ss),
        )
        .map_or(Value::Null, Value::DateTime),
        time @ V::Time(..) => Value::from(time.as_sql(true)),
    }
}

fn to_rows(rows: Vec<mysql::Row>) -> Vec<Row> {
    rows.into_iter()
        .map(|row| row.unwrap().into_iter().map(from_mysql).collect())
        .collect()
}

/// Whether `url` asks to move to the server's Unix-domain socket after connecting over
/// loopback TCP (`?prefer_socket=true`).
///
/// Both MySQL crates do so by default: the driver against MariaDB at `127.0.0.1:3306` ran
/// over `/run/mysqld/mysqld.sock` while against a server without a socket it stayed on TCP,
/// and a comparison of the two compared transports too. The driver connects the way its
/// URL says: TCP to `host:port`, or the socket `?socket=PATH` names.
fn prefers_socket(url: &str) -> bool {
    url.split_once('?').is_some_and(|(_, query)| {
        query
            .split('&')
            .any(|kv| kv.eq_ignore_ascii_case("prefer_socket=true"))
    })
}

/// Checks `url` (`mysql://user:password@host:port/database`) as a connection address.
pub fn check_mysql_url(url: &str) -> Result<(), String> {
    mysql::Opts::from_url(url)
        .map(drop)
        .map_err(|e| e.to_string())
}

impl MysqlConn {
    /// Connects to `url` (`mysql://user:password@host:port/database`), or fails after
    /// [`CONNECT_TIMEOUT`].
    pub fn connect(url: &str) -> Result<MysqlConn, Failure> {
        MysqlConn::connect_within(url, CONNECT_TIMEOUT)
    }

    /// Connects to `url`, or fails once `limit` has passed without a connection (a server
    /// that never sends its greeting would hold the blocking client forever).
    pub fn connect_within(url: &str, limit: Duration) -> Result<MysqlConn, Failure> {
        let opts = mysql::Opts::from_url(url).map_err(|e| Failure::Fatal(e.to_string()))?;
        let opts = mysql::OptsBuilder::from_opts(opts).prefer_socket(prefers_socket(url));
        let conn = blocking_within(limit, move || mysql::Conn::new(opts).map_err(mysql_failure))?;
        Ok(MysqlConn {
            conn,
            prepared: HashMap::new(),
        })
    }

    /// The server's status variables whose names begin with `prefix` (SHOW STATUS, in
    /// the text protocol: MySQL prepares it, waterline does not), by name.
    pub fn status(&mut self, prefix: &str) -> Result<HashMap<String, String>, Failure> {
        let rows: Vec<(String, String)> = self
            .conn
            .query(format!("SHOW STATUS LIKE '{prefix}%'"))
            .map_err(mysql_failure)?;
        Ok(rows.into_iter().collect())
    }

    fn statement(&mut self, sql: &'static str) -> Result<mysql::Statement, Failure> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.conn.prep(sql).map_err(mysql_failure)?;
        self.prepared.insert(sql, statement.clone());
        Ok(statement)
    }
}

// Blocking calls in async methods: this connection is only driven by `OnThread`, whose
// runtime has its thread to itself.
impl SqlConn for MysqlConn {
    async fn begin(&mut self) -> Result<(), Failure> {
        self.text("BEGIN").await
    }

    async fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, Failure> {
        let statement = self.statement(sql)?;
        let params: Vec<mysql::Value> = params.iter().map(to_mysql).collect();
        let rows = self.conn.exec(&statement, params).map_err(mysql_failure)?;
        Ok(to_rows(rows))
    }

    async fn exec(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, Failure> {
        let statement = self.statement(sql)?;
        let params: Vec<mysql::Value> = params.iter().map(to_mysql).collect();
        self.conn
            .exec_drop(&statement, params)
            .map_err(mysql_failure)?;
        Ok(self.conn.affected_rows())
    }

    async fn text(&mut self, sql: &str) -> Result<(), Failure> {
        self.conn.query_drop(sql).map_err(mysql_failure)
    }
}

impl Close for MysqlConn {}

impl MysqlAsyncConn {
    /// Connects to `url` (`mysql://user:password@host:port/database`).
    pub async fn connect(url: &str) -> Result<MysqlAsyncConn, Failure> {
        let opts = mysql_async::Opts::from_url(url).map_err(|e| Failure::Fatal(e.to_string()))?;
        let opts = mysql_async::OptsBuilder::from_opts(opts)
            .stmt_cache_size(STATEMENT_CACHE)
            .prefer_socket(prefers_socket(url));
        let conn = mysql_async::Conn::new(opts)
            .await
            .map_err(mysql_async_failure)?;
        Ok(MysqlAsyncConn { conn })
    }
}

impl SqlConn for MysqlAsyncConn {
    async fn begin(&mut self) -> Result<(), Failure> {
        self.text("BEGIN").await
    }

    async fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, Failure> {
        let params: Vec<mysql_async::Value> = params.iter().map(to_mysql).collect();
        let rows = self
            .conn
            .exec(sql, params)
            .await
            .map_err(mysql_async_failure)?;
        Ok(to_rows(rows))
    }

    async fn exec(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, Failure> {
        let params: Vec<mysql_async::Value> = params.iter().map(to_mysql).collect();
        self.conn
            .exec_drop(sql, params)
            .await
            .map_err(mysql_async_failure)?;
        Ok(self.conn.affected_rows())
    }

    async fn text(&mut self, sql: &str) -> Result<(), Failure> {
        self.conn.query_drop(sql).await.map_err(mysql_async_failure)
    }
}

impl Close for MysqlAsyncConn {
    async fn close(self) {
        // The server may be gone already; there is nothing left to do then.
        let _ = self.conn.disconnect().await;
    }
}
