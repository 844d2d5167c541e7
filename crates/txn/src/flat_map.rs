//! An open-addressing hash table with linear probing: each slot holds an entry's hash and its
//! value side by side, so a probe that finds its entry reads one cache line of the table.
//!
//! The primary-key index's shards are these. A `hashbrown` table keeps a separate array of
//! control bytes: a probe reads a control byte, then the bucket, then the record the bucket
//! points to, three cache misses on a table larger than the cache. Here the bucket is the
//! first thing read, and its stored hash rules out almost every other key before the record
//! is touched.
//!
//! ```text
//!  slots:  [ h=0x..41 A ][ h=0x..42 B ][ h=0x..41 C ][ empty ][ h=0x..45 D ] ...
//!            home of A     home of B     home of C was 1, pushed on by A and B
//!  find C: start at slot 1 (its home), step right until C or an empty slot
//! ```
//!
//! A removal leaves no tombstone: it moves each entry of the run that follows back into the
//! hole when the hole lies between that entry's home and its slot ("backward shift"), so a
//! probe still stops at the first empty slot and long-lived tables do not silt up.

/// One slot: empty, or an entry's hash and value.
type Slot<V> = Option<(u64, V)>;

/// A hash table of values that know their own keys: callers pass the hash and a test that
/// recognises the value they look for.
#[derive(Debug)]
pub(crate) struct FlatMap<V> {
    /// A power of two slots, at most three quarters full.
    slots: Box<[Slot<V>]>,
    len: usize,
}

/// Slots of a table's first allocation.
const MIN_SLOTS: usize = 16;

impl<V> Default for FlatMap<V> {
    fn default() -> Self {
        FlatMap {
            slots: Box::default(),
            len: 0,
        }
    }
}

impl<V> FlatMap<V> {
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// Where an entry with `hash` would be placed if its slot were free.
    fn home(&self, hash: u64) -> usize {
        // The low bits: the caller picks its shard from the middle ones.
        hash as usize & self.mask()
    }

    /// The slot of the value with `hash` that `is` recognises.
    fn position(&self, hash: u64, is: impl Fn(&V) -> bool) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mut i = self.home(hash);
        loop {
            match &self.slots[i] {
                None => return None,
                Some((h, value)) if *h == hash && is(value) => return Some(i),
                Some(_) => i = (i + 1) & self.mask(),
            }
        }
    }

    /// The value with `hash` that `is` recognises.
    pub(crate) fn find(&self, hash: u64, is: impl Fn(&V) -> bool) -> Option<&V> {
        let i = self.position(hash, is)?;
        self.slots[i].as_ref().map(|(_, value)| value)
    }

    /// Asks for the cache line of the slot a probe for `hash` starts at (see
    /// `prefetch.rs`).
    pub(crate) fn prefetch_home(&self, hash: u64) {
        if self.len > 0 {
            crate::prefetch::line(&self.slots[self.home(hash)]);
        }
    }

    /// Calls `f` on each value stored with hash `hash`, without looking into any value: a
    /// caller that only wants to prefetch them must not wait for their lines.
    pub(crate) fn for_each_with_hash(&self, hash: u64, mut f: impl FnMut(&V)) {
        if self.len == 0 {
            return;
        }
        let mut i = self.home(hash);
        while let Some((h, value)) = &self.slots[i] {
            if *h == hash {
                f(value);
            }
            i = (i + 1) & self.mask();
        }
    }

    /// Adds `value`, whose hash is `hash`; the caller knows the table does not hold it.
    pub(crate) fn insert_unique(&mut self, hash: u64, value: V) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        self.place(hash, value);
        self.len += 1;
    }

    /// Puts an entry in the first free slot from its home on (there is one: the table is
    /// at most three quarters full).
    fn place(&mut self, hash: u64, value: V) {
        let mut i = self.home(hash);
        while self.slots[i].is_some() {
            i = (i + 1) & self.mask();
        }
        self.slots[i] = Some((hash, value));
    }

    /// Doubles the slots and places every entry again by its stored hash.
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, (0..size).map(|_| None).collect());
        for (hash, value) in old.into_vec().into_iter().flatten() {
            self.place(hash, value);
        }
    }

    /// Removes and returns the value with `hash` that `is` recognises.
    pub(crate) fn remove(&mut self, hash: u64, is: impl Fn(&V) -> bool) -> Option<V> {
        let mut hole = self.position(hash, is)?;
        let (_, removed) = self.slots[hole].take().expect("position finds a full slot");
        self.len -= 1;
        // Backward shift: an entry of the following run may move into the hole unless the
        // hole lies before its home (cyclically, in the probe order), where a probe for it
        // would never look.
        let mask = self.mask();
        let mut next = (hole + 1) & mask;
        while let Some((h, _)) = &self.slots[next] {
            let home = self.home(*h);
            // Probe distances from the entry's home to the hole and to its slot.
            if (hole.wrapping_sub(home) & mask) < (next.wrapping_sub(home) & mask) {
                self.slots.swap(hole, next);
                hole = next;
            }
            next = (next + 1) & mask;
        }
        Some(removed)
    }

    /// Entries held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u16),
        Remove(u16),
        Find(u16),
    }

    /// A hash with few distinct values, so keys collide, runs form and wrap around the end.
    fn crowded_hash(key: u16) -> u64 {
        u64::from(key % 37).wrapping_mul(0x9e37_79b9) ^ u64::from(key % 5) << 40
    }

    fn op() -> impl Strategy<Value = Op> {
        let key = 0u16..300;
        prop_oneof![
            3 => key.clone().prop_map(Op::Insert),
            2 => key.clone().prop_map(Op::Remove),
            2 => key.prop_map(Op::Find),
        ]
    }

    proptest! {
        /// Any sequence of inserts, removals and lookups agrees with a `HashMap`, and after
        /// it every key still held is found.
        #[test]
        fn behaves_like_a_hash_map(ops in proptest::collection::vec(op(), 1..600)) {
            let mut map = FlatMap::default();
            let mut model = HashMap::new();
            let mut serial = 0u32;
            for op in ops {
                match op {
                    Op::Insert(k) => {
                        if let std::collections::hash_map::Entry::Vacant(e) = model.entry(k) {
                            serial += 1;
                            e.insert(serial);
                            map.insert_unique(crowded_hash(k), (k, serial));
                        }
                    }
                    Op::Remove(k) => {
                        let got = map.remove(crowded_hash(k), |v| v.0 == k).map(|v| v.1);
                        prop_assert_eq!(got, model.remove(&k));
                    }
                    Op::Find(k) => {
                        let got = map.find(crowded_hash(k), |v| v.0 == k).map(|v| v.1);
                        prop_assert_eq!(got, model.get(&k).copied());
                        // The prefetch walk visits exactly the entries stored with that hash.
                        let mut with_hash = Vec::new();
                        map.for_each_with_hash(crowded_hash(k), |v| with_hash.push(v.0));
                        with_hash.sort_unstable();
                        let mut expected: Vec<u16> = model
                            .keys()
                            .copied()
                            .filter(|&other| crowded_hash(other) == crowded_hash(k))
                            .collect();
                        expected.sort_unstable();
                        prop_assert_eq!(with_hash, expected);
                        map.prefetch_home(crowded_hash(k));
                    }
                }
                prop_assert_eq!(map.len(), model.len());
            }
            for (k, serial) in &model {
                let got = map.find(crowded_hash(*k), |v| v.0 == *k).map(|v| v.1);
                prop_assert_eq!(got, Some(*serial));
            }
        }
    }

    #[test]
    fn an_empty_table_finds_and_removes_nothing() {
        let mut map: FlatMap<u8> = FlatMap::default();
        assert!(map.find(7, |_| true).is_none());
        assert!(map.remove(7, |_| true).is_none());
    }
}
