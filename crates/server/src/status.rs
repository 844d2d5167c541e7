//! Server status flags and warning counts in the replies opensrv writes (it always writes
//! 0): the connection's writer (`Out` in `wire.rs`) hands each flushed reply here with the
//! command it answers and the session's status, and the OK and EOF packets in it get them.

use std::ops::Range;

use crate::packet::{
    CLIENT_DEPRECATE_EOF, CLIENT_PROTOCOL_41, CLIENT_TRANSACTIONS, COM_QUERY, COM_STMT_EXECUTE,
    COM_STMT_PREPARE, MAX_CHUNK, lenenc,
};

/// The payload of each packet in `buf` (a packet continued over several chunks counts once,
/// by its first chunk), into `ranges`.
pub(crate) fn packet_ranges(buf: &[u8], ranges: &mut Vec<Range<usize>>) {
    ranges.clear();
    let mut at = 0;
    let mut continued = false;
    while let Some(h) = buf.get(at..at + 4) {
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        let start = at + 4;
        at = start + len;
        if !continued {
            ranges.push(start..at.min(buf.len()));
        }
        continued = len == MAX_CHUNK;
    }
}

/// Writes the status flags into the greeting (Protocol::HandshakeV10): after the version's
/// text, the connection id, 8 bytes of scramble, a filler, the capabilities' lower half and
/// the character set.
pub(crate) fn greeting_status(buf: &mut [u8], status: u16) {
    let Some(payload) = buf.get_mut(4..) else {
        return;
    };
    let Some(nul) = payload.iter().position(|&b| b == 0) else {
        return;
    };
    let at = nul + 1 + 4 + 8 + 1 + 2 + 1;
    if let Some(flags) = payload.get_mut(at..at + 2) {
        flags.copy_from_slice(&status.to_le_bytes());
    }
}

/// Writes `status` and `warnings` into the OK and EOF packets of `buf`, the reply to
/// `command` (0: the login's) whose packets `ranges` gives, for a client with capability
/// flags `client`. Which packet is an OK or an EOF depends on where it stands in the reply
/// (a binary row starts with 0x00 as an OK does), so the reply is walked as the protocol lays
/// it out: an OK, an error, or a column count, the columns, an EOF, rows and a closing EOF or
/// OK; for COM_STMT_PREPARE, the statement's OK, then the parameters and the columns, each
/// followed by an EOF.
pub(crate) fn patch_status(
    buf: &mut [u8],
    ranges: &[Range<usize>],
    command: u8,
    client: u32,
    status: u16,
    warnings: u16,
) {
    let eofs = client & CLIENT_DEPRECATE_EOF == 0;
    let mut packets = ranges.iter().cloned();
    let Some(first) = packets.next() else {
        return;
    };
    let head = buf.get(first.start).copied();
    let mut ok = |r: Range<usize>| ok_status(&mut buf[r], client, status, warnings);
    match (command, head) {
        (_, Some(0xff)) | (_, None) => {}
        (COM_QUERY | COM_STMT_EXECUTE, Some(0x00)) => ok(first),
        (COM_QUERY | COM_STMT_EXECUTE, Some(0xfb)) => {} // LOCAL INFILE request
        (COM_QUERY | COM_STMT_EXECUTE, Some(_)) => {
            let Some((_, columns)) = lenenc(&buf[first]) else {
                return;
            };
            for _ in 0..columns {
                packets.next();
            }
            if eofs && let Some(r) = packets.next() {
                eof_status(&mut buf[r], status, 0);
            }
            for r in packets {
                match buf.get(r.start) {
                    // A row can start with 0xfe only if its first value is 16 MiB or more
                    // long, and then the packet is a full chunk.
                    Some(0xfe) if r.len() < MAX_CHUNK => {
                        if eofs {
                            eof_status(&mut buf[r], status, warnings);
                        } else {
                            ok_status(&mut buf[r], client, status, warnings);
                        }
                        break;
                    }
                    Some(0xff) => break,
                    _ => {}
                }
            }
        }
        (COM_STMT_PREPARE, Some(0x00)) => {
            let p = &buf[first];
            let (Some(c), Some(n)) = (p.get(5..7), p.get(7..9)) else {
                return;
            };
            let (columns, params) = (
                u16::from_le_bytes([c[0], c[1]]),
                u16::from_le_bytes([n[0], n[1]]),
            );
            for count in [params, columns] {
                if count == 0 {
                    continue;
                }
                for _ in 0..count {
                    packets.next();
                }
                if eofs && let Some(r) = packets.next() {
                    eof_status(&mut buf[r], status, 0);
                }
            }
        }
        (_, Some(0x00)) => ok(first),
        (_, Some(0xfe)) if first.len() < 9 => eof_status(&mut buf[first], status, warnings),
        _ => {}
    }
}

/// An OK packet's status flags and warnings, after its header and two length-encoded
/// integers (affected rows, last insert id).
fn ok_status(p: &mut [u8], client: u32, status: u16, warnings: u16) {
    let Some((a, _)) = p.get(1..).and_then(lenenc) else {
        return;
    };
    let Some((b, _)) = p.get(1 + a..).and_then(lenenc) else {
        return;
    };
    let at = 1 + a + b;
    if client & CLIENT_PROTOCOL_41 != 0 {
        if let Some(f) = p.get_mut(at..at + 4) {
            f[..2].copy_from_slice(&status.to_le_bytes());
            f[2..].copy_from_slice(&warnings.to_le_bytes());
        }
    } else if client & CLIENT_TRANSACTIONS != 0
        && let Some(f) = p.get_mut(at..at + 2)
    {
        f.copy_from_slice(&status.to_le_bytes());
    }
}

/// An EOF packet's warnings and status flags.
fn eof_status(p: &mut [u8], status: u16, warnings: u16) {
    if let Some(f) = p.get_mut(1..5) {
        f[..2].copy_from_slice(&warnings.to_le_bytes());
        f[2..].copy_from_slice(&status.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary;
    use crate::packet::frame;
    use waterline_txn::Value;

    #[test]
    fn status_and_warnings_are_written_where_the_reply_has_them() {
        use waterline_sql::{FieldType, Response, ResultColumn};
        let column = |name: &str| {
            ResultColumn::new(
                name.into(),
                "t".into(),
                crate::types::ColumnMeta::computed(FieldType::Long),
            )
        };
        // Binary rows start with 0x00, as an OK does: only the closing packets change.
        let rows = Response::Rows {
            columns: vec![column("a"), column("b")],
            rows: vec![
                vec![Value::Int(0), Value::Null],
                vec![Value::Int(254), Value::Int(7)],
            ],
        };
        let replies = [
            Ok(rows),
            Ok(Response::done(3)),
            Err(crate::SqlError::other("x")),
        ];
        for client in [
            CLIENT_PROTOCOL_41,
            CLIENT_PROTOCOL_41 | CLIENT_DEPRECATE_EOF,
            CLIENT_TRANSACTIONS,
        ] {
            for result in &replies {
                let mut written = Vec::new();
                binary::reply(&mut written, 1, client, result, (0, 0));
                let mut wanted = Vec::new();
                binary::reply(&mut wanted, 1, client, result, (3, 2));
                let mut ranges = Vec::new();
                packet_ranges(&written, &mut ranges);
                patch_status(&mut written, &ranges, COM_STMT_EXECUTE, client, 3, 2);
                assert_eq!(written, wanted, "client {client:#x}: {result:?}");
            }
        }
        // The greeting's flags follow the version's text.
        let mut greeting = frame(0, b"\x0a8.0\0\x01\0\0\0abcdefgh\0\xff\xff\x21\0\0\0\0");
        greeting_status(&mut greeting, 2);
        assert_eq!(&greeting[4 + 21..4 + 23], &[2, 0]);
    }
}
