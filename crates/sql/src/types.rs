//! Column types: SQL's names for them, the engine's, the protocol's, and how a value is
//! stored into a column (MySQL's conversions on INSERT and UPDATE).

use sqlparser::ast::{CharacterLength, DataType, ExactNumberInfo};
use waterline_planner::value::parse_datetime;
use waterline_txn::{Column, ColumnType, Decimal, Value};

use crate::error::SqlError;

/// The engine type of a SQL type.
pub fn column_type(ty: &DataType) -> Result<ColumnType, SqlError> {
    let chars = |len: &Option<CharacterLength>, default: u32| match len {
        Some(CharacterLength::IntegerLength { length, .. }) => {
            u32::try_from(*length).map_err(|_| SqlError::unsupported(ty))
        }
        Some(CharacterLength::Max) => Err(SqlError::unsupported(ty)),
        None => Ok(default),
    };
    let fsp = |digits: &Option<u64>| match digits {
        None => Ok(0),
        Some(d) if *d <= 6 => Ok(*d as u8),
        Some(d) => Err(SqlError::new(
            1426,
            "42000",
            format!("Too-big precision {d} specified for '{ty}'. Maximum is 6."),
        )),
    };
    Ok(match ty {
        DataType::TinyInt(_) | DataType::Bool | DataType::Boolean => ColumnType::TinyInt,
        DataType::SmallInt(_) => ColumnType::SmallInt,
        DataType::MediumInt(_) => ColumnType::MediumInt,
        DataType::Int(_) | DataType::Integer(_) | DataType::Int4(_) => ColumnType::Int,
        DataType::BigInt(_) | DataType::Int8(_) | DataType::Int64 => ColumnType::BigInt,
        DataType::TinyIntUnsigned(_) => ColumnType::Unsigned(1),
        DataType::SmallIntUnsigned(_) => ColumnType::Unsigned(2),
        DataType::MediumIntUnsigned(_) => ColumnType::Unsigned(3),
        DataType::IntUnsigned(_) | DataType::IntegerUnsigned(_) | DataType::Int4Unsigned(_) => {
            ColumnType::Unsigned(4)
        }
        DataType::BigIntUnsigned(_) | DataType::Int8Unsigned(_) => ColumnType::Unsigned(8),
        DataType::Decimal(info)
        | DataType::Numeric(info)
        | DataType::Dec(info)
        | DataType::DecimalUnsigned(info) => {
            let (precision, scale) = match info {
                ExactNumberInfo::None => (10, 0),
                ExactNumberInfo::Precision(p) => (*p, 0),
                ExactNumberInfo::PrecisionAndScale(p, s) => (
                    *p,
                    u64::try_from(*s).map_err(|_| SqlError::unsupported(ty))?,
                ),
            };
            if precision == 0 || precision > 38 || scale > precision || scale > 30 {
                return Err(SqlError::new(
                    1426,
                    "42000",
                    format!(
                        "Too-big precision or scale in '{ty}' (waterline keeps up to 38 digits)"
                    ),
                ));
            }
            ColumnType::Decimal {
                precision: precision as u8,
                scale: scale as u8,
            }
        }
        DataType::Char(len) | DataType::Character(len) => ColumnType::Char(chars(len, 1)?),
        DataType::Varchar(len) | DataType::CharacterVarying(len) | DataType::CharVarying(len) => {
            match len {
                None => return Err(SqlError::parse(format!("VARCHAR needs a length: '{ty}'"))),
                some => ColumnType::Varchar(chars(some, 0)?),
            }
        }
        DataType::Text => ColumnType::Varchar(65_535),
        DataType::TinyText => ColumnType::Varchar(255),
        // TIMESTAMP is kept as a DATETIME: not converted by the session's time zone (listed
        // in the known differences). TIME and YEAR have no type here: refused below.
        DataType::Datetime(digits) | DataType::Timestamp(digits, _) => {
            ColumnType::DateTime(fsp(digits)?)
        }
        DataType::Date => ColumnType::Date,
        DataType::Double(_)
        | DataType::DoubleUnsigned(_)
        | DataType::DoublePrecision
        | DataType::DoublePrecisionUnsigned
        | DataType::Float(_)
        | DataType::FloatUnsigned(_)
        | DataType::Real
        | DataType::RealUnsigned => ColumnType::Double,
        other => return Err(SqlError::unsupported(format!("column type {other}"))),
    })
}

/// The SQL name of an engine type (SHOW CREATE, DESCRIBE).
pub fn type_name(ty: ColumnType) -> String {
    match ty {
        ColumnType::TinyInt => "tinyint".into(),
        ColumnType::SmallInt => "smallint".into(),
        ColumnType::MediumInt => "mediumint".into(),
        ColumnType::Int => "int".into(),
        ColumnType::BigInt => "bigint".into(),
        ColumnType::Unsigned(bytes) => format!(
            "{} unsigned",
            ["tinyint", "smallint", "mediumint", "int", "bigint"][match bytes {
                1..=4 => usize::from(bytes) - 1,
                _ => 4,
            }]
        ),
        ColumnType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        ColumnType::Char(n) => format!("char({n})"),
        ColumnType::Varchar(n) => format!("varchar({n})"),
        ColumnType::DateTime(0) => "datetime".into(),
        ColumnType::DateTime(fsp) => format!("datetime({fsp})"),
        ColumnType::Double => "double".into(),
        ColumnType::Date => "date".into(),
    }
}

/// A result column's type as MySQL's protocol names it (its `enum_field_types`): what a
/// client is told a column holds. The server puts it on the wire as MySQL's type code
/// ([`FieldType::code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// `MYSQL_TYPE_TINY`: TINYINT.
    Tiny,
    /// `MYSQL_TYPE_SHORT`: SMALLINT.
    Short,
    /// `MYSQL_TYPE_INT24`: MEDIUMINT.
    Int24,
    /// `MYSQL_TYPE_LONG`: INT.
    Long,
    /// `MYSQL_TYPE_LONGLONG`: BIGINT, and integers computed.
    LongLong,
    /// `MYSQL_TYPE_NEWDECIMAL`: DECIMAL.
    NewDecimal,
    /// `MYSQL_TYPE_DOUBLE`: DOUBLE.
    Double,
    /// `MYSQL_TYPE_DATETIME`: DATETIME.
    DateTime,
    /// `MYSQL_TYPE_DATE`: DATE.
    Date,
    /// `MYSQL_TYPE_STRING`: CHAR.
    String,
    /// `MYSQL_TYPE_VAR_STRING`: VARCHAR, and text computed.
    VarString,
}

impl FieldType {
    /// MySQL's code for it (`enum_field_types` in `mysql_com.h`).
    pub fn code(self) -> u8 {
        match self {
            FieldType::Tiny => 1,
            FieldType::Short => 2,
            FieldType::Long => 3,
            FieldType::Double => 5,
            FieldType::LongLong => 8,
            FieldType::Int24 => 9,
            FieldType::DateTime => 12,
            FieldType::Date => 10,
            FieldType::NewDecimal => 246,
            FieldType::VarString => 253,
            FieldType::String => 254,
        }
    }
}

/// MySQL's column flag for an UNSIGNED number.
pub const UNSIGNED_FLAG: u16 = 32;

/// MySQL's "decimals" of a computed column: not fixed (a value shows the digits it has).
pub const NOT_FIXED_DEC: u8 = 31;

/// What a result set says of a column besides its name: the protocol type, the flags, and
/// the digits after the point (a DECIMAL's scale, a DATETIME's fractional digits;
/// [`NOT_FIXED_DEC`] for a computed value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnMeta {
    /// The protocol type.
    pub ty: FieldType,
    /// MySQL's column flags ([`UNSIGNED_FLAG`]).
    pub flags: u16,
    /// Digits after the point.
    pub decimals: u8,
}

impl ColumnMeta {
    /// A table column of type `ty`.
    pub fn of(ty: ColumnType) -> ColumnMeta {
        ColumnMeta {
            ty: field_type(ty),
            flags: if matches!(ty, ColumnType::Unsigned(_)) {
                UNSIGNED_FLAG
            } else {
                0
            },
            decimals: match ty {
                ColumnType::Decimal { scale, .. } => scale,
                ColumnType::DateTime(fsp) => fsp,
                _ => 0,
            },
        }
    }

    /// A computed value's column, of protocol type `ty`.
    pub fn computed(ty: FieldType) -> ColumnMeta {
        ColumnMeta {
            ty,
            flags: 0,
            decimals: NOT_FIXED_DEC,
        }
    }

    /// A text column (SHOW's).
    pub fn text() -> ColumnMeta {
        ColumnMeta {
            ty: FieldType::VarString,
            flags: 0,
            decimals: 0,
        }
    }
}

/// The protocol type of an engine type.
pub fn field_type(ty: ColumnType) -> FieldType {
    match ty {
        ColumnType::TinyInt | ColumnType::Unsigned(1) => FieldType::Tiny,
        ColumnType::SmallInt | ColumnType::Unsigned(2) => FieldType::Short,
        ColumnType::MediumInt | ColumnType::Unsigned(3) => FieldType::Int24,
        ColumnType::Int | ColumnType::Unsigned(4) => FieldType::Long,
        ColumnType::BigInt | ColumnType::Unsigned(_) => FieldType::LongLong,
        ColumnType::Decimal { .. } => FieldType::NewDecimal,
        ColumnType::Char(_) => FieldType::String,
        ColumnType::Varchar(_) => FieldType::VarString,
        ColumnType::DateTime(_) => FieldType::DateTime,
        ColumnType::Double => FieldType::Double,
        ColumnType::Date => FieldType::Date,
    }
}

/// The protocol type of a computed value (an expression's result has no column).
pub fn value_field_type(v: &Value) -> FieldType {
    match v {
        Value::Null | Value::Str(_) => FieldType::VarString,
        Value::Int(_) => FieldType::LongLong,
        Value::Decimal(_) => FieldType::NewDecimal,
        Value::Double(_) => FieldType::Double,
        Value::DateTime(_) => FieldType::DateTime,
        Value::Date(_) => FieldType::Date,
    }
}

/// A warning a statement leaves for SHOW WARNINGS: level, code, message.
pub type Warning = (String, u16, String);

/// `value` as column `column` stores it, for row `row` (from 1) of its statement: MySQL's
/// implicit conversions (a numeric string into a number column, a number into a string
/// column, a literal into a DATETIME, rounding into an integer or a DECIMAL). A value out of
/// the column's range, or a string too long for it, is an error under a strict `sql_mode`
/// (1264, 1406) and otherwise is clamped or cut, with a warning into `warnings`, as MySQL
/// does. What cannot convert is error 1366.
pub fn store(
    column: &Column,
    value: Value,
    strict: bool,
    row: usize,
    warnings: &mut Vec<Warning>,
) -> Result<Value, SqlError> {
    let name = &column.name;
    let bad = |v: &Value| {
        SqlError::new(
            1366,
            "HY000",
            format!(
                "Incorrect {} value: '{}' for column '{name}' at row {row}",
                type_name(column.ty),
                v.to_string().trim_matches('\''),
            ),
        )
    };
    let mut out_of_range = |clamped: Value| -> Result<Value, SqlError> {
        let message = format!("Out of range value for column '{name}' at row {row}");
        if strict {
            return Err(SqlError::new(1264, "22003", message));
        }
        warnings.push(("Warning".into(), 1264, message));
        Ok(clamped)
    };
    let stored = match (column.ty, value) {
        (_, Value::Null) => return Ok(Value::Null),
        // The common case first: an integer that fits its integer column.
        (ty, Value::Int(n))
            if ty
                .int_range()
                .is_some_and(|(low, high)| (low..=high).contains(&n)) =>
        {
            Value::Int(n)
        }
        (ty, value) if ty.is_integer() => {
            let (low, high) = ty.int_range().unwrap_or((i64::MIN, i64::MAX));
            // The value rounded to an integer (half away from zero, as MySQL rounds a
            // DECIMAL or a numeric string; a DOUBLE rounds half to even), as an i128 so
            // that what is out of range can say by how much.
            let wide: i128 = match value {
                Value::Int(n) => i128::from(n),
                Value::Decimal(d) => d.rescale(0).ok_or_else(|| bad(&Value::Decimal(d)))?.units(),
                Value::Double(x) if x.is_finite() => x.round_ties_even().clamp(-1e30, 1e30) as i128,
                Value::Str(s) => match s.trim().parse::<i128>() {
                    Ok(n) => n,
                    Err(_) => match s.trim().parse::<f64>() {
                        Ok(x) if x.is_finite() => x.round().clamp(-1e30, 1e30) as i128,
                        _ => return Err(bad(&Value::Str(s))),
                    },
                },
                other => return Err(bad(&other)),
            };
            if ty == ColumnType::Unsigned(8)
                && wide > i128::from(i64::MAX)
                && wide <= i128::from(u64::MAX)
            {
                // In MySQL's range, not in waterline's (a value is an i64): refused, not
                // clamped.
                return Err(SqlError::unsupported(format!(
                    "BIGINT UNSIGNED values above {} (column '{name}')",
                    i64::MAX
                )));
            }
            if wide < i128::from(low) {
                return out_of_range(Value::Int(low));
            }
            if wide > i128::from(high) {
                return out_of_range(Value::Int(high));
            }
            Value::Int(wide as i64)
        }
        (ColumnType::Decimal { precision, scale }, value) => {
            let decimal = match value {
                Value::Int(n) => Decimal::new(i128::from(n), 0),
                Value::Decimal(d) => Some(d),
                Value::Str(s) => Some(
                    s.trim()
                        .parse::<Decimal>()
                        .map_err(|_| bad(&Value::Str(s.clone())))?,
                ),
                Value::Double(x) => {
                    let units = (x * 10f64.powi(i32::from(scale))).round();
                    if !units.is_finite() || units.abs() > 1e37 {
                        None
                    } else {
                        Decimal::new(units as i128, scale)
                    }
                }
                other => return Err(bad(&other)),
            };
            match decimal.and_then(|d| d.rescale(scale)) {
                Some(d) if d.fits_digits(precision) => Value::Decimal(d),
                rescaled => {
                    // The largest value of the column's type, with the value's sign.
                    let max = 10i128.pow(u32::from(precision)) - 1;
                    let negative = rescaled
                        .map_or_else(|| decimal.is_some_and(|d| d.units() < 0), |d| d.units() < 0);
                    let units = if negative { -max } else { max };
                    return out_of_range(Value::Decimal(
                        Decimal::new(units, scale).ok_or_else(|| bad(&Value::Int(0)))?,
                    ));
                }
            }
        }
        (ColumnType::Double, Value::Str(s)) => {
            Value::Double(s.trim().parse().map_err(|_| bad(&Value::Str(s.clone())))?)
        }
        (ColumnType::Double, v @ (Value::Int(_) | Value::Decimal(_) | Value::Double(_))) => {
            Value::Double(v.as_f64().unwrap_or_default())
        }
        (ColumnType::Char(n) | ColumnType::Varchar(n), value) => {
            let text = match value {
                Value::Str(s) => s,
                Value::DateTime(t) => t.to_string().into(),
                Value::Date(t) => t.day().into(),
                other => other.to_string().into(),
            };
            if text.len() > n as usize && text.chars().count() > n as usize {
                let message = format!("Data too long for column '{name}' at row {row}");
                if strict {
                    return Err(SqlError::new(1406, "22001", message));
                }
                warnings.push((
                    "Warning".into(),
                    1265,
                    format!("Data truncated for column '{name}' at row {row}"),
                ));
                Value::from(text.chars().take(n as usize).collect::<String>())
            } else {
                Value::Str(text)
            }
        }
        (ColumnType::DateTime(fsp), Value::Str(s)) => match parse_datetime(&s) {
            Some(t) => Value::DateTime(t.round(fsp)),
            None => {
                return Err(SqlError::new(
                    1292,
                    "22007",
                    format!("Incorrect datetime value: '{s}' for column '{name}' at row {row}"),
                ));
            }
        },
        (ColumnType::DateTime(fsp), Value::DateTime(t) | Value::Date(t)) => {
            Value::DateTime(t.round(fsp))
        }
        // A DATE keeps the day: a time of day is cut off, with MySQL's note.
        (ColumnType::Date, value @ (Value::Str(_) | Value::DateTime(_) | Value::Date(_))) => {
            let t = match &value {
                Value::Str(s) => parse_datetime(s).ok_or_else(|| {
                    SqlError::new(
                        1292,
                        "22007",
                        format!("Incorrect date value: '{s}' for column '{name}' at row {row}"),
                    )
                })?,
                Value::DateTime(t) | Value::Date(t) => *t,
                _ => unreachable!("matched above"),
            };
            if !t.is_date() {
                warnings.push((
                    "Note".into(),
                    1265,
                    format!("Data truncated for column '{name}' at row {row}"),
                ));
            }
            Value::Date(t.date())
        }
        (_, v) => v,
    };
    Ok(stored)
}

/// A value of a column with `decimals` digits after the point, as the text protocol sends
/// it: a DATETIME(fsp) value shows exactly fsp digits of a second, as MySQL shows it.
pub fn text_in(decimals: u8, v: &Value) -> Option<String> {
    match v {
        Value::DateTime(t) if decimals <= 6 => {
            let mut out = t.to_string();
            // Display gives 6 digits when there is a fraction, none when there is not.
            if let Some(dot) = out.find('.') {
                out.truncate(dot);
            }
            if decimals > 0 {
                let micros = t.0.rem_euclid(1_000_000);
                let digits = format!("{micros:06}");
                out.push('.');
                out.push_str(&digits[..usize::from(decimals)]);
            }
            Some(out)
        }
        other => text(other),
    }
}

/// A value as the text protocol sends it (no quotes).
pub fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Str(s) => Some(s.to_string()),
        Value::DateTime(t) => Some(t.to_string()),
        Value::Date(t) => Some(t.day()),
        other => Some(other.to_string()),
    }
}
