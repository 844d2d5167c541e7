//! Range analysis (MySQL's range optimizer, `sql/range_optimizer/`): a condition becomes a
//! [`SelTree`], one [`KeyTree`] of intervals per index, and each index's tree becomes a list
//! of key ranges whose keys are counted.

mod mm_tree;
mod sel_arg;

use std::ops::Bound;

use waterline_types::{Key, KeyRange, Value};

pub use mm_tree::{RangeParam, get_mm_tree, get_mm_tree_and};
pub use sel_arg::{Interval, KeyTree, Node, SelArg, key_and, key_or};

/// The most ranges one index scan is split into. A tree with more (IN lists of IN lists) is
/// read with fewer key parts: fewer, wider ranges, still a superset.
pub const MAX_RANGES: usize = 4096;

/// What a condition allows on each index of a table (MySQL's `SEL_TREE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SelTree {
    /// No row can match (MySQL's `SEL_TREE::IMPOSSIBLE`): "Impossible WHERE".
    Impossible,
    /// One tree per index (in [`crate::IndexId::all`] order); `KeyTree::Any` where the
    /// condition does not restrict that index.
    Keys(Vec<KeyTree>),
}

impl SelTree {
    /// No restriction on any of `indexes` indexes.
    pub fn any(indexes: usize) -> SelTree {
        SelTree::Keys(vec![KeyTree::Any; indexes])
    }

    /// Whether some index is restricted.
    pub fn has_keys(&self) -> bool {
        match self {
            SelTree::Impossible => false,
            SelTree::Keys(keys) => keys.iter().any(|k| matches!(k, KeyTree::Arg(_))),
        }
    }
}

/// `a AND b` (MySQL's `tree_and`).
pub fn tree_and(a: SelTree, b: SelTree) -> SelTree {
    match (a, b) {
        (SelTree::Impossible, _) | (_, SelTree::Impossible) => SelTree::Impossible,
        (SelTree::Keys(a), SelTree::Keys(b)) => {
            let keys: Vec<KeyTree> = a.into_iter().zip(b).map(|(x, y)| key_and(x, y)).collect();
            if keys.contains(&KeyTree::Impossible) {
                SelTree::Impossible
            } else {
                SelTree::Keys(keys)
            }
        }
    }
}

/// `a OR b` (MySQL's `tree_or`).
pub fn tree_or(a: SelTree, b: SelTree) -> SelTree {
    match (a, b) {
        (SelTree::Impossible, other) | (other, SelTree::Impossible) => other,
        (SelTree::Keys(a), SelTree::Keys(b)) => {
            SelTree::Keys(a.into_iter().zip(b).map(|(x, y)| key_or(x, y)).collect())
        }
    }
}

/// The key ranges of one index's tree, and the most key parts any of them uses (for
/// EXPLAIN's `key_len`). `None` if the tree does not restrict the index's first column, so
/// no range scan is possible.
pub fn key_ranges(arg: &SelArg, key_parts: usize) -> Option<(Vec<KeyRange>, usize)> {
    if arg.part != 0 {
        return None;
    }
    for depth in (1..=key_parts).rev() {
        let mut out = Vec::new();
        let mut parts = 0;
        walk(arg, &mut Vec::new(), depth, &mut out, &mut parts);
        if out.len() <= MAX_RANGES || depth == 1 {
            return Some((out, parts));
        }
    }
    None
}

fn walk(
    arg: &SelArg,
    prefix: &mut Vec<Value>,
    depth: usize,
    out: &mut Vec<KeyRange>,
    parts: &mut usize,
) {
    if arg.part != prefix.len() || arg.part >= depth {
        // A gap in the key parts (a condition on part 2 without one on part 1), or the depth
        // limit: the prefix so far is the range.
        *parts = (*parts).max(prefix.len());
        out.push(KeyRange::Prefix(Key::from(prefix.as_slice())));
        return;
    }
    for node in &arg.nodes {
        match node.interval.as_point() {
            Some(v) => {
                prefix.push(v.clone());
                match &node.next {
                    Some(next) => walk(next, prefix, depth, out, parts),
                    None => {
                        *parts = (*parts).max(prefix.len());
                        out.push(KeyRange::Prefix(Key::from(prefix.as_slice())));
                    }
                }
                prefix.pop();
            }
            None => {
                *parts = (*parts).max(prefix.len() + 1);
                let extend = |b: &Bound<Value>| match b {
                    Bound::Included(v) => Bound::Included(with(prefix, v)),
                    Bound::Excluded(v) => Bound::Excluded(with(prefix, v)),
                    Bound::Unbounded if prefix.is_empty() => Bound::Unbounded,
                    Bound::Unbounded => Bound::Included(Key::from(prefix.as_slice())),
                };
                out.push(KeyRange::Between(
                    extend(&node.interval.lo),
                    extend(&node.interval.hi),
                ));
            }
        }
    }
}

fn with(prefix: &[Value], v: &Value) -> Key {
    let mut k = Key::from(prefix);
    k.push(v);
    k
}

/// A key range as EXPLAIN's trace prints it: `(1,1,2981) <= key < (1,1,3001)`.
pub fn describe(range: &KeyRange) -> String {
    let key = |k: &Key| {
        let vals: Vec<String> = k.iter().map(|v| v.to_string()).collect();
        format!("({})", vals.join(","))
    };
    match range {
        KeyRange::All => "every key".into(),
        KeyRange::Prefix(k) => format!("key starts with {}", key(k)),
        KeyRange::Between(lo, hi) => {
            let lo = match lo {
                Bound::Included(k) => format!("{} <= ", key(k)),
                Bound::Excluded(k) => format!("{} < ", key(k)),
                Bound::Unbounded => String::new(),
            };
            let hi = match hi {
                Bound::Included(k) => format!(" <= {}", key(k)),
                Bound::Excluded(k) => format!(" < {}", key(k)),
                Bound::Unbounded => String::new(),
            };
            format!("{lo}key{hi}")
        }
    }
}
