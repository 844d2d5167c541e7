//! The baseline: MySQL 8.0's read view, a sorted vector of the ids that were active when the
//! view was taken, searched by binary search (book 8.2.1).
//!
//! ```text
//!   global rw_trx_ids (sorted)        view.m_ids: a full copy, 8 bytes an id
//!   [ 17 | 903 | 904 | 906 | ... ]  ──copy under trx-sys latch──►  [ 17 | 903 | 904 | 906 | ... ]
//!                                                                   binary_search(id): O(log n)
//! ```
//!
//! Opening a view costs 8 bytes per active transaction, copied while the global latch is held;
//! each visibility test is a binary search. Both grow with concurrency: this is what the book
//! measured collapsing on NUMA machines, and what the hybrid view replaces.

use crate::view::{ActiveSet, ReadView, ViewLimits};
use crate::{ActiveSetError, TrxId, error};

/// InnoDB's `ReadView` before the book's change: limits plus a sorted vector of active ids.
#[derive(Clone, Debug, Default)]
pub struct VecReadView {
    limits: ViewLimits,
    /// InnoDB's `m_ids`: the ids active at snapshot time, sorted.
    ids: Vec<TrxId>,
}

impl VecReadView {
    /// The fixed fields of the view.
    pub fn limits(&self) -> &ViewLimits {
        &self.limits
    }

    /// Mutable fixed fields, to set the purge horizon ([`ViewLimits::set_low_limit_no`]).
    pub fn limits_mut(&mut self) -> &mut ViewLimits {
        &mut self.limits
    }

    /// The ids that were active when the view was taken.
    pub fn ids(&self) -> &[TrxId] {
        &self.ids
    }
}

impl ReadView for VecReadView {
    /// InnoDB's algorithm, step for step: below `up_limit_id` or own: visible; at or above
    /// `low_limit_id`: invisible; else invisible exactly when a binary search finds the id.
    #[inline]
    fn changes_visible(&self, id: TrxId) -> bool {
        match self.limits.decide(id) {
            Some(answer) => answer,
            None => self.ids.binary_search(&id).is_err(),
        }
    }

    fn creator_trx_id(&self) -> Option<TrxId> {
        self.limits.creator_trx_id()
    }

    fn low_limit_id(&self) -> TrxId {
        self.limits.low_limit_id()
    }
}

/// InnoDB's `trx_sys->rw_trx_ids`: the active read-write ids as one sorted vector.
///
/// Ids arrive in increasing order, so insertion is a push at the end; removal is a binary
/// search and a shift (`trx_erase_lists`), O(n) in the worst case, as in InnoDB.
#[derive(Clone, Debug)]
pub struct VecActiveSet {
    ids: Vec<TrxId>,
    low_limit_id: TrxId,
}

impl Default for VecActiveSet {
    fn default() -> Self {
        VecActiveSet {
            ids: Vec::new(),
            low_limit_id: TrxId::FIRST,
        }
    }
}

impl VecActiveSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The active ids, oldest first.
    pub fn ids(&self) -> &[TrxId] {
        &self.ids
    }
}

impl ActiveSet for VecActiveSet {
    type View = VecReadView;

    fn insert(&mut self, id: TrxId) -> Result<(), ActiveSetError> {
        error::check_begin(id, self.low_limit_id)?;
        self.ids.push(id);
        self.low_limit_id = TrxId(id.0 + 1);
        Ok(())
    }

    fn remove(&mut self, id: TrxId) -> Result<(), ActiveSetError> {
        match self.ids.binary_search(&id) {
            Ok(pos) => {
                self.ids.remove(pos);
                Ok(())
            }
            Err(_) => Err(ActiveSetError::NotActive { id }),
        }
    }

    fn contains(&self, id: TrxId) -> bool {
        self.ids.binary_search(&id).is_ok()
    }

    fn len(&self) -> usize {
        self.ids.len()
    }

    fn oldest(&self) -> Option<TrxId> {
        self.ids.first().copied()
    }

    fn low_limit_id(&self) -> TrxId {
        self.low_limit_id
    }

    fn new_view(&self) -> VecReadView {
        VecReadView::default()
    }

    fn snapshot_into(&self, view: &mut VecReadView, creator: Option<TrxId>) -> usize {
        view.limits = ViewLimits::new(self.low_limit_id, self.oldest(), creator);
        view.ids.clear();
        view.ids.extend_from_slice(&self.ids);
        ViewLimits::BYTES + std::mem::size_of_val(view.ids.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_of(ids: &[u64]) -> VecActiveSet {
        let mut set = VecActiveSet::new();
        for &id in ids {
            set.insert(TrxId(id)).unwrap();
        }
        set
    }

    #[test]
    fn edges_follow_innodb() {
        let set = set_of(&[5, 7, 9]);
        let view = set.snapshot(Some(TrxId(7)));
        assert_eq!(view.limits().up_limit_id(), TrxId(5));
        assert_eq!(view.limits().low_limit_id(), TrxId(10));
        assert!(view.changes_visible(TrxId(4)), "below up_limit_id");
        assert!(
            !view.changes_visible(TrxId(5)),
            "up_limit_id itself is active"
        );
        assert!(view.changes_visible(TrxId(6)), "ended before the snapshot");
        assert!(view.changes_visible(TrxId(7)), "the creator sees itself");
        assert!(!view.changes_visible(TrxId(9)));
        assert!(
            !view.changes_visible(TrxId(10)),
            "low_limit_id is not visible"
        );
        assert!(!view.changes_visible(TrxId(11)));
    }

    #[test]
    fn empty_set_sees_everything_below_the_high_water_mark() {
        let mut set = set_of(&[1, 2]);
        set.remove(TrxId(1)).unwrap();
        set.remove(TrxId(2)).unwrap();
        let view = set.snapshot(None);
        assert_eq!(view.limits().up_limit_id(), TrxId(3));
        assert!(view.changes_visible(TrxId(2)));
        assert!(!view.changes_visible(TrxId(3)));
        assert_eq!(view.creator_trx_id(), None);
    }

    #[test]
    fn contract_violations_are_errors() {
        let mut set = set_of(&[3]);
        assert_eq!(
            set.insert(TrxId(3)),
            Err(ActiveSetError::NotIncreasing {
                id: TrxId(3),
                low_limit_id: TrxId(4)
            })
        );
        assert_eq!(
            set.insert(TrxId(0)),
            Err(ActiveSetError::Reserved { id: TrxId(0) })
        );
        assert_eq!(
            set.remove(TrxId(2)),
            Err(ActiveSetError::NotActive { id: TrxId(2) })
        );
    }

    #[test]
    fn snapshot_into_reuses_the_buffer_and_counts_bytes() {
        let set = set_of(&[1, 2, 3, 4]);
        let mut view = set.new_view();
        assert_eq!(set.snapshot_into(&mut view, None), 32 + 4 * 8);
        let buffer = view.ids.as_ptr();
        assert_eq!(set.snapshot_into(&mut view, None), 64);
        assert_eq!(view.ids.as_ptr(), buffer, "no new allocation");
    }
}
