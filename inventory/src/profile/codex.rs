//! The Codex profile (`--client codex`): Codex's TOML config layers, highest
//! precedence first, as its config loader builds them (openai/codex
//! `codex-rs/core/src/config_loader`):
//!
//! | scope      | file                                                         |
//! |------------|--------------------------------------------------------------|
//! | `managed`  | `/etc/codex/managed_config.toml` (Windows: `$CODEX_HOME\managed_config.toml`) |
//! | `project`  | `<root>/.codex/config.toml`                                  |
//! | `ancestor` | `<dir>/.codex/config.toml` for each ancestor up to the project root (the nearest `.git`), 63 at most |
//! | `user`     | `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`)   |
//! | `system`   | `/etc/codex/config.toml` (Windows: `C:\ProgramData\OpenAI\Codex\config.toml`) |
//!
//! Servers under `mcp_servers.<name>`. Codex merges the layers table by table,
//! so a higher layer's `[mcp_servers.x]` overrides the fields it names
//! (`possibleShadowedBy`). A project level whose `.codex` is `$CODEX_HOME`
//! itself is the user layer, not a project layer (Codex skips it too). At most
//! `MAX_PROJECT_LEVELS` (64) project levels are read: past them one more
//! `ancestor` source, the first unread level's file, stands unread for all of
//! them (`too-large` / `too-many-entries`; `profile::project_levels`).
//!
//! Trust gate: Codex loads a project layer only when the project is trusted
//! under `[projects."<path>"] trust_level = "trusted"` in the user or system
//! file (the level's own directory, then the project root, each by its realpath). Each project
//! source carries `trusted`: `true`, `false` (untrusted or not listed: Codex
//! ignores the file) or `"unknown"` (the user or system file could not be
//! read, or the project root's `.git` is a file — a worktree, whose trust may
//! come from the main repository). Every file is read whatever the answer.
//!
//! Parsing is the `toml` crate's, as in Codex: a duplicate key or table makes
//! the file `malformed` (Codex refuses to start on it), with its position.
//!
//! Each row carries `predictedLaunch` (`codex_launch`): what `codex mcp list`,
//! `codex mcp get` and a headless `codex exec` would do with it, as observed on
//! the pinned native Codex.
//!
//! This profile must never run anything, read `auth.json` or a bearer token's
//! value, or report a field's value or a trusted path.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::host::Os;
use crate::instructions;
use crate::json::{Object, Value};
use crate::model::{Instruction, Shape, Transport, Tri};
use crate::profile::codex_launch;
use crate::profile::grammar::{leading_args, switch, Switch};
use crate::profile::layers::{self, Checked, Container, Layer, Precedence, Syntax};
use crate::profile::{
    coverage, project_levels, Candidate, Context, Inventory, Profile, ProjectLevels, Shadowing,
};
use crate::shape::{is_string, map_value, string_array_value};

pub const MANAGED: &str = "managed";
pub const PROJECT: &str = "project";
pub const ANCESTOR: &str = "ancestor";
pub const USER: &str = "user";
pub const SYSTEM: &str = "system";

const SHADOW_ORDER: [&str; 5] = [MANAGED, PROJECT, ANCESTOR, USER, SYSTEM];

pub const NOT_EXAMINED: [&str; 9] = [
    "profile-overlays",
    "session-flags",
    "requirements-toml",
    "cloud-requirements",
    "macos-managed-preferences",
    "project-root-markers",
    "worktree-main-repository-trust",
    "plugins",
    "instruction-imports",
];

/// Known `mcp_servers.<name>` fields (Codex's `RawMcpServerConfig`), sorted.
const FIELDS: [&str; 24] = [
    "args",
    "bearer_token",
    "bearer_token_env_var",
    "command",
    "cwd",
    "default_tools_approval_mode",
    "disabled_tools",
    "enabled",
    "enabled_tools",
    "env",
    "env_http_headers",
    "env_vars",
    "experimental_environment",
    "http_headers",
    "name",
    "oauth_resource",
    "required",
    "scopes",
    "startup_timeout_ms",
    "startup_timeout_sec",
    "supports_parallel_tool_calls",
    "tool_timeout_sec",
    "tools",
    "url",
];

/// Fields Codex refuses beside `command` (streamable HTTP only).
const HTTP_ONLY: [&str; 5] = [
    "bearer_token_env_var",
    "env_http_headers",
    "http_headers",
    "oauth_resource",
    "url",
];

/// Fields Codex refuses beside `url` (stdio only).
const STDIO_ONLY: [&str; 4] = ["args", "cwd", "env", "env_vars"];

pub struct Codex;

/// A `[mcp_servers.<name>]` table, checked as Codex's `McpServerConfig`
/// conversion checks it.
pub fn entry(e: &Value) -> Checked {
    let Some(obj) = e.as_object() else {
        return Checked::new(Shape::not_object("entry-not-table"), None, &[], None);
    };
    let mut problems = Vec::new();
    let command = obj.get("command");
    let transport = if command.is_some() {
        if HTTP_ONLY.iter().any(|k| obj.get(k).is_some()) {
            problems.push("http-field-on-stdio-server");
        }
        Transport::Stdio
    } else if obj.get("url").is_some() {
        if STDIO_ONLY.iter().any(|k| obj.get(k).is_some()) {
            problems.push("stdio-field-on-http-server");
        }
        Transport::Http
    } else {
        problems.push("missing-command");
        Transport::Unknown
    };
    // Codex refuses an inline `bearer_token` for either transport (use
    // `bearer_token_env_var`); its value is never looked at.
    if obj.get("bearer_token").is_some() {
        problems.push("bearer-token-not-supported");
    }
    for key in [
        "command",
        "url",
        "cwd",
        "bearer_token_env_var",
        "oauth_resource",
        "name",
    ] {
        if obj.get(key).is_some_and(|v| !matches!(v, Value::String(_))) {
            problems.push(match key {
                "command" => "invalid-command",
                "url" => "invalid-url",
                "cwd" => "invalid-cwd",
                "bearer_token_env_var" => "invalid-bearer-token-env-var",
                "oauth_resource" => "invalid-oauth-resource",
                _ => "invalid-name",
            });
        }
    }
    let (args, _) = string_array_value(
        obj.get("args"),
        "invalid-args",
        "invalid-args",
        &mut problems,
    );
    let env = map_value(
        obj.get("env"),
        "invalid-env",
        "invalid-env",
        is_string,
        &mut problems,
    );
    let (env_vars, _) = string_array_value(
        obj.get("env_vars"),
        "invalid-env-vars",
        "invalid-env-vars",
        &mut problems,
    );
    let headers = map_value(
        obj.get("http_headers"),
        "invalid-http-headers",
        "invalid-http-headers",
        is_string,
        &mut problems,
    ) + map_value(
        obj.get("env_http_headers"),
        "invalid-env-http-headers",
        "invalid-env-http-headers",
        is_string,
        &mut problems,
    );
    for key in ["enabled", "required", "supports_parallel_tool_calls"] {
        if obj.get(key).is_some_and(|v| !matches!(v, Value::Bool(_))) {
            problems.push(match key {
                "enabled" => "invalid-enabled",
                "required" => "invalid-required",
                _ => "invalid-supports-parallel-tool-calls",
            });
        }
    }
    for key in [
        "startup_timeout_sec",
        "startup_timeout_ms",
        "tool_timeout_sec",
    ] {
        if obj.get(key).is_some_and(|v| !matches!(v, Value::Number(_))) {
            problems.push("invalid-timeout");
        }
    }
    for key in ["enabled_tools", "disabled_tools", "scopes"] {
        string_array_value(
            obj.get(key),
            "invalid-tool-list",
            "invalid-tool-list",
            &mut problems,
        );
    }
    if obj.get("tools").is_some_and(|v| v.as_object().is_none()) {
        problems.push("invalid-tools");
    }
    problems.dedup();
    let fields = FIELDS
        .iter()
        .copied()
        .filter(|f| obj.get(f).is_some())
        .collect();
    let shape = Shape {
        arg_count: args,
        env_count: env + env_vars,
        header_count: headers,
        ..Shape::new(problems, transport, fields)
    };
    let args = leading_args(obj.get("args"));
    Checked::new(
        shape,
        command.and_then(Value::as_str),
        &args,
        switch(obj, Switch::Enabled("enabled")),
    )
}

/// The Codex home: `$CODEX_HOME`, else `~/.codex` (`None` when neither is
/// known).
fn codex_home(ctx: &Context) -> Option<PathBuf> {
    ctx.host
        .codex_home
        .clone()
        .or_else(|| ctx.host.home.as_ref().map(|h| h.join(".codex")))
}

impl Profile for Codex {
    fn id(&self) -> &'static str {
        "codex"
    }

    fn title(&self) -> &'static str {
        "Codex"
    }

    fn candidates(&self, os: Os) -> Vec<Candidate> {
        let t = "toml";
        let c = "mcp_servers";
        let (managed, system) = match os {
            Os::Windows => (
                "$CODEX_HOME\\managed_config.toml",
                "C:\\ProgramData\\OpenAI\\Codex\\config.toml",
            ),
            Os::Linux | Os::MacOs => ("/etc/codex/managed_config.toml", "/etc/codex/config.toml"),
        };
        vec![
            Candidate::new(MANAGED, managed, t, c),
            Candidate::new(PROJECT, "<root>/.codex/config.toml", t, c),
            Candidate::new(ANCESTOR, "<ancestor up to .git>/.codex/config.toml", t, c),
            Candidate::new(USER, "$CODEX_HOME/config.toml (~/.codex/config.toml)", t, c),
            Candidate::new(SYSTEM, system, t, c),
        ]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::ScopeOrder(&SHADOW_ORDER)
    }

    fn ancestor_project_scopes(&self) -> &'static [&'static str] {
        &[ANCESTOR]
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        let c = Container::Map(&["mcp_servers"]);
        let t = Syntax::Toml;
        let home = codex_home(ctx);
        let walk = project_levels(&ctx.root.canonical, ".git", false);
        let not_home = |dir: &&Path| home.as_deref() != Some(dir.join(".codex").as_path());
        let levels: Vec<&Path> = walk.read.iter().copied().filter(not_home).collect();
        // The levels past the bound: the first one's file stands for all of them.
        let unread: Vec<&Path> = walk.unread.iter().copied().filter(not_home).collect();
        let n = levels.len() + usize::from(!unread.is_empty());

        let managed = Layer::system(ctx, MANAGED, "/etc/codex/managed_config.toml", t, c, 0);
        let user = Layer::new(
            USER,
            home.as_deref(),
            "config.toml",
            "~/.codex/config.toml",
            t,
            c,
            n + 1,
        );
        let system = Layer::system(ctx, SYSTEM, "/etc/codex/config.toml", t, c, n + 2);

        // The user and system files decide trust: read them first.
        let mut trust = TrustTable::default();
        let (user_source, user_rows) =
            layers::read_with(&user, entry, &mut |top| trust.add(top, 1));
        let (system_source, system_rows) =
            layers::read_with(&system, entry, &mut |top| trust.add(top, 0));
        let trust_known = [&user_source, &system_source]
            .iter()
            .all(|s| s.state.is_complete());
        let project_root = walk.top();
        // A `.git` that is a file: a worktree (metadata only, never opened).
        let worktree = project_root.is_some_and(|r| crate::read::probe_file(r, &[".git"]).is_ok());

        let trusted = |dir: &Path| {
            if !trust_known {
                return Tri::Unknown;
            }
            match trust.decide(dir, &ctx.root.explicit, &ctx.root.canonical, project_root) {
                Some(b) => Tri::Known(b),
                None if worktree => Tri::Unknown,
                None => Tri::Known(false),
            }
        };
        let mut layers_in_order = vec![managed];
        for (i, dir) in levels.iter().enumerate() {
            let scope = if *dir == ctx.root.canonical {
                PROJECT
            } else {
                ANCESTOR
            };
            let mut l = Layer::new(scope, Some(dir), ".codex/config.toml", "", t, c, 1 + i);
            l.trusted = Some(trusted(dir));
            layers_in_order.push(l);
        }
        if let Some(first) = unread.first() {
            let rank = 1 + levels.len();
            let mut l = Layer::new(ANCESTOR, Some(first), ".codex/config.toml", "", t, c, rank);
            l.not_read = Some(ProjectLevels::NOT_READ);
            // The levels' trust when they all agree (Codex loads all of them or
            // none), else unknown.
            let mut answers = unread.iter().map(|dir| trusted(dir));
            let agreed = answers.next().filter(|a| answers.all(|b| b == *a));
            l.trusted = Some(agreed.unwrap_or(Tri::Unknown));
            layers_in_order.push(l);
        }
        let mut sources = Vec::with_capacity(layers_in_order.len() + 2);
        let mut rows = Vec::new();
        for (i, layer) in layers_in_order.iter().enumerate() {
            let (source, found) = layers::read(layer, entry);
            sources.push(source);
            rows.extend(found.into_iter().map(|(s, on)| (i, s, on)));
        }
        let ui = layers_in_order.len();
        layers_in_order.push(user);
        layers_in_order.push(system);
        sources.push(user_source);
        sources.push(system_source);
        rows.extend(user_rows.into_iter().map(|(s, on)| (ui, s, on)));
        rows.extend(system_rows.into_iter().map(|(s, on)| (ui + 1, s, on)));

        let layer_of: Vec<usize> = rows.iter().map(|(i, _, _)| *i).collect();
        let mut servers = layers::relate(&layers_in_order, rows, Precedence::Rank);
        codex_launch::annotate(&sources, &mut servers, &layer_of);
        Inventory {
            sources,
            servers,
            instructions: instruction_candidates(&walk.read, home.as_deref()),
            coverage: coverage(&NOT_EXAMINED),
        }
    }
}

/// `AGENTS.override.md` and `AGENTS.md` at every project level read (the
/// levels past the bound are listed as one source, not probed) and in the
/// Codex home (metadata only).
fn instruction_candidates(levels: &[&Path], home: Option<&Path>) -> Vec<Instruction> {
    const NAMES: [&str; 2] = ["AGENTS.override.md", "AGENTS.md"];
    let mut out = Vec::new();
    for (i, dir) in levels.iter().enumerate() {
        let scope = if i == 0 { "project" } else { "ancestor" };
        out.extend(NAMES.iter().map(|n| instructions::probe(scope, dir, n)));
    }
    for n in NAMES {
        out.push(match home {
            Some(h) => instructions::probe("user", h, n),
            None => instructions::home_unknown("user", n),
        });
    }
    out
}

/// `[projects."<path>"] trust_level` from the user (which wins) and system
/// files.
#[derive(Debug, Default)]
struct TrustTable {
    /// path -> (layer weight, trusted?): a higher weight wins.
    levels: HashMap<String, (u8, Option<bool>)>,
}

impl TrustTable {
    fn add(&mut self, top: &Value, weight: u8) {
        let Some(projects) = top
            .as_object()
            .and_then(|o| o.get("projects"))
            .and_then(Value::as_object)
        else {
            return;
        };
        for (path, table) in projects.iter() {
            let level = table
                .as_object()
                .and_then(|t: &Object| t.get("trust_level"))
                .and_then(Value::as_str);
            let trusted = match level {
                Some("trusted") => Some(true),
                Some("untrusted") => Some(false),
                _ => None,
            };
            let slot = self
                .levels
                .entry(path.to_owned())
                .or_insert((weight, trusted));
            if weight >= slot.0 && trusted.is_some() {
                *slot = (weight, trusted);
            }
        }
    }

    /// The decision for a project directory: its own (canonical) key, then the
    /// project root's.
    fn decide(
        &self,
        dir: &Path,
        explicit_root: &Path,
        canonical_root: &Path,
        project_root: Option<&Path>,
    ) -> Option<bool> {
        // Codex keys trust by the realpath of the directory (its cwd is the realpath): a key
        // spelled through a symlink is not honoured (observed with Codex 0.163.0,
        // scenario root-symlink-trust-link), so the explicit spelling is not consulted.
        let _ = (explicit_root, canonical_root);
        let mut keys: Vec<PathBuf> = vec![dir.to_path_buf()];
        if let Some(r) = project_root {
            keys.push(r.to_path_buf());
        }
        keys.iter().find_map(|k| {
            self.levels
                .get(k.to_string_lossy().as_ref())
                .and_then(|(_, t)| *t)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Launch;

    fn c(toml: &str) -> Checked {
        let v = crate::toml_config::parse_located(toml.as_bytes()).unwrap();
        entry(&v)
    }

    #[test]
    fn stdio_and_http_tables() {
        let s = c(
            "command = \"npx\"\nargs = [\"-y\", \"p\"]\nenv = { A = \"b\" }\nenv_vars = [\"C\"]\n",
        );
        assert!(s.shape.valid, "{:?}", s.shape.problems);
        assert_eq!((s.shape.arg_count, s.shape.env_count), (2, 2));
        assert_eq!((s.launch, s.enabled), (Launch::PackageRunner, Some(true)));
        let h = c("url = \"https://x\"\nhttp_headers = { a = \"b\" }\nenv_http_headers = { c = \"D\" }\nenabled = false\n");
        assert_eq!(
            (h.shape.transport, h.shape.header_count),
            (Transport::Http, 2)
        );
        assert_eq!((h.launch, h.enabled), (Launch::Remote, Some(false)));
    }

    #[test]
    fn what_codex_refuses_is_an_invalid_shape() {
        assert_eq!(c("args = [\"x\"]\n").shape.problems, ["missing-command"]);
        assert_eq!(
            c("command = \"x\"\nurl = \"u\"\n").shape.problems,
            ["http-field-on-stdio-server"]
        );
        assert_eq!(
            c("url = \"u\"\ncwd = \"/\"\n").shape.problems,
            ["stdio-field-on-http-server"]
        );
        assert_eq!(c("command = 3\n").shape.problems, ["invalid-command"]);
        assert_eq!(
            c("command = \"x\"\nstartup_timeout_sec = \"10\"\n")
                .shape
                .problems,
            ["invalid-timeout"]
        );
    }

    #[test]
    fn trust_is_the_user_files_word_then_the_project_roots() {
        let v = crate::toml_config::parse_located(
            b"[projects.\"/r/p\"]\ntrust_level = \"trusted\"\n[projects.\"/r\"]\ntrust_level = \"untrusted\"\n",
        )
        .unwrap();
        let mut t = TrustTable::default();
        t.add(&v, 1);
        let p = Path::new("/r/p");
        assert_eq!(t.decide(p, p, p, Some(Path::new("/r"))), Some(true));
        assert_eq!(
            t.decide(Path::new("/r/q"), p, p, Some(Path::new("/r"))),
            Some(false)
        );
        assert_eq!(t.decide(Path::new("/x"), p, p, None), None);
        // The system file cannot override the user's word.
        let sys = crate::toml_config::parse_located(
            b"[projects.\"/r/p\"]\ntrust_level = \"untrusted\"\n",
        )
        .unwrap();
        t.add(&sys, 0);
        assert_eq!(t.decide(p, p, p, None), Some(true));
    }
}
