//! Every row change of INSERT, REPLACE, UPDATE and DELETE, with the checks of the foreign
//! keys around the table, as InnoDB makes them (`row_ins_check_foreign_constraints`,
//! `row_upd_check_references_constraints`):
//!
//! - A child row written (inserted, or its foreign key changed) must find its parent: a
//!   locking read (shared) of the parent row, through the parent's index that the referenced
//!   columns lead, which keeps that row from being deleted or changed by others until this
//!   transaction ends. None found: 1452.
//! - A parent row deleted, or its referenced columns changed, looks for its children through
//!   the child's index, locking them: RESTRICT and NO ACTION fail with 1451 if there is one;
//!   CASCADE deletes the children or gives them the new values, SET NULL sets their key to
//!   NULL, and each such change is checked in turn, 15 cascades deep at most (3008, as
//!   InnoDB's `FK_MAX_CASCADE_DEL`).
//!
//! Each check is made right after its row's change, so a row may reference itself; a failed
//! check fails the statement, which undoes every change it made. `foreign_key_checks = 0`
//! (a session's, for loaders and dumps) skips all of it, cascades too, as in MySQL.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use waterline_txn::{
    Key, KeyRange, LockMode, ReadOptions, Row, Table, TableId, Transaction, Value, copy_keyed_row,
};

use crate::error::SqlError;
use crate::foreign::{Action, ForeignKey, leading_index};
use crate::session::Context;

/// How deep cascades go: InnoDB's `FK_MAX_CASCADE_DEL`.
const MAX_CASCADE_DEPTH: usize = 15;

/// The foreign keys around one table, resolved against the catalog: those it is the child
/// of, and those of tables (itself too) that reference it.
#[derive(Debug, Default)]
pub(crate) struct Checks {
    as_child: Vec<ChildSide>,
    as_parent: Vec<ParentSide>,
    /// The table's name, for the errors.
    name: String,
}

/// A foreign key of the table.
#[derive(Debug)]
struct ChildSide {
    fk: ForeignKey,
    /// Its columns in the table.
    columns: Vec<usize>,
    /// The parent, and its index that finds a parent row (`None`: the primary key). `None`
    /// if the parent is not there (a key made with `foreign_key_checks = 0` may name a table
    /// yet to come): then every row with a key fails the check.
    parent: Option<(Table, Option<String>)>,
}

/// A foreign key of another table (or of this one) that references the table.
#[derive(Debug)]
struct ParentSide {
    fk: ForeignKey,
    /// The referenced columns in the table.
    columns: Vec<usize>,
    child: Table,
    /// The child's columns, matched in order with `columns`.
    child_columns: Vec<usize>,
    /// The child's index its columns lead (`None`: its primary key).
    child_index: Option<String>,
}

/// The tables a cascade has passed through, from the statement's own: each with whether
/// it was updated there (or deleted from).
type Chain<'a> = &'a [(TableId, bool)];

/// Each table's checks, as resolved at a catalog version (kept on the engine).
#[derive(Debug, Default)]
struct Resolved(Mutex<HashMap<TableId, (u64, Arc<Checks>)>>);

fn values(row: &Row, columns: &[usize]) -> Vec<Value> {
    columns.iter().map(|&c| row[c].clone()).collect()
}

fn unchanged(old: Option<&Row>, new: &Row, columns: &[usize]) -> bool {
    old.is_some_and(|old| columns.iter().all(|&c| old[c] == new[c]))
}

impl Checks {
    /// The checks of `table` (none for a temporary table, which has no foreign keys).
    pub(crate) fn of(s: &Context<'_>, table: &Table) -> Result<Arc<Checks>, SqlError> {
        if table.is_temporary() {
            return Ok(Arc::default());
        }
        let engine = &s.shared().engine;
        let version = engine.catalog_version();
        let resolved = engine.extension::<Resolved>();
        if let Some((at, checks)) = resolved.0.lock().get(&table.id())
            && *at == version
        {
            return Ok(Arc::clone(checks));
        }
        let checks = Arc::new(Checks::resolve(s, table));
        resolved
            .0
            .lock()
            .insert(table.id(), (version, Arc::clone(&checks)));
        Ok(checks)
    }

    fn resolve(s: &Context<'_>, table: &Table) -> Checks {
        let shared = s.shared();
        let (engine, catalog) = (&shared.engine, &shared.catalog);
        let schema = table.schema();
        let as_child = (catalog.meta_of(engine, table).foreign_keys.into_iter())
            .filter_map(|fk| {
                let columns = fk.child_positions(schema)?;
                let parent = engine.table(&fk.parent).ok().and_then(|parent| {
                    let (_, index) = fk.resolve_parent(schema, parent.schema()).ok()?;
                    Some((parent, index))
                });
                Some(ChildSide {
                    fk,
                    columns,
                    parent,
                })
            })
            .collect();
        let mut as_parent = Vec::new();
        for (child, fk) in catalog.referencing(engine, table.name()) {
            let Ok((columns, _)) = fk.resolve_parent(child.schema(), schema) else {
                continue;
            };
            let Some(child_columns) = fk.child_positions(child.schema()) else {
                continue;
            };
            let Some(child_index) = leading_index(child.schema(), &child_columns) else {
                continue;
            };
            as_parent.push(ParentSide {
                fk,
                columns,
                child,
                child_columns,
                child_index,
            });
        }
        Checks {
            as_child,
            as_parent,
            name: table.name().to_owned(),
        }
    }

    /// Whether anything is to be checked in `s`.
    fn on(&self, s: &Context<'_>) -> bool {
        s.settings().foreign_key_checks && !(self.as_child.is_empty() && self.as_parent.is_empty())
    }

    /// Inserts `row` into `table` (whose checks these are), then checks its parents.
    pub(crate) fn insert(
        &self,
        s: &Context<'_>,
        trx: &mut Transaction,
        table: &Table,
        row: Row,
    ) -> Result<Key, SqlError> {
        if !self.on(s) {
            return Ok(trx.insert(table, row)?);
        }
        let kept = row.clone();
        let key = trx.insert(table, row)?;
        self.find_parents(s, trx, None, &kept)?;
        Ok(key)
    }

    /// Deletes `old` (at `key`) from `table`, then deals with its children. Returns whether
    /// there was a row to delete.
    pub(crate) fn delete(
        &self,
        s: &Context<'_>,
        trx: &mut Transaction,
        table: &Table,
        key: Key,
        old: &Row,
    ) -> Result<bool, SqlError> {
        self.delete_at(s, trx, table, (key, old), &[(table.id(), false)])
    }

    /// `old` (at `key`) of `table` becomes `new`: in place, or deleted and inserted again
    /// when its primary key changes; then its parents and children are checked.
    pub(crate) fn update(
        &self,
        s: &Context<'_>,
        trx: &mut Transaction,
        table: &Table,
        (key, old): (Key, &Row),
        new: Row,
    ) -> Result<(), SqlError> {
        self.update_at(s, trx, table, (key, old), new, &[(table.id(), true)])
    }

    fn delete_at(
        &self,
        s: &Context<'_>,
        trx: &mut Transaction,
        table: &Table,
        (key, old): (Key, &Row),
        chain: Chain,
    ) -> Result<bool, SqlError> {
        let deleted = trx.delete(table, key)?;
        if deleted && self.on(s) {
            self.find_children(s, trx, old, None, chain)?;
        }
        Ok(deleted)
    }

    fn update_at(
        &self,
        s: &Context<'_>,
        trx: &mut Transaction,
        table: &Table,
        (key, old): (Key, &Row),
        new: Row,
        chain: Chain,
    ) -> Result<(), SqlError> {
        let checked = self.on(s).then(|| new.clone());
        let moved = (table.schema().primary_key.as_ref())
            .is_some_and(|cols| cols.iter().any(|&c| new[c] != old[c]));
        if moved {
            trx.delete(table, key)?;
            trx.insert(table, new)?;
        } else {
            trx.update(table, key, new)?;
        }
        if let Some(new) = checked {
            self.find_parents(s, trx, Some(old), &new)?;
            self.find_children(s, trx, old, Some(&new), chain)?;
        }
        Ok(())
    }

    /// Each foreign key of `new` (that changed from `old`) must find its parent row, which
    /// is locked shared.
    fn find_parents(
        &self,
        s: &Context<'_>,
        trx: &mut Transaction,
        old: Option<&Row>,
        new: &Row,
    ) -> Result<(), SqlError> {
        for c in &self.as_child {
            let key = values(new, &c.columns);
            if key.iter().any(Value::is_null) || unchanged(old, new, &c.columns) {
                continue;
            }
            let found = match &c.parent {
                None => false,
                Some((parent, index)) => {
                    let mut options = ReadOptions::FOR_SHARE.limit(1);
                    if let Some(index) = index {
                        options = options.on_index(index);
                    }
                    let range = KeyRange::Prefix(Key::from(key));
                    !(trx.scan_with(parent, range, options, |_, _| ())?).is_empty()
                }
            };
            if !found {
                return Err(c.fk.no_parent(s.home(), &self.name));
            }
        }
        Ok(())
    }

    /// The children of `old`, deleted (`new` is `None`) or changed to `new`: refused if a
    /// key restricts it, else deleted, updated or set NULL as their key says.
    fn find_children(
        &self,
        s: &Context<'_>,
        trx: &mut Transaction,
        old: &Row,
        new: Option<&Row>,
        chain: Chain,
    ) -> Result<(), SqlError> {
        for p in &self.as_parent {
            let key = values(old, &p.columns);
            if key.iter().any(Value::is_null)
                || new.is_some_and(|new| unchanged(Some(old), new, &p.columns))
            {
                continue;
            }
            let action = p.fk.action(new.is_none());
            // A cascade that would update a table an update earlier in its chain changed
            // acts as RESTRICT, as in InnoDB (`row_ins_cascade_ancestor_updates_table`):
            // a self-referencing ON UPDATE CASCADE could go round forever.
            let updates = new.is_some() || action == Action::SetNull;
            let cyclic = updates && chain.contains(&(p.child.id(), true));
            let restrict = cyclic || matches!(action, Action::Restrict | Action::NoAction);
            let mut options = if restrict {
                ReadOptions::locking(LockMode::Shared).limit(1)
            } else {
                ReadOptions::locking(LockMode::Exclusive)
            };
            if let Some(index) = &p.child_index {
                options = options.on_index(index);
            }
            let range = KeyRange::Prefix(Key::from(key));
            let children = trx.scan_with(&p.child, range, options, copy_keyed_row)?;
            if children.is_empty() {
                continue;
            }
            if restrict {
                return Err(p.fk.has_children(s.home(), p.child.name()));
            }
            if chain.len() > MAX_CASCADE_DEPTH {
                return Err(SqlError::new(
                    3008,
                    "HY000",
                    format!(
                        "Foreign key cascade delete/update exceeds max depth of {MAX_CASCADE_DEPTH}."
                    ),
                ));
            }
            let checks = Checks::of(s, &p.child)?;
            let chain = [chain, &[(p.child.id(), updates)]].concat();
            for (key, row) in children {
                if !updates {
                    checks.delete_at(s, trx, &p.child, (key, &row), &chain)?;
                    continue;
                }
                let mut changed = row.clone();
                for (&c, &pc) in p.child_columns.iter().zip(&p.columns) {
                    changed[c] = match new {
                        Some(new) if action == Action::Cascade => new[pc].clone(),
                        _ => Value::Null,
                    };
                }
                checks.update_at(s, trx, &p.child, (key, &row), changed, &chain)?;
            }
        }
        Ok(())
    }
}
