//! A connection's socket: one file descriptor, shared by the connection's reader, its two
//! writers (the filter's own replies and opensrv's) and whoever may have to stop the
//! connection (`KILL`, a statement that looks whether its client is still there).

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use waterline_sql::Peer;

/// A connected socket a connection's thread serves with blocking calls: TCP, or a
/// Unix-domain socket (`serve --socket`, the transport MySQL's local clients use).
pub trait Socket: AsFd + Send + Sync + Sized + 'static {
    /// Reads into `buf` through a shared reference (as `&TcpStream` reads).
    fn read_shared(&self, buf: &mut [u8]) -> io::Result<usize>;
    /// Writes `buf` through a shared reference.
    fn write_shared(&self, buf: &[u8]) -> io::Result<usize>;
    /// Closes one or both halves: with `Write`, the client reads end of stream; with
    /// `Both`, a read this connection's thread waits in returns end of stream too.
    fn shutdown(&self, how: Shutdown);
    /// Makes reads and writes wait (tokio, which accepted it, left it non-blocking).
    fn set_blocking(&self) -> io::Result<()>;
    /// How long a read waits before it fails (`None`: for ever).
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
    /// How long a write waits before it fails (`None`: for ever).
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
    /// Where the client is, as MySQL's processlist shows it: `ip:port` over TCP (MySQL's
    /// with `skip_name_resolve`), `localhost` over a Unix-domain socket.
    fn client_host(&self) -> String;
}

macro_rules! socket {
    ($t:ty, $host:expr) => {
        impl Socket for $t {
            fn read_shared(&self, buf: &mut [u8]) -> io::Result<usize> {
                (&*self).read(buf)
            }
            fn write_shared(&self, buf: &[u8]) -> io::Result<usize> {
                (&*self).write(buf)
            }
            fn shutdown(&self, how: Shutdown) {
                let _ = <$t>::shutdown(self, how);
            }
            fn set_blocking(&self) -> io::Result<()> {
                self.set_nonblocking(false)
            }
            fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
                <$t>::set_read_timeout(self, timeout)
            }
            fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
                <$t>::set_write_timeout(self, timeout)
            }
            fn client_host(&self) -> String {
                $host(self)
            }
        }
    };
}
socket!(TcpStream, |s: &TcpStream| s
    .peer_addr()
    .map_or_else(|_| String::new(), |a| a.to_string()));
socket!(UnixStream, |_: &UnixStream| "localhost".to_owned());

/// One user's handle to a connection's socket: every handle reads and writes the same file
/// descriptor (a connection costs one, as in MySQL, not one per handle).
#[derive(Debug)]
pub(crate) struct Handle<S>(pub(crate) Arc<S>);

impl<S> Clone for Handle<S> {
    fn clone(&self) -> Self {
        Handle(Arc::clone(&self.0))
    }
}

impl<S: Socket> Read for Handle<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read_shared(buf)
    }
}

impl<S: Socket> Write for Handle<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_shared(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<S: Socket> Peer for Handle<S> {
    fn gone(&self) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let mut fds = [PollFd::new(&*self.0, PollFlags::RDHUP)];
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        match poll(&mut fds, Some(&now)) {
            Ok(0) => false,
            Ok(_) => fds[0]
                .revents()
                .intersects(PollFlags::RDHUP | PollFlags::HUP | PollFlags::ERR),
            Err(_) => false,
        }
    }

    fn close(&self) {
        Socket::shutdown(&*self.0, Shutdown::Both);
    }

    fn host(&self) -> String {
        self.0.client_host()
    }
}
