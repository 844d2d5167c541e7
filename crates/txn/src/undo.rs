//! A transaction's undo: the versions it pushed, popped newest first when it or one of its
//! statements rolls back.

use crate::lock::LockManager;
use crate::purge::{History, Touched};
use crate::table::{Kept, Table};
use crate::version::{RecordRef, Version};

/// One change to undo: the version this transaction pushed on a record of the table at
/// position `table` in the transaction's [`crate::purge::Tables`].
#[derive(Debug)]
pub(crate) struct Undo {
    pub(crate) table: u32,
    pub(crate) record: RecordRef,
    pub(crate) version: Version,
}

impl Undo {
    /// Pops the version; returns the record for purge if that left it empty (an undone
    /// insert), so that it leaves the index.
    fn apply(
        &self,
        tables: &[Table],
        locks: &LockManager,
        kept: &mut Vec<Kept>,
    ) -> Option<Touched> {
        let mut chain = self.record.write();
        chain.pop(&self.version);
        if let Some(row) = self.version.row() {
            let table = &tables[self.table as usize];
            table.unindex_undone(&self.record.key, row, &chain, locks, kept);
        }
        chain.is_empty().then(|| self.touched())
    }

    pub(crate) fn touched(&self) -> Touched {
        (self.table, RecordRef::clone(&self.record))
    }
}

/// Undoes `undo` (changes to `tables`) newest first and enters the records it emptied into
/// the history list.
pub(crate) fn undo_all<'a>(
    locks: &LockManager,
    history: &History,
    tables: &[Table],
    undo: impl DoubleEndedIterator<Item = &'a Undo>,
) {
    let mut kept = Vec::new();
    let emptied: Vec<Touched> = undo
        .rev()
        .filter_map(|u| u.apply(tables, locks, &mut kept))
        .collect();
    history.keep(kept);
    if !emptied.is_empty() {
        history.push(0, tables.to_vec(), emptied);
    }
}
