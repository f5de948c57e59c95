//! What must never happen: printing a command, argument, URL, env or header
//! name or value, or an instruction body; executing anything; writing
//! anything; and unescaped terminal control sequences in the human report.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::fixtures::{self, CANARY, SENTINEL_MARKER};
use crate::util::Tree;

#[test]
fn canaries_never_appear_in_any_output() {
    let t = Tree::new();
    fixtures::full(&t);
    // The root path itself must not contain the canary for this to be fair.
    assert!(!t.root().to_str().unwrap().contains(CANARY));
    let runs = [
        t.run(&["."]),
        t.run(&[".", "--json"]),
        t.run(&[".", "--client", "claude"]),
        t.run_lib(true),
        t.run_lib(false),
    ];
    for r in &runs {
        assert_eq!(r.code, 0, "{r}");
        assert!(!r.all().contains(CANARY), "canary leaked:\n{r}");
    }
    // Sanity: the canaries are really in the fixture the runs read.
    let home = std::fs::read_to_string(t.path("home/.claude.json")).unwrap();
    assert!(home.matches(CANARY).count() >= 10);
}

#[test]
fn canaries_do_not_leak_from_broken_sources_either() {
    let t = Tree::new();
    fixtures::full(&t);
    // Make the project file malformed around a canary, and the home file too large.
    t.write(
        "work/team/proj/.mcp.json",
        r#"{"mcpServers": {"x": {"command": "CANARY-cmd", "args": ["CANARY-arg"],}}}"#,
    );
    let mut big = br#"{"mcpServers":{"x":{"command":"CANARY"}}}"#.to_vec();
    big.resize((1 << 20) + 1, b' ');
    t.write("home/.claude.json", big);
    for r in [t.run(&["."]), t.run(&[".", "--json"])] {
        assert_eq!(r.code, 1);
        assert!(!r.all().contains(CANARY), "{r}");
    }
}

#[test]
fn nothing_is_executed() {
    let t = Tree::new();
    let sentinel = fixtures::full(&t);
    // Positive control: the sentinel does leave its marker when run.
    std::process::Command::new(&sentinel).status().unwrap();
    assert!(t.path(SENTINEL_MARKER).exists(), "sentinel control failed");
    std::fs::remove_file(t.path(SENTINEL_MARKER)).unwrap();

    t.run(&["."]);
    t.run(&[".", "--json"]);
    t.run_lib(true);
    assert!(
        !t.path(SENTINEL_MARKER).exists(),
        "a configured command was executed"
    );
}

/// Path → (size, mode, mtime, bytes) for every entry under `dir`.
pub fn tree_state(dir: &Path) -> BTreeMap<String, (u64, u32, i64, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let bytes = if m.is_file() {
                std::fs::read(&p).unwrap()
            } else {
                Vec::new()
            };
            if m.is_dir() {
                stack.push(p.clone());
            }
            out.insert(
                p.to_string_lossy().into_owned(),
                (
                    m.size(),
                    m.mode(),
                    m.mtime_nsec() + m.mtime() * 1_000_000_000,
                    bytes,
                ),
            );
        }
    }
    out
}

#[test]
fn nothing_is_written() {
    let t = Tree::new();
    fixtures::full(&t);
    t.fifo("work/team/proj/CLAUDE.local.md.fifo");
    let before = tree_state(&t.base);
    t.run(&["."]);
    t.run(&[".", "--json"]);
    t.run_lib(false);
    assert_eq!(before, tree_state(&t.base));
}

#[test]
fn terminal_report_escapes_names_and_paths_and_json_keeps_them() {
    let t = Tree::new();
    let odd_dir = "work/evil\u{1b}[2J\u{202e}dir\nname";
    t.mkdir(odd_dir);
    let names = [
        "ansi\u{1b}[31mred\u{1b}[0m",
        "bidi\u{202e}txt.exe\u{2066}",
        "new\nline\ttab",
        "zero\u{200b}width",
        "bell\u{7}c1\u{9b}",
        "back\\slash",
        // Format characters a hand list missed (musical symbol, Egyptian
        // hieroglyph and shorthand format controls).
        "fmt\u{1d173}\u{13430}\u{1bca0}x",
        "",
    ];
    let servers: Vec<String> = names
        .iter()
        .map(|n| {
            format!(
                "{}: {{\"command\": \"x\"}}",
                serde_json::to_string(n).unwrap()
            )
        })
        .collect();
    t.write(
        &format!("{odd_dir}/.mcp.json"),
        format!("{{\"mcpServers\": {{{}}}}}", servers.join(", ")),
    );
    t.write(&format!("{odd_dir}/CLAUDE.md"), "x");
    let root = t.path(odd_dir);
    let human = t.run_in(&root, &["."]);
    assert_eq!(human.code, 0, "{human}");
    for bad in [
        '\u{1b}',
        '\u{202e}',
        '\u{2066}',
        '\u{200b}',
        '\u{7}',
        '\u{9b}',
        '\t',
        '\u{1d173}',
        '\u{13430}',
        '\u{1bca0}',
    ] {
        assert!(!human.stdout.contains(bad), "{bad:?} reached the terminal");
    }
    // Only the report's own newlines remain: every line starts as designed.
    assert!(!human.stdout.contains("\nline"));
    insta::assert_snapshot!("sanitized_human", human.to_string());

    let json = t.run_in(&root, &[".", "--json"]).json();
    let mut got: Vec<&str> = json["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    got.sort();
    let mut want = names.to_vec();
    want.sort();
    assert_eq!(got, want, "JSON keeps names exactly");
    assert_eq!(json["root"]["canonical"], format!("[TMP]/{odd_dir}"));
}
