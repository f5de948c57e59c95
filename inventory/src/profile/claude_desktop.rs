//! The Claude Desktop profile (`--client claude-desktop`): one user file,
//! `claude_desktop_config.json`, in `~/Library/Application Support/Claude`
//! (macOS), `%APPDATA%\Claude` (Windows; read below the home directory as
//! `AppData/Roaming/Claude`, APPDATA is not consulted) and, for the
//! unofficial Linux builds, `~/.config/Claude`. Servers under `mcpServers`,
//! local (stdio) only: remote servers are connectors added in the app, so an
//! entry with only a `url` is `missing-command`. Strict JSON. Sources:
//! `inventory/CLIENTS.md`.
//!
//! This profile must never run anything or report a field's value.

use crate::host::Os;
use crate::json::Value;
use crate::profile::grammar::{self, field, Grammar, Kind};
use crate::profile::layers::{self, Checked, Container, Layer, Precedence, Syntax};
use crate::profile::{coverage, Candidate, Context, Inventory, Profile, Shadowing};

pub const USER: &str = "user";

const FIELDS: [grammar::Field; 3] = [
    field("args", Kind::StringArray, "invalid-args"),
    field("command", Kind::String, "invalid-command"),
    field("env", Kind::StringMap, "invalid-env"),
];

pub const GRAMMAR: Grammar = Grammar {
    headers: &[],
    ..Grammar::base(&FIELDS)
};

pub const NOT_EXAMINED: [&str; 5] = [
    "desktop-extensions",
    "connectors",
    "enterprise-policy",
    "appdata-override",
    "instructions",
];

/// The config file below the home directory on `os`.
pub fn config_path(os: Os) -> &'static str {
    match os {
        Os::MacOs => "Library/Application Support/Claude/claude_desktop_config.json",
        Os::Windows => "AppData/Roaming/Claude/claude_desktop_config.json",
        Os::Linux => ".config/Claude/claude_desktop_config.json",
    }
}

pub struct ClaudeDesktop;

fn entry(e: &Value) -> Checked {
    grammar::check(e, &GRAMMAR)
}

impl Profile for ClaudeDesktop {
    fn id(&self) -> &'static str {
        "claude-desktop"
    }

    fn title(&self) -> &'static str {
        "Claude Desktop"
    }

    fn candidates(&self, os: Os) -> Vec<Candidate> {
        vec![Candidate::new(
            USER,
            format!("~/{}", config_path(os)),
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
            config_path(ctx.host.os),
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
