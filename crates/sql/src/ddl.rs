//! CREATE TABLE, CREATE INDEX, DROP TABLE and CREATE DATABASE.

use sqlparser::ast::{self, ColumnOption, Expr as Ast, TableConstraint};
use sqlparser::tokenizer::Token;
use waterline_planner::Env;
use waterline_planner::bind::{Binder, object_name};
use waterline_txn::{Column, IndexDef, TableSchema};

use crate::error::SqlError;
use crate::session::{Response, Session};
use crate::shared::TableMeta;
use crate::types::{column_type, store};

fn index_columns(cols: &[ast::IndexColumn]) -> Result<Vec<String>, SqlError> {
    cols.iter()
        .map(|c| match &c.column.expr {
            Ast::Identifier(id) => Ok(id.value.clone()),
            other => Err(SqlError::unsupported(format!("an index on {other}"))),
        })
        .collect()
}

/// CREATE TABLE [IF NOT EXISTS] t (columns, keys) [ENGINE=...].
pub(crate) fn create_table(
    s: &mut Session,
    create: &ast::CreateTable,
) -> Result<Response, SqlError> {
    s.database().ok_or_else(SqlError::no_database)?;
    let name = object_name(&create.name)?;
    // A temporary table may have a base table's name (it hides it from its session), but
    // not another temporary table's.
    let exists = if create.temporary {
        s.temporary_table(&name).is_some()
    } else {
        s.shared().engine.table(&name).is_ok()
    };
    if exists {
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
        let ty = column_type(&c.data_type)?;
        let mut nullable = true;
        let mut default = None;
        for option in &c.options {
            match &option.option {
                ColumnOption::NotNull => nullable = false,
                ColumnOption::Null => nullable = true,
                ColumnOption::Default(e) => {
                    default = Some(Binder::new(&[]).expr(e, "default")?.eval(Env::new(&[], &[]))?);
                }
                ColumnOption::PrimaryKey(_) => {
                    nullable = false;
                    primary = Some(vec![c.name.value.clone()]);
                }
                ColumnOption::Unique(_) => indexes.push((c.name.value.clone(), vec![c.name.value.clone()], true)),
                ColumnOption::DialectSpecific(tokens) if tokens.iter().any(|t| matches!(t, Token::Word(w) if w.value.eq_ignore_ascii_case("AUTO_INCREMENT"))) => {
                    auto_increment = Some(i);
                }
                ColumnOption::CharacterSet(_) | ColumnOption::Collation(_) | ColumnOption::Comment(_) => {}
                other => return Err(SqlError::unsupported(format!("column option {other}"))),
            }
        }
        let column = if nullable {
            Column::nullable(c.name.value.clone(), ty)
        } else {
            Column::new(c.name.value.clone(), ty)
        };
        defaults.push(match default {
            Some(v) => Some(store(&column, v, true, 1, &mut Vec::new()).map_err(|_| {
                SqlError::new(
                    1067,
                    "42000",
                    format!("Invalid default value for '{}'", column.name),
                )
            })?),
            None => None,
        });
        columns.push(column);
    }
    for constraint in &create.constraints {
        match constraint {
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
    // The session's own (invisible to others, gone at disconnect, never logged), or the
    // catalog's.
    let table = if create.temporary {
        let table = s.shared().engine.create_temporary_table(schema)?;
        s.add_temporary(table.clone());
        table
    } else {
        s.shared().engine.create_table(schema)?
    };
    s.shared().catalog.meta.lock().insert(
        crate::shared::meta_key(&table),
        TableMeta {
            defaults,
            auto_increment,
            next_id: 1,
        },
    );
    Ok(Response::done(0))
}

/// CREATE DATABASE [IF NOT EXISTS] name: a new name for the one namespace of tables.
pub(crate) fn create_database(
    s: &mut Session,
    name: &ast::ObjectName,
    if_not_exists: bool,
) -> Result<Response, SqlError> {
    let name = object_name(name)?;
    if !s
        .shared()
        .catalog
        .databases
        .lock()
        .insert(name.to_ascii_lowercase())
        && !if_not_exists
    {
        return Err(SqlError::new(
            1007,
            "HY000",
            format!("Can't create database '{name}'; database exists"),
        ));
    }
    Ok(Response::done(1))
}

/// CREATE [UNIQUE] INDEX name ON t (columns).
pub(crate) fn create_index(
    s: &mut Session,
    create: &ast::CreateIndex,
) -> Result<Response, SqlError> {
    s.database().ok_or_else(SqlError::no_database)?;
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
    s: &mut Session,
    names: &[ast::ObjectName],
    if_exists: bool,
    temporary: bool,
) -> Result<Response, SqlError> {
    let db = s.database().cloned().ok_or_else(SqlError::no_database)?;
    let names = names
        .iter()
        .map(object_name)
        .collect::<Result<Vec<_>, _>>()?;
    let exists = |s: &Session, n: &str| {
        s.temporary_table(n).is_some() || (!temporary && s.shared().engine.table(n).is_ok())
    };
    if !if_exists && let Some(missing) = names.iter().find(|n| !exists(s, n)) {
        return Err(SqlError::new(
            1051,
            "42S02",
            format!("Unknown table '{db}.{missing}'"),
        ));
    }
    for name in &names {
        if s.drop_temporary(name) {
            continue;
        }
        if temporary {
            s.warn("Note", 1051, format!("Unknown table '{db}.{name}'"));
            continue;
        }
        match s.shared().engine.drop_table(name) {
            Ok(()) => {
                s.shared()
                    .catalog
                    .meta
                    .lock()
                    .remove(&name.to_ascii_lowercase());
            }
            Err(_) => s.warn("Note", 1051, format!("Unknown table '{db}.{name}'")),
        }
    }
    Ok(Response::done(0))
}
