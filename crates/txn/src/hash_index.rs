//! The primary-key hash index: point lookups by primary key in one hash probe instead of a
//! skip-list descent, as InnoDB's adaptive hash index gives them on hot pages.
//!
//! A skip-list `get` on a 100,000-row table compares keys at about seventeen levels, each a
//! likely cache miss; TPC-C's point reads and writes (STOCK, CUSTOMER, ITEM) paid about a
//! fifth of the native driver's time there. The skip list stays the clustered index: it
//! orders the keys for range scans, and this map only finds a key's record.
//!
//! ```text
//!  lookup:  shard[hash(key)].read()  ──► RecordRef
//!  insert:  shard.write() { skip list get-or-insert; map insert }   one key's insert and
//!  unlink:  shard.write() { skip list remove; map remove }          unlink never interleave
//! ```
//!
//! Both structures change only under the key's shard latch, so they agree on every key
//! whenever nobody holds it: a record a lookup finds is the one the skip list holds.

use std::hash::{BuildHasher, Hash};

use crossbeam_skiplist::SkipMap;
use crossbeam_utils::CachePadded;
use hashbrown::HashTable;
use parking_lot::RwLock;
use rustc_hash::FxBuildHasher;

use crate::flat_map::FlatMap;
use crate::key::Key;
use crate::version::{Record, RecordRef};

/// Shards per table: enough that two cores rarely meet on one latch.
const SHARDS: usize = 64;

/// A hash map probed by a hash the caller computed once (it picked the shard with it too),
/// which keeps each entry's hash, so growing it moves entries without hashing their keys
/// again. The lock table's shards are these.
#[derive(Debug)]
pub(crate) struct HashedMap<K, V>(HashTable<(u64, K, V)>);

impl<K, V> Default for HashedMap<K, V> {
    fn default() -> Self {
        HashedMap(HashTable::new())
    }
}

impl<K: Eq, V> HashedMap<K, V> {
    /// Whether it has no entry.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every entry's key and value, in no order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.0.iter().map(|(_, k, v)| (k, v))
    }

    /// The value of `key`, whose hash is `hash`, to change.
    pub(crate) fn get_mut(&mut self, hash: u64, key: &K) -> Option<&mut V> {
        self.0.find_mut(hash, |e| e.1 == *key).map(|e| &mut e.2)
    }

    /// Adds `key`, which the map does not have.
    pub(crate) fn insert(&mut self, hash: u64, key: K, value: V) {
        self.0.insert_unique(hash, (hash, key, value), |e| e.0);
    }

    /// Changes `key`'s value with `f`, and removes the entry unless `f` says to keep it.
    pub(crate) fn update(&mut self, hash: u64, key: &K, f: impl FnOnce(&mut V) -> bool) {
        if let Ok(mut entry) = self.0.find_entry(hash, |e| e.1 == *key)
            && !f(&mut entry.get_mut().2)
        {
            entry.remove();
        }
    }

    /// Removes `key`'s entry if `doomed` says so of its value.
    pub(crate) fn remove_if(&mut self, hash: u64, key: &K, doomed: impl FnOnce(&V) -> bool) {
        if let Ok(entry) = self.0.find_entry(hash, |e| e.1 == *key)
            && doomed(&entry.get().2)
        {
            entry.remove();
        }
    }
}

/// One shard of the hash map: each record with its key's hash, side by side (see
/// [`FlatMap`]). A probe compares the full hash first, then the key the record holds (the
/// record is what it returns, so that line is read anyway).
type Shard = CachePadded<RwLock<FlatMap<RecordRef>>>;

/// The hash every sharded table of the engine uses for `key` (this index's, and the lock
/// table's): computed once per lookup, for the shard and for the probe.
pub(crate) fn hash_of(key: &impl Hash) -> u64 {
    FxBuildHasher.hash_one(key)
}

/// Which of `shards` shards a key with hash `hash` lives in. It takes the middle bits: a
/// table takes its buckets from the low bits and its tags from the top ones, which must
/// still vary among one shard's keys.
pub(crate) fn shard_of(hash: u64, shards: usize) -> usize {
    ((hash >> 24) % shards as u64) as usize
}

/// A table's clustered index: the ordered skip list and the hash map beside it.
#[derive(Debug)]
pub(crate) struct Clustered {
    /// Key order, for range scans and statistics.
    pub(crate) ordered: SkipMap<Key, RecordRef>,
    shards: Box<[Shard]>,
}

impl Default for Clustered {
    fn default() -> Self {
        Clustered {
            ordered: SkipMap::new(),
            shards: (0..SHARDS).map(|_| CachePadded::default()).collect(),
        }
    }
}

impl Clustered {
    fn shard(&self, hash: u64) -> &RwLock<FlatMap<RecordRef>> {
        &self.shards[shard_of(hash, SHARDS)]
    }

    /// The record for `key`, whose [`hash_of`] is `hash`, if the index has one.
    pub(crate) fn get(&self, key: &Key, hash: u64) -> Option<RecordRef> {
        let map = self.shard(hash).read();
        map.find(hash, |record| record.key == *key).cloned()
    }

    /// Prefetches, level by level, what lookups of keys with these [`hash_of`]s will read:
    /// every key's hash slot first, then the records they hold, then each record's newest
    /// version's header, then its values (see `prefetch.rs`).
    pub(crate) fn prefetch(&self, hashes: &[u64]) {
        for &hash in hashes {
            self.shard(hash).read().prefetch_home(hash);
        }
        for &hash in hashes {
            // The stored hash alone picks the records: comparing keys would wait for them.
            self.shard(hash)
                .read()
                .for_each_with_hash(hash, |record| crate::prefetch::line(&**record));
        }
        for &hash in hashes {
            self.shard(hash)
                .read()
                .for_each_with_hash(hash, |record| record.prefetch_newest());
        }
        for &hash in hashes {
            self.shard(hash)
                .read()
                .for_each_with_hash(hash, |record| record.prefetch_newest_row());
        }
    }

    /// The record for `key` (whose [`hash_of`] is `hash`), created empty in both structures
    /// if absent.
    pub(crate) fn get_or_insert(&self, key: &Key, hash: u64) -> RecordRef {
        let shard = self.shard(hash);
        let same = |record: &RecordRef| record.key == *key;
        if let Some(record) = shard.read().find(hash, same) {
            return RecordRef::clone(record);
        }
        let mut map = shard.write();
        if let Some(record) = map.find(hash, same) {
            return RecordRef::clone(record);
        }
        let entry = self
            .ordered
            .get_or_insert_with(key.clone(), || RecordRef::new(Record::new(key.clone())));
        let record = RecordRef::clone(entry.value());
        map.insert_unique(hash, RecordRef::clone(&record));
        record
    }

    /// Removes `record`'s entry from both structures if it is still the one for its key.
    pub(crate) fn remove(&self, record: &RecordRef) {
        let key = &record.key;
        let hash = hash_of(key);
        let mut map = self.shard(hash).write();
        map.remove(hash, |r| RecordRef::ptr_eq(r, record));
        if let Some(entry) = self.ordered.get(key)
            && RecordRef::ptr_eq(entry.value(), record)
        {
            entry.remove();
        }
    }

    /// Entries, visible or not.
    pub(crate) fn len(&self) -> usize {
        self.ordered.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_structures_agree_after_inserts_and_removals() {
        let index = Clustered::default();
        let keys: Vec<Key> = (0..1000).map(Key::one).collect();
        let records: Vec<RecordRef> = keys
            .iter()
            .map(|k| index.get_or_insert(k, hash_of(k)))
            .collect();
        assert!(RecordRef::ptr_eq(
            &index.get_or_insert(&keys[7], hash_of(&keys[7])),
            &records[7]
        ));
        for record in records.iter().step_by(2) {
            index.remove(record);
        }
        // A stale record does not remove the one that replaced it.
        let fresh = index.get_or_insert(&keys[0], hash_of(&keys[0]));
        index.remove(&records[0]);
        assert!(
            index
                .get(&keys[0], hash_of(&keys[0]))
                .is_some_and(|r| RecordRef::ptr_eq(&r, &fresh))
        );
        for (i, key) in keys.iter().enumerate().skip(1) {
            let in_map = index.get(key, hash_of(key)).is_some();
            let in_list = index.ordered.get(key).is_some();
            assert_eq!((in_map, in_list), (i % 2 == 1, i % 2 == 1), "key {i}");
        }
        assert_eq!(index.len(), 501);
    }
}
