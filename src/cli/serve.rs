//! `waterline serve`: the MySQL-protocol server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::time::MissedTickBehavior;
use waterline::txn::Engine;
use waterline_server::{
    HighPrioMode, MAX_CONNECTIONS_DEFAULT, PoolConfig, Server, SessionConfig, Shared, Timeouts,
    User,
};

use super::Knobs;

/// `waterline serve` flags.
#[derive(Clone, Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (loopback by default: there is no TLS).
    #[arg(long, default_value = "127.0.0.1:3307")]
    pub listen: SocketAddr,
    /// Also listen on this Unix-domain socket (MySQL's `--socket`; `@@socket` reports it, and
    /// clients on the same machine connect through it, e.g. `mariadb -S PATH` or a URL with
    /// `?socket=PATH`). A file a live server answers on is an error; a stale one is replaced.
    /// The server removes it when SIGINT or SIGTERM stops it.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// A user, as NAME or NAME:PASSWORD (repeatable; default: root without a password).
    #[arg(long = "user", value_name = "NAME[:PASSWORD]")]
    pub users: Vec<String>,
    /// A database that exists at start (repeatable; default: waterline). They share one
    /// namespace of tables.
    #[arg(long = "database")]
    pub databases: Vec<String>,
    /// The most connections at a time; more get error 1040. Also the length of the queue of
    /// connections not yet accepted (MySQL's `back_log`), so that this many clients can
    /// connect at once.
    #[arg(long, default_value_t = MAX_CONNECTIONS_DEFAULT)]
    pub max_connections: u32,
    /// The largest statement accepted, in bytes.
    #[arg(long, default_value_t = 64 << 20)]
    pub max_allowed_packet: usize,
    /// Seconds a new connection has to log in before it is closed (MySQL's
    /// `connect_timeout`).
    #[arg(long, default_value_t = 10)]
    pub connect_timeout: u64,
    /// Seconds a connection may stay idle between statements before the server closes it
    /// (MySQL's `wait_timeout`; a session may set its own).
    #[arg(long, default_value_t = 28_800)]
    pub wait_timeout: u64,
    /// `wait_timeout` for clients that say they are interactive, as the mysql CLI does
    /// (MySQL's `interactive_timeout`).
    #[arg(long, default_value_t = 28_800)]
    pub interactive_timeout: u64,
    /// Seconds the server waits for the rest of a packet a client has begun to send
    /// (MySQL's `net_read_timeout`).
    #[arg(long, default_value_t = 30)]
    pub net_read_timeout: u64,
    /// Seconds a reply may wait for the client to read it (MySQL's `net_write_timeout`).
    #[arg(long, default_value_t = 60)]
    pub net_write_timeout: u64,
    /// Milliseconds a SELECT may run before it stops with error 3024; 0, the default, for
    /// no limit (MySQL's `max_execution_time`; the `MAX_EXECUTION_TIME(N)` hint overrides
    /// it for one statement).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub max_execution_time: u64,
    /// A lock-wait timeout (error 1205) rolls back the whole transaction instead of only the
    /// statement (InnoDB's `innodb_rollback_on_timeout`).
    #[arg(long)]
    pub rollback_on_timeout: bool,
    /// With `--data-dir`: take a checkpoint whenever this many bytes have been logged since
    /// the last one (looked at every second), so that a restart after a crash replays at
    /// most about this much log, and the log before it is deleted. The default is InnoDB's
    /// `innodb_redo_log_capacity` (100 MiB); 0 checkpoints only at shutdown.
    #[arg(long, value_name = "BYTES", default_value_t = 100 << 20)]
    pub checkpoint_log_bytes: u64,
    /// How connections get threads (MySQL's `thread_handling`): one each, or
    /// `pool-of-threads`, MariaDB's and Percona Server's thread pool, which runs the
    /// statements of all connections on a few threads per group (the book's Fig 8-33).
    #[arg(long, value_enum, default_value_t = ThreadHandling::OneThreadPerConnection)]
    pub thread_handling: ThreadHandling,
    /// The pool's groups: about one statement runs per group at a time (default: the
    /// CPUs).
    #[arg(long, value_name = "N")]
    pub thread_pool_size: Option<u32>,
    /// Statements a group may run at once beyond one, when the one waits or stalls.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub thread_pool_oversubscribe: u32,
    /// Milliseconds a group's queue may stand still before the group is stalled and gets
    /// another thread.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub thread_pool_stall_limit: u64,
    /// The pool's threads in all, at most.
    #[arg(long, value_name = "N", default_value_t = 65_536)]
    pub thread_pool_max_threads: u32,
    /// Seconds a pool thread with nothing to do waits before it ends.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub thread_pool_idle_timeout: u64,
    /// Which connections the pool takes first: those inside a transaction, while they
    /// have tickets (Percona's default), all, or none.
    #[arg(long, value_enum, default_value_t = HighPrio::Transactions)]
    pub thread_pool_high_prio_mode: HighPrio,
    /// Times in a row a connection inside a transaction may go first.
    #[arg(long, value_name = "N", default_value_t = u32::MAX)]
    pub thread_pool_high_prio_tickets: u32,
    /// Isolation, planner and engine.
    #[command(flatten)]
    pub knobs: Knobs,
}

/// `--thread-handling`, MySQL's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ThreadHandling {
    /// A thread of its own for every connection (MySQL's default).
    OneThreadPerConnection,
    /// The thread pool.
    PoolOfThreads,
}

/// `--thread-pool-high-prio-mode`, Percona's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HighPrio {
    /// Statements of connections inside a transaction.
    Transactions,
    /// Every statement.
    Statements,
    /// None.
    None,
}

/// A timeout of `n` seconds, at least one (as MySQL's lower bound).
fn secs(n: u64) -> std::time::Duration {
    std::time::Duration::from_secs(n.max(1))
}

impl ServeArgs {
    /// The thread pool the flags describe, if `--thread-handling pool-of-threads`.
    pub fn pool_config(&self) -> Option<PoolConfig> {
        if self.thread_handling != ThreadHandling::PoolOfThreads {
            return None;
        }
        let defaults = PoolConfig::default();
        Some(PoolConfig {
            size: self.thread_pool_size.unwrap_or(defaults.size).max(1),
            oversubscribe: self.thread_pool_oversubscribe,
            stall_limit: Duration::from_millis(self.thread_pool_stall_limit.max(1)),
            max_threads: self.thread_pool_max_threads.max(1),
            idle_timeout: secs(self.thread_pool_idle_timeout),
            high_prio_mode: match self.thread_pool_high_prio_mode {
                HighPrio::Transactions => HighPrioMode::Transactions,
                HighPrio::Statements => HighPrioMode::Statements,
                HighPrio::None => HighPrioMode::None,
            },
            high_prio_tickets: self.thread_pool_high_prio_tickets,
        })
    }

    /// The session settings the flags describe.
    pub fn session_config(&self) -> SessionConfig {
        let defaults = SessionConfig::default();
        let users = if self.users.is_empty() {
            defaults.users.clone()
        } else {
            self.users
                .iter()
                .map(|u| match u.split_once(':') {
                    Some((name, password)) => User {
                        name: name.into(),
                        password: password.into(),
                    },
                    None => User {
                        name: u.clone(),
                        password: String::new(),
                    },
                })
                .collect()
        };
        SessionConfig {
            databases: if self.databases.is_empty() {
                defaults.databases
            } else {
                self.databases.clone()
            },
            isolation: self.knobs.isolation.into(),
            planner: self.knobs.planner,
            users,
            max_allowed_packet: self.max_allowed_packet,
            connect_timeout: std::time::Duration::from_secs(self.connect_timeout.max(1)),
            timeouts: Timeouts {
                wait: secs(self.wait_timeout),
                interactive: secs(self.interactive_timeout),
                net_read: secs(self.net_read_timeout),
                net_write: secs(self.net_write_timeout),
                max_execution: std::time::Duration::from_millis(self.max_execution_time),
            },
            rollback_on_timeout: self.rollback_on_timeout,
        }
    }
}

/// Raises this process's limit on open files (each connection holds one) towards what
/// `max_connections` needs, as far as the hard limit allows, as mysqld sizes its
/// `open_files_limit`; a limit that stays too low is said.
fn raise_open_files_limit(max_connections: u64) {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{Resource, getrlimit, setrlimit};
        let wanted = max_connections + 256;
        let mut limit = getrlimit(Resource::Nofile);
        let current = limit.current.unwrap_or(u64::MAX);
        if current >= wanted {
            return;
        }
        let raised = limit.maximum.map_or(wanted, |hard| hard.min(wanted));
        limit.current = Some(raised);
        if setrlimit(Resource::Nofile, limit).is_err() || raised < wanted {
            eprintln!(
                "waterline: open files limited to {}, under the {wanted} that \
                 --max-connections {max_connections} needs",
                raised.max(current)
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = max_connections;
}

/// Runs the server until it fails or is told to stop (SIGINT or SIGTERM, as `mysqld`, or
/// SHUTDOWN from root): then
/// it stops listening, removes its socket file, and with `--data-dir` takes a checkpoint so
/// that the next start replays no log. Connections still open are dropped and their
/// transactions, never committed, are lost as a client that went away loses them.
pub fn run(args: ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    if matches!(
        args.knobs.engine.admission,
        waterline::throttle::Policy::ThreadPool(_)
    ) {
        return Err(
            "--admission pool:N is the tpcc native backend's baseline, a pool of whole \
             transactions; the server's thread pool is --thread-handling pool-of-threads \
             (or limit transactions with --admission limit:N or adaptive)"
                .into(),
        );
    }
    let pool = args.pool_config();
    raise_open_files_limit(u64::from(args.max_connections));
    let (engine, recovery) = args.knobs.engine.open()?;
    if let Some(recovery) = recovery {
        eprintln!("recovered: {recovery}");
    }
    let shared = Shared::new(Arc::clone(&engine), args.session_config());
    let mut server = Server::new(Arc::clone(&shared), args.max_connections as usize);
    if let Some(pool) = pool {
        server = server.thread_pool(pool)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // Set once this server owns the socket file: one a live server answers on is not ours
    // to remove when binding it fails.
    let mut socket_bound = false;
    let stopped_by = runtime.block_on(async {
        // Before the greeting line: a signal sent once it is out is never missed.
        let mut stop = Stop::listen()?;
        let listener = server.bind(args.listen)?;
        let unix = args
            .socket
            .as_deref()
            .map(|path| server.bind_unix(path))
            .transpose()?;
        socket_bound = unix.is_some();
        let also = args
            .socket
            .as_deref()
            .map_or(String::new(), |path| format!(" and {}", path.display()));
        eprintln!(
            "waterline {} listening on {}{also}",
            waterline_server::VERSION,
            listener.local_addr()?
        );
        let serving = async {
            match unix {
                Some(unix) => {
                    tokio::try_join!(server.serve(listener), server.serve_unix(unix)).map(drop)
                }
                None => server.serve(listener).await,
            }
        };
        tokio::select! {
            outcome = serving => outcome.map(|()| None),
            signal = stop.next() => Ok(Some(signal)),
            () = shared.shutdown_requested() => Ok(Some("SHUTDOWN")),
            () = checkpoints(Arc::clone(&engine), args.checkpoint_log_bytes) => Ok(None),
        }
    });
    // Whatever ended the serving, the socket file names a server no more.
    if let Some(path) = args.socket.as_ref().filter(|_| socket_bound) {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                eprintln!("could not remove {}: {e}", path.display());
            }
            _ => {}
        }
    }
    let Some(signal) = stopped_by? else {
        return Ok(());
    };
    eprintln!("{signal}: shutting down");
    if args.knobs.engine.data_dir.is_some() {
        eprintln!("{}", engine.checkpoint()?);
    }
    Ok(())
}

/// While the server runs: a checkpoint whenever `limit` bytes have been logged since the
/// last one (see [`ServeArgs::checkpoint_log_bytes`]), taken on a blocking thread while
/// connections go on. Never returns. A checkpoint that fails is reported and tried again
/// once another `limit` bytes are logged: the log it would have replaced is still whole.
async fn checkpoints(engine: Arc<Engine>, limit: u64) {
    if limit == 0 || engine.log_since_checkpoint().is_none() {
        return std::future::pending().await;
    }
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut due = limit;
    loop {
        tick.tick().await;
        let logged = engine.log_since_checkpoint().unwrap_or(0);
        if logged < due {
            continue;
        }
        let engine = Arc::clone(&engine);
        let began = Instant::now();
        let taken = tokio::task::spawn_blocking(move || engine.checkpoint()).await;
        match taken
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()))
        {
            Ok(report) => {
                eprintln!("{report} ({:.1} s)", began.elapsed().as_secs_f64());
                due = limit;
            }
            Err(e) => {
                eprintln!("checkpoint failed (the log is kept): {e}");
                due = logged.saturating_add(limit);
            }
        }
    }
}

/// The signals that stop the server.
struct Stop {
    interrupt: Signal,
    terminate: Signal,
}

impl Stop {
    fn listen() -> std::io::Result<Stop> {
        Ok(Stop {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// Waits for the first of them; its name.
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "SIGINT",
            _ = self.terminate.recv() => "SIGTERM",
        }
    }
}
