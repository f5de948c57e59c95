//! The document's bound on server rows: one document lists at most
//! [`MAX_SERVER_ROWS`] rows carrying at most [`MAX_NAME_BYTES`] bytes of
//! names, whatever the files declare. Every file is bounded on its own (1 MiB,
//! `read.rs`; Continue reads at most 64 blocks), but seven bytes of a file
//! make a row of several hundred, and a YAML alias or a dsh `shadowedBy`
//! repeats a long name once per row, so the document needs its own bound.
//!
//! Owns the one rule, [`Admission`]: sources are taken in the document's
//! order, and a source whose rows would take the document past either bound
//! lists none of them. It becomes `too-large` / `too-many-servers` with
//! `serverCount: 0`, which makes the inventory incomplete (exit 1; the server
//! gates of `--fail-on` count it as a source they cannot rule out), and so
//! does every later source with rows, so what is listed does not depend on
//! which later file happens to be small. A source is listed whole or not at
//! all: nothing is ever cut silently.
//!
//! Owns too the guard that keeps memory bounded while profiles read,
//! [`may_build`]: the row builders every profile shares ask it before building
//! one source's rows, so rows the rule would withhold anyway are never built
//! (a Continue block directory can declare millions). It never refuses a
//! source the rule would list (see [`may_build`]), so the rule alone decides
//! what the document says; only the same-name relations of listed rows
//! (`sameNameIn`, `possibleShadowedBy`, `shadowedBy`) may miss the rows of a
//! source withheld while reading.
//!
//! This module must never drop a row without marking its source, and never
//! read a file.

use std::cell::Cell;
use std::collections::HashMap;

use crate::model::{FileState, Reason, Source, Unavailable};
use crate::profile::Inventory;

/// Server rows one document lists, at most. Far above any real configuration
/// (`inventory/bench/run.sh` lists 15,000 from one 1 MiB file).
pub const MAX_SERVER_ROWS: usize = 50_000;

/// Bytes of names one document's rows carry, at most: each row's `name`, and
/// the name a dsh row repeats in `shadowedBy.name`. 50,000 rows with names of
/// 160 bytes fit.
pub const MAX_NAME_BYTES: usize = 8 << 20;

/// How far past the bounds the readers of one document may build rows (see
/// [`may_build`]).
const BUILD_FACTOR: usize = 3;

/// Mark `source` as withheld by the bound: `too-large` / `too-many-servers`,
/// no rows.
pub fn withhold(source: &mut Source) {
    source.set(Unavailable::new(
        FileState::TooLarge,
        Reason::TooManyServers,
    ));
    source.server_count = 0;
}

/// Whether a source was withheld by the bound.
pub fn is_withheld(source: &Source) -> bool {
    source.state == FileState::TooLarge && source.reason == Some(Reason::TooManyServers)
}

/// Rows (and their name bytes) built so far while reading one document.
#[derive(Debug, Clone, Copy, Default)]
struct Built {
    rows: usize,
    name_bytes: usize,
}

thread_local! {
    /// `Some` while [`guarded`] reads a document on this thread.
    static BUILT: Cell<Option<Built>> = const { Cell::new(None) };
}

/// Run `read` (the profiles reading one document) with the build guard of
/// [`may_build`] counting from zero; the previous count is restored after,
/// also on unwind.
pub fn guarded<T>(read: impl FnOnce() -> T) -> T {
    struct Restore(Option<Built>);
    impl Drop for Restore {
        fn drop(&mut self) {
            BUILT.with(|b| b.set(self.0));
        }
    }
    let _restore = Restore(BUILT.with(|b| b.replace(Some(Built::default()))));
    read()
}

/// Whether a row builder may build one source's `rows` rows carrying
/// `name_bytes` bytes of names; `false`: build none and [`withhold`] the
/// source.
///
/// Refused: a source over a bound on its own, and, inside [`guarded`], a
/// source that would take the rows built for this document past
/// `BUILD_FACTOR` times the bounds. The rule never lists either: a source
/// it lists has every source before it in the document listed, so at most
/// one bound's worth of rows was built for those, and builders read in the
/// document's order except for at most two files per profile that are read
/// early and listed later (Codex's user and system files, for trust; Claude
/// Code's `~/.claude.json` for the user scope), each within the bounds on its
/// own. Three bounds' worth of rows is a few hundred MB at most.
pub fn may_build(rows: usize, name_bytes: usize) -> bool {
    if rows > MAX_SERVER_ROWS || name_bytes > MAX_NAME_BYTES {
        return false;
    }
    BUILT.with(|b| match b.get() {
        None => true,
        Some(built) => {
            let next = Built {
                rows: built.rows.saturating_add(rows),
                name_bytes: built.name_bytes.saturating_add(name_bytes),
            };
            let fits = next.rows <= BUILD_FACTOR * MAX_SERVER_ROWS
                && next.name_bytes <= BUILD_FACTOR * MAX_NAME_BYTES;
            if fits {
                b.set(Some(next));
            }
            fits
        }
    })
}

/// The rule, applied to one profile's inventory after another in document
/// order (`--client all`: registry order, each before its summary is taken).
#[derive(Debug, Clone)]
pub struct Admission {
    max_rows: usize,
    max_name_bytes: usize,
    rows: usize,
    name_bytes: usize,
    /// A source was withheld: every later source with rows is too.
    closed: bool,
}

impl Default for Admission {
    fn default() -> Admission {
        Admission::new()
    }
}

impl Admission {
    /// The documented bounds.
    pub fn new() -> Admission {
        Admission::with_bounds(MAX_SERVER_ROWS, MAX_NAME_BYTES)
    }

    /// Other bounds (unit tests).
    pub fn with_bounds(max_rows: usize, max_name_bytes: usize) -> Admission {
        Admission {
            max_rows,
            max_name_bytes,
            rows: 0,
            name_bytes: 0,
            closed: false,
        }
    }

    /// List the sources of `inv` that still fit, in order; withhold the rest
    /// and drop their rows.
    ///
    /// A row belongs to the source with its scope and path (every builder
    /// gives a row its source's; `tests/clients.rs` pins that each source's
    /// `serverCount` equals those rows). A source already withheld while
    /// reading closes the document like one withheld here.
    pub fn admit(&mut self, inv: &mut Inventory) {
        let n = inv.sources.len();
        let owner: Vec<Option<usize>> = {
            let mut by_key: HashMap<(&str, &str), usize> = HashMap::with_capacity(n);
            for (i, s) in inv.sources.iter().enumerate() {
                by_key.entry((s.scope, s.path.as_str())).or_insert(i);
            }
            inv.servers
                .iter()
                .map(|r| by_key.get(&(r.scope, r.path.as_str())).copied())
                .collect()
        };
        let mut rows = vec![0usize; n];
        let mut name_bytes = vec![0usize; n];
        for (r, o) in inv.servers.iter().zip(&owner) {
            if let Some(i) = *o {
                rows[i] += 1;
                name_bytes[i] += r.name.len() + r.ext.0.repeated_name_bytes();
            }
        }
        let mut listed = vec![true; n];
        for (i, s) in inv.sources.iter_mut().enumerate() {
            if is_withheld(s) {
                self.closed = true;
                listed[i] = false;
                continue;
            }
            if rows[i] == 0 {
                continue;
            }
            let fits = !self.closed
                && self.rows + rows[i] <= self.max_rows
                && self.name_bytes + name_bytes[i] <= self.max_name_bytes;
            if fits {
                self.rows += rows[i];
                self.name_bytes += name_bytes[i];
            } else {
                self.closed = true;
                listed[i] = false;
                withhold(s);
            }
        }
        if listed.iter().all(|l| *l) {
            return;
        }
        let mut row = 0;
        inv.servers.retain(|_| {
            let keep = owner[row].is_none_or(|i| listed[i]);
            row += 1;
            keep
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Extension, GuardForm, Launch, Server, Shape, Transport};

    fn source(path: &str, count: usize) -> Source {
        let mut s = Source::new("s", path.to_owned(), String::new());
        s.state = FileState::Present;
        s.server_count = count;
        s
    }

    fn row(path: &str, name: &str) -> Server {
        Server {
            client: None,
            name: name.to_owned(),
            scope: "s",
            origin: None,
            format: None,
            path: path.to_owned(),
            configured: true,
            shape: Shape::new(Vec::new(), Transport::Stdio, Vec::new()),
            launch: Launch::Executable,
            guard_form: GuardForm::Direct,
            ext: Extension::none(),
        }
    }

    /// Sources `a`, `b`, ... with `counts[i]` rows named `x0`, `x1`, ...
    fn inventory(counts: &[usize]) -> Inventory {
        let paths: Vec<String> = (0..counts.len())
            .map(|i| char::from(b'a' + i as u8).to_string())
            .collect();
        Inventory {
            sources: counts
                .iter()
                .zip(&paths)
                .map(|(n, p)| source(p, *n))
                .collect(),
            servers: counts
                .iter()
                .zip(&paths)
                .flat_map(|(n, p)| (0..*n).map(move |i| row(p, &format!("x{i}"))))
                .collect(),
            instructions: Vec::new(),
            coverage: crate::profile::coverage(&[]),
        }
    }

    fn listed(inv: &Inventory) -> Vec<(String, Option<Reason>, usize)> {
        inv.sources
            .iter()
            .map(|s| (s.path.clone(), s.reason, s.server_count))
            .collect()
    }

    const W: Option<Reason> = Some(Reason::TooManyServers);

    #[test]
    fn sources_are_listed_whole_until_one_would_cross_the_bound() {
        let mut inv = inventory(&[3, 0, 4, 2, 0, 1]);
        Admission::with_bounds(8, 1000).admit(&mut inv);
        assert_eq!(
            listed(&inv),
            [
                ("a".into(), None, 3),
                ("b".into(), None, 0),
                ("c".into(), None, 4),
                // 9 > 8: withheld, and so is every later source with rows,
                // even one that would fit.
                ("d".into(), W, 0),
                ("e".into(), None, 0),
                ("f".into(), W, 0),
            ]
        );
        assert_eq!(inv.servers.len(), 7);
        assert!(inv.servers.iter().all(|s| s.path == "a" || s.path == "c"));
        assert_eq!(inv.sources[3].state, FileState::TooLarge);
        assert!(!crate::model::Document::complete(&inv.sources));
    }

    #[test]
    fn exactly_at_the_bound_lists_everything() {
        let mut inv = inventory(&[3, 5]);
        Admission::with_bounds(8, 1000).admit(&mut inv);
        assert_eq!(inv.servers.len(), 8);
        assert!(crate::model::Document::complete(&inv.sources));
    }

    #[test]
    fn the_bound_carries_across_inventories() {
        let mut a = Admission::with_bounds(5, 1000);
        let mut first = inventory(&[4]);
        let mut second = inventory(&[2, 1]);
        a.admit(&mut first);
        a.admit(&mut second);
        assert_eq!(listed(&first), [("a".into(), None, 4)]);
        assert_eq!(listed(&second), [("a".into(), W, 0), ("b".into(), W, 0)]);
        assert!(second.servers.is_empty());
    }

    #[test]
    fn name_bytes_are_bounded_too() {
        // Names x0..x2 are two bytes each.
        let mut inv = inventory(&[3, 3]);
        Admission::with_bounds(100, 11).admit(&mut inv);
        assert_eq!(listed(&inv), [("a".into(), None, 3), ("b".into(), W, 0)]);
    }

    #[test]
    fn a_source_withheld_while_reading_closes_the_document() {
        let mut inv = inventory(&[1, 0, 1]);
        withhold(&mut inv.sources[1]);
        Admission::with_bounds(100, 1000).admit(&mut inv);
        assert_eq!(
            listed(&inv),
            [
                ("a".into(), None, 1),
                ("b".into(), W, 0),
                ("c".into(), W, 0)
            ]
        );
    }

    #[test]
    fn the_build_guard_refuses_past_three_bounds_and_resets_per_document() {
        assert!(!may_build(MAX_SERVER_ROWS + 1, 0));
        assert!(!may_build(1, MAX_NAME_BYTES + 1));
        guarded(|| {
            for _ in 0..BUILD_FACTOR {
                assert!(may_build(MAX_SERVER_ROWS, 0));
            }
            assert!(!may_build(1, 0));
            // A refused source is not counted: a smaller one still fits.
            assert!(may_build(0, 0));
            guarded(|| assert!(may_build(MAX_SERVER_ROWS, 0)));
            assert!(!may_build(1, 0), "the outer count is restored");
        });
        assert!(
            may_build(MAX_SERVER_ROWS, MAX_NAME_BYTES),
            "no guard outside"
        );
    }
}
