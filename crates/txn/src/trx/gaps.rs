//! Gap and next-key locks, under REPEATABLE READ (InnoDB's; see the lock modes on
//! `lock.rs`'s page), on the clustered index and secondary ones: a locking walk of a key
//! range locks every entry it reads with a next-key lock (the row, and the gap below it)
//! and, when the range ends before its limit, the gap below the first entry past it (the
//! supremum's if none), so no row can come into the range until the transaction ends; a
//! locking read of one key (of a unique index, every column equal) locks the row alone if
//! it exists, and the gap it would go in if not; and a new entry first asks for the gap it
//! goes in (insert intention), waiting while another transaction holds a lock on that gap.
//! READ COMMITTED takes no gap locks, and with `EngineConfig::gap_locks` off nothing does
//! (nor checks a gap).
//!
//! A walk reads the next entry, then locks the gap below it; an insert into that gap that
//! came in between is seen by looking again once the lock is held (the insert went in under
//! the same latch as the grant), and the walk then takes the new entry instead.

use super::*;
use crate::lock::{Gapped, gap_key_hash, gap_lock};
use crate::table::Kept;
use crate::table::{IndexEntry, Walk, entry_name};

impl Transaction {
    /// Whether this transaction's locking reads lock gaps: REPEATABLE READ's do (and so
    /// SERIALIZABLE's); READ COMMITTED's lock the rows they read only.
    pub(super) fn locks_gaps(&self) -> bool {
        self.isolation == Isolation::RepeatableRead && self.shared.config.gap_locks
    }

    /// Locks the gap below the entry named `next` (the supremum if `None`) of `index` (the
    /// clustered index if `None`) in `mode`. `Ok(true)` if newly taken (it is the last of
    /// `self.locks`).
    pub(super) fn lock_gap(
        &mut self,
        table: &Table,
        (index, next): (Option<usize>, Option<Key>),
        mode: LockMode,
    ) -> Result<bool, TxnError> {
        let hash = gap_key_hash(next.as_ref());
        self.lock(table, LockTarget::Gap(index, next), hash, mode)
    }

    /// Locks the gap below entry `next` of `walk`'s index (the supremum if `None`), then
    /// looks again with `seek`: `Ok(false)` (and no lock kept that this took) if `seek` no
    /// longer finds `next`, because an entry came into the gap or `next` left the index
    /// meanwhile.
    fn lock_gap_checked(
        &mut self,
        walk: &Walk<'_>,
        next: Option<&IndexEntry>,
        mode: LockMode,
        seek: impl Fn() -> Option<IndexEntry>,
    ) -> Result<bool, TxnError> {
        let newly = self.lock_gap(walk.table, walk.gap(next), mode)?;
        if seek().as_ref() == next {
            return Ok(true);
        }
        if newly {
            self.unlock_last();
        }
        Ok(false)
    }

    /// Locks the gap that absent key `key` would go in (a locking read that found nothing).
    /// `Ok(false)` if an entry with that key appeared meanwhile: the caller locks it instead.
    pub(super) fn lock_gap_of(
        &mut self,
        table: &Table,
        key: &Key,
        mode: LockMode,
    ) -> Result<bool, TxnError> {
        let range = KeyRange::All;
        let walk = Walk {
            table,
            index: None,
            range: &range,
        };
        let at = (key.clone(), Key::default());
        loop {
            let next = walk.after(&at);
            if self.lock_gap_checked(&walk, next.as_ref(), mode, || walk.after(&at))? {
                return Ok(!table.has_entry(key));
            }
        }
    }

    /// The clustered record for key `pk` of a row being inserted, created in the index if
    /// absent, once no other transaction holds a lock on the gap it goes in (see
    /// [`Transaction::enter_gap`]).
    pub(super) fn record_for_insert(
        &mut self,
        table: &Table,
        pk: &Key,
        hash: u64,
    ) -> Result<RecordRef, TxnError> {
        if !self.shared.config.gap_locks {
            return Ok(table.record_for_insert(pk, hash));
        }
        if let Some(record) = table.record_hashed(pk, hash) {
            return Ok(record);
        }
        let mut created = None;
        self.enter_gap(
            table,
            None,
            pk,
            || table.key_after(pk),
            Key::clone,
            || {
                created = Some(table.record_for_insert(pk, hash));
            },
        )?;
        Ok(created.expect("inserted under the gap's latch"))
    }

    /// Waits until no other transaction holds a lock on the gap that the entry named
    /// `own` of `index` (`None`: the clustered index) goes in, the gap below `seek()`
    /// (whose name is `name_of` it), and then runs `insert` under the gap's latch, so that
    /// no gap lock is granted between the check and the insert (the insert-intention wait,
    /// with deadlock detection and the lock-wait timeout). If this transaction holds a lock
    /// on that gap itself, it first locks the gap below the new entry too, so that its lock
    /// still covers the whole of what was one gap (InnoDB's
    /// `lock_rec_inherit_to_gap_if_gap_lock`). Returns whether it did.
    fn enter_gap<T: PartialEq>(
        &mut self,
        table: &Table,
        index: Option<usize>,
        own: &Key,
        seek: impl Fn() -> Option<T>,
        name_of: impl Fn(&T) -> Key,
        mut insert: impl FnMut(),
    ) -> Result<bool, TxnError> {
        let mut extended = false;
        loop {
            let next = seek();
            let (hash, key) = gap_lock(table.id(), index, next.as_ref().map(&name_of));
            let trx = self.ensure_id()?;
            let request = Request {
                trx,
                key,
                hash,
                mode: LockMode::Exclusive,
                timeout: self.lock_wait_timeout,
                interrupt: self.interrupt.as_deref(),
                nowait: false,
                table_name: table.name(),
            };
            let gapped = self.shared.locks.insert_into_gap(request, &mut |mine| {
                if mine && !extended {
                    return Gapped::MineFirst;
                }
                if seek() != next {
                    return Gapped::Moved;
                }
                insert();
                Gapped::Inserted
            });
            match gapped {
                Ok(Gapped::Inserted) => return Ok(extended),
                Ok(Gapped::Moved) => {}
                Ok(Gapped::MineFirst) => {
                    self.lock_gap(table, (index, Some(own.clone())), LockMode::Exclusive)?;
                    extended = true;
                }
                Err(error) => {
                    if error.rolled_back_transaction() {
                        self.end_by_rollback();
                    }
                    return Err(error);
                }
            }
        }
    }

    /// `f` of each row a locking walk ([`Transaction::lock_walk`]) reads, up to the limit:
    /// through a secondary index (with its `columns`), only the rows whose values there
    /// still equal the entry's.
    pub(super) fn lock_walk_rows<T>(
        &mut self,
        walk: &Walk<'_>,
        columns: Option<&Vec<usize>>,
        options: ReadOptions<'_>,
        mode: LockMode,
        f: &mut dyn FnMut(&Key, &[Value]) -> T,
    ) -> Result<Vec<T>, TxnError> {
        let mut rows = Vec::new();
        if options.limit == Some(0) {
            return Ok(rows);
        }
        self.lock_walk(walk, options, mode, &mut |at, version| {
            let row = version.as_ref().and_then(Version::row);
            let matches = |row: &&[Value]| columns.is_none_or(|c| project(row, c) == at.0);
            if let Some(row) = row.filter(matches) {
                rows.push(f(walk.pk(at), row));
            }
            options.limit.is_some_and(|n| rows.len() >= n)
        })?;
        Ok(rows)
    }

    /// A locking walk of `walk`'s range of its index (ascending, or descending if
    /// `options.reverse`) with next-key locks, as the module page says: the gap below each
    /// entry and its row (for a secondary index, the row the entry points to). `take` gets
    /// each entry, with the row's newest version (`None` for a deleted row), and says whether
    /// the walk is done.
    pub(super) fn lock_walk(
        &mut self,
        walk: &Walk<'_>,
        options: ReadOptions<'_>,
        mode: LockMode,
        take: &mut dyn FnMut(&IndexEntry, Option<Version>) -> bool,
    ) -> Result<(), TxnError> {
        if walk.is_unique_search() {
            // InnoDB's unique search: a live row with the key is locked alone, its record
            // lock taken first to see whether it is one; else the walk locks as any does.
            if let Some(at) = walk.first().filter(|at| !walk.past_end(at)) {
                let Some(version) =
                    self.lock_walked(walk.table, walk.pk(&at), mode, options.wait)?
                else {
                    return Ok(());
                };
                let live = version
                    .as_ref()
                    .and_then(Version::row)
                    .is_some_and(|r| walk.holds(&at, r));
                if live && walk.first().as_ref() == Some(&at) {
                    take(&at, version);
                    return Ok(());
                }
            }
        }
        if options.reverse {
            return self.lock_walk_down(walk, options.wait, mode, take);
        }
        let mut after: Option<IndexEntry> = None;
        loop {
            let seek = || match &after {
                None => walk.first(),
                Some(at) => walk.after(at),
            };
            let next = seek();
            if !self.lock_gap_checked(walk, next.as_ref(), mode, seek)? {
                continue;
            }
            let Some(at) = next.filter(|at| !walk.past_end(at)) else {
                return Ok(());
            };
            if let Some(version) = self.lock_walked(walk.table, walk.pk(&at), mode, options.wait)?
                && take(&at, version)
            {
                return Ok(());
            }
            after = Some(at);
        }
    }

    /// [`Transaction::lock_walk`] descending: the gap above the range first, then each entry
    /// downward, each read only once the gap above it is locked.
    fn lock_walk_down(
        &mut self,
        walk: &Walk<'_>,
        wait: LockWait,
        mode: LockMode,
        take: &mut dyn FnMut(&IndexEntry, Option<Version>) -> bool,
    ) -> Result<(), TxnError> {
        let mut above = loop {
            let past = walk.first_past();
            if self.lock_gap_checked(walk, past.as_ref(), mode, || walk.first_past())? {
                break past;
            }
        };
        loop {
            let Some(at) = walk.before(above.as_ref()) else {
                return Ok(());
            };
            if walk.below(&at) {
                return Ok(());
            }
            if !self
                .lock_gap_checked(walk, Some(&at), mode, || walk.has(&at).then(|| at.clone()))?
            {
                continue;
            }
            if let Some(version) = self.lock_walked(walk.table, walk.pk(&at), mode, wait)?
                && take(&at, version)
            {
                return Ok(());
            }
            above = Some(at);
        }
    }

    /// The record part of a walk's next-key lock on entry `key`: its newest version
    /// (`Some(None)` for a deleted row, whose lock stays, as InnoDB keeps next-key locks on
    /// the delete-marked records it passes), or `None` if `SKIP LOCKED` passes over it.
    fn lock_walked(
        &mut self,
        table: &Table,
        key: &Key,
        mode: LockMode,
        wait: LockWait,
    ) -> Result<Option<Option<Version>>, TxnError> {
        match self.lock_record_keeping(table, key, mode, wait, true, false) {
            Err(TxnError::LockNowait { .. }) if wait == LockWait::SkipLocked => Ok(None),
            found => Ok(Some(found?.and_then(|(_, version)| version))),
        }
    }

    /// When [`Transaction::index_row`] could not add its entries: with the record's latch
    /// let go, waits until each secondary entry `row` needs (over `old`, the row it
    /// replaces) can go in (see [`Transaction::enter_gap`]). Returns the entries whose gap
    /// this transaction holds itself, extended below them. If it gives up (a timeout, a
    /// deadlock), the entries an earlier try added go to purge, which takes out those no
    /// version of the row carries.
    pub(super) fn clear_index_gaps(
        &mut self,
        table: &Table,
        row: &[Value],
        pk: &Key,
        old: Option<&[Value]>,
    ) -> Result<Vec<(usize, IndexEntry)>, TxnError> {
        let latest = table.latest().clone();
        let entries = latest.entries_to_add(row, pk, old);
        let mut extended = Vec::new();
        for (i, entry) in &entries {
            if already_there(&latest, *i, entry, old) {
                continue;
            }
            let seek = || latest.index_entry_after(*i, entry);
            match self.enter_gap(
                &latest,
                Some(*i),
                &entry_name(entry),
                seek,
                entry_name,
                || {},
            ) {
                Ok(true) => extended.push((*i, entry.clone())),
                Ok(false) => {}
                Err(error) => {
                    let kept = entries
                        .into_iter()
                        .map(|(i, e)| Kept::Entry(latest.clone(), i, e));
                    self.shared.history.keep(kept.collect());
                    return Err(error);
                }
            }
        }
        Ok(extended)
    }

    /// Under the record's latch: adds the secondary entries `row` needs (over `old`), each
    /// under its gap's latch once no other transaction holds a lock on the gap. `false` if
    /// one does (or this one does, and has not extended it below the entry: `extended` is
    /// what [`Transaction::clear_index_gaps`] returned): the caller lets go of the latch,
    /// clears the gaps, and tries again. An entry added before stays for the next try.
    pub(super) fn index_row(
        &self,
        table: &Table,
        (row, pk, old): (&[Value], &Key, Option<&[Value]>),
        extended: &[(usize, IndexEntry)],
    ) -> bool {
        let latest = table.latest();
        let Some(me) = self.id else {
            unreachable!("a writer has its id");
        };
        let gaps = self.shared.config.gap_locks;
        for (i, entry) in latest.entries_to_add(row, pk, old) {
            if !gaps {
                latest.add_entry(i, entry);
                continue;
            }
            if already_there(latest, i, &entry, old) {
                continue;
            }
            let next = latest.index_entry_after(i, &entry);
            let (hash, key) = gap_lock(latest.id(), Some(i), next.as_ref().map(entry_name));
            let placed = self
                .shared
                .locks
                .try_insert_into_gap(me, &key, hash, |mine| {
                    if mine && !extended.iter().any(|(j, e)| *j == i && *e == entry) {
                        return Gapped::MineFirst;
                    }
                    if latest.index_entry_after(i, &entry) != next {
                        return Gapped::Moved;
                    }
                    latest.add_entry(i, entry.clone());
                    Gapped::Inserted
                });
            if placed != Some(Gapped::Inserted) {
                return false;
            }
        }
        true
    }
}

/// Whether secondary entry `entry` of index `index` needs no insert: an update may give a row
/// back a value an older version still has an entry for. A new row's entries are new, so an
/// insert does not search for them (a rare one left over goes through the gap's check).
fn already_there(table: &Table, index: usize, entry: &IndexEntry, old: Option<&[Value]>) -> bool {
    old.is_some() && table.has_index_entry(index, entry)
}
