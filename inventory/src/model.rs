//! The output model: the version-1 document of `contracts/inventory-v1.md`.
//!
//! Owns every type that is serialized to `--json` and rendered by the terminal
//! report, and the closed vocabularies (file states, reason codes, transports,
//! launch and guard forms). Profiles fill these types; renderers read them.
//!
//! It must never hold a command string, an argument, a URL, an env or header
//! name or value, or an instruction body: there is deliberately no field that
//! could carry one, so no renderer can leak one. Field names are a versioned
//! contract: add fields, never rename or drop them. A server row's
//! profile-specific fields live in its [`ServerExtension`] (defined by the
//! profile, flattened into the row), so each profile's JSON has only its own
//! and adding a client never touches this file. The few source fields several
//! profiles share are `Option`s skipped when `None`.

use std::any::Any;
use std::fmt::Debug;

use serde::{Serialize, Serializer};

/// The `schemaVersion` of the document.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole `--json` document.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    pub schema_version: u32,
    pub tool: Tool,
    /// The profile id (`claude-code`, `vscode`, `dsh`, `codex`, ...) or `all`.
    pub client: &'static str,
    pub root: Root,
    /// True only when every fixed source is `present` or `missing`.
    pub inventory_complete: bool,
    pub sources: Vec<Source>,
    pub servers: Vec<Server>,
    pub instructions: Vec<Instruction>,
    pub coverage: Coverage,
    /// `--client all`: one summary per profile, in registry order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clients: Option<Vec<ClientSummary>>,
    /// `--fail-on` (only when given): the conditions asked for and those met.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fail_on: Option<FailOnReport>,
}

/// One profile's totals in a `--client all` document.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientSummary {
    pub client: &'static str,
    pub title: &'static str,
    /// Every fixed source of this profile is present or missing.
    pub inventory_complete: bool,
    pub server_count: usize,
    /// Sources in any state but `present` or `missing`.
    pub broken_sources: usize,
    pub coverage: Coverage,
}

/// What `--fail-on` asked for and what held (ids as in `--fail-on`).
#[derive(Debug, Clone, Serialize)]
pub struct FailOnReport {
    pub conditions: Vec<&'static str>,
    pub met: Vec<&'static str>,
    /// Conditions that do not hold but cannot be ruled out: a source they
    /// depend on could not be read (`gate::undecided`; exit 1).
    pub undecided: Vec<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
}

impl Tool {
    pub fn this() -> Tool {
        Tool {
            name: "mcpscope",
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// The selected root in its three spellings.
#[derive(Debug, Clone, Serialize)]
pub struct Root {
    /// The argument exactly as given (lossy only if it is not UTF-8).
    pub requested: String,
    /// Absolute spelling: current directory joined and `.`/`..` removed
    /// lexically, symlinks not resolved.
    pub explicit: String,
    /// `realpath` of the root.
    pub canonical: String,
}

/// What reading one fixed file found. Order of variants is irrelevant;
/// the serialized spelling is the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileState {
    Present,
    Missing,
    Unreadable,
    Malformed,
    SymlinkSkipped,
    NotFile,
    TooLarge,
}

impl FileState {
    /// Whether this state keeps the inventory complete.
    pub fn is_complete(self) -> bool {
        matches!(self, FileState::Present | FileState::Missing)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FileState::Present => "present",
            FileState::Missing => "missing",
            FileState::Unreadable => "unreadable",
            FileState::Malformed => "malformed",
            FileState::SymlinkSkipped => "symlink-skipped",
            FileState::NotFile => "not-file",
            FileState::TooLarge => "too-large",
        }
    }
}

/// Why a file is not plainly `present`/`missing`: a code, never OS or parser
/// text. Shared by every profile; add variants, never rename them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    // --- reading (read.rs) ---
    /// EACCES/EPERM on the file or on a directory on the way to it.
    PermissionDenied,
    /// Any other OS error (EIO, ENAMETOOLONG, EMFILE, ...).
    IoError,
    /// The home directory is unknown (HOME unset, empty or relative).
    HomeNotSet,
    /// The file itself is a symlink (dangling or not).
    Symlink,
    /// A directory on the way from the trusted base is a symlink.
    SymlinkInPath,
    /// A path component on the way is not a directory: the file cannot exist.
    ParentNotDirectory,
    Directory,
    Fifo,
    Socket,
    Device,
    OtherFileType,
    /// More than 1 MiB (the read stops at limit + 1 bytes).
    ExceedsReadLimit,
    // --- parsing (json.rs, later yaml) ---
    InvalidUtf8,
    ByteOrderMark,
    Comment,
    TrailingComma,
    DuplicateKey,
    TooDeep,
    /// A `\uD800`-style escape without its pair: not representable exactly.
    LoneSurrogate,
    Syntax,
    UnsupportedTag,
    // --- interpretation (profiles) ---
    /// The file parsed but the container (or the root) has the wrong type.
    WrongContainerType,
    /// `projects` has entries under both the canonical and explicit root.
    AmbiguousProjectKey,
    /// vscode: one file names two server containers (or a wrapper beside a
    /// possible bare-map declaration); no interpretation is chosen.
    MixedContainer,
    // --- dsh (profile/dsh) ---
    /// A managed-block begin marker without its end marker (or without a
    /// newline after it), found the way DSH finds markers: first occurrence.
    UnterminatedBlock,
    /// An end marker without a begin, or the first end before the first begin.
    UnbalancedMarkers,
    /// YAML aliases would copy in more nodes than the bound allows.
    AliasLimit,
    /// A YAML mapping key that is a collection or an alias.
    ComplexKey,
    /// A YAML `<<` merge key (not interpreted).
    UnsupportedMergeKey,
    // --- other clients (profile/*) ---
    /// gemini-cli: a `trustedFolders.json` value that is not a trust level
    /// (Gemini CLI refuses to start).
    InvalidTrustLevel,
    /// More entries than a bound lets one client read: Continue's block
    /// directory (`read::LIST_LIMIT` entries, 64 block files), or the project
    /// levels a client walks above the root (`profile::MAX_PROJECT_LEVELS`;
    /// on the source standing for the levels not read).
    TooManyEntries,
    /// A YAML file whose tree is more than the reader builds from one file:
    /// more nodes than `profile::dsh::yaml::MAX_NODES`, or anchors and aliases
    /// copying in more text than `MAX_ALIAS_TEXT` (`too-large`, like a file
    /// over the read limit; the parse stops there).
    TooManyNodes,
    // --- the document (bound.rs) ---
    /// Listing this source's rows would take the document past its bound on
    /// server rows (or on the bytes of their names), or an earlier source's
    /// did: none of its rows are listed.
    TooManyServers,
}

impl Reason {
    /// The code as serialized (kebab-case), for the terminal report.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::PermissionDenied => "permission-denied",
            Reason::IoError => "io-error",
            Reason::HomeNotSet => "home-not-set",
            Reason::Symlink => "symlink",
            Reason::SymlinkInPath => "symlink-in-path",
            Reason::ParentNotDirectory => "parent-not-directory",
            Reason::Directory => "directory",
            Reason::Fifo => "fifo",
            Reason::Socket => "socket",
            Reason::Device => "device",
            Reason::OtherFileType => "other-file-type",
            Reason::ExceedsReadLimit => "exceeds-read-limit",
            Reason::InvalidUtf8 => "invalid-utf8",
            Reason::ByteOrderMark => "byte-order-mark",
            Reason::Comment => "comment",
            Reason::TrailingComma => "trailing-comma",
            Reason::DuplicateKey => "duplicate-key",
            Reason::TooDeep => "too-deep",
            Reason::LoneSurrogate => "lone-surrogate",
            Reason::Syntax => "syntax",
            Reason::UnsupportedTag => "unsupported-tag",
            Reason::WrongContainerType => "wrong-container-type",
            Reason::AmbiguousProjectKey => "ambiguous-project-key",
            Reason::MixedContainer => "mixed-container",
            Reason::UnterminatedBlock => "unterminated-block",
            Reason::UnbalancedMarkers => "unbalanced-markers",
            Reason::AliasLimit => "alias-limit",
            Reason::ComplexKey => "complex-key",
            Reason::UnsupportedMergeKey => "unsupported-merge-key",
            Reason::InvalidTrustLevel => "invalid-trust-level",
            Reason::TooManyEntries => "too-many-entries",
            Reason::TooManyNodes => "too-many-nodes",
            Reason::TooManyServers => "too-many-servers",
        }
    }
}

/// A file that could not be taken as plainly present: its state and code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unavailable {
    pub state: FileState,
    pub reason: Option<Reason>,
    /// Where a parser stopped, for a `malformed` file.
    pub position: Option<Position>,
}

impl Unavailable {
    pub const MISSING: Unavailable = Unavailable {
        state: FileState::Missing,
        reason: None,
        position: None,
    };

    pub fn new(state: FileState, reason: Reason) -> Unavailable {
        Unavailable {
            state,
            reason: Some(reason),
            position: None,
        }
    }

    pub fn malformed(reason: Reason) -> Unavailable {
        Unavailable::new(FileState::Malformed, reason)
    }

    /// `malformed` with the place in `bytes` (a byte offset) where the parser
    /// stopped.
    pub fn malformed_at(reason: Reason, bytes: &[u8], offset: usize) -> Unavailable {
        Unavailable {
            position: Some(Position::of_offset(bytes, offset)),
            ..Unavailable::malformed(reason)
        }
    }

    /// A parser's refusal of `bytes` at `offset`: `too-large` for a file
    /// bigger than the parser takes on (`too-many-nodes`: no position, like a
    /// file over the read limit), else [`Unavailable::malformed_at`].
    pub fn refused_at(reason: Reason, bytes: &[u8], offset: usize) -> Unavailable {
        match reason {
            Reason::TooManyNodes => Unavailable::new(FileState::TooLarge, reason),
            _ => Unavailable::malformed_at(reason, bytes, offset),
        }
    }
}

/// One fixed configuration source of a profile.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// `--client all`: the profile that names this source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<&'static str>,
    /// Profile-specific scope (or origin/layer) id.
    pub scope: &'static str,
    /// vscode: the origin id (equal to `scope`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<&'static str>,
    pub path: String,
    /// Where servers live in the file, e.g. `mcpServers`.
    pub container: String,
    pub state: FileState,
    /// Always serialized (`null` when there is nothing to add).
    pub reason: Option<Reason>,
    pub server_count: usize,
    /// vscode/dsh: `json`, `jsonc`, `yaml`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<&'static str>,
    /// vscode: the parser the file is read with, `json` (strict) or `jsonc`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parser: Option<&'static str>,
    /// vscode: whether root fields other than the container exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uninterpreted_root_fields: Option<RootFields>,
    /// The client's own trust gate for this file (e.g. Codex reads a project's
    /// `.codex/config.toml` only for a trusted project): `true`, `false` or
    /// `"unknown"`. Reported only; it never changes what is read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trusted: Option<Tri>,
    /// Where parsing stopped in a `malformed` file (a position is not a
    /// secret): 1-based line and column (in characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
}

/// A place in a file: 1-based line and column (counted in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    /// The line and column of byte `offset` in `bytes` (clamped to the end;
    /// invalid UTF-8 before it counts one column per byte).
    pub fn of_offset(bytes: &[u8], offset: usize) -> Position {
        let before = &bytes[..offset.min(bytes.len())];
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let line = 1 + before.iter().filter(|b| **b == b'\n').count();
        let column = 1 + before[line_start..]
            .utf8_chunks()
            .map(|c| c.valid().chars().count() + c.invalid().len())
            .sum::<usize>();
        Position { line, column }
    }
}

impl Source {
    /// A source with no profile-specific fields.
    pub fn new(scope: &'static str, path: String, container: String) -> Source {
        Source {
            client: None,
            scope,
            origin: None,
            path,
            container,
            state: FileState::Missing,
            reason: None,
            server_count: 0,
            format: None,
            parser: None,
            uninterpreted_root_fields: None,
            trusted: None,
            position: None,
        }
    }

    pub fn set(&mut self, u: Unavailable) {
        self.state = u.state;
        self.reason = u.reason;
        self.position = u.position;
    }
}

/// A boolean that may be unknown: serialized as `true`, `false` or
/// `"unknown"` (`uninterpretedRootFields`, `trusted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tri {
    Known(bool),
    Unknown,
}

/// `uninterpretedRootFields`: `true`, `false` or `"unknown"`.
pub type RootFields = Tri;

impl Tri {
    /// `yes`, `no` or `unknown`, for the terminal report.
    pub fn as_word(self) -> &'static str {
        match self {
            Tri::Known(true) => "yes",
            Tri::Known(false) => "no",
            Tri::Unknown => "unknown",
        }
    }
}

impl Serialize for Tri {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RootFields::Known(b) => s.serialize_bool(*b),
            RootFields::Unknown => s.serialize_str("unknown"),
        }
    }
}

/// One observed server declaration. Counts only: no command, args, URL,
/// env or header names or values.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Server {
    /// `--client all`: the profile this row belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<&'static str>,
    pub name: String,
    pub scope: &'static str,
    /// vscode: the origin id (equal to `scope`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<&'static str>,
    /// vscode: the source's format id (`vscode-servers`, `portable-mcpServers`, `bare-map`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<&'static str>,
    pub path: String,
    /// A declaration was observed; nothing more.
    pub configured: bool,
    pub shape: Shape,
    pub launch: Launch,
    pub guard_form: GuardForm,
    /// The profile's own fields (shadowing, activity, ...), serialized inline
    /// after `guardForm`.
    #[serde(flatten)]
    pub ext: Extension,
}

/// A server row's profile-specific part: a profile defines a type for it
/// (serialized inline into the row) and the report lines it adds.
pub trait ServerExtension: erased_serde::Serialize + Debug + Send + Sync {
    /// Lines the terminal report prints below the row's summary line, each
    /// starting with six spaces and ending with a newline. Anything that came
    /// from a file must pass through `render_human::sanitize`.
    fn report(&self, server: &Server, out: &mut String) {
        let _ = (server, out);
    }

    /// Bytes of another row's name this row repeats (dsh: `shadowedBy.name`):
    /// the document's bound on name bytes (`bound.rs`) counts them, since one
    /// long name can be repeated by every row.
    fn repeated_name_bytes(&self) -> usize {
        0
    }

    /// For profiles that read their own extension back (tests, annotation).
    fn as_any(&self) -> &dyn Any;

    fn clone_box(&self) -> Box<dyn ServerExtension>;
}

erased_serde::serialize_trait_object!(ServerExtension);

/// The boxed [`ServerExtension`] of a row.
#[derive(Debug)]
pub struct Extension(pub Box<dyn ServerExtension>);

impl Extension {
    /// A row with no profile-specific fields.
    pub fn none() -> Extension {
        Extension(Box::new(NoExtension {}))
    }

    pub fn new(ext: impl ServerExtension + 'static) -> Extension {
        Extension(Box::new(ext))
    }

    /// The extension as `T`, when it is one.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref::<T>()
    }
}

impl Clone for Extension {
    fn clone(&self) -> Extension {
        Extension(self.0.clone_box())
    }
}

impl Serialize for Extension {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// No profile-specific fields (serializes to nothing when flattened).
#[derive(Debug, Clone, Serialize)]
pub struct NoExtension {}

impl ServerExtension for NoExtension {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn clone_box(&self) -> Box<dyn ServerExtension> {
        Box::new(self.clone())
    }
}

/// Declaration shape: which known fields exist and whether their types check
/// out. Not a full validation of any client's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shape {
    pub valid: bool,
    /// Kebab-case problem codes, in a fixed check order.
    pub problems: Vec<&'static str>,
    pub transport: Transport,
    /// Names of known fields present, sorted.
    pub fields: Vec<&'static str>,
    pub arg_count: usize,
    pub env_count: usize,
    pub header_count: usize,
}

impl Shape {
    /// A shape with `problems` (valid exactly when there are none), `transport` and the known
    /// `fields` present; the counts start at zero.
    pub fn new(
        problems: Vec<&'static str>,
        transport: Transport,
        fields: Vec<&'static str>,
    ) -> Shape {
        Shape {
            valid: problems.is_empty(),
            problems,
            transport,
            fields,
            arg_count: 0,
            env_count: 0,
            header_count: 0,
        }
    }

    /// The shape of an entry that is not an object: `problem` and nothing else.
    pub fn not_object(problem: &'static str) -> Shape {
        Shape::new(vec![problem], Transport::Unknown, Vec::new())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    Stdio,
    Http,
    Sse,
    Ws,
    Unknown,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
            Transport::Sse => "sse",
            Transport::Ws => "ws",
            Transport::Unknown => "unknown",
        }
    }
}

/// How the declaration would start a server (see CLASSIFICATION.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Launch {
    Executable,
    PackageRunner,
    Container,
    InterpreterScript,
    GuardWrapper,
    Remote,
    Unknown,
}

impl Launch {
    pub fn as_str(self) -> &'static str {
        match self {
            Launch::Executable => "executable",
            Launch::PackageRunner => "package-runner",
            Launch::Container => "container",
            Launch::InterpreterScript => "interpreter-script",
            Launch::GuardWrapper => "guard-wrapper",
            Launch::Remote => "remote",
            Launch::Unknown => "unknown",
        }
    }
}

/// Whether the declaration routes through a recognized guard wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GuardForm {
    Direct,
    Guarded,
    Unknown,
}

impl GuardForm {
    pub fn as_str(self) -> &'static str {
        match self {
            GuardForm::Direct => "direct",
            GuardForm::Guarded => "guarded",
            GuardForm::Unknown => "unknown",
        }
    }
}

/// One instruction-file candidate: metadata only, contents never read.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Instruction {
    /// `--client all`: the profile that names this candidate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<&'static str>,
    /// `project`, `ancestor`, `user` or `managed`.
    pub scope: &'static str,
    pub path: String,
    /// The candidate name relative to its directory, e.g. `.claude/CLAUDE.md`.
    pub name: &'static str,
    pub state: FileState,
    /// Same codes as [`Source::reason`]; `null` when present or missing.
    pub reason: Option<Reason>,
    /// Size from `fstat` when present, else `null`.
    pub bytes: Option<u64>,
    /// Always `unknown`: host settings, imports and versions decide.
    pub applicability: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    /// Documented coverage limits of the profile, in a fixed order.
    pub not_examined: Vec<&'static str>,
    /// What no static inventory can know, in a fixed order.
    pub unknown: Vec<&'static str>,
}

/// The `unknown` list every profile starts from.
pub const ALWAYS_UNKNOWN: [&str; 4] = [
    "host-version",
    "effective-selection",
    "loading",
    "enforcement",
];

impl Document {
    /// Recompute `inventoryComplete` from the sources.
    pub fn complete(sources: &[Source]) -> bool {
        sources.iter().all(|s| s.state.is_complete())
    }
}
