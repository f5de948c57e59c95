//! Instruction candidates: every name at the root and every ancestor, user
//! and managed levels, each state, and proof that contents are never read.

use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::fixtures;
use crate::util::Tree;

fn found(j: &Value) -> Vec<String> {
    j["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["state"] != "missing")
        .map(|i| {
            let extra = match i["reason"].as_str() {
                Some(r) => format!("{} ({r})", i["state"].as_str().unwrap()),
                None => format!("{} {} bytes", i["state"].as_str().unwrap(), i["bytes"]),
            };
            format!(
                "{} {} {}",
                i["scope"].as_str().unwrap(),
                i["path"].as_str().unwrap(),
                extra
            )
        })
        .collect()
}

#[test]
fn candidates_at_every_level_in_documented_order() {
    let t = Tree::new();
    fixtures::full(&t);
    let j = t.run_lib(true).json();
    let all = j["instructions"].as_array().unwrap();
    // Root + 5 ancestors (team, work, the temp dir, /tmp, /) × 5 names,
    // then user and managed.
    assert_eq!(all.len(), 6 * 5 + 2);
    let names: Vec<&str> = all[..5]
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "CLAUDE.md",
            ".claude/CLAUDE.md",
            "CLAUDE.local.md",
            "AGENTS.md",
            ".claude/AGENTS.md"
        ]
    );
    assert!(all[..5].iter().all(|i| i["scope"] == "project"));
    assert!(all[5..30].iter().all(|i| i["scope"] == "ancestor"));
    assert_eq!(
        (all[30]["scope"].as_str(), all[31]["scope"].as_str()),
        (Some("user"), Some("managed"))
    );
    assert!(all.iter().all(|i| i["applicability"] == "unknown"));
    insta::assert_snapshot!("instructions_found", found(&j).join("\n"));
}

#[test]
fn instruction_states() {
    let t = Tree::new();
    let r = crate::util::ROOT;
    t.write("target.md", "x");
    t.symlink(t.path("target.md"), &format!("{r}/CLAUDE.md"));
    t.symlink("gone.md", &format!("{r}/AGENTS.md"));
    t.mkdir(&format!("{r}/CLAUDE.local.md"));
    t.mkdir("elsewhere/.claude");
    t.write("elsewhere/.claude/CLAUDE.md", "x");
    t.symlink(t.path("elsewhere/.claude"), &format!("{r}/.claude"));
    t.fifo("work/team/CLAUDE.md");
    t.write("work/.claude", "a file where a directory would be");
    // Far over the 1 MiB read limit: metadata only, so simply present.
    t.write("work/AGENTS.md", vec![b'x'; 3 << 20]);
    let j = t.run(&[".", "--json"]).json();
    insta::assert_snapshot!("instruction_states", found(&j).join("\n"));
    // Instruction states never make the inventory incomplete.
    assert_eq!(j["inventoryComplete"], true);
}

/// Reading a file whose access time is older than its modification time
/// updates the access time (relatime, strictatime); probing never does. On a
/// `noatime` mount this cannot fail, so the test first proves that a read
/// is visible here.
#[test]
fn instruction_contents_are_never_read() {
    let t = Tree::new();
    fixtures::full(&t);
    let files = [
        "work/team/proj/CLAUDE.md",
        "work/team/proj/.claude/AGENTS.md",
        "work/CLAUDE.md",
        "home/.claude/CLAUDE.md",
        "managed/CLAUDE.md",
    ];
    let old = SystemTime::now() - Duration::from_secs(7 * 24 * 3600);
    let set_old_atime = |rel: &str| {
        let f = std::fs::File::options()
            .write(true)
            .open(t.path(rel))
            .unwrap();
        f.set_times(std::fs::FileTimes::new().set_accessed(old))
            .unwrap();
    };
    let atime = |rel: &str| std::fs::metadata(t.path(rel)).unwrap().accessed().unwrap();

    // Control: an actual read is observable on this filesystem.
    t.write("control.md", "x");
    set_old_atime("control.md");
    std::fs::read(t.path("control.md")).unwrap();
    if atime("control.md") == old {
        eprintln!("filesystem does not record reads (noatime): skipping the atime check");
        return;
    }

    for f in files {
        set_old_atime(f);
    }
    let r = t.run_lib(true);
    assert_eq!(r.code, 0);
    let r = t.run(&["."]);
    assert_eq!(r.code, 0);
    for f in files {
        assert_eq!(atime(f), old, "{f} was read");
    }
}
