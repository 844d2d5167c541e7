//! The system tables waterline has, read as any table is (joins, subqueries, WHERE, ORDER
//! BY, aggregates) over a snapshot put in a temporary table of MySQL's columns:
//! `information_schema`'s tables of the catalog (`information_schema.rs`),
//! `information_schema.OPTIMIZER_TRACE` (the session's last trace, `session/trace.rs`), and
//! `performance_schema.data_locks` and `performance_schema.data_lock_waits`, MySQL 8.0's
//! views of the lock table ([`waterline_txn::Engine::data_locks`]): which transaction holds
//! or waits for which row and gap lock, in InnoDB's words (`X,REC_NOT_GAP`, `X,GAP`, `X` for
//! a next-key lock, `X,GAP,INSERT_INTENTION` for a waiting insert), and who waits for whom.
//! Columns MySQL fills from the thread and event tables (THREAD_ID, EVENT_ID,
//! OBJECT_INSTANCE_BEGIN) are NULL; the table-level intention locks InnoDB lists do not
//! exist here.

use std::ops::ControlFlow;

use sqlparser::ast::{self, Ident, ObjectName, ObjectNamePart, Statement, TableFactor};
use waterline_txn::{
    Column, ColumnType, DataLock, DataLockWait, Isolation, Key, Table, TableSchema, Value,
};

use crate::error::SqlError;
use crate::information_schema::Catalog;
use crate::session::{Context, Response};
use waterline_planner::walk;

const PERFORMANCE_SCHEMA: &str = "performance_schema";
const INFORMATION_SCHEMA: &str = "information_schema";

/// A system table waterline has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum View {
    DataLocks,
    DataLockWaits,
    OptimizerTrace,
    /// One of `information_schema`'s tables of the catalog.
    Catalog(Catalog),
}

impl View {
    /// The table `name` of system database `schema`, if waterline has it.
    fn find(schema: &str, name: &str) -> Option<View> {
        let schema = schema.to_ascii_lowercase();
        match (schema.as_str(), name.to_ascii_lowercase().as_str()) {
            (PERFORMANCE_SCHEMA, "data_locks") => Some(View::DataLocks),
            (PERFORMANCE_SCHEMA, "data_lock_waits") => Some(View::DataLockWaits),
            (INFORMATION_SCHEMA, "optimizer_trace") => Some(View::OptimizerTrace),
            (INFORMATION_SCHEMA, other) => Catalog::find(other).map(View::Catalog),
            _ => None,
        }
    }

    /// Its columns and rows, now.
    fn contents(
        self,
        s: &Context<'_>,
        engine: &waterline_txn::Engine,
    ) -> (Vec<Column>, Vec<Vec<Value>>) {
        match self {
            View::DataLocks => {
                let (locks, _) = engine.data_locks();
                (data_locks_columns(), lock_rows(s, &engine.tables(), locks))
            }
            View::DataLockWaits => (data_lock_waits_columns(), wait_rows(engine.data_locks().1)),
            View::OptimizerTrace => (optimizer_trace_columns(), trace_rows(s)),
            View::Catalog(catalog) => catalog.contents(s),
        }
    }
}

fn is_system(schema: &str) -> bool {
    [PERFORMANCE_SCHEMA, INFORMATION_SCHEMA]
        .iter()
        .any(|d| d.eq_ignore_ascii_case(schema))
}

/// `(schema, table)` if `name` is a table of a system database: two identifiers, the first
/// `information_schema` or `performance_schema` in any case.
fn in_system_database(name: &ObjectName) -> Option<(&str, &str)> {
    let mut parts = name.0.iter().filter_map(|p| match p {
        ObjectNamePart::Identifier(id) => Some(id.value.as_str()),
        _ => None,
    });
    match (parts.next(), parts.next(), parts.next()) {
        (Some(schema), Some(table), None) if is_system(schema) => Some((schema, table)),
        _ => None,
    }
}

/// Renames, in a statement, each system table it reads to the temporary table that will
/// hold it: `information_schema.TABLES` becomes the table `information_schema.tables`
/// (one name, which no `CREATE TABLE` gives without quoting), with the alias `TABLES` if
/// it had none, so that `TABLES.TABLE_NAME` still names its column.
#[derive(Default)]
struct Rename {
    found: Vec<(View, String)>,
}

impl ast::VisitorMut for Rename {
    type Break = SqlError;

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<SqlError> {
        let TableFactor::Table { name, alias, .. } = factor else {
            return ControlFlow::Continue(());
        };
        let Some((schema, table)) = in_system_database(name) else {
            return ControlFlow::Continue(());
        };
        let Some(view) = View::find(schema, table) else {
            return ControlFlow::Break(SqlError::new(
                1146,
                "42S02",
                format!(
                    "Table '{}.{table}' doesn't exist",
                    schema.to_ascii_lowercase()
                ),
            ));
        };
        let internal = format!("{}.{}", schema, table).to_ascii_lowercase();
        if alias.is_none() {
            *alias = Some(ast::TableAlias {
                explicit: true,
                name: Ident::new(table),
                columns: Vec::new(),
                at: None,
            });
        }
        *name = ObjectName::from(vec![Ident::new(internal.clone())]);
        if !self.found.iter().any(|(_, n)| *n == internal) {
            self.found.push((view, internal));
        }
        ControlFlow::Continue(())
    }
}

/// Stops at the first table named in a system database (the tables [`Rename`] looks at).
struct NamesSystemTable;

impl ast::Visitor for NamesSystemTable {
    type Break = ();

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        match factor {
            TableFactor::Table { name, .. } if in_system_database(name).is_some() => {
                ControlFlow::Break(())
            }
            _ => ControlFlow::Continue(()),
        }
    }
}

/// A statement whose system tables are renamed, and each of them with its new name.
type Renamed = (Statement, Vec<(View, String)>);

/// The system tables `statement` reads (in FROM, joins and subqueries, named with their
/// database: there is no system database to `USE`), and the statement with each renamed
/// to the table that will hold it; `None` if it reads none. A name in a system database
/// that is not one of them is MySQL's 1146.
fn renamed(statement: &Statement) -> Result<Option<Renamed>, SqlError> {
    // Nearly every statement reads none: look before copying the statement to rename it.
    if walk::visit(statement, &mut NamesSystemTable).is_continue() {
        return Ok(None);
    }
    let mut copy = statement.clone();
    let mut rename = Rename::default();
    if let ControlFlow::Break(e) = walk::visit_mut(&mut copy, &mut rename) {
        return Err(e);
    }
    Ok((!rename.found.is_empty()).then_some((copy, rename.found)))
}

/// Whether `statement` reads a system table (a prepared statement may not: 1295).
pub(crate) fn reads_system_table(statement: &Statement) -> Result<bool, SqlError> {
    Ok(renamed(statement)?.is_some())
}

/// Runs `statement` if it reads system tables: each is made now, put in a temporary table of
/// MySQL's columns, and the query runs as any SELECT over them (joins, subqueries, WHERE,
/// ORDER BY, aggregates), in a transaction of its own that sees them whatever the
/// session's transaction has seen (other tables it reads are read as of now too). `None`
/// if it reads none.
pub(crate) fn read(
    s: &mut Context<'_>,
    statement: &Statement,
    params: &[Value],
) -> Result<Option<Response>, SqlError> {
    let Some((rewritten, views)) = renamed(statement)? else {
        return Ok(None);
    };
    if !matches!(rewritten, Statement::Query(_)) {
        return Err(SqlError::unsupported(
            "a statement other than SELECT that reads a system table",
        ));
    }
    let engine = std::sync::Arc::clone(&s.shared().engine);
    let mut made = Vec::new();
    let mut filled = engine.begin_with(Isolation::ReadCommitted);
    for (view, name) in &views {
        let (columns, rows) = view.contents(s, &engine);
        let table = engine.create_temporary_table(TableSchema::new(name.as_str(), columns))?;
        for row in rows {
            filled.insert(&table, row)?;
        }
        made.push(table);
    }
    filled.commit()?;
    for table in &made {
        s.add_temporary(table.clone());
    }
    let response =
        s.in_own_transaction(INFORMATION_SCHEMA, |s| s.run_statement(&rewritten, params));
    for (_, name) in &views {
        s.drop_temporary(name);
    }
    // Reading the trace is not a statement to trace.
    if views.iter().any(|(v, _)| *v == View::OptimizerTrace) {
        s.discard_trace();
    }
    response.map(Some)
}

/// MySQL 8.0's columns of `OPTIMIZER_TRACE` (its TRACE is JSON, this one lines of text).
fn optimizer_trace_columns() -> Vec<Column> {
    vec![
        varchar("QUERY", 16_777_215),
        varchar("TRACE", 16_777_215),
        Column::nullable("MISSING_BYTES_BEYOND_MAX_MEM_SIZE", ColumnType::Int),
        Column::nullable("INSUFFICIENT_PRIVILEGES", ColumnType::TinyInt),
    ]
}

/// The session's last trace, if any: one row.
fn trace_rows(s: &Context<'_>) -> Vec<Vec<Value>> {
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
fn data_locks_columns() -> Vec<Column> {
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
    ]
}

/// MySQL 8.0's columns of `data_lock_waits`.
fn data_lock_waits_columns() -> Vec<Column> {
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
    columns
}

/// A key as LOCK_DATA shows it: its values, strings quoted, separated by commas.
pub(crate) fn lock_data(key: Option<&Key>) -> String {
    match key {
        None => "supremum pseudo-record".to_owned(),
        Some(key) => key
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The table and index a lock is on, by name (`#temporary` for a session's temporary
/// table, which is in no catalog).
pub(crate) fn lock_place(tables: &[Table], lock: &DataLock) -> (String, String) {
    let table = tables.iter().find(|t| t.id() == lock.table);
    let name = table.map_or_else(|| "#temporary".to_owned(), |t| t.name().to_owned());
    let index = match lock.index {
        None => "PRIMARY".to_owned(),
        Some(i) => table
            .and_then(|t| t.schema().indexes.get(i))
            .map_or_else(|| i.to_string(), |d| d.name.clone()),
    };
    (name, index)
}

fn lock_rows(s: &Context<'_>, tables: &[Table], locks: Vec<DataLock>) -> Vec<Vec<Value>> {
    let home = s.home();
    locks
        .into_iter()
        .map(|lock| {
            let (name, index) = lock_place(tables, &lock);
            let (database, name) = crate::names::split(home, &name);
            vec![
                Value::from("waterline"),
                Value::from(lock.id.as_str()),
                Value::Int(lock.trx.get() as i64),
                Value::Null,
                Value::Null,
                Value::from(database),
                Value::from(name),
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
