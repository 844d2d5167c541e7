//! The write-ahead log: a directory of segment files, each named by the LSN of its first
//! record (`wal-00000000000000000000.log`), holding records back to back (`record.rs`).
//!
//! ```text
//!  dir/ wal-00000000000000000000.log   [rec][rec][rec]...      (full: segment_bytes reached)
//!       wal-00000000000001048601.log   [rec][rec][rec][tor     (the tail: appended to)
//! ```
//!
//! Opening a log scans it from the first segment: each segment must start where the previous
//! one ended, and each record must be whole, match its checksum and carry the expected LSN.
//! The scan stops at the first place where that fails and reports it ([`Tail`]); the valid
//! prefix is what recovery may replay. Opening reads first and decides before it changes
//! anything: a torn tail (damage in the last segment with no valid record anywhere after it,
//! what a crash in the middle of a write leaves) is cut, so new records never follow
//! garbage; any other damage (a damaged record with valid ones after it, a missing segment,
//! a log that does not reach where recovery must start) refuses to open, names the file,
//! the offset, the LSNs and what would be lost, and leaves every byte as it was. Opening with
//! `force` (InnoDB's `innodb_force_recovery`) cuts there anyway, after copying the cut bytes
//! to `<segment>.cut` and renaming the segments after it `*.orphan` (kept, never read).
//!
//! A batch (one commit group's records) goes to the file with one `write`; under
//! [`FlushPolicy::EveryCommit`] it is then made durable with one `fdatasync`, under
//! [`FlushPolicy::Os`] it is left to the OS (InnoDB's `innodb_flush_log_at_trx_commit` = 1
//! and 2). The in-memory engine has no log at all.
//!
//! A segment is extended with zeros [`WalConfig::preallocate_bytes`] at a time ahead of the
//! writes (InnoDB writes zeros into its redo files when it creates them). A batch then
//! overwrites blocks the file already has, and its `fdatasync` writes data only: appending
//! instead changes the file's size with every batch, and each sync must then also commit
//! that change to the file system's journal, a second write and wait. So the last segment
//! usually ends in zeros after its last record; the scan takes a tail of zeros as the end of
//! the valid log, the same as the end of the file (a record is never all zeros: its checksum
//! is not). A segment is never extended past [`WalConfig::segment_bytes`] but by a batch of
//! its own, so only the last one has such a tail.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::record::{self, Damage, HEADER_BYTES, Lsn, MAX_PAYLOAD_BYTES, Record, TrxTag};

/// When an appended batch is made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FlushPolicy {
    /// `fdatasync` after every batch: an acknowledged commit survives a crash of the machine
    /// (`innodb_flush_log_at_trx_commit = 1`).
    #[default]
    EveryCommit,
    /// Write to the OS, never sync: survives the process being killed, not the machine
    /// (`innodb_flush_log_at_trx_commit = 2`).
    Os,
    /// No log at all: the in-memory engine. Commits still go through the group-commit
    /// pipeline (its stages and wake-ups), but nothing is written; a [`Wal`] cannot be
    /// opened with it.
    None,
}

impl FlushPolicy {
    /// The policy's name as the command line and the reports say it.
    pub fn name(self) -> &'static str {
        match self {
            FlushPolicy::EveryCommit => "every-commit",
            FlushPolicy::Os => "os",
            FlushPolicy::None => "none",
        }
    }
}

/// How the log is laid out and flushed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalConfig {
    /// A segment is closed and a new one begun once it holds at least this many bytes.
    pub segment_bytes: u64,
    /// When batches are made durable.
    pub flush: FlushPolicy,
    /// A segment is extended with zeros this many bytes at a time ahead of the writes, so
    /// that a sync does not also commit a new file size (see the module page); 0 grows it
    /// by each write instead.
    pub preallocate_bytes: u64,
}

/// The default [`WalConfig::preallocate_bytes`].
pub const PREALLOCATE_BYTES: u64 = 1 << 20;

impl Default for WalConfig {
    fn default() -> Self {
        WalConfig {
            segment_bytes: 64 << 20,
            flush: FlushPolicy::EveryCommit,
            preallocate_bytes: PREALLOCATE_BYTES,
        }
    }
}

/// Everything that can go wrong with the log's files.
#[derive(Debug, thiserror::Error)]
pub enum WalError {
    /// A file operation failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// On which file or directory.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// A payload larger than [`MAX_PAYLOAD_BYTES`].
    #[error("a log record payload of {len} bytes exceeds the {MAX_PAYLOAD_BYTES}-byte maximum")]
    PayloadTooLarge {
        /// Its length.
        len: usize,
    },
    /// The LSN space is exhausted (after 2^64 bytes of log).
    #[error("the log sequence number space is exhausted")]
    LsnExhausted,
    /// [`FlushPolicy::None`] keeps no log, so there is none to open.
    #[error("flush policy None keeps no log; there is nothing to open")]
    NoLog,
    /// A group's records were written but the group could not be published: later commits
    /// may depend on it, so the pipeline stops.
    #[error("a commit group was logged but could not be published: {0}")]
    Unpublished(String),
    /// The log is damaged other than at its torn tail (or does not reach where recovery must
    /// start): opening it would lose what follows the damage, so nothing was changed.
    #[error(
        "the log in {dir} is damaged: {what}; nothing was changed (start with force \
         recovery to cut the log there, keeping what is cut aside)"
    )]
    Damaged {
        /// The log's directory.
        dir: PathBuf,
        /// Where and what, and what cutting there would lose.
        what: String,
    },
}

fn io_error<'p>(op: &'static str, path: &'p Path) -> impl FnOnce(io::Error) -> WalError + 'p {
    move |source| WalError::Io {
        op,
        path: path.to_owned(),
        source,
    }
}

/// How the scan of an existing log ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tail {
    /// Every segment was whole up to its end.
    Clean,
    /// A record was damaged; the valid log ends right before it.
    Damaged {
        /// The segment holding the damage.
        segment: PathBuf,
        /// Its byte offset in that segment.
        offset: u64,
        /// The LSN the record there should have had.
        lsn: Lsn,
        /// What is wrong with it.
        damage: Damage,
    },
    /// A segment is missing: the next one starts elsewhere than the previous one ended.
    MissingSegment {
        /// Where the missing segment should have started.
        expected: Lsn,
        /// The segment found instead, and where it starts.
        found: PathBuf,
        /// Its start.
        found_lsn: Lsn,
    },
}

/// What opening the log found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scan {
    /// Every valid record, in log order.
    pub records: Vec<Record>,
    /// Where the valid log ends: the next record's LSN.
    pub end: Lsn,
    /// How the scan ended.
    pub tail: Tail,
    /// Segments moved aside (`*.orphan`) because they followed the damage.
    pub orphaned: Vec<PathBuf>,
}

/// Makes what has been written to one segment durable; usable without the log itself, so
/// that a group commit's sync stage can `fdatasync` one group while the flush stage writes
/// the next (`group.rs`).
#[derive(Clone, Debug)]
pub struct Syncer {
    file: Arc<File>,
    path: Arc<Path>,
}

impl Syncer {
    /// `fdatasync` on the segment.
    pub fn sync(&self) -> Result<(), WalError> {
        self.file
            .sync_data()
            .map_err(io_error("fdatasync", &self.path))
    }
}

/// An open log, ready to append at [`Wal::end`].
#[derive(Debug)]
pub struct Wal {
    dir: PathBuf,
    config: WalConfig,
    file: Arc<File>,
    path: Arc<Path>,
    segment_len: u64,
    /// The segment file's size: past `segment_len`, zeros written ahead.
    allocated: u64,
    end: Lsn,
    buf: Vec<u8>,
    syncs: u64,
    bytes: u64,
}

fn segment_name(start: Lsn) -> String {
    format!("wal-{:020}.log", start.0)
}

/// The segments of `dir`, by start LSN.
fn segments(dir: &Path) -> Result<Vec<(Lsn, PathBuf)>, WalError> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_error("list", dir))? {
        let path = entry.map_err(io_error("list", dir))?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let start = name
            .strip_prefix("wal-")
            .and_then(|n| n.strip_suffix(".log"))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(start) = start {
            found.push((Lsn(start), path));
        }
    }
    found.sort();
    Ok(found)
}

/// Scans the log in `dir` without changing anything.
pub fn scan(dir: &Path) -> Result<Scan, WalError> {
    scan_from(dir, Lsn::START)
}

/// Scans the log in `dir` from LSN `from` (a record boundary: where recovery starts)
/// without changing anything. Segments that end before `from` are not read; if no segment
/// holds `from` (and the log is not empty and new), the scan reports the segment missing.
pub fn scan_from(dir: &Path, from: Lsn) -> Result<Scan, WalError> {
    let mut segments = segments(dir)?;
    // The segment that holds `from`, and every one after it.
    let holding = segments
        .iter()
        .rposition(|(start, _)| *start <= from)
        .unwrap_or(0);
    segments.drain(..holding);
    let mut records = Vec::new();
    let mut expected = match segments.first() {
        Some((start, _)) if *start <= from => from,
        Some((start, _)) if from == Lsn::START => *start,
        Some(_) => from,
        None => from,
    };
    for (i, (start, path)) in segments.iter().enumerate() {
        let bytes = fs::read(path).map_err(io_error("read", path))?;
        let end = start.0 + bytes.len() as u64;
        // The first segment holds `expected`; each later one starts where the last ended.
        let fits = if i == 0 {
            *start <= expected && expected.0 <= end
        } else {
            *start == expected
        };
        if !fits {
            return Ok(Scan {
                records,
                end: expected,
                tail: Tail::MissingSegment {
                    expected,
                    found: path.clone(),
                    found_lsn: *start,
                },
                orphaned: Vec::new(),
            });
        }
        let mut offset = (expected.0 - start.0) as usize;
        while offset < bytes.len() {
            match record::decode(&bytes[offset..], expected) {
                Ok((record, size)) => {
                    records.push(record);
                    offset += size;
                    expected = expected
                        .advance(size as u64)
                        .ok_or(WalError::LsnExhausted)?;
                }
                // Zeros written ahead and never overwritten: the segment's valid end.
                Err(_) if all_zero(&bytes[offset..]) => break,
                Err(damage) => {
                    let tail = Tail::Damaged {
                        segment: path.clone(),
                        offset: offset as u64,
                        lsn: expected,
                        damage,
                    };
                    return Ok(Scan {
                        records,
                        end: expected,
                        tail,
                        orphaned: Vec::new(),
                    });
                }
            }
        }
    }
    Ok(Scan {
        records,
        end: expected,
        tail: Tail::Clean,
        orphaned: Vec::new(),
    })
}

fn all_zero(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| b == 0)
}

/// Whether the damage the scan ended at is a torn tail: in the last segment that has any
/// bytes, with no valid record at any byte after it (a record is valid only with its own
/// LSN, its position, so stale bytes do not pass). That is what a crash in the middle of
/// a write leaves, and all that opening cuts on its own.
fn torn_tail(dir: &Path, tail: &Tail) -> Result<bool, WalError> {
    let Tail::Damaged {
        segment,
        offset,
        lsn,
        ..
    } = tail
    else {
        return Ok(false);
    };
    let start = Lsn(lsn.0 - offset);
    for (later, path) in segments(dir)? {
        // A later segment of zeros only was begun but never written to.
        if later > start && !all_zero(&fs::read(&path).map_err(io_error("read", &path))?) {
            return Ok(false);
        }
    }
    let bytes = fs::read(segment).map_err(io_error("read", segment))?;
    // No record starts in the zeros at the end.
    let written = bytes
        .iter()
        .rposition(|&b| b != 0)
        .map_or(0, |last| last + 1);
    let valid_after = (*offset as usize + 1..written)
        .any(|p| record::decode(&bytes[p..], Lsn(start.0 + p as u64)).is_ok());
    Ok(!valid_after)
}

/// What opening at the damage would lose, for the error that refuses it.
fn loss(dir: &Path, scan: &Scan) -> Result<String, WalError> {
    let after: Vec<String> = segments(dir)?
        .into_iter()
        .filter(|(start, _)| *start > scan.end)
        .map(|(start, path)| format!("{} (from {start})", path.display()))
        .collect();
    let what = match &scan.tail {
        Tail::Clean => return Ok(String::new()),
        Tail::Damaged {
            segment,
            offset,
            lsn,
            damage,
        } => {
            let len = fs::metadata(segment)
                .map_err(io_error("stat", segment))?
                .len();
            format!(
                "the record at byte {offset} of {} (lsn {lsn}) is {damage}, and {} bytes \
                 follow it there",
                segment.display(),
                len - offset
            )
        }
        Tail::MissingSegment {
            expected,
            found,
            found_lsn,
        } => format!(
            "the log must go on at lsn {expected}, but the next segment, {}, starts at \
             {found_lsn}",
            found.display()
        ),
    };
    Ok(if after.is_empty() {
        what
    } else {
        format!(
            "{what}; the segments after it would be lost: {}",
            after.join(", ")
        )
    })
}

fn sync_dir(dir: &Path) -> Result<(), WalError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_error("sync directory", dir))
}

impl Wal {
    /// Opens (creating if needed) the whole log in `dir` ([`Wal::open_from`] from its
    /// start, not forced).
    pub fn open(dir: &Path, config: WalConfig) -> Result<(Wal, Scan), WalError> {
        Wal::open_from(dir, config, Lsn::START, false)
    }

    /// Opens (creating if needed) the log in `dir` for recovery from `from`: scans it from
    /// there, and positions for appending at the valid end. A torn tail is cut; any other
    /// damage is [`WalError::Damaged`] and changes nothing, unless `force`, which cuts at
    /// the damage after copying what it cuts to `<segment>.cut` and moves the segments
    /// after it aside (`*.orphan`).
    pub fn open_from(
        dir: &Path,
        config: WalConfig,
        from: Lsn,
        force: bool,
    ) -> Result<(Wal, Scan), WalError> {
        if config.flush == FlushPolicy::None {
            return Err(WalError::NoLog);
        }
        fs::create_dir_all(dir).map_err(io_error("create", dir))?;
        if from > Lsn::START && segments(dir)?.is_empty() {
            return Err(WalError::Damaged {
                dir: dir.to_owned(),
                what: format!(
                    "the log is missing: no segment holds lsn {from}, where recovery must start"
                ),
            });
        }
        let mut scan = scan_from(dir, from)?;
        if scan.tail != Tail::Clean && !force && !torn_tail(dir, &scan.tail)? {
            return Err(WalError::Damaged {
                dir: dir.to_owned(),
                what: loss(dir, &scan)?,
            });
        }
        // Segments from `first_orphan` on are never read again; `cut` is cut at the damage.
        let (first_orphan, cut) = match &scan.tail {
            Tail::Clean => (None, None),
            Tail::Damaged {
                segment, offset, ..
            } => (Some(Lsn(scan.end.0 + 1)), Some((segment.clone(), *offset))),
            Tail::MissingSegment { found_lsn, .. } => (Some(*found_lsn), None),
        };
        if let Some(first_orphan) = first_orphan {
            for (start, path) in segments(dir)? {
                if start >= first_orphan {
                    let aside = path.with_extension("log.orphan");
                    fs::rename(&path, &aside).map_err(io_error("move aside", &path))?;
                    scan.orphaned.push(aside);
                }
            }
            if let Some((path, offset)) = cut {
                // What is cut goes to a side file first (a torn tail's few bytes too).
                let bytes = fs::read(&path).map_err(io_error("read", &path))?;
                let side = path.with_extension("log.cut");
                fs::write(&side, &bytes[(offset as usize).min(bytes.len())..])
                    .map_err(io_error("write", &side))?;
                let file = OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(io_error("open", &path))?;
                file.set_len(offset).map_err(io_error("truncate", &path))?;
                file.sync_all().map_err(io_error("sync", &path))?;
            }
            sync_dir(dir)?;
        }
        // Append to the last segment that starts at or before the end, or begin one there.
        let last = segments(dir)?.into_iter().next_back();
        let (path, segment_len) = match last {
            Some((start, path)) if start <= scan.end => {
                let len = scan.end.0 - start.0;
                (path, len)
            }
            _ => (dir.join(segment_name(scan.end)), 0),
        };
        let mut file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(&path)
            .map_err(io_error("open", &path))?;
        let allocated = file.metadata().map_err(io_error("stat", &path))?.len();
        file.seek(SeekFrom::Start(segment_len))
            .map_err(io_error("seek", &path))?;
        let wal = Wal {
            dir: dir.to_owned(),
            config,
            file: Arc::new(file),
            path: path.into(),
            segment_len,
            allocated: allocated.max(segment_len),
            end: scan.end,
            buf: Vec::new(),
            syncs: 0,
            bytes: 0,
        };
        Ok((wal, scan))
    }

    /// The LSN the next record gets.
    pub fn end(&self) -> Lsn {
        self.end
    }

    /// `fdatasync` calls made by the log itself so far (by `append_batch` and when a segment
    /// is closed; a group commit's sync stage counts its own).
    pub fn syncs(&self) -> u64 {
        self.syncs
    }

    /// Bytes appended so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }

    /// Appends a batch (one commit group) with one write, then flushes it as the policy
    /// says. Returns the LSN of each record; after `Ok`, under `EveryCommit`, the batch is
    /// durable.
    pub fn append_batch<'a>(
        &mut self,
        batch: impl IntoIterator<Item = (TrxTag, &'a [u8])>,
    ) -> Result<Vec<Lsn>, WalError> {
        let lsns = self.write_batch(batch)?;
        if self.config.flush == FlushPolicy::EveryCommit && !lsns.is_empty() {
            self.syncer().sync()?;
            self.syncs += 1;
        }
        Ok(lsns)
    }

    /// Appends a batch with one write and does not sync it: the flush stage of a group
    /// commit, whose sync stage then calls [`Syncer::sync`] on [`Wal::syncer`]. If the batch
    /// starts a new segment, the previous one is synced first, so syncing the segment a
    /// batch went to makes everything before it durable too.
    pub fn write_batch<'a>(
        &mut self,
        batch: impl IntoIterator<Item = (TrxTag, &'a [u8])>,
    ) -> Result<Vec<Lsn>, WalError> {
        if self.segment_len >= self.config.segment_bytes {
            self.next_segment()?;
        }
        self.buf.clear();
        let mut lsns = Vec::new();
        let mut at = self.end;
        for (trx, payload) in batch {
            if payload.len() > MAX_PAYLOAD_BYTES {
                return Err(WalError::PayloadTooLarge { len: payload.len() });
            }
            lsns.push(at);
            let size = record::encode(&mut self.buf, at, trx, payload);
            at = at.advance(size as u64).ok_or(WalError::LsnExhausted)?;
        }
        if self.buf.is_empty() {
            return Ok(lsns);
        }
        let need = self.segment_len + self.buf.len() as u64;
        if need > self.allocated && self.config.preallocate_bytes > 0 {
            let ahead = need.next_multiple_of(self.config.preallocate_bytes);
            self.zero_fill(ahead.min(need.max(self.config.segment_bytes)))?;
        }
        if let Err(error) = (&*self.file).write_all(&self.buf) {
            // A partial write leaves a torn record; cut it so the next batch follows valid
            // data (recovery would cut it anyway).
            let _ = self.file.set_len(self.segment_len);
            let _ = (&*self.file).seek(SeekFrom::Start(self.segment_len));
            self.allocated = self.segment_len;
            return Err(io_error("write", &self.path)(error));
        }
        self.segment_len += self.buf.len() as u64;
        self.allocated = self.allocated.max(self.segment_len);
        self.bytes += self.buf.len() as u64;
        self.end = at;
        Ok(lsns)
    }

    /// Writes zeros from the segment's end up to `to` and returns to where the next batch
    /// goes. Not synced here: the next group's sync makes them durable with its batch.
    fn zero_fill(&mut self, to: u64) -> Result<(), WalError> {
        static ZEROS: [u8; 64 << 10] = [0; 64 << 10];
        let mut file = &*self.file;
        let fill = |file: &mut &File| -> io::Result<()> {
            file.seek(SeekFrom::Start(self.allocated))?;
            let mut at = self.allocated;
            while at < to {
                let n = (to - at).min(ZEROS.len() as u64) as usize;
                file.write_all(&ZEROS[..n])?;
                at += n as u64;
            }
            Ok(())
        };
        let filled = fill(&mut file);
        let back = file.seek(SeekFrom::Start(self.segment_len));
        filled.and(back).map_err(io_error("extend", &self.path))?;
        self.allocated = to;
        Ok(())
    }

    /// The handle that syncs the segment being appended to.
    pub fn syncer(&self) -> Syncer {
        Syncer {
            file: Arc::clone(&self.file),
            path: Arc::clone(&self.path),
        }
    }

    /// The flush policy the log was opened with.
    pub fn flush_policy(&self) -> FlushPolicy {
        self.config.flush
    }

    /// Closes the current segment (durably) and begins the next at the current end.
    fn next_segment(&mut self) -> Result<(), WalError> {
        self.file
            .sync_data()
            .map_err(io_error("fdatasync", &self.path))?;
        self.syncs += 1;
        let path = self.dir.join(segment_name(self.end));
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .map_err(io_error("create", &path))?;
        self.file = Arc::new(file);
        self.path = path.into();
        self.segment_len = 0;
        self.allocated = 0;
        sync_dir(&self.dir)
    }

    /// Deletes the segments that end at or before `lsn` (a checkpoint covers them). The
    /// segment being appended to is never deleted.
    pub fn drop_before(&mut self, lsn: Lsn) -> Result<usize, WalError> {
        let all = segments(&self.dir)?;
        let mut dropped = 0;
        for pair in all.windows(2) {
            let ((_, path), (next_start, _)) = (&pair[0], &pair[1]);
            if *next_start <= lsn && **path != *self.path {
                fs::remove_file(path).map_err(io_error("remove", path))?;
                dropped += 1;
            }
        }
        if dropped > 0 {
            sync_dir(&self.dir)?;
        }
        Ok(dropped)
    }
}

/// Bytes a record with a `payload_len`-byte payload takes on disk.
pub fn record_bytes(payload_len: usize) -> u64 {
    (HEADER_BYTES + payload_len) as u64
}
