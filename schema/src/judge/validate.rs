//! Matrix validation: the bounds a matrix must be within before any other work on it, and every
//! reason (matrix-wide, per case, per fixture entry, per JSON fact) it may not be run.

use super::content::file_size;
use super::environment::RESERVED_ENV_PREFIX;
use super::fixture::{entry_path, parent_of, parse_mode};
use crate::layout;
use crate::matrix::{Case, FileContent, FixtureEntry, Matrix};
use std::collections::BTreeSet;

/// Bounds on a matrix, checked (by [`matrix_bound_failures`]) before any other work on it, so
/// a hostile matrix costs its parse and nothing more. Each is far above the shipped matrices'
/// (342 cases, 63 fixture entries, 26 MiB of fills in all, 466 canaries in one client matrix).
pub mod bounds {
    /// Cases in one matrix (the bundle reader's entry bound allows both platforms' evidence).
    pub const MAX_CASES: usize = 4_096;
    /// Fixture entries in one case (the runner lays each out, the walk records each).
    pub const MAX_FIXTURE_ENTRIES: usize = 4_096;
    /// Canaries in one matrix (every capture is searched for each).
    pub const MAX_CANARIES: usize = 4_096;
    /// Arguments, environment entries and expectations (JSON facts, needles) of one case.
    pub const MAX_CASE_ITEMS: usize = 4_096;
    /// All `fill` bytes of one case: no fixture tmpfs is larger (`/work` is 64 MiB).
    pub const MAX_CASE_FILL_BYTES: u64 = 64 * 1024 * 1024;
    /// All `fill` bytes of the matrix: each is hashed once per platform by the verifier.
    pub const MAX_MATRIX_FILL_BYTES: u64 = 256 * 1024 * 1024;
    /// Nodes of one case's fixture tree, implied parents included: half of what one walk
    /// records, so the walk before the run is always whole and the one after has room to see
    /// what the candidate added.
    pub const MAX_FIXTURE_NODES: usize = crate::evidence::WALK_NODE_LIMIT / 2;
    /// Levels below its fixture root of one case's deepest fixture entry: half of how deep a
    /// walk goes.
    pub const MAX_FIXTURE_DEPTH: usize = crate::evidence::WALK_DEPTH_LIMIT / 2;
    /// Path text of one case's fixture tree (every node's path, summed): half of what one walk
    /// records.
    pub const MAX_FIXTURE_PATH_BYTES: usize = crate::evidence::WALK_PATH_BYTES_LIMIT / 2;
}

/// What a walk of the tree `case` declares records: its nodes (declared entries and their
/// implied parents, below the fixture roots), the deepest level below a root, and the bytes of
/// path text. Paths below no fixture root are left out (validation refuses them).
fn declared_walk_size(case: &Case) -> (usize, usize, usize) {
    let mut nodes: BTreeSet<&str> = BTreeSet::new();
    let mut depth = 0;
    for entry in &case.fixture {
        let path = entry_path(entry);
        let Some(root) = layout::FIXTURE_ROOTS.iter().find(|root| {
            path.strip_prefix(**root)
                .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/'))
        }) else {
            continue;
        };
        let below = &path[root.len() + 1..];
        depth = depth.max(below.split('/').count());
        // The entry, then each parent up to (not including) the root.
        let mut node = path;
        while node.len() > root.len() && nodes.insert(node) {
            node = &node[..node.rfind('/').unwrap_or(0)];
        }
    }
    let bytes = nodes.iter().map(|n| n.len()).sum();
    (nodes.len(), depth, bytes)
}

/// Every bound of [`bounds`] the matrix exceeds; computed from counts and declared sizes alone
/// (nothing is materialized, no case is judged). Empty when the matrix is within bounds.
pub fn matrix_bound_failures(matrix: &Matrix) -> Vec<String> {
    use bounds::*;
    let mut failures = Vec::new();
    if matrix.cases.len() > MAX_CASES {
        failures.push(format!(
            "the matrix has {} cases, more than {MAX_CASES}",
            matrix.cases.len()
        ));
        return failures;
    }
    if matrix.canaries.len() > MAX_CANARIES {
        failures.push(format!(
            "the matrix has {} canaries, more than {MAX_CANARIES}",
            matrix.canaries.len()
        ));
    }
    let mut matrix_fill: u64 = 0;
    for case in &matrix.cases {
        let at = &case.id;
        if case.fixture.len() > MAX_FIXTURE_ENTRIES {
            failures.push(format!(
                "case {at}: {} fixture entries, more than {MAX_FIXTURE_ENTRIES}",
                case.fixture.len()
            ));
        }
        let (nodes, depth, path_bytes) = declared_walk_size(case);
        for (what, count, bound) in [
            ("fixture nodes (parents included)", nodes, MAX_FIXTURE_NODES),
            ("levels of fixture below its root", depth, MAX_FIXTURE_DEPTH),
            ("bytes of fixture paths", path_bytes, MAX_FIXTURE_PATH_BYTES),
        ] {
            if count > bound {
                failures.push(format!("case {at}: {count} {what}, more than {bound}"));
            }
        }
        let e = &case.expect;
        let items = [
            ("args", case.args.len()),
            ("env", case.env.len()),
            ("json facts", e.json.len()),
            ("stdoutContains", e.stdout_contains.len()),
            ("stdoutNotContains", e.stdout_not_contains.len()),
            ("stderrContains", e.stderr_contains.len()),
        ];
        for (what, count) in items {
            if count > MAX_CASE_ITEMS {
                failures.push(format!(
                    "case {at}: {count} {what}, more than {MAX_CASE_ITEMS}"
                ));
            }
        }
        let case_fill = case
            .fixture
            .iter()
            .filter_map(|entry| match entry {
                FixtureEntry::File {
                    content: FileContent::Fill { size, .. },
                    ..
                } => Some(*size),
                _ => None,
            })
            .fold(0u64, u64::saturating_add);
        if case_fill > MAX_CASE_FILL_BYTES {
            failures.push(format!(
                "case {at}: fill files of {case_fill} bytes in all, more than {MAX_CASE_FILL_BYTES}"
            ));
        }
        matrix_fill = matrix_fill.saturating_add(case_fill);
    }
    if matrix_fill > MAX_MATRIX_FILL_BYTES {
        failures.push(format!(
            "fill files of {matrix_fill} bytes in all, more than {MAX_MATRIX_FILL_BYTES}"
        ));
    }
    failures
}

/// Every reason the matrix may not be run; `Ok` when there is none. The runner refuses an
/// invalid matrix; the verifier checks the bundled matrix with the same rules.
pub fn validate_matrix(matrix: &Matrix) -> Result<(), Vec<String>> {
    let bound_failures = matrix_bound_failures(matrix);
    if !bound_failures.is_empty() {
        return Err(bound_failures);
    }
    let mut problems = Vec::new();
    if matrix.schema_version != 1 {
        problems.push(format!(
            "schemaVersion is {}, expected 1",
            matrix.schema_version
        ));
    }
    if matrix.name.trim().is_empty() {
        problems.push("name is empty".to_string());
    }
    let mut seen_canaries = BTreeSet::new();
    for (i, canary) in matrix.canaries.iter().enumerate() {
        if canary.is_empty() {
            problems.push(format!("canaries[{i}] is empty"));
        } else if !seen_canaries.insert(canary) {
            problems.push(format!("canary {canary:?} is listed twice"));
        }
    }
    if matrix.cases.is_empty() {
        problems.push("matrix has no cases".to_string());
    }
    let mut ids = BTreeSet::new();
    for (i, case) in matrix.cases.iter().enumerate() {
        let at = if case.id.is_empty() {
            format!("cases[{i}]")
        } else {
            format!("case {}", case.id)
        };
        if !is_case_id(&case.id) {
            problems.push(format!("{at}: id {:?} does not match [a-z0-9-]+", case.id));
        } else if !ids.insert(case.id.as_str()) {
            problems.push(format!("{at}: id is not unique"));
        }
        validate_case(case, &at, &mut problems);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn is_case_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn validate_case(case: &Case, at: &str, problems: &mut Vec<String>) {
    // Profiles a case may name: the shipped manifest's list (the inventory's
    // registry ids and `all`; a test in the inventory keeps the two equal).
    let clients = crate::shipped::clients();
    if !clients.contains(&case.client) {
        problems.push(format!(
            "{at}: client {:?} is not one of {}",
            case.client,
            clients.join(", ")
        ));
    }
    for (i, arg) in case.args.iter().enumerate() {
        if arg.contains('\0') {
            problems.push(format!("{at}: args[{i}] contains a NUL byte"));
        }
    }
    if let Some(cwd) = &case.cwd {
        if !cwd.starts_with('/') || cwd.contains('\0') {
            problems.push(format!("{at}: cwd {cwd:?} is not an absolute path"));
        }
    }
    for (name, value) in &case.env {
        if name.is_empty() || name.contains('=') || name.contains('\0') || value.contains('\0') {
            problems.push(format!("{at}: env {name:?} is not a valid variable"));
        } else if name.starts_with(RESERVED_ENV_PREFIX) {
            problems.push(format!(
                "{at}: env {name:?} is reserved for the harness ({RESERVED_ENV_PREFIX}*)"
            ));
        }
    }
    if case.deadline_ms == Some(0) {
        problems.push(format!("{at}: deadlineMs must be positive"));
    }
    // Symlinks and non-directories declared so far: each new path's ancestors are looked up
    // (O(depth log n) per entry), never every earlier entry scanned (quadratic).
    let mut paths = BTreeSet::new();
    let mut symlinks: BTreeSet<&str> = BTreeSet::new();
    let mut leaves: BTreeSet<&str> = BTreeSet::new();
    for entry in &case.fixture {
        let path = entry_path(entry);
        if let Err(e) = check_fixture_path(path) {
            problems.push(format!("{at}: fixture path {path:?} {e}"));
            continue;
        }
        if !paths.insert(path) {
            problems.push(format!("{at}: fixture path {path} is declared twice"));
            continue;
        }
        let mut ancestor = parent_of(path);
        while let Some(a) = ancestor {
            if symlinks.contains(a) {
                problems.push(format!(
                    "{at}: fixture path {path} lies below the symlink {a}; declare the real path"
                ));
            }
            if leaves.contains(a) {
                problems.push(format!(
                    "{at}: fixture path {path} lies below the non-directory {a}"
                ));
            }
            ancestor = parent_of(a);
        }
        match entry {
            FixtureEntry::File { content, mode, .. } => {
                if let Err(e) = file_size(content) {
                    problems.push(format!("{at}: fixture {path}: {e}"));
                }
                check_mode(mode, path, at, problems);
                leaves.insert(path);
            }
            FixtureEntry::Dir { mode, .. } => check_mode(mode, path, at, problems),
            FixtureEntry::Fifo { mode, .. } => {
                check_mode(mode, path, at, problems);
                leaves.insert(path);
            }
            FixtureEntry::Symlink { target, .. } => {
                if target.is_empty() || target.contains('\0') {
                    problems.push(format!("{at}: fixture {path}: symlink target is empty"));
                }
                symlinks.insert(path);
            }
        }
    }
    for fact in &case.expect.json {
        let checks = usize::from(fact.equals.is_some())
            + usize::from(fact.length.is_some())
            + usize::from(fact.absent.is_some());
        if checks != 1 {
            problems.push(format!(
                "{at}: json fact {:?} sets {checks} checks, expected exactly one of equals, length, absent",
                fact.pointer
            ));
        }
        if !fact.pointer.is_empty() && !fact.pointer.starts_with('/') {
            problems.push(format!(
                "{at}: json pointer {:?} must be empty or start with /",
                fact.pointer
            ));
        }
    }
}

fn check_mode(mode: &Option<String>, path: &str, at: &str, problems: &mut Vec<String>) {
    if let Some(m) = mode {
        if let Err(e) = parse_mode(m) {
            problems.push(format!("{at}: fixture {path}: {e}"));
        }
    }
}

/// A fixture path must be absolute, normalized (no empty, `.` or `..` components, no trailing
/// slash) and strictly below one of the fixture roots (the roots are mount points).
fn check_fixture_path(path: &str) -> Result<(), &'static str> {
    if !path.starts_with('/') {
        return Err("is not absolute");
    }
    if path.contains('\0') {
        return Err("contains a NUL byte");
    }
    if path[1..]
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err("is not normalized (empty, . or .. component)");
    }
    let under_root = layout::FIXTURE_ROOTS
        .iter()
        .any(|root| path.len() > root.len() + 1 && path.starts_with(&format!("{root}/")));
    if !under_root {
        return Err(
            "is not below a fixture root (/work, /home/node, /etc/claude-code, /etc/codex, /etc/gemini-cli)",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::content::MAX_FILL_SIZE;
    use crate::judge::test_support::{case, fact, matrix};
    use crate::matrix::{Fault, JsonFact};
    use serde_json::json;

    #[test]
    fn a_good_matrix_validates() {
        let mut c = case();
        c.fault = Some(Fault::Stall);
        c.fixture.push(FixtureEntry::Symlink {
            path: "/home/node/link".into(),
            target: "/work/p".into(),
        });
        c.expect.json.push(JsonFact {
            length: Some(1),
            ..fact("/servers")
        });
        assert_eq!(validate_matrix(&matrix(vec![c])), Ok(()));
    }

    #[test]
    fn matrix_level_problems_are_each_named() {
        let mut m = matrix(vec![case(), case()]);
        m.schema_version = 2;
        m.canaries.push(String::new());
        m.canaries.push("CANARY-ENV-1".into());
        let problems = validate_matrix(&m).unwrap_err();
        assert_eq!(
            problems,
            vec![
                "schemaVersion is 2, expected 1",
                "canaries[2] is empty",
                "canary \"CANARY-ENV-1\" is listed twice",
                "case present: id is not unique",
            ]
        );
        let empty = Matrix {
            cases: vec![],
            ..matrix(vec![])
        };
        assert_eq!(
            validate_matrix(&empty).unwrap_err(),
            vec!["matrix has no cases"]
        );
    }

    #[test]
    fn case_level_problems_are_each_named() {
        let mut c = case();
        c.id = "Bad_Id".into();
        c.client = "kursor".into();
        c.cwd = Some("work".into());
        c.env.insert("SCOPEBOX_SENTINEL_MARKER".into(), "/x".into());
        c.env.insert("A=B".into(), "x".into());
        c.deadline_ms = Some(0);
        c.fixture = vec![
            FixtureEntry::File {
                path: "/tmp/x".into(),
                content: FileContent::Text(String::new()),
                mode: None,
            },
            FixtureEntry::File {
                path: "/work/../etc/x".into(),
                content: FileContent::Text(String::new()),
                mode: None,
            },
            FixtureEntry::Dir {
                path: "/work".into(),
                mode: None,
            },
            FixtureEntry::File {
                path: "/work/f".into(),
                content: FileContent::Base64("%%".into()),
                mode: Some("999".into()),
            },
            FixtureEntry::File {
                path: "/work/f".into(),
                content: FileContent::Text(String::new()),
                mode: None,
            },
            FixtureEntry::Symlink {
                path: "/work/l".into(),
                target: "/work/d".into(),
            },
            FixtureEntry::File {
                path: "/work/l/x".into(),
                content: FileContent::Text(String::new()),
                mode: None,
            },
            FixtureEntry::Fifo {
                path: "/work/f/under".into(),
                mode: None,
            },
        ];
        c.expect.json = vec![
            JsonFact {
                equals: Some(json!(1)),
                length: Some(1),
                ..fact("/a")
            },
            fact("/b"),
            JsonFact {
                absent: Some(true),
                ..fact("c")
            },
        ];
        let problems = validate_matrix(&matrix(vec![c])).unwrap_err();
        let expected = [
            "case Bad_Id: id \"Bad_Id\" does not match [a-z0-9-]+",
            &format!(
                "case Bad_Id: client \"kursor\" is not one of {}",
                crate::shipped::clients().join(", ")
            ),
            "case Bad_Id: cwd \"work\" is not an absolute path",
            "case Bad_Id: env \"A=B\" is not a valid variable",
            "case Bad_Id: env \"SCOPEBOX_SENTINEL_MARKER\" is reserved for the harness (SCOPEBOX_*)",
            "case Bad_Id: deadlineMs must be positive",
            "case Bad_Id: fixture path \"/tmp/x\" is not below a fixture root (/work, /home/node, /etc/claude-code, /etc/codex, /etc/gemini-cli)",
            "case Bad_Id: fixture path \"/work/../etc/x\" is not normalized (empty, . or .. component)",
            "case Bad_Id: fixture path \"/work\" is not below a fixture root (/work, /home/node, /etc/claude-code, /etc/codex, /etc/gemini-cli)",
            "case Bad_Id: fixture /work/f: base64 length is not a multiple of 4",
            "case Bad_Id: fixture /work/f: mode \"999\" is not 1-4 octal digits",
            "case Bad_Id: fixture path /work/f is declared twice",
            "case Bad_Id: fixture path /work/l/x lies below the symlink /work/l; declare the real path",
            "case Bad_Id: fixture path /work/f/under lies below the non-directory /work/f",
            "case Bad_Id: json fact \"/a\" sets 2 checks, expected exactly one of equals, length, absent",
            "case Bad_Id: json fact \"/b\" sets 0 checks, expected exactly one of equals, length, absent",
            "case Bad_Id: json pointer \"c\" must be empty or start with /",
        ];
        assert_eq!(problems, expected);
    }

    fn fill(path: &str, size: u64) -> FixtureEntry {
        FixtureEntry::File {
            path: path.into(),
            content: FileContent::Fill {
                prefix: "{".into(),
                byte: b' ',
                size,
            },
            mode: None,
        }
    }

    #[test]
    fn matrix_bounds_are_counted_before_validation() {
        let mut many_entries = case();
        many_entries.fixture = (0..bounds::MAX_FIXTURE_ENTRIES + 1)
            .map(|i| FixtureEntry::Dir {
                path: format!("/work/d{i}"),
                mode: None,
            })
            .collect();
        let mut fills = case();
        fills.id = "fills".into();
        // Five 16 MiB fills: 80 MiB in one case, more than any fixture tmpfs holds.
        fills.fixture = (0..5)
            .map(|i| fill(&format!("/work/f{i}"), MAX_FILL_SIZE))
            .collect();
        let m = matrix(vec![many_entries, fills]);
        let failures = matrix_bound_failures(&m);
        assert_eq!(failures.len(), 3, "{failures:?}");
        assert!(failures[0].contains("4097 fixture entries, more than"));
        assert!(failures[1].contains("4097 fixture nodes (parents included), more than 4096"));
        assert!(failures[2].contains("fill files of 83886080 bytes"));
        assert_eq!(validate_matrix(&m).unwrap_err(), failures);
        assert!(matrix_bound_failures(&matrix(vec![case()])).is_empty());
    }

    /// The declared tree, implied parents included, must fit in half of what a walk records,
    /// so the walk before the run is always whole.
    #[test]
    fn the_declared_tree_is_bounded_by_half_the_walk() {
        let dir = |path: String| FixtureEntry::Dir { path, mode: None };
        let bound = |fixture: Vec<FixtureEntry>| {
            let mut c = case();
            c.fixture = fixture;
            matrix_bound_failures(&matrix(vec![c]))
        };
        // Depth: 64 levels below /work is the most; parents count as nodes.
        let deep = |levels: usize| format!("/work{}", "/d".repeat(levels));
        assert!(bound(vec![dir(deep(bounds::MAX_FIXTURE_DEPTH))]).is_empty());
        assert_eq!(
            bound(vec![dir(deep(bounds::MAX_FIXTURE_DEPTH + 1))]),
            ["case present: 65 levels of fixture below its root, more than 64"]
        );
        // Nodes: 2,048 entries two levels down imply 2,048 parents, 4,096 nodes in all.
        let pairs = |n: usize| (0..n).map(|i| dir(format!("/work/p{i}/c"))).collect();
        assert!(bound(pairs(2_048)).is_empty());
        assert_eq!(
            bound(pairs(2_049)),
            ["case present: 4098 fixture nodes (parents included), more than 4096"]
        );
        // Path text: paths of 1,011 bytes; 1,037 of them are within 1 MiB, 1,038 are not.
        let long = |i: usize| dir(format!("/home/node/{i:04}{}", "x".repeat(996)));
        assert!(bound((0..1_037).map(long).collect()).is_empty());
        let failures = bound((0..1_038).map(long).collect());
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].ends_with("bytes of fixture paths, more than 1048576"));
        // Paths below no root are left to validation, not counted.
        assert!(bound(vec![dir(format!("/elsewhere{}", "/d".repeat(40)))]).is_empty());
    }

    #[test]
    fn entries_below_symlinks_and_files_are_found_through_their_ancestors() {
        let mut c = case();
        c.fixture = vec![
            FixtureEntry::Symlink {
                path: "/work/link".into(),
                target: "/etc".into(),
            },
            fill("/work/file", 10),
            FixtureEntry::Dir {
                path: "/work/link/a/b".into(),
                mode: None,
            },
            FixtureEntry::Dir {
                path: "/work/file/x".into(),
                mode: None,
            },
        ];
        let problems = validate_matrix(&matrix(vec![c])).unwrap_err();
        assert_eq!(
            problems,
            [
                "case present: fixture path /work/link/a/b lies below the symlink /work/link; declare the real path",
                "case present: fixture path /work/file/x lies below the non-directory /work/file",
            ]
        );
    }
}
