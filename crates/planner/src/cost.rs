//! The cost model: a few constants in the spirit of MySQL's server and engine cost tables
//! (`mysql.server_cost`, `mysql.engine_cost`), in units of "reading one row".
//!
//! | access      | cost                                                            |
//! |-------------|-----------------------------------------------------------------|
//! | `ALL`       | rows × `ROW_READ`                                                |
//! | `index`     | rows × `INDEX_ENTRY_READ` (entries are smaller than rows)        |
//! | `range`     | ranges × `SEEK` + rows × row cost                                |
//! | `ref`       | per lookup: `SEEK` + rows × row cost                             |
//! | `eq_ref`    | per lookup: `SEEK` + 1 × row cost                                |
//!
//! The row cost is `ROW_READ` through the clustered index or a covering index, and
//! `ROW_READ + LOOKUP` through a secondary index that is not covering (each hit is looked up
//! in the clustered index, as InnoDB does). Every row read also costs `ROW_EVALUATE` for its
//! conditions. A table joined after another pays its per-lookup cost once per row of the
//! tables before it, unless its access does not depend on them: then it is read once and
//! joined through a hash table (MySQL 8's hash join), paying `ROW_EVALUATE` per probe.
//!
//! The model only has to rank plans the way the row counts do; it is not calibrated in time.

/// Reading one row of a table (the unit).
pub const ROW_READ: f64 = 1.0;
/// Reading one entry of a covering secondary index in a full index scan.
pub const INDEX_ENTRY_READ: f64 = 0.5;
/// Looking up a secondary index hit in the clustered index.
pub const LOOKUP: f64 = 1.0;
/// Descending the B-tree to the start of a range or a ref key.
pub const SEEK: f64 = 1.0;
/// Checking the conditions on one row (MySQL's `row_evaluate_cost`, 0.1).
pub const ROW_EVALUATE: f64 = 0.1;

/// MySQL's default selectivities for a condition no index estimated
/// (`sql/item_cmpfunc.h`, `COND_FILTER_*`).
pub mod filter {
    /// `col = value`.
    pub const EQUALITY: f64 = 0.1;
    /// `col < value` and friends.
    pub const INEQUALITY: f64 = 0.3333;
    /// `col BETWEEN a AND b`.
    pub const BETWEEN: f64 = 0.1111;
    /// Anything the planner cannot estimate.
    pub const ALLPASS: f64 = 1.0;
}
