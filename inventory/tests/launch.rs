//! The Claude Code launch prediction beyond the native matrix: rules the
//! native reference has not exercised (the managed allow list, deny entries
//! not by name, keys of the wrong type, unusable settings files), the
//! `validatedAgainst` they earn, the plain-words report, and that nothing but
//! the approval, trust and policy keys of a settings file reaches the output.

use serde_json::Value;

use crate::util::{Tree, ROOT};

const CANARY: &str = "CANARY-SETTINGS-VALUE-5e1f";

fn stdio() -> String {
    r#"{"command": "/bin/true"}"#.to_owned()
}

/// `.mcp.json` with project servers `names`.
fn project(t: &Tree, names: &[&str]) {
    let body: Vec<String> = names
        .iter()
        .map(|n| format!("\"{n}\": {}", stdio()))
        .collect();
    t.write(
        &format!("{ROOT}/.mcp.json"),
        format!("{{\"mcpServers\": {{{}}}}}", body.join(", ")),
    );
}

fn row<'j>(j: &'j Value, scope: &str, name: &str) -> &'j Value {
    j["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scope"] == scope && s["name"] == name)
        .unwrap_or_else(|| panic!("no {scope}/{name} in {}", j["servers"]))
}

/// (list, headless, validatedAgainst) of a row.
fn predicted(j: &Value, scope: &str, name: &str) -> (String, String, Value) {
    let p = &row(j, scope, name)["predictedLaunch"];
    (
        p["list"].as_str().unwrap().to_owned(),
        p["headless"].as_str().unwrap().to_owned(),
        p["validatedAgainst"].clone(),
    )
}

fn approval(j: &Value, name: &str) -> (String, Value) {
    let a = &row(j, "project", name)["approval"];
    (a["state"].as_str().unwrap().to_owned(), a["by"].clone())
}

fn validated() -> Value {
    Value::from("2.1.327")
}

#[test]
fn the_managed_allow_list_excludes_unlisted_servers_unvalidated() {
    let t = Tree::new();
    project(&t, &["a", "b"]);
    t.write(
        "managed/managed-settings.json",
        r#"{"allowedMcpServers": [{"serverName": "a"}], "enableAllProjectMcpServers": true}"#,
    );
    let j = t.run_lib(true).json();
    assert_eq!(
        predicted(&j, "project", "a"),
        ("launch".into(), "launch".into(), validated())
    );
    assert_eq!(
        predicted(&j, "project", "b"),
        ("excluded".into(), "excluded".into(), Value::Null)
    );
}

#[test]
fn a_deny_entry_not_by_name_is_not_read_and_makes_every_row_unknown() {
    let t = Tree::new();
    project(&t, &["a"]);
    t.write(
        "home/.claude.json",
        format!(r#"{{"mcpServers": {{"u": {}}}}}"#, stdio()),
    );
    t.write(
        "managed/managed-settings.json",
        format!(r#"{{"deniedMcpServers": [{{"serverCommand": ["{CANARY}"]}}]}}"#),
    );
    let r = t.run_lib(true);
    let j = r.json();
    for (scope, name) in [("project", "a"), ("user", "u")] {
        assert_eq!(
            predicted(&j, scope, name),
            ("unknown".into(), "unknown".into(), Value::Null),
            "{scope}/{name}"
        );
    }
    assert!(!r.all().contains(CANARY));
    assert!(!t.run_lib(false).all().contains(CANARY));
}

#[test]
fn a_deny_entry_by_name_excludes_that_name_in_every_scope() {
    let t = Tree::new();
    project(&t, &["same", "other"]);
    t.write(
        "home/.claude.json",
        format!(r#"{{"mcpServers": {{"same": {}}}}}"#, stdio()),
    );
    t.write(
        "managed/managed-settings.json",
        r#"{"deniedMcpServers": [{"serverName": "same"}]}"#,
    );
    let j = t.run_lib(true).json();
    // Observed for a project server; for the user one it is the same rule, not yet observed.
    assert_eq!(
        predicted(&j, "project", "same"),
        ("excluded".into(), "excluded".into(), validated())
    );
    assert_eq!(
        predicted(&j, "user", "same"),
        ("excluded".into(), "excluded".into(), Value::Null)
    );
    assert_eq!(
        predicted(&j, "project", "other"),
        ("pending".into(), "launch".into(), validated())
    );
}

#[test]
fn a_key_of_the_wrong_type_makes_the_approval_unknown_by_that_file() {
    let t = Tree::new();
    project(&t, &["p1"]);
    t.write(
        "home/.claude/settings.json",
        r#"{"enabledMcpjsonServers": 5}"#,
    );
    let j = t.run_lib(true).json();
    let by = "[TMP]/home/.claude/settings.json";
    assert_eq!(approval(&j, "p1"), ("unknown".into(), Value::from(by)));
    assert_eq!(predicted(&j, "project", "p1").0, "unknown");
}

#[test]
fn trust_of_the_wrong_type_leaves_a_trust_gated_approval_unknown_only() {
    let t = Tree::new();
    project(&t, &["p1", "p2"]);
    let root = t.root();
    t.write(
        "home/.claude.json",
        format!(
            r#"{{"projects": {{"{}": {{"hasTrustDialogAccepted": "yes"}}}}}}"#,
            root.display()
        ),
    );
    t.write(
        &format!("{ROOT}/.claude/settings.json"),
        r#"{"enabledMcpjsonServers": ["p1"]}"#,
    );
    let j = t.run_lib(true).json();
    assert_eq!(approval(&j, "p1").0, "unknown");
    // Nothing would approve p2 even with trust.
    assert_eq!(approval(&j, "p2"), ("pending".into(), Value::Null));
}

#[test]
fn an_unusable_managed_settings_file_makes_everything_unknown() {
    let t = Tree::new();
    project(&t, &["p1"]);
    t.write(
        "home/.claude.json",
        format!(r#"{{"mcpServers": {{"u": {}}}}}"#, stdio()),
    );
    t.mkdir("managed/managed-settings.json");
    let j = t.run_lib(true).json();
    assert_eq!(predicted(&j, "user", "u").0, "unknown");
    let (state, by) = approval(&j, "p1");
    assert_eq!(state, "unknown");
    assert!(by
        .as_str()
        .unwrap()
        .ends_with("managed/managed-settings.json"));
    // The inventory itself stays complete: a settings file is not a server source.
    assert_eq!(j["inventoryComplete"], true);
}

#[test]
fn rejection_and_trust_gated_approval_in_plain_words() {
    let t = Tree::new();
    project(&t, &["p1", "p2", "p3"]);
    let root = t.root();
    t.write(
        "home/.claude.json",
        format!(
            r#"{{"projects": {{"{}": {{"hasTrustDialogAccepted": true, "disabledMcpjsonServers": ["p3"]}}}}}}"#,
            root.display()
        ),
    );
    t.write(
        &format!("{ROOT}/.claude/settings.local.json"),
        format!(r#"{{"enabledMcpjsonServers": ["p1"], "env": {{"TOKEN": "{CANARY}"}}}}"#),
    );
    let r = t.run_lib(false);
    let out = r.all();
    let block = |name: &str| {
        let start = out.find(&format!("    {name}\n")).unwrap();
        out[start..].lines().take(4).collect::<Vec<_>>().join("\n")
    };
    let p1 = block("p1");
    assert!(
        p1.contains("approval: approved by [TMP]/work/team/proj/.claude/settings.local.json"),
        "{p1}"
    );
    assert!(
        p1.contains("launches: runs in mcp list/get (health check) and in headless sessions")
            && !p1.contains("without approval"),
        "{p1}"
    );
    let p2 = block("p2");
    assert!(p2.contains("approval: pending"), "{p2}");
    assert!(
        p2.contains("runs in headless sessions without approval"),
        "{p2}"
    );
    let p3 = block("p3");
    assert!(
        p3.contains("approval: rejected by [TMP]/home/.claude.json"),
        "{p3}"
    );
    assert!(
        p3.contains("launches: never runs: rejected for this project"),
        "{p3}"
    );
    assert!(
        out.contains("\n  launches: what `claude mcp list`"),
        "{out}"
    );
    assert!(!out.contains(CANARY));
    assert!(!t.run_lib(true).all().contains(CANARY));
}

#[test]
fn an_sse_server_is_predicted_but_not_validated() {
    let t = Tree::new();
    t.write(
        "home/.claude.json",
        r#"{"mcpServers": {"s": {"type": "sse", "url": "https://example.invalid/sse"}}}"#,
    );
    let j = t.run_lib(true).json();
    assert_eq!(
        predicted(&j, "user", "s"),
        ("launch".into(), "launch".into(), Value::Null)
    );
}

#[test]
fn a_pending_project_server_loses_to_a_user_one_in_list_only() {
    let t = Tree::new();
    project(&t, &["same"]);
    t.write(
        "home/.claude.json",
        format!(r#"{{"mcpServers": {{"same": {}}}}}"#, stdio()),
    );
    let j = t.run_lib(true).json();
    assert_eq!(
        predicted(&j, "project", "same"),
        ("shadowed".into(), "launch".into(), validated())
    );
    assert_eq!(
        predicted(&j, "user", "same"),
        ("launch".into(), "shadowed".into(), validated())
    );
    // An unknown project approval makes the user row's fate unknown too.
    t.write("home/.claude/settings.json", "{,}");
    let j = t.run_lib(true).json();
    assert_eq!(predicted(&j, "project", "same").0, "unknown");
    assert_eq!(predicted(&j, "user", "same").0, "unknown");
    assert_eq!(predicted(&j, "user", "same").1, "unknown");
}
