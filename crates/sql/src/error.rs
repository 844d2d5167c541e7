//! SQL errors as MySQL reports them: an error number, a SQLSTATE, and a message. Every failure
//! a client can cause ends here, and goes out as an error packet; none drops the connection.

use waterline_planner::PlanError;
use waterline_txn::{Interruption, Refusal, TxnError};

/// A MySQL error. Two are equal when a client sees the same: number, state and message
/// (their causes are not compared).
#[derive(Clone, Debug, thiserror::Error)]
#[error("ERROR {code} ({state}): {message}")]
pub struct SqlError {
    /// MySQL's error number (1064, 1146, ...).
    pub code: u16,
    /// The SQLSTATE.
    pub state: &'static str,
    /// The message.
    pub message: String,
    /// The engine error behind it, if any (a deadlock, a lock wait timeout, ...).
    pub cause: Option<Box<TxnError>>,
}

impl PartialEq for SqlError {
    fn eq(&self, other: &SqlError) -> bool {
        (self.code, self.state, &self.message) == (other.code, other.state, &other.message)
    }
}

impl SqlError {
    /// An error with this number, state and message.
    pub fn new(code: u16, state: &'static str, message: impl Into<String>) -> SqlError {
        SqlError {
            code,
            state,
            message: message.into(),
            cause: None,
        }
    }

    /// 1064: the SQL does not parse.
    pub fn parse(message: impl std::fmt::Display) -> SqlError {
        SqlError::new(
            1064,
            "42000",
            format!("You have an error in your SQL syntax; {message}"),
        )
    }

    /// 1235: valid SQL that waterline does not do.
    pub fn unsupported(what: impl std::fmt::Display) -> SqlError {
        SqlError::new(
            1235,
            "42000",
            format!("This version of waterline doesn't yet support '{what}'"),
        )
    }

    /// 1046: a table without a database.
    pub fn no_database() -> SqlError {
        SqlError::new(1046, "3D000", "No database selected")
    }

    /// 1049: an unknown database.
    pub fn unknown_database(name: &str) -> SqlError {
        SqlError::new(1049, "42000", format!("Unknown database '{name}'"))
    }

    /// 1146: an unknown table.
    pub fn no_table(db: &str, table: &str) -> SqlError {
        let table = waterline_planner::qualified(db, table);
        SqlError::new(1146, "42S02", format!("Table '{table}' doesn't exist"))
    }

    /// 1054: an unknown column.
    pub fn unknown_column(column: &str, clause: &str) -> SqlError {
        SqlError::new(
            1054,
            "42S22",
            format!("Unknown column '{column}' in '{clause}'"),
        )
    }

    /// 1193: an unknown system variable.
    pub fn unknown_variable(name: &str) -> SqlError {
        SqlError::new(1193, "HY000", format!("Unknown system variable '{name}'"))
    }

    /// 1243: an unknown prepared statement id.
    pub fn unknown_statement(id: u32, what: &str) -> SqlError {
        SqlError::new(
            1243,
            "HY000",
            format!("Unknown prepared statement handler ({id}) given to {what}"),
        )
    }

    /// 1136: a row with the wrong number of values.
    pub fn column_count(row: usize) -> SqlError {
        SqlError::new(
            1136,
            "21S01",
            format!("Column count doesn't match value count at row {row}"),
        )
    }

    /// 1105: anything else.
    pub fn other(message: impl Into<String>) -> SqlError {
        SqlError::new(1105, "HY000", message)
    }

    /// Whether the engine rolled back, or the server must roll back, the whole transaction:
    /// a deadlock and a failed commit always; a lock-wait timeout only with
    /// `rollback_on_timeout` (InnoDB's `innodb_rollback_on_timeout`, off by default: then
    /// only the statement is rolled back and the transaction goes on).
    pub fn ends_transaction(&self, rollback_on_timeout: bool) -> bool {
        self.cause.as_ref().is_some_and(|c| {
            c.rolled_back_transaction()
                || (rollback_on_timeout && matches!(**c, TxnError::LockWaitTimeout { .. }))
        })
    }
}

impl From<PlanError> for SqlError {
    fn from(e: PlanError) -> SqlError {
        SqlError::new(e.code(), e.sqlstate(), e.to_string())
    }
}

impl From<waterline_txn::SchemaError> for SqlError {
    fn from(e: waterline_txn::SchemaError) -> SqlError {
        SqlError::from(TxnError::from(e))
    }
}

impl From<TxnError> for SqlError {
    fn from(e: TxnError) -> SqlError {
        let (code, state, message) = match &e {
            TxnError::LockWaitTimeout { .. } => (
                1205,
                "HY000",
                "Lock wait timeout exceeded; try restarting transaction".to_owned(),
            ),
            TxnError::LockNowait { .. } => (
                3572,
                "HY000",
                "Statement aborted because lock(s) could not be acquired immediately and \
                 NOWAIT is set."
                    .to_owned(),
            ),
            TxnError::Interrupted(why) => {
                let (code, state) = match why {
                    Interruption::Query => (1317, "70100"),
                    Interruption::Connection => (1053, "08S01"),
                    Interruption::Timeout => (3024, "HY000"),
                };
                (code, state, why.to_string())
            }
            TxnError::Deadlock { .. } => (
                1213,
                "40001",
                "Deadlock found when trying to get lock; try restarting transaction".to_owned(),
            ),
            TxnError::DuplicateKey { index, key, .. } => {
                let values: Vec<String> = key
                    .iter()
                    .map(|v| v.to_string().trim_matches('\'').to_owned())
                    .collect();
                (
                    1062,
                    "23000",
                    format!("Duplicate entry '{}' for key '{index}'", values.join("-")),
                )
            }
            TxnError::Schema(e) => {
                let (code, state) = e.kind.mysql();
                let column = &e.column;
                let message = match e.kind {
                    Refusal::Null => format!("Column '{column}' cannot be null"),
                    Refusal::OutOfRange => format!("Out of range value for column '{column}'"),
                    Refusal::TooLong => format!("Data too long for column '{column}'"),
                    Refusal::WrongType => {
                        format!("Incorrect value for column '{column}': {}", e.reason)
                    }
                    Refusal::DuplicateColumn => format!("Duplicate column name '{column}'"),
                    Refusal::DuplicateKeyName => format!("Duplicate key name '{column}'"),
                    Refusal::NoSuchColumn => {
                        format!("Key column '{column}' doesn't exist in table")
                    }
                    Refusal::NullablePrimaryKey => "All parts of a PRIMARY KEY must be NOT \
                         NULL; if you need NULL in a key, use UNIQUE instead"
                        .to_owned(),
                    Refusal::PrimaryKeyChanged | Refusal::Definition => e.to_string(),
                };
                (code, state, message)
            }
            TxnError::NoSuchTable(t) => (1146, "42S02", format!("Table '{t}' doesn't exist")),
            TxnError::TableExists(t) => (1050, "42S01", format!("Table '{t}' already exists")),
            TxnError::NoSuchIndex { table, index } => (
                1176,
                "42000",
                format!("Key '{index}' doesn't exist in table '{table}'"),
            ),
            other => (1105, "HY000", other.to_string()),
        };
        SqlError {
            code,
            state,
            message,
            cause: Some(Box::new(e)),
        }
    }
}
