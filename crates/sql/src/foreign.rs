//! Foreign keys as InnoDB defines them: what a constraint is, how its definition is checked
//! against the child and the parent, how SHOW CREATE TABLE and the errors write it. The
//! checks of each row change are `write.rs`.
//!
//! A foreign key names columns of its table (the child) and as many columns of another
//! table, or of the same one (the parent), that lead one of the parent's indexes in that
//! order (InnoDB needs the index to find a parent row; MySQL error 1822 otherwise). The
//! child needs an index led by its columns too, to find a parent row's children: one is
//! made, named after the constraint, if the table has none. Matched columns must have the
//! same type, integers of the same size and sign, DECIMALs of the same precision and scale
//! (3780 otherwise). A row with a NULL in its foreign key references nothing (MATCH SIMPLE,
//! the only kind InnoDB has).

use serde::{Deserialize, Serialize};
use sqlparser::ast::{self, ReferentialAction};
use waterline_txn::{ColumnType, TableSchema};

use crate::error::SqlError;

/// What a change of a parent row does to its children.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Action {
    /// RESTRICT: the change fails (1451) while a child references the row.
    Restrict,
    /// NO ACTION: in InnoDB (which checks at once, never at commit), RESTRICT.
    NoAction,
    /// CASCADE: the children are deleted with the row, or take its new values.
    Cascade,
    /// SET NULL: the children's foreign-key columns become NULL.
    SetNull,
}

impl Action {
    fn of(action: Option<&ReferentialAction>) -> Result<Option<Action>, SqlError> {
        Ok(match action {
            None => None,
            Some(ReferentialAction::Restrict) => Some(Action::Restrict),
            Some(ReferentialAction::NoAction) => Some(Action::NoAction),
            Some(ReferentialAction::Cascade) => Some(Action::Cascade),
            Some(ReferentialAction::SetNull) => Some(Action::SetNull),
            Some(ReferentialAction::SetDefault) => {
                return Err(SqlError::unsupported("a foreign key's SET DEFAULT"));
            }
        })
    }

    fn text(self) -> &'static str {
        match self {
            Action::Restrict => "RESTRICT",
            Action::NoAction => "NO ACTION",
            Action::Cascade => "CASCADE",
            Action::SetNull => "SET NULL",
        }
    }
}

/// A foreign key of a table (its child), by column names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKey {
    /// The constraint's name, unique among the table's foreign keys.
    pub name: String,
    /// The child's columns.
    pub columns: Vec<String>,
    /// The parent table.
    pub parent: String,
    /// The parent's columns, matched in order with `columns`.
    pub parent_columns: Vec<String>,
    /// ON DELETE, as declared (none: RESTRICT's behaviour).
    pub on_delete: Option<Action>,
    /// ON UPDATE, as declared (none: RESTRICT's behaviour).
    pub on_update: Option<Action>,
}

fn quoted(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| quoted(n))
        .collect::<Vec<_>>()
        .join(", ")
}

impl ForeignKey {
    /// What a change of a parent row does: `on_delete` or `on_update`, RESTRICT if none.
    pub fn action(&self, delete: bool) -> Action {
        let declared = if delete {
            self.on_delete
        } else {
            self.on_update
        };
        declared.unwrap_or(Action::Restrict)
    }

    /// The definition from `fk` for table `child` whose foreign keys are `existing`:
    /// named as declared or `<child>_ibfk_<n>` (MySQL's name), its child columns checked.
    pub(crate) fn define(
        fk: &ast::ForeignKeyConstraint,
        child: &TableSchema,
        existing: &[ForeignKey],
    ) -> Result<ForeignKey, SqlError> {
        if fk.match_kind.is_some() || fk.characteristics.is_some() {
            return Err(SqlError::unsupported(
                "a foreign key's MATCH or deferral clause",
            ));
        }
        let name = match &fk.name {
            Some(n) => n.value.clone(),
            None => (1..)
                .map(|n| format!("{}_ibfk_{n}", crate::names::short(&child.name)))
                .find(|n| !existing.iter().any(|f| f.name.eq_ignore_ascii_case(n)))
                .expect("a free number"),
        };
        if existing.iter().any(|f| f.name.eq_ignore_ascii_case(&name)) {
            return Err(SqlError::new(
                1826,
                "HY000",
                format!("Duplicate foreign key constraint name '{name}'"),
            ));
        }
        let columns: Vec<String> = fk.columns.iter().map(|c| c.value.clone()).collect();
        let parent_columns: Vec<String> = fk
            .referred_columns
            .iter()
            .map(|c| c.value.clone())
            .collect();
        if columns.len() != parent_columns.len() {
            return Err(SqlError::new(
                1239,
                "42000",
                format!(
                    "Incorrect foreign key definition for '{name}': Key reference and table \
                     reference don't match"
                ),
            ));
        }
        let defined = ForeignKey {
            parent: waterline_planner::bind::object_name(&fk.foreign_table)?,
            on_delete: Action::of(fk.on_delete.as_ref())?,
            on_update: Action::of(fk.on_update.as_ref())?,
            name,
            columns,
            parent_columns,
        };
        for c in &defined.columns {
            let Ok(position) = child.column(c) else {
                return Err(SqlError::new(
                    1072,
                    "42000",
                    format!("Key column '{c}' doesn't exist in table"),
                ));
            };
            let set_null = [defined.on_delete, defined.on_update].contains(&Some(Action::SetNull));
            if set_null && !child.columns[position].nullable {
                return Err(SqlError::new(
                    1830,
                    "HY000",
                    format!(
                        "Column '{c}' cannot be NOT NULL: needed in a foreign key constraint \
                         '{}' SET NULL",
                        defined.name
                    ),
                ));
            }
        }
        Ok(defined)
    }

    /// The child's column positions in `child`.
    pub(crate) fn child_positions(&self, child: &TableSchema) -> Option<Vec<usize>> {
        self.columns.iter().map(|c| child.column(c).ok()).collect()
    }

    /// Checks the key against its parent's definition `parent` (the child's is `child`):
    /// the columns exist, lead an index of the parent, and have the child's types. Returns
    /// the parent's column positions and the index that finds a parent row (`None`: the
    /// primary key).
    pub(crate) fn resolve_parent(
        &self,
        child: &TableSchema,
        parent: &TableSchema,
    ) -> Result<(Vec<usize>, Option<String>), SqlError> {
        let mut positions = Vec::with_capacity(self.parent_columns.len());
        for (c, p) in self.columns.iter().zip(&self.parent_columns) {
            let (Ok(cp), Ok(pp)) = (child.column(c), parent.column(p)) else {
                return Err(self.missing_index(parent));
            };
            if !same_kind(child.columns[cp].ty, parent.columns[pp].ty) {
                return Err(SqlError::new(
                    3780,
                    "HY000",
                    format!(
                        "Referencing column '{c}' and referenced column '{p}' in foreign key \
                         constraint '{}' are incompatible.",
                        self.name
                    ),
                ));
            }
            positions.push(pp);
        }
        let index = leading_index(parent, &positions).ok_or_else(|| self.missing_index(parent))?;
        Ok((positions, index))
    }

    fn missing_index(&self, parent: &TableSchema) -> SqlError {
        SqlError::new(
            1822,
            "HY000",
            format!(
                "Failed to add the foreign key constraint. Missing index for constraint '{}' \
                 in the referenced table '{}'",
                self.name, parent.name
            ),
        )
    }

    /// The constraint as SHOW CREATE TABLE of `child` (the engine's name, in a server whose
    /// home database is `home`) writes it: the parent named with its database if that is
    /// not the child's.
    pub(crate) fn clause(&self, home: &str, child: &str) -> String {
        let (child_db, _) = crate::names::split(home, child);
        let parent = match crate::names::split(home, &self.parent) {
            (db, table) if db.eq_ignore_ascii_case(child_db) => quoted(table),
            (db, table) => format!("{}.{}", quoted(db), quoted(table)),
        };
        let mut text = format!(
            "CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {parent} ({})",
            quoted(&self.name),
            quoted_list(&self.columns),
            quoted_list(&self.parent_columns)
        );
        if let Some(action) = self.on_delete {
            text.push_str(&format!(" ON DELETE {}", action.text()));
        }
        if let Some(action) = self.on_update {
            text.push_str(&format!(" ON UPDATE {}", action.text()));
        }
        text
    }

    /// `` `db`.`child`, CONSTRAINT ... ``: the constraint of `child` as MySQL's errors name it.
    pub(crate) fn violated(&self, home: &str, child: &str) -> String {
        let (db, table) = crate::names::split(home, child);
        format!(
            "{}.{}, {}",
            quoted(db),
            quoted(table),
            self.clause(home, child)
        )
    }

    /// 1452: a child row of `child` (the engine's name) whose key no parent row has.
    pub(crate) fn no_parent(&self, home: &str, child: &str) -> SqlError {
        SqlError::new(
            1452,
            "23000",
            format!(
                "Cannot add or update a child row: a foreign key constraint fails ({})",
                self.violated(home, child)
            ),
        )
    }

    /// 1451: a parent row that a child row of `child` (the engine's name) references.
    pub(crate) fn has_children(&self, home: &str, child: &str) -> SqlError {
        SqlError::new(
            1451,
            "23000",
            format!(
                "Cannot delete or update a parent row: a foreign key constraint fails ({})",
                self.violated(home, child)
            ),
        )
    }
}

/// Whether a child column of type `a` may reference a parent column of type `b`: the same
/// type, but strings of any length and DATETIMEs of any precision (as InnoDB allows).
fn same_kind(a: ColumnType, b: ColumnType) -> bool {
    match (a, b) {
        (
            ColumnType::Char(_) | ColumnType::Varchar(_),
            ColumnType::Char(_) | ColumnType::Varchar(_),
        ) => true,
        (ColumnType::DateTime(_), ColumnType::DateTime(_)) => true,
        _ => a == b,
    }
}

/// The index of `schema` whose columns start with `columns` in that order: `Some(None)` for
/// the primary key, `Some(Some(name))` for a secondary index, `None` if there is none.
pub(crate) fn leading_index(schema: &TableSchema, columns: &[usize]) -> Option<Option<String>> {
    if schema
        .primary_key
        .as_ref()
        .is_some_and(|pk| pk.starts_with(columns))
    {
        return Some(None);
    }
    (schema.indexes.iter())
        .find(|i| i.columns.starts_with(columns))
        .map(|i| Some(i.name.clone()))
}
