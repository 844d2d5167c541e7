//! The listener: accepts connections up to `max_connections` (error 1040 beyond), and runs
//! each through opensrv-mysql on its own task.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpSocket, TcpStream};

use crate::protocol::Backend;
use crate::shared::Shared;

/// The server: shared state and its connection limit.
#[derive(Clone, Debug)]
pub struct Server {
    shared: Arc<Shared>,
    max_connections: usize,
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
        Server {
            shared,
            max_connections,
        }
    }

    /// The shared state.
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
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
        socket.listen(
            u32::try_from(self.max_connections)
                .unwrap_or(u32::MAX)
                .max(128),
        )
    }

    /// Accepts connections on `listener` until it fails.
    pub async fn serve(&self, listener: TcpListener) -> io::Result<()> {
        loop {
            let (stream, _) = listener.accept().await?;
            self.accept(stream);
        }
    }

    fn accept(&self, mut stream: TcpStream) {
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
        let _ = stream.set_nodelay(true);
        let statements = Arc::new(crate::wire::Statements::default());
        let backend = Backend::new(Arc::clone(&self.shared), Arc::clone(&statements));
        let max_packet = self.shared.config.max_allowed_packet;
        // One thread per connection, as MySQL's default: a statement may block on a row lock
        // or an admission permit, and then only its own connection waits. The thread reads
        // and writes its socket with blocking calls (see `wire.rs`).
        // On failure the backend is dropped, which counts the connection out again.
        let Ok(std_stream) = stream.into_std() else {
            return;
        };
        // If the thread cannot start, the closure and its backend are dropped here.
        let _ = std::thread::Builder::new()
            .name("waterline-conn".into())
            .spawn(move || {
                if std_stream.set_nonblocking(false).is_ok() {
                    crate::wire::serve(std_stream, backend, statements, max_packet);
                }
            });
    }

    /// Binds `addr` and serves on a new multi-threaded tokio runtime in a background thread;
    /// returns the address bound (port 0 picks one). For tests and embedding.
    pub fn spawn(self, addr: SocketAddr) -> io::Result<SocketAddr> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        let listener = {
            let _reactor = runtime.enter();
            self.bind(addr)?
        };
        let bound = listener.local_addr()?;
        std::thread::Builder::new()
            .name("waterline-server".into())
            .spawn(move || {
                let _ = runtime.block_on(self.serve(listener));
            })?;
        Ok(bound)
    }
}
