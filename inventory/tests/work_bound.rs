//! The bounds on the work one hostile tree can make mcpscope do, through the
//! real binary: a YAML file holds at most 131,072 nodes (and its anchors and
//! aliases copy in at most 1 MiB of text), and a client walking the root's
//! ancestors reads at most 64 project levels. Past either, the inventory says
//! so — `too-large` / `too-many-nodes` on the file, `too-large` /
//! `too-many-entries` on a source standing for the levels not read — and is
//! incomplete (exit 1; `--fail-on project-server` undecided). Timing belongs
//! in the benchmarks: these tests pin that the parse stops at the bound (what
//! comes after it is never looked at) and what the document says.

use mcpscope::profile::dsh::yaml::{MAX_ALIAS_TEXT, MAX_NODES};
use mcpscope::profile::MAX_PROJECT_LEVELS;
use mcpscope::toml_config::MAX_NODES as TOML_NODES;
use serde_json::{json, Value};

use crate::util::{Tree, ROOT};

#[test]
fn the_bounds_are_the_documented_ones() {
    // docs/contract-additions.md; the trees below are sized for these.
    assert_eq!(
        (MAX_NODES, MAX_ALIAS_TEXT, MAX_PROJECT_LEVELS),
        (131_072, 1 << 20, 64)
    );
}

const NODES: usize = 131_072;
const LEVELS: usize = 64;

fn root(rel: &str) -> String {
    format!("{ROOT}/{rel}")
}

/// `n` one-node items of a flow sequence: `1,1,…,1`.
fn ones(n: usize) -> String {
    vec!["1"; n].join(",")
}

fn sources<'a>(j: &'a Value, scope: &str) -> Vec<&'a Value> {
    j["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["scope"] == scope)
        .collect()
}

/// `(state, reason, serverCount)` of a source.
fn state(s: &Value) -> (&str, Option<&str>, u64) {
    (
        s["state"].as_str().unwrap(),
        s["reason"].as_str(),
        s["serverCount"].as_u64().unwrap(),
    )
}

const TOO_MANY_NODES: (&str, Option<&str>, u64) = ("too-large", Some("too-many-nodes"), 0);
const LEVELS_NOT_READ: (&str, Option<&str>, u64) = ("too-large", Some("too-many-entries"), 0);

fn server_names(j: &Value) -> Vec<&str> {
    j["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect()
}

/// A Continue block declaring server `a`, then a sequence of `n` items: the
/// file is `10 + n` nodes (the top mapping, `mcpServers`, its sequence, the
/// entry's mapping and its four scalars, `x` and its sequence).
fn continue_block(n: usize) -> String {
    format!("mcpServers: [{{name: a, command: x}}]\nx: [{}]\n", ones(n))
}

#[test]
fn a_yaml_file_past_the_node_bound_is_too_large_and_lists_nothing() {
    let t = Tree::new();
    t.write(
        &root(".continue/mcpServers/at.yaml"),
        continue_block(NODES - 10),
    );
    t.write(
        &root(".continue/mcpServers/past.yaml"),
        continue_block(NODES - 9),
    );
    let out = t.run(&[".", "--client", "continue", "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let j = out.json();
    assert_eq!(j["inventoryComplete"], false);
    let blocks = sources(&j, "workspace-block");
    assert!(blocks[0]["path"].as_str().unwrap().ends_with("at.yaml"));
    assert_eq!(state(blocks[0]), ("present", None, 1));
    assert_eq!(state(blocks[1]), TOO_MANY_NODES);
    // Too large is not malformed: no parser position.
    assert_eq!(blocks[1].get("position"), None);
    assert_eq!(server_names(&j), ["a"]);
    assert!(
        out.stderr
            .contains("workspace-block source too-large (too-many-nodes)"),
        "{}",
        out.stderr
    );

    // A file of the project: `--fail-on project-server` cannot rule it out.
    t.write(&root(".continue/mcpServers/at.yaml"), "mcpServers: []\n");
    project_server_is_undecided(&t, &t.root(), "continue");
}

#[test]
fn the_yaml_parse_stops_at_the_node_bound() {
    // Past the bound, then a syntax error: the parse never gets there. With
    // a `*` anywhere the anchors' pre-pass runs first; it stops too.
    let t = Tree::new();
    let past = format!("x: [{}]\ny: [\n", ones(NODES));
    t.write(&root(".continue/mcpServers/a.yaml"), &past);
    t.write(&root(".continue/mcpServers/b.yaml"), format!("# *\n{past}"));
    // Within the bound the same error is found.
    let within = format!("x: [{}]\ny: [\n", ones(NODES - 10));
    t.write(&root(".continue/mcpServers/c.yaml"), &within);
    t.write(
        &root(".continue/mcpServers/d.yaml"),
        format!("# *\n{within}"),
    );
    let j = t.run(&[".", "--client", "continue", "--json"]).json();
    let blocks = sources(&j, "workspace-block");
    assert_eq!(state(blocks[0]), TOO_MANY_NODES);
    assert_eq!(state(blocks[1]), TOO_MANY_NODES);
    assert_eq!(state(blocks[2]), ("malformed", Some("syntax"), 0));
    assert_eq!(state(blocks[3]), ("malformed", Some("syntax"), 0));
}

#[test]
fn goose_and_the_dsh_managed_block_share_the_node_bound() {
    let t = Tree::new();
    t.write(
        "home/.config/goose/config.yaml",
        format!("extensions: {{}}\nx: [{}]\n", ones(NODES - 4)),
    );
    let goose = t.run(&[".", "--client", "goose", "--json"]);
    assert_eq!(goose.code, 1, "{}", goose.stderr);
    assert_eq!(state(sources(&goose.json(), "user")[0]), TOO_MANY_NODES);

    // The managed block `[1,…]` is 1 + n nodes.
    let block = |n: usize| {
        format!(
            "# >>> dsh-project-mcp-manager:mcp:begin\n[{}]\n# <<< dsh-project-mcp-manager:mcp:end\n",
            ones(n)
        )
    };
    t.write(&root(".dsh/mcp.yml"), block(NODES - 1));
    let at = t.run(&[".", "--client", "dsh", "--json"]);
    assert_eq!(state(sources(&at.json(), "dsh-project")[0]).0, "present");
    t.write(&root(".dsh/mcp.yml"), block(NODES));
    let past = t.run(&[".", "--client", "dsh", "--json"]);
    assert_eq!(past.code, 1, "{}", past.stderr);
    assert_eq!(
        state(sources(&past.json(), "dsh-project")[0]),
        TOO_MANY_NODES
    );
}

/// A Codex `config.toml` declaring server `a` (three nodes: the header's `[`
/// and `.`, the `=`), then `lines` lines `kN.a…a = 1` of 32 nodes each, and
/// `extra` more dotted segments on a last line.
fn codex_config(lines: usize, extra: usize) -> String {
    let mut toml = String::from("[mcp_servers.a]\ncommand = \"x\"\n[x]\n");
    for i in 0..lines {
        toml.push_str(&format!("k{i}{} = 1\n", ".a".repeat(31)));
    }
    toml.push_str(&format!("z{} = 1\n", ".a".repeat(extra)));
    toml
}

#[test]
fn a_toml_file_past_the_node_bound_is_too_large_and_never_parsed() {
    // 3 + 1 (`[x]`) + 4,095 × 32 + 1 + extra nodes: at the bound with 28.
    let lines = NODES / 32 - 1;
    assert_eq!(TOML_NODES, NODES);
    let t = Tree::new();
    t.write(&root(".codex/config.toml"), codex_config(lines, 27));
    let at = t.run(&[".", "--client", "codex", "--json"]);
    assert_eq!(at.code, 0, "{}", at.stderr);
    assert_eq!(
        state(sources(&at.json(), "project")[0]),
        ("present", None, 1)
    );

    t.write(&root(".codex/config.toml"), codex_config(lines, 28));
    let out = t.run(&[".", "--client", "codex", "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let j = out.json();
    let project = sources(&j, "project")[0];
    assert_eq!(state(project), TOO_MANY_NODES);
    assert_eq!(project.get("position"), None);
    assert!(server_names(&j).is_empty());
    assert!(
        out.stderr
            .contains("project source too-large (too-many-nodes)"),
        "{}",
        out.stderr
    );
    project_server_is_undecided(&t, &t.root(), "codex");
}

#[test]
fn yaml_anchors_and_aliases_copy_in_at_most_one_mib_of_text() {
    // A 20,000-byte name anchored once and aliased `k` times: the anchor's
    // copy and every alias copy 20,000 bytes (1 + k copies).
    let name = "n".repeat(20_000);
    let block = |k: usize| {
        let mut y = format!("mcpServers:\n  - name: &a {name}\n    command: x\n");
        for _ in 0..k {
            y.push_str("  - name: *a\n    command: x\n");
        }
        y
    };
    assert!(52 * name.len() <= MAX_ALIAS_TEXT && 53 * name.len() > MAX_ALIAS_TEXT);
    let t = Tree::new();
    t.write(&root(".continue/mcpServers/a.yaml"), block(51));
    t.write(&root(".continue/mcpServers/b.yaml"), block(52));
    let out = t.run(&[".", "--client", "continue", "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let j = out.json();
    let blocks = sources(&j, "workspace-block");
    assert_eq!(state(blocks[0]), ("present", None, 52));
    assert_eq!(state(blocks[1]), TOO_MANY_NODES);
}

/// A root `depth` directories below [`ROOT`], which holds `.git`: the walk
/// has `depth + 1` levels, the root first.
fn deep_root(t: &Tree, depth: usize) -> std::path::PathBuf {
    t.mkdir(&root(".git"));
    let rel: Vec<String> = (1..=depth).map(|i| format!("l{i:02}")).collect();
    let deep = t.path(&root(&rel.join("/")));
    std::fs::create_dir_all(&deep).unwrap();
    deep
}

#[test]
fn codex_reads_at_most_64_project_levels_and_says_so() {
    let t = Tree::new();
    // 71 levels: the root (l70), l69 … l01, and the repository's top.
    let deep = deep_root(&t, 70);
    t.write(
        &root(".codex/config.toml"),
        "[mcp_servers.top]\ncommand = \"x\"\n",
    );
    let out = t.run_in(&deep, &[".", "--client", "codex", "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let j = out.json();
    assert_eq!(j["inventoryComplete"], false);
    assert_eq!(sources(&j, "project").len(), 1);
    let ancestors = sources(&j, "ancestor");
    // 63 ancestors read, then one source for every level past the bound: the
    // first of them (l06, the 65th level).
    assert_eq!(ancestors.len(), LEVELS);
    assert!(ancestors[..LEVELS - 1]
        .iter()
        .all(|s| state(s) == ("missing", None, 0)));
    let past = ancestors[LEVELS - 1];
    assert_eq!(state(past), LEVELS_NOT_READ);
    assert!(
        past["path"]
            .as_str()
            .unwrap()
            .ends_with("/l05/l06/.codex/config.toml"),
        "{}",
        past["path"]
    );
    assert!(server_names(&j).is_empty());
    assert!(
        out.stderr
            .contains("ancestor source too-large (too-many-entries)"),
        "{}",
        out.stderr
    );
    // Instructions are probed at the levels read only.
    let agents = j["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["scope"] == "ancestor")
        .count();
    assert_eq!(agents, 2 * (LEVELS - 1));

    // The levels not read are the project's: the gate cannot rule them out.
    project_server_is_undecided(&t, &deep, "codex");

    // The terminal report says what the source stands for.
    let human = t.run_in(&deep, &[".", "--client", "codex"]);
    assert!(
        human
            .stdout
            .contains("(not read: past the bound of 64 project levels"),
        "{}",
        human.stdout
    );
}

#[test]
fn exactly_64_project_levels_are_all_read() {
    let t = Tree::new();
    let deep = deep_root(&t, LEVELS - 1);
    t.write(
        &root(".codex/config.toml"),
        "[mcp_servers.top]\ncommand = \"x\"\n",
    );
    t.write(
        &root("opencode.json"),
        r#"{"mcp":{"otop":{"type":"local","command":["x"]}}}"#,
    );
    for client in ["codex", "opencode"] {
        let out = t.run_in(&deep, &[".", "--client", client, "--json"]);
        assert_eq!(out.code, 0, "{client}: {}", out.stderr);
        let j = out.json();
        assert_eq!(j["inventoryComplete"], true, "{client}");
        assert_eq!(server_names(&j).len(), 1, "{client}");
    }
}

#[test]
fn opencode_reads_at_most_64_project_levels_and_says_so() {
    let t = Tree::new();
    let deep = deep_root(&t, 70);
    t.write(
        &root("opencode.json"),
        r#"{"mcp":{"top":{"type":"local","command":["x"]}}}"#,
    );
    let out = t.run_in(&deep, &[".", "--client", "opencode", "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let j = out.json();
    assert_eq!(j["inventoryComplete"], false);
    for (scope, file) in [
        ("ancestor-jsonc", "opencode.jsonc"),
        ("ancestor-json", "opencode.json"),
    ] {
        let ancestors = sources(&j, scope);
        assert_eq!(ancestors.len(), LEVELS, "{scope}");
        let past = ancestors[LEVELS - 1];
        assert_eq!(state(past), LEVELS_NOT_READ, "{scope}");
        assert!(past["path"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/l06/{file}")));
    }
    assert!(server_names(&j).is_empty());
    project_server_is_undecided(&t, &deep, "opencode");
}

/// `--fail-on project-server` run in `cwd` for `client` cannot rule the condition out: exit 1,
/// `failOn.undecided` names it.
fn project_server_is_undecided(t: &Tree, cwd: &std::path::Path, client: &str) {
    let gated = t.run_in(
        cwd,
        &[
            ".",
            "--client",
            client,
            "--json",
            "--fail-on",
            "project-server",
        ],
    );
    assert_eq!(gated.code, 1, "{client}: {}", gated.stderr);
    let fail_on = &gated.json()["failOn"];
    assert_eq!(fail_on["met"], json!([]), "{client}");
    assert_eq!(fail_on["undecided"], json!(["project-server"]), "{client}");
}
