//! A session's temporary tables (CREATE TEMPORARY TABLE): named as their creator names
//! them, each hiding a base table of its name from its session.

use super::*;

impl Session {
    /// The tables this session's statements name, and the version of that list: the
    /// engine's, with each of the session's temporary tables in place of a base table of
    /// its name.
    pub(crate) fn tables(&self) -> (u64, Vec<Table>) {
        let (version, mut tables) = self.shared.engine.versioned_tables();
        if !self.temporary.is_empty() {
            tables.retain(|t| {
                !self
                    .temporary
                    .iter()
                    .any(|tmp| tmp.name().eq_ignore_ascii_case(t.name()))
            });
            tables.extend(self.temporary.iter().cloned());
        }
        (version + self.temporary_changes, tables)
    }

    /// The version of [`Session::tables`] (it moves whenever the list may have changed).
    pub(crate) fn catalog_version(&self) -> u64 {
        self.shared.engine.catalog_version() + self.temporary_changes
    }

    /// The session's temporary table `name`, if it has one.
    pub(crate) fn temporary_table(&self, name: &str) -> Option<&Table> {
        self.temporary
            .iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Adds a temporary table (CREATE TEMPORARY TABLE).
    pub(crate) fn add_temporary(&mut self, table: Table) {
        self.temporary.push(table);
        self.temporary_changes += 1;
    }

    /// Drops temporary table `name` (and its metadata); whether there was one.
    pub(crate) fn drop_temporary(&mut self, name: &str) -> bool {
        let Some(i) = self
            .temporary
            .iter()
            .position(|t| t.name().eq_ignore_ascii_case(name))
        else {
            return false;
        };
        let table = self.temporary.remove(i);
        self.shared
            .catalog
            .meta
            .lock()
            .remove(&crate::shared::meta_key(&table));
        self.temporary_changes += 1;
        true
    }

    /// Drops every temporary table (at disconnect, and COM_RESET_CONNECTION).
    pub(super) fn drop_all_temporary(&mut self) {
        let names: Vec<String> = self.temporary.iter().map(|t| t.name().to_owned()).collect();
        for name in names {
            self.drop_temporary(&name);
        }
    }
}
