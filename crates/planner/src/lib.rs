//! # waterline-planner: a small range optimizer, and MySQL 8.0.27's regression as a switch
//!
//! Book section 8.1.1. MySQL 8.0.27 (commit 9a13c1c6, "remove QEP_TAB_STANDALONE") began
//! calling the range optimizer without the const and read tables. In
//! `get_full_func_mm_tree`,
//!
//! ```text
//! param_comp = ~(prev_tables | read_tables | current_table)
//! ```
//!
//! then held the const table `district`, so TPC-C StockLevel's condition
//! `ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id` looked unusable: the range on
//! `order_line` was lost and EXPLAIN estimated every order line of the district instead of
//! about 200. This crate rebuilds that logic in a form you can read and switch:
//! [`PlannerMode::Fixed`] (the default) and [`PlannerMode::Legacy8027`].
//!
//! The parts, in the order a query goes through them:
//!
//! | module | MySQL | what it does |
//! |---|---|---|
//! | [`bind`] | `Item` resolution | names to (table, column); every [`Expr`] knows its [`TableMap`] |
//! | `outer` | `simplify_joins`, semi-join | LEFT and RIGHT JOIN as [`OuterJoin`]s; those a WHERE makes inner; semi-joins and anti-joins; the join orders they allow |
//! | `join` | `JOIN::make_join_plan` | equalities, const tables, access paths, join order |
//! | `order` | `test_if_skip_sort_order`, `test_if_cheaper_ordering` | whether an index gives the ORDER BY / GROUP BY order; with a LIMIT ([`Planner::limit`]), an index read in order instead of a scan and a sort |
//! | [`range`] | `sql/range_optimizer/` | [`SelArg`](range::SelArg) intervals per key part, [`SelTree`](range::SelTree) per index, key ranges |
//! | [`cost`] | cost constants | `ALL`, `index`, `range`, `ref`, `eq_ref` costs |
//! | [`explain`] | `EXPLAIN` | MySQL's tabular form |
//! | [`trace`] | debug trace | table maps and `param_comp` in binary |
//! | [`walk`] | | every walk over sqlparser's AST, compiled once |
//!
//! The planner sees tables only through [`Catalog`]; [`MemCatalog`] is an in-memory one
//! with exact counts, and [`exec::execute`] runs a plan over it to compare estimates with
//! the rows really read.
//!
//! ```
//! use waterline_planner::{MemCatalog, Planner, PlannerMode, explain};
//! use waterline_types::{Column, ColumnType, TableSchema, Value};
//!
//! let mut catalog = MemCatalog::new("test");
//! let schema = TableSchema::new("t", vec![Column::new("a", ColumnType::Int), Column::new("b", ColumnType::Int)])
//!     .primary_key(&["a"])?;
//! catalog.load(schema, (0..100).map(|i| vec![Value::Int(i), Value::Int(i % 7)]).collect())?;
//!
//! let plan = Planner::new(&catalog).plan("SELECT b FROM t WHERE a BETWEEN 10 AND 19", &[])?;
//! let rows = explain::explain(&plan, &catalog);
//! assert_eq!(rows[0].get("type"), Some("range"));
//! assert_eq!(rows[0].get("rows"), Some("10"));
//! assert_eq!(plan.mode, PlannerMode::Fixed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The manual's chapter on the range optimizer and 8.0.27's regression: `docs/src/range-optimizer.md` in the repository (an mdBook:
//! `mdbook serve docs`).

pub mod bind;
mod catalog;
pub mod cost;
pub mod exec;
pub mod explain;
mod expr;
mod func;
mod join;
mod memory;
mod order;
mod outer;
mod plan;
pub mod range;
pub mod semijoin;
mod table_map;
pub mod trace;
pub mod value;
pub mod walk;

use std::sync::Arc;

use sqlparser::ast::{self, Statement};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;
use thiserror::Error;
use waterline_types::Value;

pub use bind::{BoundSelect, BoundTable, SemiJoin, SessionValues};
pub use catalog::{Catalog, IndexId, TableStats, own_name, qualified};
pub use expr::{Case, CmpOp, ColumnRef, Env, Expr, Func, FuncKind, TimeUnit, TrimSide};
pub use func::set_interrupt;
pub use memory::MemCatalog;
pub use outer::{JoinKind, OuterJoin};
pub use plan::{Access, Impossible, Nest, Plan, TablePlan, key_len, key_part_len};
pub use table_map::{MAX_TABLES, TableMap};

/// Which range analysis the planner runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PlannerMode {
    /// MySQL 8.0.27 to 8.0.38: range analysis without the const and read tables, so a value
    /// that reads a const table's column cannot bound a key.
    Legacy8027,
    /// The fix (and MySQL before 8.0.27): the const tables are previous and read tables.
    #[default]
    Fixed,
}

impl std::str::FromStr for PlannerMode {
    type Err = String;

    /// `fixed` or `legacy8027` (also `legacy`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "fixed" => Ok(PlannerMode::Fixed),
            "legacy8027" | "legacy" => Ok(PlannerMode::Legacy8027),
            other => Err(format!(
                "unknown planner mode {other:?} (fixed or legacy8027)"
            )),
        }
    }
}

/// Why a statement could not be planned. Each maps to a MySQL error code and SQLSTATE.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum PlanError {
    /// The SQL does not parse (1064).
    #[error("You have an error in your SQL syntax: {0}")]
    Parse(String),
    /// Valid SQL that waterline does not support (1235).
    #[error("This version of waterline doesn't yet support '{0}'")]
    Unsupported(String),
    /// No such table (1146); the name is `db.table`.
    #[error("Table '{0}' doesn't exist")]
    NoSuchTable(String),
    /// No such column (1054).
    #[error("Unknown column '{0}' in '{1}'")]
    UnknownColumn(String, &'static str),
    /// A column name that more than one table has (1052).
    #[error("Column '{0}' in {1} is ambiguous")]
    Ambiguous(String, &'static str),
    /// The same table name twice in FROM (1066).
    #[error("Not unique table/alias: '{0}'")]
    NotUniqueTable(String),
    /// A row value where a scalar was expected, or rows of different widths (1241).
    #[error("Operand should contain {0} column(s)")]
    Operand(usize),
    /// A native function called with the wrong number of arguments (1582).
    #[error("Incorrect parameter count in the call to native function '{0}'")]
    ParamCount(String),
    /// Arithmetic overflow (1690).
    #[error("Value is out of range in '{0}'")]
    OutOfRange(String),
    /// A `?` without a value (1210).
    #[error("Incorrect arguments to EXECUTE: no value for parameter {}", .0 + 1)]
    MissingParam(usize),
    /// More tables than a table map has bits (1116).
    #[error("Too many tables; waterline can only use {0} tables in a join")]
    TooManyTables(usize),
    /// The catalog failed (1105).
    #[error("{0}")]
    Catalog(String),
    /// An aggregate where none may be: in WHERE, ON, GROUP BY, or in another aggregate
    /// (1111).
    #[error("Invalid use of group function")]
    GroupFunction,
    /// An argument a function cannot take, such as an ESCAPE of more than one character
    /// or not a constant (1210).
    #[error("Incorrect arguments to {0}")]
    WrongArguments(&'static str),
    /// A bug in the planner (1105).
    #[error("internal planner error: {0}")]
    Internal(String),
    /// An error the session reported for one of its values (an unknown `@@variable`, 1193):
    /// its number, SQLSTATE and message.
    #[error("{2}")]
    Session(u16, &'static str, String),
}

impl PlanError {
    /// The MySQL error number.
    pub fn code(&self) -> u16 {
        match self {
            PlanError::Parse(_) => 1064,
            PlanError::Unsupported(_) => 1235,
            PlanError::NoSuchTable(_) => 1146,
            PlanError::UnknownColumn(..) => 1054,
            PlanError::Ambiguous(..) => 1052,
            PlanError::NotUniqueTable(_) => 1066,
            PlanError::Operand(_) => 1241,
            PlanError::ParamCount(_) => 1582,
            PlanError::OutOfRange(_) => 1690,
            PlanError::MissingParam(_) => 1210,
            PlanError::TooManyTables(_) => 1116,
            PlanError::GroupFunction => 1111,
            PlanError::WrongArguments(_) => 1210,
            PlanError::Catalog(_) | PlanError::Internal(_) => 1105,
            PlanError::Session(code, ..) => *code,
        }
    }

    /// The SQLSTATE.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            PlanError::Parse(_) | PlanError::Ambiguous(..) | PlanError::Unsupported(_) => "42000",
            PlanError::NoSuchTable(_) => "42S02",
            PlanError::UnknownColumn(..) => "42S22",
            PlanError::NotUniqueTable(_) | PlanError::ParamCount(_) => "42000",
            PlanError::Operand(_) => "21000",
            PlanError::OutOfRange(_) => "22003",
            PlanError::MissingParam(_)
            | PlanError::GroupFunction
            | PlanError::WrongArguments(_) => "HY000",
            PlanError::TooManyTables(_) | PlanError::Catalog(_) | PlanError::Internal(_) => "HY000",
            PlanError::Session(_, state, _) => state,
        }
    }
}

/// Parses MySQL-dialect SQL.
pub fn parse(sql: &str) -> Result<Vec<Statement>, PlanError> {
    Parser::parse_sql(&MySqlDialect {}, sql).map_err(|e| PlanError::Parse(e.to_string()))
}

/// Plans statements against a catalog.
#[derive(Clone, Copy)]
pub struct Planner<'c> {
    catalog: &'c dyn Catalog,
    mode: PlannerMode,
    trace: bool,
    limit: Option<usize>,
}

impl<'c> Planner<'c> {
    /// A planner in [`PlannerMode::Fixed`], without trace.
    pub fn new(catalog: &'c dyn Catalog) -> Planner<'c> {
        Planner {
            catalog,
            mode: PlannerMode::Fixed,
            trace: false,
            limit: None,
        }
    }

    /// The same planner in `mode`.
    pub fn mode(self, mode: PlannerMode) -> Planner<'c> {
        Planner { mode, ..self }
    }

    /// The same planner, recording the optimizer trace if `on`.
    pub fn trace(self, on: bool) -> Planner<'c> {
        Planner { trace: on, ..self }
    }

    /// The same planner, for a caller that wants only the first `limit` rows (LIMIT plus
    /// OFFSET) of a query whose rows go out as the plan orders them (no grouping, DISTINCT
    /// or aggregate after it). A query with ORDER BY that would scan its one table and sort
    /// may then read an index that gives the order, and stop at the limit (MySQL's
    /// `test_if_cheaper_ordering`).
    pub fn limit(self, limit: Option<usize>) -> Planner<'c> {
        Planner { limit, ..self }
    }

    /// Parses and plans one SELECT (or `EXPLAIN SELECT`). `params` are the values of its `?`
    /// placeholders; a missing one leaves its conditions unused by ranges.
    pub fn plan(&self, sql: &str, params: &[Value]) -> Result<Plan, PlanError> {
        let statements = parse(sql)?;
        let [statement] = statements.as_slice() else {
            return Err(PlanError::Unsupported(
                "more or less than one statement".into(),
            ));
        };
        match statement {
            Statement::Query(q) => self.plan_query(q, params),
            Statement::Explain { statement, .. } => match statement.as_ref() {
                Statement::Query(q) => self.plan_query(q, params),
                other => Err(PlanError::Unsupported(format!("EXPLAIN {other}"))),
            },
            other => Err(PlanError::Unsupported(other.to_string())),
        }
    }

    /// Plans a parsed query. Every `[NOT] EXISTS` and `[NOT] IN` subquery of WHERE that can
    /// become a semi-join or anti-join does ([`semijoin`]); the planner alone runs nothing,
    /// so the choice to run one once instead is its caller's (the SQL layer's).
    pub fn plan_query(&self, query: &ast::Query, params: &[Value]) -> Result<Plan, PlanError> {
        let flattenable = semijoin::flattenable(self.catalog, query);
        let select = if flattenable.is_empty() {
            bind::bind_query(self.catalog, query, None)?
        } else {
            let mut query = query.clone();
            let semis = semijoin::flatten_all(&mut query, flattenable);
            bind::bind_query_with(self.catalog, &query, None, &semis)?
        };
        self.optimize(Arc::new(select), params)
    }

    /// Plans a query bound before (by [`bind::bind_query`] or [`Planner::bind_where`]), for
    /// `params`: how a prepared statement runs again. As in MySQL, names are resolved once
    /// and the plan is made anew each time, since the best access depends on the values.
    pub fn optimize(&self, select: Arc<BoundSelect>, params: &[Value]) -> Result<Plan, PlanError> {
        join::optimize(
            self.catalog,
            self.mode,
            select,
            params,
            self.trace,
            self.limit,
        )
    }

    /// Plans the rows an UPDATE or DELETE of `table` touches: a one-table select of every
    /// column with `selection` as its WHERE.
    pub fn plan_where(
        &self,
        table: &str,
        selection: Option<&ast::Expr>,
        params: &[Value],
    ) -> Result<Plan, PlanError> {
        let select = self.bind_where(table, selection, None)?;
        self.optimize(Arc::new(select), params)
    }

    /// Binds the WHERE of an UPDATE or DELETE of `table`, as a one-table select of every
    /// column; with `session`, as [`bind::bind_query`] says.
    pub fn bind_where(
        &self,
        table: &str,
        selection: Option<&ast::Expr>,
        session: Option<&dyn SessionValues>,
    ) -> Result<BoundSelect, PlanError> {
        let schema = self.catalog.table(table).ok_or_else(|| {
            PlanError::NoSuchTable(catalog::qualified(self.catalog.database(), table))
        })?;
        let tables = vec![BoundTable {
            name: schema.name.clone(),
            alias: own_name(&schema.name).to_owned(),
            schema: Arc::clone(&schema),
        }];
        let mut binder = bind::Binder::new(&tables);
        if let Some(session) = session {
            binder = binder.with_session(session);
        }
        let conds = match selection {
            Some(e) => binder.expr(e, "where clause")?.conjuncts(),
            None => Vec::new(),
        };
        let param_count = binder.param_count();
        let used_columns = vec![vec![true; schema.columns.len()]];
        Ok(BoundSelect {
            volatile: binder.volatile,
            tables,
            conds,
            used_columns,
            param_count,
            ..BoundSelect::default()
        })
    }
}
