//! Values as the five transactions read and write them, whatever the backend: integers and
//! money from engine values or a server's text, and a bad-credit customer's new C_DATA.

use waterline_txn::{Decimal, Value};

use crate::client::Failure;

/// A value as an integer (text from a MySQL server is parsed).
pub fn int_of(v: &Value) -> Result<i64, Failure> {
    match v {
        Value::Int(n) => Some(*n),
        Value::Str(s) => s.trim().parse().ok(),
        Value::Decimal(d) => d.rescale(0).and_then(|d| i64::try_from(d.units()).ok()),
        Value::Double(x) => Some(*x as i64),
        _ => None,
    }
    .ok_or_else(|| Failure::Fatal(format!("not an integer: {v}")))
}

/// A money value as hundredths (DECIMAL, or a MySQL server's decimal text).
pub fn cents_of(v: &Value) -> Result<i64, Failure> {
    let parsed = match v {
        Value::Int(n) => Some(n * 100),
        Value::Decimal(d) => d.rescale(2).and_then(|d| i64::try_from(d.units()).ok()),
        Value::Str(s) => parse_cents(s.trim()),
        Value::Double(x) => Some((x * 100.0).round() as i64),
        _ => None,
    };
    parsed.ok_or_else(|| Failure::Fatal(format!("not an amount: {v}")))
}

fn parse_cents(s: &str) -> Option<i64> {
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let frac = format!("{frac:0<2}");
    if frac.len() > 2 && frac[2..].bytes().any(|b| b != b'0') {
        return None;
    }
    let n = whole.parse::<i64>().ok()? * 100 + frac[..2].parse::<i64>().ok()?;
    Some(if negative { -n } else { n })
}

/// A bad-credit customer's C_DATA after a payment (spec 2.5.2.2): the payment's ids and
/// amount in front of the old data, cut to 500 characters.
pub fn bad_credit_data(ids: [i64; 5], amount_cents: i64, old: &str) -> String {
    let [c, cd, cw, d, w] = ids;
    let amount = Decimal::new(amount_cents.into(), 2).map_or_else(String::new, |d| d.to_string());
    let mut data = format!("{c} {cd} {cw} {d} {w} {amount} | {old}");
    if data.len() > 500 {
        let mut end = 500;
        while !data.is_char_boundary(end) {
            end -= 1;
        }
        data.truncate(end);
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_text_becomes_cents() {
        for (text, expected) in [
            ("12.34", Some(1234)),
            ("-10.00", Some(-1000)),
            ("5", Some(500)),
            ("0.5", Some(50)),
            ("1.2300", Some(123)),
            ("1.234", None),
        ] {
            assert_eq!(parse_cents(text), expected, "{text}");
        }
    }
}
