//! A reference executor: runs a plan's access paths as a nested-loop join over any
//! [`Storage`], checking each table's conditions, and counts the rows it reads per table.
//!
//! It exists so that a plan's estimates can be compared with what the plan really reads (the
//! regression test), and so that "a range never loses a row" can be property-tested. The
//! server runs plans over transactions with its own executor.

use waterline_txn::{Key, KeyRange, Row, Value};

use crate::PlanError;
use crate::catalog::IndexId;
use crate::expr::Env;
use crate::plan::{Access, Plan};
use crate::value::{KeyBound, key_bound};

/// Where an executor reads rows from.
pub trait Storage {
    /// The rows whose key in `index` of `table` lies in `range`, in index order.
    fn scan(&self, table: &str, index: IndexId, range: &KeyRange) -> Result<Vec<Row>, PlanError>;
    /// Every row of `table`.
    fn scan_all(&self, table: &str) -> Result<Vec<Row>, PlanError>;
}

/// What an execution produced and read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Execution {
    /// The joined rows: one row per table, by FROM position.
    pub rows: Vec<Vec<Row>>,
    /// Rows read from each table (by FROM position), before its conditions.
    pub examined: Vec<u64>,
}

/// Runs `plan` over `storage`.
pub fn execute(
    plan: &Plan,
    storage: &dyn Storage,
    params: &[Value],
) -> Result<Execution, PlanError> {
    let n = plan.select.tables.len();
    let mut exec = Execution {
        rows: Vec::new(),
        examined: vec![0; n],
    };
    if plan.impossible.is_some() {
        return Ok(exec);
    }
    let mut current: Vec<Option<Row>> = vec![None; n];
    let mut buffers: Vec<Option<Vec<Row>>> = vec![None; plan.tables.len()];
    step(
        plan,
        storage,
        params,
        0,
        &mut current,
        &mut buffers,
        &mut exec,
    )?;
    Ok(exec)
}

fn step(
    plan: &Plan,
    storage: &dyn Storage,
    params: &[Value],
    pos: usize,
    current: &mut Vec<Option<Row>>,
    buffers: &mut Vec<Option<Vec<Row>>>,
    exec: &mut Execution,
) -> Result<(), PlanError> {
    let Some(tp) = plan.tables.get(pos) else {
        exec.rows.push(
            current
                .iter()
                .map(|r| r.clone().unwrap_or_default())
                .collect(),
        );
        return Ok(());
    };
    let candidates = match &buffers[pos] {
        // A table joined through a hash table is read once.
        Some(rows) => rows.clone(),
        None => {
            let rows = read(plan, storage, params, pos, current)?;
            exec.examined[tp.table] += rows.len() as u64;
            if tp.join_buffer {
                buffers[pos] = Some(rows.clone());
            }
            rows
        }
    };
    for row in candidates {
        current[tp.table] = Some(row);
        let pass = {
            let refs: Vec<Option<&Row>> = current.iter().map(Option::as_ref).collect();
            let env = Env {
                rows: &refs,
                params,
            };
            let mut pass = true;
            for c in &tp.cond {
                if !c.is_true(env)? {
                    pass = false;
                    break;
                }
            }
            pass
        };
        if !pass {
            continue;
        }
        if pos + 1 == plan.tables.len() {
            // The last table: its row moves into the output (a one-table query copies none).
            let last = current[tp.table].take();
            let mut out: Vec<Row> = current
                .iter()
                .map(|r| r.clone().unwrap_or_default())
                .collect();
            out[tp.table] = last.unwrap_or_default();
            exec.rows.push(out);
        } else {
            step(plan, storage, params, pos + 1, current, buffers, exec)?;
        }
    }
    current[tp.table] = None;
    Ok(())
}

/// The rows table `plan.tables[pos]`'s access reads, given the earlier tables' rows.
fn read(
    plan: &Plan,
    storage: &dyn Storage,
    params: &[Value],
    pos: usize,
    current: &[Option<Row>],
) -> Result<Vec<Row>, PlanError> {
    let tp = &plan.tables[pos];
    let table = &plan.select.tables[tp.table];
    match &tp.access {
        Access::Const { row, .. } => Ok(row.iter().cloned().collect()),
        Access::EqRef { index, key } | Access::Ref { index, key } => {
            let refs: Vec<Option<&Row>> = current.iter().map(Option::as_ref).collect();
            let env = Env {
                rows: &refs,
                params,
            };
            let mut values = Vec::new();
            for (e, &col) in key.iter().zip(index.columns(&table.schema)) {
                let v = e.eval(env)?;
                match key_bound(table.schema.columns[col].ty, &v) {
                    Some(KeyBound::Exact(v)) => values.push(v),
                    Some(KeyBound::Null | KeyBound::Between { .. }) => return Ok(Vec::new()),
                    // Not comparable as a key: read everything, the conditions decide.
                    None => return storage.scan_all(&table.name),
                }
            }
            storage.scan(&table.name, *index, &KeyRange::Prefix(Key(values)))
        }
        Access::Range { index, ranges, .. } => {
            let mut rows = Vec::new();
            for r in ranges {
                rows.extend(storage.scan(&table.name, *index, r)?);
            }
            Ok(rows)
        }
        Access::Index { index } => storage.scan(&table.name, *index, &KeyRange::All),
        Access::All => storage.scan_all(&table.name),
    }
}
