//! What a table is, as MySQL 8.0 shows it: `SHOW CREATE TABLE` (whose text creates the
//! same table again), `DESCRIBE` / `SHOW [FULL] COLUMNS` and `SHOW INDEX`. The mysql
//! client, mysqldump and ORMs' reflection read these.
//!
//! A table's engine is shown as InnoDB, the engine waterline's MVCC row store stands in
//! for, so that the text loads into MySQL too; its character set is utf8mb4 with a binary
//! collation, as waterline compares strings byte by byte.

use sqlparser::ast::ObjectName;
use waterline_txn::{ColumnType, IndexDef, Table, TableSchema, Value};

use crate::error::SqlError;
use crate::session::{Context, Response};
use crate::shared::TableMeta;
use crate::types::type_name;

/// The table `name` names (`db.t` in the database in use), with its DEFAULTs and
/// AUTO_INCREMENT column.
fn table_of(s: &Context<'_>, name: &ObjectName) -> Result<(Table, TableMeta), SqlError> {
    let table = waterline_planner::bind::object_name(name)?;
    let database = s.database_of(&table)?.to_owned();
    let (_, tables) = s.tables();
    let found = (tables.into_iter())
        .find(|t| t.name().eq_ignore_ascii_case(&table))
        .ok_or_else(|| SqlError::no_table(&database, &table))?;
    let meta = s.shared().catalog.meta_of(&s.shared().engine, &found);
    Ok((found, meta))
}

/// A DEFAULT's value as SHOW CREATE TABLE writes it: quoted, as MySQL 8.0 quotes even a
/// number's.
fn default_literal(v: &Value) -> String {
    match crate::types::text(v) {
        None => "NULL".into(),
        Some(text) => literal(&text),
    }
}

fn quoted(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// `SHOW CREATE TABLE name`.
pub(crate) fn show_create(s: &Context<'_>, name: &ObjectName) -> Result<Response, SqlError> {
    let (table, meta) = table_of(s, name)?;
    let text = create_text(s.home(), table.schema(), &meta, table.is_temporary());
    Ok(Response::text(
        &["Table", "Create Table"],
        vec![vec![
            Value::from(crate::names::short(table.name())),
            Value::from(text),
        ]],
    ))
}

/// The CREATE TABLE statement of `schema`.
fn create_text(home: &str, schema: &TableSchema, meta: &TableMeta, temporary: bool) -> String {
    let mut lines = Vec::new();
    for (i, c) in schema.columns.iter().enumerate() {
        let mut line = format!("  {} {}", quoted(&c.name), type_name(c.ty));
        if !c.nullable {
            line.push_str(" NOT NULL");
        }
        match meta.defaults.get(i).cloned().flatten() {
            Some(v) => line.push_str(&format!(" DEFAULT {}", default_literal(&v))),
            None if c.nullable => line.push_str(" DEFAULT NULL"),
            None => {}
        }
        if meta.auto_increment == Some(i) {
            line.push_str(" AUTO_INCREMENT");
        }
        lines.push(line);
    }
    let names = |columns: &[usize]| {
        (columns.iter())
            .map(|&c| quoted(&schema.columns[c].name))
            .collect::<Vec<_>>()
            .join(",")
    };
    if let Some(pk) = &schema.primary_key {
        lines.push(format!("  PRIMARY KEY ({})", names(pk)));
    }
    for IndexDef {
        name,
        columns,
        unique,
    } in &schema.indexes
    {
        let kind = if *unique { "UNIQUE KEY" } else { "KEY" };
        lines.push(format!("  {kind} {} ({})", quoted(name), names(columns)));
    }
    for fk in &meta.foreign_keys {
        lines.push(format!("  {}", fk.clause(home, &schema.name)));
    }
    format!(
        "CREATE {}TABLE {} (\n{}\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
        if temporary { "TEMPORARY " } else { "" },
        quoted(crate::names::short(&schema.name)),
        lines.join(",\n")
    )
}

/// `DESCRIBE name`, `SHOW [FULL] COLUMNS FROM name [FROM db] [LIKE 'pattern']`.
pub(crate) fn show_columns(
    s: &Context<'_>,
    name: &ObjectName,
    full: bool,
    pattern: Option<&str>,
) -> Result<Response, SqlError> {
    let (table, meta) = table_of(s, name)?;
    let schema = table.schema();
    let mut rows = Vec::new();
    for (i, c) in schema.columns.iter().enumerate() {
        if pattern.is_some_and(|p| !crate::vars::like(p, &c.name)) {
            continue;
        }
        let key = key_of(schema, i);
        let default = meta
            .defaults
            .get(i)
            .cloned()
            .flatten()
            .unwrap_or(Value::Null);
        let default = crate::types::text(&default).map_or(Value::Null, Value::from);
        let extra = if meta.auto_increment == Some(i) {
            "auto_increment"
        } else {
            ""
        };
        let null = if c.nullable { "YES" } else { "NO" };
        let ty = Value::from(type_name(c.ty));
        let collation = match c.ty {
            ColumnType::Char(_) | ColumnType::Varchar(_) => Value::from("utf8mb4_bin"),
            _ => Value::Null,
        };
        rows.push(if full {
            vec![
                Value::from(c.name.as_str()),
                ty,
                collation,
                Value::from(null),
                Value::from(key),
                default,
                Value::from(extra),
                Value::from("select,insert,update,references"),
                Value::from(""),
            ]
        } else {
            vec![
                Value::from(c.name.as_str()),
                ty,
                Value::from(null),
                Value::from(key),
                default,
                Value::from(extra),
            ]
        });
    }
    let columns: &[&str] = if full {
        &[
            "Field",
            "Type",
            "Collation",
            "Null",
            "Key",
            "Default",
            "Extra",
            "Privileges",
            "Comment",
        ]
    } else {
        &["Field", "Type", "Null", "Key", "Default", "Extra"]
    };
    Ok(Response::text(columns, rows))
}

/// DESCRIBE's Key of column `c`: PRI in the primary key; UNI first in a one-column UNIQUE
/// index; MUL first in another index (a value may repeat in the column); else empty.
pub(crate) fn key_of(schema: &TableSchema, c: usize) -> &'static str {
    if schema.primary_key.as_ref().is_some_and(|k| k.contains(&c)) {
        return "PRI";
    }
    let first = |unique: bool| {
        (schema.indexes.iter())
            .any(|i| i.columns.first() == Some(&c) && (i.unique && i.columns.len() == 1) == unique)
    };
    if first(true) {
        "UNI"
    } else if first(false) {
        "MUL"
    } else {
        ""
    }
}

/// The rows of SHOW PROCESSLIST and `information_schema.PROCESSLIST`: Id, User, Host, db,
/// Command, Time, State, Info (cut to 100 characters unless `full`, as MySQL does). Host
/// is not known here, and is empty.
pub(crate) fn process_rows(s: &Context<'_>, full: bool) -> Vec<Vec<Value>> {
    (s.shared().controls.processes().into_iter())
        .map(|p| {
            let info = p.info.map(|mut info| {
                if !full && let Some((cut, _)) = info.char_indices().nth(100) {
                    info.truncate(cut);
                }
                info
            });
            let running = info.is_some();
            vec![
                Value::Int(i64::from(p.id)),
                Value::from(p.user),
                Value::from(p.host),
                p.db.map_or(Value::Null, |d| Value::from(&*d)),
                Value::from(p.command),
                Value::Int(p.time as i64),
                Value::from(if running { "executing" } else { "" }),
                info.map_or(Value::Null, Value::from),
            ]
        })
        .collect()
}

/// `SHOW [FULL] PROCESSLIST`.
pub(crate) fn processlist(s: &Context<'_>, full: bool) -> Response {
    Response::text(
        &[
            "Id", "User", "Host", "db", "Command", "Time", "State", "Info",
        ],
        process_rows(s, full),
    )
}

/// A string literal of `text`.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// SHOW INDEX FROM `table` in `db`, as MySQL 8.0 runs it: a query of
/// `information_schema.STATISTICS`, in index order.
pub(crate) fn show_index_query(db: &str, table: &str) -> String {
    format!(
        "SELECT TABLE_NAME AS `Table`, NON_UNIQUE AS Non_unique, INDEX_NAME AS Key_name, \
         SEQ_IN_INDEX AS Seq_in_index, COLUMN_NAME AS Column_name, COLLATION AS `Collation`, \
         CARDINALITY AS Cardinality, SUB_PART AS Sub_part, PACKED AS Packed, \
         NULLABLE AS `Null`, INDEX_TYPE AS Index_type, COMMENT AS `Comment`, \
         INDEX_COMMENT AS Index_comment, IS_VISIBLE AS Visible, EXPRESSION AS Expression \
         FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = {} AND TABLE_NAME = {}",
        literal(db),
        literal(table)
    )
}

/// SHOW TABLE STATUS in `db` [LIKE `pattern`], as MySQL 8.0 runs it: a query of
/// `information_schema.TABLES`.
pub(crate) fn table_status_query(db: &str, pattern: Option<&str>) -> String {
    let like = pattern.map_or_else(String::new, |p| {
        format!(" AND TABLE_NAME LIKE {}", literal(p))
    });
    format!(
        "SELECT TABLE_NAME AS Name, ENGINE AS Engine, VERSION AS Version, \
         ROW_FORMAT AS Row_format, TABLE_ROWS AS `Rows`, AVG_ROW_LENGTH AS Avg_row_length, \
         DATA_LENGTH AS Data_length, MAX_DATA_LENGTH AS Max_data_length, \
         INDEX_LENGTH AS Index_length, DATA_FREE AS Data_free, \
         AUTO_INCREMENT AS `Auto_increment`, CREATE_TIME AS Create_time, \
         UPDATE_TIME AS Update_time, CHECK_TIME AS Check_time, \
         TABLE_COLLATION AS `Collation`, CHECKSUM AS `Checksum`, \
         CREATE_OPTIONS AS Create_options, TABLE_COMMENT AS `Comment` \
         FROM information_schema.TABLES WHERE TABLE_SCHEMA = {}{like} ORDER BY TABLE_NAME",
        literal(db)
    )
}
