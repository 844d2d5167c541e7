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

use sqlparser::ast::{self, Statement};
use waterline_txn::{Table, Transaction, Value};

use crate::error::SqlError;
use crate::shared::Shared;

mod connection;
mod prepared;
mod response;
mod statement;
mod temporary;
mod transaction;

pub(crate) use prepared::Prepared;
pub use response::{
    Response, ResultColumn, SERVER_QUERY_NO_INDEX_USED, SERVER_STATUS_AUTOCOMMIT,
    SERVER_STATUS_IN_TRANS,
};

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
