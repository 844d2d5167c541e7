//! What the lock table holds and who waits, as MySQL's `performance_schema.data_locks` and
//! `data_lock_waits` show it: one row per lock a transaction holds or waits for, its mode in
//! InnoDB's words (`X,REC_NOT_GAP`, `S,GAP`, `X` for a next-key lock, `X,GAP,INSERT_INTENTION`
//! for a waiting insert), and one row per pair of a waiting request and a holder it waits
//! for. A snapshot: each shard of the lock table is read under its latch, one after another.
//!
//! Not shown: the table-level intention locks InnoDB also lists (there are none here), and a
//! wait for a row another transaction has just inserted and not committed (its implicit
//! lock has no entry in the lock table; InnoDB makes it explicit when someone waits).

use std::collections::{HashMap, HashSet};

use super::*;

/// One lock held or waited for (a row of `performance_schema.data_locks`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataLock {
    /// Names this lock in [`DataLockWait`].
    pub id: String,
    /// The transaction that holds or waits for it.
    pub trx: TrxId,
    /// The table's id.
    pub table: TableId,
    /// The index: `None` for the clustered index (`PRIMARY`), else a secondary index's
    /// position in the table's schema.
    pub index: Option<usize>,
    /// InnoDB's words: `X`, `S` (next-key), `X,REC_NOT_GAP`, `S,GAP`,
    /// `X,GAP,INSERT_INTENTION`, ...
    pub mode: String,
    /// Whether the transaction waits for it (else it holds it).
    pub waiting: bool,
    /// The locked entry's key (a secondary entry's key, then its primary key), or `None`
    /// for the supremum, the gap above the last entry.
    pub key: Option<Key>,
}

/// A request that waits and a lock it waits for (a row of
/// `performance_schema.data_lock_waits`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataLockWait {
    /// The waiting request's [`DataLock::id`] and transaction.
    pub requesting: (String, TrxId),
    /// The blocking lock's [`DataLock::id`] and transaction.
    pub blocking: (String, TrxId),
}

/// One lock-table entry as the snapshot copied it.
struct Entry {
    table: TableId,
    target: LockTarget,
    holders: Vec<(TrxId, LockMode)>,
    waiters: Vec<(TrxId, Want)>,
}

/// A lock's id in the snapshot: its transaction, table, index and key, and `suffix` to tell a
/// gap lock or a waiting request from a record lock on the same key.
fn lock_id(
    trx: TrxId,
    table: TableId,
    index: Option<usize>,
    key: Option<&Key>,
    suffix: &str,
) -> String {
    let index = index.map_or("PRIMARY".to_owned(), |i| i.to_string());
    let key = key.map_or("supremum".to_owned(), Key::to_string);
    format!("{}:{}:{index}:{key}{suffix}", trx.get(), table.0)
}

fn letter(mode: LockMode) -> &'static str {
    match mode {
        LockMode::Shared => "S",
        LockMode::Exclusive => "X",
    }
}

impl LockManager {
    /// Every lock and waiting request, and who waits for whom. A clustered record lock and
    /// a gap lock on the gap below it held by one transaction in one mode are one next-key
    /// lock, and are shown as one.
    pub(crate) fn snapshot(&self) -> (Vec<DataLock>, Vec<DataLockWait>) {
        let mut entries = Vec::new();
        for shard in self.shards.iter() {
            let locks = shard.locks.lock();
            for ((table, target), lock) in locks.iter() {
                entries.push(Entry {
                    table: *table,
                    target: target.clone(),
                    holders: lock.holders.to_vec(),
                    waiters: lock.waiters.iter().map(|&(t, w, _)| (t, w)).collect(),
                });
            }
        }
        // Held clustered record and gap locks, by transaction, table and key: one of each in
        // one mode is a next-key lock.
        let mut records: HashSet<(TrxId, TableId, &Key, LockMode)> = HashSet::new();
        let mut gaps: HashSet<(TrxId, TableId, &Key, LockMode)> = HashSet::new();
        for e in &entries {
            let held = match &e.target {
                LockTarget::Row(key) => Some((&mut records, key)),
                LockTarget::Gap(None, Some(key)) => Some((&mut gaps, key)),
                _ => None,
            };
            if let Some((set, key)) = held {
                set.extend(
                    e.holders
                        .iter()
                        .map(|&(trx, mode)| (trx, e.table, key, mode)),
                );
            }
        }
        let mut locks = Vec::new();
        // The id of each held lock, by (trx, table, target).
        let mut ids: HashMap<(TrxId, TableId, LockTarget), String> = HashMap::new();
        for e in &entries {
            let (index, key) = place(&e.target);
            let id = |trx: TrxId, suffix: &str| lock_id(trx, e.table, index, key, suffix);
            for &(trx, mode) in &e.holders {
                let (text, lock_id) = match &e.target {
                    LockTarget::Row(k) => {
                        let next_key = gaps.contains(&(trx, e.table, k, mode));
                        let suffix = if next_key { "" } else { ",REC_NOT_GAP" };
                        (format!("{}{suffix}", letter(mode)), id(trx, ""))
                    }
                    LockTarget::Unique(..) => {
                        (format!("{},REC_NOT_GAP", letter(mode)), id(trx, ""))
                    }
                    LockTarget::Gap(None, Some(k))
                        if records.contains(&(trx, e.table, k, mode)) =>
                    {
                        // Shown with its record, as one next-key lock.
                        ids.insert((trx, e.table, e.target.clone()), id(trx, ""));
                        continue;
                    }
                    // InnoDB's lock on the supremum is always a next-key lock.
                    LockTarget::Gap(_, None) => (letter(mode).to_owned(), id(trx, "")),
                    LockTarget::Gap(_, Some(_)) => {
                        (format!("{},GAP", letter(mode)), id(trx, ":gap"))
                    }
                };
                ids.insert((trx, e.table, e.target.clone()), lock_id.clone());
                locks.push(DataLock {
                    id: lock_id,
                    trx,
                    table: e.table,
                    index,
                    mode: text,
                    waiting: false,
                    key: key.cloned(),
                });
            }
            for &(trx, want) in &e.waiters {
                let mode = match want {
                    Want::Intention => "X,GAP,INSERT_INTENTION".to_owned(),
                    Want::Lock(mode) if e.target.is_gap() => format!("{},GAP", letter(mode)),
                    Want::Lock(mode) => format!("{},REC_NOT_GAP", letter(mode)),
                };
                locks.push(DataLock {
                    id: id(trx, ":waiting"),
                    trx,
                    table: e.table,
                    index,
                    mode,
                    waiting: true,
                    key: key.cloned(),
                });
            }
        }
        let mut waits = Vec::new();
        for e in &entries {
            let gap = e.target.is_gap();
            let (index, key) = place(&e.target);
            for &(trx, want) in &e.waiters {
                let requesting = lock_id(trx, e.table, index, key, ":waiting");
                for &(holder, mode) in &e.holders {
                    if holder == trx || compatible(&[(holder, mode)], trx, want, gap) {
                        continue;
                    }
                    let blocking = ids
                        .get(&(holder, e.table, e.target.clone()))
                        .cloned()
                        .unwrap_or_default();
                    waits.push(DataLockWait {
                        requesting: (requesting.clone(), trx),
                        blocking: (blocking, holder),
                    });
                }
            }
        }
        (locks, waits)
    }
}

/// The index (`None`: the clustered one) and entry (`None`: the supremum) a target locks.
fn place(target: &LockTarget) -> (Option<usize>, Option<&Key>) {
    match target {
        LockTarget::Row(k) => (None, Some(k)),
        LockTarget::Unique(i, k) => (Some(*i), Some(k)),
        LockTarget::Gap(i, k) => (*i, k.as_ref()),
    }
}
