//! Real output deserialized into structs that mirror
//! `contracts/inventory-v1.md` with `deny_unknown_fields`, so any drift
//! (a renamed, dropped or unexpected field, a wrong type, an unknown enum
//! value) fails loudly; plus the contract's ordering and counting rules.

use serde::Deserialize;

use crate::fixtures;
use crate::util::Tree;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Document {
    schema_version: u32,
    tool: Tool,
    client: String,
    root: Root,
    inventory_complete: bool,
    sources: Vec<Source>,
    servers: Vec<Server>,
    instructions: Vec<Instruction>,
    coverage: Coverage,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tool {
    name: String,
    version: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Root {
    requested: String,
    explicit: String,
    canonical: String,
}

#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum State {
    Present,
    Missing,
    Unreadable,
    Malformed,
    SymlinkSkipped,
    NotFile,
    TooLarge,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Source {
    scope: String,
    path: String,
    container: String,
    state: State,
    reason: Option<String>,
    server_count: usize,
    /// Only on a malformed source (an addition: where the parser stopped).
    #[serde(default)]
    position: Option<Position>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Position {
    line: usize,
    column: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Server {
    name: String,
    scope: String,
    path: String,
    configured: bool,
    shape: Shape,
    launch: Launch,
    guard_form: GuardForm,
    // claude-code: always present.
    possible_shadowed_by: Vec<String>,
    possibly_excluded_by: Vec<String>,
    // claude-code additions: `approval` on project rows only, `predictedLaunch` on every row.
    #[serde(default)]
    approval: Option<Approval>,
    predicted_launch: PredictedLaunch,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Approval {
    state: ApprovalState,
    by: Option<String>,
}

#[derive(Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum ApprovalState {
    Approved,
    Rejected,
    Pending,
    Unknown,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PredictedLaunch {
    list: Prediction,
    headless: Prediction,
    validated_against: Option<String>,
}

#[derive(Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Prediction {
    Launch,
    Pending,
    Rejected,
    Shadowed,
    Excluded,
    NotRead,
    Unknown,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Shape {
    valid: bool,
    problems: Vec<String>,
    transport: Transport,
    fields: Vec<String>,
    arg_count: usize,
    env_count: usize,
    header_count: usize,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Transport {
    Stdio,
    Http,
    Sse,
    Ws,
    Unknown,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Launch {
    Executable,
    PackageRunner,
    Container,
    InterpreterScript,
    GuardWrapper,
    Remote,
    Unknown,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum GuardForm {
    Direct,
    Guarded,
    Unknown,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Instruction {
    scope: String,
    path: String,
    name: String,
    state: State,
    reason: Option<String>,
    bytes: Option<u64>,
    applicability: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Coverage {
    not_examined: Vec<String>,
    unknown: Vec<String>,
}

fn kebab(s: &str) -> bool {
    !s.is_empty()
        && s.split('-').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

fn check(doc: &Document) {
    assert_eq!(doc.schema_version, 1);
    assert_eq!(
        (doc.tool.name.as_str(), doc.client.as_str()),
        ("mcpscope", "claude-code")
    );
    assert!(!doc.tool.version.is_empty());
    assert!(
        !doc.root.requested.is_empty()
            && doc.root.explicit.starts_with('[')
            && doc.root.canonical.starts_with('[')
    );
    let scopes: Vec<&str> = doc.sources.iter().map(|s| s.scope.as_str()).collect();
    assert_eq!(scopes, ["local", "project", "user", "managed"]);
    assert_eq!(
        doc.inventory_complete,
        doc.sources
            .iter()
            .all(|s| matches!(s.state, State::Present | State::Missing))
    );
    for s in &doc.sources {
        assert!(s.reason.as_deref().is_none_or(kebab), "{s:?}");
        if let Some(p) = &s.position {
            assert_eq!(s.state, State::Malformed, "{s:?}");
            assert!(p.line >= 1 && p.column >= 1, "{s:?}");
        }
        assert!(!s.path.is_empty() && !s.container.is_empty());
        let rows = doc.servers.iter().filter(|v| v.scope == s.scope).count();
        assert_eq!(rows, s.server_count, "{}", s.scope);
        if s.state != State::Present {
            assert_eq!(s.server_count, 0);
        }
    }
    // Servers: scope order, then name.
    let order = |v: &Server| {
        (
            scopes.iter().position(|s| *s == v.scope).unwrap(),
            v.name.clone(),
        )
    };
    assert!(doc.servers.windows(2).all(|w| order(&w[0]) < order(&w[1])));
    for v in &doc.servers {
        assert!(v.configured);
        assert!(v.shape.problems.iter().all(|p| kebab(p)));
        assert_eq!(v.shape.valid, v.shape.problems.is_empty());
        assert!(v.shape.fields.windows(2).all(|w| w[0] < w[1]));
        assert!(!v.path.is_empty());
        let _ = (
            &v.shape.transport,
            &v.launch,
            &v.guard_form,
            v.shape.arg_count,
            v.shape.env_count,
            v.shape.header_count,
        );
        assert!(v
            .possible_shadowed_by
            .iter()
            .all(|s| ["local", "project"].contains(&s.as_str())));
        assert!(v.possibly_excluded_by.iter().all(|s| s == "managed"));
        assert_eq!(v.approval.is_some(), v.scope == "project", "{v:?}");
        if let Some(a) = &v.approval {
            assert_eq!(a.by.is_none(), a.state == ApprovalState::Pending, "{v:?}");
        }
        // Managed-mcp.json exists in these fixtures whenever a managed row does: every
        // other row is excluded in both modes.
        if !v.possibly_excluded_by.is_empty() {
            assert_eq!(
                (&v.predicted_launch.list, &v.predicted_launch.headless),
                (&Prediction::Excluded, &Prediction::Excluded),
                "{v:?}"
            );
        }
        assert!(v
            .predicted_launch
            .validated_against
            .as_deref()
            .is_none_or(|x| x == "2.1.327"));
    }
    for i in &doc.instructions {
        assert!(["project", "ancestor", "user", "managed"].contains(&i.scope.as_str()));
        assert_eq!(i.applicability, "unknown");
        assert_eq!(i.bytes.is_some(), i.state == State::Present);
        assert!(i.path.ends_with(&i.name));
        assert!(i.reason.as_deref().is_none_or(kebab));
    }
    assert!(doc.coverage.not_examined.iter().all(|c| kebab(c)));
    assert_eq!(
        doc.coverage.unknown[..4],
        [
            "host-version",
            "effective-selection",
            "loading",
            "enforcement"
        ]
    );
}

#[test]
fn full_output_matches_the_contract() {
    let t = Tree::new();
    fixtures::full(&t);
    for r in [t.run_lib(true), t.run(&[".", "--json"])] {
        let doc: Document = serde_json::from_str(&r.stdout).unwrap();
        check(&doc);
        assert!(doc.inventory_complete);
    }
}

#[test]
fn incomplete_output_matches_the_contract() {
    let t = Tree::new();
    fixtures::full(&t);
    t.write("work/team/proj/.mcp.json", "\u{feff}{}");
    t.write(
        "managed/managed-mcp.json",
        r#"{"mcpServers": {"a": {}, "a": {}}}"#,
    );
    t.symlink("nowhere", "home/.claude/CLAUDE.md.tmp");
    for r in [t.run_lib(true), t.run(&[".", "--json"])] {
        let doc: Document = serde_json::from_str(&r.stdout).unwrap();
        check(&doc);
        assert!(!doc.inventory_complete);
        assert_eq!(r.code, 1);
    }
}

#[test]
fn empty_output_matches_the_contract() {
    let t = Tree::new();
    let doc: Document = serde_json::from_str(&t.run(&[".", "--json"]).stdout).unwrap();
    check(&doc);
    assert!(doc.servers.is_empty());
}
