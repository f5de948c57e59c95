//! `--fail-on`: the conditions a CI job can gate on, evaluated on the finished
//! document. Without `--fail-on` the gate is `incomplete` alone (the exit
//! status mcpscope always had); with it, exactly the conditions named.
//!
//! | condition        | holds when                                                    | exit |
//! |------------------|---------------------------------------------------------------|------|
//! | `incomplete`     | a fixed source is neither present nor missing                 | 1    |
//! | `invalid-entry`  | a declaration's shape is invalid                              | 3    |
//! | `any-server`     | any server is declared in any source                          | 3    |
//! | `project-server` | a server is declared in the project (below)                   | 3    |
//! | `none`           | never (report only; an invalid root still exits 1)            | —    |
//!
//! `incomplete` outranks the others: a partial answer exits 1 even when a
//! `3` condition also holds. The three server conditions fail closed: one that
//! does not hold but depends on a source that could not be read (neither
//! present nor missing, which includes a source the document's row bound
//! withheld — for `project-server` a source of the project, for the other two
//! any source) is *undecided*, since that file may declare exactly
//! what it looks for (a client that accepts what mcpscope refuses, such as
//! duplicate keys, would load it), and an undecided condition exits 1 like
//! `incomplete`.
//!
//! The project is every file below the root, and the levels above it that the
//! client itself reads as this project's configuration (Codex's, OpenCode's and Crush's
//! ancestors up to the nearest `.git`: `Profile::ancestor_project_scopes`), so
//! a root that is a subdirectory of a repository does not hide the servers the
//! repository declares further up. This module only reads the document.

use crate::model::Document;

/// One `--fail-on` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    Incomplete,
    InvalidEntry,
    AnyServer,
    ProjectServer,
    None,
}

impl Condition {
    /// Every condition, in `--help` and report order.
    pub const ALL: [Condition; 5] = [
        Condition::Incomplete,
        Condition::InvalidEntry,
        Condition::AnyServer,
        Condition::ProjectServer,
        Condition::None,
    ];

    /// The `--fail-on` spelling.
    pub fn id(self) -> &'static str {
        match self {
            Condition::Incomplete => "incomplete",
            Condition::InvalidEntry => "invalid-entry",
            Condition::AnyServer => "any-server",
            Condition::ProjectServer => "project-server",
            Condition::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<Condition> {
        Condition::ALL.into_iter().find(|c| c.id() == s)
    }

    /// How many rows (or sources, for `incomplete`) make the condition hold
    /// in `doc`; 0 when it does not.
    pub fn count(self, doc: &Document) -> usize {
        match self {
            Condition::Incomplete => doc
                .sources
                .iter()
                .filter(|s| !s.state.is_complete())
                .count(),
            Condition::InvalidEntry => doc.servers.iter().filter(|s| !s.shape.valid).count(),
            Condition::AnyServer => doc.servers.len(),
            Condition::ProjectServer => doc
                .servers
                .iter()
                .filter(|s| of_the_project(doc, s.client, s.scope, &s.path))
                .count(),
            Condition::None => 0,
        }
    }
}

/// The conditions in force: `--fail-on`'s, or `incomplete` by default.
pub fn in_force(asked: Option<&[Condition]>) -> Vec<Condition> {
    match asked {
        None => vec![Condition::Incomplete],
        Some(list) => {
            let mut out: Vec<Condition> = Vec::new();
            for c in Condition::ALL {
                if list.contains(&c) && c != Condition::None {
                    out.push(c);
                }
            }
            out
        }
    }
}

/// The conditions in force that do not hold in `met` but cannot be ruled out,
/// each with the number of unread sources that leave it open.
pub fn undecided(
    conditions: &[Condition],
    met: &[(Condition, usize)],
    doc: &Document,
) -> Vec<(Condition, usize)> {
    let unread = doc.sources.iter().filter(|s| !s.state.is_complete());
    conditions
        .iter()
        .filter(|c| !met.iter().any(|(m, _)| m == *c))
        .filter_map(|&c| {
            let open = match c {
                Condition::Incomplete | Condition::None => 0,
                Condition::InvalidEntry | Condition::AnyServer => unread.clone().count(),
                Condition::ProjectServer => unread
                    .clone()
                    .filter(|s| of_the_project(doc, s.client, s.scope, &s.path))
                    .count(),
            };
            (open > 0).then_some((c, open))
        })
        .collect()
}

/// The conditions in force that hold, with their counts.
pub fn met(conditions: &[Condition], doc: &Document) -> Vec<(Condition, usize)> {
    conditions
        .iter()
        .map(|c| (*c, c.count(doc)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// Whether a file (a source, or the source of a row) belongs to the project: it lies below
/// the root, or its scope is one of the project levels above the root that its client reads
/// (`client`: the row's own in a `--client all` document, else the document's).
fn of_the_project(doc: &Document, client: Option<&str>, scope: &str, path: &str) -> bool {
    let root = std::path::Path::new(&doc.root.canonical);
    std::path::Path::new(path).starts_with(root)
        || crate::profile::by_id(client.unwrap_or(doc.client))
            .is_some_and(|p| p.ancestor_project_scopes().contains(&scope))
}
