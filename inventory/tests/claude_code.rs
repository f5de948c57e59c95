//! The Claude Code profile: every scope, shadowing, project-key ambiguity
//! and managed exclusivity. The managed location is injected through the
//! library `Host` (the binary always uses /etc/claude-code).

use serde_json::Value;

use crate::fixtures;
use crate::util::Tree;

fn names_by_scope(j: &Value) -> Vec<(String, String)> {
    j["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["scope"].as_str().unwrap().into(),
                s["name"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn full_fixture_with_managed_json() {
    let t = Tree::new();
    fixtures::full(&t);
    let r = t.run_lib(true);
    assert_eq!(r.code, 0, "{r}");
    snapshot!("full_fixture_json", r);
}

#[test]
fn full_fixture_with_managed_human() {
    let t = Tree::new();
    fixtures::full(&t);
    snapshot!("full_fixture_human", t.run_lib(false));
}

#[test]
fn servers_are_ordered_by_scope_then_name_with_shadowing_and_exclusion() {
    let t = Tree::new();
    fixtures::full(&t);
    let j = t.run_lib(true).json();
    let got = names_by_scope(&j);
    let want: Vec<(String, String)> = [
        ("local", "local-http"),
        ("local", "shared"),
        ("project", "broken-env"),
        ("project", "broken-string"),
        ("project", "broken-type"),
        ("project", "project-script"),
        ("project", "project-sse"),
        ("project", "shared"),
        ("user", "shared"),
        ("user", "user-docker"),
        ("user", "user-ws"),
        ("managed", "corp-gateway"),
        ("managed", "shared"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
    for s in j["servers"].as_array().unwrap() {
        let (scope, name) = (s["scope"].as_str().unwrap(), s["name"].as_str().unwrap());
        let shadow: Vec<&str> = s["possibleShadowedBy"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let want_shadow: &[&str] = match (scope, name) {
            ("project", "shared") => &["local"],
            ("user", "shared") => &["local", "project"],
            _ => &[],
        };
        assert_eq!(shadow, want_shadow, "{scope}/{name}");
        let excluded = s["possiblyExcludedBy"].as_array().unwrap();
        if scope == "managed" {
            assert!(excluded.is_empty());
        } else {
            assert_eq!(excluded, &vec![Value::from("managed")], "{scope}/{name}");
        }
    }
}

#[test]
fn without_managed_nothing_is_excluded() {
    let t = Tree::new();
    fixtures::full(&t);
    std::fs::remove_file(t.path("managed/managed-mcp.json")).unwrap();
    let j = t.run_lib(true).json();
    assert_eq!(j["sources"][3]["state"], "missing");
    for s in j["servers"].as_array().unwrap() {
        assert_eq!(s["possiblyExcludedBy"], serde_json::json!([]));
    }
}

#[test]
fn a_managed_file_that_exists_in_any_form_possibly_excludes() {
    // Claude Code may honour a managed file mcpscope cannot interpret.
    for (what, setup) in [
        (
            "malformed",
            (|t: &Tree| t.write("managed/managed-mcp.json", "{")) as fn(&Tree),
        ),
        ("symlink", |t: &Tree| {
            t.symlink("elsewhere.json", "managed/managed-mcp.json")
        }),
        ("empty-object", |t: &Tree| {
            t.write("managed/managed-mcp.json", "{}")
        }),
    ] {
        let t = Tree::new();
        t.write(
            "work/team/proj/.mcp.json",
            r#"{"mcpServers":{"p":{"command":"x"}}}"#,
        );
        setup(&t);
        let j = t.run_lib(true).json();
        assert_eq!(
            j["servers"][0]["possiblyExcludedBy"],
            serde_json::json!(["managed"]),
            "{what}"
        );
    }
}

#[test]
fn ambiguous_project_key_makes_local_malformed_and_lists_none_of_it() {
    let t = Tree::new();
    t.symlink(t.path("work/team"), "alias");
    let canonical = t.root();
    let explicit = t.path("alias/proj");
    t.write(
        "home/.claude.json",
        format!(
            r#"{{"projects": {{
  "{}": {{"mcpServers": {{"from-canonical": {{"command": "x"}}}}}},
  "{}": {{"mcpServers": {{"from-explicit": {{"command": "y"}}}}}}
}}, "mcpServers": {{"u": {{"command": "z"}}}}}}"#,
            canonical.display(),
            explicit.display()
        ),
    );
    let r = t.run_in(&t.base, &["alias/proj"]);
    assert_eq!(r.code, 1);
    snapshot!("ambiguous_project_key", r);
    let j = t.run_in(&t.base, &["alias/proj", "--json"]).json();
    assert_eq!(j["sources"][0]["state"], "malformed");
    assert_eq!(j["sources"][0]["reason"], "ambiguous-project-key");
    assert_eq!(j["sources"][0]["serverCount"], 0);
    // The user scope of the same file is still interpreted.
    assert_eq!(j["sources"][2]["state"], "present");
    assert_eq!(names_by_scope(&j), vec![("user".into(), "u".into())]);
}

#[test]
fn local_entries_are_found_under_the_explicit_spelling_alone() {
    let t = Tree::new();
    t.symlink(t.path("work/team"), "alias");
    t.write(
        "home/.claude.json",
        format!(
            r#"{{"projects": {{"{}": {{"mcpServers": {{"via-alias": {{"command": "x"}}}}}}}}}}"#,
            t.path("alias/proj").display()
        ),
    );
    let j = t.run_in(&t.base, &["alias/proj", "--json"]).json();
    assert_eq!(j["sources"][0]["state"], "present");
    assert_eq!(
        j["sources"][0]["container"],
        "projects[[TMP]/alias/proj].mcpServers"
    );
    assert_eq!(
        names_by_scope(&j),
        vec![("local".into(), "via-alias".into())]
    );
    // Through the canonical spelling, the alias key is not searched.
    let j = t.run_in(&t.base, &["work/team/proj", "--json"]).json();
    assert_eq!(
        j["sources"][0]["container"],
        "projects[[TMP]/work/team/proj].mcpServers"
    );
    assert_eq!(j["sources"][0]["serverCount"], 0);
}

#[test]
fn claude_json_container_shapes() {
    let cases: &[(&str, &str, &str, &str)] = &[
        // (file, local state/reason, user state/reason, label)
        (r#"{}"#, "present", "present", "no containers"),
        (
            r#"{"projects": []}"#,
            "malformed/wrong-container-type",
            "present",
            "projects not object",
        ),
        (
            r#"{"mcpServers": null}"#,
            "present",
            "malformed/wrong-container-type",
            "user container null",
        ),
        (
            r#"[]"#,
            "malformed/wrong-container-type",
            "malformed/wrong-container-type",
            "top-level array",
        ),
        (
            r#"{"projects": {"ROOT": 1}}"#,
            "malformed/wrong-container-type",
            "present",
            "project entry not object",
        ),
        (
            r#"{"projects": {"ROOT": {}}}"#,
            "present",
            "present",
            "project entry without mcpServers",
        ),
        (
            r#"{"projects": {"ROOT": {"mcpServers": "x"}}}"#,
            "malformed/wrong-container-type",
            "present",
            "mcpServers string",
        ),
    ];
    for (file, local, user, label) in cases {
        let t = Tree::new();
        t.write(
            "home/.claude.json",
            file.replace("ROOT", t.root().to_str().unwrap()),
        );
        let j = t.run(&[".", "--json"]).json();
        let st = |i: usize| {
            let s = &j["sources"][i];
            match s["reason"].as_str() {
                Some(r) => format!("{}/{}", s["state"].as_str().unwrap(), r),
                None => s["state"].as_str().unwrap().to_owned(),
            }
        };
        assert_eq!((st(0).as_str(), st(2).as_str()), (*local, *user), "{label}");
    }
}

#[test]
fn malformed_entries_stay_visible_by_name() {
    let t = Tree::new();
    t.write(
        "work/team/proj/.mcp.json",
        r#"{"mcpServers":{"n":null,"a":[1],"s":"str","o":{"command":["x"]},"ok":{"command":"x"}}}"#,
    );
    let j = t.run(&[".", "--json"]).json();
    assert_eq!(j["sources"][1]["serverCount"], 5);
    let rows: Vec<(String, bool)> = j["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().into(),
                s["shape"]["valid"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("a", false),
            ("n", false),
            ("o", false),
            ("ok", true),
            ("s", false)
        ]
        .map(|(n, v)| (n.to_string(), v))
    );
}
