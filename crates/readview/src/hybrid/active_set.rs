//! [`HybridActiveSet`]: the global active list as a bitmap ring plus a long vector.

use super::{
    GLOBAL_WINDOW_BYTES, HybridReadView, WORD_BITS, append, mask_of, push_ids_of_word,
    window_words, word_of,
};
use crate::view::{ActiveSet, ViewLimits};
use crate::{ActiveSetError, ConfigError, TrxId, error};

/// How a snapshot lays out the short ids it copies into a [`HybridReadView`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HybridLayout {
    /// The book's, and its published patch's: every word from the oldest active short id to
    /// the newest id, as far as the view's window reaches (the oldest words' ids go to the
    /// view's long vector). One straggler far below the others makes the copy as wide as the
    /// distance between them: wider, at a few hundred active transactions, than the
    /// vector's list of ids. The default: copying words is cheaper under the trx-sys latch
    /// than turning them into ids (see [`HybridLayout::Compact`]).
    #[default]
    Book,
    /// The bitmap starts at the word that makes the copy smallest: the ids of the words
    /// before it are copied as ids, into the view's long vector. So a view never copies more
    /// than the ids themselves would take (plus the bitmap's base), and an id in the bitmap
    /// is still one bit test. But taking ids out of words is likely dearer than copying
    /// the words, under the trx-sys latch: over TPC-C-lite at hundreds of clients this
    /// layout copied fewer bytes than the book's and ran slower (the read views chapter).
    Compact,
}

impl HybridLayout {
    /// The layout's name as flags and reports print it.
    pub fn name(self) -> &'static str {
        match self {
            HybridLayout::Book => "book",
            HybridLayout::Compact => "compact",
        }
    }
}

/// The book's global active list (8.2.3): `short_rw_trx_ids_bitmap` + `long_rw_trx_ids`.
///
/// The window is a ring of `W` words (`W` a power of two): absolute word `w` (ids
/// `64w .. 64w + 63`) lives in `ring[w % W]`, and the window covers the absolute words `base_word .. base_word + W`.
/// Ids below `short_min_id() = 64 * base_word` that are still active are in `long_ids`.
///
/// Invariants (checked by the property tests through the public interface):
/// * every set bit is an active id inside the window; every active id is either a set bit or
///   in `long_ids`, never both; `long_ids` is sorted and below `short_min_id()`;
/// * `short_count` is the number of set bits;
/// * when `short_count > 0`, `ring[lo_word % W]` is the first non-zero word of the window and
///   `hi_word` (the word of the largest id ever inserted) is the last one that can be.
#[derive(Clone, Debug)]
pub struct HybridActiveSet {
    ring: Box<[u64]>,
    base_word: u64,
    lo_word: u64,
    hi_word: u64,
    short_count: usize,
    long_ids: Vec<TrxId>,
    low_limit_id: TrxId,
    overflow_moves: u64,
    view_window_words: usize,
    layout: HybridLayout,
}

impl Default for HybridActiveSet {
    /// The book's sizes: a 65,536-byte global window, views of
    /// [`super::DEFAULT_VIEW_WINDOW_BYTES`].
    fn default() -> Self {
        HybridActiveSet::with_windows(GLOBAL_WINDOW_BYTES, super::DEFAULT_VIEW_WINDOW_BYTES)
            .expect("the default windows are whole words")
    }
}

impl HybridActiveSet {
    /// An empty set with the book's sizes.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty set whose own window holds `global_bytes` (a power of two, at least 8: the
    /// ring is indexed with a mask, not a division) and whose views hold `view_bytes` (a
    /// positive multiple of 8). Tests shrink both so that overflow happens early.
    pub fn with_windows(global_bytes: usize, view_bytes: usize) -> Result<Self, ConfigError> {
        let words = window_words(global_bytes)?;
        if !words.is_power_of_two() {
            return Err(ConfigError::GlobalWindow {
                bytes: global_bytes,
            });
        }
        Ok(HybridActiveSet {
            ring: vec![0; words].into_boxed_slice(),
            base_word: 0,
            lo_word: 0,
            hi_word: 0,
            short_count: 0,
            long_ids: Vec::new(),
            low_limit_id: TrxId::FIRST,
            overflow_moves: 0,
            view_window_words: window_words(view_bytes)?,
            layout: HybridLayout::default(),
        })
    }

    /// The same set, its snapshots laid out as `layout` says.
    pub fn with_layout(mut self, layout: HybridLayout) -> Self {
        self.layout = layout;
        self
    }

    /// How its snapshots are laid out.
    pub fn layout(&self) -> HybridLayout {
        self.layout
    }

    /// The first id of the bitmap window (the book's `min_short_valid_id`): active ids below
    /// it are long.
    pub fn short_min_id(&self) -> TrxId {
        TrxId(self.base_word * WORD_BITS)
    }

    /// The long ids, oldest first.
    pub fn long_ids(&self) -> &[TrxId] {
        &self.long_ids
    }

    /// How many ids have moved from the bitmap to the long vector since the set was made
    /// because the window had to slide past them.
    pub fn overflow_moves(&self) -> u64 {
        self.overflow_moves
    }

    fn capacity(&self) -> u64 {
        self.ring.len() as u64
    }

    fn slot(&self, w: u64) -> usize {
        // The capacity is a power of two: this is `w % capacity` without a division, which
        // would otherwise cost more than the rest of a small snapshot.
        (w & (self.capacity() - 1)) as usize
    }

    /// The ring's words for the absolute words `first ..= last` (at most one ring length), as
    /// at most two slices in order.
    fn words(&self, first: u64, last: u64) -> (&[u64], &[u64]) {
        let n = (last - first + 1) as usize;
        let start = self.slot(first);
        let head = n.min(self.ring.len() - start);
        (&self.ring[start..start + head], &self.ring[..n - head])
    }

    /// The word a compact snapshot's bitmap of the words `first ..= last` starts at, `last +
    /// 1` for none: starting one word later saves that word's 8 bytes and costs 8 bytes for
    /// each active id in it, copied as an id instead. So the smallest copy starts after the
    /// prefix whose running sum of (ids in a word - 1) is lowest; on a tie the bitmap starts
    /// earlier, as more ids are then one bit test.
    ///
    /// A word can lower the sum by one at most, so the scan stops once the sum is further
    /// above its lowest than words remain: in a dense run of ids that is a few words in,
    /// and the snapshot then costs what the book's does. Empty and full words, the common
    /// ones, skip the population count.
    fn cheapest_start(&self, first: u64, last: u64) -> u64 {
        let (head, tail) = self.words(first, last);
        let (mut best, mut lowest, mut sum) = (first, 0i64, 0i64);
        for (w, &word) in (first..).zip(head.iter().chain(tail)) {
            sum += match word {
                0 => -1,
                u64::MAX => 63,
                _ => i64::from(word.count_ones()) - 1,
            };
            if sum < lowest {
                lowest = sum;
                best = w + 1;
            } else if sum - lowest >= (last - w) as i64 {
                break;
            }
        }
        best
    }

    /// Moves `lo_word` forward to the first non-zero word (or to `hi_word` if none is).
    fn settle_lo(&mut self) {
        while self.lo_word < self.hi_word && self.ring[self.slot(self.lo_word)] == 0 {
            self.lo_word += 1;
        }
    }

    /// Slides the window so that it starts at `new_base`: the active ids of the words it
    /// leaves move, in order, to the end of `long_ids` (they are all above the old long ids).
    fn slide_to(&mut self, new_base: u64) {
        let end = new_base.min(self.hi_word + 1);
        let mut w = self.lo_word;
        while w < end && self.short_count > 0 {
            let slot = self.slot(w);
            let moved =
                push_ids_of_word(&mut self.long_ids, w, std::mem::take(&mut self.ring[slot]));
            self.short_count -= moved;
            self.overflow_moves += moved as u64;
            w += 1;
        }
        self.base_word = new_base;
        self.lo_word = self.lo_word.max(new_base);
    }
}

impl ActiveSet for HybridActiveSet {
    type View = HybridReadView;

    fn insert(&mut self, id: TrxId) -> Result<(), ActiveSetError> {
        error::check_begin(id, self.low_limit_id)?;
        let w = word_of(id);
        let mut slid = false;
        if self.short_count == 0 {
            // Every word is zero: the window can start at the new id's word, leaving the most
            // room for the ids to come.
            self.base_word = self.base_word.max(w);
            self.lo_word = w;
        } else if w >= self.base_word + self.capacity() {
            self.slide_to(w + 1 - self.capacity());
            slid = true;
        }
        self.hi_word = w;
        let slot = self.slot(w);
        self.ring[slot] |= mask_of(id);
        self.short_count += 1;
        if slid {
            // Only a slide can leave `lo_word` on an empty word; setting a bit cannot.
            self.settle_lo();
        }
        self.low_limit_id = TrxId(id.0 + 1);
        Ok(())
    }

    fn remove(&mut self, id: TrxId) -> Result<(), ActiveSetError> {
        if id < self.short_min_id() {
            let pos = self
                .long_ids
                .binary_search(&id)
                .map_err(|_| ActiveSetError::NotActive { id })?;
            self.long_ids.remove(pos);
            return Ok(());
        }
        if !self.contains(id) {
            return Err(ActiveSetError::NotActive { id });
        }
        let w = word_of(id);
        let slot = self.slot(w);
        self.ring[slot] &= !mask_of(id);
        self.short_count -= 1;
        if w == self.lo_word {
            self.settle_lo();
        }
        Ok(())
    }

    fn contains(&self, id: TrxId) -> bool {
        if id < self.short_min_id() {
            self.long_ids.binary_search(&id).is_ok()
        } else {
            id < self.low_limit_id && self.ring[self.slot(word_of(id))] & mask_of(id) != 0
        }
    }

    fn len(&self) -> usize {
        self.long_ids.len() + self.short_count
    }

    fn oldest(&self) -> Option<TrxId> {
        self.long_ids.first().copied().or_else(|| {
            (self.short_count > 0).then(|| {
                let word = self.ring[self.slot(self.lo_word)];
                TrxId(self.lo_word * WORD_BITS + u64::from(word.trailing_zeros()))
            })
        })
    }

    fn low_limit_id(&self) -> TrxId {
        self.low_limit_id
    }

    fn new_view(&self) -> HybridReadView {
        HybridReadView::empty(self.view_window_words)
    }

    /// Copies the long ids and the words from the oldest active short id to the newest id.
    /// Words that do not fit in the view's window (the oldest ones) are copied as ids into the
    /// view's long vector, and so, in the [`HybridLayout::Compact`] layout, are those of the
    /// words before the cheapest start; the global set is not touched.
    fn snapshot_into(&self, view: &mut HybridReadView, creator: Option<TrxId>) -> usize {
        view.set_limits(ViewLimits::new(self.low_limit_id, self.oldest(), creator));
        view.long_ids.clear();
        append(&mut view.long_ids, &self.long_ids);
        view.bits.clear();
        if self.short_count == 0 {
            view.short_base = self.low_limit_id.0;
            return view.copied_bytes();
        }
        let (mut first, last) = (self.lo_word, self.hi_word);
        let fits = view.window_words as u64;
        let mut kept = first;
        if last - first + 1 > fits {
            kept = last + 1 - fits;
        }
        if self.layout == HybridLayout::Compact {
            kept = self.cheapest_start(kept, last);
        }
        if kept > first {
            let (head, tail) = self.words(first, kept - 1);
            for (w, &word) in (first..).zip(head.iter().chain(tail)) {
                push_ids_of_word(&mut view.long_ids, w, word);
            }
            first = kept;
        }
        if first > last {
            // Every short id is cheaper as an id: no bitmap. The limits answer above it.
            view.short_base = self.low_limit_id.0;
            return view.copied_bytes();
        }
        let (head, tail) = self.words(first, last);
        append(&mut view.bits, head);
        if !tail.is_empty() {
            // The copy wraps around the end of the ring (rare: once a lap).
            append(&mut view.bits, tail);
        }
        view.short_base = first * WORD_BITS;
        // The last word is `low_limit_id - 1`'s: the ids above it in that word did not exist
        // yet, and their bits say so, so the window's answer is final for every id it covers.
        let unborn = self.low_limit_id.0 % WORD_BITS;
        if unborn != 0 {
            let padded = self.ring[self.slot(last)] | (!0 << unborn);
            *view.bits.last_mut().expect("at least one word was copied") = padded;
        }
        if let Some(offset) = creator
            .map(|id| id.0.wrapping_sub(view.short_base))
            .filter(|&offset| offset / WORD_BITS < view.bits.len() as u64)
        {
            // The creator sees its own changes: its bit goes, so one bit test answers for it.
            view.bits[(offset / WORD_BITS) as usize] &= !(1 << (offset % WORD_BITS));
        }
        view.copied_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReadView;

    fn ids(set: &HybridActiveSet) -> Vec<u64> {
        (0..set.low_limit_id().0)
            .filter(|&i| set.contains(TrxId(i)))
            .collect()
    }

    #[test]
    fn window_boundaries_and_overflow() {
        // A 2-word (128-id) global window, 1-word (64-id) views.
        let mut set = HybridActiveSet::with_windows(16, 8).unwrap();
        for id in [1, 63, 64, 127] {
            set.insert(TrxId(id)).unwrap();
        }
        assert_eq!(set.short_min_id(), TrxId(0));
        assert_eq!(set.overflow_moves(), 0);
        // 128 is word 2: the window slides by one word, 1 and 63 become long.
        set.insert(TrxId(128)).unwrap();
        assert_eq!(set.short_min_id(), TrxId(64));
        assert_eq!(set.long_ids(), &[TrxId(1), TrxId(63)]);
        assert_eq!(set.overflow_moves(), 2);
        assert_eq!(ids(&set), vec![1, 63, 64, 127, 128]);
        assert_eq!(set.oldest(), Some(TrxId(1)));

        let view = set.snapshot(Some(TrxId(64)));
        assert_eq!(view.limits().up_limit_id(), TrxId(1));
        assert_eq!(view.limits().low_limit_id(), TrxId(129));
        // The view holds one word: word 2 (128..191); word 1 (64, 127) spills into its long ids.
        assert_eq!(view.short_min_id(), TrxId(128));
        assert_eq!(
            view.long_ids(),
            &[TrxId(1), TrxId(63), TrxId(64), TrxId(127)]
        );
        for (id, visible) in [
            (0, true),
            (1, false),
            (2, true),
            (63, false),
            (64, true), // the creator
            (65, true),
            (127, false),
            (128, false),
            (129, false), // low_limit_id
        ] {
            assert_eq!(view.changes_visible(TrxId(id)), visible, "id {id}");
        }
    }

    #[test]
    fn removal_from_both_parts_and_lo_word_moves() {
        let mut set = HybridActiveSet::with_windows(16, 16).unwrap();
        for id in [5, 70, 71, 200] {
            set.insert(TrxId(id)).unwrap();
        }
        // 200 is word 3: window slides to start at word 2; 5, 70, 71 move to long.
        assert_eq!(set.long_ids(), &[TrxId(5), TrxId(70), TrxId(71)]);
        set.remove(TrxId(70)).unwrap();
        set.remove(TrxId(200)).unwrap();
        assert_eq!(set.len(), 2);
        assert_eq!(set.oldest(), Some(TrxId(5)));
        assert_eq!(
            set.remove(TrxId(200)),
            Err(ActiveSetError::NotActive { id: TrxId(200) })
        );
        // An empty window jumps to the next id without moving anything.
        set.insert(TrxId(10_000)).unwrap();
        assert_eq!(set.short_min_id(), TrxId(9_984));
        assert_eq!(ids(&set).len(), 3);
        let view = set.snapshot(None);
        assert!(!view.changes_visible(TrxId(10_000)));
        assert!(view.changes_visible(TrxId(9_999)));
        assert!(!view.changes_visible(TrxId(71)));
    }

    #[test]
    fn the_window_answers_for_the_creator_and_for_unborn_ids() {
        let mut set = HybridActiveSet::with_windows(16, 8).unwrap();
        for id in 64..=70 {
            set.insert(TrxId(id)).unwrap();
        }
        let view = set.snapshot(Some(TrxId(66)));
        assert_eq!(view.short_min_id(), TrxId(64));
        assert_eq!(view.bitmap_words(), 1);
        assert!(
            view.changes_visible(TrxId(66)),
            "the creator, inside the window"
        );
        assert!(!view.changes_visible(TrxId(65)));
        // 71..=127 share the last copied word but did not exist at snapshot time.
        for id in [71, 100, 127, 128] {
            assert!(!view.changes_visible(TrxId(id)), "id {id}");
        }
        // The global set is untouched by the snapshot: 66 is still active there.
        assert!(set.contains(TrxId(66)));
        assert!(!set.snapshot(None).changes_visible(TrxId(66)));
    }

    #[test]
    fn a_view_of_an_empty_set() {
        let mut set = HybridActiveSet::new();
        set.insert(TrxId(1)).unwrap();
        set.remove(TrxId(1)).unwrap();
        let mut view = set.new_view();
        let bytes = set.snapshot_into(&mut view, None);
        assert_eq!(bytes, ViewLimits::BYTES + 8);
        assert!(view.changes_visible(TrxId(1)));
        assert!(!view.changes_visible(TrxId(2)));
    }

    #[test]
    fn copy_cost_of_1000_consecutive_ids() {
        let mut set = HybridActiveSet::new();
        for id in 1..=1000 {
            set.insert(TrxId(id)).unwrap();
        }
        let mut view = set.new_view();
        // 1..=1000 lies in words 0..=15: 16 words, 128 bytes, plus 40 bytes of fields.
        assert_eq!(set.snapshot_into(&mut view, None), 168);
        assert_eq!(view.bitmap_words(), 16);
        let buffer = view.bits.as_ptr();
        set.snapshot_into(&mut view, None);
        assert_eq!(view.bits.as_ptr(), buffer, "no new allocation");
    }

    #[test]
    fn a_straggler_makes_the_books_copy_wide_and_the_compact_one_skips_it() {
        // One transaction far older than 201 recent ones.
        let mut compact = HybridActiveSet::new().with_layout(HybridLayout::Compact);
        let mut book = HybridActiveSet::new().with_layout(HybridLayout::Book);
        for id in std::iter::once(5).chain(100_000..=100_200) {
            compact.insert(TrxId(id)).unwrap();
            book.insert(TrxId(id)).unwrap();
        }
        let ids_bytes = ViewLimits::BYTES + 8 * 202;
        let (mut c, mut b) = (compact.new_view(), book.new_view());
        let book_bytes = book.snapshot_into(&mut b, None);
        let compact_bytes = compact.snapshot_into(&mut c, None);
        // The book's: the whole 8 KB window of words up to the newest id.
        assert_eq!(b.bitmap_words(), 1024);
        assert!(book_bytes > 4 * ids_bytes, "{book_bytes}");
        // Compact: the straggler as an id, the recent run as 4 words.
        assert_eq!(c.long_ids(), &[TrxId(5)]);
        assert_eq!(c.bitmap_words(), 4);
        assert_eq!(compact_bytes, ViewLimits::BYTES + 8 + 8 + 4 * 8);
        for view in [&c, &b] {
            assert!(!view.changes_visible(TrxId(5)));
            assert!(view.changes_visible(TrxId(6)));
            assert!(!view.changes_visible(TrxId(100_100)));
            assert!(view.changes_visible(TrxId(99_999)));
        }
    }

    #[test]
    fn scattered_ids_alone_are_copied_as_ids() {
        let mut set = HybridActiveSet::new().with_layout(HybridLayout::Compact);
        for id in [100, 1_000, 10_000, 20_000] {
            set.insert(TrxId(id)).unwrap();
        }
        let mut view = set.new_view();
        let bytes = set.snapshot_into(&mut view, None);
        // No word holds two of them: each is cheaper as an id (ties keep the bitmap).
        assert_eq!(view.bitmap_words(), 1);
        assert_eq!(bytes, ViewLimits::BYTES + 8 + 3 * 8 + 8);
        assert!(!view.changes_visible(TrxId(1_000)));
        assert!(view.changes_visible(TrxId(1_001)));
        assert!(!view.changes_visible(TrxId(20_000)));
    }

    proptest::proptest! {
        /// The early stop never changes the answer: the start found is the cheapest (ids
        /// before it, words from it), and the earliest of the cheapest.
        #[test]
        fn the_cheapest_start_is_the_cheapest_and_the_earliest(
            ids in proptest::collection::btree_set(1u64..5_000, 1..300)
        ) {
            let mut set = HybridActiveSet::new().with_layout(HybridLayout::Compact);
            for &id in &ids {
                set.insert(TrxId(id)).unwrap();
            }
            let (first, last) = (set.lo_word, set.hi_word);
            let cost = |c: u64| ids.iter().filter(|&&id| id / WORD_BITS < c).count() as u64 + (last + 1 - c);
            let min = (first..=last + 1).map(cost).min().unwrap();
            let earliest = (first..=last + 1).find(|&c| cost(c) == min).unwrap();
            proptest::prop_assert_eq!(set.cheapest_start(first, last), earliest);
        }
    }

    #[test]
    fn bad_windows_are_errors() {
        assert_eq!(
            HybridActiveSet::with_windows(12, 8).unwrap_err(),
            ConfigError::Window { bytes: 12 }
        );
        assert_eq!(
            HybridActiveSet::with_windows(24, 8).unwrap_err(),
            ConfigError::GlobalWindow { bytes: 24 }
        );
        assert_eq!(
            HybridReadView::with_window_bytes(0).unwrap_err(),
            ConfigError::Window { bytes: 0 }
        );
    }
}
