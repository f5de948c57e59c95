//! Declaration shape of one VS Code / Copilot server entry, in the two entry
//! formats this profile meets: VS Code `servers` entries (`.vscode/mcp.json`
//! and the user-profile `mcp.json`) and portable `mcpServers` entries (the
//! Copilot files, including each value of a legacy bare map). The tables are
//! in `inventory/VSCODE.md`; keep the two in step.
//!
//! Like `crate::shape`, only counts, fixed field names and problem codes leave
//! this module. It must never copy a command, argument, URL, env/header name
//! or value, or an unknown field's name into a [`Shape`], and never decide
//! anything beyond the declaration's shape.

use crate::json::{Object, Value};
use crate::model::{Shape, Transport};
use crate::shape::{
    check_string, check_string_array, check_string_map, map_value, present_fields, transport,
};

/// Known VS Code `servers` entry fields, sorted (the `fields` order).
pub const VSCODE_FIELDS: [&str; 9] = [
    "args", "command", "cwd", "dev", "env", "envFile", "headers", "type", "url",
];

/// Known portable (`mcpServers`) entry fields, sorted.
pub const PORTABLE_FIELDS: [&str; 9] = [
    "args", "command", "cwd", "env", "headers", "timeout", "tools", "type", "url",
];

/// The `type` values a VS Code entry may name.
const VSCODE_TYPES: [(&str, Transport); 3] = [
    ("stdio", Transport::Stdio),
    ("http", Transport::Http),
    ("sse", Transport::Sse),
];

/// The `type` values a portable entry may name.
const PORTABLE_TYPES: [(&str, Transport); 4] = [
    ("local", Transport::Stdio),
    ("stdio", Transport::Stdio),
    ("http", Transport::Http),
    ("sse", Transport::Sse),
];

/// Which entry grammar a container uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryFormat {
    /// VS Code `servers`: `type` is `stdio`/`http`/`sse` or inferred from
    /// `command` (stdio) or `url` (http); env values may be strings, finite
    /// numbers or null.
    VsCode,
    /// Portable `mcpServers`: `type` is `local`/`stdio`/`http`/`sse`; without
    /// `type`, `command` means stdio and a bare `url` is `missing-type`; env
    /// values are strings.
    Portable,
}

/// Shape of a VS Code `servers` entry.
pub fn vscode(entry: &Value) -> Shape {
    shape(entry, EntryFormat::VsCode)
}

/// Shape of a portable `mcpServers` (or bare-map) entry.
pub fn portable(entry: &Value) -> Shape {
    shape(entry, EntryFormat::Portable)
}

fn shape(entry: &Value, format: EntryFormat) -> Shape {
    let Some(obj) = entry.as_object() else {
        return Shape::not_object("entry-not-object");
    };
    let mut problems = Vec::new();
    let has = |k: &str| obj.get(k).is_some();
    // VS Code infers a remote server from `url`; the portable format needs an
    // explicit `type` for it.
    let (types, url_alone): (&[_], _) = match format {
        EntryFormat::VsCode => (&VSCODE_TYPES, Some(Transport::Http)),
        EntryFormat::Portable => (&PORTABLE_TYPES, None),
    };
    let transport = transport(
        obj.get("type"),
        has("command"),
        has("url"),
        types,
        url_alone,
        &mut problems,
    );
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
    let env_count = match format {
        EntryFormat::VsCode => check_vscode_env(obj, &mut problems),
        EntryFormat::Portable => check_string_map(
            obj,
            "env",
            "env-not-object",
            "env-value-not-string",
            &mut problems,
        ),
    };
    check_string(obj, "cwd", "cwd-not-string", "empty-cwd", &mut problems);
    check_string(obj, "url", "url-not-string", "empty-url", &mut problems);
    let header_count = check_string_map(
        obj,
        "headers",
        "headers-not-object",
        "header-value-not-string",
        &mut problems,
    );
    match format {
        EntryFormat::VsCode => {
            check_string(
                obj,
                "envFile",
                "env-file-not-string",
                "empty-env-file",
                &mut problems,
            );
            if obj.get("dev").is_some_and(|v| v.as_object().is_none()) {
                problems.push("dev-not-object");
            }
        }
        EntryFormat::Portable => {
            check_string_array(
                obj,
                "tools",
                "tools-not-array",
                "tool-not-string",
                &mut problems,
            );
            if obj
                .get("timeout")
                .is_some_and(|v| !matches!(v, Value::Number(_)))
            {
                problems.push("timeout-not-number");
            }
        }
    }
    let fields = match format {
        EntryFormat::VsCode => present_fields(obj, &VSCODE_FIELDS),
        EntryFormat::Portable => present_fields(obj, &PORTABLE_FIELDS),
    };
    Shape {
        arg_count,
        env_count,
        header_count,
        ..Shape::new(problems, transport, fields)
    }
}

/// VS Code `env`: an object whose values are strings, finite numbers or
/// null. Returns its member count (0 when absent or not an object).
fn check_vscode_env(obj: &Object, problems: &mut Vec<&'static str>) -> usize {
    let ok = |v: &Value| match v {
        Value::String(_) | Value::Null => true,
        Value::Number(n) => is_finite(n),
        _ => false,
    };
    map_value(
        obj.get("env"),
        "env-not-object",
        "env-value-not-string-number-or-null",
        ok,
        problems,
    )
}

/// Whether a JSON number (kept as its text) is finite as a double, the way a
/// JavaScript host reads it: `1e400` is `Infinity`, hence not finite.
fn is_finite(text: &str) -> bool {
    text.parse::<f64>().is_ok_and(f64::is_finite)
}

/// Whether the entry's `env` holds a value the string-only guard recognizer
/// does not understand (a number or null). Such a declaration keeps
/// `guardForm: unknown` even when its shape is valid.
pub fn env_beyond_strings(entry: &Value) -> bool {
    entry
        .as_object()
        .and_then(|o| o.get("env"))
        .and_then(Value::as_object)
        .is_some_and(|m| m.iter().any(|(_, v)| v.as_str().is_none()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Options};

    fn v(s: &str) -> Shape {
        vscode(&parse(s.as_bytes(), &Options::JSONC).unwrap())
    }

    fn p(s: &str) -> Shape {
        portable(&parse(s.as_bytes(), &Options::STRICT).unwrap())
    }

    #[test]
    fn vscode_transports_are_inferred_from_command_or_url() {
        assert_eq!(v(r#"{"command":"x"}"#).transport, Transport::Stdio);
        let s = v(r#"{"url":"u"}"#);
        assert_eq!((s.transport, s.valid), (Transport::Http, true));
        assert_eq!(v(r#"{"type":"sse","url":"u"}"#).transport, Transport::Sse);
        assert_eq!(
            v(r#"{"type":"local","command":"x"}"#).problems,
            ["unsupported-type"]
        );
        assert_eq!(
            v(r#"{"type":"ws","url":"u"}"#).problems,
            ["unsupported-type"]
        );
        assert_eq!(v(r#"{}"#).problems, ["missing-command"]);
        assert_eq!(v(r#"{"type":"http"}"#).problems, ["missing-url"]);
    }

    #[test]
    fn portable_transports_need_a_type_for_remote_entries() {
        assert_eq!(
            p(r#"{"type":"local","command":"x"}"#).transport,
            Transport::Stdio
        );
        assert_eq!(p(r#"{"command":"x"}"#).transport, Transport::Stdio);
        let s = p(r#"{"url":"u"}"#);
        assert_eq!(
            (s.transport, s.problems),
            (Transport::Unknown, vec!["missing-type"])
        );
        assert_eq!(p(r#"{"type":"http","url":"u"}"#).transport, Transport::Http);
        assert_eq!(p(r#"{"type":"local"}"#).problems, ["missing-command"]);
        assert_eq!(p(r#"{"type":1}"#).problems, ["type-not-string"]);
    }

    #[test]
    fn vscode_env_values_may_be_strings_finite_numbers_or_null() {
        let s = v(r#"{"command":"x","env":{"A":"1","B":2,"C":null,"D":-1.5e3}}"#);
        assert!(s.valid, "{:?}", s.problems);
        assert_eq!(s.env_count, 4);
        for bad in [r#"true"#, r#"[]"#, r#"{}"#, r#"1e400"#, r#"-1e999"#] {
            let s = v(&format!(r#"{{"command":"x","env":{{"A":{bad}}}}}"#));
            assert_eq!(s.problems, ["env-value-not-string-number-or-null"], "{bad}");
        }
        // The portable format stays string-only.
        assert_eq!(
            p(r#"{"command":"x","env":{"A":2}}"#).problems,
            ["env-value-not-string"]
        );
    }

    #[test]
    fn env_beyond_strings_is_seen() {
        let e = |s: &str| env_beyond_strings(&parse(s.as_bytes(), &Options::STRICT).unwrap());
        assert!(e(r#"{"env":{"A":"x","B":null}}"#));
        assert!(e(r#"{"env":{"A":3}}"#));
        assert!(!e(r#"{"env":{"A":"x"}}"#));
        assert!(!e(r#"{"command":"x"}"#));
        assert!(!e(r#"{"env":[1]}"#));
    }

    #[test]
    fn format_specific_fields_are_known_and_checked() {
        let s = v(r#"{"command":"x","cwd":"d","envFile":"f","dev":{"watch":"w"},"inputs":1}"#);
        assert!(s.valid);
        assert_eq!(s.fields, ["command", "cwd", "dev", "envFile"]);
        assert_eq!(
            v(r#"{"command":"x","cwd":1,"envFile":"","dev":[]}"#).problems,
            ["cwd-not-string", "empty-env-file", "dev-not-object"]
        );
        let s = p(r#"{"type":"local","command":"x","tools":["*"],"timeout":30}"#);
        assert!(s.valid);
        assert_eq!(s.fields, ["command", "timeout", "tools", "type"]);
        assert_eq!(
            p(r#"{"command":"x","tools":"*","timeout":"30"}"#).problems,
            ["tools-not-array", "timeout-not-number"]
        );
    }

    #[test]
    fn non_objects_are_invalid_entries_in_both_formats() {
        for e in ["1", "null", "[]", "\"cmd\""] {
            assert_eq!(v(e).problems, ["entry-not-object"]);
            assert_eq!(p(e).problems, ["entry-not-object"]);
        }
    }
}
