//! The session's side of databases as namespaces (`names.rs`): the home database, the
//! database a statement's tables are named from, and the rewrite of a statement's table
//! names for the database in use.

use sqlparser::ast::Statement;

use super::Context;
use crate::error::SqlError;
use crate::names::split;

impl Context<'_> {
    /// The server's home database (see `names.rs`).
    pub(crate) fn home(&self) -> &str {
        self.shared().home()
    }

    /// The database a statement's tables are named from: the one in use, else the home
    /// database (every table name is qualified by then: [`Context::qualify`]).
    pub(crate) fn catalog_database(&self) -> std::sync::Arc<str> {
        match self.database() {
            Some(db) => std::sync::Arc::clone(db),
            None => std::sync::Arc::from(self.home()),
        }
    }

    /// The database of the engine's table `name`: 1049 if there is no such database (CREATE
    /// TABLE in one).
    pub(crate) fn database_of<'a>(&'a self, name: &'a str) -> Result<&'a str, SqlError> {
        let (db, _) = split(self.home(), name);
        if !self.shared().has_database(db) {
            return Err(SqlError::unknown_database(db));
        }
        Ok(db)
    }

    /// 1146 unless table `table` of database `db` is there (a temporary one, or a base one),
    /// for the statements named by words, not by a parsed name (SHOW INDEX, ... KEYS).
    pub(crate) fn table_in(&self, db: &str, table: &str) -> Result<(), SqlError> {
        let name = crate::names::engine_name(self.home(), db, table);
        if self.temporary_table(&name).is_none() && self.shared().engine.table(&name).is_err() {
            return Err(SqlError::no_table(db, table));
        }
        Ok(())
    }

    /// Rewrites every table name in `statement` to the engine's name of the table, for the
    /// database in use (`names.rs`), and its USING and NATURAL joins to ONs
    /// (`select/using.rs`).
    pub(crate) fn qualify(&self, statement: &mut Statement) -> Result<(), SqlError> {
        crate::names::qualify(statement, self.home(), self.database().map(|d| &**d))?;
        // USING and NATURAL joins, once every name is the engine's.
        let (_, tables) = self.tables();
        let columns_of = |name: &str| {
            (tables.iter())
                .find(|t| t.name().eq_ignore_ascii_case(name))
                .map(|t| t.schema().columns.iter().map(|c| c.name.clone()).collect())
        };
        crate::select::using::rewrite(statement, &columns_of)
    }
}
