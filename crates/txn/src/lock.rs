//! Row locks: shared and exclusive locks on rows (and on unique secondary key values), held
//! until the transaction ends, with waiting, a lock-wait timeout and deadlock detection.
//!
//! ```text
//!  lock table: shard[hash(table, target)] = latch + condvar
//!      (table, target) -> holders [(trx, S|X)]
//!  wait-for graph (one latch, taken only by a request that must wait):
//!      waiter -> the holders it waits for
//! ```
//!
//! A request that conflicts first records its edges in the wait-for graph; if the graph then
//! has a cycle through the requester, the requester is the victim (InnoDB weighs the
//! transactions and picks the lighter; choosing the one that closed the cycle is simpler and
//! also guarantees progress). Otherwise it sleeps on its shard's condvar until a release in
//! that shard or its deadline: no spinning. Left out: gap and next-key locks, so a locking
//! range read does not stop phantoms (see `tests/scenarios.rs`).

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};
use rustc_hash::{FxBuildHasher, FxHashMap};
use waterline_readview::TrxId;

use crate::error::TxnError;
use crate::stats::{Counter, Stats};
use crate::table::TableId;
use crate::value::Key;

/// Lock modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockMode {
    /// FOR SHARE: others may read-lock too, nobody may write.
    Shared,
    /// FOR UPDATE and every write.
    Exclusive,
}

/// What is locked.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LockTarget {
    /// A row, by primary key.
    Row(Key),
    /// A value of a unique secondary index (stands in for InnoDB's next-key lock on it).
    Unique(usize, Key),
}

/// A lock's full name: table and target.
pub(crate) type LockKey = (TableId, LockTarget);

#[derive(Debug, Default)]
struct Shard {
    /// Fx, not SipHash: keys are the engine's own, and hashing is on every lock's path.
    holders: Mutex<FxHashMap<LockKey, Vec<(TrxId, LockMode)>>>,
    released: Condvar,
}

/// The lock table. See the module page.
#[derive(Debug)]
pub(crate) struct LockManager {
    shards: Box<[CachePadded<Shard>]>,
    waits_for: Mutex<HashMap<TrxId, Vec<TrxId>>>,
    stats: Arc<Stats>,
}

/// A lock request (who, what, how, and how long it may wait).
pub(crate) struct Request<'a> {
    pub(crate) trx: TrxId,
    pub(crate) key: LockKey,
    pub(crate) mode: LockMode,
    pub(crate) timeout: Duration,
    /// For error messages.
    pub(crate) table_name: &'a str,
}

impl LockManager {
    pub(crate) fn new(shards: usize, stats: Arc<Stats>) -> LockManager {
        LockManager {
            shards: (0..shards.max(1))
                .map(|_| CachePadded::new(Shard::default()))
                .collect(),
            waits_for: Mutex::new(HashMap::new()),
            stats,
        }
    }

    fn shard(&self, key: &LockKey) -> &Shard {
        // The middle bits: the shard's map takes its buckets from the low ones and its tags
        // from the top ones, which must still vary among one shard's keys.
        let hash = FxBuildHasher.hash_one(key) >> 24;
        &self.shards[(hash % self.shards.len() as u64) as usize]
    }

    /// Grants the lock, waiting if needed. `Ok(true)` when newly taken (the caller records it
    /// for release), `Ok(false)` when the transaction held it already in this or a stronger
    /// mode.
    pub(crate) fn acquire(&self, request: Request<'_>) -> Result<bool, TxnError> {
        let Request {
            trx,
            key,
            mode,
            timeout,
            table_name,
        } = request;
        let shard = self.shard(&key);
        let deadline = Instant::now() + timeout;
        let mut holders = shard.holders.lock();
        let mut waited = false;
        let outcome = loop {
            if !holders.contains_key(&key) {
                holders.insert(key.clone(), Vec::new());
            }
            let entry = holders.get_mut(&key).expect("inserted above");
            let mine = entry.iter().position(|&(t, _)| t == trx);
            if let Some(i) = mine
                && entry[i].1 >= mode
            {
                break Ok(false);
            }
            let blockers: Vec<TrxId> = entry
                .iter()
                .filter(|&&(t, m)| {
                    t != trx && (mode == LockMode::Exclusive || m == LockMode::Exclusive)
                })
                .map(|&(t, _)| t)
                .collect();
            if blockers.is_empty() {
                match mine {
                    Some(i) => entry[i].1 = mode,
                    None => entry.push((trx, mode)),
                }
                break Ok(mine.is_none());
            }
            let target = || match &key.1 {
                LockTarget::Row(k) | LockTarget::Unique(_, k) => k.clone(),
            };
            if Instant::now() >= deadline {
                self.stats.incr(Counter::LockWaitTimeouts);
                break Err(TxnError::LockWaitTimeout {
                    waiter: trx,
                    blocker: blockers[0],
                    table: table_name.to_owned(),
                    key: target(),
                });
            }
            if let Some(cycle) = self.wait_for(trx, blockers.clone()) {
                self.stats.incr(Counter::Deadlocks);
                break Err(TxnError::Deadlock {
                    victim: trx,
                    blocker: cycle.get(1).copied().unwrap_or(blockers[0]),
                    cycle,
                    table: table_name.to_owned(),
                    key: target(),
                });
            }
            if !waited {
                waited = true;
                self.stats.incr(Counter::LockWaits);
            }
            shard.released.wait_until(&mut holders, deadline);
        };
        if waited {
            self.waits_for.lock().remove(&trx);
        }
        if holders.get(&key).is_some_and(Vec::is_empty) {
            holders.remove(&key);
        }
        outcome
    }

    /// Records that `trx` waits for `blockers`; returns the cycle (starting at `trx`) if that
    /// closes one, and then records nothing.
    fn wait_for(&self, trx: TrxId, blockers: Vec<TrxId>) -> Option<Vec<TrxId>> {
        let mut graph = self.waits_for.lock();
        graph.insert(trx, blockers);
        let cycle = find_cycle(&graph, trx);
        if cycle.is_some() {
            graph.remove(&trx);
        }
        cycle
    }

    /// Releases every lock in `keys` held by `trx` and wakes the waiters of their shards.
    pub(crate) fn release_all(&self, trx: TrxId, keys: &[LockKey]) {
        for key in keys {
            let shard = self.shard(key);
            let mut holders = shard.holders.lock();
            if let Some(entry) = holders.get_mut(key) {
                entry.retain(|&(t, _)| t != trx);
                if entry.is_empty() {
                    holders.remove(key);
                }
            }
            drop(holders);
            shard.released.notify_all();
        }
    }
}

/// A path `start -> ... -> start` in the wait-for graph, if any (depth-first).
fn find_cycle(graph: &HashMap<TrxId, Vec<TrxId>>, start: TrxId) -> Option<Vec<TrxId>> {
    let mut path = vec![start];
    let mut stack: Vec<std::slice::Iter<'_, TrxId>> =
        vec![graph.get(&start).map(|v| v.iter()).unwrap_or_default()];
    let mut seen = std::collections::HashSet::new();
    while let Some(edges) = stack.last_mut() {
        match edges.next() {
            Some(&next) if next == start => return Some(path),
            Some(&next) => {
                if seen.insert(next) {
                    path.push(next);
                    stack.push(graph.get(&next).map(|v| v.iter()).unwrap_or_default());
                }
            }
            None => {
                stack.pop();
                path.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_found_with_its_path() {
        let graph: HashMap<TrxId, Vec<TrxId>> = [
            (TrxId(1), vec![TrxId(2)]),
            (TrxId(2), vec![TrxId(4), TrxId(3)]),
            (TrxId(3), vec![TrxId(1)]),
        ]
        .into();
        assert_eq!(
            find_cycle(&graph, TrxId(1)),
            Some(vec![TrxId(1), TrxId(2), TrxId(3)])
        );
        assert_eq!(find_cycle(&graph, TrxId(4)), None);
    }
}
