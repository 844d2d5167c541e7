//! Filter and join: each table's rows from its access path (`read.rs`), checked against the
//! conditions the plan attached to that table, and joined in the plan's order by nested
//! loops (a table the plan joins through a hash table is read once and kept). UPDATE and
//! DELETE stop here; a SELECT goes on to [`super::Output::finish`].

use waterline_types::{Row, Value};

use crate::PlanError;
use crate::expr::{Env, row_refs};
use crate::plan::Plan;

use super::read::{Storage, read};

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
    execute_first(plan, storage, params, None)
}

/// Runs `plan` over `storage` until it has produced `wanted` rows (all if `None`): LIMIT
/// pushed into the plan, for a caller that knows the plan's order is the query's (no sort,
/// grouping or DISTINCT after it; see [`Plan::ordered_by_index`]).
///
/// A join stops at the `wanted`-th row. A one-table plan also reads only that many index
/// entries (and locks only those rows, for a locking read, as InnoDB stops at the limit);
/// if its conditions then drop some, it reads again with four times the limit, so the
/// answer is always that of the unlimited plan cut at `wanted`.
pub fn execute_first(
    plan: &Plan,
    storage: &dyn Storage,
    params: &[Value],
    wanted: Option<usize>,
) -> Result<Execution, PlanError> {
    let n = plan.select.tables.len();
    let mut examined = vec![0; n];
    if plan.impossible.is_some() || wanted == Some(0) {
        return Ok(Execution {
            rows: Vec::new(),
            examined,
        });
    }
    let mut hint = wanted.filter(|_| plan.tables.len() == 1);
    let mut current: Vec<Option<Row>> = vec![None; n];
    loop {
        let mut exec = Execution {
            rows: Vec::new(),
            examined,
        };
        let mut run = Run {
            plan,
            storage,
            params,
            wanted,
            hint,
            buffers: Vec::new(),
            exhausted: true,
        };
        run.step(0, &mut current, &mut exec)?;
        let short = wanted.is_some_and(|w| exec.rows.len() < w);
        if !short || run.exhausted {
            return Ok(exec);
        }
        // Read again with a larger hint; what this try examined counts too.
        examined = exec.examined;
        hint = hint.map(|h| h.saturating_mul(4));
    }
}

/// One execution's fixed inputs and its join buffers.
struct Run<'a> {
    plan: &'a Plan,
    storage: &'a dyn Storage,
    params: &'a [Value],
    /// Stop after this many output rows.
    wanted: Option<usize>,
    /// Read at most this many entries of the first table (one-table plans).
    hint: Option<usize>,
    /// The rows of tables joined through a hash table, by position (as they are read).
    buffers: Vec<Option<Vec<Row>>>,
    /// Whether the first table's read returned fewer entries than `hint` (nothing was cut).
    exhausted: bool,
}

impl Run<'_> {
    fn step(
        &mut self,
        pos: usize,
        current: &mut Vec<Option<Row>>,
        exec: &mut Execution,
    ) -> Result<(), PlanError> {
        let (plan, params) = (self.plan, self.params);
        let Some(tp) = plan.tables.get(pos) else {
            exec.rows.push(
                current
                    .iter()
                    .map(|r| r.clone().unwrap_or_default())
                    .collect(),
            );
            return Ok(());
        };
        let candidates = match self.buffers.get(pos).and_then(Option::as_ref) {
            // A table joined through a hash table is read once.
            Some(rows) => rows.clone(),
            None => {
                let limit = if pos == 0 { self.hint } else { None };
                let mut rows = read(plan, self.storage, params, pos, current, limit)?;
                // A full scan does not take the limit; cut it here, so that a read of
                // `limit` rows always means "perhaps more".
                rows.truncate(limit.unwrap_or(usize::MAX));
                if pos == 0 {
                    self.exhausted = limit.is_none_or(|l| rows.len() < l);
                }
                exec.examined[tp.table] += rows.len() as u64;
                if tp.join_buffer {
                    if self.buffers.len() <= pos {
                        self.buffers.resize(pos + 1, None);
                    }
                    self.buffers[pos] = Some(rows.clone());
                }
                rows
            }
        };
        for row in candidates {
            if self.wanted.is_some_and(|w| exec.rows.len() >= w) {
                break;
            }
            self.storage.check()?;
            current[tp.table] = Some(row);
            let pass = {
                let refs = row_refs(current);
                let env = Env::new(&refs, params);
                let mut pass = true;
                for &c in &tp.cond {
                    if !plan.select.conds[c].is_true(env)? {
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
                self.step(pos + 1, current, exec)?;
            }
        }
        current[tp.table] = None;
        Ok(())
    }
}
