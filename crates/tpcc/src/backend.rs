//! Backends: where the transactions run, how the database is created and loaded there, and
//! how clients connect.
//!
//! | backend | transactions | loaded through | facts read with |
//! |---|---|---|---|
//! | `native` | typed API ([`crate::native`]) | the typed API | scans |
//! | `sql` | SQL text on embedded sessions | the typed API, after SQL DDL | SQL |
//! | `mysql://user:pw@host:port/db` | the same SQL text over the MySQL protocol | multi-row INSERTs | SQL |

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use waterline_planner::PlannerMode;
use waterline_sql::{SessionConfig, Shared};
use waterline_txn::{Admission, Engine, EngineConfig, Isolation, Policy, StatsSnapshot};

use crate::process::{Switches, Usage};

use crate::Error;
use crate::check::Facts;
use crate::client::{Client, Failure, OnThread};
use crate::conn::{EmbeddedConn, MysqlAsyncConn, MysqlConn, check_mysql_url};
use crate::driver::{DriverOptions, Measurement, OnThreadStart, run_tasks, run_threads};
use crate::load::{LoadReport, load};
use crate::native::{DeliveryClaim, NativeClient, NativeDb, NativeSink, StepOrder};
use crate::schema::Scale;
use crate::sql::{SqlClient, SqlConn, SqlSink, create_tables};

/// The database the embedded SQL backend creates.
pub const DATABASE: &str = "tpcc";

/// Which backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// In process, typed API.
    Native,
    /// In process, SQL sessions.
    Sql,
    /// A MySQL-protocol server at this URL.
    Mysql(String),
}

impl FromStr for BackendKind {
    type Err = String;
    fn from_str(s: &str) -> Result<BackendKind, String> {
        match s {
            "native" => Ok(BackendKind::Native),
            "sql" => Ok(BackendKind::Sql),
            url if url.starts_with("mysql://") => {
                check_mysql_url(url).map_err(|e| format!("{url}: {e}"))?;
                Ok(BackendKind::Mysql(url.to_owned()))
            }
            other => Err(format!(
                "{other:?}: expected native, sql, or mysql://user:password@host:port/database"
            )),
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendKind::Native => f.write_str("native"),
            BackendKind::Sql => f.write_str("sql"),
            BackendKind::Mysql(url) => f.write_str(&redact(url)),
        }
    }
}

/// `url` without its password.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            let user = credentials.split(':').next().unwrap_or_default();
            format!("{}{user}@{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

/// The knobs of an in-process engine, and the session settings of every backend.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The engine's configuration (in-process backends).
    pub engine: EngineConfig,
    /// Keep the data durably here (in-process backends; `None`: in memory).
    pub data_dir: Option<std::path::PathBuf>,
    /// The isolation level of every transaction.
    pub isolation: Isolation,
    /// The planner's range analysis (embedded SQL backend).
    pub planner: PlannerMode,
    /// Where the native backend's NewOrder and Payment lock their hottest row.
    pub order: StepOrder,
    /// How the native backend's Delivery claims an order.
    pub claim: DeliveryClaim,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            engine: EngineConfig::default(),
            data_dir: None,
            isolation: Isolation::RepeatableRead,
            planner: PlannerMode::Fixed,
            order: StepOrder::default(),
            claim: DeliveryClaim::default(),
        }
    }
}

/// A loaded database, ready for clients.
pub enum Target {
    /// In process, typed API.
    Native(Arc<NativeDb>),
    /// In process, SQL sessions over the same engine.
    Sql {
        /// What the sessions share.
        shared: Arc<Shared>,
        /// The same engine's tables, for loading.
        native: Arc<NativeDb>,
    },
    /// A MySQL-protocol server.
    Mysql {
        /// Where.
        url: String,
        /// `SET SESSION TRANSACTION ISOLATION LEVEL ...` for each connection.
        isolation: Isolation,
    },
}

/// A `Policy::ThreadPool` admission becomes the native database's pool, and the engine is
/// opened without admission; any other policy stays the engine's.
fn split_pool(settings: &Settings) -> Result<(Settings, Option<Admission>), Error> {
    match settings.engine.admission {
        Policy::ThreadPool(_) => {
            let pool = Admission::new(settings.engine.admission)
                .map_err(|e| Error::Config(e.to_string()))?;
            let mut engine = settings.clone();
            engine.engine.admission = Policy::Unlimited;
            Ok((engine, Some(pool)))
        }
        _ => Ok((settings.clone(), None)),
    }
}

fn open_engine(settings: &Settings) -> Result<Arc<Engine>, Error> {
    Ok(Arc::new(match &settings.data_dir {
        Some(dir) => Engine::open_dir(dir, settings.engine.clone())?.0,
        None => Engine::open(settings.engine.clone())?,
    }))
}

fn isolation_sql(isolation: Isolation) -> &'static str {
    match isolation {
        Isolation::ReadCommitted => "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
        Isolation::RepeatableRead => "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    }
}

impl Target {
    /// Creates the tables of `kind` and loads `scale` with `seed`, on `threads` loaders.
    pub fn create(
        kind: &BackendKind,
        settings: &Settings,
        scale: Scale,
        seed: u64,
        threads: usize,
    ) -> Result<(Target, LoadReport), Error> {
        match kind {
            BackendKind::Native => {
                let (settings, pool) = split_pool(settings)?;
                let engine = open_engine(&settings)?;
                let db = Arc::new(
                    NativeDb::create(engine, settings.isolation)?
                        .with_pool(pool)
                        .with_order(settings.order)
                        .with_claim(settings.claim),
                );
                let report = load(scale, seed, threads, || Ok(NativeSink(Arc::clone(&db))))?;
                Ok((Target::Native(db), report))
            }
            BackendKind::Sql => {
                let engine = open_engine(settings)?;
                let config = SessionConfig {
                    databases: vec![DATABASE.into()],
                    isolation: settings.isolation,
                    planner: settings.planner,
                    ..SessionConfig::default()
                };
                let shared = Shared::new(Arc::clone(&engine), config);
                OnThread::open(async || EmbeddedConn::new(Arc::clone(&shared), DATABASE))?
                    .run(async |conn| create_tables(conn).await)?;
                let native = Arc::new(NativeDb::open(engine, settings.isolation)?);
                let report = load(scale, seed, threads, || Ok(NativeSink(Arc::clone(&native))))?;
                Ok((Target::Sql { shared, native }, report))
            }
            BackendKind::Mysql(url) => {
                OnThread::open(async || MysqlConn::connect(url))?
                    .run(async |conn| create_tables(conn).await)?;
                let report = load(scale, seed, threads, || {
                    Ok(SqlSink(OnThread::open(async || MysqlConn::connect(url))?))
                })?;
                let target = Target::Mysql {
                    url: url.clone(),
                    isolation: settings.isolation,
                };
                Ok((target, report))
            }
        }
    }

    /// A new client for an OS thread (a connection, for the SQL backends).
    pub fn connect(&self) -> Result<Box<dyn Client>, Failure> {
        Ok(match self {
            Target::Native(db) => Box::new(NativeClient(Arc::clone(db))),
            Target::Sql { shared, .. } => {
                let shared = Arc::clone(shared);
                Box::new(OnThread::open(async || embedded_client(shared))?)
            }
            Target::Mysql { url, isolation } => Box::new(OnThread::open(async || {
                mysql_client(url, *isolation).await
            })?),
        })
    }

    /// Runs `options` as OS-thread clients; `connect_on` runs on each client's thread first.
    pub fn run_threads(
        &self,
        options: &DriverOptions,
        connect_on: Option<&OnThreadStart>,
        on_measure: &dyn Fn(bool),
    ) -> Measurement {
        let connect = |client: usize| {
            if let Some(on_start) = connect_on {
                on_start(client);
            }
            self.connect()
        };
        run_threads(options, connect, on_measure)
    }

    /// Runs `options` as tokio tasks on `workers` threads, each of which runs `on_start` as
    /// it starts.
    pub fn run_tasks(
        &self,
        options: &DriverOptions,
        workers: usize,
        on_start: Option<OnThreadStart>,
        on_measure: &dyn Fn(bool),
    ) -> Measurement {
        match self {
            Target::Native(db) => {
                let connect = |_| std::future::ready(Ok(NativeClient(Arc::clone(db))));
                run_tasks(options, workers, connect, on_measure, on_start)
            }
            Target::Sql { shared, .. } => {
                let connect = |_| std::future::ready(embedded_client(Arc::clone(shared)));
                run_tasks(options, workers, connect, on_measure, on_start)
            }
            Target::Mysql { url, isolation } => {
                let connect = |_| {
                    let (url, isolation) = (url.clone(), *isolation);
                    async move { mysql_task_client(&url, isolation).await }
                };
                run_tasks(options, workers, connect, on_measure, on_start)
            }
        }
    }

    /// The facts the consistency conditions check.
    pub fn facts(&self) -> Result<Facts, Error> {
        let facts = match self {
            Target::Native(db) => return Facts::from_native(db),
            Target::Sql { shared, .. } => {
                OnThread::open(async || EmbeddedConn::new(Arc::clone(shared), DATABASE))?
                    .run(async |conn| Facts::from_sql(conn).await)
            }
            Target::Mysql { url, .. } => OnThread::open(async || MysqlConn::connect(url))?
                .run(async |conn| Facts::from_sql(conn).await),
        };
        Ok(facts?)
    }

    /// The in-process engine, if there is one.
    pub fn engine(&self) -> Option<&Arc<Engine>> {
        match self {
            Target::Native(db) | Target::Sql { native: db, .. } => Some(&db.engine),
            Target::Mysql { .. } => None,
        }
    }

    /// The engine's counters now (in-process backends).
    pub fn stats(&self) -> Option<StatsSnapshot> {
        self.engine().map(|e| e.stats())
    }

    /// The configuration in force, read back: the in-process engine's own config, and the
    /// isolation level (and planner mode) a client's session has, as a client's connection
    /// gets them. A report states this for every point, so that what it says ran is what
    /// ran, whatever the command line said.
    pub fn effective(&self) -> Result<String, Error> {
        match self {
            Target::Native(db) => {
                let pool = match &db.pool {
                    Some(p) => format!(", whole transactions on {}", p.policy().name()),
                    None => String::new(),
                };
                Ok(format!(
                    "{}, isolation={}, step_order={}, delivery_claim={}{pool}",
                    describe_engine(&db.engine),
                    isolation_name(db.isolation),
                    db.order.name(),
                    db.claim.name()
                ))
            }
            Target::Sql { shared, native } => {
                let session =
                    OnThread::open(async || EmbeddedConn::new(Arc::clone(shared), DATABASE))?.run(
                        async |conn| {
                            conn.query(
                                "SELECT @@transaction_isolation, @@waterline_planner_mode",
                                &[],
                            )
                            .await
                        },
                    )?;
                Ok(format!(
                    "{}, {}",
                    describe_engine(&native.engine),
                    describe_session(&session)
                ))
            }
            Target::Mysql { url, isolation } => {
                let (session, flush, server) = OnThread::open(async || MysqlConn::connect(url))?
                    .run(async |conn| {
                        conn.text(isolation_sql(*isolation)).await?;
                        // MariaDB 10.11 has no @@transaction_isolation; both have @@tx_isolation.
                        let session = conn.query("SELECT @@tx_isolation, @@version", &[]).await?;
                        // What a commit's acknowledgement means (MySQL and MariaDB have it).
                        let flush = conn
                            .query("SELECT @@innodb_flush_log_at_trx_commit", &[])
                            .await
                            .ok();
                        // A waterline server's threads, admission and durability; other
                        // servers may have no such variables.
                        let server = conn
                            .query(
                                "SELECT @@thread_handling, @@thread_pool_size, \
                                 @@thread_pool_oversubscribe, @@waterline_admission, \
                                 @@waterline_durability, @@waterline_lock_release",
                                &[],
                            )
                            .await
                            .ok();
                        Ok::<_, Failure>((session, flush, server))
                    })?;
                let mut described = describe_session(&session);
                if let Some(value) = flush
                    .as_ref()
                    .and_then(|rows| rows.first())
                    .and_then(|row| row.first())
                    .and_then(waterline_sql::types::text)
                {
                    described.push_str(&format!(", innodb_flush_log_at_trx_commit={value}"));
                }
                if let Some(row) = server.as_ref().and_then(|rows| rows.first()) {
                    let text = |i: usize| {
                        row.get(i)
                            .and_then(waterline_sql::types::text)
                            .unwrap_or_else(|| "?".into())
                    };
                    described.push_str(&format!(", thread_handling={}", text(0)));
                    if text(0) == "pool-of-threads" {
                        described.push_str(&format!(
                            " (thread_pool_size={}, thread_pool_oversubscribe={})",
                            text(1),
                            text(2)
                        ));
                    }
                    described.push_str(&format!(
                        ", admission={}, durability={}, lock_release={}",
                        text(3),
                        text(4),
                        text(5)
                    ));
                }
                Ok(described)
            }
        }
    }

    /// What the engine's process has spent so far: this process's for the in-process
    /// backends; over `mysql://`, the server's, as a waterline server reports it in SHOW
    /// STATUS (`None` from a server that does not).
    pub fn usage(&self) -> Option<Usage> {
        let Target::Mysql { url, .. } = self else {
            return Usage::now();
        };
        let status = MysqlConn::connect(url).ok()?.status("Waterline").ok()?;
        let status = |name: &str| status.get(name).and_then(|v| v.parse::<u64>().ok());
        let us = |name: &str| status(name).map(std::time::Duration::from_micros);
        Some(Usage {
            user: us("Waterline_cpu_user_us")?,
            system: us("Waterline_cpu_system_us")?,
            resident: status("Waterline_resident_bytes")?,
            switches: Switches {
                voluntary: status("Waterline_voluntary_context_switches")?,
                involuntary: status("Waterline_involuntary_context_switches")?,
            },
        })
    }
}

fn isolation_name(i: Isolation) -> &'static str {
    match i {
        Isolation::ReadCommitted => "READ-COMMITTED",
        Isolation::RepeatableRead => "REPEATABLE-READ",
    }
}

/// An engine's knobs, from its own config.
fn describe_engine(engine: &Engine) -> String {
    let c = engine.config();
    let us = |d: std::time::Duration| format!("{} µs", d.as_micros());
    let mut out = format!(
        "snapshot={}, view_close={}, trx_shards={}, lock_wait_timeout={} s, lock_spin={}, \
         lock_holder_boost={}, implicit_insert_locks={}, gap_locks={}, purge_interval={}, \
         commit_purge={}, admission={}",
        c.snapshot.name(),
        c.view_close.name(),
        c.trx_shards,
        c.lock_wait_timeout.as_secs_f64(),
        us(c.lock_spin),
        c.lock_holder_boost,
        c.implicit_insert_locks,
        c.gap_locks,
        c.purge_interval
            .map_or_else(|| "off".to_owned(), |d| format!("{} ms", d.as_millis())),
        c.commit_purge,
        c.admission.name(),
    );
    if c.snapshot == waterline_txn::SnapshotKind::Hybrid {
        out.push_str(", hybrid_layout=");
        out.push_str(c.hybrid_layout.name());
    }
    if engine.commit_stats().is_some() {
        let g = &c.commit.group;
        out.push_str(&format!(
            ", durable: flush={}, wakeup={}, lock_release={}, sync_delay={}, sync_no_delay_count={}",
            c.commit.flush.name(),
            g.wakeup.name(),
            c.commit.lock_release.name(),
            us(g.sync_delay),
            g.sync_no_delay_count
        ));
    } else {
        out.push_str(", in memory");
    }
    out
}

/// `isolation=..., planner=...` (or `server=...`) from a row of session variables.
fn describe_session(rows: &[waterline_txn::Row]) -> String {
    let text = |i: usize| {
        rows.first()
            .and_then(|r| r.get(i))
            .and_then(waterline_sql::types::text)
            .unwrap_or_else(|| "?".into())
    };
    let second = if text(1).contains('.') {
        format!("server={}", text(1))
    } else {
        format!("planner={}", text(1))
    };
    format!("isolation={}, {second}", text(0))
}

/// A client on an embedded session.
fn embedded_client(shared: Arc<Shared>) -> Result<SqlClient<EmbeddedConn>, Failure> {
    Ok(SqlClient::new(EmbeddedConn::new(shared, DATABASE)?))
}

/// A client on a new connection to `url`, at `isolation`, for an OS thread.
async fn mysql_client(url: &str, isolation: Isolation) -> Result<SqlClient<MysqlConn>, Failure> {
    let mut conn = MysqlConn::connect(url)?;
    conn.text(isolation_sql(isolation)).await?;
    Ok(SqlClient::new(conn))
}

/// [`mysql_client`] for a tokio task.
async fn mysql_task_client(
    url: &str,
    isolation: Isolation,
) -> Result<SqlClient<MysqlAsyncConn>, Failure> {
    let mut conn = MysqlAsyncConn::connect(url).await?;
    conn.text(isolation_sql(isolation)).await?;
    Ok(SqlClient::new(conn))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_parse_and_hide_passwords() {
        assert_eq!("native".parse(), Ok(BackendKind::Native));
        assert_eq!("sql".parse(), Ok(BackendKind::Sql));
        let mysql: BackendKind = "mysql://root:secret@127.0.0.1:3307/tpcc".parse().unwrap();
        assert_eq!(mysql.to_string(), "mysql://root@127.0.0.1:3307/tpcc");
        assert!("postgres://x".parse::<BackendKind>().is_err());
    }
}
