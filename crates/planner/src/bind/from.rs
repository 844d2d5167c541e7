//! FROM: its tables bound in order, with the ONs of its joins and its outer joins (see
//! `outer.rs` for what an outer join's nest is).

use sqlparser::ast::{self, JoinConstraint, JoinOperator, ObjectNamePart, TableFactor};

use super::BoundTable;
use crate::PlanError;
use crate::catalog::Catalog;
use crate::outer::{JoinKind, OuterJoin};
use crate::table_map::{MAX_TABLES, TableMap};

/// A FROM, bound.
pub(super) struct BoundFrom<'q> {
    /// Its tables, in order.
    pub(super) tables: Vec<BoundTable>,
    /// The ONs of its joins.
    pub(super) ons: Vec<On<'q>>,
    /// Its outer joins.
    pub(super) outer_joins: Vec<OuterJoin>,
}

/// Binds `select`'s FROM.
pub(super) fn bind_from<'q>(
    catalog: &dyn Catalog,
    select: &'q ast::Select,
) -> Result<BoundFrom<'q>, PlanError> {
    let mut tables = Vec::new();
    let mut ons: Vec<On<'q>> = Vec::new();
    let mut outer_joins: Vec<OuterJoin> = Vec::new();
    for from in &select.from {
        let item_start = tables.len();
        let item_ons = ons.len();
        let (first, joins) = leftmost(from);
        bind_factor(
            catalog,
            first,
            &mut tables,
            (&mut ons, &mut outer_joins),
            None,
        )?;
        for join in joins {
            let before = tables.len();
            let unsupported = || PlanError::Unsupported(join.to_string());
            // The ONs inside a parenthesized join on the inner side of a LEFT JOIN are
            // that outer join's: they decide its match. Its place among the outer joins is
            // taken now (its inner tables come when they are bound), before any outer join
            // inside it.
            let owner = match &join.join_operator {
                JoinOperator::Left(_) | JoinOperator::LeftOuter(_) => {
                    outer_joins.push(OuterJoin {
                        kind: JoinKind::Left,
                        inner: TableMap::EMPTY,
                        after: TableMap::first(before),
                    });
                    Some(outer_joins.len() - 1)
                }
                _ => None,
            };
            let join_ons = ons.len();
            let bound = (&mut ons, &mut outer_joins);
            bind_factor(catalog, &join.relation, &mut tables, bound, owner)?;
            let me = TableMap::first(tables.len()) & !TableMap::first(before);
            let (c, kind) = match &join.join_operator {
                JoinOperator::Join(c) | JoinOperator::Inner(c) | JoinOperator::CrossJoin(c) => {
                    (c, None)
                }
                JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (c, Some(false)),
                JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (c, Some(true)),
                _ => return Err(unsupported()),
            };
            let on = match c {
                JoinConstraint::On(e) => Some(e),
                JoinConstraint::None if kind.is_none() => None,
                _ => return Err(unsupported()),
            };
            match (kind, on) {
                (None, Some(e)) => ons.push((e, tables.len(), None)),
                (None, None) => {}
                (Some(false), Some(e)) => {
                    ons.push((e, tables.len(), owner));
                    if let Some(k) = owner {
                        outer_joins[k].inner = me;
                    }
                }
                // `x RIGHT JOIN t ON e` is `t LEFT JOIN x ON e`: the tables of this FROM
                // item so far are the inner side, and the ONs of the inner joins among
                // them belong to the outer join.
                (Some(true), Some(e)) => {
                    let inner = TableMap::first(before) & !TableMap::first(item_start);
                    if outer_joins.iter().any(|j| j.inner.overlaps(inner)) {
                        return Err(PlanError::Unsupported(format!(
                            "an outer join on the left of {join}"
                        )));
                    }
                    let k = outer_joins.len();
                    for on in &mut ons[item_ons..join_ons] {
                        on.2 = Some(k);
                    }
                    ons.push((e, tables.len(), Some(k)));
                    outer_joins.push(OuterJoin {
                        kind: JoinKind::Left,
                        inner,
                        after: TableMap::first(item_start) | me,
                    });
                }
                (Some(_), None) => return Err(unsupported()),
            }
        }
    }
    Ok(BoundFrom {
        tables,
        ons,
        outer_joins,
    })
}

/// The last part of an object name (`db.t` names table `t`).
pub fn object_name(name: &ast::ObjectName) -> Result<String, PlanError> {
    match name.0.last() {
        Some(ObjectNamePart::Identifier(id)) => Ok(id.value.clone()),
        _ => Err(PlanError::Unsupported(name.to_string())),
    }
}

pub(super) fn bind_table(
    catalog: &dyn Catalog,
    factor: &TableFactor,
    tables: &mut Vec<BoundTable>,
) -> Result<(), PlanError> {
    let TableFactor::Table {
        name,
        alias,
        args: None,
        ..
    } = factor
    else {
        return Err(PlanError::Unsupported(format!("FROM {factor}")));
    };
    let table = object_name(name)?;
    let schema = catalog.table(&table).ok_or_else(|| {
        PlanError::NoSuchTable(crate::catalog::qualified(catalog.database(), &table))
    })?;
    let alias = alias.as_ref().map_or_else(
        || crate::own_name(&table).to_owned(),
        |a| a.name.value.clone(),
    );
    if tables.iter().any(|t| t.alias.eq_ignore_ascii_case(&alias)) {
        return Err(PlanError::NotUniqueTable(alias));
    }
    if tables.len() == MAX_TABLES {
        return Err(PlanError::TooManyTables(MAX_TABLES));
    }
    tables.push(BoundTable {
        name: schema.name.clone(),
        alias,
        schema,
    });
    Ok(())
}

/// An ON condition: its text, how many tables were bound when it came (it may read only
/// those), and the outer join it belongs to.
pub(super) type On<'q> = (&'q ast::Expr, usize, Option<usize>);

/// FROM item `from` as a first table and the joins after it: a parenthesized join in
/// first place (`(a LEFT JOIN b ON ..) JOIN c ON ..`) joins as if it were not parenthesized.
fn leftmost(from: &ast::TableWithJoins) -> (&TableFactor, Vec<&ast::Join>) {
    match &from.relation {
        TableFactor::NestedJoin {
            table_with_joins,
            alias: None,
        } => {
            let (first, mut joins) = leftmost(table_with_joins);
            joins.extend(&from.joins);
            (first, joins)
        }
        relation => (relation, from.joins.iter().collect()),
    }
}

/// Binds `factor`: a table, or a parenthesized join (`a LEFT JOIN (b JOIN c ON ..) ON ..`),
/// whose tables it binds in order and whose ONs it adds to `ons`: an inner join's as the
/// ONs of outer join `owner` if it is on one's inner side (they decide its match), else as
/// inner joins' ONs; a LEFT JOIN in it as an outer join of its own, inside `owner`'s (`a
/// JOIN (b LEFT JOIN c ON p) ON q` joins as `a JOIN b ON q LEFT JOIN c ON p`, with `q`
/// checked after `c`'s match). A RIGHT JOIN in it is not built (1235).
fn bind_factor<'q>(
    catalog: &dyn Catalog,
    factor: &'q TableFactor,
    tables: &mut Vec<BoundTable>,
    (ons, outer_joins): (&mut Vec<On<'q>>, &mut Vec<OuterJoin>),
    owner: Option<usize>,
) -> Result<(), PlanError> {
    let TableFactor::NestedJoin {
        table_with_joins,
        alias: None,
    } = factor
    else {
        return bind_table(catalog, factor, tables);
    };
    bind_factor(
        catalog,
        &table_with_joins.relation,
        tables,
        (ons, outer_joins),
        owner,
    )?;
    for join in &table_with_joins.joins {
        let (c, left) = match &join.join_operator {
            JoinOperator::Join(c) | JoinOperator::Inner(c) | JoinOperator::CrossJoin(c) => {
                (c, false)
            }
            JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (c, true),
            _ => {
                return Err(PlanError::Unsupported(format!(
                    "a RIGHT JOIN inside parentheses: {factor}"
                )));
            }
        };
        let on = match c {
            JoinConstraint::On(e) => Some(e),
            JoinConstraint::None if !left => None,
            _ => return Err(PlanError::Unsupported(join.to_string())),
        };
        let before = tables.len();
        // A LEFT JOIN in it is an outer join of its own, inside `owner`'s if there is one.
        let mine = match left {
            true => {
                outer_joins.push(OuterJoin {
                    kind: JoinKind::Left,
                    inner: TableMap::EMPTY,
                    after: TableMap::first(before),
                });
                Some(outer_joins.len() - 1)
            }
            false => owner,
        };
        bind_factor(catalog, &join.relation, tables, (ons, outer_joins), mine)?;
        if let (true, Some(k)) = (left, mine) {
            outer_joins[k].inner = TableMap::first(tables.len()) & !TableMap::first(before);
        }
        if let Some(e) = on {
            ons.push((e, tables.len(), mine));
        }
    }
    Ok(())
}
