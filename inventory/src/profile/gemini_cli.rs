//! The Gemini CLI profile (`--client gemini-cli`): the four settings files
//! Gemini CLI merges, highest precedence first — system overrides
//! (`/etc/gemini-cli/settings.json`), workspace (`<root>/.gemini/settings.json`),
//! user (`~/.gemini/settings.json`), system defaults
//! (`/etc/gemini-cli/system-defaults.json`); macOS and Windows keep the system
//! files in `/Library/Application Support/GeminiCli` and
//! `C:\ProgramData\gemini-cli`. Servers under `mcpServers`, merged by name,
//! the higher file's entry winning (`possibleShadowedBy`). Each file is read
//! as Gemini CLI reads it: comments stripped, then strict JSON (no trailing
//! comma, no BOM).
//!
//! Folder trust: Gemini CLI ignores the workspace file in an untrusted folder.
//! The workspace source's `trusted` comes from `~/.gemini/trustedFolders.json`
//! (listed as the `trusted-folders` source: a broken one stops Gemini CLI) and
//! `security.folderTrust.enabled` in the user and system files: `true` when
//! folder trust is off or a `TRUST_FOLDER`/`TRUST_PARENT` rule covers the root,
//! `false` for a `DO_NOT_TRUST` rule, `"unknown"` otherwise (an interactive
//! session then distrusts the folder, a headless one trusts it, an IDE may
//! decide). Rule paths are compared lexically, never resolved. The workspace
//! file is read whatever the answer. Gemini CLI does not read a workspace file
//! when the root is the home directory (their realpaths compared, as Gemini CLI
//! does); that source is then left out.
//!
//! This profile must never run anything, resolve `$VAR` references, read an
//! extension, or report a field's value or a trust rule's path.

use std::path::Path;

use crate::host::Os;
use crate::instructions;
use crate::json::Value;
use crate::model::{FileState, Reason, Source, Transport, Tri, Unavailable};
use crate::profile::grammar::{self, field, Grammar, Kind};
use crate::profile::layers::{self, Checked, Container, Layer, Precedence, Syntax};
use crate::profile::{coverage, Candidate, Context, Inventory, Profile, Shadowing};

pub const SYSTEM: &str = "system";
pub const WORKSPACE: &str = "workspace";
pub const USER: &str = "user";
pub const SYSTEM_DEFAULTS: &str = "system-defaults";
pub const TRUSTED_FOLDERS: &str = "trusted-folders";

const SHADOW_ORDER: [&str; 4] = [SYSTEM, WORKSPACE, USER, SYSTEM_DEFAULTS];

const FIELDS: [grammar::Field; 15] = [
    field("args", Kind::StringArray, "invalid-args"),
    field("authProviderType", Kind::Any, ""),
    field("command", Kind::String, "invalid-command"),
    field("cwd", Kind::String, "invalid-cwd"),
    field("description", Kind::Any, ""),
    field("env", Kind::StringMap, "invalid-env"),
    field("excludeTools", Kind::StringArray, "invalid-exclude-tools"),
    field("headers", Kind::StringMap, "invalid-headers"),
    field("httpUrl", Kind::String, "invalid-http-url"),
    field("includeTools", Kind::StringArray, "invalid-include-tools"),
    field("oauth", Kind::Object, "invalid-oauth"),
    field("timeout", Kind::Number, "invalid-timeout"),
    field("trust", Kind::Bool, "invalid-trust"),
    field("type", Kind::Any, ""),
    field("url", Kind::String, "invalid-url"),
];

/// `httpUrl` is streamable HTTP, `url` SSE unless `type` says `http`.
pub const GRAMMAR: Grammar = Grammar {
    type_key: Some("type"),
    types: grammar::STDIO_SSE_HTTP,
    urls: &[("httpUrl", Transport::Http), ("url", Transport::Sse)],
    ..Grammar::base(&FIELDS)
};

pub const NOT_EXAMINED: [&str; 9] = [
    "extensions",
    "mcp-allow-and-exclude-lists",
    "mcp-server-enablement",
    "admin-remote-settings",
    "system-path-overrides",
    "ide-workspace-trust",
    "env-var-resolution",
    "nested-instructions",
    "instruction-imports",
];

/// The system settings directory on `os`.
pub fn system_dir(os: Os) -> &'static str {
    match os {
        Os::Linux => "/etc/gemini-cli",
        Os::MacOs => "/Library/Application Support/GeminiCli",
        Os::Windows => "C:\\ProgramData\\gemini-cli",
    }
}

pub struct GeminiCli;

fn entry(e: &Value) -> Checked {
    grammar::check(e, &GRAMMAR)
}

impl Profile for GeminiCli {
    fn id(&self) -> &'static str {
        "gemini-cli"
    }

    fn title(&self) -> &'static str {
        "Gemini CLI"
    }

    fn candidates(&self, os: Os) -> Vec<Candidate> {
        let sep = if os == Os::Windows { "\\" } else { "/" };
        let dir = system_dir(os);
        let p = "json-with-comments";
        vec![
            Candidate::new(SYSTEM, format!("{dir}{sep}settings.json"), p, "mcpServers"),
            Candidate::new(WORKSPACE, "<root>/.gemini/settings.json", p, "mcpServers"),
            Candidate::new(USER, "~/.gemini/settings.json", p, "mcpServers"),
            Candidate::new(
                SYSTEM_DEFAULTS,
                format!("{dir}{sep}system-defaults.json"),
                p,
                "mcpServers",
            ),
            Candidate::new(
                TRUSTED_FOLDERS,
                "~/.gemini/trustedFolders.json",
                p,
                "(trust rules)",
            ),
        ]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::ScopeOrder(&SHADOW_ORDER)
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        let c = Container::Map(&["mcpServers"]);
        let syntax = Syntax::JSON_COMMENTS;
        let dir = system_dir(ctx.host.os);
        let mut layers = vec![Layer::system(
            ctx,
            SYSTEM,
            &format!("{dir}/settings.json"),
            syntax,
            c,
            0,
        )];
        // Gemini CLI compares the realpaths of the two (HOME as spelled where it has none):
        // a HOME that is a link to the root makes it skip the workspace file too.
        let root_is_home = ctx.host.home.as_deref().is_some_and(|h| {
            h == ctx.root.canonical
                || h == ctx.root.explicit
                || std::fs::canonicalize(h).is_ok_and(|real| real == ctx.root.canonical)
        });
        if !root_is_home {
            layers.push(Layer::root(
                ctx,
                WORKSPACE,
                ".gemini/settings.json",
                syntax,
                c,
                1,
            ));
        }
        layers.push(Layer::home(
            ctx,
            USER,
            ".gemini/settings.json",
            syntax,
            c,
            2,
        ));
        layers.push(Layer::system(
            ctx,
            SYSTEM_DEFAULTS,
            &format!("{dir}/system-defaults.json"),
            syntax,
            c,
            3,
        ));

        // Read every settings file, noting `security.folderTrust.enabled`
        // (system overrides user overrides system defaults).
        let mut folder_trust: [Option<bool>; 4] = [None; 4];
        let mut sources = Vec::with_capacity(layers.len() + 1);
        let mut rows = Vec::new();
        for (i, layer) in layers.iter().enumerate() {
            let mut seen = None;
            let (source, found) = layers::read_with(layer, entry, &mut |top| {
                seen = folder_trust_setting(top);
            });
            folder_trust[layer.rank] = seen;
            sources.push(source);
            rows.extend(found.into_iter().map(|(s, on)| (i, s, on)));
        }
        let (trust_source, rules) = trust_rules(ctx);
        // Precedence for this one setting: system, user, system defaults (the
        // workspace cannot vouch for itself).
        let enabled = folder_trust[0]
            .or(folder_trust[2])
            .or(folder_trust[3])
            .unwrap_or(true);
        let trusted = if !enabled {
            Tri::Known(true)
        } else {
            match rules {
                Some(rules) => decide(&rules, &ctx.root.canonical, &ctx.root.explicit),
                None => Tri::Unknown,
            }
        };
        for s in sources.iter_mut().filter(|s| s.scope == WORKSPACE) {
            s.trusted = Some(trusted);
        }
        sources.push(trust_source);

        let mut instructions = instructions::probe_levels(&ctx.root.canonical, &["GEMINI.md"]);
        instructions.push(match &ctx.host.home {
            Some(h) => instructions::probe("user", h, ".gemini/GEMINI.md"),
            None => instructions::home_unknown("user", ".gemini/GEMINI.md"),
        });
        Inventory {
            sources,
            servers: layers::relate(&layers, rows, Precedence::Rank),
            instructions,
            coverage: coverage(&NOT_EXAMINED),
        }
    }
}

/// `security.folderTrust.enabled` when it is a boolean.
fn folder_trust_setting(top: &Value) -> Option<bool> {
    let security = top.as_object()?.get("security")?.as_object()?;
    match security.get("folderTrust")?.as_object()?.get("enabled")? {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

/// A trust rule: the path it covers and whether it trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    /// The rule's own key (its length decides between overlapping rules).
    key: String,
    /// The directory the rule covers (the key, or its parent for
    /// `TRUST_PARENT`).
    covers: String,
    trusts: bool,
}

/// Read `~/.gemini/trustedFolders.json`: its source, and its rules when it
/// was read (`Some(empty)` when it is missing).
fn trust_rules(ctx: &Context) -> (Source, Option<Vec<Rule>>) {
    let layer = Layer::home(
        ctx,
        TRUSTED_FOLDERS,
        ".gemini/trustedFolders.json",
        Syntax::JSON_COMMENTS,
        Container::Map(&[]),
        4,
    );
    let mut source = layer.source();
    source.container = "(trust rules)".to_owned();
    let Some(base) = &layer.base else {
        source.set(Unavailable::new(FileState::Unreadable, Reason::HomeNotSet));
        return (source, None);
    };
    let bytes = match crate::read::read_file(base, &[".gemini", "trustedFolders.json"]) {
        Ok(b) => b,
        Err(u) if u.state == FileState::Missing => return (source, Some(Vec::new())),
        Err(u) => {
            source.set(u);
            return (source, None);
        }
    };
    let top = match layer.syntax.parse(&bytes) {
        Ok(v) => v,
        Err(u) => {
            source.set(u);
            return (source, None);
        }
    };
    source.state = FileState::Present;
    let Some(obj) = top.as_object() else {
        source.set(Unavailable::malformed(Reason::WrongContainerType));
        return (source, None);
    };
    let mut rules = Vec::with_capacity(obj.len());
    for (key, level) in obj.iter() {
        let trusts = match level.as_str() {
            Some("TRUST_FOLDER") | Some("TRUST_PARENT") => true,
            Some("DO_NOT_TRUST") => false,
            _ => {
                source.set(Unavailable::malformed(Reason::InvalidTrustLevel));
                return (source, None);
            }
        };
        let covers = if level.as_str() == Some("TRUST_PARENT") {
            Path::new(key)
                .parent()
                .map_or_else(|| key.to_owned(), |p| p.to_string_lossy().into_owned())
        } else {
            key.to_owned()
        };
        rules.push(Rule {
            key: key.to_owned(),
            covers,
            trusts,
        });
    }
    (source, Some(rules))
}

/// The longest rule covering the root (by either spelling) decides.
fn decide(rules: &[Rule], canonical: &Path, explicit: &Path) -> Tri {
    let within = |root: &Path, dir: &str| !dir.is_empty() && root.starts_with(Path::new(dir));
    rules
        .iter()
        .filter(|r| within(canonical, &r.covers) || within(explicit, &r.covers))
        .max_by_key(|r| r.key.len())
        .map_or(Tri::Unknown, |r| Tri::Known(r.trusts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(key: &str, covers: &str, trusts: bool) -> Rule {
        Rule {
            key: key.into(),
            covers: covers.into(),
            trusts,
        }
    }

    #[test]
    fn the_longest_covering_rule_decides() {
        let p = Path::new("/home/u/work/proj");
        let rules = [
            rule("/home/u", "/home/u", true),
            rule("/home/u/work", "/home/u/work", false),
        ];
        assert_eq!(decide(&rules, p, p), Tri::Known(false));
        assert_eq!(decide(&rules[..1], p, p), Tri::Known(true));
        assert_eq!(decide(&[], p, p), Tri::Unknown);
        // Whole components only: /home/u/wo does not cover /home/u/work.
        assert_eq!(
            decide(&[rule("/home/u/wo", "/home/u/wo", true)], p, p),
            Tri::Unknown
        );
        // The explicit spelling counts too.
        let explicit = Path::new("/link/proj");
        assert_eq!(
            decide(&[rule("/link/proj", "/link/proj", true)], p, explicit),
            Tri::Known(true)
        );
    }

    #[test]
    fn folder_trust_is_read_from_security() {
        let setting = |s: &'static str| {
            folder_trust_setting(
                &crate::json::parse(s.as_bytes(), &crate::json::Options::STRICT).unwrap(),
            )
        };
        assert_eq!(
            setting(r#"{"security":{"folderTrust":{"enabled":false}}}"#),
            Some(false)
        );
        assert_eq!(setting(r#"{"security":{}}"#), None);
        assert_eq!(
            setting(r#"{"security":{"folderTrust":{"enabled":"no"}}}"#),
            None
        );
    }
}
