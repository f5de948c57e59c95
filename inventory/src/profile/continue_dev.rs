//! The Continue profile (`--client continue`): the user's
//! `~/.continue/config.yaml` (`%USERPROFILE%\.continue` on Windows), whose
//! `mcpServers` is a list of entries naming themselves in `name`, and the
//! workspace block directory `<root>/.continue/mcpServers/`, where every
//! `*.yaml`/`*.yml` file is a block with the same `mcpServers` list and every
//! `*.json` file is a Claude-style `{"mcpServers": {name: entry}}` map.
//!
//! The directory is the one place a profile lists a directory: the listing
//! is its own source (`workspace-blocks`, walked no-follow, at most
//! `read::LIST_LIMIT` entries, then `too-large` / `too-many-entries`), and
//! each matching file (at most [`MAX_BLOCKS`], in name order) is a
//! `workspace-block` source read like any other. Continue documents no winner
//! between a block and `config.yaml` declaring one name, so same-named rows
//! carry `sameNameIn`. YAML goes through the bounded reader (no tags beyond the
//! core schema, no merge keys, bounded aliases); JSON is strict.
//!
//! This profile must never run anything, resolve `${{ secrets.* }}`, fetch a
//! hub block, or report a field's value.

use crate::host::Os;
use crate::json::Value;
use crate::model::{FileState, Reason, Source, Transport, Unavailable};
use crate::profile::grammar::{self, field, Grammar, Kind};
use crate::profile::layers::{self, Checked, Container, Layer, Precedence, Syntax};
use crate::profile::{coverage, path_string, Candidate, Context, Inventory, Profile, Shadowing};

pub const USER: &str = "user";
pub const BLOCKS: &str = "workspace-blocks";
pub const BLOCK: &str = "workspace-block";

/// Block files read from the workspace directory, at most.
pub const MAX_BLOCKS: usize = 64;

const FIELDS: [grammar::Field; 10] = [
    field("args", Kind::StringArray, "invalid-args"),
    field("command", Kind::String, "invalid-command"),
    field(
        "connectionTimeout",
        Kind::Number,
        "invalid-connection-timeout",
    ),
    field("cwd", Kind::String, "invalid-cwd"),
    field("env", Kind::StringMap, "invalid-env"),
    field("headers", Kind::StringMap, "invalid-headers"),
    field("name", Kind::Any, ""),
    field("requestOptions", Kind::Object, "invalid-request-options"),
    field("type", Kind::Any, ""),
    field("url", Kind::String, "invalid-url"),
];

/// A YAML `mcpServers` entry: `type` is `stdio`, `sse`, `streamable-http` or
/// `websocket`; a `url` needs a type.
pub const GRAMMAR: Grammar = Grammar {
    type_key: Some("type"),
    types: &[
        ("stdio", Transport::Stdio),
        ("sse", Transport::Sse),
        ("streamable-http", Transport::Http),
        ("websocket", Transport::Ws),
    ],
    urls: &[("url", Transport::Http)],
    url_infers_transport: false,
    headers: &["requestOptions", "headers"],
    ..Grammar::base(&FIELDS)
};

const JSON_FIELDS: [grammar::Field; 6] = [
    field("args", Kind::StringArray, "invalid-args"),
    field("command", Kind::String, "invalid-command"),
    field("env", Kind::StringMap, "invalid-env"),
    field("headers", Kind::StringMap, "invalid-headers"),
    field("type", Kind::Any, ""),
    field("url", Kind::String, "invalid-url"),
];

/// A Claude-style JSON entry dropped into the block directory.
pub const JSON_GRAMMAR: Grammar = Grammar {
    type_key: Some("type"),
    types: &[
        ("stdio", Transport::Stdio),
        ("sse", Transport::Sse),
        ("http", Transport::Http),
        ("streamable-http", Transport::Http),
    ],
    urls: &[("url", Transport::Sse)],
    ..Grammar::base(&JSON_FIELDS)
};

pub const NOT_EXAMINED: [&str; 7] = [
    "legacy-config-json",
    "hub-assistants",
    "user-block-directory",
    "secrets-templates",
    "continue-global-dir-override",
    "rules",
    "instructions",
];

const LIST: Container = Container::NamedList {
    key: "mcpServers",
    name: "name",
};

pub struct Continue;

fn entry(e: &Value) -> Checked {
    grammar::check(e, &GRAMMAR)
}

fn json_entry(e: &Value) -> Checked {
    grammar::check(e, &JSON_GRAMMAR)
}

impl Profile for Continue {
    fn id(&self) -> &'static str {
        "continue"
    }

    fn title(&self) -> &'static str {
        "Continue"
    }

    fn candidates(&self, _os: Os) -> Vec<Candidate> {
        vec![
            Candidate::new(USER, "~/.continue/config.yaml", "yaml", "mcpServers[].name"),
            Candidate::new(
                BLOCKS,
                "<root>/.continue/mcpServers/",
                "(directory)",
                "(files)",
            ),
            Candidate::new(
                BLOCK,
                "<root>/.continue/mcpServers/*.yaml (or *.yml)",
                "yaml",
                "mcpServers[].name",
            ),
            Candidate::new(
                BLOCK,
                "<root>/.continue/mcpServers/*.json",
                "json",
                "mcpServers",
            ),
        ]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::Duplicates
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        let user = Layer::home(ctx, USER, ".continue/config.yaml", Syntax::Yaml, LIST, 0);
        let mut layers = vec![user];
        let mut checks: Vec<layers::EntryCheck> = vec![entry];

        let dir_path = ctx.root.canonical.join(".continue").join("mcpServers");
        let mut listing = Source::new(BLOCKS, path_string(&dir_path), "(files)".to_owned());
        listing.parser = Some("(directory)");
        match crate::read::list_dir(&ctx.root.canonical, &[".continue", "mcpServers"]) {
            Ok(l) => {
                listing.state = FileState::Present;
                if l.truncated {
                    listing.set(Unavailable::new(
                        FileState::TooLarge,
                        Reason::TooManyEntries,
                    ));
                }
                let blocks: Vec<String> = l
                    .names
                    .into_iter()
                    .filter(|n| [".yaml", ".yml", ".json"].iter().any(|e| n.ends_with(e)))
                    .collect();
                if blocks.len() > MAX_BLOCKS {
                    listing.set(Unavailable::new(
                        FileState::TooLarge,
                        Reason::TooManyEntries,
                    ));
                }
                for name in blocks.into_iter().take(MAX_BLOCKS) {
                    let rel = format!(".continue/mcpServers/{name}");
                    let json = name.ends_with(".json");
                    let (syntax, container) = if json {
                        (Syntax::JSON, Container::Map(&["mcpServers"]))
                    } else {
                        (Syntax::Yaml, LIST)
                    };
                    layers.push(Layer::root(ctx, BLOCK, &rel, syntax, container, 1));
                    checks.push(if json { json_entry } else { entry });
                }
            }
            Err(u) => listing.set(u),
        }

        let mut sources = Vec::with_capacity(layers.len() + 1);
        let mut rows = Vec::new();
        for (i, (layer, check)) in layers.iter().zip(&checks).enumerate() {
            let (source, found) = layers::read(layer, *check);
            sources.push(source);
            if i == 0 {
                sources.push(listing.clone());
            }
            rows.extend(found.into_iter().map(|(s, on)| (i, s, on)));
        }
        Inventory {
            sources,
            servers: layers::relate(&layers, rows, Precedence::Duplicates),
            instructions: Vec::new(),
            coverage: coverage(&NOT_EXAMINED),
        }
    }
}
