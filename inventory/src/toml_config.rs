//! TOML configuration input (Codex's `config.toml` files): parsed with the
//! `toml` crate, the parser Codex itself uses (0.9), so a file Codex refuses —
//! a duplicate key, a table defined twice, invalid syntax, nesting beyond the
//! crate's recursion bound — is refused here too, and one Codex reads is read.
//! The parsed table becomes the crate's [`Value`] tree so the shared shape and
//! classification code can look at it.
//!
//! Only types survive the conversion where nothing more is needed: integers
//! and floats become numbers whose text is not kept, and a TOML datetime
//! becomes `null` (it is neither a string, an array nor a table, which is all
//! an entry check asks). Errors are a [`Reason`] code and the byte offset where
//! the parser stopped; the crate's message text is matched to pick the code
//! and never shown.
//!
//! It must never evaluate, expand or print a value.

use std::borrow::Cow;

use crate::json::{Object, Value};
use crate::model::Reason;

/// The text a converted number carries (its value is never needed).
const NUMBER: &str = "0";

/// Parse a TOML document into a table [`Value`], or the reason and byte
/// offset it was refused at.
pub fn parse_located(bytes: &[u8]) -> Result<Value<'static>, (Reason, usize)> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => return Err((Reason::InvalidUtf8, e.valid_up_to())),
    };
    match text.parse::<toml::Table>() {
        Ok(table) => Ok(Value::Object(object(table))),
        Err(e) => {
            let at = e.span().map_or(0, |s| s.start);
            Err((reason_of(e.message()), at))
        }
    }
}

/// The code for a parser message (matched, never shown).
fn reason_of(message: &str) -> Reason {
    if message.contains("duplicate key") {
        Reason::DuplicateKey
    } else if message.contains("recursion") {
        Reason::TooDeep
    } else {
        Reason::Syntax
    }
}

fn object(table: toml::Table) -> Object<'static> {
    Object(
        table
            .into_iter()
            .map(|(k, v)| (Cow::Owned(k), value(v)))
            .collect(),
    )
}

/// Depth is bounded by the parser's own recursion limit.
fn value(v: toml::Value) -> Value<'static> {
    match v {
        toml::Value::String(s) => Value::String(Cow::Owned(s)),
        toml::Value::Integer(_) | toml::Value::Float(_) => Value::Number(NUMBER),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(_) => Value::Null,
        toml::Value::Array(items) => Value::Array(items.into_iter().map(value).collect()),
        toml::Value::Table(t) => Value::Object(object(t)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> (Reason, usize) {
        parse_located(s.as_bytes()).unwrap_err()
    }

    #[test]
    fn tables_and_values_convert() {
        let v = parse_located(
            b"[mcp_servers.a]\ncommand = \"x\"\nargs = [\"1\", 2]\nenabled = true\nt = 1979-05-27\n",
        )
        .unwrap();
        let a = v
            .as_object()
            .and_then(|o| o.get("mcp_servers"))
            .and_then(Value::as_object)
            .and_then(|o| o.get("a"))
            .and_then(Value::as_object)
            .unwrap();
        assert_eq!(a.get("command").and_then(Value::as_str), Some("x"));
        assert_eq!(
            a.get("args").and_then(Value::as_array).map(|a| a.len()),
            Some(2)
        );
        assert_eq!(a.get("enabled"), Some(&Value::Bool(true)));
        assert_eq!(a.get("t"), Some(&Value::Null));
    }

    #[test]
    fn duplicate_keys_and_tables_are_refused_where_they_are() {
        assert_eq!(err("x = 1\nx = 2\n"), (Reason::DuplicateKey, 6));
        let (r, at) = err("[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.a]\n");
        assert_eq!(r, Reason::DuplicateKey);
        assert!(at >= 30, "{at}");
        // A table given inline and then again as a header.
        assert_eq!(err("a = {x = 1}\n[a]\ny = 2\n").0, Reason::DuplicateKey);
    }

    #[test]
    fn syntax_depth_and_encoding() {
        assert_eq!(err("x = \n").0, Reason::Syntax);
        assert_eq!(err("[a\n").0, Reason::Syntax);
        let deep = format!("a = {}1{}", "[".repeat(5000), "]".repeat(5000));
        assert_eq!(err(&deep).0, Reason::TooDeep);
        assert_eq!(
            parse_located(b"x = \"\xff\"").unwrap_err(),
            (Reason::InvalidUtf8, 5)
        );
        // Codex reads a leading BOM as the toml crate does: accepted.
        assert!(parse_located("\u{feff}x = 1\n".as_bytes()).is_ok());
    }
}
