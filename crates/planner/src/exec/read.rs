//! Read: the rows one table's access path gives (EXPLAIN's type: const, eq_ref and ref,
//! range, index, ALL), from any [`Storage`]: a transaction in `waterline-sql`, the in-memory
//! catalog in the planner's tests.

use waterline_types::{Key, KeyRange, Row, Value};

use crate::PlanError;
use crate::catalog::IndexId;
use crate::expr::{Env, row_refs};
use crate::plan::{Access, Plan};
use crate::value::{KeyBound, key_bound};

/// Where an executor reads rows from.
pub trait Storage {
    /// The rows whose key in `index` of `table` lies in `range`, in index order; only the
    /// first `limit` of them if given.
    fn scan(
        &self,
        table: &str,
        index: IndexId,
        range: &KeyRange,
        limit: Option<usize>,
    ) -> Result<Vec<Row>, PlanError>;
    /// Every row of `table` in its clustered index's order (a table without a primary key:
    /// its hidden row id's, the order rows came in), or the first `limit` of them.
    fn scan_all(&self, table: &str, limit: Option<usize>) -> Result<Vec<Row>, PlanError>;
    /// Called for every row the executor looks at, before its conditions: an error stops
    /// the execution there (a statement killed, or out of time). None by default.
    fn check(&self) -> Result<(), PlanError> {
        Ok(())
    }
}

/// The rows table `plan.tables[pos]`'s access reads, given the earlier tables' rows; at most
/// `limit` index entries if given (a full scan of a table without a primary key ignores it).
pub(super) fn read(
    plan: &Plan,
    storage: &dyn Storage,
    params: &[Value],
    pos: usize,
    current: &[Option<Row>],
    limit: Option<usize>,
) -> Result<Vec<Row>, PlanError> {
    let tp = &plan.tables[pos];
    let table = &plan.select.tables[tp.table];
    match &tp.access {
        Access::Const { row, .. } => Ok(row.iter().cloned().collect()),
        Access::EqRef { index, key } | Access::Ref { index, key } => {
            let refs = row_refs(current);
            let env = Env::new(&refs, params);
            let mut values = Vec::new();
            for (e, &col) in key.iter().zip(index.columns(&table.schema)) {
                let v = e.eval(env)?;
                match key_bound(table.schema.columns[col].ty, &v) {
                    Some(KeyBound::Exact(v)) => values.push(v),
                    Some(KeyBound::Null | KeyBound::Between { .. }) => return Ok(Vec::new()),
                    // Not comparable as a key: read everything, the conditions decide.
                    None => return storage.scan_all(&table.name, limit),
                }
            }
            storage.scan(
                &table.name,
                *index,
                &KeyRange::Prefix(Key::from(values)),
                limit,
            )
        }
        Access::Range { index, ranges, .. } => {
            let mut rows = Vec::new();
            for r in ranges {
                let left = limit.map(|l| l.saturating_sub(rows.len()));
                if left == Some(0) {
                    break;
                }
                rows.extend(storage.scan(&table.name, *index, r, left)?);
            }
            Ok(rows)
        }
        Access::Index { index } => storage.scan(&table.name, *index, &KeyRange::All, limit),
        // With a limit, the rows are wanted in the clustered index's order (`order.rs`):
        // read only that many, as InnoDB stops its scan there.
        Access::All => storage.scan_all(&table.name, limit),
    }
}
