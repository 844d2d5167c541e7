//! [`HybridReadView`]: the book's ReadView, a bitmap window plus a long-id vector.

use super::{DEFAULT_VIEW_WINDOW_BYTES, WORD_BITS, window_words};
use crate::view::{ReadView, ViewLimits};
use crate::{ConfigError, TrxId};

/// The book's ReadView (8.2.3): a bitmap for the short ids (`top_active`), a sorted vector for
/// the long ones below it (`m_long_ids`), and InnoDB's limits.
///
/// Bit `i` of `bits[k]` stands for id `short_base + 64 * k + i`; a set bit means "not
/// visible". The window is every id the copied words cover, and in it the bit alone is the
/// answer: set for the ids that were active when the view was taken, cleared for the view's
/// creator (it sees itself), and set for the ids at or above `low_limit_id` that share the
/// last word (they did not exist yet). Ids outside the window get InnoDB's checks, then a
/// search of `long_ids`, which are all below `short_base`.
#[derive(Clone, Debug)]
pub struct HybridReadView {
    limits: ViewLimits,
    /// InnoDB patch: `m_long_ids`. Sorted; every id is below `short_base`.
    pub(super) long_ids: Vec<TrxId>,
    /// InnoDB patch: `top_active`. At most `window_words` words.
    pub(super) bits: Vec<u64>,
    /// The id of bit 0 of `bits[0]` (a multiple of 64); InnoDB patch: `m_short_min_id`.
    pub(super) short_base: u64,
    /// The window's capacity in words (`MAX_TOP_ACTIVE_BYTES / 8`).
    pub(super) window_words: usize,
}

impl Default for HybridReadView {
    /// An empty view with the default window ([`DEFAULT_VIEW_WINDOW_BYTES`]).
    fn default() -> Self {
        HybridReadView::empty(DEFAULT_VIEW_WINDOW_BYTES / 8)
    }
}

impl HybridReadView {
    /// An empty view whose bitmap window holds `bytes` bytes (`bytes * 8` ids). Errors unless
    /// `bytes` is a positive multiple of 8.
    pub fn with_window_bytes(bytes: usize) -> Result<Self, ConfigError> {
        Ok(HybridReadView::empty(window_words(bytes)?))
    }

    pub(super) fn empty(window_words: usize) -> Self {
        HybridReadView {
            limits: ViewLimits::default(),
            long_ids: Vec::new(),
            bits: Vec::with_capacity(window_words),
            short_base: 0,
            window_words,
        }
    }

    /// The fixed fields of the view.
    pub fn limits(&self) -> &ViewLimits {
        &self.limits
    }

    /// Mutable fixed fields, to set the purge horizon ([`ViewLimits::set_low_limit_no`]).
    pub fn limits_mut(&mut self) -> &mut ViewLimits {
        &mut self.limits
    }

    pub(super) fn set_limits(&mut self, limits: ViewLimits) {
        self.limits = limits;
    }

    /// The window's capacity in bytes.
    pub fn window_bytes(&self) -> usize {
        self.window_words * 8
    }

    /// The long ids: active at snapshot time and older than the bitmap window.
    pub fn long_ids(&self) -> &[TrxId] {
        &self.long_ids
    }

    /// The first id the bitmap covers (InnoDB patch: `m_short_min_id`).
    pub fn short_min_id(&self) -> TrxId {
        TrxId(self.short_base)
    }

    /// How many bitmap words this view holds (at most `window_bytes() / 8`).
    pub fn bitmap_words(&self) -> usize {
        self.bits.len()
    }

    /// `changes_visible` for an id the bitmap does not cover: InnoDB's checks, then the long
    /// ids. Kept out of line (`cold`) so that the bit test is the straight-line path.
    #[cold]
    #[inline(never)]
    fn outside_window(&self, id: TrxId) -> bool {
        match self.limits.decide(id) {
            Some(answer) => answer,
            None => self.long_ids.binary_search(&id).is_err(),
        }
    }

    /// Bytes a snapshot wrote into this view: the fixed fields, the window's base, the long
    /// ids and the bitmap words.
    pub(super) fn copied_bytes(&self) -> usize {
        ViewLimits::BYTES
            + std::mem::size_of::<u64>()
            + std::mem::size_of_val(self.long_ids.as_slice())
            + std::mem::size_of_val(self.bits.as_slice())
    }
}

impl ReadView for HybridReadView {
    /// Inside the window: one bit test, nothing else. Outside it: InnoDB's checks, then a
    /// binary search of the (short) long vector.
    #[inline]
    fn changes_visible(&self, id: TrxId) -> bool {
        // An id below the window wraps to a huge offset and misses, like one above it.
        let offset = id.0.wrapping_sub(self.short_base);
        let word = usize::try_from(offset / WORD_BITS)
            .ok()
            .and_then(|k| self.bits.get(k));
        match word {
            Some(word) => (word >> (offset % WORD_BITS)) & 1 == 0,
            None => self.outside_window(id),
        }
    }

    fn creator_trx_id(&self) -> Option<TrxId> {
        self.limits.creator_trx_id()
    }

    fn low_limit_id(&self) -> TrxId {
        self.limits.low_limit_id()
    }
}
