//! One DSH server row: its shape under the DSH dialect (`format.md`), its
//! activity (`disabled` / `enabled`), the `${VAR}` references it carries, and
//! the raw service identity that takes part in shadowing.
//!
//! The same rules cover JSON entries (`mcpServers.<name>`) and native YAML
//! rows (`insert[].config`, name in `config.serverName`, `disabled` on the
//! row itself). See `inventory/DSH.md` for every decision.
//!
//! The identity (command + args, or url) is the only place a command, an
//! argument or a URL is copied, and it never leaves the `dsh` module: it is
//! only compared for equality. Everything else that leaves is a count, a
//! fixed field name or a fixed problem code. Nothing is ever expanded.

use crate::json::{Object, Value};
use crate::model::{Shape, Transport};
use crate::shape::{check_string, present_fields};

/// Which file format the row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `mcpServers.<name>`: the key is the name, the entry is the config.
    Json,
    /// An `insert` row: `config.serverName`, `config.*`, row-level `disabled`.
    Yaml,
}

/// Known fields of a DSH entry (the JSON entry or the YAML `config`), in
/// byte order: the `shape.fields` order.
pub const FIELDS: [&str; 17] = [
    "args",
    "command",
    "cwd",
    "disabled",
    "enabled",
    "env",
    "failOnStartupError",
    "headers",
    "httpUrl",
    "maxInstructionBytes",
    "reconnect",
    "serverName",
    "toolCallTimeoutMs",
    "tools",
    "transport",
    "type",
    "url",
];

/// A service identity as written (before `${VAR}` expansion). Equal
/// identities collide; it is never printed or serialized.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Identity {
    /// `[command, args…]`.
    Stdio(Vec<String>),
    /// The url (or httpUrl).
    Http(String),
}

/// Everything the profile needs about one row.
#[derive(Debug, Clone)]
pub struct Row {
    /// The declared name (`""` when there is none).
    pub name: String,
    pub shape: Shape,
    pub disabled: bool,
    pub skipped: bool,
    pub placeholder_count: usize,
    /// `Some` only for a valid stdio row with a command or an http row with
    /// a url.
    pub identity: Option<Identity>,
}

impl Row {
    /// Whether the row enters the shadow chain (holds keys when it wins):
    /// a valid, not-skipped row. `disabled` rows do.
    pub fn claims(&self) -> bool {
        self.shape.valid && !self.skipped
    }
}

/// Whether a server name is `[A-Za-z0-9_-]{1,32}`.
pub fn valid_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The normalized name: ASCII-lowercased, non-alphanumerics removed.
pub fn normalized_name(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// A JSON entry: `mcpServers[name]`.
pub fn json_row(name: &str, entry: &Value, fold_case: bool) -> Row {
    interpret(
        Some(name),
        entry.as_object(),
        None,
        Dialect::Json,
        fold_case,
    )
    .unwrap_or_else(|| not_object(name.to_owned(), "entry-not-object"))
}

/// A YAML `insert` row.
pub fn yaml_row(row: &Value, fold_case: bool) -> Row {
    let Some(obj) = row.as_object() else {
        return not_object(String::new(), "row-not-object");
    };
    let config = match obj.get("config") {
        None => return not_object(String::new(), "missing-config"),
        Some(Value::Object(c)) => c,
        Some(_) => return not_object(String::new(), "config-not-object"),
    };
    let name = config.get("serverName").and_then(Value::as_str);
    let mut r = interpret(name, Some(config), Some(obj), Dialect::Yaml, fold_case)
        .expect("config is an object");
    if name.is_none() {
        r.name = String::new();
    }
    r
}

fn not_object(name: String, problem: &'static str) -> Row {
    Row {
        name,
        shape: Shape {
            valid: false,
            problems: vec![problem],
            transport: Transport::Unknown,
            fields: Vec::new(),
            arg_count: 0,
            env_count: 0,
            header_count: 0,
        },
        disabled: false,
        skipped: false,
        placeholder_count: 0,
        identity: None,
    }
}

/// The transport a `type` or `transport` value names.
fn named_transport(v: &Value) -> Result<Transport, &'static str> {
    match v.as_str() {
        None => Err("not-string"),
        Some("stdio") => Ok(Transport::Stdio),
        Some("http" | "streamable-http") => Ok(Transport::Http),
        Some("sse") => Ok(Transport::Sse),
        Some(_) => Err("unsupported"),
    }
}

/// Check one config object. `name` is the JSON key or `config.serverName`
/// (when it is a string); `row` is the YAML row around `config`.
fn interpret(
    name: Option<&str>,
    config: Option<&Object>,
    row: Option<&Object>,
    dialect: Dialect,
    fold_case: bool,
) -> Option<Row> {
    let obj = config?;
    let mut problems: Vec<&'static str> = Vec::new();

    // Name.
    match (dialect, name) {
        (Dialect::Yaml, None) => problems.push(match obj.get("serverName") {
            None => "missing-name",
            Some(_) => "name-not-string",
        }),
        (_, Some(n)) if !valid_name(n) => problems.push("invalid-name"),
        _ => {}
    }

    // Activity. YAML: `disabled` on the row; JSON: `disabled` and `enabled`
    // in the entry.
    let disabled_at = match dialect {
        Dialect::Json => obj.get("disabled"),
        Dialect::Yaml => row.and_then(|r| r.get("disabled")),
    };
    let disabled = match disabled_at {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            problems.push("disabled-not-boolean");
            false
        }
    };
    let skipped = match (dialect, obj.get("enabled")) {
        (Dialect::Yaml, _) | (_, None) => false,
        (_, Some(Value::Bool(b))) => !*b,
        (_, Some(_)) => {
            problems.push("enabled-not-boolean");
            false
        }
    };

    // Transport.
    let declared = |key: &str, not_string, unsupported| match obj.get(key).map(named_transport) {
        None => (None, None),
        Some(Ok(t)) => (Some(t), None),
        Some(Err("not-string")) => (None, Some(not_string)),
        Some(Err(_)) => (None, Some(unsupported)),
    };
    let (by_type, type_problem) = declared("type", "type-not-string", "unsupported-type");
    let (by_transport, transport_problem) =
        declared("transport", "transport-not-string", "unsupported-transport");
    problems.extend(type_problem);
    problems.extend(transport_problem);
    let has_command = obj.get("command").is_some();
    let has_url = obj.get("url").is_some() || obj.get("httpUrl").is_some();
    let transport = match (by_type, by_transport) {
        (Some(a), Some(b)) if a != b => {
            problems.push("transport-type-conflict");
            Transport::Unknown
        }
        (Some(t), _) | (None, Some(t)) => t,
        (None, None) if type_problem.is_some() || transport_problem.is_some() => Transport::Unknown,
        (None, None) if has_command && has_url => {
            problems.push("command-and-url-without-type");
            Transport::Unknown
        }
        (None, None) if has_url => Transport::Http,
        (None, None) => Transport::Stdio,
    };
    if transport == Transport::Sse {
        problems.push("sse-unsupported");
    }
    let url = obj.get("url").and_then(Value::as_str);
    let http_url = obj.get("httpUrl").and_then(Value::as_str);
    if let (Some(a), Some(b)) = (url, http_url) {
        if a != b {
            problems.push("url-httpurl-conflict");
        }
    }
    // A disabled placeholder may omit what it would need to start.
    if !disabled {
        match transport {
            Transport::Stdio if !has_command => problems.push("missing-command"),
            Transport::Http if !has_url => problems.push("missing-url"),
            _ => {}
        }
    }

    // Field types.
    let null_ok = dialect == Dialect::Yaml; // `KEY: null` deletes a key
    check_string(
        obj,
        "command",
        "command-not-string",
        "empty-command",
        &mut problems,
    );
    let arg_count = match obj.get("args") {
        None => 0,
        Some(Value::Array(items)) => {
            if items.iter().any(|v| v.as_str().is_none()) {
                problems.push("arg-not-string");
            }
            items.len()
        }
        Some(_) => {
            problems.push("args-not-array");
            0
        }
    };
    let env_count = string_map(
        obj,
        "env",
        "env-not-object",
        "env-value-not-string",
        null_ok,
        &mut problems,
    );
    if obj.get("cwd").is_some_and(|v| v.as_str().is_none()) {
        problems.push("cwd-not-string");
    }
    check_string(obj, "url", "url-not-string", "empty-url", &mut problems);
    check_string(
        obj,
        "httpUrl",
        "http-url-not-string",
        "empty-http-url",
        &mut problems,
    );
    let header_count = string_map(
        obj,
        "headers",
        "headers-not-object",
        "header-value-not-string",
        null_ok,
        &mut problems,
    );

    let mut fields = present_fields(obj, &FIELDS);
    if dialect == Dialect::Yaml {
        // `disabled` lives on the row, `enabled` is not part of the YAML dialect.
        fields.retain(|f| *f != "disabled" && *f != "enabled");
        if disabled_at.is_some() {
            let at = fields.partition_point(|f| *f < "disabled");
            fields.insert(at, "disabled");
        }
    }
    let valid = problems.is_empty();
    let identity = if valid {
        identity(obj, transport, fold_case)
    } else {
        None
    };
    Some(Row {
        name: name.unwrap_or_default().to_owned(),
        shape: Shape {
            valid,
            problems,
            transport,
            fields,
            arg_count,
            env_count,
            header_count,
        },
        disabled,
        skipped,
        placeholder_count: placeholders_in(obj),
        identity,
    })
}

/// An object of string values (or nulls, when `null_ok`); its member count.
fn string_map(
    obj: &Object,
    key: &str,
    not_object: &'static str,
    value_not_string: &'static str,
    null_ok: bool,
    problems: &mut Vec<&'static str>,
) -> usize {
    match obj.get(key) {
        None => 0,
        Some(Value::Object(m)) => {
            let bad = |v: &Value| !(v.as_str().is_some() || null_ok && *v == Value::Null);
            if m.iter().any(|(_, v)| bad(v)) {
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

/// The raw identity of a valid row: stdio command + args, or the url.
/// Windows compares stdio identities case-insensitively (ASCII).
fn identity(obj: &Object, transport: Transport, fold_case: bool) -> Option<Identity> {
    match transport {
        Transport::Stdio => {
            let command = obj.get("command")?.as_str()?;
            let mut parts = vec![command.to_owned()];
            if let Some(Value::Array(args)) = obj.get("args") {
                parts.extend(args.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            if fold_case {
                parts.iter_mut().for_each(|p| p.make_ascii_lowercase());
            }
            Some(Identity::Stdio(parts))
        }
        Transport::Http => {
            let url = obj
                .get("url")
                .and_then(Value::as_str)
                .or_else(|| obj.get("httpUrl").and_then(Value::as_str))?;
            Some(Identity::Http(url.to_owned()))
        }
        _ => None,
    }
}

/// `${VAR}` references in the fields DSH interpolates.
fn placeholders_in(obj: &Object) -> usize {
    let one = |v: Option<&Value>| v.and_then(Value::as_str).map_or(0, count_placeholders);
    let list = |v: Option<&Value>| match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(count_placeholders)
            .sum(),
        _ => 0,
    };
    let values = |v: Option<&Value>| match v {
        Some(Value::Object(m)) => m
            .iter()
            .filter_map(|(_, v)| v.as_str())
            .map(count_placeholders)
            .sum(),
        _ => 0,
    };
    one(obj.get("command"))
        + list(obj.get("args"))
        + values(obj.get("env"))
        + one(obj.get("cwd"))
        + one(obj.get("url"))
        + one(obj.get("httpUrl"))
        + values(obj.get("headers"))
}

/// Matches of `\$\{[A-Za-z_][A-Za-z0-9_]*\}` in `s`.
pub fn count_placeholders(s: &str) -> usize {
    let b = s.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' && b.get(i + 1) == Some(&b'{') {
            let start = i + 2;
            let mut j = start;
            while b
                .get(j)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
            {
                j += 1;
            }
            let first_ok = b
                .get(start)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_');
            if first_ok && b.get(j) == Some(&b'}') {
                n += 1;
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Options};

    fn json(name: &str, entry: &str) -> Row {
        json_row(
            name,
            &parse(entry.as_bytes(), &Options::STRICT).unwrap(),
            false,
        )
    }

    fn problems(entry: &str) -> Vec<&'static str> {
        json("ok", entry).shape.problems
    }

    #[test]
    fn fields_are_in_byte_order() {
        assert!(FIELDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn names() {
        assert!(valid_name("unity-mcp_2"));
        assert!(valid_name(&"a".repeat(32)));
        for bad in ["", "a b", "ü", "a.b", &"a".repeat(33)] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert_eq!(normalized_name("unityMCP"), "unitymcp");
        assert_eq!(normalized_name("unity-mcp"), "unitymcp");
        assert_eq!(normalized_name("A_b-C9"), "abc9");
    }

    #[test]
    fn placeholders_are_counted_exactly() {
        assert_eq!(count_placeholders("Bearer ${TOKEN}"), 1);
        assert_eq!(count_placeholders("${A}${_b1}x${C}"), 3);
        for none in ["$TOKEN", "${}", "${1A}", "${A-B}", "${A", "$${", "", "${"] {
            assert_eq!(count_placeholders(none), 0, "{none}");
        }
        assert_eq!(count_placeholders("$${A}"), 1);
        let r = json(
            "x",
            r#"{"command":"${BIN}","args":["--k=${K}","${A}${B}"],"env":{"${N}":"${V}"},"cwd":"${D}",
               "headers":{"h":"${H}"},"zzz":"${IGNORED}"}"#,
        );
        // env *names* are not interpolated; unknown fields are not read.
        assert_eq!(r.placeholder_count, 7);
    }

    #[test]
    fn transports() {
        let t = |e: &str| json("x", e).shape.transport;
        assert_eq!(t(r#"{"command":"c"}"#), Transport::Stdio);
        assert_eq!(t(r#"{"url":"u"}"#), Transport::Http);
        assert_eq!(t(r#"{"httpUrl":"u"}"#), Transport::Http);
        assert_eq!(t(r#"{"type":"http","url":"u"}"#), Transport::Http);
        assert_eq!(
            t(r#"{"type":"streamable-http","url":"u"}"#),
            Transport::Http
        );
        assert_eq!(
            t(r#"{"transport":"streamable-http","url":"u"}"#),
            Transport::Http
        );
        assert_eq!(
            t(r#"{"type":"stdio","command":"c","url":"u"}"#),
            Transport::Stdio
        );
        assert_eq!(t(r#"{}"#), Transport::Stdio);
    }

    #[test]
    fn shape_problems() {
        assert_eq!(problems(r#"{"type":"sse","url":"u"}"#), ["sse-unsupported"]);
        assert_eq!(
            problems(r#"{"command":"c","url":"u"}"#),
            ["command-and-url-without-type"]
        );
        assert!(problems(r#"{"type":"stdio","command":"c","url":"u"}"#).is_empty());
        assert_eq!(
            problems(r#"{"url":"a","httpUrl":"b"}"#),
            ["url-httpurl-conflict"]
        );
        assert!(problems(r#"{"url":"a","httpUrl":"a"}"#).is_empty());
        assert_eq!(
            problems(r#"{"type":"http","transport":"stdio","url":"u","command":"c"}"#),
            ["transport-type-conflict"]
        );
        assert!(problems(r#"{"type":"http","transport":"streamable-http","url":"u"}"#).is_empty());
        assert_eq!(problems(r#"{"type":"grpc"}"#), ["unsupported-type"]);
        assert_eq!(problems(r#"{"type":1}"#), ["type-not-string"]);
        assert_eq!(
            problems(r#"{"transport":"ws","url":"u"}"#),
            ["unsupported-transport"]
        );
        assert_eq!(problems(r#"{}"#), ["missing-command"]);
        assert_eq!(problems(r#"{"type":"http"}"#), ["missing-url"]);
        assert_eq!(
            problems(
                r#"{"command":1,"args":"a","env":[],"cwd":2,"url":3,"headers":{"h":1},"type":"stdio"}"#
            ),
            [
                "command-not-string",
                "args-not-array",
                "env-not-object",
                "cwd-not-string",
                "url-not-string",
                "header-value-not-string"
            ]
        );
        assert_eq!(
            problems(r#"{"command":"c","enabled":"no","disabled":0}"#),
            ["disabled-not-boolean", "enabled-not-boolean"]
        );
        // JSON does not allow null env values; YAML does (a deletion).
        assert_eq!(
            problems(r#"{"command":"c","env":{"A":null}}"#),
            ["env-value-not-string"]
        );
        let r = json("bad name", r#"{"command":"c"}"#);
        assert_eq!(r.shape.problems, ["invalid-name"]);
        assert!(!r.claims());
        let r = json_row("x", &Value::Null, false);
        assert_eq!(r.shape.problems, ["entry-not-object"]);
    }

    #[test]
    fn activity_and_claims() {
        let r = json("x", r#"{"command":"c","enabled":false}"#);
        assert!(r.skipped && !r.claims());
        let r = json("x", r#"{"disabled":true}"#);
        assert!(r.disabled && r.claims() && r.shape.valid);
        assert_eq!(r.identity, None);
        let r = json("x", r#"{"disabled":true,"type":"sse"}"#);
        assert!(!r.claims());
    }

    #[test]
    fn identities_are_raw_and_exact() {
        let id = |e: &str, fold| {
            json_row("x", &parse(e.as_bytes(), &Options::STRICT).unwrap(), fold).identity
        };
        assert_eq!(
            id(
                r#"{"command":"node","args":["a.js"],"env":{"A":"1"}}"#,
                false
            ),
            id(r#"{"command":"node","args":["a.js"],"cwd":"/x"}"#, false)
        );
        assert_ne!(
            id(r#"{"command":"node","args":["a.js"]}"#, false),
            id(r#"{"command":"node","args":["b.js"]}"#, false)
        );
        assert_ne!(
            id(r#"{"command":"Node"}"#, false),
            id(r#"{"command":"node"}"#, false)
        );
        assert_eq!(
            id(r#"{"command":"Node"}"#, true),
            id(r#"{"command":"node"}"#, true)
        );
        assert_eq!(
            id(r#"{"url":"https://h/${P}"}"#, false),
            id(r#"{"type":"http","httpUrl":"https://h/${P}"}"#, false)
        );
        assert_eq!(id(r#"{"disabled":true,"type":"http"}"#, false), None);
        assert_eq!(id(r#"{"command":"c","args":[1]}"#, false), None);
    }

    #[test]
    fn yaml_rows() {
        let row = |s: &str| {
            let v = super::super::yaml::parse_block(s).unwrap();
            yaml_row(&v, false)
        };
        let r = row("disabled: true\nconfig: {serverName: gitlab, env: {A: null}}\n");
        assert_eq!(r.name, "gitlab");
        assert!(r.disabled && r.shape.valid, "{:?}", r.shape);
        assert_eq!(r.shape.fields, ["disabled", "env", "serverName"]);
        let r = row("config: {serverName: g, command: c, enabled: false}\n");
        assert!(!r.skipped, "enabled is not part of the YAML dialect");
        assert_eq!(
            row("config: {command: c}\n").shape.problems,
            ["missing-name"]
        );
        assert_eq!(
            row("config: {serverName: 12, command: c}\n").shape.problems,
            ["name-not-string"]
        );
        assert_eq!(row("id: x\n").shape.problems, ["missing-config"]);
        assert_eq!(row("config: [1]\n").shape.problems, ["config-not-object"]);
        assert_eq!(row("[1]\n").shape.problems, ["row-not-object"]);
        assert_eq!(
            row("disabled: yes\nconfig: {serverName: g, command: c}\n")
                .shape
                .problems,
            ["disabled-not-boolean"]
        );
    }
}
