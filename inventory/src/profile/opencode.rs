//! The OpenCode profile (`--client opencode`): the files OpenCode merges, as
//! its config loader does. Project: `opencode.jsonc` and `opencode.json` at
//! the root and at every ancestor up to the nearest `.git` (OpenCode's
//! worktree; without one, every ancestor up to `/`; at most 64 levels, past
//! which the first unread level's two files stand unread for all of them:
//! `too-large` / `too-many-entries`), all `opencode.jsonc`
//! files merged first (outermost first), then all `opencode.json` files, so
//! the nearest `opencode.json` wins. Global: `~/.config/opencode/` with
//! `config.json`, `opencode.json`, `opencode.jsonc` (later wins). Servers under
//! `mcp`, merged key by key (`possibleShadowedBy`: a higher file's entry
//! overrides the fields it names). Parser: JSONC with comments and trailing
//! commas (`jsonc-parser`); no BOM.
//!
//! Entries: `type: "local"` with `command` as an array (program then
//! arguments), `environment`, `enabled`, `timeout`; `type: "remote"` with
//! `url`, `headers`, `enabled`, `oauth`, `timeout`. OpenCode's schema allows
//! no other field, so an unknown one is `unknown-field`.
//!
//! This profile must never run anything, resolve `{env:...}`/`{file:...}`, or
//! report a field's value.

use crate::host::Os;
use crate::json::Value;
use crate::model::{Shape, Transport};
use crate::profile::grammar::{switch, Switch};
use crate::profile::layers::{self, Checked, Container, Layer, LevelFile, Precedence, Syntax};
use crate::profile::{coverage, project_levels, Candidate, Context, Inventory, Profile, Shadowing};
use crate::shape::{is_string, map_value, string_array_value};

pub const PROJECT_JSON: &str = "project-json";
pub const PROJECT_JSONC: &str = "project-jsonc";
pub const ANCESTOR_JSON: &str = "ancestor-json";
pub const ANCESTOR_JSONC: &str = "ancestor-jsonc";
pub const GLOBAL_JSONC: &str = "global-jsonc";
pub const GLOBAL_JSON: &str = "global-json";
pub const GLOBAL_CONFIG: &str = "global-config-json";

const SHADOW_ORDER: [&str; 7] = [
    PROJECT_JSON,
    ANCESTOR_JSON,
    PROJECT_JSONC,
    ANCESTOR_JSONC,
    GLOBAL_JSONC,
    GLOBAL_JSON,
    GLOBAL_CONFIG,
];

pub const NOT_EXAMINED: [&str; 9] = [
    "remote-well-known-config",
    "opencode-config-env",
    "opencode-config-content-env",
    "opencode-directories",
    "managed-config",
    "xdg-config-home-override",
    "variable-substitution",
    "agents-and-modes",
    "instructions",
];

const LOCAL_FIELDS: [&str; 5] = ["command", "enabled", "environment", "timeout", "type"];
const REMOTE_FIELDS: [&str; 6] = ["enabled", "headers", "oauth", "timeout", "type", "url"];

pub struct OpenCode;

/// An OpenCode `mcp` entry.
pub fn entry(e: &Value) -> Checked {
    let Some(obj) = e.as_object() else {
        return Checked::new(Shape::not_object("entry-not-object"), None, &[], None);
    };
    let mut problems = Vec::new();
    let (transport, known): (Transport, &[&'static str]) = match obj.get("type") {
        Some(Value::String(t)) if t == "local" => (Transport::Stdio, &LOCAL_FIELDS),
        Some(Value::String(t)) if t == "remote" => (Transport::Http, &REMOTE_FIELDS),
        Some(Value::String(_)) => {
            problems.push("unsupported-type");
            (Transport::Unknown, &[])
        }
        Some(_) => {
            problems.push("type-not-string");
            (Transport::Unknown, &[])
        }
        None => {
            problems.push("missing-type");
            (Transport::Unknown, &[])
        }
    };
    let command = obj.get("command");
    let (mut arg_count, mut program) = (0, None);
    match transport {
        Transport::Stdio => match command {
            None => problems.push("missing-command"),
            Some(Value::Array(items)) if items.is_empty() => problems.push("empty-command"),
            Some(c @ Value::Array(items)) => {
                let (n, ok) = string_array_value(
                    Some(c),
                    "invalid-command",
                    "invalid-command",
                    &mut problems,
                );
                arg_count = n.saturating_sub(1);
                if ok {
                    program = items.first().and_then(Value::as_str);
                }
            }
            Some(_) => problems.push("invalid-command"),
        },
        Transport::Http => match obj.get("url") {
            None => problems.push("missing-url"),
            Some(Value::String(u)) if !u.is_empty() => {}
            Some(_) => problems.push("invalid-url"),
        },
        _ => {}
    }
    let env_count = map_value(
        obj.get("environment"),
        "invalid-environment",
        "invalid-environment",
        is_string,
        &mut problems,
    );
    let header_count = map_value(
        obj.get("headers"),
        "invalid-headers",
        "invalid-headers",
        is_string,
        &mut problems,
    );
    if obj
        .get("enabled")
        .is_some_and(|v| !matches!(v, Value::Bool(_)))
    {
        problems.push("invalid-enabled");
    }
    if obj
        .get("timeout")
        .is_some_and(|v| !matches!(v, Value::Number(_)))
    {
        problems.push("invalid-timeout");
    }
    if obj
        .get("oauth")
        .is_some_and(|v| !matches!(v, Value::Object(_) | Value::Bool(false)))
    {
        problems.push("invalid-oauth");
    }
    if !known.is_empty() && obj.iter().any(|(k, _)| !known.contains(&k)) {
        problems.push("unknown-field");
    }
    let mut all: Vec<&'static str> = LOCAL_FIELDS
        .iter()
        .chain(REMOTE_FIELDS.iter())
        .copied()
        .collect();
    all.sort_unstable();
    all.dedup();
    let fields = all.into_iter().filter(|f| obj.get(f).is_some()).collect();
    let shape = Shape {
        arg_count,
        env_count,
        header_count,
        ..Shape::new(problems, transport, fields)
    };
    let args: Vec<&str> = match command {
        Some(Value::Array(items)) => items
            .iter()
            .skip(1)
            .map_while(Value::as_str)
            .take(16)
            .collect(),
        _ => Vec::new(),
    };
    Checked::new(
        shape,
        program,
        &args,
        switch(obj, Switch::Enabled("enabled")),
    )
}

impl Profile for OpenCode {
    fn id(&self) -> &'static str {
        "opencode"
    }

    fn title(&self) -> &'static str {
        "OpenCode"
    }

    fn candidates(&self, _os: Os) -> Vec<Candidate> {
        let j = "jsonc";
        vec![
            Candidate::new(PROJECT_JSONC, "<root>/opencode.jsonc", j, "mcp"),
            Candidate::new(PROJECT_JSON, "<root>/opencode.json", j, "mcp"),
            Candidate::new(
                ANCESTOR_JSONC,
                "<ancestor up to .git>/opencode.jsonc",
                j,
                "mcp",
            ),
            Candidate::new(
                ANCESTOR_JSON,
                "<ancestor up to .git>/opencode.json",
                j,
                "mcp",
            ),
            Candidate::new(GLOBAL_JSONC, "~/.config/opencode/opencode.jsonc", j, "mcp"),
            Candidate::new(GLOBAL_JSON, "~/.config/opencode/opencode.json", j, "mcp"),
            Candidate::new(GLOBAL_CONFIG, "~/.config/opencode/config.json", j, "mcp"),
        ]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::ScopeOrder(&SHADOW_ORDER)
    }

    fn ancestor_project_scopes(&self) -> &'static [&'static str] {
        &[ANCESTOR_JSONC, ANCESTOR_JSON]
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        let c = Container::Map(&["mcp"]);
        let s = Syntax::JSONC_NO_BOM;
        let levels = project_levels(&ctx.root.canonical, ".git", true).listed();
        let n = levels.len();
        // Every opencode.jsonc (outermost first) is merged before every
        // opencode.json: the nearest opencode.json ranks first.
        let mut layers = layers::level_layers(
            &levels,
            &[
                LevelFile {
                    scopes: (PROJECT_JSONC, ANCESTOR_JSONC),
                    name: "opencode.jsonc",
                    rank: |i, n| n + i,
                },
                LevelFile {
                    scopes: (PROJECT_JSON, ANCESTOR_JSON),
                    name: "opencode.json",
                    rank: |i, _| i,
                },
            ],
            s,
            c,
        );
        let home = ctx.host.home.as_deref();
        for (scope, file, rank) in [
            (GLOBAL_JSONC, "opencode.jsonc", 2 * n),
            (GLOBAL_JSON, "opencode.json", 2 * n + 1),
            (GLOBAL_CONFIG, "config.json", 2 * n + 2),
        ] {
            let rel = format!(".config/opencode/{file}");
            layers.push(Layer::new(
                scope,
                home,
                &rel,
                &format!("~/{rel}"),
                s,
                c,
                rank,
            ));
        }
        Inventory {
            coverage: coverage(&NOT_EXAMINED),
            ..layers::inventory(&layers, entry, Precedence::Rank)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Options};
    use crate::model::Launch;

    fn c(s: &str) -> Checked {
        entry(&parse(s.as_bytes(), &Options::JSONC).unwrap())
    }

    #[test]
    fn local_entries_take_the_program_from_the_command_array() {
        let got = c(r#"{"type":"local","command":["npx","-y","pkg"],"environment":{"A":"b"}}"#);
        assert!(got.shape.valid, "{:?}", got.shape.problems);
        assert_eq!((got.shape.arg_count, got.shape.env_count), (2, 1));
        assert_eq!(got.launch, Launch::PackageRunner);
        assert_eq!(got.enabled, Some(true));
        assert_eq!(
            c(r#"{"type":"local","command":[]}"#).shape.problems,
            ["empty-command"]
        );
        assert_eq!(
            c(r#"{"type":"local","command":"npx"}"#).shape.problems,
            ["invalid-command"]
        );
        assert_eq!(
            c(r#"{"type":"local","command":["x"],"args":["a"]}"#)
                .shape
                .problems,
            ["unknown-field"]
        );
    }

    #[test]
    fn remote_entries_and_switches() {
        let got = c(r#"{"type":"remote","url":"u","headers":{"h":"v"},"enabled":false}"#);
        assert_eq!(
            (got.shape.transport, got.shape.header_count),
            (Transport::Http, 1)
        );
        assert_eq!(got.enabled, Some(false));
        assert_eq!(got.launch, Launch::Remote);
        assert_eq!(c(r#"{"command":["x"]}"#).shape.problems, ["missing-type"]);
        assert_eq!(c(r#"{"type":"remote"}"#).shape.problems, ["missing-url"]);
    }
}
