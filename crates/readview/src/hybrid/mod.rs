//! The hybrid structure of book 8.2.3: a bitmap window for the many consecutive short-lived
//! ids, a small sorted vector for the few long-lived ones below it.
//!
//! ```text
//!  ids:   17        9_001 ............................................ 9_970 | next id
//!         │         │◄────────────── bitmap window, 1 bit an id ─────────────►│
//!   long vector   short_min_id                                          low_limit_id
//!   [17]          [1 0 1 1 1 0 1 ... 1 1]  (1 = active)
//! ```
//!
//! Two structures use this shape:
//!
//! * [`HybridActiveSet`], the global list (InnoDB's `rw_trx_ids` made hybrid): a 65,536-byte
//!   window (524,288 ids) kept as a ring of 64-bit words, so the window slides without moving
//!   memory. When a new id falls beyond the window, the window slides forward and the active
//!   ids it leaves behind (the oldest short ones) move to the long vector, counted in
//!   [`HybridActiveSet::overflow_moves`].
//! * [`HybridReadView`], the view: the global words from the oldest active short id to the
//!   newest id, copied into a window of [`DEFAULT_VIEW_WINDOW_BYTES`]. If the span is wider than
//!   the view's window, the oldest words' ids are copied into the *view's* long vector;
//!   the global set is never changed by taking a snapshot.
//!
//! `changes_visible` for an id in the window is one shift and one mask: O(1) where the vector
//! view binary-searches. A snapshot of 1,000 consecutive active ids copies 16 words (128
//! bytes) where the vector copies 8,000 bytes.
//!
//! Differences from the published patch (enhancedformysql/mysql-8.0.40), on purpose:
//! its erase path compares an id span to a byte count (we count in bits, via words), and its
//! view creation may move ids from short to long in the global list (ours is a pure copy).

mod active_set;
mod view;

pub use active_set::{HybridActiveSet, HybridLayout};
pub use view::HybridReadView;

use crate::{ConfigError, TrxId};

/// The view window the book's text gives: 2048 bytes, 16,384 ids.
pub const VIEW_WINDOW_BYTES_BOOK: usize = 2048;
/// The view window the author's published patch uses: 8192 bytes, 65,536 ids.
pub const VIEW_WINDOW_BYTES_PATCH: usize = 8192;
/// The default view window, chosen from the `hybrid_window` benchmark (table in the README).
/// What decides is the *span* of the active ids, not their count: with 2048 bytes, even
/// 16,380 consecutive active ids spill 59 ids into the view's long vector (the span is 257
/// words, not 256), and 1,000 active ids spread over 40,000 spill 589 and make a snapshot over 15x
/// slower to open. When the ids are dense, both sizes copy the same words.
pub const DEFAULT_VIEW_WINDOW_BYTES: usize = VIEW_WINDOW_BYTES_PATCH;
/// The global list's window (`MAX_SHORT_ACTIVE_BYTES` in the book): 65,536 bytes, 524,288 ids.
pub const GLOBAL_WINDOW_BYTES: usize = 65_536;

const WORD_BITS: u64 = u64::BITS as u64;

/// Converts a window size in bytes to 64-bit words, rejecting sizes that are not whole words.
fn window_words(bytes: usize) -> Result<usize, ConfigError> {
    if bytes == 0 || !bytes.is_multiple_of(8) {
        Err(ConfigError::Window { bytes })
    } else {
        Ok(bytes / 8)
    }
}

/// The absolute word an id's bit lives in.
#[inline(always)]
fn word_of(id: TrxId) -> u64 {
    id.0 / WORD_BITS
}

/// The bit mask of an id within its word.
#[inline(always)]
fn mask_of(id: TrxId) -> u64 {
    1 << (id.0 % WORD_BITS)
}

/// Appends the ids whose bits are set in `word` (absolute word number `w`) to `out`, in
/// increasing order; returns how many.
fn push_ids_of_word(out: &mut Vec<TrxId>, w: u64, mut word: u64) -> usize {
    let n = word.count_ones() as usize;
    while word != 0 {
        out.push(TrxId(w * WORD_BITS + u64::from(word.trailing_zeros())));
        word &= word - 1;
    }
    n
}

/// Appends `src` to `dst`. A snapshot usually copies a few long ids and a few bitmap words,
/// and for so few a call to `memcpy` costs more than the copy. So short copies go in
/// constant-size chunks, which compile to inline moves, and long ones (past `SHORT`, about
/// where `memcpy` starts to win: the `snapshot_open` benchmark) to `memcpy`.
#[inline]
fn append<T: Copy>(dst: &mut Vec<T>, src: &[T]) {
    const CHUNK: usize = 4;
    const SHORT: usize = 64;
    if src.len() > SHORT {
        dst.extend_from_slice(src);
        return;
    }
    let mut chunks = src.chunks_exact(CHUNK);
    for chunk in &mut chunks {
        let chunk: &[T; CHUNK] = chunk.try_into().expect("chunks_exact yields whole chunks");
        dst.extend_from_slice(chunk);
    }
    for &item in chunks.remainder() {
        // At most three: a loop, where a slice copy would be a `memcpy` call again.
        dst.push(item);
    }
}
