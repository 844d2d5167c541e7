//! Databases as namespaces of tables: how a table a statement names (`t` in the database in
//! use, or `db.t`) maps to the engine's table, whose catalog has one flat list of names.
//!
//! The server's first database (`--database`, `waterline` when embedded) is its **home**:
//! its tables have their own names in the engine, so the tables the engine's typed API
//! made (TPC-C-lite's loader, an embedding program) are the home database's tables. A table
//! of any other database `db` is the engine's `db.t` (the dot cannot be in a table name: a
//! name with one is refused, 1103), as InnoDB names its tables `db/t`.
//!
//! Before a statement is bound or run, [`qualify`] rewrites every table name in it
//! to the engine's name, so the rest of the crate names tables one way. A name without a
//! database, with none in use, is 1046, as in MySQL; the names of a statement's common
//! table expressions and of the system databases (`information_schema`,
//! `performance_schema`, `mysql`, `sys`) are left alone.

use std::collections::HashSet;
use std::ops::ControlFlow;

use sqlparser::ast::{
    self, AlterTableOperation, Ident, ObjectName, ObjectNamePart, Statement, TableConstraint,
    VisitorMut,
};

use crate::error::SqlError;
use waterline_planner::walk;

/// The databases whose tables are not the catalog's (the system views, and what waterline
/// does not have).
const SYSTEM: [&str; 4] = ["information_schema", "performance_schema", "mysql", "sys"];

/// Whether `db` is a system database.
pub(crate) fn is_system(db: &str) -> bool {
    SYSTEM.iter().any(|s| s.eq_ignore_ascii_case(db))
}

/// The engine's name of table `table` of database `db`, in a server whose home database is
/// `home`.
pub(crate) fn engine_name(home: &str, db: &str, table: &str) -> String {
    if db.eq_ignore_ascii_case(home) {
        table.to_owned()
    } else {
        format!("{}.{table}", db.to_ascii_lowercase())
    }
}

/// The database and the table's own name of the engine's table `name`.
pub(crate) fn split<'a>(home: &'a str, name: &'a str) -> (&'a str, &'a str) {
    name.split_once('.').unwrap_or((home, name))
}

pub(crate) use waterline_planner::own_name as short;

fn incorrect(name: &str) -> SqlError {
    SqlError::new(1103, "42000", format!("Incorrect table name '{name}'"))
}

/// Rewrites the names of one statement.
struct Qualify<'a> {
    home: &'a str,
    /// The database in use.
    current: Option<&'a str>,
    /// The common table expressions seen so far (a query's are seen before its body, which
    /// is where they are named).
    ctes: HashSet<String>,
}

impl Qualify<'_> {
    fn name(&self, name: &mut ObjectName) -> Result<(), SqlError> {
        let parts: Vec<&Ident> = name
            .0
            .iter()
            .map(|p| match p {
                ObjectNamePart::Identifier(id) => Ok(id),
                other => Err(SqlError::unsupported(format!("the table name {other}"))),
            })
            .collect::<Result<_, _>>()?;
        let (db, table) = match parts.as_slice() {
            [table] if self.ctes.contains(&table.value.to_ascii_lowercase()) => return Ok(()),
            [table] => (None, *table),
            [db, table] => (Some(db.value.as_str()), *table),
            _ => return Err(SqlError::parse(format!("the table name {name}"))),
        };
        if table.value.contains('.') || table.value.is_empty() {
            return Err(incorrect(&table.value));
        }
        let db = match db.or(self.current) {
            Some(db) if is_system(db) => return Ok(()),
            Some(db) => db,
            None => return Err(SqlError::no_database()),
        };
        let engine = engine_name(self.home, db, &table.value);
        if parts.len() > 1 || engine != table.value {
            *name = ObjectName::from(vec![Ident::with_quote('`', engine)]);
        }
        Ok(())
    }
}

impl VisitorMut for Qualify<'_> {
    type Break = SqlError;

    fn pre_visit_query(&mut self, q: &mut ast::Query) -> ControlFlow<SqlError> {
        if let Some(with) = &q.with {
            (self.ctes)
                .extend((with.cte_tables.iter()).map(|c| c.alias.name.value.to_ascii_lowercase()));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, relation: &mut ObjectName) -> ControlFlow<SqlError> {
        match self.name(relation) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }
}

/// The referenced table of a FOREIGN KEY constraint, if `c` is one.
fn references(c: &mut TableConstraint) -> Option<&mut ObjectName> {
    match c {
        TableConstraint::ForeignKey(fk) => Some(&mut fk.foreign_table),
        _ => None,
    }
}

/// Rewrites every table name in `statement` to the engine's name of the table, in a server
/// whose home database is `home`, with `current` in use (see the module page).
pub(crate) fn qualify(
    statement: &mut Statement,
    home: &str,
    current: Option<&str>,
) -> Result<(), SqlError> {
    // Statements whose names are databases, or name no table.
    if matches!(
        statement,
        Statement::ShowTables { .. }
            | Statement::ShowDatabases { .. }
            | Statement::ShowSchemas { .. }
            | Statement::CreateDatabase { .. }
            | Statement::CreateSchema { .. }
            | Statement::Use(_)
            | Statement::Set(_)
            | Statement::StartTransaction { .. }
            | Statement::Commit { .. }
            | Statement::Rollback { .. }
            | Statement::Drop {
                object_type: ast::ObjectType::Database | ast::ObjectType::Schema,
                ..
            }
    ) {
        return Ok(());
    }
    let mut q = Qualify {
        home,
        current,
        ctes: HashSet::new(),
    };
    match statement {
        Statement::Drop {
            object_type: ast::ObjectType::Table,
            names,
            ..
        } => {
            for name in names {
                q.name(name)?;
            }
        }
        Statement::Drop {
            object_type: ast::ObjectType::Index,
            table: Some(table),
            ..
        } => q.name(table)?,
        Statement::ShowCreate {
            obj_type: ast::ShowCreateObject::Table,
            obj_name,
        } => q.name(obj_name)?,
        Statement::LockTables { tables } => {
            for t in tables {
                let mut name = ObjectName::from(vec![t.table.clone()]);
                q.name(&mut name)?;
                if let Some(ObjectNamePart::Identifier(id)) = name.0.pop() {
                    t.table = id;
                }
            }
        }
        Statement::RenameTable(renames) => {
            for r in renames {
                q.name(&mut r.old_name)?;
                q.name(&mut r.new_name)?;
            }
        }
        Statement::CreateTable(create) => {
            for c in &mut create.constraints {
                if let Some(parent) = references(c) {
                    q.name(parent)?;
                }
            }
        }
        Statement::AlterTable(alter) => {
            for op in &mut alter.operations {
                match op {
                    AlterTableOperation::AddConstraint { constraint, .. } => {
                        if let Some(parent) = references(constraint) {
                            q.name(parent)?;
                        }
                    }
                    AlterTableOperation::RenameTable { table_name } => match table_name {
                        ast::RenameTableNameKind::As(name) | ast::RenameTableNameKind::To(name) => {
                            q.name(name)?
                        }
                    },
                    _ => {}
                }
            }
        }
        _ => {}
    }
    match walk::visit_mut(statement, &mut q) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_tables_keep_their_names_and_others_are_prefixed() {
        assert_eq!(engine_name("tpcc", "TPCC", "warehouse"), "warehouse");
        assert_eq!(engine_name("tpcc", "Shop", "t"), "shop.t");
        assert_eq!(split("tpcc", "shop.t"), ("shop", "t"));
        assert_eq!(split("tpcc", "t"), ("tpcc", "t"));
        assert_eq!(short("shop.t"), "t");
    }
}
