//! The DSH profile (`--client dsh`): the six first-come-first-served layers
//! of dsh-project-mcp-manager (`seeds/002_*.txt`, `docs/guide/layers.md`,
//! `src/registry.ts`), each layer's rows, and the merges that decide which
//! rows an earlier one hides — statically, without starting DSH.
//!
//! | # | scope              | file                                     | format |
//! |---|--------------------|------------------------------------------|--------|
//! | 1 | `dsh-project`      | `<root>/.dsh/mcp.yml` (managed block)    | yaml   |
//! | 2 | `dsh-project-json` | `<root>/.dsh/mcp.json`                   | json   |
//! | 3 | `cc-project`       | `<root>/.mcp.json`                       | json   |
//! | 4 | `dsh-profile-user` | `~/.dsh/profiles/<NAME>/mcp.json`        | json   |
//! | 5 | `dsh-user-yml`     | `~/.dsh/mcp.yml` (managed block)         | yaml   |
//! | 6 | `dsh-user`         | `~/.dsh/mcp.json`                        | json   |
//!
//! Layer 4 is read only when a profile is named (`--dsh-profile NAME`);
//! otherwise it is absent from `sources` and listed in
//! `coverage.notExamined`. DSH merges twice: the project's merge of all six
//! layers decides the project rows (1–3) and which user rows this project's
//! sessions do not see; the user layers' own merge (4–6) decides which user
//! rows mount, once per host. Rows collide on the exact name, the normalized
//! name or the raw identity (see [`entry`]). Every decision is in
//! `inventory/DSH.md`.
//!
//! Files go through `read.rs` (bounded, no-follow), JSON through the strict
//! `json.rs` parser, YAML through [`yaml`]. This profile must never expand a
//! `${VAR}`, evaluate a tag, read an instruction file, consult the process
//! environment (DSH_HOME, DSH_MCP_*), or put a command, argument, URL, env or
//! header name or value into the model.

pub mod entry;
mod js;
mod url;
pub mod yaml;

use std::any::Any;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use crate::classify;
use crate::host::{Host, Os};
use crate::json::{Options, Value};
use crate::model::{Extension, FileState, Reason, Server, ServerExtension, Source, Unavailable};
use crate::profile::{
    coverage, parse_object, path_string, Candidate, Context, Inventory, Profile, Shadowing,
};
use crate::render_human::{plural, sanitize};
use crate::root::SelectedRoot;

use entry::Row;

pub const DSH_PROJECT: &str = "dsh-project";
pub const DSH_PROJECT_JSON: &str = "dsh-project-json";
pub const CC_PROJECT: &str = "cc-project";
pub const DSH_PROFILE_USER: &str = "dsh-profile-user";
pub const DSH_USER_YML: &str = "dsh-user-yml";
pub const DSH_USER: &str = "dsh-user";

/// Where the rows of a YAML source live, as shown in `container`.
pub const YAML_CONTAINER: &str = "managed block: insert[].config";

/// Documented coverage limits, in report order (`dsh-profile-user` comes
/// first, and only when no profile was named).
pub const NOT_EXAMINED: [&str; 10] = [
    "profile-patch-lines",
    "profile-name-resolution",
    "dsh-home-override",
    "environment-switches",
    "project-root-discovery",
    "effective-name-renaming",
    "env-expansion",
    "tool-filters",
    "instructions",
    "executable-identity",
];

/// The DSH profile (`--client dsh`).
pub struct Dsh;

impl Profile for Dsh {
    fn id(&self) -> &'static str {
        "dsh"
    }

    fn title(&self) -> &'static str {
        "DSH"
    }

    fn candidates(&self, _os: Os) -> Vec<Candidate> {
        vec![
            Candidate::new(DSH_PROJECT, "<root>/.dsh/mcp.yml", "yaml", YAML_CONTAINER),
            Candidate::new(
                DSH_PROJECT_JSON,
                "<root>/.dsh/mcp.json",
                "json",
                "mcpServers",
            ),
            Candidate::new(CC_PROJECT, "<root>/.mcp.json", "json", "mcpServers"),
            Candidate::new(
                DSH_PROFILE_USER,
                "~/.dsh/profiles/<NAME>/mcp.json",
                "json",
                "mcpServers",
            ),
            Candidate::new(DSH_USER_YML, "~/.dsh/mcp.yml", "yaml", YAML_CONTAINER),
            Candidate::new(DSH_USER, "~/.dsh/mcp.json", "json", "mcpServers"),
        ]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::FirstCome
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        inventory(ctx.root, ctx.host, ctx.dsh_profile)
    }

    fn source_report(&self, source: &Source, width: usize, out: &mut String) {
        // The layer table says the format; a parse error says where it stopped.
        if let Some(p) = source.position {
            out.push_str(&format!(
                "  {:<width$}  stopped at line {}, column {}\n",
                "", p.line, p.column
            ));
        }
    }
}

/// dsh `shadowedBy`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShadowedBy {
    pub scope: &'static str,
    /// `name`, `normalized-name` or `identity`.
    pub key: &'static str,
    /// dsh: the winning row's name, as declared (an addition to the contract),
    /// held once for every row it shadows.
    #[serde(serialize_with = "shared_name")]
    pub name: Arc<str>,
}

fn shared_name<S: serde::Serializer>(name: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(name)
}

/// dsh row fields, serialized after `guardForm`: `shadowedBy`, then the
/// activity fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DshRow {
    /// `null` or the row that wins, and on which key.
    pub shadowed_by: Option<ShadowedBy>,
    /// Would mount by the static rules: valid shape, not `disabled`, not
    /// skipped (`enabled: false`), and first in the merge that decides its
    /// mounting (the project's merge for a project row, the user layers' own
    /// merge for a user row). So a user-layer row whose `shadowedBy` is a
    /// project row is still active: DSH mounts it once per host and only
    /// hides it from this project's sessions. Host-time facts (`${VAR}`
    /// unset, spawn failures) are not known.
    pub active: bool,
    /// A `disabled: true` placeholder: holds its keys, mounts nothing.
    pub disabled: bool,
    /// `enabled: false`: skipped silently, holds no key.
    pub skipped: bool,
    /// The shadow keys this row holds, in the order `name`,
    /// `normalized-name`, `identity` (empty when it holds none).
    pub claims: Vec<&'static str>,
    /// `${VAR}` references in command, args, env values, cwd, url, httpUrl
    /// and header values: counted, never expanded or named.
    pub placeholder_count: usize,
}

impl ServerExtension for DshRow {
    fn report(&self, server: &Server, o: &mut String) {
        if let Some(by) = &self.shadowed_by {
            // A row that names a shadower yet holds its keys won its own
            // merge: a user row a project row collides with. DSH mounts it
            // once per host and only hides it from this project's sessions.
            let (lead, tail) = match (self.claims.is_empty(), self.active) {
                (false, true) => (
                    "hidden from this project's sessions by",
                    "; still mounted for other projects",
                ),
                (false, false) => ("hidden from this project's sessions by", ""),
                (true, _) => ("shadowed by", ""),
            };
            let _ = writeln!(
                o,
                "      {lead}: {} in {} (same {}){tail}",
                sanitize(&by.name),
                by.scope,
                by.key
            );
        }
        let status = if self.active {
            "active"
        } else if self.skipped {
            "skipped (enabled: false)"
        } else if !server.shape.valid {
            "invalid (not mounted)"
        } else if self.shadowed_by.is_some() {
            "shadowed (not mounted)"
        } else {
            "disabled (placeholder: mounts nothing)"
        };
        let holds = if self.claims.is_empty() {
            String::new()
        } else {
            format!(" · holds {}", self.claims.join(", "))
        };
        let _ = writeln!(
            o,
            "      {status}{holds} · {}",
            plural(
                self.placeholder_count,
                "${VAR} reference",
                "${VAR} references"
            )
        );
    }

    fn repeated_name_bytes(&self) -> usize {
        self.shadowed_by.as_ref().map_or(0, |by| by.name.len())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn clone_box(&self) -> Box<dyn ServerExtension> {
        Box::new(self.clone())
    }
}

/// Whether `name` may be used as a DSH profile directory name:
/// `[A-Za-z0-9][A-Za-z0-9._-]{0,63}` (so never empty, `.`, `..`, or a path).
pub fn valid_profile_name(name: &str) -> bool {
    let b = name.as_bytes();
    (1..=64).contains(&b.len())
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Yaml,
    Json,
}

/// One fixed layer: its scope, base directory and components below it.
struct Layer<'p> {
    scope: &'static str,
    /// A project layer (1–3); the others are user layers, mounted per host.
    project: bool,
    base: Option<&'p Path>,
    /// Shown instead of the path when the base (HOME) is unknown.
    unknown_base: &'static str,
    rel: Vec<&'p str>,
    format: Format,
}

/// A row with where it came from, in merge order.
struct Placed {
    layer: usize,
    scope: &'static str,
    project: bool,
    path: String,
    row: Row,
    launch: crate::model::Launch,
    guard_form: crate::model::GuardForm,
}

pub fn inventory(root: &SelectedRoot, host: &Host, profile: Option<&str>) -> Inventory {
    let project = Some(root.canonical.as_path());
    let home = host.home.as_deref();
    let mut layers = vec![
        layer(
            DSH_PROJECT,
            project,
            "",
            vec![".dsh", "mcp.yml"],
            Format::Yaml,
        ),
        layer(
            DSH_PROJECT_JSON,
            project,
            "",
            vec![".dsh", "mcp.json"],
            Format::Json,
        ),
        layer(CC_PROJECT, project, "", vec![".mcp.json"], Format::Json),
    ];
    if let Some(name) = profile {
        debug_assert!(valid_profile_name(name), "validated by the CLI");
        layers.push(layer(
            DSH_PROFILE_USER,
            home,
            "~",
            vec![".dsh", "profiles", name, "mcp.json"],
            Format::Json,
        ));
    }
    layers.push(layer(
        DSH_USER_YML,
        home,
        "~",
        vec![".dsh", "mcp.yml"],
        Format::Yaml,
    ));
    layers.push(layer(
        DSH_USER,
        home,
        "~",
        vec![".dsh", "mcp.json"],
        Format::Json,
    ));

    let fold_case = host.os == Os::Windows;
    let mut sources = Vec::with_capacity(layers.len());
    let mut placed = Vec::new();
    for (i, l) in layers.iter().enumerate() {
        let (source, rows) = read_layer(l, fold_case);
        let path = source.path.clone();
        sources.push(source);
        placed.extend(rows.into_iter().map(|(row, launch, guard_form)| Placed {
            layer: i,
            scope: l.scope,
            project: l.project,
            path: path.clone(),
            row,
            launch,
            guard_form,
        }));
    }

    let servers = shadow_chain(placed);
    let mut not_examined = Vec::with_capacity(NOT_EXAMINED.len() + 1);
    if profile.is_none() {
        not_examined.push(DSH_PROFILE_USER);
    }
    not_examined.extend(NOT_EXAMINED);
    Inventory {
        sources,
        servers,
        instructions: Vec::new(),
        coverage: coverage(&not_examined),
    }
}

fn layer<'p>(
    scope: &'static str,
    base: Option<&'p Path>,
    unknown_base: &'static str,
    rel: Vec<&'p str>,
    format: Format,
) -> Layer<'p> {
    Layer {
        scope,
        project: matches!(scope, DSH_PROJECT | DSH_PROJECT_JSON | CC_PROJECT),
        base,
        unknown_base,
        rel,
        format,
    }
}

type LayerRow = (Row, crate::model::Launch, crate::model::GuardForm);

/// Read one layer into its source and rows (document order).
fn read_layer(l: &Layer, fold_case: bool) -> (Source, Vec<LayerRow>) {
    let path = match l.base {
        Some(b) => path_string(&l.rel.iter().fold(b.to_path_buf(), |p, c| p.join(c))),
        None => format!("{}/{}", l.unknown_base, l.rel.join("/")),
    };
    let mut source = Source::new(
        l.scope,
        path,
        match l.format {
            Format::Yaml => YAML_CONTAINER.to_owned(),
            Format::Json => "mcpServers".to_owned(),
        },
    );
    source.format = Some(match l.format {
        Format::Yaml => "yaml",
        Format::Json => "json",
    });
    let Some(base) = l.base else {
        source.set(Unavailable::new(FileState::Unreadable, Reason::HomeNotSet));
        return (source, Vec::new());
    };
    // `.mcp.json` is read as Claude Code's file: DSH requires `mcpServers`.
    let require_servers = l.scope == CC_PROJECT;
    let result = crate::read::read_file(base, &l.rel).and_then(|bytes| match l.format {
        Format::Json => json_rows(&bytes, require_servers, fold_case),
        Format::Yaml => yaml_rows(&bytes, fold_case),
    });
    match result {
        Ok(rows) => {
            let name_bytes = rows.iter().map(|(row, _, _)| row.name.len()).sum();
            if !crate::bound::may_build(rows.len(), name_bytes) {
                crate::bound::withhold(&mut source);
                return (source, Vec::new());
            }
            source.state = FileState::Present;
            source.server_count = rows.len();
            (source, rows)
        }
        Err(u) => {
            source.set(u);
            (source, Vec::new())
        }
    }
}

fn classified(row: Row, entry: Option<&Value>) -> LayerRow {
    let (launch, guard_form) = match entry {
        Some(e) => classify::classify(e, &row.shape),
        None => (
            crate::model::Launch::Unknown,
            crate::model::GuardForm::Unknown,
        ),
    };
    (row, launch, guard_form)
}

/// `mcpServers` of a strict JSON file, in the order DSH walks it
/// (`Object.entries`: array-index names first, see [`js::property_order`]).
///
/// A missing `mcpServers` is an empty layer, except in `.mcp.json`, where DSH
/// fails the file (`wrong-container-type` here); `null` is an empty layer;
/// any other non-object is `wrong-container-type` (DSH logs it as an entry
/// error and reads no row from the file either).
fn json_rows(
    bytes: &[u8],
    require_servers: bool,
    fold_case: bool,
) -> Result<Vec<LayerRow>, Unavailable> {
    let top = parse_object(bytes, &Options::STRICT)?;
    let servers = match top.get("mcpServers") {
        None if require_servers => return Err(Unavailable::malformed(Reason::WrongContainerType)),
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(o)) => o,
        Some(_) => return Err(Unavailable::malformed(Reason::WrongContainerType)),
    };
    let entries: Vec<(&str, &Value)> = servers.iter().collect();
    Ok(js::property_order(entries.iter().map(|(name, _)| *name))
        .into_iter()
        .map(|i| {
            let (name, e) = entries[i];
            classified(entry::json_row(name, e, fold_case), Some(e))
        })
        .collect())
}

/// The managed block's rows, in document order, flattened as DSH's
/// `flattenPatchRows` does: the block must be a sequence (an empty block is
/// not); an entry that is not a mapping is skipped; an entry whose `insert`
/// is a sequence contributes each item, any other entry is itself a row
/// candidate.
fn yaml_rows(bytes: &[u8], fold_case: bool) -> Result<Vec<LayerRow>, Unavailable> {
    let malformed = Unavailable::malformed;
    let text = std::str::from_utf8(bytes).map_err(|_| malformed(Reason::InvalidUtf8))?;
    let Some(block) = yaml::managed_block(text).map_err(malformed)? else {
        return Ok(Vec::new());
    };
    // The block is a slice of the file: report where in the file parsing stopped.
    let block_start = block.as_ptr() as usize - text.as_ptr() as usize;
    let doc = yaml::parse_located(block)
        .map_err(|(r, at)| Unavailable::refused_at(r, bytes, block_start + at))?;
    let Value::Array(entries) = &doc else {
        return Err(malformed(Reason::WrongContainerType));
    };
    let mut rows = Vec::new();
    let mut push = |candidate: &Value| {
        let config = candidate
            .as_object()
            .and_then(|o| o.get("config"))
            .filter(|c| c.as_object().is_some());
        rows.push(classified(entry::yaml_row(candidate, fold_case), config));
    };
    for e in entries {
        let Some(op) = e.as_object() else {
            continue;
        };
        match op.get("insert") {
            Some(Value::Array(inserted)) => inserted.iter().for_each(&mut push),
            _ => push(e),
        }
    }
    Ok(rows)
}

/// Where one row stands in one merge.
#[derive(Clone)]
enum Standing {
    /// Not part of this merge.
    Out,
    /// Came first on every key: holds these.
    Holds(Vec<&'static str>),
    /// Collided with an earlier row (chain index) on this key.
    Shadowed(usize, &'static str),
}

/// DSH's `mergeSourcedRows` over the rows `include` selects, in order: a row
/// is shadowed by the holder of its exact name; else of its normalized name;
/// else of its identity (that precedence, not the earliest holder, names the
/// key). A row that is not shadowed takes all its keys; a shadowed row takes
/// none.
fn merge(
    placed: &[Placed],
    norms: &[Option<String>],
    include: impl Fn(&Placed) -> bool,
) -> Vec<Standing> {
    let n = placed.len();
    let mut names: HashMap<&str, usize> = HashMap::with_capacity(n);
    let mut normalized: HashMap<&str, usize> = HashMap::with_capacity(n);
    let mut identities: HashMap<&entry::Identity, usize> = HashMap::with_capacity(n);
    let mut out = Vec::with_capacity(n);
    for (i, p) in placed.iter().enumerate() {
        if !p.row.enters_chain || !include(p) {
            out.push(Standing::Out);
            continue;
        }
        let name = p.row.name.as_str();
        let norm = norms[i].as_deref();
        let id = p.row.identity.as_ref();
        let hit = names
            .get(name)
            .map(|w| (*w, "name"))
            .or_else(|| {
                norm.and_then(|k| normalized.get(k))
                    .map(|w| (*w, "normalized-name"))
            })
            .or_else(|| id.and_then(|k| identities.get(k)).map(|w| (*w, "identity")));
        if let Some((w, key)) = hit {
            out.push(Standing::Shadowed(w, key));
            continue;
        }
        let mut claims = vec!["name"];
        names.insert(name, i);
        if let Some(k) = norm {
            normalized.insert(k, i);
            claims.push("normalized-name");
        }
        if let Some(k) = id {
            identities.insert(k, i);
            claims.push("identity");
        }
        out.push(Standing::Holds(claims));
    }
    out
}

/// Decide every row's `shadowedBy`, `claims` and `active`, then order the
/// rows for output: layer order, then name, then merge order.
///
/// Project rows (layers 1–3) stand as the project's merge of all layers
/// leaves them. A user row (layers 4–6) mounts once per host when it wins
/// the user layers' own merge; when a project row takes one of its keys in
/// the project's merge it stays active, with that project row as
/// `shadowedBy`: DSH denies its tools to this project's sessions only.
fn shadow_chain(placed: Vec<Placed>) -> Vec<Server> {
    let norms: Vec<Option<String>> = placed
        .iter()
        .map(|p| {
            p.row
                .enters_chain
                .then(|| entry::normalized_name(&p.row.name))
                .flatten()
        })
        .collect();
    let project_merge = merge(&placed, &norms, |_| true);
    let user_merge = merge(&placed, &norms, |p| !p.project);
    // A winner's name is shared, not copied, by the rows it shadows: one long
    // name may shadow tens of thousands of rows (the document's bound counts
    // each repeat: `repeated_name_bytes`).
    let names: Vec<Arc<str>> = placed
        .iter()
        .map(|p| Arc::from(p.row.name.as_str()))
        .collect();
    let by = |w: usize, key: &'static str| ShadowedBy {
        scope: placed[w].scope,
        key,
        name: Arc::clone(&names[w]),
    };
    let decided: Vec<(Option<ShadowedBy>, Vec<&'static str>, bool)> = placed
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mounts = p.row.mountable();
            let standing = if p.project {
                &project_merge[i]
            } else {
                &user_merge[i]
            };
            match standing {
                Standing::Out => (None, Vec::new(), false),
                Standing::Shadowed(w, key) => (Some(by(*w, key)), Vec::new(), false),
                Standing::Holds(claims) => {
                    let hidden = match &project_merge[i] {
                        Standing::Shadowed(w, key) if !p.project && placed[*w].project => {
                            Some(by(*w, key))
                        }
                        _ => None,
                    };
                    (hidden, claims.clone(), mounts)
                }
            }
        })
        .collect();

    let mut out: Vec<Server> = Vec::with_capacity(placed.len());
    let mut layer_of: Vec<usize> = Vec::with_capacity(placed.len());
    for (p, (shadowed_by, claims, active)) in placed.into_iter().zip(decided) {
        let row = p.row;
        out.push(Server {
            client: None,
            name: row.name,
            scope: p.scope,
            origin: None,
            format: None,
            path: p.path,
            configured: true,
            shape: row.shape,
            launch: p.launch,
            guard_form: p.guard_form,
            ext: Extension::new(DshRow {
                shadowed_by,
                active,
                disabled: row.disabled,
                skipped: row.skipped,
                claims,
                placeholder_count: row.placeholder_count,
            }),
        });
        layer_of.push(p.layer);
    }
    // Sort indices, not rows: a row is several hundred bytes.
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_unstable_by(|&a, &b| {
        (layer_of[a], &out[a].name, a).cmp(&(layer_of[b], &out[b].name, b))
    });
    let mut slots: Vec<Option<Server>> = out.into_iter().map(Some).collect();
    order
        .into_iter()
        .map(|i| slots[i].take().expect("each index once"))
        .collect()
}
