//! What opensrv writes to (see `wire.rs`): each reply gathered and sent with one `send`
//! when opensrv flushes, the session's status flags and warning count written in, the error
//! numbers opensrv cannot write put back, and a failed login worded as MySQL words it.

use std::io::{self, Write};
use std::net::Shutdown;
use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll};

use parking_lot::Mutex;
use tokio::io::AsyncWrite;

use crate::packet::error_packet;
use crate::socket::{Handle, Socket};
use waterline_sql::Session;

/// A connection's packet buffers keep up to this much room between packets; one that held a
/// large statement gives the rest back.
pub(crate) const KEEP_BYTES: usize = 64 << 10;

/// The login the client sent (user name, and whether with a password), for the error that
/// refuses it.
pub(crate) type Login = Arc<Mutex<(String, bool)>>;

/// The number and SQLSTATE of the error the backend has just had opensrv write as 1105,
/// because opensrv's error kinds stop at 1885 (see `protocol.rs`): `Out` puts them back.
pub(crate) type Unsent = Arc<Mutex<Option<(u16, &'static str)>>>;

/// What opensrv writes to: gathered, and sent when opensrv flushes (once per reply; a result
/// set is many small packets, and a send per packet cost more than the query).
pub(crate) struct Out<S> {
    pub(crate) client: Handle<S>,
    pub(crate) buf: Vec<u8>,
    /// Until the login reply (OK or error), packets are looked at: a failed login is
    /// rewritten from opensrv's 1698 to MySQL's 1045.
    pub(crate) handshake: bool,
    pub(crate) login: Login,
    pub(crate) unsent: Unsent,
    /// The session, whose status flags and warning count every reply carries.
    pub(crate) session: Arc<Mutex<Session>>,
    /// The command the reply being written answers (set by the filter).
    pub(crate) command: Arc<AtomicU8>,
    /// The client's capability flags, read from its handshake response.
    pub(crate) client_flags: Arc<std::sync::atomic::AtomicU32>,
    /// The greeting is the first thing written.
    pub(crate) greeted: bool,
    /// Scratch: the packets of the reply being patched.
    pub(crate) ranges: Vec<Range<usize>>,
}

impl<S> Out<S> {
    /// Writes `code` and `state` into the error packets opensrv wrote as 1105 (the only
    /// error of a reply: each command's reply ends at its error).
    fn restore_error_code(&mut self, (code, state): (u16, &str)) {
        let mut at = 0;
        while let Some(header) = self.buf.get(at..at + 4) {
            let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
            let payload = at + 4;
            // 0xff, the number, '#', five bytes of SQLSTATE, then the message.
            if len >= 9
                && self.buf.len() >= payload + 9
                && self.buf[payload] == 0xff
                && self.buf[payload + 1..payload + 3] == 1105u16.to_le_bytes()
                && self.buf[payload + 3] == b'#'
                && state.len() == 5
            {
                self.buf[payload + 1..payload + 3].copy_from_slice(&code.to_le_bytes());
                self.buf[payload + 4..payload + 9].copy_from_slice(state.as_bytes());
            }
            at = payload + len;
        }
    }

    /// The login reply, as MySQL words it.
    fn rewrite_handshake(&mut self) {
        let mut out = Vec::with_capacity(self.buf.len());
        let mut rest = self.buf.as_slice();
        while self.handshake && rest.len() >= 4 {
            let len = u32::from_le_bytes([rest[0], rest[1], rest[2], 0]) as usize;
            let Some(payload) = rest.get(4..4 + len) else {
                break;
            };
            if payload.first() == Some(&0xff) && payload.get(1..3) == Some(&1698u16.to_le_bytes()) {
                let (name, password) = self.login.lock().clone();
                let yes = if password { "YES" } else { "NO" };
                let message =
                    format!("Access denied for user '{name}'@'localhost' (using password: {yes})");
                out.extend_from_slice(&error_packet(rest[3], 1045, "28000", &message));
            } else {
                out.extend_from_slice(&rest[..4 + len]);
            }
            // After the login reply (OK or error), commands begin.
            if matches!(payload.first(), Some(0x00 | 0xff)) {
                self.handshake = false;
            }
            rest = &rest[4 + len..];
        }
        out.extend_from_slice(rest);
        self.buf = out;
    }
}

impl<S: Socket> AsyncWrite for Out<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().buf.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let mut n = 0;
        for b in bufs {
            this.buf.extend_from_slice(b);
            n += b.len();
        }
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let (status, warnings) = {
            let session = this.session.lock();
            (session.server_status(), session.warning_count())
        };
        if !this.greeted {
            this.greeted = true;
            crate::status::greeting_status(&mut this.buf, status);
        } else {
            // The login's reply is an OK (or error) as a command's is.
            let command = if this.handshake {
                0
            } else {
                this.command.load(Ordering::Relaxed)
            };
            let client = this.client_flags.load(Ordering::Relaxed);
            crate::status::packet_ranges(&this.buf, &mut this.ranges);
            crate::status::patch_status(
                &mut this.buf,
                &this.ranges,
                command,
                client,
                status,
                warnings,
            );
        }
        if this.handshake {
            this.rewrite_handshake();
        }
        let unsent = this.unsent.lock().take();
        if let Some(error) = unsent {
            this.restore_error_code(error);
        }
        let sent = this.client.write_all(&this.buf);
        this.buf.clear();
        // A large result's room is given back (the filter then sets the idle timeouts).
        this.buf.shrink_to(KEEP_BYTES);
        Poll::Ready(sent)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = self.as_mut().poll_flush(cx);
        Socket::shutdown(&*self.client.0, Shutdown::Write);
        flushed
    }
}
