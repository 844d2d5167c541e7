//! Keys as bytes that sort as their values do ("memcomparable" keys, as InnoDB compares the
//! physical fields of two index records, and as RocksDB-based engines encode theirs).
//!
//! A key is the values of an index's columns. It is stored as one byte string: each value
//! is a tag byte followed by its bytes, chosen so that comparing two strings byte by byte
//! (`memcmp`) gives the order of their value tuples, column by column, with a shorter prefix
//! first. So an index walk compares keys without decoding them, a key is its own hash input,
//! and a short key lives inside its owner instead of behind a pointer:
//!
//! ```text
//!  ORDER_LINE (w 1, d 3, o 3001, ol 7)  ─►  19 01 | 19 03 | 1a 0b b9 | 19 07    9 bytes
//!  value:  tag ─ what follows ───────────────────────────────────────────────────────────
//!  NULL      01
//!  INT n≥0   18+k  n's k significant bytes, big-endian (0 is 18 alone)
//!  INT n<0   17-k  n's low k bytes, where k = significant bytes of -n-1 (-1 is 17 alone)
//!  DECIMAL   30 (<0) 31 (0) 32 (>0): exponent, digits without trailing zeros, terminator;
//!            bytes complemented when negative
//!  DOUBLE    40  IEEE bits, sign flipped (or all bits, when negative): total_cmp's order
//!  CHAR      50  bytes, 00 escaped as 00 ff, then 00 01
//!  DATETIME  60  microseconds with the sign bit flipped, big-endian
//!  DATE      61  the day's midnight, as DATETIME
//! ```
//!
//! Tags follow [`Value`]'s order between kinds (NULL first), and no value's bytes are a
//! prefix of another's, so byte order is value order. Equal values have equal bytes: a
//! DECIMAL is stored without trailing zeros, so 1.50 and 1.5 are the same key (and a
//! DECIMAL key reads back as 1.5).
//!
//! Up to [`INLINE_KEY_BYTES`] bytes are stored inside the `Key` (every TPC-C primary key
//! takes at most 12), so a comparison in a skip-list descent, or a hash probe, reads no
//! second cache line for the key's bytes.
//!
//! An inline key is a length byte and a fixed array, zero past the length, so copying one
//! moves all 32 bytes as two 16-byte words. A vector with inline storage (a `SmallVec`) would
//! copy only the length's bytes, in pieces of 8, 4, 2 and 1; the next
//! 16-byte read of the copy (moving the key into a lock list or an index entry) spans
//! several of those stores, which the processor cannot forward, and would wait for them to reach
//! the cache (see `copy_row` in `value.rs` for the same stall on values).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::value::{DateTime, Decimal, Value};

/// Key bytes stored without a heap allocation.
pub const INLINE_KEY_BYTES: usize = 30;

/// A key's bytes: inline up to [`INLINE_KEY_BYTES`] (32 bytes in all, with the tag and the
/// length), else on the heap. The inline array is zero past `len`, so two inline keys are
/// equal exactly when their arrays and lengths are.
#[derive(Clone)]
enum Bytes {
    Inline {
        len: u8,
        bytes: [u8; INLINE_KEY_BYTES],
    },
    Heap(Vec<u8>),
}

impl Default for Bytes {
    fn default() -> Self {
        Bytes::Inline {
            len: 0,
            bytes: [0; INLINE_KEY_BYTES],
        }
    }
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Bytes::Heap(bytes) => bytes,
        }
    }

    fn push(&mut self, byte: u8) {
        match self {
            Bytes::Inline { len, bytes } if usize::from(*len) < INLINE_KEY_BYTES => {
                bytes[usize::from(*len)] = byte;
                *len += 1;
            }
            Bytes::Inline { bytes, .. } => {
                let mut heap = Vec::with_capacity(2 * INLINE_KEY_BYTES);
                heap.extend_from_slice(bytes);
                heap.push(byte);
                *self = Bytes::Heap(heap);
            }
            Bytes::Heap(bytes) => bytes.push(byte),
        }
    }

    /// Appends `tag` and the first `k` bytes of `word`, big-endian, whose bytes past the
    /// `k`th are zero. With room for all eight inline, they are written in one store: the
    /// zeros land past the new length, where the array is zero anyway. Byte by byte, each
    /// byte would be a store of the byte and one of the length, and the next byte's store
    /// would wait for the length.
    fn push_tagged_word(&mut self, tag: u8, word: u64, k: usize) {
        debug_assert!(k <= 8 && word.checked_shl(8 * k as u32).unwrap_or(0) == 0);
        if let Bytes::Inline { len, bytes } = self {
            let at = usize::from(*len);
            if at + 9 <= INLINE_KEY_BYTES {
                bytes[at] = tag;
                bytes[at + 1..at + 9].copy_from_slice(&word.to_be_bytes());
                *len += 1 + k as u8;
                return;
            }
        }
        self.push(tag);
        self.extend_from_slice(&word.to_be_bytes()[..k]);
    }

    fn extend_from_slice(&mut self, more: &[u8]) {
        for &byte in more {
            self.push(byte);
        }
    }

    /// Takes the last byte off (a heap key stays on the heap).
    fn pop(&mut self) -> Option<u8> {
        match self {
            Bytes::Inline { len: 0, .. } => None,
            Bytes::Inline { len, bytes } => {
                *len -= 1;
                Some(std::mem::take(&mut bytes[usize::from(*len)]))
            }
            Bytes::Heap(bytes) => bytes.pop(),
        }
    }
}

impl PartialEq for Bytes {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            // Whole arrays: a fixed-size comparison, no call.
            (Bytes::Inline { len: a, bytes: x }, Bytes::Inline { len: b, bytes: y }) => {
                a == b && x == y
            }
            _ => self.as_slice() == other.as_slice(),
        }
    }
}

impl Eq for Bytes {}

impl Hash for Bytes {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

const NULL: u8 = 0x01;
/// An INT with no significant bytes: 0, or -1 one below it.
const INT_ZERO: u8 = 0x18;
const DECIMAL_NEGATIVE: u8 = 0x30;
const DECIMAL_ZERO: u8 = 0x31;
const DECIMAL_POSITIVE: u8 = 0x32;
const DOUBLE: u8 = 0x40;
const STR: u8 = 0x50;
const DATETIME: u8 = 0x60;
const DATE: u8 = 0x61;
/// Added to a decimal's exponent (between -30 and 39) to store it as a byte.
const EXPONENT_BIAS: i32 = 64;

/// A key: the values of an index's columns, compared column by column. See the module page
/// for how it is stored.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Key(Bytes);

impl Ord for Key {
    /// Byte order, as `memcmp` gives it, but eight bytes at a time inline: a skip-list
    /// descent compares at every level, and most keys are a dozen bytes, for which the
    /// call to the C library's `memcmp` cost more than the comparison.
    ///
    /// Two inline keys compare their arrays word by word, whatever their lengths: past its
    /// length an array is zero, and a zero there orders as a key that ends there does
    /// (before any byte of the longer key, or equal to a zero byte of it, when the lengths
    /// decide). So the common comparison has no slicing and no tail loop.
    fn cmp(&self, other: &Self) -> Ordering {
        match (&self.0, &other.0) {
            (Bytes::Inline { len: la, bytes: a }, Bytes::Inline { len: lb, bytes: b }) => {
                let longest = usize::from(*la.max(lb));
                // The last word overlaps the one before it: its first bytes compared equal.
                for start in [0, 8, 16, INLINE_KEY_BYTES - 8] {
                    let x = word_at(a, start);
                    let y = word_at(b, start);
                    if x != y {
                        return x.cmp(&y);
                    }
                    if start + 8 >= longest {
                        break;
                    }
                }
                la.cmp(lb)
            }
            _ => cmp_bytes(self.as_bytes(), other.as_bytes()),
        }
    }
}

/// The eight bytes of `bytes` from `start` on, as a number that orders as they do.
fn word_at(bytes: &[u8; INLINE_KEY_BYTES], start: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[start..start + 8]);
    u64::from_be_bytes(word)
}

/// Byte order of two byte strings (a shorter prefix first), eight bytes at a time.
fn cmp_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let mut a_words = a.chunks_exact(8);
    let mut b_words = b.chunks_exact(8);
    for (x, y) in (&mut a_words).zip(&mut b_words) {
        let x = u64::from_be_bytes(x.try_into().expect("eight bytes"));
        let y = u64::from_be_bytes(y.try_into().expect("eight bytes"));
        if x != y {
            return x.cmp(&y);
        }
    }
    // The rest, byte by byte, up to the shorter key's end; then the shorter one first.
    let done = a.len().min(b.len()) / 8 * 8;
    for (x, y) in a[done..].iter().zip(&b[done..]) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Key {
    /// A one-column key.
    pub fn one(value: impl Into<Value>) -> Key {
        let mut key = Key::default();
        key.push(&value.into());
        key
    }

    /// Appends a column's value.
    pub fn push(&mut self, value: &Value) {
        encode(&mut self.0, value);
    }

    /// The values, in column order.
    pub fn values(&self) -> Vec<Value> {
        self.iter().collect()
    }

    /// The values, decoded one by one.
    pub fn iter(&self) -> impl Iterator<Item = Value> + '_ {
        self.spans().map(decode)
    }

    /// How many values the key has.
    pub fn len(&self) -> usize {
        self.spans().count()
    }

    /// Whether the key has no values (the bound of a whole index).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether a value is NULL.
    pub fn has_null(&self) -> bool {
        self.spans().any(|span| span[0] == NULL)
    }

    /// The stored bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Compares this key's first values with `prefix`, as many as `prefix` has: `Equal`
    /// when this key starts with `prefix`, and `Less` for a key that is itself a shorter
    /// prefix of it. Since no value's bytes are a prefix of another's, this is a comparison
    /// of the leading bytes.
    pub fn cmp_prefix(&self, prefix: &Key) -> Ordering {
        let n = self.0.len().min(prefix.0.len());
        cmp_bytes(&self.0[..n], &prefix.0[..n]).then(n.cmp(&prefix.0.len()))
    }

    /// The least byte string above every key that starts with this one, as an exclusive
    /// upper bound for a backward walk of a prefix; `None` when no key is above them all
    /// (an empty key, or one of `ff` bytes only). Not a key of values: its last byte may
    /// stop mid-value.
    pub fn prefix_end(&self) -> Option<Key> {
        let mut bytes = self.0.clone();
        while let Some(last) = bytes.pop() {
            if last < u8::MAX {
                bytes.push(last + 1);
                return Some(Key(bytes));
            }
        }
        None
    }

    /// How many leading values this key and `other` share.
    pub fn common_prefix(&self, other: &Key) -> usize {
        self.spans()
            .zip(other.spans())
            .take_while(|(a, b)| a == b)
            .count()
    }

    /// Each value's bytes, tag first.
    pub fn spans(&self) -> Spans<'_> {
        Spans(&self.0)
    }
}

/// The values' byte spans of a key.
pub struct Spans<'a>(&'a [u8]);

/// How many significant bytes the INT whose bytes (tag first) are `span` has; `None` if it
/// is not an INT. A key checker tells by it whether the value fits a column without
/// decoding it.
pub fn int_width(span: &[u8]) -> Option<usize> {
    let tag = span[0];
    (INT_ZERO - 8..=INT_ZERO + 8)
        .contains(&tag)
        .then_some(span.len() - 1)
}

impl<'a> Iterator for Spans<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let tag = *self.0.first()?;
        let len = match tag {
            NULL | DECIMAL_ZERO => 1,
            t if (INT_ZERO..=INT_ZERO + 8).contains(&t) => 1 + usize::from(t - INT_ZERO),
            t if (INT_ZERO - 9..INT_ZERO).contains(&t) => 1 + usize::from(INT_ZERO - 1 - t),
            DOUBLE | DATETIME | DATE => 9,
            DECIMAL_POSITIVE => 2 + terminated(&self.0[2..], 0x00),
            DECIMAL_NEGATIVE => 2 + terminated(&self.0[2..], 0xff),
            STR => 1 + string_end(&self.0[1..]),
            _ => unreachable!("a key holds only encoded values"),
        };
        let (span, rest) = self.0.split_at(len);
        self.0 = rest;
        Some(span)
    }
}

/// The length of `bytes` up to and including the first `end`.
fn terminated(bytes: &[u8], end: u8) -> usize {
    bytes
        .iter()
        .position(|&b| b == end)
        .expect("a terminated value")
        + 1
}

/// The length of an encoded string's bytes, terminator (00 01) included.
fn string_end(bytes: &[u8]) -> usize {
    let mut i = 0;
    loop {
        match (bytes[i], bytes[i + 1]) {
            (0x00, 0x01) => return i + 2,
            (0x00, _) => i += 2,
            _ => i += 1,
        }
    }
}

/// Appends `value`'s bytes.
fn encode(out: &mut Bytes, value: &Value) {
    match value {
        Value::Null => out.push(NULL),
        Value::Int(n) => encode_int(out, *n),
        Value::Decimal(d) => encode_decimal(out, *d),
        Value::Double(x) => {
            let bits = x.to_bits();
            let ordered = if bits >> 63 == 1 {
                !bits
            } else {
                bits | 1 << 63
            };
            out.push_tagged_word(DOUBLE, ordered, 8);
        }
        Value::Str(s) => {
            out.push(STR);
            for &b in s.as_bytes() {
                out.push(b);
                if b == 0x00 {
                    out.push(0xff);
                }
            }
            out.extend_from_slice(&[0x00, 0x01]);
        }
        Value::DateTime(t) => {
            out.push_tagged_word(DATETIME, (t.0 as u64) ^ 1 << 63, 8);
        }
        Value::Date(t) => {
            out.push_tagged_word(DATE, (t.0 as u64) ^ 1 << 63, 8);
        }
    }
}

/// An INT in as few bytes as it needs: small ids (TPC-C's warehouse, district, order line)
/// take two bytes with their tag.
fn encode_int(out: &mut Bytes, n: i64) {
    let (tag, k) = if n >= 0 {
        let k = 8 - (n.leading_zeros() / 8) as usize;
        (INT_ZERO + k as u8, k)
    } else {
        // -n-1, without overflow at i64::MIN; n's low k bytes then order the same as n.
        let k = 8 - ((!n).leading_zeros() / 8) as usize;
        (INT_ZERO - 1 - k as u8, k)
    };
    // n's low k bytes, moved to the top of the word (none for 0 and -1).
    let word = (n as u64).checked_shl(8 * (8 - k) as u32).unwrap_or(0);
    out.push_tagged_word(tag, word, k);
}

/// A DECIMAL as sign, exponent and digits: |d| = 0.d1d2...dk × 10^e with d1 ≠ 0 and dk ≠ 0,
/// so a larger exponent is a larger magnitude, then the digits decide. A negative one has
/// every byte after the tag complemented (larger magnitudes sort first), its terminator
/// included.
fn encode_decimal(out: &mut Bytes, d: Decimal) {
    let units = d.units();
    if units == 0 {
        out.push(DECIMAL_ZERO);
        return;
    }
    let digits = units.unsigned_abs().to_string();
    let exponent = digits.len() as i32 - i32::from(d.scale());
    let significant = digits.trim_end_matches('0');
    let flip = if units < 0 { 0xff } else { 0x00 };
    out.push(if units < 0 {
        DECIMAL_NEGATIVE
    } else {
        DECIMAL_POSITIVE
    });
    out.push((exponent + EXPONENT_BIAS) as u8 ^ flip);
    for digit in significant.bytes() {
        out.push((digit - b'0' + 1) ^ flip);
    }
    out.push(flip);
}

/// The value whose bytes are `span` (one of [`Spans`]).
pub fn decode(span: &[u8]) -> Value {
    let (tag, body) = (span[0], &span[1..]);
    match tag {
        NULL => Value::Null,
        DECIMAL_ZERO => Value::Decimal(Decimal::new(0, 0).expect("scale 0")),
        DECIMAL_POSITIVE | DECIMAL_NEGATIVE => {
            let flip = if tag == DECIMAL_NEGATIVE { 0xff } else { 0x00 };
            let exponent = i32::from(body[0] ^ flip) - EXPONENT_BIAS;
            let digits = &body[1..body.len() - 1];
            let mut units: i128 = 0;
            for &b in digits {
                units = units * 10 + i128::from((b ^ flip) - 1);
            }
            let mut scale = digits.len() as i32 - exponent;
            while scale < 0 {
                units *= 10;
                scale += 1;
            }
            let units = if flip == 0xff { -units } else { units };
            Value::Decimal(Decimal::new(units, scale as u8).expect("an encoded scale"))
        }
        DOUBLE => {
            let ordered = u64::from_be_bytes(body.try_into().expect("8 bytes"));
            let bits = if ordered >> 63 == 1 {
                ordered & !(1 << 63)
            } else {
                !ordered
            };
            Value::Double(f64::from_bits(bits))
        }
        STR => {
            let mut bytes = Vec::with_capacity(body.len() - 2);
            let mut i = 0;
            while i < body.len() - 2 {
                bytes.push(body[i]);
                i += if body[i] == 0x00 { 2 } else { 1 };
            }
            let text = String::from_utf8(bytes).expect("encoded from a str");
            Value::Str(text.into())
        }
        DATETIME => {
            let raw = u64::from_be_bytes(body.try_into().expect("8 bytes"));
            Value::DateTime(DateTime((raw ^ 1 << 63) as i64))
        }
        DATE => {
            let raw = u64::from_be_bytes(body.try_into().expect("8 bytes"));
            Value::Date(DateTime((raw ^ 1 << 63) as i64))
        }
        int => {
            // Sign-extend the significant bytes.
            let fill = if int >= INT_ZERO { 0x00 } else { 0xff };
            let mut bytes = [fill; 8];
            bytes[8 - body.len()..].copy_from_slice(body);
            Value::Int(i64::from_be_bytes(bytes))
        }
    }
}

impl<V: Into<Value>, const N: usize> From<[V; N]> for Key {
    fn from(values: [V; N]) -> Self {
        values.into_iter().map(Into::into).collect()
    }
}

impl From<Vec<Value>> for Key {
    fn from(values: Vec<Value>) -> Self {
        Key::from(values.as_slice())
    }
}

impl From<&[Value]> for Key {
    fn from(values: &[Value]) -> Self {
        let mut key = Key::default();
        for value in values {
            key.push(value);
        }
        key
    }
}

impl FromIterator<Value> for Key {
    fn from_iter<I: IntoIterator<Item = Value>>(values: I) -> Self {
        let mut key = Key::default();
        for value in values {
            key.push(&value);
        }
        key
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Key").field(&self.values()).finish()
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, value) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{value}")?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key of these raw bytes (not necessarily a key of values).
    fn raw(bytes: &[u8]) -> Key {
        let mut key = Key::default();
        key.0.extend_from_slice(bytes);
        key
    }
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<i64>().prop_map(Value::Int),
            (-1000i64..1000).prop_map(Value::Int),
            // Within the range where `Decimal`'s order is exact (it compares doubles once a
            // rescale would overflow).
            (-10i128.pow(20)..10i128.pow(20), 0u8..=15)
                .prop_map(|(u, s)| Value::Decimal(Decimal::new(u, s).unwrap())),
            (-100i128..100, 0u8..=3).prop_map(|(u, s)| Value::Decimal(Decimal::new(u, s).unwrap())),
            any::<f64>().prop_map(Value::Double),
            "[a\\x00b]{0,4}".prop_map(|s| Value::from(s.as_str())),
            any::<String>().prop_map(Value::from),
            any::<i64>().prop_map(|t| Value::DateTime(DateTime(t))),
            any::<i64>().prop_map(|t| Value::Date(DateTime(t).date())),
        ]
    }

    fn values() -> impl Strategy<Value = Vec<Value>> {
        proptest::collection::vec(value(), 0..4)
    }

    proptest! {
        #[test]
        fn bytes_sort_as_the_values_do(a in values(), b in values()) {
            let (ka, kb) = (Key::from(a.clone()), Key::from(b.clone()));
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
            prop_assert_eq!(ka == kb, a == b);
            // The word-at-a-time comparison is byte order.
            prop_assert_eq!(ka.cmp(&kb), ka.as_bytes().cmp(kb.as_bytes()));
        }

        #[test]
        fn keys_compare_in_byte_order_inline_or_not(
            a in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xffu8), any::<u8>()], 0..40),
            b in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xffu8), any::<u8>()], 0..40),
            shared in 0usize..40,
        ) {
            // Raw byte strings (not keys of values): zero bytes, shared prefixes and every
            // length on either side of the inline size.
            let b: Vec<u8> = a.iter().take(shared).chain(&b).copied().collect();
            let (ka, kb) = (raw(&a), raw(&b));
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
            prop_assert_eq!(ka == kb, a == b);
        }

        #[test]
        fn a_key_reads_back_its_values(a in values()) {
            let key = Key::from(a.clone());
            prop_assert_eq!(key.values(), a.clone());
            prop_assert_eq!(key.len(), a.len());
            prop_assert_eq!(key.has_null(), a.iter().any(Value::is_null));
            prop_assert_eq!(Key::from(key.values()), key);
        }

        #[test]
        fn prefixes_compare_value_by_value(a in values(), b in values()) {
            let (ka, kb) = (Key::from(a.clone()), Key::from(b.clone()));
            let n = a.len().min(b.len());
            let by_values = a[..n].cmp(&b[..n]).then(n.cmp(&b.len()));
            prop_assert_eq!(ka.cmp_prefix(&kb), by_values);
            let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
            prop_assert_eq!(ka.common_prefix(&kb), common);
        }

        #[test]
        fn the_prefix_end_bounds_exactly_the_keys_with_that_prefix(a in values(), b in values()) {
            let (ka, kb) = (Key::from(a), Key::from(b));
            match ka.prefix_end() {
                // Below the end: the keys that start with the prefix, and those below it.
                Some(end) => prop_assert_eq!(kb < end, kb.cmp_prefix(&ka).is_le()),
                None => prop_assert!(ka.is_empty()),
            }
        }
    }

    #[test]
    fn integers_written_a_word_at_a_time_leave_the_array_zero_past_the_length() {
        // The same bytes pushed one at a time: equal keys, so equal arrays (a key compares
        // and hashes its whole inline array).
        let mut bytes = Vec::new();
        for n in [0i64, -1, 5, 300, -300, i64::MAX, i64::MIN] {
            let mut one = Bytes::default();
            encode_int(&mut one, n);
            bytes.extend_from_slice(one.as_slice());
        }
        let values = [0i64, -1, 5, 300, -300, i64::MAX, i64::MIN].map(Value::Int);
        let key = Key::from(values.to_vec());
        assert_eq!(key, raw(&bytes));
        assert_eq!(key.values(), values.to_vec());
        // Three small ints, inline: tag and bytes only, zero after.
        let small = Key::from(vec![Value::Int(1), Value::Int(0), Value::Int(-2)]);
        assert_eq!(
            small.as_bytes(),
            &[INT_ZERO + 1, 1, INT_ZERO, INT_ZERO - 2, 0xfe]
        );
        assert_eq!(small, raw(small.as_bytes()));
    }

    #[test]
    fn the_prefix_end_carries_past_ff_bytes() {
        let end = |bytes: &[u8]| raw(bytes).prefix_end().map(|k| k.as_bytes().to_vec());
        assert_eq!(end(&[0x19, 0x03]), Some(vec![0x19, 0x04]));
        assert_eq!(end(&[0x19, 0xff, 0xff]), Some(vec![0x1a]));
        assert_eq!(end(&[0xff]), None);
        assert_eq!(end(&[]), None);
    }

    #[test]
    fn long_keys_spill_to_the_heap_and_compare_and_hash_by_their_bytes() {
        use std::hash::BuildHasher;
        let hash = |key: &Key| rustc_hash::FxBuildHasher.hash_one(key);
        assert_eq!(std::mem::size_of::<Key>(), 32);
        // 29 text bytes with the tag and terminator: 32, past the inline 30.
        let text = "a text of twenty-nine bytes..";
        let long = Key::from([text]);
        assert!(long.as_bytes().len() > INLINE_KEY_BYTES);
        assert_eq!(long.values(), vec![Value::from(text)]);
        assert_eq!(long.clone(), long);
        assert_eq!(hash(&long.clone()), hash(&long));
        // A spilled key cut back to the inline size equals (and hashes as) the inline one.
        let mut cut = long.clone();
        while cut.0.len() > 2 {
            cut.0.pop();
        }
        let short = raw(&long.as_bytes()[..2]);
        assert!(matches!(cut.0, Bytes::Heap(_)) && matches!(short.0, Bytes::Inline { .. }));
        assert_eq!(cut, short);
        assert_eq!(hash(&cut), hash(&short));
        assert_eq!(cut.cmp(&short), Ordering::Equal);
        // Popping keeps an inline key's array zero past its length.
        let mut popped = Key::from([1, 2]);
        popped.0.pop();
        let mut pushed = Key::from([1]);
        pushed.0.push(0x19);
        assert_eq!(popped, pushed);
    }

    #[test]
    fn small_ids_take_two_bytes_and_extremes_round_trip() {
        let key = Key::from([1, 3, 3001, 7]);
        assert_eq!(
            key.as_bytes(),
            [0x19, 1, 0x19, 3, 0x1a, 0x0b, 0xb9, 0x19, 7]
        );
        for n in [0, -1, 1, -256, -257, 255, 256, i64::MIN, i64::MAX] {
            assert_eq!(Key::one(n).values(), vec![Value::Int(n)], "{n}");
        }
        let a: Decimal = "1.50".parse().unwrap();
        let b: Decimal = "1.5".parse().unwrap();
        assert_eq!(Key::one(a), Key::one(b));
        assert_eq!(Key::one(a).to_string(), "(1.5)");
        assert_eq!(Key::from(["a\0b"]).values(), vec![Value::from("a\0b")]);
    }
}
