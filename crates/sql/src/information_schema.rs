//! `information_schema`'s tables of the catalog, in MySQL 8.0's columns: SCHEMATA, TABLES,
//! COLUMNS, STATISTICS, TABLE_CONSTRAINTS, KEY_COLUMN_USAGE, REFERENTIAL_CONSTRAINTS,
//! PARTITIONS (a table is one partition of no name, as MySQL lists a table not
//! partitioned), PROCESSLIST (what each session is doing), INNODB_TRX (each session's open
//! transaction: its trx id once it has written or locked, whether it waits for a lock and
//! for which, how many locks it holds), and FILES, TRIGGERS, ROUTINES, VIEWS and EVENTS without rows (waterline
//! has no tablespace files, triggers, stored routines, views or events; mysqldump asks). Each is made from the
//! catalog when a query reads it (`system_views.rs` runs the query).
//!
//! A table is listed in its database, by its own name (`names.rs`). Sizes are the engine's: TABLE_ROWS and CARDINALITY are the planner's statistics (as InnoDB's are
//! estimates), lengths are not kept and are 0.

use waterline_txn::{Column, ColumnType, Table, TableSchema, Value};

use waterline_planner::own_name;

use crate::foreign::{Action, ForeignKey};
use crate::session::Context;
use crate::shared::TableMeta;

/// A table of `information_schema` made from the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Catalog {
    Schemata,
    Tables,
    Columns,
    Statistics,
    TableConstraints,
    KeyColumnUsage,
    ReferentialConstraints,
    Partitions,
    Processlist,
    InnodbTrx,
    Files,
    Triggers,
    Routines,
    Views,
    Events,
}

impl Catalog {
    /// The table named `name` (any case).
    pub(crate) fn find(name: &str) -> Option<Catalog> {
        Some(match name.to_ascii_uppercase().as_str() {
            "SCHEMATA" => Catalog::Schemata,
            "TABLES" => Catalog::Tables,
            "COLUMNS" => Catalog::Columns,
            "STATISTICS" => Catalog::Statistics,
            "TABLE_CONSTRAINTS" => Catalog::TableConstraints,
            "KEY_COLUMN_USAGE" => Catalog::KeyColumnUsage,
            "REFERENTIAL_CONSTRAINTS" => Catalog::ReferentialConstraints,
            "PARTITIONS" => Catalog::Partitions,
            "PROCESSLIST" => Catalog::Processlist,
            "INNODB_TRX" => Catalog::InnodbTrx,
            "FILES" => Catalog::Files,
            "TRIGGERS" => Catalog::Triggers,
            "ROUTINES" => Catalog::Routines,
            "VIEWS" => Catalog::Views,
            "EVENTS" => Catalog::Events,
            _ => return None,
        })
    }

    /// Its columns and rows, now.
    pub(crate) fn contents(self, s: &Context<'_>) -> (Vec<Column>, Vec<Vec<Value>>) {
        let listed = Listed::of(s);
        match self {
            Catalog::Schemata => schemata(&listed),
            Catalog::Tables => tables(&listed),
            Catalog::Columns => columns(&listed),
            Catalog::Statistics => statistics(&listed),
            Catalog::TableConstraints => table_constraints(&listed),
            Catalog::KeyColumnUsage => key_column_usage(&listed),
            Catalog::ReferentialConstraints => referential_constraints(&listed),
            Catalog::Partitions => partitions(&listed),
            Catalog::Processlist => processlist(s),
            Catalog::InnodbTrx => innodb_trx(s),
            Catalog::Files => files(),
            Catalog::Triggers => none(TRIGGERS),
            Catalog::Routines => none(ROUTINES),
            Catalog::Views => none(VIEWS),
            Catalog::Events => none(EVENTS),
        }
    }
}

/// The databases, and the base tables with their metadata.
struct Listed {
    home: String,
    databases: Vec<String>,
    tables: Vec<(Table, TableMeta)>,
}

impl Listed {
    fn of(s: &Context<'_>) -> Listed {
        let shared = s.shared();
        let mut tables: Vec<(Table, TableMeta)> = (shared.engine.tables().into_iter())
            .map(|t| {
                let meta = shared.catalog.meta_of(&shared.engine, &t);
                (t, meta)
            })
            .collect();
        tables.sort_by(|a, b| a.0.name().cmp(b.0.name()));
        Listed {
            home: shared.home().to_owned(),
            databases: shared.databases(),
            tables,
        }
    }

    /// Each (database, table, metadata), of the databases there are.
    fn each(&self) -> impl Iterator<Item = (&str, &Table, &TableMeta)> {
        (self.tables.iter())
            .map(|(t, m)| (crate::names::split(&self.home, t.name()).0, t, m))
            .filter(|(db, ..)| self.databases.iter().any(|d| d.eq_ignore_ascii_case(db)))
    }

    /// The database and own name of a foreign key's parent.
    fn parent<'a>(&'a self, fk: &'a ForeignKey) -> (&'a str, &'a str) {
        crate::names::split(&self.home, &fk.parent)
    }
}

/// Columns from `spec`: names separated by spaces, each of text 64 characters wide unless it
/// ends `:i` (BIGINT), `:d` (DATETIME) or `:tN` (text of N characters).
fn declared(spec: &str) -> Vec<Column> {
    (spec.split_whitespace())
        .map(|c| match c.split_once(':') {
            None => text(c, 64),
            Some((name, "i")) => int(name),
            Some((name, "d")) => Column::nullable(name, ColumnType::DateTime(0)),
            Some((name, width)) => text(name, width[1..].parse().unwrap_or(64)),
        })
        .collect()
}

fn text(name: &str, n: u32) -> Column {
    Column::nullable(name, ColumnType::Varchar(n))
}

fn int(name: &str) -> Column {
    Column::nullable(name, ColumnType::BigInt)
}

fn v(s: &str) -> Value {
    Value::from(s)
}

fn count(n: usize) -> Value {
    Value::Int(n as i64)
}

fn schemata(listed: &Listed) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = declared(concat!(
        "CATALOG_NAME SCHEMA_NAME DEFAULT_CHARACTER_SET_NAME ",
        "DEFAULT_COLLATION_NAME SQL_PATH:t512 DEFAULT_ENCRYPTION:t3",
    ));
    let rows = (listed.databases.iter())
        .map(|d| {
            vec![
                v("def"),
                v(d),
                v("utf8mb4"),
                v("utf8mb4_bin"),
                Value::Null,
                v("NO"),
            ]
        })
        .collect();
    (columns, rows)
}

fn tables(listed: &Listed) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = declared(concat!(
        "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME TABLE_TYPE ENGINE VERSION:i ",
        "ROW_FORMAT TABLE_ROWS:i AVG_ROW_LENGTH:i DATA_LENGTH:i MAX_DATA_LENGTH:i ",
        "INDEX_LENGTH:i DATA_FREE:i AUTO_INCREMENT:i CREATE_TIME:d UPDATE_TIME:d ",
        "CHECK_TIME:d TABLE_COLLATION CHECKSUM:i CREATE_OPTIONS:t256 ",
        "TABLE_COMMENT:t2048",
    ));
    let rows = (listed.each())
        .map(|(db, t, meta)| {
            let auto = meta
                .auto_increment
                .map_or(Value::Null, |_| Value::Int(meta.next_id.max(1)));
            let rows = t.index_stats(None).entries;
            vec![
                v("def"),
                v(db),
                v(own_name(t.name())),
                v("BASE TABLE"),
                v("InnoDB"),
                Value::Int(10),
                v("Dynamic"),
                Value::Int(rows as i64),
                Value::Int(0),
                Value::Int(0),
                Value::Int(0),
                Value::Int(0),
                Value::Int(0),
                auto,
                Value::Null,
                Value::Null,
                Value::Null,
                v("utf8mb4_bin"),
                Value::Null,
                v(""),
                v(""),
            ]
        })
        .collect();
    (columns, rows)
}

/// The parts of a column's type information_schema splits out: DATA_TYPE,
/// CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION.
fn type_parts(ty: ColumnType) -> (String, Value, Value, Value, Value) {
    let name = crate::types::type_name(ty);
    let data_type = name.split(['(', ' ']).next().unwrap_or_default().to_owned();
    let precision = |digits: i64| Value::Int(digits);
    match ty {
        ColumnType::Char(n) | ColumnType::Varchar(n) => (
            data_type,
            Value::Int(i64::from(n)),
            Value::Null,
            Value::Null,
            Value::Null,
        ),
        ColumnType::Decimal {
            precision: p,
            scale,
        } => (
            data_type,
            Value::Null,
            precision(i64::from(p)),
            Value::Int(i64::from(scale)),
            Value::Null,
        ),
        ColumnType::DateTime(fsp) => (
            data_type,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Int(i64::from(fsp)),
        ),
        ColumnType::Date => (
            data_type,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ),
        ColumnType::Double => (
            data_type,
            Value::Null,
            precision(22),
            Value::Null,
            Value::Null,
        ),
        _ => {
            let digits = match ty {
                ColumnType::TinyInt | ColumnType::Unsigned(1) => 3,
                ColumnType::SmallInt | ColumnType::Unsigned(2) => 5,
                ColumnType::MediumInt | ColumnType::Unsigned(3) => 7,
                ColumnType::Int | ColumnType::Unsigned(4) => 10,
                ColumnType::BigInt => 19,
                _ => 20,
            };
            (
                data_type,
                Value::Null,
                precision(digits),
                Value::Int(0),
                Value::Null,
            )
        }
    }
}

fn columns(listed: &Listed) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = declared(concat!(
        "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME COLUMN_NAME ORDINAL_POSITION:i ",
        "COLUMN_DEFAULT:t65535 IS_NULLABLE:t3 DATA_TYPE ",
        "CHARACTER_MAXIMUM_LENGTH:i CHARACTER_OCTET_LENGTH:i ",
        "NUMERIC_PRECISION:i NUMERIC_SCALE:i DATETIME_PRECISION:i ",
        "CHARACTER_SET_NAME COLLATION_NAME COLUMN_TYPE:t256 COLUMN_KEY:t3 ",
        "EXTRA:t256 PRIVILEGES:t154 COLUMN_COMMENT:t1024 ",
        "GENERATION_EXPRESSION:t65535 SRS_ID:i",
    ));
    let mut rows = Vec::new();
    for (db, t, meta) in listed.each() {
        let schema = t.schema();
        for (i, c) in schema.columns.iter().enumerate() {
            let (data_type, chars, precision, scale, fsp) = type_parts(c.ty);
            let octets = match &chars {
                Value::Int(n) => Value::Int(n * 4),
                _ => Value::Null,
            };
            let string = matches!(c.ty, ColumnType::Char(_) | ColumnType::Varchar(_));
            let default = (meta.defaults.get(i).cloned().flatten())
                .and_then(|d| crate::types::text(&d))
                .map_or(Value::Null, Value::from);
            let extra = if meta.auto_increment == Some(i) {
                "auto_increment"
            } else {
                ""
            };
            rows.push(vec![
                v("def"),
                v(db),
                v(own_name(t.name())),
                v(&c.name),
                count(i + 1),
                default,
                v(if c.nullable { "YES" } else { "NO" }),
                Value::from(data_type),
                chars,
                octets,
                precision,
                scale,
                fsp,
                if string { v("utf8mb4") } else { Value::Null },
                if string {
                    v("utf8mb4_bin")
                } else {
                    Value::Null
                },
                Value::from(crate::types::type_name(c.ty)),
                v(crate::show::key_of(schema, i)),
                v(extra),
                v("select,insert,update,references"),
                v(""),
                v(""),
                Value::Null,
            ]);
        }
    }
    (columns, rows)
}

/// Each index of `t`: its name, whether unique, its columns (the primary key first).
fn indexes(t: &Table) -> Vec<(String, bool, Vec<usize>, Option<usize>)> {
    let schema = t.schema();
    let mut out = Vec::new();
    if let Some(pk) = &schema.primary_key {
        out.push(("PRIMARY".to_owned(), true, pk.clone(), None));
    }
    for (i, index) in schema.indexes.iter().enumerate() {
        out.push((
            index.name.clone(),
            index.unique,
            index.columns.clone(),
            Some(i),
        ));
    }
    out
}

fn statistics(listed: &Listed) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = declared(concat!(
        "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME NON_UNIQUE:i INDEX_SCHEMA ",
        "INDEX_NAME SEQ_IN_INDEX:i COLUMN_NAME COLLATION:t1 CARDINALITY:i ",
        "SUB_PART:i PACKED:t10 NULLABLE:t3 INDEX_TYPE:t11 COMMENT:t8 ",
        "INDEX_COMMENT:t2048 IS_VISIBLE:t3 EXPRESSION:t65535",
    ));
    let mut rows = Vec::new();
    for (db, t, _) in listed.each() {
        let schema = t.schema();
        for (name, unique, cols, index) in indexes(t) {
            let stats = t.index_stats(index);
            for (seq, &c) in cols.iter().enumerate() {
                let per_key = stats.rows_per_prefix(seq + 1).max(1.0);
                let cardinality = (stats.entries as f64 / per_key).round() as i64;
                rows.push(vec![
                    v("def"),
                    v(db),
                    v(own_name(t.name())),
                    Value::Int(i64::from(!unique)),
                    v(db),
                    v(&name),
                    count(seq + 1),
                    v(&schema.columns[c].name),
                    v("A"),
                    Value::Int(cardinality),
                    Value::Null,
                    Value::Null,
                    v(if schema.columns[c].nullable {
                        "YES"
                    } else {
                        ""
                    }),
                    v("BTREE"),
                    v(""),
                    v(""),
                    v("YES"),
                    Value::Null,
                ]);
            }
        }
    }
    (columns, rows)
}

fn table_constraints(listed: &Listed) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = declared(concat!(
        "CONSTRAINT_CATALOG CONSTRAINT_SCHEMA CONSTRAINT_NAME TABLE_SCHEMA ",
        "TABLE_NAME CONSTRAINT_TYPE ENFORCED",
    ));
    let mut rows = Vec::new();
    for (db, t, meta) in listed.each() {
        let row = |name: &str, kind: &str| {
            vec![
                v("def"),
                v(db),
                v(name),
                v(db),
                v(own_name(t.name())),
                v(kind),
                v("YES"),
            ]
        };
        for (name, unique, _, _) in indexes(t) {
            match (name.as_str(), unique) {
                ("PRIMARY", _) => rows.push(row("PRIMARY", "PRIMARY KEY")),
                (_, true) => rows.push(row(&name, "UNIQUE")),
                _ => {}
            }
        }
        for fk in &meta.foreign_keys {
            rows.push(row(&fk.name, "FOREIGN KEY"));
        }
    }
    (columns, rows)
}

fn key_column_usage(listed: &Listed) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = declared(concat!(
        "CONSTRAINT_CATALOG CONSTRAINT_SCHEMA CONSTRAINT_NAME TABLE_CATALOG ",
        "TABLE_SCHEMA TABLE_NAME COLUMN_NAME ORDINAL_POSITION:i ",
        "POSITION_IN_UNIQUE_CONSTRAINT:i REFERENCED_TABLE_SCHEMA ",
        "REFERENCED_TABLE_NAME REFERENCED_COLUMN_NAME",
    ));
    let mut rows = Vec::new();
    for (db, t, meta) in listed.each() {
        let schema = t.schema();
        for (name, unique, cols, _) in indexes(t) {
            if !unique {
                continue;
            }
            for (i, &c) in cols.iter().enumerate() {
                rows.push(vec![
                    v("def"),
                    v(db),
                    v(&name),
                    v("def"),
                    v(db),
                    v(own_name(t.name())),
                    v(&schema.columns[c].name),
                    count(i + 1),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]);
            }
        }
        for fk in &meta.foreign_keys {
            for (i, (c, p)) in fk.columns.iter().zip(&fk.parent_columns).enumerate() {
                rows.push(vec![
                    v("def"),
                    v(db),
                    v(&fk.name),
                    v("def"),
                    v(db),
                    v(own_name(t.name())),
                    v(c),
                    count(i + 1),
                    count(i + 1),
                    v(listed.parent(fk).0),
                    v(listed.parent(fk).1),
                    v(p),
                ]);
            }
        }
    }
    (columns, rows)
}

/// The name of the parent's unique index a foreign key refers to (MySQL's
/// UNIQUE_CONSTRAINT_NAME): PRIMARY, a unique index its columns lead, else NULL.
fn unique_constraint(listed: &Listed, fk: &ForeignKey) -> Value {
    let Some((parent, _)) =
        (listed.tables.iter()).find(|(t, _)| t.name().eq_ignore_ascii_case(&fk.parent))
    else {
        return Value::Null;
    };
    let schema: &TableSchema = parent.schema();
    let Some(positions) = (fk.parent_columns.iter())
        .map(|c| schema.column(c).ok())
        .collect::<Option<Vec<usize>>>()
    else {
        return Value::Null;
    };
    (indexes(parent).into_iter())
        .find(|(_, unique, cols, _)| *unique && cols.starts_with(&positions))
        .map_or(Value::Null, |(name, ..)| Value::from(name))
}

fn rule(action: Action) -> Value {
    v(match action {
        Action::Restrict => "RESTRICT",
        Action::NoAction => "NO ACTION",
        Action::Cascade => "CASCADE",
        Action::SetNull => "SET NULL",
    })
}

fn referential_constraints(listed: &Listed) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = declared(concat!(
        "CONSTRAINT_CATALOG CONSTRAINT_SCHEMA CONSTRAINT_NAME ",
        "UNIQUE_CONSTRAINT_CATALOG UNIQUE_CONSTRAINT_SCHEMA ",
        "UNIQUE_CONSTRAINT_NAME MATCH_OPTION UPDATE_RULE DELETE_RULE TABLE_NAME ",
        "REFERENCED_TABLE_NAME",
    ));
    let mut rows = Vec::new();
    for (db, t, meta) in listed.each() {
        for fk in &meta.foreign_keys {
            rows.push(vec![
                v("def"),
                v(db),
                v(&fk.name),
                v("def"),
                v(listed.parent(fk).0),
                unique_constraint(listed, fk),
                v("NONE"),
                rule(fk.on_update.unwrap_or(Action::NoAction)),
                rule(fk.on_delete.unwrap_or(Action::NoAction)),
                v(own_name(t.name())),
                v(listed.parent(fk).1),
            ]);
        }
    }
    (columns, rows)
}

fn partitions(listed: &Listed) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = declared(concat!(
        "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME PARTITION_NAME SUBPARTITION_NAME ",
        "PARTITION_ORDINAL_POSITION:i SUBPARTITION_ORDINAL_POSITION:i ",
        "PARTITION_METHOD:t18 SUBPARTITION_METHOD:t12 PARTITION_EXPRESSION:t2048 ",
        "SUBPARTITION_EXPRESSION:t2048 PARTITION_DESCRIPTION:t2048 TABLE_ROWS:i ",
        "AVG_ROW_LENGTH:i DATA_LENGTH:i MAX_DATA_LENGTH:i INDEX_LENGTH:i ",
        "DATA_FREE:i CREATE_TIME:d UPDATE_TIME:d CHECK_TIME:d CHECKSUM:i ",
        "PARTITION_COMMENT:t2048 NODEGROUP:t256 TABLESPACE_NAME:t268",
    ));
    let rows = (listed.each())
        .map(|(db, t, _)| {
            let mut row = vec![v("def"), v(db), v(own_name(t.name()))];
            row.extend(std::iter::repeat_n(Value::Null, 9));
            row.push(Value::Int(t.index_stats(None).entries as i64));
            row.extend(std::iter::repeat_n(Value::Int(0), 5));
            row.extend(std::iter::repeat_n(Value::Null, 3));
            row.push(Value::Null);
            row.extend([v(""), Value::Null, Value::Null]);
            row
        })
        .collect();
    (columns, rows)
}

/// PROCESSLIST: what each session is doing (SHOW FULL PROCESSLIST's rows).
fn processlist(s: &Context<'_>) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = declared("ID:i USER:t32 HOST:t261 DB COMMAND:t16 TIME:i STATE INFO:t65535");
    (columns, crate::show::process_rows(s, true))
}

/// INNODB_TRX: each session's open transaction, in MySQL 8.0's columns. What the engine
/// does not keep per transaction (when a wait began, rows modified, lock memory) is NULL.
fn innodb_trx(s: &Context<'_>) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = declared(concat!(
        "trx_id:t18 trx_state:t13 trx_started:d trx_requested_lock_id:t105 ",
        "trx_wait_started:d trx_weight:i trx_mysql_thread_id:i trx_query:t1024 ",
        "trx_operation_state trx_tables_in_use:i trx_tables_locked:i ",
        "trx_lock_structs:i trx_lock_memory_bytes:i trx_rows_locked:i ",
        "trx_rows_modified:i trx_concurrency_tickets:i trx_isolation_level:t16 ",
        "trx_unique_checks:i trx_foreign_key_checks:i ",
        "trx_last_foreign_key_error:t256 trx_adaptive_hash_latched:i ",
        "trx_adaptive_hash_timeout:i trx_is_read_only:i ",
        "trx_autocommit_non_locking:i trx_schedule_weight:i",
    ));
    let (locks, waits) = s.shared().engine.data_locks();
    let mut rows = Vec::new();
    for p in s.shared().controls.processes() {
        let Some((open, id)) = p.trx else {
            continue;
        };
        let mine: Vec<_> = (locks.iter()).filter(|l| Some(l.trx.get()) == id).collect();
        let waiting = (waits.iter()).find(|w| Some(w.requesting.1.get()) == id);
        let mut tables: Vec<_> = mine.iter().map(|l| l.table).collect();
        tables.sort_unstable();
        tables.dedup();
        let held = mine.iter().filter(|l| !l.waiting).count();
        rows.push(vec![
            id.map_or(Value::Null, |id| Value::from(id.to_string())),
            v(if waiting.is_some() {
                "LOCK WAIT"
            } else {
                "RUNNING"
            }),
            Value::DateTime(open.started),
            waiting.map_or(Value::Null, |w| Value::from(w.requesting.0.as_str())),
            Value::Null,
            count(mine.len()),
            Value::Int(i64::from(p.id)),
            p.info.map_or(Value::Null, Value::from),
            match (&waiting, p.command) {
                (Some(_), _) => v("waiting for a row lock"),
                (None, "Sleep") => Value::Null,
                (None, _) => v("executing"),
            },
            Value::Null,
            count(tables.len()),
            count(mine.len()),
            Value::Null,
            count(held),
            Value::Null,
            Value::Int(0),
            v(open.isolation),
            Value::Int(i64::from(open.unique_checks)),
            Value::Int(i64::from(open.foreign_key_checks)),
            Value::Null,
            Value::Int(0),
            Value::Int(0),
            Value::Int(i64::from(open.read_only)),
            Value::Int(0),
            Value::Null,
        ]);
    }
    (columns, rows)
}

/// FILES: no rows (waterline's log segments are not tablespaces), in MySQL's main columns.
fn files() -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = declared(concat!(
        "FILE_ID:i FILE_NAME:t268 FILE_TYPE:t20 TABLESPACE_NAME:t268 ",
        "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME LOGFILE_GROUP_NAME ",
        "LOGFILE_GROUP_NUMBER:i ENGINE FULLTEXT_KEYS:t64 DELETED_ROWS:i ",
        "UPDATE_COUNT:i FREE_EXTENTS:i TOTAL_EXTENTS:i EXTENT_SIZE:i ",
        "INITIAL_SIZE:i MAXIMUM_SIZE:i AUTOEXTEND_SIZE:i STATUS:t20 EXTRA:t255",
    ));
    (columns, Vec::new())
}

/// TRIGGERS' columns (MySQL 8.0's, as text).
const TRIGGERS: &[&str] = &[
    "TRIGGER_CATALOG",
    "TRIGGER_SCHEMA",
    "TRIGGER_NAME",
    "EVENT_MANIPULATION",
    "EVENT_OBJECT_CATALOG",
    "EVENT_OBJECT_SCHEMA",
    "EVENT_OBJECT_TABLE",
    "ACTION_ORDER",
    "ACTION_CONDITION",
    "ACTION_STATEMENT",
    "ACTION_ORIENTATION",
    "ACTION_TIMING",
    "ACTION_REFERENCE_OLD_TABLE",
    "ACTION_REFERENCE_NEW_TABLE",
    "ACTION_REFERENCE_OLD_ROW",
    "ACTION_REFERENCE_NEW_ROW",
    "CREATED",
    "SQL_MODE",
    "DEFINER",
    "CHARACTER_SET_CLIENT",
    "COLLATION_CONNECTION",
    "DATABASE_COLLATION",
];

/// ROUTINES' main columns.
const ROUTINES: &[&str] = &[
    "SPECIFIC_NAME",
    "ROUTINE_CATALOG",
    "ROUTINE_SCHEMA",
    "ROUTINE_NAME",
    "ROUTINE_TYPE",
    "DATA_TYPE",
    "ROUTINE_BODY",
    "ROUTINE_DEFINITION",
    "EXTERNAL_NAME",
    "EXTERNAL_LANGUAGE",
    "PARAMETER_STYLE",
    "IS_DETERMINISTIC",
    "SQL_DATA_ACCESS",
    "SQL_PATH",
    "SECURITY_TYPE",
    "CREATED",
    "LAST_ALTERED",
    "SQL_MODE",
    "ROUTINE_COMMENT",
    "DEFINER",
    "CHARACTER_SET_CLIENT",
    "COLLATION_CONNECTION",
    "DATABASE_COLLATION",
];

/// VIEWS' columns.
const VIEWS: &[&str] = &[
    "TABLE_CATALOG",
    "TABLE_SCHEMA",
    "TABLE_NAME",
    "VIEW_DEFINITION",
    "CHECK_OPTION",
    "IS_UPDATABLE",
    "DEFINER",
    "SECURITY_TYPE",
    "CHARACTER_SET_CLIENT",
    "COLLATION_CONNECTION",
];

/// EVENTS' main columns.
const EVENTS: &[&str] = &[
    "EVENT_CATALOG",
    "EVENT_SCHEMA",
    "EVENT_NAME",
    "DEFINER",
    "TIME_ZONE",
    "EVENT_BODY",
    "EVENT_DEFINITION",
    "EVENT_TYPE",
    "EXECUTE_AT",
    "INTERVAL_VALUE",
    "INTERVAL_FIELD",
    "SQL_MODE",
    "STARTS",
    "ENDS",
    "STATUS",
    "ON_COMPLETION",
    "CREATED",
    "LAST_ALTERED",
    "LAST_EXECUTED",
    "EVENT_COMMENT",
    "ORIGINATOR",
    "CHARACTER_SET_CLIENT",
    "COLLATION_CONNECTION",
    "DATABASE_COLLATION",
];

/// A table of these (text) columns and no rows: what waterline does not have.
fn none(columns: &[&str]) -> (Vec<Column>, Vec<Vec<Value>>) {
    (columns.iter().map(|c| text(c, 256)).collect(), Vec::new())
}
