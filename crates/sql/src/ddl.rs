//! CREATE TABLE, CREATE INDEX, DROP TABLE and CREATE DATABASE.

use sqlparser::ast::{self, ColumnOption, Expr as Ast, TableConstraint};
use sqlparser::tokenizer::Token;
use waterline_planner::Env;
use waterline_planner::bind::{Binder, object_name};
use waterline_planner::qualified;
use waterline_txn::{Column, IndexDef, TableSchema};

use crate::error::SqlError;
use crate::foreign::ForeignKey;
use crate::session::{Context, Response};
use crate::shared::TableMeta;
use crate::types::{column_type, store};

pub(crate) fn index_columns(cols: &[ast::IndexColumn]) -> Result<Vec<String>, SqlError> {
    cols.iter()
        .map(|c| match &c.column.expr {
            Ast::Identifier(id) => Ok(id.value.clone()),
            other => Err(SqlError::unsupported(format!("an index on {other}"))),
        })
        .collect()
}

/// One column of CREATE TABLE or ALTER TABLE ... ADD | MODIFY | CHANGE, with what its
/// options say beyond the column itself.
pub(crate) struct Defined {
    pub(crate) column: Column,
    pub(crate) default: Option<waterline_txn::Value>,
    pub(crate) auto_increment: bool,
    /// `PRIMARY KEY` on the column.
    pub(crate) primary: bool,
    /// `UNIQUE` on the column.
    pub(crate) unique: bool,
}

/// A column definition: its type, NULL or NOT NULL, DEFAULT (1067 if the column cannot
/// hold it), AUTO_INCREMENT, PRIMARY KEY, UNIQUE.
pub(crate) fn column_def(c: &ast::ColumnDef) -> Result<Defined, SqlError> {
    // SERIAL: MySQL's alias of BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE.
    let serial = c.data_type.to_string().eq_ignore_ascii_case("serial");
    let ty = match serial {
        true => waterline_txn::ColumnType::Unsigned(8),
        false => column_type(&c.data_type)?,
    };
    let mut defined = Defined {
        column: Column::nullable(c.name.value.clone(), ty),
        default: None,
        auto_increment: serial,
        primary: false,
        unique: serial,
    };
    defined.column.nullable = !serial;
    let mut default = None;
    for option in &c.options {
        match &option.option {
            ColumnOption::NotNull => defined.column.nullable = false,
            ColumnOption::Null => defined.column.nullable = true,
            ColumnOption::Default(e) => default = Some(e),
            ColumnOption::PrimaryKey(_) => {
                defined.column.nullable = false;
                defined.primary = true;
            }
            ColumnOption::Unique(_) => defined.unique = true,
            ColumnOption::DialectSpecific(tokens)
                if tokens.iter().any(|t| {
                    matches!(t, Token::Word(w) if w.value.eq_ignore_ascii_case("AUTO_INCREMENT"))
                }) =>
            {
                defined.auto_increment = true;
            }
            ColumnOption::CharacterSet(_) | ColumnOption::Collation(_) | ColumnOption::Comment(_) => {}
            // MySQL 8.0 parses a column's REFERENCES and ignores it; refused here rather
            // than ignored, so that no one believes it checks anything.
            ColumnOption::ForeignKey(_) => {
                return Err(SqlError::unsupported(
                    "a column's REFERENCES (MySQL 8.0 ignores it): declare FOREIGN KEY (column) \
                     REFERENCES",
                ));
            }
            other => return Err(SqlError::unsupported(format!("column option {other}"))),
        }
    }
    defined.default = default
        .map(|e| default_value(&defined.column, e))
        .transpose()?;
    Ok(defined)
}

/// The value DEFAULT `e` gives `column`, as stored (1067 if the column cannot hold it).
pub(crate) fn default_value(column: &Column, e: &Ast) -> Result<waterline_txn::Value, SqlError> {
    let v = Binder::new(&[])
        .expr(e, "default")?
        .eval(Env::new(&[], &[]))?;
    store(column, v, true, 1, &mut Vec::new()).map_err(|_| {
        SqlError::new(
            1067,
            "42000",
            format!("Invalid default value for '{}'", column.name),
        )
    })
}

/// CREATE TABLE [IF NOT EXISTS] t (columns, keys) [ENGINE=...].
pub(crate) fn create_table(
    s: &mut Context<'_>,
    create: &ast::CreateTable,
) -> Result<Response, SqlError> {
    let name = object_name(&create.name)?;
    s.database_of(&name)?;
    // A temporary table may have a base table's name (it hides it from its session), but
    // not another temporary table's.
    let exists = if create.temporary {
        s.temporary_table(&name).is_some()
    } else {
        s.shared().engine.table(&name).is_ok()
    };
    if exists {
        let name = crate::names::short(&name);
        if create.if_not_exists {
            s.warn("Note", 1050, format!("Table '{name}' already exists"));
            return Ok(Response::done(0));
        }
        return Err(SqlError::new(
            1050,
            "42S01",
            format!("Table '{name}' already exists"),
        ));
    }
    if create.query.is_some() {
        return Err(SqlError::unsupported("CREATE TABLE ... SELECT"));
    }
    let mut columns = Vec::new();
    let mut defaults = Vec::new();
    let mut primary: Option<Vec<String>> = None;
    let mut indexes: Vec<(String, Vec<String>, bool)> = Vec::new();
    let mut auto_increment = None;
    for (i, c) in create.columns.iter().enumerate() {
        if create.columns[..i]
            .iter()
            .any(|b| b.name.value.eq_ignore_ascii_case(&c.name.value))
        {
            return Err(SqlError::new(
                1060,
                "42S21",
                format!("Duplicate column name '{}'", c.name.value),
            ));
        }
        let defined = column_def(c)?;
        if defined.primary {
            primary = Some(vec![c.name.value.clone()]);
        }
        if defined.unique {
            indexes.push((c.name.value.clone(), vec![c.name.value.clone()], true));
        }
        if defined.auto_increment {
            auto_increment = Some(i);
        }
        defaults.push(defined.default);
        let column = defined.column;
        columns.push(column);
    }
    let mut foreign = Vec::new();
    for constraint in &create.constraints {
        match constraint {
            TableConstraint::ForeignKey(fk) => foreign.push(fk),
            TableConstraint::PrimaryKey(pk) => primary = Some(index_columns(&pk.columns)?),
            TableConstraint::Unique(u) => {
                let cols = index_columns(&u.columns)?;
                let name = u
                    .name
                    .as_ref()
                    .or(u.index_name.as_ref())
                    .map_or_else(|| cols[0].clone(), |n| n.value.clone());
                indexes.push((name, cols, true));
            }
            TableConstraint::Index(ix) => {
                let cols = index_columns(&ix.columns)?;
                let name = ix
                    .name
                    .as_ref()
                    .map_or_else(|| cols[0].clone(), |n| n.value.clone());
                indexes.push((name, cols, false));
            }
            other => return Err(SqlError::unsupported(format!("constraint {other}"))),
        }
    }
    let mut schema = TableSchema::new(name.clone(), columns);
    if let Some(pk) = &primary {
        for col in pk {
            if let Some(c) = schema
                .columns
                .iter_mut()
                .find(|c| c.name.eq_ignore_ascii_case(col))
            {
                c.nullable = false; // MySQL makes primary key columns NOT NULL
            }
        }
        let refs: Vec<&str> = pk.iter().map(String::as_str).collect();
        schema = schema.primary_key(&refs)?;
    }
    for (index, cols, unique) in &indexes {
        let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
        schema = schema.index(index, &refs, *unique)?;
    }
    if let Some(col) = auto_increment {
        let leads_a_key = schema.primary_key.as_ref().is_some_and(|k| k[0] == col)
            || schema
                .indexes
                .iter()
                .any(|IndexDef { columns, .. }| columns[0] == col);
        if !leads_a_key {
            return Err(SqlError::new(
                1075,
                "42000",
                "Incorrect table definition; there can be only one auto column and it must be defined as a key",
            ));
        }
    }
    if create.temporary && !foreign.is_empty() {
        return Err(SqlError::unsupported("a foreign key of a temporary table"));
    }
    let mut foreign_keys: Vec<ForeignKey> = Vec::new();
    for fk in foreign {
        let defined = ForeignKey::define(fk, &schema, &foreign_keys)?;
        schema = with_child_index(s, schema, &defined, fk.index_name.as_ref())?;
        foreign_keys.push(defined);
    }
    // The session's own (invisible to others, gone at disconnect, never logged), or the
    // catalog's.
    let table = if create.temporary {
        let table = s.shared().engine.create_temporary_table(schema)?;
        s.add_temporary(table.clone());
        table
    } else {
        s.shared().engine.create_table(schema)?
    };
    let meta = TableMeta {
        defaults,
        auto_increment,
        next_id: 1,
        foreign_keys,
    };
    s.shared().catalog.save(&s.shared().engine, &table, meta)?;
    Ok(Response::done(0))
}

/// `schema` (a table's definition, the child of `fk`), checked against the parent of `fk`
/// and given an index that `fk`'s columns lead if it has none, named as the key's index
/// (`index_name`) or the key.
///
/// The parent must be there and have an index its columns lead, unless `foreign_key_checks`
/// is off and it is not there yet (MySQL allows a dump to create a child before its parent).
pub(crate) fn with_child_index(
    s: &Context<'_>,
    mut schema: TableSchema,
    fk: &ForeignKey,
    index_name: Option<&ast::Ident>,
) -> Result<TableSchema, SqlError> {
    if fk.parent.eq_ignore_ascii_case(&schema.name) {
        fk.resolve_parent(&schema, &schema)?;
    } else {
        match s.shared().engine.table(&fk.parent) {
            Ok(parent) => drop(fk.resolve_parent(&schema, parent.schema())?),
            Err(_) if !s.settings().foreign_key_checks => {}
            Err(_) => {
                return Err(SqlError::new(
                    1824,
                    "HY000",
                    format!("Failed to open the referenced table '{}'", fk.parent),
                ));
            }
        }
    }
    let columns = fk
        .child_positions(&schema)
        .expect("define checked the columns");
    if crate::foreign::leading_index(&schema, &columns).is_none() {
        let name = index_name.map_or_else(|| fk.name.clone(), |n| n.value.clone());
        let names: Vec<&str> = fk.columns.iter().map(String::as_str).collect();
        schema = schema.index(&name, &names, false)?;
    }
    Ok(schema)
}

/// 3730 if a table other than `names` has a foreign key that references one of the base
/// tables `names` (a temporary table of the name goes first, and has none).
fn referenced(s: &Context<'_>, names: &[String]) -> Result<(), SqlError> {
    let shared = s.shared();
    let dropped = |n: &str| names.iter().any(|d| d.eq_ignore_ascii_case(n));
    for name in names.iter().filter(|n| s.temporary_table(n).is_none()) {
        let referencing = shared.catalog.referencing(&shared.engine, name);
        if let Some((child, fk)) = referencing.iter().find(|(c, _)| !dropped(c.name())) {
            return Err(SqlError::new(
                3730,
                "HY000",
                format!(
                    "Cannot drop table '{name}' referenced by a foreign key constraint '{}' \
                     on table '{}'.",
                    fk.name,
                    child.name()
                ),
            ));
        }
    }
    Ok(())
}

/// CREATE DATABASE | SCHEMA [IF NOT EXISTS] name: a new, empty namespace of tables, kept
/// by a durable engine.
pub(crate) fn create_database(
    s: &mut Context<'_>,
    name: &ast::ObjectName,
    if_not_exists: bool,
) -> Result<Response, SqlError> {
    let name = object_name(name)?;
    let exists = || {
        SqlError::new(
            1007,
            "HY000",
            format!("Can't create database '{name}'; database exists"),
        )
    };
    let added = !crate::names::is_system(&name)
        && (s.shared().catalog.databases.lock()).insert(name.to_ascii_lowercase());
    if !added {
        if !if_not_exists {
            return Err(exists());
        }
        s.warn("Note", 1007, exists().message);
        return Ok(Response::done(0));
    }
    let shared = s.shared();
    shared.catalog.save_databases(&shared.engine)?;
    Ok(Response::done(1))
}

/// DROP DATABASE | SCHEMA [IF EXISTS] name: the database and every table in it (3730 first
/// if a table of another database has a foreign key to one of them); its number of tables.
/// A session using it is then in none.
pub(crate) fn drop_database(
    s: &mut Context<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
) -> Result<Response, SqlError> {
    let [name] = names else {
        return Err(SqlError::parse("DROP DATABASE of more than one name"));
    };
    let name = object_name(name)?.to_ascii_lowercase();
    if crate::names::is_system(&name) {
        return Err(SqlError::new(
            1044,
            "42000",
            format!(
                "Access denied for user '{}'@'%' to database '{name}'",
                s.user()
            ),
        ));
    }
    if !s.shared().has_database(&name) {
        let missing = SqlError::new(
            1008,
            "HY000",
            format!("Can't drop database '{name}'; database doesn't exist"),
        );
        if !if_exists {
            return Err(missing);
        }
        s.warn("Note", 1008, missing.message);
        return Ok(Response::done(0));
    }
    let home = s.home().to_owned();
    let tables: Vec<String> = (s.shared().engine.tables().iter())
        .map(|t| t.name().to_owned())
        .filter(|t| crate::names::split(&home, t).0.eq_ignore_ascii_case(&name))
        .collect();
    if s.settings().foreign_key_checks {
        referenced(s, &tables)?;
    }
    let dropped = tables.iter().filter(|t| drop_base(s, t)).count();
    let shared = s.shared();
    shared.catalog.databases.lock().remove(&name);
    shared.catalog.save_databases(&shared.engine)?;
    if s.database().is_some_and(|d| d.eq_ignore_ascii_case(&name)) {
        s.leave_database();
    }
    Ok(Response::done(dropped as u64))
}

/// Drops base table `name` and its metadata; whether it was there.
fn drop_base(s: &Context<'_>, name: &str) -> bool {
    let shared = s.shared();
    if shared.engine.drop_table(name).is_err() {
        return false;
    }
    shared.catalog.forget(name);
    true
}

/// CREATE [UNIQUE] INDEX name ON t (columns).
pub(crate) fn create_index(
    s: &mut Context<'_>,
    create: &ast::CreateIndex,
) -> Result<Response, SqlError> {
    let table = object_name(&create.table_name)?;
    let columns = index_columns(&create.columns)?;
    let name = match &create.name {
        Some(n) => object_name(n)?,
        None => columns[0].clone(),
    };
    let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
    if s.temporary_table(&table).is_some() {
        return Err(SqlError::unsupported("CREATE INDEX on a temporary table"));
    }
    match s
        .shared()
        .engine
        .create_index(&table, &name, &refs, create.unique)
    {
        Ok(_) => Ok(Response::done(0)),
        Err(e)
            if create.if_not_exists
                && matches!(e, waterline_txn::TxnError::Schema(ref refused) if refused.kind == waterline_txn::Refusal::DuplicateKeyName) =>
        {
            Ok(Response::done(0))
        }
        Err(e) => Err(e.into()),
    }
}

/// DROP [TEMPORARY] TABLE [IF EXISTS] t, ...: a temporary table of the name goes first, as
/// in MySQL; with TEMPORARY, only temporary tables.
pub(crate) fn drop_tables(
    s: &mut Context<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
    temporary: bool,
) -> Result<Response, SqlError> {
    let db = s.catalog_database();
    let names = names
        .iter()
        .map(object_name)
        .collect::<Result<Vec<_>, _>>()?;
    let exists = |s: &Context<'_>, n: &str| {
        s.temporary_table(n).is_some() || (!temporary && s.shared().engine.table(n).is_ok())
    };
    if !if_exists && let Some(missing) = names.iter().find(|n| !exists(s, n)) {
        return Err(SqlError::new(
            1051,
            "42S02",
            format!("Unknown table '{}'", qualified(&db, missing)),
        ));
    }
    if !temporary && s.settings().foreign_key_checks {
        referenced(s, &names)?;
    }
    for name in &names {
        if s.drop_temporary(name) {
            continue;
        }
        if temporary {
            s.warn(
                "Note",
                1051,
                format!("Unknown table '{}'", qualified(&db, name)),
            );
            continue;
        }
        if !drop_base(s, name) {
            s.warn(
                "Note",
                1051,
                format!("Unknown table '{}'", qualified(&db, name)),
            );
        }
    }
    Ok(Response::done(0))
}
