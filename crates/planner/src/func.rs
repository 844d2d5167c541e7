//! Functions: each a [`FuncKind`] over its bound arguments. The string functions and LIKE
//! read the text of their arguments (a number's digits as MySQL writes them); the numeric
//! ones their numbers, keeping MySQL's result types (an INT stays an INT, a DECIMAL keeps
//! exact digits, anything else is a DOUBLE). Every one is NULL for a NULL argument.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::rc::Rc;
use std::time::{Duration, Instant};

use waterline_types::{DateTime, Decimal, MAX_DECIMAL_SCALE, Value};

use crate::PlanError;
use crate::value::{ArithOp, arith, number, parse_datetime, sql_cmp};

/// The functions: the string ones (and LIKE) over the text of their arguments, the numeric
/// ones over their numbers; NULL for a NULL argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncKind {
    /// CONCAT(a, b, ...).
    Concat,
    /// LENGTH(s): bytes.
    Length,
    /// CHAR_LENGTH(s): characters.
    CharLength,
    /// UPPER(s).
    Upper,
    /// LOWER(s).
    Lower,
    /// SUBSTRING(s, pos [, len]), in characters from 1; a negative pos counts from the end.
    Substring,
    /// LEFT(s, n): the first `n` characters (none for `n` below 1).
    Left,
    /// RIGHT(s, n): the last `n` characters (none for `n` below 1).
    Right,
    /// TRIM(`[BOTH | LEADING | TRAILING] [what] FROM s`): `what` (a space by default) off
    /// both ends, the start or the end, as often as it is there.
    Trim(TrimSide),
    /// `s LIKE pattern [ESCAPE 'c']`: `%` matches any characters, `_` one, and the escape
    /// character (`\` by default) makes the next one literal; compared character by
    /// character, as waterline's binary collation compares.
    Like(char),
    /// ABS(x).
    Abs,
    /// FLOOR(x): the largest integer not above x.
    Floor,
    /// CEIL(x), CEILING(x): the smallest integer not below x.
    Ceil,
    /// ROUND(x [, d]): to `d` digits after the point (0 by default; negative rounds left of
    /// it), half away from zero for an exact number, half to even for a DOUBLE (C's
    /// `rint`, which MySQL uses).
    Round,
    /// MOD(a, b): `a % b`.
    Mod,
    /// GREATEST(a, b, ...).
    Greatest,
    /// LEAST(a, b, ...).
    Least,
    /// DATE_ADD(dt, INTERVAL n unit), `dt + INTERVAL n unit` (DATE_SUB and `-` bind a
    /// negated `n`): a month past the end of the next month's days ends on its last day.
    DateAdd(TimeUnit),
    /// TIMESTAMPDIFF(unit, a, b): `b - a` in whole units (months counted as MySQL counts
    /// them: one is complete when the day and time of month are reached again).
    TimestampDiff(TimeUnit),
    /// UNIX_TIMESTAMP(dt): the seconds from 1970-01-01 00:00:00 UTC to `dt`, read in a time
    /// zone this many seconds east of UTC (the session's, bound in); with the fraction of a
    /// second `dt` has, and 0 outside MySQL's range (1970 to 3001-01-19 03:14:07.999999).
    UnixTimestamp(i32),
    /// SLEEP(seconds): waits, then returns 0; 1 if the statement was killed or ran out of
    /// time meanwhile ([`set_interrupt`]). Not a constant: it waits each time it is
    /// evaluated (its [`Expr::used_tables`](crate::Expr::used_tables) has MySQL's
    /// `RAND_TABLE_BIT`).
    Sleep,
    /// DATE(dt): the day of a DATETIME (or of a string of one), a DATE; NULL for a string
    /// that is no date.
    Date,
    /// UUID(): a new version-1 UUID (RFC 4122: the time in 100 ns since 1582-10-15, a clock
    /// sequence, and a node, random for this process as MySQL's is when it has no MAC) as
    /// its 36 characters; a new one each time it is evaluated, as SLEEP is.
    Uuid,
}

thread_local! {
    /// What SLEEP asks, on this thread, whether the running statement must stop.
    static INTERRUPT: RefCell<Option<Rc<dyn Fn() -> bool>>> = const { RefCell::new(None) };
}

/// Sets what SLEEP asks, on this thread, whether the statement that runs here must stop
/// (killed, or out of time): a session sets it as each statement starts.
pub fn set_interrupt(check: Option<Rc<dyn Fn() -> bool>>) {
    INTERRUPT.with(|i| *i.borrow_mut() = check);
}

/// SLEEP: `seconds` in steps of at most 10 ms, each after asking whether to stop.
fn sleep(seconds: &Value) -> Result<Value, PlanError> {
    let seconds = match seconds {
        Value::Null => f64::NAN,
        v => number(v),
    };
    if !(seconds >= 0.0 && seconds.is_finite()) {
        return Err(PlanError::WrongArguments("sleep"));
    }
    let end = Instant::now() + Duration::from_secs_f64(seconds.min(1e9));
    let check = INTERRUPT.with(|i| i.borrow().clone());
    loop {
        if check.as_ref().is_some_and(|stop| stop()) {
            return Ok(Value::Int(1));
        }
        let now = Instant::now();
        if now >= end {
            return Ok(Value::Int(0));
        }
        std::thread::sleep((end - now).min(Duration::from_millis(10)));
    }
}

/// A unit of an INTERVAL or of TIMESTAMPDIFF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// MICROSECOND.
    Microsecond,
    /// SECOND.
    Second,
    /// MINUTE.
    Minute,
    /// HOUR.
    Hour,
    /// DAY.
    Day,
    /// WEEK.
    Week,
    /// MONTH.
    Month,
    /// QUARTER.
    Quarter,
    /// YEAR.
    Year,
}

impl TimeUnit {
    /// The unit a keyword names (`DAY`, `MONTH` ...), if it is a single one waterline has.
    pub fn named(name: &str) -> Option<TimeUnit> {
        Some(match name.to_ascii_uppercase().as_str() {
            "MICROSECOND" => TimeUnit::Microsecond,
            "SECOND" => TimeUnit::Second,
            "MINUTE" => TimeUnit::Minute,
            "HOUR" => TimeUnit::Hour,
            "DAY" => TimeUnit::Day,
            "WEEK" => TimeUnit::Week,
            "MONTH" => TimeUnit::Month,
            "QUARTER" => TimeUnit::Quarter,
            "YEAR" => TimeUnit::Year,
            _ => return None,
        })
    }

    /// Microseconds in one, or the months in one (`Err`) for MONTH, QUARTER and YEAR.
    fn size(self) -> Result<i64, i64> {
        match self {
            TimeUnit::Microsecond => Ok(1),
            TimeUnit::Second => Ok(1_000_000),
            TimeUnit::Minute => Ok(60_000_000),
            TimeUnit::Hour => Ok(3_600_000_000),
            TimeUnit::Day => Ok(86_400_000_000),
            TimeUnit::Week => Ok(7 * 86_400_000_000),
            TimeUnit::Month => Err(1),
            TimeUnit::Quarter => Err(3),
            TimeUnit::Year => Err(12),
        }
    }
}

/// Which ends TRIM cuts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimSide {
    /// Both (the default).
    Both,
    /// The start.
    Leading,
    /// The end.
    Trailing,
}

impl FuncKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            FuncKind::Concat => "concat",
            FuncKind::Length => "length",
            FuncKind::CharLength => "char_length",
            FuncKind::Upper => "upper",
            FuncKind::Lower => "lower",
            FuncKind::Substring => "substring",
            FuncKind::Left => "left",
            FuncKind::Right => "right",
            FuncKind::Trim(TrimSide::Both) => "trim",
            FuncKind::Trim(TrimSide::Leading) => "trim_leading",
            FuncKind::Trim(TrimSide::Trailing) => "trim_trailing",
            FuncKind::Like(_) => "like",
            FuncKind::Abs => "abs",
            FuncKind::Floor => "floor",
            FuncKind::Ceil => "ceiling",
            FuncKind::Round => "round",
            FuncKind::Mod => "mod",
            FuncKind::Greatest => "greatest",
            FuncKind::Least => "least",
            FuncKind::DateAdd(_) => "date_add",
            FuncKind::TimestampDiff(_) => "timestampdiff",
            FuncKind::UnixTimestamp(_) => "unix_timestamp",
            FuncKind::Sleep => "sleep",
            FuncKind::Date => "date",
            FuncKind::Uuid => "uuid",
        }
    }

    /// The number of arguments it takes: at least, at most.
    pub(crate) fn arity(self) -> (usize, usize) {
        match self {
            FuncKind::Concat => (1, usize::MAX),
            FuncKind::Greatest | FuncKind::Least => (2, usize::MAX),
            FuncKind::Substring => (2, 3),
            FuncKind::Round => (1, 2),
            FuncKind::Trim(_)
            | FuncKind::Like(_)
            | FuncKind::Mod
            | FuncKind::Left
            | FuncKind::Right
            | FuncKind::DateAdd(_)
            | FuncKind::TimestampDiff(_) => (2, 2),
            FuncKind::Length
            | FuncKind::CharLength
            | FuncKind::Upper
            | FuncKind::Lower
            | FuncKind::Abs
            | FuncKind::Floor
            | FuncKind::Ceil
            | FuncKind::UnixTimestamp(_)
            | FuncKind::Sleep
            | FuncKind::Date => (1, 1),
            FuncKind::Uuid => (0, 0),
        }
    }

    /// The function a name calls, if waterline has it (TRIM and LIKE are grammar).
    pub(crate) fn named(name: &str) -> Option<FuncKind> {
        Some(match name.to_ascii_uppercase().as_str() {
            "CONCAT" => FuncKind::Concat,
            "LENGTH" | "OCTET_LENGTH" => FuncKind::Length,
            "CHAR_LENGTH" | "CHARACTER_LENGTH" => FuncKind::CharLength,
            "UPPER" | "UCASE" => FuncKind::Upper,
            "LOWER" | "LCASE" => FuncKind::Lower,
            "SUBSTRING" | "SUBSTR" => FuncKind::Substring,
            "LEFT" => FuncKind::Left,
            "RIGHT" => FuncKind::Right,
            "ABS" => FuncKind::Abs,
            "FLOOR" => FuncKind::Floor,
            "CEIL" | "CEILING" => FuncKind::Ceil,
            "ROUND" => FuncKind::Round,
            "MOD" => FuncKind::Mod,
            "GREATEST" => FuncKind::Greatest,
            "LEAST" => FuncKind::Least,
            "SLEEP" => FuncKind::Sleep,
            "DATE" => FuncKind::Date,
            "UUID" => FuncKind::Uuid,
            _ => return None,
        })
    }

    fn numeric(self) -> bool {
        matches!(
            self,
            FuncKind::Abs
                | FuncKind::Floor
                | FuncKind::Ceil
                | FuncKind::Round
                | FuncKind::Mod
                | FuncKind::Greatest
                | FuncKind::Least
        )
    }
}

/// A new version-1 UUID's text (see [`FuncKind::Uuid`]): the time moves on by at least one
/// tick from the last one this process made, so two are never the same.
fn uuid() -> String {
    use std::hash::{BuildHasher, RandomState};
    use std::sync::LazyLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    // Random for the process: the node (multicast bit set, as RFC 4122 asks of a node that
    // is no MAC address) and the clock sequence.
    static NODE: LazyLock<(u64, u16)> = LazyLock::new(|| {
        let random = RandomState::new().hash_one(std::process::id());
        (
            (random & 0xffff_ffff_ffff) | 0x0100_0000_0000,
            (random >> 48) as u16 & 0x3fff,
        )
    });
    static LAST: AtomicU64 = AtomicU64::new(0);
    // 100 ns ticks from 1582-10-15 to 1970-01-01.
    const GREGORIAN: u64 = 0x01b2_1dd2_1381_4000;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| (d.as_nanos() / 100) as u64)
        + GREGORIAN;
    let ticks = match LAST.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| {
        Some(now.max(last + 1))
    }) {
        Ok(last) | Err(last) => now.max(last + 1),
    };
    let (node, clock) = *NODE;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        ticks & 0xffff_ffff,
        (ticks >> 32) & 0xffff,
        ((ticks >> 48) & 0x0fff) | 0x1000,
        clock | 0x8000,
        node
    )
}

/// A value's text as the string functions read it; `None` for NULL. A DOUBLE is refused:
/// its text in MySQL is not Rust's.
fn text_of(v: Value) -> Result<Option<String>, PlanError> {
    Ok(match v {
        Value::Null => None,
        Value::Str(s) => Some(s.to_string()),
        Value::Int(n) => Some(n.to_string()),
        Value::Decimal(d) => Some(d.to_string()),
        Value::DateTime(t) => Some(t.to_string()),
        Value::Date(t) => Some(t.day()),
        Value::Double(_) => {
            return Err(PlanError::Unsupported(
                "a DOUBLE in a string function".into(),
            ));
        }
    })
}

/// `kind` over its arguments' `values`.
pub(crate) fn apply(kind: FuncKind, values: Vec<Value>) -> Result<Value, PlanError> {
    if kind.numeric() {
        return numeric_function(kind, values);
    }
    if let FuncKind::DateAdd(unit) | FuncKind::TimestampDiff(unit) = kind {
        return time_function(kind, unit, &values);
    }
    if let (FuncKind::UnixTimestamp(offset), [v]) = (kind, values.as_slice()) {
        return unix_timestamp(offset, v);
    }
    if let (FuncKind::Sleep, [v]) = (kind, values.as_slice()) {
        return sleep(v);
    }
    if kind == FuncKind::Uuid {
        return Ok(Value::from(uuid()));
    }
    if let (FuncKind::Date, [v]) = (kind, values.as_slice()) {
        return Ok(match v {
            Value::Null => Value::Null,
            v => datetime_of(v)?.map_or(Value::Null, |(t, _)| Value::Date(t.date())),
        });
    }
    let mut texts = Vec::with_capacity(values.len());
    for v in values {
        match text_of(v)? {
            Some(t) => texts.push(t),
            None => return Ok(Value::Null),
        }
    }
    let int = |t: &str| -> Result<i64, PlanError> {
        t.trim()
            .parse::<i64>()
            .map_err(|_| PlanError::Unsupported(format!("'{t}' as a position or length")))
    };
    Ok(match (kind, texts.as_slice()) {
        (FuncKind::Concat, all) => Value::from(all.concat().as_str()),
        (FuncKind::Length, [s]) => Value::Int(s.len() as i64),
        (FuncKind::CharLength, [s]) => Value::Int(s.chars().count() as i64),
        (FuncKind::Upper, [s]) => Value::from(s.to_uppercase().as_str()),
        (FuncKind::Lower, [s]) => Value::from(s.to_lowercase().as_str()),
        (FuncKind::Left | FuncKind::Right, [s, n]) => {
            let chars: Vec<char> = s.chars().collect();
            let n = usize::try_from(int(n)?.max(0))
                .unwrap_or(usize::MAX)
                .min(chars.len());
            let part = match kind {
                FuncKind::Left => &chars[..n],
                _ => &chars[chars.len() - n..],
            };
            Value::from(part.iter().collect::<String>().as_str())
        }
        (FuncKind::Substring, [s, rest @ ..]) if rest.len() <= 2 => {
            let chars: Vec<char> = s.chars().collect();
            let n = chars.len() as i64;
            let pos = int(&rest[0])?;
            let start = match pos {
                0 => return Ok(Value::from("")),
                p if p > 0 => p - 1,
                p => n + p,
            };
            let len = match rest.get(1) {
                Some(l) => int(l)?,
                None => n,
            };
            if start < 0 || start >= n || len < 1 {
                return Ok(Value::from(""));
            }
            let end = start.saturating_add(len).min(n);
            let text: String = chars[start as usize..end as usize].iter().collect();
            Value::from(text.as_str())
        }
        (FuncKind::Trim(side), [s, what]) => {
            let mut t = s.as_str();
            if !what.is_empty() {
                if side != TrimSide::Trailing {
                    while let Some(rest) = t.strip_prefix(what.as_str()) {
                        t = rest;
                    }
                }
                if side != TrimSide::Leading {
                    while let Some(rest) = t.strip_suffix(what.as_str()) {
                        t = rest;
                    }
                }
            }
            Value::from(t)
        }
        (FuncKind::Like(escape), [s, pattern]) => Value::Int(i64::from(like(s, pattern, escape))),
        _ => return Err(PlanError::ParamCount(kind.name().to_uppercase())),
    })
}

/// A numeric function over its arguments' `values`: NULL if any is.
fn numeric_function(kind: FuncKind, values: Vec<Value>) -> Result<Value, PlanError> {
    if values.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let out_of_range = || {
        let args: Vec<String> = values.iter().map(ToString::to_string).collect();
        PlanError::OutOfRange(format!("{}({})", kind.name(), args.join(",")))
    };
    Ok(match (kind, values.as_slice()) {
        (FuncKind::Abs, [x]) => match numeric(x)? {
            Value::Int(n) => Value::Int(n.checked_abs().ok_or_else(out_of_range)?),
            Value::Decimal(d) => {
                Value::Decimal(Decimal::new(d.units().abs(), d.scale()).ok_or_else(out_of_range)?)
            }
            other => Value::Double(number(&other).abs()),
        },
        (FuncKind::Floor | FuncKind::Ceil, [x]) => {
            let up = kind == FuncKind::Ceil;
            match numeric(x)? {
                Value::Int(n) => Value::Int(n),
                Value::Decimal(d) => {
                    let p = 10i128.pow(u32::from(d.scale()));
                    let q = d.units().div_euclid(p);
                    let q = if up && d.units().rem_euclid(p) != 0 {
                        q + 1
                    } else {
                        q
                    };
                    exact_integer(q).ok_or_else(out_of_range)?
                }
                other => {
                    let f = number(&other);
                    Value::Double(if up { f.ceil() } else { f.floor() })
                }
            }
        }
        (FuncKind::Round, [x, rest @ ..]) => {
            let digits = match rest {
                [] => 0,
                [Value::Int(d)] => *d,
                _ => {
                    return Err(PlanError::Unsupported(
                        "a ROUND precision that is not an integer".into(),
                    ));
                }
            };
            round(numeric(x)?, digits).ok_or_else(out_of_range)?
        }
        (FuncKind::Mod, [a, b]) => arith(ArithOp::Mod, a, b)?,
        (FuncKind::Greatest | FuncKind::Least, all) if all.len() >= 2 => {
            extreme(all, kind == FuncKind::Greatest)?
        }
        _ => return Err(PlanError::ParamCount(kind.name().to_uppercase())),
    })
}

/// A value as a numeric function reads it: a number as it is, a string as the number it
/// starts with (a DOUBLE, as MySQL converts it); a DATETIME is refused (MySQL reads it as
/// the number YYYYMMDDhhmmss).
fn numeric(v: &Value) -> Result<Value, PlanError> {
    match v {
        Value::Int(_) | Value::Decimal(_) | Value::Double(_) => Ok(v.clone()),
        Value::Str(_) => Ok(Value::Double(number(v))),
        _ => Err(PlanError::Unsupported(format!("{v} in a numeric function"))),
    }
}

/// An exact integer: an INT if it fits, else a DECIMAL with no digits after the point.
fn exact_integer(n: i128) -> Option<Value> {
    match i64::try_from(n) {
        Ok(n) => Some(Value::Int(n)),
        Err(_) => Decimal::new(n, 0).map(Value::Decimal),
    }
}

/// ROUND(x, digits); `None` on overflow.
fn round(x: Value, digits: i64) -> Option<Value> {
    let half_away = |units: i128, div: i128| {
        let (q, r) = (units / div, units % div);
        if r.abs() * 2 >= div {
            q + units.signum()
        } else {
            q
        }
    };
    Some(match x {
        Value::Int(n) if digits >= 0 => Value::Int(n),
        Value::Int(n) => {
            let Some(div) = 10i128.checked_pow(u32::try_from(-digits).unwrap_or(u32::MAX)) else {
                return Some(Value::Int(0));
            };
            Value::Int(i64::try_from(half_away(i128::from(n), div).checked_mul(div)?).ok()?)
        }
        Value::Decimal(d) if digits >= 0 => {
            // To exactly `digits` places, more than it has included (ROUND(1.5, 3) is 1.500).
            let scale = u8::try_from(digits)
                .unwrap_or(u8::MAX)
                .min(MAX_DECIMAL_SCALE);
            Value::Decimal(d.rescale(scale)?)
        }
        Value::Decimal(d) => {
            let left = u32::try_from(-digits).unwrap_or(u32::MAX);
            let Some(div) = 10i128.checked_pow(u32::from(d.scale()).saturating_add(left)) else {
                return Some(Value::Int(0));
            };
            let units = half_away(d.units(), div).checked_mul(10i128.pow(left))?;
            exact_integer(units)?
        }
        other => {
            let f = number(&other);
            let scale = 10f64.powi(i32::try_from(digits.clamp(-400, 400)).unwrap_or(0));
            let r = (f * scale).round_ties_even() / scale;
            Value::Double(if r.is_finite() { r } else { f })
        }
    })
}

/// GREATEST (`greatest`) or LEAST of `values` (none NULL): numbers compared as numbers and
/// the result in the widest type among them (INT, DECIMAL at the largest scale, DOUBLE);
/// strings, or numbers mixed with strings, compared as strings; DATETIMEs as DATETIMEs.
fn extreme(values: &[Value], greatest: bool) -> Result<Value, PlanError> {
    let want = if greatest {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    let pick = |values: &[Value]| {
        values
            .iter()
            .cloned()
            .reduce(|a, b| if sql_cmp(&b, &a) == Some(want) { b } else { a })
            .unwrap_or(Value::Null)
    };
    let numbers = values
        .iter()
        .all(|v| matches!(v, Value::Int(_) | Value::Decimal(_) | Value::Double(_)));
    if numbers {
        let picked = pick(values);
        return Ok(if values.iter().any(|v| matches!(v, Value::Double(_))) {
            Value::Double(number(&picked))
        } else if let Some(scale) = values
            .iter()
            .filter_map(|v| v.as_decimal())
            .map(|d| d.scale())
            .max()
        {
            let d = match picked {
                Value::Int(n) => Decimal::new(i128::from(n), 0),
                Value::Decimal(d) => Some(d),
                _ => None,
            };
            d.and_then(|d| d.rescale(scale))
                .map_or(Value::Null, Value::Decimal)
        } else {
            picked
        });
    }
    if values
        .iter()
        .all(|v| matches!(v, Value::DateTime(_) | Value::Date(_)))
    {
        return Ok(pick(values));
    }
    let mut texts = Vec::with_capacity(values.len());
    for v in values {
        texts.push(Value::from(
            text_of(v.clone())?.unwrap_or_default().as_str(),
        ));
    }
    Ok(pick(&texts))
}

/// A value as a date function reads it: a DATETIME, or a string in one of its literal forms
/// (with whether it was a date alone); `None` for a string that is no date (MySQL: NULL and
/// a warning).
fn datetime_of(v: &Value) -> Result<Option<(DateTime, bool)>, PlanError> {
    match v {
        Value::DateTime(t) => Ok(Some((*t, false))),
        Value::Date(t) => Ok(Some((*t, true))),
        Value::Str(_) => {
            let text = v.as_str().unwrap_or_default().trim();
            Ok(parse_datetime(text).map(|t| (t, text.len() <= 10)))
        }
        other => Err(PlanError::Unsupported(format!("{other} as a date"))),
    }
}

/// Days in month `m` of year `y`.
fn month_days(y: i64, m: u32) -> u32 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// DATE_ADD and TIMESTAMPDIFF over their arguments' `values`: NULL if any is NULL, or a
/// result outside MySQL's years 0 to 9999.
fn time_function(kind: FuncKind, unit: TimeUnit, values: &[Value]) -> Result<Value, PlanError> {
    if values.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let in_range = |t: DateTime| (0..=9999).contains(&t.civil().0);
    match (kind, values) {
        (FuncKind::DateAdd(_), [at, n]) => {
            let a_date = matches!(at, Value::Date(_));
            let Some((at, date_only)) = datetime_of(at)? else {
                return Ok(Value::Null);
            };
            let Value::Int(n) = n else {
                return Err(PlanError::Unsupported(format!(
                    "an INTERVAL of {n}, not an integer"
                )));
            };
            let moved = match unit.size() {
                Ok(micros) => n
                    .checked_mul(micros)
                    .and_then(|d| at.0.checked_add(d))
                    .map(DateTime),
                Err(months) => {
                    let (y, m, d, micros) = at.civil();
                    n.checked_mul(months).and_then(|add| {
                        let total = (y * 12 + i64::from(m) - 1).checked_add(add)?;
                        let (y, m) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
                        DateTime::from_civil(y, m, d.min(month_days(y, m)), micros)
                    })
                }
            };
            Ok(match moved.filter(|t| in_range(*t)) {
                None => Value::Null,
                // A date alone moved by days or more stays a date, as in MySQL.
                Some(t) if a_date && t.is_date() => Value::Date(t),
                Some(t) if date_only && t.is_date() => {
                    let text = t.to_string();
                    Value::from(&text[..10])
                }
                Some(t) => Value::DateTime(t),
            })
        }
        (FuncKind::TimestampDiff(_), [a, b]) => {
            let (Some((a, _)), Some((b, _))) = (datetime_of(a)?, datetime_of(b)?) else {
                return Ok(Value::Null);
            };
            Ok(Value::Int(match unit.size() {
                Ok(micros) => (b.0 - a.0) / micros,
                Err(per) => {
                    let (lo, hi, sign) = if a <= b { (a, b, 1) } else { (b, a, -1) };
                    let (y1, m1, d1, t1) = lo.civil();
                    let (y2, m2, d2, t2) = hi.civil();
                    let mut months = (y2 - y1) * 12 + i64::from(m2) - i64::from(m1);
                    if (d2, t2) < (d1, t1) {
                        months -= 1;
                    }
                    sign * (months / per)
                }
            }))
        }
        _ => Err(PlanError::ParamCount(kind.name().to_uppercase())),
    }
}

/// UNIX_TIMESTAMP(`v`) in a zone `offset` seconds east of UTC.
fn unix_timestamp(offset: i32, v: &Value) -> Result<Value, PlanError> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let Some((at, _)) = datetime_of(v)? else {
        return Ok(Value::Null);
    };
    /// 3001-01-19 03:14:07.999999 UTC, MySQL's last.
    const LAST: i64 = 32_536_771_199_999_999;
    let utc = at.0 - i64::from(offset) * 1_000_000;
    if !(0..=LAST).contains(&utc) {
        return Ok(Value::Int(0));
    }
    let fraction = utc % 1_000_000;
    if fraction == 0 {
        return Ok(Value::Int(utc / 1_000_000));
    }
    // The fraction's digits, as many as it has.
    let mut scale = 6u8;
    let mut units = i128::from(utc);
    while units % 10 == 0 {
        units /= 10;
        scale -= 1;
    }
    Ok(Decimal::new(units, scale).map_or(Value::Null, Value::Decimal))
}

/// One element of a LIKE pattern.
#[derive(Clone, Copy, PartialEq)]
enum Wild {
    /// `%`: any characters, none included.
    Any,
    /// `_`: one character.
    One,
    /// A character that must be there.
    Char(char),
}

/// Whether `text` matches the LIKE `pattern` with `escape` as its escape character: the
/// usual wildcard walk, which on a mismatch goes back to the last `%` and lets it take one
/// more character (at most `text` × `pattern` steps, never exponential).
fn like(text: &str, pattern: &str, escape: char) -> bool {
    let mut wilds = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        wilds.push(match c {
            '%' => Wild::Any,
            '_' => Wild::One,
            c if c == escape => Wild::Char(chars.next().unwrap_or(escape)),
            c => Wild::Char(c),
        });
    }
    let text: Vec<char> = text.chars().collect();
    let (mut t, mut w) = (0, 0);
    // The last `%` seen and the text position it was tried at.
    let mut back: Option<(usize, usize)> = None;
    while t < text.len() {
        match wilds.get(w) {
            Some(Wild::Any) => {
                back = Some((w, t));
                w += 1;
            }
            Some(Wild::One) => {
                t += 1;
                w += 1;
            }
            Some(Wild::Char(c)) if *c == text[t] => {
                t += 1;
                w += 1;
            }
            _ => match back {
                Some((bw, bt)) => {
                    back = Some((bw, bt + 1));
                    w = bw + 1;
                    t = bt + 1;
                }
                None => return false,
            },
        }
    }
    wilds[w..].iter().all(|x| *x == Wild::Any)
}

#[cfg(test)]
mod tests {
    use super::like;

    #[test]
    fn like_matches_as_mysql_does() {
        for (text, pattern, matches) in [
            ("abc", "abc", true),
            ("abc", "a%", true),
            ("abc", "%c", true),
            ("abc", "%b%", true),
            ("abc", "a_c", true),
            ("abc", "a_", false),
            ("abc", "%", true),
            ("", "%", true),
            ("", "_", false),
            ("abc", "ABC", false),
            ("a%c", "a\\%c", true),
            ("abc", "a\\%c", false),
            ("a_c", "a\\_c", true),
            ("mississippi", "%iss%ppi", true),
            ("mississippi", "%iss%ppx", false),
            ("ééa", "__a", true),
            (
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
                "%a%a%a%a%a%a%a%a%c",
                false,
            ),
        ] {
            assert_eq!(like(text, pattern, '\\'), matches, "{text} LIKE {pattern}");
        }
        assert!(like("10%", "10!%", '!'));
        assert!(!like("100", "10!%", '!'));
        assert!(like("a\\b", "a\\b", '!'));
    }
}
