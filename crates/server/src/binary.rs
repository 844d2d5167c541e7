//! COM_STMT_EXECUTE, run on the connection's thread without opensrv: the parameters decoded,
//! the statement executed, and its reply (a binary result set, an OK or an error) written into
//! one buffer that the caller sends with one `send`.
//!
//! Through opensrv, each execution was copied three times on the way in (the filter's read,
//! its re-framing, opensrv's packet reader), its parameters went through opensrv's iterator,
//! and its reply through an async result writer that wrote the column definitions from a
//! freshly built `Vec<Column>`: about a sixth of the server's CPU under TPC-C over the
//! protocol. The bytes are opensrv's (the same column definitions, NULL bitmap and closing
//! EOF or OK, chosen by the same client flags), with one correction: the closing packets
//! carry the session's status flags and warning count, as MySQL's do.
//! `wire.rs` sends an execution that has long data (COM_STMT_SEND_LONG_DATA) to opensrv,
//! which keeps that data.

use std::fmt::Write;

use waterline_txn::{Decimal, Value};

use crate::error::SqlError;
use crate::packet::{
    CLIENT_DEPRECATE_EOF, CLIENT_PROTOCOL_41, CLIENT_SESSION_TRACK, CLIENT_TRANSACTIONS, MAX_CHUNK,
    date, datetime_param, frame, lenenc, naive_datetime,
};
use waterline_sql::{FieldType, Response, ResultColumn};

/// utf8_general_ci, the character set opensrv declares for every column.
const UTF8_GENERAL_CI: u16 = 33;

/// Packets written one after another into a buffer, each framed in place.
pub(crate) struct Packets<'a> {
    out: &'a mut Vec<u8>,
    /// The next packet's sequence id.
    seq: u8,
    /// Where the open packet's header is.
    start: usize,
}

impl<'a> Packets<'a> {
    /// Packets appended to `out`, the first with sequence id `seq`.
    pub(crate) fn new(out: &'a mut Vec<u8>, seq: u8) -> Packets<'a> {
        Packets { out, seq, start: 0 }
    }

    /// Opens a packet: its body is written into the buffer this returns.
    fn begin(&mut self) -> &mut Vec<u8> {
        self.start = self.out.len();
        self.out.extend_from_slice(&[0; 4]);
        self.out
    }

    /// Closes the open packet: its header gets the length and sequence id; a body of 16 MiB
    /// or more is split into chunks, as the protocol wants.
    fn end(&mut self) {
        let len = self.out.len() - self.start - 4;
        if len < MAX_CHUNK {
            self.out[self.start..self.start + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.out[self.start + 3] = self.seq;
            self.seq = self.seq.wrapping_add(1);
            return;
        }
        let body = self.out.split_off(self.start + 4);
        self.out.truncate(self.start);
        self.out.extend_from_slice(&frame(self.seq, &body));
        self.seq = self.seq.wrapping_add((len / MAX_CHUNK + 1) as u8);
    }
}

/// A length-encoded integer.
fn lenenc_int(out: &mut Vec<u8>, n: u64) {
    match n {
        0..=0xfa => out.push(n as u8),
        0xfb..=0xffff => {
            out.push(0xfc);
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        0x1_0000..=0xff_ffff => {
            out.push(0xfd);
            out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xfe);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

/// A length-encoded string.
fn lenenc_str(out: &mut Vec<u8>, s: &[u8]) {
    lenenc_int(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// The reply to one execution, appended to `out` as packets from sequence id `seq`, for a
/// client that sent capability flags `client`.
pub(crate) fn reply(
    out: &mut Vec<u8>,
    seq: u8,
    client: u32,
    result: &Result<Response, SqlError>,
    (status, warnings): (u16, u16),
) {
    let mut p = Packets::new(out, seq);
    match result {
        Err(e) => error(&mut p, e),
        Ok(Response::Done {
            affected,
            last_insert_id,
            ..
        }) => ok(
            &mut p,
            client,
            0x00,
            *affected,
            *last_insert_id,
            status,
            warnings,
        ),
        // opensrv answers a result set without columns with an OK.
        Ok(Response::Rows { columns, .. }) if columns.is_empty() => {
            ok(&mut p, client, 0x00, 0, 0, status, warnings);
        }
        Ok(Response::Rows { columns, rows }) => {
            lenenc_int(p.begin(), columns.len() as u64);
            p.end();
            for c in columns {
                column_definition(p.begin(), c);
                p.end();
            }
            if client & CLIENT_DEPRECATE_EOF == 0 {
                eof(&mut p, status, 0);
            }
            let mut scratch = String::new();
            for row in rows {
                binary_row(p.begin(), columns, row, &mut scratch);
                p.end();
            }
            if client & CLIENT_DEPRECATE_EOF == 0 {
                eof(&mut p, status, warnings);
            } else {
                ok(&mut p, client, 0xfe, 0, 0, status, warnings);
            }
        }
    }
}

/// An error packet, with the error's own number and SQLSTATE.
fn error(p: &mut Packets<'_>, e: &SqlError) {
    let body = p.begin();
    body.push(0xff);
    body.extend_from_slice(&e.code.to_le_bytes());
    body.push(b'#');
    body.extend_from_slice(e.state.as_bytes());
    body.extend_from_slice(e.message.as_bytes());
    p.end();
}

/// An OK packet (`header` 0xfe: the OK that ends a result set under CLIENT_DEPRECATE_EOF),
/// without info text, as opensrv writes it.
fn ok(
    p: &mut Packets<'_>,
    client: u32,
    header: u8,
    affected: u64,
    last_id: u64,
    status: u16,
    warnings: u16,
) {
    let body = p.begin();
    body.push(header);
    lenenc_int(body, affected);
    lenenc_int(body, last_id);
    if client & CLIENT_PROTOCOL_41 != 0 {
        body.extend_from_slice(&status.to_le_bytes());
        body.extend_from_slice(&warnings.to_le_bytes());
    } else if client & CLIENT_TRANSACTIONS != 0 {
        body.extend_from_slice(&status.to_le_bytes());
    }
    if client & CLIENT_SESSION_TRACK != 0 {
        lenenc_str(body, b"");
    }
    p.end();
}

/// An EOF packet.
fn eof(p: &mut Packets<'_>, status: u16, warnings: u16) {
    let body = p.begin();
    body.push(0xfe);
    body.extend_from_slice(&warnings.to_le_bytes());
    body.extend_from_slice(&status.to_le_bytes());
    p.end();
}

/// A column definition (Protocol::ColumnDefinition41), as opensrv writes it.
fn column_definition(body: &mut Vec<u8>, c: &ResultColumn) {
    lenenc_str(body, b"def");
    lenenc_str(body, b"");
    lenenc_str(body, c.table.as_bytes());
    lenenc_str(body, b"");
    lenenc_str(body, c.name.as_bytes());
    lenenc_str(body, b"");
    lenenc_int(body, 0x0c);
    body.extend_from_slice(&UTF8_GENERAL_CI.to_le_bytes());
    body.extend_from_slice(&1024u32.to_le_bytes()); // column length
    body.push(c.ty.code());
    body.extend_from_slice(&c.flags.to_le_bytes());
    // opensrv writes no decimals, and the two must send the same bytes (see wire.rs).
    body.push(0);
    body.extend_from_slice(&[0, 0]);
}

/// One row in the binary protocol: 0x00, the NULL bitmap (offset 2), the non-NULL values.
fn binary_row(body: &mut Vec<u8>, columns: &[ResultColumn], row: &[Value], scratch: &mut String) {
    body.push(0x00);
    let bitmap = body.len();
    body.resize(bitmap + (columns.len() + 7 + 2) / 8, 0);
    for (i, (c, v)) in columns.iter().zip(row).enumerate() {
        if matches!(v, Value::Null) {
            body[bitmap + (i + 2) / 8] |= 1 << ((i + 2) % 8);
            continue;
        }
        binary_value(body, c.ty, v, scratch);
    }
}

/// One value in the encoding of column type `ty` (what the column's type promises, whatever
/// the value: a mismatch writes the type's zero rather than a packet the client misreads).
fn binary_value(body: &mut Vec<u8>, ty: FieldType, v: &Value, scratch: &mut String) {
    // An integer is its low bytes, signed or not: the stored value fits its column's width.
    let int = |body: &mut Vec<u8>, width: usize| {
        body.extend_from_slice(&v.as_int().unwrap_or(0).to_le_bytes()[..width]);
    };
    match ty {
        FieldType::Tiny => int(body, 1),
        FieldType::Short => int(body, 2),
        FieldType::Long | FieldType::Int24 => int(body, 4),
        FieldType::LongLong => int(body, 8),
        FieldType::Double => {
            body.extend_from_slice(&v.as_f64().unwrap_or(0.0).to_le_bytes());
        }
        FieldType::DateTime => match v {
            Value::DateTime(t) => datetime(body, t),
            _ => body.push(0), // 0000-00-00 00:00:00
        },
        FieldType::Date => match v.clone() {
            Value::Date(t) | Value::DateTime(t) => date_value(body, &t),
            _ => body.push(0), // 0000-00-00
        },
        _ => match v {
            Value::Str(s) => lenenc_str(body, s.as_bytes()),
            other => {
                scratch.clear();
                let _ = write!(scratch, "{other}");
                lenenc_str(body, scratch.as_bytes());
            }
        },
    }
}

/// A DATE in the binary protocol: 4 bytes.
fn date_value(body: &mut Vec<u8>, t: &waterline_txn::DateTime) {
    use chrono::Datelike;
    let Some(d) = naive_datetime(t) else {
        body.push(0);
        return;
    };
    body.push(4);
    body.extend_from_slice(&(d.year() as u16).to_le_bytes());
    body.extend_from_slice(&[d.month() as u8, d.day() as u8]);
}

/// A DATETIME in the binary protocol: 7 bytes, or 11 with microseconds.
fn datetime(body: &mut Vec<u8>, t: &waterline_txn::DateTime) {
    use chrono::{Datelike, Timelike};
    let Some(d) = naive_datetime(t) else {
        body.push(0);
        return;
    };
    let us = d.nanosecond() / 1_000;
    body.push(if us != 0 { 11 } else { 7 });
    body.extend_from_slice(&(d.year() as u16).to_le_bytes());
    body.extend_from_slice(&[
        d.month() as u8,
        d.day() as u8,
        d.hour() as u8,
        d.minute() as u8,
        d.second() as u8,
    ]);
    if us != 0 {
        body.extend_from_slice(&us.to_le_bytes());
    }
}

/// The values of an execution's `n` parameters: `nullmap` (a bit per parameter), `types` (two
/// bytes each: the type, and 0x80 for unsigned) and the values. `Err(i)` if parameter `i`
/// does not parse: an unknown type, or short values.
pub(crate) fn params(
    n: usize,
    nullmap: &[u8],
    types: &[u8],
    values: &[u8],
) -> Result<Vec<Value>, usize> {
    let mut out = Vec::with_capacity(n);
    let mut rest = values;
    for i in 0..n {
        let null = nullmap.get(i / 8).ok_or(i)? & (1 << (i % 8)) != 0;
        if null {
            out.push(Value::Null);
            continue;
        }
        let ty = types.get(2 * i..2 * i + 2).ok_or(i)?;
        let (value, used) = param(ty[0], ty[1] & 0x80 != 0, rest).ok_or(i)?;
        out.push(value);
        rest = &rest[used..];
    }
    Ok(out)
}

/// `N` bytes at the start of `b`.
fn bytes<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.get(..N)?.try_into().ok()
}

/// One parameter's value and its encoded length: the values opensrv's decoding gave
/// `protocol::param` (an unsigned BIGINT above `i64::MAX` is a DECIMAL; TIME is NULL).
fn param(ty: u8, unsigned: bool, b: &[u8]) -> Option<(Value, usize)> {
    let int = |signed: i64, raw: u64| {
        if unsigned {
            i64::try_from(raw).map_or_else(
                |_| Value::Decimal(Decimal::new(i128::from(raw), 0).expect("scale 0")),
                Value::Int,
            )
        } else {
            Value::Int(signed)
        }
    };
    Some(match ty {
        0x06 => (Value::Null, 0),
        0x01 => {
            let [x] = bytes::<1>(b)?;
            (int(i64::from(x as i8), u64::from(x)), 1)
        }
        0x02 | 0x0d => {
            let x = bytes::<2>(b)?;
            let raw = u16::from_le_bytes(x);
            (int(i64::from(raw as i16), u64::from(raw)), 2)
        }
        0x03 | 0x09 => {
            let raw = u32::from_le_bytes(bytes::<4>(b)?);
            (int(i64::from(raw as i32), u64::from(raw)), 4)
        }
        0x08 => {
            let raw = u64::from_le_bytes(bytes::<8>(b)?);
            (int(raw as i64, raw), 8)
        }
        0x04 => (
            Value::Double(f64::from(f32::from_le_bytes(bytes::<4>(b)?))),
            4,
        ),
        0x05 => (Value::Double(f64::from_le_bytes(bytes::<8>(b)?)), 8),
        0x07 | 0x0c | 0x0a | 0x0b => {
            let len = usize::from(*b.first()?);
            let raw = b.get(1..1 + len)?;
            let value = match ty {
                0x0b => Value::Null,
                0x0a => date(raw),
                _ => datetime_param(raw),
            };
            (value, 1 + len)
        }
        0x00 | 0x0f | 0x10 | 0xf5..=0xfe => {
            let (head, len) = lenenc(b)?;
            let len = usize::try_from(len).ok()?;
            let raw = b.get(head..head.checked_add(len)?)?;
            (
                Value::from(String::from_utf8_lossy(raw).into_owned()),
                head + len,
            )
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_split_at_16_mib() {
        assert_eq!(frame(3, &[1, 2]), vec![2, 0, 0, 3, 1, 2]);
        assert_eq!(frame(3, &[]), vec![0, 0, 0, 3]);
        let big = vec![0u8; MAX_CHUNK + 1];
        let f = frame(0, &big);
        assert_eq!(&f[..4], &[0xff, 0xff, 0xff, 0]);
        assert_eq!(&f[4 + MAX_CHUNK..4 + MAX_CHUNK + 4], &[1, 0, 0, 1]);
        // Packets written in place split the same way, and number the next one after.
        let mut out = Vec::new();
        let mut p = Packets::new(&mut out, 5);
        p.begin().extend_from_slice(&big);
        p.end();
        p.begin().push(9);
        p.end();
        let mut expected = frame(5, &big);
        expected.extend_from_slice(&[1, 0, 0, 7, 9]);
        assert_eq!(out, expected);
    }

    #[test]
    fn parameters_decode_as_opensrv_decoded_them() {
        let mut values = Vec::new();
        values.push(0xfeu8); // TINY -2
        values.extend_from_slice(&0xfffeu16.to_le_bytes()); // SHORT unsigned 65534
        values.extend_from_slice(&(-7i32).to_le_bytes()); // LONG
        values.extend_from_slice(&u64::MAX.to_le_bytes()); // LONGLONG unsigned
        values.extend_from_slice(&1.5f64.to_le_bytes()); // DOUBLE
        values.extend_from_slice(&[2, b'h', b'i']); // VAR_STRING
        values.extend_from_slice(&[7, 0xea, 0x07, 1, 2, 3, 4, 5]); // DATETIME 2026-01-02 03:04:05
        values.extend_from_slice(&[4, 0xea, 0x07, 2, 30]); // DATE 2026-02-30: no such day
        values.extend_from_slice(&[0]); // TIME: NULL, as before
        let types = [
            0x01, 0, 0x02, 0x80, 0x03, 0, 0x08, 0x80, 0x05, 0, 0xfd, 0, 0x0c, 0, 0x0a, 0, 0x0b, 0,
            0x06, 0, 0x03, 0,
        ];
        // Parameter 11 (a LONG) is NULL by the bitmap; parameter 10 is of type NULL.
        let nullmap = [0, 0b100];
        let got = params(11, &nullmap, &types, &values).unwrap();
        let at = waterline_txn::DateTime::from_ymd_hms(2026, 1, 2, 3, 4, 5).unwrap();
        assert_eq!(
            got,
            vec![
                Value::Int(-2),
                Value::Int(65534),
                Value::Int(-7),
                Value::Decimal(Decimal::new(i128::from(u64::MAX), 0).unwrap()),
                Value::Double(1.5),
                Value::from("hi"),
                Value::DateTime(at),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ]
        );
        assert_eq!(params(1, &[0], &[0x03, 0], &[1, 2]), Err(0), "short");
        assert_eq!(
            params(2, &[0], &[0x03, 0, 0x42, 0], &[1, 2, 3, 4, 5]),
            Err(1),
            "unknown type, and which parameter"
        );
        // 11 bytes: with microseconds.
        let micro = datetime_param(&[0xea, 0x07, 1, 2, 3, 4, 5, 0x40, 0xe2, 0x01, 0]);
        assert_eq!(
            micro,
            Value::DateTime(waterline_txn::DateTime(at.0 + 123_456))
        );
    }

    #[test]
    fn a_result_set_is_encoded_as_opensrv_encodes_it() {
        let columns = vec![
            ResultColumn::new(
                "id".into(),
                "t".into(),
                crate::types::ColumnMeta::computed(FieldType::Long),
            ),
            ResultColumn::new("v".into(), "t".into(), crate::types::ColumnMeta::text()),
        ];
        let rows = vec![
            vec![Value::Int(1), Value::from("a")],
            vec![Value::Int(2), Value::Null],
        ];
        let result = Ok(Response::Rows { columns, rows });
        let column = |name: u8| {
            let mut c = vec![3, b'd', b'e', b'f', 0, 1, b't', 0, 1, name, 0, 0x0c, 33, 0];
            c.extend_from_slice(&[0, 4, 0, 0, 0, 0, 0, 0, 0, 0]);
            c
        };
        let mut id = column(b'i');
        id[9] = b'i';
        id.splice(9..10, [b'i', b'd']);
        id[8] = 2;
        id[19] = 0x03; // LONG
        let mut v = column(b'v');
        v[18] = 0xfd; // VAR_STRING
        let packets = |bodies: &[Vec<u8>]| {
            let mut out = Vec::new();
            for (i, b) in bodies.iter().enumerate() {
                out.extend_from_slice(&frame(1 + i as u8, b));
            }
            out
        };
        let row1 = vec![0, 0, 1, 0, 0, 0, 1, b'a'];
        let row2 = vec![0, 0b1000, 2, 0, 0, 0];
        // Without CLIENT_DEPRECATE_EOF: an EOF after the columns and at the end.
        let mut out = Vec::new();
        reply(&mut out, 1, CLIENT_PROTOCOL_41, &result, (0, 0));
        let eof = vec![0xfe, 0, 0, 0, 0];
        assert_eq!(
            out,
            packets(&[
                vec![2],
                id.clone(),
                v.clone(),
                eof.clone(),
                row1.clone(),
                row2.clone(),
                eof
            ])
        );
        // With it: no EOF after the columns, an OK with header 0xfe at the end (here in a
        // transaction).
        let mut out = Vec::new();
        reply(
            &mut out,
            1,
            CLIENT_PROTOCOL_41 | CLIENT_DEPRECATE_EOF,
            &result,
            (1, 0),
        );
        let end = vec![0xfe, 0, 0, 1, 0, 0, 0];
        assert_eq!(out, packets(&[vec![2], id, v, row1, row2, end]));
        // An error, and an OK.
        let mut out = Vec::new();
        let e = SqlError::new(1146, "42S02", "Table 'x' doesn't exist");
        reply(&mut out, 1, CLIENT_PROTOCOL_41, &Err(e), (0, 0));
        let mut expected = vec![0xff, 0x7a, 0x04, b'#'];
        expected.extend_from_slice(b"42S02Table 'x' doesn't exist");
        assert_eq!(out, frame(1, &expected));
        let mut out = Vec::new();
        reply(
            &mut out,
            1,
            CLIENT_PROTOCOL_41,
            &Ok(Response::done(3)),
            (1, 0),
        );
        assert_eq!(out, frame(1, &[0, 3, 0, 1, 0, 0, 0]));
    }
}
