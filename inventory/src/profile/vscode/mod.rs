//! The VS Code / Copilot profile (`--client vscode`): four fixed MCP
//! candidates inventoried separately, and the Copilot/AGENTS/CLAUDE
//! instruction candidates, as in the "VS Code profile" section of the seed.
//! Choices the seed leaves open are documented in `inventory/VSCODE.md`.
//!
//! | origin (= scope) | file                                   | parser | container                    |
//! |------------------|----------------------------------------|--------|------------------------------|
//! | vscode-project   | `<root>/.vscode/mcp.json`              | jsonc  | `servers`                    |
//! | copilot-project  | `<root>/.mcp.json`                     | jsonc  | `mcpServers`, or a bare map  |
//! | vscode-user      | default Code user profile → `mcp.json` | jsonc  | `servers`                    |
//! | copilot-user     | `~/.copilot/mcp-config.json`           | json   | `mcpServers`                 |
//!
//! Reads go through the shared bounded, no-follow reader and parser (JSONC
//! relaxations only where the table says `jsonc`). `sameNameIn` records
//! duplication only: there is no precedence or effective winner between
//! origins. This profile must never run anything, never read instruction
//! contents, never discover other profiles or install locations, and never
//! report a root field's or server field's value.

pub mod container;
pub mod shape;

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde::Serialize;

use crate::host::{Host, Os};
use crate::instructions;
use crate::json::{Options, Value};
use crate::model::{
    Coverage, Extension, FileState, GuardForm, Reason, RootFields, Server, ServerExtension, Shape,
    Source, Unavailable,
};
use crate::profile::{
    fill_source, path_string, with_object, Candidate, Context, Inventory, Profile, Shadowing,
};
use crate::root::SelectedRoot;
use container::Layout;

/// The VS Code / Copilot profile (`--client vscode`).
pub struct Vscode;

impl Profile for Vscode {
    fn id(&self) -> &'static str {
        "vscode"
    }

    fn title(&self) -> &'static str {
        "VS Code / Copilot"
    }

    fn candidates(&self, os: Os) -> Vec<Candidate> {
        let user = format!("~/{}/mcp.json", code_user_dir(os).join("/"));
        vec![
            Candidate::new(
                VSCODE_PROJECT,
                "<root>/.vscode/mcp.json",
                "jsonc",
                container::SERVERS,
            ),
            Candidate::new(
                COPILOT_PROJECT,
                "<root>/.mcp.json",
                "jsonc",
                container::CONTAINER_UNDETERMINED,
            ),
            Candidate::new(VSCODE_USER, user, "jsonc", container::SERVERS),
            Candidate::new(
                COPILOT_USER,
                "~/.copilot/mcp-config.json",
                "json",
                container::MCP_SERVERS,
            ),
        ]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::Duplicates
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        inventory(ctx.root, ctx.host)
    }
}

/// Rows that only record duplication: `sameNameIn`, serialized after
/// `guardForm`. Shared by every profile whose client has no documented winner
/// between scopes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SameNameRow {
    /// Other origins (scopes) with a declaration of the same name, in origin
    /// order. Duplication only, never a winner.
    pub same_name_in: Vec<&'static str>,
}

impl ServerExtension for SameNameRow {
    fn report(&self, _server: &Server, out: &mut String) {
        crate::render_human::list_line(out, "same name in", &self.same_name_in);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn clone_box(&self) -> Box<dyn ServerExtension> {
        Box::new(self.clone())
    }
}

pub const VSCODE_PROJECT: &str = "vscode-project";
pub const COPILOT_PROJECT: &str = "copilot-project";
pub const VSCODE_USER: &str = "vscode-user";
pub const COPILOT_USER: &str = "copilot-user";

/// Origins in report order (sources, servers and `sameNameIn`).
pub const ORIGINS: [&str; 4] = [VSCODE_PROJECT, COPILOT_PROJECT, VSCODE_USER, COPILOT_USER];

/// Instruction names at the root and every ancestor, in report order.
pub const LEVEL_INSTRUCTIONS: [&str; 4] = [
    ".github/copilot-instructions.md",
    "AGENTS.md",
    "CLAUDE.md",
    ".claude/CLAUDE.md",
];

/// Instruction names below the home directory, in report order.
pub const USER_INSTRUCTIONS: [&str; 3] = [
    ".copilot/copilot-instructions.md",
    ".claude/CLAUDE.md",
    ".codex/AGENTS.md",
];

/// Documented coverage limits, in report order.
pub const NOT_EXAMINED: [&str; 20] = [
    "named-profiles",
    "insiders",
    "portable-installs",
    "alternate-user-data-dirs",
    "remote",
    "copilot-home-override",
    "xdg-config-home-override",
    "appdata-override",
    "code-workspace-settings",
    "additional-workspace-folders",
    "dev-containers",
    "settings",
    "input-placeholders",
    "forwarding-rules",
    "local-profile-instructions",
    "instructions-files",
    "rules",
    "nested-instructions",
    "instruction-imports",
    "codex-home-override",
];

/// What no static inventory of this profile can know, in report order.
pub const UNKNOWN: [&str; 6] = [
    "host-version",
    "selected-profile",
    "forwarding",
    "effective-selection",
    "loading",
    "enforcement",
];

/// One fixed candidate of this profile.
struct OriginFile {
    origin: &'static str,
    /// Trusted base directory (may resolve through symlinks) and the
    /// components below it (each opened no-follow); `None` when HOME is unknown.
    base: Option<PathBuf>,
    rel: Vec<&'static str>,
    /// Shown path when the base is unknown.
    unknown_path: &'static str,
    layout: Layout,
    options: Options,
}

impl OriginFile {
    fn parser(&self) -> &'static str {
        if self.options == Options::STRICT {
            "json"
        } else {
            "jsonc"
        }
    }
}

/// The default Code user-profile directory, below home, for `os`. Windows
/// uses the home fallback (`AppData/Roaming`): `APPDATA` is not consulted.
pub fn code_user_dir(os: Os) -> &'static [&'static str] {
    match os {
        Os::Linux => &[".config", "Code", "User"],
        Os::MacOs => &["Library", "Application Support", "Code", "User"],
        Os::Windows => &["AppData", "Roaming", "Code", "User"],
    }
}

fn candidates(root: &SelectedRoot, host: &Host) -> [OriginFile; 4] {
    let home = host.home.clone();
    let mut vscode_user = code_user_dir(host.os).to_vec();
    vscode_user.push("mcp.json");
    [
        OriginFile {
            origin: VSCODE_PROJECT,
            base: Some(root.canonical.clone()),
            rel: vec![".vscode", "mcp.json"],
            unknown_path: "",
            layout: Layout::VsCode,
            options: Options::JSONC,
        },
        OriginFile {
            origin: COPILOT_PROJECT,
            base: Some(root.canonical.clone()),
            rel: vec![".mcp.json"],
            unknown_path: "",
            layout: Layout::PortableOrBare,
            options: Options::JSONC,
        },
        OriginFile {
            origin: VSCODE_USER,
            base: home.clone(),
            rel: vscode_user,
            unknown_path: match host.os {
                Os::Linux => "~/.config/Code/User/mcp.json",
                Os::MacOs => "~/Library/Application Support/Code/User/mcp.json",
                Os::Windows => "~/AppData/Roaming/Code/User/mcp.json",
            },
            layout: Layout::VsCode,
            options: Options::JSONC,
        },
        OriginFile {
            origin: COPILOT_USER,
            base: home,
            rel: vec![".copilot", "mcp-config.json"],
            unknown_path: "~/.copilot/mcp-config.json",
            layout: Layout::Portable,
            options: Options::STRICT,
        },
    ]
}

pub fn inventory(root: &SelectedRoot, host: &Host) -> Inventory {
    let mut sources = Vec::with_capacity(4);
    let mut servers = Vec::new();
    for c in candidates(root, host) {
        let (source, rows) = read_candidate(&c);
        sources.push(source);
        servers.extend(rows);
    }
    annotate_same_names(&mut servers);

    let mut instructions = instructions::probe_levels(&root.canonical, &LEVEL_INSTRUCTIONS);
    for name in USER_INSTRUCTIONS {
        instructions.push(match &host.home {
            Some(h) => instructions::probe("user", h, name),
            None => instructions::home_unknown("user", name),
        });
    }

    Inventory {
        sources,
        servers,
        instructions,
        coverage: Coverage {
            not_examined: NOT_EXAMINED.to_vec(),
            unknown: UNKNOWN.to_vec(),
        },
    }
}

/// Read, parse and interpret one candidate into its source and rows.
fn read_candidate(c: &OriginFile) -> (Source, Vec<Server>) {
    let path = match &c.base {
        Some(base) => path_string(&c.rel.iter().fold(base.clone(), |p, r| p.join(r))),
        None => c.unknown_path.to_owned(),
    };
    let (format, container) = match c.layout {
        Layout::VsCode => (container::FORMAT_VSCODE, container::SERVERS),
        Layout::Portable => (container::FORMAT_PORTABLE, container::MCP_SERVERS),
        Layout::PortableOrBare => (
            container::FORMAT_UNDETERMINED,
            container::CONTAINER_UNDETERMINED,
        ),
    };
    let mut source = Source::new(c.origin, path, container.to_owned());
    source.origin = Some(c.origin);
    source.format = Some(format);
    source.parser = Some(c.parser());

    let Some(base) = &c.base else {
        source.set(Unavailable::new(FileState::Unreadable, Reason::HomeNotSet));
        source.uninterpreted_root_fields = Some(RootFields::Unknown);
        return (source, Vec::new());
    };
    let shape_of: fn(&Value) -> Shape = match c.layout {
        Layout::VsCode => shape::vscode,
        Layout::Portable | Layout::PortableOrBare => shape::portable,
    };
    let result = with_object(base, &c.rel, &c.options, |top| {
        let i = container::interpret(top, c.layout);
        source.format = Some(i.format);
        source.container = i.container.to_owned();
        source.uninterpreted_root_fields = Some(i.root_fields);
        // Declarations whose env holds a number or null: valid VS Code
        // shapes beyond the string-only guard recognizer.
        let beyond: HashSet<&str> = match i.entries {
            Ok(Some(entries)) => entries
                .iter()
                .filter(|(_, e)| shape::env_beyond_strings(e))
                .map(|(name, _)| name)
                .collect(),
            _ => HashSet::new(),
        };
        let mut rows = fill_source(&mut source, i.entries, shape_of);
        for row in &mut rows {
            if beyond.contains(row.name.as_str()) {
                row.guard_form = GuardForm::Unknown;
            }
        }
        rows
    });
    let mut rows = result.unwrap_or_else(|u| {
        source.set(u);
        source.uninterpreted_root_fields = Some(if u.state == FileState::Missing {
            RootFields::Known(false)
        } else {
            RootFields::Unknown
        });
        Vec::new()
    });
    for row in &mut rows {
        row.origin = Some(c.origin);
        row.format = source.format;
    }
    (source, rows)
}

/// Fill `sameNameIn` on every row: the other origins (in origin order) that
/// declare the same name. Duplication only, never a winner.
fn annotate_same_names(servers: &mut [Server]) {
    let bit = |origin: &str| ORIGINS.iter().position(|o| *o == origin);
    let mut seen: HashMap<&str, u8> = HashMap::new();
    for s in servers.iter() {
        if let Some(b) = bit(s.scope) {
            *seen.entry(s.name.as_str()).or_default() |= 1 << b;
        }
    }
    let others: Vec<Vec<&'static str>> = servers
        .iter()
        .map(|s| {
            let bits = seen.get(s.name.as_str()).copied().unwrap_or(0);
            ORIGINS
                .iter()
                .enumerate()
                .filter(|(i, o)| bits & (1 << i) != 0 && **o != s.scope)
                .map(|(_, o)| *o)
                .collect()
        })
        .collect();
    for (s, o) in servers.iter_mut().zip(others) {
        s.ext = Extension::new(SameNameRow { same_name_in: o });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Launch, Transport};

    fn row(origin: &'static str, name: &str) -> Server {
        Server {
            client: None,
            name: name.to_owned(),
            scope: origin,
            origin: Some(origin),
            format: None,
            path: String::new(),
            configured: true,
            shape: Shape {
                valid: true,
                problems: Vec::new(),
                transport: Transport::Stdio,
                fields: Vec::new(),
                arg_count: 0,
                env_count: 0,
                header_count: 0,
            },
            launch: Launch::Executable,
            guard_form: GuardForm::Direct,
            ext: Extension::none(),
        }
    }

    #[test]
    fn same_name_in_lists_the_other_origins_in_origin_order() {
        let mut rows = vec![
            row(VSCODE_PROJECT, "a"),
            row(COPILOT_PROJECT, "b"),
            row(VSCODE_USER, "a"),
            row(COPILOT_USER, "a"),
            row(COPILOT_USER, "A"),
        ];
        annotate_same_names(&mut rows);
        let got: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.ext.get::<SameNameRow>().unwrap().same_name_in.clone())
            .collect();
        assert_eq!(
            got,
            vec![
                vec![VSCODE_USER, COPILOT_USER],
                vec![],
                vec![VSCODE_PROJECT, COPILOT_USER],
                vec![VSCODE_PROJECT, VSCODE_USER],
                // Exact names only: no case folding or normalization.
                vec![],
            ]
        );
    }

    #[test]
    fn the_default_code_user_directory_per_os() {
        assert_eq!(code_user_dir(Os::Linux), [".config", "Code", "User"]);
        assert_eq!(
            code_user_dir(Os::MacOs),
            ["Library", "Application Support", "Code", "User"]
        );
        assert_eq!(
            code_user_dir(Os::Windows),
            ["AppData", "Roaming", "Code", "User"]
        );
    }
}
