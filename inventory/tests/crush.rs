//! The Crush profile (`--client crush`, as Crush 0.87.0 loads its JSON configuration): every file
//! position in precedence order, the data directory's `crush.json`, the project levels up to the
//! nearest `.git`, same-name shadowing, the entry grammar (`type` required), strict JSON with a
//! zero-length file allowed, bad files, and `--fail-on project-server` over the levels Crush reads.

use serde_json::{json, Value};

use crate::clients::{gate, source};
use crate::fixtures::CANARY;
use crate::util::{Tree, ROOT};

fn root(rel: &str) -> String {
    format!("{ROOT}/{rel}")
}

/// `(scope, path, state)` of every source.
fn sources(j: &Value) -> Vec<(String, String, String)> {
    let text = |s: &Value, k: &str| s[k].as_str().unwrap().to_owned();
    let all = j["sources"].as_array().unwrap();
    all.iter()
        .map(|s| (text(s, "scope"), text(s, "path"), text(s, "state")))
        .collect()
}

/// The row named `name` from the source of `scope`.
fn row<'a>(j: &'a Value, scope: &str, name: &str) -> &'a Value {
    let rows = j["servers"].as_array().unwrap();
    let found = rows
        .iter()
        .find(|s| s["scope"] == scope && s["name"] == name);
    found.unwrap_or_else(|| panic!("no {scope}/{name} row in {j}"))
}

/// Each `(scope, state, reason)` holds for `j`'s sources (`reason` "" for none).
fn assert_states(j: &Value, want: &[(&str, &str, &str)]) {
    for (scope, state, reason) in want {
        let s = source(j, scope);
        let got = (
            s["state"].as_str().unwrap(),
            s["reason"].as_str().unwrap_or(""),
        );
        assert_eq!(got, (*state, *reason), "{scope}");
    }
}

fn one(name: &str) -> String {
    format!(r#"{{"mcp":{{"{name}":{{"type":"stdio","command":"npx","args":["CANARY-{name}"]}}}}}}"#)
}

/// Every position Crush 0.87.0 reads, for a root one level below the `.git` holder
/// (`work/team`), each declaring its own server and a shared `s`.
fn every_position(t: &Tree) {
    t.mkdir("work/team/.git");
    let both = |own: &str| {
        format!(
            r#"{{"mcp":{{"{own}":{{"type":"stdio","command":"npx"}},"s":{{"type":"http","url":"https://CANARY.example/{own}"}}}}}}"#
        )
    };
    for (path, own) in [
        (root(".crush/crush.json"), "ws"),
        (root("crush.json"), "p"),
        (root(".crush.json"), "pd"),
        ("work/team/crush.json".to_owned(), "a"),
        ("work/team/.crush.json".to_owned(), "ad"),
        ("home/.local/share/crush/crush.json".to_owned(), "d"),
        ("home/.config/crush/crush.json".to_owned(), "g"),
        ("system/etc/crush/crush.json".to_owned(), "sys"),
    ] {
        t.write(&path, both(own));
    }
}

#[test]
fn crush_reads_every_position_in_precedence_order() {
    let t = Tree::new();
    every_position(&t);
    let out = t.run_client("crush", true, None);
    assert_eq!(out.code, 0, "{out}");
    let j = out.json();
    assert_eq!(j["client"], "crush");
    let want = [
        ("workspace", "[TMP]/work/team/proj/.crush/crush.json"),
        ("project", "[TMP]/work/team/proj/crush.json"),
        ("project-dotfile", "[TMP]/work/team/proj/.crush.json"),
        ("ancestor", "[TMP]/work/team/crush.json"),
        ("ancestor-dotfile", "[TMP]/work/team/.crush.json"),
        ("data", "[TMP]/home/.local/share/crush/crush.json"),
        ("global", "[TMP]/home/.config/crush/crush.json"),
        ("system", "[TMP]/system/etc/crush/crush.json"),
    ]
    .map(|(s, p)| (s.to_owned(), p.to_owned(), "present".to_owned()));
    assert_eq!(sources(&j), want);
    for s in j["sources"].as_array().unwrap() {
        assert_eq!(
            (s["parser"].as_str(), s["container"].as_str()),
            (Some("json"), Some("mcp"))
        );
        assert_eq!(s["serverCount"], 2, "{s}");
    }
    // Rows by source, then name; every own server is stdio via a package runner.
    assert_eq!(j["servers"].as_array().unwrap().len(), 16);
    assert_eq!(row(&j, "workspace", "ws")["launch"], "package-runner");
    assert_eq!(row(&j, "system", "s")["shape"]["transport"], "http");
    assert_eq!(row(&j, "global", "g")["enabled"], true);
    assert!(!out.all().contains(CANARY));
}

#[test]
fn crush_same_name_the_workspace_wins_then_the_nearest_level_then_crush_json() {
    let t = Tree::new();
    every_position(&t);
    let j = t.run_client("crush", true, None).json();
    let by = |scope: &str| row(&j, scope, "s")["possibleShadowedBy"].clone();
    assert_eq!(by("workspace"), json!([]));
    assert_eq!(by("project"), json!(["workspace"]));
    // Crush 0.87.0 lists crush.json after .crush.json in one directory and lets the later
    // file win: a directory's crush.json outranks its .crush.json.
    assert_eq!(by("project-dotfile"), json!(["workspace", "project"]));
    assert_eq!(
        by("ancestor"),
        json!(["workspace", "project", "project-dotfile"])
    );
    assert_eq!(
        by("system"),
        json!([
            "workspace",
            "project",
            "project-dotfile",
            "ancestor",
            "ancestor-dotfile",
            "data",
            "global"
        ])
    );
    assert_eq!(row(&j, "data", "d")["possibleShadowedBy"], json!([]));
}

#[test]
fn crush_project_levels_stop_at_the_nearest_git_or_at_the_root() {
    // Without a .git anywhere the project is the root alone: nothing above it is read.
    let t = Tree::new();
    t.write("work/team/crush.json", one("up"));
    t.write("work/crush.json", one("top"));
    let j = t.run_client("crush", true, None).json();
    let scopes: Vec<String> = sources(&j).into_iter().map(|(s, _, _)| s).collect();
    assert_eq!(
        scopes,
        [
            "workspace",
            "project",
            "project-dotfile",
            "data",
            "global",
            "system"
        ]
    );
    assert_eq!(j["servers"], json!([]));
    // A .git two levels up: the root and both ancestors are project levels, nearest first.
    t.mkdir("work/.git");
    let j = t.run_client("crush", true, None).json();
    let ancestors: Vec<(String, String)> = sources(&j)
        .into_iter()
        .filter(|(s, _, _)| s.starts_with("ancestor"))
        .map(|(s, p, _)| (s, p))
        .collect();
    assert_eq!(
        ancestors,
        [
            ("ancestor", "[TMP]/work/team/crush.json"),
            ("ancestor-dotfile", "[TMP]/work/team/.crush.json"),
            ("ancestor", "[TMP]/work/crush.json"),
            ("ancestor-dotfile", "[TMP]/work/.crush.json"),
        ]
        .map(|(s, p)| (s.to_owned(), p.to_owned()))
    );
    let names: Vec<&str> = j["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["up", "top"]);
}

#[test]
fn crush_workspace_file_is_in_the_nearest_crush_directory_up_to_the_git_level() {
    let t = Tree::new();
    t.mkdir("work/team/.git");
    t.write("work/team/.crush/crush.json", one("w"));
    let j = t.run_client("crush", true, None).json();
    let ws = source(&j, "workspace");
    assert_eq!(ws["path"], "[TMP]/work/team/.crush/crush.json");
    assert_eq!(row(&j, "workspace", "w")["possibleShadowedBy"], json!([]));
    // A .crush at the root is nearer.
    t.mkdir(&root(".crush"));
    let j = t.run_client("crush", true, None).json();
    assert_eq!(
        source(&j, "workspace")["path"],
        "[TMP]/work/team/proj/.crush/crush.json"
    );
    assert_eq!(source(&j, "workspace")["state"], "missing");
    // A .crush above the .git level is outside the project: the root's is used.
    let t = Tree::new();
    t.write("work/.crush/crush.json", one("w"));
    let j = t.run_client("crush", true, None).json();
    assert_eq!(
        source(&j, "workspace")["path"],
        "[TMP]/work/team/proj/.crush/crush.json"
    );
    assert_eq!(j["servers"], json!([]));
}

#[test]
fn crush_entries_need_a_type_and_a_stored_token_alone_is_no_server() {
    let t = Tree::new();
    t.write(
        "home/.config/crush/crush.json",
        r#"{"mcp":{
            "a-none":{"command":"npx"},
            "b-stdio":{"type":"stdio"},
            "c-ws":{"type":"ws","url":"wss://CANARY"},
            "d-http":{"type":"http"},
            "e-sse":{"type":"sse","url":"https://CANARY","headers":{"CANARY-H":"v"},"disabled":true},
            "f-token":{"oauth_token":{"access_token":"CANARY-tok"}},
            "g-bad":{"type":1,"command":"x","args":"CANARY","timeout":"10","disabled_tools":[1]}
        }}"#,
    );
    let out = t.run_client("crush", true, None);
    assert_eq!(out.code, 0, "{out}");
    let j = out.json();
    let problems = |name: &str| row(&j, "global", name)["shape"]["problems"].clone();
    assert_eq!(problems("a-none"), json!(["missing-type"]));
    assert_eq!(problems("b-stdio"), json!(["missing-command"]));
    assert_eq!(problems("c-ws"), json!(["unsupported-type"]));
    assert_eq!(problems("d-http"), json!(["missing-url"]));
    assert_eq!(problems("e-sse"), json!([]));
    let sse = row(&j, "global", "e-sse");
    assert_eq!(
        (&sse["shape"]["transport"], &sse["shape"]["headerCount"]),
        (&json!("sse"), &json!(1))
    );
    assert_eq!(sse["enabled"], false);
    let token = row(&j, "global", "f-token");
    assert_eq!(
        (&token["shape"]["valid"], &token["launch"]),
        (&json!(true), &json!("unknown"))
    );
    assert_eq!(
        problems("g-bad"),
        json!([
            "type-not-string",
            "invalid-args",
            "invalid-disabled-tools",
            "invalid-timeout"
        ])
    );
    assert!(!out.all().contains(CANARY));
}

#[test]
fn crush_reads_strict_json_and_a_zero_length_file_declares_nothing() {
    let t = Tree::new();
    t.write(&root("crush.json"), "");
    t.write(&root(".crush.json"), "// CANARY\n{}");
    t.write("home/.config/crush/crush.json", "{\"mcp\":{},}");
    t.write("home/.local/share/crush/crush.json", "\u{feff}{}");
    t.write(
        &root(".crush/crush.json"),
        r#"{"mcp":{"x":{"type":"stdio","command":"a"},"x":{"type":"stdio","command":"b"}}}"#,
    );
    let out = t.run_client("crush", true, None);
    assert_eq!(out.code, 1, "{out}");
    let j = out.json();
    assert_states(
        &j,
        &[
            ("project", "present", ""),
            ("project-dotfile", "malformed", "comment"),
            ("global", "malformed", "trailing-comma"),
            ("data", "malformed", "byte-order-mark"),
            ("workspace", "malformed", "duplicate-key"),
        ],
    );
    assert_eq!(source(&j, "global")["position"]["line"], 1);
    // `mcp` of the wrong type, and a root that is not an object.
    t.write(&root(".crush.json"), r#"{"mcp":[]}"#);
    t.write("home/.config/crush/crush.json", "[]");
    let j = t.run_client("crush", true, None).json();
    assert_eq!(
        source(&j, "project-dotfile")["reason"],
        "wrong-container-type"
    );
    assert_eq!(source(&j, "global")["reason"], "wrong-container-type");
    assert!(!t.run_client("crush", false, None).all().contains(CANARY));
}

#[test]
fn crush_too_large_and_symlinked_files_are_not_read() {
    let t = Tree::new();
    t.write(&root("crush.json"), vec![b' '; 1024 * 1024 + 1]);
    t.write("elsewhere/real.json", one("hidden"));
    t.symlink(t.path("elsewhere/real.json"), &root(".crush.json"));
    t.symlink(t.path("elsewhere"), &root(".crush"));
    let out = t.run_client("crush", true, None);
    assert_eq!(out.code, 1, "{out}");
    let j = out.json();
    // A symlinked data directory: its crush.json is never opened through the link.
    assert_states(
        &j,
        &[
            ("project", "too-large", "exceeds-read-limit"),
            ("project-dotfile", "symlink-skipped", "symlink"),
            ("workspace", "symlink-skipped", "symlink-in-path"),
        ],
    );
    assert_eq!(j["servers"], json!([]));
}

#[test]
fn crush_project_server_counts_every_level_crush_reads_as_the_project() {
    // `--fail-on project-server --json` for Crush on a tree whose `.git` is at `work/team`.
    let gate = |files: &[(&str, &str)]| gate(files, "crush");
    let up = one("up");
    for file in [
        "work/team/crush.json",
        "work/team/.crush.json",
        "work/team/.crush/crush.json",
        "work/team/proj/.crush/crush.json",
        "work/team/proj/.crush.json",
    ] {
        let (code, fail_on, r) = gate(&[(file, &up)]);
        assert_eq!(code, 3, "{file}: {r}");
        assert_eq!(fail_on["met"], json!(["project-server"]), "{file}");
    }
    // The user's and the data files are not the project's.
    for file in [
        "home/.config/crush/crush.json",
        "home/.local/share/crush/crush.json",
    ] {
        let (code, fail_on, r) = gate(&[(file, &up)]);
        assert_eq!(code, 0, "{file}: {r}");
        assert_eq!(fail_on["met"], json!([]));
    }
    // An ancestor level mcpscope cannot inventory leaves the condition open.
    let (code, fail_on, r) = gate(&[("work/team/crush.json", "{")]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(fail_on["undecided"], json!(["project-server"]));
    // `--client all` counts Crush's levels too.
    let t = Tree::new();
    t.mkdir("work/team/.git");
    t.write("work/team/crush.json", &up);
    let r = t.run(&[".", "--client", "all", "--fail-on", "project-server"]);
    assert_eq!(r.code, 3, "{r}");
}

#[test]
fn crush_reads_at_most_64_project_levels_and_says_so() {
    let t = Tree::new();
    t.mkdir(&root(".git"));
    let rel: Vec<String> = (1..=70).map(|i| format!("l{i:02}")).collect();
    let deep = t.path(&root(&rel.join("/")));
    std::fs::create_dir_all(&deep).unwrap();
    t.write(&root("crush.json"), one("top"));
    let out = t.run_in(&deep, &[".", "--client", "crush", "--json"]);
    assert_eq!(out.code, 1, "{out}");
    let j = out.json();
    for scope in ["ancestor", "ancestor-dotfile"] {
        let levels: Vec<&Value> = j["sources"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["scope"] == scope)
            .collect();
        assert_eq!(levels.len(), 64, "{scope}");
        let past = levels[63];
        assert_eq!(
            (&past["state"], &past["reason"]),
            (&json!("too-large"), &json!("too-many-entries")),
            "{scope}"
        );
    }
    assert_eq!(j["servers"], json!([]));
    let gated = t.run_in(
        &deep,
        &[".", "--client", "crush", "--fail-on", "project-server"],
    );
    assert_eq!(gated.code, 1, "{gated}");
}

#[test]
fn crush_human_report_names_the_scopes_and_never_a_value() {
    let t = Tree::new();
    every_position(&t);
    let out = t.run_client("crush", false, None);
    assert_eq!(out.code, 0, "{out}");
    let words = [
        "Crush inventory",
        "workspace",
        "project-dotfile",
        "ancestor-dotfile",
        "possibly shadowed by",
    ];
    let missing: Vec<&str> = words
        .into_iter()
        .filter(|w| !out.stdout.contains(w))
        .collect();
    assert!(missing.is_empty(), "{missing:?} not in {out}");
    assert!(!out.all().contains(CANARY));
    assert!(!out.all().contains("https://"));
}
