//! The semi-join choice of a query block: which of its WHERE's `[NOT] EXISTS` and
//! `[NOT] IN` subqueries become semi-joins or anti-joins of the block (the planner's
//! `semijoin.rs` says which can), which are run once into a table the block joins
//! (semi-join materialization, `materialization.rs`), and which run once as constants.
//!
//! As in MySQL, the choice is by cost, under `optimizer_switch`:
//! - a correlated subquery is flattened (FirstMatch), since the alternative is to run it
//!   per outer row;
//! - one that is not is flattened only if the block's plan with it as a semi-join costs
//!   less than running it (the subquery's plan) plus the block's plan without it: a
//!   large subquery under a selective outer query is looked up per outer row, a small one
//!   is read once. Its rows then become a table `<subqueryN>` for an `x IN`, whose join
//!   order the block's plan chooses (read it first and look up the outer rows by its
//!   values, or look it up per outer row); for EXISTS, NOT IN and NOT EXISTS, and an IN
//!   whose types do not allow a join, constants;
//! - `semijoin=off` flattens none; `firstmatch=off` flattens none either but still
//!   materializes; `materialization=off` flattens every one it can.
//!
//! A subquery that is not flattened is answered as any other ([`Resolve`]): run once and
//! made constants, or, if correlated, checked per joined row.

use std::sync::Arc;

use sqlparser::ast::{self, Expr as Ast, Query};
use waterline_planner::SemiJoin;
pub(super) use waterline_planner::semijoin::take_conditions as take;
use waterline_planner::semijoin::{Flattenable, and_all, flattenable, where_conjuncts};
use waterline_txn::Transaction;

use super::blocks::{Blocks, Kind};
use super::resolve::Resolve;
use crate::access::{Derived, SchemaCatalog, TxnAccess};
use crate::error::SqlError;
use crate::select::bind_in;
use crate::session::{Context, Response};
use waterline_planner::walk;

/// The conditions of `q`'s WHERE that may become semi-joins, as the session's
/// `optimizer_switch` allows.
pub(super) fn candidates(s: &Context<'_>, st: &Blocks<'_>, q: &Query) -> Vec<Flattenable> {
    let Some(db) = st.db else {
        return Vec::new();
    };
    if !s.settings().optimizer_switch.semijoins() || !q.locks.is_empty() {
        return Vec::new();
    }
    let (_, tables) = s.tables();
    let catalog = SchemaCatalog {
        database: db,
        tables: &tables,
        derived: None,
    };
    flattenable(&catalog, q)
}

/// The addresses of the `candidates`' conditions in `q`: [`Resolve`] leaves those.
pub(super) fn addresses(q: &Query, candidates: &[Flattenable]) -> Vec<*const Ast> {
    let ast::SetExpr::Select(select) = q.body.as_ref() else {
        return Vec::new();
    };
    let Some(selection) = &select.selection else {
        return Vec::new();
    };
    let conjuncts = where_conjuncts(selection);
    (candidates.iter())
        .filter_map(|c| conjuncts.get(c.conjunct).map(|e| *e as *const Ast))
        .collect()
}

/// What became of the candidates: the semi-joins to bind the block with, the conditions
/// left to check per joined row (correlated subqueries not flattened), and how many became
/// tables of the block (`materialization.rs`).
pub(super) struct Chosen {
    pub(super) semis: Vec<SemiJoin>,
    pub(super) filters: Vec<Ast>,
    pub(super) tables: usize,
}

/// Chooses for each candidate (with its block number and condition) to flatten it
/// (FirstMatch), to make it a table of the block (semi-join materialization), or to answer
/// it as a subquery; a condition made constants goes back into `q`'s WHERE.
#[allow(clippy::too_many_arguments)]
pub(super) fn choose(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    st: &mut Blocks<'_>,
    q: &mut Query,
    derived: &mut Derived,
    candidates: Vec<(usize, Flattenable, Ast)>,
    correlated: &mut Vec<(usize, Query)>,
) -> Result<Chosen, SqlError> {
    let mut chosen = Chosen {
        semis: Vec::new(),
        filters: Vec::new(),
        tables: 0,
    };
    let parent = st.current;
    let switch = s.settings().optimizer_switch;
    for (id, candidate, cond) in candidates {
        let what = match candidate.join.kind {
            waterline_planner::JoinKind::Anti => "anti-join",
            _ => "semi-join",
        };
        let flatten = if candidate.correlated || !switch.materialization {
            switch.firstmatch
        } else if !switch.firstmatch {
            false
        } else {
            let subquery = super::subquery_of(&cond).cloned();
            let mut with = chosen.semis.clone();
            with.push(candidate.join.clone());
            let costs = (
                cost(s, trx, st, q, derived, &with),
                cost(s, trx, st, q, derived, &chosen.semis),
                subquery.map(|sq| cost(s, trx, st, &sq, &Derived::default(), &[])),
            );
            match costs {
                (Ok(flat), Ok(outer), Some(Ok(sub))) => {
                    s.trace_note(|| {
                        format!(
                            "select #{id}: as a {what} costs {flat:.1}; run once, {:.1} ({sub:.1} for it, {outer:.1} for select #{parent} with its rows)",
                            sub + outer
                        )
                    });
                    flat < sub + outer
                }
                _ => false,
            }
        };
        if flatten {
            s.trace_note(|| format!("select #{id}: {what} into select #{parent} (FirstMatch)"));
            chosen.semis.push(candidate.join);
            continue;
        }
        if !candidate.correlated
            && let Some(joined) = materialize(s, trx, st, q, derived, (id, &cond))?
        {
            chosen.tables += usize::from(joined);
            continue;
        }
        // Answered as a subquery: run once and made constants, or left correlated.
        let mut e = cond;
        let mut resolve = Resolve::new(s, trx, st, vec![id], 0);
        if !candidate.correlated {
            resolve.kind = Kind::Materialized;
        }
        if let std::ops::ControlFlow::Break(err) = walk::visit_mut(&mut e, &mut resolve) {
            return Err(err);
        }
        let left = resolve.into_correlated();
        match left.is_empty() {
            true => {
                if let ast::SetExpr::Select(select) = q.body.as_mut() {
                    select.selection = and_all(select.selection.take().into_iter().chain([e]));
                }
            }
            false => {
                correlated.extend(left);
                chosen.filters.push(e);
            }
        }
    }
    Ok(chosen)
}

/// Semi-join materialization of `x IN (SELECT ...)` (subquery number `id`, not correlated):
/// runs it once and joins its distinct rows to `q` as table `<subqueryN>`, or, where the
/// types do not allow that (`materialization.rs`), puts them into `q`'s WHERE as an IN
/// list. Whether it became a table; `None` if `cond` is not such an IN, and nothing ran.
fn materialize(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    st: &mut Blocks<'_>,
    q: &mut Query,
    derived: &mut Derived,
    (id, cond): (usize, &Ast),
) -> Result<Option<bool>, SqlError> {
    let (
        Ast::InSubquery {
            expr,
            subquery,
            negated: false,
        },
        Some(db),
    ) = (cond, st.db)
    else {
        return Ok(None);
    };
    let Some(Response::Rows { columns, rows }) =
        (st.answer)(s, trx, st, subquery, (id, Kind::Materialized), true)?
    else {
        return Err(SqlError::other("a subquery that returned nothing"));
    };
    let left: Vec<Ast> = match expr.as_ref() {
        Ast::Tuple(items) => items.clone(),
        one => vec![one.clone()],
    };
    if columns.len() != left.len() {
        return Err(waterline_planner::PlanError::Operand(left.len()).into());
    }
    let (_, tables) = s.tables();
    let parent = st.current;
    let joined =
        super::materialization::join((db, &tables), q, derived, (id, &left), &columns, &rows);
    if let Some(distinct) = joined {
        s.trace_note(|| {
            format!(
                "select #{id}: semi-join materialization, its {} row(s) into <subquery{id}> ({distinct} distinct, without NULLs), joined to select #{parent}",
                rows.len()
            )
        });
        return Ok(Some(true));
    }
    s.trace_note(|| {
        format!(
            "select #{id}: run once (not correlated), its {} row(s) made constants of select #{parent}",
            rows.len()
        )
    });
    let listed = super::values::in_list(expr, rows, false);
    if let ast::SetExpr::Select(select) = q.body.as_mut() {
        select.selection = and_all(select.selection.take().into_iter().chain([listed]));
    }
    Ok(Some(false))
}

/// The estimated cost of block `q` with `semis` flattened into it, planned but not read.
fn cost(
    s: &mut Context<'_>,
    trx: &mut Transaction,
    st: &Blocks<'_>,
    q: &Query,
    derived: &Derived,
    semis: &[SemiJoin],
) -> Result<f64, SqlError> {
    let db = st.db.ok_or_else(SqlError::no_database)?;
    let (_, tables) = s.tables();
    let q = super::correlated::without_values(q);
    let bound = bind_in(s, &tables, &q, st.db, Some(derived), semis)?;
    let access =
        TxnAccess::new(db, &bound.tables, trx, None, s.watch().clone()).with_derived(Some(derived));
    let plan = s
        .planner(&access)
        .trace(false)
        .optimize(Arc::clone(&bound.select), &[])
        .map_err(SqlError::from)?;
    Ok(plan.cost)
}
