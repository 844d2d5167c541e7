//! The session's side of LOCK TABLES (`table_locks.rs`): taking and giving back its table
//! locks, and what each statement must respect, its own locks or others'.

use sqlparser::ast::{self, Statement};

use super::{Response, Session};
use crate::error::SqlError;
use crate::table_locks::{not_locked, read_locked, tables_of};

impl Session {
    /// LOCK TABLES: commits, gives back the locks the session held, then takes these (a
    /// table named twice is locked WRITE if either says so). Temporary tables need none.
    pub(crate) fn lock_tables(&mut self, tables: &[ast::LockTable]) -> Result<Response, SqlError> {
        self.unlock_tables()?;
        self.commit()?;
        let db = self.catalog_database();
        let mut wanted: Vec<(String, waterline_txn::TableId, bool)> = Vec::new();
        for t in tables {
            let name = &t.table.value;
            if self.temporary_table(name).is_some() {
                continue;
            }
            let table =
                (self.shared.engine.table(name)).map_err(|_| SqlError::no_table(&db, name))?;
            let write = matches!(t.lock_type, ast::LockTableType::Write { .. });
            match wanted.iter_mut().find(|(_, id, _)| *id == table.id()) {
                Some(entry) => entry.2 |= write,
                None => wanted.push((table.name().to_owned(), table.id(), write)),
            }
        }
        if wanted.is_empty() {
            // Temporary tables alone: nothing for others to respect.
            return Ok(Response::done(0));
        }
        let ids: Vec<_> = wanted.iter().map(|(_, id, write)| (*id, *write)).collect();
        let stop = self.control.stop_flag();
        (self.shared.table_locks).lock(
            self.connection_id,
            &ids,
            (self.settings.lock_wait_timeout, &stop),
        )?;
        self.locked_tables = wanted;
        Ok(Response::done(0))
    }

    /// Runs `f` while this session holds table `table` locked WRITE, so that other sessions'
    /// statements that use it wait (ALTER TABLE's copy, as MySQL's exclusive metadata lock);
    /// a session under LOCK TABLES runs `f` at once (it has the table locked WRITE, or the
    /// statement was refused).
    pub(crate) fn with_table_exclusive<T>(
        &mut self,
        table: waterline_txn::TableId,
        f: impl FnOnce(&mut Session) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        if !self.locked_tables.is_empty() {
            return f(self);
        }
        let stop = self.control.stop_flag();
        (self.shared.table_locks).lock(
            self.connection_id,
            &[(table, true)],
            (self.settings.lock_wait_timeout, &stop),
        )?;
        let result = f(self);
        self.shared.table_locks.unlock(self.connection_id);
        result
    }

    /// FLUSH TABLES [t, ...] WITH READ LOCK: LOCK TABLES ... READ of the tables named, or
    /// of every base table (MySQL's global read lock, which keeps every other session from
    /// writing until UNLOCK TABLES, as a dump of all databases wants).
    pub(crate) fn flush_with_read_lock(
        &mut self,
        tables: &[(Option<String>, String)],
    ) -> Result<Response, SqlError> {
        let names: Vec<String> = if tables.is_empty() {
            (self.shared.engine.tables().iter())
                .map(|t| t.name().to_owned())
                .collect()
        } else {
            let mut names = Vec::new();
            for (db, table) in tables {
                let db = match db {
                    Some(db) => std::sync::Arc::from(db.as_str()),
                    None => self.database().cloned().ok_or_else(SqlError::no_database)?,
                };
                names.push(crate::names::engine_name(self.home(), &db, table));
            }
            names
        };
        let locks: Vec<ast::LockTable> = (names.into_iter())
            .map(|name| ast::LockTable {
                table: ast::Ident::new(name),
                alias: None,
                lock_type: ast::LockTableType::Read { local: false },
            })
            .collect();
        self.lock_tables(&locks)
    }

    /// UNLOCK TABLES (and BEGIN, which gives table locks back too): commits and gives back
    /// the session's table locks, if it holds any; nothing otherwise.
    pub(crate) fn unlock_tables(&mut self) -> Result<(), SqlError> {
        if self.locked_tables.is_empty() {
            return Ok(());
        }
        let committed = self.commit();
        self.shared.table_locks.unlock(self.connection_id);
        self.locked_tables.clear();
        committed.map(drop)
    }

    /// Before `statement` runs: with table locks of its own, the session may use only the
    /// tables it locked (1100) and write only those locked WRITE (1099); without, it waits
    /// while another session's locks keep it from the tables it uses.
    pub(crate) fn respect_table_locks(&mut self, statement: &Statement) -> Result<(), SqlError> {
        if self.locked_tables.is_empty() && !self.shared.table_locks.any() {
            return Ok(());
        }
        if matches!(
            statement,
            Statement::LockTables { .. } | Statement::UnlockTables
        ) {
            return Ok(());
        }
        let used: Vec<(String, bool)> = (tables_of(statement).into_iter())
            .filter(|(name, _)| self.temporary_table(name).is_none())
            .collect();
        if !self.locked_tables.is_empty() {
            for (name, write) in &used {
                match (self.locked_tables.iter()).find(|(n, ..)| n.eq_ignore_ascii_case(name)) {
                    None => return Err(not_locked(name)),
                    Some((_, _, false)) if *write => return Err(read_locked(name)),
                    Some(_) => {}
                }
            }
            return Ok(());
        }
        let ids: Vec<_> = (used.iter())
            .filter_map(|(name, write)| Some((self.shared.engine.table(name).ok()?.id(), *write)))
            .collect();
        let stop = self.control.stop_flag();
        (self.shared.table_locks).enter(
            self.connection_id,
            &ids,
            (self.settings.lock_wait_timeout, &stop),
        )
    }
}
