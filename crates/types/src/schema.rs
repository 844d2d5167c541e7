//! Table schemas: column types, the primary key (or a hidden row id), and secondary indexes.
//! A row is checked (and coerced, as MySQL stores into a column) before it is written.

use crate::error::{Refusal, SchemaError};
use crate::key::{Key, decode, int_width};
use crate::value::{Decimal, Row, Value};

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// 8-bit signed integer (TINYINT, and BOOL).
    TinyInt,
    /// 16-bit signed integer (SMALLINT).
    SmallInt,
    /// 24-bit signed integer (MEDIUMINT).
    MediumInt,
    /// 32-bit signed integer.
    Int,
    /// 64-bit signed integer.
    BigInt,
    /// An UNSIGNED integer this many bytes wide (1, 2, 3, 4 or 8). A value is an `i64`, so
    /// BIGINT UNSIGNED holds 0 to 2^63 - 1 here (MySQL's goes to 2^64 - 1).
    Unsigned(u8),
    /// DECIMAL(precision, scale).
    Decimal {
        /// Total digits (at most 38 here, as `i128` holds them; MySQL allows 65).
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// CHAR(n): at most `n` characters.
    Char(u32),
    /// VARCHAR(n): at most `n` characters.
    Varchar(u32),
    /// DATETIME(fsp): `fsp` digits of a second kept (0 to 6), the rest rounded off.
    DateTime(u8),
    /// DATE: a day ([`Value::Date`]; a DATETIME's time is cut off).
    Date,
    /// DOUBLE.
    Double,
}

impl ColumnType {
    /// The values an integer type holds, lowest and highest; `None` for the other types.
    pub fn int_range(self) -> Option<(i64, i64)> {
        Some(match self {
            ColumnType::TinyInt => (-128, 127),
            ColumnType::SmallInt => (-32_768, 32_767),
            ColumnType::MediumInt => (-8_388_608, 8_388_607),
            ColumnType::Int => (i64::from(i32::MIN), i64::from(i32::MAX)),
            ColumnType::BigInt => (i64::MIN, i64::MAX),
            ColumnType::Unsigned(bytes) if bytes >= 8 => (0, i64::MAX),
            ColumnType::Unsigned(bytes) => (0, (1i64 << (8 * u32::from(bytes))) - 1),
            _ => return None,
        })
    }

    /// Whether it is one of the integer types.
    pub fn is_integer(self) -> bool {
        self.int_range().is_some()
    }
}

/// A column: name, type, and whether it may hold NULL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The column's name.
    pub name: String,
    /// Its type.
    pub ty: ColumnType,
    /// Whether NULL is allowed.
    pub nullable: bool,
}

impl Column {
    /// A NOT NULL column.
    pub fn new(name: impl Into<String>, ty: ColumnType) -> Column {
        Column {
            name: name.into(),
            ty,
            nullable: false,
        }
    }

    /// A column that may hold NULL.
    pub fn nullable(name: impl Into<String>, ty: ColumnType) -> Column {
        Column {
            nullable: true,
            ..Column::new(name, ty)
        }
    }
}

/// A secondary index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexDef {
    /// The index's name.
    pub name: String,
    /// Positions of its columns in the row.
    pub columns: Vec<usize>,
    /// Whether two live rows may not share a value (rows with a NULL in it are exempt, as
    /// in MySQL).
    pub unique: bool,
}

/// A table's definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSchema {
    /// The table's name.
    pub name: String,
    /// Its columns, in row order.
    pub columns: Vec<Column>,
    /// Positions of the primary key's columns; `None` gives the table a hidden row id, as
    /// InnoDB's `DB_ROW_ID`.
    pub primary_key: Option<Vec<usize>>,
    /// Secondary indexes.
    pub indexes: Vec<IndexDef>,
}

impl TableSchema {
    /// A table with these columns and no keys yet.
    pub fn new(name: impl Into<String>, columns: Vec<Column>) -> TableSchema {
        TableSchema {
            name: name.into(),
            columns,
            primary_key: None,
            indexes: Vec::new(),
        }
    }

    /// Sets the primary key to the named columns.
    pub fn primary_key(mut self, columns: &[&str]) -> Result<TableSchema, SchemaError> {
        self.primary_key = Some(self.positions(columns)?);
        Ok(self)
    }

    /// Adds a secondary index over the named columns.
    pub fn index(
        mut self,
        name: &str,
        columns: &[&str],
        unique: bool,
    ) -> Result<Self, SchemaError> {
        let columns = self.positions(columns)?;
        self.indexes.push(IndexDef {
            name: name.to_owned(),
            columns,
            unique,
        });
        Ok(self)
    }

    /// The position of the named column.
    pub fn column(&self, name: &str) -> Result<usize, SchemaError> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| self.error(name, Refusal::NoSuchColumn, "no such column"))
    }

    fn positions(&self, names: &[&str]) -> Result<Vec<usize>, SchemaError> {
        names.iter().map(|name| self.column(name)).collect()
    }

    /// Checks the definition itself: names, key columns, types.
    pub fn validate(&self) -> Result<(), SchemaError> {
        if self.columns.is_empty() {
            return Err(self.error(
                "*",
                Refusal::Definition,
                "a table needs at least one column",
            ));
        }
        for (i, column) in self.columns.iter().enumerate() {
            if self.columns[..i]
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(&column.name))
            {
                return Err(self.error(
                    &column.name,
                    Refusal::DuplicateColumn,
                    "duplicate column name",
                ));
            }
            if let ColumnType::Decimal { precision, scale } = column.ty
                && (precision == 0 || precision > 38 || scale > precision)
            {
                return Err(self.error(
                    &column.name,
                    Refusal::Definition,
                    "DECIMAL(p, s) needs 0 < p <= 38, s <= p",
                ));
            }
        }
        let keys = self
            .primary_key
            .iter()
            .chain(self.indexes.iter().map(|i| &i.columns));
        for key in keys {
            if key.is_empty() || key.iter().any(|&c| c >= self.columns.len()) {
                return Err(self.error("*", Refusal::NoSuchColumn, "a key needs existing columns"));
            }
        }
        if let Some(pk) = &self.primary_key
            && let Some(&c) = pk.iter().find(|&&c| self.columns[c].nullable)
        {
            return Err(self.error(
                &self.columns[c].name,
                Refusal::NullablePrimaryKey,
                "a primary key column cannot be NULL",
            ));
        }
        for (i, index) in self.indexes.iter().enumerate() {
            if index.name.eq_ignore_ascii_case("PRIMARY")
                || self.indexes[..i]
                    .iter()
                    .any(|j| j.name.eq_ignore_ascii_case(&index.name))
            {
                return Err(self.error(
                    &index.name,
                    Refusal::DuplicateKeyName,
                    &format!("duplicate index name {}", index.name),
                ));
            }
        }
        Ok(())
    }

    /// Checks `row` against the columns and returns it as stored: integers widened into
    /// DECIMAL and DOUBLE columns, decimals rounded to the column's scale.
    pub fn check_row(&self, mut row: Row) -> Result<Row, SchemaError> {
        if row.len() != self.columns.len() {
            return Err(self.error(
                "*",
                Refusal::Definition,
                &format!("expected {} values, got {}", self.columns.len(), row.len()),
            ));
        }
        for (value, column) in row.iter_mut().zip(&self.columns) {
            self.store(column, value)?;
        }
        Ok(row)
    }

    /// [`TableSchema::check_row`] for `row`, made from `old`, a stored row of this table
    /// (an update): a value still stored as in `old` is not checked again. A STOCK update
    /// changes four of seventeen values.
    pub fn check_update(&self, old: &[Value], mut row: Row) -> Result<Row, SchemaError> {
        if row.len() != self.columns.len() || old.len() != row.len() {
            return self.check_row(row);
        }
        self.check_changed(old, &mut row)?;
        Ok(row)
    }

    /// [`TableSchema::check_update`] in place, for `row`, a copy of the stored row `old`
    /// with some values changed (so as long as the table's columns).
    pub fn check_changed(&self, old: &[Value], row: &mut [Value]) -> Result<(), SchemaError> {
        for ((value, column), before) in row.iter_mut().zip(&self.columns).zip(old) {
            if !value.is_stored_as(before) {
                self.store(column, value)?;
            }
        }
        Ok(())
    }

    /// Replaces a row's `value` by its stored form in `column` (see [`TableSchema::coerce`]).
    fn store(&self, column: &Column, value: &mut Value) -> Result<(), SchemaError> {
        let taken = std::mem::replace(value, Value::Null);
        *value = self.coerce(column, column.nullable, taken)?;
        Ok(())
    }

    /// `value` as stored in `column`; NULL is accepted if `nullable` (key bounds may be NULL
    /// whatever the column says).
    fn coerce(&self, column: &Column, nullable: bool, value: Value) -> Result<Value, SchemaError> {
        let mismatch = |kind: Refusal, what: &str| self.error(&column.name, kind, what);
        match (column.ty, value) {
            (_, Value::Null) if nullable => Ok(Value::Null),
            (_, Value::Null) => Err(mismatch(Refusal::Null, "cannot be NULL")),
            (ty, Value::Int(n)) if ty.is_integer() => match ty.int_range() {
                Some((low, high)) if n < low || n > high => Err(mismatch(
                    Refusal::OutOfRange,
                    &format!("{n} is out of range for {ty:?}"),
                )),
                _ => Ok(Value::Int(n)),
            },
            (ColumnType::Decimal { precision, scale }, value) => {
                let decimal = match value {
                    Value::Int(n) => Decimal::new(n.into(), 0),
                    Value::Decimal(d) => Some(d),
                    other => {
                        return Err(mismatch(
                            Refusal::WrongType,
                            &format!("{other} is not a DECIMAL"),
                        ));
                    }
                };
                let stored = decimal.and_then(|d| d.rescale(scale));
                match stored {
                    Some(d) if d.fits_digits(precision) => Ok(Value::Decimal(d)),
                    _ => Err(mismatch(
                        Refusal::OutOfRange,
                        &format!("value out of range for DECIMAL({precision}, {scale})"),
                    )),
                }
            }
            (ColumnType::Char(n) | ColumnType::Varchar(n), Value::Str(s)) => {
                if s.len() > n as usize && s.chars().count() > n as usize {
                    Err(mismatch(
                        Refusal::TooLong,
                        &format!("string longer than {n} characters"),
                    ))
                } else {
                    Ok(Value::Str(s))
                }
            }
            (ColumnType::DateTime(fsp), Value::DateTime(t)) => Ok(Value::DateTime(t.round(fsp))),
            (ColumnType::Date, Value::DateTime(t) | Value::Date(t)) => Ok(Value::Date(t.date())),
            (
                ColumnType::Double,
                value @ (Value::Double(_) | Value::Int(_) | Value::Decimal(_)),
            ) => Ok(Value::Double(value.as_f64().unwrap_or_default())),
            (ty, value) => Err(mismatch(
                Refusal::WrongType,
                &format!("{value} does not fit {ty:?}"),
            )),
        }
    }

    /// Coerces a (possibly partial, for range bounds) key over the given columns.
    pub fn check_key(&self, columns: &[usize], key: Key) -> Result<Key, SchemaError> {
        // Equal values have equal bytes (a rescaled DECIMAL too): only a value that changed
        // kind (an INT into a DECIMAL column) makes a new key, and the common key that
        // needs none is not encoded again.
        let mut stored: Option<Key> = None;
        for (i, span) in key.spans().enumerate() {
            let Some(&c) = columns.get(i) else {
                return Err(self.error(
                    "*",
                    Refusal::Definition,
                    "key has more values than the index has columns",
                ));
            };
            // The common value needs no decoding: an INT fits a BIGINT column, and an INT
            // column if it has at most three significant bytes (below 2^24 in magnitude).
            let fits = match (self.columns[c].ty, int_width(span)) {
                (ColumnType::BigInt, Some(_)) => true,
                (ColumnType::Int, Some(width)) => width <= 3,
                _ => false,
            };
            if fits && stored.is_none() {
                continue;
            }
            let value = decode(span);
            let coerced = self.coerce(&self.columns[c], true, value.clone())?;
            if stored.is_none() && coerced != value {
                stored = Some(key.iter().take(i).collect());
            }
            if let Some(stored) = &mut stored {
                stored.push(&coerced);
            }
        }
        Ok(stored.unwrap_or(key))
    }

    fn error(&self, column: &str, kind: Refusal, reason: &str) -> SchemaError {
        SchemaError {
            table: self.name.clone(),
            column: column.to_owned(),
            kind,
            reason: reason.to_owned(),
        }
    }
}

/// The values of `columns` in `row`.
pub fn project(row: &[Value], columns: &[usize]) -> Key {
    let mut key = Key::default();
    for &c in columns {
        key.push(&row[c]);
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account() -> TableSchema {
        TableSchema::new(
            "account",
            vec![
                Column::new("id", ColumnType::Int),
                Column::new(
                    "balance",
                    ColumnType::Decimal {
                        precision: 6,
                        scale: 2,
                    },
                ),
                Column::nullable("name", ColumnType::Varchar(4)),
            ],
        )
        .primary_key(&["id"])
        .unwrap()
    }

    #[test]
    fn rows_are_coerced_like_mysql_stores_them() {
        let schema = account();
        schema.validate().unwrap();
        let row = schema
            .check_row(vec![Value::Int(1), Value::Int(5), Value::Null])
            .unwrap();
        assert_eq!(row[1], Value::Decimal("5.00".parse().unwrap()));
        let rounded = schema
            .check_row(vec![
                1.into(),
                Value::Decimal("1.005".parse().unwrap()),
                "ab".into(),
            ])
            .unwrap();
        assert_eq!(rounded[1].to_string(), "1.01");
    }

    #[test]
    fn an_update_checks_the_values_it_changes() {
        let schema = account();
        let old = schema
            .check_row(vec![1.into(), Value::Int(5), "ab".into()])
            .unwrap();
        // A changed value is coerced and checked as an inserted one is.
        let mut new = old.clone();
        new[1] = Value::Decimal("1.005".parse().unwrap());
        let new = schema.check_update(&old, new).unwrap();
        assert_eq!(new[1].to_string(), "1.01");
        // An equal value at another scale is a change: it is stored at the column's scale.
        let mut new = old.clone();
        new[1] = Value::Decimal("5".parse().unwrap());
        assert_eq!(
            schema.check_update(&old, new).unwrap()[1].to_string(),
            "5.00"
        );
        for (column, bad) in [
            (1, Value::Int(10_000)),
            (2, "toolong".into()),
            (0, Value::Null),
        ] {
            let mut new = old.clone();
            new[column] = bad;
            assert!(schema.check_update(&old, new).is_err(), "column {column}");
        }
        assert!(schema.check_update(&old, vec![1.into()]).is_err());
    }

    #[test]
    fn bad_rows_get_a_clear_error() {
        let schema = account();
        let errors = [
            vec![Value::Int(1), Value::Int(1)],
            vec![Value::Null, Value::Int(1), Value::Null],
            vec![Value::Int(1 << 40), Value::Int(1), Value::Null],
            vec![Value::Int(1), Value::Int(10_000), Value::Null],
            vec![Value::Int(1), Value::Int(1), "toolong".into()],
            vec![Value::Int(1), "x".into(), Value::Null],
        ];
        for row in errors {
            let error = schema.check_row(row.clone()).unwrap_err();
            assert!(matches!(error, SchemaError { .. }), "{row:?}: {error}");
        }
    }

    #[test]
    fn keys_are_checked_with_or_without_decoding() {
        let schema = TableSchema::new(
            "t",
            vec![
                Column::new("small", ColumnType::Int),
                Column::new("big", ColumnType::BigInt),
                Column::new(
                    "money",
                    ColumnType::Decimal {
                        precision: 6,
                        scale: 2,
                    },
                ),
                Column::new("small2", ColumnType::Int),
            ],
        );
        let check = |values: &[Value]| {
            let mut key = Key::default();
            values.iter().for_each(|v| key.push(v));
            schema.check_key(&[0, 1, 2, 3], key)
        };
        // INTs that fit pass as they are, however many bytes they take.
        for (small, big) in [
            (0, 0),
            (-1, -1),
            (16_777_215, i64::MAX),
            (-16_777_216, i64::MIN),
        ] {
            let key = check(&[small.into(), big.into()]).unwrap();
            assert_eq!(key.values(), vec![small.into(), big.into()]);
        }
        // Four significant bytes take the decoding path: in range, or a clear error.
        for fits in [i64::from(i32::MAX), i64::from(i32::MIN), 1 << 24] {
            assert_eq!(check(&[fits.into()]).unwrap().values(), vec![fits.into()]);
        }
        for bad in [1i64 << 31, -(1 << 31) - 1, 1 << 40] {
            assert!(matches!(check(&[bad.into()]), Err(SchemaError { .. })));
        }
        // An INT for a DECIMAL column becomes a decimal key; the INT after it is carried over.
        let key = check(&[1.into(), 2.into(), 3.into(), 4.into()]).unwrap();
        assert_eq!(
            key.values(),
            vec![
                1.into(),
                2.into(),
                Value::Decimal("3".parse().unwrap()),
                4.into()
            ]
        );
        // Not an INT at all, and too many values.
        assert!(check(&["x".into()]).is_err());
        let five = [1.into(), 2.into(), 3.into(), 4.into(), 5.into()];
        assert!(check(&five).is_err());
    }

    #[test]
    fn bad_definitions_are_refused() {
        let mut schema = account();
        schema.columns.push(Column::new("ID", ColumnType::Int));
        assert!(schema.validate().is_err());
        assert!(account().primary_key(&["nope"]).is_err());
        let nullable_pk = TableSchema::new("t", vec![Column::nullable("a", ColumnType::Int)])
            .primary_key(&["a"])
            .unwrap();
        assert!(nullable_pk.validate().is_err());
    }
}
