//! The Cline profile (`--client cline`): the VS Code extension's one settings
//! file, `<Code user dir>/globalStorage/saoudrizwan.claude-dev/settings/
//! cline_mcp_settings.json`, below the default Code user directory of each OS
//! (as `--client vscode` finds it). Servers under `mcpServers`; `disabled:
//! true` switches one off; `type` is `stdio`, `sse` or `streamableHttp`, and a
//! `url` without one is SSE (the original remote transport). Cline has no
//! project file. Strict JSON (`JSON.parse`). Sources: `inventory/CLIENTS.md`.
//!
//! This profile must never run anything or report a field's value.

use crate::host::Os;
use crate::json::Value;
use crate::model::Transport;
use crate::profile::grammar::{self, field, Grammar, Kind, Switch};
use crate::profile::layers::{self, Checked, Container, Layer, Precedence, Syntax};
use crate::profile::vscode::code_user_dir;
use crate::profile::{coverage, Candidate, Context, Inventory, Profile, Shadowing};

pub const USER: &str = "user";

/// Below the Code user directory.
pub const FILE: &str = "globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json";

const FIELDS: [grammar::Field; 11] = [
    field("args", Kind::StringArray, "invalid-args"),
    field("autoApprove", Kind::StringArray, "invalid-auto-approve"),
    field("command", Kind::String, "invalid-command"),
    field("cwd", Kind::String, "invalid-cwd"),
    field("disabled", Kind::Bool, "invalid-disabled"),
    field("env", Kind::StringMap, "invalid-env"),
    field("headers", Kind::StringMap, "invalid-headers"),
    field("timeout", Kind::Number, "invalid-timeout"),
    field("transportType", Kind::Any, ""),
    field("type", Kind::Any, ""),
    field("url", Kind::String, "invalid-url"),
];

pub const GRAMMAR: Grammar = Grammar {
    type_key: Some("type"),
    types: &[
        ("stdio", Transport::Stdio),
        ("sse", Transport::Sse),
        ("streamableHttp", Transport::Http),
    ],
    urls: &[("url", Transport::Sse)],
    switch: Switch::Disabled("disabled"),
    ..Grammar::base(&FIELDS)
};

pub const NOT_EXAMINED: [&str; 7] = [
    "other-editors",
    "cline-cli",
    "named-profiles",
    "insiders",
    "marketplace-servers",
    "rules",
    "instructions",
];

pub fn settings_path(os: Os) -> String {
    format!("{}/{FILE}", code_user_dir(os).join("/"))
}

pub struct Cline;

fn entry(e: &Value) -> Checked {
    grammar::check(e, &GRAMMAR)
}

impl Profile for Cline {
    fn id(&self) -> &'static str {
        "cline"
    }

    fn title(&self) -> &'static str {
        "Cline"
    }

    fn candidates(&self, os: Os) -> Vec<Candidate> {
        vec![Candidate::new(
            USER,
            format!("~/{}", settings_path(os)),
            "json",
            "mcpServers",
        )]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::Duplicates
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        let c = Container::Map(&["mcpServers"]);
        let layers = [Layer::home(
            ctx,
            USER,
            &settings_path(ctx.host.os),
            Syntax::JSON,
            c,
            0,
        )];
        Inventory {
            coverage: coverage(&NOT_EXAMINED),
            ..layers::inventory(&layers, entry, Precedence::Duplicates)
        }
    }
}
