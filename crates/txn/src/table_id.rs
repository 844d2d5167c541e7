//! A table's id: what a lock, a log record and the catalog name a table by. A leaf, so that
//! the lock table and the tables (which lock) need not name each other.

/// A table's id (its position in the catalog).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TableId(pub u32);

impl std::fmt::Display for TableId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "table#{}", self.0)
    }
}
