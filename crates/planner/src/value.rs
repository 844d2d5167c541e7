//! SQL semantics over the engine's [`Value`]: comparison with NULL as "unknown", arithmetic,
//! truth, and how a constant becomes a key bound for a column of a given type.
//!
//! The engine's `Ord` on `Value` is a *storage* order (one total order, values of different
//! types ranked by type). SQL compares an INT with a DECIMAL by number, and NULL with anything
//! as unknown; that is what this module does. Strings compare byte-wise (a binary collation:
//! the same order the engine's indexes keep).

use std::cmp::Ordering;

use waterline_types::{ColumnType, DateTime, Decimal, Value};

use crate::PlanError;

/// SQL comparison: `None` if either side is NULL (the result is unknown).
pub fn sql_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        // A DATE compares with a DATETIME (or a string of one) as its midnight.
        (Value::DateTime(x) | Value::Date(x), Value::DateTime(y) | Value::Date(y)) => {
            Some(x.cmp(y))
        }
        (Value::DateTime(x) | Value::Date(x), Value::Str(s)) => {
            parse_datetime(s).map(|y| x.cmp(&y))
        }
        (Value::Str(s), Value::DateTime(y) | Value::Date(y)) => parse_datetime(s).map(|x| x.cmp(y)),
        _ => match (exact(a), exact(b)) {
            (Some(x), Some(y)) => Some(x.cmp(&y)),
            _ => number(a).partial_cmp(&number(b)),
        },
    }
}

/// An exact number as a decimal (INT and DECIMAL), for comparing the two without rounding.
fn exact(v: &Value) -> Option<Decimal> {
    match v {
        Value::Int(n) => Decimal::new(i128::from(*n), 0),
        Value::Decimal(d) => Some(*d),
        _ => None,
    }
}

/// The value as a double, as MySQL converts a string in a numeric context: its longest
/// numeric prefix, or 0.
pub fn number(v: &Value) -> f64 {
    match v {
        Value::Str(s) => {
            let s = s.trim_start();
            let end = s
                .char_indices()
                .take_while(|&(i, c)| c.is_ascii_digit() || c == '.' || (i == 0 && c == '-'))
                .count();
            (0..=end)
                .rev()
                .find_map(|n| s[..n].parse::<f64>().ok())
                .unwrap_or(0.0)
        }
        Value::DateTime(t) => t.0 as f64,
        // YYYYMMDD, as MySQL reads a DATE as a number.
        Value::Date(t) => {
            let (y, m, d, _) = t.civil();
            (y * 10_000 + i64::from(m) * 100 + i64::from(d)) as f64
        }
        other => other.as_f64().unwrap_or(0.0),
    }
}

/// SQL truth: `None` for NULL, otherwise whether the number is not zero.
pub fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Null => None,
        Value::Int(n) => Some(*n != 0),
        Value::Decimal(d) => Some(d.units() != 0),
        other => Some(number(other) != 0.0),
    }
}

/// SQL's boolean result: 1, 0, or NULL.
pub fn boolean(b: Option<bool>) -> Value {
    match b {
        Some(b) => Value::Int(i64::from(b)),
        None => Value::Null,
    }
}

/// An arithmetic operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`: a DECIMAL result with 4 more digits (MySQL's `div_precision_increment`).
    Div,
    /// `DIV`: integer division.
    IntDiv,
    /// `%` / `MOD`.
    Mod,
}

impl ArithOp {
    /// The operator as SQL writes it.
    pub fn symbol(self) -> &'static str {
        match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
            ArithOp::IntDiv => "DIV",
            ArithOp::Mod => "%",
        }
    }
}

/// `a op b` with MySQL's types: INT op INT stays INT (checked), DECIMAL if either is one,
/// DOUBLE if either is one or a string; NULL if either is NULL or on division by zero.
pub fn arith(op: ArithOp, a: &Value, b: &Value) -> Result<Value, PlanError> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    let overflow = || PlanError::OutOfRange(format!("{a} {} {b}", op.symbol()));
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        let r = match op {
            ArithOp::Add => x.checked_add(*y),
            ArithOp::Sub => x.checked_sub(*y),
            ArithOp::Mul => x.checked_mul(*y),
            ArithOp::IntDiv | ArithOp::Mod if *y == 0 => return Ok(Value::Null),
            ArithOp::IntDiv => x.checked_div(*y),
            ArithOp::Mod => x.checked_rem(*y),
            ArithOp::Div => None,
        };
        if op != ArithOp::Div {
            return r.map(Value::Int).ok_or_else(overflow);
        }
    }
    if let (Some(x), Some(y)) = (exact(a), exact(b)) {
        return decimal_arith(op, x, y).ok_or_else(overflow);
    }
    let (x, y) = (number(a), number(b));
    let r = match op {
        ArithOp::Add => x + y,
        ArithOp::Sub => x - y,
        ArithOp::Mul => x * y,
        ArithOp::Div | ArithOp::IntDiv | ArithOp::Mod if y == 0.0 => return Ok(Value::Null),
        ArithOp::Div => x / y,
        ArithOp::IntDiv => return Ok(Value::Int((x / y).trunc() as i64)),
        ArithOp::Mod => x % y,
    };
    if r.is_finite() {
        Ok(Value::Double(r))
    } else {
        Err(overflow())
    }
}

fn decimal_arith(op: ArithOp, x: Decimal, y: Decimal) -> Option<Value> {
    let scale = x.scale().max(y.scale());
    let (xu, yu) = (x.rescale(scale)?.units(), y.rescale(scale)?.units());
    let d = match op {
        ArithOp::Add => x.checked_add(y)?,
        ArithOp::Sub => x.checked_sub(y)?,
        ArithOp::Mul => Decimal::new(x.units().checked_mul(y.units())?, x.scale() + y.scale())?,
        _ if yu == 0 => return Some(Value::Null),
        ArithOp::Div => {
            let out = x.scale() + 4;
            // x / y at scale `out`, rounded half away from zero.
            let num = xu.checked_mul(10i128.checked_pow(u32::from(out) + 1)?)?;
            let q = num / yu;
            let rounded = (q + q.signum() * 5) / 10;
            Decimal::new(rounded, out)?
        }
        ArithOp::IntDiv => return Some(Value::Int(i64::try_from(xu / yu).ok()?)),
        ArithOp::Mod => Decimal::new(xu % yu, scale)?,
    };
    Some(Value::Decimal(d))
}

/// Parses `YYYY-MM-DD` or `YYYY-MM-DD HH:MM:SS` (MySQL's literal forms of a DATETIME).
pub fn parse_datetime(s: &str) -> Option<DateTime> {
    let s = s.trim();
    // MySQL takes 'T' between the date and the time as it takes a space (ISO 8601).
    let (date, time) = s.split_once([' ', 'T']).unwrap_or((s, "00:00:00"));
    let d: Vec<&str> = date.split('-').collect();
    let (time, fraction) = time.trim().split_once('.').unwrap_or((time.trim(), ""));
    let t: Vec<&str> = time.split(':').collect();
    if d.len() != 3 || t.len() != 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = |x: &str| x.parse::<u32>().ok();
    let whole = DateTime::from_ymd_hms(
        d[0].parse().ok()?,
        n(d[1])?,
        n(d[2])?,
        n(t[0])?,
        n(t[1])?,
        n(t[2])?,
    )?;
    // Up to 6 digits of a second are kept; a seventh rounds the sixth, as MySQL does.
    let mut micros = 0i64;
    for (i, digit) in fraction.bytes().take(7).enumerate() {
        let digit = i64::from(digit - b'0');
        match i {
            0..=5 => micros = micros * 10 + digit,
            _ => micros += i64::from(digit >= 5),
        }
    }
    let shown = fraction.len().min(6) as u32;
    micros *= 10i64.pow(6 - shown);
    Some(DateTime(whole.0 + micros))
}

/// A constant as a key bound for a column of type `ty` (MySQL's `save_in_field` in
/// `get_mm_leaf`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyBound {
    /// The value stored in the column compares exactly as the constant.
    Exact(Value),
    /// The constant falls strictly between two column values (2.5 for an INT column):
    /// `col = c` is impossible, `col < c` is `col <= floor`, `col > c` is `col >= ceil`.
    Between {
        /// The largest column value below the constant.
        floor: Value,
        /// The smallest column value above it.
        ceil: Value,
    },
    /// The constant is NULL: no comparison with it is true.
    Null,
}

/// How `value` bounds a column of type `ty`; `None` if the index cannot be used (a number
/// against a string column, which MySQL compares as doubles, or a string that is no number).
pub fn key_bound(ty: ColumnType, value: &Value) -> Option<KeyBound> {
    use ColumnType as T;
    if value.is_null() {
        return Some(KeyBound::Null);
    }
    match (ty, value) {
        // A constant outside the column's range bounds nothing an index can seek to: the
        // rows are compared one by one.
        (t, Value::Int(n)) if t.is_integer() => {
            let (low, high) = t.int_range()?;
            (low..=high)
                .contains(n)
                .then(|| KeyBound::Exact(Value::Int(*n)))
        }
        (t, Value::Decimal(_) | Value::Double(_) | Value::Str(_)) if t.is_integer() => {
            let x = match value {
                Value::Str(s) => s.trim().parse::<f64>().ok()?,
                v => v.as_f64()?,
            };
            if !x.is_finite() || x.abs() > 9.0e18 {
                return None;
            }
            let (floor, ceil) = (x.floor() as i64, x.ceil() as i64);
            let (low, high) = ty.int_range()?;
            if floor < low || ceil > high {
                return None;
            }
            let integral =
                exact(value).is_none_or(|d| d.units() % 10i128.pow(d.scale().into()) == 0);
            match (floor == ceil, integral) {
                (true, true) => Some(KeyBound::Exact(Value::Int(floor))),
                // A decimal closer to an integer than a double can tell: no range is safe.
                (true, false) => None,
                (false, _) => Some(KeyBound::Between {
                    floor: Value::Int(floor),
                    ceil: Value::Int(ceil),
                }),
            }
        }
        (T::Decimal { .. }, Value::Int(_) | Value::Decimal(_)) => {
            exact(value).map(|d| KeyBound::Exact(Value::Decimal(d)))
        }
        (T::Double, Value::Int(_) | Value::Decimal(_) | Value::Double(_)) => {
            Some(KeyBound::Exact(Value::Double(value.as_f64()?)))
        }
        (T::Char(_) | T::Varchar(_), Value::Str(s)) => Some(KeyBound::Exact(Value::Str(s.clone()))),
        // A constant with more digits of a second than the column keeps falls between two
        // of its values: no index bound is safe.
        (T::DateTime(fsp), Value::DateTime(t)) => {
            (t.round(fsp) == *t).then_some(KeyBound::Exact(Value::DateTime(*t)))
        }
        (T::DateTime(fsp), Value::Str(s)) => parse_datetime(s)
            .filter(|t| t.round(fsp) == *t)
            .map(|t| KeyBound::Exact(Value::DateTime(t))),
        (T::DateTime(fsp), Value::Date(t)) => {
            (t.round(fsp) == *t).then_some(KeyBound::Exact(Value::DateTime(*t)))
        }
        // A time of day falls between two days.
        (T::Date, Value::DateTime(t) | Value::Date(t)) => Some(date_bound(*t)),
        (T::Date, Value::Str(s)) => parse_datetime(s).map(date_bound),
        _ => None,
    }
}

/// A DATETIME as a bound of a DATE column: its day, or between its day and the next.
fn date_bound(t: DateTime) -> KeyBound {
    match t.is_date() {
        true => KeyBound::Exact(Value::Date(t)),
        false => KeyBound::Between {
            floor: Value::Date(t.date()),
            ceil: Value::Date(DateTime(t.date().0 + DateTime::DAY)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_across_types() {
        let two = Value::Int(2);
        let two_and_half: Value = Decimal::new(25, 1).unwrap().into();
        assert_eq!(sql_cmp(&two, &two_and_half), Some(Ordering::Less));
        assert_eq!(sql_cmp(&two, &Value::Double(2.0)), Some(Ordering::Equal));
        assert_eq!(sql_cmp(&two, &Value::Null), None);
        assert_eq!(
            sql_cmp(&Value::from("10"), &Value::Int(9)),
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn arithmetic_follows_mysql_types() {
        let v = arith(ArithOp::Sub, &Value::Int(3001), &Value::Int(20)).unwrap();
        assert_eq!(v, Value::Int(2981));
        let d = arith(ArithOp::Div, &Value::Int(1), &Value::Int(3)).unwrap();
        assert_eq!(d.to_string(), "0.3333");
        assert_eq!(
            arith(ArithOp::Div, &Value::Int(1), &Value::Int(0)).unwrap(),
            Value::Null
        );
        assert!(arith(ArithOp::Add, &Value::Int(i64::MAX), &Value::Int(1)).is_err());
    }

    #[test]
    fn key_bounds_round_inexact_constants() {
        let half: Value = Decimal::new(25, 1).unwrap().into();
        assert_eq!(
            key_bound(ColumnType::Int, &half),
            Some(KeyBound::Between {
                floor: Value::Int(2),
                ceil: Value::Int(3)
            })
        );
        assert_eq!(
            key_bound(ColumnType::Int, &Value::from("7")),
            Some(KeyBound::Exact(Value::Int(7)))
        );
        assert_eq!(key_bound(ColumnType::Varchar(8), &Value::Int(7)), None);
        assert!(matches!(
            key_bound(ColumnType::DateTime(0), &Value::from("2026-11-21 05:00:00")),
            Some(KeyBound::Exact(Value::DateTime(_)))
        ));
    }
}
