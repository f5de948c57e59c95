//! The Crush profile (`--client crush`): the JSON files Crush 0.87.0 merges,
//! highest precedence first — the data directory's `crush.json` (the nearest
//! `.crush` from the root up to the nearest `.git`, else `<root>/.crush`),
//! `crush.json` then `.crush.json` at the root and at every ancestor up to the
//! nearest `.git` (without one, the root alone; at most 64 levels, as for
//! OpenCode), the user's data file `~/.local/share/crush/crush.json`
//! (`%LOCALAPPDATA%\crush` on Windows), the user's `~/.config/crush/crush.json`
//! and, outside Windows, `/etc/crush/crush.json`. Servers under `mcp`, merged
//! key by key (`possibleShadowedBy`). Strict JSON as Go's `json.Valid` takes
//! it; a zero-length file, which Crush skips, declares nothing.
//!
//! Entries: `type` (`stdio`, `sse`, `http`; required: Crush starts nothing
//! without one), `command`, `args`, `env`, `url`, `headers`, `disabled`,
//! tool lists, `timeout`, the OAuth fields. An entry holding only a stored
//! `oauth_token` is the token Crush keeps beside a declaration (it drops one
//! with no declaration): a valid row whose launch is unknown. Sources:
//! `inventory/CLIENTS.md`.
//!
//! This profile must never run anything, ask git, expand `$VAR` or `$(...)`,
//! or report a field's value.

use std::path::Path;

use crate::host::Os;
use crate::json::Value;
use crate::model::{Shape, Transport};
use crate::profile::grammar::{self, field, Grammar, Kind, Switch};
use crate::profile::layers::{self, Checked, Container, Layer, LevelFile, Precedence, Syntax};
use crate::profile::{coverage, project_levels, Candidate, Context, Inventory, Profile, Shadowing};

pub const WORKSPACE: &str = "workspace";
pub const PROJECT: &str = "project";
pub const PROJECT_DOTFILE: &str = "project-dotfile";
pub const ANCESTOR: &str = "ancestor";
pub const ANCESTOR_DOTFILE: &str = "ancestor-dotfile";
pub const DATA: &str = "data";
pub const GLOBAL: &str = "global";
pub const SYSTEM: &str = "system";

const SHADOW_ORDER: [&str; 8] = [
    WORKSPACE,
    PROJECT,
    PROJECT_DOTFILE,
    ANCESTOR,
    ANCESTOR_DOTFILE,
    DATA,
    GLOBAL,
    SYSTEM,
];

const FIELDS: [grammar::Field; 15] = [
    grammar::ARGS,
    grammar::COMMAND,
    grammar::DISABLED,
    field(
        "disabled_tools",
        Kind::StringArray,
        "invalid-disabled-tools",
    ),
    field("enabled_tools", Kind::StringArray, "invalid-enabled-tools"),
    grammar::ENV,
    grammar::HEADERS,
    field("oauth", Kind::Bool, "invalid-oauth"),
    field(
        "oauth_callback_port",
        Kind::Number,
        "invalid-oauth-callback-port",
    ),
    field("oauth_client_id", Kind::Any, ""),
    field("oauth_client_secret", Kind::Any, ""),
    field("oauth_token", Kind::Object, "invalid-oauth-token"),
    grammar::TIMEOUT,
    grammar::TYPE,
    grammar::URL,
];

/// Crush's `MCPConfig`: the transport is `type`, never inferred.
pub const GRAMMAR: Grammar = Grammar {
    type_key: Some("type"),
    types: grammar::STDIO_SSE_HTTP,
    urls: &[("url", Transport::Http)],
    url_infers_transport: false,
    type_required: true,
    switch: Switch::Disabled("disabled"),
    ..Grammar::base(&FIELDS)
};

pub const NOT_EXAMINED: [&str; 6] = [
    "env-overrides",
    "data-directory-override",
    "shell-expansion",
    "case-insensitive-field-names",
    "shell-configs",
    "instructions",
];

pub struct Crush;

fn entry(e: &Value) -> Checked {
    if let Some(obj) = e.as_object() {
        let declares = ["type", "command", "url"]
            .iter()
            .any(|k| obj.get(k).is_some());
        if obj.get("oauth_token").is_some() && !declares {
            let fields = grammar::present_fields(obj, &GRAMMAR);
            let shape = Shape::new(Vec::new(), Transport::Unknown, fields);
            return Checked::new(shape, None, &[], grammar::switch(obj, GRAMMAR.switch));
        }
    }
    grammar::check(e, &GRAMMAR)
}

/// The user's data file below the home directory.
fn data_file(os: Os) -> &'static str {
    match os {
        Os::Windows => "AppData/Local/crush/crush.json",
        Os::Linux | Os::MacOs => ".local/share/crush/crush.json",
    }
}

/// The level holding Crush's data directory: the nearest with a `.crush`
/// entry (of any type), else the root. A `.crush` in the home directory stops
/// the search without being taken, as Crush's lookup does.
fn data_dir_level<'r>(levels: &[(&'r Path, bool)], home: Option<&Path>) -> &'r Path {
    let is_home = |dir: &Path| {
        home.is_some_and(|h| h == dir || std::fs::canonicalize(h).is_ok_and(|real| real == dir))
    };
    let root = levels[0].0;
    for (dir, not_read) in levels {
        if *not_read {
            break;
        }
        if crate::read::entry_exists(dir, ".crush") {
            return if is_home(dir) { root } else { dir };
        }
    }
    root
}

impl Profile for Crush {
    fn id(&self) -> &'static str {
        "crush"
    }

    fn title(&self) -> &'static str {
        "Crush"
    }

    fn candidates(&self, os: Os) -> Vec<Candidate> {
        let j = "json";
        let mut out = vec![
            Candidate::new(WORKSPACE, "<root>/.crush/crush.json", j, "mcp"),
            Candidate::new(PROJECT, "<root>/crush.json", j, "mcp"),
            Candidate::new(PROJECT_DOTFILE, "<root>/.crush.json", j, "mcp"),
            Candidate::new(ANCESTOR, "<ancestor up to .git>/crush.json", j, "mcp"),
            Candidate::new(
                ANCESTOR_DOTFILE,
                "<ancestor up to .git>/.crush.json",
                j,
                "mcp",
            ),
            Candidate::new(DATA, format!("~/{}", data_file(os)), j, "mcp"),
            Candidate::new(GLOBAL, "~/.config/crush/crush.json", j, "mcp"),
        ];
        if os != Os::Windows {
            out.push(Candidate::new(SYSTEM, "/etc/crush/crush.json", j, "mcp"));
        }
        out
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::ScopeOrder(&SHADOW_ORDER)
    }

    /// The data directory may be an ancestor's `.crush`; it is the project's
    /// either way.
    fn ancestor_project_scopes(&self) -> &'static [&'static str] {
        &[WORKSPACE, ANCESTOR, ANCESTOR_DOTFILE]
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        let c = Container::Map(&["mcp"]);
        let s = Syntax::JSON;
        let levels = project_levels(&ctx.root.canonical, ".git", false).listed();
        let n = levels.len();
        let data_dir = data_dir_level(&levels, ctx.host.home.as_deref());
        let mut layers = vec![Layer::new(
            WORKSPACE,
            Some(data_dir),
            ".crush/crush.json",
            "",
            s,
            c,
            0,
        )];
        // Crush 0.87.0 lists a level's crush.json before its .crush.json and
        // lets the later-merged file win: crush.json outranks .crush.json.
        layers.extend(layers::level_layers(
            &levels,
            &[
                LevelFile {
                    scopes: (PROJECT, ANCESTOR),
                    name: "crush.json",
                    rank: |i, _| 1 + 2 * i,
                },
                LevelFile {
                    scopes: (PROJECT_DOTFILE, ANCESTOR_DOTFILE),
                    name: ".crush.json",
                    rank: |i, _| 2 + 2 * i,
                },
            ],
            s,
            c,
        ));
        let os = ctx.host.os;
        layers.push(Layer::home(ctx, DATA, data_file(os), s, c, 2 * n + 1));
        layers.push(Layer::home(
            ctx,
            GLOBAL,
            ".config/crush/crush.json",
            s,
            c,
            2 * n + 2,
        ));
        if os != Os::Windows {
            let sys = Layer::system(ctx, SYSTEM, "/etc/crush/crush.json", s, c, 2 * n + 3);
            layers.push(sys);
        }
        for l in &mut layers {
            l.zero_length_ok = true;
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
    use crate::model::Launch;

    #[test]
    fn the_type_names_the_transport_and_a_stored_token_alone_declares_nothing() {
        // (entry, problems, launch, enabled)
        let cases: [(&str, &[&str], Launch, bool); 6] = [
            (
                r#"{"type":"stdio","command":"uvx","args":["p"],"env":{"A":"b"}}"#,
                &[],
                Launch::PackageRunner,
                true,
            ),
            (
                r#"{"command":"uvx"}"#,
                &["missing-type"],
                Launch::Unknown,
                true,
            ),
            (r#"{"url":"u"}"#, &["missing-type"], Launch::Unknown, true),
            (
                r#"{"type":"http","url":"u","oauth":true,"oauth_token":{}}"#,
                &[],
                Launch::Remote,
                true,
            ),
            (
                r#"{"oauth_token":{"access_token":"t"},"disabled":true}"#,
                &[],
                Launch::Unknown,
                false,
            ),
            (
                r#"{"type":"sse","disabled":false}"#,
                &["missing-url"],
                Launch::Remote,
                true,
            ),
        ];
        for (text, problems, launch, enabled) in cases {
            let v = crate::json::parse(text.as_bytes(), &crate::json::Options::STRICT).unwrap();
            let got = entry(&v);
            assert_eq!(got.shape.problems, problems, "{text}");
            assert_eq!((got.launch, got.enabled), (launch, Some(enabled)), "{text}");
        }
    }
}
