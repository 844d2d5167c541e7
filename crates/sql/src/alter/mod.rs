//! ALTER TABLE, RENAME TABLE, ANALYZE TABLE and TRUNCATE TABLE: the statements that change
//! a table's definition, name or statistics, or empty it, after CREATE.
//!
//! An ALTER TABLE applies its operations in order to the table's definition
//! (`definition.rs`: columns ADD, DROP, MODIFY, CHANGE, RENAME, ALTER ... SET/DROP DEFAULT;
//! indexes and the primary key ADD, DROP; foreign keys ADD, DROP; RENAME TO;
//! AUTO_INCREMENT = n), checks the result once, and then changes the table in place if
//! its rows stay as they are (new indexes are built, metadata saved), else copies it
//! (`copy.rs`). Either all of it happens or, on an error, none.

mod copy;
mod definition;

use std::collections::HashSet;
use std::sync::Arc;

use sqlparser::ast::{self, AlterTableOperation, TableConstraint};
use waterline_planner::bind::object_name;
use waterline_txn::{Key, KeyRange, ReadOptions, Table, Value};

use crate::error::SqlError;
use crate::foreign::ForeignKey;
use crate::session::{Context, Response};
use definition::Definition;

/// What MySQL answers an ALTER TABLE that copied `rows` rows.
fn altered(rows: usize) -> Response {
    Response::Done {
        affected: rows as u64,
        last_insert_id: 0,
        info: format!("Records: {rows}  Duplicates: 0  Warnings: 0"),
    }
}

/// The base table `name` names (temporary tables are refused: they have no foreign keys and
/// no CREATE INDEX here).
fn base_table(s: &Context<'_>, name: &ast::ObjectName, what: &str) -> Result<Table, SqlError> {
    let db = s.catalog_database();
    let name = object_name(name)?;
    if s.temporary_table(&name).is_some() {
        return Err(SqlError::unsupported(format!(
            "{what} of a temporary table"
        )));
    }
    (s.shared().engine.table(&name)).map_err(|_| SqlError::no_table(&db, &name))
}

/// The definition `alter`'s operations make of `table`'s, the foreign keys they add, the
/// new name they give it.
fn planned<'a>(
    table: &Table,
    meta: &crate::shared::TableMeta,
    operations: &'a [AlterTableOperation],
) -> Result<
    (
        Definition,
        Vec<&'a ast::ForeignKeyConstraint>,
        Option<String>,
    ),
    SqlError,
> {
    let mut def = Definition::of(table.schema(), meta);
    let mut added = Vec::new();
    let mut rename = None;
    let own = crate::names::short(table.name());
    let column = |name: &ast::Ident, data_type: &ast::DataType, options: &[ast::ColumnOption]| {
        ast::ColumnDef {
            name: name.clone(),
            data_type: data_type.clone(),
            options: (options.iter())
                .map(|o| ast::ColumnOptionDef {
                    name: None,
                    option: o.clone(),
                })
                .collect(),
        }
    };
    for op in operations {
        match op {
            AlterTableOperation::AddColumn {
                column_def,
                column_position,
                ..
            } => def.add_column(column_def, column_position.as_ref(), own)?,
            AlterTableOperation::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for c in column_names {
                    def.drop_column(&c.value, *if_exists)?;
                }
            }
            AlterTableOperation::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => def.change_column(
                &col_name.value,
                &column(col_name, data_type, options),
                column_position.as_ref(),
                own,
            )?,
            AlterTableOperation::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => def.change_column(
                &old_name.value,
                &column(new_name, data_type, options),
                column_position.as_ref(),
                own,
            )?,
            AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            } => def.rename_column(&old_column_name.value, &new_column_name.value, own)?,
            AlterTableOperation::AlterColumn { column_name, op } => {
                def.alter_column(&column_name.value, op, own)?;
            }
            AlterTableOperation::AddConstraint {
                constraint,
                not_valid: false,
            } => match constraint {
                TableConstraint::ForeignKey(fk) => added.push(fk),
                TableConstraint::Index(index) => {
                    let columns = crate::ddl::index_columns(&index.columns)?;
                    let name = (index.name.as_ref())
                        .map_or_else(|| def.free_name(&columns[0]), |n| n.value.clone());
                    def.add_index(&name, &columns, false)?;
                }
                TableConstraint::Unique(unique) => {
                    let columns = crate::ddl::index_columns(&unique.columns)?;
                    let name = (unique.name.as_ref().or(unique.index_name.as_ref()))
                        .map_or_else(|| def.free_name(&columns[0]), |n| n.value.clone());
                    def.add_index(&name, &columns, true)?;
                }
                TableConstraint::PrimaryKey(pk) => {
                    def.add_primary(crate::ddl::index_columns(&pk.columns)?)?;
                }
                other => return Err(SqlError::unsupported(format!("ALTER TABLE ADD {other}"))),
            },
            AlterTableOperation::DropForeignKey { name, .. } => {
                let at = (def.foreign_keys.iter())
                    .position(|f| f.name.eq_ignore_ascii_case(&name.value))
                    .ok_or_else(|| cannot_drop(&name.value))?;
                def.foreign_keys.remove(at);
            }
            AlterTableOperation::DropIndex { name } => def.drop_index(&name.value)?,
            AlterTableOperation::DropPrimaryKey { .. } => def.drop_primary()?,
            AlterTableOperation::RenameTable { table_name } => {
                let (ast::RenameTableNameKind::As(name) | ast::RenameTableNameKind::To(name)) =
                    table_name;
                rename = Some(object_name(name)?);
            }
            AlterTableOperation::AutoIncrement { value, .. } => {
                let n = value.value.to_string().parse::<i64>();
                def.next_id = Some(n.map_err(|_| SqlError::parse("AUTO_INCREMENT = a number"))?);
            }
            AlterTableOperation::Algorithm { algorithm, .. } => match algorithm {
                ast::AlterTableAlgorithm::Default | ast::AlterTableAlgorithm::Copy => {}
                other => {
                    return Err(not_supported(
                        &format!("ALGORITHM={other}"),
                        "ALGORITHM=COPY",
                    ));
                }
            },
            AlterTableOperation::Lock { lock, .. } => {
                if *lock == ast::AlterTableLock::None {
                    return Err(not_supported("LOCK=NONE", "LOCK=SHARED"));
                }
            }
            other => return Err(SqlError::unsupported(format!("ALTER TABLE ... {other}"))),
        }
    }
    Ok((def, added, rename))
}

/// 1846: what MySQL answers an ALGORITHM or LOCK the operation cannot have.
fn not_supported(what: &str, instead: &str) -> SqlError {
    SqlError::new(
        1846,
        "0A000",
        format!(
            "{what} is not supported. Reason: waterline copies the table for every change \
             of its rows. Try {instead}."
        ),
    )
}

/// 1050: table `name` (the engine's name) is there already.
fn exists(name: &str) -> SqlError {
    SqlError::new(
        1050,
        "42S01",
        format!("Table '{}' already exists", crate::names::short(name)),
    )
}

fn cannot_drop(name: &str) -> SqlError {
    SqlError::new(
        1091,
        "42000",
        format!("Can't DROP '{name}'; check that column/key exists"),
    )
}

/// ALTER TABLE t operation, ...: see the module page.
pub(crate) fn alter_table(
    s: &mut Context<'_>,
    alter: &ast::AlterTable,
) -> Result<Response, SqlError> {
    if alter.if_exists && s.shared().engine.table(&object_name(&alter.name)?).is_err() {
        return Ok(altered(0));
    }
    alter_operations(s, &alter.name, &alter.operations)
}

/// DROP INDEX name ON t: ALTER TABLE t DROP INDEX name, as in MySQL.
pub(crate) fn drop_index(
    s: &mut Context<'_>,
    index: &ast::ObjectName,
    table: &ast::ObjectName,
) -> Result<Response, SqlError> {
    let name = ast::Ident::new(object_name(index)?);
    alter_operations(s, table, &[AlterTableOperation::DropIndex { name }])
}

/// ALTER TABLE `name` `operations`.
fn alter_operations(
    s: &mut Context<'_>,
    name: &ast::ObjectName,
    operations: &[AlterTableOperation],
) -> Result<Response, SqlError> {
    let table = base_table(s, name, "ALTER TABLE")?;
    let shared = Arc::clone(s.shared());
    let meta = shared.catalog.meta_of(&shared.engine, &table);
    let (def, added, rename) = planned(&table, &meta, operations)?;
    if let Some(to) = &rename {
        s.database_of(to)?;
        if !to.eq_ignore_ascii_case(table.name()) && shared.engine.table(to).is_ok() {
            return Err(exists(to));
        }
    }
    let (mut schema, mut new_meta) = def.build(table.name())?;
    let mut foreign = Vec::new();
    for fk in added {
        let defined = ForeignKey::define(fk, &schema, &new_meta.foreign_keys)?;
        schema = crate::ddl::with_child_index(s, schema, &defined, fk.index_name.as_ref())?;
        new_meta.foreign_keys.push(defined.clone());
        foreign.push(defined);
    }
    keys_still_indexed(s, &table, &schema, &new_meta, &def.renames)?;
    // The counter goes on if the AUTO_INCREMENT column is the one it counted for; a new
    // one starts past the largest value (0: found at the next insert).
    let same_auto = meta.auto_increment.is_some()
        && new_meta.auto_increment.and_then(|i| def.columns[i].source) == meta.auto_increment;
    new_meta.next_id = match def.next_id {
        Some(n) => n,
        None if same_auto => meta.next_id,
        None => 0,
    };
    let check = |s: &Context<'_>, t: &Table| {
        if s.settings().foreign_key_checks {
            for fk in &foreign {
                no_orphans(s, t, fk)?;
            }
        }
        Ok(())
    };
    let old = table.schema();
    let in_place = schema.columns == old.columns
        && schema.primary_key == old.primary_key
        && schema.indexes.starts_with(&old.indexes);
    let (table, copied) = if in_place {
        // The rows stay as they are: checked before anything changes.
        check(s, &table)?;
        for index in &schema.indexes[old.indexes.len()..] {
            let columns: Vec<&str> = (index.columns.iter())
                .map(|&c| schema.columns[c].name.as_str())
                .collect();
            shared
                .engine
                .create_index(table.name(), &index.name, &columns, index.unique)?;
        }
        let table = shared.engine.table(table.name())?;
        shared.catalog.save(&shared.engine, &table, new_meta)?;
        (table, 0)
    } else {
        copy::copy(s, &table, (schema, new_meta), &def.columns, check)?
    };
    follow_renamed_columns(s, &table, &def.renames)?;
    if let Some(to) = rename.filter(|to| !to.eq_ignore_ascii_case(table.name())) {
        rename_table(s, table.name(), &to)?;
    }
    Ok(altered(copied))
}

/// 1553 if an index a foreign key needs is gone (the table's own keys' child index, or
/// the parent index of a key of another table that references it), 1829 if a column such
/// a key references is.
fn keys_still_indexed(
    s: &Context<'_>,
    table: &Table,
    schema: &waterline_txn::TableSchema,
    meta: &crate::shared::TableMeta,
    renames: &[(String, String)],
) -> Result<(), SqlError> {
    let needed = |fk: &ForeignKey| {
        SqlError::new(
            1553,
            "HY000",
            format!(
                "Cannot drop index needed in a foreign key constraint '{}'",
                fk.name
            ),
        )
    };
    for fk in &meta.foreign_keys {
        let columns = fk.child_positions(schema).ok_or_else(|| needed(fk))?;
        if crate::foreign::leading_index(schema, &columns).is_none() {
            return Err(needed(fk));
        }
    }
    let shared = s.shared();
    for (child, fk) in shared.catalog.referencing(&shared.engine, table.name()) {
        if child.id() == table.id() {
            continue;
        }
        let mut parent_columns = fk.parent_columns.clone();
        definition::follow(&mut parent_columns, renames);
        let positions: Option<Vec<usize>> = parent_columns
            .iter()
            .map(|c| schema.column(c).ok())
            .collect();
        let Some(positions) = positions else {
            let missing = parent_columns.iter().find(|c| schema.column(c).is_err());
            return Err(SqlError::new(
                1829,
                "HY000",
                format!(
                    "Cannot drop column '{}': needed in a foreign key constraint '{}' of table '{}'",
                    missing.map_or("", String::as_str),
                    fk.name,
                    crate::names::short(child.name())
                ),
            ));
        };
        if crate::foreign::leading_index(schema, &positions).is_none() {
            return Err(needed(&fk));
        }
        let renamed = ForeignKey {
            parent_columns,
            ..fk.clone()
        };
        if let Err(e) = renamed.resolve_parent(child.schema(), schema) {
            let column = renamed.parent_columns.first().map_or("", String::as_str);
            return Err(match e.code {
                3780 => SqlError::new(
                    1833,
                    "HY000",
                    format!(
                        "Cannot change column '{column}': used in a foreign key constraint \
                         '{}' of table '{}'",
                        fk.name,
                        crate::names::short(child.name())
                    ),
                ),
                _ => e,
            });
        }
    }
    Ok(())
}

/// The keys of other tables that reference `table`'s renamed columns name them anew, as
/// MySQL's do.
fn follow_renamed_columns(
    s: &Context<'_>,
    table: &Table,
    renames: &[(String, String)],
) -> Result<(), SqlError> {
    if renames.is_empty() {
        return Ok(());
    }
    let shared = s.shared();
    for child in shared.engine.tables() {
        if child.id() == table.id() {
            continue;
        }
        let mut meta = shared.catalog.meta_of(&shared.engine, &child);
        let mut changed = false;
        for fk in
            (meta.foreign_keys.iter_mut()).filter(|f| f.parent.eq_ignore_ascii_case(table.name()))
        {
            changed |= definition::follow(&mut fk.parent_columns, renames);
        }
        if changed {
            shared.catalog.save(&shared.engine, &child, meta)?;
        }
    }
    Ok(())
}

/// RENAME TABLE a TO b, ...: each in turn (1050 if a name is taken, 1146 if a table is not
/// there, 1049 for a database that is not); the foreign keys that reference a renamed
/// table follow it.
pub(crate) fn rename_tables(
    s: &mut Context<'_>,
    renames: &[ast::RenameTable],
) -> Result<Response, SqlError> {
    for r in renames {
        let from = base_table(s, &r.old_name, "RENAME TABLE")?;
        let to = object_name(&r.new_name)?;
        s.database_of(&to)?;
        rename_table(s, from.name(), &to)?;
    }
    Ok(Response::done(0))
}

/// Base table `from` is named `to` from now on, and the keys that reference it follow.
fn rename_table(s: &Context<'_>, from: &str, to: &str) -> Result<(), SqlError> {
    let shared = s.shared();
    let table = shared.engine.table(from)?;
    let children = shared.catalog.referencing(&shared.engine, from);
    let renamed = match shared.engine.rename_table(from, to) {
        Ok(t) => t,
        Err(waterline_txn::TxnError::TableExists(_)) => return Err(exists(to)),
        Err(e) => return Err(e.into()),
    };
    shared.catalog.rekey(from, to);
    for (child, _) in children {
        let child = if child.id() == table.id() {
            renamed.clone()
        } else {
            shared.engine.table(child.name())?
        };
        let mut meta = shared.catalog.meta_of(&shared.engine, &child);
        for fk in (meta.foreign_keys.iter_mut()).filter(|f| f.parent.eq_ignore_ascii_case(from)) {
            fk.parent = to.to_owned();
        }
        shared.catalog.save(&shared.engine, &child, meta)?;
    }
    Ok(())
}

/// 1452 if a row of `table` has a key `fk`'s parent does not have (read as of now, without
/// locks: MySQL's ALTER holds a metadata lock that keeps writers out meanwhile, which
/// waterline does not have).
fn no_orphans(s: &Context<'_>, table: &Table, fk: &ForeignKey) -> Result<(), SqlError> {
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

/// ANALYZE TABLE t: every index's statistics recomputed now; MySQL's one-row report.
pub(crate) fn analyze(s: &Context<'_>, analyze: &ast::Analyze) -> Result<Response, SqlError> {
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
pub(crate) fn truncate(
    s: &mut Context<'_>,
    truncate: &ast::Truncate,
) -> Result<Response, SqlError> {
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
