//! Client profiles. A profile knows one client's fixed sources, containers,
//! scopes and instruction candidates, and turns them into an [`Inventory`];
//! everything it reads goes through `read.rs`, everything it parses through
//! `json.rs`, and everything it reports is a `model.rs` type.
//!
//! To add a profile: add a variant to [`Client`] (its `#[value(name)]` is the
//! `--client` spelling and the document's `client` id), a module here, and an
//! arm in [`inventory`]. Profiles must never execute, write, or put a command,
//! argument, URL, env/header name or value into the model.

pub mod claude_code;
pub mod dsh;
pub mod vscode;

use std::path::Path;

use crate::host::Host;
use crate::json::{self, Object, Value};
use crate::model::{Coverage, FileState, Instruction, Reason, Server, Shape, Source, Unavailable};
use crate::root::SelectedRoot;
use crate::{classify, model};

/// `--client` values. Anything else is a usage error, refused before any
/// file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code (default)
    #[value(name = "claude-code", alias = "claude")]
    ClaudeCode,
    /// VS Code and Copilot (opt-in)
    #[value(name = "vscode")]
    Vscode,
    /// DSH (dsh-project-mcp-manager's six layers)
    #[value(name = "dsh")]
    Dsh,
}

impl Client {
    /// The document's `client` id.
    pub fn id(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Vscode => "vscode",
            Client::Dsh => "dsh",
        }
    }

    /// Human name for the terminal report.
    pub fn title(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::Vscode => "VS Code / Copilot",
            Client::Dsh => "DSH",
        }
    }
}

/// What a profile found, in the contract's documented order.
#[derive(Debug, Clone)]
pub struct Inventory {
    pub sources: Vec<Source>,
    pub servers: Vec<Server>,
    pub instructions: Vec<Instruction>,
    pub coverage: Coverage,
}

/// Run the selected profile.
pub fn inventory(client: Client, root: &SelectedRoot, host: &Host) -> Inventory {
    inventory_with(client, root, host, None)
}

/// Run the selected profile; `dsh_profile` is `--dsh-profile` (dsh only,
/// already validated).
pub fn inventory_with(
    client: Client,
    root: &SelectedRoot,
    host: &Host,
    dsh_profile: Option<&str>,
) -> Inventory {
    match client {
        Client::Dsh => dsh::inventory(root, host, dsh_profile),
        Client::ClaudeCode => claude_code::inventory(root, host),
        Client::Vscode => vscode::inventory(root, host),
    }
}

// ---- building blocks shared by profiles ----

/// Read one configuration file (bounded, no-follow) and hand its top-level
/// object to `interpret`; a read or parse failure is returned instead, as
/// the file's state and reason.
pub fn with_object<T>(
    base: &Path,
    rel: &[&str],
    opts: &json::Options,
    interpret: impl FnOnce(&Object<'_>) -> T,
) -> Result<T, Unavailable> {
    let bytes = crate::read::read_file(base, rel)?;
    let top = parse_object(&bytes, opts)?;
    Ok(interpret(&top))
}

/// Parse a configuration file read with [`crate::read::read_file`]; a file
/// that is not a JSON object at the top is `malformed` /
/// `wrong-container-type`. The result borrows from `bytes`.
pub fn parse_object<'a>(bytes: &'a [u8], opts: &json::Options) -> Result<Object<'a>, Unavailable> {
    match json::parse(bytes, opts) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(Unavailable::malformed(Reason::WrongContainerType)),
        Err(e) => Err(Unavailable::malformed(e.reason())),
    }
}

/// The object under `key`: `Ok(None)` when absent, `wrong-container-type`
/// when it is not an object.
pub fn member_object<'o, 'a>(
    obj: &'o Object<'a>,
    key: &str,
) -> Result<Option<&'o Object<'a>>, Unavailable> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(_) => Err(Unavailable::malformed(Reason::WrongContainerType)),
    }
}

/// One row per entry of a server container, sorted by name (code point
/// order). Profile-specific fields start as `None`. Malformed entries stay
/// visible by name with `shape.valid: false`.
pub fn server_rows(
    scope: &'static str,
    path: &str,
    entries: &Object,
    shape_of: fn(&Value) -> Shape,
) -> Vec<Server> {
    // Sort the borrowed entries, not the (large) rows.
    let mut sorted: Vec<(&str, &Value)> = entries.iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
    sorted
        .into_iter()
        .map(|(name, entry)| {
            let shape = shape_of(entry);
            let (launch, guard_form) = classify::classify(entry, &shape);
            Server {
                name: name.to_owned(),
                scope,
                origin: None,
                format: None,
                path: path.to_owned(),
                configured: true,
                shape,
                launch,
                guard_form,
                possible_shadowed_by: None,
                possibly_excluded_by: None,
                same_name_in: None,
                shadowed_by: None,
                dsh: None,
            }
        })
        .collect()
}

/// Fill a source from a container lookup and return its rows.
pub fn fill_source(
    source: &mut Source,
    container: Result<Option<&Object<'_>>, Unavailable>,
    shape_of: fn(&Value) -> Shape,
) -> Vec<Server> {
    source.state = FileState::Present;
    source.reason = None;
    match container {
        Ok(None) => Vec::new(),
        Ok(Some(entries)) => {
            let rows = server_rows(source.scope, &source.path, entries, shape_of);
            source.server_count = rows.len();
            rows
        }
        Err(u) => {
            source.set(u);
            Vec::new()
        }
    }
}

/// `path` as a display string (lossy for non-UTF-8).
pub fn path_string(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The coverage block every profile shares the `unknown` part of.
pub fn coverage(not_examined: &[&'static str]) -> Coverage {
    Coverage {
        not_examined: not_examined.to_vec(),
        unknown: model::ALWAYS_UNKNOWN.to_vec(),
    }
}
