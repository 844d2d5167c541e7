//! `SelArg`: the intervals a condition allows on one key part, each with the intervals it
//! allows on later key parts (MySQL's `SEL_ARG` graph, as a tree).
//!
//! For an index on `(w, d, o)`, `w = 1 AND d = 1 AND o >= 2981 AND o < 3001` is
//!
//! ```text
//! part 0 (w): [1, 1]
//!               └─ part 1 (d): [1, 1]
//!                                └─ part 2 (o): [2981, 3001)
//! ```
//!
//! and its one range is `(1, 1, 2981) <= key < (1, 1, 3001)`. MySQL keeps the intervals of a
//! key part in a red-black tree; a sorted `Vec` is enough here, since a condition has a
//! handful of them.
//!
//! **Exact and approximate.** AND is exact. OR is exact for disjoint or equal intervals; two
//! intervals that overlap but differ are merged into their union, with the OR of what they
//! allow on later parts. That may read more keys than the condition needs, never fewer: the
//! range is a superset of the matching keys, which is all a range must be (the condition is
//! still checked on every row read). The property test `tests/range.rs` checks it.

use std::cmp::Ordering;
use std::ops::Bound;

use waterline_types::Value;

/// An interval of one key part's values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interval {
    /// Lower bound.
    pub lo: Bound<Value>,
    /// Upper bound.
    pub hi: Bound<Value>,
}

impl Interval {
    /// `[v, v]`.
    pub fn point(v: Value) -> Interval {
        Interval {
            lo: Bound::Included(v.clone()),
            hi: Bound::Included(v),
        }
    }

    /// Whether this is one value (`[v, v]`).
    pub fn as_point(&self) -> Option<&Value> {
        match (&self.lo, &self.hi) {
            (Bound::Included(a), Bound::Included(b)) if a == b => Some(a),
            _ => None,
        }
    }

    /// Whether no value is in the interval.
    pub fn is_empty(&self) -> bool {
        match (&self.lo, &self.hi) {
            (Bound::Included(a), Bound::Included(b)) => a > b,
            (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => {
                a >= b
            }
            _ => false,
        }
    }

    /// The intersection (possibly empty).
    pub fn intersect(&self, other: &Interval) -> Interval {
        let lo = if cmp_lo(&self.lo, &other.lo).is_ge() {
            &self.lo
        } else {
            &other.lo
        };
        let hi = if cmp_hi(&self.hi, &other.hi).is_le() {
            &self.hi
        } else {
            &other.hi
        };
        Interval {
            lo: lo.clone(),
            hi: hi.clone(),
        }
    }

    /// The smallest interval holding both.
    fn hull(&self, other: &Interval) -> Interval {
        let lo = if cmp_lo(&self.lo, &other.lo).is_le() {
            &self.lo
        } else {
            &other.lo
        };
        let hi = if cmp_hi(&self.hi, &other.hi).is_ge() {
            &self.hi
        } else {
            &other.hi
        };
        Interval {
            lo: lo.clone(),
            hi: hi.clone(),
        }
    }
}

/// Orders lower bounds: `Unbounded` first, `[5` before `(5`.
fn cmp_lo(a: &Bound<Value>, b: &Bound<Value>) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Less,
        (_, Bound::Unbounded) => Ordering::Greater,
        (Bound::Included(x), Bound::Excluded(y)) => x.cmp(y).then(Ordering::Less),
        (Bound::Excluded(x), Bound::Included(y)) => x.cmp(y).then(Ordering::Greater),
        (Bound::Included(x), Bound::Included(y)) | (Bound::Excluded(x), Bound::Excluded(y)) => {
            x.cmp(y)
        }
    }
}

/// Orders upper bounds: `5)` before `5]`, `Unbounded` last.
fn cmp_hi(a: &Bound<Value>, b: &Bound<Value>) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Greater,
        (_, Bound::Unbounded) => Ordering::Less,
        (Bound::Included(x), Bound::Excluded(y)) => x.cmp(y).then(Ordering::Greater),
        (Bound::Excluded(x), Bound::Included(y)) => x.cmp(y).then(Ordering::Less),
        (Bound::Included(x), Bound::Included(y)) | (Bound::Excluded(x), Bound::Excluded(y)) => {
            x.cmp(y)
        }
    }
}

/// One interval of a key part and what it allows on later parts (`None`: anything).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The interval.
    pub interval: Interval,
    /// Conditions on later key parts (MySQL's `next_key_part`).
    pub next: Option<Box<SelArg>>,
}

/// The intervals a condition allows on key part `part` (sorted, disjoint, never empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelArg {
    /// The key part (0 is the index's first column).
    pub part: usize,
    /// The intervals, ascending.
    pub nodes: Vec<Node>,
}

/// The result of combining two `SelArg`s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyTree {
    /// No key can match.
    Impossible,
    /// Every key may match (no usable restriction).
    Any,
    /// These intervals.
    Arg(SelArg),
}

impl KeyTree {
    fn from_option(arg: Option<Box<SelArg>>) -> KeyTree {
        arg.map_or(KeyTree::Any, |a| KeyTree::Arg(*a))
    }
}

impl SelArg {
    /// One interval on `part`; `Impossible` if it is empty.
    pub fn leaf(part: usize, interval: Interval) -> KeyTree {
        if interval.is_empty() {
            KeyTree::Impossible
        } else {
            KeyTree::Arg(SelArg {
                part,
                nodes: vec![Node {
                    interval,
                    next: None,
                }],
            })
        }
    }

    /// The last key part the tree restricts.
    pub fn max_part(&self) -> usize {
        self.nodes
            .iter()
            .filter_map(|n| n.next.as_ref().map(|x| x.max_part()))
            .fold(self.part, usize::max)
    }

    /// How many intervals the tree holds, over all parts.
    pub fn weight(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| 1 + n.next.as_ref().map_or(0, |x| x.weight()))
            .sum()
    }
}

/// `a AND b` (MySQL's `key_and`): exact.
pub fn key_and(a: KeyTree, b: KeyTree) -> KeyTree {
    let (a, b) = match (a, b) {
        (KeyTree::Impossible, _) | (_, KeyTree::Impossible) => return KeyTree::Impossible,
        (KeyTree::Any, other) | (other, KeyTree::Any) => return other,
        (KeyTree::Arg(a), KeyTree::Arg(b)) => (a, b),
    };
    // Conditions on different parts: the later part becomes the next part of every interval
    // of the earlier one.
    let (a, b) = if a.part <= b.part { (a, b) } else { (b, a) };
    let mut nodes = Vec::new();
    if a.part < b.part {
        for node in a.nodes {
            let next = key_and(KeyTree::from_option(node.next), KeyTree::Arg(b.clone()));
            push_node(&mut nodes, node.interval, next);
        }
    } else {
        for x in &a.nodes {
            for y in &b.nodes {
                let interval = x.interval.intersect(&y.interval);
                if interval.is_empty() {
                    continue;
                }
                let next = key_and(
                    KeyTree::from_option(x.next.clone()),
                    KeyTree::from_option(y.next.clone()),
                );
                push_node(&mut nodes, interval, next);
            }
        }
        nodes.sort_by(|x, y| cmp_lo(&x.interval.lo, &y.interval.lo));
    }
    if nodes.is_empty() {
        KeyTree::Impossible
    } else {
        KeyTree::Arg(SelArg {
            part: a.part,
            nodes,
        })
    }
}

fn push_node(nodes: &mut Vec<Node>, interval: Interval, next: KeyTree) {
    match next {
        KeyTree::Impossible => {}
        KeyTree::Any => nodes.push(Node {
            interval,
            next: None,
        }),
        KeyTree::Arg(n) => nodes.push(Node {
            interval,
            next: Some(Box::new(n)),
        }),
    }
}

/// `a OR b` (MySQL's `key_or`): exact for disjoint or equal intervals, a superset otherwise
/// (see the module documentation). Conditions on different key parts cannot be ORed into a
/// range: `Any`.
pub fn key_or(a: KeyTree, b: KeyTree) -> KeyTree {
    let (a, b) = match (a, b) {
        (KeyTree::Any, _) | (_, KeyTree::Any) => return KeyTree::Any,
        (KeyTree::Impossible, other) | (other, KeyTree::Impossible) => return other,
        (KeyTree::Arg(a), KeyTree::Arg(b)) => (a, b),
    };
    if a.part != b.part {
        return KeyTree::Any;
    }
    let mut all: Vec<Node> = a.nodes.into_iter().chain(b.nodes).collect();
    all.sort_by(|x, y| cmp_lo(&x.interval.lo, &y.interval.lo));
    let mut nodes: Vec<Node> = Vec::with_capacity(all.len());
    for node in all {
        if let Some(last) = nodes.last_mut()
            && !last.interval.intersect(&node.interval).is_empty()
        {
            let next = key_or(
                KeyTree::from_option(last.next.take()),
                KeyTree::from_option(node.next),
            );
            last.interval = last.interval.hull(&node.interval);
            last.next = match next {
                KeyTree::Arg(n) => Some(Box::new(n)),
                // Impossible cannot come out of an OR of two possible trees.
                KeyTree::Any | KeyTree::Impossible => None,
            };
            continue;
        }
        nodes.push(node);
    }
    KeyTree::Arg(SelArg {
        part: a.part,
        nodes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lt(part: usize, v: i64) -> KeyTree {
        SelArg::leaf(
            part,
            Interval {
                lo: Bound::Unbounded,
                hi: Bound::Excluded(Value::Int(v)),
            },
        )
    }
    fn ge(part: usize, v: i64) -> KeyTree {
        SelArg::leaf(
            part,
            Interval {
                lo: Bound::Included(Value::Int(v)),
                hi: Bound::Unbounded,
            },
        )
    }
    fn eq(part: usize, v: i64) -> KeyTree {
        SelArg::leaf(part, Interval::point(Value::Int(v)))
    }

    #[test]
    fn and_of_one_part_intersects() {
        let KeyTree::Arg(a) = key_and(ge(0, 2981), lt(0, 3001)) else {
            panic!()
        };
        assert_eq!(a.nodes.len(), 1);
        assert_eq!(a.nodes[0].interval.lo, Bound::Included(Value::Int(2981)));
        assert_eq!(a.nodes[0].interval.hi, Bound::Excluded(Value::Int(3001)));
        assert_eq!(key_and(ge(0, 5), lt(0, 5)), KeyTree::Impossible);
    }

    #[test]
    fn and_of_later_part_nests_in_any_order() {
        let x = key_and(ge(2, 10), key_and(eq(1, 1), eq(0, 1)));
        let KeyTree::Arg(w) = x else { panic!() };
        assert_eq!(w.part, 0);
        let d = w.nodes[0].next.as_ref().unwrap();
        assert_eq!(d.part, 1);
        assert_eq!(d.nodes[0].next.as_ref().unwrap().part, 2);
    }

    #[test]
    fn or_keeps_equal_points_exact_and_gives_up_across_parts() {
        let x = key_or(key_and(eq(0, 1), eq(1, 2)), key_and(eq(0, 1), eq(1, 5)));
        let KeyTree::Arg(a) = x else { panic!() };
        assert_eq!(a.nodes.len(), 1);
        assert_eq!(a.nodes[0].next.as_ref().unwrap().nodes.len(), 2);
        assert_eq!(key_or(eq(0, 1), eq(1, 1)), KeyTree::Any);
        let KeyTree::Arg(b) = key_or(eq(0, 1), eq(0, 3)) else {
            panic!()
        };
        assert_eq!(b.nodes.len(), 2);
    }
}
