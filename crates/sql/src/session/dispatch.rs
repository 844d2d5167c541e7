//! From SQL text to an answer: a statement is parsed, then (a SELECT, INSERT, UPDATE or
//! DELETE) bound against the catalog and run from its binding, or run as what it is (DDL,
//! transaction control, SET, SHOW, USE, KILL). Prepared statements keep their binding
//! between executions. This is the top of the crate: it knows every kind of statement, and
//! none of them knows it.

use std::sync::Arc;

use sqlparser::ast::{self, Statement};
use waterline_txn::Value;

use crate::error::SqlError;
use crate::session::{Binding, Bound, Context, Prepared, Response, ResultColumn, Session};

impl Session {
    /// Runs one SQL statement.
    pub fn execute(&mut self, sql: &str) -> Result<Response, SqlError> {
        self.forget_stale_bindings();
        self.context().execute(sql)
    }

    /// Prepares a statement: its id, its parameter count, and (for a SELECT) its columns.
    pub fn prepare(&mut self, sql: &str) -> Result<(u32, usize, Vec<ResultColumn>), SqlError> {
        let (prepared, columns) = self.context().prepare(sql)?;
        let params = prepared.params;
        Ok((self.keep_prepared(prepared), params, columns))
    }

    /// Runs prepared statement `id` with `params`.
    pub fn execute_prepared(&mut self, id: u32, params: &[Value]) -> Result<Response, SqlError> {
        self.forget_stale_bindings();
        let prepared = self.prepared(id);
        let (response, binding) = self.context().execute_prepared(id, prepared, params);
        if let Some(binding) = binding {
            self.keep_binding(id, binding);
        }
        response
    }
}

impl Context<'_> {
    fn execute(&mut self, sql: &str) -> Result<Response, SqlError> {
        self.control().busy(
            crate::control::Running::Text(Arc::from(sql)),
            self.database(),
        );
        let response = self.execute_text(sql);
        self.finish_trace(|| sql.to_owned());
        self.statement_done();
        response
    }

    fn execute_text(&mut self, sql: &str) -> Result<Response, SqlError> {
        self.start_statement()?;
        if sql.len() > self.shared().config.max_allowed_packet {
            return Err(SqlError::new(
                1153,
                "08S01",
                "Got a packet bigger than 'max_allowed_packet' bytes",
            ));
        }
        let mut statement = match crate::parse::one(sql)? {
            crate::parse::Parsed::Statement(s) => s,
            crate::parse::Parsed::Special(special) => return self.special(special),
        };
        self.qualify(&mut statement)?;
        // A `?` is a placeholder only in a prepared statement: in text, a syntax error.
        if crate::parse::count_params(&statement) > 0 {
            return Err(SqlError::parse(
                "a '?' placeholder outside a prepared statement",
            ));
        }
        if let Statement::Query(_) = *statement {
            self.limit_select(crate::parse::max_execution_time_hint(sql));
        }
        self.may_run(&statement)?;
        self.run(&statement, &[])
    }

    /// A statement prepared (the session keeps it), and (for a SELECT) its columns.
    fn prepare(&mut self, sql: &str) -> Result<(Prepared, Vec<ResultColumn>), SqlError> {
        let not_preparable = || {
            SqlError::new(
                1295,
                "HY000",
                "This command is not supported in the prepared statement protocol yet",
            )
        };
        let mut statement = match crate::parse::one(sql)? {
            crate::parse::Parsed::Statement(s) => s,
            crate::parse::Parsed::Special(_) => return Err(not_preparable()),
        };
        self.qualify(&mut statement)?;
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
        if !preparable || crate::system_views::reads_system_table(&statement)? {
            return Err(not_preparable());
        }
        let columns = match statement.as_ref() {
            Statement::Query(q) => self.describe(q)?,
            _ => Vec::new(),
        };
        let prepared = Prepared {
            statement: Arc::from(statement),
            params,
            binding: None,
            hint: crate::parse::max_execution_time_hint(sql),
        };
        Ok((prepared, columns))
    }

    /// Runs `prepared`, the session's statement `id` (`None`: it has none of that id), with
    /// `params`; with the binding the session is to keep for the statement's next
    /// executions, if one was made.
    fn execute_prepared(
        &mut self,
        id: u32,
        prepared: Option<Prepared>,
        params: &[Value],
    ) -> (Result<Response, SqlError>, Option<Arc<Binding>>) {
        if let Some(prepared) = &prepared {
            let running = crate::control::Running::Prepared(Arc::clone(&prepared.statement));
            self.control().busy(running, self.database());
        }
        let mut made = None;
        let response = self.execute_statement(id, prepared.as_ref(), params, &mut made);
        self.statement_done();
        if self.tracing()
            && let Some(prepared) = &prepared
        {
            self.finish_trace(|| prepared.statement.to_string());
        }
        (response, made)
    }

    fn execute_statement(
        &mut self,
        id: u32,
        prepared: Option<&Prepared>,
        params: &[Value],
        made: &mut Option<Arc<Binding>>,
    ) -> Result<Response, SqlError> {
        self.start_statement()?;
        let prepared = prepared.ok_or_else(|| SqlError::unknown_statement(id, "EXECUTE"))?;
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
        self.may_run(&prepared.statement)?;
        let binding = match &prepared.binding {
            Some(b) if b.is_current(self) => Arc::clone(b),
            _ => match self.bind(&prepared.statement)? {
                Some(b) => {
                    let b = Arc::new(b);
                    if !b.bound.volatile() {
                        *made = Some(Arc::clone(&b));
                    }
                    b
                }
                None => return self.run(&prepared.statement, params),
            },
        };
        self.clear_warnings();
        binding.bound.run(self, &prepared.statement, params)
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
        let bound: Box<dyn Bound> = match statement {
            Statement::Query(q) if crate::select::subquery::has_subquery(q) => {
                Box::new(crate::select::subquery::WithSubqueries)
            }
            Statement::Query(q) if crate::select::union::is_union(q) => {
                Box::new(crate::select::union::bind_union(self, &tables, q)?)
            }
            Statement::Query(q) => Box::new(crate::select::bind(self, &tables, q)?),
            Statement::Update(_) | Statement::Delete(_)
                if crate::select::subquery::dml::has_subquery(statement) =>
            {
                Box::new(crate::select::subquery::dml::DmlWithSubqueries)
            }
            Statement::Insert(i) => Box::new(crate::dml::bind_insert(self, &tables, i)?),
            Statement::Update(u) => Box::new(crate::dml::bind_update(self, &tables, u)?),
            Statement::Delete(d) => Box::new(crate::dml::bind_delete(self, &tables, d)?),
            _ => return Ok(None),
        };
        Ok(Some(Binding {
            version,
            database: self.database().cloned(),
            bound,
        }))
    }

    fn run(&mut self, statement: &Statement, params: &[Value]) -> Result<Response, SqlError> {
        self.clear_warnings();
        if let Some(response) = crate::system_views::read(self, statement, params)? {
            return Ok(response);
        }
        self.run_statement(statement, params)
    }

    /// What a statement must pass before it runs: a READ ONLY transaction writes no base
    /// table (1792), and table locks, the session's own or others' (`session/locking.rs`).
    fn may_run(&mut self, statement: &Statement) -> Result<(), SqlError> {
        self.may_write(statement)?;
        self.respect_table_locks(statement)
    }

    /// After a statement: the session waits for its client, and says whether it still has
    /// a transaction open.
    fn statement_done(&self) {
        self.control().idle(self.database());
        if !self.in_transaction() {
            self.control().trx_ended();
        }
    }

    /// The database a SHOW names (`FROM db`), else the one in use: 1049 if there is no such
    /// database, 1046 if none is named or in use.
    fn shown_database(&self, named: Option<String>) -> Result<String, SqlError> {
        let db = match named {
            Some(db) => db,
            None => self
                .database()
                .ok_or_else(SqlError::no_database)?
                .to_string(),
        };
        if !self.shared().has_database(&db) {
            return Err(SqlError::unknown_database(&db));
        }
        Ok(db)
    }

    /// Runs `sql`, a statement made here (a SHOW that is a query of `information_schema`).
    fn run_text(&mut self, sql: &str) -> Result<Response, SqlError> {
        match crate::parse::one(sql)? {
            crate::parse::Parsed::Statement(statement) => self.run(&statement, &[]),
            crate::parse::Parsed::Special(_) => Err(SqlError::other("a SHOW made no query")),
        }
    }

    /// [`Context::run`] of a statement that reads no system table.
    pub(crate) fn run_statement(
        &mut self,
        statement: &Statement,
        params: &[Value],
    ) -> Result<Response, SqlError> {
        if let Some(binding) = self.bind(statement)? {
            return binding.bound.run(self, statement, params);
        }
        match statement {
            Statement::Explain {
                statement,
                analyze,
                format,
                ..
            } => match statement.as_ref() {
                Statement::Query(q) => {
                    let format = crate::select::Format::of(*analyze, format.as_ref())?;
                    crate::select::explain(self, q, params, format)
                }
                other => Err(SqlError::unsupported(format!("EXPLAIN {other}"))),
            },
            Statement::StartTransaction { modes, .. } => {
                let mut read_only = None;
                for mode in modes {
                    match mode {
                        ast::TransactionMode::AccessMode(access) => {
                            read_only =
                                Some(matches!(access, ast::TransactionAccessMode::ReadOnly));
                        }
                        other => return Err(SqlError::parse(format!("START TRANSACTION {other}"))),
                    }
                }
                self.start_transaction(read_only)?;
                Ok(Response::done(0))
            }
            Statement::Commit { chain: true, .. } => {
                self.end_and_chain(true)?;
                Ok(Response::done(0))
            }
            Statement::Commit { .. } => self.commit(),
            Statement::Rollback {
                savepoint: None,
                chain,
            } => {
                if *chain {
                    self.end_and_chain(false)?;
                } else {
                    self.abort();
                }
                Ok(Response::done(0))
            }
            Statement::Rollback {
                savepoint: Some(name),
                chain: false,
            } => {
                self.back_to_savepoint(&name.value, true)?;
                Ok(Response::done(0))
            }
            Statement::Savepoint { name } => {
                self.savepoint(&name.value);
                Ok(Response::done(0))
            }
            Statement::ReleaseSavepoint { name } => {
                self.back_to_savepoint(&name.value, false)?;
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
                object_type: ast::ObjectType::Index,
                names,
                table: Some(table),
                ..
            } => {
                let [index] = names.as_slice() else {
                    return Err(SqlError::parse("DROP INDEX of more than one index"));
                };
                self.commit()?;
                crate::alter::drop_index(self, index, table)
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
            Statement::LockTables { tables } => self.lock_tables(tables),
            Statement::UnlockTables => {
                self.unlock_tables()?;
                Ok(Response::done(0))
            }
            Statement::AlterTable(alter) => {
                self.commit()?;
                crate::alter::alter_table(self, alter)
            }
            Statement::RenameTable(renames) => {
                self.commit()?;
                crate::alter::rename_tables(self, renames)
            }
            Statement::Analyze(analyze) => {
                self.commit()?;
                crate::alter::analyze(self, analyze)
            }
            Statement::Truncate(truncate) => {
                self.commit()?;
                crate::alter::truncate(self, truncate)
            }
            Statement::CreateDatabase {
                db_name,
                if_not_exists,
                ..
            } => crate::ddl::create_database(self, db_name, *if_not_exists),
            Statement::CreateSchema {
                schema_name: ast::SchemaName::Simple(name),
                if_not_exists,
                ..
            } => crate::ddl::create_database(self, name, *if_not_exists),
            Statement::Drop {
                object_type: ast::ObjectType::Database | ast::ObjectType::Schema,
                if_exists,
                names,
                ..
            } => {
                self.commit()?;
                crate::ddl::drop_database(self, names, *if_exists)
            }
            Statement::Use(u) => self.use_database(u),
            Statement::Set(set) => crate::vars::set(self, set, params),
            Statement::Kill { modifier, id } => self.kill(*modifier, *id),
            Statement::ShowProcessList { full } => Ok(crate::show::processlist(self, *full)),
            Statement::ShowDatabases { show_options, .. }
            | Statement::ShowSchemas { show_options, .. } => {
                let pattern = like_pattern(show_options)?;
                let rows = self
                    .shared()
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
            Statement::ExplainTable { table_name, .. } => {
                crate::show::show_columns(self, table_name, false, None)
            }
            Statement::ShowColumns {
                full, show_options, ..
            } => {
                let Some(ast::ShowStatementIn {
                    parent_name: Some(name),
                    ..
                }) = &show_options.show_in
                else {
                    return Err(SqlError::parse("SHOW COLUMNS without FROM"));
                };
                let pattern = like_pattern(show_options)?;
                crate::show::show_columns(self, name, *full, pattern.as_deref())
            }
            Statement::ShowCreate {
                obj_type: ast::ShowCreateObject::Table,
                obj_name,
            } => crate::show::show_create(self, obj_name),
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
                if !self.shared().has_database(&name) {
                    return Err(SqlError::unknown_database(&name));
                }
                Arc::from(name.as_str())
            }
            _ => self.database().cloned().ok_or_else(SqlError::no_database)?,
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
        let home = self.home();
        let mut names: Vec<String> = (self.shared().engine.tables().iter())
            .map(|t| crate::names::split(home, t.name()))
            .filter(|(in_db, _)| in_db.eq_ignore_ascii_case(&db))
            .map(|(_, n)| n.to_owned())
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

    fn special(&mut self, special: crate::parse::Special) -> Result<Response, SqlError> {
        use crate::parse::Special;
        match special {
            Special::ShowWarnings => {
                let rows = self
                    .warnings()
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
            Special::FlushNothing => Ok(Response::done(0)),
            Special::ShowCreateDatabase(name, if_not_exists) => {
                let db = self.shown_database(Some(name))?;
                // MySQL 8.0 adds `/*!80016 DEFAULT ENCRYPTION='N' */`, which waterline's
                // CREATE DATABASE would not read back.
                let text = format!(
                    "CREATE DATABASE {}`{db}` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE \
                     utf8mb4_bin */",
                    if if_not_exists {
                        "/*!32312 IF NOT EXISTS*/ "
                    } else {
                        ""
                    }
                );
                Ok(Response::text(
                    &["Database", "Create Database"],
                    vec![vec![Value::from(db), Value::from(text)]],
                ))
            }
            Special::FlushWithReadLock(tables) => self.flush_with_read_lock(&tables),
            Special::EngineStatus => Ok(crate::engine_status::show(self)),
            Special::ShowIndex(table, db) => {
                let db = self.shown_database(db)?;
                self.table_in(&db, &table)?;
                self.run_text(&crate::show::show_index_query(&db, &table))
            }
            Special::ShowTableStatus(db, pattern) => {
                let db = self.shown_database(db)?;
                self.run_text(&crate::show::table_status_query(&db, pattern.as_deref()))
            }
            Special::NoKeysOption(table) => {
                self.clear_warnings();
                let db = self.database().cloned().ok_or_else(SqlError::no_database)?;
                self.table_in(&db, &table)?;
                self.warn(
                    "Note",
                    1031,
                    format!("Table storage engine for '{table}' doesn't have this option"),
                );
                Ok(Response::done(0))
            }
            Special::ConsistentSnapshot(read_only) => {
                self.start_with_snapshot(read_only)?;
                Ok(Response::done(0))
            }
            Special::Shutdown => {
                self.shared().request_shutdown(self.user())?;
                Ok(Response::done(0))
            }
        }
    }

    /// The columns a query will return, for COM_STMT_PREPARE (planned, not run).
    fn describe(&mut self, q: &ast::Query) -> Result<Vec<ResultColumn>, SqlError> {
        if crate::select::subquery::has_subquery(q) {
            return crate::select::subquery::describe(self, q);
        }
        if crate::select::union::is_union(q) {
            return crate::select::union::describe(self, q);
        }
        crate::select::describe(self, q)
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
