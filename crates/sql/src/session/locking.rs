//! The session's side of LOCK TABLES (`table_locks.rs`): taking and giving back its table
//! locks, and what each statement must respect, its own locks or others'.

use sqlparser::ast::{self, Statement};

use super::{Context, Response};
use crate::error::SqlError;
use crate::table_locks::{not_locked, read_locked, tables_of};

/// One name a session's LOCK TABLES locked a table under.
#[derive(Debug)]
pub(crate) struct Locked {
    /// The table (the engine's name).
    pub(crate) name: String,
    /// The alias it was locked under (the statements must use it).
    pub(crate) alias: Option<String>,
    pub(crate) id: waterline_txn::TableId,
    /// Locked WRITE (else READ).
    pub(crate) write: bool,
}

impl Context<'_> {
    /// LOCK TABLES: commits, gives back the locks the session held, then takes these (a
    /// table named twice is locked WRITE if either says so). Temporary tables need none.
    pub(crate) fn lock_tables(&mut self, tables: &[ast::LockTable]) -> Result<Response, SqlError> {
        self.unlock_tables()?;
        self.commit()?;
        let db = self.catalog_database();
        let mut wanted: Vec<Locked> = Vec::new();
        for t in tables {
            let name = &t.table.value;
            if self.temporary_table(name).is_some() {
                continue;
            }
            let table =
                (self.shared.engine.table(name)).map_err(|_| SqlError::no_table(&db, name))?;
            let write = matches!(t.lock_type, ast::LockTableType::Write { .. });
            let alias = t.alias.as_ref().map(|a| a.value.clone());
            let same = |l: &&mut Locked| {
                l.id == table.id()
                    && l.alias.as_deref().map(str::to_ascii_lowercase)
                        == alias.as_deref().map(str::to_ascii_lowercase)
            };
            match wanted.iter_mut().find(same) {
                Some(entry) => entry.write |= write,
                None => wanted.push(Locked {
                    name: table.name().to_owned(),
                    alias,
                    id: table.id(),
                    write,
                }),
            }
        }
        if wanted.is_empty() {
            // Temporary tables alone: nothing for others to respect.
            return Ok(Response::done(0));
        }
        // The engine-wide lock of each table: WRITE if any of its names is.
        let mut ids: Vec<(waterline_txn::TableId, bool)> = Vec::new();
        for l in &wanted {
            match ids.iter_mut().find(|(id, _)| *id == l.id) {
                Some(entry) => entry.1 |= l.write,
                None => ids.push((l.id, l.write)),
            }
        }
        let stop = self.connection.control.stop_flag();
        (self.shared.table_locks).lock(
            self.connection.id,
            &ids,
            (self.vars.settings.lock_wait_timeout, &stop),
        )?;
        *self.locked_tables = wanted;
        Ok(Response::done(0))
    }

    /// Runs `f` while this session holds table `table` locked WRITE, so that other sessions'
    /// statements that use it wait (ALTER TABLE's copy, as MySQL's exclusive metadata lock);
    /// a session under LOCK TABLES runs `f` at once (it has the table locked WRITE, or the
    /// statement was refused).
    pub(crate) fn with_table_exclusive<T>(
        &mut self,
        table: waterline_txn::TableId,
        f: impl FnOnce(&mut Context<'_>) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        if !self.locked_tables.is_empty() {
            return f(self);
        }
        let stop = self.connection.control.stop_flag();
        (self.shared.table_locks).lock(
            self.connection.id,
            &[(table, true)],
            (self.vars.settings.lock_wait_timeout, &stop),
        )?;
        let result = f(self);
        self.shared.table_locks.unlock(self.connection.id);
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
        self.shared.table_locks.unlock(self.connection.id);
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
        let used: Vec<_> = (tables_of(statement).into_iter())
            .filter(|u| self.temporary_table(&u.name).is_none())
            .collect();
        if !self.locked_tables.is_empty() {
            for u in &used {
                let locked = (self.locked_tables.iter()).find(|l| {
                    l.name.eq_ignore_ascii_case(&u.name)
                        && l.alias
                            .as_deref()
                            .unwrap_or(crate::names::short(&l.name))
                            .eq_ignore_ascii_case(u.key())
                });
                match locked {
                    None => return Err(not_locked(u.key())),
                    Some(l) if u.write && !l.write => return Err(read_locked(u.key())),
                    Some(_) => {}
                }
            }
            return Ok(());
        }
        let ids: Vec<_> = (used.iter())
            .filter_map(|u| Some((self.shared.engine.table(&u.name).ok()?.id(), u.write)))
            .collect();
        let stop = self.connection.control.stop_flag();
        (self.shared.table_locks).enter(
            self.connection.id,
            &ids,
            (self.vars.settings.lock_wait_timeout, &stop),
        )
    }
}
