//! The MySQL protocol, through opensrv-mysql: one [`Backend`] per connection, wrapping a
//! [`Session`]. Every statement runs right on the connection's own thread (engine
//! calls block: a row lock may wait), and every reply is finished, errors included: a handler
//! that returned `Err` would drop the connection.

use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use async_trait::async_trait;

use opensrv_mysql::{
    AsyncMysqlShim, Column, ColumnFlags, ErrorKind, InitWriter, OkResponse, ParamParser,
    QueryResultWriter, RowWriter, StatementMetaWriter, ValueInner,
};
use sha1::{Digest, Sha1};
use tokio::io::AsyncWrite;
use waterline_txn::{Decimal, Value};

use crate::error::SqlError;
use crate::packet::{date, datetime_param, naive_datetime};
use crate::types::text_in;
use crate::writer::Unsent;
use waterline_sql::Shared;
use waterline_sql::{FieldType, Response, ResultColumn, Session};

/// One connection's backend.
pub struct Backend {
    shared: Arc<Shared>,
    statements: Arc<crate::statements::Statements>,
    /// Shared with the packet filter, which runs COM_STMT_EXECUTE on it (`binary.rs`).
    session: Arc<parking_lot::Mutex<Session>>,
    salt: [u8; 20],
    /// The user the handshake authenticated (`authenticate` only has `&self`).
    user: parking_lot::Mutex<String>,
    /// Shared with the connection's writer: the error number opensrv cannot write (see
    /// [`kind`]).
    unsent: Unsent,
}

impl Backend {
    /// A backend with a fresh session (its user and database are set at the handshake); it
    /// tells the packet filter which statements it prepared.
    pub fn new(shared: Arc<Shared>, statements: Arc<crate::statements::Statements>) -> Backend {
        let session =
            Session::connect(Arc::clone(&shared), "", None).expect("no database asked for");
        Backend {
            salt: salt(session.connection_id()),
            statements,
            shared,
            session: Arc::new(parking_lot::Mutex::new(session)),
            user: parking_lot::Mutex::new(String::new()),
            unsent: Unsent::default(),
        }
    }
}

impl Backend {
    /// The slot for an error number opensrv cannot write, for the connection's writer.
    pub(crate) fn unsent(&self) -> Unsent {
        Arc::clone(&self.unsent)
    }

    /// The connection's session, for the packet filter.
    pub fn session(&self) -> Arc<parking_lot::Mutex<Session>> {
        Arc::clone(&self.session)
    }

    fn sync_user(&mut self) {
        let mut session = self.session.lock();
        if session.user().is_empty() {
            let user = self.user.lock().clone();
            session.log_in(&user);
        }
    }
}

/// 20 bytes of scramble, different for every connection (not cryptographic: waterline is a
/// teaching engine on loopback; TLS is not offered).
fn salt(connection: u32) -> [u8; 20] {
    use std::hash::{BuildHasher, Hasher};
    let mut out = [0u8; 20];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(connection);
        h.write_usize(i);
        for (b, x) in chunk.iter_mut().zip(h.finish().to_le_bytes()) {
            // Printable, never NUL or '$', as the handshake wants.
            *b = 0x21 + (x % 0x5e);
            if *b == b'$' {
                *b += 1;
            }
        }
    }
    out
}

/// mysql_native_password: the client sends SHA1(pw) XOR SHA1(salt + SHA1(SHA1(pw))).
pub fn native_password_ok(password: &str, salt: &[u8], token: &[u8]) -> bool {
    if password.is_empty() {
        return token.is_empty();
    }
    let stage1 = Sha1::digest(password.as_bytes());
    let stage2 = Sha1::digest(stage1);
    let mut h = Sha1::new();
    h.update(salt);
    h.update(stage2);
    let mix = h.finalize();
    token.len() == 20
        && token
            .iter()
            .zip(stage1.iter().zip(mix.iter()))
            .all(|(t, (a, b))| *t == a ^ b)
}

/// The error number opensrv is to write for `e`. Its `ErrorKind` knows MySQL 5.7's server
/// errors, 1000 to 1885, and panics on any other number (MySQL 8.0's 3572, `ER_LOCK_NOWAIT`):
/// such an error is written as 1105 and `unsent` keeps its real number and SQLSTATE, which
/// the connection's writer puts back into the packet (see `wire.rs`).
fn kind(e: &SqlError, unsent: &Unsent) -> ErrorKind {
    if (1000..=1885).contains(&e.code) {
        ErrorKind::from(e.code)
    } else {
        *unsent.lock() = Some((e.code, e.state));
        ErrorKind::ER_UNKNOWN_ERROR
    }
}

fn columns(cols: &[ResultColumn]) -> Vec<Column> {
    cols.iter()
        .map(|c| Column {
            table: c.table.to_string(),
            column: c.name.to_string(),
            coltype: wire_type(c.ty),
            colflags: ColumnFlags::from_bits_truncate(c.flags),
        })
        .collect()
}

/// Writes one value in the binary protocol's encoding for column type `ty`.
fn write_binary<W: AsyncWrite + Unpin>(
    w: &mut RowWriter<'_, W>,
    c: &ResultColumn,
    v: &Value,
) -> io::Result<()> {
    // opensrv checks the Rust type against the column's type and sign.
    let unsigned = c.flags & crate::types::UNSIGNED_FLAG != 0;
    match (c.ty, v) {
        (_, Value::Null) => w.write_col(None::<i64>),
        (FieldType::Tiny, Value::Int(n)) if unsigned => w.write_col(*n as u8),
        (FieldType::Tiny, Value::Int(n)) => w.write_col(*n as i8),
        (FieldType::Short, Value::Int(n)) if unsigned => w.write_col(*n as u16),
        (FieldType::Short, Value::Int(n)) => w.write_col(*n as i16),
        (FieldType::Long | FieldType::Int24, Value::Int(n)) if unsigned => w.write_col(*n as u32),
        (FieldType::Long | FieldType::Int24, Value::Int(n)) => {
            w.write_col(i32::try_from(*n).unwrap_or(i32::MAX))
        }
        (FieldType::LongLong, Value::Int(n)) if unsigned => w.write_col(*n as u64),
        (FieldType::LongLong, Value::Int(n)) => w.write_col(*n),
        (FieldType::Double, other) => w.write_col(other.as_f64().unwrap_or(0.0)),
        (FieldType::DateTime, Value::DateTime(t)) => match naive_datetime(t) {
            Some(d) => w.write_col(d),
            None => w.write_col(None::<i64>),
        },
        (FieldType::Date, Value::Date(t)) => match naive_datetime(t) {
            Some(d) => w.write_col(d.date()),
            None => w.write_col(None::<i64>),
        },
        (_, other) => w.write_col(crate::types::text(other).unwrap_or_default()),
    }
}

async fn reply<W: AsyncWrite + Send + Unpin>(
    result: Result<Response, SqlError>,
    results: QueryResultWriter<'_, W>,
    binary: bool,
    unsent: &Unsent,
) -> io::Result<()> {
    match result {
        Err(e) => results.error(kind(&e, unsent), e.message.as_bytes()).await,
        Ok(Response::Done {
            affected,
            last_insert_id,
            ..
        }) => {
            // No info text: opensrv encodes it by the client's flags alone, and a client that
            // asked for session tracking the server does not offer cannot parse it. The status
            // flags and warning count are written in by the connection's writer (`wire.rs`).
            let ok = OkResponse {
                affected_rows: affected,
                last_insert_id,
                ..OkResponse::default()
            };
            results.completed(ok).await
        }
        Ok(Response::Rows {
            columns: cols,
            rows,
        }) => {
            let wire = columns(&cols);
            let mut w = results.start(&wire).await?;
            for row in &rows {
                for (c, v) in cols.iter().zip(row) {
                    if binary {
                        write_binary(&mut w, c, v)?;
                    } else {
                        w.write_col(text_in(c.decimals, v))?;
                    }
                }
                w.end_row().await?;
            }
            w.finish().await
        }
    }
}

/// A parameter of COM_STMT_EXECUTE as a value.
fn param(v: opensrv_mysql::Value<'_>) -> Value {
    match v.into_inner() {
        ValueInner::NULL => Value::Null,
        ValueInner::Int(n) => Value::Int(n),
        ValueInner::UInt(n) => i64::try_from(n).map_or_else(
            |_| Value::Decimal(Decimal::new(i128::from(n), 0).expect("scale 0")),
            Value::Int,
        ),
        ValueInner::Double(x) => Value::Double(x),
        ValueInner::Bytes(b) => Value::from(String::from_utf8_lossy(b).into_owned()),
        ValueInner::Datetime(b) => datetime_param(b),
        ValueInner::Date(b) => date(b),
        ValueInner::Time(_) => Value::Null,
    }
}

#[async_trait]
impl<W: AsyncWrite + Send + Unpin> AsyncMysqlShim<W> for Backend {
    type Error = io::Error;

    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    fn connect_id(&self) -> u32 {
        self.session.lock().connection_id()
    }

    fn salt(&self) -> [u8; 20] {
        self.salt
    }

    async fn authenticate(
        &self,
        _plugin: &str,
        username: &[u8],
        salt: &[u8],
        auth_data: &[u8],
    ) -> bool {
        let name = String::from_utf8_lossy(username);
        let known = self.shared.config.users.iter().find(|u| u.name == name);
        let ok = known.is_some_and(|u| native_password_ok(&u.password, salt, auth_data));
        if ok {
            *self.user.lock() = name.into_owned();
        }
        ok
    }

    async fn on_prepare<'a>(
        &'a mut self,
        query: &'a str,
        info: StatementMetaWriter<'a, W>,
    ) -> io::Result<()> {
        self.sync_user();
        let prepared = self.session.lock().prepare(query);
        match prepared {
            Err(e) => {
                info.error(kind(&e, &self.unsent), e.message.as_bytes())
                    .await
            }
            Ok((id, params, cols)) => {
                self.statements.prepared(id, params);
                let params: Vec<Column> = (0..params)
                    .map(|_| Column {
                        table: String::new(),
                        column: "?".into(),
                        coltype: wire_type(FieldType::VarString),
                        colflags: ColumnFlags::empty(),
                    })
                    .collect();
                info.reply(id, &params, &columns(&cols)).await
            }
        }
    }

    async fn on_execute<'a>(
        &'a mut self,
        id: u32,
        params: ParamParser<'a>,
        results: QueryResultWriter<'a, W>,
    ) -> io::Result<()> {
        let values: Vec<Value> = params.into_iter().map(|p| param(p.value)).collect();
        let result = self.session.lock().execute_prepared(id, &values);
        reply(result, results, true, &self.unsent).await
    }

    async fn on_close<'a>(&'a mut self, id: u32)
    where
        W: 'async_trait,
    {
        self.session.lock().close_prepared(id);
        self.statements.closed(id);
    }

    async fn on_query<'a>(
        &'a mut self,
        query: &'a str,
        results: QueryResultWriter<'a, W>,
    ) -> io::Result<()> {
        self.sync_user();
        let result = self.session.lock().execute(query);
        reply(result, results, false, &self.unsent).await
    }

    async fn on_init<'a>(
        &'a mut self,
        database: &'a str,
        writer: InitWriter<'a, W>,
    ) -> io::Result<()> {
        let selected = self.session.lock().select_database(database);
        match selected {
            Ok(()) => writer.ok().await,
            Err(e) => {
                writer
                    .error(kind(&e, &self.unsent), e.message.as_bytes())
                    .await
            }
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        // A client gone mid-transaction: roll back, free its locks.
        self.session.lock().abort();
        self.shared
            .counters
            .threads_connected
            .fetch_sub(1, Ordering::Relaxed);
    }
}

/// opensrv's name for a result column's type.
fn wire_type(ty: FieldType) -> opensrv_mysql::ColumnType {
    use opensrv_mysql::ColumnType as Wire;
    match ty {
        FieldType::Tiny => Wire::MYSQL_TYPE_TINY,
        FieldType::Short => Wire::MYSQL_TYPE_SHORT,
        FieldType::Int24 => Wire::MYSQL_TYPE_INT24,
        FieldType::Long => Wire::MYSQL_TYPE_LONG,
        FieldType::LongLong => Wire::MYSQL_TYPE_LONGLONG,
        FieldType::NewDecimal => Wire::MYSQL_TYPE_NEWDECIMAL,
        FieldType::Double => Wire::MYSQL_TYPE_DOUBLE,
        FieldType::DateTime => Wire::MYSQL_TYPE_DATETIME,
        FieldType::Date => Wire::MYSQL_TYPE_DATE,
        FieldType::String => Wire::MYSQL_TYPE_STRING,
        FieldType::VarString => Wire::MYSQL_TYPE_VAR_STRING,
    }
}
