//! The Roo Code profile (`--client roo-code`): `<root>/.roo/mcp.json`
//! (project) and the VS Code extension's global `<Code user dir>/
//! globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json`.
//! Servers under `mcpServers`; a project entry overrides a global one of the
//! same name (`possibleShadowedBy`); `disabled: true` switches one off; `type`
//! is `stdio`, `sse` or `streamable-http`, a `url` without one is SSE. Strict
//! JSON. Sources: `inventory/CLIENTS.md`.
//!
//! This profile must never run anything or report a field's value.

use crate::host::Os;
use crate::json::Value;
use crate::model::Transport;
use crate::profile::grammar::{self, field, Grammar, Kind, Switch};
use crate::profile::layers::{self, Checked, Container, Layer, Precedence, Syntax};
use crate::profile::vscode::code_user_dir;
use crate::profile::{coverage, Candidate, Context, Inventory, Profile, Shadowing};

pub const PROJECT: &str = "project";
pub const GLOBAL: &str = "global";

/// Below the Code user directory.
pub const FILE: &str = "globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json";

const FIELDS: [grammar::Field; 12] = [
    field("alwaysAllow", Kind::StringArray, "invalid-always-allow"),
    field("args", Kind::StringArray, "invalid-args"),
    field("command", Kind::String, "invalid-command"),
    field("cwd", Kind::String, "invalid-cwd"),
    field("disabled", Kind::Bool, "invalid-disabled"),
    field("disabledTools", Kind::StringArray, "invalid-disabled-tools"),
    field("env", Kind::StringMap, "invalid-env"),
    field("headers", Kind::StringMap, "invalid-headers"),
    field("timeout", Kind::Number, "invalid-timeout"),
    field("type", Kind::Any, ""),
    field("url", Kind::String, "invalid-url"),
    field("watchPaths", Kind::StringArray, "invalid-watch-paths"),
];

pub const GRAMMAR: Grammar = Grammar {
    type_key: Some("type"),
    types: &[
        ("stdio", Transport::Stdio),
        ("sse", Transport::Sse),
        ("streamable-http", Transport::Http),
    ],
    urls: &[("url", Transport::Sse)],
    switch: Switch::Disabled("disabled"),
    ..Grammar::base(&FIELDS)
};

pub const NOT_EXAMINED: [&str; 6] = [
    "named-profiles",
    "insiders",
    "marketplace-servers",
    "modes",
    "rules",
    "instructions",
];

const SHADOW_ORDER: [&str; 2] = [PROJECT, GLOBAL];

pub fn settings_path(os: Os) -> String {
    format!("{}/{FILE}", code_user_dir(os).join("/"))
}

pub struct RooCode;

fn entry(e: &Value) -> Checked {
    grammar::check(e, &GRAMMAR)
}

impl Profile for RooCode {
    fn id(&self) -> &'static str {
        "roo-code"
    }

    fn title(&self) -> &'static str {
        "Roo Code"
    }

    fn candidates(&self, os: Os) -> Vec<Candidate> {
        vec![
            Candidate::new(PROJECT, "<root>/.roo/mcp.json", "json", "mcpServers"),
            Candidate::new(
                GLOBAL,
                format!("~/{}", settings_path(os)),
                "json",
                "mcpServers",
            ),
        ]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::ScopeOrder(&SHADOW_ORDER)
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        let c = Container::Map(&["mcpServers"]);
        let layers = [
            Layer::root(ctx, PROJECT, ".roo/mcp.json", Syntax::JSON, c, 0),
            Layer::home(ctx, GLOBAL, &settings_path(ctx.host.os), Syntax::JSON, c, 1),
        ];
        Inventory {
            coverage: coverage(&NOT_EXAMINED),
            ..layers::inventory(&layers, entry, Precedence::Rank)
        }
    }
}
