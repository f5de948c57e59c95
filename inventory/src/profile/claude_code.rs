//! The Claude Code profile (the default): four fixed MCP sources and the
//! CLAUDE.md/AGENTS.md instruction candidates, as in the "Claude Code profile"
//! section of the seed and `contracts/inventory-v1.md`.
//!
//! | scope   | file                                   | container                       |
//! |---------|----------------------------------------|---------------------------------|
//! | local   | `~/.claude.json`                       | `projects[<root>].mcpServers`   |
//! | project | `<root>/.mcp.json`                     | `mcpServers`                    |
//! | user    | `~/.claude.json`                       | `mcpServers`                    |
//! | managed | `<managed dir>/managed-mcp.json`       | `mcpServers`                    |
//!
//! Local lookup tries the canonical root and the explicit absolute spelling;
//! entries under both keys make the local source `malformed` /
//! `ambiguous-project-key` (never merged; no other key is searched).
//! `possibleShadowedBy` lists higher scopes in the CLI order (local, then
//! project, then user) with a same-name declaration; it is not an effective-winner
//! calculation. Whenever managed-mcp.json exists in any form (any state but
//! `missing`), every local/project/user server carries
//! `possiblyExcludedBy: ["managed"]`: Claude Code then loads only managed
//! servers (observed with Claude Code 2.1.328), and a file that exists but
//! cannot be read may still be honoured by the host.
//!
//! Each row also carries `predictedLaunch` (and project rows `approval`),
//! from the approval, trust and policy keys `claude_launch` reads — those keys
//! only — by the rules the native reference (Claude Code 2.1.327) was seen to
//! follow. The settings files it reads are not sources: their state never
//! changes `inventoryComplete`.
//!
//! Strict JSON only. This profile must never read instruction contents, run
//! anything or look at any other `projects` key.

use std::any::Any;

use serde::Serialize;

use crate::host::{Host, Os};
use crate::instructions;
use crate::json::{Object, Options};
use crate::model::{Extension, FileState, Reason, Server, ServerExtension, Source, Unavailable};
use crate::profile::claude_launch::{self, Approval, LaunchInputs, PredictedLaunch, ProjectEntry};
use crate::profile::{
    coverage, fill_source, member_object, path_string, with_object, Candidate, Context, Inventory,
    Profile, Shadowing,
};
use crate::root::SelectedRoot;
use crate::shape;

/// The Claude Code profile (`--client claude-code`, alias `claude`).
pub struct ClaudeCode;

impl Profile for ClaudeCode {
    fn id(&self) -> &'static str {
        "claude-code"
    }

    fn title(&self) -> &'static str {
        "Claude Code"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["claude"]
    }

    fn candidates(&self, os: Os) -> Vec<Candidate> {
        let managed = format!(
            "{}{}managed-mcp.json",
            os.claude_managed_dir().display(),
            if os == Os::Windows { "\\" } else { "/" }
        );
        vec![
            Candidate::new(
                LOCAL,
                "~/.claude.json",
                "json",
                "projects[<root>].mcpServers",
            ),
            Candidate::new(PROJECT, "<root>/.mcp.json", "json", "mcpServers"),
            Candidate::new(USER, "~/.claude.json", "json", "mcpServers"),
            Candidate::new(MANAGED, managed, "json", "mcpServers"),
        ]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::ScopeOrder(&SHADOW_ORDER)
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        inventory(ctx.root, ctx.host)
    }

    fn source_report(&self, source: &Source, width: usize, out: &mut String) {
        crate::profile::default_source_report(source, width, out);
    }
}

/// The Claude Code row fields, serialized after `guardForm`: the static
/// shadowing and exclusion hints, then the contract's `approval` (project rows)
/// and `predictedLaunch` (every row), from the native reference's observations
/// (`claude_launch`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaudeRow {
    /// Higher scopes (local, then project) with a declaration of this name.
    pub possible_shadowed_by: Vec<&'static str>,
    /// `["managed"]` when managed-mcp.json exists in any form.
    pub possibly_excluded_by: Vec<&'static str>,
    /// Project (`.mcp.json`) rows only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    pub predicted_launch: PredictedLaunch,
}

impl ServerExtension for ClaudeRow {
    fn report(&self, _server: &Server, out: &mut String) {
        crate::render_human::list_line(out, "possibly shadowed by", &self.possible_shadowed_by);
        crate::render_human::list_line(out, "possibly excluded by", &self.possibly_excluded_by);
        claude_launch::report(
            self.approval.as_ref(),
            &self.predicted_launch,
            !self.possibly_excluded_by.is_empty(),
            out,
        );
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn clone_box(&self) -> Box<dyn ServerExtension> {
        Box::new(self.clone())
    }
}

pub const LOCAL: &str = "local";
pub const PROJECT: &str = "project";
pub const USER: &str = "user";
pub const MANAGED: &str = "managed";

/// Scopes that take part in `possibleShadowedBy`, highest first.
const SHADOW_ORDER: [&str; 3] = [LOCAL, PROJECT, USER];

/// Instruction names at the root and every ancestor, in report order.
pub const LEVEL_INSTRUCTIONS: [&str; 5] = [
    "CLAUDE.md",
    ".claude/CLAUDE.md",
    "CLAUDE.local.md",
    "AGENTS.md",
    ".claude/AGENTS.md",
];

/// Documented coverage limits, in report order.
pub const NOT_EXAMINED: [&str; 15] = [
    "other-project-keys",
    "settings",
    "managed-settings",
    "project-approvals",
    "plugins",
    "connectors",
    "session-flags",
    "environment-overrides",
    "remote-policy",
    "desktop-app-precedence",
    "rules",
    "nested-instructions",
    "instruction-imports",
    "additional-workspace-roots",
    "executable-identity",
];

pub fn inventory(root: &SelectedRoot, host: &Host) -> Inventory {
    let canonical = path_string(&root.canonical);
    let explicit = path_string(&root.explicit);

    let claude_json = match &host.home {
        Some(h) => path_string(&h.join(".claude.json")),
        None => "~/.claude.json".to_owned(),
    };
    let mut local = Source::new(LOCAL, claude_json.clone(), container_for(&canonical));
    let mut user = Source::new(USER, claude_json, "mcpServers".to_owned());
    let (local_rows, user_rows, project_entry) = match &host.home {
        None => {
            let u = Unavailable::new(FileState::Unreadable, Reason::HomeNotSet);
            local.set(u);
            user.set(u);
            (Vec::new(), Vec::new(), ProjectEntry::unusable())
        }
        Some(home) => {
            let rows = with_object(home, &[".claude.json"], &Options::STRICT, |top| {
                let container = local_container(top, &canonical, &explicit, &mut local);
                let l = fill_source(&mut local, container, shape::claude_code);
                let container = member_object(top, "mcpServers");
                let u = fill_source(&mut user, container, shape::claude_code);
                (l, u, ProjectEntry::read(top, &canonical))
            });
            rows.unwrap_or_else(|u| {
                local.set(u);
                user.set(u);
                let entry = if u.state == FileState::Missing {
                    ProjectEntry::absent()
                } else {
                    ProjectEntry::unusable()
                };
                (Vec::new(), Vec::new(), entry)
            })
        }
    };
    // Claude Code keys `projects` by the realpath only: rows found under the
    // explicit (symlinked) spelling are never read by it.
    let not_read_local = explicit != canonical && local.container == container_for(&explicit);

    let mut project = Source::new(
        PROJECT,
        path_string(&root.canonical.join(".mcp.json")),
        "mcpServers".to_owned(),
    );
    let project_rows = read_servers(&mut project, &root.canonical, ".mcp.json");

    let managed_dir = &host.claude_managed_dir;
    let mut managed = Source::new(
        MANAGED,
        path_string(&managed_dir.join("managed-mcp.json")),
        "mcpServers".to_owned(),
    );
    let managed_rows = read_servers(&mut managed, managed_dir, "managed-mcp.json");
    let managed_exists = managed.state != FileState::Missing;
    let inputs = LaunchInputs::read(
        host.home.as_deref(),
        &root.canonical,
        managed_dir,
        (local.path.clone(), project_entry),
    );

    // Appended, not collected anew: rows are large and a 15,000-row inventory
    // should not hold two copies at once.
    let mut servers = local_rows;
    for mut rows in [project_rows, user_rows, managed_rows] {
        servers.append(&mut rows);
    }
    annotate(&mut servers, managed_exists, &inputs, not_read_local);

    let mut instructions = instructions::probe_levels(&root.canonical, &LEVEL_INSTRUCTIONS);
    instructions.push(match &host.home {
        Some(h) => instructions::probe("user", h, ".claude/CLAUDE.md"),
        None => instructions::home_unknown("user", ".claude/CLAUDE.md"),
    });
    instructions.push(instructions::probe("managed", managed_dir, "CLAUDE.md"));

    Inventory {
        sources: vec![local, project, user, managed],
        servers,
        instructions,
        coverage: coverage(&NOT_EXAMINED),
    }
}

fn container_for(key: &str) -> String {
    format!("projects[{key}].mcpServers")
}

/// Read `base/<file>` and take its `mcpServers`.
fn read_servers(source: &mut Source, base: &std::path::Path, file: &str) -> Vec<Server> {
    let rows = with_object(base, &[file], &Options::STRICT, |top| {
        fill_source(source, member_object(top, "mcpServers"), shape::claude_code)
    });
    rows.unwrap_or_else(|u| {
        source.set(u);
        Vec::new()
    })
}

/// Find `projects[<key>].mcpServers` under the canonical or explicit key.
fn local_container<'o, 'a>(
    top: &'o Object<'a>,
    canonical: &str,
    explicit: &str,
    local: &mut Source,
) -> Result<Option<&'o Object<'a>>, Unavailable> {
    let Some(projects) = member_object(top, "projects")? else {
        return Ok(None);
    };
    let mut keys = vec![canonical];
    if explicit != canonical {
        keys.push(explicit);
    }
    let found: Vec<&str> = keys
        .into_iter()
        .filter(|k| projects.get(k).is_some())
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [key] => {
            local.container = container_for(key);
            match member_object(projects, key)? {
                Some(project) => member_object(project, "mcpServers"),
                None => unreachable!("key was found"),
            }
        }
        _ => Err(Unavailable::malformed(Reason::AmbiguousProjectKey)),
    }
}

/// Fill `possibleShadowedBy` and `possiblyExcludedBy` on every row.
/// `servers` is in scope order, each scope sorted by name, so a name is
/// looked up in a higher scope by binary search (no hashing of 15,000 names).
fn annotate(
    servers: &mut [Server],
    managed_exists: bool,
    inputs: &LaunchInputs,
    not_read_local: bool,
) {
    let mut predictions =
        claude_launch::predict(servers, inputs, not_read_local, managed_exists).into_iter();
    let spans: Vec<std::ops::Range<usize>> = SHADOW_ORDER
        .iter()
        .map(|scope| {
            let start = servers.iter().position(|s| s.scope == *scope).unwrap_or(0);
            let len = servers[start..]
                .iter()
                .take_while(|s| s.scope == *scope)
                .count();
            start..start + len
        })
        .collect();
    for i in 0..servers.len() {
        let rank = SHADOW_ORDER.iter().position(|s| *s == servers[i].scope);
        let higher: Vec<&'static str> = (0..rank.unwrap_or(0))
            .filter(|&h| {
                let span = &servers[spans[h].clone()];
                span.binary_search_by(|s| s.name.as_str().cmp(&servers[i].name))
                    .is_ok()
            })
            .map(|h| SHADOW_ORDER[h])
            .collect();
        let s = &mut servers[i];
        let excluded = managed_exists && s.scope != MANAGED;
        let (approval, predicted_launch) = predictions.next().expect("one per row");
        s.ext = Extension::new(ClaudeRow {
            possible_shadowed_by: higher,
            possibly_excluded_by: if excluded { vec![MANAGED] } else { Vec::new() },
            approval,
            predicted_launch,
        });
    }
}
