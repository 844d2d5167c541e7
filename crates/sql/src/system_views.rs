//! The system tables waterline has, read as any table is (WHERE, ORDER BY, aggregates) over
//! a snapshot put in a temporary table of MySQL's columns:
//! `information_schema.OPTIMIZER_TRACE` (the session's last trace, `session/trace.rs`), and
//! `performance_schema.data_locks` and `performance_schema.data_lock_waits`, MySQL 8.0's
//! views of the lock table: which transaction holds or waits for which row and gap lock, in
//! InnoDB's words (`X,REC_NOT_GAP`, `X,GAP`, `X` for a next-key lock, `X,GAP,INSERT_INTENTION`
//! for a waiting insert), and who waits for whom.
//!
//! A query that reads one of them gets a snapshot of the engine's lock table
//! ([`waterline_txn::Engine::data_locks`]) put in a temporary table of MySQL's columns, and
//! then runs as any SELECT over it (WHERE, ORDER BY, aggregates), in a transaction of its
//! own that sees the snapshot whatever the session's transaction has seen. Columns MySQL
//! fills from the thread and event tables (THREAD_ID, EVENT_ID, OBJECT_INSTANCE_BEGIN) are
//! NULL; the table-level intention locks InnoDB lists do not exist here.

use sqlparser::ast::{self, ObjectNamePart, SetExpr, TableFactor};
use waterline_txn::{
    Column, ColumnType, DataLock, DataLockWait, Isolation, Key, Table, TableSchema, Value,
};

use crate::error::SqlError;
use crate::session::{Response, Session};

const PERFORMANCE_SCHEMA: &str = "performance_schema";
const INFORMATION_SCHEMA: &str = "information_schema";

/// A system table waterline has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum View {
    DataLocks,
    DataLockWaits,
    OptimizerTrace,
}

impl View {
    /// The table `name` of system database `schema`, if waterline has it.
    fn find(schema: &str, name: &str) -> Option<View> {
        let schema = schema.to_ascii_lowercase();
        match (schema.as_str(), name.to_ascii_lowercase().as_str()) {
            (PERFORMANCE_SCHEMA, "data_locks") => Some(View::DataLocks),
            (PERFORMANCE_SCHEMA, "data_lock_waits") => Some(View::DataLockWaits),
            (INFORMATION_SCHEMA, "optimizer_trace") => Some(View::OptimizerTrace),
            _ => None,
        }
    }

    /// The database it is in.
    fn schema(self) -> &'static str {
        match self {
            View::DataLocks | View::DataLockWaits => PERFORMANCE_SCHEMA,
            View::OptimizerTrace => INFORMATION_SCHEMA,
        }
    }
}

/// The system table `q` reads, if it names one (`performance_schema.data_locks`; there is
/// no database of that name to `USE` yet). A name in a system database that is not one of
/// them is MySQL's 1146, and reading one together with other tables is refused.
pub(crate) fn view_of(q: &ast::Query, database: Option<&str>) -> Result<Option<View>, SqlError> {
    let SetExpr::Select(select) = q.body.as_ref() else {
        return Ok(None);
    };
    let factors: Vec<&TableFactor> = select
        .from
        .iter()
        .flat_map(|t| std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)))
        .collect();
    let mut views = Vec::new();
    for factor in &factors {
        let TableFactor::Table { name, .. } = factor else {
            continue;
        };
        let parts: Vec<&str> = name
            .0
            .iter()
            .filter_map(|p| match p {
                ObjectNamePart::Identifier(id) => Some(id.value.as_str()),
                _ => None,
            })
            .collect();
        let system = |s: &str| {
            [PERFORMANCE_SCHEMA, INFORMATION_SCHEMA]
                .iter()
                .any(|d| d.eq_ignore_ascii_case(s))
        };
        let (schema, table) = match parts[..] {
            [schema, table] if system(schema) => (schema, table),
            [table] if database.is_some_and(system) => (database.unwrap_or_default(), table),
            _ => continue,
        };
        views.push(View::find(schema, table).ok_or_else(|| {
            SqlError::new(
                1146,
                "42S02",
                format!(
                    "Table '{}.{table}' doesn't exist",
                    schema.to_ascii_lowercase()
                ),
            )
        })?);
    }
    match (views.len(), factors.len()) {
        (0, _) => Ok(None),
        (1, 1) => Ok(Some(views[0])),
        _ => Err(SqlError::unsupported(
            "a query that reads a system table together with another table",
        )),
    }
}

/// Runs `q`, which reads `view`, over a snapshot of it.
pub(crate) fn read(
    s: &mut Session,
    q: &ast::Query,
    view: View,
    params: &[Value],
) -> Result<Response, SqlError> {
    let engine = std::sync::Arc::clone(&s.shared().engine);
    let (schema, rows) = match view {
        View::DataLocks => {
            let (locks, _) = engine.data_locks();
            (data_locks_schema(), lock_rows(s, &engine.tables(), locks))
        }
        View::DataLockWaits => (data_lock_waits_schema(), wait_rows(engine.data_locks().1)),
        View::OptimizerTrace => (optimizer_trace_schema(), trace_rows(s)),
    };
    let table = engine.create_temporary_table(schema)?;
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    for row in rows {
        trx.insert(&table, row)?;
    }
    let tables = [table];
    let database = view.schema();
    let bound = crate::select::bind_in(s, &tables, q, Some(database), None, &[])?;
    let response = crate::select::read(s, q, &bound, params, (database, None), &mut trx);
    trx.rollback();
    // Reading the trace is not a statement to trace.
    s.discard_trace();
    response
}

/// MySQL 8.0's columns of `OPTIMIZER_TRACE` (its TRACE is JSON, this one lines of text).
fn optimizer_trace_schema() -> TableSchema {
    TableSchema::new(
        "OPTIMIZER_TRACE",
        vec![
            varchar("QUERY", 16_777_215),
            varchar("TRACE", 16_777_215),
            Column::nullable("MISSING_BYTES_BEYOND_MAX_MEM_SIZE", ColumnType::Int),
            Column::nullable("INSUFFICIENT_PRIVILEGES", ColumnType::TinyInt),
        ],
    )
}

/// The session's last trace, if any: one row.
fn trace_rows(s: &Session) -> Vec<Vec<Value>> {
    s.last_trace()
        .map(|(query, trace)| {
            vec![
                Value::from(query.as_str()),
                Value::from(trace.as_str()),
                Value::Int(0),
                Value::Int(0),
            ]
        })
        .into_iter()
        .collect()
}

fn varchar(name: &str, n: u32) -> Column {
    Column::nullable(name, ColumnType::Varchar(n))
}

fn bigint(name: &str) -> Column {
    Column::nullable(name, ColumnType::BigInt)
}

/// MySQL 8.0's columns of `data_locks`.
fn data_locks_schema() -> TableSchema {
    TableSchema::new(
        "data_locks",
        vec![
            varchar("ENGINE", 32),
            varchar("ENGINE_LOCK_ID", 128),
            bigint("ENGINE_TRANSACTION_ID"),
            bigint("THREAD_ID"),
            bigint("EVENT_ID"),
            varchar("OBJECT_SCHEMA", 64),
            varchar("OBJECT_NAME", 64),
            varchar("PARTITION_NAME", 64),
            varchar("SUBPARTITION_NAME", 64),
            varchar("INDEX_NAME", 64),
            bigint("OBJECT_INSTANCE_BEGIN"),
            varchar("LOCK_TYPE", 32),
            varchar("LOCK_MODE", 32),
            varchar("LOCK_STATUS", 32),
            varchar("LOCK_DATA", 8192),
        ],
    )
}

/// MySQL 8.0's columns of `data_lock_waits`.
fn data_lock_waits_schema() -> TableSchema {
    let mut columns = vec![varchar("ENGINE", 32)];
    for side in ["REQUESTING", "BLOCKING"] {
        columns.extend([
            varchar(&format!("{side}_ENGINE_LOCK_ID"), 128),
            bigint(&format!("{side}_ENGINE_TRANSACTION_ID")),
            bigint(&format!("{side}_THREAD_ID")),
            bigint(&format!("{side}_EVENT_ID")),
            bigint(&format!("{side}_OBJECT_INSTANCE_BEGIN")),
        ]);
    }
    TableSchema::new("data_lock_waits", columns)
}

/// A key as LOCK_DATA shows it: its values, strings quoted, separated by commas.
fn lock_data(key: Option<&Key>) -> String {
    match key {
        None => "supremum pseudo-record".to_owned(),
        Some(key) => key
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn lock_rows(s: &Session, tables: &[Table], locks: Vec<DataLock>) -> Vec<Vec<Value>> {
    let database = s.database_name().to_owned();
    locks
        .into_iter()
        .map(|lock| {
            let table = tables.iter().find(|t| t.id() == lock.table);
            let name = table.map_or_else(|| "#temporary".to_owned(), |t| t.name().to_owned());
            let index = match lock.index {
                None => "PRIMARY".to_owned(),
                Some(i) => table
                    .and_then(|t| t.schema().indexes.get(i))
                    .map_or_else(|| i.to_string(), |d| d.name.clone()),
            };
            vec![
                Value::from("waterline"),
                Value::from(lock.id.as_str()),
                Value::Int(lock.trx.get() as i64),
                Value::Null,
                Value::Null,
                Value::from(database.as_str()),
                Value::from(name.as_str()),
                Value::Null,
                Value::Null,
                Value::from(index.as_str()),
                Value::Null,
                Value::from("RECORD"),
                Value::from(lock.mode.as_str()),
                Value::from(if lock.waiting { "WAITING" } else { "GRANTED" }),
                Value::from(lock_data(lock.key.as_ref()).as_str()),
            ]
        })
        .collect()
}

fn wait_rows(waits: Vec<DataLockWait>) -> Vec<Vec<Value>> {
    waits
        .into_iter()
        .map(|wait| {
            let mut row = vec![Value::from("waterline")];
            for (id, trx) in [wait.requesting, wait.blocking] {
                row.extend([
                    Value::from(id.as_str()),
                    Value::Int(trx.get() as i64),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]);
            }
            row
        })
        .collect()
}
