//! Client profiles: one [`Profile`] per client, all of them in [`REGISTRY`].
//! A profile knows one client's fixed sources (paths per OS), parser,
//! containers, scopes in the client's precedence order, its same-name rule and
//! instruction candidates, and turns them into an [`Inventory`]; everything it
//! reads goes through `read.rs`, everything it parses through `json.rs` (or
//! the TOML/YAML readers beside it), and everything it reports is a
//! `model.rs` type, its own row fields in a [`crate::model::ServerExtension`].
//!
//! To add a client: one module here implementing [`Profile`] and one entry in
//! [`REGISTRY`] (the `--client` spelling, the document's `client` id and the
//! order of `--client all`), plus its matrix data and the id in
//! `harness/matrix/shipped.json` (a test keeps the two equal). Profiles must
//! never execute, write, or put a command, argument, URL, env/header name or
//! value into the model.

pub mod amazon_q;
pub mod claude_code;
pub mod claude_desktop;
pub mod claude_launch;
pub mod cline;
pub mod codex;
pub mod codex_launch;
pub mod continue_dev;
pub mod crush;
pub mod cursor;
pub mod dsh;
pub mod gemini_cli;
pub mod goose;
pub mod grammar;
pub mod kiro;
pub mod layers;
pub mod opencode;
pub mod roo_code;
pub mod vscode;
pub mod windsurf;
pub mod zed;

use std::fmt;
use std::path::Path;

use crate::host::{Host, Os};
use crate::json::{self, Object, Value};
use crate::model::{
    Coverage, Extension, FileState, Instruction, Reason, Server, Shape, Source, Unavailable,
};
use crate::root::SelectedRoot;
use crate::{classify, model};

/// Every client, in registry order: `--client` values, `--client all` order,
/// and the ids `harness/matrix/shipped.json` must list.
pub static REGISTRY: [&dyn Profile; 17] = [
    &claude_code::ClaudeCode,
    &vscode::Vscode,
    &dsh::Dsh,
    &codex::Codex,
    &cursor::Cursor,
    &gemini_cli::GeminiCli,
    &windsurf::Windsurf,
    &claude_desktop::ClaudeDesktop,
    &kiro::Kiro,
    &amazon_q::AmazonQ,
    &opencode::OpenCode,
    &zed::Zed,
    &continue_dev::Continue,
    &cline::Cline,
    &roo_code::RooCode,
    &goose::Goose,
    &crush::Crush,
];

/// The `--client` value that runs every profile.
pub const ALL: &str = "all";

/// One client: what it reads, how, and in which order it lets scopes win.
pub trait Profile: Sync {
    /// The `--client` spelling and the document's `client` id (kebab-case).
    fn id(&self) -> &'static str;

    /// Human name for the terminal report.
    fn title(&self) -> &'static str;

    /// Other accepted `--client` spellings.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// The fixed candidate files on `os`, in report order (`<root>`, `~` and
    /// `$VAR` stand for the selected root, the home directory and an
    /// environment override the profile honours).
    fn candidates(&self, os: Os) -> Vec<Candidate>;

    /// How a server declared under one name in two scopes resolves.
    fn shadowing(&self) -> Shadowing;

    /// Read every fixed source and describe what is declared there.
    fn inventory(&self, ctx: &Context) -> Inventory;

    /// The scopes of the project's own levels above the root: files the client reads as this
    /// project's configuration from the root's ancestors (Codex, OpenCode and Crush walk up to the
    /// nearest `.git`). `--fail-on project-server` counts them with the files below the root.
    fn ancestor_project_scopes(&self) -> &'static [&'static str] {
        &[]
    }

    /// Report lines after a source's path line (parser, trust, root fields):
    /// each starts with two spaces plus `width` columns.
    fn source_report(&self, source: &Source, width: usize, out: &mut String) {
        default_source_report(source, width, out);
    }
}

/// One fixed candidate file, as documented.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub scope: &'static str,
    pub path: String,
    /// `json` (strict), `jsonc`, `toml` or `yaml`.
    pub parser: &'static str,
    pub container: &'static str,
}

impl Candidate {
    pub fn new(
        scope: &'static str,
        path: impl Into<String>,
        parser: &'static str,
        container: &'static str,
    ) -> Candidate {
        Candidate {
            scope,
            path: path.into(),
            parser,
            container,
        }
    }
}

/// Same-name resolution between scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shadowing {
    /// The client picks one winner by scope order (highest first): rows carry
    /// `possibleShadowedBy`.
    ScopeOrder(&'static [&'static str]),
    /// The client only duplicates (or its winner is undocumented): rows carry
    /// `sameNameIn`.
    Duplicates,
    /// DSH's first-come chain on name, normalized name and identity:
    /// `shadowedBy`.
    FirstCome,
}

/// What a profile runs against.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub root: &'a SelectedRoot,
    pub host: &'a Host,
    /// `--dsh-profile NAME` (dsh only, already validated).
    pub dsh_profile: Option<&'a str>,
}

/// `--client`: one profile, or all of them.
#[derive(Clone, Copy)]
pub enum Client {
    One(&'static dyn Profile),
    All,
}

impl Client {
    /// The default profile (Claude Code).
    pub fn default_profile() -> Client {
        Client::One(REGISTRY[0])
    }

    /// A `--client` value (id or alias), or `None`.
    pub fn parse(value: &str) -> Option<Client> {
        if value == ALL {
            return Some(Client::All);
        }
        by_id(value).map(Client::One)
    }

    /// The document's `client` id.
    pub fn id(self) -> &'static str {
        match self {
            Client::One(p) => p.id(),
            Client::All => ALL,
        }
    }

    /// The profiles this selection runs, in registry order.
    pub fn profiles(self) -> &'static [&'static dyn Profile] {
        match self {
            Client::One(p) => {
                let i = REGISTRY
                    .iter()
                    .position(|r| r.id() == p.id())
                    .expect("registered");
                &REGISTRY[i..i + 1]
            }
            Client::All => &REGISTRY,
        }
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Client({})", self.id())
    }
}

impl PartialEq for Client {
    fn eq(&self, other: &Client) -> bool {
        self.id() == other.id()
    }
}

impl Eq for Client {}

/// The profile with this id or alias.
pub fn by_id(value: &str) -> Option<&'static dyn Profile> {
    REGISTRY
        .iter()
        .copied()
        .find(|p| p.id() == value || p.aliases().contains(&value))
}

/// What a profile found, in the contract's documented order.
#[derive(Debug, Clone)]
pub struct Inventory {
    pub sources: Vec<Source>,
    pub servers: Vec<Server>,
    pub instructions: Vec<Instruction>,
    pub coverage: Coverage,
}

/// The parser/format/trust line most profiles print under a source.
pub fn default_source_report(s: &Source, width: usize, o: &mut String) {
    let mut parts: Vec<String> = Vec::new();
    if let Some(format) = s.format {
        parts.push(format!("format {format}"));
    }
    if let Some(parser) = s.parser {
        parts.push(format!("parser {parser}"));
    }
    if let Some(t) = s.trusted {
        parts.push(format!("trusted: {}", t.as_word()));
    }
    if let Some(rf) = s.uninterpreted_root_fields {
        parts.push(format!("uninterpreted root fields: {}", rf.as_word()));
    }
    if let Some(p) = s.position {
        parts.push(format!("stopped at line {}, column {}", p.line, p.column));
    }
    if !parts.is_empty() {
        o.push_str(&format!("  {:<width$}  {}\n", "", parts.join(" · ")));
    }
}

// ---- building blocks shared by profiles ----

/// Project levels a client reads, at most: the root and the 63 ancestors
/// nearest to it. A real root lies a handful of levels below its repository's
/// top (a deep package directory, a dozen or so); only the path length bounds
/// the walk otherwise (some 2,000 levels, each a file of up to 1 MiB to
/// parse). Continue's block directory is bounded alike (64 files).
pub const MAX_PROJECT_LEVELS: usize = 64;

/// A client's project directories: the root and its ancestors up to the
/// nearest one holding `marker` (e.g. `.git`), nearest first. Without a
/// marker anywhere, only the root (`walk_to_top: false`) or every ancestor up
/// to `/` (`true`).
///
/// At most [`MAX_PROJECT_LEVELS`] of them are read ([`ProjectLevels::read`]);
/// the walk itself goes on (one `lstat` a level) so the project's top is
/// known. The levels past the bound are never silently dropped: a client
/// lists the files of the first of them, unread, in the state
/// [`ProjectLevels::NOT_READ`], for all of them ([`layers::Layer::not_read`]).
pub fn project_levels<'r>(root: &'r Path, marker: &str, walk_to_top: bool) -> ProjectLevels<'r> {
    let mut levels = Vec::new();
    let mut found = false;
    for dir in root.ancestors() {
        levels.push(dir);
        if crate::read::entry_exists(dir, marker) {
            found = true;
            break;
        }
    }
    if !found && !walk_to_top {
        levels = vec![root];
    }
    let unread = levels.split_off(levels.len().min(MAX_PROJECT_LEVELS));
    ProjectLevels {
        read: levels,
        unread,
    }
}

/// The levels of [`project_levels`], split at the bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectLevels<'r> {
    /// The levels read, nearest first (the root first): at most
    /// [`MAX_PROJECT_LEVELS`].
    pub read: Vec<&'r Path>,
    /// The levels past the bound, nearest first: never read, no file in them
    /// opened.
    pub unread: Vec<&'r Path>,
}

impl<'r> ProjectLevels<'r> {
    /// The state of the source that stands for the levels not read:
    /// `too-large` / `too-many-entries` (an incomplete inventory; a project
    /// file for `--fail-on project-server`, which it leaves undecided).
    pub const NOT_READ: Unavailable = Unavailable {
        state: FileState::TooLarge,
        reason: Some(Reason::TooManyEntries),
        position: None,
    };

    /// The levels a client lists sources for, nearest first: those read
    /// (`false`), then the first level past the bound (`true`), whose files
    /// stand, unread, for those of every level past it.
    pub fn listed(&self) -> Vec<(&'r Path, bool)> {
        self.read
            .iter()
            .map(|dir| (*dir, false))
            .chain(self.unread.first().map(|dir| (*dir, true)))
            .collect()
    }

    /// The outermost level: the one holding the marker, else the last one
    /// walked.
    pub fn top(&self) -> Option<&'r Path> {
        self.unread.last().or(self.read.last()).copied()
    }
}

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
    match json::parse_located(bytes, opts) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(Unavailable::malformed(Reason::WrongContainerType)),
        Err((e, at)) => Err(Unavailable::malformed_at(e.reason(), bytes, at)),
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
                client: None,
                name: name.to_owned(),
                scope,
                origin: None,
                format: None,
                path: path.to_owned(),
                configured: true,
                shape,
                launch,
                guard_form,
                ext: Extension::none(),
            }
        })
        .collect()
}

/// Fill a source from a container lookup and return its rows (none, and the
/// source withheld, past the document's bound: `bound::may_build`).
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
            // Rows the document's bound would withhold are never built.
            let name_bytes = entries.iter().map(|(name, _)| name.len()).sum();
            if !crate::bound::may_build(entries.len(), name_bytes) {
                crate::bound::withhold(source);
                return Vec::new();
            }
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
