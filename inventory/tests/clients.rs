//! The fourteen clients beyond Claude Code, VS Code and DSH, through the
//! library (system locations below the tree) and the binary: each one's
//! files, parser, precedence and trust gate; `--client all`; `--fail-on`;
//! and the guarantees every profile keeps (no canary printed, nothing run,
//! nothing written).

use serde_json::Value;

use crate::fixtures::{plant_sentinel, CANARY, SENTINEL_MARKER};
use crate::util::{Tree, ROOT};

fn root(rel: &str) -> String {
    format!("{ROOT}/{rel}")
}

fn sources(j: &Value) -> Vec<(String, String)> {
    j["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["scope"].as_str().unwrap().to_owned(),
                s["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn names(j: &Value) -> Vec<(String, String)> {
    j["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["scope"].as_str().unwrap().to_owned(),
                s["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

pub(crate) fn source<'a>(j: &'a Value, scope: &str) -> &'a Value {
    j["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scope"] == scope)
        .unwrap_or_else(|| panic!("no {scope} source"))
}

const CODEX_PROJECT: &str = "[mcp_servers.p]\ncommand = \"node\"\nargs = [\"CANARY-arg\"]\n";

fn codex_user(trust: &str) -> String {
    format!("{trust}[mcp_servers.u]\nurl = \"https://CANARY.example/mcp\"\n")
}

#[test]
fn codex_layers_are_in_precedence_order_and_project_trust_is_reported() {
    let t = Tree::new();
    let r = t.root();
    t.write(&root(".codex/config.toml"), CODEX_PROJECT);
    t.write(
        "system/etc/codex/managed_config.toml",
        "[mcp_servers.p]\ncommand = \"x\"\n",
    );
    t.write(
        "system/etc/codex/config.toml",
        "[mcp_servers.u]\ncommand = \"x\"\n",
    );
    for (trust, want) in [
        (
            format!(
                "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                r.display()
            ),
            Value::Bool(true),
        ),
        (
            format!(
                "[projects.\"{}\"]\ntrust_level = \"untrusted\"\n",
                r.display()
            ),
            Value::Bool(false),
        ),
        (String::new(), Value::Bool(false)),
    ] {
        t.write("home/.codex/config.toml", codex_user(&trust));
        let out = t.run_client("codex", true, None);
        assert_eq!(out.code, 0, "{out}");
        let j = out.json();
        assert_eq!(
            sources(&j),
            [
                ("managed", "present"),
                ("project", "present"),
                ("user", "present"),
                ("system", "present")
            ]
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
        );
        assert_eq!(source(&j, "project")["trusted"], want, "{trust}");
        // Every file is read whatever the trust: the project row is listed.
        let rows = names(&j);
        assert!(rows.contains(&("project".into(), "p".into())));
        // managed > project > user > system.
        let p = &j["servers"][1];
        assert_eq!(
            (p["scope"].as_str(), p["name"].as_str()),
            (Some("project"), Some("p"))
        );
        assert_eq!(p["possibleShadowedBy"], serde_json::json!(["managed"]));
        let system_u = j["servers"].as_array().unwrap().last().unwrap();
        assert_eq!(system_u["possibleShadowedBy"], serde_json::json!(["user"]));
        assert!(!out.all().contains(CANARY));
    }
}

#[test]
fn codex_trust_is_unknown_when_the_user_file_is_broken_or_the_project_is_a_worktree() {
    let t = Tree::new();
    t.write(&root(".codex/config.toml"), CODEX_PROJECT);
    t.write("home/.codex/config.toml", "[projects\n");
    let j = t.run_client("codex", true, None).json();
    assert_eq!(source(&j, "project")["trusted"], "unknown");
    assert_eq!(source(&j, "user")["reason"], "syntax");
    assert_eq!(source(&j, "user")["position"]["line"], 1);

    // A worktree: `.git` is a file at the project root, and the user file
    // names no project.
    t.write("home/.codex/config.toml", "");
    t.write(&root(".git"), "gitdir: /elsewhere\n");
    let j = t.run_client("codex", true, None).json();
    assert_eq!(source(&j, "project")["trusted"], "unknown");
}

#[test]
fn codex_project_levels_run_up_to_the_nearest_git_and_skip_codex_home() {
    let t = Tree::new();
    t.mkdir("work/team/.git");
    t.write(
        &root(".codex/config.toml"),
        "[mcp_servers.a]\ncommand = \"x\"\n",
    );
    t.write(
        "work/team/.codex/config.toml",
        "[mcp_servers.a]\ncommand = \"y\"\n",
    );
    t.write(
        "work/.codex/config.toml",
        "[mcp_servers.never]\ncommand = \"z\"\n",
    );
    let j = t.run_client("codex", true, None).json();
    let scopes: Vec<String> = sources(&j).into_iter().map(|(s, _)| s).collect();
    assert_eq!(scopes, ["managed", "project", "ancestor", "user", "system"]);
    assert_eq!(
        source(&j, "ancestor")["path"],
        "[TMP]/work/team/.codex/config.toml"
    );
    assert_eq!(
        j["servers"][1]["possibleShadowedBy"],
        serde_json::json!(["project"])
    );
    // CODEX_HOME = <root>/.codex: that directory is the user layer, not a project layer.
    let j = t.run_client("codex", true, Some(&root(".codex"))).json();
    let scopes: Vec<String> = sources(&j).into_iter().map(|(s, _)| s).collect();
    assert_eq!(scopes, ["managed", "ancestor", "user", "system"]);
    assert_eq!(
        source(&j, "user")["path"],
        format!("[TMP]/{ROOT}/.codex/config.toml")
    );
}

#[test]
fn codex_duplicate_tables_are_malformed_with_their_line() {
    let t = Tree::new();
    t.write(
        "home/.codex/config.toml",
        "[mcp_servers.x]\ncommand = \"a\"\n\n[mcp_servers.x]\ncommand = \"CANARY\"\n",
    );
    let out = t.run_client("codex", false, None);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("malformed (duplicate-key)"), "{out}");
    assert!(out.stdout.contains("stopped at line 4, column"), "{out}");
    assert!(!out.all().contains(CANARY));
}

#[test]
fn codex_home_from_the_environment_moves_the_user_file() {
    let t = Tree::new();
    t.write("alt/config.toml", "[mcp_servers.alt]\ncommand = \"x\"\n");
    t.write(
        "home/.codex/config.toml",
        "[mcp_servers.home]\ncommand = \"x\"\n",
    );
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mcpscope"));
    cmd.args([".", "--client", "codex", "--json"])
        .current_dir(t.root())
        .env_clear()
        .env("HOME", t.home())
        .env("CODEX_HOME", t.path("alt"));
    let j = t.transcript(cmd).json();
    assert_eq!(source(&j, "user")["path"], "[TMP]/alt/config.toml");
    assert_eq!(names(&j), [("user".to_owned(), "alt".to_owned())]);
}

#[test]
fn gemini_folder_trust_decides_the_workspace_sources_trusted() {
    let t = Tree::new();
    let r = t.root();
    t.write(
        &root(".gemini/settings.json"),
        r#"{"mcpServers":{"w":{"command":"x"}}}"#,
    );
    for (rules, want) in [
        (
            format!(r#"{{"{}": "TRUST_FOLDER"}}"#, r.display()),
            Value::Bool(true),
        ),
        (
            format!(r#"{{"{}": "DO_NOT_TRUST"}}"#, r.display()),
            Value::Bool(false),
        ),
        (
            format!(r#"{{"{}/x": "TRUST_PARENT"}}"#, r.display()),
            Value::Bool(true),
        ),
        ("{}".to_owned(), Value::String("unknown".into())),
    ] {
        t.write("home/.gemini/trustedFolders.json", &rules);
        let j = t.run_client("gemini-cli", true, None).json();
        assert_eq!(source(&j, "workspace")["trusted"], want, "{rules}");
        assert_eq!(names(&j), [("workspace".to_owned(), "w".to_owned())]);
    }
    // Folder trust switched off in the user settings: trusted.
    t.write("home/.gemini/trustedFolders.json", "{}");
    t.write(
        "home/.gemini/settings.json",
        r#"{"security":{"folderTrust":{"enabled":false}}}"#,
    );
    let j = t.run_client("gemini-cli", true, None).json();
    assert_eq!(source(&j, "workspace")["trusted"], true);
    // A value that is not a trust level stops Gemini CLI: malformed.
    t.write("home/.gemini/trustedFolders.json", r#"{"/x": "SOMETIMES"}"#);
    let out = t.run_client("gemini-cli", true, None);
    assert_eq!(out.code, 1);
    assert_eq!(
        source(&out.json(), "trusted-folders")["reason"],
        "invalid-trust-level"
    );
}

#[test]
fn gemini_system_settings_outrank_the_workspace_and_comments_are_stripped() {
    let t = Tree::new();
    t.write(
        "system/etc/gemini-cli/settings.json",
        "// corp\n{\"mcpServers\":{\"s\":{\"httpUrl\":\"https://CANARY\"}}}",
    );
    t.write(
        &root(".gemini/settings.json"),
        r#"{"mcpServers":{"s":{"command":"x"}}}"#,
    );
    t.write(
        "system/etc/gemini-cli/system-defaults.json",
        "{\"mcpServers\":{\"s\":{\"command\":\"y\"},}}",
    );
    let out = t.run_client("gemini-cli", true, None);
    assert_eq!(out.code, 1, "a trailing comma is not stripped: {out}");
    let j = out.json();
    assert_eq!(source(&j, "system-defaults")["reason"], "trailing-comma");
    assert_eq!(j["servers"][0]["shape"]["transport"], "http");
    assert_eq!(
        j["servers"][1]["possibleShadowedBy"],
        serde_json::json!(["system"])
    );
}

#[test]
fn continue_reads_config_yaml_and_every_block_file() {
    let t = Tree::new();
    t.write(
        "home/.continue/config.yaml",
        "name: x\nmcpServers:\n  - name: u\n    command: npx\n    args: [CANARY-pkg]\n",
    );
    t.write(
        &root(".continue/mcpServers/b.yml"),
        "mcpServers:\n  - name: u\n    type: sse\n    url: https://CANARY\n",
    );
    t.write(
        &root(".continue/mcpServers/a.json"),
        r#"{"mcpServers":{"j":{"command":"uvx"}}}"#,
    );
    t.write(&root(".continue/mcpServers/readme.md"), "CANARY");
    let j = t.run_client("continue", true, None).json();
    let got: Vec<(String, String)> = sources(&j);
    assert_eq!(
        got,
        [
            ("user", "present"),
            ("workspace-blocks", "present"),
            ("workspace-block", "present"),
            ("workspace-block", "present")
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    assert_eq!(j["sources"][2]["parser"], "json");
    assert_eq!(j["sources"][3]["parser"], "yaml");
    let u: Vec<&Value> = j["servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "u")
        .collect();
    assert_eq!(u.len(), 2);
    assert_eq!(u[0]["sameNameIn"], serde_json::json!(["workspace-block"]));
    assert_eq!(u[1]["sameNameIn"], serde_json::json!(["user"]));
}

#[test]
fn continue_caps_the_block_directory() {
    let t = Tree::new();
    for i in 0..70 {
        t.write(
            &root(&format!(".continue/mcpServers/{i:03}.yaml")),
            "mcpServers: []\n",
        );
    }
    let out = t.run_client("continue", true, None);
    assert_eq!(out.code, 1);
    let j = out.json();
    let listing = source(&j, "workspace-blocks");
    assert_eq!(
        (listing["state"].as_str(), listing["reason"].as_str()),
        (Some("too-large"), Some("too-many-entries"))
    );
    let blocks = j["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["scope"] == "workspace-block")
        .count();
    assert_eq!(blocks, 64);
}

#[test]
fn opencode_walks_to_the_nearest_git_and_json_outranks_jsonc() {
    let t = Tree::new();
    t.mkdir("work/team/.git");
    t.write(
        &root("opencode.jsonc"),
        "{\"mcp\":{\"s\":{\"type\":\"local\",\"command\":[\"x\"]},},// c\n}",
    );
    t.write(
        "work/team/opencode.json",
        r#"{"mcp":{"s":{"type":"remote","url":"https://CANARY"}}}"#,
    );
    t.write(
        "work/opencode.json",
        r#"{"mcp":{"never":{"type":"local","command":["x"]}}}"#,
    );
    let j = t.run_client("opencode", true, None).json();
    let scopes: Vec<String> = sources(&j).into_iter().map(|(s, _)| s).collect();
    assert_eq!(
        scopes,
        [
            "project-jsonc",
            "project-json",
            "ancestor-jsonc",
            "ancestor-json",
            "global-jsonc",
            "global-json",
            "global-config-json"
        ]
    );
    assert_eq!(names(&j).len(), 2);
    assert_eq!(
        j["servers"][0]["possibleShadowedBy"],
        serde_json::json!(["ancestor-json"])
    );
}

#[test]
fn single_file_clients_read_their_one_path_per_os_layout() {
    let t = Tree::new();
    for (client, rel) in [
        ("windsurf", "home/.codeium/windsurf/mcp_config.json"),
        ("claude-desktop", "home/.config/Claude/claude_desktop_config.json"),
        ("cline", "home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"),
    ] {
        t.write(rel, r#"{"mcpServers":{"a":{"command":"npx","args":["CANARY"],"disabled":true}}}"#);
        let j = t.run_client(client, true, None).json();
        assert_eq!(sources(&j), [("user".to_owned(), "present".to_owned())], "{client}");
        assert_eq!(j["servers"][0]["launch"], "package-runner", "{client}");
    }
    // Windsurf and Cline honour `disabled`; Claude Desktop has no switch.
    let j = t.run_client("windsurf", true, None).json();
    assert_eq!(j["servers"][0]["enabled"], false);
    let j = t.run_client("claude-desktop", true, None).json();
    assert!(j["servers"][0].get("enabled").is_none());
    t.write(
        "home/.config/goose/config.yaml",
        "extensions:\n  dev:\n    type: builtin\n    enabled: false\n",
    );
    let j = t.run_client("goose", true, None).json();
    assert_eq!(
        (
            j["servers"][0]["launch"].as_str(),
            &j["servers"][0]["enabled"]
        ),
        (Some("unknown"), &Value::Bool(false))
    );
}

#[test]
fn workspace_files_outrank_user_files_where_the_client_says_so() {
    let t = Tree::new();
    for (client, project, user) in [
        ("kiro", ".kiro/settings/mcp.json", "home/.kiro/settings/mcp.json"),
        ("amazon-q", ".amazonq/mcp.json", "home/.aws/amazonq/mcp.json"),
        ("roo-code", ".roo/mcp.json", "home/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json"),
        ("zed", ".zed/settings.json", "home/.config/zed/settings.json"),
    ] {
        let key = if client == "zed" { "context_servers" } else { "mcpServers" };
        t.write(&root(project), format!(r#"{{"{key}":{{"s":{{"command":"x"}}}}}}"#));
        t.write(user, format!(r#"{{"{key}":{{"s":{{"command":"y"}}}}}}"#));
        let j = t.run_client(client, true, None).json();
        let higher = j["sources"][0]["scope"].as_str().unwrap().to_owned();
        assert_eq!(j["servers"][0]["possibleShadowedBy"], serde_json::json!([]), "{client}");
        assert_eq!(j["servers"][1]["possibleShadowedBy"], serde_json::json!([higher]), "{client}");
    }
    // Cursor documents no winner: duplication only.
    t.write(
        &root(".cursor/mcp.json"),
        r#"{"mcpServers":{"s":{"command":"x"}}}"#,
    );
    t.write(
        "home/.cursor/mcp.json",
        r#"{"mcpServers":{"s":{"url":"https://x"}}}"#,
    );
    let j = t.run_client("cursor", true, None).json();
    assert_eq!(j["servers"][0]["sameNameIn"], serde_json::json!(["global"]));
    assert_eq!(
        j["servers"][1]["sameNameIn"],
        serde_json::json!(["project"])
    );
}

/// Every client's files with a canary in every field, and the sentinel as
/// every stdio command.
fn every_client(t: &Tree) {
    let s = plant_sentinel(t);
    let portable = format!(
        r#"{{"mcpServers":{{"a":{{"command":"{s}","args":["CANARY-a"],"env":{{"CANARY_E":"CANARY-v"}}}},
        "r":{{"url":"https://CANARY-h/x?CANARY-q","serverUrl":"https://CANARY-s","httpUrl":"https://CANARY-hu","headers":{{"CANARY-H":"CANARY-hv"}}}}}}}}"#
    );
    for rel in [
        &root(".cursor/mcp.json")[..],
        "home/.cursor/mcp.json",
        &root(".gemini/settings.json"),
        "home/.gemini/settings.json",
        "home/.codeium/windsurf/mcp_config.json",
        "home/.config/Claude/claude_desktop_config.json",
        &root(".kiro/settings/mcp.json"),
        "home/.kiro/settings/mcp.json",
        &root(".amazonq/mcp.json"),
        "home/.aws/amazonq/mcp.json",
        "home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        &root(".roo/mcp.json"),
        &root(".continue/mcpServers/x.json"),
        &root(".mcp.json"),
    ] {
        t.write(rel, &portable);
    }
    t.write(
        &root(".codex/config.toml"),
        format!("# CANARY-comment\n[mcp_servers.a]\ncommand = \"{s}\"\nargs = [\"CANARY-a\"]\nenv = {{ CANARY_E = \"CANARY-v\" }}\nenv_vars = [\"CANARY_V\"]\n[mcp_servers.r]\nurl = \"https://CANARY-h\"\nbearer_token = \"CANARY-tok\"\nbearer_token_env_var = \"CANARY_B\"\nhttp_headers = {{ CANARY-H = \"CANARY-hv\" }}\n"),
    );
    t.write(
        &root("opencode.jsonc"),
        format!("// CANARY-c\n{{\"mcp\":{{\"a\":{{\"type\":\"local\",\"command\":[\"{s}\",\"CANARY-a\"],\"environment\":{{\"CANARY_E\":\"CANARY-v\"}}}},}}}}"),
    );
    t.write(
        &root(".zed/settings.json"),
        format!("{{\"context_servers\":{{\"a\":{{\"command\":{{\"path\":\"{s}\",\"args\":[\"CANARY-a\"],\"env\":{{\"CANARY_E\":\"CANARY-v\"}}}}}}}}}}"),
    );
    t.write(
        "home/.continue/config.yaml",
        format!("# CANARY-c\nmcpServers:\n  - name: a\n    command: {s}\n    args: [CANARY-a]\n    env: {{CANARY_E: CANARY-v}}\n"),
    );
    t.write(
        "home/.config/goose/config.yaml",
        format!("extensions:\n  a:\n    type: stdio\n    cmd: {s}\n    args: [CANARY-a]\n    envs: {{CANARY_E: CANARY-v}}\n    enabled: true\n"),
    );
    t.write(
        &root("crush.json"),
        format!(r#"{{"mcp":{{"a":{{"type":"stdio","command":"{s}","args":["CANARY-a"],"env":{{"CANARY_E":"CANARY-v"}}}},
        "r":{{"type":"http","url":"https://CANARY-h/x?CANARY-q","headers":{{"CANARY-H":"CANARY-hv"}},"oauth_client_secret":"CANARY-sec"}}}}}}"#),
    );
}

#[test]
fn no_client_prints_a_canary_runs_anything_or_writes_anything() {
    let t = Tree::new();
    every_client(&t);
    let before = crate::safety::tree_state(&t.base);
    let mut outs = vec![
        t.run(&[".", "--client", "all"]),
        t.run(&[".", "--client", "all", "--json"]),
    ];
    for p in mcpscope::profile::REGISTRY {
        outs.push(t.run(&[".", "--client", p.id()]));
        outs.push(t.run(&[".", "--client", p.id(), "--json"]));
    }
    for out in &outs {
        assert!(!out.all().contains(CANARY), "canary leaked:\n{out}");
    }
    assert!(
        !t.path(SENTINEL_MARKER).exists(),
        "a configured command was executed"
    );
    assert_eq!(
        before,
        crate::safety::tree_state(&t.base),
        "something was written"
    );
    // The fixture did declare servers for every new client.
    let j = outs[1].json();
    for summary in j["clients"].as_array().unwrap().iter().skip(3) {
        assert!(summary["serverCount"].as_u64().unwrap() >= 1, "{summary}");
    }
}

#[test]
fn all_tags_every_row_with_its_client_in_registry_order() {
    let t = Tree::new();
    every_client(&t);
    let out = t.run_client("all", true, None);
    let j = out.json();
    assert_eq!(j["client"], "all");
    let order: Vec<&str> = mcpscope::profile::REGISTRY.iter().map(|p| p.id()).collect();
    let pos = |v: &Value| {
        order
            .iter()
            .position(|c| *c == v["client"].as_str().unwrap())
            .unwrap()
    };
    for list in ["sources", "servers", "instructions"] {
        let rows = j[list].as_array().unwrap();
        assert!(rows.iter().all(|r| r["client"].is_string()), "{list}");
        assert!(
            rows.windows(2).all(|w| pos(&w[0]) <= pos(&w[1])),
            "{list} out of registry order"
        );
    }
    // Each summary agrees with the rows, and the conjunction holds.
    let mut all_complete = true;
    for (n, s) in j["clients"].as_array().unwrap().iter().enumerate() {
        assert_eq!(s["client"], order[n]);
        let rows = j["servers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["client"] == s["client"])
            .count();
        assert_eq!(s["serverCount"].as_u64().unwrap() as usize, rows);
        all_complete &= s["inventoryComplete"].as_bool().unwrap();
        // serverCount per source equals its rows (by client, scope and path).
    }
    for src in j["sources"].as_array().unwrap() {
        let rows = j["servers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| {
                r["client"] == src["client"]
                    && r["scope"] == src["scope"]
                    && r["path"] == src["path"]
            })
            .count();
        assert_eq!(src["serverCount"].as_u64().unwrap() as usize, rows, "{src}");
    }
    assert_eq!(j["inventoryComplete"].as_bool().unwrap(), all_complete);
    // <root>/.mcp.json is read once per profile that names it.
    let mcp_json = format!("[TMP]/{ROOT}/.mcp.json");
    let readers: Vec<&str> = j["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["path"] == mcp_json)
        .map(|s| s["client"].as_str().unwrap())
        .collect();
    assert_eq!(readers, ["claude-code", "vscode", "dsh"]);
}

#[test]
fn all_human_report_has_a_section_and_a_summary_line_per_client() {
    let t = Tree::new();
    every_client(&t);
    let out = t.run_client("all", false, None);
    for p in mcpscope::profile::REGISTRY {
        assert!(
            out.stdout
                .contains(&format!("== {} (--client {}) ==", p.title(), p.id())),
            "{}",
            p.id()
        );
        let line = out
            .stdout
            .lines()
            .rev()
            .find(|l| l.trim_start().starts_with(&format!("{} ", p.id())));
        assert!(
            line.is_some_and(|l| l.contains(" · ") && l.contains("broken")),
            "{}",
            p.id()
        );
    }
    assert!(out.stdout.contains("Summary (one line per client"));
    assert!(!out.stdout.contains("(none: source missing)"));
}

#[test]
fn fail_on_gates_with_documented_exit_codes() {
    let t = Tree::new();
    t.write(
        &root(".cursor/mcp.json"),
        r#"{"mcpServers":{"x":{"command":7}}}"#,
    );
    let run = |extra: &[&str]| t.run(&[&[".", "--client", "cursor"][..], extra].concat());
    assert_eq!(run(&[]).code, 0, "the default gate is incomplete alone");
    assert_eq!(run(&["--fail-on", "any-server"]).code, 3);
    assert_eq!(run(&["--fail-on", "invalid-entry"]).code, 3);
    assert_eq!(run(&["--fail-on", "project-server"]).code, 3);
    assert_eq!(run(&["--fail-on", "incomplete"]).code, 0);
    let r = run(&["--fail-on=any-server,invalid-entry", "--json"]);
    assert_eq!(
        r.json()["failOn"]["met"],
        serde_json::json!(["invalid-entry", "any-server"])
    );
    assert!(
        r.stderr
            .contains("--fail-on met: invalid-entry (1 invalid entry), any-server (1 server)"),
        "{r}"
    );
    t.write("home/.cursor/mcp.json", "{");
    assert_eq!(
        run(&["--fail-on", "any-server,incomplete"]).code,
        1,
        "incomplete outranks"
    );
    assert_eq!(run(&["--fail-on", "none"]).code, 0);
    assert_eq!(run(&["--fail-on", "never"]).code, 2);
    let human = run(&["--fail-on", "any-server"]);
    assert!(
        human.stdout.contains("fail-on    met: any-server"),
        "{human}"
    );
}

/// A tree whose root is a subdirectory of a repository (`work/team` holds the `.git`), with
/// `files` written; `--fail-on project-server --json` run on it for `client`: the exit code,
/// `failOn`, and the transcript.
pub(crate) fn gate(files: &[(&str, &str)], client: &str) -> (i32, Value, crate::util::Transcript) {
    let t = Tree::new();
    t.mkdir("work/team/.git");
    for (path, text) in files {
        t.write(path, text);
    }
    let r = t.run(&[
        ".",
        "--client",
        client,
        "--fail-on",
        "project-server",
        "--json",
    ]);
    (r.code, r.json()["failOn"].clone(), r)
}

#[test]
fn project_server_counts_the_project_levels_a_client_reads_above_the_root() {
    // Codex and OpenCode read the repository's levels above the root as this project's
    // configuration, so their servers are the project's.
    let above = [
        (
            "work/team/.codex/config.toml",
            "[mcp_servers.up]\ncommand = \"x\"\n",
        ),
        (
            "work/team/opencode.json",
            r#"{"mcp":{"up":{"type":"local","command":["x"]}}}"#,
        ),
    ];
    for client in ["codex", "opencode", "all"] {
        let (code, fail_on, r) = gate(&above, client);
        assert_eq!(code, 3, "{client}: {r}");
        assert_eq!(fail_on["met"], serde_json::json!(["project-server"]));
    }
    // A client that reads no level above the root is not concerned by those files.
    let (code, _, r) = gate(&above, "cursor");
    assert_eq!(code, 0, "{r}");
    // An ancestor level mcpscope cannot inventory leaves the condition open (Codex refuses a
    // duplicate table, but the gate must not pass on what it could not read).
    let duplicate = "[mcp_servers.up]\ncommand = \"x\"\n[mcp_servers.up]\ncommand = \"y\"\n";
    let (code, fail_on, r) = gate(&[("work/team/.codex/config.toml", duplicate)], "codex");
    assert_eq!(code, 1, "{r}");
    assert_eq!(fail_on["undecided"], serde_json::json!(["project-server"]));
    // The user's own file is not the project's, even beside an ancestor level.
    let mine = "[mcp_servers.mine]\ncommand = \"x\"\n";
    let (code, fail_on, r) = gate(&[("home/.codex/config.toml", mine)], "codex");
    assert_eq!(code, 0, "{r}");
    assert_eq!(fail_on["met"], serde_json::json!([]));
}

#[test]
fn a_server_gate_fails_closed_on_a_source_it_could_not_inventory() {
    let t = Tree::new();
    // A project file the client would load (duplicate keys: last one wins) and mcpscope
    // refuses: nothing is listed from it, so `project-server` cannot be ruled out.
    t.write(
        &root(".cursor/mcp.json"),
        r#"{"mcpServers":{"x":{"command":"sh"}},"mcpServers":{"x":{"command":"sh"}}}"#,
    );
    let run = |extra: &[&str]| t.run(&[&[".", "--client", "cursor"][..], extra].concat());
    for gate in ["project-server", "any-server", "invalid-entry"] {
        let r = run(&["--fail-on", gate, "--json"]);
        assert_eq!(r.code, 1, "{gate}: {r}");
        assert_eq!(r.json()["failOn"]["met"], serde_json::json!([]), "{r}");
        assert_eq!(r.json()["failOn"]["undecided"], serde_json::json!([gate]));
        assert!(
            r.stderr.contains(&format!(
                "--fail-on cannot rule out: {gate} (1 source could not be inventoried)"
            )),
            "{r}"
        );
    }
    assert_eq!(run(&["--fail-on", "none"]).code, 0);
    let human = run(&["--fail-on", "project-server"]);
    assert!(
        human
            .stdout
            .contains("fail-on    cannot rule out: project-server"),
        "{human}"
    );
    // A user file it could not inventory leaves `project-server` decided (no project server),
    // and the two others open.
    let t = Tree::new();
    t.write("home/.cursor/mcp.json", "{");
    let run = |extra: &[&str]| t.run(&[&[".", "--client", "cursor"][..], extra].concat());
    assert_eq!(run(&["--fail-on", "project-server"]).code, 0);
    assert_eq!(run(&["--fail-on", "any-server"]).code, 1);
    // A condition that holds is met, not undecided, whatever else was not read.
    t.write(
        &root(".cursor/mcp.json"),
        r#"{"mcpServers":{"p":{"command":"x"}}}"#,
    );
    let r = run(&["--fail-on", "project-server,any-server", "--json"]);
    assert_eq!(r.code, 3, "{r}");
    assert_eq!(r.json()["failOn"]["undecided"], serde_json::json!([]));
}

#[test]
fn a_bad_client_value_is_echoed_escaped() {
    let t = Tree::new();
    for (value, shown) in [
        // With clap's `color` feature (unified in from another crate of the
        // workspace) clap strips escape sequences from its echo itself.
        (
            "cur\u{1b}[2Jsor",
            &["cur\\u{1b}[2Jsor", "invalid value 'cursor'"][..],
        ),
        (
            "cur\u{202e}\u{200b}sor\u{7}",
            &[
                "cur\\u{202e}\\u{200b}sor\\u{7}",
                "cur\\u{202e}\\u{200b}sor'",
            ][..],
        ),
        // An OSC sequence (a window title) likewise: stripped by clap or
        // escaped by us, never raw.
        (
            "cur\u{1b}]0;title\u{7}\u{202e}sor",
            &["cur\\u{1b}]0;title\\u{7}\\u{202e}sor", "cur\\u{202e}sor"][..],
        ),
    ] {
        let r = t.run(&[".", "--client", value]);
        assert_eq!(r.code, 2);
        assert!(
            scopebox_terminal::obeyed(&r.stderr).is_empty(),
            "raw control in {r}"
        );
        assert!(shown.iter().any(|s| r.stderr.contains(s)), "{r}");
    }
}

#[test]
fn gemini_skips_the_workspace_file_when_home_is_a_link_to_the_root() {
    // Gemini CLI compares the realpaths of the workspace and of HOME: a HOME that is a link to
    // the root is the root, and its settings file is read once, as the user's.
    let t = Tree::new();
    t.write(
        &root(".gemini/settings.json"),
        r#"{"mcpServers":{"g":{"command":"x"}}}"#,
    );
    std::os::unix::fs::symlink(t.root(), t.path("home-link")).unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mcpscope"));
    cmd.args([".", "--client", "gemini-cli", "--json"])
        .current_dir(t.root())
        .env_clear()
        .env("HOME", t.path("home-link"));
    let j = t.transcript(cmd).json();
    let scopes: Vec<&str> = j["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["scope"].as_str().unwrap())
        .collect();
    assert!(!scopes.contains(&"workspace"), "{scopes:?}");
    let servers: Vec<(&str, &str)> = j["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["scope"].as_str().unwrap(), s["name"].as_str().unwrap()))
        .collect();
    assert_eq!(servers, [("user", "g")]);
}
