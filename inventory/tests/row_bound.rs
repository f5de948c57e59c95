//! The document's bound on server rows, through the real binary: a tree whose
//! files declare more rows than one document lists (or whose rows would carry
//! more name bytes than it holds) is answered with whole sources withheld
//! (`too-large` / `too-many-servers`, `serverCount: 0`), never with a silent
//! cut, and the inventory is incomplete (exit 1). The trees are real size:
//! several files of tens of thousands of servers, built in a temp dir.

use mcpscope::bound::{MAX_NAME_BYTES, MAX_SERVER_ROWS as MAX_ROWS};
use serde_json::Value;

use crate::util::{Tree, ROOT};

#[test]
fn the_bounds_are_the_documented_ones() {
    // docs/contract-additions.md; the trees below are sized for these.
    assert_eq!((MAX_ROWS, MAX_NAME_BYTES), (50_000, 8 << 20));
}

fn root(rel: &str) -> String {
    format!("{ROOT}/{rel}")
}

/// A Continue JSON block declaring `n` servers named `{prefix}{i}`.
fn json_block(prefix: &str, n: usize) -> String {
    let entries: Vec<String> = (0..n).map(|i| format!(r#""{prefix}{i}":{{}}"#)).collect();
    format!(r#"{{"mcpServers":{{{}}}}}"#, entries.join(","))
}

/// A Continue `config.yaml` declaring `n` servers (flow style: small enough
/// for 50,000 rows within the 1 MiB read limit).
fn yaml_config(n: usize) -> String {
    let entries: Vec<String> = (0..n).map(|i| format!("{{name: u{i}}}")).collect();
    format!("mcpServers: [{}]\n", entries.join(", "))
}

fn sources_of<'a>(j: &'a Value, client: Option<&str>, scope: &str) -> Vec<&'a Value> {
    j["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["scope"] == scope && client.is_none_or(|c| s["client"] == c))
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

const WITHHELD: (&str, Option<&str>, u64) = ("too-large", Some("too-many-servers"), 0);

fn rows_from(j: &Value, path_suffix: &str) -> usize {
    j["servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["path"].as_str().unwrap().ends_with(path_suffix))
        .count()
}

#[test]
fn sources_past_the_row_bound_are_withheld_whole_and_the_inventory_is_incomplete() {
    let t = Tree::new();
    // In document order (--client all): cursor, then continue (user, the
    // listing, blocks in name order), then roo-code.
    t.write(
        &root(".cursor/mcp.json"),
        r#"{"mcpServers":{"c1":{"command":"x"},"c2":{"command":"x"}}}"#,
    );
    t.write("home/.continue/config.yaml", yaml_config(5));
    t.write(
        &root(".continue/mcpServers/b0.json"),
        json_block("a", 20_000),
    );
    // Within the bound on its own, but not after the 20,007 rows before it:
    // withheld, and so is every later source with rows, even one that would
    // still fit.
    t.write(
        &root(".continue/mcpServers/b1.json"),
        json_block("b", 30_000),
    );
    t.write(&root(".continue/mcpServers/b2.json"), json_block("c", 10));
    t.write(
        &root(".roo/mcp.json"),
        r#"{"mcpServers":{"r":{"command":"x"}}}"#,
    );

    let out = t.run(&[".", "--client", "all", "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let j = out.json();
    assert_eq!(j["inventoryComplete"], false);

    // Earlier sources are listed in full.
    let cursor = sources_of(&j, Some("cursor"), "project");
    assert_eq!(state(cursor[0]), ("present", None, 2));
    assert_eq!(rows_from(&j, ".cursor/mcp.json"), 2);
    let user = sources_of(&j, Some("continue"), "user");
    assert_eq!(state(user[0]), ("present", None, 5));
    let blocks = sources_of(&j, Some("continue"), "workspace-block");
    assert_eq!(blocks.len(), 3);
    assert_eq!(state(blocks[0]), ("present", None, 20_000));
    assert_eq!(rows_from(&j, "b0.json"), 20_000);
    // The source that crosses the bound and every later one with rows.
    assert_eq!(state(blocks[1]), WITHHELD);
    assert_eq!(state(blocks[2]), WITHHELD);
    assert_eq!(
        state(sources_of(&j, Some("roo-code"), "project")[0]),
        WITHHELD
    );
    for withheld in ["b1.json", "b2.json", ".roo/mcp.json"] {
        assert_eq!(rows_from(&j, withheld), 0, "{withheld}");
    }
    let rows = j["servers"].as_array().unwrap().len();
    assert_eq!(rows, 2 + 5 + 20_000);
    assert!(rows <= MAX_ROWS);

    // The summaries agree with what is listed.
    let summary = |id: &str| {
        j["clients"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["client"] == id)
            .unwrap()
            .clone()
    };
    let cont = summary("continue");
    assert_eq!(cont["inventoryComplete"], false);
    assert_eq!(cont["serverCount"], 20_005);
    assert_eq!(cont["brokenSources"], 2);
    assert_eq!(summary("roo-code")["brokenSources"], 1);
    assert_eq!(summary("cursor")["inventoryComplete"], true);
    assert!(
        out.stderr
            .contains("continue workspace-block source too-large (too-many-servers)"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_document_exactly_at_the_row_bound_lists_every_row() {
    let t = Tree::new();
    t.write("home/.continue/config.yaml", yaml_config(2));
    t.write(
        &root(".continue/mcpServers/b0.json"),
        json_block("a", 20_000),
    );
    t.write(
        &root(".continue/mcpServers/b1.json"),
        json_block("b", 20_000),
    );
    t.write(
        &root(".continue/mcpServers/b2.json"),
        json_block("c", 9_998),
    );
    let out = t.run(&[".", "--client", "continue", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let j = out.json();
    assert_eq!(j["inventoryComplete"], true);
    assert_eq!(j["servers"].as_array().unwrap().len(), MAX_ROWS);
    for s in sources_of(&j, None, "workspace-block") {
        assert_eq!(s["state"], "present");
    }
}

#[test]
fn a_withheld_project_source_leaves_project_server_undecided() {
    let t = Tree::new();
    // A user server, then a project block below the root that would take the
    // document one row past the bound: withheld.
    t.write("home/.continue/config.yaml", yaml_config(1));
    t.write(
        &root(".continue/mcpServers/p.json"),
        json_block("p", MAX_ROWS),
    );
    let run = |extra: &[&str]| t.run(&[&[".", "--client", "continue"][..], extra].concat());

    let r = run(&["--fail-on", "project-server", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let j = r.json();
    assert_eq!(state(sources_of(&j, None, "workspace-block")[0]), WITHHELD);
    assert_eq!(j["failOn"]["met"], serde_json::json!([]));
    assert_eq!(
        j["failOn"]["undecided"],
        serde_json::json!(["project-server"])
    );
    assert!(
        r.stderr.contains(
            "--fail-on cannot rule out: project-server (1 source could not be inventoried)"
        ),
        "{}",
        r.stderr
    );

    // The terminal report says why nothing is listed from the block.
    let human = run(&["--fail-on", "project-server"]);
    assert_eq!(human.code, 1);
    assert!(
        human.stdout.contains("too-large (too-many-servers)"),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("(not listed: too many servers for one document: its bound of 50,000"),
        "{}",
        human.stdout
    );
}

#[test]
fn a_dsh_winner_name_repeated_by_every_row_it_shadows_counts_toward_the_bound() {
    // One YAML row with a 1,000,000-byte name (DSH merges before it validates
    // names) shadows, by identity, every `.mcp.json` row with the same
    // command: each of those rows repeats the name in `shadowedBy.name`.
    let t = Tree::new();
    let name = "n".repeat(1_000_000);
    t.write(
        &root(".dsh/mcp.yml"),
        format!(
            "# >>> dsh-project-mcp-manager:mcp:begin\n- insert:\n    - id: w\n      name: '@deepseek-ai/dsh-mcp-client'\n      config: {{serverName: {name}, transport: stdio, command: c}}\n# <<< dsh-project-mcp-manager:mcp:end\n"
        ),
    );
    let rows: Vec<String> = (0..10)
        .map(|i| format!(r#""s{i}":{{"command":"c"}}"#))
        .collect();
    t.write(
        &root(".mcp.json"),
        format!(r#"{{"mcpServers":{{{}}}}}"#, rows.join(",")),
    );
    let out = t.run(&[".", "--client", "dsh", "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout.len() < 2 * 1_000_000 + 100_000,
        "{} bytes",
        out.stdout.len()
    );
    let j = out.json();
    assert_eq!(
        state(sources_of(&j, None, "dsh-project")[0]),
        ("present", None, 1)
    );
    assert_eq!(state(sources_of(&j, None, "cc-project")[0]), WITHHELD);
    assert_eq!(j["servers"].as_array().unwrap().len(), 1);
    // Ten repeats would have been 11 MB of names.
    assert!(11 * name.len() > MAX_NAME_BYTES);
}

#[test]
fn yaml_aliases_cannot_multiply_a_name_past_the_bound() {
    // One file's anchors and aliases copy in at most 1 MiB of text (a file
    // past that is too-many-nodes: tests/work_bound.rs), but a name they
    // repeat is repeated by every row: a 100,000-byte name aliased by 9 more
    // entries makes 1 MB of names from a 100 KB file. Nine such blocks take
    // the document past its 8 MiB of names: the ninth is withheld.
    let t = Tree::new();
    let name = "n".repeat(100_000);
    let mut yaml = format!("mcpServers:\n  - name: &a {name}\n    command: x\n");
    for _ in 0..9 {
        yaml.push_str("  - name: *a\n    command: x\n");
    }
    for i in 0..9 {
        t.write(&root(&format!(".continue/mcpServers/a{i}.yaml")), &yaml);
    }
    let out = t.run(&[".", "--client", "continue", "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout.len() < MAX_NAME_BYTES + 100_000,
        "{} bytes",
        out.stdout.len()
    );
    let j = out.json();
    let blocks = sources_of(&j, None, "workspace-block");
    for block in &blocks[..8] {
        assert_eq!(state(block), ("present", None, 10));
    }
    assert_eq!(state(blocks[8]), WITHHELD);
    assert_eq!(j["servers"].as_array().unwrap().len(), 80);
    assert!(8 * 10 * name.len() <= MAX_NAME_BYTES && 9 * 10 * name.len() > MAX_NAME_BYTES);
}
