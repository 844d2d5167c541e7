//! MySQL's semi-join transformation (`Query_block::convert_subquery_to_semijoin`): a
//! condition of WHERE that is `EXISTS (SELECT ...)`, `x IN (SELECT y ...)` or the negation
//! of either can take the subquery's tables into the query around it, as a semi-join (or an
//! anti-join) whose condition is the subquery's WHERE, with `x = y` for an IN
//! ([`SemiJoin`]). The join order then may read the subquery's tables after any outer
//! table its condition does not name, and look them up by the outer row's values, instead
//! of running the subquery per outer row.
//!
//! A subquery qualifies as MySQL's does: one SELECT of named tables joined by inner joins,
//! without GROUP BY, HAVING, aggregates, LIMIT, locking or subqueries of its own; its names
//! must resolve to its own tables or to the tables of the query around it (a name of a
//! block further out leaves it as it is). [`flattenable`] finds them; whether one is flattened
//! or run once and made constants (materialization) is the caller's choice, by cost.
//!
//! `x NOT IN (SELECT y ...)` is true only if `x = y` is false for every row, so its anti-join
//! matches a row where `x = y` is true or unknown: `x = y OR x IS NULL OR y IS NULL` (plain
//! `x = y` when neither side can be NULL), which keeps MySQL's NULL semantics.

use std::ops::ControlFlow;

use sqlparser::ast::{
    self, Expr as Ast, Ident, JoinConstraint, JoinOperator, SetExpr, TableFactor,
};

use crate::bind::{SemiJoin, contains_aggregate, object_name};
use crate::catalog::Catalog;
use crate::outer::JoinKind;
use crate::walk;

/// A condition of a query's WHERE that can become a semi-join or an anti-join.
#[derive(Clone, Debug)]
pub struct Flattenable {
    /// Its position among WHERE's conditions ([`where_conjuncts`]).
    pub conjunct: usize,
    /// The semi-join or anti-join it becomes.
    pub join: SemiJoin,
    /// Whether its subquery reads a column of the query around it.
    pub correlated: bool,
}

/// The conditions of `e` joined by AND (through parentheses), in order.
pub fn where_conjuncts(e: &Ast) -> Vec<&Ast> {
    match e {
        Ast::BinaryOp {
            left,
            op: ast::BinaryOperator::And,
            right,
        } => {
            let mut out = where_conjuncts(left);
            out.extend(where_conjuncts(right));
            out
        }
        Ast::Nested(inner)
            if matches!(
                inner.as_ref(),
                Ast::BinaryOp {
                    op: ast::BinaryOperator::And,
                    ..
                }
            ) =>
        {
            where_conjuncts(inner)
        }
        other => vec![other],
    }
}

/// `conds` joined by AND (`None` if there is none).
pub fn and_all(conds: impl IntoIterator<Item = Ast>) -> Option<Ast> {
    conds.into_iter().reduce(|a, b| Ast::BinaryOp {
        left: Box::new(a),
        op: ast::BinaryOperator::And,
        right: Box::new(b),
    })
}

/// Takes the `flattenable` conditions out of `query`'s WHERE; their semi-joins.
pub fn flatten_all(query: &mut ast::Query, flattenable: Vec<Flattenable>) -> Vec<SemiJoin> {
    take_conditions(query, &flattenable);
    flattenable.into_iter().map(|f| f.join).collect()
}

/// Takes the `flattenable` conditions out of `query`'s WHERE, and returns them in order.
pub fn take_conditions(query: &mut ast::Query, flattenable: &[Flattenable]) -> Vec<Ast> {
    let SetExpr::Select(select) = query.body.as_mut() else {
        return Vec::new();
    };
    let Some(selection) = select.selection.take() else {
        return Vec::new();
    };
    let (taken, kept): (Vec<_>, Vec<_>) = where_conjuncts(&selection)
        .into_iter()
        .enumerate()
        .partition(|(i, _)| flattenable.iter().any(|f| f.conjunct == *i));
    select.selection = and_all(kept.into_iter().map(|(_, c)| c.clone()));
    taken.into_iter().map(|(_, c)| c.clone()).collect()
}

/// The conditions of `query`'s WHERE that can become semi-joins or anti-joins.
pub fn flattenable(catalog: &dyn Catalog, query: &ast::Query) -> Vec<Flattenable> {
    let SetExpr::Select(select) = query.body.as_ref() else {
        return Vec::new();
    };
    let Some(selection) = &select.selection else {
        return Vec::new();
    };
    let mut outer = Vec::new();
    for factor in select
        .from
        .iter()
        .flat_map(|f| std::iter::once(&f.relation).chain(f.joins.iter().map(|j| &j.relation)))
    {
        match scope_entry(catalog, factor) {
            Some(entry) => outer.push(entry),
            None => return Vec::new(),
        }
    }
    if outer.is_empty() {
        return Vec::new();
    }
    let mut taken: Vec<String> = outer.iter().map(|e| e.alias.to_lowercase()).collect();
    where_conjuncts(selection)
        .into_iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let (join, correlated) = flatten(catalog, c, &outer, &mut taken)?;
            Some(Flattenable {
                conjunct: i,
                join,
                correlated,
            })
        })
        .collect()
}

/// A table of a FROM as names resolve against it: its alias, and its columns with whether
/// each may be NULL (`None`: not known, any name may be one of them).
struct Entry {
    alias: String,
    columns: Option<Vec<(String, bool)>>,
}

fn scope_entry(catalog: &dyn Catalog, factor: &TableFactor) -> Option<Entry> {
    match factor {
        TableFactor::Table {
            name, alias, args, ..
        } if args.is_none() => {
            let table = object_name(name).ok()?;
            let columns = catalog.table(&table).map(|schema| {
                (schema.columns.iter())
                    .map(|c| (c.name.clone(), c.nullable))
                    .collect()
            });
            Some(Entry {
                alias: alias.as_ref().map_or(table, |a| a.name.value.clone()),
                columns,
            })
        }
        TableFactor::Derived { alias, .. } => Some(Entry {
            alias: alias.as_ref()?.name.value.clone(),
            columns: None,
        }),
        _ => None,
    }
}

impl Entry {
    fn has(&self, column: &str) -> bool {
        self.columns
            .as_ref()
            .is_none_or(|cs| cs.iter().any(|(c, _)| c.eq_ignore_ascii_case(column)))
    }

    fn not_null(&self, column: &str) -> bool {
        (self.columns.iter().flatten()).any(|(c, null)| c.eq_ignore_ascii_case(column) && !null)
    }
}

/// The semi-join or anti-join conjunct `c` becomes, and whether it is correlated.
fn flatten(
    catalog: &dyn Catalog,
    c: &Ast,
    outer: &[Entry],
    taken: &mut Vec<String>,
) -> Option<(SemiJoin, bool)> {
    let (left, subquery, negated) = match c {
        Ast::Exists { subquery, negated } => (None, subquery, *negated),
        Ast::InSubquery {
            expr,
            subquery,
            negated,
        } => (Some(expr.as_ref()), subquery, *negated),
        _ => return None,
    };
    let q = subquery.as_ref();
    let simple_query = q.with.is_none()
        && q.limit_clause.is_none()
        && q.fetch.is_none()
        && q.locks.is_empty()
        && q.for_clause.is_none()
        && q.settings.is_none()
        && q.format_clause.is_none();
    let SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    let simple_select = simple_query
        && s.top.is_none()
        && s.into.is_none()
        && !s.from.is_empty()
        && s.lateral_views.is_empty()
        && s.prewhere.is_none()
        && matches!(&s.group_by, ast::GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty())
        && s.cluster_by.is_empty()
        && s.distribute_by.is_empty()
        && s.sort_by.is_empty()
        && s.having.is_none()
        && s.named_window.is_empty()
        && s.qualify.is_none()
        && s.connect_by.is_empty()
        && !matches!(s.distinct, Some(ast::Distinct::On(_)));
    if !simple_select || has_subquery(s) || left.is_some_and(has_subquery) {
        return None;
    }
    // The subquery's tables, each under an alias no outer table has.
    let mut inner = Vec::new();
    let mut tables = Vec::new();
    let mut conds = Vec::new();
    for from in &s.from {
        let mut factors = vec![&from.relation];
        for join in &from.joins {
            match &join.join_operator {
                JoinOperator::Join(c) | JoinOperator::Inner(c) | JoinOperator::CrossJoin(c) => {
                    match c {
                        JoinConstraint::On(e) => conds.push(e.clone()),
                        JoinConstraint::None => {}
                        _ => return None,
                    }
                }
                _ => return None,
            }
            factors.push(&join.relation);
        }
        for factor in factors {
            let TableFactor::Table { .. } = factor else {
                return None;
            };
            let mut entry = scope_entry(catalog, factor)?;
            entry.columns.as_ref()?;
            let mut factor = factor.clone();
            if taken.contains(&entry.alias.to_lowercase()) {
                let fresh = (2..)
                    .map(|n| format!("{}#{n}", entry.alias))
                    .find(|a| !taken.contains(&a.to_lowercase()))?;
                if let TableFactor::Table { alias, .. } = &mut factor {
                    *alias = Some(ast::TableAlias {
                        explicit: true,
                        name: Ident::with_quote('`', fresh.clone()),
                        columns: Vec::new(),
                        at: None,
                    });
                }
                inner.push((entry.alias.clone(), fresh.clone()));
                entry.alias = fresh;
            } else {
                inner.push((entry.alias.clone(), entry.alias.clone()));
            }
            taken.push(entry.alias.to_lowercase());
            tables.push((entry, factor));
        }
    }
    let mut resolve = Qualify {
        inner: &tables,
        renamed: &inner,
        outer,
        correlated: false,
        failed: false,
    };
    if let Some(w) = &s.selection {
        conds.push(w.clone());
    }
    for c in &mut conds {
        let _ = walk::visit_mut(c, &mut resolve);
    }
    if let Some(left) = left {
        let lefts: Vec<&Ast> = match left {
            Ast::Tuple(items) => items.iter().collect(),
            other => vec![other],
        };
        if lefts.len() != s.projection.len() {
            return None;
        }
        for (x, item) in lefts.into_iter().zip(&s.projection) {
            let x = &resolve.outer_side(x);
            let mut y = match item {
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => e.clone(),
                _ => return None,
            };
            if contains_aggregate(&y) {
                return None;
            }
            let _ = walk::visit_mut(&mut y, &mut resolve);
            let not_null = resolve.not_null(x, false) && resolve.not_null(&y, true);
            let eq = Ast::BinaryOp {
                left: Box::new(x.clone()),
                op: ast::BinaryOperator::Eq,
                right: Box::new(y.clone()),
            };
            conds.push(match negated && !not_null {
                false => eq,
                // Not false: true, or unknown because a side is NULL.
                true => Ast::Nested(Box::new(Ast::BinaryOp {
                    left: Box::new(Ast::BinaryOp {
                        left: Box::new(eq),
                        op: ast::BinaryOperator::Or,
                        right: Box::new(Ast::IsNull(Box::new(x.clone()))),
                    }),
                    op: ast::BinaryOperator::Or,
                    right: Box::new(Ast::IsNull(Box::new(y))),
                })),
            });
        }
    } else if s.projection.iter().any(|item| match item {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            contains_aggregate(e)
        }
        _ => false,
    }) {
        // `EXISTS (SELECT COUNT(*) ...)` is one row, always.
        return None;
    }
    if resolve.failed {
        return None;
    }
    let correlated = resolve.correlated;
    let cond = and_all(conds).unwrap_or(Ast::Value(ast::Value::Boolean(true).into()));
    let kind = if negated {
        JoinKind::Anti
    } else {
        JoinKind::Semi
    };
    Some((
        SemiJoin {
            kind,
            tables: tables.into_iter().map(|(_, f)| f).collect(),
            cond,
        },
        correlated,
    ))
}

/// Whether a subquery stands anywhere in `node`.
fn has_subquery(node: &impl ast::Visit) -> bool {
    struct Find;
    impl ast::Visitor for Find {
        type Break = ();
        fn pre_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
            ControlFlow::Break(())
        }
    }
    walk::visit(node, &mut Find).is_break()
}

/// Qualifies the subquery's names by its tables' (new) aliases, and notes a name of the
/// query around it (`correlated`) or one that resolves nowhere (`failed`).
struct Qualify<'a> {
    inner: &'a [(Entry, TableFactor)],
    /// Each inner table's alias as written, and the one it has now.
    renamed: &'a [(String, String)],
    outer: &'a [Entry],
    correlated: bool,
    failed: bool,
}

/// `alias.name`.
fn qualified(alias: String, name: String) -> Ast {
    Ast::CompoundIdentifier(vec![Ident::with_quote('`', alias), Ident::new(name)])
}

impl Qualify<'_> {
    /// The alias of the one outer table with a column `name`.
    fn outer_alias(&self, name: &str) -> Option<String> {
        let mut found = self.outer.iter().filter(|t| t.has(name));
        match (found.next(), found.next()) {
            (Some(t), None) => Some(t.alias.clone()),
            _ => None,
        }
    }

    /// `e` (an IN's left side, of the query around) with its column names qualified.
    fn outer_side(&mut self, e: &Ast) -> Ast {
        let mut e = e.clone();
        let _ = walk::exprs_mut(&mut e, |x| {
            if let Ast::Identifier(id) = x
                && !id.value.starts_with('@')
            {
                match self.outer_alias(&id.value) {
                    Some(alias) => *x = qualified(alias, id.value.clone()),
                    None => self.failed = true,
                }
            }
            ControlFlow::<()>::Continue(())
        });
        e
    }

    /// Whether `e` is a column that cannot be NULL (of the inner tables, or of the outer).
    fn not_null(&self, e: &Ast, inner: bool) -> bool {
        let (qualifier, name) = match e {
            Ast::CompoundIdentifier(ids) if ids.len() == 2 => {
                (Some(ids[0].value.as_str()), ids[1].value.as_str())
            }
            Ast::Identifier(id) => (None, id.value.as_str()),
            _ => return false,
        };
        let entries: Vec<&Entry> = match inner {
            true => self.inner.iter().map(|(e, _)| e).collect(),
            false => self.outer.iter().collect(),
        };
        let mut found = entries
            .into_iter()
            .filter(|e| qualifier.is_none_or(|q| e.alias.eq_ignore_ascii_case(q)) && e.has(name));
        matches!((found.next(), found.next()), (Some(e), None) if e.not_null(name))
    }
}

impl ast::VisitorMut for Qualify<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &mut Ast) -> ControlFlow<()> {
        match e {
            Ast::Identifier(id) if !id.value.starts_with('@') => {
                let name = id.value.clone();
                let mut found = self.inner.iter().filter(|(t, _)| t.has(&name));
                match (found.next(), found.next()) {
                    (Some((t, _)), None) => *e = qualified(t.alias.clone(), name),
                    (Some(_), Some(_)) => self.failed = true,
                    // A column of the query around: qualified, since the subquery's
                    // tables (and other flattened ones') stand beside it once flattened.
                    (None, _) => match self.outer_alias(&name) {
                        Some(alias) => {
                            self.correlated = true;
                            *e = qualified(alias, name);
                        }
                        None => self.failed = true,
                    },
                }
            }
            Ast::CompoundIdentifier(ids) if ids.len() == 2 => {
                let (q, name) = (ids[0].value.clone(), ids[1].value.clone());
                let inner = self
                    .renamed
                    .iter()
                    .zip(self.inner)
                    .find(|((was, _), _)| was.eq_ignore_ascii_case(&q));
                if let Some(((_, now), (t, _))) = inner {
                    self.failed |= !t.has(&name);
                    ids[0] = Ident::with_quote('`', now.clone());
                } else if self
                    .outer
                    .iter()
                    .any(|t| t.alias.eq_ignore_ascii_case(&q) && t.has(&name))
                {
                    self.correlated = true;
                } else {
                    self.failed = true;
                }
            }
            Ast::CompoundIdentifier(_) => self.failed = true,
            _ => {}
        }
        ControlFlow::Continue(())
    }
}
