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
      name: '@deepseek-ai/dsh-mcp-client'
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
            "    - id: panel-mcp-switched-off\n      name: '@deepseek-ai/dsh-mcp-client'\n      config: {{serverName: switched-off, transport: stdio, command: \"{s}\", args: [CANARY-user-yml]}}\n"
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
    // A user row a project row collides with is hidden from this project's
    // sessions, and still mounted once per host: active, holding its keys
    // in the user layers' merge.
    let user = row("dsh-user", "gitlab");
    assert_eq!(user["shadowedBy"], by("dsh-project", "name", "gitlab"));
    assert_eq!(user["active"], true);
    assert_eq!(
        user["claims"],
        serde_json::json!(["name", "normalized-name", "identity"])
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
    // command and url without a type: stdio (DSH infers http only without
    // a command).
    let both = row("dsh-project-json", "both");
    assert_eq!(both["shape"]["problems"], serde_json::json!([]));
    assert_eq!(
        (both["shape"]["transport"].clone(), both["active"].clone()),
        ("stdio".into(), true.into())
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

// ---- DSH's reader, divergence by divergence (dsh-project-mcp-manager src/) ----

/// One managed-block row as DSH writes it.
fn client_row(name: &str, config: &str) -> String {
    format!(
        "    - id: panel-mcp-{name}\n      name: '@deepseek-ai/dsh-mcp-client'\n      config: {{serverName: {name}, {config}}}\n"
    )
}

/// (scope, name) → row, for one `--json` run.
fn rows(t: &Tree, extra: &[&str]) -> (serde_json::Value, crate::util::Transcript) {
    let r = dsh(t, &[&["--json"], extra].concat());
    (r.json(), r)
}

fn row<'j>(j: &'j serde_json::Value, scope: &str, name: &str) -> &'j serde_json::Value {
    j["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scope"] == scope && s["name"] == name)
        .unwrap_or_else(|| panic!("{scope} {name} in {j}"))
}

fn by(scope: &str, key: &str, name: &str) -> serde_json::Value {
    serde_json::json!({"scope": scope, "key": key, "name": name})
}

#[test]
fn a_marker_inside_a_longer_line_opens_and_closes_the_block() {
    // mcp-file.ts finds the markers with indexOf: a begin marker in a quoted
    // value or a trailing comment still opens the block.
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.dsh/mcp.yml"),
        format!(
            "note: '{BEGIN}' (the rest of this line is skipped)\n- insert:\n{}  # {END}\n",
            client_row("hidden", "command: x")
        ),
    );
    let (j, r) = rows(&t, &[]);
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(j["sources"][0]["serverCount"], 1);
    assert_eq!(row(&j, "dsh-project", "hidden")["active"], true);
    // The old whole-line rule saw no block here and reported nothing.
}

#[test]
fn a_second_block_after_the_first_end_is_ignored_as_dsh_ignores_it() {
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.dsh/mcp.yml"),
        format!(
            "{BEGIN}\n- insert:\n{}{END}\n{BEGIN}\n- insert:\n{}{END}\n",
            client_row("first", "command: x"),
            client_row("second", "command: y")
        ),
    );
    let (j, r) = rows(&t, &[]);
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(j["servers"].as_array().unwrap().len(), 1);
    assert_eq!(j["servers"][0]["name"], "first");
}

#[test]
fn an_empty_managed_block_fails_the_file_as_in_dsh() {
    // The block must parse to a sequence; an empty one parses to null.
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.dsh/mcp.yml"),
        format!("{BEGIN}\n# nothing yet\n{END}\n"),
    );
    let (j, r) = rows(&t, &[]);
    assert_eq!(r.code, 1, "{r}");
    assert_eq!(j["sources"][0]["reason"], "wrong-container-type");
}

#[test]
fn top_level_rows_without_insert_are_rows() {
    // flattenPatchRows: an entry without an `insert` sequence is itself a row
    // candidate (kept with a string id or name); entries that are not
    // mappings are skipped.
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.dsh/mcp.yml"),
        format!(
            "{BEGIN}\n- id: panel-mcp-bare\n  name: '@deepseek-ai/dsh-mcp-client'\n  config: {{serverName: bare, command: x}}\n- just a string\n- insert: 5\n  name: '@deepseek-ai/dsh-mcp-client'\n  config: {{serverName: odd, command: y}}\n- insert:\n{}{END}\n",
            client_row("listed", "command: z")
        ),
    );
    let (j, r) = rows(&t, &[]);
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(j["sources"][0]["serverCount"], 3);
    for name in ["bare", "odd", "listed"] {
        assert_eq!(row(&j, "dsh-project", name)["active"], true, "{name}");
    }
}

#[test]
fn a_non_boolean_disabled_is_dropped_and_the_row_mounts() {
    // flattenPatchRows deletes a `disabled` that is not a boolean.
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.dsh/mcp.yml"),
        yml("    - id: panel-mcp-on\n      name: '@deepseek-ai/dsh-mcp-client'\n      disabled: 'yes'\n      config: {serverName: on, command: x}\n"),
    );
    let (j, _) = rows(&t, &[]);
    let on = row(&j, "dsh-project", "on");
    assert_eq!(
        (on["active"].clone(), on["disabled"].clone()),
        (true.into(), false.into())
    );
    assert_eq!(on["shape"]["problems"], serde_json::json!([]));
}

#[test]
fn yaml_rows_without_a_config_hold_their_name() {
    // The registry merges every managed-block row that has a name (rowNameOf:
    // the panel id) before validating: a row with no config mounts nothing
    // but still shadows a lower row of that name.
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.dsh/mcp.yml"),
        yml("    - id: panel-mcp-taken\n      name: '@deepseek-ai/dsh-mcp-client'\n"),
    );
    t.write(
        &format!("{ROOT}/.mcp.json"),
        r#"{"mcpServers": {"taken": {"command": "x"}}}"#,
    );
    let (j, _) = rows(&t, &[]);
    let p = row(&j, "dsh-project", "taken");
    assert_eq!(
        p["shape"]["problems"],
        serde_json::json!(["missing-config"])
    );
    assert_eq!(p["claims"], serde_json::json!(["name", "normalized-name"]));
    assert_eq!(p["active"], false);
    let cc = row(&j, "cc-project", "taken");
    assert_eq!(cc["shadowedBy"], by("dsh-project", "name", "taken"));
    assert_eq!(cc["active"], false);
}

#[test]
fn yaml_rows_dsh_drops_are_visible_and_hold_nothing() {
    // No string id and no string name: flattenPatchRows drops the row.
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.dsh/mcp.yml"),
        yml("    - config: {serverName: same, command: x}\n"),
    );
    t.write(
        &format!("{ROOT}/.mcp.json"),
        r#"{"mcpServers": {"same": {"command": "x"}}}"#,
    );
    let (j, _) = rows(&t, &[]);
    let p = row(&j, "dsh-project", "same");
    assert_eq!(
        p["shape"]["problems"],
        serde_json::json!(["row-without-id-or-name"])
    );
    assert_eq!(p["claims"], serde_json::json!([]));
    assert_eq!(row(&j, "cc-project", "same")["active"], true);
}

#[test]
fn yaml_rows_without_an_explicit_transport_hold_no_identity() {
    // serviceIdentityKey reads config.transport literally: a row that leaves
    // it out (stdio by default) brings no identity into the merge.
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.dsh/mcp.yml"),
        yml(&client_row("implicit", "command: x, args: [a]")),
    );
    t.write(
        &format!("{ROOT}/.mcp.json"),
        r#"{"mcpServers": {"explicit": {"command": "x", "args": ["a"]}}}"#,
    );
    let (j, _) = rows(&t, &[]);
    let y = row(&j, "dsh-project", "implicit");
    assert_eq!(
        (y["active"].clone(), y["claims"].clone()),
        (true.into(), serde_json::json!(["name", "normalized-name"]))
    );
    assert_eq!(row(&j, "cc-project", "explicit")["active"], true);
}

#[test]
fn yaml_numeric_args_join_the_identity_as_javascript_strings() {
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.dsh/mcp.yml"),
        yml(&client_row(
            "port",
            "transport: stdio, command: x, args: [--port, 0x1F90]",
        )),
    );
    t.write(
        &format!("{ROOT}/.mcp.json"),
        r#"{"mcpServers": {"copy": {"command": "x", "args": ["--port", "8080"]}}}"#,
    );
    let (j, _) = rows(&t, &[]);
    assert_eq!(
        row(&j, "cc-project", "copy")["shadowedBy"],
        by("dsh-project", "identity", "port")
    );
}

#[test]
fn cc_project_without_mcp_servers_is_malformed_and_null_is_empty() {
    // readMcpJsonFile requires mcpServers; the DSH JSON layers treat a
    // missing one as empty; `mcpServers: null` is empty everywhere.
    let t = Tree::new();
    t.write(&format!("{ROOT}/.mcp.json"), r#"{"other": {}}"#);
    t.write(&format!("{ROOT}/.dsh/mcp.json"), r#"{"other": {}}"#);
    t.write("home/.dsh/mcp.json", r#"{"mcpServers": null}"#);
    let (j, r) = rows(&t, &[]);
    assert_eq!(r.code, 1, "{r}");
    assert_eq!(j["sources"][2]["state"], "malformed");
    assert_eq!(j["sources"][2]["reason"], "wrong-container-type");
    assert_eq!(j["sources"][1]["state"], "present");
    assert_eq!(j["sources"][4]["state"], "present");
}

#[test]
fn a_disabled_json_entry_dsh_refuses_holds_no_key() {
    // jsonEntryToInput runs before the disabled check: a placeholder
    // without a command is an entry error and holds nothing.
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.dsh/mcp.json"),
        r#"{"mcpServers": {"gitlab": {"disabled": true}}}"#,
    );
    t.write(
        &format!("{ROOT}/.mcp.json"),
        r#"{"mcpServers": {"gitlab": {"command": "x"}}}"#,
    );
    let (j, _) = rows(&t, &[]);
    let p = row(&j, "dsh-project-json", "gitlab");
    assert_eq!(
        p["shape"]["problems"],
        serde_json::json!(["missing-command"])
    );
    assert_eq!(p["claims"], serde_json::json!([]));
    assert_eq!(row(&j, "cc-project", "gitlab")["active"], true);
}

#[test]
fn a_json_entry_with_an_invalid_url_holds_no_key() {
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.dsh/mcp.json"),
        r#"{"mcpServers": {"web": {"url": "example.com/mcp"}}}"#,
    );
    t.write(
        &format!("{ROOT}/.mcp.json"),
        r#"{"mcpServers": {"web": {"url": "https://example.com/mcp"}}}"#,
    );
    let (j, _) = rows(&t, &[]);
    assert_eq!(
        row(&j, "dsh-project-json", "web")["shape"]["problems"],
        serde_json::json!(["invalid-url"])
    );
    assert_eq!(row(&j, "cc-project", "web")["active"], true);
}

#[test]
fn json_command_and_url_without_a_type_is_a_stdio_server() {
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.mcp.json"),
        r#"{"mcpServers": {"both": {"command": "x", "url": "https://example.com"}, "empty-type": {"type": "", "command": "y"}}}"#,
    );
    let (j, _) = rows(&t, &[]);
    for name in ["both", "empty-type"] {
        let b = row(&j, "cc-project", name);
        assert_eq!(
            (b["active"].clone(), b["shape"]["transport"].clone()),
            (true.into(), "stdio".into()),
            "{name}"
        );
    }
}

#[test]
fn numeric_names_come_first_in_a_json_file_as_object_entries_walks_them() {
    // Object.entries visits array-index keys first: "7" wins the identity.
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.mcp.json"),
        r#"{"mcpServers": {"alpha": {"command": "x"}, "7": {"command": "x"}}}"#,
    );
    let (j, _) = rows(&t, &[]);
    assert_eq!(row(&j, "cc-project", "7")["active"], true);
    assert_eq!(
        row(&j, "cc-project", "alpha")["shadowedBy"],
        by("cc-project", "identity", "7")
    );
}

#[test]
fn names_that_normalize_to_nothing_do_not_collide() {
    // normalizedNameKey registers no key for an empty normalized name.
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.mcp.json"),
        r#"{"mcpServers": {"_": {"command": "x"}, "-": {"command": "y"}}}"#,
    );
    let (j, _) = rows(&t, &[]);
    for name in ["_", "-"] {
        let r = row(&j, "cc-project", name);
        assert_eq!(r["active"], true, "{name}");
        assert_eq!(r["claims"], serde_json::json!(["name", "identity"]));
    }
}

#[test]
fn the_shadowing_key_is_name_then_normalized_name_then_identity() {
    // mergeOneRow checks the exact name first, then the normalized name,
    // then the identity, whichever row came earlier.
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.dsh/mcp.json"),
        r#"{"mcpServers": {"early": {"command": "x"}}}"#,
    );
    t.write(
        &format!("{ROOT}/.mcp.json"),
        r#"{"mcpServers": {"Late": {"command": "y"}, "late": {"command": "x"}}}"#,
    );
    let (j, _) = rows(&t, &[]);
    assert_eq!(
        row(&j, "cc-project", "late")["shadowedBy"],
        by("cc-project", "normalized-name", "Late")
    );
}

#[test]
fn user_rows_a_project_row_hides_still_mount() {
    // User-layer rows mount once per host (reconcileGlobals, merged among the
    // user layers only); a project row that collides only denies their tools
    // to this project's sessions.
    let t = Tree::new();
    t.write(
        &format!("{ROOT}/.mcp.json"),
        r#"{"mcpServers": {"shared": {"command": "x"}}}"#,
    );
    t.write(
        "home/.dsh/mcp.json",
        r#"{"mcpServers": {"shared": {"command": "y"}, "copy": {"command": "y"}}}"#,
    );
    let (j, _) = rows(&t, &[]);
    let u = row(&j, "dsh-user", "shared");
    assert_eq!(u["shadowedBy"], by("cc-project", "name", "shared"));
    assert_eq!(u["active"], true);
    // Among the user layers the hidden row still comes first: "copy" is
    // shadowed for real, on identity.
    let c = row(&j, "dsh-user", "copy");
    assert_eq!(c["shadowedBy"], by("dsh-user", "identity", "shared"));
    assert_eq!(c["active"], false);
}

#[test]
fn user_rows_shadowed_by_user_rows_do_not_mount() {
    let t = Tree::new();
    t.write(
        "home/.dsh/mcp.yml",
        yml(&client_row("gitlab", "transport: stdio, command: x")),
    );
    t.write(
        "home/.dsh/mcp.json",
        r#"{"mcpServers": {"gitlab": {"command": "y"}}}"#,
    );
    let (j, _) = rows(&t, &[]);
    let u = row(&j, "dsh-user", "gitlab");
    assert_eq!(u["shadowedBy"], by("dsh-user-yml", "name", "gitlab"));
    assert_eq!(
        (u["active"].clone(), u["claims"].clone()),
        (false.into(), serde_json::json!([]))
    );
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
        // Active rows are valid, not disabled, not skipped, and hold keys.
        if v.active {
            assert!(v.shape.valid && !v.disabled && !v.skipped && !v.claims.is_empty());
        }
        let position = |scope: &str| layers.iter().position(|l| *l == scope).unwrap();
        if let Some(by) = &v.shadowed_by {
            assert!(["name", "normalized-name", "identity"].contains(&by.key.as_str()));
            assert!(!by.name.is_empty());
            assert!(position(&by.scope) <= position(&v.scope));
            if v.active || !v.claims.is_empty() {
                // Only a user row hidden by a project row: it still mounts.
                assert!(position(&v.scope) >= 3 && position(&by.scope) < 3, "{v:?}");
            }
        }
        let _ = v.placeholder_count;
    }
    assert_eq!(doc.coverage.unknown.len(), 4);
    assert!(doc
        .coverage
        .not_examined
        .contains(&"instructions".to_owned()));
}
