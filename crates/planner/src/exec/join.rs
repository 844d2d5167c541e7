//! Filter and join: each table's rows from its access path (`read.rs`), checked against the
//! conditions the plan attached to that table, and joined in the plan's order by nested
//! loops (a table the plan joins through a hash table is read once and kept, hashed on
//! the columns its equality conditions name: `Buffer`). UPDATE and
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

use std::collections::HashMap;

use crate::PlanError;
use crate::expr::{CmpOp, Env, Expr, row_refs};
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
    // What each position does with nests, worked out once for the execution.
    let positions: Vec<Position> = (0..plan.tables.len())
        .map(|pos| Position::new(plan, pos))
        .collect();
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
            positions: &positions,
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
    buffers: Vec<Option<Buffer>>,
    /// Whether the first table's read returned fewer entries than `hint` (nothing was cut).
    exhausted: bool,
    /// Per outer join: whether its inner tables matched the current outer row.
    found: Vec<bool>,
    /// Per plan position, the nests it opens and how its ON conditions are checked.
    positions: &'a [Position],
}

/// ON conditions to check in order, each group with the outer join's nest it matches
/// (if that nest ends at the position).
type Groups = Vec<(Vec<usize>, Option<usize>)>;

/// What a plan position does with the nests: which it opens, and, when an outer join's
/// nest holds it, its ON conditions nest by nest ([`Position::on_groups`]).
struct Position {
    opens: Vec<usize>,
    groups: Option<Groups>,
}

impl Position {
    fn new(plan: &Plan, pos: usize) -> Position {
        let opens = (0..plan.nests.len())
            .filter(|&k| plan.nests[k].first == pos)
            .collect();
        let groups = plan
            .tables
            .get(pos)
            .and_then(|tp| Position::on_groups(plan, pos, &tp.on));
        Position { opens, groups }
    }

    /// The ON conditions `on` attached at position `pos`, in the order a row there checks
    /// them when an outer join's nest holds `pos`: nest by nest, from the innermost that
    /// holds `pos` out, each nest's own, with the outer join's nest each group matches if it
    /// ends at `pos` (an inner nest's match counts even if an outer one's ON then fails, so
    /// its NULL row is not made too). `None` when no outer join's nest holds `pos`: `on`
    /// is then checked as one.
    fn on_groups(plan: &Plan, pos: usize, on: &[usize]) -> Option<Groups> {
        let nests = &plan.nests;
        if !nests
            .iter()
            .any(|n| n.kind == JoinKind::Left && n.holds(pos))
        {
            return None;
        }
        let mut around: Vec<usize> = (0..nests.len()).filter(|&k| nests[k].holds(pos)).collect();
        around.sort_by_key(|&k| (std::cmp::Reverse(nests[k].first), nests[k].last));
        let nest_of = |c: usize| {
            let join = plan.select.on_of(c);
            around.iter().position(|&k| Some(nests[k].join) == join)
        };
        // A condition of no nest here (none is expected) is checked first.
        let mut groups = vec![(
            on.iter()
                .copied()
                .filter(|&c| nest_of(c).is_none())
                .collect(),
            None,
        )];
        for (i, &k) in around.iter().enumerate() {
            let mine = on
                .iter()
                .copied()
                .filter(|&c| nest_of(c) == Some(i))
                .collect();
            let ends = nests[k].last == pos && nests[k].kind == JoinKind::Left;
            groups.push((mine, ends.then_some(k)));
        }
        Some(groups)
    }
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
            // A table joined through a hash table is read once; each row before it probes.
            Some(buffer) => buffer.probe(current, params)?,
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
                        self.buffers.resize_with(pos + 1, || None);
                    }
                    let buffer = Buffer::new(plan, pos, rows);
                    let candidates = buffer.probe(current, params)?;
                    self.buffers[pos] = Some(buffer);
                    candidates
                } else {
                    rows
                }
            }
        };
        let position = &self.positions[pos];
        for &k in &position.opens {
            self.found[k] = false;
        }
        // The semi-join or anti-join that ends here (outer joins' nests are marked as
        // their ON conditions pass, in `matched`).
        let closes = (plan.nests.iter()).position(|n| n.last == pos && n.kind != JoinKind::Left);
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
            if !self.matched(&tp.on, position.groups.as_deref(), current)? {
                continue;
            }
            if let Some(k) = closes
                && closes_kind == Some(JoinKind::Anti)
            {
                self.found[k] = true;
                break;
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
        // An outer row no inner row matched: once, with NULLs for the inner tables (if the
        // ONs of the outer joins around the nest, read at its tables, pass them).
        for &k in &position.opens {
            if plan.nests[k].kind == JoinKind::Semi
                || self.found[k]
                || self.wanted.is_some_and(|w| exec.rows.len() >= w)
            {
                continue;
            }
            let nest = plan.nests[k];
            for t in &plan.tables[nest.first..=nest.last] {
                current[t.table] = Some(Row::new());
            }
            if self.around_matched(k, current)?
                && self.holds(&plan.tables[nest.last].cond, current)?
            {
                self.next(nest.last, current, exec)?;
            }
            for t in &plan.tables[nest.first..=nest.last] {
                current[t.table] = None;
            }
        }
        current[tp.table] = None;
        Ok(())
    }

    /// Whether a row at the position of `on` and `groups` ([`Position::on_groups`]) passes its
    /// ON conditions; marks the outer joins it matches.
    fn matched(
        &mut self,
        on: &[usize],
        groups: Option<&[(Vec<usize>, Option<usize>)]>,
        current: &[Option<Row>],
    ) -> Result<bool, PlanError> {
        let Some(groups) = groups else {
            return self.holds(on, current);
        };
        for (conds, ends) in groups {
            if !self.holds(conds, current)? {
                return Ok(false);
            }
            if let Some(k) = *ends {
                self.found[k] = true;
            }
        }
        Ok(true)
    }

    /// For nest `k`'s NULL row: whether the ONs of the outer joins around it that are
    /// attached to its tables pass; an outer join ending with it is then matched.
    fn around_matched(&mut self, k: usize, current: &[Option<Row>]) -> Result<bool, PlanError> {
        let nests = &self.plan.nests;
        let inner = nests[k];
        let mut around: Vec<usize> = (0..nests.len())
            .filter(|&e| e != k && nests[e].holds(inner.first) && nests[e].holds(inner.last))
            .collect();
        around.sort_by_key(|&e| (std::cmp::Reverse(nests[e].first), nests[e].last));
        for e in around {
            let join = Some(nests[e].join);
            let conds: Vec<usize> = (self.plan.tables[inner.first..=inner.last].iter())
                .flat_map(|tp| tp.on.iter().copied())
                .filter(|&c| self.plan.select.on_of(c) == join)
                .collect();
            if !self.holds(&conds, current)? {
                return Ok(false);
            }
            if nests[e].last == inner.last {
                self.found[e] = true;
            }
        }
        Ok(true)
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

/// A table joined through a hash table: its rows, read once, and a hash index on the
/// columns its equality conditions give a value for from the tables before it (MySQL's hash
/// join). A row whose key part is NULL matches no equality and is left out.
///
/// SQL compares values of different types by converting them (`1 = '1'`), so the index is
/// built only where every key value of a part has one type of those that compare as they
/// are stored (INT, a string, DATETIME, DATE); a probe of another type reads every row, and each
/// row goes through the table's conditions all the same.
struct Buffer {
    rows: Vec<Row>,
    /// The key: each part's column of this table, and the expression over the tables
    /// before it that it must equal.
    key: Vec<(usize, Expr)>,
    /// Each key part's value type (by [`kind`]).
    kinds: Vec<u8>,
    /// Rows (by position in `rows`) by key.
    index: Option<HashMap<Vec<Value>, Vec<usize>>>,
}

/// The type of a value as far as the hash index goes: INT, string, DATETIME, DATE, or
/// other.
fn kind(v: &Value) -> u8 {
    match v {
        Value::Int(_) => 1,
        Value::Str(_) => 2,
        Value::DateTime(_) => 3,
        Value::Date(_) => 4,
        _ => 0,
    }
}

impl Buffer {
    fn new(plan: &Plan, pos: usize, rows: Vec<Row>) -> Buffer {
        let tp = &plan.tables[pos];
        let me = crate::table_map::TableMap::table(tp.table);
        let conds = &plan.select.conds;
        // In an outer join's inner tables, a condition after the match must see the rows
        // the match found: only the ON conditions choose them.
        let outer = (plan.nests.iter())
            .any(|n| n.kind == JoinKind::Left && (n.first..=n.last).contains(&pos));
        let after = if outer { &[][..] } else { &tp.cond[..] };
        let key: Vec<(usize, Expr)> = (after.iter().chain(&tp.on))
            .filter_map(|&i| match &conds[i] {
                Expr::Cmp(CmpOp::Eq, a, b) => match (a.as_ref(), b.as_ref()) {
                    (Expr::Column(c), other) | (other, Expr::Column(c))
                        if c.table == tp.table && !other.used_tables().overlaps(me) =>
                    {
                        Some((c.column, other.clone()))
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let mut buffer = Buffer {
            rows,
            key,
            kinds: Vec::new(),
            index: None,
        };
        if buffer.key.is_empty() {
            return buffer;
        }
        let mut kinds: Vec<Option<u8>> = vec![None; buffer.key.len()];
        let mut index: HashMap<Vec<Value>, Vec<usize>> = HashMap::new();
        'rows: for (r, row) in buffer.rows.iter().enumerate() {
            let mut k = Vec::with_capacity(buffer.key.len());
            for (part, (column, _)) in buffer.key.iter().enumerate() {
                let v = row.get(*column).unwrap_or(&Value::Null);
                if v.is_null() {
                    continue 'rows;
                }
                match kinds[part] {
                    None => kinds[part] = Some(kind(v)),
                    Some(seen) if seen == kind(v) => {}
                    Some(_) => return buffer,
                }
                k.push(v.clone());
            }
            index.entry(k).or_default().push(r);
        }
        if kinds.iter().flatten().any(|&k| k == 0) {
            return buffer;
        }
        buffer.kinds = kinds.into_iter().map(|k| k.unwrap_or(0)).collect();
        buffer.index = Some(index);
        buffer
    }

    /// The rows that may match the rows before it, `current`.
    fn probe(&self, current: &[Option<Row>], params: &[Value]) -> Result<Vec<Row>, PlanError> {
        let Some(index) = &self.index else {
            return Ok(self.rows.clone());
        };
        let refs = row_refs(current);
        let env = Env::new(&refs, params);
        let mut key = Vec::with_capacity(self.key.len());
        for ((_, e), &k) in self.key.iter().zip(&self.kinds) {
            let v = e.eval(env)?;
            if v.is_null() {
                return Ok(Vec::new());
            }
            // No rows of the key's type (all NULL): none can be equal; another type: read
            // them all, each checked by the conditions.
            if k != 0 && kind(&v) != k {
                return Ok(self.rows.clone());
            }
            key.push(v);
        }
        Ok(index
            .get(&key)
            .map(|rs| rs.iter().map(|&r| self.rows[r].clone()).collect())
            .unwrap_or_default())
    }
}
