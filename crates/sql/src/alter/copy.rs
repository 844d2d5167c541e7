//! ALTER TABLE's copy (MySQL's `ALGORITHM=COPY`): a new table of the new definition is
//! made under a name no statement can give (`#sql-alter-<id>`), every row of the old one is
//! copied into it with its values converted to the new columns' types, and the copy then
//! takes the old table's name in one logged step ([`waterline_txn::Engine::replace_table`]):
//! a crash before that step leaves the old table as it was (and a stray copy, which the
//! next ALTER of the table replaces), after it the new one.
//!
//! While it copies, the table is locked WRITE for the session (other sessions' statements
//! that use it wait, as behind MySQL's exclusive metadata lock), and the copy reads every
//! row with a shared lock, so it waits for the transactions that changed rows and have not
//! ended. What waterline cannot do that MySQL's metadata lock does: a transaction that read
//! the table and is still open reads the old table afterwards (it holds its handle), and a
//! statement already waiting for a row lock when the ALTER began writes to the old table
//! once it gets it.

use waterline_txn::{Isolation, KeyRange, ReadOptions, Table, TableSchema, Value, copy_row};

use super::definition::Col;
use crate::error::SqlError;
use crate::session::Context;
use crate::shared::TableMeta;

/// The name of `table`'s copy, in its database.
fn copy_name(table: &Table) -> String {
    let own = format!("#sql-alter-{}", table.id().0);
    match table.name().split_once('.') {
        Some((db, _)) => format!("{db}.{own}"),
        None => own,
    }
}

/// 1292 for a NOT NULL DATETIME column added without a DEFAULT to a table with rows: its
/// implicit value would be MySQL's zero date, which a strict `sql_mode` (NO_ZERO_DATE)
/// refuses, and waterline does not have.
fn no_zero_date(column: &str, row: usize) -> SqlError {
    SqlError::new(
        1292,
        "22007",
        format!(
            "Incorrect datetime value: '0000-00-00 00:00:00' for column '{column}' at row {row}"
        ),
    )
}

/// One row of the new table, from `old` (a row of the old one, number `n` from 1).
fn converted(
    s: &Context<'_>,
    columns: &[Col],
    old: &[Value],
    n: usize,
) -> Result<Vec<Value>, SqlError> {
    let strict = s.settings().sql_mode.strict;
    let mut warnings = Vec::new();
    columns
        .iter()
        .map(|c| match c.source {
            // What does not fit is 1265 here, as MySQL's ALTER says (an INSERT's is 1406).
            Some(j) => crate::types::store(&c.column, old[j].clone(), strict, n, &mut warnings)
                .map_err(|e| match e.code {
                    1406 => SqlError::new(
                        1265,
                        "01000",
                        format!("Data truncated for column '{}' at row {n}", c.column.name),
                    ),
                    _ => e,
                }),
            None if c.auto_increment => Ok(Value::Int(n as i64)),
            None => match &c.default {
                Some(v) => Ok(v.clone()),
                None if c.column.nullable => Ok(Value::Null),
                None => crate::dml::implicit_default(&c.column)
                    .ok_or_else(|| no_zero_date(&c.column.name, n)),
            },
        })
        .collect()
}

/// Copies `table` into a new table of `schema` and `meta` whose `columns` say where each
/// value comes from, runs `check` on the copy (the foreign keys added), then swaps it in.
/// The new table (under the old name), and how many rows it has.
pub(super) fn copy(
    s: &mut Context<'_>,
    table: &Table,
    (mut schema, meta): (TableSchema, TableMeta),
    columns: &[Col],
    check: impl Fn(&Context<'_>, &Table) -> Result<(), SqlError>,
) -> Result<(Table, usize), SqlError> {
    let engine = std::sync::Arc::clone(&s.shared().engine);
    let name = copy_name(table);
    // A copy a crash left behind.
    let _ = engine.drop_table(&name);
    schema.name = name.clone();
    s.with_table_exclusive(table.id(), |s| {
        let copy = engine.create_table(schema)?;
        let filled = (|| {
            let mut trx = engine.begin_with(Isolation::RepeatableRead);
            let rows = trx.scan_with(table, KeyRange::All, ReadOptions::FOR_SHARE, |_, row| {
                copy_row(row)
            })?;
            for (i, row) in rows.iter().enumerate() {
                s.watch().check()?;
                trx.insert(&copy, converted(s, columns, row, i + 1)?)?;
            }
            trx.commit()?;
            check(s, &copy)?;
            s.shared().catalog.save(&engine, &copy, meta)?;
            Ok::<usize, SqlError>(rows.len())
        })();
        let copied = match filled {
            Ok(n) => n,
            Err(e) => {
                let _ = engine.drop_table(&name);
                s.shared().catalog.forget(&name);
                return Err(e);
            }
        };
        let swapped = engine.replace_table(table.name(), &name)?;
        s.shared().catalog.rekey(&name, swapped.name());
        Ok((swapped, copied))
    })
}
