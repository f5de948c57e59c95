//! Declaration shape of one server entry: which known fields are present and
//! whether their JSON types check out. This is not a full validation of any
//! client's configuration, and `valid: true` never means a client accepted it.
//!
//! Only counts and field *names from a fixed list* leave this module. It must
//! never copy a command, argument, URL, env/header name or value, or an
//! unknown field's name into a [`Shape`].

use crate::json::{Object, Value};
use crate::model::{Shape, Transport};

/// Known Claude Code server fields, sorted (this is the `fields` order).
pub const CLAUDE_FIELDS: [&str; 7] = [
    "args",
    "command",
    "env",
    "headers",
    "headersHelper",
    "type",
    "url",
];

/// The `type` values a Claude Code entry may name.
const CLAUDE_TYPES: [(&str, Transport); 4] = [
    ("stdio", Transport::Stdio),
    ("http", Transport::Http),
    ("sse", Transport::Sse),
    ("ws", Transport::Ws),
];

/// Shape of a Claude Code `mcpServers` entry.
///
/// Transport: `type` when it is `stdio`/`http`/`sse`/`ws`; without `type`, an
/// entry with `command` is `stdio` (Claude Code's default) and anything else
/// is `unknown`. Problems are reported in this order: entry, type,
/// required field, then each known field's type.
pub fn claude_code(entry: &Value) -> Shape {
    let Some(obj) = entry.as_object() else {
        return Shape::not_object("entry-not-object");
    };
    // One pass over the members (entries can have many unknown fields).
    let mut known: [Option<&Value>; CLAUDE_FIELDS.len()] = [None; CLAUDE_FIELDS.len()];
    for (k, v) in obj.iter() {
        if let Ok(i) = CLAUDE_FIELDS.binary_search(&k) {
            known[i] = Some(v);
        }
    }
    let [args, command, env, headers, headers_helper, ty, url] = known;
    let mut problems = Vec::new();
    let p = &mut problems;
    let transport = transport(ty, command.is_some(), url.is_some(), &CLAUDE_TYPES, None, p);
    string_value(command, "command-not-string", "empty-command", p);
    let (arg_count, _) = string_array_value(args, "args-not-array", "arg-not-string", p);
    let env_count = map_value(env, "env-not-object", "env-value-not-string", is_string, p);
    string_value(url, "url-not-string", "empty-url", p);
    let header_count = map_value(
        headers,
        "headers-not-object",
        "header-value-not-string",
        is_string,
        p,
    );
    string_value(
        headers_helper,
        "headers-helper-not-string",
        "empty-headers-helper",
        p,
    );

    let fields = CLAUDE_FIELDS
        .iter()
        .zip(known)
        .filter_map(|(name, v)| v.map(|_| *name))
        .collect();
    Shape {
        arg_count,
        env_count,
        header_count,
        ..Shape::new(problems, transport, fields)
    }
}

/// The transport an entry declares, and the field that transport then needs.
///
/// `type`, when present, must be a string naming one of `types`; without it, `command` means
/// stdio, a lone `url` means `url_alone` (`None`: `missing-type`), and an entry with neither
/// is `missing-command`. A stdio entry needs `command`; a remote one needs `url`. Problems are
/// pushed in that order (type, then required field).
pub fn transport(
    ty: Option<&Value>,
    command: bool,
    url: bool,
    types: &[(&str, Transport)],
    url_alone: Option<Transport>,
    problems: &mut Vec<&'static str>,
) -> Transport {
    let transport = match ty {
        None if command => Transport::Stdio,
        None if url => url_alone.unwrap_or_else(|| {
            problems.push("missing-type");
            Transport::Unknown
        }),
        None => {
            problems.push("missing-command");
            Transport::Unknown
        }
        Some(Value::String(t)) => match types.iter().find(|(name, _)| *name == t.as_ref()) {
            Some(&(_, transport)) => transport,
            None => {
                problems.push("unsupported-type");
                Transport::Unknown
            }
        },
        Some(_) => {
            problems.push("type-not-string");
            Transport::Unknown
        }
    };
    match transport {
        Transport::Stdio if !command => problems.push("missing-command"),
        Transport::Http | Transport::Sse | Transport::Ws if !url => problems.push("missing-url"),
        _ => {}
    }
    transport
}

/// The subset of `known` (already sorted) present in `obj`.
pub fn present_fields(obj: &Object, known: &[&'static str]) -> Vec<&'static str> {
    known
        .iter()
        .copied()
        .filter(|k| obj.get(k).is_some())
        .collect()
}

/// A field that must be a non-empty string when present.
pub fn check_string(
    obj: &Object,
    key: &str,
    not_string: &'static str,
    empty: &'static str,
    problems: &mut Vec<&'static str>,
) {
    string_value(obj.get(key), not_string, empty, problems)
}

fn string_value(
    v: Option<&Value>,
    not_string: &'static str,
    empty: &'static str,
    problems: &mut Vec<&'static str>,
) {
    match v {
        None => {}
        Some(Value::String(s)) if s.is_empty() => problems.push(empty),
        Some(Value::String(_)) => {}
        Some(_) => problems.push(not_string),
    }
}

/// A field that must be an array of strings when present; returns its length
/// (0 when absent or not an array).
pub fn check_string_array(
    obj: &Object,
    key: &str,
    not_array: &'static str,
    item_not_string: &'static str,
    problems: &mut Vec<&'static str>,
) -> usize {
    string_array_value(obj.get(key), not_array, item_not_string, problems).0
}

/// An array of strings when present: its length (0 when absent or not an
/// array) and whether it is absent or one.
pub fn string_array_value(
    v: Option<&Value>,
    not_array: &'static str,
    item_not_string: &'static str,
    problems: &mut Vec<&'static str>,
) -> (usize, bool) {
    match v {
        None => (0, true),
        Some(Value::Array(items)) => {
            let ok = items.iter().all(is_string);
            if !ok {
                problems.push(item_not_string);
            }
            (items.len(), ok)
        }
        Some(_) => {
            problems.push(not_array);
            (0, false)
        }
    }
}

/// A field that must be an object of string values when present; returns
/// its member count (0 when absent or not an object).
pub fn check_string_map(
    obj: &Object,
    key: &str,
    not_object: &'static str,
    value_not_string: &'static str,
    problems: &mut Vec<&'static str>,
) -> usize {
    map_value(
        obj.get(key),
        not_object,
        value_not_string,
        is_string,
        problems,
    )
}

/// An object whose every value passes `value_ok`, when present; returns its
/// member count (0 when absent or not an object).
pub fn map_value(
    v: Option<&Value>,
    not_object: &'static str,
    bad_value: &'static str,
    value_ok: fn(&Value) -> bool,
    problems: &mut Vec<&'static str>,
) -> usize {
    match v {
        None => 0,
        Some(Value::Object(m)) => {
            if m.iter().any(|(_, v)| !value_ok(v)) {
                problems.push(bad_value);
            }
            m.len()
        }
        Some(_) => {
            problems.push(not_object);
            0
        }
    }
}

/// Whether a JSON value is a string.
pub fn is_string(v: &Value) -> bool {
    v.as_str().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Options};

    fn shape(s: &str) -> Shape {
        claude_code(&parse(s.as_bytes(), &Options::STRICT).unwrap())
    }

    #[test]
    fn known_fields_are_sorted_for_binary_search() {
        assert!(CLAUDE_FIELDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_stdio_entry_counts_without_copying() {
        let s = shape(r#"{"command":"x","args":["a","b"],"env":{"K":"v"},"zzz":1}"#);
        assert!(s.valid);
        assert_eq!(s.transport, Transport::Stdio);
        assert_eq!(s.fields, vec!["args", "command", "env"]);
        assert_eq!((s.arg_count, s.env_count, s.header_count), (2, 1, 0));
    }

    #[test]
    fn remote_entries() {
        let s = shape(r#"{"type":"http","url":"u","headers":{"A":"b","C":"d"}}"#);
        assert!(s.valid);
        assert_eq!(s.transport, Transport::Http);
        assert_eq!(s.header_count, 2);
        assert_eq!(shape(r#"{"type":"sse"}"#).problems, vec!["missing-url"]);
        assert_eq!(shape(r#"{"url":"u"}"#).problems, vec!["missing-type"]);
    }

    #[test]
    fn type_problems() {
        assert_eq!(
            shape(r#"{"type":"grpc","command":"x"}"#).problems,
            vec!["unsupported-type"]
        );
        assert_eq!(shape(r#"{"type":3}"#).problems, vec!["type-not-string"]);
        assert_eq!(shape(r#"{}"#).problems, vec!["missing-command"]);
        assert_eq!(
            shape(r#"{"type":"stdio"}"#).problems,
            vec!["missing-command"]
        );
    }

    #[test]
    fn field_type_problems_keep_counts_honest() {
        let s =
            shape(r#"{"command":1,"args":"a b","env":[],"headers":{"h":1},"headersHelper":""}"#);
        assert!(!s.valid);
        assert_eq!(
            s.problems,
            vec![
                "command-not-string",
                "args-not-array",
                "env-not-object",
                "header-value-not-string",
                "empty-headers-helper"
            ]
        );
        assert_eq!((s.arg_count, s.env_count, s.header_count), (0, 0, 1));
        let s = shape(r#"{"command":"x","args":["a",2],"env":{"K":null}}"#);
        assert_eq!(s.problems, vec!["arg-not-string", "env-value-not-string"]);
        assert_eq!(s.arg_count, 2);
    }

    #[test]
    fn non_objects_are_invalid_entries() {
        for e in ["1", "\"npx\"", "[]", "null"] {
            let s = shape(e);
            assert!(!s.valid);
            assert_eq!(s.problems, vec!["entry-not-object"]);
            assert_eq!(s.transport, Transport::Unknown);
        }
    }
}
