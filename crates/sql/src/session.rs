//! A session: one client's connection state (database, autocommit, isolation, the open
//! transaction, prepared statements) and the statement dispatcher.
//!
//! Transactions follow MySQL: with autocommit on, a statement outside BEGIN ... COMMIT is a
//! transaction of its own. The admission permit is taken when a transaction begins (BEGIN, or
//! the first statement that needs one) and given back when it ends. A deadlock or a lock wait
//! timeout rolls the whole transaction back, since clients such as sysbench retry from BEGIN
//! without sending ROLLBACK.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::types::FieldType;
use sqlparser::ast::{self, Statement};
use waterline_txn::{Table, Transaction, Value};

use crate::error::SqlError;
use crate::shared::Shared;

mod connection;
mod statement;
mod temporary;

/// Status flag: a transaction is open.
pub const SERVER_STATUS_IN_TRANS: u16 = 0x0001;
/// Status flag: autocommit is on.
pub const SERVER_STATUS_AUTOCOMMIT: u16 = 0x0002;
/// Status flag: the statement read a table without an index (a full table or index scan).
pub const SERVER_QUERY_NO_INDEX_USED: u16 = 0x0020;

/// A column of a result set.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultColumn {
    /// Its name (the alias, or the expression's text). Shared with the prepared statement
    /// that sends it at every execution.
    pub name: Arc<str>,
    /// The table it comes from ("" for an expression).
    pub table: Arc<str>,
    /// Its protocol type.
    pub ty: FieldType,
    /// MySQL's column flags (`UNSIGNED_FLAG` for an UNSIGNED column).
    pub flags: u16,
    /// Digits after the point: a DECIMAL's scale, a DATETIME's fractional digits, or
    /// [`crate::types::NOT_FIXED_DEC`] for a computed value.
    pub decimals: u8,
}

impl ResultColumn {
    /// A column named `name`, of `table` ("" for an expression), described by `meta`.
    pub fn new(name: Arc<str>, table: Arc<str>, meta: crate::types::ColumnMeta) -> ResultColumn {
        ResultColumn {
            name,
            table,
            ty: meta.ty,
            flags: meta.flags,
            decimals: meta.decimals,
        }
    }
}

/// What a statement returns.
#[derive(Clone, Debug, PartialEq)]
pub enum Response {
    /// A result set.
    Rows {
        /// The columns.
        columns: Vec<ResultColumn>,
        /// The rows.
        rows: Vec<Vec<Value>>,
    },
    /// No result set: rows affected, the last AUTO_INCREMENT value, and an info text.
    Done {
        /// Rows inserted, changed or deleted.
        affected: u64,
        /// The first AUTO_INCREMENT value the statement generated (0: none).
        last_insert_id: u64,
        /// MySQL's info text ("Rows matched: 1  Changed: 1  Warnings: 0").
        info: String,
    },
}

impl Response {
    /// The result set's rows (none for a statement that returns no result set).
    pub fn into_rows(self) -> Vec<Vec<Value>> {
        match self {
            Response::Rows { rows, .. } => rows,
            Response::Done { .. } => Vec::new(),
        }
    }

    /// The rows a statement inserted, changed or deleted (0 for a result set).
    pub fn affected(&self) -> u64 {
        match self {
            Response::Rows { .. } => 0,
            Response::Done { affected, .. } => *affected,
        }
    }

    /// `Done` with `affected` rows.
    pub fn done(affected: u64) -> Response {
        Response::Done {
            affected,
            last_insert_id: 0,
            info: String::new(),
        }
    }

    /// A result set of text columns.
    pub fn text(names: &[&str], rows: Vec<Vec<Value>>) -> Response {
        let columns = names
            .iter()
            .map(|n| ResultColumn::new((*n).into(), "".into(), crate::types::ColumnMeta::text()))
            .collect();
        Response::Rows { columns, rows }
    }
}

/// A prepared statement.
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    pub(crate) statement: Arc<Statement>,
    pub(crate) params: usize,
    /// Its binding from an earlier execution, to run again while it is good.
    binding: Option<Arc<Binding>>,
    /// Its `MAX_EXECUTION_TIME(N)` optimizer hint, if a SELECT has one.
    hint: Option<u64>,
}

/// A SELECT, INSERT, UPDATE or DELETE with its names resolved against the catalog: tables to
/// handles, columns to positions, `?` to parameter numbers. A prepared statement is bound
/// once and planned at every execution, as in MySQL.
#[derive(Debug)]
pub(crate) enum Bound {
    Query(crate::select::BoundQuery),
    Insert(crate::dml::BoundInsert),
    Update(crate::dml::BoundUpdate),
    Delete(crate::dml::BoundDelete),
}

impl Bound {
    /// Whether it holds a value of this moment (NOW(), @@autocommit), so it is not kept.
    fn volatile(&self) -> bool {
        match self {
            Bound::Query(q) => q.volatile(),
            Bound::Insert(i) => i.volatile,
            Bound::Update(u) => u.volatile,
            Bound::Delete(d) => d.volatile(),
        }
    }
}

/// A binding and what it was bound against: it is good while the catalog version and the
/// session's database are the same (MySQL re-prepares a statement whose tables changed).
#[derive(Debug)]
pub(crate) struct Binding {
    version: u64,
    database: Option<Arc<str>>,
    bound: Bound,
}

/// One client's session.
pub struct Session {
    shared: Arc<Shared>,
    connection_id: u32,
    user: String,
    /// The database in use (`USE`), shared with each statement that reads it.
    database: Option<Arc<str>>,
    /// The session's variables (`SET`; `vars.rs` owns them).
    settings: crate::vars::Settings,
    /// The level the open transaction began at.
    trx_level: crate::vars::Level,
    /// When the running statement first asked for the time (UTC microseconds; 0: not yet):
    /// NOW() is this, however often a statement calls it, as in MySQL (SYSDATE() reads the
    /// clock). Read from the clock only by a statement that needs it.
    statement_began: std::cell::Cell<i64>,
    /// The running (or last) statement read a table without an index.
    no_index_used: bool,
    /// The session's temporary tables (CREATE TEMPORARY TABLE): named as their creator
    /// named them, each hiding a base table of the same name from this session alone.
    temporary: Vec<Table>,
    /// Bumped by every CREATE or DROP of a temporary table: with the engine's catalog
    /// version it says whether a binding still names the same tables.
    temporary_changes: u64,
    trx: Option<Transaction>,
    last_insert_id: u64,
    warnings: Vec<(String, u16, String)>,
    prepared: HashMap<u32, Prepared>,
    next_statement: u32,
    /// The catalog version the kept bindings were last checked against.
    bindings_checked: u64,
    /// What `KILL` reaches this session through (registered with `shared`).
    control: Arc<crate::control::Control>,
    /// The running statement's look-out: whether it must stop.
    watch: crate::control::Watch,
}

impl Session {
    /// A session of root over `engine`, in the `waterline` database: the embedded way in.
    /// The sessions made so share one [`Shared`] (connection ids, KILL, status counters)
    /// while any of them lives; every session over the engine shares its databases and
    /// table metadata.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use waterline_sql::Session;
    /// use waterline_txn::{Engine, Value};
    ///
    /// let engine = Arc::new(Engine::in_memory());
    /// let mut s = Session::new(&engine);
    /// s.execute("CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(10))")?;
    /// s.execute("INSERT INTO t (v) VALUES ('one'), ('two')")?;
    /// let mut other = Session::new(&engine);
    /// other.execute("INSERT INTO t (v) VALUES ('three')")?;
    /// let rows = s.execute("SELECT id FROM t WHERE v = 'three'")?.into_rows();
    /// assert_eq!(rows, [[Value::Int(3)]]);
    /// # Ok::<(), waterline_sql::SqlError>(())
    /// ```
    pub fn new(engine: &Arc<waterline_txn::Engine>) -> Session {
        engine
            .extension::<crate::shared::Embedded>()
            .shared(engine)
            .session()
    }

    /// A session of `user` on `shared`, in `database` if given (error 1049 if it does not
    /// exist): what a server makes for a connection.
    pub fn connect(
        shared: Arc<Shared>,
        user: &str,
        database: Option<&str>,
    ) -> Result<Session, SqlError> {
        if let Some(db) = database
            && !shared.has_database(db)
        {
            return Err(SqlError::unknown_database(db));
        }
        let connection_id = shared.connection_id();
        let control = shared.controls.register(connection_id, user);
        Ok(Session {
            watch: crate::control::Watch::new(&control, None),
            control,
            settings: crate::vars::Settings::new(&shared),
            trx_level: crate::vars::Level::Engine(shared.config.isolation),
            connection_id,
            user: user.to_owned(),
            database: database.map(Arc::from),
            statement_began: std::cell::Cell::new(0),
            no_index_used: false,
            temporary: Vec::new(),
            temporary_changes: 0,
            trx: None,
            last_insert_id: 0,
            warnings: Vec::new(),
            prepared: HashMap::new(),
            next_statement: 1,
            bindings_checked: 0,
            shared,
        })
    }

    /// The session's variables.
    pub(crate) fn settings(&self) -> &crate::vars::Settings {
        &self.settings
    }

    /// The session's variables, to change (`SET`).
    pub(crate) fn settings_mut(&mut self) -> &mut crate::vars::Settings {
        &mut self.settings
    }

    /// `innodb_lock_wait_timeout`, for the open transaction too.
    pub(crate) fn set_lock_wait_timeout(&mut self, timeout: std::time::Duration) {
        self.settings.lock_wait_timeout = timeout;
        if let Some(trx) = &mut self.trx {
            trx.set_lock_wait_timeout(timeout);
        }
    }

    /// The database in use, if any (`USE`).
    pub(crate) fn database(&self) -> Option<&Arc<str>> {
        self.database.as_ref()
    }

    /// The running statement's look-out: whether it must stop.
    pub(crate) fn watch(&self) -> &crate::control::Watch {
        &self.watch
    }

    /// The running statement read a table without an index, if `yes`
    /// (`SERVER_QUERY_NO_INDEX_USED`).
    pub(crate) fn scanned_without_index(&mut self, yes: bool) {
        self.no_index_used |= yes;
    }

    /// `LAST_INSERT_ID()`.
    pub(crate) fn last_insert_id(&self) -> u64 {
        self.last_insert_id
    }

    /// The first AUTO_INCREMENT value the last INSERT generated.
    pub(crate) fn set_last_insert_id(&mut self, id: u64) {
        self.last_insert_id = id;
    }

    /// Adds a warning (`level` is `Note` or `Warning`) to the statement's.
    pub(crate) fn warn(&mut self, level: &str, code: u16, message: String) {
        self.warnings.push((level.to_owned(), code, message));
    }

    /// The statement's warnings, to add to.
    pub(crate) fn warnings_mut(&mut self) -> &mut Vec<(String, u16, String)> {
        &mut self.warnings
    }

    /// This session's connection id.
    pub fn connection_id(&self) -> u32 {
        self.connection_id
    }

    /// Whether a transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.trx.is_some()
    }

    /// The server status flags MySQL sends in every OK and EOF packet: `SERVER_STATUS_IN_TRANS`
    /// while a transaction is open, `SERVER_STATUS_AUTOCOMMIT` while autocommit is on. Clients
    /// act on them: PyMySQL, for one, sends `SET autocommit=0` only if the flag says it is on.
    pub fn server_status(&self) -> u16 {
        let mut flags = 0;
        if self.trx.is_some() {
            flags |= SERVER_STATUS_IN_TRANS;
        }
        if self.settings.autocommit {
            flags |= SERVER_STATUS_AUTOCOMMIT;
        }
        if self.no_index_used {
            flags |= SERVER_QUERY_NO_INDEX_USED;
        }
        flags
    }

    /// When the running statement began in the session's time zone (NOW()), or with `live`
    /// the clock's time (SYSDATE()), with `fsp` fractional digits.
    pub(crate) fn now(&self, fsp: u8, live: bool) -> waterline_txn::DateTime {
        let utc = if live {
            crate::vars::utc_micros()
        } else {
            self.statement_began()
        };
        let local = utc + self.settings.time_zone.offset_secs * 1_000_000;
        waterline_txn::DateTime(crate::vars::truncate_fsp(local, fsp))
    }

    /// When the running statement began, in UTC microseconds (its first look at the clock).
    pub(crate) fn statement_began(&self) -> i64 {
        if self.statement_began.get() == 0 {
            self.statement_began.set(crate::vars::utc_micros());
        }
        self.statement_began.get()
    }

    /// The warnings the last statement left (the count OK and EOF packets carry).
    pub fn warning_count(&self) -> u16 {
        u16::try_from(self.warnings.len()).unwrap_or(u16::MAX)
    }

    /// Runs one SQL statement.
    pub fn execute(&mut self, sql: &str) -> Result<Response, SqlError> {
        self.start_statement()?;
        self.forget_stale_bindings();
        if sql.len() > self.shared.config.max_allowed_packet {
            return Err(SqlError::new(
                1153,
                "08S01",
                "Got a packet bigger than 'max_allowed_packet' bytes",
            ));
        }
        let statement = match crate::parse::one(sql)? {
            crate::parse::Parsed::Statement(s) => s,
            crate::parse::Parsed::Special(special) => return self.special(special),
        };
        // A `?` is a placeholder only in a prepared statement: in text, a syntax error.
        if crate::parse::count_params(&statement) > 0 {
            return Err(SqlError::parse(
                "a '?' placeholder outside a prepared statement",
            ));
        }
        if let Statement::Query(_) = *statement {
            self.limit_select(crate::parse::max_execution_time_hint(sql));
        }
        self.run(&statement, &[])
    }

    /// Prepares a statement: its id, its parameter count, and (for a SELECT) its columns.
    pub fn prepare(&mut self, sql: &str) -> Result<(u32, usize, Vec<ResultColumn>), SqlError> {
        let statement = match crate::parse::one(sql)? {
            crate::parse::Parsed::Statement(s) => s,
            crate::parse::Parsed::Special(_) => {
                return Err(SqlError::new(
                    1295,
                    "HY000",
                    "This command is not supported in the prepared statement protocol yet",
                ));
            }
        };
        let params = crate::parse::count_params(&statement);
        let preparable = matches!(
            *statement,
            Statement::Query(_)
                | Statement::Insert(_)
                | Statement::Update(_)
                | Statement::Delete(_)
                | Statement::Set(_)
                | Statement::StartTransaction { .. }
                | Statement::Commit { .. }
                | Statement::Rollback { .. }
        );
        if !preparable {
            return Err(SqlError::new(
                1295,
                "HY000",
                "This command is not supported in the prepared statement protocol yet",
            ));
        }
        if let Statement::Query(q) = statement.as_ref()
            && crate::perf_schema::view_of(q, self.database.as_deref())?.is_some()
        {
            return Err(SqlError::new(
                1295,
                "HY000",
                "This command is not supported in the prepared statement protocol yet",
            ));
        }
        let columns = match statement.as_ref() {
            Statement::Query(q) => self.describe(q)?,
            _ => Vec::new(),
        };
        let id = self.next_statement;
        self.next_statement = self.next_statement.wrapping_add(1).max(1);
        self.prepared.insert(
            id,
            Prepared {
                statement: Arc::from(statement),
                params,
                binding: None,
                hint: crate::parse::max_execution_time_hint(sql),
            },
        );
        Ok((id, params, columns))
    }

    /// Runs prepared statement `id` with `params`.
    pub fn execute_prepared(&mut self, id: u32, params: &[Value]) -> Result<Response, SqlError> {
        self.start_statement()?;
        self.forget_stale_bindings();
        let prepared = self
            .prepared
            .get(&id)
            .cloned()
            .ok_or_else(|| SqlError::unknown_statement(id, "EXECUTE"))?;
        if params.len() != prepared.params {
            return Err(SqlError::new(
                1210,
                "HY000",
                "Incorrect arguments to EXECUTE",
            ));
        }
        if let Statement::Query(_) = *prepared.statement {
            self.limit_select(prepared.hint);
        }
        let good = |b: &Binding| b.version == self.catalog_version() && b.database == self.database;
        let binding = match prepared.binding {
            Some(b) if good(&b) => b,
            _ => match self.bind(&prepared.statement)? {
                Some(b) => {
                    let b = Arc::new(b);
                    if !b.bound.volatile()
                        && let Some(p) = self.prepared.get_mut(&id)
                    {
                        p.binding = Some(Arc::clone(&b));
                    }
                    b
                }
                None => return self.run(&prepared.statement, params),
            },
        };
        self.warnings.clear();
        self.run_bound(&prepared.statement, &binding.bound, params)
    }

    /// After DDL, drops every kept binding made before it: a binding holds its tables'
    /// handles, and a dropped table's rows live as long as its last handle. So a statement
    /// that is never run again keeps a dropped table only until its session's next statement.
    fn forget_stale_bindings(&mut self) {
        let version = self.catalog_version();
        if version != self.bindings_checked {
            for p in self.prepared.values_mut() {
                if p.binding.as_ref().is_some_and(|b| b.version != version) {
                    p.binding = None;
                }
            }
            self.bindings_checked = version;
        }
    }

    /// Binds `statement` against the catalog if it is a SELECT, INSERT, UPDATE or DELETE.
    fn bind(&self, statement: &Statement) -> Result<Option<Binding>, SqlError> {
        if !matches!(
            statement,
            Statement::Query(_)
                | Statement::Insert(_)
                | Statement::Update(_)
                | Statement::Delete(_)
        ) {
            return Ok(None);
        }
        let (version, tables) = self.tables();
        let bound = match statement {
            Statement::Query(q) => Bound::Query(crate::select::bind(self, &tables, q)?),
            Statement::Insert(i) => Bound::Insert(crate::dml::bind_insert(self, &tables, i)?),
            Statement::Update(u) => Bound::Update(crate::dml::bind_update(self, &tables, u)?),
            Statement::Delete(d) => Bound::Delete(crate::dml::bind_delete(self, &tables, d)?),
            _ => return Ok(None),
        };
        Ok(Some(Binding {
            version,
            database: self.database.clone(),
            bound,
        }))
    }

    /// Runs `statement`, bound as `bound`, with `params`.
    fn run_bound(
        &mut self,
        statement: &Statement,
        bound: &Bound,
        params: &[Value],
    ) -> Result<Response, SqlError> {
        match (statement, bound) {
            (Statement::Query(q), Bound::Query(b)) => crate::select::run(self, q, b, params),
            (_, Bound::Insert(b)) => crate::dml::insert(self, b, params),
            (_, Bound::Update(b)) => crate::dml::update(self, b, params),
            (_, Bound::Delete(b)) => crate::dml::delete(self, b, params),
            (_, Bound::Query(_)) => Err(SqlError::other("a query's binding for another statement")),
        }
    }

    /// The parameter count of prepared statement `id`.
    pub fn prepared_params(&self, id: u32) -> Option<usize> {
        self.prepared.get(&id).map(|p| p.params)
    }

    /// Forgets prepared statement `id`.
    pub fn close_prepared(&mut self, id: u32) {
        self.prepared.remove(&id);
    }

    /// COM_RESET_CONNECTION: the session as a new one starts, in the same database and for
    /// the same user: its transaction rolled back, its variables back to their defaults,
    /// its prepared statements gone.
    pub fn reset(&mut self) {
        self.abort();
        self.settings = crate::vars::Settings::new(&self.shared);
        self.last_insert_id = 0;
        self.warnings.clear();
        self.prepared.clear();
        self.drop_all_temporary();
    }

    /// Rolls back the open transaction, if any (a client that went away).
    pub fn abort(&mut self) {
        if let Some(trx) = self.trx.take() {
            trx.rollback();
        }
    }

    pub(crate) fn database_name(&self) -> &str {
        self.database.as_deref().unwrap_or("")
    }

    /// Runs `f` as one statement of the session's transaction, opening one if none is open
    /// and committing it after if it is the statement's own (autocommit).
    pub(crate) fn with_trx<R>(
        &mut self,
        f: impl FnOnce(&mut Self, &mut Transaction) -> Result<R, SqlError>,
    ) -> Result<R, SqlError> {
        let own = self.trx.is_none() && self.settings.autocommit;
        let mut trx = match self.trx.take() {
            Some(t) => t,
            None => self.begin_trx(),
        };
        let savepoint = trx.savepoint();
        let mut inner = None;
        let outcome = trx.statement(|t| {
            inner = Some(f(self, t));
            Ok(())
        });
        let result = match (outcome, inner) {
            (Err(e), _) => Err(SqlError::from(e)),
            (Ok(()), Some(Err(e))) => {
                if trx.is_active() {
                    trx.rollback_to(savepoint);
                }
                Err(e)
            }
            (Ok(()), Some(Ok(r))) => Ok(r),
            (Ok(()), None) => Err(SqlError::other("statement did not run")),
        };
        match &result {
            Err(e)
                if e.ends_transaction(self.shared.config.rollback_on_timeout)
                    || !trx.is_active() =>
            {
                self.shared
                    .counters
                    .implicit_rollbacks
                    .fetch_add(1, Ordering::Relaxed);
                trx.rollback();
            }
            Err(_) if own => trx.rollback(),
            Ok(_) if own => trx.commit().map_err(SqlError::from)?,
            _ => {
                self.trx = Some(trx);
            }
        }
        result
    }

    /// BEGIN for async callers: ends the open transaction as BEGIN does (committing it),
    /// then begins one, waiting for the engine's admission permit without blocking the
    /// thread (BEGIN through [`Session::execute`] blocks it). A client that runs sessions as
    /// tokio tasks needs this: a worker thread blocked waiting for a permit could be the
    /// one the permit's holder needs to finish.
    pub async fn begin_async(&mut self) -> Result<(), SqlError> {
        self.shared
            .counters
            .questions
            .fetch_add(1, Ordering::Relaxed);
        self.commit()?;
        self.trx_level = self
            .settings
            .next_isolation
            .take()
            .unwrap_or(self.settings.isolation);
        let mut trx = self
            .shared
            .engine
            .begin_async(self.trx_level.engine())
            .await;
        trx.set_lock_wait_timeout(self.settings.lock_wait_timeout);
        trx.set_interrupt(self.control.stop_flag());
        self.trx = Some(trx);
        Ok(())
    }

    /// Whether a plain SELECT now reads `FOR SHARE`: in a SERIALIZABLE transaction, open
    /// or about to open with autocommit off (an autocommit SELECT stays a consistent read).
    pub(crate) fn serializable_read(&self) -> bool {
        let level = match self.trx {
            Some(_) => self.trx_level,
            None if !self.settings.autocommit => self
                .settings
                .next_isolation
                .unwrap_or(self.settings.isolation),
            None => return false,
        };
        level == crate::vars::Level::Serializable
    }

    fn begin_trx(&mut self) -> Transaction {
        self.trx_level = self
            .settings
            .next_isolation
            .take()
            .unwrap_or(self.settings.isolation);
        let mut trx = self.shared.engine.begin_with(self.trx_level.engine());
        trx.set_lock_wait_timeout(self.settings.lock_wait_timeout);
        trx.set_interrupt(self.control.stop_flag());
        trx
    }

    /// COMMIT (and implicit commits): ends the open transaction.
    pub(crate) fn commit(&mut self) -> Result<Response, SqlError> {
        match self.trx.take() {
            Some(trx) => trx
                .commit()
                .map(|()| Response::done(0))
                .map_err(SqlError::from),
            None => Ok(Response::done(0)),
        }
    }

    fn run(&mut self, statement: &Statement, params: &[Value]) -> Result<Response, SqlError> {
        self.warnings.clear();
        if let Statement::Query(q) = statement
            && let Some(view) = crate::perf_schema::view_of(q, self.database.as_deref())?
        {
            return crate::perf_schema::read(self, q, view, params);
        }
        if let Some(binding) = self.bind(statement)? {
            return self.run_bound(statement, &binding.bound, params);
        }
        match statement {
            Statement::Explain { statement, .. } => match statement.as_ref() {
                Statement::Query(q) => crate::select::explain(self, q, params),
                other => Err(SqlError::unsupported(format!("EXPLAIN {other}"))),
            },
            Statement::StartTransaction { .. } => {
                self.commit()?;
                self.trx = Some(self.begin_trx());
                Ok(Response::done(0))
            }
            Statement::Commit { .. } => self.commit(),
            Statement::Rollback {
                savepoint: None, ..
            } => {
                self.abort();
                Ok(Response::done(0))
            }
            Statement::CreateTable(create) => {
                // CREATE TEMPORARY TABLE does not end the transaction, as in MySQL.
                if !create.temporary {
                    self.commit()?;
                }
                crate::ddl::create_table(self, create)
            }
            Statement::CreateIndex(create) => {
                self.commit()?;
                crate::ddl::create_index(self, create)
            }
            Statement::Drop {
                object_type: ast::ObjectType::Table,
                if_exists,
                names,
                temporary,
                ..
            } => {
                // DROP TEMPORARY TABLE does not end the transaction, as in MySQL.
                if !temporary {
                    self.commit()?;
                }
                crate::ddl::drop_tables(self, names, *if_exists, *temporary)
            }
            Statement::CreateDatabase {
                db_name,
                if_not_exists,
                ..
            } => crate::ddl::create_database(self, db_name, *if_not_exists),
            Statement::Use(u) => self.use_database(u),
            Statement::Set(set) => crate::vars::set(self, set, params),
            Statement::Kill { modifier, id } => self.kill(*modifier, *id),
            Statement::ShowDatabases { show_options, .. }
            | Statement::ShowSchemas { show_options, .. } => {
                let pattern = like_pattern(show_options)?;
                let rows = self
                    .shared
                    .databases()
                    .into_iter()
                    .filter(|d| pattern.as_ref().is_none_or(|p| crate::vars::like(p, d)))
                    .map(|d| vec![Value::from(d)])
                    .collect();
                let column = match &pattern {
                    Some(p) => format!("Database ({p})"),
                    None => "Database".into(),
                };
                Ok(Response::text(&[&column], rows))
            }
            Statement::ShowTables {
                full, show_options, ..
            } => self.show_tables(*full, show_options),
            Statement::ShowVariables { filter, .. } => {
                crate::vars::show_variables(self, filter.as_ref())
            }
            Statement::ShowStatus { filter, .. } => crate::vars::show_status(self, filter.as_ref()),
            other => Err(SqlError::unsupported(statement_kind(other))),
        }
    }

    /// SHOW [FULL] TABLES [FROM db] [LIKE 'pattern'].
    fn show_tables(
        &self,
        full: bool,
        options: &ast::ShowStatementOptions,
    ) -> Result<Response, SqlError> {
        let db = match &options.show_in {
            Some(ast::ShowStatementIn {
                parent_name: Some(name),
                ..
            }) => {
                let name = waterline_planner::bind::object_name(name)?;
                if !self.shared.has_database(&name) {
                    return Err(SqlError::unknown_database(&name));
                }
                Arc::from(name.as_str())
            }
            _ => self.database.clone().ok_or_else(SqlError::no_database)?,
        };
        if options.starts_with.is_some() || options.limit.is_some() {
            return Err(SqlError::unsupported(
                "SHOW TABLES with STARTS WITH or LIMIT",
            ));
        }
        let pattern = match &options.filter_position {
            None => None,
            Some(
                ast::ShowStatementFilterPosition::Infix(f)
                | ast::ShowStatementFilterPosition::Suffix(f),
            ) => match f {
                ast::ShowStatementFilter::Like(p) | ast::ShowStatementFilter::NoKeyword(p) => {
                    Some(p.clone())
                }
                other => return Err(SqlError::unsupported(format!("SHOW TABLES {other}"))),
            },
        };
        let mut names: Vec<String> = self
            .shared
            .engine
            .tables()
            .iter()
            .map(|t| t.name().to_owned())
            .filter(|n| pattern.as_ref().is_none_or(|p| crate::vars::like(p, n)))
            .collect();
        names.sort();
        let rows = names
            .into_iter()
            .map(|n| {
                let mut row = vec![Value::from(n)];
                if full {
                    row.push(Value::from("BASE TABLE"));
                }
                row
            })
            .collect();
        let column = match &pattern {
            Some(p) => format!("Tables_in_{db} ({p})"),
            None => format!("Tables_in_{db}"),
        };
        if full {
            Ok(Response::text(&[&column, "Table_type"], rows))
        } else {
            Ok(Response::text(&[&column], rows))
        }
    }

    fn use_database(&mut self, u: &ast::Use) -> Result<Response, SqlError> {
        let name = match u {
            ast::Use::Object(name) | ast::Use::Database(name) | ast::Use::Schema(name) => {
                waterline_planner::bind::object_name(name).map_err(SqlError::from)?
            }
            other => return Err(SqlError::unsupported(other)),
        };
        self.select_database(&name)?;
        Ok(Response::done(0))
    }

    /// `USE name` (and COM_INIT_DB).
    pub fn select_database(&mut self, name: &str) -> Result<(), SqlError> {
        if !self.shared.has_database(name) {
            return Err(SqlError::unknown_database(name));
        }
        self.database = Some(Arc::from(name));
        Ok(())
    }

    fn special(&mut self, special: crate::parse::Special) -> Result<Response, SqlError> {
        use crate::parse::Special;
        match special {
            Special::ShowWarnings => {
                let rows = self
                    .warnings
                    .iter()
                    .map(|(level, code, msg)| {
                        vec![
                            Value::from(level.as_str()),
                            Value::Int(i64::from(*code)),
                            Value::from(msg.as_str()),
                        ]
                    })
                    .collect();
                Ok(Response::text(&["Level", "Code", "Message"], rows))
            }
            Special::Ignored => Ok(Response::done(0)),
            Special::Shutdown => {
                self.shared.request_shutdown(&self.user)?;
                Ok(Response::done(0))
            }
        }
    }

    /// The columns a query will return, for COM_STMT_PREPARE (planned, not run).
    fn describe(&mut self, q: &ast::Query) -> Result<Vec<ResultColumn>, SqlError> {
        crate::select::describe(self, q)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.abort();
        self.drop_all_temporary();
        self.shared.controls.unregister(self.connection_id);
    }
}

/// The LIKE pattern of a SHOW statement, if it has one (MySQL names the listed column after
/// it); STARTS WITH, LIMIT and WHERE are refused.
fn like_pattern(options: &ast::ShowStatementOptions) -> Result<Option<String>, SqlError> {
    if options.starts_with.is_some() || options.limit.is_some() {
        return Err(SqlError::unsupported("SHOW with STARTS WITH or LIMIT"));
    }
    match &options.filter_position {
        None => Ok(None),
        Some(
            ast::ShowStatementFilterPosition::Infix(f)
            | ast::ShowStatementFilterPosition::Suffix(f),
        ) => match f {
            ast::ShowStatementFilter::Like(p) | ast::ShowStatementFilter::NoKeyword(p) => {
                Ok(Some(p.clone()))
            }
            other => Err(SqlError::unsupported(format!("SHOW ... {other}"))),
        },
    }
}

/// A statement's kind, for "doesn't yet support" messages.
fn statement_kind(s: &Statement) -> String {
    let text = s.to_string();
    let words: Vec<&str> = text.split_whitespace().take(3).collect();
    words.join(" ")
}
