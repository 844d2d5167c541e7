//! What every session of one server shares: the engine, the databases, the table metadata
//! the engine's schema does not have (defaults, AUTO_INCREMENT, foreign keys), and the
//! status counters.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::task::{Poll, Waker};
use std::time::Duration;

use parking_lot::Mutex;
use waterline_planner::PlannerMode;
use waterline_txn::{Engine, Isolation, Table, Value};

/// A user allowed to connect, with a plain-text password checked by mysql_native_password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    /// The user name.
    pub name: String,
    /// The password (empty: none).
    pub password: String,
}

/// How sessions behave.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// Databases that exist at start, besides those made by CREATE DATABASE (kept by a
    /// durable engine). The first is the home database, whose tables have their own names
    /// in the engine (see `names.rs`): the tables made through the engine's typed API are
    /// its tables.
    pub databases: Vec<String>,
    /// The isolation level a new session starts with (MySQL's default: REPEATABLE READ).
    pub isolation: Isolation,
    /// The planner's range analysis.
    pub planner: PlannerMode,
    /// The users, with their passwords.
    pub users: Vec<User>,
    /// The largest packet (statement) accepted, in bytes (MySQL's `max_allowed_packet`).
    pub max_allowed_packet: usize,
    /// How long a new connection has to log in (MySQL's `connect_timeout`, 10 s): one
    /// that has not by then is closed, and its slot of `max_connections` freed.
    pub connect_timeout: std::time::Duration,
    /// The timeouts a new session starts with (each session may change its own).
    pub timeouts: Timeouts,
    /// A lock-wait timeout (1205) rolls back the whole transaction, not only the statement
    /// (InnoDB's `innodb_rollback_on_timeout`, off by default).
    pub rollback_on_timeout: bool,
}

/// MySQL's per-session timeouts, as a session starts with them (`SET SESSION` changes
/// a session's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// `wait_timeout` (8 hours): a connection idle this long between statements is closed
    /// (after error 4031, as MySQL 8.0 sends).
    pub wait: Duration,
    /// `interactive_timeout` (8 hours): `wait` for a client that says it is interactive
    /// (`CLIENT_INTERACTIVE`, as the mysql CLI does), set when it logs in.
    pub interactive: Duration,
    /// `net_read_timeout` (30 s): the longest wait for the rest of a packet the client has
    /// begun to send.
    pub net_read: Duration,
    /// `net_write_timeout` (60 s): the longest a reply may wait for the client to read.
    pub net_write: Duration,
    /// `max_execution_time` (0: none): the longest a SELECT may run before it stops with
    /// error 3024 (the `MAX_EXECUTION_TIME(N)` optimizer hint overrides it for one).
    pub max_execution: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            wait: Duration::from_secs(28_800),
            interactive: Duration::from_secs(28_800),
            net_read: Duration::from_secs(30),
            net_write: Duration::from_secs(60),
            max_execution: Duration::ZERO,
        }
    }
}

impl Default for SessionConfig {
    fn default() -> SessionConfig {
        SessionConfig {
            databases: vec!["waterline".into()],
            isolation: Isolation::RepeatableRead,
            planner: PlannerMode::Fixed,
            users: vec![User {
                name: "root".into(),
                password: String::new(),
            }],
            max_allowed_packet: 64 << 20,
            connect_timeout: std::time::Duration::from_secs(10),
            timeouts: Timeouts::default(),
            rollback_on_timeout: false,
        }
    }
}

/// What the engine's schema lacks: per table, each column's DEFAULT, the AUTO_INCREMENT
/// column with its next value, and the table's foreign keys. Kept with the table as its
/// attributes ([`Engine::set_table_attributes`]), so a restart of a durable engine keeps
/// them; AUTO_INCREMENT resumes past the largest key after a restart.
#[derive(Clone, Debug, Default)]
pub struct TableMeta {
    /// Per column: its DEFAULT, if it has one.
    pub defaults: Vec<Option<Value>>,
    /// The AUTO_INCREMENT column, if any.
    pub auto_increment: Option<usize>,
    /// The next AUTO_INCREMENT value (0: not known yet; found from the table's largest value).
    pub next_id: i64,
    /// The table's foreign keys (the table is their child).
    pub foreign_keys: Vec<crate::foreign::ForeignKey>,
}

/// [`TableMeta`] as it is kept with the table: a DEFAULT as its text, which stores into
/// the column as the value it was (as MySQL's data dictionary keeps it).
#[derive(serde::Serialize, serde::Deserialize)]
struct Kept {
    defaults: Vec<Option<String>>,
    auto_increment: Option<usize>,
    foreign_keys: Vec<crate::foreign::ForeignKey>,
}

impl TableMeta {
    /// The metadata of a table that has none: no DEFAULTs, no AUTO_INCREMENT, no keys.
    pub(crate) fn empty(table: &Table) -> TableMeta {
        TableMeta {
            defaults: vec![None; table.schema().columns.len()],
            ..TableMeta::default()
        }
    }

    fn to_text(&self) -> String {
        let kept = Kept {
            defaults: (self.defaults.iter())
                .map(|d| d.as_ref().and_then(crate::types::text))
                .collect(),
            auto_increment: self.auto_increment,
            foreign_keys: self.foreign_keys.clone(),
        };
        serde_json::to_string(&kept).expect("plain data serializes")
    }

    /// The metadata kept as `text` with `table` (empty if it cannot be read).
    fn from_text(table: &Table, text: &str) -> TableMeta {
        let Ok(kept) = serde_json::from_str::<Kept>(text) else {
            return TableMeta::empty(table);
        };
        let columns = &table.schema().columns;
        let defaults = (columns.iter().enumerate())
            .map(|(i, c)| {
                let text = kept.defaults.get(i).cloned().flatten()?;
                crate::types::store(c, Value::from(text), true, 1, &mut Vec::new()).ok()
            })
            .collect();
        TableMeta {
            defaults,
            auto_increment: kept.auto_increment.filter(|&c| c < columns.len()),
            next_id: 0,
            foreign_keys: kept.foreign_keys,
        }
    }
}

/// Where the server keeps `table`'s metadata: under its name, or for a temporary table
/// (which may share a base table's name) under its id.
pub(crate) fn meta_key(table: &Table) -> String {
    if table.is_temporary() {
        format!("#temporary-{}", table.id().0)
    } else {
        table.name().to_ascii_lowercase()
    }
}

/// Status counters (SHOW STATUS).
#[derive(Debug, Default)]
pub struct Counters {
    /// Statements received.
    pub questions: AtomicU64,
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Connections open now.
    pub threads_connected: AtomicU64,
    /// Rows read by plans (before their conditions).
    pub rows_examined: AtomicU64,
    /// Rows sent to clients.
    pub rows_sent: AtomicU64,
    /// Transactions the server rolled back itself after a deadlock or lock wait timeout.
    pub implicit_rollbacks: AtomicU64,
    /// The thread pool's workers (`--thread-handling pool-of-threads`).
    pub threadpool_threads: AtomicU64,
    /// Those of them waiting for work.
    pub threadpool_idle_threads: AtomicU64,
}

/// Where the server listens, as `@@port`, `@@socket` and `@@max_connections` report it
/// (the server fills it in; a server that does not listen has port 0 and no
/// socket, as MySQL's `--skip-networking` reports).
#[derive(Clone, Debug)]
pub struct Listening {
    /// The TCP port (0: none).
    pub port: u16,
    /// The Unix-domain socket's path (empty: none).
    pub socket: String,
    /// The most connections at a time.
    pub max_connections: u32,
    /// How connections get threads (`@@thread_handling`): `one-thread-per-connection` or
    /// `pool-of-threads`.
    pub thread_handling: &'static str,
    /// The thread pool's settings, as `@@thread_pool_*` shows them (name without the
    /// prefix, value), whether or not the pool is used, as MariaDB shows them.
    pub thread_pool: Vec<(&'static str, Value)>,
}

impl Default for Listening {
    fn default() -> Listening {
        Listening {
            port: 0,
            socket: String::new(),
            max_connections: crate::MAX_CONNECTIONS_DEFAULT,
            thread_handling: "one-thread-per-connection",
            thread_pool: Vec::new(),
        }
    }
}

/// What the SQL layer knows of an engine beyond the engine's own schema: its databases, and
/// each table's [`TableMeta`]. Kept on the engine ([`Engine::extension`]), so every
/// [`Shared`] over one engine (a server's, the embedded sessions') sees the same.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    pub(crate) databases: Mutex<BTreeSet<String>>,
    /// Each table's metadata, read from its attributes the first time it is asked for.
    pub(crate) meta: Mutex<HashMap<String, TableMeta>>,
}

impl Catalog {
    /// Keeps the databases with the engine (logged, if it is durable).
    pub(crate) fn save_databases(&self, engine: &Engine) -> Result<(), crate::SqlError> {
        let all = self.databases.lock();
        let text = serde_json::to_string(&*all).expect("a list of names serializes");
        engine.set_attributes(&text)?;
        Ok(())
    }

    /// The databases the engine keeps, and those its tables' names are in.
    fn load_databases(&self, engine: &Engine) {
        let mut all = self.databases.lock();
        if let Some(text) = engine.attributes()
            && let Ok(kept) = serde_json::from_str::<Vec<String>>(&text)
        {
            all.extend(kept);
        }
        for table in engine.tables() {
            if let Some((db, _)) = table.name().split_once('.') {
                all.insert(db.to_ascii_lowercase());
            }
        }
    }

    /// `table`'s metadata: what this server has, else what the engine keeps with the table
    /// (after a restart), else none.
    pub(crate) fn meta_of(&self, engine: &Engine, table: &Table) -> TableMeta {
        let mut all = self.meta.lock();
        all.entry(meta_key(table))
            .or_insert_with(|| match engine.table_attributes(table) {
                Some(text) => TableMeta::from_text(table, &text),
                None => TableMeta::empty(table),
            })
            .clone()
    }

    /// The foreign keys that reference base table `parent`, each with its (child) table,
    /// the table itself among them if it references itself.
    pub(crate) fn referencing(
        &self,
        engine: &Engine,
        parent: &str,
    ) -> Vec<(Table, crate::foreign::ForeignKey)> {
        let mut found = Vec::new();
        for child in engine.tables() {
            for fk in self.meta_of(engine, &child).foreign_keys {
                if fk.parent.eq_ignore_ascii_case(parent) {
                    found.push((child.clone(), fk));
                }
            }
        }
        found
    }

    /// Forgets the metadata of base table `name` (dropped).
    pub(crate) fn forget(&self, name: &str) {
        self.meta.lock().remove(&name.to_ascii_lowercase());
    }

    /// Base table `from` is named `to` now (RENAME, ALTER TABLE's swap): its metadata
    /// moves with it, and whatever `to` had is gone.
    pub(crate) fn rekey(&self, from: &str, to: &str) {
        let mut all = self.meta.lock();
        all.remove(&to.to_ascii_lowercase());
        if let Some(meta) = all.remove(&from.to_ascii_lowercase()) {
            all.insert(to.to_ascii_lowercase(), meta);
        }
    }

    /// Sets `table`'s metadata, and (for a base table) keeps it with the table in the engine,
    /// logged if the engine is durable.
    pub(crate) fn save(
        &self,
        engine: &Engine,
        table: &Table,
        meta: TableMeta,
    ) -> Result<(), crate::SqlError> {
        let mut all = self.meta.lock();
        if !table.is_temporary() {
            engine.set_table_attributes(table.name(), &meta.to_text())?;
        }
        all.insert(meta_key(table), meta);
        Ok(())
    }
}

/// The [`Shared`] that [`Session::new`](crate::Session::new) gives the sessions of one engine,
/// while any of them lives.
#[derive(Debug, Default)]
pub(crate) struct Embedded(Mutex<std::sync::Weak<Shared>>);

impl Embedded {
    pub(crate) fn shared(&self, engine: &Arc<Engine>) -> Arc<Shared> {
        let mut weak = self.0.lock();
        if let Some(shared) = weak.upgrade() {
            return shared;
        }
        let shared = Shared::new(Arc::clone(engine), SessionConfig::default());
        *weak = Arc::downgrade(&shared);
        shared
    }
}

/// State shared by the sessions of one server.
#[derive(Debug)]
pub struct Shared {
    /// The engine.
    pub engine: Arc<Engine>,
    /// Session settings.
    pub config: SessionConfig,
    /// The databases and table metadata: the engine's, shared with every `Shared` over it.
    pub(crate) catalog: Arc<Catalog>,
    next_connection: AtomicU32,
    /// Where the server listens.
    pub(crate) listening: Mutex<Listening>,
    /// Status counters.
    pub counters: Counters,
    /// When the server started (SHOW STATUS's Uptime).
    pub(crate) started: std::time::Instant,
    /// The live sessions, for KILL.
    pub(crate) controls: crate::control::Controls,
    /// LOCK TABLES' locks: the engine's, shared with every `Shared` over it.
    pub(crate) table_locks: Arc<crate::table_locks::TableLocks>,
    /// Notified by SHUTDOWN (the statement or COM_SHUTDOWN) from a user who may.
    shutdown: Signal,
    /// The home database (see `names.rs`).
    home: String,
}

impl Shared {
    /// Shared state over `engine`.
    pub fn new(engine: Arc<Engine>, config: SessionConfig) -> Arc<Shared> {
        let catalog = engine.extension::<Catalog>();
        let table_locks = engine.extension();
        catalog.load_databases(&engine);
        catalog
            .databases
            .lock()
            .extend(config.databases.iter().map(|d| d.to_ascii_lowercase()));
        let home = (config.databases.first())
            .map_or_else(|| "waterline".into(), |d| d.to_ascii_lowercase());
        Arc::new(Shared {
            home,
            started: std::time::Instant::now(),
            shutdown: Signal::default(),
            engine,
            config,
            catalog,
            next_connection: AtomicU32::new(1),
            listening: Mutex::new(Listening::default()),
            counters: Counters::default(),
            controls: crate::control::Controls::default(),
            table_locks,
        })
    }

    /// A session of root, in the `waterline` database if there is one (as there is unless
    /// [`SessionConfig::databases`] leaves it out): the embedded way in.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use waterline_sql::{SessionConfig, Shared};
    /// use waterline_txn::{Engine, Value};
    ///
    /// let sql = Shared::new(Arc::new(Engine::in_memory()), SessionConfig::default());
    /// let mut s = sql.session();
    /// s.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")?;
    /// assert_eq!(s.execute("INSERT INTO t VALUES (1, 'one'), (2, 'two')")?.affected(), 2);
    /// let rows = s.execute("SELECT v FROM t WHERE id = 2")?.into_rows();
    /// assert_eq!(rows, [[Value::from("two")]]);
    /// # Ok::<(), waterline_sql::SqlError>(())
    /// ```
    pub fn session(self: &Arc<Self>) -> crate::Session {
        let database = self.has_database("waterline").then_some("waterline");
        crate::Session::connect(Arc::clone(self), "root", database)
            .expect("only a database that does not exist is refused")
    }

    /// A new connection id, unique for the server's life.
    pub fn connection_id(&self) -> u32 {
        // Relaxed: only uniqueness matters.
        self.next_connection.fetch_add(1, Ordering::Relaxed)
    }

    /// Waits until a client asks the server to shut down (SHUTDOWN): what runs the server
    /// stops it then, as it does on SIGTERM.
    pub async fn shutdown_requested(&self) {
        self.shutdown.wait().await;
    }

    /// SHUTDOWN from `user`: only root may (MySQL's SHUTDOWN privilege, which root has),
    /// else 1227.
    pub(crate) fn request_shutdown(&self, user: &str) -> Result<(), crate::SqlError> {
        if user != "root" {
            return Err(crate::SqlError::new(
                1227,
                "42000",
                "Access denied; you need (at least one of) the SHUTDOWN privilege(s) for this \
                 operation",
            ));
        }
        self.shutdown.raise();
        Ok(())
    }

    /// Whether database `name` exists.
    pub fn has_database(&self, name: &str) -> bool {
        self.catalog
            .databases
            .lock()
            .contains(&name.to_ascii_lowercase())
    }

    /// Where the server listens.
    pub fn listening(&self) -> Listening {
        self.listening.lock().clone()
    }

    /// The server records where it listens and how many connections it takes.
    pub fn update_listening(&self, update: impl FnOnce(&mut Listening)) {
        update(&mut self.listening.lock());
    }

    /// How long ago the server started (SHOW STATUS's `Uptime`).
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// The home database (see `names.rs`).
    pub(crate) fn home(&self) -> &str {
        &self.home
    }

    /// The databases, sorted.
    pub fn databases(&self) -> Vec<String> {
        self.catalog.databases.lock().iter().cloned().collect()
    }
}

/// A request one waiter takes: raised, it wakes whoever waits, or is kept for the next
/// waiter. Plain `std` (a future any executor can poll), so sessions need no runtime.
#[derive(Debug, Default)]
struct Signal {
    /// Whether raised and not taken yet, and who waits.
    state: Mutex<(bool, Vec<Waker>)>,
}

impl Signal {
    fn raise(&self) {
        let mut state = self.state.lock();
        state.0 = true;
        for waker in state.1.drain(..) {
            waker.wake();
        }
    }

    async fn wait(&self) {
        std::future::poll_fn(|cx| {
            let mut state = self.state.lock();
            if std::mem::take(&mut state.0) {
                return Poll::Ready(());
            }
            if !state.1.iter().any(|w| w.will_wake(cx.waker())) {
                state.1.push(cx.waker().clone());
            }
            Poll::Pending
        })
        .await;
    }
}
