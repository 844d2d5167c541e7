//! A transaction's row locks: taking them in the lock table, and waiting for an inserter
//! whose uncommitted version locks a row implicitly (see
//! [`crate::EngineConfig::implicit_insert_locks`]); the write prologue that locks a row and
//! finds its newest version; and the locks on unique secondary values.

use super::*;

impl Transaction {
    /// Takes lock `target` on `table` in `mode`; `key_hash` is the [`hash_of`] of the
    /// target's key, which the caller's record lookup reuses. `Ok(true)` if newly taken
    /// (it is the last of `self.locks`), `Ok(false)` if held already.
    pub(super) fn lock(
        &mut self,
        table: &Table,
        target: LockTarget,
        key_hash: u64,
        mode: LockMode,
    ) -> Result<bool, TxnError> {
        self.lock_or_fail(table, target, key_hash, mode, false)
    }

    /// [`Transaction::lock`], or with `nowait`, [`TxnError::LockNowait`] at once where it
    /// would wait.
    fn lock_or_fail(
        &mut self,
        table: &Table,
        target: LockTarget,
        key_hash: u64,
        mode: LockMode,
        nowait: bool,
    ) -> Result<bool, TxnError> {
        let trx = self.ensure_id()?;
        let hash = lock_hash(table.id(), &target, key_hash);
        let key: LockKey = (table.id(), target);
        let request = Request {
            trx,
            key: key.clone(),
            hash,
            mode,
            timeout: self.lock_wait_timeout,
            interrupt: self.interrupt.as_deref(),
            nowait,
            table_name: table.name(),
        };
        match self.shared.locks.acquire(request) {
            Ok(true) => {
                spare::reserve(&LOCKS, &mut self.locks);
                self.locks.push((hash, key));
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(error) => {
                if error.rolled_back_transaction() {
                    self.end_by_rollback();
                }
                Err(error)
            }
        }
    }

    /// Locks row `key` of `table` in `mode`; returns the key's [`hash_of`], for the record
    /// lookup that follows the lock.
    pub(super) fn lock_row(
        &mut self,
        table: &Table,
        key: &Key,
        mode: LockMode,
    ) -> Result<u64, TxnError> {
        let hash = hash_of(key);
        self.lock(table, LockTarget::Row(key.clone()), hash, mode)?;
        Ok(hash)
    }

    /// Releases the lock [`Transaction::lock`] has just taken (the last of `self.locks`).
    pub(super) fn unlock_last(&mut self) {
        if let (Some(id), Some(held)) = (self.id, self.locks.pop()) {
            self.shared
                .locks
                .release_all(id, std::slice::from_ref(&held));
        }
    }

    /// Where this transaction's list of locks stands: the locks a statement takes after it
    /// are the statement's own, which [`Transaction::unlock_rows_since`] may give back.
    pub fn lock_mark(&self) -> LockMark {
        LockMark(self.locks.len())
    }

    /// READ COMMITTED's release of the rows a statement locked but did not select (InnoDB's
    /// `unlock_row`, which MySQL calls for each row its WHERE rejects): gives back every row
    /// lock on `table` taken since `mark` whose key `keep` refuses, and returns how many.
    ///
    /// Only under READ COMMITTED. Under REPEATABLE READ and SERIALIZABLE a row a locking read
    /// has seen stays locked whether or not it matched, as InnoDB's does: the lock is what
    /// stops the row from changing under a repeated read. A lock held before `mark` stays
    /// (the row was the transaction's before this statement), and so does every gap lock.
    pub fn unlock_rows_since(
        &mut self,
        mark: LockMark,
        table: &Table,
        keep: impl Fn(&Key) -> bool,
    ) -> usize {
        let Some(id) = self.id else {
            return 0;
        };
        if self.isolation != Isolation::ReadCommitted || mark.0 >= self.locks.len() {
            return 0;
        }
        let statement = self.locks.split_off(mark.0);
        let (gone, kept): (Vec<Held>, Vec<Held>) =
            statement.into_iter().partition(|(_, (t, target))| {
                *t == table.id() && matches!(target, LockTarget::Row(key) if !keep(key))
            });
        self.locks.extend(kept);
        self.shared.locks.release_all(id, &gone);
        gone.len()
    }

    /// Waits while `pending`, another transaction's uncommitted version of `record`,
    /// locks the row implicitly (see [`crate::EngineConfig::implicit_insert_locks`]).
    pub(super) fn wait_for_writer(
        &mut self,
        table: &Table,
        record: &RecordRef,
        pending: &Version,
    ) -> Result<(), TxnError> {
        let me = self.ensure_id()?;
        let waited = self.shared.locks.wait_for_writer(
            me,
            pending.trx_id(),
            (self.lock_wait_timeout, self.interrupt.as_deref()),
            (table.name(), &record.key),
            || record.still_pending(pending),
        );
        if let Err(error) = &waited
            && error.rolled_back_transaction()
        {
            self.end_by_rollback();
        }
        waited
    }

    /// Locks row `key` of `table` in `mode` and finds its record and newest version (a
    /// row, not a delete mark; read under the same latch as the check below). If another transaction's
    /// uncommitted insert still locks the row implicitly, the lock just taken is given
    /// back while this waits for the inserter, then taken again: a waiter that times out
    /// must not keep the row (InnoDB makes the implicit lock explicit and queues behind
    /// it; here the inserter's version is the queue's head). (Any other uncommitted version
    /// is by a holder of the row's lock-table lock, whom the lock itself waited for.)
    pub(super) fn lock_record(
        &mut self,
        table: &Table,
        key: &Key,
        mode: LockMode,
    ) -> Result<Option<(RecordRef, Option<Version>)>, TxnError> {
        self.lock_record_keeping(table, key, mode, LockWait::Wait, true, true)
    }

    /// [`Transaction::lock_record`] for a scan's next record: a record whose newest
    /// version is a delete mark keeps no lock this call took, as InnoDB's READ COMMITTED
    /// lets go of the rows a locking scan passes over (`unlock_row`). With no gap locks,
    /// such a lock guards nothing the scan read, and it stopped every later locking scan
    /// of the range at the same deleted rows: behind it (TPC-C's Deliveries queued on the
    /// NEW_ORDER rows purge had not removed yet), or skipping them, with `SKIP LOCKED`.
    /// A lock the transaction held before (its own delete) stays.
    ///
    /// Unless `wait` is [`LockWait::Wait`], a row held either way (in the lock table, or by
    /// an uncommitted insert) fails with [`TxnError::LockNowait`] instead of waiting.
    pub(super) fn lock_scanned(
        &mut self,
        table: &Table,
        key: &Key,
        mode: LockMode,
        wait: LockWait,
    ) -> Result<Option<Version>, TxnError> {
        let found = self.lock_record_keeping(table, key, mode, wait, false, false)?;
        Ok(found.and_then(|(_, version)| version))
    }

    /// [`Transaction::lock_record`]; unless `keep_absent`, without keeping a lock it took
    /// on a row that turned out deleted. With `point` (a read of one key) under REPEATABLE
    /// READ, a key with no entry keeps no row lock but a lock on the gap it would go in, and
    /// a deleted row's lock is a next-key lock (InnoDB's unique search: the record alone only
    /// for a row that exists).
    pub(super) fn lock_record_keeping(
        &mut self,
        table: &Table,
        key: &Key,
        mode: LockMode,
        wait: LockWait,
        keep_absent: bool,
        point: bool,
    ) -> Result<Option<(RecordRef, Option<Version>)>, TxnError> {
        let me = self.ensure_id()?;
        let hash = hash_of(key);
        let nowait = wait != LockWait::Wait;
        let gaps = point && self.locks_gaps();
        loop {
            let target = LockTarget::Row(key.clone());
            let newly = self.lock_or_fail(table, target, hash, mode, nowait)?;
            let Some(record) = table.record_hashed(key, hash) else {
                if gaps {
                    if newly {
                        self.unlock_last();
                    }
                    if !self.lock_gap_of(table, key, mode)? {
                        continue;
                    }
                }
                return Ok(None);
            };
            let pending = match record.latest_unless_pending(me) {
                Ok(None) if newly && !keep_absent => {
                    self.unlock_last();
                    return Ok(Some((record, None)));
                }
                Ok(None) if gaps => {
                    let newly_gap = self.lock_gap(table, (None, Some(key.clone())), mode)?;
                    if table.has_entry(key) {
                        return Ok(Some((record, None)));
                    }
                    // Purge took the entry away before the gap lock: lock the gap it left.
                    if newly_gap {
                        self.unlock_last();
                    }
                    continue;
                }
                Ok(newest) => return Ok(Some((record, newest))),
                Err(pending) => pending,
            };
            if newly {
                self.unlock_last();
            }
            if nowait {
                self.shared.stats.incr(Counter::LockNowaits);
                return Err(TxnError::LockNowait {
                    table: table.name().to_owned(),
                    key: key.clone(),
                });
            }
            self.wait_for_writer(table, &record, &pending)?;
        }
    }

    /// The write prologue: takes the row's exclusive lock, then finds its newest version,
    /// a row (not a delete mark). `None` if no live row has that key.
    pub(super) fn lock_newest(
        &mut self,
        table: &Table,
        key: &Key,
    ) -> Result<Option<Newest>, TxnError> {
        let id = self.ensure_id()?;
        let found = self.lock_record(table, key, LockMode::Exclusive)?;
        Ok(found.and_then(|(record, version)| Some((id, record, version?))))
    }

    /// Locks the unique secondary values `new` takes and `old` gives up, and checks that no
    /// other live row holds one of `new`'s.
    pub(super) fn lock_unique_keys(
        &mut self,
        table: &Table,
        pk: &Key,
        old: Option<&[Value]>,
        new: &[Value],
    ) -> Result<(), TxnError> {
        for (i, def) in table.schema().indexes.iter().enumerate() {
            if !def.unique {
                continue;
            }
            let new_key = project(new, &def.columns);
            let old_key = old.map(|row| project(row, &def.columns));
            for key in [Some(&new_key), old_key.as_ref()].into_iter().flatten() {
                if !key.has_null() {
                    self.lock(
                        table,
                        LockTarget::Unique(i, key.clone()),
                        hash_of(key),
                        LockMode::Exclusive,
                    )?;
                }
            }
            if new_key.has_null() || old_key.as_ref() == Some(&new_key) {
                continue;
            }
            for (index_key, other) in table.index_entries(i, &KeyRange::Prefix(new_key.clone())) {
                let taken = other != *pk
                    && index_key == new_key
                    && table
                        .record(&other)
                        .and_then(|r| r.latest_row())
                        .is_some_and(|row| project(&row, &def.columns) == new_key);
                if taken {
                    return Err(TxnError::DuplicateKey {
                        table: table.name().to_owned(),
                        index: def.name.clone(),
                        key: new_key,
                    });
                }
            }
        }
        Ok(())
    }
}
