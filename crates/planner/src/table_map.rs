//! `TableMap`: the set of tables an expression uses, as MySQL's `table_map` (a `u64` bitset).
//!
//! Each table of a join gets one bit, by its position in the FROM clause: the first table is
//! bit 0. Three high bits are pseudo-tables, as in MySQL's `sql/table.h`:
//!
//! | bit | name                  | meaning                                              |
//! |-----|-----------------------|------------------------------------------------------|
//! | 61  | `INNER_TABLE_BIT`     | "the table being analysed"; the range optimizer adds  |
//! |     |                       | it to both `prev_tables` and `read_tables`           |
//! | 62  | `OUTER_REF_TABLE_BIT` | a reference to an outer query (unused here)          |
//! | 63  | `RAND_TABLE_BIT`      | a non-deterministic expression (SLEEP): never a      |
//! |     |                       | constant, evaluated per row                          |
//!
//! The words the optimizer uses for sets of tables, for a table `t` being planned:
//! - **const tables**: tables with at most one matching row, found by a primary or unique key
//!   equal to constants. They are read *while optimizing*, so their columns are known values.
//! - **read tables** (`read_tables`): tables whose row is known when `t`'s range is analysed;
//!   at optimization time, the const tables (MySQL's `found_const_table_map`).
//! - **previous tables** (`prev_tables`): tables before `t` in the join (at least the const
//!   tables). A condition may refer to them and still bound `t`'s key.
//! - **current table** (`current_table`): `t` itself.
//!
//! `param_comp = !(prev_tables | read_tables | current_table)` is every table that is *none*
//! of these. A value that uses a table in `param_comp` cannot bound `t`'s key.

use std::fmt;
use std::ops::{BitAnd, BitOr, Not};

/// A set of tables, one bit each (MySQL's `table_map`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TableMap(pub u64);

/// The most tables a join may have: the bits below the pseudo-table bits.
pub const MAX_TABLES: usize = 61;

impl TableMap {
    /// No table (a constant expression uses no table).
    pub const EMPTY: TableMap = TableMap(0);
    /// MySQL's `INNER_TABLE_BIT` (bit 61).
    pub const INNER_TABLE_BIT: TableMap = TableMap(1 << 61);
    /// MySQL's `OUTER_REF_TABLE_BIT` (bit 62).
    pub const OUTER_REF_TABLE_BIT: TableMap = TableMap(1 << 62);
    /// MySQL's `RAND_TABLE_BIT` (bit 63).
    pub const RAND_TABLE_BIT: TableMap = TableMap(1 << 63);

    /// The table at FROM position `position`.
    ///
    /// # Panics
    /// If `position >= MAX_TABLES` (the binder refuses such joins first).
    pub fn table(position: usize) -> TableMap {
        assert!(
            position < MAX_TABLES,
            "a join has at most {MAX_TABLES} tables"
        );
        TableMap(1 << position)
    }

    /// The tables at FROM positions `0..n`.
    pub fn first(n: usize) -> TableMap {
        TableMap((0..n.min(MAX_TABLES)).fold(0, |m, i| m | 1 << i))
    }

    /// Whether no bit is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every table of `other` is in `self`.
    pub fn contains(self, other: TableMap) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether `self` and `other` share a table.
    pub fn overlaps(self, other: TableMap) -> bool {
        self.0 & other.0 != 0
    }

    /// The FROM positions of the real (non-pseudo) tables in the set, ascending.
    pub fn positions(self) -> impl Iterator<Item = usize> {
        (0..MAX_TABLES).filter(move |&i| self.0 & (1 << i) != 0)
    }

    /// The value in binary, 64 digits in groups of 8 (as the trace prints it).
    pub fn binary(self) -> String {
        let digits = format!("{:064b}", self.0);
        let groups: Vec<&str> = (0..8).map(|i| &digits[i * 8..i * 8 + 8]).collect();
        groups.join("_")
    }
}

impl BitOr for TableMap {
    type Output = TableMap;
    fn bitor(self, rhs: TableMap) -> TableMap {
        TableMap(self.0 | rhs.0)
    }
}

impl BitAnd for TableMap {
    type Output = TableMap;
    fn bitand(self, rhs: TableMap) -> TableMap {
        TableMap(self.0 & rhs.0)
    }
}

impl Not for TableMap {
    type Output = TableMap;
    fn not(self) -> TableMap {
        TableMap(!self.0)
    }
}

/// Prints `0b<binary> (<decimal>)`: the decimal is what MySQL's debug trace printed.
impl fmt::Display for TableMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0b{} ({})", self.binary(), self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_books_param_comp_values() {
        // District is table 0, order_line table 1 (their FROM positions).
        let district = TableMap::table(0);
        let order_line = TableMap::table(1);
        let inner = TableMap::INNER_TABLE_BIT;
        // Fixed: the const table district is among the previous and read tables.
        let fixed = !((district | inner) | (district | inner) | order_line);
        assert_eq!(fixed.0, 16140901064495857660);
        // 8.0.27: called without const and read tables.
        let legacy = !(inner | inner | order_line);
        assert_eq!(legacy.0, 16140901064495857661);
        assert!(legacy.overlaps(district) && !fixed.overlaps(district));
    }

    #[test]
    fn binary_is_grouped() {
        assert_eq!(
            TableMap::table(1).binary(),
            "00000000_00000000_00000000_00000000_00000000_00000000_00000000_00000010"
        );
        assert_eq!(
            (TableMap::table(0) | TableMap::table(3))
                .positions()
                .collect::<Vec<_>>(),
            [0, 3]
        );
    }
}
