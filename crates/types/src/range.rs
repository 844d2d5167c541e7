//! Ranges of keys: what an index scan reads, what range analysis produces and what the
//! statistics estimate.

use std::ops::Bound;

use crate::key::Key;

/// A range of keys. Bounds are prefixes: `Prefix([1])` is every key that starts with 1, and an
/// inclusive upper bound `[5]` includes `[5, x]`, as a range on an index prefix does in SQL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyRange {
    /// Every key.
    All,
    /// Every key that starts with these values.
    Prefix(Key),
    /// Keys between two (prefix) bounds.
    Between(Bound<Key>, Bound<Key>),
}

impl KeyRange {
    /// Where an ascending walk starts (a bound the skip list understands).
    pub fn start(&self) -> Bound<Key> {
        match self {
            KeyRange::All | KeyRange::Between(Bound::Unbounded, _) => Bound::Unbounded,
            KeyRange::Prefix(p) | KeyRange::Between(Bound::Included(p) | Bound::Excluded(p), _) => {
                Bound::Included(p.clone())
            }
        }
    }

    /// Where a descending walk starts: a bound above every key of the range (an inclusive
    /// prefix bound ends below the next prefix, see [`Key::prefix_end`]).
    pub fn end(&self) -> Bound<Key> {
        match self {
            KeyRange::All | KeyRange::Between(_, Bound::Unbounded) => Bound::Unbounded,
            KeyRange::Prefix(p) | KeyRange::Between(_, Bound::Included(p)) => {
                p.prefix_end().map_or(Bound::Unbounded, Bound::Excluded)
            }
            KeyRange::Between(_, Bound::Excluded(p)) => Bound::Excluded(p.clone()),
        }
    }

    /// Whether `key` is past the lower bound (`Excluded` skips the bound's prefix).
    pub fn after_start(&self, key: &Key) -> bool {
        match self {
            KeyRange::Between(Bound::Excluded(p), _) => key.cmp_prefix(p).is_gt(),
            _ => true,
        }
    }

    /// Whether `key` is still inside the upper bound; the walk stops at the first that is not.
    pub fn before_end(&self, key: &Key) -> bool {
        match self {
            KeyRange::All | KeyRange::Between(_, Bound::Unbounded) => true,
            KeyRange::Prefix(p) => key.cmp_prefix(p).is_eq(),
            KeyRange::Between(_, Bound::Included(p)) => key.cmp_prefix(p).is_le(),
            KeyRange::Between(_, Bound::Excluded(p)) => key.cmp_prefix(p).is_lt(),
        }
    }

    /// Whether `key` lies in the range.
    pub fn contains(&self, key: &Key) -> bool {
        !self.is_before(key) && !self.is_after(key)
    }

    /// Whether `key` sorts below the range (over ascending keys: true, then false).
    pub fn is_before(&self, key: &Key) -> bool {
        let started = match self.start() {
            Bound::Included(p) => key.cmp_prefix(&p).is_ge(),
            _ => true,
        };
        !(started && self.after_start(key))
    }

    /// Whether `key` sorts above the range (over ascending keys: false, then true).
    pub fn is_after(&self, key: &Key) -> bool {
        match self {
            // Not `!before_end`: a key below the prefix is not inside it either, and the
            // histogram's binary search needs false for every key below the range.
            KeyRange::Prefix(p) => key.cmp_prefix(p).is_gt(),
            _ => !self.before_end(key),
        }
    }

    /// The same range with every bound passed through `f` (schema coercion).
    pub fn try_map<E>(self, mut f: impl FnMut(Key) -> Result<Key, E>) -> Result<Self, E> {
        let mut bound = |b: Bound<Key>| -> Result<Bound<Key>, E> {
            Ok(match b {
                Bound::Included(k) => Bound::Included(f(k)?),
                Bound::Excluded(k) => Bound::Excluded(f(k)?),
                Bound::Unbounded => Bound::Unbounded,
            })
        };
        Ok(match self {
            KeyRange::All => KeyRange::All,
            KeyRange::Prefix(p) => KeyRange::Prefix(f(p)?),
            KeyRange::Between(lo, hi) => KeyRange::Between(bound(lo)?, bound(hi)?),
        })
    }
}
