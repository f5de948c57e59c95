//! The few JavaScript semantics DSH's reader depends on, reproduced so the
//! shadow chain sees what DSH sees: the order `Object.entries` walks an
//! object's members in, `String(value)` (DSH joins `args` with it to build a
//! stdio identity), and `toLowerCase` (the normalized name, and the Windows
//! command fold).
//!
//! Nothing here is printed: the results are only compared for equality.

use crate::json::Value;

/// The member indices of `keys` in the order JavaScript iterates an object
/// built from them: array-index keys (`"0"` … `"4294967294"`, canonical form)
/// first in ascending numeric order, then every other key in document order.
///
/// `JSON.parse` builds plain objects, so `Object.entries(mcpServers)` visits
/// a server named `"7"` before one named `"alpha"` written above it; the
/// first-come-first-served chain inside one file follows that order.
pub fn property_order<'k>(keys: impl Iterator<Item = &'k str>) -> Vec<usize> {
    let mut indexed: Vec<(u32, usize)> = Vec::new();
    let mut rest: Vec<usize> = Vec::new();
    for (i, k) in keys.enumerate() {
        match array_index(k) {
            Some(n) => indexed.push((n, i)),
            None => rest.push(i),
        }
    }
    indexed.sort_unstable();
    indexed.into_iter().map(|(_, i)| i).chain(rest).collect()
}

/// `Some(n)` when `key` is the canonical decimal form of an array index
/// (an integer below 2³² − 1), as ECMAScript defines it.
pub fn array_index(key: &str) -> Option<u32> {
    let b = key.as_bytes();
    if b.is_empty() || b.len() > 10 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if b.len() > 1 && b[0] == b'0' {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    u32::try_from(n).ok().filter(|n| *n != u32::MAX)
}

/// `value.toLowerCase()`: the Unicode default lowercase mapping (Rust's
/// `to_lowercase` implements the same mapping, final sigma included).
pub fn to_lower(value: &str) -> String {
    value.to_lowercase()
}

/// `String(value)` for a value of the crate's tree, with numbers kept as
/// their source text (see [`number_to_string`]).
pub fn to_string(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(text) => number_to_string(text),
        Value::String(s) => s.to_string(),
        // Array.prototype.toString: items joined by ",", null as "".
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                v => to_string(v),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// `String(n)` for the number a YAML 1.2 core-schema (or JSON) number text
/// denotes: `8080` → `"8080"`, `0x1F` → `"31"`, `1.50` → `"1.5"`, `1e21` →
/// `"1e+21"`, `.inf` → `"Infinity"`.
pub fn number_to_string(text: &str) -> String {
    format_number(number_value(text))
}

/// The IEEE double a YAML core-schema or JSON number text denotes.
pub fn number_value(text: &str) -> f64 {
    let (negative, t) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = if let Some(h) = t.strip_prefix("0x") {
        radix_value(h, 16)
    } else if let Some(o) = t.strip_prefix("0o") {
        radix_value(o, 8)
    } else {
        match t {
            ".inf" | ".Inf" | ".INF" => f64::INFINITY,
            ".nan" | ".NaN" | ".NAN" => f64::NAN,
            _ => t.parse::<f64>().unwrap_or(f64::NAN),
        }
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// `parseInt(digits, radix)` for a digit string already known to be valid.
fn radix_value(digits: &str, radix: u32) -> f64 {
    digits.chars().fold(0.0, |acc, c| {
        acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
    })
}

/// ECMAScript `Number::toString(x)` (radix 10).
pub fn format_number(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if x < 0.0 {
        return format!("-{}", format_number(-x));
    }
    // Rust's `{:e}` gives the shortest round-tripping digits, as ECMAScript
    // requires: "d[.ddd]e<exp>".
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    let n = exp.parse::<i64>().expect("exponent") + 1;
    if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let sign = if n - 1 < 0 { '-' } else { '+' };
        let e = (n - 1).abs();
        if k == 1 {
            format!("{digits}e{sign}{e}")
        } else {
            format!("{}.{}e{sign}{e}", &digits[..1], &digits[1..])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Options};

    #[test]
    fn array_index_keys_come_first_in_numeric_order() {
        let keys = ["b", "10", "a", "2", "02", "4294967295", "4294967294", "-1"];
        let order: Vec<&str> = property_order(keys.iter().copied())
            .into_iter()
            .map(|i| keys[i])
            .collect();
        assert_eq!(
            order,
            ["2", "10", "4294967294", "b", "a", "02", "4294967295", "-1"]
        );
        assert_eq!(array_index("0"), Some(0));
        assert_eq!(array_index(""), None);
        assert_eq!(array_index("1a"), None);
    }

    #[test]
    fn numbers_format_like_ecmascript() {
        let cases = [
            ("8080", "8080"),
            ("+5", "5"),
            ("007", "7"),
            ("-0", "0"),
            ("0x1F", "31"),
            ("0o17", "15"),
            ("1.50", "1.5"),
            (".5", "0.5"),
            ("1.", "1"),
            ("1e3", "1000"),
            ("1e21", "1e+21"),
            ("1.5e21", "1.5e+21"),
            ("123456789012345678901", "123456789012345680000"),
            ("0.000001", "0.000001"),
            ("1e-7", "1e-7"),
            ("-2.5e-7", "-2.5e-7"),
            ("0.1", "0.1"),
            (".inf", "Infinity"),
            ("-.Inf", "-Infinity"),
            (".nan", "NaN"),
        ];
        for (text, js) in cases {
            assert_eq!(number_to_string(text), js, "{text}");
        }
    }

    #[test]
    fn string_conversion_follows_javascript() {
        let v = parse(
            br#"[null, true, "s", 12, [1, null, [2, "x"]], {"a": 1}]"#,
            &Options::STRICT,
        )
        .unwrap();
        let all: Vec<String> = v.as_array().unwrap().iter().map(to_string).collect();
        assert_eq!(
            all,
            ["null", "true", "s", "12", "1,,2,x", "[object Object]"]
        );
        // The Kelvin sign lowercases to an ASCII k, as in JavaScript.
        assert_eq!(to_lower("\u{212a}EY"), "key");
    }
}
