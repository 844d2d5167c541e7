//! A packet filter between the client and opensrv-mysql, for what opensrv gets wrong:
//!
//! | packet | opensrv 0.7 | here |
//! |---|---|---|
//! | COM_STMT_EXECUTE without "new params bound" | reads the flag byte as the first value (libmysqlclient, so sysbench, sends this on re-execute) | the types the client sent last are put back in |
//! | COM_STMT_EXECUTE of an unknown id | drops the connection | error 1243 |
//! | COM_STMT_EXECUTE with bad types or short values | panics the connection's task | error 1210 |
//! | COM_FIELD_LIST (the mariadb CLI after USE, without `-A`) | an 8-byte EOF libmariadb rejects | the 5-byte EOF |
//! | a packet over `max_allowed_packet` | read whole | error 1153, connection closed |
//! | an error number above 1885 (MySQL 8.0's 3572) | panics the connection's task | written as 1105, its number and SQLSTATE put back by `Out` |
//! | idle and half-sent packets | waited for for ever | `wait_timeout` (error 4031, then closed), `net_read_timeout` for the rest of a packet begun, `net_write_timeout` for replies: the session's values |
//! | server status flags and warning count | always 0 (the handshake, every OK and EOF) | the session's, written in by `Out` (see `status.rs`) |
//! | any command opensrv does not know (COM_RESET_CONNECTION, COM_STATISTICS, COM_SET_OPTION, COM_STMT_RESET, COM_SHUTDOWN, COM_CHANGE_USER, COM_PROCESS_KILL, ...) | an OK, whatever it asked | done here (the session reset, the statistics line, the EOF, the shutdown, the kill), or error 1047 / 1235 / 1227 / 1094 / 1095 |
//! | `SELECT @@...` starting the text | answered by opensrv itself for `max_allowed_packet` (a constant) | passed on with a leading space, so that the session answers |
//!
//! A connection's socket is read and written with blocking calls (see `server.rs`), and
//! opensrv runs over two adapters: `Filter`, the `AsyncRead` it reads commands from, which
//! reads the client's packets and lets through what opensrv may see; and `Out`
//! (`writer.rs`), the `AsyncWrite` it writes to, which sends each reply with one `send` when
//! opensrv flushes. The filter runs COM_STMT_EXECUTE itself, on the session it shares with
//! opensrv's backend (see `binary.rs`): the statement the protocol is busiest with skips
//! opensrv's copies and async writers. With one thread per connection a poll never returns
//! `Pending`: the thread waits in `recv` as MySQL's one-thread-per-connection does, with no
//! event loop or in-memory pipe between client and opensrv. In the thread pool
//! (`pool.rs`) the filter returns `Pending` when the client has sent nothing more (it peeks),
//! its socket armed in the pool's epoll set, and the worker thread goes back to the pool; a
//! command once begun is still read, run and answered with blocking calls. The filter's own
//! replies go straight to the socket: opensrv has flushed its last reply before it asks for
//! the next command, so the two never interleave.

use std::future::Future;
use std::io::{self, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use opensrv_mysql::AsyncMysqlIntermediary;
use parking_lot::Mutex;
use tokio::io::{AsyncRead, ReadBuf};
use waterline_txn::Value;

use crate::binary;
pub use crate::packet::error_packet;
use crate::packet::*;
use crate::protocol::Backend;
use crate::socket::{Handle, Socket};
use crate::statements::Statements;
use crate::writer::Out;
use crate::writer::{KEEP_BYTES, Login};
use waterline_sql::Session;

/// The server status flag of a session inside a transaction.
const SERVER_STATUS_IN_TRANS: u16 = 0x0001;

enum Verdict {
    /// For opensrv: the packet as it came.
    Pass,
    /// For opensrv: the packet's payload, repaired.
    Forward(Vec<u8>),
    /// Answered here: the reply's packets.
    Reply(Vec<u8>),
    /// An execution to run here: the statement and its parameter values.
    Run(u32, Vec<Value>),
    /// A command opensrv does not know, answered here with the session's state.
    Own(u8),
    /// No reply at all.
    Drop,
}

/// Checks a COM_STMT_EXECUTE payload and decodes its parameters to run it here, or, after
/// long data, repairs it for opensrv; `seq` is the sequence id a reply takes.
fn execute(statements: &Statements, seq: u8, payload: &[u8]) -> Verdict {
    let bad = |m: &str| {
        Verdict::Reply(error_packet(
            seq,
            1210,
            "HY000",
            &format!("Incorrect arguments to mysqld_stmt_execute: {m}"),
        ))
    };
    let Some(id) = payload
        .get(1..5)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    else {
        return bad("short packet");
    };
    let mut map = statements.0.lock();
    let Some(stmt) = map.get_mut(&id) else {
        let m = format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_execute");
        return Verdict::Reply(error_packet(seq, 1243, "HY000", &m));
    };
    let n = stmt.params;
    if n == 0 {
        return Verdict::Run(id, Vec::new());
    }
    let head = 10;
    let nulls = n.div_ceil(8);
    let Some(nullmap) = payload.get(head..head + nulls) else {
        return bad("short packet");
    };
    let at = head + nulls;
    let bound = payload.get(at) == Some(&1);
    let (types, values) = match payload.get(at) {
        Some(1) => match payload.get(at + 1..at + 1 + 2 * n) {
            Some(t) => (t, &payload[at + 1 + 2 * n..]),
            None => return bad("short types"),
        },
        Some(0) => match stmt.types.as_deref() {
            Some(t) => (t, &payload[at + 1..]),
            None => return bad("no parameter types were ever bound"),
        },
        _ => return bad("bad new-params-bound flag"),
    };
    let params = match binary::params(n, nullmap, types, values) {
        Ok(params) => params,
        Err(i) => return bad(&format!("parameter {} does not parse", i + 1)),
    };
    // Clients that bind on every execution mostly bind the same types: copied only when new.
    let rebound = (bound && stmt.types.as_deref() != Some(types)).then(|| types.to_vec());
    let verdict = if std::mem::take(&mut stmt.long_data) {
        // opensrv reads the types from the packet: put them in if the client left them out.
        let mut out = payload[..at].to_vec();
        out.push(1);
        out.extend_from_slice(types);
        out.extend_from_slice(values);
        Verdict::Forward(out)
    } else {
        Verdict::Run(id, params)
    };
    if let Some(types) = rebound {
        stmt.types = Some(types);
    }
    verdict
}

fn inspect(statements: &Statements, seq: u8, payload: &[u8]) -> Verdict {
    match payload.first() {
        Some(&COM_FIELD_LIST) => Verdict::Reply(frame(seq, &[0xfe, 0, 0, 2, 0])),
        Some(&COM_STMT_EXECUTE) => execute(statements, seq, payload),
        // opensrv drops the connection on text that is not UTF-8.
        Some(&(COM_INIT_DB | COM_QUERY | COM_STMT_PREPARE))
            if std::str::from_utf8(&payload[1..]).is_err() =>
        {
            Verdict::Reply(error_packet(
                seq,
                1300,
                "HY000",
                "Invalid utf8mb4 character string",
            ))
        }
        // opensrv answers `SELECT @@max_allowed_packet` itself, with a constant of its own.
        Some(&COM_QUERY)
            if payload[1..].starts_with(b"SELECT @@") || payload[1..].starts_with(b"select @@") =>
        {
            let mut spaced = Vec::with_capacity(payload.len() + 1);
            spaced.extend_from_slice(&[COM_QUERY, b' ']);
            spaced.extend_from_slice(&payload[1..]);
            Verdict::Forward(spaced)
        }
        // opensrv answers every command it does not parse with an OK, whatever it asked.
        Some(
            &(COM_STATISTICS | COM_STMT_RESET | COM_SET_OPTION | COM_RESET_CONNECTION
            | COM_SHUTDOWN | COM_PROCESS_KILL),
        ) => Verdict::Own(payload[0]),
        Some(&COM_CHANGE_USER) => Verdict::Reply(error_packet(
            seq,
            1235,
            "42000",
            "This version of waterline doesn't yet support 'COM_CHANGE_USER'",
        )),
        Some(&command)
            if !matches!(
                command,
                COM_QUIT
                    | COM_INIT_DB
                    | COM_QUERY
                    | COM_PING
                    | COM_STMT_PREPARE
                    | COM_STMT_CLOSE
                    | COM_STMT_SEND_LONG_DATA
            ) =>
        {
            Verdict::Reply(error_packet(seq, 1047, "08S01", "Unknown command"))
        }
        Some(&COM_STMT_SEND_LONG_DATA) => {
            let id = payload
                .get(1..5)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            let mut map = statements.0.lock();
            match id.and_then(|id| map.get_mut(&id)) {
                Some(stmt) => {
                    stmt.long_data = true;
                    Verdict::Pass
                }
                _ => Verdict::Drop, // no reply, as the protocol says
            }
        }
        _ => Verdict::Pass,
    }
}

/// One logical packet: continuations joined.
struct Packet {
    /// The first chunk's sequence id.
    seq: u8,
    /// The sequence id a reply takes.
    reply_seq: u8,
}

/// Reads one logical packet, its payload into `payload` (cleared first, so that one buffer
/// serves every packet of a connection). `Ok(None)` at end of stream; `Err(reply_seq)` if it
/// is longer than `max` (the rest is not read).
///
/// A packet the buffer does not hold whole is read on with `net_read` as the socket's read
/// timeout (MySQL's `net_read_timeout`); `timeout` says which timeout the socket has.
fn read_packet<S: Socket>(
    r: &mut BufReader<Handle<S>>,
    (max, net_read): (usize, Option<Duration>),
    payload: &mut Vec<u8>,
    timeout: &mut Option<Duration>,
) -> io::Result<Option<Result<Packet, u8>>> {
    payload.clear();
    payload.shrink_to(KEEP_BYTES);
    let mut first = None;
    loop {
        let mut header = [0u8; 4];
        match r.read_exact(&mut header) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && payload.is_empty() => {
                return Ok(None);
            }
            Err(e) => return Err(e),
        }
        let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        let seq = *first.get_or_insert(header[3]);
        if payload.len() + len > max {
            return Ok(Some(Err(header[3].wrapping_add(1))));
        }
        if r.buffer().len() < len
            && let Some(net_read) = net_read
            && *timeout != Some(net_read)
        {
            r.get_ref().0.set_read_timeout(Some(net_read))?;
            *timeout = Some(net_read);
        }
        let start = payload.len();
        payload.resize(start + len, 0);
        r.read_exact(&mut payload[start..])?;
        if len < MAX_CHUNK {
            return Ok(Some(Ok(Packet {
                seq,
                reply_seq: header[3].wrapping_add(1),
            })));
        }
    }
}

/// The user name of a handshake response, and whether it carries a password.
fn login_of(payload: &[u8]) -> (String, bool) {
    let rest = payload.get(32..).unwrap_or(&[]);
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let name = String::from_utf8_lossy(&rest[..end]).into_owned();
    let password = rest.get(end + 1).is_some_and(|&len| len > 0);
    (name, password)
}

/// What opensrv reads: the client's packets, filtered (see the table above).
struct Filter<S> {
    /// Buffered: a packet's header and payload (and a pipelined next packet) come in one
    /// `recv`, not one each.
    client: BufReader<Handle<S>>,
    /// The same socket, for the filter's own replies.
    reply: Handle<S>,
    statements: Arc<Statements>,
    /// The session opensrv's backend also runs statements on (never both at once: the
    /// filter runs only while opensrv waits for a command).
    session: Arc<Mutex<Session>>,
    /// The client's capability flags, from its handshake response (shared with `Out`).
    client_flags: Arc<std::sync::atomic::AtomicU32>,
    /// The reply to an execution run here, reused.
    out: Vec<u8>,
    login: Login,
    max_packet: usize,
    /// The handshake response is next: it goes through as is.
    first: bool,
    /// The payload of the packet just read (one buffer for all of them).
    packet: Vec<u8>,
    /// A framed packet for opensrv, and how much of it opensrv has read.
    pending: Vec<u8>,
    at: usize,
    /// The client is gone, or was sent away: opensrv reads end of stream.
    closed: bool,
    /// The command opensrv was last given, for `Out`, which reads its reply.
    command: Arc<AtomicU8>,
    /// The socket's read and write timeouts, as last set (the read's starts as the
    /// handshake's `connect_timeout`, set by the server before the greeting).
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    /// The first command has been waited for (the login is done).
    logged_in: bool,
    /// In a thread pool: how the connection waits for its next command without a thread.
    readiness: Option<Readiness>,
}

/// A pooled connection's wait for its next command: its socket in the pool's epoll set,
/// and a timer for `wait_timeout`.
struct Readiness {
    socket: Box<dyn Registered>,
    timer: Pin<Box<tokio::time::Sleep>>,
    /// The timer is set for the current wait.
    armed: bool,
    /// Told to the pool before each wait: the session is inside a transaction.
    in_transaction: Arc<AtomicBool>,
}

/// A pooled connection's socket as its pool listens to it (see `pool.rs`).
pub(crate) trait Registered: Send + Sync {
    /// Wake `waker` once the socket has something to read (or has ended); once only.
    fn arm(&self, waker: &std::task::Waker) -> io::Result<()>;
}

impl<S: Socket> Filter<S> {
    /// Reads the client's packets until one is for opensrv (or the connection ends).
    fn next_packet(&mut self) -> io::Result<()> {
        // opensrv has read all of the last one.
        self.pending.clear();
        self.pending.shrink_to(KEEP_BYTES);
        self.at = 0;
        let mut answered = false;
        while !self.closed {
            // In a thread pool, a packet answered here gives the thread back unless the
            // next one is here already.
            if answered && self.readiness.is_some() && self.client.buffer().is_empty() {
                break;
            }
            answered = true;
            let net_read = if self.first {
                None
            } else {
                Some(self.idle_timeouts()?)
            };
            let read = read_packet(
                &mut self.client,
                (self.max_packet + 1024, net_read),
                &mut self.packet,
                &mut self.read_timeout,
            );
            let read = match read {
                Err(e)
                    if !self.first
                        && matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                        ) =>
                {
                    self.inactive();
                    break;
                }
                read => read?,
            };
            let packet = match read {
                None => {
                    self.closed = true;
                    break;
                }
                Some(Ok(packet)) => packet,
                Some(Err(reply_seq)) => {
                    self.closed = true;
                    let message = "Got a packet bigger than 'max_allowed_packet' bytes";
                    self.reply
                        .write_all(&error_packet(reply_seq, 1153, "08S01", message))?;
                    break;
                }
            };
            let verdict = if self.first {
                self.first = false;
                *self.login.lock() = login_of(&self.packet);
                if let Some(flags) = self.packet.get(..4) {
                    let flags = u32::from_le_bytes([flags[0], flags[1], flags[2], flags[3]]);
                    self.client_flags.store(flags, Ordering::Relaxed);
                }
                Verdict::Pass
            } else {
                inspect(&self.statements, packet.reply_seq, &self.packet)
            };
            match verdict {
                Verdict::Pass => {
                    frame_into(&mut self.pending, packet.seq, &self.packet);
                    self.command
                        .store(self.packet.first().copied().unwrap_or(0), Ordering::Relaxed);
                    break;
                }
                Verdict::Forward(bytes) => {
                    frame_into(&mut self.pending, packet.seq, &bytes);
                    self.command
                        .store(bytes.first().copied().unwrap_or(0), Ordering::Relaxed);
                    break;
                }
                Verdict::Reply(bytes) => self.reply.write_all(&bytes)?,
                Verdict::Run(id, params) => {
                    let (result, status) = {
                        let mut session = self.session.lock();
                        let result = session.execute_prepared(id, &params);
                        (result, (session.server_status(), session.warning_count()))
                    };
                    self.out.clear();
                    binary::reply(
                        &mut self.out,
                        packet.reply_seq,
                        self.client_flags.load(Ordering::Relaxed),
                        &result,
                        status,
                    );
                    self.reply.write_all(&self.out)?;
                    self.out.clear();
                    self.out.shrink_to(KEEP_BYTES);
                }
                Verdict::Own(command) => {
                    let reply = self.own_command(command, packet.reply_seq);
                    self.reply.write_all(&reply)?;
                }
                Verdict::Drop => {}
            }
        }
        Ok(())
    }
}

impl<S: Socket> Filter<S> {
    /// Idle past `wait_timeout` (or, before the login, `connect_timeout`): MySQL 8.0 says
    /// why before it closes a logged-in connection.
    fn inactive(&mut self) {
        self.closed = true;
        if self.first {
            return;
        }
        let message = "The client was disconnected by the server because of inactivity. \
                       See wait_timeout and interactive_timeout for configuring this behavior.";
        let _ = self
            .reply
            .write_all(&error_packet(0, 4031, "HY000", message));
    }

    /// In a thread pool, before the next command is read: `Some(Pending)` while the client
    /// has sent nothing (the connection's thread goes back to the pool; the pool's listener
    /// wakes it when a byte or the end comes), `None` once there is something to read or
    /// the wait timed out (then the connection is closed).
    fn poll_command(&mut self, cx: &mut Context<'_>) -> Option<Poll<io::Result<()>>> {
        if self.readiness.is_none() || self.closed || !self.client.buffer().is_empty() {
            return None;
        }
        if !self.readiness.as_ref().is_some_and(|r| r.armed) {
            if !self.first
                && let Err(e) = self.idle_timeouts()
            {
                return Some(Poll::Ready(Err(e)));
            }
            let timeout = self
                .read_timeout
                .unwrap_or(Duration::from_secs(365 * 86_400));
            let in_transaction = self.session.lock().server_status() & SERVER_STATUS_IN_TRANS != 0;
            let ready = self.readiness.as_mut()?;
            ready
                .in_transaction
                .store(in_transaction, Ordering::Relaxed);
            ready
                .timer
                .as_mut()
                .reset(tokio::time::Instant::now() + timeout);
            ready.armed = true;
        }
        let ready = self.readiness.as_mut()?;
        let mut byte = [0u8; 1];
        let flags = rustix::net::RecvFlags::PEEK | rustix::net::RecvFlags::DONTWAIT;
        match rustix::net::recv(self.reply.0.as_fd(), &mut byte[..], flags) {
            Err(rustix::io::Errno::AGAIN) => {
                // Nothing yet: the pool's listener wakes this connection when it comes.
                if let Err(e) = ready.socket.arm(cx.waker()) {
                    return Some(Poll::Ready(Err(e)));
                }
            }
            // A byte, the end, or an error the read will meet.
            _ => {
                ready.armed = false;
                return None;
            }
        }
        if ready.timer.as_mut().poll(cx).is_ready() {
            ready.armed = false;
            self.inactive();
            return None;
        }
        Some(Poll::Pending)
    }

    /// Sets the socket's timeouts for the wait for the next command, from the session:
    /// `wait_timeout` to read (`interactive_timeout` for a client that said it is
    /// interactive, as MySQL sets at login) and `net_write_timeout` to write. Returns
    /// `net_read_timeout`, for the rest of a packet once it has begun. The socket is asked
    /// only when a value changes.
    fn idle_timeouts(&mut self) -> io::Result<Duration> {
        let timeouts = {
            let mut session = self.session.lock();
            if !self.logged_in {
                self.logged_in = true;
                const CLIENT_INTERACTIVE: u32 = 0x400;
                if self.client_flags.load(Ordering::Relaxed) & CLIENT_INTERACTIVE != 0 {
                    session.make_interactive();
                }
            }
            session.timeouts()
        };
        let socket = &self.client.get_ref().0;
        if self.read_timeout != Some(timeouts.wait) {
            socket.set_read_timeout(Some(timeouts.wait))?;
            self.read_timeout = Some(timeouts.wait);
        }
        if self.write_timeout != Some(timeouts.net_write) {
            socket.set_write_timeout(Some(timeouts.net_write))?;
            self.write_timeout = Some(timeouts.net_write);
        }
        Ok(timeouts.net_read)
    }
}

impl<S> Filter<S> {
    /// The reply to a command opensrv does not know, done on the session.
    fn own_command(&mut self, command: u8, seq: u8) -> Vec<u8> {
        let mut session = self.session.lock();
        match command {
            COM_RESET_CONNECTION => {
                session.reset();
                self.statements.0.lock().clear();
            }
            COM_STMT_RESET => {
                // Long data sent for the statement is forgotten (opensrv's copy goes with
                // the next execution it runs, which is none: the flag that sends it there
                // is cleared).
                let id = self
                    .packet
                    .get(1..5)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                match id.and_then(|id| {
                    self.statements.0.lock().get_mut(&id).map(|s| {
                        s.long_data = false;
                    })
                }) {
                    Some(()) => {}
                    None => {
                        let id = id.unwrap_or(0);
                        let m = format!(
                            "Unknown prepared statement handler ({id}) given to mysqld_stmt_reset"
                        );
                        return error_packet(seq, 1243, "HY000", &m);
                    }
                }
            }
            COM_STATISTICS => {
                // A bare string, as mysqladmin status prints it.
                let c = &session.shared().counters;
                let uptime = session.shared().uptime().as_secs().max(1);
                let questions = c.questions.load(Ordering::Relaxed);
                let text = format!(
                    "Uptime: {uptime}  Threads: {}  Questions: {questions}  Slow queries: 0  \
                     Opens: 0  Open tables: {}  Queries per second avg: {:.3}",
                    c.threads_connected.load(Ordering::Relaxed),
                    session.shared().engine.tables().len(),
                    questions as f64 / uptime as f64
                );
                return frame(seq, text.as_bytes());
            }
            COM_PROCESS_KILL => {
                // mysql_kill(): KILL CONNECTION of the id that follows.
                let id = self
                    .packet
                    .get(1..5)
                    .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                if let Err(e) = session.kill_connection(id) {
                    return error_packet(seq, e.code, e.state, &e.message);
                }
            }
            COM_SHUTDOWN => {
                if let Err(e) = session.request_shutdown() {
                    return error_packet(seq, e.code, e.state, &e.message);
                }
                // An EOF, as MySQL answers it; the server then stops as on SIGTERM.
                let mut eof = vec![0xfe, 0, 0];
                eof.extend_from_slice(&session.server_status().to_le_bytes());
                return frame(seq, &eof);
            }
            COM_SET_OPTION => {
                // Multi-statements on or off: an EOF, as MySQL answers. A text with several
                // statements is still refused, one at a time.
                let status = session.server_status();
                let mut eof = vec![0xfe, 0, 0];
                eof.extend_from_slice(&status.to_le_bytes());
                return frame(seq, &eof);
            }
            _ => {}
        }
        let mut out = Vec::new();
        let status = (session.server_status(), session.warning_count());
        binary::reply(
            &mut out,
            seq,
            self.client_flags.load(Ordering::Relaxed),
            &Ok(waterline_sql::Response::done(0)),
            status,
        );
        out
    }
}

impl<S: Socket> AsyncRead for Filter<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while this.at == this.pending.len() && !this.closed {
            if let Some(wait) = this.poll_command(cx) {
                return wait;
            }
            if let Err(e) = this.next_packet() {
                return Poll::Ready(Err(e));
            }
            if this.readiness.is_none() {
                break;
            }
        }
        // Nothing pending now means the connection ended: zero bytes is end of stream.
        let rest = this.pending.get(this.at..).unwrap_or_default();
        let n = buf.remaining().min(rest.len());
        buf.put_slice(&rest[..n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

/// One connection, served on a thread of its own (blocking): opensrv behind the filter.
/// When the client goes away, the backend's drop rolls back what it left open.
///
/// Made in two steps: [`Connection::new`] on the thread that accepted it, and
/// [`Connection::serve`] on the connection's own. What lives as long as the connection (its
/// buffers, its runtime) is then allocated by the accepting thread, packed with every other
/// connection's; the allocator gives each thread pages of its own for every size it
/// allocates, and an idle connection's thread keeps them.
pub struct Connection<S> {
    /// Its own runtime, to serve on a thread of its own (none in a thread pool).
    runtime: Option<tokio::runtime::Runtime>,
    backend: Backend,
    filter: Filter<S>,
    out: Out<S>,
}

impl<S: Socket> Connection<S> {
    /// A connection over `stream` (blocking, read timeout `connect_timeout` until the
    /// login) for `backend`.
    pub fn new(
        stream: S,
        backend: Backend,
        statements: Arc<Statements>,
        (max_packet, connect_timeout): (usize, Duration),
    ) -> io::Result<Connection<S>> {
        // The login must come within connect_timeout (the filter sets the session's
        // timeouts once it waits for the first command).
        stream.set_blocking()?;
        stream.set_read_timeout(Some(connect_timeout))?;
        let (filter, out) = adapters(stream, &backend, statements, (max_packet, connect_timeout));
        // No I/O driver: nothing here waits on an event loop.
        let runtime = tokio::runtime::Builder::new_current_thread().build()?;
        Ok(Connection {
            runtime: Some(runtime),
            backend,
            filter,
            out,
        })
    }

    /// A connection over `stream` for a thread pool: between commands it waits for what
    /// `register` makes of its socket (the pool's listener) and a timer of the runtime
    /// this is called in (see [`Connection::into_job`]), and tells `in_transaction` whether
    /// its session is inside a transaction.
    pub(crate) fn pooled(
        stream: S,
        register: impl FnOnce(Arc<dyn AsFd + Send + Sync>) -> Box<dyn Registered>,
        (backend, statements): (Backend, Arc<Statements>),
        (max_packet, connect_timeout): (usize, Duration),
        in_transaction: Arc<AtomicBool>,
    ) -> io::Result<Connection<S>> {
        stream.set_blocking()?;
        stream.set_read_timeout(Some(connect_timeout))?;
        let (mut filter, out) =
            adapters(stream, &backend, statements, (max_packet, connect_timeout));
        let socket: Arc<dyn AsFd + Send + Sync> = filter.reply.0.clone();
        filter.readiness = Some(Readiness {
            socket: register(socket),
            timer: Box::pin(tokio::time::sleep(connect_timeout)),
            armed: false,
            in_transaction,
        });
        Ok(Connection {
            runtime: None,
            backend,
            filter,
            out,
        })
    }

    /// Serves the connection on the calling thread until the client goes; a protocol
    /// error ends only this connection.
    pub fn serve(self) {
        let Connection {
            runtime,
            backend,
            filter,
            out,
        } = self;
        let Some(runtime) = runtime else {
            return;
        };
        let _ = runtime.block_on(AsyncMysqlIntermediary::run_on(backend, filter, out));
    }

    /// The connection as a future a thread pool polls: it returns `Pending` while the
    /// client has not sent its next command, and ends when the client goes.
    pub(crate) fn into_job(self) -> impl Future<Output = ()> + Send + 'static {
        let Connection {
            backend,
            filter,
            out,
            ..
        } = self;
        async move {
            let _ = AsyncMysqlIntermediary::run_on(backend, filter, out).await;
        }
    }
}

/// The filter opensrv reads from and the writer it writes to, over one socket.
fn adapters<S: Socket>(
    stream: S,
    backend: &Backend,
    statements: Arc<Statements>,
    (max_packet, connect_timeout): (usize, Duration),
) -> (Filter<S>, Out<S>) {
    let socket = Arc::new(stream);
    backend
        .session()
        .lock()
        .attach_peer(Arc::new(Handle(Arc::clone(&socket))));
    let (reply, out) = (Handle(Arc::clone(&socket)), Handle(Arc::clone(&socket)));
    let stream = Handle(socket);
    let login = Login::default();
    let command = Arc::new(AtomicU8::new(0));
    let client_flags = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let filter = Filter {
        client: BufReader::with_capacity(4 << 10, stream),
        reply,
        statements,
        session: backend.session(),
        client_flags: Arc::clone(&client_flags),
        out: Vec::with_capacity(1 << 10),
        login: Arc::clone(&login),
        max_packet,
        first: true,
        packet: Vec::with_capacity(1 << 10),
        pending: Vec::new(),
        at: 0,
        closed: false,
        command: Arc::clone(&command),
        read_timeout: Some(connect_timeout),
        write_timeout: None,
        logged_in: false,
        readiness: None,
    };
    let out = Out {
        client: out,
        buf: Vec::with_capacity(1 << 10),
        handshake: true,
        login,
        unsent: backend.unsent(),
        session: backend.session(),
        command,
        client_flags,
        greeted: false,
        ranges: Vec::new(),
    };
    (filter, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_execute_without_types_gets_the_last_ones_back() {
        let s = Statements::default();
        s.prepared(7, 2);
        let run = |v: Verdict| match v {
            Verdict::Run(id, params) => (id, params),
            _ => panic!("not run here"),
        };
        // id 7, flags 0, iteration 1, nullmap 0, bound 1, types LONG + VAR_STRING, values.
        let mut first = vec![0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0x03, 0, 0xfd, 0];
        first.extend_from_slice(&5i32.to_le_bytes());
        first.extend_from_slice(&[2, b'h', b'i']);
        assert_eq!(
            run(execute(&s, 0, &first)),
            (7, vec![Value::Int(5), Value::from("hi")])
        );
        let mut again = vec![0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0];
        again.extend_from_slice(&6i32.to_le_bytes());
        again.extend_from_slice(&[1, b'x']);
        assert_eq!(
            run(execute(&s, 0, &again)),
            (7, vec![Value::Int(6), Value::from("x")])
        );
        // After long data, the execution goes to opensrv, with the types put back in.
        assert!(matches!(
            inspect(&s, 0, &[0x18, 7, 0, 0, 0, 0, 0, b'y']),
            Verdict::Pass
        ));
        let Verdict::Forward(fixed) = execute(&s, 0, &again) else {
            panic!("long data is opensrv's")
        };
        assert_eq!(&fixed[11..16], &[1, 0x03, 0, 0xfd, 0]);
        assert!(matches!(execute(&s, 0, &again), Verdict::Run(..)), "once");
        assert!(
            matches!(execute(&s, 0, &[0x17, 9, 0, 0, 0]), Verdict::Reply(_)),
            "unknown id"
        );
        let short = vec![0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0x03, 0, 0xfd, 0, 1];
        assert!(
            matches!(execute(&s, 0, &short), Verdict::Reply(_)),
            "short values"
        );
        let bad_type = vec![
            0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0x42, 0, 0xfd, 0, 0, 0, 0, 0, 0,
        ];
        assert!(
            matches!(execute(&s, 0, &bad_type), Verdict::Reply(_)),
            "unknown type"
        );
    }
}
