//! The two [`SqlConn`]s: waterline's embedded SQL session, in process, and a MySQL-protocol
//! connection (the `mysql` crate) to any server: `waterline serve`, MySQL, MariaDB.

use std::collections::HashMap;

use mysql::prelude::Queryable;
use waterline_server::{Response, Session, Shared, SqlError};
use waterline_txn::{DateTime, Row, Value};

use crate::client::Failure;
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
        let session = Session::new(shared, "root", Some(database)).map_err(sql_failure)?;
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

impl SqlConn for EmbeddedConn {
    fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, Failure> {
        match self.run(sql, params)? {
            Response::Rows { rows, .. } => Ok(rows),
            Response::Done { .. } => Err(Failure::Fatal(format!("no result set: {sql}"))),
        }
    }

    fn exec(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, Failure> {
        match self.run(sql, params)? {
            Response::Done { affected, .. } => Ok(affected),
            Response::Rows { .. } => Err(Failure::Fatal(format!("a result set: {sql}"))),
        }
    }

    fn text(&mut self, sql: &str) -> Result<(), Failure> {
        self.session.execute(sql).map(drop).map_err(sql_failure)
    }
}

impl Drop for EmbeddedConn {
    fn drop(&mut self) {
        self.session.abort();
    }
}

/// A MySQL-protocol connection, with its prepared statements by text.
pub struct MysqlConn {
    conn: mysql::Conn,
    prepared: HashMap<&'static str, mysql::Statement>,
}

fn mysql_failure(e: mysql::Error) -> Failure {
    match e {
        mysql::Error::MySqlError(e) => Failure::from_code(e.code, &e.message),
        other => Failure::Fatal(other.to_string()),
    }
}

fn to_mysql(v: &Value) -> mysql::Value {
    match v {
        Value::Null => mysql::Value::NULL,
        Value::Int(n) => mysql::Value::Int(*n),
        Value::Double(x) => mysql::Value::Double(*x),
        Value::Str(s) => mysql::Value::Bytes(s.as_bytes().to_vec()),
        Value::Decimal(d) => mysql::Value::Bytes(d.to_string().into_bytes()),
        Value::DateTime(t) => mysql::Value::Bytes(t.to_string().into_bytes()),
    }
}

fn from_mysql(v: mysql::Value) -> Value {
    match v {
        mysql::Value::NULL => Value::Null,
        mysql::Value::Int(n) => Value::Int(n),
        mysql::Value::UInt(n) => Value::Int(n as i64),
        mysql::Value::Float(x) => Value::Double(f64::from(x)),
        mysql::Value::Double(x) => Value::Double(x),
        mysql::Value::Bytes(b) => Value::from(String::from_utf8_lossy(&b).into_owned()),
        mysql::Value::Date(y, m, d, hh, mm, ss, _) => DateTime::from_ymd_hms(
            i32::from(y),
            u32::from(m),
            u32::from(d),
            u32::from(hh),
            u32::from(mm),
            u32::from(ss),
        )
        .map_or(Value::Null, Value::DateTime),
        time @ mysql::Value::Time(..) => Value::from(time.as_sql(true)),
    }
}

impl MysqlConn {
    /// Connects to `url` (`mysql://user:password@host:port/database`).
    pub fn connect(url: &str) -> Result<MysqlConn, Failure> {
        let opts = mysql::Opts::from_url(url).map_err(|e| Failure::Fatal(e.to_string()))?;
        let conn = mysql::Conn::new(opts).map_err(mysql_failure)?;
        Ok(MysqlConn {
            conn,
            prepared: HashMap::new(),
        })
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

impl SqlConn for MysqlConn {
    fn query(&mut self, sql: &'static str, params: &[Value]) -> Result<Vec<Row>, Failure> {
        let statement = self.statement(sql)?;
        let params: Vec<mysql::Value> = params.iter().map(to_mysql).collect();
        let rows: Vec<mysql::Row> = self.conn.exec(&statement, params).map_err(mysql_failure)?;
        Ok(rows
            .into_iter()
            .map(|row| row.unwrap().into_iter().map(from_mysql).collect())
            .collect())
    }

    fn exec(&mut self, sql: &'static str, params: &[Value]) -> Result<u64, Failure> {
        let statement = self.statement(sql)?;
        let params: Vec<mysql::Value> = params.iter().map(to_mysql).collect();
        self.conn
            .exec_drop(&statement, params)
            .map_err(mysql_failure)?;
        Ok(self.conn.affected_rows())
    }

    fn text(&mut self, sql: &str) -> Result<(), Failure> {
        self.conn.query_drop(sql).map_err(mysql_failure)
    }
}
