//! The DSH profile (`--client dsh`): the six first-come-first-served layers
//! of dsh-project-mcp-manager (`seeds/002_*.txt`, `docs/guide/layers.md`),
//! each layer's rows, and the shadow chain that decides which rows are
//! hidden by an earlier one — statically, without starting DSH.
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
//! `coverage.notExamined`. Rows are shadowed on the exact name, the
//! normalized name or the raw identity (see [`entry`]); the earliest
//! colliding row wins the attribution. Every decision is in
//! `inventory/DSH.md`.
//!
//! Files go through `read.rs` (bounded, no-follow), JSON through the strict
//! `json.rs` parser, YAML through [`yaml`]. This profile must never expand a
//! `${VAR}`, evaluate a tag, read an instruction file, consult the process
//! environment (DSH_HOME, DSH_MCP_*), or put a command, argument, URL, env or
//! header name or value into the model.

pub mod entry;
pub mod yaml;

use std::collections::HashMap;
use std::path::Path;

use crate::classify;
use crate::host::{Host, Os};
use crate::json::{Options, Value};
use crate::model::{DshRow, FileState, Reason, Server, ShadowedBy, Source, Unavailable};
use crate::profile::{coverage, member_object, parse_object, path_string, Inventory};
use crate::root::SelectedRoot;

use entry::{Identity, Row};

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
    base: Option<&'p Path>,
    /// Shown instead of the path when the base (HOME) is unknown.
    unknown_base: &'static str,
    rel: Vec<&'p str>,
    format: Format,
}

/// A row with where it came from, in document order.
struct Placed {
    layer: usize,
    scope: &'static str,
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
    let result = crate::read::read_file(base, &l.rel).and_then(|bytes| match l.format {
        Format::Json => json_rows(&bytes, fold_case),
        Format::Yaml => yaml_rows(&bytes, fold_case),
    });
    match result {
        Ok(rows) => {
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

/// `mcpServers` of a strict JSON file, in document order.
fn json_rows(bytes: &[u8], fold_case: bool) -> Result<Vec<LayerRow>, Unavailable> {
    let top = parse_object(bytes, &Options::STRICT)?;
    let Some(servers) = member_object(&top, "mcpServers")? else {
        return Ok(Vec::new());
    };
    Ok(servers
        .iter()
        .map(|(name, e)| classified(entry::json_row(name, e, fold_case), Some(e)))
        .collect())
}

/// The managed block's `insert` rows, in document order.
fn yaml_rows(bytes: &[u8], fold_case: bool) -> Result<Vec<LayerRow>, Unavailable> {
    let malformed = Unavailable::malformed;
    let text = std::str::from_utf8(bytes).map_err(|_| malformed(Reason::InvalidUtf8))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(block) = yaml::managed_block(text).map_err(malformed)? else {
        return Ok(Vec::new());
    };
    let doc = yaml::parse_block(block).map_err(malformed)?;
    let items: &[Value] = match &doc {
        Value::Null => &[],
        Value::Array(items) => items,
        _ => return Err(malformed(Reason::WrongContainerType)),
    };
    let mut rows = Vec::new();
    for item in items {
        let Some(op) = item.as_object() else {
            return Err(malformed(Reason::WrongContainerType));
        };
        match op.get("insert") {
            None | Some(Value::Null) => {}
            Some(Value::Array(inserted)) => {
                for r in inserted {
                    let config = r.as_object().and_then(|o| o.get("config"));
                    let config = config.filter(|c| c.as_object().is_some());
                    rows.push(classified(entry::yaml_row(r, fold_case), config));
                }
            }
            Some(_) => return Err(malformed(Reason::WrongContainerType)),
        }
    }
    Ok(rows)
}

/// Walk the rows in layer and document order, decide `shadowedBy`, then
/// order the rows for output: layer order, then name, then document order.
///
/// Each key maps to the chain index of the row holding it; a row's keys are
/// moved into the maps, never copied twice (a 1 MiB layer has ~20,000 rows).
fn shadow_chain(placed: Vec<Placed>) -> Vec<Server> {
    let n = placed.len();
    let mut names: HashMap<String, usize> = HashMap::with_capacity(n);
    let mut normalized: HashMap<String, usize> = HashMap::with_capacity(n);
    let mut identities: HashMap<Identity, usize> = HashMap::with_capacity(n);
    let mut out: Vec<Server> = Vec::with_capacity(n);
    let mut layer_of: Vec<usize> = Vec::with_capacity(n);
    for (index, p) in placed.into_iter().enumerate() {
        let mut row = p.row;
        let mut shadowed_by = None;
        let mut claims = Vec::new();
        if row.claims() {
            let norm = entry::normalized_name(&row.name);
            let hits = [
                ("name", names.get(&row.name)),
                ("normalized-name", normalized.get(&norm)),
                (
                    "identity",
                    row.identity.as_ref().and_then(|i| identities.get(i)),
                ),
            ];
            // The earliest colliding row wins; on a tie the first key in
            // name, normalized-name, identity order.
            let winner = hits
                .iter()
                .filter_map(|(k, h)| h.map(|h| (*h, *k)))
                .min_by_key(|(i, _)| *i);
            if let Some((i, key)) = winner {
                let holder = &out[i];
                shadowed_by = Some(ShadowedBy {
                    scope: holder.scope,
                    key,
                    name: holder.name.clone(),
                });
            } else {
                names.insert(row.name.clone(), index);
                normalized.insert(norm, index);
                claims.extend(["name", "normalized-name"]);
                if let Some(id) = row.identity.take() {
                    identities.insert(id, index);
                    claims.push("identity");
                }
            }
        }
        let active = row.claims() && !row.disabled && shadowed_by.is_none();
        let server = Server {
            name: row.name,
            scope: p.scope,
            origin: None,
            format: None,
            path: p.path,
            configured: true,
            shape: row.shape,
            launch: p.launch,
            guard_form: p.guard_form,
            possible_shadowed_by: None,
            possibly_excluded_by: None,
            same_name_in: None,
            shadowed_by: Some(shadowed_by),
            dsh: Some(DshRow {
                active,
                disabled: row.disabled,
                skipped: row.skipped,
                claims,
                placeholder_count: row.placeholder_count,
            }),
        };
        out.push(server);
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
