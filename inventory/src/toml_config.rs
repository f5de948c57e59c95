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
//! Owns too the bound on the work one TOML file may cost: a file whose tokens
//! would build more than [`MAX_NODES`] nodes is refused before it is parsed,
//! `too-large` / `too-many-nodes`, as a YAML file past the same bound is. A
//! dotted key builds one table per segment, and the crate's tables are large:
//! 1 MiB of `kN.a.a…a = 1` lines took 0.6 s and 575 MB to parse, 64 project
//! levels of them would take 40 s.
//!
//! It must never evaluate, expand or print a value.

use std::borrow::Cow;

use crate::json::{Object, Value};
use crate::model::Reason;

/// The text a converted number carries (its value is never needed).
const NUMBER: &str = "0";

/// Nodes one TOML file's tree may hold, as counted by `tree_tokens`: the
/// YAML reader's bound ([`crate::profile::dsh::yaml::MAX_NODES`]), some fifty
/// times a real configuration and far below what makes a parse costly.
pub const MAX_NODES: usize = crate::profile::dsh::yaml::MAX_NODES;

/// Parse a TOML document into a table [`Value`], or the reason and byte
/// offset it was refused at (`too-many-nodes` past [`MAX_NODES`], checked
/// first: such a file is never parsed, so its other defects go unreported).
pub fn parse_located(bytes: &[u8]) -> Result<Value<'static>, (Reason, usize)> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => return Err((Reason::InvalidUtf8, e.valid_up_to())),
    };
    if tree_tokens(text, MAX_NODES) > MAX_NODES {
        return Err((Reason::TooManyNodes, 0));
    }
    match text.parse::<toml::Table>() {
        Ok(table) => Ok(Value::Object(object(table))),
        Err(e) => {
            let at = e.span().map_or(0, |s| s.start);
            Err((reason_of(e.message()), at))
        }
    }
}

/// How many nodes `text`'s tree would hold, counted from the tokens of the
/// toml crate's own lexer (strings and comments are one token each, so
/// nothing inside them counts), at most `stop + 1`: every `=` (a key and its
/// value), every `.` (one more key segment, a table of its own; a float's
/// point counts too), every `,` (one more item or member), every `[` (an
/// array or a table header) and every `{` (an inline table). An overestimate
/// of the tables and values built, by a small factor at most.
fn tree_tokens(text: &str, stop: usize) -> usize {
    use toml_parser::lexer::TokenKind;
    toml_parser::Source::new(text)
        .lex()
        .filter(|token| {
            matches!(
                token.kind(),
                TokenKind::Equals
                    | TokenKind::Dot
                    | TokenKind::Comma
                    | TokenKind::LeftSquareBracket
                    | TokenKind::LeftCurlyBracket
            )
        })
        .take(stop.saturating_add(1))
        .count()
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

    /// `lines` lines `kN.a…a = 1` with `dots` dots each: `dots + 1` nodes a line.
    fn dotted(lines: usize, dots: usize) -> String {
        (0..lines)
            .map(|i| format!("k{i}{} = 1\n", ".a".repeat(dots)))
            .collect()
    }

    #[test]
    fn a_tree_past_the_node_bound_is_refused_before_it_is_parsed() {
        assert_eq!(MAX_NODES, 131_072);
        // 4,096 lines of 31 dots and an `=`: exactly the bound, parsed.
        let at_bound = dotted(MAX_NODES / 32, 31);
        assert_eq!(tree_tokens(&at_bound, MAX_NODES), MAX_NODES);
        assert!(parse_located(at_bound.as_bytes()).is_ok());
        // One more segment: refused, never parsed (a syntax error after it is
        // not what the file is refused for).
        let past = format!("{at_bound}z.a = 1\n");
        assert_eq!(err(&past), (Reason::TooManyNodes, 0));
        assert_eq!(err(&format!("{past}x = \n")), (Reason::TooManyNodes, 0));
        // One-token-a-line forms count too: keys, items, headers, inline tables.
        let keys: String = (0..=MAX_NODES).map(|i| format!("k{i}=1\n")).collect();
        assert_eq!(err(&keys).0, Reason::TooManyNodes);
        let items = format!("x = [{}]\n", vec!["{}"; MAX_NODES / 2 + 1].join(","));
        assert_eq!(err(&items).0, Reason::TooManyNodes);
        let headers: String = (0..=MAX_NODES).map(|i| format!("[t{i}]\n")).collect();
        assert_eq!(err(&headers).0, Reason::TooManyNodes);
    }

    #[test]
    fn what_strings_and_comments_hold_is_not_counted() {
        let body = "=.,[{".repeat(MAX_NODES);
        for doc in [
            format!("s = \"{body}\"\n"),
            format!("s = '{body}'\n"),
            format!("s = \"\"\"\n{body}\n\"\"\"\n"),
            format!("s = '''\n{body}\n'''\n"),
            format!("# {body}\ns = 1\n"),
        ] {
            assert_eq!(tree_tokens(&doc, MAX_NODES), 1, "{}", &doc[..8]);
            assert!(parse_located(doc.as_bytes()).is_ok());
        }
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
