//! Entry grammars of the `mcpServers` family: one declarative [`Grammar`]
//! (known fields and their types, the `type` values, the URL keys, the
//! per-server switch) per client, checked by [`check`]. Cursor, Windsurf,
//! Claude Desktop, Kiro, Amazon Q, Cline, Roo Code, Gemini CLI, Continue and
//! Crush differ only in these tables; each client's table is in its own module, and
//! the tables are documented in `inventory/CLIENTS.md`.
//!
//! Like `crate::shape`, only counts, fixed field names and fixed problem codes
//! leave this module: never a command, argument, URL, env or header name or
//! value, or an unknown field's name.

use crate::json::{Object, Value};
use crate::model::{Shape, Transport};
use crate::profile::layers::Checked;
use crate::shape::{is_string, map_value, string_array_value};

/// What a known field must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A non-empty string.
    String,
    StringArray,
    /// An object of string values.
    StringMap,
    Bool,
    Number,
    Object,
    /// Anything (known, not checked).
    Any,
}

/// One known field: its name, what it must hold, and the problem code when it
/// does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub problem: &'static str,
}

/// Shorthand for the field tables.
pub const fn field(name: &'static str, kind: Kind, problem: &'static str) -> Field {
    Field {
        name,
        kind,
        problem,
    }
}

/// Fields most clients spell alike, with their usual problem codes.
pub const ARGS: Field = field("args", Kind::StringArray, "invalid-args");
pub const COMMAND: Field = field("command", Kind::String, "invalid-command");
pub const DISABLED: Field = field("disabled", Kind::Bool, "invalid-disabled");
pub const ENV: Field = field("env", Kind::StringMap, "invalid-env");
pub const HEADERS: Field = field("headers", Kind::StringMap, "invalid-headers");
pub const TIMEOUT: Field = field("timeout", Kind::Number, "invalid-timeout");
pub const TYPE: Field = field("type", Kind::Any, "");
pub const URL: Field = field("url", Kind::String, "invalid-url");

/// The `type` values `stdio`, `sse` and `http` (Gemini CLI, Crush).
pub const STDIO_SSE_HTTP: &[(&str, Transport)] = &[
    ("stdio", Transport::Stdio),
    ("sse", Transport::Sse),
    ("http", Transport::Http),
];

/// A client's per-server on/off switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    None,
    /// `enabled: false` switches the server off (default on).
    Enabled(&'static str),
    /// `disabled: true` switches the server off (default on).
    Disabled(&'static str),
}

/// One client's entry grammar.
#[derive(Debug, Clone, Copy)]
pub struct Grammar {
    /// Known fields in report (`fields`) order: sorted by name.
    pub fields: &'static [Field],
    /// The key naming the transport, when the client has one.
    pub type_key: Option<&'static str>,
    /// The accepted transport names.
    pub types: &'static [(&'static str, Transport)],
    /// Keys holding a remote endpoint, in the client's order of preference,
    /// and the transport each means when no type is given.
    pub urls: &'static [(&'static str, Transport)],
    /// Without a type, whether a lone URL means the transport of its key
    /// (`true`) or is `missing-type` (`false`).
    pub url_infers_transport: bool,
    /// Whether an entry without a type is refused (`missing-type`) even
    /// when it has a `command` (Crush starts no server without one).
    pub type_required: bool,
    pub switch: Switch,
    /// Where the header map is (a path of keys), for `headerCount`.
    pub headers: &'static [&'static str],
}

impl Grammar {
    /// The plain Claude-style entry: `command`, `args`, `env`, optional
    /// `type`/`url`/`headers`.
    pub const fn base(fields: &'static [Field]) -> Grammar {
        Grammar {
            fields,
            type_key: None,
            types: &[],
            urls: &[],
            url_infers_transport: true,
            type_required: false,
            switch: Switch::None,
            headers: &["headers"],
        }
    }
}

/// Check one entry against `g`.
pub fn check(entry: &Value, g: &Grammar) -> Checked {
    let Some(obj) = entry.as_object() else {
        return Checked::new(Shape::not_object("entry-not-object"), None, &[], None);
    };
    let mut problems = Vec::new();
    let command = obj.get("command");
    let url = g.urls.iter().find(|(k, _)| obj.get(k).is_some());
    let transport = transport(obj, g, command.is_some(), url, &mut problems);
    let mut arg_count = 0;
    let mut env_count = 0;
    for f in g.fields {
        let v = obj.get(f.name);
        let Some(v) = v else { continue };
        match f.kind {
            Kind::String => match v {
                Value::String(s) if s.is_empty() => problems.push(f.problem),
                Value::String(_) => {}
                _ => problems.push(f.problem),
            },
            Kind::StringArray => {
                let (n, _) = string_array_value(Some(v), f.problem, f.problem, &mut problems);
                if f.name == "args" {
                    arg_count = n;
                }
            }
            Kind::StringMap => {
                let n = map_value(Some(v), f.problem, f.problem, is_string, &mut problems);
                if f.name == "env" {
                    env_count = n;
                }
            }
            Kind::Bool if !matches!(v, Value::Bool(_)) => problems.push(f.problem),
            Kind::Number if !matches!(v, Value::Number(_)) => problems.push(f.problem),
            Kind::Object if v.as_object().is_none() => problems.push(f.problem),
            _ => {}
        }
    }
    problems.dedup();
    let header_count = nested(obj, g.headers)
        .and_then(Value::as_object)
        .map_or(0, Object::len);
    let fields = present_fields(obj, g);
    let enabled = switch(obj, g.switch);
    let shape = Shape {
        arg_count,
        env_count,
        header_count,
        ..Shape::new(problems, transport, fields)
    };
    let args = leading_args(obj.get("args"));
    Checked::new(shape, command.and_then(Value::as_str), &args, enabled)
}

/// The names of `g`'s known fields that `obj` holds, in table order.
pub fn present_fields(obj: &Object, g: &Grammar) -> Vec<&'static str> {
    g.fields
        .iter()
        .filter(|f| obj.get(f.name).is_some())
        .map(|f| f.name)
        .collect()
}

/// The value at a path of keys.
pub fn nested<'o, 'a>(obj: &'o Object<'a>, path: &[&str]) -> Option<&'o Value<'a>> {
    let (first, rest) = path.split_first()?;
    let mut v = obj.get(first)?;
    for k in rest {
        v = v.as_object()?.get(k)?;
    }
    Some(v)
}

/// The leading string arguments (at most 16; a non-string one ends them).
pub fn leading_args<'v>(args: Option<&'v Value>) -> Vec<&'v str> {
    match args {
        Some(Value::Array(a)) => a.iter().map_while(Value::as_str).take(16).collect(),
        _ => Vec::new(),
    }
}

/// The per-server switch's value (`None` when the client has none; a switch
/// of the wrong type counts as on, its shape problem says why).
pub fn switch(obj: &Object, s: Switch) -> Option<bool> {
    match s {
        Switch::None => None,
        Switch::Enabled(k) => Some(!matches!(obj.get(k), Some(Value::Bool(false)))),
        Switch::Disabled(k) => Some(!matches!(obj.get(k), Some(Value::Bool(true)))),
    }
}

fn transport(
    obj: &Object,
    g: &Grammar,
    has_command: bool,
    url: Option<&(&'static str, Transport)>,
    problems: &mut Vec<&'static str>,
) -> Transport {
    let declared = g.type_key.and_then(|k| obj.get(k));
    let t = match declared {
        Some(Value::String(t)) => match g.types.iter().find(|(name, _)| *name == t.as_ref()) {
            Some(&(_, t)) => t,
            None => {
                problems.push("unsupported-type");
                Transport::Unknown
            }
        },
        Some(_) => {
            problems.push("type-not-string");
            Transport::Unknown
        }
        None if g.type_required => {
            problems.push("missing-type");
            Transport::Unknown
        }
        None if has_command => Transport::Stdio,
        None => match url {
            Some(&(_, t)) if g.url_infers_transport => t,
            Some(_) => {
                problems.push("missing-type");
                Transport::Unknown
            }
            None => {
                problems.push("missing-command");
                Transport::Unknown
            }
        },
    };
    match t {
        Transport::Stdio if !has_command => problems.push("missing-command"),
        Transport::Http | Transport::Sse | Transport::Ws if url.is_none() => {
            problems.push("missing-url")
        }
        _ => {}
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Options};

    const FIELDS: [Field; 7] = [
        field("args", Kind::StringArray, "args-not-array-of-strings"),
        field("command", Kind::String, "command-not-string"),
        field("disabled", Kind::Bool, "disabled-not-boolean"),
        field("env", Kind::StringMap, "env-not-map-of-strings"),
        field("headers", Kind::StringMap, "headers-not-map-of-strings"),
        field("serverUrl", Kind::String, "server-url-not-string"),
        field("type", Kind::String, "type-not-string"),
    ];

    const G: Grammar = Grammar {
        type_key: Some("type"),
        types: &[("stdio", Transport::Stdio), ("sse", Transport::Sse)],
        urls: &[("serverUrl", Transport::Http)],
        switch: Switch::Disabled("disabled"),
        ..Grammar::base(&FIELDS)
    };

    fn c(s: &str) -> Checked {
        check(&parse(s.as_bytes(), &Options::STRICT).unwrap(), &G)
    }

    #[test]
    fn a_stdio_entry_counts_and_classifies() {
        let got = c(r#"{"command":"npx","args":["-y","p"],"env":{"A":"1"},"zz":1}"#);
        assert!(got.shape.valid, "{:?}", got.shape.problems);
        assert_eq!(got.shape.fields, ["args", "command", "env"]);
        assert_eq!((got.shape.arg_count, got.shape.env_count), (2, 1));
        assert_eq!(got.launch, crate::model::Launch::PackageRunner);
        assert_eq!(got.enabled, Some(true));
    }

    #[test]
    fn urls_types_and_switches() {
        let got = c(r#"{"serverUrl":"u","headers":{"a":"b"},"disabled":true}"#);
        assert_eq!(got.shape.transport, Transport::Http);
        assert_eq!(got.shape.header_count, 1);
        assert_eq!(got.enabled, Some(false));
        assert_eq!(c(r#"{"type":"sse"}"#).shape.problems, ["missing-url"]);
        assert_eq!(
            c(r#"{"type":"ws","command":"x"}"#).shape.problems,
            ["unsupported-type"]
        );
        assert_eq!(c(r#"{}"#).shape.problems, ["missing-command"]);
        assert_eq!(
            c(r#"{"command":1,"disabled":"yes","args":"a"}"#)
                .shape
                .problems,
            [
                "args-not-array-of-strings",
                "command-not-string",
                "disabled-not-boolean"
            ]
        );
        assert_eq!(c("[]").shape.problems, ["entry-not-object"]);
    }

    #[test]
    fn a_required_type_is_missing_even_beside_a_command() {
        const TYPED: Grammar = Grammar {
            type_required: true,
            url_infers_transport: false,
            ..G
        };
        let t = |s: &str| check(&parse(s.as_bytes(), &Options::STRICT).unwrap(), &TYPED);
        let got = t(r#"{"command":"npx"}"#);
        assert_eq!(got.shape.problems, ["missing-type"]);
        assert_eq!(got.launch, crate::model::Launch::Unknown);
        assert_eq!(t(r#"{"serverUrl":"u"}"#).shape.problems, ["missing-type"]);
        assert!(t(r#"{"type":"stdio","command":"npx"}"#).shape.valid);
    }
}
