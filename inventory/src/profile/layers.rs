//! The reading most clients share: a fixed list of configuration files, each
//! one scope, each parsed with the client's own parser ([`Syntax`]), its
//! servers in one container ([`Container`]: a map keyed by name, or a list of
//! named entries), every entry checked by the client's entry grammar
//! ([`EntryCheck`]), and one same-name rule over all of them
//! ([`Precedence`]). A client whose files fit this is a table of [`Layer`]s and
//! an entry grammar in its own module; Codex adds its trust walk on top of the
//! same pieces.
//!
//! Every read goes through `read.rs` (bounded, no-follow); every parse error is
//! a code plus the line and column where the parser stopped. Rows carry
//! [`LayeredRow`]: `possibleShadowedBy` or `sameNameIn`, and `enabled` for
//! clients with an on/off switch per server. This module must never execute,
//! expand a placeholder, or put a command, argument, URL, env or header name
//! or value into a row.

use std::any::Any;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::classify;
use crate::json::{self, Value};
use crate::model::{
    Extension, FileState, GuardForm, Launch, Reason, Server, ServerExtension, Shape, Source, Tri,
    Unavailable,
};
use crate::profile::{path_string, Inventory};
use crate::render_human::list_line;

/// How a client parses one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// The crate's JSON parser with these relaxations.
    Json(json::Options),
    /// The `toml` crate (Codex).
    Toml,
    /// The bounded YAML reader (Continue, goose).
    Yaml,
}

impl Syntax {
    pub const JSON: Syntax = Syntax::Json(json::Options::STRICT);
    pub const JSONC: Syntax = Syntax::Json(json::Options::JSONC);
    pub const JSON_COMMENTS: Syntax = Syntax::Json(json::Options::COMMENTS);
    pub const JSONC_NO_BOM: Syntax = Syntax::Json(json::Options::JSONC_NO_BOM);

    /// The `parser` id reported on the source.
    pub fn id(self) -> &'static str {
        match self {
            Syntax::Json(o) if o == json::Options::STRICT => "json",
            Syntax::Json(o) if o == json::Options::COMMENTS => "json-with-comments",
            Syntax::Json(_) => "jsonc",
            Syntax::Toml => "toml",
            Syntax::Yaml => "yaml",
        }
    }

    /// Parse `bytes` into a tree, or the file's malformed state with the
    /// position where parsing stopped (`too-large`, without one, for a YAML
    /// file past the reader's node bound).
    pub fn parse<'a>(self, bytes: &'a [u8]) -> Result<Value<'a>, Unavailable> {
        let located = match self {
            Syntax::Json(o) => json::parse_located(bytes, &o).map_err(|(e, at)| (e.reason(), at)),
            Syntax::Toml => crate::toml_config::parse_located(bytes),
            Syntax::Yaml => match std::str::from_utf8(bytes) {
                Ok(text) => crate::profile::dsh::yaml::parse_located(text),
                Err(e) => Err((Reason::InvalidUtf8, e.valid_up_to())),
            },
        };
        located.map_err(|(reason, at)| Unavailable::refused_at(reason, bytes, at))
    }
}

/// Where the servers of one file are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// An object keyed by server name under this path of keys.
    Map(&'static [&'static str]),
    /// An array under this key whose entries name themselves in `name`.
    NamedList {
        key: &'static str,
        name: &'static str,
    },
}

impl Container {
    /// The `container` spelling on the source.
    pub fn describe(self) -> String {
        match self {
            Container::Map(path) => path.join("."),
            Container::NamedList { key, name } => format!("{key}[].{name}"),
        }
    }
}

/// One fixed file of a client.
#[derive(Debug, Clone)]
pub struct Layer {
    pub scope: &'static str,
    /// Trusted base directory (may resolve through symlinks); `None` when
    /// HOME (or the client's home) is unknown.
    pub base: Option<PathBuf>,
    /// Components below the base, each opened no-follow.
    pub rel: Vec<String>,
    /// Shown instead of the path when the base is unknown, e.g. `~/.cursor/mcp.json`.
    pub unknown_path: String,
    pub syntax: Syntax,
    pub container: Container,
    /// Precedence: 0 wins over 1, and so on (equal ranks do not shadow).
    pub rank: usize,
    /// The client's own trust gate for this file, when it has one.
    pub trusted: Option<Tri>,
    /// A file deliberately not read, listed in this state instead: the first
    /// project level past `profile::MAX_PROJECT_LEVELS`, standing for every
    /// level not read.
    pub not_read: Option<Unavailable>,
    /// A zero-length file is `present` and declares nothing (Crush skips one
    /// before parsing) instead of `malformed`.
    pub zero_length_ok: bool,
}

impl Layer {
    /// A layer below `base` (`rel` is `/`-separated); `unknown` is the shown
    /// path when the base is unknown.
    pub fn new(
        scope: &'static str,
        base: Option<&Path>,
        rel: &str,
        unknown: &str,
        syntax: Syntax,
        container: Container,
        rank: usize,
    ) -> Layer {
        Layer {
            scope,
            base: base.map(Path::to_path_buf),
            rel: rel.split('/').map(str::to_owned).collect(),
            unknown_path: unknown.to_owned(),
            syntax,
            container,
            rank,
            trusted: None,
            not_read: None,
            zero_length_ok: false,
        }
    }

    /// A layer below the home directory (`~/rel` when HOME is unknown).
    pub fn home(
        ctx: &crate::profile::Context,
        scope: &'static str,
        rel: &str,
        syntax: Syntax,
        container: Container,
        rank: usize,
    ) -> Layer {
        let unknown = format!("~/{rel}");
        Layer::new(
            scope,
            ctx.host.home.as_deref(),
            rel,
            &unknown,
            syntax,
            container,
            rank,
        )
    }

    /// A layer below the selected root.
    pub fn root(
        ctx: &crate::profile::Context,
        scope: &'static str,
        rel: &str,
        syntax: Syntax,
        container: Container,
        rank: usize,
    ) -> Layer {
        Layer::new(
            scope,
            Some(&ctx.root.canonical),
            rel,
            "",
            syntax,
            container,
            rank,
        )
    }

    /// A layer at a fixed absolute system path (`/etc/codex/config.toml`),
    /// looked up below the host's system root.
    pub fn system(
        ctx: &crate::profile::Context,
        scope: &'static str,
        absolute: &str,
        syntax: Syntax,
        container: Container,
        rank: usize,
    ) -> Layer {
        let full = ctx.host.system_path(absolute);
        let dir = full.parent().map(Path::to_path_buf);
        let file = full
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        Layer::new(
            scope,
            dir.as_deref(),
            &file,
            absolute,
            syntax,
            container,
            rank,
        )
    }

    /// The path as shown (lossy for non-UTF-8).
    pub fn path(&self) -> String {
        match &self.base {
            Some(b) => path_string(&self.rel.iter().fold(b.clone(), |p, c| p.join(c))),
            None => self.unknown_path.clone(),
        }
    }

    /// The source before reading: missing, with its parser and container.
    pub fn source(&self) -> Source {
        let mut s = Source::new(self.scope, self.path(), self.container.describe());
        s.parser = Some(self.syntax.id());
        s.trusted = self.trusted;
        s
    }
}

/// A file a client reads at every project level (OpenCode's `opencode.json`,
/// Crush's `crush.json`).
#[derive(Debug, Clone, Copy)]
pub struct LevelFile {
    /// The scope at the root, and at the levels above it.
    pub scopes: (&'static str, &'static str),
    pub name: &'static str,
    /// Its rank at level `i` (0: the root) of `n` listed levels.
    pub rank: fn(i: usize, n: usize) -> usize,
}

/// The layers of `files` at every listed level (`ProjectLevels::listed`),
/// nearest level first and each level's files in the order given; the files
/// of a level past the bound are listed unread.
pub fn level_layers(
    levels: &[(&Path, bool)],
    files: &[LevelFile],
    syntax: Syntax,
    container: Container,
) -> Vec<Layer> {
    let n = levels.len();
    let mut out = Vec::with_capacity(n * files.len());
    for (i, (dir, not_read)) in levels.iter().enumerate() {
        for f in files {
            let scope = if i == 0 { f.scopes.0 } else { f.scopes.1 };
            let mut l = Layer::new(
                scope,
                Some(dir),
                f.name,
                "",
                syntax,
                container,
                (f.rank)(i, n),
            );
            if *not_read {
                l.not_read = Some(crate::profile::ProjectLevels::NOT_READ);
            }
            out.push(l);
        }
    }
    out
}

/// What an entry grammar says about one declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub shape: Shape,
    pub launch: Launch,
    pub guard_form: GuardForm,
    /// The client's per-server switch (`enabled`, or `disabled` negated):
    /// `None` when the client has none.
    pub enabled: Option<bool>,
}

impl Checked {
    /// Classify a stdio `command` with its leading `args` (see
    /// CLASSIFICATION.md); remote and unknown transports classify as in
    /// [`classify::classify`].
    pub fn new(
        shape: Shape,
        command: Option<&str>,
        args: &[&str],
        enabled: Option<bool>,
    ) -> Checked {
        let (launch, guard_form) = classify::classify_parts(command, args, &shape);
        Checked {
            shape,
            launch,
            guard_form,
            enabled,
        }
    }
}

/// A client's entry grammar: shape, launch and switch of one declaration.
pub type EntryCheck = fn(&Value) -> Checked;

/// How same-named rows of different files relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precedence {
    /// One winner by rank: `possibleShadowedBy`.
    Rank,
    /// Duplication only: `sameNameIn`.
    Duplicates,
}

/// Row fields of the layered profiles, serialized after `guardForm`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LayeredRow {
    /// Scopes of higher rank with a declaration of this name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub possible_shadowed_by: Option<Vec<&'static str>>,
    /// Other scopes with a declaration of this name (duplication only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_name_in: Option<Vec<&'static str>>,
    /// The declaration's own switch (`false`: the client does not start it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

impl ServerExtension for LayeredRow {
    fn report(&self, _server: &Server, out: &mut String) {
        if self.enabled == Some(false) {
            out.push_str("      switched off in its file (the client does not start it)\n");
        }
        if let Some(by) = &self.possible_shadowed_by {
            list_line(out, "possibly shadowed by", by);
        }
        if let Some(by) = &self.same_name_in {
            list_line(out, "same name in", by);
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn clone_box(&self) -> Box<dyn ServerExtension> {
        Box::new(self.clone())
    }
}

/// Read every layer, take its rows, and relate same-named rows.
pub fn inventory(layers: &[Layer], check: EntryCheck, precedence: Precedence) -> Inventory {
    let mut sources = Vec::with_capacity(layers.len());
    let mut rows: Vec<(usize, Server, Option<bool>)> = Vec::new();
    for (i, layer) in layers.iter().enumerate() {
        let (source, found) = read(layer, check);
        sources.push(source);
        rows.extend(found.into_iter().map(|(s, on)| (i, s, on)));
    }
    let servers = relate(layers, rows, precedence);
    Inventory {
        sources,
        servers,
        instructions: Vec::new(),
        coverage: crate::profile::coverage(&[]),
    }
}

/// Read and parse one layer into its source and rows (sorted by name).
pub fn read(layer: &Layer, check: EntryCheck) -> (Source, Vec<(Server, Option<bool>)>) {
    read_with(layer, check, &mut |_| {})
}

/// [`read`], handing the parsed document to `inspect` first (a client's
/// settings that decide a trust gate live in the same files).
pub fn read_with(
    layer: &Layer,
    check: EntryCheck,
    inspect: &mut dyn FnMut(&Value),
) -> (Source, Vec<(Server, Option<bool>)>) {
    let mut source = layer.source();
    if let Some(u) = layer.not_read {
        source.set(u);
        return (source, Vec::new());
    }
    let Some(base) = &layer.base else {
        source.set(Unavailable::new(FileState::Unreadable, Reason::HomeNotSet));
        return (source, Vec::new());
    };
    let rel: Vec<&str> = layer.rel.iter().map(String::as_str).collect();
    let bytes = match crate::read::read_file(base, &rel) {
        Ok(b) => b,
        Err(u) => {
            source.set(u);
            return (source, Vec::new());
        }
    };
    if bytes.is_empty() && layer.zero_length_ok {
        source.set(Unavailable {
            state: FileState::Present,
            reason: None,
            position: None,
        });
        return (source, Vec::new());
    }
    let top = match layer.syntax.parse(&bytes) {
        Ok(v) => v,
        Err(u) => {
            source.set(u);
            return (source, Vec::new());
        }
    };
    inspect(&top);
    let rows = rows_of(&mut source, &top, layer.container, check);
    (source, rows)
}

/// The rows of a parsed file: fills `source` (present, count, the
/// container's malformed state, or withheld past the document's bound:
/// `bound::may_build`).
pub fn rows_of(
    source: &mut Source,
    top: &Value,
    container: Container,
    check: EntryCheck,
) -> Vec<(Server, Option<bool>)> {
    source.set(Unavailable {
        state: FileState::Present,
        reason: None,
        position: None,
    });
    let Some(top) = top.as_object() else {
        source.set(Unavailable::malformed(Reason::WrongContainerType));
        return Vec::new();
    };
    let entries: Vec<(&str, &Value)> = match container {
        Container::Map(path) => {
            let mut at = Some(top);
            let mut last = None;
            for (n, key) in path.iter().enumerate() {
                let Some(obj) = at else { break };
                match obj.get(key) {
                    None => {
                        at = None;
                        last = None;
                    }
                    Some(Value::Object(o)) => {
                        at = Some(o);
                        last = (n + 1 == path.len()).then_some(o);
                    }
                    // YAML and TOML have no `null` for an empty table; a
                    // `null` container (YAML `mcpServers:`) is empty.
                    Some(Value::Null) if n + 1 == path.len() => {
                        at = None;
                        last = None;
                    }
                    Some(_) => {
                        source.set(Unavailable::malformed(Reason::WrongContainerType));
                        return Vec::new();
                    }
                }
            }
            match last {
                Some(o) => o.iter().collect(),
                None => Vec::new(),
            }
        }
        Container::NamedList { key, name } => match top.get(key) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|e| {
                    let n = e
                        .as_object()
                        .and_then(|o| o.get(name))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    (n, e)
                })
                .collect(),
            Some(_) => {
                source.set(Unavailable::malformed(Reason::WrongContainerType));
                return Vec::new();
            }
        },
    };
    // Rows the document's bound would withhold are never built.
    let name_bytes = entries.iter().map(|(name, _)| name.len()).sum();
    if !crate::bound::may_build(entries.len(), name_bytes) {
        crate::bound::withhold(source);
        return Vec::new();
    }
    let mut sorted = entries;
    // Stable: entries of one list with the same name keep document order.
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let named_list = matches!(container, Container::NamedList { .. });
    let rows: Vec<(Server, Option<bool>)> = sorted
        .into_iter()
        .map(|(name, entry)| {
            let mut c = check(entry);
            if named_list && name.is_empty() && entry.as_object().is_some() {
                c.shape.problems.insert(0, "missing-name");
                c.shape.valid = false;
                c.guard_form = GuardForm::Unknown;
            }
            let server = Server {
                client: None,
                name: name.to_owned(),
                scope: source.scope,
                origin: None,
                format: None,
                path: source.path.clone(),
                configured: true,
                shape: c.shape,
                launch: c.launch,
                guard_form: c.guard_form,
                ext: Extension::none(),
            };
            (server, c.enabled)
        })
        .collect();
    source.server_count = rows.len();
    rows
}

/// Give every row its [`LayeredRow`] and return them in layer order.
pub fn relate(
    layers: &[Layer],
    rows: Vec<(usize, Server, Option<bool>)>,
    precedence: Precedence,
) -> Vec<Server> {
    // name -> the layers declaring it, in layer order (deduplicated).
    let mut holders: HashMap<&str, Vec<usize>> = HashMap::new();
    for (layer, s, _) in &rows {
        let v = holders.entry(s.name.as_str()).or_default();
        if v.last() != Some(layer) {
            v.push(*layer);
        }
    }
    let relations: Vec<Vec<&'static str>> = rows
        .iter()
        .map(|(layer, s, _)| {
            let mine = layers[*layer].rank;
            let mut scopes: Vec<&'static str> = Vec::new();
            let mut others: Vec<usize> = holders[s.name.as_str()]
                .iter()
                .copied()
                .filter(|l| *l != *layer)
                .filter(|l| precedence == Precedence::Duplicates || layers[*l].rank < mine)
                .collect();
            if precedence == Precedence::Rank {
                others.sort_by_key(|l| (layers[*l].rank, *l));
            }
            for l in others {
                if !scopes.contains(&layers[l].scope) {
                    scopes.push(layers[l].scope);
                }
            }
            scopes
        })
        .collect();
    rows.into_iter()
        .zip(relations)
        .map(|((_, mut s, enabled), related)| {
            let row = match precedence {
                Precedence::Rank => LayeredRow {
                    possible_shadowed_by: Some(related),
                    enabled,
                    ..LayeredRow::default()
                },
                Precedence::Duplicates => LayeredRow {
                    same_name_in: Some(related),
                    enabled,
                    ..LayeredRow::default()
                },
            };
            s.ext = Extension::new(row);
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Transport;

    fn check(_: &Value) -> Checked {
        Checked::new(
            Shape::new(Vec::new(), Transport::Stdio, Vec::new()),
            Some("x"),
            &[],
            None,
        )
    }

    fn layer(scope: &'static str, rank: usize) -> Layer {
        Layer::new(
            scope,
            None,
            "f",
            "~/f",
            Syntax::JSON,
            Container::Map(&["s"]),
            rank,
        )
    }

    fn row(layer: usize, name: &str) -> (usize, Server, Option<bool>) {
        let mut source = Source::new("x", String::new(), String::new());
        let text = format!(r#"{{"s":{{"{name}":{{}}}}}}"#);
        let top = json::parse(text.as_bytes(), &json::Options::STRICT).unwrap();
        let (s, on) = rows_of(&mut source, &top, Container::Map(&["s"]), check)
            .pop()
            .unwrap();
        (layer, s, on)
    }

    type Related = (Option<Vec<&'static str>>, Option<Vec<&'static str>>);

    fn related(servers: &[Server]) -> Vec<Related> {
        servers
            .iter()
            .map(|s| {
                let r = s.ext.get::<LayeredRow>().unwrap();
                (r.possible_shadowed_by.clone(), r.same_name_in.clone())
            })
            .collect()
    }

    #[test]
    fn rank_names_only_higher_layers_in_rank_order() {
        // Report order user, project, system; precedence system > project > user.
        let layers = [layer("user", 2), layer("project", 1), layer("system", 0)];
        let rows = vec![row(0, "a"), row(0, "b"), row(1, "a"), row(2, "a")];
        let got = related(&relate(&layers, rows, Precedence::Rank));
        assert_eq!(
            got,
            vec![
                (Some(vec!["system", "project"]), None),
                (Some(vec![]), None),
                (Some(vec!["system"]), None),
                (Some(vec![]), None),
            ]
        );
    }

    #[test]
    fn duplicates_name_every_other_layer() {
        let layers = [layer("p", 0), layer("u", 1)];
        let rows = vec![row(0, "a"), row(1, "a"), row(1, "b")];
        let got = related(&relate(&layers, rows, Precedence::Duplicates));
        assert_eq!(
            got,
            vec![
                (None, Some(vec!["u"])),
                (None, Some(vec!["p"])),
                (None, Some(vec![]))
            ]
        );
    }

    #[test]
    fn containers_and_their_wrong_types() {
        let run = |text: &str, c: Container| {
            let mut source = Source::new("x", String::new(), String::new());
            let top = json::parse(text.as_bytes(), &json::Options::STRICT).unwrap();
            let rows = rows_of(&mut source, &top, c, check);
            (
                source.state,
                source.reason,
                rows.iter().map(|(s, _)| s.name.clone()).collect::<Vec<_>>(),
            )
        };
        let map = Container::Map(&["a", "b"]);
        assert_eq!(
            run(r#"{"a":{"b":{"y":1,"x":2}}}"#, map),
            (FileState::Present, None, vec!["x".into(), "y".into()])
        );
        assert_eq!(run(r#"{"a":{}}"#, map), (FileState::Present, None, vec![]));
        assert_eq!(run(r#"{"a":[]}"#, map).1, Some(Reason::WrongContainerType));
        assert_eq!(
            run(r#"{"a":{"b":"s"}}"#, map).1,
            Some(Reason::WrongContainerType)
        );
        assert_eq!(run(r#"{"a":{"b":null}}"#, map).2, Vec::<String>::new());
        assert_eq!(
            run("[]", map).1,
            Some(Reason::WrongContainerType),
            "a root that is not an object"
        );
        let list = Container::NamedList {
            key: "m",
            name: "name",
        };
        let (state, _, names) = run(r#"{"m":[{"name":"b"},{"name":"a"},{},3]}"#, list);
        assert_eq!(state, FileState::Present);
        assert_eq!(names, ["", "", "a", "b"]);
        assert_eq!(run(r#"{"m":{}}"#, list).1, Some(Reason::WrongContainerType));
    }

    #[test]
    fn an_unnamed_list_entry_is_an_invalid_row() {
        let mut source = Source::new("x", String::new(), String::new());
        let top = json::parse(br#"{"m":[{"command":"x"}]}"#, &json::Options::STRICT).unwrap();
        let list = Container::NamedList {
            key: "m",
            name: "name",
        };
        let (s, _) = rows_of(&mut source, &top, list, check).pop().unwrap();
        assert_eq!(s.shape.problems, ["missing-name"]);
        assert!(!s.shape.valid);
    }

    #[test]
    fn a_zero_length_file_is_present_only_where_the_client_skips_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "").unwrap();
        let mut l = layer("x", 0);
        l.base = Some(dir.path().to_path_buf());
        let state = |l: &Layer| {
            let (s, rows) = read(l, check);
            (s.state, s.reason, rows.len())
        };
        assert_eq!(
            state(&l),
            (FileState::Malformed, Some(Reason::Syntax), 0),
            "strict JSON refuses an empty text"
        );
        l.zero_length_ok = true;
        assert_eq!(state(&l), (FileState::Present, None, 0));
        std::fs::write(dir.path().join("f"), " ").unwrap();
        assert_eq!(state(&l).0, FileState::Malformed, "whitespace is not empty");
    }

    #[test]
    fn parse_errors_carry_the_position() {
        let u = Syntax::JSON.parse(b"{\n  \"a\": 1,\n}").unwrap_err();
        assert_eq!(u.reason, Some(Reason::TrailingComma));
        let p = u.position.unwrap();
        assert_eq!((p.line, p.column), (3, 1));
        let u = Syntax::Toml.parse(b"[a]\n[a]\n").unwrap_err();
        assert_eq!(u.reason, Some(Reason::DuplicateKey));
        assert_eq!(u.position.unwrap().line, 2);
        let u = Syntax::Yaml.parse(b"a: 1\nb: [\n").unwrap_err();
        assert_eq!(u.reason, Some(Reason::Syntax));
        assert!(u.position.unwrap().line >= 2);
        assert_eq!(
            Syntax::JSON_COMMENTS
                .parse(b"{\"a\":1,}")
                .unwrap_err()
                .reason,
            Some(Reason::TrailingComma)
        );
        assert!(Syntax::JSON_COMMENTS.parse(b"// c\n{\"a\":1}").is_ok());
    }
}
