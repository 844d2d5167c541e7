//! Filter and join: each table's rows from its access path (`read.rs`), checked against the
//! conditions the plan attached to that table, and joined in the plan's order by nested
//! loops (a table the plan joins through a hash table is read once and kept). UPDATE and
//! DELETE stop here; a SELECT goes on to [`super::Output::finish`].
//!
//! An outer join's inner tables are a nest of positions in the plan (`outer.rs`): a row of
//! the last of them that passes the join's ON marks the outer row as matched, and then
//! goes on through the conditions checked after the match; an outer row the nest never
//! matched goes on once with an empty row (every column NULL) for each of its tables.
//!
//! A semi-join's nest stops at the first row of its last table that passes its conditions,
//! after that row went on (MySQL's FirstMatch): the outer row goes on once. An anti-join's
//! stops at the first match without going on, and only an outer row it never matched goes
//! on, NULL-filled.

use waterline_types::{Row, Value};

use crate::PlanError;
use crate::expr::{Env, row_refs};
use crate::outer::JoinKind;
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
            found: vec![false; plan.nests.len()],
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
    /// Per outer join: whether its inner tables matched the current outer row.
    found: Vec<bool>,
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
        let opens = plan.nests.iter().position(|n| n.first == pos);
        if let Some(k) = opens {
            self.found[k] = false;
        }
        let closes = plan.nests.iter().position(|n| n.last == pos);
        let closes_kind = closes.map(|k| plan.nests[k].kind);
        // The semi-join or anti-join this position is in: its first match ends it.
        let stops = plan
            .nests
            .iter()
            .position(|n| n.kind != JoinKind::Left && (n.first..=n.last).contains(&pos));
        for row in candidates {
            if self.wanted.is_some_and(|w| exec.rows.len() >= w) {
                break;
            }
            self.storage.check()?;
            current[tp.table] = Some(row);
            if !self.holds(&tp.on, current)? {
                continue;
            }
            if let Some(k) = closes
                && closes_kind != Some(JoinKind::Semi)
            {
                self.found[k] = true;
                if closes_kind == Some(JoinKind::Anti) {
                    break;
                }
            }
            if !self.holds(&tp.cond, current)? {
                continue;
            }
            if let Some(k) = closes
                && closes_kind == Some(JoinKind::Semi)
            {
                self.found[k] = true;
            }
            self.next(pos, current, exec)?;
            if stops.is_some_and(|k| self.found[k]) {
                break;
            }
        }
        // An outer row no inner row matched: once, with NULLs for the inner tables.
        if let Some(k) = opens
            && plan.nests[k].kind != JoinKind::Semi
            && !self.found[k]
            && self.wanted.is_none_or(|w| exec.rows.len() < w)
        {
            let nest = plan.nests[k];
            for t in &plan.tables[nest.first..=nest.last] {
                current[t.table] = Some(Row::new());
            }
            if self.holds(&plan.tables[nest.last].cond, current)? {
                self.next(nest.last, current, exec)?;
            }
            for t in &plan.tables[nest.first..=nest.last] {
                current[t.table] = None;
            }
        }
        current[tp.table] = None;
        Ok(())
    }

    /// Whether the conditions `conds` (positions in the query's) hold of `current`.
    fn holds(&self, conds: &[usize], current: &[Option<Row>]) -> Result<bool, PlanError> {
        if conds.is_empty() {
            return Ok(true);
        }
        let refs = row_refs(current);
        let env = Env::new(&refs, self.params);
        for &c in conds {
            if !self.plan.select.conds[c].is_true(env)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// After a row of position `pos` passed: the next position, or the output.
    fn next(
        &mut self,
        pos: usize,
        current: &mut Vec<Option<Row>>,
        exec: &mut Execution,
    ) -> Result<(), PlanError> {
        if pos + 1 < self.plan.tables.len() {
            return self.step(pos + 1, current, exec);
        }
        // The last table: its row moves into the output (a one-table query copies none).
        let t = self.plan.tables[pos].table;
        let last = current[t].take();
        let mut out: Vec<Row> = current
            .iter()
            .map(|r| r.clone().unwrap_or_default())
            .collect();
        out[t] = last.unwrap_or_default();
        exec.rows.push(out);
        Ok(())
    }
}
