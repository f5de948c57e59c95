//! One DSH server row as dsh-project-mcp-manager reads it: whether it enters
//! DSH's merge at all, the keys it brings (exact name, normalized name,
//! service identity), whether DSH would mount it when it wins, and the
//! `${VAR}` references it carries.
//!
//! The two dialects are read by different code in DSH and are kept apart
//! here ([`json_row`], [`yaml_row`]); `inventory/DSH.md` has every rule and
//! the DSH source it follows (`src/json-file.ts`, `src/mcp-file.ts`,
//! `src/model.ts`, `src/registry.ts`).
//!
//! The identity (command + args, or url) is the only place a command, an
//! argument or a URL is copied, and it never leaves the `dsh` module: it is
//! only compared for equality. Everything else that leaves is a count, a
//! fixed field name or a fixed problem code. Nothing is ever expanded.

use crate::json::{Object, Value};
use crate::model::{Shape, Transport};
use crate::shape::{is_string, map_value, present_fields, string_array_value};

use super::{js, url};

/// The plugin a managed-block row must name for DSH to read its `config`
/// (`configFromPatchRow`).
pub const MCP_CLIENT: &str = "@deepseek-ai/dsh-mcp-client";

/// A managed-block row id `panel-mcp-<name>` names the server
/// (`serverNameFromRowId`), ahead of `config.serverName`.
pub const ROW_ID_PREFIX: &str = "panel-mcp-";

/// `Number.MAX_SAFE_INTEGER`: zod 4's `.int()` accepts safe integers only.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
/// `MAX_TIMER_DELAY_MS`, the bound DSH puts on reconnect delays.
const MAX_TIMER_DELAY_MS: f64 = 2_147_483_647.0;

/// Known fields of a DSH entry (the JSON entry or the YAML `config`), in
/// byte order: the `shape.fields` order.
pub const FIELDS: [&str; 19] = [
    "args",
    "command",
    "cwd",
    "disabled",
    "enabled",
    "env",
    "excludeTools",
    "failOnStartupError",
    "headers",
    "httpUrl",
    "includeTools",
    "maxInstructionBytes",
    "reconnect",
    "serverName",
    "toolCallTimeoutMs",
    "tools",
    "transport",
    "type",
    "url",
];

/// A service identity exactly as DSH's `serviceIdentityKey` spells it
/// (`s\0command\0args…` or `h\0url`, raw, before `${VAR}` expansion). Equal
/// identities collide; it is never printed or serialized.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity(String);

impl Identity {
    /// stdio: the command (lowercased on Windows) and every argument as
    /// `String(arg)`, joined with NUL.
    fn stdio<'r, 'a: 'r>(
        command: &str,
        args: impl Iterator<Item = &'r Value<'a>>,
        fold_case: bool,
    ) -> Self {
        let mut key = String::from("s\0");
        if fold_case {
            key.push_str(&js::to_lower(command));
        } else {
            key.push_str(command);
        }
        key.push('\0');
        for (i, a) in args.enumerate() {
            if i > 0 {
                key.push('\0');
            }
            key.push_str(&js::to_string(a));
        }
        Identity(key)
    }

    fn http(url: &str) -> Self {
        Identity(format!("h\0{url}"))
    }
}

/// Everything the profile needs about one row.
#[derive(Debug, Clone)]
pub struct Row {
    /// The name DSH files the row under (`""` when it has none).
    pub name: String,
    pub shape: Shape,
    pub disabled: bool,
    pub skipped: bool,
    pub placeholder_count: usize,
    /// Whether DSH puts the row into its merge: it then holds its keys when
    /// it comes first, or is shadowed. JSON: a valid, not skipped entry
    /// (DSH drops the others with an entry error); YAML: any row with a
    /// name, valid or not (DSH merges before it validates).
    pub enters_chain: bool,
    /// The identity key the row brings into the merge, if any.
    pub identity: Option<Identity>,
}

impl Row {
    /// Whether DSH mounts the row when nothing shadows it.
    pub fn mountable(&self) -> bool {
        self.enters_chain && self.shape.valid && !self.disabled && !self.skipped
    }
}

/// Whether a server name is `[A-Za-z0-9_-]{1,32}` (`SERVER_NAME_RE`).
pub fn valid_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// DSH's `normalizedNameKey`: `toLowerCase()`, then everything outside
/// `[a-z0-9]` removed; `None` (no key at all) when nothing is left.
pub fn normalized_name(name: &str) -> Option<String> {
    let n: String = js::to_lower(name)
        .chars()
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        .collect();
    (!n.is_empty()).then_some(n)
}

/// A row that is nothing but its problem (not an object).
fn not_object(name: String, problem: &'static str) -> Row {
    Row {
        name,
        shape: Shape::not_object(problem),
        disabled: false,
        skipped: false,
        placeholder_count: 0,
        enters_chain: false,
        identity: None,
    }
}

/// The transport a `type` / `transport` value names (`resolveMcpTransport`).
fn named_transport(v: &str) -> Result<Transport, &'static str> {
    match v {
        "stdio" => Ok(Transport::Stdio),
        "http" | "streamable-http" => Ok(Transport::Http),
        "sse" => Err("sse"),
        _ => Err("unsupported"),
    }
}

// ---- the JSON dialect (src/json-file.ts) ----

/// A JSON entry `mcpServers[name]`, checked as `parseJsonServersValue` and
/// `jsonEntryToInput` do: any problem is an entry error in DSH (the entry
/// mounts nothing and holds no key), `disabled: true` included.
pub fn json_row(name: &str, entry: &Value, fold_case: bool) -> Row {
    let Some(obj) = entry.as_object() else {
        return not_object(name.to_owned(), "entry-not-object");
    };
    // `enabled: false` is skipped before anything else is looked at.
    let skipped = obj.get("enabled") == Some(&Value::Bool(false));
    let mut p: Vec<&'static str> = Vec::new();
    if !valid_name(name) {
        p.push("invalid-name");
    }

    // The entry schema (`jsonServerEntrySchema`): field types.
    let ty = string_field(obj, "type", "type-not-string", &mut p);
    let transport = string_field(obj, "transport", "transport-not-string", &mut p);
    let command = string_field(obj, "command", "command-not-string", &mut p);
    let (arg_count, _) =
        string_array_value(obj.get("args"), "args-not-array", "arg-not-string", &mut p);
    let env_count = map_value(
        obj.get("env"),
        "env-not-object",
        "env-value-not-string",
        is_string,
        &mut p,
    );
    string_field(obj, "cwd", "cwd-not-string", &mut p);
    let url = string_field(obj, "url", "url-not-string", &mut p);
    let http_url = string_field(obj, "httpUrl", "http-url-not-string", &mut p);
    let header_count = map_value(
        obj.get("headers"),
        "headers-not-object",
        "header-value-not-string",
        is_string,
        &mut p,
    );
    boolean_field(obj, "enabled", "enabled-not-boolean", &mut p);
    let disabled = boolean_field(obj, "disabled", "disabled-not-boolean", &mut p) == Some(true);
    if !int_field(obj.get("toolCallTimeoutMs"), MAX_SAFE_INTEGER) {
        p.push("tool-call-timeout-invalid");
    }
    boolean_field(
        obj,
        "failOnStartupError",
        "fail-on-startup-error-not-boolean",
        &mut p,
    );
    if !reconnect_ok(obj.get("reconnect")) {
        p.push("reconnect-invalid");
    }
    if !tools_ok(obj.get("tools")) {
        p.push("tools-invalid");
    }
    for (key, code) in [
        ("includeTools", "include-tools-invalid"),
        ("excludeTools", "exclude-tools-invalid"),
    ] {
        if obj.get(key).is_some() && !string_array_value(obj.get(key), "", "", &mut Vec::new()).1 {
            p.push(code);
        }
    }

    // `jsonEntryToInput`: empty strings count as absent.
    let (url_raw, http_url_raw) = (url, http_url);
    let url = url.filter(|u| !u.is_empty());
    let http_url = http_url.filter(|u| !u.is_empty());
    if let (Some(a), Some(b)) = (url, http_url) {
        if a != b {
            p.push("url-httpurl-conflict");
        }
    }
    let declared = |v: Option<&str>, unsupported, p: &mut Vec<&'static str>| match v
        .filter(|v| !v.is_empty())
        .map(named_transport)
    {
        None => Ok(None),
        Some(Ok(t)) => Ok(Some(t)),
        Some(Err("sse")) => {
            p.push("sse-unsupported");
            Err(Transport::Sse)
        }
        Some(Err(_)) => {
            p.push(unsupported);
            Err(Transport::Unknown)
        }
    };
    let by_transport = declared(transport, "unsupported-transport", &mut p);
    let by_type = declared(ty, "unsupported-type", &mut p);
    let transport = match (by_transport, by_type) {
        (Err(t), _) | (_, Err(t)) => t,
        (Ok(Some(a)), Ok(Some(b))) if a != b => {
            p.push("transport-type-conflict");
            Transport::Unknown
        }
        (Ok(Some(t)), _) | (_, Ok(Some(t))) => {
            if t == Transport::Stdio && http_url.is_some() {
                p.push("http-url-with-stdio");
            }
            t
        }
        // Without a declared transport: httpUrl, or a url and no command at
        // all, is streamable HTTP; anything else is stdio.
        (Ok(None), Ok(None)) if http_url.is_some() => Transport::Http,
        (Ok(None), Ok(None)) if url.is_some() && obj.get("command").is_none() => Transport::Http,
        (Ok(None), Ok(None)) => Transport::Stdio,
    };
    let remote = http_url.or(url);
    match transport {
        Transport::Http => match remote {
            None if [url_raw, http_url_raw].contains(&Some("")) => p.push("empty-url"),
            None => p.push("missing-url"),
            Some(u) if !url::is_url_or_env_ref(u) => p.push("invalid-url"),
            Some(_) => {}
        },
        Transport::Stdio => match command {
            None if obj.get("command").is_none() => p.push("missing-command"),
            Some("") => p.push("empty-command"),
            _ => {}
        },
        _ => {}
    }

    let valid = p.is_empty();
    let identity = match (valid, transport) {
        (true, Transport::Http) => remote.map(Identity::http),
        (true, Transport::Stdio) => command.map(|c| {
            let args = obj.get("args").and_then(Value::as_array).unwrap_or(&[]);
            Identity::stdio(c, args.iter(), fold_case)
        }),
        _ => None,
    };
    let mut sh = Shape::new(p, transport, present_fields(obj, &FIELDS));
    (sh.arg_count, sh.env_count, sh.header_count) = (arg_count, env_count, header_count);
    Row {
        name: name.to_owned(),
        shape: sh,
        disabled,
        skipped,
        placeholder_count: placeholders_in(obj),
        enters_chain: valid && !skipped,
        identity,
    }
}

/// A field that must be a string when present; its value when it is one.
fn string_field<'o>(
    obj: &'o Object,
    key: &str,
    not_string: &'static str,
    p: &mut Vec<&'static str>,
) -> Option<&'o str> {
    match obj.get(key) {
        None => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => {
            p.push(not_string);
            None
        }
    }
}

/// A field that must be a boolean when present; its value when it is one.
fn boolean_field(
    obj: &Object,
    key: &str,
    not_boolean: &'static str,
    p: &mut Vec<&'static str>,
) -> Option<bool> {
    match obj.get(key) {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            p.push(not_boolean);
            None
        }
    }
}

/// `z.number().int().min(1).max(max)` (zod 4: finite, a safe integer), or
/// absent.
fn int_field(v: Option<&Value>, max: f64) -> bool {
    match v {
        None => true,
        Some(Value::Number(text)) => {
            let x = js::number_value(text);
            x.is_finite()
                && x.fract() == 0.0
                && x.abs() <= MAX_SAFE_INTEGER
                && (1.0..=max).contains(&x)
        }
        Some(_) => false,
    }
}

/// `reconnect`: an object whose known members have the right types.
fn reconnect_ok(v: Option<&Value>) -> bool {
    match v {
        None => true,
        Some(Value::Object(r)) => {
            !matches!(r.get("enabled"), Some(v) if !matches!(v, Value::Bool(_)))
                && int_field(r.get("initialDelayMs"), MAX_TIMER_DELAY_MS)
                && int_field(r.get("maxDelayMs"), MAX_TIMER_DELAY_MS)
                && int_field(r.get("maxAttempts"), MAX_SAFE_INTEGER)
        }
        Some(_) => false,
    }
}

/// `tools`: an object whose `allow` / `deny` are arrays of strings.
fn tools_ok(v: Option<&Value>) -> bool {
    match v {
        None => true,
        Some(Value::Object(t)) => ["allow", "deny"]
            .iter()
            .all(|k| string_array_value(t.get(k), "", "", &mut Vec::new()).1),
        Some(_) => false,
    }
}

/// A string, or null (a deletion in a native YAML row's env and headers).
fn string_or_null(v: &Value) -> bool {
    is_string(v) || *v == Value::Null
}

// ---- the native YAML rows (src/mcp-file.ts, src/model.ts) ----

/// One managed-block row candidate, as `flattenPatchRows` keeps it and as
/// the registry merges and mounts it.
///
/// DSH drops a candidate that is not an object or has neither a string `id`
/// nor a string `name` (shown here as `row-not-object` /
/// `row-without-id-or-name`, never in the chain). A kept row enters the
/// merge when it has a name (`rowNameOf`: `id` `panel-mcp-<name>`, else a
/// string `config.serverName`), whatever else is wrong with it: an invalid
/// row still holds its keys, it only fails to mount. `disabled` counts only
/// when it is the boolean `true` (DSH deletes any other value, and the row
/// then mounts).
pub fn yaml_row(candidate: &Value, fold_case: bool) -> Row {
    let Some(row) = candidate.as_object() else {
        return not_object(String::new(), "row-not-object");
    };
    let id = row.get("id").and_then(Value::as_str);
    let plugin = row.get("name").and_then(Value::as_str);
    let config = row.get("config").and_then(Value::as_object);
    let server_name = config.and_then(|c| c.get("serverName"));
    let name = id
        .and_then(|i| i.strip_prefix(ROW_ID_PREFIX))
        .filter(|n| valid_name(n))
        .or_else(|| server_name.and_then(Value::as_str));
    if id.is_none() && plugin.is_none() {
        let mut r = not_object(
            name.unwrap_or_default().to_owned(),
            "row-without-id-or-name",
        );
        if let Some(c) = config {
            r.shape.fields = yaml_fields(c, row);
        }
        return r;
    }
    let disabled = row.get("disabled") == Some(&Value::Bool(true));
    let mut p: Vec<&'static str> = Vec::new();
    if plugin != Some(MCP_CLIENT) {
        p.push("not-mcp-client");
    }
    match row.get("config") {
        None => p.push("missing-config"),
        Some(Value::Object(_)) => {}
        Some(_) => p.push("config-not-object"),
    }
    match (name, server_name) {
        (None, None) => p.push("missing-name"),
        (None, Some(_)) => p.push("name-not-string"),
        // `inputFromPatchRow` validates a string `config.serverName` even
        // when the id named the row.
        (Some(_), Some(Value::String(n))) if !valid_name(n) => p.push("invalid-name"),
        _ => {}
    }
    // A row with a name enters the merge, even an empty `serverName: ''`.
    let enters_chain = name.is_some();
    let name = name.unwrap_or_default().to_owned();
    let Some(c) = config else {
        return Row {
            name,
            shape: Shape::new(p, Transport::Unknown, Vec::new()),
            disabled,
            skipped: false,
            placeholder_count: 0,
            enters_chain,
            identity: None,
        };
    };

    // `inputFromPatchRow`: only `transport` picks the transport (no `type`,
    // no url inference); `http` is taken as the `streamable-http` alias.
    let transport = match c.get("transport") {
        None => Transport::Stdio,
        Some(Value::String(t)) => match named_transport(t) {
            Ok(t) => t,
            Err("sse") => {
                p.push("sse-unsupported");
                Transport::Sse
            }
            Err(_) => {
                p.push("unsupported-transport");
                Transport::Unknown
            }
        },
        Some(_) => {
            p.push("transport-not-string");
            Transport::Unknown
        }
    };
    let mut env_count = 0;
    let mut header_count = 0;
    match transport {
        // `asString(command)` must be non-empty; `args` keeps its string
        // items and `cwd` any string (neither can fail); `env` values are
        // strings or null (a deletion).
        Transport::Stdio => {
            match c.get("command") {
                None if !disabled => p.push("missing-command"),
                None => {}
                Some(Value::String(s)) if s.is_empty() => p.push("empty-command"),
                Some(Value::String(_)) => {}
                Some(_) => p.push("command-not-string"),
            }
            env_count = map_value(
                c.get("env"),
                "env-not-object",
                "env-value-not-string",
                string_or_null,
                &mut p,
            );
        }
        Transport::Http => {
            match c.get("url") {
                None if !disabled => p.push("missing-url"),
                None => {}
                Some(Value::String(s)) if s.is_empty() => p.push("empty-url"),
                Some(Value::String(s)) if !url::is_url_or_env_ref(s) => p.push("invalid-url"),
                Some(Value::String(_)) => {}
                Some(_) => p.push("url-not-string"),
            }
            header_count = map_value(
                c.get("headers"),
                "headers-not-object",
                "header-value-not-string",
                string_or_null,
                &mut p,
            );
        }
        _ => {}
    }
    let arg_count = c
        .get("args")
        .and_then(Value::as_array)
        .map_or(0, |a| a.iter().filter(|v| v.as_str().is_some()).count());
    let identity = (plugin == Some(MCP_CLIENT))
        .then(|| yaml_identity(c, fold_case))
        .flatten();
    let mut sh = Shape::new(p, transport, yaml_fields(c, row));
    (sh.arg_count, sh.env_count, sh.header_count) = (arg_count, env_count, header_count);
    Row {
        enters_chain,
        name,
        shape: sh,
        disabled,
        skipped: false,
        placeholder_count: placeholders_in(c),
        identity,
    }
}

/// `serviceIdentityKey` for a managed-block row: only an explicit
/// `transport: streamable-http` with a non-empty url, or `transport: stdio`
/// with a non-empty command, has one.
fn yaml_identity(c: &Object, fold_case: bool) -> Option<Identity> {
    match c.get("transport").and_then(Value::as_str)? {
        "streamable-http" => c
            .get("url")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
            .map(Identity::http),
        "stdio" => {
            let command = c
                .get("command")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())?;
            let args = c.get("args").and_then(Value::as_array).unwrap_or(&[]);
            Some(Identity::stdio(command, args.iter(), fold_case))
        }
        _ => None,
    }
}

/// The known `config` keys present; `disabled` is the row's, and `enabled`
/// is not part of the YAML dialect.
fn yaml_fields(c: &Object, row: &Object) -> Vec<&'static str> {
    let mut fields = present_fields(c, &FIELDS);
    fields.retain(|f| *f != "disabled" && *f != "enabled");
    if row.get("disabled").is_some() {
        let at = fields.partition_point(|f| *f < "disabled");
        fields.insert(at, "disabled");
    }
    fields
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

    fn yaml(row: &str) -> Row {
        let v = super::super::yaml::parse_block(row).unwrap();
        yaml_row(&v, false)
    }

    /// A managed-block row that DSH reads (`id` + the mcp-client `name`).
    fn client_row(config: &str) -> Row {
        yaml(&format!(
            "id: row-1\nname: '{MCP_CLIENT}'\nconfig: {config}\n"
        ))
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
        assert_eq!(normalized_name("unityMCP").as_deref(), Some("unitymcp"));
        assert_eq!(normalized_name("unity-mcp").as_deref(), Some("unitymcp"));
        assert_eq!(normalized_name("A_b-C9").as_deref(), Some("abc9"));
    }

    #[test]
    fn a_name_that_normalizes_to_nothing_holds_no_normalized_key() {
        // DSH's normalizedNameKey returns undefined for "", so `_` and `-`
        // never collide with each other.
        assert_eq!(normalized_name("_"), None);
        assert_eq!(normalized_name("-"), None);
        // toLowerCase is Unicode: the Kelvin sign becomes an ASCII k.
        assert_eq!(normalized_name("\u{212a}ey").as_deref(), Some("key"));
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
    fn json_transports() {
        let t = |e: &str| json("x", e).shape.transport;
        assert_eq!(t(r#"{"command":"c"}"#), Transport::Stdio);
        assert_eq!(t(r#"{"url":"https://h/"}"#), Transport::Http);
        assert_eq!(t(r#"{"httpUrl":"https://h/"}"#), Transport::Http);
        assert_eq!(t(r#"{"type":"http","url":"u"}"#), Transport::Http);
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
    fn json_command_and_url_without_a_type_is_stdio() {
        // jsonEntryToInput infers http only when there is no command at all.
        let r = json("x", r#"{"command":"c","url":"https://h/"}"#);
        assert_eq!(r.shape.transport, Transport::Stdio);
        assert!(r.shape.valid && r.enters_chain, "{:?}", r.shape);
        // httpUrl always means streamable HTTP, command or not.
        let r = json("x", r#"{"command":"c","httpUrl":"https://h/"}"#);
        assert_eq!(r.shape.transport, Transport::Http);
        assert!(r.shape.valid);
    }

    #[test]
    fn json_empty_type_and_empty_urls_count_as_absent() {
        let r = json("x", r#"{"type":"","transport":"","command":"c","url":""}"#);
        assert_eq!(r.shape.transport, Transport::Stdio);
        assert!(r.shape.valid, "{:?}", r.shape);
        // An empty url beside a httpUrl is no conflict.
        assert!(problems(r#"{"url":"","httpUrl":"https://h/"}"#).is_empty());
        assert_eq!(problems(r#"{"type":"http","url":""}"#), ["empty-url"]);
        assert_eq!(problems(r#"{"type":"http"}"#), ["missing-url"]);
    }

    #[test]
    fn json_problems() {
        assert_eq!(
            problems(r#"{"type":"sse","url":"https://h/"}"#),
            ["sse-unsupported"]
        );
        assert_eq!(
            problems(r#"{"url":"https://a/","httpUrl":"https://b/"}"#),
            ["url-httpurl-conflict"]
        );
        assert!(problems(r#"{"url":"https://a/","httpUrl":"https://a/"}"#).is_empty());
        assert_eq!(
            problems(r#"{"type":"http","transport":"stdio","url":"u","command":"c"}"#),
            ["transport-type-conflict"]
        );
        assert_eq!(
            problems(r#"{"type":"stdio","command":"c","httpUrl":"https://h/"}"#),
            ["http-url-with-stdio"]
        );
        assert_eq!(problems(r#"{"type":"grpc"}"#), ["unsupported-type"]);
        assert_eq!(problems(r#"{"type":1,"command":"c"}"#), ["type-not-string"]);
        assert_eq!(
            problems(r#"{"transport":"ws","url":"https://h/"}"#),
            ["unsupported-transport"]
        );
        assert_eq!(problems(r#"{}"#), ["missing-command"]);
        assert_eq!(problems(r#"{"command":""}"#), ["empty-command"]);
        assert_eq!(problems(r#"{"url":"not a url"}"#), ["invalid-url"]);
        assert!(problems(r#"{"url":"${MCP_URL}"}"#).is_empty());
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
            ["enabled-not-boolean", "disabled-not-boolean"]
        );
        // JSON does not allow null env values; YAML does (a deletion).
        assert_eq!(
            problems(r#"{"command":"c","env":{"A":null}}"#),
            ["env-value-not-string"]
        );
        let r = json("bad name", r#"{"command":"c"}"#);
        assert_eq!(r.shape.problems, ["invalid-name"]);
        assert!(!r.enters_chain);
        let r = json_row("x", &Value::Null, false);
        assert_eq!(r.shape.problems, ["entry-not-object"]);
    }

    #[test]
    fn json_passthrough_keys_are_checked_as_the_entry_schema_does() {
        for ok in [
            r#"{"command":"c","toolCallTimeoutMs":1}"#,
            r#"{"command":"c","toolCallTimeoutMs":6e4}"#,
            r#"{"command":"c","failOnStartupError":true}"#,
            r#"{"command":"c","reconnect":{"enabled":false,"maxDelayMs":2147483647,"x":1}}"#,
            r#"{"command":"c","tools":{"allow":["a*"]},"includeTools":[],"excludeTools":["b"]}"#,
        ] {
            assert!(problems(ok).is_empty(), "{ok}");
        }
        let cases: [(&str, &str); 9] = [
            (
                r#"{"command":"c","toolCallTimeoutMs":0}"#,
                "tool-call-timeout-invalid",
            ),
            (
                r#"{"command":"c","toolCallTimeoutMs":1.5}"#,
                "tool-call-timeout-invalid",
            ),
            (
                r#"{"command":"c","toolCallTimeoutMs":1e300}"#,
                "tool-call-timeout-invalid",
            ),
            (
                r#"{"command":"c","toolCallTimeoutMs":"5"}"#,
                "tool-call-timeout-invalid",
            ),
            (
                r#"{"command":"c","failOnStartupError":1}"#,
                "fail-on-startup-error-not-boolean",
            ),
            (
                r#"{"command":"c","reconnect":{"maxDelayMs":2147483648}}"#,
                "reconnect-invalid",
            ),
            (r#"{"command":"c","reconnect":null}"#, "reconnect-invalid"),
            (r#"{"command":"c","tools":{"deny":"x"}}"#, "tools-invalid"),
            (
                r#"{"command":"c","includeTools":[1]}"#,
                "include-tools-invalid",
            ),
        ];
        for (entry, code) in cases {
            assert_eq!(problems(entry), [code], "{entry}");
        }
    }

    #[test]
    fn json_skipped_and_disabled_entries() {
        let r = json("x", r#"{"command":"c","enabled":false}"#);
        assert!(r.skipped && !r.enters_chain && !r.mountable());
        // DSH skips `enabled: false` before the name check: still skipped.
        let r = json("bad name", r#"{"enabled":false}"#);
        assert!(r.skipped && !r.enters_chain);
        // A disabled JSON entry must still pass DSH's entry checks to hold
        // its keys: a placeholder without a command is an entry error.
        let r = json("x", r#"{"disabled":true}"#);
        assert_eq!(r.shape.problems, ["missing-command"]);
        assert!(r.disabled && !r.enters_chain);
        let r = json("x", r#"{"disabled":true,"command":"c"}"#);
        assert!(r.disabled && r.enters_chain && !r.mountable());
        assert!(r.identity.is_some());
    }

    #[test]
    fn identities_are_dsh_keys_built_from_the_raw_strings() {
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
        // Windows folds the command only, never the arguments.
        assert_eq!(
            id(r#"{"command":"Node"}"#, true),
            id(r#"{"command":"node"}"#, true)
        );
        assert_ne!(
            id(r#"{"command":"node","args":["A"]}"#, true),
            id(r#"{"command":"node","args":["a"]}"#, true)
        );
        // The key joins with NUL as DSH does: no args and one empty arg agree.
        assert_eq!(
            id(r#"{"command":"node"}"#, false),
            id(r#"{"command":"node","args":[""]}"#, false)
        );
        assert_eq!(
            id(r#"{"url":"https://h/${P}"}"#, false),
            id(r#"{"type":"http","httpUrl":"https://h/${P}"}"#, false)
        );
        assert_eq!(id(r#"{"command":"c","args":[1]}"#, false), None);
    }

    #[test]
    fn yaml_rows_dsh_mounts() {
        let r = client_row("{serverName: gitlab, command: c, env: {A: null}}");
        assert_eq!(r.name, "gitlab");
        assert!(r.mountable(), "{:?}", r.shape);
        assert_eq!(r.shape.fields, ["command", "env", "serverName"]);
        // No transport: stdio, url and type not read; args items that are not
        // strings and a cwd that is not one are dropped, not refused.
        let r =
            client_row("{serverName: g, type: http, command: c, url: 'x y', args: [1, a], cwd: 3}");
        assert_eq!(r.shape.transport, Transport::Stdio);
        assert!(r.mountable(), "{:?}", r.shape);
        assert_eq!(r.shape.arg_count, 1);
        // `enabled` is not part of the YAML dialect.
        assert!(!client_row("{serverName: g, command: c, enabled: false}").skipped);
        let r = client_row("{serverName: g, transport: streamable-http, url: 'https://h/m'}");
        assert_eq!(r.shape.transport, Transport::Http);
        assert!(r.mountable());
    }

    #[test]
    fn a_yaml_row_is_named_by_its_panel_id_first() {
        // serverNameFromRowId wins over config.serverName; a non-string
        // serverName is then not a problem (DSH falls back to the id).
        let r = yaml(&format!(
            "id: panel-mcp-from-id\nname: '{MCP_CLIENT}'\nconfig: {{serverName: 12, command: c}}\n"
        ));
        assert_eq!(r.name, "from-id");
        assert!(r.mountable(), "{:?}", r.shape);
        // An id without the prefix (or with an invalid name) does not name it.
        let r = yaml(&format!(
            "id: other\nname: '{MCP_CLIENT}'\nconfig: {{serverName: s, command: c}}\n"
        ));
        assert_eq!(r.name, "s");
        let r = yaml(&format!(
            "id: other\nname: '{MCP_CLIENT}'\nconfig: {{command: c}}\n"
        ));
        assert_eq!((r.name.as_str(), r.enters_chain), ("", false));
        assert_eq!(r.shape.problems, ["missing-name"]);
        // A string serverName is still validated when the id named the row.
        let r = yaml(&format!(
            "id: panel-mcp-ok\nname: '{MCP_CLIENT}'\nconfig: {{serverName: 'bad name', command: c}}\n"
        ));
        assert_eq!(r.shape.problems, ["invalid-name"]);
        assert!(r.enters_chain && !r.mountable());
    }

    #[test]
    fn invalid_yaml_rows_with_a_name_still_enter_the_chain() {
        // DSH merges managed-block rows before validating them.
        let r = yaml(
            "id: x\nname: other-plugin\nconfig: {serverName: s, transport: stdio, command: c}\n",
        );
        assert_eq!(r.shape.problems, ["not-mcp-client"]);
        assert!(r.enters_chain && !r.mountable());
        assert_eq!(r.identity, None, "configFromPatchRow reads no config");
        let r = client_row("{serverName: s, transport: grpc}");
        assert_eq!(r.shape.problems, ["unsupported-transport"]);
        assert!(r.enters_chain);
        let r = yaml(&format!(
            "id: panel-mcp-p\nname: '{MCP_CLIENT}'\nconfig: [1]\n"
        ));
        assert_eq!((r.name.as_str(), r.enters_chain), ("p", true));
        assert_eq!(r.shape.problems, ["config-not-object"]);
        let r = yaml(&format!("id: panel-mcp-p\nname: '{MCP_CLIENT}'\n"));
        assert_eq!(r.shape.problems, ["missing-config"]);
        // An empty serverName is a name too.
        assert!(client_row("{serverName: '', command: c}").enters_chain);
    }

    #[test]
    fn yaml_candidates_dsh_drops_are_visible_and_outside_the_chain() {
        let r = yaml("config: {serverName: s, command: c}\n");
        assert_eq!(r.shape.problems, ["row-without-id-or-name"]);
        assert_eq!(r.name, "s");
        assert!(!r.enters_chain);
        assert_eq!(yaml("[1]\n").shape.problems, ["row-not-object"]);
        // A string `name` alone keeps the row.
        assert!(yaml("name: x\nconfig: {serverName: s}\n").enters_chain);
    }

    #[test]
    fn a_non_boolean_disabled_is_dropped_and_the_row_mounts() {
        let r = client_row("{serverName: g, command: c}");
        let yes = yaml(&format!(
            "id: row-1\nname: '{MCP_CLIENT}'\ndisabled: yes\nconfig: {{serverName: g, command: c}}\n"
        ));
        assert!(!yes.disabled && yes.mountable(), "{:?}", yes.shape);
        assert_eq!(yes.shape.fields, ["command", "disabled", "serverName"]);
        assert_eq!(r.identity, yes.identity);
        let off = yaml(&format!(
            "id: row-1\nname: '{MCP_CLIENT}'\ndisabled: true\nconfig: {{serverName: g}}\n"
        ));
        assert!(off.disabled && off.enters_chain && off.shape.valid && !off.mountable());
    }

    #[test]
    fn yaml_identity_needs_an_explicit_transport() {
        // serviceIdentityKey reads config.transport literally.
        assert_eq!(client_row("{serverName: a, command: c}").identity, None);
        let a = client_row(
            "{serverName: a, transport: stdio, command: c, args: [--port, 8080, true, null]}",
        );
        let b = json(
            "b",
            r#"{"command":"c","args":["--port","8080","true","null"]}"#,
        );
        assert!(a.identity.is_some());
        assert_eq!(a.identity, b.identity, "args joined with String()");
        let h = client_row("{serverName: h, transport: streamable-http, url: 'https://h/'}");
        assert_eq!(h.identity, json("h", r#"{"url":"https://h/"}"#).identity);
        assert_eq!(
            client_row("{serverName: h, transport: http, url: 'https://h/'}").identity,
            None
        );
    }
}
