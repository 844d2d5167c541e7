//! Column values and keys. A [`Value`] has one total order (NULL first), so rows can be keyed
//! by any tuple of columns; [`Decimal`] and [`DateTime`] are small exact types, enough for
//! TPC-C's money and timestamps.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A CHAR or VARCHAR value. Up to 24 bytes are stored inside the [`Value`] itself, longer
/// text on the heap.
///
/// Inline text makes copying a row a copy of its bytes: TPC-C's STOCK row has ten CHAR(24)
/// columns, and a write copies the row it changes. As shared `Arc<str>`s, each copy touched
/// ten reference counts in ten other cache lines, and purge touched them again to free the
/// old version.
pub type Text = compact_str::CompactString;

/// One column value.
#[derive(Clone, Debug)]
pub enum Value {
    /// SQL NULL. Sorts before every other value and equals itself (as a key, not in SQL).
    Null,
    /// INT and BIGINT.
    Int(i64),
    /// DECIMAL(p, s).
    Decimal(Decimal),
    /// DOUBLE.
    Double(f64),
    /// CHAR(n) and VARCHAR(n): see [`Text`].
    Str(Text),
    /// DATETIME.
    DateTime(DateTime),
    /// DATE: its day's midnight ([`DateTime::is_date`]), shown as `YYYY-MM-DD`. SQL
    /// compares it with a DATETIME as that midnight; the storage order puts it after them.
    Date(DateTime),
}

impl Value {
    fn rank(&self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Int(_) => 1,
            Value::Decimal(_) => 2,
            Value::Double(_) => 3,
            Value::Str(_) => 4,
            Value::DateTime(_) => 5,
            Value::Date(_) => 6,
        }
    }

    /// The integer, if this is an INT/BIGINT.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// The decimal, if this is a DECIMAL.
    pub fn as_decimal(&self) -> Option<Decimal> {
        match self {
            Value::Decimal(d) => Some(*d),
            _ => None,
        }
    }

    /// The string, if this is a CHAR/VARCHAR.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The number as a double, if this is numeric.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(n) => Some(*n as f64),
            Value::Decimal(d) => Some(d.to_f64()),
            Value::Double(x) => Some(*x),
            _ => None,
        }
    }

    /// Whether this is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether `other` is this value as stored, kind and DECIMAL scale included (equal
    /// values can differ there: 1.5 and 1.50).
    pub fn is_stored_as(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Decimal(a), Value::Decimal(b)) => {
                a.scale() == b.scale() && a.units() == b.units()
            }
            (Value::Double(a), Value::Double(b)) => a.to_bits() == b.to_bits(),
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::DateTime(a), Value::DateTime(b)) | (Value::Date(a), Value::Date(b)) => a == b,
            _ => false,
        }
    }
}

impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Decimal(a), Value::Decimal(b)) => a.cmp(b),
            (Value::Double(a), Value::Double(b)) => a.total_cmp(b),
            (Value::Str(a), Value::Str(b)) => a.cmp(b),
            (Value::DateTime(a), Value::DateTime(b)) | (Value::Date(a), Value::Date(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            // The common cases, without a three-way comparison: an index's values are compared
            // with the row's at every secondary-index check.
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            // Decimals of different scales can be equal: `cmp` rescales.
            _ => self.cmp(other) == Ordering::Equal,
        }
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            Value::Null => {}
            Value::Int(n) => n.hash(state),
            Value::Decimal(d) => d.normalized().hash(state),
            Value::Double(x) => x.to_bits().hash(state),
            Value::Str(s) => s.hash(state),
            Value::DateTime(t) | Value::Date(t) => t.hash(state),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Decimal(d) => write!(f, "{d}"),
            Value::Double(x) => write!(f, "{x}"),
            Value::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Value::DateTime(t) => write!(f, "'{t}'"),
            Value::Date(t) => write!(f, "'{}'", t.day()),
        }
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Int(n)
    }
}

impl From<i32> for Value {
    fn from(n: i32) -> Self {
        Value::Int(n.into())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(s.into())
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Value::Double(x)
    }
}

impl From<Decimal> for Value {
    fn from(d: Decimal) -> Self {
        Value::Decimal(d)
    }
}

impl From<DateTime> for Value {
    fn from(t: DateTime) -> Self {
        Value::DateTime(t)
    }
}

/// A row: one value per column, in schema order.
pub type Row = Vec<Value>;

/// A copy of `row`, value by value into a vector of its length.
///
/// Not `row.to_vec()` nor a `collect` of clones: those loops move each 24-byte value
/// through the stack as sixteen bytes and then eight that overlap them by one (the last
/// byte is the variant's tag, written on its own), and the read that follows straddles two
/// of those stores, which the processor cannot forward to it. Each value then waits a dozen
/// cycles or more, and a STOCK row's copy spent most of its time waiting. Pushing clones
/// one by one writes each where it goes (`cargo bench --bench txn -- row_copy`).
pub fn copy_row(row: &[Value]) -> Row {
    let mut copy = Vec::with_capacity(row.len());
    for value in row {
        copy.push(value.clone());
    }
    copy
}

/// An exact decimal: `units / 10^scale`. Equal values with different scales compare equal.
///
/// The 128-bit units are kept as 16 little-endian bytes, so the struct is 17 bytes aligned
/// to 1. An `i128` field would align it, and every [`Value`], to 16 bytes (a `Value` of 48
/// bytes); two `u64` halves pad it to 24 bytes, which covers the byte where [`Text`] keeps
/// its niche, so `Value` needs a tag of its own (32 bytes). At 17 bytes `Value` is as large
/// as a `Text`, 24 bytes: every row a quarter smaller than with the halves.
#[derive(Clone, Copy)]
pub struct Decimal {
    units: [u8; 16],
    scale: u8,
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decimal")
            .field("units", &self.units())
            .field("scale", &self.scale)
            .finish()
    }
}

/// The largest scale a [`Decimal`] keeps (MySQL's limit is 30).
pub const MAX_DECIMAL_SCALE: u8 = 30;

impl Decimal {
    /// `units / 10^scale`; `None` if the scale is above [`MAX_DECIMAL_SCALE`].
    pub fn new(units: i128, scale: u8) -> Option<Decimal> {
        (scale <= MAX_DECIMAL_SCALE).then_some(Decimal::pack(units, scale))
    }

    /// The value with `scale` digits after the point, rounded half away from zero (as MySQL
    /// stores into a DECIMAL column); `None` on overflow.
    pub fn rescale(self, scale: u8) -> Option<Decimal> {
        if scale > MAX_DECIMAL_SCALE {
            return None;
        }
        if scale == self.scale {
            return Some(self);
        }
        let units = if scale >= self.scale {
            self.units()
                .checked_mul(10i128.checked_pow(u32::from(scale - self.scale))?)?
        } else {
            let div = 10i128.pow(u32::from(self.scale - scale));
            let (q, r) = (self.units() / div, self.units() % div);
            if r.abs() * 2 >= div {
                q + self.units().signum()
            } else {
                q
            }
        };
        Some(Decimal::pack(units, scale))
    }

    /// The decimal with these units and scale (the scale checked by the caller).
    fn pack(units: i128, scale: u8) -> Decimal {
        Decimal {
            units: units.to_le_bytes(),
            scale,
        }
    }

    /// Whether the value has at most `precision` digits in all (DECIMAL(p, s) holds a value
    /// at scale `s` exactly when it has at most `p` digits): one comparison, where
    /// [`Decimal::integer_digits`] divides.
    pub fn fits_digits(self, precision: u8) -> bool {
        10u128
            .checked_pow(u32::from(precision))
            .is_none_or(|limit| self.units().unsigned_abs() < limit)
    }

    /// Digits left of the point (for a DECIMAL(p, s) check: at most `p - s`).
    pub fn integer_digits(self) -> u32 {
        let whole = (self.units() / 10i128.pow(u32::from(self.scale))).unsigned_abs();
        if whole == 0 { 0 } else { whole.ilog10() + 1 }
    }

    /// The scaled integer.
    pub fn units(self) -> i128 {
        i128::from_le_bytes(self.units)
    }

    /// Digits after the point.
    pub fn scale(self) -> u8 {
        self.scale
    }

    /// The nearest double.
    pub fn to_f64(self) -> f64 {
        self.units() as f64 / 10f64.powi(i32::from(self.scale))
    }

    /// The sum, at the larger scale; `None` on overflow.
    pub fn checked_add(self, other: Decimal) -> Option<Decimal> {
        let scale = self.scale.max(other.scale);
        let (a, b) = (self.rescale(scale)?, other.rescale(scale)?);
        Some(Decimal::pack(a.units().checked_add(b.units())?, scale))
    }

    /// The difference, at the larger scale; `None` on overflow.
    pub fn checked_sub(self, other: Decimal) -> Option<Decimal> {
        self.checked_add(Decimal::pack(other.units().checked_neg()?, other.scale))
    }

    /// The same value with trailing zero digits dropped: equal values normalise alike.
    fn normalized(self) -> (i128, u8) {
        let (mut units, mut scale) = (self.units(), self.scale);
        while scale > 0 && units % 10 == 0 {
            units /= 10;
            scale -= 1;
        }
        (units, scale)
    }
}

impl std::str::FromStr for Decimal {
    type Err = String;

    /// Parses `-12.345` or `7`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("not a decimal: {s:?}");
        let (negative, digits) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
        if whole.is_empty() && frac.is_empty()
            || !whole
                .bytes()
                .chain(frac.bytes())
                .all(|b| b.is_ascii_digit())
        {
            return Err(bad());
        }
        let scale = u8::try_from(frac.len())
            .ok()
            .filter(|&n| n <= MAX_DECIMAL_SCALE)
            .ok_or_else(bad)?;
        let mut units: i128 = 0;
        for b in whole.bytes().chain(frac.bytes()) {
            units = units
                .checked_mul(10)
                .and_then(|u| u.checked_add(i128::from(b - b'0')))
                .ok_or_else(bad)?;
        }
        Ok(Decimal::pack(if negative { -units } else { units }, scale))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        let scale = self.scale.max(other.scale);
        match (self.rescale(scale), other.rescale(scale)) {
            (Some(a), Some(b)) => a.units().cmp(&b.units()),
            // Too large to rescale exactly: compare as doubles, then normalised forms.
            _ => self
                .to_f64()
                .total_cmp(&other.to_f64())
                .then_with(|| self.normalized().cmp(&other.normalized())),
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Decimal {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Decimal {}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.units() < 0 { "-" } else { "" };
        let abs = self.units().unsigned_abs();
        if self.scale == 0 {
            return write!(f, "{sign}{abs}");
        }
        let div = 10u128.pow(u32::from(self.scale));
        write!(
            f,
            "{sign}{}.{:0width$}",
            abs / div,
            abs % div,
            width = usize::from(self.scale)
        )
    }
}

/// A DATETIME: microseconds since 1970-01-01 00:00:00 (no time zone, as MySQL's DATETIME).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime(pub i64);

impl DateTime {
    /// Microseconds in a day.
    pub const DAY: i64 = 86_400_000_000;

    /// Its day's midnight (a DATE's value).
    pub fn date(self) -> DateTime {
        DateTime(self.0 - self.0.rem_euclid(DateTime::DAY))
    }

    /// Whether it is a midnight (a value a DATE can hold).
    pub fn is_date(self) -> bool {
        self.0.rem_euclid(DateTime::DAY) == 0
    }

    /// Its day as a DATE shows it: `YYYY-MM-DD`.
    pub fn day(self) -> String {
        let (y, m, d) = civil_from_days(self.0.div_euclid(DateTime::DAY));
        format!("{y:04}-{m:02}-{d:02}")
    }

    /// Rounded to `fsp` digits of a second (0 to 6), half up, as MySQL stores into a
    /// DATETIME(fsp) column.
    pub fn round(self, fsp: u8) -> DateTime {
        let unit = 10i64.pow(6 - u32::from(fsp.min(6)));
        DateTime((self.0 + unit / 2).div_euclid(unit) * unit)
    }

    /// The given civil date and time; `None` if a field is out of range.
    pub fn from_ymd_hms(y: i32, m: u32, d: u32, hh: u32, mm: u32, ss: u32) -> Option<DateTime> {
        let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        let month_days = match m {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        if !(1..=12).contains(&m) || !(1..=month_days).contains(&d) || hh > 23 || mm > 59 || ss > 59
        {
            return None;
        }
        let days = days_from_civil(i64::from(y), m, d);
        let secs = days * 86_400 + i64::from(hh * 3600 + mm * 60 + ss);
        secs.checked_mul(1_000_000).map(DateTime)
    }

    /// Its civil date (year, month, day) and the microseconds into that day.
    pub fn civil(self) -> (i64, u32, u32, i64) {
        let day = self.0.div_euclid(86_400_000_000);
        let (y, m, d) = civil_from_days(day);
        (y, m, d, self.0.rem_euclid(86_400_000_000))
    }

    /// The DATETIME `micros` microseconds into the civil date `y-m-d` (a valid date: see
    /// [`DateTime::from_ymd_hms`]); `None` if it does not fit.
    pub fn from_civil(y: i64, m: u32, d: u32, micros: i64) -> Option<DateTime> {
        days_from_civil(y, m, d)
            .checked_mul(86_400_000_000)?
            .checked_add(micros)
            .map(DateTime)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count since 1970-01-01 (the inverse of `days_from_civil`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.div_euclid(1_000_000);
        let micros = self.0.rem_euclid(1_000_000);
        let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
        let s = secs.rem_euclid(86_400);
        write!(
            f,
            "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
            s / 3600,
            s / 60 % 60,
            s % 60
        )?;
        if micros != 0 {
            write!(f, ".{micros:06}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_row_copies_every_kind_of_value() {
        let long = "a text longer than the twenty-four bytes kept inline";
        let row = vec![
            Value::Null,
            Value::Int(-7),
            Value::Decimal(Decimal::new(-12_345, 2).unwrap()),
            Value::Double(0.5),
            Value::from("inline, 24 bytes exactly"),
            Value::from(long),
            Value::DateTime(DateTime(1_700_000_000_000_000)),
        ];
        let copy = copy_row(&row);
        assert_eq!(copy.len(), row.len());
        for (a, b) in copy.iter().zip(&row) {
            assert_eq!(
                format!("{a:?}"),
                format!("{b:?}"),
                "the same kind and value"
            );
        }
        drop(row);
        assert_eq!(
            copy[5].as_str(),
            Some(long),
            "the long text is the copy's own"
        );
        assert!(copy_row(&[]).is_empty());
    }

    #[test]
    fn a_value_is_three_words() {
        // Rows and keys are vectors of values: their size is the engine's memory footprint.
        assert_eq!(std::mem::size_of::<Value>(), 24);
        for units in [
            0,
            1,
            -1,
            i128::from(u64::MAX) + 1,
            -(1 << 100),
            i128::MAX,
            i128::MIN,
        ] {
            assert_eq!(Decimal::new(units, 3).unwrap().units(), units);
        }
    }

    #[test]
    fn decimals_compare_across_scales_and_round_half_away() {
        let a: Decimal = "1.50".parse().unwrap();
        let b: Decimal = "1.5".parse().unwrap();
        assert_eq!(a, b);
        assert_eq!(Value::Decimal(a), Value::Decimal(b));
        assert_eq!(a.rescale(0).unwrap().units(), 2);
        assert_eq!(
            "-2.5"
                .parse::<Decimal>()
                .unwrap()
                .rescale(0)
                .unwrap()
                .units(),
            -3
        );
        assert_eq!(a.to_string(), "1.50");
        assert_eq!("-0.05".parse::<Decimal>().unwrap().to_string(), "-0.05");
        assert_eq!("123.4".parse::<Decimal>().unwrap().integer_digits(), 3);
        assert!("1.2.3".parse::<Decimal>().is_err());
        assert!("".parse::<Decimal>().is_err());
    }

    #[test]
    fn values_have_one_total_order_with_null_first() {
        let mut values = vec![
            Value::from("b"),
            Value::Int(3),
            Value::Null,
            Value::Int(-1),
            Value::from("a"),
        ];
        values.sort();
        assert_eq!(
            values,
            vec![
                Value::Null,
                Value::Int(-1),
                Value::Int(3),
                Value::from("a"),
                Value::from("b")
            ]
        );
        assert_eq!(crate::Key::from([1, 2]).to_string(), "(1, 2)");
    }

    #[test]
    fn datetimes_print_as_mysql_does() {
        let t = DateTime::from_ymd_hms(2024, 2, 29, 23, 5, 9).unwrap();
        assert_eq!(t.to_string(), "2024-02-29 23:05:09");
        assert_eq!(DateTime(0).to_string(), "1970-01-01 00:00:00");
        assert_eq!(DateTime(-1).to_string(), "1969-12-31 23:59:59.999999");
        assert!(DateTime::from_ymd_hms(2024, 13, 1, 0, 0, 0).is_none());
    }
}
