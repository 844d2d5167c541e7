//! One log record on disk, and the LSN that names it.
//!
//! ```text
//!  offset  0        4        8                16               24
//!          ┌────────┬────────┬────────────────┬────────────────┬──────────────────┐
//!          │ len    │ crc32c │ lsn            │ trx            │ payload (len B)  │
//!          │ u32 LE │ u32 LE │ u64 LE         │ u64 LE         │                  │
//!          └────────┴────────┴────────────────┴────────────────┴──────────────────┘
//!  crc32c covers lsn, trx and payload. A record is valid only if the whole of it is on
//!  disk, its checksum matches and its lsn is the one expected at that place.
//! ```

use std::fmt;

/// A log sequence number: the byte position of a record in the log stream (as InnoDB's
/// LSN), across segments. The first record of a new log is at [`Lsn::START`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Lsn(pub u64);

impl Lsn {
    /// Where a new log starts.
    pub const START: Lsn = Lsn(0);

    /// The position `bytes` further on; `None` past `u64::MAX`.
    pub const fn advance(self, bytes: u64) -> Option<Lsn> {
        match self.0.checked_add(bytes) {
            Some(n) => Some(Lsn(n)),
            None => None,
        }
    }

    /// The raw number.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lsn {}", self.0)
    }
}

/// The transaction a record belongs to, as the caller numbers transactions (the engine
/// passes its `TrxId`; this crate knows nothing of the engine).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TrxTag(pub u64);

/// Bytes before the payload.
pub const HEADER_BYTES: usize = 24;

/// The largest payload a record may carry (a guard against reading a garbage length as a
/// request to allocate gigabytes).
pub const MAX_PAYLOAD_BYTES: usize = 64 << 20;

/// A record read back from the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Where it starts.
    pub lsn: Lsn,
    /// Whose it is.
    pub trx: TrxTag,
    /// What the caller logged.
    pub payload: Vec<u8>,
}

fn checksum(lsn: Lsn, trx: TrxTag, payload: &[u8]) -> u32 {
    let mut crc = crc32c::crc32c(&lsn.0.to_le_bytes());
    crc = crc32c::crc32c_append(crc, &trx.0.to_le_bytes());
    crc32c::crc32c_append(crc, payload)
}

/// Appends the encoding of one record to `out`; returns its size on disk.
pub(crate) fn encode(out: &mut Vec<u8>, lsn: Lsn, trx: TrxTag, payload: &[u8]) -> usize {
    let len = u32::try_from(payload.len()).expect("payloads are checked against the maximum");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&checksum(lsn, trx, payload).to_le_bytes());
    out.extend_from_slice(&lsn.0.to_le_bytes());
    out.extend_from_slice(&trx.0.to_le_bytes());
    out.extend_from_slice(payload);
    HEADER_BYTES + payload.len()
}

/// Why the bytes at some place are not a valid record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Damage {
    /// The record is cut short: the bytes end inside it (a torn write at the tail).
    Truncated {
        /// Bytes the record needs.
        needed: usize,
        /// Bytes there are.
        present: usize,
    },
    /// The length field is beyond [`MAX_PAYLOAD_BYTES`].
    BadLength(u32),
    /// The checksum does not match.
    BadChecksum,
    /// A valid-looking record with another LSN than expected there (a stale record of an
    /// older log, or a file out of place).
    WrongLsn {
        /// The LSN that place must hold.
        expected: Lsn,
        /// The LSN found.
        found: Lsn,
    },
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Damage::Truncated { needed, present } => {
                write!(f, "record cut short ({present} of {needed} bytes)")
            }
            Damage::BadLength(len) => write!(f, "impossible record length {len}"),
            Damage::BadChecksum => f.write_str("checksum mismatch"),
            Damage::WrongLsn { expected, found } => {
                write!(f, "record says {found}, expected {expected}")
            }
        }
    }
}

/// Decodes the record at the start of `bytes`, which must be at `expected`. Returns it and
/// its size on disk.
pub(crate) fn decode(bytes: &[u8], expected: Lsn) -> Result<(Record, usize), Damage> {
    let truncated = |needed| Damage::Truncated {
        needed,
        present: bytes.len(),
    };
    let header = bytes.get(..HEADER_BYTES).ok_or(truncated(HEADER_BYTES))?;
    let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
    let long = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
    let len = word(0);
    if len as usize > MAX_PAYLOAD_BYTES {
        return Err(Damage::BadLength(len));
    }
    let size = HEADER_BYTES + len as usize;
    let payload = bytes.get(HEADER_BYTES..size).ok_or(truncated(size))?;
    let (lsn, trx) = (Lsn(long(8)), TrxTag(long(16)));
    if checksum(lsn, trx, payload) != word(4) {
        return Err(Damage::BadChecksum);
    }
    if lsn != expected {
        return Err(Damage::WrongLsn {
            expected,
            found: lsn,
        });
    }
    let record = Record {
        lsn,
        trx,
        payload: payload.to_vec(),
    };
    Ok((record, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_every_damage_is_named() {
        let mut bytes = Vec::new();
        let size = encode(&mut bytes, Lsn(100), TrxTag(7), b"hello");
        assert_eq!(size, bytes.len());
        let (record, read) = decode(&bytes, Lsn(100)).unwrap();
        assert_eq!((record.lsn, record.trx, read), (Lsn(100), TrxTag(7), size));
        assert_eq!(record.payload, b"hello");

        assert!(matches!(
            decode(&bytes[..10], Lsn(100)),
            Err(Damage::Truncated { .. })
        ));
        assert!(matches!(
            decode(&bytes[..size - 1], Lsn(100)),
            Err(Damage::Truncated { .. })
        ));
        assert!(matches!(
            decode(&bytes, Lsn(99)),
            Err(Damage::WrongLsn { .. })
        ));
        let mut flipped = bytes.clone();
        flipped[size - 1] ^= 1;
        assert_eq!(decode(&flipped, Lsn(100)), Err(Damage::BadChecksum));
        let mut huge = bytes.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(decode(&huge, Lsn(100)), Err(Damage::BadLength(_))));
    }
}
