//! The MySQL protocol's vocabulary, shared by every part of the connection: command bytes,
//! capability flags, packet framing, length-encoded integers, error packets, and the
//! protocol's DATETIME encodings. A leaf: it uses no other module of this crate, so the
//! reader (`wire.rs`), the writers (`writer.rs`, `binary.rs`, `status.rs`) and opensrv's
//! backend (`protocol.rs`) depend on it and not on each other.

use chrono::{DateTime as Chrono, NaiveDateTime};
use waterline_txn::Value;

/// Command bytes (the first byte of a command packet).
pub(crate) const COM_QUIT: u8 = 0x01;
pub(crate) const COM_SHUTDOWN: u8 = 0x08;
pub(crate) const COM_INIT_DB: u8 = 0x02;
pub(crate) const COM_QUERY: u8 = 0x03;
pub(crate) const COM_FIELD_LIST: u8 = 0x04;
pub(crate) const COM_STMT_PREPARE: u8 = 0x16;
pub(crate) const COM_STMT_EXECUTE: u8 = 0x17;
pub(crate) const COM_STMT_SEND_LONG_DATA: u8 = 0x18;
pub(crate) const COM_STATISTICS: u8 = 0x09;
pub(crate) const COM_PROCESS_KILL: u8 = 0x0c;
pub(crate) const COM_PING: u8 = 0x0e;
pub(crate) const COM_CHANGE_USER: u8 = 0x11;
pub(crate) const COM_STMT_CLOSE: u8 = 0x19;
pub(crate) const COM_STMT_RESET: u8 = 0x1a;
pub(crate) const COM_SET_OPTION: u8 = 0x1b;
pub(crate) const COM_RESET_CONNECTION: u8 = 0x1f;

/// Client capability flags the server reads (the handshake response's first four bytes).
pub(crate) const CLIENT_PROTOCOL_41: u32 = 0x0200;
pub(crate) const CLIENT_TRANSACTIONS: u32 = 0x2000;
pub(crate) const CLIENT_SESSION_TRACK: u32 = 1 << 23;
pub(crate) const CLIENT_DEPRECATE_EOF: u32 = 1 << 24;

/// The largest payload one packet carries; a longer one continues in the next.
pub(crate) const MAX_CHUNK: usize = 0xff_ffff;

/// `body` as packets from sequence id `seq` (chunks of [`MAX_CHUNK`], and an empty packet
/// after a body that fills its last chunk).
pub(crate) fn frame(seq: u8, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 4);
    frame_into(&mut out, seq, body);
    out
}

/// [`frame`], into `out` (cleared first).
pub(crate) fn frame_into(out: &mut Vec<u8>, seq: u8, body: &[u8]) {
    out.clear();
    for (i, chunk) in body.chunks(MAX_CHUNK).enumerate() {
        out.extend_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
        out.push(seq.wrapping_add(i as u8));
        out.extend_from_slice(chunk);
    }
    if body.len().is_multiple_of(MAX_CHUNK) {
        let i = body.len() / MAX_CHUNK;
        out.extend_from_slice(&[0, 0, 0, seq.wrapping_add(i as u8)]);
    }
}

/// An error packet with sequence id `seq`.
pub fn error_packet(seq: u8, code: u16, state: &str, message: &str) -> Vec<u8> {
    let mut body = vec![0xff];
    body.extend_from_slice(&code.to_le_bytes());
    body.push(b'#');
    body.extend_from_slice(state.as_bytes());
    body.extend_from_slice(message.as_bytes());
    frame(seq, &body)
}

/// The length of a length-encoded integer at `b`, and its value.
pub(crate) fn lenenc(b: &[u8]) -> Option<(usize, u64)> {
    let first = *b.first()?;
    let width = match first {
        0..=0xfa => return Some((1, u64::from(first))),
        0xfc => 2,
        0xfd => 3,
        0xfe => 8,
        _ => return None,
    };
    let bytes = b.get(1..1 + width)?;
    let mut v = [0u8; 8];
    v[..width].copy_from_slice(bytes);
    Some((1 + width, u64::from_le_bytes(v)))
}

/// A DATE parameter's bytes (year, month, day, and a time of day that a DATE ignores); NULL
/// if short or not a date.
pub(crate) fn date(b: &[u8]) -> Value {
    match b.get(..4) {
        Some(day) => match datetime_param(day) {
            Value::DateTime(t) => Value::Date(t),
            other => other,
        },
        None => Value::Null,
    }
}

/// A DATETIME or TIMESTAMP parameter's bytes (4, 7 or 11 of them); NULL for other lengths
/// or an impossible date, as opensrv's `to_naive_datetime` decides.
pub(crate) fn datetime_param(b: &[u8]) -> Value {
    if !matches!(b.len(), 4 | 7 | 11) {
        return Value::Null;
    }
    let y = i32::from(u16::from_le_bytes([b[0], b[1]]));
    let (h, m, s) = match b.len() {
        4 => (0, 0, 0),
        _ => (b[4], b[5], b[6]),
    };
    let us = match b.len() {
        11 => u32::from_le_bytes([b[7], b[8], b[9], b[10]]),
        _ => 0,
    };
    chrono::NaiveDate::from_ymd_opt(y, u32::from(b[2]), u32::from(b[3]))
        .and_then(|d| d.and_hms_micro_opt(u32::from(h), u32::from(m), u32::from(s), us))
        .map_or(Value::Null, |d| {
            Value::DateTime(waterline_txn::DateTime(d.and_utc().timestamp_micros()))
        })
}

/// A DATETIME as chrono's, for opensrv and the binary protocol's encoder.
pub(crate) fn naive_datetime(v: &waterline_txn::DateTime) -> Option<NaiveDateTime> {
    let secs = v.0.div_euclid(1_000_000);
    let nanos = (v.0.rem_euclid(1_000_000) * 1000) as u32;
    Chrono::from_timestamp(secs, nanos).map(|d| d.naive_utc())
}
