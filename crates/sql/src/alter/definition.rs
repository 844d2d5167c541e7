//! A table's definition as ALTER TABLE changes it: columns (each with its DEFAULT,
//! AUTO_INCREMENT, and the column of the old table its values come from), primary key,
//! indexes and foreign keys, by name, so that the operations of one statement apply in
//! order and the result is checked once, as MySQL builds the new table's definition before
//! it touches a row.

use sqlparser::ast::{self, AlterColumnOperation, MySQLColumnPosition};
use waterline_txn::{Column, TableSchema, Value};

use crate::error::SqlError;
use crate::foreign::ForeignKey;
use crate::shared::TableMeta;

/// One column of the new definition.
#[derive(Clone, Debug)]
pub(super) struct Col {
    pub(super) column: Column,
    pub(super) default: Option<Value>,
    pub(super) auto_increment: bool,
    /// The old table's column whose values it takes (`None`: a new column).
    pub(super) source: Option<usize>,
}

impl Col {
    /// The column `defined` declares, its values from the old table's column `source`.
    fn of(defined: &crate::ddl::Defined, source: Option<usize>) -> Col {
        Col {
            column: defined.column.clone(),
            default: defined.default.clone(),
            auto_increment: defined.auto_increment,
            source,
        }
    }
}

/// A table's definition while ALTER TABLE changes it.
#[derive(Clone, Debug)]
pub(super) struct Definition {
    pub(super) columns: Vec<Col>,
    pub(super) primary: Option<Vec<String>>,
    /// Secondary indexes: name, columns, unique.
    pub(super) indexes: Vec<(String, Vec<String>, bool)>,
    pub(super) foreign_keys: Vec<ForeignKey>,
    /// `AUTO_INCREMENT = n`.
    pub(super) next_id: Option<i64>,
    /// Columns renamed, old name and new, in order (the children's keys follow them).
    pub(super) renames: Vec<(String, String)>,
}

fn no_such(name: &str) -> SqlError {
    SqlError::new(
        1091,
        "42000",
        format!("Can't DROP '{name}'; check that column/key exists"),
    )
}

fn unknown_column(name: &str, table: &str) -> SqlError {
    SqlError::new(
        1054,
        "42S22",
        format!("Unknown column '{name}' in '{table}'"),
    )
}

fn same(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Renames column `from` to `to` in `names`; whether it was there.
fn rename_in(names: &mut [String], from: &str, to: &str) -> bool {
    let mut found = false;
    for n in names.iter_mut().filter(|n| same(n, from)) {
        to.clone_into(n);
        found = true;
    }
    found
}

/// Applies `renames` (old name, new, in order) to the column names `names`; whether any
/// changed.
pub(super) fn follow(names: &mut [String], renames: &[(String, String)]) -> bool {
    (renames.iter()).fold(false, |changed, (from, to)| {
        rename_in(names, from, to) | changed
    })
}

impl Definition {
    /// The definition of an existing table.
    pub(super) fn of(schema: &TableSchema, meta: &TableMeta) -> Definition {
        let names = |cols: &[usize]| -> Vec<String> {
            cols.iter()
                .map(|&c| schema.columns[c].name.clone())
                .collect()
        };
        Definition {
            columns: (schema.columns.iter().enumerate())
                .map(|(i, c)| Col {
                    column: c.clone(),
                    default: meta.defaults.get(i).cloned().flatten(),
                    auto_increment: meta.auto_increment == Some(i),
                    source: Some(i),
                })
                .collect(),
            primary: schema.primary_key.as_deref().map(names),
            indexes: (schema.indexes.iter())
                .map(|ix| (ix.name.clone(), names(&ix.columns), ix.unique))
                .collect(),
            foreign_keys: meta.foreign_keys.clone(),
            next_id: None,
            renames: Vec::new(),
        }
    }

    /// The table's foreign key that column `name` is part of, if any.
    fn key_using(&self, name: &str) -> Option<&ForeignKey> {
        (self.foreign_keys.iter()).find(|f| f.columns.iter().any(|c| same(c, name)))
    }

    /// Whether an index is named `name` (PRIMARY always is).
    fn index_taken(&self, name: &str) -> bool {
        same(name, "PRIMARY") || self.indexes.iter().any(|(n, ..)| same(n, name))
    }

    /// The position of column `name` of `table`: 1054 if it has none.
    fn column(&self, name: &str, table: &str) -> Result<usize, SqlError> {
        self.position(name)
            .ok_or_else(|| unknown_column(name, table))
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| same(&c.column.name, name))
    }

    fn place(
        &mut self,
        col: Col,
        at: Option<&MySQLColumnPosition>,
        table: &str,
    ) -> Result<(), SqlError> {
        let at = match at {
            None => self.columns.len(),
            Some(MySQLColumnPosition::First) => 0,
            Some(MySQLColumnPosition::After(after)) => self.column(&after.value, table)? + 1,
        };
        self.columns.insert(at, col);
        Ok(())
    }

    fn duplicate(&self, name: &str) -> Result<(), SqlError> {
        if self.position(name).is_some() {
            return Err(SqlError::new(
                1060,
                "42S21",
                format!("Duplicate column name '{name}'"),
            ));
        }
        Ok(())
    }

    /// ADD [COLUMN] definition [FIRST | AFTER c].
    pub(super) fn add_column(
        &mut self,
        def: &ast::ColumnDef,
        at: Option<&MySQLColumnPosition>,
        table: &str,
    ) -> Result<(), SqlError> {
        self.duplicate(&def.name.value)?;
        let defined = crate::ddl::column_def(def)?;
        let name = defined.column.name.clone();
        self.place(Col::of(&defined, None), at, table)?;
        self.keys_of(&defined, &name)
    }

    /// The PRIMARY KEY and UNIQUE a column's definition declares.
    fn keys_of(&mut self, defined: &crate::ddl::Defined, name: &str) -> Result<(), SqlError> {
        if defined.primary {
            if self.primary.is_some() {
                return Err(SqlError::new(1068, "42000", "Multiple primary key defined"));
            }
            self.primary = Some(vec![name.to_owned()]);
        }
        if defined.unique {
            let index = self.free_name(name);
            self.add_index(&index, &[name.to_owned()], true)?;
        }
        Ok(())
    }

    /// MODIFY [COLUMN] c definition, CHANGE [COLUMN] old new definition: the column's new
    /// definition, its values converted from the old ones.
    pub(super) fn change_column(
        &mut self,
        old: &str,
        def: &ast::ColumnDef,
        at: Option<&MySQLColumnPosition>,
        table: &str,
    ) -> Result<(), SqlError> {
        let i = self.column(old, table)?;
        let col = self.columns.remove(i);
        let new_name = def.name.value.clone();
        if let Err(e) = self.duplicate(&new_name) {
            self.columns.insert(i, col);
            return Err(e);
        }
        let defined = crate::ddl::column_def(def)?;
        let changed = Col::of(&defined, col.source);
        if changed.column.ty != col.column.ty
            && let Some(fk) = self.key_using(old)
        {
            return Err(SqlError::new(
                1832,
                "HY000",
                format!(
                    "Cannot change column '{old}': used in a foreign key constraint '{}'",
                    fk.name
                ),
            ));
        }
        match at {
            None => self.columns.insert(i, changed),
            Some(_) => self.place(changed, at, table)?,
        }
        self.rename_column_refs(old, &new_name);
        self.keys_of(&defined, &new_name)
    }

    /// RENAME COLUMN old TO new.
    pub(super) fn rename_column(
        &mut self,
        old: &str,
        new: &str,
        table: &str,
    ) -> Result<(), SqlError> {
        let i = self.column(old, table)?;
        if !same(old, new) {
            self.duplicate(new)?;
        }
        self.columns[i].column.name = new.to_owned();
        self.rename_column_refs(old, new);
        Ok(())
    }

    fn rename_column_refs(&mut self, old: &str, new: &str) {
        if old != new {
            self.renames.push((old.to_owned(), new.to_owned()));
        }
        if let Some(pk) = &mut self.primary {
            rename_in(pk, old, new);
        }
        for (_, cols, _) in &mut self.indexes {
            rename_in(cols, old, new);
        }
        for fk in &mut self.foreign_keys {
            rename_in(&mut fk.columns, old, new);
        }
    }

    /// DROP [COLUMN] c: out of every index too (an index left without columns goes), as in
    /// MySQL; 1828 if one of the table's foreign keys uses it.
    pub(super) fn drop_column(&mut self, name: &str, if_exists: bool) -> Result<(), SqlError> {
        let Some(i) = self.position(name) else {
            return if if_exists {
                Ok(())
            } else {
                Err(no_such(name))
            };
        };
        if let Some(fk) = self.key_using(name) {
            return Err(SqlError::new(
                1828,
                "HY000",
                format!(
                    "Cannot drop column '{name}': needed in a foreign key constraint '{}'",
                    fk.name
                ),
            ));
        }
        if self.columns.len() == 1 {
            return Err(SqlError::new(
                1090,
                "42000",
                "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
            ));
        }
        self.columns.remove(i);
        if let Some(pk) = &mut self.primary {
            pk.retain(|c| !same(c, name));
            if pk.is_empty() {
                self.primary = None;
            }
        }
        for (_, cols, _) in &mut self.indexes {
            cols.retain(|c| !same(c, name));
        }
        self.indexes.retain(|(_, cols, _)| !cols.is_empty());
        Ok(())
    }

    /// ALTER [COLUMN] c SET DEFAULT v | DROP DEFAULT.
    pub(super) fn alter_column(
        &mut self,
        name: &str,
        op: &AlterColumnOperation,
        table: &str,
    ) -> Result<(), SqlError> {
        let i = self.column(name, table)?;
        let col = &mut self.columns[i];
        match op {
            AlterColumnOperation::SetDefault { value } => {
                col.default = Some(crate::ddl::default_value(&col.column, value)?);
            }
            AlterColumnOperation::DropDefault => col.default = None,
            other => return Err(SqlError::unsupported(format!("ALTER COLUMN ... {other}"))),
        }
        Ok(())
    }

    /// The name MySQL gives an index not named: its first column's, else that with `_2`,
    /// `_3`, ... until it is free.
    pub(super) fn free_name(&self, column: &str) -> String {
        if !self.index_taken(column) {
            return column.to_owned();
        }
        (2..)
            .map(|k| format!("{column}_{k}"))
            .find(|n| !self.index_taken(n))
            .expect("a free name")
    }

    /// ADD [UNIQUE] INDEX name (columns): 1061 if the name is taken, 1072 for a column
    /// the table does not have.
    pub(super) fn add_index(
        &mut self,
        name: &str,
        columns: &[String],
        unique: bool,
    ) -> Result<(), SqlError> {
        if self.index_taken(name) {
            return Err(SqlError::new(
                1061,
                "42000",
                format!("Duplicate key name '{name}'"),
            ));
        }
        self.known_columns(columns)?;
        self.indexes
            .push((name.to_owned(), columns.to_vec(), unique));
        Ok(())
    }

    fn known_columns(&self, columns: &[String]) -> Result<(), SqlError> {
        if let Some(missing) = columns.iter().find(|c| self.position(c).is_none()) {
            return Err(SqlError::new(
                1072,
                "42000",
                format!("Key column '{missing}' doesn't exist in table"),
            ));
        }
        Ok(())
    }

    /// ADD PRIMARY KEY (columns): 1068 if there is one.
    pub(super) fn add_primary(&mut self, columns: Vec<String>) -> Result<(), SqlError> {
        if self.primary.is_some() {
            return Err(SqlError::new(1068, "42000", "Multiple primary key defined"));
        }
        self.known_columns(&columns)?;
        for c in &mut self.columns {
            if columns.iter().any(|k| same(k, &c.column.name)) {
                c.column.nullable = false;
            }
        }
        self.primary = Some(columns);
        Ok(())
    }

    /// DROP PRIMARY KEY: 1091 if there is none.
    pub(super) fn drop_primary(&mut self) -> Result<(), SqlError> {
        if self.primary.take().is_none() {
            return Err(no_such("PRIMARY"));
        }
        Ok(())
    }

    /// DROP INDEX name: 1091 if there is none.
    pub(super) fn drop_index(&mut self, name: &str) -> Result<(), SqlError> {
        if same(name, "PRIMARY") {
            return self.drop_primary();
        }
        let at = (self.indexes.iter())
            .position(|(n, ..)| same(n, name))
            .ok_or_else(|| no_such(name))?;
        self.indexes.remove(at);
        Ok(())
    }

    /// The new table's schema, named `name`, and its metadata (1075 for an AUTO_INCREMENT
    /// column that leads no key).
    pub(super) fn build(&self, name: &str) -> Result<(TableSchema, TableMeta), SqlError> {
        let mut schema = TableSchema::new(
            name,
            self.columns.iter().map(|c| c.column.clone()).collect(),
        );
        if let Some(pk) = &self.primary {
            let refs: Vec<&str> = pk.iter().map(String::as_str).collect();
            schema = schema.primary_key(&refs)?;
        }
        for (index, cols, unique) in &self.indexes {
            let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
            schema = schema.index(index, &refs, *unique)?;
        }
        let autos: Vec<usize> = (self.columns.iter().enumerate())
            .filter(|(_, c)| c.auto_increment)
            .map(|(i, _)| i)
            .collect();
        let leads = |col: usize| {
            schema.primary_key.as_ref().is_some_and(|k| k[0] == col)
                || schema.indexes.iter().any(|ix| ix.columns[0] == col)
        };
        if autos.len() > 1 || autos.first().is_some_and(|&c| !leads(c)) {
            return Err(SqlError::new(
                1075,
                "42000",
                "Incorrect table definition; there can be only one auto column and it must be \
                 defined as a key",
            ));
        }
        let meta = TableMeta {
            defaults: self.columns.iter().map(|c| c.default.clone()).collect(),
            auto_increment: autos.first().copied(),
            next_id: 0,
            foreign_keys: self.foreign_keys.clone(),
        };
        Ok((schema, meta))
    }
}
