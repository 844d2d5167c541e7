//! A transaction: the embedded, typed API (get, scan, insert, update, delete, commit,
//! rollback), statements with their own atomicity, undo, and the hand-over to the commit
//! pipeline.
//!
//! Every call is one statement unless it runs inside [`Transaction::statement`]. A statement
//! that fails undoes only its own changes (its locks stay, as in InnoDB), except a deadlock,
//! which rolls back the whole transaction. Under READ COMMITTED each statement opens a view
//! at its first consistent read and closes it at its end; under REPEATABLE READ the first
//! consistent read opens the view the transaction keeps.
//!
//! Writes always act on the newest committed version, under an exclusive row lock (so
//! `update_with(|row| balance - 10)` never loses an update); consistent reads go through the
//! view; locking reads ([`ReadOptions::lock`]) lock first and then read the newest version,
//! as `SELECT ... FOR UPDATE` does.
//!
//! Range reads are in `trx/scan.rs`, next-key locking in `trx/gaps.rs`, the release of
//! unselected rows in `trx/locks.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use smallvec::SmallVec;

use waterline_readview::TrxId;

use waterline_throttle::Permit;

use crate::KeyRange;
use crate::commit::{CommitTicket, Ending, Pipeline};
use crate::config::Isolation;
use crate::error::TxnError;
use crate::hash_index::hash_of;
use crate::horizon::ViewSlot;
use crate::key::Key;
use crate::lock::{Held, LockKey, LockMode, LockTarget, LockWait, Request, lock_hash};
use crate::purge::Tables;
use crate::redo::{Redo, RedoMark};
use crate::schema::project;
use crate::shared::Shared;
use crate::spare::{self, LOCKS, UNDO};
use crate::stats::{Counter, thread_hint};
use crate::table::{Table, Walk};
use crate::trx_sys::View;
use crate::undo::{Undo, undo_all};
use crate::value::{Row, Value, copy_row};
use crate::version::{Draft, RecordRef, Version};

mod gaps;
mod locks;
mod scan;

/// How a read finds its rows and whether it locks them ([`Transaction::get_with`],
/// [`Transaction::scan_with`]). The default is a consistent read of the primary key,
/// ascending, without a limit.
///
/// ```
/// use waterline_txn::{LockMode, ReadOptions};
///
/// let newest_three = ReadOptions::default().reverse().limit(3);
/// let by_name_for_update = ReadOptions::FOR_UPDATE.on_index("by_name");
/// let shared = ReadOptions::FOR_SHARE;
/// assert_eq!(shared, ReadOptions::FOR_SHARE);
/// # let _ = (newest_three, by_name_for_update);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions<'a> {
    /// Walk this secondary index instead of the primary key (scans only).
    pub index: Option<&'a str>,
    /// Stop after this many rows.
    pub limit: Option<usize>,
    /// Walk from the high end, descending (a limit counts from there).
    pub reverse: bool,
    /// Lock every row read (FOR SHARE / FOR UPDATE) and read its newest version.
    pub lock: Option<LockMode>,
    /// With `lock`: what to do with a row another transaction holds (NOWAIT, SKIP LOCKED).
    pub wait: LockWait,
}

impl<'a> ReadOptions<'a> {
    /// `SELECT ... FOR UPDATE`: lock each row read exclusively and read its newest version.
    pub const FOR_UPDATE: ReadOptions<'a> = ReadOptions::const_locking(LockMode::Exclusive);
    /// `SELECT ... FOR SHARE`: lock each row read shared and read its newest version.
    pub const FOR_SHARE: ReadOptions<'a> = ReadOptions::const_locking(LockMode::Shared);

    const fn const_locking(mode: LockMode) -> ReadOptions<'a> {
        ReadOptions {
            index: None,
            limit: None,
            reverse: false,
            lock: Some(mode),
            wait: LockWait::Wait,
        }
    }

    /// A locking read: `SELECT ... FOR SHARE` (`Shared`) or `FOR UPDATE` (`Exclusive`).
    pub fn locking(mode: LockMode) -> ReadOptions<'a> {
        ReadOptions::const_locking(mode)
    }

    /// Through secondary index `name`.
    pub fn on_index(self, name: &'a str) -> ReadOptions<'a> {
        ReadOptions {
            index: Some(name),
            ..self
        }
    }

    /// At most `n` rows.
    pub fn limit(self, n: usize) -> ReadOptions<'a> {
        ReadOptions {
            limit: Some(n),
            ..self
        }
    }

    /// Descending.
    pub fn reverse(self) -> ReadOptions<'a> {
        ReadOptions {
            reverse: true,
            ..self
        }
    }

    /// With a lock: NOWAIT or SKIP LOCKED instead of waiting.
    pub fn wait(self, wait: LockWait) -> ReadOptions<'a> {
        ReadOptions { wait, ..self }
    }
}

/// A row and its key, copied out of a read (what [`Transaction::scan`] returns): pass it to
/// [`Transaction::scan_with`] to keep the rows whole.
pub fn copy_keyed_row(key: &Key, row: &[Value]) -> (Key, Row) {
    (key.clone(), copy_row(row))
}

/// A row's newest version under its writer's exclusive lock: the writer's id, the record,
/// and the version (a row, not a delete mark).
type Newest = (TrxId, RecordRef, Version);

/// A transaction. Dropping an active one rolls it back.
#[derive(Debug)]
pub struct Transaction {
    shared: Arc<Shared<Pipeline>>,
    isolation: Isolation,
    id: Option<TrxId>,
    active: bool,
    slot: Option<Arc<ViewSlot>>,
    view: Option<View>,
    view_open: bool,
    depth: u32,
    /// The tables changed so far; undo records name them by position.
    tables: Tables,
    undo: Vec<Undo>,
    redo: Redo,
    /// Whether the pipeline reads redo ([`crate::CommitPipeline::wants_redo`]).
    keeps_redo: bool,
    locks: Vec<Held>,
    /// The admission permit (`EngineConfig::admission`), held until the transaction ends.
    permit: Option<Permit>,
    /// How long a row-lock wait lasts before it fails (the engine's
    /// `lock_wait_timeout` unless [`Transaction::set_lock_wait_timeout`] says otherwise).
    lock_wait_timeout: std::time::Duration,
    /// Set from outside to stop a row-lock wait ([`Transaction::set_interrupt`]).
    interrupt: Option<Arc<AtomicBool>>,
    /// Where the trx id goes when the transaction gets one ([`Transaction::report_id_to`]).
    id_sink: Option<Arc<std::sync::atomic::AtomicU64>>,
}

/// A place in a transaction's list of locks (see [`Transaction::lock_mark`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockMark(usize);

/// Where a statement started: enough to undo it alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Savepoint {
    undo: usize,
    redo: RedoMark,
}

impl Transaction {
    pub(crate) fn new(
        shared: Arc<Shared<Pipeline>>,
        isolation: Isolation,
        permit: Option<Permit>,
    ) -> Transaction {
        Transaction {
            permit,
            lock_wait_timeout: shared.config.lock_wait_timeout,
            interrupt: None,
            id_sink: None,
            keeps_redo: shared.pipeline.wants_redo(),
            shared,
            isolation,
            id: None,
            active: true,
            slot: None,
            view: None,
            view_open: false,
            depth: 0,
            tables: Vec::new(),
            undo: Vec::new(),
            redo: Redo::default(),
            locks: Vec::new(),
        }
    }

    /// The trx id, once the transaction has written (or taken a lock); `None` while it is
    /// read-only.
    pub fn id(&self) -> Option<TrxId> {
        self.id
    }

    /// How long this transaction's row-lock waits last before they fail with
    /// [`TxnError::LockWaitTimeout`]: a session's `innodb_lock_wait_timeout`.
    pub fn set_lock_wait_timeout(&mut self, timeout: std::time::Duration) {
        self.lock_wait_timeout = timeout;
    }

    /// Has the trx id stored into `sink` when the transaction gets one (at its first write
    /// or lock; at once if it has one already): what a session shows of its transaction
    /// while a statement of it runs (`information_schema.INNODB_TRX`).
    pub fn report_id_to(&mut self, sink: Arc<std::sync::atomic::AtomicU64>) {
        if let Some(id) = self.id {
            sink.store(id.get(), Ordering::Relaxed);
        }
        self.id_sink = Some(sink);
    }

    /// A flag that, once set, ends this transaction's row-lock waits (the one under way
    /// within 20 ms, and any later one at once) with
    /// [`TxnError::Interrupted`]: how `KILL QUERY` reaches a statement that waits for a
    /// lock. Whoever set it clears it for the next statement.
    pub fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.interrupt = Some(flag);
    }

    /// The isolation level.
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// Whether the transaction can still run statements.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Runs `f` as one statement: a view per statement under READ COMMITTED, and if `f`
    /// fails, its changes (only) are undone. Statements nest; the outermost decides.
    pub fn statement<R>(
        &mut self,
        f: impl FnOnce(&mut Transaction) -> Result<R, TxnError>,
    ) -> Result<R, TxnError> {
        if !self.active {
            return Err(TxnError::NotActive);
        }
        let savepoint = self.savepoint();
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        if let Err(error) = &result
            && self.active
            && !error.rolled_back_transaction()
        {
            self.rollback_to(savepoint);
        }
        if self.depth == 0 && self.isolation == Isolation::ReadCommitted {
            self.close_view();
        }
        result
    }

    /// The current position in the transaction's changes.
    pub fn savepoint(&self) -> Savepoint {
        Savepoint {
            undo: self.undo.len(),
            redo: self.redo.mark(),
        }
    }

    /// Undoes the changes made after `savepoint` (their locks stay).
    pub fn rollback_to(&mut self, savepoint: Savepoint) {
        let from = savepoint.undo.min(self.undo.len());
        undo_all(
            &self.shared.locks,
            &self.shared.history,
            &self.tables,
            self.undo[from..].iter(),
        );
        self.undo.truncate(from);
        self.redo.truncate(savepoint.redo);
    }

    fn ensure_id(&mut self) -> Result<TrxId, TxnError> {
        match self.id {
            Some(id) => Ok(id),
            None => {
                let id = self.shared.trx_sys.begin_rw(self.isolation)?;
                self.id = Some(id);
                if let Some(sink) = &self.id_sink {
                    // Relaxed: a report for monitoring, read by no one who waits on it.
                    sink.store(id.get(), Ordering::Relaxed);
                }
                Ok(id)
            }
        }
    }

    /// The view for a consistent read, opened if needed.
    fn read_view(&mut self) -> &View {
        if !self.view_open {
            if self.slot.is_none() {
                let (slot, view) = self.shared.trx_sys.take_slot(thread_hint());
                self.slot = Some(slot);
                self.view = view;
            }
            let slot = self.slot.as_ref().expect("taken above");
            self.shared.trx_sys.open_view(slot, &mut self.view, self.id);
            self.view_open = true;
        }
        self.view.as_ref().expect("an open view exists")
    }

    fn close_view(&mut self) {
        if self.view_open {
            self.view_open = false;
            if let Some(slot) = &self.slot {
                self.shared.trx_sys.close_view(slot);
            }
        }
    }

    /// Opens the consistent-read view now instead of at the first read, as `START
    /// TRANSACTION WITH CONSISTENT SNAPSHOT` does. Under READ COMMITTED the view closes when
    /// the enclosing statement ends (at once, outside [`Transaction::statement`]).
    pub fn open_view(&mut self) -> Result<(), TxnError> {
        self.statement(|trx| {
            trx.read_view();
            Ok(())
        })
    }

    /// The row with primary key `key`, as this transaction's view sees it.
    pub fn get(&mut self, table: &Table, key: impl Into<Key>) -> Result<Option<Row>, TxnError> {
        self.get_with(table, key, ReadOptions::default(), copy_row)
    }

    /// `f` of the row with primary key `key`, read as `options` say: through this
    /// transaction's view, or (with `options.lock`, as `SELECT ... FOR UPDATE` does) locked
    /// and newest. `f` gets the row in place: a read that needs a few columns need not copy
    /// the row (a STOCK row has eleven strings); pass [`copy_row`] to keep it whole.
    /// `options.index`, `limit` and `reverse` are for scans and must be left unset.
    pub fn get_with<R>(
        &mut self,
        table: &Table,
        key: impl Into<Key>,
        options: ReadOptions<'_>,
        f: impl FnOnce(&[Value]) -> R,
    ) -> Result<Option<R>, TxnError> {
        if let Some(index) = options.index {
            return Err(TxnError::Config(format!(
                "a read by primary key goes through no index (`{index}`): scan it instead"
            )));
        }
        let key = table.check_primary_key(key.into())?;
        self.statement(|trx| {
            let version = match options.lock {
                None => {
                    let me = trx.id;
                    let view = trx.read_view();
                    table.record(&key).and_then(|r| r.visible_version(view, me))
                }
                Some(mode) => trx
                    .lock_record(table, &key, mode)?
                    .and_then(|(_, version)| version),
            };
            Ok(version.and_then(|v| v.row().map(f)))
        })
    }

    /// A hint that the rows with primary keys `keys` are about to be read or written: starts
    /// their cache misses now, all at once, so that the lookups that follow find their
    /// lines in the cache instead of missing one after another (see `prefetch.rs`). It
    /// reads nothing for the transaction, locks nothing, and fails on nothing: a key that
    /// names no row, or is not in the key columns' types, just prefetches nothing useful.
    ///
    /// Worth it for a batch of rows of a table larger than the cache, such as TPC-C's ten
    /// ITEM and STOCK rows of a NewOrder; a few dozen keys at a time.
    pub fn prefetch<K: Into<Key>>(&self, table: &Table, keys: impl IntoIterator<Item = K>) {
        let hashes: SmallVec<[u64; 32]> = keys.into_iter().map(|k| hash_of(&k.into())).collect();
        table.prefetch(&hashes);
    }

    /// Inserts `row`; returns its primary key (or hidden row id).
    pub fn insert(&mut self, table: &Table, row: Row) -> Result<Key, TxnError> {
        let row = table.schema().check_row(row)?;
        let pk = table.primary_key_of(&row);
        self.insert_at(table, pk, row)
    }

    /// Inserts `row` under primary key (or hidden row id) `pk`.
    fn insert_at(&mut self, table: &Table, pk: Key, row: Row) -> Result<Key, TxnError> {
        self.statement(|trx| {
            let id = trx.ensure_id()?;
            let hash = hash_of(&pk);
            // With implicit insert locks, the row lock is taken (and waited for) only if
            // someone else holds or awaits the key; otherwise the version pushed below is
            // the lock (InnoDB's implicit lock: the row's trx id is an active transaction).
            let mut explicit = !trx.shared.config.implicit_insert_locks;
            if explicit {
                trx.lock_row(table, &pk, LockMode::Exclusive)?;
            }
            trx.lock_unique_keys(table, &pk, None, &row)?;
            let mut extended = Vec::new();
            loop {
                let record = trx.record_for_insert(table, &pk, hash)?;
                let mut chain = record.write();
                if chain.removed {
                    // Purge found it dead. Still in the index (a gap lock below it keeps it
                    // there, or purge has not unlinked it yet), it takes the row again;
                    // otherwise a new record does.
                    if !table.is_indexed(&record) {
                        continue;
                    }
                    chain.removed = false;
                }
                if let Some(pending) = chain.pending_other(id).cloned() {
                    // Another transaction's uncommitted insert or delete: its outcome decides
                    // whether the key is taken.
                    drop(chain);
                    trx.wait_for_writer(table, &record, &pending)?;
                    continue;
                }
                if chain.latest_row().is_some() {
                    return Err(TxnError::DuplicateKey {
                        table: table.name().to_owned(),
                        index: "PRIMARY".to_owned(),
                        key: pk,
                    });
                }
                if !explicit {
                    // Checked under the record's latch: a transaction that locks the key
                    // after this check finds the version pushed below when it reads the
                    // record (under the latch too), and waits for this one.
                    let target = LockTarget::Row(pk.clone());
                    let lock_key: LockKey = (table.id(), target);
                    let key_lock_hash = lock_hash(table.id(), &lock_key.1, hash);
                    if !trx.shared.locks.is_free_for(id, &lock_key, key_lock_hash) {
                        drop(chain);
                        trx.lock(table, lock_key.1, hash, LockMode::Exclusive)?;
                        explicit = true;
                        continue;
                    }
                }
                if !trx.index_row(table, (&row, &pk, None), &extended) {
                    drop(chain);
                    extended = trx.clear_index_gaps(table, &row, &pk, None)?;
                    continue;
                }
                let version = chain.push(id, Some(row));
                drop(chain);
                trx.log(table, record, version);
                return Ok(pk);
            }
        })
    }

    /// Replaces the row with primary key `key` by `row` (same key). `Ok(false)` if there is
    /// no such row.
    pub fn update(
        &mut self,
        table: &Table,
        key: impl Into<Key>,
        row: Row,
    ) -> Result<bool, TxnError> {
        self.update_with(table, key, |_| row)
    }

    /// Replaces the newest version of the row with primary key `key` by `f(newest)`, under
    /// its exclusive lock: `UPDATE t SET balance = balance - 10 WHERE id = ?`. `Ok(false)` if
    /// there is no such row.
    pub fn update_with(
        &mut self,
        table: &Table,
        key: impl Into<Key>,
        f: impl FnOnce(&[Value]) -> Row,
    ) -> Result<bool, TxnError> {
        let key = table.check_primary_key(key.into())?;
        self.statement(|trx| {
            let Some((id, record, old)) = trx.lock_newest(table, &key)? else {
                return Ok(false);
            };
            let old = old.row().expect("lock_newest returns a row");
            let new = table.schema().check_update(old, f(old))?;
            trx.write_update(table, key, record, old, Draft::of(id, new))?;
            Ok(true)
        })
    }

    /// An update's write, under the row's exclusive lock: `new`, which the caller checked
    /// against the schema, replaces `old`, the record's newest version.
    fn write_update(
        &mut self,
        table: &Table,
        key: Key,
        record: RecordRef,
        old: &[Value],
        new: Draft,
    ) -> Result<(), TxnError> {
        let row = new.values();
        if let Some(columns) = &table.schema().primary_key
            && columns.iter().any(|&c| row[c] != old[c])
        {
            return Err(TxnError::Schema(waterline_types::SchemaError {
                table: table.name().to_owned(),
                column: "PRIMARY".to_owned(),
                kind: waterline_types::Refusal::PrimaryKeyChanged,
                reason: "an update cannot change the primary key; delete and insert".into(),
            }));
        }
        self.lock_unique_keys(table, &key, Some(old), row)?;
        let mut extended = Vec::new();
        let mut chain = record.write();
        while !self.index_row(table, (row, &key, Some(old)), &extended) {
            drop(chain);
            extended = self.clear_index_gaps(table, row, &key, Some(old))?;
            chain = record.write();
        }
        let version = chain.push_draft(new);
        drop(chain);
        self.log(table, record, version);
        Ok(())
    }

    /// `SELECT ... FOR UPDATE` and `UPDATE` in one step: locks the row with primary key `key`
    /// exclusively, hands a copy of its newest version to `f` to change, and writes it back
    /// (same key), once: what a locking [`Transaction::get_with`] then
    /// [`Transaction::update`] do with two lookups and two copies. `Ok(None)` if there is no
    /// such row. If `f` fails, nothing is written (the lock stays) and its error is returned.
    ///
    /// The copy `f` changes is the new version itself, not a row vector moved into one.
    pub fn modify<R, E: From<TxnError>>(
        &mut self,
        table: &Table,
        key: impl Into<Key>,
        f: impl FnOnce(&mut [Value]) -> Result<R, E>,
    ) -> Result<Option<R>, E> {
        let key = table.check_primary_key(key.into())?;
        let outcome = self.statement(|trx| {
            let Some((id, record, old)) = trx.lock_newest(table, &key)? else {
                return Ok(None);
            };
            let old = old.row().expect("lock_newest returns a row");
            let mut new = Draft::copy_of(id, old);
            let result = match new.change(f) {
                Ok(result) => result,
                Err(error) => return Ok(Some(Err(error))),
            };
            new.change(|row| table.schema().check_changed(old, row))?;
            trx.write_update(table, key, record, old, new)?;
            Ok(Some(Ok(result)))
        })?;
        outcome.transpose()
    }

    /// Deletes (delete-marks) the row with primary key `key`. `Ok(false)` if there is none.
    pub fn delete(&mut self, table: &Table, key: impl Into<Key>) -> Result<bool, TxnError> {
        let key = table.check_primary_key(key.into())?;
        self.statement(|trx| {
            let Some((id, record, old)) = trx.lock_newest(table, &key)? else {
                return Ok(false);
            };
            // Lock the unique values it frees: an inserter of one must wait for our outcome.
            let old = old.row().expect("lock_newest returns a row");
            trx.lock_unique_keys(table, &key, Some(old), old)?;
            let version = record.write().push(id, None);
            trx.log(table, record, version);
            Ok(true)
        })
    }

    fn log(&mut self, table: &Table, record: RecordRef, version: Version) {
        // A temporary table's changes are undone on rollback but never redone: it does not
        // outlive its session, let alone a restart.
        if self.keeps_redo && !table.is_temporary() {
            self.redo.push(table.id(), &record.key, version.row());
        }
        let position = match self.tables.iter().position(|t| t.same(table)) {
            Some(position) => position,
            None => {
                self.tables.push(table.clone());
                self.tables.len() - 1
            }
        };
        spare::reserve(&UNDO, &mut self.undo);
        self.undo.push(Undo {
            table: u32::try_from(position).expect("fewer than 2^32 tables"),
            record,
            version,
        });
    }

    /// Commits: a read-only transaction just ends; a read-write one goes through the
    /// engine's commit pipeline (see `commit.rs`) and is visible when this returns `Ok`. On
    /// error nothing of it is visible and it is rolled back.
    pub fn commit(mut self) -> Result<(), TxnError> {
        if !self.active {
            return Err(TxnError::NotActive);
        }
        self.finish_reading();
        let Some(id) = self.id else {
            self.shared.stats.incr(Counter::Commits);
            return Ok(());
        };
        let ticket = CommitTicket {
            ending: Some(self.ending(id)),
        };
        let redo = std::mem::take(&mut self.redo);
        self.shared.pipeline.commit(id, redo, ticket)?;
        // Out of the engine's admission before the purge step below: it is not this
        // transaction's work.
        drop(self.permit.take());
        self.shared.help_purge();
        Ok(())
    }

    /// Recovery: redoes one logged change: the row under `key` becomes `after` (inserted if
    /// there is none) or, for `None`, is deleted. The key is the logged one, hidden row ids
    /// included, and the table's row-id counter moves past it.
    pub(crate) fn apply_redo(
        &mut self,
        table: &Table,
        key: Key,
        after: Option<Row>,
    ) -> Result<(), TxnError> {
        let key = table.check_primary_key(key)?;
        match after {
            Some(row) => {
                let row = table.schema().check_row(row)?;
                table.saw_key(&key);
                if !self.update(table, key.clone(), row.clone())? {
                    self.insert_at(table, key, row)?;
                }
            }
            None => {
                self.delete(table, key)?;
            }
        }
        Ok(())
    }

    /// Recovery: commits without the pipeline (what is replayed is in the log already).
    pub(crate) fn commit_unlogged(mut self) -> Result<(), TxnError> {
        self.finish_reading();
        match self.id {
            Some(id) => CommitTicket {
                ending: Some(self.ending(id)),
            }
            .publish(),
            None => Ok(()),
        }
    }

    /// Rolls back every change and ends the transaction.
    pub fn rollback(mut self) {
        self.end_by_rollback();
    }

    fn finish_reading(&mut self) {
        self.close_view();
        self.active = false;
        if let Some(slot) = self.slot.take() {
            let view = self.view.take();
            self.shared
                .trx_sys
                .give_back_slot(slot, view, thread_hint());
        }
    }

    fn ending(&mut self, id: TrxId) -> Ending {
        Ending {
            shared: Arc::clone(&self.shared),
            id,
            tables: std::mem::take(&mut self.tables),
            undo: std::mem::take(&mut self.undo),
            locks: std::mem::take(&mut self.locks),
            written: None,
            released: false,
        }
    }

    fn end_by_rollback(&mut self) {
        if !self.active {
            return;
        }
        // Out of the engine: let the next waiter in (a deadlock victim ends here too).
        let _permit = self.permit.take();
        self.finish_reading();
        match self.id {
            Some(id) => self.ending(id).roll_back(),
            None => self.shared.stats.incr(Counter::Rollbacks),
        }
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        self.end_by_rollback();
    }
}
