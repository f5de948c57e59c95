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

/// Shape of a Claude Code `mcpServers` entry.
///
/// Transport: `type` when it is `stdio`/`http`/`sse`/`ws`; without `type`, an
/// entry with `command` is `stdio` (Claude Code's default) and anything else
/// is `unknown`. Problems are reported in this order: entry, type,
/// required field, then each known field's type.
pub fn claude_code(entry: &Value) -> Shape {
    let Some(obj) = entry.as_object() else {
        return Shape {
            valid: false,
            problems: vec!["entry-not-object"],
            transport: Transport::Unknown,
            fields: Vec::new(),
            arg_count: 0,
            env_count: 0,
            header_count: 0,
        };
    };
    let mut problems = Vec::new();
    let transport = match obj.get("type") {
        None if obj.get("command").is_some() => Transport::Stdio,
        None if obj.get("url").is_some() => {
            problems.push("missing-type");
            Transport::Unknown
        }
        None => {
            problems.push("missing-command");
            Transport::Unknown
        }
        Some(Value::String(t)) => match t.as_ref() {
            "stdio" => Transport::Stdio,
            "http" => Transport::Http,
            "sse" => Transport::Sse,
            "ws" => Transport::Ws,
            _ => {
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
        Transport::Stdio if obj.get("command").is_none() => problems.push("missing-command"),
        Transport::Http | Transport::Sse | Transport::Ws if obj.get("url").is_none() => {
            problems.push("missing-url")
        }
        _ => {}
    }
    check_string(
        obj,
        "command",
        "command-not-string",
        "empty-command",
        &mut problems,
    );
    let arg_count = check_string_array(
        obj,
        "args",
        "args-not-array",
        "arg-not-string",
        &mut problems,
    );
    let env_count = check_string_map(
        obj,
        "env",
        "env-not-object",
        "env-value-not-string",
        &mut problems,
    );
    check_string(obj, "url", "url-not-string", "empty-url", &mut problems);
    let header_count = check_string_map(
        obj,
        "headers",
        "headers-not-object",
        "header-value-not-string",
        &mut problems,
    );
    check_string(
        obj,
        "headersHelper",
        "headers-helper-not-string",
        "empty-headers-helper",
        &mut problems,
    );

    Shape {
        valid: problems.is_empty(),
        problems,
        transport,
        fields: present_fields(obj, &CLAUDE_FIELDS),
        arg_count,
        env_count,
        header_count,
    }
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
    match obj.get(key) {
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
    match obj.get(key) {
        None => 0,
        Some(Value::Array(items)) => {
            if items.iter().any(|v| v.as_str().is_none()) {
                problems.push(item_not_string);
            }
            items.len()
        }
        Some(_) => {
            problems.push(not_array);
            0
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
    match obj.get(key) {
        None => 0,
        Some(Value::Object(m)) => {
            if m.iter().any(|(_, v)| v.as_str().is_none()) {
                problems.push(value_not_string);
            }
            m.len()
        }
        Some(_) => {
            problems.push(not_object);
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Options};

    fn shape(s: &str) -> Shape {
        claude_code(&parse(s.as_bytes(), &Options::STRICT).unwrap())
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
