//! The engine: it wires the parts (catalog, trx-sys, lock table, commit pipeline, purge
//! thread, admission) and owns their lives; each part is its own module.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, RwLock};

use waterline_commit::GroupCommitStats;
use waterline_throttle::{Admission, Policy};
use waterline_types::{Refusal, SchemaError};

use crate::commit::{CommitPipeline, Immediate, Pipeline};
use crate::config::{EngineConfig, Isolation};
use crate::durable::Durable;
use crate::error::TxnError;
use crate::lock::LockManager;
use crate::lock::{DataLock, DataLockWait};
use crate::purge::{History, PurgeReport};
use crate::redo::Entry;
use crate::schema::{IndexDef, TableSchema};
use crate::shared::Shared;
use crate::stats::{Stats, StatsSnapshot};
use crate::table::Table;
use crate::table_id::TableId;
use crate::trx::Transaction;
use crate::trx_sys::TrxSys;

/// Shards of the row-lock table.
const LOCK_SHARDS: usize = 64;

/// The high bit of a temporary table's id: the catalog, whose ids count up from 0, never
/// reaches it.
const TEMPORARY_TABLE_IDS: u32 = 1 << 31;

/// The position in `catalog` of the table named `name` (case-insensitive), if it is not
/// dropped.
fn live(catalog: &[Table], name: &str) -> Option<usize> {
    (catalog.iter()).position(|t| !t.is_dropped() && t.name().eq_ignore_ascii_case(name))
}

/// The background purge thread and its stop signal.
#[derive(Debug)]
struct PurgeWorker {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl PurgeWorker {
    fn start(shared: Arc<Shared<Pipeline>>, interval: Duration) -> PurgeWorker {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("waterline-purge".into())
            .spawn(move || {
                let (stopped, wake) = &*signal;
                let mut stopped = stopped.lock();
                while !*stopped {
                    if wake.wait_for(&mut stopped, interval).timed_out()
                        && !shared.purge_paused.load(Ordering::Relaxed)
                    {
                        parking_lot::MutexGuard::unlocked(&mut stopped, || shared.purge());
                    }
                }
            })
            .expect("the purge thread can be spawned");
        PurgeWorker {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for PurgeWorker {
    fn drop(&mut self) {
        *self.stop.0.lock() = true;
        self.stop.1.notify_all();
        if let Some(thread) = self.thread.take() {
            // A panic in purge has been reported by the thread itself.
            let _ = thread.join();
        }
    }
}

/// An in-memory MVCC engine. Share it between threads by reference (or `Arc`).
///
/// ```
/// use waterline_txn::{Column, ColumnType, Engine, EngineConfig, Isolation, Key, TableSchema};
///
/// let engine = Engine::open(EngineConfig::default())?;
/// let accounts = engine.create_table(
///     TableSchema::new("account", vec![
///         Column::new("id", ColumnType::Int),
///         Column::new("balance", ColumnType::BigInt),
///     ])
///     .primary_key(&["id"])?,
/// )?;
///
/// let mut setup = engine.begin_with(Isolation::ReadCommitted);
/// setup.insert(&accounts, vec![1.into(), 100.into()])?;
/// setup.commit()?;
///
/// let mut reader = engine.begin_with(Isolation::RepeatableRead);
/// assert_eq!(reader.get(&accounts, Key::one(1))?.unwrap()[1], 100.into());
///
/// let mut writer = engine.begin_with(Isolation::ReadCommitted);
/// writer.update_with(&accounts, Key::one(1), |row| {
///     vec![row[0].clone(), (row[1].as_int().unwrap() - 30).into()]
/// })?;
/// writer.commit()?;
///
/// // REPEATABLE READ keeps its snapshot; a new transaction sees the commit.
/// assert_eq!(reader.get(&accounts, Key::one(1))?.unwrap()[1], 100.into());
/// let mut later = engine.begin_with(Isolation::ReadCommitted);
/// assert_eq!(later.get(&accounts, Key::one(1))?.unwrap()[1], 70.into());
/// # Ok::<(), waterline_txn::TxnError>(())
/// ```
#[derive(Debug)]
pub struct Engine {
    shared: Arc<Shared<Pipeline>>,
    /// The durable engine's pipeline (also `shared.pipeline`), for DDL and checkpoints.
    durable: Option<Arc<Durable>>,
    /// Admission at begin (book 8.3), unless the policy is `Unlimited`.
    admission: Option<Admission>,
    /// State the layers above keep per engine, one value per type ([`Engine::extension`]).
    extensions: Mutex<Vec<Arc<dyn Any + Send + Sync>>>,
    // Declared last: dropped after `shared`'s last user here, stops the thread first.
    _purge: Option<PurgeWorker>,
}

impl Engine {
    /// An empty engine in memory with the default configuration: the engine to embed and
    /// try things with.
    ///
    /// ```
    /// use waterline_txn::{Engine, Key, TableSchema};
    ///
    /// let engine = Engine::in_memory();
    /// let t = engine.create_table(TableSchema::parse("t(id INT PRIMARY KEY, v BIGINT)")?)?;
    /// let mut trx = engine.begin();
    /// trx.insert(&t, vec![1.into(), 10.into()])?;
    /// trx.commit()?;
    /// let mut trx = engine.begin();
    /// assert_eq!(trx.get(&t, Key::one(1))?, Some(vec![1.into(), 10.into()]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn in_memory() -> Engine {
        Engine::open(EngineConfig::default()).expect("the default configuration is valid")
    }

    /// An empty engine that commits in memory ([`Immediate`]); `config.commit` is ignored.
    pub fn open(config: EngineConfig) -> Result<Engine, TxnError> {
        Engine::with_pipeline(config, Arc::new(Immediate))
    }

    pub(crate) fn with_durable(
        config: EngineConfig,
        durable: Arc<Durable>,
    ) -> Result<Engine, TxnError> {
        let mut engine =
            Engine::with_pipeline(config, Arc::clone(&durable) as Arc<dyn CommitPipeline>)?;
        engine.durable = Some(durable);
        Ok(engine)
    }

    pub(crate) fn durable(&self) -> Option<&Durable> {
        self.durable.as_deref()
    }

    /// The group-commit pipeline's counters (commits, group sizes, fsyncs, wake-ups); `None`
    /// for an in-memory engine.
    pub fn commit_stats(&self) -> Option<GroupCommitStats> {
        self.durable.as_ref().map(|d| d.group.stats())
    }

    /// Runs `f` on the catalog under its read lock.
    pub(crate) fn with_catalog<R>(&self, f: impl FnOnce(&[Table]) -> R) -> R {
        f(&self.shared.catalog.read())
    }

    /// An empty engine whose commits go through `pipeline` (the WAL and group commit plug in
    /// here); the caller may keep its own handle on it.
    pub fn with_pipeline(
        config: EngineConfig,
        pipeline: Arc<dyn CommitPipeline>,
    ) -> Result<Engine, TxnError> {
        config.validate()?;
        let stats = Arc::new(Stats::default());
        let shared = Arc::new(Shared {
            trx_sys: TrxSys::new(&config, Arc::clone(&stats))?,
            locks: LockManager::new(
                LOCK_SHARDS,
                Arc::clone(&stats),
                config.lock_spin,
                config.lock_holder_boost,
            ),
            stats,
            catalog: RwLock::new(Vec::new()),
            catalog_version: AtomicU64::new(0),
            attributes: parking_lot::Mutex::default(),
            engine_attributes: parking_lot::Mutex::default(),
            next_temporary: std::sync::atomic::AtomicU32::new(0),
            pipeline,
            history: History::default(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            purge_paused: AtomicBool::new(false),
            released: std::sync::atomic::AtomicUsize::new(0),
            config,
        });
        let purge = shared
            .config
            .purge_interval
            .map(|interval| PurgeWorker::start(Arc::clone(&shared), interval));
        let admission = match shared.config.admission {
            Policy::Unlimited => None,
            Policy::ThreadPool(_) => {
                return Err(TxnError::Config(
                    "a thread pool runs whole transactions: wrap them in Admission::run \
                     instead of setting EngineConfig::admission"
                        .into(),
                ));
            }
            policy => Some(Admission::new(policy)?),
        };
        Ok(Engine {
            shared,
            durable: None,
            admission,
            extensions: Mutex::new(Vec::new()),
            _purge: purge,
        })
    }

    /// The configuration the engine runs with.
    pub fn config(&self) -> &EngineConfig {
        &self.shared.config
    }

    /// Creates a table. A durable engine logs it first (and waits for that to be durable).
    pub fn create_table(&self, schema: TableSchema) -> Result<Table, TxnError> {
        self.create_table_as(schema, true)
    }

    /// Recovery: creates a table that is in the log already.
    pub(crate) fn create_table_unlogged(&self, schema: TableSchema) -> Result<Table, TxnError> {
        self.create_table_as(schema, false)
    }

    fn create_table_as(&self, schema: TableSchema, log: bool) -> Result<Table, TxnError> {
        schema.validate()?;
        let mut catalog = self.shared.catalog.write();
        if live(&catalog, &schema.name).is_some() {
            return Err(TxnError::TableExists(schema.name));
        }
        let id =
            u32::try_from(catalog.len()).map_err(|_| TxnError::Config("too many tables".into()))?;
        // Logged under the catalog lock, so log order is table-id order; a checkpoint takes
        // the catalog before pausing the commit stage, in the same lock order.
        if let Some(durable) = self.durable.as_ref().filter(|_| log) {
            durable.log_create_table(&schema)?;
        }
        let table = Table::new(TableId(id), schema);
        catalog.push(table.clone());
        self.catalog_changed();
        Ok(table)
    }

    /// CREATE TEMPORARY TABLE: a table in no catalog (no name lookup finds it, no other
    /// transaction can name it), whose changes are undone on rollback but never logged, so
    /// it is gone with its last handle and never comes back from recovery. Its id is taken
    /// from a range the catalog never reaches, so the catalog's ids (which the log names)
    /// stay the same whatever temporary tables came and went.
    pub fn create_temporary_table(&self, schema: TableSchema) -> Result<Table, TxnError> {
        schema.validate()?;
        let n = self.shared.next_temporary.fetch_add(1, Ordering::Relaxed);
        Ok(Table::new_temporary(
            TableId(TEMPORARY_TABLE_IDS | (n & !TEMPORARY_TABLE_IDS)),
            schema,
        ))
    }

    /// The table named `name` (case-insensitive, as MySQL on Linux is not; close enough).
    pub fn table(&self, name: &str) -> Result<Table, TxnError> {
        let catalog = self.shared.catalog.read();
        live(&catalog, name)
            .map(|at| catalog[at].clone())
            .ok_or_else(|| TxnError::NoSuchTable(name.to_owned()))
    }

    /// Every table, in creation order (dropped ones left out).
    pub fn tables(&self) -> Vec<Table> {
        self.versioned_tables().1
    }

    /// The catalog's version: it moves with every CREATE TABLE, CREATE INDEX and DROP TABLE,
    /// so what was bound against the catalog is good while the version has not moved (as
    /// MySQL re-prepares a statement whose tables' metadata changed).
    pub fn catalog_version(&self) -> u64 {
        // Acquire: pairs with the Release of `catalog_changed`, made under the write lock.
        self.shared.catalog_version.load(Ordering::Acquire)
    }

    /// Every table (dropped ones left out) and the catalog version they are, read together.
    pub fn versioned_tables(&self) -> (u64, Vec<Table>) {
        let catalog = self.shared.catalog.read();
        let tables = catalog
            .iter()
            .filter(|t| !t.is_dropped())
            .cloned()
            .collect();
        (self.catalog_version(), tables)
    }

    /// Called with the catalog's write lock held, after changing it.
    fn catalog_changed(&self) {
        self.shared.catalog_version.fetch_add(1, Ordering::Release);
    }

    /// Every row lock held or waited for, and who waits for whom: what MySQL's
    /// `performance_schema.data_locks` and `data_lock_waits` show (see `lock/view.rs`).
    pub fn data_locks(&self) -> (Vec<DataLock>, Vec<DataLockWait>) {
        self.shared.locks.snapshot()
    }

    /// The table with id `id`, dropped or not (recovery replays by id).
    pub(crate) fn table_by_id(&self, id: TableId) -> Option<Table> {
        self.shared.catalog.read().get(id.0 as usize).cloned()
    }

    /// CREATE INDEX: adds a secondary index on `columns` of table `table`, built from the
    /// rows it holds (every version, so that readers of older snapshots find theirs). A
    /// unique index is refused if two live rows share a value. A durable engine logs it
    /// first. Returns the table's new handle; transactions still holding the old one keep
    /// the new index up to date but do not use it, and do not check its uniqueness.
    pub fn create_index(
        &self,
        table: &str,
        name: &str,
        columns: &[&str],
        unique: bool,
    ) -> Result<Table, TxnError> {
        let mut catalog = self.shared.catalog.write();
        let old = live(&catalog, table)
            .map(|at| catalog[at].clone())
            .ok_or_else(|| TxnError::NoSuchTable(table.to_owned()))?;
        if old
            .schema()
            .indexes
            .iter()
            .any(|i| i.name.eq_ignore_ascii_case(name))
        {
            return Err(TxnError::Schema(SchemaError {
                table: old.name().to_owned(),
                column: name.to_owned(),
                kind: Refusal::DuplicateKeyName,
                reason: "an index of that name exists".into(),
            }));
        }
        let schema = old.schema().clone().index(name, columns, unique)?;
        let index = schema.indexes.last().expect("just added").clone();
        if unique {
            let mut seen = std::collections::HashSet::new();
            for entry in old.0.clustered.ordered.iter() {
                let Some(row) = entry.value().latest_row() else {
                    continue;
                };
                let key = crate::schema::project(&row, &index.columns);
                if !key.has_null() && !seen.insert(key.clone()) {
                    return Err(TxnError::DuplicateKey {
                        table: old.name().to_owned(),
                        index: name.to_owned(),
                        key,
                    });
                }
            }
        }
        if let Some(durable) = self.durable.as_ref() {
            durable.log_ddl(&Entry::CreateIndex {
                table: old.id(),
                index: index.clone(),
            })?;
        }
        Ok(self.install_index(&mut catalog, &old, schema))
    }

    fn install_index(&self, catalog: &mut [Table], old: &Table, schema: TableSchema) -> Table {
        let new = old.with_index(schema);
        catalog[old.id().0 as usize] = new.clone();
        self.catalog_changed();
        new
    }

    /// Recovery: an index that is in the log already.
    pub(crate) fn create_index_unlogged(
        &self,
        table: TableId,
        index: IndexDef,
    ) -> Result<(), TxnError> {
        let mut catalog = self.shared.catalog.write();
        let old = catalog.get(table.0 as usize).cloned().ok_or_else(|| {
            TxnError::Durability(format!("the log indexes {table} that was never created"))
        })?;
        let mut schema = old.schema().clone();
        schema.indexes.push(index);
        schema.validate()?;
        self.install_index(&mut catalog, &old, schema);
        Ok(())
    }

    /// Sets the attributes of table `table`: text that a layer above keeps with the table
    /// and the engine never reads (the SQL layer's column DEFAULTs, AUTO_INCREMENT column and
    /// foreign keys). A durable engine logs them first, and recovery and checkpoints keep
    /// them, so they come back with the table after a restart. The catalog's version moves,
    /// as for any change of a table's definition.
    pub fn set_table_attributes(&self, table: &str, text: &str) -> Result<(), TxnError> {
        let catalog = self.shared.catalog.write();
        let t = live(&catalog, table)
            .map(|at| &catalog[at])
            .ok_or_else(|| TxnError::NoSuchTable(table.to_owned()))?;
        if let Some(durable) = self.durable.as_ref() {
            durable.log_ddl(&Entry::Attributes {
                table: t.id(),
                text: text.to_owned(),
            })?;
        }
        self.shared
            .attributes
            .lock()
            .insert(t.id(), Arc::from(text));
        self.catalog_changed();
        Ok(())
    }

    /// Sets the engine's attributes: text that a layer above keeps with the engine and the
    /// engine never reads (the SQL layer's list of databases). Logged first by a durable
    /// engine, and kept by recovery and checkpoints, as a table's attributes are.
    pub fn set_attributes(&self, text: &str) -> Result<(), TxnError> {
        let _catalog = self.shared.catalog.write();
        if let Some(durable) = self.durable.as_ref() {
            durable.log_ddl(&Entry::EngineAttributes(text.to_owned()))?;
        }
        *self.shared.engine_attributes.lock() = Some(Arc::from(text));
        Ok(())
    }

    /// Recovery: engine attributes that are in the log already.
    pub(crate) fn set_attributes_unlogged(&self, text: &str) {
        *self.shared.engine_attributes.lock() = Some(Arc::from(text));
    }

    /// The attributes last set on the engine ([`Engine::set_attributes`]).
    pub fn attributes(&self) -> Option<Arc<str>> {
        self.shared.engine_attributes.lock().clone()
    }

    /// RENAME TABLE `from` TO `to`: the same table (rows, indexes, attributes, id) under a
    /// new name, for every statement from now on; a transaction still holding the old handle
    /// reads and writes the same rows. [`TxnError::TableExists`] if `to` is taken. A durable
    /// engine logs it first.
    pub fn rename_table(&self, from: &str, to: &str) -> Result<Table, TxnError> {
        self.rename_as(from, to, true)
    }

    /// ALTER TABLE's swap: drops table `name` and gives its name to table `by` (a copy of
    /// it with a new definition), in one step and one log entry, so that neither a reader
    /// nor recovery ever finds the name without a table or with both. A transaction still
    /// holding the old table's handle goes on using the old table, as after DROP TABLE.
    pub fn replace_table(&self, name: &str, by: &str) -> Result<Table, TxnError> {
        let mut catalog = self.shared.catalog.write();
        let find = |n: &str| {
            live(&catalog, n)
                .map(|at| catalog[at].id())
                .ok_or_else(|| TxnError::NoSuchTable(n.to_owned()))
        };
        let (old, new) = (find(name)?, find(by)?);
        if let Some(durable) = self.durable.as_ref() {
            durable.log_ddl(&Entry::ReplaceTable { old, new })?;
        }
        Ok(self.swap(&mut catalog, old, new))
    }

    /// Recovery: a swap that is in the log already.
    pub(crate) fn replace_table_unlogged(
        &self,
        old: TableId,
        new: TableId,
    ) -> Result<(), TxnError> {
        let mut catalog = self.shared.catalog.write();
        let live = |id: TableId| catalog.get(id.0 as usize).is_some_and(|t| !t.is_dropped());
        if !live(old) || !live(new) {
            return Err(TxnError::Durability(format!(
                "the log swaps {old} and {new}, which are not both tables"
            )));
        }
        self.swap(&mut catalog, old, new);
        Ok(())
    }

    fn swap(&self, catalog: &mut [Table], old: TableId, new: TableId) -> Table {
        let name = catalog[old.0 as usize].name().to_owned();
        self.bury(&mut catalog[old.0 as usize]);
        let mut schema = catalog[new.0 as usize].schema().clone();
        schema.name = name;
        let renamed = catalog[new.0 as usize].renamed(schema);
        catalog[new.0 as usize] = renamed.clone();
        self.catalog_changed();
        renamed
    }

    /// Recovery: a rename that is in the log already.
    pub(crate) fn rename_table_unlogged(&self, table: TableId, to: &str) -> Result<(), TxnError> {
        let from = self.table_by_id(table).ok_or_else(|| {
            TxnError::Durability(format!("the log renames {table} that was never created"))
        })?;
        self.rename_as(from.name(), to, false).map(drop)
    }

    fn rename_as(&self, from: &str, to: &str, log: bool) -> Result<Table, TxnError> {
        let mut catalog = self.shared.catalog.write();
        let at = live(&catalog, from).ok_or_else(|| TxnError::NoSuchTable(from.to_owned()))?;
        if live(&catalog, to).is_some_and(|other| other != at) {
            return Err(TxnError::TableExists(to.to_owned()));
        }
        let old = catalog[at].clone();
        let mut schema = old.schema().clone();
        schema.name = to.to_owned();
        schema.validate()?;
        if let Some(durable) = self.durable.as_ref().filter(|_| log) {
            durable.log_ddl(&Entry::RenameTable {
                table: old.id(),
                name: to.to_owned(),
            })?;
        }
        let new = old.renamed(schema);
        catalog[at] = new.clone();
        self.catalog_changed();
        Ok(new)
    }

    /// Recovery: attributes that are in the log already.
    pub(crate) fn set_table_attributes_unlogged(&self, table: TableId, text: &str) {
        let _catalog = self.shared.catalog.write();
        self.shared.attributes.lock().insert(table, Arc::from(text));
        self.catalog_changed();
    }

    /// The attributes last set on table `table` ([`Engine::set_table_attributes`]).
    pub fn table_attributes(&self, table: &Table) -> Option<Arc<str>> {
        self.shared.attributes.lock().get(&table.id()).cloned()
    }

    /// DROP TABLE: the name is free again; the rows are gone for every new statement. A
    /// transaction still holding the table's handle may go on using it (waterline has no
    /// metadata locks). A durable engine logs it first.
    pub fn drop_table(&self, table: &str) -> Result<(), TxnError> {
        let mut catalog = self.shared.catalog.write();
        let at = live(&catalog, table).ok_or_else(|| TxnError::NoSuchTable(table.to_owned()))?;
        if let Some(durable) = self.durable.as_ref() {
            durable.log_ddl(&Entry::DropTable(catalog[at].id()))?;
        }
        self.bury(&mut catalog[at]);
        self.catalog_changed();
        Ok(())
    }

    /// Marks table `t` dropped and forgets its attributes. The catalog keeps the id's place
    /// with an empty table, and the rows go with the last handle (a transaction still using
    /// the table, purge's history list): a server that reloads a database must not keep
    /// every copy it dropped.
    fn bury(&self, t: &mut Table) {
        t.mark_dropped();
        self.shared.attributes.lock().remove(&t.id());
        let tombstone = Table::new(t.id(), t.schema().clone());
        tombstone.mark_dropped();
        *t = tombstone;
    }

    /// Begins a transaction at the configured isolation level ([`EngineConfig::isolation`],
    /// REPEATABLE READ by default). It gets a trx id only at its first write or lock.
    ///
    /// With an admission policy (`EngineConfig::admission`), this first waits for a permit
    /// (blocking the thread; async callers use [`Engine::begin_async`]); the transaction
    /// holds it until it ends.
    pub fn begin(&self) -> Transaction {
        self.begin_with(self.shared.config.isolation)
    }

    /// [`Engine::begin`] at isolation level `isolation`.
    pub fn begin_with(&self, isolation: Isolation) -> Transaction {
        let permit = self.admission.as_ref().map(Admission::enter_blocking);
        Transaction::new(Arc::clone(&self.shared), isolation, permit)
    }

    /// [`Engine::begin`] for async callers: waits for the admission permit without blocking
    /// the thread.
    pub async fn begin_async(&self, isolation: Isolation) -> Transaction {
        let permit = match &self.admission {
            Some(admission) => Some(admission.enter().await),
            None => None,
        };
        Transaction::new(Arc::clone(&self.shared), isolation, permit)
    }

    /// The admission control transactions pass at begin (`None` with `Policy::Unlimited`,
    /// the default: no permit is taken at all).
    pub fn admission(&self) -> Option<&Admission> {
        self.admission.as_ref()
    }

    /// The engine's one value of type `T`, made with `T::default()` the first time it is
    /// asked for: state a layer above keeps per engine, shared by everyone who uses this
    /// engine through that layer (the SQL layer's table metadata and its embedded sessions'
    /// server state). The engine never looks inside.
    pub fn extension<T: Any + Send + Sync + Default>(&self) -> Arc<T> {
        let mut extensions = self.extensions.lock();
        if let Some(found) = extensions
            .iter()
            .find_map(|e| Arc::clone(e).downcast::<T>().ok())
        {
            return found;
        }
        let made = Arc::new(T::default());
        extensions.push(Arc::clone(&made) as Arc<dyn Any + Send + Sync>);
        made
    }

    /// Runs one purge pass now (the background thread does this every `purge_interval`).
    pub fn purge(&self) -> PurgeReport {
        self.shared.purge()
    }

    /// Transactions whose records wait for purge (InnoDB's history list length).
    pub fn history_len(&self) -> usize {
        self.shared.history.len()
    }

    /// Pauses (or resumes) the background purge and the committing threads' purge steps.
    pub(crate) fn pause_purge(&self, paused: bool) {
        self.shared.purge_paused.store(paused, Ordering::Relaxed);
    }

    /// The counters, summed now.
    pub fn stats(&self) -> StatsSnapshot {
        self.shared.stats.snapshot()
    }

    /// The transaction system, for its live-transaction list and gauges.
    pub fn trx_sys(&self) -> &TrxSys {
        &self.shared.trx_sys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyRange;
    use crate::key::Key;
    use crate::schema::{Column, ColumnType};

    #[test]
    fn a_dropped_table_lives_only_as_long_as_its_last_handle() {
        // No background purge: it could hold a handle from the history list a moment longer.
        let config = EngineConfig {
            purge_interval: None,
            ..EngineConfig::default()
        };
        let engine = Engine::open(config).unwrap();
        let schema = TableSchema::new("t", vec![Column::new("id", ColumnType::Int)])
            .primary_key(&["id"])
            .unwrap();
        let t = engine.create_table(schema).unwrap();
        let mut trx = engine.begin_with(Isolation::ReadCommitted);
        trx.insert(&t, vec![1.into()]).unwrap();
        trx.update(&t, Key::one(1), vec![1.into()]).unwrap();
        trx.commit().unwrap();
        engine.drop_table("t").unwrap();
        // Its id keeps its place in the catalog, empty.
        let tombstone = engine.table_by_id(t.id()).unwrap();
        assert!(tombstone.is_dropped());
        assert_eq!(tombstone.approximate_rows(), 0);
        // A holder still reads its rows; once purge let go, nobody else holds them.
        let mut reader = engine.begin_with(Isolation::ReadCommitted);
        assert_eq!(reader.scan(&t, KeyRange::All).unwrap().len(), 1);
        reader.commit().unwrap();
        engine.purge();
        assert_eq!(Arc::strong_count(&t.0), 1, "only the test's handle is left");
    }

    #[test]
    fn the_catalog_version_moves_with_every_ddl_and_nothing_else() {
        let engine = Engine::open(EngineConfig::default()).unwrap();
        let schema = TableSchema::new(
            "t",
            vec![
                Column::new("id", ColumnType::Int),
                Column::new("v", ColumnType::Int),
            ],
        )
        .primary_key(&["id"])
        .unwrap();
        let v0 = engine.catalog_version();
        let t = engine.create_table(schema).unwrap();
        let v1 = engine.catalog_version();
        assert!(v1 > v0, "CREATE TABLE");
        let mut trx = engine.begin_with(Isolation::ReadCommitted);
        trx.insert(&t, vec![1.into(), 2.into()]).unwrap();
        trx.commit().unwrap();
        assert_eq!(engine.catalog_version(), v1, "a write is not DDL");
        assert!(engine.create_table(TableSchema::new("t", vec![])).is_err());
        assert_eq!(
            engine.catalog_version(),
            v1,
            "a failed CREATE changes nothing"
        );
        engine.create_index("t", "by_v", &["v"], false).unwrap();
        let v2 = engine.catalog_version();
        assert!(v2 > v1, "CREATE INDEX");
        let (v, tables) = engine.versioned_tables();
        assert_eq!((v, tables.len()), (v2, 1));
        assert_eq!(tables[0].schema().indexes.len(), 1, "the new handle");
        engine.drop_table("t").unwrap();
        assert!(engine.catalog_version() > v2, "DROP TABLE");
        assert!(engine.versioned_tables().1.is_empty());
    }
}
