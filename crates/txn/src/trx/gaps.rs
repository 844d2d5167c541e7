//! Gap and next-key locks on the clustered index, under REPEATABLE READ (InnoDB's; see the
//! lock modes on `lock.rs`'s page): a locking walk of a key range locks every entry it reads
//! with a next-key lock (the row, and the gap below it) and, when the range ends before its
//! limit, the gap below the first entry past it (the supremum's if none), so no row can come
//! into the range until the transaction ends; a locking read of one key locks the row alone
//! if it exists, and the gap it would go in if not; and an insert of a new key first asks
//! for the gap it goes in (insert intention), waiting while another transaction holds a lock
//! on that gap. READ COMMITTED takes no gap locks.
//!
//! A walk reads the next entry, then locks the gap below it; an insert into that gap that
//! came in between is seen by looking again once the lock is held (the insert went in under
//! the same latch as the grant), and the walk then takes the new entry instead.

use super::*;
use crate::lock::Gapped;

impl Transaction {
    /// Whether this transaction's locking reads lock gaps: REPEATABLE READ's do (and so
    /// SERIALIZABLE's); READ COMMITTED's lock the rows they read only.
    pub(super) fn locks_gaps(&self) -> bool {
        self.isolation == Isolation::RepeatableRead
    }

    /// Locks the gap below clustered entry `next` (the supremum if `None`) in `mode`.
    /// `Ok(true)` if newly taken (it is the last of `self.locks`).
    pub(super) fn lock_gap(
        &mut self,
        table: &Table,
        next: Option<&Key>,
        mode: LockMode,
    ) -> Result<bool, TxnError> {
        let hash = next.map_or(0, hash_of);
        self.lock(table, LockTarget::Gap(None, next.cloned()), hash, mode)
    }

    /// Locks the gap below entry `next` as [`Transaction::lock_gap`] does, then looks again
    /// with `seek`: `Ok(false)` (and no lock kept that this took) if `seek` no longer finds
    /// `next`, because an entry came into the gap or `next` left the index meanwhile.
    fn lock_gap_checked(
        &mut self,
        table: &Table,
        next: Option<&Key>,
        mode: LockMode,
        seek: impl Fn() -> Option<Key>,
    ) -> Result<bool, TxnError> {
        let newly = self.lock_gap(table, next, mode)?;
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
        loop {
            let next = table.key_after(key);
            if self.lock_gap_checked(table, next.as_ref(), mode, || table.key_after(key))? {
                return Ok(!table.has_entry(key));
            }
        }
    }

    /// The clustered record for key `pk` of a row being inserted, created in the index if
    /// absent: a new entry goes into a gap only once no other transaction holds a lock on it
    /// (the insert-intention wait, with deadlock detection and the lock-wait timeout). If
    /// this transaction holds one itself, it first locks the gap below the new entry too, so
    /// that its lock still covers the whole of what was one gap.
    pub(super) fn record_for_insert(
        &mut self,
        table: &Table,
        pk: &Key,
        hash: u64,
    ) -> Result<RecordRef, TxnError> {
        let mut extended = false;
        loop {
            if let Some(record) = table.record_hashed(pk, hash) {
                return Ok(record);
            }
            let next = table.key_after(pk);
            let mut created = None;
            let target = LockTarget::Gap(None, next.clone());
            let gap_hash = next.as_ref().map_or(0, hash_of);
            let gapped = self.insert_into_gap(table, target, gap_hash, &mut |mine| {
                if mine && !extended {
                    return Gapped::MineFirst;
                }
                if table.key_after(pk) != next {
                    return Gapped::Moved;
                }
                created = Some(table.record_for_insert(pk, hash));
                Gapped::Inserted
            })?;
            match gapped {
                Gapped::Inserted => return Ok(created.expect("inserted under the latch")),
                Gapped::Moved => {}
                Gapped::MineFirst => {
                    self.lock_gap(table, Some(pk), LockMode::Exclusive)?;
                    extended = true;
                }
            }
        }
    }

    /// Asks the lock table to run `insert` once nobody else holds a lock on gap `target`
    /// (whose key's [`hash_of`] is `key_hash`).
    fn insert_into_gap(
        &mut self,
        table: &Table,
        target: LockTarget,
        key_hash: u64,
        insert: &mut dyn FnMut(bool) -> Gapped,
    ) -> Result<Gapped, TxnError> {
        let trx = self.ensure_id()?;
        let hash = lock_hash(table.id(), &target, key_hash);
        let request = Request {
            trx,
            key: (table.id(), target),
            hash,
            mode: LockMode::Exclusive,
            timeout: self.lock_wait_timeout,
            interrupt: self.interrupt.as_deref(),
            nowait: false,
            table_name: table.name(),
        };
        let result = self.shared.locks.insert_into_gap(request, insert);
        if let Err(error) = &result
            && error.rolled_back_transaction()
        {
            self.end_by_rollback();
        }
        result
    }

    /// A locking walk of clustered `range` (ascending, or descending if `options.reverse`)
    /// with next-key locks, as the module page says; `take` gets each entry's key and newest
    /// version (`None` for a deleted row) and says whether the walk is done.
    pub(super) fn lock_walk(
        &mut self,
        table: &Table,
        range: &KeyRange,
        options: ScanOptions,
        mode: LockMode,
        take: &mut dyn FnMut(&Key, Option<Version>) -> bool,
    ) -> Result<(), TxnError> {
        if options.reverse {
            return self.lock_walk_down(table, range, options.wait, mode, take);
        }
        let mut after: Option<Key> = None;
        loop {
            let seek = || match &after {
                None => table.first_key_from(range),
                Some(key) => table.key_after(key),
            };
            let next = seek();
            if !self.lock_gap_checked(table, next.as_ref(), mode, seek)? {
                continue;
            }
            let Some(key) = next.filter(|key| !Table::past_end(range, key)) else {
                return Ok(());
            };
            if let Some(version) = self.lock_walked(table, &key, mode, options.wait)?
                && take(&key, version)
            {
                return Ok(());
            }
            after = Some(key);
        }
    }

    /// [`Transaction::lock_walk`] descending: the gap above the range first, then each entry
    /// downward, each read only once the gap above it is locked.
    fn lock_walk_down(
        &mut self,
        table: &Table,
        range: &KeyRange,
        wait: LockWait,
        mode: LockMode,
        take: &mut dyn FnMut(&Key, Option<Version>) -> bool,
    ) -> Result<(), TxnError> {
        let mut above = loop {
            let past = table.first_key_past(range);
            if self.lock_gap_checked(table, past.as_ref(), mode, || table.first_key_past(range))? {
                break past;
            }
        };
        loop {
            let Some(key) = table.key_before(above.as_ref()) else {
                return Ok(());
            };
            if range.is_before(&key) {
                return Ok(());
            }
            if !self.lock_gap_checked(table, Some(&key), mode, || {
                table.has_entry(&key).then(|| key.clone())
            })? {
                continue;
            }
            if let Some(version) = self.lock_walked(table, &key, mode, wait)?
                && take(&key, version)
            {
                return Ok(());
            }
            above = Some(key);
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
}
