//! A session's temporary tables (CREATE TEMPORARY TABLE): named as their creator names
//! them, each hiding a base table of its name from its session.

use super::*;

/// The session's temporary tables (CREATE TEMPORARY TABLE), and how often that list
/// changed.
#[derive(Debug, Default)]
pub(super) struct Temporary {
    /// Named as their creator named them, each hiding a base table of the same name from
    /// this session alone.
    pub(super) tables: Vec<Table>,
    /// Bumped by every CREATE or DROP of a temporary table: with the engine's catalog
    /// version it says whether a binding still names the same tables.
    pub(super) changes: u64,
}

impl Context<'_> {
    /// The tables this session's statements name, and the version of that list: the
    /// engine's, with each of the session's temporary tables in place of a base table of
    /// its name.
    pub(crate) fn tables(&self) -> (u64, Vec<Table>) {
        let (version, mut tables) = self.shared.engine.versioned_tables();
        if !self.temporary.tables.is_empty() {
            tables.retain(|t| {
                !self
                    .temporary
                    .tables
                    .iter()
                    .any(|tmp| tmp.name().eq_ignore_ascii_case(t.name()))
            });
            tables.extend(self.temporary.tables.iter().cloned());
        }
        (version + self.temporary.changes, tables)
    }

    /// The version of [`Context::tables`] (it moves whenever the list may have changed).
    pub(crate) fn catalog_version(&self) -> u64 {
        self.shared.engine.catalog_version() + self.temporary.changes
    }

    /// The session's temporary table `name`, if it has one.
    pub(crate) fn temporary_table(&self, name: &str) -> Option<&Table> {
        self.temporary
            .tables
            .iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Adds a temporary table (CREATE TEMPORARY TABLE).
    pub(crate) fn add_temporary(&mut self, table: Table) {
        self.temporary.tables.push(table);
        self.temporary.changes += 1;
    }

    /// Drops temporary table `name` (and its metadata); whether there was one.
    pub(crate) fn drop_temporary(&mut self, name: &str) -> bool {
        let Some(i) = self
            .temporary
            .tables
            .iter()
            .position(|t| t.name().eq_ignore_ascii_case(name))
        else {
            return false;
        };
        let table = self.temporary.tables.remove(i);
        self.shared
            .catalog
            .meta
            .lock()
            .remove(&crate::shared::meta_key(&table));
        self.temporary.changes += 1;
        true
    }

    /// Drops every temporary table (at disconnect, and COM_RESET_CONNECTION).
    pub(super) fn drop_all_temporary(&mut self) {
        let names: Vec<String> = self
            .temporary
            .tables
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        for name in names {
            self.drop_temporary(&name);
        }
    }
}
