//! MySQL's semi-join materialization: an `x IN (SELECT y ...)` of WHERE that does not read
//! the query around it, run once, its distinct rows kept in a table `<subqueryN>` with a
//! unique index over all its columns (MySQL's `<auto_distinct_key>`), which joins the block
//! by `x = y`. The rows are distinct, and `x = y` matches an outer row with at most one of
//! them, so the join returns each outer row once, as the semi-join does. The join order
//! then chooses by cost between reading the table first and looking up the outer tables by
//! its values (MySQL's MaterializeScan) and looking it up per outer row (MaterializeLookup).
//!
//! A row with a NULL never satisfies `x = y`, so it is left out. A value of `x` matches at
//! most one row only if SQL's `=` between `x` and `y` is key equality among `y`'s values:
//! so each `x` must be a column of the block, and both sides exact numbers, both strings,
//! or both dates and times (the strings `'1'` and `'1.0'` both equal the number 1; DOUBLE's
//! -0 and 0 are two keys). Any other IN has its rows made an IN list of constants instead,
//! as MySQL's subquery materialization without a semi-join does.

use sqlparser::ast::{self, Expr as Ast, Ident, Query, TableFactor, TableWithJoins};
use waterline_planner::Catalog;
use waterline_planner::semijoin::and_all;
use waterline_txn::{Column, ColumnType, Key, Table, TableSchema, Value};

use super::factors;
use super::values::{column_type, table_named};
use crate::access::{Derived, SchemaCatalog};
use crate::session::ResultColumn;

/// The name every materialization's table starts with (an internal table's angle bracket:
/// `BoundTable::is_internal`).
const PREFIX: &str = "<subquery";

/// The unique index over all of a materialization's columns, named as MySQL names it.
const KEY: &str = "<auto_distinct_key>";

/// Makes the `rows` (of `columns`) of subquery number `id`, the right side of `left IN
/// (...)`, a table `<subqueryN>` joined to block `q` by `left = column`, if the types
/// allow (see the module page): how many distinct rows the table has; `None` leaves `q`
/// and `derived` as they were.
pub(super) fn join(
    (db, tables): (&str, &[Table]),
    q: &mut Query,
    derived: &mut Derived,
    (id, left): (usize, &[Ast]),
    columns: &[ResultColumn],
    rows: &[Vec<Value>],
) -> Option<usize> {
    if left.len() != columns.len() {
        return None;
    }
    let catalog = SchemaCatalog {
        database: db,
        tables,
        derived: Some(derived),
    };
    let ast::SetExpr::Select(select) = q.body.as_ref() else {
        return None;
    };
    let mut types = Vec::new();
    for (i, (x, column)) in left.iter().zip(columns).enumerate() {
        let outer = column_of(&catalog, select, x)?;
        let values = || rows.iter().map(move |r| &r[i]);
        let own = column_type(column, values());
        if family(outer).is_none() || family(outer) != family(own) {
            return None;
        }
        // The outer column's own type lets the join look it up by the table's values,
        // if every value keeps its value in it.
        let one = TableSchema::new("", vec![Column::new("v", outer)]);
        let keeps = values().all(|v| v.is_null() || fits(&one, v));
        types.push(if keeps { outer } else { own });
    }
    let name = format!("{PREFIX}{id}>");
    let names: Vec<String> = columns.iter().map(|c| c.name.to_string()).collect();
    let schema = TableSchema::new(
        name.clone(),
        (names.iter().zip(&types))
            .map(|(n, &ty)| Column::new(n.clone(), ty))
            .collect(),
    );
    let all: Vec<&str> = names.iter().map(String::as_str).collect();
    let schema = schema.index(KEY, &all, true).ok()?;
    schema.validate().ok()?;
    let mut kept: Vec<(Key, Vec<Value>)> = Vec::with_capacity(rows.len());
    for row in rows.iter().filter(|r| !r.iter().any(Value::is_null)) {
        let row = schema.check_row(row.clone()).ok()?;
        let mut key = Key::default();
        row.iter().for_each(|v| key.push(v));
        kept.push((key, row));
    }
    kept.sort_by(|a, b| a.0.cmp(&b.0));
    kept.dedup_by(|a, b| a.0 == b.0);
    let distinct = kept.len();
    derived.add(
        name.clone(),
        schema,
        kept.into_iter().map(|(_, r)| r).collect(),
    );
    let table = Ident::with_quote('`', &name);
    let ast::SetExpr::Select(select) = q.body.as_mut() else {
        return None;
    };
    select.from.push(TableWithJoins {
        relation: table_named(&table),
        joins: Vec::new(),
    });
    let conds = left.iter().zip(&names).map(|(x, n)| Ast::BinaryOp {
        left: Box::new(x.clone()),
        op: ast::BinaryOperator::Eq,
        right: Box::new(Ast::CompoundIdentifier(vec![
            table.clone(),
            Ident::with_quote('`', n),
        ])),
    });
    select.selection = and_all(select.selection.take().into_iter().chain(conds));
    Some(distinct)
}

/// Which values compare as their keys do with each other: exact numbers, strings, dates
/// and times (`None`: DOUBLE).
fn family(ty: ColumnType) -> Option<u8> {
    match ty {
        ColumnType::Double => None,
        ColumnType::Char(_) | ColumnType::Varchar(_) => Some(1),
        ColumnType::DateTime(_) | ColumnType::Date => Some(2),
        _ => Some(0),
    }
}

/// Whether `v` stays itself in the one column of `one`.
fn fits(one: &TableSchema, v: &Value) -> bool {
    one.check_row(vec![v.clone()])
        .is_ok_and(|row| row.first() == Some(v))
}

/// The type of column `x` of `select`'s FROM (`c` or `t.c`), if `x` names exactly one.
fn column_of(catalog: &dyn Catalog, select: &ast::Select, x: &Ast) -> Option<ColumnType> {
    let (table, column) = match x {
        Ast::Nested(inner) => return column_of(catalog, select, inner),
        Ast::Identifier(c) => (None, c),
        Ast::CompoundIdentifier(parts) if parts.len() == 2 => (Some(&parts[0]), &parts[1]),
        _ => return None,
    };
    if !factors(select).all(|f| matches!(f, TableFactor::Table { .. })) {
        return None;
    }
    let mut found = factors(select).filter_map(|factor| {
        let TableFactor::Table { name, alias, .. } = factor else {
            return None;
        };
        let engine = waterline_planner::bind::object_name(name).ok()?;
        let own = alias.as_ref().map_or_else(
            || waterline_planner::own_name(&engine).to_owned(),
            |a| a.name.value.clone(),
        );
        if table.is_some_and(|t| !t.value.eq_ignore_ascii_case(&own)) {
            return None;
        }
        let schema = catalog.table(&engine)?;
        let c = schema.column(&column.value).ok()?;
        Some(schema.columns[c].ty)
    });
    let ty = found.next()?;
    found.next().is_none().then_some(ty)
}
