//! `waterline serve`: the MySQL-protocol server.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use waterline_server::{MAX_CONNECTIONS_DEFAULT, Server, SessionConfig, Shared, User};

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
    /// Isolation, planner and engine.
    #[command(flatten)]
    pub knobs: Knobs,
}

impl ServeArgs {
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
        }
    }
}

/// Runs the server until it fails or is killed.
pub fn run(args: ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    if matches!(
        args.knobs.engine.admission,
        waterline::throttle::Policy::ThreadPool(_)
    ) {
        return Err(
            "--admission pool:N is the tpcc native backend's baseline; the server runs \
                    one thread per connection (use limit:N or adaptive)"
                .into(),
        );
    }
    let (engine, recovery) = args.knobs.engine.open()?;
    if let Some(recovery) = recovery {
        eprintln!("recovered: {recovery}");
    }
    let shared = Shared::new(engine, args.session_config());
    let server = Server::new(shared, args.max_connections as usize);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = server.bind(args.listen)?;
        let unix = args
            .socket
            .as_deref()
            .map(|path| server.bind_unix(path))
            .transpose()?;
        let also = args
            .socket
            .as_deref()
            .map_or(String::new(), |path| format!(" and {}", path.display()));
        eprintln!(
            "waterline {} listening on {}{also}",
            waterline_server::VERSION,
            listener.local_addr()?
        );
        match unix {
            Some(unix) => {
                tokio::try_join!(server.serve(listener), server.serve_unix(unix)).map(drop)
            }
            None => server.serve(listener).await,
        }
    })?;
    Ok(())
}
