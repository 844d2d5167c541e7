//! The listeners: TCP and, optionally, a Unix-domain socket. Accepts connections up to
//! `max_connections` (error 1040 beyond), and runs each through opensrv-mysql on a thread of
//! its own, or in the thread pool (`pool.rs`).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, UnixListener, UnixStream};

use crate::panics::{CONNECTION_THREAD, quiet_connection_panics, report_panic};
use crate::pool::{Pool, PoolConfig};
use crate::protocol::Backend;
use crate::socket::Socket;
use crate::wire::Connection;
use waterline_sql::Shared;
use waterline_txn::Value;

/// The server: shared state, its connection limit, and how connections get threads.
#[derive(Clone, Debug)]
pub struct Server {
    shared: Arc<Shared>,
    max_connections: usize,
    /// `pool-of-threads`: the pool; `None` for one thread per connection.
    pool: Option<Arc<Pool>>,
}

/// `@@thread_pool_*`: `config` as MariaDB names its settings (times in its units).
fn pool_settings(config: &PoolConfig) -> Vec<(&'static str, Value)> {
    let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
    vec![
        ("high_prio_mode", Value::from(config.high_prio_mode.name())),
        (
            "high_prio_tickets",
            int(u64::from(config.high_prio_tickets)),
        ),
        ("idle_timeout", int(config.idle_timeout.as_secs())),
        ("max_threads", int(u64::from(config.max_threads))),
        ("oversubscribe", int(u64::from(config.oversubscribe))),
        ("size", int(u64::from(config.size))),
        ("stall_limit", int(config.stall_limit.as_millis() as u64)),
    ]
}

/// The error packet MySQL sends instead of the handshake when it is full (1040).
fn too_many_connections() -> Vec<u8> {
    let mut body = vec![0xff];
    body.extend_from_slice(&1040u16.to_le_bytes());
    body.extend_from_slice(b"#08004Too many connections");
    let len = body.len() as u32;
    let mut packet = len.to_le_bytes()[..3].to_vec();
    packet.push(0); // sequence id
    packet.extend(body);
    packet
}

impl Server {
    /// A server over `shared` that accepts at most `max_connections` at a time.
    pub fn new(shared: Arc<Shared>, max_connections: usize) -> Server {
        shared.update_listening(|l| {
            l.max_connections = u32::try_from(max_connections).unwrap_or(u32::MAX);
            l.thread_handling = "one-thread-per-connection";
            l.thread_pool = pool_settings(&PoolConfig::default());
        });
        Server {
            shared,
            max_connections,
            pool: None,
        }
    }

    /// The same server with MariaDB's and Percona's thread pool (`thread_handling =
    /// pool-of-threads`, see `pool.rs`): statements of all connections run on a few
    /// threads per group, instead of each connection on a thread of its own. Fails if the
    /// groups' epoll sets cannot be made.
    pub fn thread_pool(mut self, config: PoolConfig) -> io::Result<Server> {
        self.shared.update_listening(|l| {
            l.thread_handling = "pool-of-threads";
            l.thread_pool = pool_settings(&config);
        });
        self.pool = Some(Arc::new(Pool::new(config, Arc::clone(&self.shared))?));
        Ok(self)
    }

    /// The shared state.
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The queue of connections not yet accepted: `max_connections`, as MySQL's `back_log`,
    /// and never under the 128 of the standard library's `bind`.
    fn backlog(&self) -> u32 {
        u32::try_from(self.max_connections)
            .unwrap_or(u32::MAX)
            .max(128)
    }

    /// A listener on `addr` whose queue of connections not yet accepted holds
    /// `max_connections` (the kernel caps it at `net.core.somaxconn`).
    ///
    /// Tokio's and the standard library's `bind` queue 128. When more clients connect at once
    /// than the queue holds, Linux (with SYN cookies, its default) completes the connection
    /// on the client's side and drops it on the server's: the client waits for a greeting
    /// that never comes. A thousand clients starting together left 271 of them waiting
    /// forever. MySQL sizes its queue (`back_log`) from `max_connections` too.
    pub fn bind(&self, addr: SocketAddr) -> io::Result<TcpListener> {
        let socket = match addr {
            SocketAddr::V4(_) => TcpSocket::new_v4()?,
            SocketAddr::V6(_) => TcpSocket::new_v6()?,
        };
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        let listener = socket.listen(self.backlog())?;
        let port = listener.local_addr()?.port();
        self.shared.update_listening(|l| l.port = port);
        Ok(listener)
    }

    /// A listener on the Unix-domain socket `path`, which `@@socket` then reports (so a
    /// client that prefers the socket, as the Rust `mysql` crate does by default on
    /// loopback, moves to it).
    ///
    /// As `mysqld` does, a file left at `path` by a server that is gone is replaced, one a
    /// live server answers on is an error (`AddrInUse`), and the socket is open to every
    /// user of the machine (mode 0777). The queue of connections not
    /// yet accepted is the kernel's largest (`net.core.somaxconn`); a Unix-domain client
    /// waits in `connect` while it is full, it is never dropped.
    pub fn bind_unix(&self, path: &Path) -> io::Result<UnixListener> {
        let with_path = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
        if path.exists() {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                let e = io::Error::new(io::ErrorKind::AddrInUse, "another server listens on it");
                return Err(with_path(e));
            }
            std::fs::remove_file(path).map_err(with_path)?;
        }
        let listener = UnixListener::bind(path).map_err(with_path)?;
        // Anyone on the machine may connect, as to mysqld's socket: users and passwords
        // decide who gets in.
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777))
            .map_err(with_path)?;
        self.shared
            .update_listening(|l| l.socket = path.display().to_string());
        Ok(listener)
    }

    /// Accepts TCP connections on `listener` until it fails.
    pub async fn serve(&self, listener: TcpListener) -> io::Result<()> {
        loop {
            let (stream, _) = listener.accept().await?;
            // Replies are whole (see `wire.rs`): Nagle would only delay them.
            let _ = stream.set_nodelay(true);
            self.accept(stream, |s| s.into_std());
        }
    }

    /// Accepts connections on the Unix-domain `listener` until it fails.
    pub async fn serve_unix(&self, listener: UnixListener) -> io::Result<()> {
        loop {
            let (stream, _) = listener.accept().await?;
            self.accept(stream, UnixStream::into_std);
        }
    }

    /// Starts connection `stream`, as the blocking socket `into_std` makes of it, on a
    /// thread of its own or in the pool; or turns it away with error 1040.
    fn accept<T, S>(&self, mut stream: T, into_std: impl FnOnce(T) -> io::Result<S>)
    where
        T: AsyncWrite + Unpin + Send + 'static,
        S: Socket,
    {
        let counters = &self.shared.counters;
        // Relaxed: a limit on connections, not a synchronisation.
        if counters.threads_connected.load(Ordering::Relaxed) as usize >= self.max_connections {
            tokio::spawn(async move {
                let _ = stream.write_all(&too_many_connections()).await;
                let _ = stream.shutdown().await;
            });
            return;
        }
        counters.threads_connected.fetch_add(1, Ordering::Relaxed);
        counters.connections.fetch_add(1, Ordering::Relaxed);
        let statements = Arc::new(crate::statements::Statements::default());
        let backend = Backend::new(Arc::clone(&self.shared), Arc::clone(&statements));
        let max_packet = self.shared.config.max_allowed_packet;
        let connect_timeout = self.shared.config.connect_timeout;
        // One thread per connection, as MySQL's default: a statement may block on a row lock
        // or an admission permit, and then only its own connection waits. The thread reads
        // and writes its socket with blocking calls (see `wire.rs`).
        // On failure the backend is dropped, which counts the connection out again.
        let Ok(std_stream) = into_std(stream) else {
            return;
        };
        let id = backend.session().lock().connection_id();
        let limits = (max_packet, connect_timeout);
        if let Some(pool) = &self.pool {
            // Its thread is the pool's, one statement at a time.
            let in_transaction = Arc::new(AtomicBool::new(false));
            let hint = Arc::clone(&in_transaction);
            let register = |socket| pool.register(id, socket);
            let state = (backend, statements);
            let Ok(connection) = Connection::pooled(std_stream, register, state, limits, hint)
            else {
                return;
            };
            quiet_connection_panics();
            pool.start(id, Box::pin(connection.into_job()), in_transaction);
            return;
        }
        let Ok(connection) = Connection::new(std_stream, backend, statements, limits) else {
            return;
        };
        // If the thread cannot start, the closure and its backend are dropped here.
        quiet_connection_panics();
        let _ = std::thread::Builder::new()
            .name(CONNECTION_THREAD.into())
            .stack_size(waterline_sql::SESSION_STACK)
            .spawn(move || {
                // A bug met on one connection ends that connection alone: unwinding drops
                // its backend, which rolls its transaction back (freeing its row locks and
                // admission permit) and counts it out.
                let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    connection.serve();
                }));
                if let Err(panic) = served {
                    report_panic(id, &*panic);
                }
            });
    }

    /// Binds `addr` and serves on a new multi-threaded tokio runtime in a background thread;
    /// returns the address bound (port 0 picks one). For tests and embedding.
    pub fn spawn(self, addr: SocketAddr) -> io::Result<SocketAddr> {
        let (runtime, listener) = in_runtime(|| self.bind(addr))?;
        let bound = listener.local_addr()?;
        run_in_background(runtime, async move { self.serve(listener).await })?;
        Ok(bound)
    }

    /// Binds the Unix-domain socket `path` and serves it on a new tokio runtime in a
    /// background thread. For tests and embedding.
    pub fn spawn_unix(self, path: &Path) -> io::Result<()> {
        let (runtime, listener) = in_runtime(|| self.bind_unix(path))?;
        run_in_background(runtime, async move { self.serve_unix(listener).await })
    }
}

/// A new multi-threaded runtime, and a listener `bind` makes inside it.
fn in_runtime<L>(bind: impl FnOnce() -> io::Result<L>) -> io::Result<(tokio::runtime::Runtime, L)> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let listener = {
        let _reactor = runtime.enter();
        bind()?
    };
    Ok((runtime, listener))
}

/// Runs `serving` on `runtime` in a thread of its own, until it fails.
fn run_in_background(
    runtime: tokio::runtime::Runtime,
    serving: impl Future<Output = io::Result<()>> + Send + 'static,
) -> io::Result<()> {
    std::thread::Builder::new()
        .name("waterline-server".into())
        .spawn(move || {
            let _ = runtime.block_on(serving);
        })?;
    Ok(())
}
