//! The VS Code / Copilot profile (`--client vscode`) through the real binary:
//! every origin × file state in both output formats (snapshot tables), the
//! full fixture (snapshots), JSONC only where enabled, container selection
//! (bare map, wrapper, mixed), `sameNameIn`, env values beyond strings,
//! instructions, the contract's field set, and what must never be printed,
//! run or written. The Claude Code default must not notice any of it.

use std::fmt::Write;

use serde::Deserialize;
use serde_json::Value;

use crate::fixtures::{plant_sentinel, CANARY, SENTINEL_MARKER};
use crate::util::{is_root, Transcript, Tree, ROOT};

const VSCODE_PROJECT: &str = "work/team/proj/.vscode/mcp.json";
const COPILOT_PROJECT: &str = "work/team/proj/.mcp.json";
const VSCODE_USER: &str = "home/.config/Code/User/mcp.json";
const COPILOT_USER: &str = "home/.copilot/mcp-config.json";

/// (origin, file, container key, parser is JSONC).
const ORIGINS: [(&str, &str, &str, bool); 4] = [
    ("vscode-project", VSCODE_PROJECT, "servers", true),
    ("copilot-project", COPILOT_PROJECT, "mcpServers", true),
    ("vscode-user", VSCODE_USER, "servers", true),
    ("copilot-user", COPILOT_USER, "mcpServers", false),
];

const MIB: usize = 1 << 20;

fn vscode(t: &Tree, json: bool) -> Transcript {
    if json {
        t.run(&[".", "--client", "vscode", "--json"])
    } else {
        t.run(&[".", "--client", "vscode"])
    }
}

fn rows(j: &Value) -> Vec<String> {
    j["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let same: Vec<&str> = s["sameNameIn"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            format!(
                "{}/{} valid={} guard={} same=[{}]",
                s["origin"].as_str().unwrap(),
                s["name"].as_str().unwrap(),
                s["shape"]["valid"],
                s["guardForm"].as_str().unwrap(),
                same.join(",")
            )
        })
        .collect()
}

fn source<'a>(j: &'a Value, origin: &str) -> &'a Value {
    j["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["origin"] == origin)
        .unwrap()
}

/// `state (reason)` of one source.
fn state(j: &Value, origin: &str) -> String {
    let s = source(j, origin);
    match s["reason"].as_str() {
        Some(r) => format!("{} ({r})", s["state"].as_str().unwrap()),
        None => s["state"].as_str().unwrap().to_owned(),
    }
}

/// A full fixture: every origin present with a canary in every sensitive
/// field, every stdio command the sentinel, same-name declarations across
/// origins, JSONC features where they are allowed, and instruction files at
/// the root, an ancestor and home. Returns the sentinel path.
fn full(t: &Tree) -> String {
    let s = plant_sentinel(t);
    t.write(
        VSCODE_PROJECT,
        format!(
            r#"// CANARY-comment-vscode-project
{{
  "inputs": [{{"id": "CANARY-input-id", "type": "promptString", "password": true}}],
  "servers": {{
    "shared": {{"type": "stdio", "command": "{s}", "args": ["CANARY-arg-vp"], "env": {{"CANARY_ENV_VP": "${{input:CANARY-input-id}}"}}}},
    "vp-remote": {{"type": "http", "url": "https://CANARY-url-vp.example/mcp", "headers": {{"CANARY-Hdr-VP": "Bearer CANARY-hdr-vp"}}}},
    "vp-numbers": {{"command": "{s}", "env": {{"CANARY_PORT": 8080, "CANARY_NULL": null}}, "envFile": "${{workspaceFolder}}/CANARY.env", "dev": {{"watch": "CANARY/**"}}}},
    /* a trailing comma follows */
  }},
}}
"#
        ),
    );
    t.write(
        COPILOT_PROJECT,
        format!(
            r#"{{
  "mcpServers": {{
    "shared": {{"type": "local", "command": "{s}", "args": ["CANARY-arg-cp"], "tools": ["*"]}},
    "cp-guarded": {{"command": "mcpm", "args": ["guard", "--", "{s}", "CANARY-guarded-arg"]}},
    "cp-broken": {{"command": "{s}", "env": {{"CANARY_NUM_CP": 1}}}}
  }},
  "$schema": "CANARY-schema-url"
}}
"#
        ),
    );
    t.write(
        VSCODE_USER,
        "\u{feff}{\"servers\": {\"shared\": {\"command\": \"npx\", \"args\": [\"-y\", \"CANARY-pkg@1\"]}, \"vu-sse\": {\"type\": \"sse\", \"url\": \"https://CANARY-url-vu.example\"}, \"vu-docker\": {\"command\": \"docker\", \"args\": [\"run\", \"-i\", \"CANARY-image\"], \"env\": {\"CANARY_V\": \"CANARY-val\"}}}}\n",
    );
    t.write(
        COPILOT_USER,
        r#"{"mcpServers": {"shared": {"type": "http", "url": "https://CANARY-url-cu.example", "headers": {"Authorization": "CANARY-token"}}, "cu-script": {"command": "node", "args": ["CANARY-script.js"], "cwd": "/CANARY-cwd"}}}
"#,
    );
    for name in [
        ".github/copilot-instructions.md",
        "AGENTS.md",
        "CLAUDE.md",
        ".claude/CLAUDE.md",
    ] {
        t.write(&format!("{ROOT}/{name}"), "CANARY instruction body\n");
    }
    t.write("work/team/AGENTS.md", "CANARY team agents\n");
    t.write(
        "work/.github/copilot-instructions.md",
        "CANARY work copilot\n",
    );
    t.write(
        "home/.copilot/copilot-instructions.md",
        "CANARY user copilot\n",
    );
    t.write("home/.codex/AGENTS.md", "CANARY user codex\n");
    s
}

#[test]
fn full_fixture_json() {
    let t = Tree::new();
    full(&t);
    let r = vscode(&t, true);
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(r.stderr, "");
    insta::assert_snapshot!("vscode_full_fixture_json", r.to_string());
}

#[test]
fn full_fixture_human() {
    let t = Tree::new();
    full(&t);
    let r = vscode(&t, false);
    assert_eq!(r.code, 0, "{r}");
    insta::assert_snapshot!("vscode_full_fixture_human", r.to_string());
}

#[test]
fn rows_are_in_origin_then_name_order_with_same_name_references() {
    let t = Tree::new();
    full(&t);
    let j = vscode(&t, true).json();
    assert_eq!(
        rows(&j),
        [
            "vscode-project/shared valid=true guard=direct same=[copilot-project,vscode-user,copilot-user]",
            "vscode-project/vp-numbers valid=true guard=unknown same=[]",
            "vscode-project/vp-remote valid=true guard=unknown same=[]",
            "copilot-project/cp-broken valid=false guard=unknown same=[]",
            "copilot-project/cp-guarded valid=true guard=guarded same=[]",
            "copilot-project/shared valid=true guard=direct same=[vscode-project,vscode-user,copilot-user]",
            "vscode-user/shared valid=true guard=direct same=[vscode-project,copilot-project,copilot-user]",
            "vscode-user/vu-docker valid=true guard=direct same=[]",
            "vscode-user/vu-sse valid=true guard=unknown same=[]",
            "copilot-user/cu-script valid=true guard=unknown same=[]",
            "copilot-user/shared valid=true guard=unknown same=[vscode-project,copilot-project,vscode-user]",
        ]
    );
    for s in j["servers"].as_array().unwrap() {
        assert_eq!(s["scope"], s["origin"]);
        assert_eq!(s["configured"], true);
        assert_eq!(s["path"], source(&j, s["origin"].as_str().unwrap())["path"]);
        assert_eq!(
            s["format"],
            source(&j, s["origin"].as_str().unwrap())["format"]
        );
        // Claude Code and dsh fields never appear in this profile.
        for k in ["possibleShadowedBy", "possiblyExcludedBy", "shadowedBy"] {
            assert!(s.get(k).is_none(), "{k}");
        }
    }
}

#[test]
fn env_numbers_and_null_are_valid_but_leave_the_guard_form_unknown() {
    let t = Tree::new();
    t.write(
        VSCODE_PROJECT,
        r#"{"servers": {
            "num": {"command": "srv", "env": {"A": 1}},
            "nul": {"command": "srv", "env": {"A": null}},
            "str": {"command": "srv", "env": {"A": "1"}},
            "inf": {"command": "srv", "env": {"A": 1e400}},
            "wrapped": {"command": "mcpm", "args": ["guard", "--", "srv"], "env": {"A": 2}}
        }}"#,
    );
    let j = vscode(&t, true).json();
    let got: Vec<String> = j["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{} valid={} launch={} guard={} env={} {}",
                s["name"].as_str().unwrap(),
                s["shape"]["valid"],
                s["launch"].as_str().unwrap(),
                s["guardForm"].as_str().unwrap(),
                s["shape"]["envCount"],
                s["shape"]["problems"]
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            "inf valid=false launch=executable guard=unknown env=1 [\"env-value-not-string-number-or-null\"]",
            "nul valid=true launch=executable guard=unknown env=1 []",
            "num valid=true launch=executable guard=unknown env=1 []",
            "str valid=true launch=executable guard=direct env=1 []",
            "wrapped valid=true launch=guard-wrapper guard=unknown env=1 []",
        ]
    );
}

// ---- JSONC only where it is enabled ----

#[test]
fn jsonc_is_accepted_only_by_the_three_jsonc_origins() {
    let body = "\u{feff}// c\n{/* c */\"KEY\": {\"a\": {\"command\": \"x\",},},}\n";
    for (origin, file, key, jsonc) in ORIGINS {
        let t = Tree::new();
        t.write(file, body.replace("KEY", key));
        let r = vscode(&t, true);
        let j = r.json();
        if jsonc {
            assert_eq!(
                (r.code, state(&j, origin)),
                (0, "present".into()),
                "{origin}"
            );
            assert_eq!(source(&j, origin)["serverCount"], 1);
        } else {
            assert_eq!(
                (r.code, state(&j, origin)),
                (1, "malformed (byte-order-mark)".into()),
                "{origin}"
            );
        }
    }
    // The strict reader rejects each relaxation on its own.
    for (text, reason) in [
        ("// c\n{\"mcpServers\": {}}", "comment"),
        ("{\"mcpServers\": {},}", "trailing-comma"),
        ("\u{feff}{\"mcpServers\": {}}", "byte-order-mark"),
    ] {
        let t = Tree::new();
        t.write(COPILOT_USER, text);
        let j = vscode(&t, true).json();
        assert_eq!(state(&j, "copilot-user"), format!("malformed ({reason})"));
    }
}

#[test]
fn the_claude_code_profile_stays_strict_on_the_shared_project_file() {
    let t = Tree::new();
    t.write(
        COPILOT_PROJECT,
        "// c\n{\"mcpServers\": {\"a\": {\"command\": \"x\"},},}",
    );
    assert_eq!(
        state(&vscode(&t, true).json(), "copilot-project"),
        "present"
    );
    let claude = t.run(&[".", "--json"]).json();
    assert_eq!(claude["sources"][1]["scope"], "project");
    assert_eq!(claude["sources"][1]["state"], "malformed");
    assert_eq!(claude["sources"][1]["reason"], "comment");
}

#[test]
fn the_default_output_does_not_change_by_a_byte() {
    // The Claude Code output with every VS Code-only file present is
    // identical to the output without them, in both formats; and none of
    // the vscode fields leak into it.
    let plain = Tree::new();
    crate::fixtures::full(&plain);
    let with = Tree::new();
    crate::fixtures::full(&with);
    let s = plant_sentinel(&with);
    for file in [VSCODE_PROJECT, VSCODE_USER] {
        with.write(
            file,
            format!(r#"{{"servers": {{"v": {{"command": "{s}"}}}}}}"#),
        );
    }
    with.write(
        COPILOT_USER,
        format!(r#"{{"mcpServers": {{"c": {{"command": "{s}"}}}}}}"#),
    );
    with.write("work/team/proj/.github/copilot-instructions.md", "x");
    for args in [
        &["."][..],
        &[".", "--json"],
        &[".", "--client", "claude-code"],
    ] {
        let a = plain.run(args);
        let b = with.run(args);
        assert_eq!(a, b, "{args:?}");
        for field in [
            "origin",
            "uninterpretedRootFields",
            "sameNameIn",
            "parser",
            "format",
        ] {
            assert!(!b.stdout.contains(&format!("\"{field}\"")), "{field}");
        }
    }
    assert!(!with.path(SENTINEL_MARKER).exists());
}

// ---- container selection ----

#[test]
fn bare_map_keys_are_considered_one_by_one_including_a_malformed_servers_key() {
    // The malformed-neighbour regression: a key named `servers` with a
    // malformed value is one malformed server, never a broken file, and its
    // neighbours stay visible.
    let t = Tree::new();
    t.write(
        COPILOT_PROJECT,
        r#"{"alpha": {"command": "x"}, "servers": 1, "beta": {"type": "http", "url": "u"}, "__proto__": {"command": "y"}}"#,
    );
    let r = vscode(&t, true);
    assert_eq!(r.code, 0, "{r}");
    let j = r.json();
    let s = source(&j, "copilot-project");
    assert_eq!(
        (
            &s["format"],
            &s["container"],
            &s["uninterpretedRootFields"],
            &s["serverCount"]
        ),
        (
            &"bare-map".into(),
            &"(top level)".into(),
            &false.into(),
            &4.into()
        )
    );
    assert_eq!(
        rows(&j),
        [
            "copilot-project/__proto__ valid=true guard=direct same=[]",
            "copilot-project/alpha valid=true guard=direct same=[]",
            "copilot-project/beta valid=true guard=unknown same=[]",
            "copilot-project/servers valid=false guard=unknown same=[]",
        ]
    );
    assert_eq!(
        j["servers"][3]["shape"]["problems"],
        serde_json::json!(["entry-not-object"])
    );
    assert_eq!(j["servers"][0]["format"], "bare-map");
    // A bare `servers` map in .mcp.json is one server named `servers`.
    let t = Tree::new();
    t.write(
        COPILOT_PROJECT,
        r#"{"servers": {"inner": {"command": "x"}}}"#,
    );
    let j = vscode(&t, true).json();
    assert_eq!(
        rows(&j),
        ["copilot-project/servers valid=false guard=unknown same=[]"]
    );
}

#[test]
fn an_own_mcp_servers_key_selects_the_wrapper_and_an_invalid_one_is_not_guessed() {
    let t = Tree::new();
    t.write(
        COPILOT_PROJECT,
        r#"{"mcpServers": {"w": {"command": "x"}}, "$schema": "s", "version": 2}"#,
    );
    let j = vscode(&t, true).json();
    let s = source(&j, "copilot-project");
    assert_eq!(s["format"], "portable-mcpServers");
    assert_eq!(s["container"], "mcpServers");
    assert_eq!(s["uninterpretedRootFields"], true);
    assert_eq!(
        rows(&j),
        ["copilot-project/w valid=true guard=direct same=[]"]
    );

    for wrapper in ["[]", "null", "\"x\"", "3"] {
        let t = Tree::new();
        t.write(
            COPILOT_PROJECT,
            format!(r#"{{"mcpServers": {wrapper}, "looks-like-a-server": "x"}}"#),
        );
        let r = vscode(&t, true);
        let j = r.json();
        assert_eq!(r.code, 1);
        assert_eq!(
            state(&j, "copilot-project"),
            "malformed (wrong-container-type)"
        );
        assert_eq!(
            source(&j, "copilot-project")["format"],
            "portable-mcpServers"
        );
        assert_eq!(
            j["servers"],
            serde_json::json!([]),
            "{wrapper}: never a bare map"
        );
    }
}

#[test]
fn mixed_containers_stay_incomplete_while_other_sources_stay_visible() {
    let cases = [
        (
            VSCODE_PROJECT,
            "vscode-project",
            r#"{"servers": {"a": {"command": "x"}}, "mcpServers": {}}"#,
        ),
        (
            COPILOT_PROJECT,
            "copilot-project",
            r#"{"mcpServers": {"a": {"command": "x"}}, "servers": {"b": {"command": "y"}}}"#,
        ),
        (
            COPILOT_PROJECT,
            "copilot-project",
            r#"{"mcpServers": {"a": {"command": "x"}}, "b": {"command": "y"}}"#,
        ),
        (
            VSCODE_USER,
            "vscode-user",
            r#"{"mcpServers": {}, "servers": {}}"#,
        ),
        (
            COPILOT_USER,
            "copilot-user",
            r#"{"servers": {}, "mcpServers": {"a": {"command": "x"}}}"#,
        ),
    ];
    for (file, origin, text) in cases {
        let t = Tree::new();
        for (_, other, key, _) in ORIGINS {
            t.write(
                other,
                format!(r#"{{"{key}": {{"ok": {{"command": "x"}}}}}}"#),
            );
        }
        t.write(file, text);
        let r = vscode(&t, true);
        assert_eq!(r.code, 1, "{text}");
        assert!(
            r.stderr
                .contains(&format!("{origin} source malformed (mixed-container)")),
            "{r}"
        );
        let j = r.json();
        assert_eq!(j["inventoryComplete"], false);
        let s = source(&j, origin);
        assert_eq!(
            (s["serverCount"].as_u64(), &s["uninterpretedRootFields"]),
            (Some(0), &true.into())
        );
        let visible: Vec<&str> = j["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["origin"].as_str().unwrap())
            .collect();
        let want: Vec<&str> = ORIGINS
            .iter()
            .map(|o| o.0)
            .filter(|o| *o != origin)
            .collect();
        assert_eq!(visible, want, "{text}");
    }
}

#[test]
fn a_lone_foreign_container_is_an_uninterpreted_root_field_not_servers() {
    let t = Tree::new();
    t.write(VSCODE_PROJECT, r#"{"mcpServers": {"a": {"command": "x"}}}"#);
    t.write(COPILOT_USER, r#"{"servers": {"a": {"command": "x"}}}"#);
    let r = vscode(&t, true);
    assert_eq!(r.code, 0);
    let j = r.json();
    for origin in ["vscode-project", "copilot-user"] {
        let s = source(&j, origin);
        assert_eq!(
            (s["state"].as_str(), s["serverCount"].as_u64()),
            (Some("present"), Some(0))
        );
        assert_eq!(s["uninterpretedRootFields"], true);
    }
    assert_eq!(j["servers"], serde_json::json!([]));
}

// ---- every origin × state, JSON and human ----

/// A labelled way to set up one input; `file` is the origin's path,
/// `key` its container key.
type Setup = Box<dyn Fn(&Tree, &str, &str)>;

fn state_cases() -> Vec<(&'static str, Setup)> {
    fn w(text: &'static str) -> Setup {
        Box::new(move |t: &Tree, f: &str, k: &str| t.write(f, text.replace("KEY", k)))
    }
    fn padded(key: &str, len: usize) -> Vec<u8> {
        let mut v = format!(r#"{{"{key}":{{"a":{{"command":"x"}}}}}}"#).into_bytes();
        v.resize(len, b' ');
        v
    }
    vec![
        ("missing", Box::new(|_: &Tree, _: &str, _: &str| {})),
        (
            "two servers",
            w(r#"{"KEY": {"b": {"command": "x"}, "a": {"type": "http", "url": "u"}}}"#),
        ),
        ("empty object", w("{}")),
        ("empty container", w(r#"{"KEY": {}}"#)),
        (
            "extra root field",
            w(r#"{"KEY": {"a": {"command": "x"}}, "inputs": []}"#),
        ),
        ("only an extra root field", w(r#"{"other": 1}"#)),
        ("line comment", w("// c\n{\"KEY\": {}}")),
        ("block comment", w("{/* c */\"KEY\": {}}")),
        ("trailing comma", w(r#"{"KEY": {"a": {"command": "x"},}}"#)),
        ("byte-order mark", w("\u{feff}{\"KEY\": {}}")),
        ("two byte-order marks", w("\u{feff}\u{feff}{\"KEY\": {}}")),
        ("comment only", w("// nothing\n")),
        ("empty file", w("")),
        ("syntax error", w(r#"{"KEY": {"a": }}"#)),
        ("single quotes", w("{'KEY': {}}")),
        ("duplicate top-level key", w(r#"{"KEY": {}, "KEY": {}}"#)),
        (
            "duplicate server name",
            w(r#"{"KEY": {"a": {"command": "x"}, "a": {"command": "y"}}}"#),
        ),
        (
            "duplicate via escape",
            w(r#"{"KEY": {"a": {}, "\u0061": {}}}"#),
        ),
        (
            "duplicate deep in env",
            w(r#"{"KEY": {"a": {"command": "x", "env": {"E": "1", "E": "2"}}}}"#),
        ),
        (
            "invalid utf-8",
            Box::new(|t: &Tree, f: &str, k: &str| {
                let mut v = format!("{{\"{k}\": {{\"").into_bytes();
                v.extend_from_slice(b"\xc3\x28\": {}}}");
                t.write(f, v)
            }),
        ),
        ("lone surrogate", w(r#"{"KEY": {"\ud800": {}}}"#)),
        ("top-level array", w("[]")),
        ("container is an array", w(r#"{"KEY": []}"#)),
        (
            "mixed containers",
            w(r#"{"servers": {}, "mcpServers": {}}"#),
        ),
        (
            "exactly 1 MiB",
            Box::new(|t: &Tree, f: &str, k: &str| t.write(f, padded(k, MIB))),
        ),
        (
            "1 MiB + 1 byte",
            Box::new(|t: &Tree, f: &str, k: &str| t.write(f, padded(k, MIB + 1))),
        ),
        (
            "symlink to a valid file",
            Box::new(|t: &Tree, f: &str, k: &str| {
                t.write("elsewhere.json", format!(r#"{{"{k}": {{}}}}"#));
                t.symlink(t.path("elsewhere.json"), f);
            }),
        ),
        (
            "dangling symlink",
            Box::new(|t: &Tree, f: &str, _: &str| t.symlink("nowhere.json", f)),
        ),
        (
            "symlinked parent directory",
            Box::new(|t: &Tree, f: &str, k: &str| {
                // The directory right above the file is a symlink to a real one
                // holding a valid file (the project root itself is the trusted
                // base, so for .mcp.json this is the plain symlink case).
                let (dir, name) = f.rsplit_once('/').unwrap();
                t.write(&format!("realdir/{name}"), format!(r#"{{"{k}": {{}}}}"#));
                if dir == ROOT {
                    t.symlink(t.path(&format!("realdir/{name}")), f);
                } else {
                    std::fs::create_dir_all(t.path(dir).parent().unwrap()).unwrap();
                    t.symlink(t.path("realdir"), dir);
                }
            }),
        ),
        (
            "parent is a file",
            Box::new(|t: &Tree, f: &str, _: &str| {
                let (dir, _) = f.rsplit_once('/').unwrap();
                if dir != ROOT {
                    t.write(dir, "not a directory");
                }
            }),
        ),
        (
            "directory",
            Box::new(|t: &Tree, f: &str, _: &str| t.mkdir(f)),
        ),
        (
            "fifo (never blocks)",
            Box::new(|t: &Tree, f: &str, _: &str| {
                t.mkdir(f.rsplit_once('/').unwrap().0);
                t.fifo(f)
            }),
        ),
    ]
}

/// The source's three human lines (state; path → container; format).
fn human_block(human: &str, origin: &str) -> String {
    let lines: Vec<&str> = human.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with(&format!("  {origin} ")))
        .expect("the source is listed");
    lines[i..i + 3].join("\n")
}

fn origin_state_table(origin: &str, file: &str, key: &str) -> String {
    let mut table = String::new();
    for (label, setup) in state_cases() {
        let t = Tree::new();
        setup(&t, file, key);
        let r = vscode(&t, true);
        let j = r.json();
        let s = source(&j, origin);
        let h = vscode(&t, false);
        assert_eq!(h.code, r.code, "{label}: human and JSON exit codes agree");
        assert_eq!(h.stderr, r.stderr, "{label}");
        assert_eq!(
            r.code == 0,
            r.stderr.is_empty(),
            "{label}: stderr only for an incomplete inventory"
        );
        writeln!(
            table,
            "## {label}\nexit {} · {} · serverCount {} · format {} · container {} · uninterpretedRootFields {}\n{}",
            r.code,
            state(&j, origin),
            s["serverCount"],
            s["format"].as_str().unwrap(),
            s["container"].as_str().unwrap(),
            s["uninterpretedRootFields"],
            human_block(&h.stdout, origin)
        )
        .unwrap();
    }
    table
}

#[test]
fn vscode_project_states() {
    let (o, f, k, _) = ORIGINS[0];
    insta::assert_snapshot!("vscode_project_states", origin_state_table(o, f, k));
}

#[test]
fn copilot_project_states() {
    let (o, f, k, _) = ORIGINS[1];
    insta::assert_snapshot!("copilot_project_states", origin_state_table(o, f, k));
}

#[test]
fn vscode_user_states() {
    let (o, f, k, _) = ORIGINS[2];
    insta::assert_snapshot!("vscode_user_states", origin_state_table(o, f, k));
}

#[test]
fn copilot_user_states() {
    let (o, f, k, _) = ORIGINS[3];
    insta::assert_snapshot!("copilot_user_states", origin_state_table(o, f, k));
}

#[test]
fn a_denied_file_is_unreadable_for_every_origin() {
    if is_root() {
        eprintln!("running as root: modes do not deny root; the container matrix (uid 1000) runs this case");
        return;
    }
    for (origin, file, key, _) in ORIGINS {
        let t = Tree::new();
        t.write(file, format!(r#"{{"{key}": {{}}}}"#));
        t.chmod(file, 0o000);
        let r = vscode(&t, true);
        assert_eq!(r.code, 1);
        let j = r.json();
        assert_eq!(state(&j, origin), "unreadable (permission-denied)");
        assert_eq!(source(&j, origin)["uninterpretedRootFields"], "unknown");
    }
}

#[test]
fn without_home_the_user_origins_are_unreadable() {
    let t = Tree::new();
    full(&t);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mcpscope"));
    cmd.args([".", "--client", "vscode", "--json"])
        .current_dir(t.root())
        .env_clear();
    let r = t.transcript(cmd);
    assert_eq!(r.code, 1);
    let j = r.json();
    for (origin, path) in [
        ("vscode-user", "~/.config/Code/User/mcp.json"),
        ("copilot-user", "~/.copilot/mcp-config.json"),
    ] {
        let s = source(&j, origin);
        assert_eq!(state(&j, origin), "unreadable (home-not-set)");
        assert_eq!(
            (s["path"].as_str(), &s["uninterpretedRootFields"]),
            (Some(path), &"unknown".into())
        );
    }
    // The project origins are still read.
    assert_eq!(source(&j, "vscode-project")["serverCount"], 3);
    let user: Vec<&Value> = j["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["scope"] == "user")
        .collect();
    assert_eq!(user.len(), 3);
    assert!(user.iter().all(|i| i["reason"] == "home-not-set"));
}

// ---- instructions ----

#[test]
fn instruction_candidates_at_every_level_and_home_metadata_only() {
    let t = Tree::new();
    full(&t);
    let j = vscode(&t, true).json();
    let all = j["instructions"].as_array().unwrap();
    // Root + 5 ancestors (team, work, the temp dir, /tmp, /) × 4, then 3 user.
    assert_eq!(all.len(), 6 * 4 + 3);
    let names: Vec<&str> = all[..4]
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            ".github/copilot-instructions.md",
            "AGENTS.md",
            "CLAUDE.md",
            ".claude/CLAUDE.md"
        ]
    );
    let user: Vec<&str> = all[24..]
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        user,
        [
            ".copilot/copilot-instructions.md",
            ".claude/CLAUDE.md",
            ".codex/AGENTS.md"
        ]
    );
    let found: Vec<String> = all
        .iter()
        .filter(|i| i["state"] != "missing")
        .map(|i| {
            format!(
                "{} {} {}",
                i["scope"].as_str().unwrap(),
                i["path"].as_str().unwrap(),
                i["bytes"]
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            "project [TMP]/work/team/proj/.github/copilot-instructions.md 24",
            "project [TMP]/work/team/proj/AGENTS.md 24",
            "project [TMP]/work/team/proj/CLAUDE.md 24",
            "project [TMP]/work/team/proj/.claude/CLAUDE.md 24",
            "ancestor [TMP]/work/team/AGENTS.md 19",
            "ancestor [TMP]/work/.github/copilot-instructions.md 20",
            "user [TMP]/home/.copilot/copilot-instructions.md 20",
            "user [TMP]/home/.codex/AGENTS.md 18",
        ]
    );
    assert!(all.iter().all(|i| i["applicability"] == "unknown"));
    // CLAUDE.local.md is a Claude Code candidate only.
    assert!(all.iter().all(|i| i["name"] != "CLAUDE.local.md"));
}

// ---- never printed, run or written ----

#[test]
fn canaries_never_appear_and_nothing_runs_or_changes() {
    let t = Tree::new();
    full(&t);
    let before = snapshot_files(&t);
    for r in [vscode(&t, true), vscode(&t, false)] {
        assert_eq!(r.code, 0, "{r}");
        assert!(!r.all().contains(CANARY), "canary leaked:\n{r}");
        assert!(!r.all().contains("${"), "a placeholder leaked:\n{r}");
    }
    // Broken sources around canaries leak nothing either.
    t.write(
        VSCODE_PROJECT,
        r#"{"servers": {"x": {"command": "CANARY-cmd", "args": ["CANARY-arg"]}}, "servers": 1}"#,
    );
    t.write(
        COPILOT_USER,
        r#"// CANARY-comment {"mcpServers": {"x": {"command": "CANARY"}}}"#,
    );
    for r in [vscode(&t, true), vscode(&t, false)] {
        assert_eq!(r.code, 1, "{r}");
        assert!(!r.all().contains(CANARY), "canary leaked:\n{r}");
    }
    assert!(
        !t.path(SENTINEL_MARKER).exists(),
        "a configured command was executed"
    );
    let after = snapshot_files(&t);
    for (k, v) in &before {
        if !k.ends_with("mcp.json") && !k.ends_with("mcp-config.json") {
            assert_eq!(after.get(k), Some(v), "{k} changed");
        }
    }
    // The sentinel really would have left its marker.
    let sentinel = t.path("bin/CANARY-sentinel");
    std::process::Command::new(sentinel).status().unwrap();
    assert!(t.path(SENTINEL_MARKER).exists());
}

/// Path → bytes of every regular file in the tree.
fn snapshot_files(t: &Tree) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![t.base.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p);
            } else if m.is_file() {
                out.insert(p.to_string_lossy().into_owned(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn human_output_sanitizes_names_and_json_keeps_them() {
    let t = Tree::new();
    t.write(
        VSCODE_PROJECT,
        "{\"servers\": {\"ansi\\u001b[31mred\": {\"command\": \"x\"}, \"bidi\\u202etxt\": {\"url\": \"u\"}}}",
    );
    let h = vscode(&t, false);
    assert!(!h.stdout.contains('\u{1b}') && !h.stdout.contains('\u{202e}'));
    assert!(h.stdout.contains("ansi\\u{1b}[31mred") && h.stdout.contains("bidi\\u{202e}txt"));
    let j = vscode(&t, true).json();
    assert_eq!(j["servers"][0]["name"], "ansi\u{1b}[31mred");
    assert_eq!(j["servers"][1]["name"], "bidi\u{202e}txt");
}

// ---- the contract ----

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct Document {
    schema_version: u32,
    tool: Value,
    client: String,
    root: Value,
    inventory_complete: bool,
    sources: Vec<Source>,
    servers: Vec<Server>,
    instructions: Vec<Value>,
    coverage: Coverage,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct Source {
    scope: String,
    origin: String,
    path: String,
    container: String,
    state: String,
    reason: Option<String>,
    server_count: usize,
    format: String,
    parser: String,
    uninterpreted_root_fields: Value,
    #[serde(default)]
    position: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct Server {
    name: String,
    scope: String,
    origin: String,
    format: String,
    path: String,
    configured: bool,
    shape: Value,
    launch: String,
    guard_form: String,
    same_name_in: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Coverage {
    not_examined: Vec<String>,
    unknown: Vec<String>,
}

#[test]
fn output_matches_the_vscode_contract() {
    let t = Tree::new();
    full(&t);
    t.write(COPILOT_USER, "{");
    let r = vscode(&t, true);
    let doc: Document = serde_json::from_str(&r.stdout).expect("deny_unknown_fields");
    assert_eq!((doc.schema_version, doc.client.as_str()), (1, "vscode"));
    assert!(!doc.inventory_complete);
    let origins: Vec<&str> = doc.sources.iter().map(|s| s.origin.as_str()).collect();
    assert_eq!(
        origins,
        [
            "vscode-project",
            "copilot-project",
            "vscode-user",
            "copilot-user"
        ]
    );
    for s in &doc.sources {
        assert_eq!(s.scope, s.origin);
        assert!(["json", "jsonc"].contains(&s.parser.as_str()));
        let rf = &s.uninterpreted_root_fields;
        assert!(rf.is_boolean() || rf == "unknown", "{rf}");
        let n = doc.servers.iter().filter(|v| v.origin == s.origin).count();
        assert_eq!(n, s.server_count);
    }
    assert_eq!(doc.sources[3].uninterpreted_root_fields, "unknown");
    assert_eq!(doc.sources[3].parser, "json");
    assert_eq!(doc.sources[0].parser, "jsonc");
    for v in &doc.servers {
        assert_eq!(v.scope, v.origin);
        assert!(!v.same_name_in.contains(&v.origin));
    }
    assert_eq!(
        doc.coverage.unknown,
        [
            "host-version",
            "selected-profile",
            "forwarding",
            "effective-selection",
            "loading",
            "enforcement"
        ]
    );
    for id in [
        "named-profiles",
        "insiders",
        "portable-installs",
        "remote",
        "copilot-home-override",
        "xdg-config-home-override",
        "code-workspace-settings",
        "dev-containers",
        "instructions-files",
    ] {
        assert!(doc.coverage.not_examined.iter().any(|n| n == id), "{id}");
    }
}
