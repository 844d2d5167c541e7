//! What a schema refuses, and the MySQL error each refusal is.

/// A row, a value or a schema that does not fit a table's schema.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("table {table}, column {column}: {reason}")]
pub struct SchemaError {
    /// The table.
    pub table: String,
    /// The column (or `*` for the whole row, or an index's name).
    pub column: String,
    /// Which refusal, and so which MySQL error.
    pub kind: Refusal,
    /// What is wrong, in words.
    pub reason: String,
}

/// Why a schema refused something: each is one MySQL error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// NULL for a NOT NULL column: 1048.
    Null,
    /// A number outside the column's type: 1264.
    OutOfRange,
    /// A string longer than the column: 1406.
    TooLong,
    /// A value of a type the column cannot store: 1366.
    WrongType,
    /// A column named twice: 1060.
    DuplicateColumn,
    /// An index name taken: 1061.
    DuplicateKeyName,
    /// A key over a column the table does not have: 1072.
    NoSuchColumn,
    /// A nullable primary key column: 1171.
    NullablePrimaryKey,
    /// An update that changes the primary key in place (the engine's API; SQL moves the row):
    /// 1105.
    PrimaryKeyChanged,
    /// Any other definition the engine cannot take: 1105.
    Definition,
}

impl Refusal {
    /// MySQL's error number and SQLSTATE for it.
    pub fn mysql(self) -> (u16, &'static str) {
        match self {
            Refusal::Null => (1048, "23000"),
            Refusal::OutOfRange => (1264, "22003"),
            Refusal::TooLong => (1406, "22001"),
            Refusal::WrongType => (1366, "HY000"),
            Refusal::DuplicateColumn => (1060, "42S21"),
            Refusal::DuplicateKeyName => (1061, "42000"),
            Refusal::NoSuchColumn => (1072, "42000"),
            Refusal::NullablePrimaryKey => (1171, "42000"),
            Refusal::PrimaryKeyChanged | Refusal::Definition => (1105, "HY000"),
        }
    }
}
