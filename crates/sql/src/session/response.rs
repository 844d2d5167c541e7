//! What a statement answers: rows with their columns, or done with the rows affected; and
//! the status flags a server sends with each answer.

use std::sync::Arc;

use waterline_txn::Value;

use crate::types::FieldType;

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
