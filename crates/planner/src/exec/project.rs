//! Project: the select list's values for one row, or for one group (its columns read the
//! group's first row, its aggregates the group's values).

use waterline_types::Value;

use crate::PlanError;
use crate::expr::{Env, Expr};

/// The select list `exprs`' values in `env` (a row's, or a group's).
pub(super) fn project(exprs: &[Expr], env: Env<'_>) -> Result<Vec<Value>, PlanError> {
    exprs.iter().map(|e| e.eval(env)).collect()
}
