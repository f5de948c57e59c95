//! The DSH profile (`--client dsh`) through the real binary: the six layers in order,
//! the shadow chain (name, normalized name, identity; disabled placeholders hold keys,
//! `enabled: false` holds none), the YAML managed block and its refusals, `--dsh-profile`,
//! the contract (deny_unknown_fields), and the never-print rules (canaries, sentinel).

use serde::Deserialize;

use crate::fixtures::{plant_sentinel, CANARY, SENTINEL_MARKER};
use crate::util::{Tree, ROOT};

const BEGIN: &str = "# >>> dsh-project-mcp-manager:mcp:begin";
const END: &str = "# <<< dsh-project-mcp-manager:mcp:end";

fn dsh(t: &Tree, extra: &[&str]) -> crate::util::Transcript {
    t.run(&[&[".", "--client", "dsh"], extra].concat())
}

fn yml(rows: &str) -> String {
    format!("# CANARY outside the block: never read\nother: {{token: CANARY-outside}}\n{BEGIN}\n- insert:\n{rows}{END}\n")
}

/// Every layer present, with shadowing on each key, a disabled placeholder, a skipped row,
/// per-entry problems, `${VAR}` references; canaries in every sensitive value.
fn full(t: &Tree) -> String {
    let s = plant_sentinel(t);
    t.write(
        &format!("{ROOT}/.dsh/mcp.yml"),
        yml(&format!(
            r#"    - id: gitlab
      name: '@deepseek-ai/dsh-mcp-client'
      config:
        serverName: gitlab
        transport: stdio
        command: "{s}"
        args: ['-y', 'CANARY-arg-gitlab']
        env: {{CANARY_ENV: '${{CANARY_TOKEN}}'}}
        cwd: .
    - id: off
      disabled: true
      config:
        serverName: unity-mcp
"#
        )),
    );
    t.write(
        &format!("{ROOT}/.dsh/mcp.json"),
        format!(
            r#"{{"mcpServers": {{
  "sentry": {{"type": "streamable-http", "url": "https://CANARY-sentry.example/${{CANARY_PATH}}", "headers": {{"CANARY-H": "Bearer ${{CANARY_SENTRY}}"}}}},
  "legacy-sse": {{"type": "sse", "url": "https://CANARY-sse.example"}},
  "both": {{"command": "{s}", "url": "https://CANARY-both.example"}}
}}}}"#
        ),
    );
    t.write(
        &format!("{ROOT}/.mcp.json"),
        format!(
            r#"{{"mcpServers": {{
  "unityMCP": {{"command": "{s}", "args": ["CANARY-unity"]}},
  "gitlab-copy": {{"command": "{s}", "args": ["-y", "CANARY-arg-gitlab"], "env": {{"OTHER": "CANARY-other"}}}},
  "switched-off": {{"command": "{s}", "enabled": false}},
  "bad name": {{"command": "{s}"}}
}}}}"#
        ),
    );
    t.write(
        "home/.dsh/profiles/web/mcp.json",
        r#"{"mcpServers": {"sentry-mirror": {"httpUrl": "https://CANARY-sentry.example/${CANARY_PATH}"}}}"#,
    );
    t.write(
        "home/.dsh/mcp.yml",
        yml(&format!(
            "    - config: {{serverName: switched-off, command: \"{s}\", args: [CANARY-user-yml]}}\n"
        )),
    );
    t.write(
        "home/.dsh/mcp.json",
        format!(
            r#"{{"mcpServers": {{"gitlab": {{"command": "{s}", "args": ["CANARY-user"]}}, "solo": {{"command": "npx", "args": ["-y", "CANARY-solo"]}}}}}}"#
        ),
    );
    s
}

#[test]
fn full_fixture_json() {
    let t = Tree::new();
    full(&t);
    let r = dsh(&t, &["--json", "--dsh-profile", "web"]);
    assert_eq!(r.code, 0, "{r}");
    snapshot!("full_fixture_json", r);
}

#[test]
fn full_fixture_human() {
    let t = Tree::new();
    full(&t);
    snapshot!("full_fixture_human", dsh(&t, &[]));
}

#[test]
fn shadowing_on_every_key_with_the_earliest_winner() {
    let t = Tree::new();
    full(&t);
    let j = dsh(&t, &["--json", "--dsh-profile", "web"]).json();
    let row = |scope: &str, name: &str| {
        j["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["scope"] == scope && s["name"] == name)
            .unwrap_or_else(|| panic!("{scope} {name}"))
            .clone()
    };
    let by = |scope: &str, key: &str, name: &str| serde_json::json!({"scope": scope, "key": key, "name": name});
    assert_eq!(
        row("dsh-project", "gitlab")["shadowedBy"],
        serde_json::Value::Null
    );
    assert_eq!(row("dsh-project", "gitlab")["active"], true);
    // A disabled placeholder holds name and normalized name (no command: no identity).
    let p = row("dsh-project", "unity-mcp");
    assert_eq!(
        (p["active"].clone(), p["disabled"].clone()),
        (false.into(), true.into())
    );
    assert_eq!(p["claims"], serde_json::json!(["name", "normalized-name"]));
    assert_eq!(
        row("cc-project", "unityMCP")["shadowedBy"],
        by("dsh-project", "normalized-name", "unity-mcp")
    );
    // Same command + args, different env: identity.
    assert_eq!(
        row("cc-project", "gitlab-copy")["shadowedBy"],
        by("dsh-project", "identity", "gitlab")
    );
    assert_eq!(
        row("dsh-user", "gitlab")["shadowedBy"],
        by("dsh-project", "name", "gitlab")
    );
    // url in one layer, httpUrl in another: one identity.
    assert_eq!(
        row("dsh-profile-user", "sentry-mirror")["shadowedBy"],
        by("dsh-project-json", "identity", "sentry")
    );
    // enabled: false holds nothing, so the user-layer row of that name surfaces.
    let off = row("cc-project", "switched-off");
    assert_eq!(
        (off["skipped"].clone(), off["active"].clone()),
        (true.into(), false.into())
    );
    assert_eq!(off["claims"], serde_json::json!([]));
    assert_eq!(row("dsh-user-yml", "switched-off")["active"], true);
    // Entry problems hold nothing either.
    assert_eq!(
        row("dsh-project-json", "legacy-sse")["shape"]["problems"],
        serde_json::json!(["sse-unsupported"])
    );
    assert_eq!(
        row("dsh-project-json", "both")["shape"]["problems"],
        serde_json::json!(["command-and-url-without-type"])
    );
    assert_eq!(
        row("cc-project", "bad name")["shape"]["problems"],
        serde_json::json!(["invalid-name"])
    );
    // ${VAR} references are counted.
    assert_eq!(row("dsh-project", "gitlab")["placeholderCount"], 1);
    assert_eq!(row("dsh-project-json", "sentry")["placeholderCount"], 2);
    assert_eq!(row("dsh-user", "solo")["active"], true);
}

#[test]
fn sources_are_the_layers_in_order_and_the_profile_layer_only_when_named() {
    let t = Tree::new();
    let scopes = |j: &serde_json::Value| -> Vec<String> {
        j["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["scope"].as_str().unwrap().to_owned())
            .collect()
    };
    let j = dsh(&t, &["--json"]).json();
    assert_eq!(
        scopes(&j),
        [
            "dsh-project",
            "dsh-project-json",
            "cc-project",
            "dsh-user-yml",
            "dsh-user"
        ]
    );
    assert_eq!(j["coverage"]["notExamined"][0], "dsh-profile-user");
    assert_eq!(j["instructions"], serde_json::json!([]));
    let j = dsh(&t, &["--json", "--dsh-profile", "web"]).json();
    assert_eq!(scopes(&j)[3], "dsh-profile-user");
    assert_eq!(
        j["sources"][3]["path"],
        "[TMP]/home/.dsh/profiles/web/mcp.json"
    );
    assert!(!j["coverage"]["notExamined"]
        .as_array()
        .unwrap()
        .contains(&"dsh-profile-user".into()));
    assert_eq!(j["inventoryComplete"], true);
}

#[test]
fn yaml_refusals_make_only_that_layer_malformed() {
    let cases: &[(&str, &str)] = &[
        (
            "    - config: {serverName: a, command: x, env: {T: !!js process.env.CANARY}}\n",
            "unsupported-tag",
        ),
        (
            "    - config: {serverName: a, command: x, command: y}\n",
            "duplicate-key",
        ),
        (
            "    - config: {serverName: a, <<: {command: x}}\n",
            "unsupported-merge-key",
        ),
        ("    - config: {serverName: [a, \n", "syntax"),
    ];
    for (rows, reason) in cases {
        let t = Tree::new();
        t.write(&format!("{ROOT}/.dsh/mcp.yml"), yml(rows));
        t.write(
            &format!("{ROOT}/.mcp.json"),
            r#"{"mcpServers": {"still-here": {"command": "x"}}}"#,
        );
        let r = dsh(&t, &["--json"]);
        assert_eq!(r.code, 1, "{reason}: {r}");
        let j = r.json();
        assert_eq!(j["sources"][0]["state"], "malformed", "{reason}");
        assert_eq!(j["sources"][0]["reason"], *reason);
        assert_eq!(j["servers"][0]["name"], "still-here");
        assert_eq!(
            r.stderr,
            format!("mcpscope: inventory incomplete: dsh-project source malformed ({reason})\n")
        );
    }
}

#[test]
fn marker_rules() {
    let t = Tree::new();
    let p = format!("{ROOT}/.dsh/mcp.yml");
    let state = |body: String| {
        t.write(&p, body);
        let j = dsh(&t, &["--json"]).json();
        (
            j["sources"][0]["state"].as_str().unwrap().to_owned(),
            j["sources"][0]["reason"].as_str().map(str::to_owned),
            j["sources"][0]["serverCount"].as_u64().unwrap(),
        )
    };
    assert_eq!(
        state("servers: [!!js broken\n".into()),
        ("present".into(), None, 0)
    );
    assert_eq!(
        state(format!("{BEGIN}\n- insert: []\n")),
        ("malformed".into(), Some("unterminated-block".into()), 0)
    );
    assert_eq!(
        state(format!("{END}\n{BEGIN}\n{END}\n")),
        ("malformed".into(), Some("unbalanced-markers".into()), 0)
    );
    assert_eq!(
        state(format!("\u{feff}{BEGIN}\r\n- insert:\r\n    - config: {{serverName: a, command: x}}\r\n{END}\r\n")),
        ("present".into(), None, 1)
    );
    t.write(&p, b"\xff\n");
    let j = dsh(&t, &["--json"]).json();
    assert_eq!(j["sources"][0]["reason"], "invalid-utf8");
}

#[test]
fn a_billion_laughs_is_refused_by_the_alias_bound() {
    // Timing is for the benchmark; this pins the outcome: refused, not expanded.
    let t = Tree::new();
    let mut rows = String::from("    - config:\n        serverName: lol\n        command: x\n");
    rows.push_str("        l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..12 {
        let refs = vec![format!("*l{}", i - 1); 9].join(", ");
        rows.push_str(&format!("        l{i}: &l{i} [{refs}]\n"));
    }
    t.write(&format!("{ROOT}/.dsh/mcp.yml"), yml(&rows));
    let j = dsh(&t, &["--json"]).json();
    assert_eq!(j["sources"][0]["reason"], "alias-limit");
}

#[test]
fn dsh_profile_is_validated_before_anything_is_read() {
    let t = Tree::new();
    // The root does not exist: had it been examined, the exit would be 1.
    for name in ["..", ".", "a/b", "", "-x", ".hidden", &"a".repeat(65)] {
        let r = t.run(&["nope", "--client", "dsh", &format!("--dsh-profile={name}")]);
        assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{name:?}: {r}");
        assert!(r.stderr.contains("--dsh-profile"), "{r}");
    }
    for client in [&[][..], &["--client", "claude-code"][..]] {
        let r = t.run(&[&["nope", "--dsh-profile", "web"], client].concat());
        assert_eq!(r.code, 2, "{r}");
        assert!(r.stderr.contains("only valid with --client dsh"), "{r}");
    }
    snapshot!(
        "dsh_profile_refused",
        t.run(&["nope", "--client", "dsh", "--dsh-profile", "../x"])
    );
}

#[test]
fn home_unset_makes_user_layers_unreadable() {
    let t = Tree::new();
    full(&t);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mcpscope"));
    cmd.args([".", "--json", "--client", "dsh", "--dsh-profile", "web"])
        .current_dir(t.root())
        .env_clear();
    let r = t.transcript(cmd);
    assert_eq!(r.code, 1);
    let j = r.json();
    for i in 3..6 {
        assert_eq!(j["sources"][i]["reason"], "home-not-set");
    }
    assert_eq!(j["sources"][3]["path"], "~/.dsh/profiles/web/mcp.json");
    assert_eq!(j["sources"][0]["state"], "present");
}

#[test]
fn nothing_sensitive_is_printed_and_nothing_is_run() {
    let t = Tree::new();
    full(&t);
    for r in [
        dsh(&t, &[]),
        dsh(&t, &["--json"]),
        dsh(&t, &["--dsh-profile", "web"]),
        dsh(&t, &["--json", "--dsh-profile", "web"]),
    ] {
        assert!(!r.all().contains(CANARY), "canary leaked:\n{r}");
        assert!(!r.all().contains("https://") && !r.all().contains("Bearer"));
        assert!(!r.all().contains("@deepseek-ai"));
    }
    assert!(!t.path(SENTINEL_MARKER).exists(), "the sentinel ran");
}

#[test]
fn human_output_sanitizes_names_and_json_keeps_them() {
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.mcp.json"),
        "{\"mcpServers\": {\"evil\\u001b[31m\\u202e\": {\"command\": \"x\"}}}",
    );
    let h = dsh(&t, &[]);
    assert!(h.stdout.contains("evil\\u{1b}[31m\\u{202e}"), "{h}");
    assert!(!h.stdout.contains('\u{1b}'));
    let j = dsh(&t, &["--json"]).json();
    assert_eq!(j["servers"][0]["name"], "evil\u{1b}[31m\u{202e}");
    assert_eq!(j["servers"][0]["shape"]["problems"][0], "invalid-name");
}

// ---- the contract, for dsh documents ----

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Document {
    schema_version: u32,
    tool: serde_json::Value,
    client: String,
    root: serde_json::Value,
    inventory_complete: bool,
    sources: Vec<Source>,
    servers: Vec<Server>,
    instructions: Vec<serde_json::Value>,
    coverage: Coverage,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Source {
    scope: String,
    path: String,
    container: String,
    state: String,
    reason: Option<String>,
    server_count: usize,
    format: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Server {
    name: String,
    scope: String,
    path: String,
    configured: bool,
    shape: Shape,
    launch: String,
    guard_form: String,
    // dsh: present on every row, null when not shadowed.
    shadowed_by: Option<ShadowedBy>,
    active: bool,
    disabled: bool,
    skipped: bool,
    claims: Vec<String>,
    placeholder_count: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Shape {
    valid: bool,
    problems: Vec<String>,
    transport: String,
    fields: Vec<String>,
    arg_count: usize,
    env_count: usize,
    header_count: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShadowedBy {
    scope: String,
    key: String,
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Coverage {
    not_examined: Vec<String>,
    unknown: Vec<String>,
}

#[test]
fn dsh_output_matches_the_contract() {
    let t = Tree::new();
    full(&t);
    let r = dsh(&t, &["--json", "--dsh-profile", "web"]);
    // `shadowedBy` must be present (null or an object) on every row, never omitted.
    let raw = r.json();
    for s in raw["servers"].as_array().unwrap() {
        assert!(s.as_object().unwrap().contains_key("shadowedBy"), "{s}");
    }
    let doc: Document = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!((doc.schema_version, doc.client.as_str()), (1, "dsh"));
    assert!(doc.inventory_complete && doc.instructions.is_empty());
    let _ = (&doc.tool, &doc.root);
    let layers = [
        "dsh-project",
        "dsh-project-json",
        "cc-project",
        "dsh-profile-user",
        "dsh-user-yml",
        "dsh-user",
    ];
    let scopes: Vec<&str> = doc.sources.iter().map(|s| s.scope.as_str()).collect();
    assert_eq!(scopes, layers);
    for s in &doc.sources {
        let rows = doc.servers.iter().filter(|v| v.scope == s.scope).count();
        assert_eq!(rows, s.server_count);
        assert!(s.path.ends_with(".yml") == (s.format == "yaml"));
        assert!(!s.container.is_empty() && s.reason.is_none() && s.state == "present");
    }
    // Layer order, then name.
    let key = |v: &Server| (layers.iter().position(|l| *l == v.scope), v.name.clone());
    assert!(doc.servers.windows(2).all(|w| key(&w[0]) <= key(&w[1])));
    for v in &doc.servers {
        assert!(v.configured && !v.path.is_empty());
        assert_eq!(v.shape.valid, v.shape.problems.is_empty());
        assert!(v.shape.fields.windows(2).all(|w| w[0] < w[1]));
        let _ = (&v.launch, &v.guard_form, &v.shape.transport);
        let _ = (v.shape.arg_count, v.shape.env_count, v.shape.header_count);
        // Active rows are valid, not disabled, not skipped, not shadowed.
        if v.active {
            assert!(v.shape.valid && !v.disabled && !v.skipped && v.shadowed_by.is_none());
        }
        if let Some(by) = &v.shadowed_by {
            assert!(v.claims.is_empty() && layers.contains(&by.scope.as_str()));
            assert!(["name", "normalized-name", "identity"].contains(&by.key.as_str()));
            assert!(!by.name.is_empty());
        }
        let _ = v.placeholder_count;
    }
    assert_eq!(doc.coverage.unknown.len(), 4);
    assert!(doc
        .coverage
        .not_examined
        .contains(&"instructions".to_owned()));
}
