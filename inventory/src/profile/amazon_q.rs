//! The Amazon Q Developer profile (`--client amazon-q`): the MCP files the Q
//! CLI and the IDE plugins share, `<root>/.amazonq/mcp.json` (workspace) and
//! `~/.aws/amazonq/mcp.json` (global), servers under `mcpServers`. Q gives
//! the workspace precedence (`possibleShadowedBy`). Strict JSON: the CLI reads
//! with serde_json, a comment makes it discard the whole file
//! (aws/amazon-q-developer-cli#2082). The agent files that superseded these
//! (`~/.aws/amazonq/cli-agents/`, `default.json`) are coverage limits. Sources:
//! `inventory/CLIENTS.md`.
//!
//! This profile must never run anything or report a field's value.

use crate::host::Os;
use crate::json::Value;
use crate::model::Transport;
use crate::profile::grammar::{self, field, Grammar, Kind, Switch};
use crate::profile::layers::{self, Checked, Container, Layer, Precedence, Syntax};
use crate::profile::{coverage, Candidate, Context, Inventory, Profile, Shadowing};

pub const WORKSPACE: &str = "workspace";
pub const GLOBAL: &str = "global";

const FIELDS: [grammar::Field; 8] = [
    field("args", Kind::StringArray, "invalid-args"),
    field("command", Kind::String, "invalid-command"),
    field("disabled", Kind::Bool, "invalid-disabled"),
    field("env", Kind::StringMap, "invalid-env"),
    field("headers", Kind::StringMap, "invalid-headers"),
    field("timeout", Kind::Number, "invalid-timeout"),
    field("type", Kind::Any, ""),
    field("url", Kind::String, "invalid-url"),
];

pub const GRAMMAR: Grammar = Grammar {
    type_key: Some("type"),
    types: &[("stdio", Transport::Stdio), ("http", Transport::Http)],
    urls: &[("url", Transport::Http)],
    switch: Switch::Disabled("disabled"),
    ..Grammar::base(&FIELDS)
};

pub const NOT_EXAMINED: [&str; 6] = [
    "agent-configs",
    "ide-default-json",
    "use-legacy-mcp-json",
    "tool-permissions",
    "rules",
    "instructions",
];

const SHADOW_ORDER: [&str; 2] = [WORKSPACE, GLOBAL];

pub struct AmazonQ;

fn entry(e: &Value) -> Checked {
    grammar::check(e, &GRAMMAR)
}

impl Profile for AmazonQ {
    fn id(&self) -> &'static str {
        "amazon-q"
    }

    fn title(&self) -> &'static str {
        "Amazon Q Developer"
    }

    fn candidates(&self, _os: Os) -> Vec<Candidate> {
        vec![
            Candidate::new(WORKSPACE, "<root>/.amazonq/mcp.json", "json", "mcpServers"),
            Candidate::new(GLOBAL, "~/.aws/amazonq/mcp.json", "json", "mcpServers"),
        ]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::ScopeOrder(&SHADOW_ORDER)
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        let c = Container::Map(&["mcpServers"]);
        let layers = [
            Layer::root(ctx, WORKSPACE, ".amazonq/mcp.json", Syntax::JSON, c, 0),
            Layer::home(ctx, GLOBAL, ".aws/amazonq/mcp.json", Syntax::JSON, c, 1),
        ];
        Inventory {
            coverage: coverage(&NOT_EXAMINED),
            ..layers::inventory(&layers, entry, Precedence::Rank)
        }
    }
}
