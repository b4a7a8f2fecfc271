//! bmad-loop reads some profile fields through Python's `str()`, `int()`,
//! `float()` and `bool()`, so a profile it accepts may hold `X = 1` where a
//! string belongs or `2.7` where a count does. drover reads such values the
//! way Python would (and `validate` says what each was read as), so the same
//! file means the same thing in both tools.

use toml::de::DeValue;
use toml::value::{Datetime, Offset};

/// Python's `str(value)` for a value `tomllib` produced.
pub fn py_str(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(s) => s.to_string(),
        _ => py_repr(value),
    }
}

/// Python's `repr()`: like `str()` except that strings are quoted (inside
/// lists and tables `str()` shows its items this way).
fn py_repr(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(s) => {
            let escaped = s
                .replace('\\', "\\\\")
                .replace('\'', "\\'")
                .replace('\n', "\\n")
                .replace('\r', "\\r")
                .replace('\t', "\\t");
            format!("'{escaped}'")
        }
        DeValue::Integer(i) => match integer(i.as_str(), i.radix()) {
            Some(n) => n.to_string(),
            None => i.as_str().replace('_', ""),
        },
        DeValue::Float(f) => match float_literal(f.as_str()) {
            Some(x) => float_repr(x),
            None => f.as_str().to_string(),
        },
        DeValue::Boolean(true) => "True".to_string(),
        DeValue::Boolean(false) => "False".to_string(),
        DeValue::Datetime(d) => datetime_str(d),
        DeValue::Array(items) => {
            let inner: Vec<String> = items.iter().map(|v| py_repr(v.get_ref())).collect();
            format!("[{}]", inner.join(", "))
        }
        DeValue::Table(table) => {
            let inner: Vec<String> = table
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}: {}",
                        py_repr(&DeValue::String(k.get_ref().clone())),
                        py_repr(v.get_ref())
                    )
                })
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}

/// Python's `int(value)`: booleans are 0 and 1, floats truncate toward
/// zero, strings must spell an integer. The error is Python's complaint.
pub fn py_int(value: &DeValue<'_>) -> Result<i128, String> {
    match value {
        DeValue::Integer(i) => {
            integer(i.as_str(), i.radix()).ok_or_else(|| "integer out of range".to_string())
        }
        DeValue::Boolean(b) => Ok(i128::from(*b)),
        DeValue::Float(f) => {
            let x = float_literal(f.as_str()).ok_or("not a number")?;
            if x.is_nan() {
                Err("cannot convert float NaN to integer".to_string())
            } else if x.is_infinite() || x.abs() >= 1e38 {
                Err("cannot convert float infinity to integer".to_string())
            } else {
                Ok(x.trunc() as i128)
            }
        }
        DeValue::String(s) => {
            let text = s.trim();
            let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
            let well_formed = !digits.is_empty()
                && !digits.starts_with('_')
                && !digits.ends_with('_')
                && !digits.contains("__")
                && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_');
            if !well_formed {
                return Err(format!("invalid literal for int(): {text:?}"));
            }
            text.replace('_', "")
                .parse::<i128>()
                .map_err(|_| "integer out of range".to_string())
        }
        DeValue::Datetime(_) | DeValue::Array(_) | DeValue::Table(_) => Err(format!(
            "int() cannot read {}",
            super::schema::type_name(value)
        )),
    }
}

/// Python's `float(value)` for numbers, booleans and numeric strings.
pub fn py_float(value: &DeValue<'_>) -> Result<f64, String> {
    match value {
        DeValue::Float(f) => float_literal(f.as_str()).ok_or_else(|| "not a number".to_string()),
        DeValue::Integer(i) => integer(i.as_str(), i.radix())
            .map(|n| n as f64)
            .ok_or_else(|| "integer out of range".to_string()),
        DeValue::Boolean(b) => Ok(if *b { 1.0 } else { 0.0 }),
        DeValue::String(s) => {
            let text = s.trim();
            let lower = text.to_ascii_lowercase();
            let unsigned = lower.trim_start_matches(['+', '-']);
            if matches!(unsigned, "inf" | "infinity" | "nan") {
                return lower
                    .replace("infinity", "inf")
                    .parse::<f64>()
                    .map_err(|_| format!("could not convert string to float: {text:?}"));
            }
            let plain = !text.contains("__") && !text.starts_with('_') && !text.ends_with('_');
            match text.replace('_', "").parse::<f64>() {
                Ok(x) if plain && !text.is_empty() => Ok(x),
                _ => Err(format!("could not convert string to float: {text:?}")),
            }
        }
        DeValue::Datetime(_) | DeValue::Array(_) | DeValue::Table(_) => Err(format!(
            "float() cannot read {}",
            super::schema::type_name(value)
        )),
    }
}

/// Python's `bool(value)`: empty strings, zeros and empty containers are
/// false; everything else (the string `"false"` too) is true.
pub fn py_bool(value: &DeValue<'_>) -> bool {
    match value {
        DeValue::Boolean(b) => *b,
        DeValue::String(s) => !s.is_empty(),
        DeValue::Integer(i) => integer(i.as_str(), i.radix()).is_none_or(|n| n != 0),
        DeValue::Float(f) => float_literal(f.as_str()).is_none_or(|x| x != 0.0),
        DeValue::Datetime(_) => true,
        DeValue::Array(items) => !items.is_empty(),
        DeValue::Table(table) => !table.is_empty(),
    }
}

fn integer(digits: &str, radix: u32) -> Option<i128> {
    i128::from_str_radix(&digits.replace('_', ""), radix).ok()
}

fn float_literal(text: &str) -> Option<f64> {
    text.replace('_', "").parse::<f64>().ok()
}

/// Python's float `repr`: the shortest digits that round-trip, positional
/// for exponents -4..16, else `d.ddde+XX`.
fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    // `{:e}` gives the shortest round-trip digits: "-1.25e-7".
    let scientific = format!("{x:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exponent) {
        let point = exponent + 1;
        let body = if point <= 0 {
            format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            let (whole, fraction) = digits.split_at(point as usize);
            format!("{whole}.{fraction}")
        };
        format!("{sign}{body}")
    } else {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{first}{fraction}e{exp_sign}{:02}", exponent.abs())
    }
}

/// Python's `str()` of the `datetime`, `date` or `time` tomllib returns.
fn datetime_str(d: &Datetime) -> String {
    let mut out = String::new();
    if let Some(date) = d.date {
        out.push_str(&format!(
            "{:04}-{:02}-{:02}",
            date.year, date.month, date.day
        ));
    }
    if let Some(time) = d.time {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&format!(
            "{:02}:{:02}:{:02}",
            time.hour, time.minute, time.second
        ));
        // Python keeps microseconds, truncated.
        let micros = time.nanosecond / 1000;
        if micros != 0 {
            out.push_str(&format!(".{micros:06}"));
        }
    }
    match d.offset {
        Some(Offset::Z) => out.push_str("+00:00"),
        Some(Offset::Custom { minutes }) => {
            let sign = if minutes < 0 { '-' } else { '+' };
            let m = minutes.unsigned_abs();
            out.push_str(&format!("{sign}{:02}:{:02}", m / 60, m % 60));
        }
        None => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(toml: &str) -> toml::Spanned<DeValue<'_>> {
        DeValue::parse(toml).expect("a TOML value")
    }

    #[test]
    fn str_matches_python() {
        let cases = [
            ("\"x\"", "x"),
            ("1", "1"),
            ("0x1f", "31"),
            ("1_000", "1000"),
            ("true", "True"),
            ("false", "False"),
            ("2.5", "2.5"),
            ("1.0", "1.0"),
            ("1e20", "1e+20"),
            ("1.5e-7", "1.5e-07"),
            ("0.0001", "0.0001"),
            ("123456789012345678.0", "1.2345678901234568e+17"),
            ("-0.0", "-0.0"),
            ("inf", "inf"),
            ("nan", "nan"),
            ("1979-05-27T07:32:00Z", "1979-05-27 07:32:00+00:00"),
            (
                "1979-05-27T00:32:00.999999-07:00",
                "1979-05-27 00:32:00.999999-07:00",
            ),
            ("1979-05-27", "1979-05-27"),
            ("07:32:00.5", "07:32:00.500000"),
            ("[1, \"a\", true]", "[1, 'a', True]"),
            ("{ a = 1, b = \"it's\" }", "{'a': 1, 'b': 'it\\'s'}"),
        ];
        for (toml, python) in cases {
            assert_eq!(py_str(value(toml).get_ref()), python, "{toml}");
        }
    }

    #[test]
    fn int_matches_python() {
        assert_eq!(py_int(value("2.7").get_ref()), Ok(2));
        assert_eq!(py_int(value("-2.7").get_ref()), Ok(-2));
        assert_eq!(py_int(value("true").get_ref()), Ok(1));
        assert_eq!(py_int(value("\" 3 \"").get_ref()), Ok(3));
        assert_eq!(py_int(value("\"1_0\"").get_ref()), Ok(10));
        assert!(py_int(value("\"2.7\"").get_ref()).is_err());
        assert!(py_int(value("nan").get_ref()).is_err());
        assert!(py_int(value("inf").get_ref()).is_err());
        assert!(py_int(value("[]").get_ref()).is_err());
    }

    #[test]
    fn float_and_bool_match_python() {
        assert_eq!(py_float(value("\"8\"").get_ref()), Ok(8.0));
        assert_eq!(py_float(value("true").get_ref()), Ok(1.0));
        assert!(py_float(value("\"eight\"").get_ref()).is_err());
        assert!(py_float(value("\"Infinity\"").get_ref()).is_ok_and(f64::is_infinite));
        for truthy in ["\"false\"", "\"no\"", "1", "0.5", "[0]", "{ a = 1 }", "nan"] {
            assert!(py_bool(value(truthy).get_ref()), "{truthy}");
        }
        for falsy in ["\"\"", "0", "0.0", "[]", "{}", "false"] {
            assert!(!py_bool(value(falsy).get_ref()), "{falsy}");
        }
    }
}
