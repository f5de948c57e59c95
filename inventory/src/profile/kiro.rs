//! The Kiro profile (`--client kiro`): `<root>/.kiro/settings/mcp.json`
//! (workspace) and `~/.kiro/settings/mcp.json` (user), the same for the IDE
//! and the CLI on every OS. Servers under `mcpServers`; a workspace entry wins
//! over a user entry of the same name (`possibleShadowedBy`); `disabled: true`
//! switches one off. Strict JSON. Sources: `inventory/CLIENTS.md`.
//!
//! This profile must never run anything, expand `${VAR}`, or report a field's
//! value.

use crate::host::Os;
use crate::json::Value;
use crate::model::Transport;
use crate::profile::grammar::{self, field, Grammar, Kind, Switch};
use crate::profile::layers::{self, Checked, Container, Layer, Precedence, Syntax};
use crate::profile::{coverage, Candidate, Context, Inventory, Profile, Shadowing};

pub const WORKSPACE: &str = "workspace";
pub const USER: &str = "user";

const FIELDS: [grammar::Field; 9] = [
    field("args", Kind::StringArray, "invalid-args"),
    field("autoApprove", Kind::StringArray, "invalid-auto-approve"),
    field("command", Kind::String, "invalid-command"),
    field("cwd", Kind::String, "invalid-cwd"),
    field("disabled", Kind::Bool, "invalid-disabled"),
    field("disabledTools", Kind::StringArray, "invalid-disabled-tools"),
    field("env", Kind::StringMap, "invalid-env"),
    field("headers", Kind::StringMap, "invalid-headers"),
    field("url", Kind::String, "invalid-url"),
];

pub const GRAMMAR: Grammar = Grammar {
    urls: &[("url", Transport::Http)],
    switch: Switch::Disabled("disabled"),
    ..Grammar::base(&FIELDS)
};

pub const NOT_EXAMINED: [&str; 6] = [
    "custom-agents",
    "powers",
    "variable-expansion",
    "enterprise-registry",
    "steering",
    "instructions",
];

const SHADOW_ORDER: [&str; 2] = [WORKSPACE, USER];

pub struct Kiro;

fn entry(e: &Value) -> Checked {
    grammar::check(e, &GRAMMAR)
}

impl Profile for Kiro {
    fn id(&self) -> &'static str {
        "kiro"
    }

    fn title(&self) -> &'static str {
        "Kiro"
    }

    fn candidates(&self, _os: Os) -> Vec<Candidate> {
        vec![
            Candidate::new(
                WORKSPACE,
                "<root>/.kiro/settings/mcp.json",
                "json",
                "mcpServers",
            ),
            Candidate::new(USER, "~/.kiro/settings/mcp.json", "json", "mcpServers"),
        ]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::ScopeOrder(&SHADOW_ORDER)
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        let c = Container::Map(&["mcpServers"]);
        let layers = [
            Layer::root(
                ctx,
                WORKSPACE,
                ".kiro/settings/mcp.json",
                Syntax::JSON,
                c,
                0,
            ),
            Layer::home(ctx, USER, ".kiro/settings/mcp.json", Syntax::JSON, c, 1),
        ];
        Inventory {
            coverage: coverage(&NOT_EXAMINED),
            ..layers::inventory(&layers, entry, Precedence::Rank)
        }
    }
}
