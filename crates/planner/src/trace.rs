//! The optimizer trace: what the planner decided and why, in the shape of the debug trace the
//! book used to find the 8.0.27 regression (table maps and `param_comp` in binary).
//!
//! Tracing is off unless asked for ([`crate::Planner::trace`]), and then costs nothing. When
//! on, every line is formatted, and the `param_comp` of every predicate the range optimizer
//! looked at is also kept as data, so a test can compare two plans without parsing text.

use std::fmt;

use crate::table_map::TableMap;

/// One `get_full_func_mm_tree` call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamComp {
    /// The table being analysed (its name in the query).
    pub table: String,
    /// The predicate, as `column op value`.
    pub predicate: String,
    /// `!(prev_tables | read_tables | current_table)`.
    pub param_comp: TableMap,
    /// Whether the value side may bound the key (it uses no table in `param_comp`).
    pub usable: bool,
}

/// The trace of one plan.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    enabled: bool,
    lines: Vec<String>,
    /// Every `param_comp` computed, in order.
    pub param_comps: Vec<ParamComp>,
}

impl Trace {
    /// A trace that records lines and `param_comp`s if `enabled`.
    pub fn new(enabled: bool) -> Trace {
        Trace {
            enabled,
            ..Trace::default()
        }
    }

    /// Whether lines are recorded.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Records a line at `depth` (two spaces each); `text` runs only when tracing.
    pub fn line(&mut self, depth: usize, text: impl FnOnce() -> String) {
        if self.enabled {
            self.lines.push(format!("{}{}", "  ".repeat(depth), text()));
        }
    }

    /// Records a table map as `name = 0b... (decimal)`.
    pub fn map(&mut self, depth: usize, name: &str, map: TableMap) {
        self.line(depth, || format!("{name:<17} = {map}"));
    }

    /// The recorded lines.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }
}

impl fmt::Display for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in &self.lines {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}
