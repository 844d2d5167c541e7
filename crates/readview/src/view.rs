//! The two interfaces every snapshot kind offers: a [`ReadView`] answers "are the changes of
//! transaction `id` visible to me?", an [`ActiveSet`] is the global structure a view is copied
//! from.
//!
//! The CSN log ([`crate::CsnLog`]) is not an [`ActiveSet`]: it is shared by reference and
//! serialises its writers itself, where an active set is plain data behind the caller's latch.
//! Its snapshots are [`ReadView`]s all the same.

use std::fmt;

use crate::{ActiveSetError, TrxId};

/// A consistent snapshot: which transactions' changes a reader sees.
///
/// A view is a value: `Clone + Debug`, no locks, no references into the engine (the CSN
/// snapshot holds an `Arc` of its log, which it only reads). `changes_visible` is pure: the
/// same id always gets the same answer from the same view, whatever happens after the view
/// was taken.
pub trait ReadView: Clone + fmt::Debug + Send + Sync {
    /// Whether the view sees the changes of transaction `id` (InnoDB's
    /// `ReadView::changes_visible`). True for the view's own creator; otherwise true exactly
    /// when `id` had ended (committed, or rolled back and undone) when the view was taken.
    fn changes_visible(&self, id: TrxId) -> bool;

    /// The transaction that took the view, if any (InnoDB's `m_creator_trx_id`; a view with no
    /// read-write creator there holds `TRX_ID_MAX`).
    fn creator_trx_id(&self) -> Option<TrxId>;

    /// The high-water mark (InnoDB's `m_low_limit_id`): the view sees no id at or above it.
    fn low_limit_id(&self) -> TrxId;
}

/// The global set of active read-write transaction ids (InnoDB's `trx_sys->rw_trx_ids`).
///
/// Plain data: the caller keeps it behind the trx-sys latch, so every method that changes it
/// takes `&mut self` and a snapshot is a copy made while the latch is held.
pub trait ActiveSet: fmt::Debug + Send + Sync {
    /// The kind of view a snapshot of this set produces.
    type View: ReadView;

    /// Adds a transaction that has just been given its id (InnoDB: `rw_trx_ids.push_back` in
    /// `trx_assign_rseg_durable`). Ids must arrive in increasing order.
    fn insert(&mut self, id: TrxId) -> Result<(), ActiveSetError>;

    /// Removes a transaction that commits or rolls back (InnoDB: `trx_erase_lists`).
    fn remove(&mut self, id: TrxId) -> Result<(), ActiveSetError>;

    /// Whether `id` is active.
    fn contains(&self, id: TrxId) -> bool;

    /// How many transactions are active.
    fn len(&self) -> usize;

    /// Whether no transaction is active.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The oldest active id: what a new view's `up_limit_id` will be.
    fn oldest(&self) -> Option<TrxId>;

    /// The smallest id this set has not yet seen: one past the largest id ever inserted, or
    /// [`TrxId::FIRST`]. A view taken now has this as its `low_limit_id`.
    fn low_limit_id(&self) -> TrxId;

    /// An empty view shaped for this set (e.g. with the hybrid window size), for
    /// [`ActiveSet::snapshot_into`] to fill.
    fn new_view(&self) -> Self::View;

    /// Copies the set into `view` (InnoDB's `ReadView::prepare`), reusing the view's buffers:
    /// once they are large enough, no allocation. Returns the bytes written into the view (its
    /// fixed fields plus the copied ids or bitmap words): the cost the book measures.
    fn snapshot_into(&self, view: &mut Self::View, creator: Option<TrxId>) -> usize;

    /// A new view of the set as it is now.
    fn snapshot(&self, creator: Option<TrxId>) -> Self::View {
        let mut view = self.new_view();
        self.snapshot_into(&mut view, creator);
        view
    }
}

/// Maps an optional creator to InnoDB's representation, where "no creator" is `TRX_ID_MAX`.
pub(crate) fn creator_or_max(creator: Option<TrxId>) -> TrxId {
    creator.unwrap_or(TrxId::MAX)
}

/// The inverse of [`creator_or_max`].
pub(crate) fn creator_from_max(creator: TrxId) -> Option<TrxId> {
    (creator != TrxId::MAX).then_some(creator)
}

/// The fixed fields InnoDB's `ReadView` has in both the vector and the hybrid form, and the
/// cheap tests `changes_visible` makes on them before it looks at any id set.
///
/// ```text
///   visible          ? look in the id set ?          invisible
/// ───────────────┬──────────────────────────────┬─────────────────►  trx id
///          up_limit_id                   low_limit_id
///  (oldest active at snapshot)        (next id at snapshot)
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewLimits {
    low_limit_id: TrxId,
    up_limit_id: TrxId,
    creator_trx_id: TrxId,
    low_limit_no: TrxId,
}

impl ViewLimits {
    /// Bytes of the four fixed fields, counted in every snapshot's copy cost.
    pub const BYTES: usize = 4 * std::mem::size_of::<TrxId>();

    /// Limits for a snapshot of a set whose next free id is `low_limit_id` and whose oldest
    /// active id is `oldest`. `low_limit_no` starts equal to `low_limit_id`; the transaction
    /// system lowers it with [`ViewLimits::set_low_limit_no`].
    pub(crate) fn new(low_limit_id: TrxId, oldest: Option<TrxId>, creator: Option<TrxId>) -> Self {
        ViewLimits {
            low_limit_id,
            up_limit_id: oldest.unwrap_or(low_limit_id),
            creator_trx_id: creator_or_max(creator),
            low_limit_no: low_limit_id,
        }
    }

    /// The prelude of InnoDB's `changes_visible`: `Some(answer)` when the limits decide, `None`
    /// when the id lies in `[up_limit_id, low_limit_id)` and the id set must be asked.
    #[inline(always)]
    pub(crate) fn decide(&self, id: TrxId) -> Option<bool> {
        if id < self.up_limit_id || id == self.creator_trx_id {
            Some(true)
        } else if id >= self.low_limit_id {
            Some(false)
        } else {
            None
        }
    }

    /// InnoDB's `m_low_limit_id`: the view sees no id at or above it (the "high-water mark").
    pub fn low_limit_id(&self) -> TrxId {
        self.low_limit_id
    }

    /// InnoDB's `m_up_limit_id`: the view sees every id below it (the "low-water mark"): the
    /// oldest transaction active at snapshot time, or `low_limit_id` if none was.
    pub fn up_limit_id(&self) -> TrxId {
        self.up_limit_id
    }

    /// InnoDB's `m_creator_trx_id`: the transaction that took the view, whose own changes it
    /// always sees; `None` for a view of a read-only transaction.
    pub fn creator_trx_id(&self) -> Option<TrxId> {
        creator_from_max(self.creator_trx_id)
    }

    /// InnoDB's `m_low_limit_no`: purge may remove undo of transactions whose serialisation
    /// number is below this, as far as this view is concerned.
    pub fn low_limit_no(&self) -> TrxId {
        self.low_limit_no
    }

    /// Sets the purge horizon; the transaction system does it while it still holds the latch
    /// under which the view was taken (InnoDB: `serialisation_min_trx_no` in `prepare`).
    pub fn set_low_limit_no(&mut self, no: TrxId) {
        self.low_limit_no = no;
    }
}

impl Default for ViewLimits {
    /// The limits of a view of an empty system: sees nothing.
    fn default() -> Self {
        ViewLimits::new(TrxId::FIRST, None, None)
    }
}
