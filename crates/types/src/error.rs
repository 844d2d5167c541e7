//! What a schema refuses.

/// A row, a value or a schema that does not fit a table's schema.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("table {table}, column {column}: {reason}")]
pub struct SchemaError {
    /// The table.
    pub table: String,
    /// The column (or `*` for the whole row).
    pub column: String,
    /// What is wrong.
    pub reason: String,
}
