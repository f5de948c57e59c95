//! The Cursor profile (`--client cursor`): `<root>/.cursor/mcp.json` (project)
//! and `~/.cursor/mcp.json` (global), the same paths on Linux, macOS and
//! Windows (`%USERPROFILE%\.cursor`), servers under `mcpServers`. Cursor
//! merges the two files; which one wins a name they share is not documented,
//! so same-named rows carry `sameNameIn`. Strict JSON: Cursor rejects a
//! trailing comma (upstash/context7#563); comments are read as malformed
//! rather than guessed. Sources and reasoning: `inventory/CLIENTS.md`.
//!
//! This profile must never run anything, interpolate `${env:...}`, read an
//! `envFile`, or report a field's value.

use crate::host::Os;
use crate::json::Value;
use crate::model::Transport;
use crate::profile::grammar::{self, field, Grammar, Kind};
use crate::profile::layers::{self, Checked, Container, Layer, Precedence, Syntax};
use crate::profile::{coverage, Candidate, Context, Inventory, Profile, Shadowing};

pub const PROJECT: &str = "project";
pub const GLOBAL: &str = "global";

const FIELDS: [grammar::Field; 8] = [
    field("args", Kind::StringArray, "invalid-args"),
    field("auth", Kind::Object, "invalid-auth"),
    field("command", Kind::String, "invalid-command"),
    field("env", Kind::StringMap, "invalid-env"),
    field("envFile", Kind::String, "invalid-env-file"),
    field("headers", Kind::StringMap, "invalid-headers"),
    field("type", Kind::Any, ""),
    field("url", Kind::String, "invalid-url"),
];

/// Cursor's `mcp.json` entry: `type` is `stdio`, `sse` or `http`; a `url`
/// without a type is a remote (streamable HTTP) server.
pub const GRAMMAR: Grammar = Grammar {
    type_key: Some("type"),
    types: &[
        ("stdio", Transport::Stdio),
        ("sse", Transport::Sse),
        ("http", Transport::Http),
        ("streamable-http", Transport::Http),
    ],
    urls: &[("url", Transport::Http)],
    ..Grammar::base(&FIELDS)
};

/// Coverage limits, in report order.
pub const NOT_EXAMINED: [&str; 7] = [
    "env-file-contents",
    "variable-interpolation",
    "ui-toggles",
    "team-and-marketplace-servers",
    "extension-api-servers",
    "rules",
    "instructions",
];

pub struct Cursor;

fn entry(e: &Value) -> Checked {
    grammar::check(e, &GRAMMAR)
}

impl Profile for Cursor {
    fn id(&self) -> &'static str {
        "cursor"
    }

    fn title(&self) -> &'static str {
        "Cursor"
    }

    fn candidates(&self, _os: Os) -> Vec<Candidate> {
        vec![
            Candidate::new(PROJECT, "<root>/.cursor/mcp.json", "json", "mcpServers"),
            Candidate::new(GLOBAL, "~/.cursor/mcp.json", "json", "mcpServers"),
        ]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::Duplicates
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        let c = Container::Map(&["mcpServers"]);
        let layers = [
            Layer::new(
                PROJECT,
                Some(&ctx.root.canonical),
                ".cursor/mcp.json",
                "",
                Syntax::JSON,
                c,
                0,
            ),
            Layer::new(
                GLOBAL,
                ctx.host.home.as_deref(),
                ".cursor/mcp.json",
                "~/.cursor/mcp.json",
                Syntax::JSON,
                c,
                1,
            ),
        ];
        Inventory {
            coverage: coverage(&NOT_EXAMINED),
            ..layers::inventory(&layers, entry, Precedence::Duplicates)
        }
    }
}
