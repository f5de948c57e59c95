//! From the raw records of native-reference runs (`native_capture`) to what the client did
//! (`native::Observation`) and the differential judgement of the whole evidence directory
//! (`judge_evidence`): the one code path the in-box runner, the orchestrator and the verifier
//! share. It owns parsing the client's output exactly as `harness/native/observe.py` does
//! (`mcp list` lines, the `mcp get` block, the headless `system/init` line; for Codex its
//! `--json` output), the launched set from two witnesses (the sentinel marker's lines and the
//! kernel witness's execs of the sentinel, which must agree) plus the loopback listeners'
//! request paths (less OAuth discovery prefixes and suffixes), the inventory's own
//! candidate judgement, and the bounds every parser keeps. Pure: no I/O but the `read` closure
//! it is given, no clock; every parser is total on hostile bytes (never panics, bounded work).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::digest::sha256_hex;
use crate::evidence::{CaseRecord, Verdict};
use crate::matrix::{Case, Expectations, Matrix};
use crate::native::{
    self, ExpectedDivergence, Failure, InventoryRow, Listed, Mode, NativeMatrix, Observation, Run,
    Scenario,
};
use crate::native_capture::{
    ClientRecord, HttpLog, NativeIndex, CLIENT_OUTPUT_LIMIT, CLIENT_RECORD_FILE,
    CLIENT_STDERR_FILE, CLIENT_STDOUT_FILE, CLIENT_WITNESS_FILE, HTTP_LOG_FILE, HTTP_REQUEST_LIMIT,
    INDEX_FILE, INVENTORY_DIR, NATIVE_DIR, SENTINEL_FILE,
};
use crate::strict_json;
use crate::witness::{self, WitnessRecord};

/// Most scenarios a native matrix may have (the real one has 51).
pub const MAX_SCENARIOS: usize = 1024;
/// Most declarations, fixture entries or divergences of one scenario.
pub const MAX_SCENARIO_ITEMS: usize = 1024;
/// Most declarations over the whole matrix (the judge's work is declarations × rows per run).
pub const MAX_DECLARATIONS: usize = 8192;
/// Most lines of a sentinel marker (each is one sentinel execution).
pub const MARKER_LINE_LIMIT: usize = 65_536;
/// Most bytes of a sentinel marker read (a line is at most a few hundred bytes).
pub const MARKER_BYTE_LIMIT: usize = 4 * 1024 * 1024;
/// Most listed entries taken from one run's output, and most inventory rows of one tree.
pub const LISTED_LIMIT: usize = 1024;
/// Tag of a sentinel line without a `--scopebox-tag=` argument (as `observe.py` counts it).
pub const UNTAGGED: &str = "<untagged>";
/// The version of the judgement's format (`NativeJudgement::schema_version`).
pub const JUDGEMENT_SCHEMA_VERSION: u32 = 1;

/// The statuses observe.py recognises, in the order it tries them (first contained word wins).
const STATUS_WORDS: [(&str, &str); 6] = [
    ("connected", "connected"),
    ("failed", "failed"),
    ("pending approval", "pending"),
    ("needs authentication", "needs-auth"),
    ("disabled", "disabled"),
    ("rejected", "rejected"),
];

// ------------------------------------------------------------------ Python text semantics

/// Python's `str.isspace` (what `\s` and `str.strip()` mean in observe.py): Unicode White_Space
/// plus the ASCII separators U+001C..U+001F.
pub fn py_isspace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{0b}'
            | '\u{0c}'
            | '\r'
            | '\u{1c}'..='\u{1f}'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python's `str.splitlines()`: split at `\n`, `\r`, `\r\n`, VT, FF, FS, GS, RS, NEL, LS, PS;
/// no empty last line for a trailing separator.
pub fn py_splitlines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\u{0b}'
                | '\u{0c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if !is_break {
            continue;
        }
        lines.push(&text[start..i]);
        let mut end = i + c.len_utf8();
        if c == '\r' {
            if let Some((j, '\n')) = chars.peek().copied() {
                chars.next();
                end = j + 1;
            }
        }
        start = end;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

fn py_strip(text: &str) -> &str {
    text.trim_matches(py_isspace)
}

/// observe.py's `normalize_status`: the first status word the lowercased text contains, else
/// `other:<stripped text>`.
pub fn normalize_status(text: &str) -> String {
    let lower = text.to_lowercase();
    for (word, status) in STATUS_WORDS {
        if lower.contains(word) {
            return status.to_string();
        }
    }
    format!("other:{}", py_strip(text))
}

fn is_tag_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-')
}

/// The first `PREFIX` followed by at least one tag character (`[A-Za-z0-9._/-]`), and the
/// longest run of them: observe.py's `TAG_RE.search`.
pub fn tag_after_prefix(text: &str, prefix: &str) -> Option<String> {
    if prefix.is_empty() {
        return None;
    }
    let mut from = 0;
    while let Some(at) = text[from..].find(prefix) {
        let rest = &text[from + at + prefix.len()..];
        let end = rest.find(|c: char| !is_tag_char(c)).unwrap_or(rest.len());
        if end > 0 {
            return Some(rest[..end].to_string());
        }
        from += at + prefix.len();
    }
    None
}

/// observe.py's `tag_in`: the sentinel tag argument, else the path of the first
/// `http(s)://127.0.0.1:PORT/PATH` (ASCII port digits; Python would also take other Unicode
/// decimal digits, which no client prints).
pub fn tag_in(text: &str, prefix: &str) -> Option<String> {
    if let Some(tag) = tag_after_prefix(text, prefix) {
        return Some(tag);
    }
    let mut from = 0;
    while let Some(at) = text[from..].find("http") {
        let start = from + at;
        from = start + 4;
        let mut rest = &text[start + 4..];
        if let Some(r) = rest.strip_prefix('s') {
            if r.starts_with("://") {
                rest = r;
            }
        }
        let Some(rest) = rest.strip_prefix("://127.0.0.1:") else {
            continue;
        };
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            continue;
        }
        let Some(path) = rest[digits..].strip_prefix('/') else {
            continue;
        };
        let end = path.find(|c: char| !is_tag_char(c)).unwrap_or(path.len());
        if end > 0 {
            return Some(path[..end].to_string());
        }
    }
    None
}

/// One `mcp list` line: observe.py's `LIST_LINE`,
/// `^(?P<name>[^\s:][^:]*): (?P<target>.*) - (?P<status>\S+ .*)$` → (name, target, status).
pub fn list_line(line: &str) -> Option<(&str, &str, &str)> {
    let first = line.chars().next()?;
    if py_isspace(first) || first == ':' {
        return None;
    }
    // `[^:]*` then `: `: the name ends at the first colon.
    let colon = line.find(':')?;
    let rest = line[colon + 1..].strip_prefix(' ')?;
    let name = &line[..colon];
    // Greedy `.*` for the target: the last ` - ` (occurrences may overlap) whose tail is
    // `\S+ .*` — a run of non-space characters ended by a plain space.
    let bytes = rest.as_bytes();
    for j in (0..bytes.len().saturating_sub(2)).rev() {
        if !bytes[j..].starts_with(b" - ") {
            continue;
        }
        let tail = &rest[j + 3..];
        if tail.chars().next().is_none_or(py_isspace) {
            continue;
        }
        if let Some(k) = tail.find(py_isspace) {
            if tail[k..].starts_with(' ') {
                return Some((name, &rest[..j], tail));
            }
        }
    }
    None
}

/// One `mcp get` field: `^  (?P<key>[A-Za-z ]+): (?P<value>.*)$` → (key, value).
pub fn get_field(line: &str) -> Option<(&str, &str)> {
    let body = line.strip_prefix("  ")?;
    let end = body
        .find(|c: char| !(c.is_ascii_alphabetic() || c == ' '))
        .unwrap_or(body.len());
    if end == 0 {
        return None;
    }
    let value = body[end..].strip_prefix(": ")?;
    Some((&body[..end], value))
}

// ------------------------------------------------------------------ listed

/// What the client showed in one run, parsed from its stdout exactly as observe.py's
/// `listed_servers` does (`list` lines, the `get` block, headless `system/init`), and every
/// problem with the bytes (not JSON, a malformed init entry, more than `LISTED_LIMIT`).
pub fn listed_servers(mode: Mode, stdout: &[u8], tag_prefix: &str) -> (Vec<Listed>, Vec<String>) {
    let text = String::from_utf8_lossy(stdout);
    let mut out = Vec::new();
    let mut problems = Vec::new();
    match mode {
        Mode::List => {
            for line in py_splitlines(&text) {
                if let Some((name, target, status)) = list_line(line) {
                    out.push(Listed {
                        name: name.to_string(),
                        tag: tag_in(target, tag_prefix),
                        status: normalize_status(status),
                        scope: None,
                        source: None,
                    });
                }
            }
        }
        Mode::Get => {
            let lines = py_splitlines(&text);
            if let Some(first) = lines.first() {
                if first.ends_with(':') && !first.starts_with(' ') {
                    let mut entry = Listed {
                        name: first[..first.len() - 1].to_string(),
                        tag: None,
                        status: String::new(),
                        scope: None,
                        source: None,
                    };
                    for line in &lines[1..] {
                        let Some((key, value)) = get_field(line) else {
                            continue;
                        };
                        match key {
                            "Status" => entry.status = normalize_status(value),
                            "Scope" => entry.scope = Some(value.to_string()),
                            "Args" | "URL" | "Command" if entry.tag.is_none() => {
                                entry.tag = tag_in(value, tag_prefix)
                            }
                            _ => {}
                        }
                    }
                    out.push(entry);
                }
            }
        }
        Mode::Headless => {
            if let Some(first) = py_splitlines(&text).first() {
                headless_init(first, &mut out, &mut problems);
            }
        }
    }
    if out.len() > LISTED_LIMIT {
        problems.push(format!(
            "the client listed {} servers, more than {LISTED_LIMIT}: the rest is not judged",
            out.len()
        ));
        out.truncate(LISTED_LIMIT);
    }
    (out, problems)
}

/// What the client showed, by the matrix's `client.id`: Codex's JSON (`codex_listed`), else
/// Claude Code's text (`listed_servers`).
pub fn listed_servers_for(
    client: &str,
    mode: Mode,
    stdout: &[u8],
    tag_prefix: &str,
) -> (Vec<Listed>, Vec<String>) {
    if client == CODEX {
        codex_listed(mode, stdout, tag_prefix)
    } else {
        listed_servers(mode, stdout, tag_prefix)
    }
}

/// The Codex client id (`client.id` of `harness/matrix/native-codex.json`).
pub const CODEX: &str = "codex";

/// What Codex showed, as observe.py's `codex_listed` reads it: `mcp list --json` is an array of
/// servers, `mcp get --json NAME` one object, nothing on stdout is nothing listed; `exec --json`
/// names no server (headless is always `[]`). Stdout that is not JSON is one entry
/// `<stdout is not JSON>` with status `other:unparsed` (so it drifts from any expectation); an
/// item that is not an object or has no string `name` is a problem.
pub fn codex_listed(mode: Mode, stdout: &[u8], tag_prefix: &str) -> (Vec<Listed>, Vec<String>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let text = String::from_utf8_lossy(stdout);
    if mode == Mode::Headless || py_strip(&text).is_empty() {
        return (out, problems);
    }
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else {
        out.push(Listed {
            name: "<stdout is not JSON>".into(),
            tag: None,
            status: "other:unparsed".into(),
            scope: None,
            source: None,
        });
        return (out, problems);
    };
    let items: Vec<&serde_json::Value> = match &doc {
        serde_json::Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    for e in items.into_iter().take(LISTED_LIMIT + 1) {
        let Some(name) = e.get("name").and_then(|n| n.as_str()) else {
            problems.push("a Codex server entry is not an object with a string name".into());
            continue;
        };
        let t = e.get("transport");
        let field = |k: &str| t.and_then(|t| t.get(k));
        let target = if field("type").and_then(|v| v.as_str()) == Some("stdio") {
            field("args")
                .and_then(|a| a.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default()
        } else {
            field("url")
                .and_then(|u| u.as_str())
                .unwrap_or_default()
                .to_string()
        };
        let enabled = e.get("enabled").and_then(|v| v.as_bool()) == Some(true);
        let status = match e.get("disabled_reason") {
            _ if enabled => "enabled".to_string(),
            Some(serde_json::Value::String(r)) if !r.is_empty() => format!("disabled:{r}"),
            _ => "disabled".to_string(),
        };
        out.push(Listed {
            name: name.to_string(),
            tag: tag_in(&target, tag_prefix),
            status,
            scope: None,
            source: None,
        });
    }
    if out.len() > LISTED_LIMIT {
        problems.push(format!(
            "the client listed more than {LISTED_LIMIT} servers: the rest is not judged"
        ));
        out.truncate(LISTED_LIMIT);
    }
    (out, problems)
}

/// The declaration a request to an MCP listener is for (observe.py's `request_tag`): the path
/// without the query, less an OAuth discovery prefix `/.well-known/NAME` (RFC 9728/8414 put the
/// resource's path after it) or suffix `/.well-known/NAME`, without surrounding `/`. A bare
/// `/.well-known/NAME` names only the origin every server shares: `None`, no declaration's
/// launch (the request stays in the raw log). Codex's `mcp list` makes these requests.
pub fn request_tag(path: &str) -> Option<String> {
    const WELL_KNOWN: &str = "/.well-known/";
    let mut rest = path.split('?').next().unwrap_or("");
    if let Some(r) = rest.strip_prefix(WELL_KNOWN) {
        let end = r.find('/').unwrap_or(r.len());
        if end > 0 {
            rest = &r[end..];
        }
    }
    if let Some(at) = rest.rfind(WELL_KNOWN) {
        let name = &rest[at + WELL_KNOWN.len()..];
        // As the regex's lazy tag group, which cannot be empty once taken: a suffix is only
        // stripped from something.
        if at > 0 && !name.is_empty() && !name.contains('/') {
            rest = &rest[..at];
        }
    }
    let tag = rest.trim_matches('/');
    (!tag.is_empty()).then(|| tag.to_string())
}

/// The `mcp_servers` of a headless run's first stream-json line, when it is `system/init`.
/// Not JSON (or not an object) is no init line, as for observe.py; JSON that is not strict
/// (a duplicate key) or an entry without string `name`, `source`, `status` is a problem.
fn headless_init(line: &str, out: &mut Vec<Listed>, problems: &mut Vec<String>) {
    let Ok(init) = serde_json::from_str::<serde_json::Value>(line) else {
        return;
    };
    if let Err(e) = strict_json::check(line.as_bytes()) {
        problems.push(format!(
            "the headless first line is not strict JSON ({e}): its servers are not read"
        ));
        return;
    }
    let is_init = init.get("type").and_then(|v| v.as_str()) == Some("system")
        && init.get("subtype").and_then(|v| v.as_str()) == Some("init");
    if !is_init {
        return;
    }
    let servers = match init.get("mcp_servers") {
        None => return,
        Some(serde_json::Value::Array(a)) => a,
        Some(_) => {
            problems.push("system/init mcp_servers is not an array".to_string());
            return;
        }
    };
    for (i, s) in servers.iter().enumerate() {
        let text = |k: &str| s.get(k).and_then(|v| v.as_str()).map(str::to_string);
        match (text("name"), text("source"), text("status")) {
            (Some(name), Some(source), Some(status)) => out.push(Listed {
                name,
                tag: None,
                status,
                scope: None,
                source: Some(source),
            }),
            _ => problems.push(format!(
                "system/init mcp_servers[{i}] lacks a string name, source or status"
            )),
        }
    }
}

// ------------------------------------------------------------------ the sentinel marker

/// One line of the sentinel marker: `pid=N argv=[...]` (`scopebox-sentinel` writes its pid
/// and its argv in Rust `Debug` form, one `write(2)` per execution).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarkerLine {
    pub pid: u32,
    pub argv: Vec<String>,
}

/// Every line of a marker, or why its bytes are not what the sentinel writes. Bounded by
/// `MARKER_BYTE_LIMIT` and `MARKER_LINE_LIMIT`.
pub fn parse_marker(bytes: &[u8]) -> Result<Vec<MarkerLine>, String> {
    if bytes.len() > MARKER_BYTE_LIMIT {
        return Err(format!(
            "the sentinel marker has {} bytes, more than {MARKER_BYTE_LIMIT}",
            bytes.len()
        ));
    }
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let Some(body) = bytes.strip_suffix(b"\n") else {
        return Err("the sentinel marker does not end with a whole line".to_string());
    };
    let mut lines = Vec::new();
    for (n, raw) in body.split(|b| *b == b'\n').enumerate() {
        if n >= MARKER_LINE_LIMIT {
            return Err(format!(
                "the sentinel marker has more than {MARKER_LINE_LIMIT} lines"
            ));
        }
        let line = std::str::from_utf8(raw)
            .map_err(|_| format!("sentinel marker line {} is not UTF-8", n + 1))?;
        lines.push(
            marker_line(line).ok_or_else(|| {
                format!("sentinel marker line {} is not `pid=N argv=[...]`", n + 1)
            })?,
        );
    }
    Ok(lines)
}

fn marker_line(line: &str) -> Option<MarkerLine> {
    let rest = line.strip_prefix("pid=")?;
    let (pid, argv) = rest.split_once(" argv=")?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) || pid.len() > 10 {
        return None;
    }
    Some(MarkerLine {
        pid: pid.parse().ok()?,
        argv: debug_string_list(argv)?,
    })
}

/// `["a", "b\"c"]` as `{:?}` of a `Vec<String>` writes it (escapes of `char::escape_debug`).
fn debug_string_list(text: &str) -> Option<Vec<String>> {
    let mut chars = text.chars().peekable();
    if chars.next()? != '[' {
        return None;
    }
    let mut out = Vec::new();
    if chars.peek() == Some(&']') {
        chars.next();
        return chars.next().is_none().then_some(out);
    }
    loop {
        if chars.next()? != '"' {
            return None;
        }
        let mut s = String::new();
        loop {
            match chars.next()? {
                '"' => break,
                '\\' => s.push(match chars.next()? {
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    '0' => '\0',
                    '\\' => '\\',
                    '"' => '"',
                    '\'' => '\'',
                    'u' => {
                        if chars.next()? != '{' {
                            return None;
                        }
                        let mut hex = String::new();
                        loop {
                            let c = chars.next()?;
                            if c == '}' {
                                break;
                            }
                            if hex.len() >= 6 || !c.is_ascii_hexdigit() {
                                return None;
                            }
                            hex.push(c);
                        }
                        char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?
                    }
                    _ => return None,
                }),
                c => s.push(c),
            }
        }
        out.push(s);
        match chars.next()? {
            ']' => return chars.next().is_none().then_some(out),
            ',' => {
                if chars.next()? != ' ' {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

// ------------------------------------------------------------------ launched

/// The launched set of one run and how it was established.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launched {
    /// Tag → times it fired (sentinel executions) or connected (requests), as observe.py counts.
    pub counts: BTreeMap<String, u64>,
    /// Every way the two witnesses disagree, an execution other than the client and the
    /// sentinel, a listener log that cannot be read as complete.
    pub problems: Vec<String>,
}

/// What the client launched: the tag of each sentinel execution — a marker line, which must
/// match the kernel witness's execs of `matrix.sentinel` pid for pid — and the path of each
/// request to a `listeners` port. `client_path` is the client binary the runner started; a
/// witnessed exec of anything but it (the client re-executing itself) and the sentinel is
/// another execution and a problem.
pub fn launched(
    matrix: &NativeMatrix,
    client_path: &str,
    marker: &[MarkerLine],
    witness: &WitnessRecord,
    http: &HttpLog,
) -> Launched {
    let mut l = Launched::default();
    witness_problems(matrix, client_path, witness, &mut l.problems);

    // Marker lines against the witnessed sentinel execs, pid for pid.
    let mut marker_pids: BTreeMap<i64, u64> = BTreeMap::new();
    for line in marker {
        *marker_pids.entry(i64::from(line.pid)).or_default() += 1;
        let tag = line
            .argv
            .iter()
            .find_map(|a| tag_after_prefix(a, &matrix.tag_arg_prefix))
            .unwrap_or_else(|| UNTAGGED.to_string());
        *l.counts.entry(tag).or_default() += 1;
    }
    let mut exec_pids: BTreeMap<i64, u64> = BTreeMap::new();
    for e in witness.events.iter().filter(|e| e.syscall.is_exec()) {
        if e.path.as_deref() == Some(matrix.sentinel.as_str()) {
            *exec_pids.entry(i64::from(e.pid)).or_default() += 1;
        }
    }
    if marker_pids != exec_pids {
        let pids = |m: &BTreeMap<i64, u64>| -> String {
            let parts: Vec<String> = m
                .iter()
                .map(|(p, n)| {
                    if *n == 1 {
                        p.to_string()
                    } else {
                        format!("{p}×{n}")
                    }
                })
                .collect();
            format!("[{}]", parts.join(", "))
        };
        l.problems.push(format!(
            "the two witnesses disagree: the sentinel marker has {} line(s) from pids {}, the kernel witness saw {} exec(s) of {} by pids {}",
            marker.len(),
            pids(&marker_pids),
            exec_pids.values().sum::<u64>(),
            matrix.sentinel,
            pids(&exec_pids)
        ));
    }
    for r in &witness.sentinel_reports {
        if !exec_pids.contains_key(&i64::from(r.pid)) {
            l.problems.push(format!(
                "a sentinel report from pid {} without a witnessed exec of the sentinel",
                r.pid
            ));
        }
    }

    // Requests to the MCP listeners: the path is the tag.
    let want_ports: BTreeSet<String> = matrix.listeners.iter().map(|p| p.to_string()).collect();
    let have_ports: BTreeSet<String> = http.listeners.keys().cloned().collect();
    if want_ports != have_ports {
        l.problems.push(format!(
            "the listener log has ports {have_ports:?}, the matrix listens on {want_ports:?}"
        ));
    }
    if http.model_api.port != matrix.model_api.port {
        l.problems.push(format!(
            "the model-API log is of port {}, the matrix's is {}",
            http.model_api.port, matrix.model_api.port
        ));
    }
    let mut orders: BTreeSet<u32> = BTreeSet::new();
    let mut total = 0usize;
    for log in std::iter::once(&http.model_api).chain(http.listeners.values()) {
        if log.requests.len() > HTTP_REQUEST_LIMIT {
            l.problems.push(format!(
                "listener {} logged {} requests, more than {HTTP_REQUEST_LIMIT}",
                log.port,
                log.requests.len()
            ));
        }
        for r in &log.requests {
            total += 1;
            if !orders.insert(r.order) {
                l.problems.push(format!(
                    "two requests have arrival order {} in the listener log",
                    r.order
                ));
            }
        }
    }
    if orders
        .iter()
        .next_back()
        .is_some_and(|m| *m as usize >= total)
    {
        l.problems
            .push("the listener log's arrival orders are not 0..n".to_string());
    }
    for (key, log) in &http.listeners {
        if key != &log.port.to_string() {
            l.problems.push(format!(
                "the listener log under port {key:?} is of port {}",
                log.port
            ));
        }
        if !want_ports.contains(key) {
            continue;
        }
        if log.requests_dropped > 0 {
            l.problems.push(format!(
                "listener {} dropped {} request(s): the launched set is incomplete",
                log.port, log.requests_dropped
            ));
        }
        for r in log.requests.iter().take(HTTP_REQUEST_LIMIT) {
            if let Some(tag) = request_tag(&r.path) {
                *l.counts.entry(tag).or_default() += 1;
            }
        }
    }
    l
}

/// The kernel witness record of the client's tree: the runner started the client, nothing was
/// dropped, and every other exec is the client itself or the sentinel.
fn witness_problems(
    matrix: &NativeMatrix,
    client_path: &str,
    w: &WitnessRecord,
    problems: &mut Vec<String>,
) {
    if w.mechanism != witness::MECHANISM_SECCOMP_USER_NOTIFY {
        problems.push(format!(
            "witness mechanism {:?} is not {}",
            w.mechanism,
            witness::MECHANISM_SECCOMP_USER_NOTIFY
        ));
    }
    if w.program != client_path {
        problems.push(format!(
            "the witness record is about {:?}, the client is {client_path:?}",
            w.program
        ));
    }
    if w.events.len() > witness::EVENT_LIMIT {
        problems.push(format!(
            "the witness record has {} events, more than {}",
            w.events.len(),
            witness::EVENT_LIMIT
        ));
    }
    if w.events_dropped > 0 {
        problems.push(format!(
            "the witness dropped {} event(s): the sentinel executions cannot be counted",
            w.events_dropped
        ));
    }
    if w.events.windows(2).any(|p| p[1].seq <= p[0].seq) {
        problems.push("the witness events are out of order".to_string());
    }
    let mut execs = w.events.iter().filter(|e| e.syscall.is_exec());
    match execs.next() {
        None => problems.push(format!(
            "the witness saw no exec of the client {client_path:?}"
        )),
        Some(first) => {
            let ok = first.syscall == witness::WitnessSyscall::Execve
                && first.pid != w.runner_pid
                && first.ppid == Some(w.runner_pid)
                && first.path.as_deref() == Some(client_path);
            if !ok {
                problems.push(format!(
                    "the first exec is not the runner starting the client: {}",
                    witness::describe(first)
                ));
            }
        }
    }
    for e in execs {
        let path = e.path.as_deref();
        let absent = path.is_some_and(|p| matrix.absent_execs.iter().any(|a| absent_exec(a, p)));
        if path != Some(client_path) && path != Some(matrix.sentinel.as_str()) && !absent {
            problems.push(format!(
                "other execution by the client: {}",
                witness::describe(e)
            ));
        }
    }
}

/// Whether an exec of `path` is the `absentExecs` entry `pattern`: the same components, where a
/// pattern component `*` stands for any one component (a directory the client names at random,
/// e.g. Codex's `$CODEX_HOME/tmp/arg0-linux/codex-arg0XXXXXX/`).
pub fn absent_exec(pattern: &str, path: &str) -> bool {
    let (mut p, mut q) = (pattern.split('/'), path.split('/'));
    loop {
        match (p.next(), q.next()) {
            (None, None) => return true,
            (Some("*"), Some(c)) if !c.is_empty() && c != "." && c != ".." => {}
            (Some(a), Some(b)) if a == b => {}
            _ => return false,
        }
    }
}

// ------------------------------------------------------------------ what the runner runs

/// The client's argv: its image path, then the mode's arguments with `{name}` replaced.
pub fn client_argv(matrix: &NativeMatrix, run: &Run, client_path: &str) -> Vec<String> {
    let args = match run.mode {
        Mode::List => &matrix.modes.list,
        Mode::Get => &matrix.modes.get,
        Mode::Headless => &matrix.modes.headless,
    };
    let name = run.name.as_deref().unwrap_or("");
    std::iter::once(client_path.to_string())
        .chain(args.iter().map(|a| a.replace("{name}", name)))
        .collect()
}

/// The client's whole environment, `NAME=value` sorted by name: the matrix's `environment`
/// with the scenario's `env` over it.
pub fn client_env(matrix: &NativeMatrix, scenario: &Scenario) -> Vec<String> {
    let mut env = matrix.environment.clone();
    for (k, v) in scenario.env.iter().flatten() {
        env.insert(k.clone(), v.clone());
    }
    env.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
}

/// The client's working directory.
pub fn client_cwd<'a>(matrix: &'a NativeMatrix, scenario: &'a Scenario) -> &'a str {
    scenario.cwd.as_deref().unwrap_or(&matrix.defaults.cwd)
}

/// `<scenario>/<mode>`: the run's directory below `native/`.
pub fn run_dir(scenario: &Scenario, run: &Run) -> String {
    format!("{}/{}", scenario.id, run.mode.as_str())
}

/// The candidate case mcpscope's inventory of a run's tree is judged as: id
/// `<scenario>-<mode>`, argv `[CANDIDATE_BIN, root, "--json"]`, the client's cwd, the
/// scenario's `env` over the candidate base, the scenario's fixture. Its expectations are not
/// judged (mcpscope exits 1 for a malformed file); its invariants and the witness are.
/// mcpscope's arguments for the scenario's tree: the root, `--json`, and the matrix's client
/// profile unless it is mcpscope's default (Claude Code), so each native client is compared
/// with mcpscope's profile of that client.
pub fn inventory_args(matrix: &NativeMatrix, scenario: &Scenario) -> Vec<String> {
    let mut args = vec![
        scenario.root(&matrix.defaults).to_string(),
        "--json".to_string(),
    ];
    if matrix.client.id != DEFAULT_INVENTORY_CLIENT {
        args.extend(["--client".to_string(), matrix.client.id.clone()]);
    }
    args
}

/// The profile mcpscope reads without `--client`.
pub const DEFAULT_INVENTORY_CLIENT: &str = "claude-code";

pub fn inventory_case(matrix: &NativeMatrix, scenario: &Scenario, run: &Run) -> Case {
    Case {
        id: format!("{}-{}", scenario.id, run.mode.as_str()),
        client: matrix.client.id.clone(),
        description: scenario.description.clone(),
        args: inventory_args(matrix, scenario),
        cwd: Some(client_cwd(matrix, scenario).to_string()),
        env: scenario.env.clone().unwrap_or_default(),
        fixture: scenario.fixture.clone(),
        expect: Expectations::default(),
        fault: None,
        deadline_ms: None,
    }
}

/// The inventory run's verdict (the runner writes it into `inventory/record.json`; the judge
/// recomputes it): every candidate invariant (`judge::invariants`: no timeout, no signal, no
/// sentinel marker, the tree unchanged, no canary, captures as recorded), the record is this
/// case's with its argv, cwd, environment and laid-out fixture, exit 0 or 1, stdout an
/// inventory document, and the kernel witness saw exactly mcpscope executed and nothing else.
pub fn judge_inventory(
    matrix: &NativeMatrix,
    scenario: &Scenario,
    run: &Run,
    stdout: &[u8],
    stderr: &[u8],
    record: &CaseRecord,
    witness: &WitnessRecord,
) -> Verdict {
    let case = inventory_case(matrix, scenario, run);
    let stub = Matrix {
        schema_version: 1,
        name: matrix.name.clone(),
        canaries: Vec::new(),
        cases: Vec::new(),
    };
    let mut failures = Vec::new();
    if record.id != case.id {
        failures.push(format!(
            "inventory record is for {:?}, expected {:?}",
            record.id, case.id
        ));
    }
    let argv: Vec<String> = std::iter::once(crate::layout::CANDIDATE_BIN.to_string())
        .chain(case.args.iter().cloned())
        .collect();
    if record.argv != argv {
        failures.push(format!(
            "inventory argv {:?}, expected {argv:?}",
            record.argv
        ));
    }
    if record.cwd != client_cwd(matrix, scenario) {
        failures.push(format!(
            "inventory cwd {:?}, expected {:?}",
            record.cwd,
            client_cwd(matrix, scenario)
        ));
    }
    crate::judge::invariants(&stub, stdout, stderr, record, &mut failures);
    failures.extend(crate::judge::environment_failures(&case, &record.env));
    failures.extend(crate::judge::fixture_layout_failures(
        &case,
        &record.fixtures_before,
    ));
    if !matches!(record.exit_code, Some(0) | Some(1)) {
        failures.push(format!(
            "inventory exit code {}, expected 0 or 1",
            crate::judge::exit_text(record.exit_code)
        ));
    }
    if let Err(e) = inventory_document(stdout) {
        failures.push(e);
    }
    failures.extend(crate::judge::witness_failures(record, witness));
    Verdict {
        pass: failures.is_empty(),
        failures,
    }
}

/// mcpscope's rows from its `--json` stdout (strict JSON, at most `LISTED_LIMIT` rows).
pub fn inventory_document(stdout: &[u8]) -> Result<Vec<InventoryRow>, String> {
    let doc: serde_json::Value = strict_json::from_slice(stdout)
        .map_err(|e| format!("inventory stdout is not a JSON document: {e}"))?;
    let rows = native::inventory_rows(&doc, str::to_string)
        .map_err(|e| format!("inventory stdout: {e}"))?;
    if rows.len() > LISTED_LIMIT {
        return Err(format!(
            "the inventory has {} rows, more than {LISTED_LIMIT}",
            rows.len()
        ));
    }
    Ok(rows)
}

// ------------------------------------------------------------------ the judgement

/// `judge_evidence`'s result: serializable, deterministic for the same bytes (the receipt's
/// native section embeds it; the verifier recomputes it and requires equality).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NativeJudgement {
    pub schema_version: u32,
    /// The matrix's `name` and the sha256 of its bytes.
    pub matrix: String,
    pub matrix_sha256: String,
    /// sha256 of the lock's bytes.
    pub lock_sha256: String,
    /// `client.id` and `client.version` of the matrix.
    pub client: String,
    pub client_version: String,
    /// The platform of the index's `machine` (`linux/amd64`), when known.
    pub platform: Option<String>,
    pub machine: Option<String>,
    /// The binary's sha256 the runner measured (the index's), which must be the lock's.
    pub client_sha256: Option<String>,
    /// sha256 of `native/index.json`, when present.
    pub index_sha256: Option<String>,
    /// What fails the evidence as a whole (index, matrix, lock): each one line.
    pub failures: Vec<String>,
    /// Every run of the matrix, in matrix order.
    pub runs: Vec<RunJudgement>,
    pub totals: Totals,
    /// No failure at all: `failures` empty and every run passed.
    pub passed: bool,
}

/// One scenario and mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunJudgement {
    pub scenario: String,
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `<scenario>/<mode>` below `native/`.
    pub dir: String,
    /// What the client did, from the raw records (`None`: they could not be read).
    pub observation: Option<Observation>,
    /// Tag → executions or requests (raw counts; the judge compares sets).
    pub launch_counts: BTreeMap<String, u64>,
    /// The records themselves: unreadable, inconsistent, the witnesses disagreeing, another
    /// execution, a timeout. Each fails the run.
    pub capture_failures: Vec<String>,
    /// mcpscope's own run over the tree, judged as a candidate case (fails the run).
    pub inventory_failures: Vec<String>,
    /// The differential verdict (`native::judge_run`).
    pub failures: Vec<Failure>,
    pub expected_divergences: Vec<ExpectedDivergence>,
    /// Path below the evidence directory → sha256 of every raw file read for the run.
    pub digests: BTreeMap<String, String>,
    pub passed: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Totals {
    pub runs: usize,
    pub passed: usize,
    pub failed: usize,
    /// Runs with at least one such failure.
    pub client_drift: usize,
    pub missed: usize,
    pub prediction: usize,
    pub capture: usize,
    pub inventory: usize,
    /// Named divergences that did diverge, over all runs.
    pub expected_divergences: usize,
}

/// The lock's facts `judge_evidence` needs: read leniently (only these fields; the lock's full
/// validation is `scopebox native`'s), strictly as JSON (no duplicate key).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockView {
    pub clients: Vec<LockClient>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockClient {
    pub client: String,
    pub version: String,
    pub package: LockPackage,
    pub image_path: String,
    pub platforms: Vec<LockPlatform>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LockPackage {
    pub registry: String,
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LockPlatform {
    pub platform: String,
    pub wheel: LockArtifact,
    pub binary: LockDigest,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LockArtifact {
    pub file: String,
    pub sha256: String,
    pub size: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LockDigest {
    pub sha256: String,
    pub size: u64,
}

impl LockView {
    pub fn parse(bytes: &[u8]) -> Result<LockView, String> {
        strict_json::from_slice(bytes).map_err(|e| format!("the native lock does not parse: {e}"))
    }

    /// The entry of `client` and its `platform` entry.
    pub fn entry(&self, client: &str, platform: &str) -> Option<(&LockClient, &LockPlatform)> {
        let c = self.clients.iter().find(|c| c.client == client)?;
        let p = c.platforms.iter().find(|p| p.platform == platform)?;
        Some((c, p))
    }
}

/// The platform whose machine `uname -m` says (`x86_64` → `linux/amd64`).
pub fn platform_of_machine(machine: &str) -> Option<crate::platform::Platform> {
    crate::platform::Platform::ALL
        .into_iter()
        .find(|p| p.machine() == machine)
}

/// Problems with the matrix's shape beyond its types: bounds, ids as path segments, exactly
/// the three runs in order, a `get` run with a name.
pub fn matrix_problems(m: &NativeMatrix) -> Vec<String> {
    let mut out = Vec::new();
    if m.kind != native::KIND {
        out.push(format!(
            "the native matrix's kind is {:?}, not \"native\"",
            m.kind
        ));
    }
    if m.scenarios.len() > MAX_SCENARIOS {
        out.push(format!(
            "the native matrix has {} scenarios, more than {MAX_SCENARIOS}",
            m.scenarios.len()
        ));
        return out;
    }
    if m.sentinel != crate::layout::SENTINEL_BIN {
        out.push(format!(
            "the native matrix's sentinel is {:?}, not {}",
            m.sentinel,
            crate::layout::SENTINEL_BIN
        ));
    }
    if m.tag_arg_prefix.is_empty() {
        out.push("the native matrix's tagArgPrefix is empty".to_string());
    }
    if m.listeners.len() > 16 {
        out.push("the native matrix has more than 16 listeners".to_string());
    }
    if m.absent_execs.len() > 16 {
        out.push("the native matrix has more than 16 absentExecs".to_string());
    }
    for a in &m.absent_execs {
        let normalized = a.starts_with('/')
            && a.len() > 1
            && !a.contains('\0')
            && a[1..]
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..");
        let program_named = a.rsplit('/').next().is_some_and(|last| last != "*");
        if !normalized || !program_named || *a == m.sentinel {
            out.push(format!(
                "absentExecs {a:?} is not a normalized absolute path other than the sentinel \
                 whose last component names a program"
            ));
        }
    }
    let declarations: usize = m.scenarios.iter().map(|s| s.declarations.len()).sum();
    if declarations > MAX_DECLARATIONS {
        out.push(format!(
            "the native matrix has {declarations} declarations, more than {MAX_DECLARATIONS}"
        ));
    }
    let mut ids = BTreeSet::new();
    for s in &m.scenarios {
        for e in &s.fixture {
            let plain = match e {
                crate::matrix::FixtureEntry::File { content, .. } => {
                    !matches!(content, crate::matrix::FileContent::Fill { .. })
                }
                crate::matrix::FixtureEntry::Dir { .. }
                | crate::matrix::FixtureEntry::Symlink { .. } => true,
                crate::matrix::FixtureEntry::Fifo { .. } => false,
            };
            if !plain {
                out.push(format!(
                    "scenario {:?}: a native fixture is a file (text or base64), a dir or a symlink",
                    s.id
                ));
                break;
            }
        }
        let id_ok = !s.id.is_empty()
            && s.id.len() <= 128
            && s.id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !id_ok {
            out.push(format!("scenario id {:?} is not [a-z0-9-]{{1,128}}", s.id));
        }
        if !ids.insert(s.id.as_str()) {
            out.push(format!("scenario id {:?} appears twice", s.id));
        }
        for (what, n) in [
            ("declarations", s.declarations.len()),
            ("fixture entries", s.fixture.len()),
            ("divergences", s.divergences.len()),
        ] {
            if n > MAX_SCENARIO_ITEMS {
                out.push(format!(
                    "scenario {:?} has {n} {what}, more than {MAX_SCENARIO_ITEMS}",
                    s.id
                ));
            }
        }
        let modes: Vec<Mode> = s.runs.iter().map(|r| r.mode).collect();
        if modes != [Mode::List, Mode::Get, Mode::Headless] {
            out.push(format!(
                "scenario {:?} runs {modes:?}, not list, get, headless",
                s.id
            ));
        }
        for r in &s.runs {
            if (r.mode == Mode::Get) != r.name.is_some() {
                out.push(format!(
                    "scenario {:?}: a name goes with the get run, and only with it",
                    s.id
                ));
            }
        }
    }
    out
}

/// Judge a native evidence directory: `read(path)` gives a file below the evidence directory
/// (`native/index.json`, `native/<scenario>/<mode>/client.json`, ...), `None` when absent.
/// The matrix and the lock are the bytes that ran and that pinned the client. Checks the index
/// names every scenario × run of the matrix once, in order, with the matrix's digest and the
/// lock's binary digest for the platform of its `machine`; then derives every run's
/// observation from its raw records and applies `native::judge_run`.
pub fn judge_evidence(
    matrix_bytes: &[u8],
    lock_bytes: &[u8],
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> NativeJudgement {
    let mut j = NativeJudgement {
        schema_version: JUDGEMENT_SCHEMA_VERSION,
        matrix: String::new(),
        matrix_sha256: sha256_hex(matrix_bytes),
        lock_sha256: sha256_hex(lock_bytes),
        client: String::new(),
        client_version: String::new(),
        platform: None,
        machine: None,
        client_sha256: None,
        index_sha256: None,
        failures: Vec::new(),
        runs: Vec::new(),
        totals: Totals::default(),
        passed: false,
    };
    let matrix: NativeMatrix = match strict_json::from_slice(matrix_bytes) {
        Ok(m) => m,
        Err(e) => {
            j.failures
                .push(format!("the native matrix does not parse: {e}"));
            return j;
        }
    };
    j.matrix = matrix.name.clone();
    j.client = matrix.client.id.clone();
    j.client_version = matrix.client.version.clone();
    let problems = matrix_problems(&matrix);
    if !problems.is_empty() {
        j.failures.extend(problems);
        return finish(j);
    }
    let lock = LockView::parse(lock_bytes)
        .map_err(|e| j.failures.push(e))
        .ok();

    let index_bytes = read(INDEX_FILE);
    let index: Option<NativeIndex> = match &index_bytes {
        None => {
            j.failures.push(format!("{INDEX_FILE} is missing"));
            None
        }
        Some(b) => {
            j.index_sha256 = Some(sha256_hex(b));
            match strict_json::from_slice(b) {
                Ok(i) => Some(i),
                Err(e) => {
                    j.failures.push(format!("{INDEX_FILE} does not parse: {e}"));
                    None
                }
            }
        }
    };
    let Some(index) = index else {
        return finish(j);
    };
    j.machine = Some(index.machine.clone());
    j.client_sha256 = Some(index.client_sha256.clone());
    index_problems(&matrix, &index, &j.matrix_sha256, &mut j.failures);
    match platform_of_machine(&index.machine) {
        None => j.failures.push(format!(
            "the index's machine {:?} is no platform's",
            index.machine
        )),
        Some(p) => {
            j.platform = Some(p.name().to_string());
            if let Some(lock) = &lock {
                match lock.entry(&matrix.client.id, p.name()) {
                    None => j.failures.push(format!(
                        "the lock has no {} entry for {}",
                        matrix.client.id,
                        p.name()
                    )),
                    Some((c, lp)) => {
                        if lp.binary.sha256 != index.client_sha256 {
                            j.failures.push(format!(
                                "the client binary's sha256 {} is not the lock's {} for {}",
                                index.client_sha256,
                                lp.binary.sha256,
                                p.name()
                            ));
                        }
                        if c.version != matrix.client.version {
                            j.failures.push(format!(
                                "the lock pins {} {}, the matrix expects {}",
                                c.client, c.version, matrix.client.version
                            ));
                        }
                        if c.image_path != index.client_path {
                            j.failures.push(format!(
                                "the client ran from {:?}, the lock places it at {:?}",
                                index.client_path, c.image_path
                            ));
                        }
                    }
                }
            }
        }
    }

    for scenario in &matrix.scenarios {
        for run in &scenario.runs {
            let at = j.runs.len();
            let entry = index
                .runs
                .get(at)
                .filter(|e| e.scenario == scenario.id && e.mode == run.mode.as_str());
            j.runs.push(judge_one(
                &matrix,
                scenario,
                run,
                &index.client_path,
                entry,
                read,
            ));
        }
    }
    finish(j)
}

fn finish(mut j: NativeJudgement) -> NativeJudgement {
    let mut t = Totals {
        runs: j.runs.len(),
        ..Totals::default()
    };
    for r in &j.runs {
        if r.passed {
            t.passed += 1;
        } else {
            t.failed += 1;
        }
        let any = |f: fn(&Failure) -> bool| r.failures.iter().any(f);
        t.client_drift += usize::from(any(|f| matches!(f, Failure::ClientDrift { .. })));
        t.missed += usize::from(any(|f| matches!(f, Failure::Missed { .. })));
        t.prediction += usize::from(any(|f| {
            matches!(f, Failure::Prediction { .. } | Failure::NoPrediction { .. })
        }));
        t.capture += usize::from(!r.capture_failures.is_empty());
        t.inventory += usize::from(!r.inventory_failures.is_empty());
        t.expected_divergences += r.expected_divergences.len();
    }
    j.passed = j.failures.is_empty() && t.failed == 0 && t.runs > 0;
    j.totals = t;
    j
}

fn index_problems(
    matrix: &NativeMatrix,
    index: &NativeIndex,
    matrix_sha256: &str,
    failures: &mut Vec<String>,
) {
    if index.matrix != matrix.name {
        failures.push(format!(
            "the index names matrix {:?}, the matrix is {:?}",
            index.matrix, matrix.name
        ));
    }
    if index.matrix_sha256 != matrix_sha256 {
        failures.push(format!(
            "the index's matrix sha256 {} is not the matrix's {matrix_sha256}",
            index.matrix_sha256
        ));
    }
    if index.client != matrix.client.id || index.client_version != matrix.client.version {
        failures.push(format!(
            "the index names client {} {}, the matrix {} {}",
            index.client, index.client_version, matrix.client.id, matrix.client.version
        ));
    }
    let want: Vec<(String, String, Option<String>, String)> = matrix
        .scenarios
        .iter()
        .flat_map(|s| {
            s.runs.iter().map(move |r| {
                (
                    s.id.clone(),
                    r.mode.as_str().to_string(),
                    r.name.clone(),
                    run_dir(s, r),
                )
            })
        })
        .collect();
    if index.runs.len() != want.len() {
        failures.push(format!(
            "the index lists {} runs, the matrix has {}",
            index.runs.len(),
            want.len()
        ));
    }
    for (i, (e, w)) in index.runs.iter().zip(&want).enumerate() {
        let got = (
            e.scenario.clone(),
            e.mode.clone(),
            e.name.clone(),
            e.dir.clone(),
        );
        if &got != w {
            failures.push(format!(
                "index run {i} is {}/{} in {:?}, the matrix's run {i} is {}/{} in {:?}",
                e.scenario, e.mode, e.dir, w.0, w.1, w.3
            ));
            // One reordering is enough to name; the runs are judged in matrix order anyway.
            break;
        }
    }
}

/// Judge one run from its records (`entry` is its index entry when the index has it in place).
fn judge_one(
    matrix: &NativeMatrix,
    scenario: &Scenario,
    run: &Run,
    client_path: &str,
    entry: Option<&crate::native_capture::NativeRunEntry>,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> RunJudgement {
    let dir = run_dir(scenario, run);
    let mut r = RunJudgement {
        scenario: scenario.id.clone(),
        mode: run.mode,
        name: run.name.clone(),
        dir: dir.clone(),
        observation: None,
        launch_counts: BTreeMap::new(),
        capture_failures: Vec::new(),
        inventory_failures: Vec::new(),
        failures: Vec::new(),
        expected_divergences: Vec::new(),
        digests: BTreeMap::new(),
        passed: false,
    };
    match entry {
        None => r
            .capture_failures
            .push("the index does not list this run in its place".to_string()),
        Some(e) if !e.completed => r.capture_failures.push(format!(
            "the runner did not complete the run: {}",
            e.error.as_deref().unwrap_or("no reason given")
        )),
        Some(_) => {}
    }

    let mut file = |rel: &str| -> Option<Vec<u8>> {
        let path = format!("{NATIVE_DIR}/{dir}/{rel}");
        match read(&path) {
            Some(bytes) => {
                r.digests.insert(path, sha256_hex(&bytes));
                Some(bytes)
            }
            None => {
                r.capture_failures.push(format!("{path} is missing"));
                None
            }
        }
    };
    let client_bytes = file(CLIENT_RECORD_FILE);
    let stdout = file(CLIENT_STDOUT_FILE);
    let stderr = file(CLIENT_STDERR_FILE);
    let witness_bytes = file(CLIENT_WITNESS_FILE);
    let marker_bytes = file(SENTINEL_FILE);
    let http_bytes = file(HTTP_LOG_FILE);
    let inv_record = file(&format!("{INVENTORY_DIR}/record.json"));
    let inv_stdout = file(&format!("{INVENTORY_DIR}/stdout"));
    let inv_stderr = file(&format!("{INVENTORY_DIR}/stderr"));
    let inv_witness = file(&format!("{INVENTORY_DIR}/witness.json"));

    fn parse<T: serde::de::DeserializeOwned>(
        what: &str,
        bytes: &Option<Vec<u8>>,
        failures: &mut Vec<String>,
    ) -> Option<T> {
        let b = bytes.as_ref()?;
        match strict_json::from_slice(b) {
            Ok(v) => Some(v),
            Err(e) => {
                failures.push(format!("{what} does not parse: {e}"));
                None
            }
        }
    }
    let cf = &mut r.capture_failures;
    let client: Option<ClientRecord> = parse(CLIENT_RECORD_FILE, &client_bytes, cf);
    let witness: Option<WitnessRecord> = parse(CLIENT_WITNESS_FILE, &witness_bytes, cf);
    let http: Option<HttpLog> = parse(HTTP_LOG_FILE, &http_bytes, cf);
    let marker = marker_bytes
        .as_ref()
        .and_then(|b| parse_marker(b).map_err(|e| cf.push(e)).ok());

    // The client record: this run's, with the argv, cwd and environment the matrix says.
    let mut exit_code = None;
    if let Some(c) = &client {
        exit_code = client_problems(matrix, scenario, run, client_path, c, &stdout, &stderr, cf);
    }

    // The inventory of the same tree.
    let inventory_record: Option<CaseRecord> = parse(
        "inventory/record.json",
        &inv_record,
        &mut r.inventory_failures,
    );
    let inventory_witness: Option<WitnessRecord> = parse(
        "inventory/witness.json",
        &inv_witness,
        &mut r.inventory_failures,
    );
    let mut rows = None;
    if let (Some(rec), Some(w), Some(out), Some(err)) = (
        &inventory_record,
        &inventory_witness,
        &inv_stdout,
        &inv_stderr,
    ) {
        let verdict = judge_inventory(matrix, scenario, run, out, err, rec, w);
        if rec.verdict != verdict {
            r.inventory_failures.push(
                "the inventory record's verdict is not the one recomputed from its records"
                    .to_string(),
            );
        }
        r.inventory_failures.extend(verdict.failures);
        rows = inventory_document(out).ok();
    } else if inv_record.is_some() && inv_witness.is_some() {
        r.inventory_failures
            .push("the inventory's stdout or stderr is missing".to_string());
    }

    let (Some(exit_code), Some(stdout), Some(witness), Some(http), Some(marker)) =
        (exit_code, &stdout, &witness, &http, &marker)
    else {
        return finished(r);
    };
    let l = launched(matrix, client_path, marker, witness, http);
    r.capture_failures.extend(l.problems);
    let (listed, problems) =
        listed_servers_for(&matrix.client.id, run.mode, stdout, &matrix.tag_arg_prefix);
    r.capture_failures.extend(problems);
    let observation = Observation {
        exit_code,
        launched: l.counts.keys().cloned().collect(),
        listed,
    };
    r.launch_counts = l.counts;
    if let Some(rows) = rows {
        let v = native::judge_run(scenario, run, &observation, &rows);
        r.failures = v.failures;
        r.expected_divergences = v.expected_divergences;
    } else if r.inventory_failures.is_empty() {
        r.inventory_failures
            .push("the inventory has no rows to judge against".to_string());
    }
    r.observation = Some(observation);
    finished(r)
}

fn finished(mut r: RunJudgement) -> RunJudgement {
    if r.observation.is_none() && r.capture_failures.is_empty() {
        r.capture_failures
            .push("the run's records do not give an observation".to_string());
    }
    r.passed = r.capture_failures.is_empty()
        && r.inventory_failures.is_empty()
        && r.failures.is_empty()
        && r.observation.is_some();
    r
}

/// The client record against the matrix and its captures; the exit code to judge (a signal
/// `s` counts as `-s`, as Python's `returncode`), `None` when there is neither.
#[allow(clippy::too_many_arguments)]
fn client_problems(
    matrix: &NativeMatrix,
    scenario: &Scenario,
    run: &Run,
    client_path: &str,
    c: &ClientRecord,
    stdout: &Option<Vec<u8>>,
    stderr: &Option<Vec<u8>>,
    failures: &mut Vec<String>,
) -> Option<i32> {
    if c.scenario != scenario.id || c.mode != run.mode.as_str() {
        failures.push(format!(
            "client.json is for {}/{}, not this run",
            c.scenario, c.mode
        ));
    }
    let argv = client_argv(matrix, run, client_path);
    if c.argv != argv {
        failures.push(format!("client argv {:?}, expected {argv:?}", c.argv));
    }
    if c.cwd != client_cwd(matrix, scenario) {
        failures.push(format!(
            "client cwd {:?}, expected {:?}",
            c.cwd,
            client_cwd(matrix, scenario)
        ));
    }
    let env = client_env(matrix, scenario);
    if c.env != env {
        failures.push("the client's environment is not the matrix's".to_string());
    }
    if c.timed_out {
        failures.push(format!(
            "the client timed out after {} s and was killed",
            matrix.defaults.deadline_s
        ));
    }
    for (stream, want_file, captured, bytes) in [
        ("stdout", CLIENT_STDOUT_FILE, &c.stdout, stdout),
        ("stderr", CLIENT_STDERR_FILE, &c.stderr, stderr),
    ] {
        if captured.file != want_file {
            failures.push(format!(
                "the client's {stream} is recorded as {:?}, not {want_file}",
                captured.file
            ));
        }
        let Some(bytes) = bytes else { continue };
        if sha256_hex(bytes) != captured.sha256 {
            failures.push(format!("{want_file} does not match its recorded sha256"));
        }
        let kept = bytes.len() as u64;
        let consistent = kept <= CLIENT_OUTPUT_LIMIT as u64
            && kept <= captured.total_bytes
            && captured.truncated == (captured.total_bytes > kept)
            && (!captured.truncated || kept == CLIENT_OUTPUT_LIMIT as u64);
        if !consistent {
            failures.push(format!(
                "{want_file}: {kept} bytes kept of {} (truncated {}) is not how the runner caps output",
                captured.total_bytes, captured.truncated
            ));
        }
        if stream == "stdout" && captured.truncated {
            failures.push(format!(
                "the client's stdout was truncated at {CLIENT_OUTPUT_LIMIT} bytes: what it listed is incomplete"
            ));
        }
    }
    match (c.exit_code, c.signal) {
        (Some(code), None) => Some(code),
        (None, Some(s)) => Some(s.checked_neg().unwrap_or(i32::MIN)),
        _ => {
            failures.push(format!(
                "client.json has exit code {:?} and signal {:?}: exactly one is expected",
                c.exit_code, c.signal
            ));
            None
        }
    }
}

#[cfg(test)]
#[path = "native_observe_tests.rs"]
mod tests;
