//! Checkpoints, and recovery at startup: what opens a durable engine over its directory.
//!
//! ```text
//!  dir/ wal/wal-<lsn>.log ...            the log: one record per commit or CREATE TABLE
//!       checkpoint-<lsn>/wal-<n>.log     the last checkpoint's image (same record format),
//!                                        <lsn> = where replay starts
//!       checkpoint.tmp/                  a checkpoint being written (removed at startup)
//! ```
//!
//! Checkpoint, without stopping writers: with the commit stage paused for a moment, open a
//! REPEATABLE READ view and note where the published log ends (`lsn`). The commit stage
//! publishes in log order, so the view sees exactly the commits logged before `lsn`. Then,
//! with publishing running again, write every table as the view sees it into
//! `checkpoint.tmp`, sync it, rename it to `checkpoint-<lsn>` (atomic), and drop the log
//! segments and older checkpoints it covers.
//!
//! Recovery: load the image, then replay the log's records from `lsn` on, each logged commit
//! as one transaction, and stop where the log's valid part ends (a torn or damaged tail is
//! cut and reported). Nothing uncommitted is in the log: a transaction's record is written
//! only when it commits, whole and checksummed, so a crash can lose a commit that was never
//! acknowledged but never leaves part of one.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use waterline_commit::{FlushPolicy, Lsn, Tail, TrxTag, Wal, WalConfig, scan};

use crate::KeyRange;
use crate::config::{CommitConfig, EngineConfig, Isolation};
use crate::durable::{Durable, io};
use crate::engine::Engine;
use crate::error::TxnError;
use crate::redo::{Entry, RedoRecord};
use crate::stats::Counter;
use crate::table::Table;
use crate::trx::{ReadOptions, copy_keyed_row};

/// Rows per image entry when writing a checkpoint (and per transaction when loading one).
const IMAGE_CHUNK_ROWS: usize = 1024;

/// What recovery found and did when a durable engine opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovery {
    /// The checkpoint loaded, named by the LSN replay started at (`None`: no checkpoint).
    pub checkpoint: Option<Lsn>,
    /// Rows loaded from the checkpoint's image.
    pub image_rows: u64,
    /// Committed transactions replayed from the log.
    pub replayed: u64,
    /// Tables created by replayed `CREATE TABLE` records.
    pub tables_created: u64,
    /// Where the valid log ends; new commits are appended here.
    pub log_end: Lsn,
    /// How the log's scan ended: `Clean`, or where the damage is (everything after it was
    /// ignored and cut).
    pub tail: Tail,
    /// Segments moved aside because they followed the damage.
    pub orphaned: Vec<PathBuf>,
    /// Old versions purged while the log was replayed: none, as purge is paused until the
    /// engine is up (it would only compete with replay for the CPU and the latches, and
    /// everything replay leaves behind is purged by the first pass after).
    pub purged_during_replay: u64,
}

impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.checkpoint {
            Some(lsn) => write!(
                f,
                "loaded the checkpoint at {lsn} ({} rows), ",
                self.image_rows
            )?,
            None => f.write_str("no checkpoint, ")?,
        }
        write!(
            f,
            "replayed {} transactions and {} CREATE TABLEs; the log ends at {}",
            self.replayed, self.tables_created, self.log_end
        )?;
        match &self.tail {
            Tail::Clean => Ok(()),
            Tail::Damaged {
                segment,
                offset,
                damage,
                ..
            } => write!(
                f,
                "; it was damaged at byte {offset} of {} ({damage}) and cut there, what was \
                 cut kept in {}",
                segment.display(),
                segment.with_extension("log.cut").display()
            ),
            Tail::MissingSegment {
                expected, found, ..
            } => write!(
                f,
                "; the segment starting at {expected} is missing, so {} and later segments \
                 were moved aside",
                found.display()
            ),
        }
    }
}

/// What a checkpoint did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointReport {
    /// Replay after a restart starts here; the image holds every commit logged before it.
    pub lsn: Lsn,
    /// Tables in the image.
    pub tables: usize,
    /// Rows in the image.
    pub rows: u64,
    /// Log segments deleted because the image covers them.
    pub segments_dropped: usize,
}

impl fmt::Display for CheckpointReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "checkpoint at log position {}: {} tables, {} rows; {} log segments removed",
            self.lsn.get(),
            self.tables,
            self.rows,
            self.segments_dropped
        )
    }
}

fn checkpoint_name(lsn: Lsn) -> String {
    format!("checkpoint-{:020}", lsn.get())
}

/// The newest complete checkpoint directory in `dir`, by its LSN.
fn newest_checkpoint(dir: &Path) -> Result<Option<(Lsn, PathBuf)>, TxnError> {
    let mut newest = None;
    for entry in fs::read_dir(dir).map_err(io("list", dir))? {
        let path = entry.map_err(io("list", dir))?.path();
        let lsn = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("checkpoint-"))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(lsn) = lsn.map(Lsn)
            && newest.as_ref().is_none_or(|(best, _)| lsn > *best)
        {
            newest = Some((lsn, path));
        }
    }
    Ok(newest)
}

/// Reads a checkpoint image: its entries, which must be complete (a clean scan that ends
/// with `ImageEnd` naming the directory's LSN).
fn read_image(path: &Path, lsn: Lsn) -> Result<Vec<Entry>, TxnError> {
    let image = scan(path).map_err(TxnError::from)?;
    let damaged = |what: String| {
        TxnError::Durability(format!(
            "checkpoint {} is damaged ({what}); it is the only copy of the data before {lsn}, \
             so the engine will not open without it",
            path.display()
        ))
    };
    if image.tail != Tail::Clean {
        return Err(damaged(format!("{:?}", image.tail)));
    }
    let mut entries = image
        .records
        .iter()
        .map(|r| Entry::decode(&r.payload))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| damaged(e.to_string()))?;
    let rows: u64 = entries
        .iter()
        .map(|e| match e {
            Entry::Commit(records) => records.len() as u64,
            _ => 0,
        })
        .sum();
    match entries.pop() {
        Some(Entry::ImageEnd {
            wal_lsn,
            rows: counted,
        }) if wal_lsn == lsn.get() && counted == rows => Ok(entries),
        _ => Err(damaged("it does not end with a matching end entry".into())),
    }
}

/// Applies one entry (from an image or the log) to the engine; returns (rows, tables).
fn apply(engine: &Engine, entry: Entry) -> Result<(u64, u64), TxnError> {
    match entry {
        Entry::CreateTable(schema) => {
            engine.create_table_unlogged(schema)?;
            Ok((0, 1))
        }
        Entry::CreateIndex { table, index } => {
            engine.create_index_unlogged(table, index)?;
            Ok((0, 0))
        }
        Entry::Attributes { table, text } => {
            engine.set_table_attributes_unlogged(table, &text);
            Ok((0, 0))
        }
        Entry::EngineAttributes(text) => {
            engine.set_attributes_unlogged(&text);
            Ok((0, 0))
        }
        Entry::RenameTable { table, name } => {
            engine.rename_table_unlogged(table, &name)?;
            Ok((0, 0))
        }
        Entry::ReplaceTable { old, new } => {
            engine.replace_table_unlogged(old, new)?;
            Ok((0, 0))
        }
        Entry::DropTable(table) => {
            let t = engine.table_by_id(table).ok_or_else(|| {
                TxnError::Durability(format!("the log drops {table} that was never created"))
            })?;
            t.mark_dropped();
            Ok((0, 0))
        }
        Entry::Commit(records) => {
            let mut trx = engine.begin_with(Isolation::ReadCommitted);
            let rows = records.len() as u64;
            for record in records {
                let table = engine.table_by_id(record.table);
                let table = table.as_ref().ok_or_else(|| {
                    TxnError::Durability(format!(
                        "the log names {} that was never created",
                        record.table
                    ))
                })?;
                trx.apply_redo(table, record.key, record.after)?;
            }
            trx.commit_unlogged()?;
            Ok((rows, 0))
        }
        Entry::ImageEnd { .. } => Err(TxnError::Durability("an image end entry in the log".into())),
    }
}

/// Opens a durable engine in `dir`: recovers it and attaches the group-commit pipeline.
fn open(dir: &Path, config: EngineConfig) -> Result<(Engine, Recovery), TxnError> {
    let CommitConfig {
        flush,
        group,
        lock_release,
        segment_bytes,
        force_recovery,
    } = config.commit;
    if flush == FlushPolicy::None {
        return Err(TxnError::Config(
            "flush policy None keeps no log; open an in-memory engine with Engine::open".into(),
        ));
    }
    fs::create_dir_all(dir).map_err(io("create", dir))?;
    let tmp = dir.join("checkpoint.tmp");
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(io("remove", &tmp))?;
    }
    let checkpoint = newest_checkpoint(dir)?;
    let image = match &checkpoint {
        Some((lsn, path)) => read_image(path, *lsn)?,
        None => Vec::new(),
    };
    let start = checkpoint.as_ref().map_or(Lsn::START, |(lsn, _)| *lsn);

    // From the checkpoint on: the log before it is not needed, and damage there is no
    // reason to refuse.
    let (wal, log) = Wal::open_from(
        &dir.join("wal"),
        WalConfig {
            segment_bytes,
            flush,
            ..WalConfig::default()
        },
        start,
        force_recovery,
    )
    .map_err(TxnError::from)?;
    let first = log.records.first().map_or(log.end, |r| r.lsn);
    if first > start || log.end < start {
        return Err(TxnError::Durability(format!(
            "the log in {} covers {first}..{} but the checkpoint needs it from {start}: \
             log segments are missing",
            dir.join("wal").display(),
            log.end
        )));
    }

    let durable = Arc::new(Durable::new(dir, group, wal, start, lock_release));
    let engine = Engine::with_durable(config, Arc::clone(&durable))?;
    engine.pause_purge(true);
    let purged_before = engine.stats().get(Counter::VersionsPurged);

    let mut recovery = Recovery {
        purged_during_replay: 0,
        checkpoint: checkpoint.map(|(lsn, _)| lsn),
        image_rows: 0,
        replayed: 0,
        tables_created: 0,
        log_end: log.end,
        tail: log.tail,
        orphaned: log.orphaned,
    };
    for entry in image {
        recovery.image_rows += apply(&engine, entry)?.0;
    }
    for record in log.records.into_iter().filter(|r| r.lsn >= start) {
        let entry = Entry::decode(&record.payload)?;
        let commit = matches!(entry, Entry::Commit(_));
        let (_, tables) = apply(&engine, entry)?;
        recovery.tables_created += tables;
        recovery.replayed += u64::from(commit);
    }
    recovery.purged_during_replay = engine.stats().get(Counter::VersionsPurged) - purged_before;
    engine.pause_purge(false);
    Ok((engine, recovery))
}

impl Engine {
    /// A durable engine in `dir` (created if needed): recovers what the directory holds (the
    /// last checkpoint, then the log after it) and commits through the group-commit pipeline
    /// and the log as `config.commit` says. Returns what recovery did; see the module page.
    ///
    /// ```
    /// use waterline_txn::{Column, ColumnType, Engine, EngineConfig, Isolation, Key, TableSchema};
    ///
    /// let dir = std::env::temp_dir().join(format!("waterline-doc-{}", std::process::id()));
    /// # let _ = std::fs::remove_dir_all(&dir);
    /// {
    ///     let (engine, _) = Engine::open_dir(&dir, EngineConfig::default())?;
    ///     let t = engine.create_table(
    ///         TableSchema::new("t", vec![Column::new("id", ColumnType::Int)]).primary_key(&["id"])?,
    ///     )?;
    ///     let mut trx = engine.begin_with(Isolation::ReadCommitted);
    ///     trx.insert(&t, vec![7.into()])?;
    ///     trx.commit()?; // durable: its group was fdatasync'ed
    /// }
    /// let (engine, recovery) = Engine::open_dir(&dir, EngineConfig::default())?;
    /// assert_eq!(recovery.replayed, 1);
    /// let t = engine.table("t")?;
    /// assert!(engine.begin_with(Isolation::ReadCommitted).get(&t, Key::one(7))?.is_some());
    /// # drop(engine);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), waterline_txn::TxnError>(())
    /// ```
    pub fn open_dir(
        dir: impl AsRef<Path>,
        config: EngineConfig,
    ) -> Result<(Engine, Recovery), TxnError> {
        open(dir.as_ref(), config)
    }

    /// Bytes of log a restart would replay now: those written since the newest checkpoint
    /// (all of them before the first). A server checkpoints when this passes a limit, as
    /// InnoDB does when its checkpoint age nears the redo log's capacity. `None` for an
    /// in-memory engine.
    pub fn log_since_checkpoint(&self) -> Option<u64> {
        self.durable().map(|durable| {
            let end = durable.group.log_end().get();
            end.saturating_sub(durable.replay_from.load(Ordering::Relaxed))
        })
    }

    /// Checkpoints taken since the engine opened and the time they took in all, in
    /// microseconds (`Waterline_checkpoints`, `Waterline_checkpoint_us`): a checkpoint
    /// writes the whole database while statements run, so a measurement that had one in it
    /// says so. `None` for an in-memory engine.
    pub fn checkpoint_stats(&self) -> Option<(u64, u64)> {
        self.durable().map(|durable| {
            (
                durable.checkpoints.load(Ordering::Relaxed),
                durable.checkpoint_micros.load(Ordering::Relaxed),
            )
        })
    }

    /// Takes a checkpoint (see the module page): writers go on meanwhile. Afterwards the log
    /// before the checkpoint is deleted, and recovery starts from the image.
    pub fn checkpoint(&self) -> Result<CheckpointReport, TxnError> {
        let durable = self.durable().ok_or_else(|| {
            TxnError::Config("an in-memory engine has no log to checkpoint".into())
        })?;
        let _one = durable.checkpointing.lock();
        let started = Instant::now();
        // The catalog before the commit stage, as CREATE TABLE takes them: a table is in
        // the catalog exactly if its record is in the published log.
        let (tables, mut trx, lsn) = self.with_catalog(|catalog| {
            durable.group.with_publishing_paused(|lsn| {
                let mut trx = self.begin_with(Isolation::RepeatableRead);
                trx.open_view().map(|()| (catalog.to_vec(), trx, lsn))
            })
        })?;

        // Under `Os` the log up to `lsn` may still be in the page cache only; the image must
        // never name an LSN the log could lose.
        durable.group.sync_log().map_err(TxnError::from)?;
        let tmp = durable.dir.join("checkpoint.tmp");
        let _ = fs::remove_dir_all(&tmp);
        let image_config = WalConfig {
            segment_bytes: 64 << 20,
            flush: FlushPolicy::Os,
            // Written once, start to end: nothing to extend ahead of.
            preallocate_bytes: 0,
        };
        let (mut image, _) = Wal::open(&tmp, image_config).map_err(TxnError::from)?;
        let mut append = |entry: Entry| {
            let payload = entry.encode();
            image
                .write_batch([(TrxTag(0), payload.as_slice())])
                .map(drop)
                .map_err(TxnError::from)
        };
        if let Some(text) = self.attributes() {
            append(Entry::EngineAttributes(text.to_string()))?;
        }
        let mut rows = 0;
        for table in &tables {
            // Every table, dropped ones too, so that ids come back in order.
            append(Entry::CreateTable(table.schema().clone()))?;
            if table.is_dropped() {
                append(Entry::DropTable(table.id()))?;
                continue;
            }
            if let Some(text) = self.table_attributes(table) {
                append(Entry::Attributes {
                    table: table.id(),
                    text: text.to_string(),
                })?;
            }
            for chunk in visible_rows(&mut trx, table) {
                let chunk = chunk?;
                rows += chunk.len() as u64;
                append(Entry::Commit(chunk))?;
            }
        }
        trx.commit()?;
        append(Entry::ImageEnd {
            wal_lsn: lsn.get(),
            rows,
        })?;
        image.syncer().sync().map_err(TxnError::from)?;
        drop(image);

        let done = durable.dir.join(checkpoint_name(lsn));
        if done.exists() {
            // The same LSN again (nothing committed since): the old image is as good.
            fs::remove_dir_all(&tmp).map_err(io("remove", &tmp))?;
        } else {
            fs::rename(&tmp, &done).map_err(io("rename", &tmp))?;
        }
        fs::File::open(&durable.dir)
            .and_then(|d| d.sync_all())
            .map_err(io("sync", &durable.dir))?;
        for entry in fs::read_dir(&durable.dir).map_err(io("list", &durable.dir))? {
            let path = entry.map_err(io("list", &durable.dir))?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with("checkpoint-") && path != done {
                fs::remove_dir_all(&path).map_err(io("remove", &path))?;
            }
        }
        // Relaxed: a statistic for deciding when to checkpoint; the image is already safe.
        durable.replay_from.store(lsn.get(), Ordering::Relaxed);
        let segments_dropped = durable.group.drop_log_before(lsn).map_err(TxnError::from)?;
        // Relaxed: statistics (`SHOW STATUS`), read without ordering against anything.
        durable.checkpoints.fetch_add(1, Ordering::Relaxed);
        durable.checkpoint_micros.fetch_add(
            u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        Ok(CheckpointReport {
            lsn,
            tables: tables.len(),
            rows,
            segments_dropped,
        })
    }
}

/// The rows of `table` that `trx`'s view sees, as redo records, in chunks of
/// `IMAGE_CHUNK_ROWS` (so an image is written without holding a whole table in memory).
fn visible_rows<'a>(
    trx: &'a mut crate::Transaction,
    table: &'a Table,
) -> impl Iterator<Item = Result<Vec<RedoRecord>, TxnError>> + 'a {
    let mut after: Option<crate::Key> = None;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let range = match after.take() {
            None => KeyRange::All,
            Some(key) => {
                KeyRange::Between(std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded)
            }
        };
        let options = ReadOptions {
            limit: Some(IMAGE_CHUNK_ROWS),
            ..ReadOptions::default()
        };
        let rows = match trx.scan_with(table, range, options, copy_keyed_row) {
            Ok(rows) => rows,
            Err(error) => {
                done = true;
                return Some(Err(error));
            }
        };
        done = rows.len() < IMAGE_CHUNK_ROWS;
        after = rows.last().map(|(key, _)| key.clone());
        if rows.is_empty() {
            return None;
        }
        let chunk = rows
            .into_iter()
            .map(|(key, row)| RedoRecord {
                table: table.id(),
                key,
                after: Some(row),
            })
            .collect();
        Some(Ok(chunk))
    })
}
