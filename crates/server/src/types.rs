//! Column types: SQL's names for them, the engine's, the protocol's, and how a value is
//! stored into a column (MySQL's conversions on INSERT and UPDATE).

use opensrv_mysql::ColumnType as Wire;
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
    Ok(match ty {
        DataType::TinyInt(_)
        | DataType::SmallInt(_)
        | DataType::MediumInt(_)
        | DataType::Int(_)
        | DataType::Integer(_)
        | DataType::Int4(_)
        | DataType::TinyIntUnsigned(_)
        | DataType::SmallIntUnsigned(_)
        | DataType::MediumIntUnsigned(_)
        | DataType::Bool
        | DataType::Boolean => ColumnType::Int,
        // An unsigned INT needs 32 bits of magnitude: keep it in a BIGINT.
        DataType::IntUnsigned(_)
        | DataType::IntegerUnsigned(_)
        | DataType::Int4Unsigned(_)
        | DataType::BigInt(_)
        | DataType::Int8(_)
        | DataType::Int64
        | DataType::BigIntUnsigned(_)
        | DataType::Int8Unsigned(_) => ColumnType::BigInt,
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
        DataType::Text | DataType::TinyText => ColumnType::Varchar(65_535),
        DataType::Datetime(_) | DataType::Timestamp(..) | DataType::Date => ColumnType::DateTime,
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
        ColumnType::Int => "int".into(),
        ColumnType::BigInt => "bigint".into(),
        ColumnType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        ColumnType::Char(n) => format!("char({n})"),
        ColumnType::Varchar(n) => format!("varchar({n})"),
        ColumnType::DateTime => "datetime".into(),
        ColumnType::Double => "double".into(),
    }
}

/// The protocol type of an engine type.
pub fn wire_type(ty: ColumnType) -> Wire {
    match ty {
        ColumnType::Int => Wire::MYSQL_TYPE_LONG,
        ColumnType::BigInt => Wire::MYSQL_TYPE_LONGLONG,
        ColumnType::Decimal { .. } => Wire::MYSQL_TYPE_NEWDECIMAL,
        ColumnType::Char(_) => Wire::MYSQL_TYPE_STRING,
        ColumnType::Varchar(_) => Wire::MYSQL_TYPE_VAR_STRING,
        ColumnType::DateTime => Wire::MYSQL_TYPE_DATETIME,
        ColumnType::Double => Wire::MYSQL_TYPE_DOUBLE,
    }
}

/// The protocol type of a computed value (an expression's result has no column).
pub fn value_wire_type(v: &Value) -> Wire {
    match v {
        Value::Null | Value::Str(_) => Wire::MYSQL_TYPE_VAR_STRING,
        Value::Int(_) => Wire::MYSQL_TYPE_LONGLONG,
        Value::Decimal(_) => Wire::MYSQL_TYPE_NEWDECIMAL,
        Value::Double(_) => Wire::MYSQL_TYPE_DOUBLE,
        Value::DateTime(_) => Wire::MYSQL_TYPE_DATETIME,
    }
}

/// `value` as column `column` stores it: MySQL's implicit conversions (a numeric string into
/// a number column, a number into a string column, a literal into a DATETIME, rounding into
/// an INT). What cannot convert is error 1366.
pub fn store(column: &Column, value: Value) -> Result<Value, SqlError> {
    let bad = |v: &Value| {
        SqlError::new(
            1366,
            "HY000",
            format!(
                "Incorrect {} value: '{}' for column '{}'",
                type_name(column.ty),
                v.to_string().trim_matches('\''),
                column.name
            ),
        )
    };
    Ok(match (column.ty, value) {
        (_, Value::Null) => Value::Null,
        (ColumnType::Int | ColumnType::BigInt, Value::Str(s)) => match s.trim().parse::<i64>() {
            Ok(n) => Value::Int(n),
            Err(_) => match s.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Value::Int(x.round() as i64),
                _ => return Err(bad(&Value::Str(s))),
            },
        },
        (ColumnType::Int | ColumnType::BigInt, Value::Decimal(d)) => {
            let rounded = d.rescale(0).ok_or_else(|| bad(&Value::Decimal(d)))?;
            Value::Int(i64::try_from(rounded.units()).map_err(|_| bad(&Value::Decimal(d)))?)
        }
        (ColumnType::Int | ColumnType::BigInt, Value::Double(x))
            if x.is_finite() && x.abs() < 9.2e18 =>
        {
            Value::Int(x.round() as i64)
        }
        (ColumnType::Decimal { .. }, Value::Str(s)) => Value::Decimal(
            s.trim()
                .parse::<Decimal>()
                .map_err(|_| bad(&Value::Str(s.clone())))?,
        ),
        (ColumnType::Decimal { scale, .. }, Value::Double(x)) => {
            let units = (x * 10f64.powi(i32::from(scale))).round();
            if !units.is_finite() || units.abs() > 1e37 {
                return Err(bad(&Value::Double(x)));
            }
            Value::Decimal(
                Decimal::new(units as i128, scale).ok_or_else(|| bad(&Value::Double(x)))?,
            )
        }
        (ColumnType::Double, Value::Str(s)) => {
            Value::Double(s.trim().parse().map_err(|_| bad(&Value::Str(s.clone())))?)
        }
        (
            ColumnType::Char(_) | ColumnType::Varchar(_),
            v @ (Value::Int(_) | Value::Decimal(_) | Value::Double(_)),
        ) => Value::from(v.to_string()),
        (ColumnType::Char(_) | ColumnType::Varchar(_), Value::DateTime(t)) => {
            Value::from(t.to_string())
        }
        (ColumnType::DateTime, Value::Str(s)) => {
            Value::DateTime(parse_datetime(&s).ok_or_else(|| bad(&Value::Str(s.clone())))?)
        }
        (_, v) => v,
    })
}

/// A value as the text protocol sends it (no quotes).
pub fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Str(s) => Some(s.to_string()),
        Value::DateTime(t) => Some(t.to_string()),
        other => Some(other.to_string()),
    }
}
