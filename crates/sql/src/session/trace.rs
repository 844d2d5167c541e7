//! The optimizer trace: `SET optimizer_trace = 'enabled=on'`, then the last statement that
//! planned a query is read back from `information_schema.OPTIMIZER_TRACE`. MySQL writes the
//! trace as JSON; waterline writes its planner's own lines: each query block and what was
//! done to it (a subquery run and made constants, a derived table materialized), equality
//! propagation, const tables, range analysis with MySQL's table maps (`prev_tables`,
//! `read_tables`, `param_comp`: the book's Figs 8-8 and 8-9), and each join order with its
//! cost. A statement that plans nothing leaves the last trace as it was, as does reading
//! the trace.

use waterline_planner::{Catalog, Plan, Planner};

use super::Context;

/// A session's trace: the running statement's lines and the last statement's.
#[derive(Debug, Default)]
pub(crate) struct Traces {
    running: Vec<String>,
    last: Option<(String, String)>,
}

impl Context<'_> {
    /// Whether the optimizer trace is on (`optimizer_trace`'s `enabled`).
    pub(crate) fn tracing(&self) -> bool {
        self.vars.settings.optimizer_trace
    }

    /// A planner over `catalog` in the session's mode (`waterline_planner_mode`), tracing
    /// if the trace is on.
    pub(crate) fn planner<'c>(&self, catalog: &'c dyn Catalog) -> Planner<'c> {
        Planner::new(catalog)
            .mode(self.vars.settings.planner)
            .trace(self.tracing())
    }

    /// Adds a line to the running statement's trace, if the trace is on.
    pub(crate) fn trace_note(&mut self, line: impl FnOnce() -> String) {
        if self.tracing() {
            self.statement.traces.running.push(line());
        }
    }

    /// Adds a plan's trace (made if the trace is on) to the running statement's.
    pub(crate) fn trace_plan(&mut self, plan: &Plan) {
        if self.tracing() {
            let lines = plan.trace.lines().iter().map(|l| format!("  {l}"));
            self.statement.traces.running.extend(lines);
        }
    }

    /// The running statement ends: if it planned something, its trace is the last, for
    /// `query` (its text).
    pub(crate) fn finish_trace(&mut self, query: impl FnOnce() -> String) {
        if !self.statement.traces.running.is_empty() {
            let lines = std::mem::take(&mut self.statement.traces.running);
            self.statement.traces.last = Some((query(), lines.join("\n")));
        }
    }

    /// Forgets the running statement's trace (a statement that reads the trace).
    pub(crate) fn discard_trace(&mut self) {
        self.statement.traces.running.clear();
    }

    /// The last statement's text and trace, if the trace was on for it.
    pub(crate) fn last_trace(&self) -> Option<&(String, String)> {
        self.statement.traces.last.as_ref()
    }
}
