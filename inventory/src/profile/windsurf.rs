//! The Windsurf profile (`--client windsurf`): Cascade reads one user file,
//! `~/.codeium/windsurf/mcp_config.json` (`%USERPROFILE%\.codeium\windsurf`
//! on Windows), servers under `mcpServers`; a remote server names its endpoint
//! in `serverUrl` (or `url`), `disabled: true` switches one off. There is no
//! project file, so a name is declared once or the file is malformed
//! (duplicate key). Strict JSON: the format is undocumented beyond JSON, and a
//! comment is reported rather than guessed. Sources: `inventory/CLIENTS.md`.
//!
//! This profile must never run anything, interpolate `${env:...}`, or report
//! a field's value.

use crate::host::Os;
use crate::json::Value;
use crate::model::Transport;
use crate::profile::grammar::{self, field, Grammar, Kind, Switch};
use crate::profile::layers::{self, Checked, Container, Layer, Precedence, Syntax};
use crate::profile::{coverage, Candidate, Context, Inventory, Profile, Shadowing};

pub const USER: &str = "user";

const FIELDS: [grammar::Field; 8] = [
    field("args", Kind::StringArray, "invalid-args"),
    field("command", Kind::String, "invalid-command"),
    field("disabled", Kind::Bool, "invalid-disabled"),
    field("disabledTools", Kind::StringArray, "invalid-disabled-tools"),
    field("env", Kind::StringMap, "invalid-env"),
    field("headers", Kind::StringMap, "invalid-headers"),
    field("serverUrl", Kind::String, "invalid-server-url"),
    field("url", Kind::String, "invalid-url"),
];

pub const GRAMMAR: Grammar = Grammar {
    urls: &[("serverUrl", Transport::Http), ("url", Transport::Http)],
    switch: Switch::Disabled("disabled"),
    ..Grammar::base(&FIELDS)
};

pub const NOT_EXAMINED: [&str; 6] = [
    "team-allowlist",
    "variable-interpolation",
    "ui-toggles",
    "plugin-store-servers",
    "rules",
    "instructions",
];

pub struct Windsurf;

fn entry(e: &Value) -> Checked {
    grammar::check(e, &GRAMMAR)
}

impl Profile for Windsurf {
    fn id(&self) -> &'static str {
        "windsurf"
    }

    fn title(&self) -> &'static str {
        "Windsurf"
    }

    fn candidates(&self, _os: Os) -> Vec<Candidate> {
        vec![Candidate::new(
            USER,
            "~/.codeium/windsurf/mcp_config.json",
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
            ".codeium/windsurf/mcp_config.json",
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
