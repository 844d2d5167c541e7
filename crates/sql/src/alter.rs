//! ALTER TABLE (foreign keys and indexes), ANALYZE TABLE and TRUNCATE TABLE: the
//! statements that change a table's definition or statistics, or empty it, after CREATE.
//!
//! An ALTER TABLE does one operation: ADD [CONSTRAINT [name]] FOREIGN KEY, DROP FOREIGN KEY,
//! ADD [UNIQUE] INDEX|KEY. Everything else (columns, renames, several operations in one
//! statement, which MySQL makes atomic) is refused with 1235.

use std::collections::HashSet;
use std::sync::Arc;

use sqlparser::ast::{self, AlterTableOperation, TableConstraint};
use waterline_planner::bind::object_name;
use waterline_txn::{Key, KeyRange, ReadOptions, Table, Value};

use crate::error::SqlError;
use crate::foreign::ForeignKey;
use crate::session::{Response, Session};

/// What MySQL answers an ALTER TABLE that copied no rows.
fn altered() -> Response {
    Response::Done {
        affected: 0,
        last_insert_id: 0,
        info: "Records: 0  Duplicates: 0  Warnings: 0".into(),
    }
}

/// The base table `name` names (temporary tables are refused: they have no foreign keys and
/// no CREATE INDEX here).
fn base_table(s: &Session, name: &ast::ObjectName, what: &str) -> Result<Table, SqlError> {
    let db = s.catalog_database();
    let name = object_name(name)?;
    if s.temporary_table(&name).is_some() {
        return Err(SqlError::unsupported(format!(
            "{what} of a temporary table"
        )));
    }
    (s.shared().engine.table(&name)).map_err(|_| SqlError::no_table(&db, &name))
}

/// ALTER TABLE t <one operation>.
pub(crate) fn alter_table(s: &mut Session, alter: &ast::AlterTable) -> Result<Response, SqlError> {
    if alter.if_exists
        && s.database().is_some()
        && s.shared().engine.table(&object_name(&alter.name)?).is_err()
    {
        return Ok(altered());
    }
    let table = base_table(s, &alter.name, "ALTER TABLE")?;
    let [operation] = alter.operations.as_slice() else {
        return Err(SqlError::unsupported("ALTER TABLE with several operations"));
    };
    match operation {
        AlterTableOperation::AddConstraint {
            constraint: TableConstraint::ForeignKey(fk),
            not_valid: false,
        } => add_foreign_key(s, &table, fk)?,
        AlterTableOperation::AddConstraint {
            constraint: TableConstraint::Index(index),
            not_valid: false,
        } => {
            let columns = crate::ddl::index_columns(&index.columns)?;
            let name = index.name.as_ref().map_or(&columns[0], |n| &n.value);
            add_index(s, &table, name, &columns, false)?;
        }
        AlterTableOperation::AddConstraint {
            constraint: TableConstraint::Unique(unique),
            not_valid: false,
        } => {
            let columns = crate::ddl::index_columns(&unique.columns)?;
            let name = (unique.name.as_ref().or(unique.index_name.as_ref()))
                .map_or(&columns[0], |n| &n.value);
            add_index(s, &table, name, &columns, true)?;
        }
        AlterTableOperation::DropForeignKey { name, .. } => drop_foreign_key(s, &table, name)?,
        other => return Err(SqlError::unsupported(format!("ALTER TABLE ... {other}"))),
    }
    Ok(altered())
}

fn add_index(
    s: &Session,
    table: &Table,
    name: &str,
    columns: &[String],
    unique: bool,
) -> Result<(), SqlError> {
    let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
    s.shared()
        .engine
        .create_index(table.name(), name, &refs, unique)?;
    Ok(())
}

/// ADD FOREIGN KEY: checked as in CREATE TABLE, the rows already there checked against the
/// parent (unless `foreign_key_checks` is off, as a loader or a dump sets it), the child's
/// index made if it has none.
fn add_foreign_key(
    s: &Session,
    table: &Table,
    fk: &ast::ForeignKeyConstraint,
) -> Result<(), SqlError> {
    let shared = Arc::clone(s.shared());
    let mut meta = shared.catalog.meta_of(&shared.engine, table);
    let defined = ForeignKey::define(fk, table.schema(), &meta.foreign_keys)?;
    let schema =
        crate::ddl::with_child_index(s, table.schema().clone(), &defined, fk.index_name.as_ref())?;
    if s.settings().foreign_key_checks {
        no_orphans(s, table, &defined)?;
    }
    if let Some(index) = schema.indexes.get(table.schema().indexes.len()) {
        let columns: Vec<String> = (index.columns.iter())
            .map(|&c| schema.columns[c].name.clone())
            .collect();
        add_index(s, table, &index.name, &columns, false)?;
    }
    meta.foreign_keys.push(defined);
    shared.catalog.save(&shared.engine, table, meta)?;
    Ok(())
}

/// 1452 if a row of `table` has a key `fk`'s parent does not have (read as of now, without
/// locks: MySQL's ALTER holds a metadata lock that keeps writers out meanwhile, which
/// waterline does not have).
fn no_orphans(s: &Session, table: &Table, fk: &ForeignKey) -> Result<(), SqlError> {
    let engine = &s.shared().engine;
    let parent = if fk.parent.eq_ignore_ascii_case(table.name()) {
        table.clone()
    } else {
        engine.table(&fk.parent)?
    };
    let (_, index) = fk.resolve_parent(table.schema(), parent.schema())?;
    let columns = fk
        .child_positions(table.schema())
        .expect("define checked the columns");
    let mut trx = engine.begin();
    let keys = trx.scan_with(table, KeyRange::All, ReadOptions::default(), |_, row| {
        columns
            .iter()
            .map(|&c| row[c].clone())
            .collect::<Vec<Value>>()
    })?;
    let mut found = HashSet::new();
    for key in keys {
        if key.iter().any(Value::is_null) || found.contains(&key) {
            continue;
        }
        let mut options = ReadOptions::default().limit(1);
        if let Some(index) = &index {
            options = options.on_index(index);
        }
        let range = KeyRange::Prefix(Key::from(key.clone()));
        if trx
            .scan_with(&parent, range, options, |_, _| ())?
            .is_empty()
        {
            return Err(fk.no_parent(s.home(), table.name()));
        }
        found.insert(key);
    }
    trx.commit()?;
    Ok(())
}

/// DROP FOREIGN KEY name (the child's index stays, as in MySQL).
fn drop_foreign_key(s: &Session, table: &Table, name: &ast::Ident) -> Result<(), SqlError> {
    let shared = Arc::clone(s.shared());
    let mut meta = shared.catalog.meta_of(&shared.engine, table);
    let Some(at) =
        (meta.foreign_keys.iter()).position(|f| f.name.eq_ignore_ascii_case(&name.value))
    else {
        return Err(SqlError::new(
            1091,
            "42000",
            format!("Can't DROP '{}'; check that column/key exists", name.value),
        ));
    };
    meta.foreign_keys.remove(at);
    shared.catalog.save(&shared.engine, table, meta)
}

/// ANALYZE TABLE t: every index's statistics recomputed now; MySQL's one-row report.
pub(crate) fn analyze(s: &Session, analyze: &ast::Analyze) -> Result<Response, SqlError> {
    let Some(name) = &analyze.table_name else {
        return Err(SqlError::parse("ANALYZE without TABLE"));
    };
    if analyze.partitions.is_some() || !analyze.columns.is_empty() || analyze.for_columns {
        return Err(SqlError::unsupported(
            "ANALYZE TABLE of partitions or columns",
        ));
    }
    let db = s.catalog_database();
    let name = object_name(name)?;
    let label = Value::from(waterline_planner::qualified(&db, &name));
    let row = |kind: &str, text: &str| {
        vec![
            label.clone(),
            Value::from("analyze"),
            Value::from(kind),
            Value::from(text),
        ]
    };
    let (_, tables) = s.tables();
    let rows = match tables.iter().find(|t| t.name().eq_ignore_ascii_case(&name)) {
        Some(table) => {
            table.analyze();
            vec![row("status", "OK")]
        }
        None => vec![
            row("Error", &SqlError::no_table(&db, &name).message),
            row("status", "Operation failed"),
        ],
    };
    Ok(Response::text(
        &["Table", "Op", "Msg_type", "Msg_text"],
        rows,
    ))
}

/// TRUNCATE [TABLE] t: every row deleted (in a transaction of its own, after the implicit
/// commit), AUTO_INCREMENT back to 1. Refused (1701) for a table another table's foreign key
/// references, unless `foreign_key_checks` is off.
pub(crate) fn truncate(s: &mut Session, truncate: &ast::Truncate) -> Result<Response, SqlError> {
    let [target] = truncate.table_names.as_slice() else {
        return Err(SqlError::unsupported("TRUNCATE of several tables"));
    };
    if truncate.partitions.is_some() {
        return Err(SqlError::unsupported("TRUNCATE of partitions"));
    }
    let db = s.catalog_database();
    let name = object_name(&target.name)?;
    let table = match s.temporary_table(&name) {
        Some(t) => t.clone(),
        None => s
            .shared()
            .engine
            .table(&name)
            .map_err(|_| SqlError::no_table(&db, &name))?,
    };
    let shared = Arc::clone(s.shared());
    if s.settings().foreign_key_checks && !table.is_temporary() {
        let referencing = shared.catalog.referencing(&shared.engine, table.name());
        let other =
            (referencing.iter()).find(|(c, _)| !c.name().eq_ignore_ascii_case(table.name()));
        if let Some((child, fk)) = other {
            return Err(SqlError::new(
                1701,
                "42000",
                format!(
                    "Cannot truncate a table referenced in a foreign key constraint ({})",
                    fk.violated(s.home(), child.name())
                ),
            ));
        }
    }
    let mut trx = shared.engine.begin();
    let keys = trx.scan_with(&table, KeyRange::All, ReadOptions::FOR_UPDATE, |k, _| {
        k.clone()
    })?;
    for key in keys {
        trx.delete(&table, key)?;
    }
    trx.commit()?;
    let mut all = shared.catalog.meta.lock();
    if let Some(meta) = all.get_mut(&crate::shared::meta_key(&table)) {
        meta.next_id = 1;
    }
    Ok(Response::done(0))
}
