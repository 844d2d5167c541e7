//! Having: HAVING's condition over each group (its aggregates and the columns of its first
//! row), or over each row of a query that does not group: a group it is not true of (false
//! or NULL) is left out.

use crate::PlanError;
use crate::expr::{Env, Expr};

/// Whether the group (or row) in `env` stays: HAVING is true of it, or there is none.
pub(super) fn keeps(having: Option<&Expr>, env: Env<'_>) -> Result<bool, PlanError> {
    having.map_or(Ok(true), |h| h.is_true(env))
}
