//! What Claude Code would launch: the approval, trust and policy keys the
//! Claude Code profile reads (and no other value of those files), and each
//! row's `approval` and `predictedLaunch` for `claude mcp list`/`mcp get` and a
//! headless `claude -p` session, as observed on the pinned native reference
//! (`docs/native-claude-code.md`, version [`VALIDATED_AGAINST`]).
//!
//! Keys read, per file (every file strict JSON, bounded, no-follow):
//!
//! | file | keys |
//! |---|---|
//! | `/etc/claude-code/managed-settings.json` | `enabledMcpjsonServers`, `enableAllProjectMcpServers`, `disabledMcpjsonServers`, `deniedMcpServers[].serverName`, `allowedMcpServers[].serverName` |
//! | `~/.claude/settings.json` | `enabledMcpjsonServers`, `enableAllProjectMcpServers`, `disabledMcpjsonServers` |
//! | `<root>/.claude/settings.json`, `<root>/.claude/settings.local.json` | the same three (approve only with trust) |
//! | `~/.claude.json` `projects[<realpath root>]` | the same three (approve only with trust), `hasTrustDialogAccepted`, `disabledMcpServers` |
//!
//! The rules follow the observations, not the documentation: rejection
//! (`disabledMcpjsonServers`, anywhere, no trust needed) wins; the user and
//! managed settings approve without trust, the two project settings files and
//! `projects[<root>]` only with `hasTrustDialogAccepted: true`; a pending
//! `.mcp.json` server is not run by `mcp list` but runs in a headless session;
//! `managed-mcp.json` in any state but missing excludes every other server; a
//! local row under the root's non-realpath spelling is never read by the
//! client. A file that cannot be read makes what it could decide `unknown`.
//! A deny/allow entry that names a server by anything but `serverName` is
//! never read: it makes the rows it might match `unknown`.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use crate::json::{Object, Options, Value};
use crate::model::{FileState, Server, Transport};
use crate::profile::{path_string, with_object};

/// The native Claude Code version whose runs confirmed these rules.
pub const VALIDATED_AGAINST: &str = "2.1.327";

/// `approval.state` of a project-scope row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalState {
    Approved,
    Rejected,
    Pending,
    Unknown,
}

/// `approval` of a project-scope (`.mcp.json`) row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Approval {
    pub state: ApprovalState,
    /// The deciding file (for `unknown`: the file that could not be read or
    /// holds a key of an unexpected type); `null` for `pending`.
    pub by: Option<String>,
}

/// What one mode would do with a declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Prediction {
    /// The client starts it (stdio) or connects to it (remote).
    Launch,
    /// Shown as pending approval, not run.
    Pending,
    /// Turned off for this project (`disabledMcpjsonServers`, `disabledMcpServers`): not run.
    Rejected,
    /// A same-named declaration of another scope wins in this mode.
    Shadowed,
    /// Not loaded at all: `managed-mcp.json` exists, or the managed deny/allow list drops it.
    Excluded,
    /// Stored under the root's non-realpath spelling: the client never reads it.
    NotRead,
    /// Depends on something not read (a broken file, an entry not by name).
    Unknown,
}

/// `predictedLaunch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PredictedLaunch {
    /// `claude mcp list` (and `mcp get NAME`, which launches what list would under NAME).
    pub list: Prediction,
    /// A headless `claude -p` session.
    pub headless: Prediction,
    /// [`VALIDATED_AGAINST`] when every rule that decided this row was observed natively.
    pub validated_against: Option<&'static str>,
}

/// A name list key: absent, names, or a value of another type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum Names {
    #[default]
    Absent,
    Some(BTreeSet<String>),
    Invalid,
}

impl Names {
    /// An array of strings, or (as observed) one string for a one-element list.
    fn read(obj: &Object, key: &str) -> Names {
        match obj.get(key) {
            None => Names::Absent,
            Some(Value::String(s)) => Names::Some(BTreeSet::from([s.to_string()])),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<BTreeSet<String>>>()
                .map_or(Names::Invalid, Names::Some),
            Some(_) => Names::Invalid,
        }
    }

    fn names(&self, name: &str) -> Decides {
        match self {
            Names::Absent => Decides::No,
            Names::Some(set) if set.contains(name) => Decides::Yes,
            Names::Some(_) => Decides::No,
            Names::Invalid => Decides::Maybe,
        }
    }
}

/// Whether a key decides for one name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decides {
    Yes,
    No,
    Maybe,
}

/// A boolean key: absent, true, false or another type.
fn flag(obj: &Object, key: &str) -> Decides {
    match obj.get(key) {
        None | Some(Value::Bool(false)) => Decides::No,
        Some(Value::Bool(true)) => Decides::Yes,
        Some(_) => Decides::Maybe,
    }
}

/// The three approval keys of one file.
#[derive(Debug, Clone, Default)]
struct ApprovalKeys {
    enabled: Names,
    enable_all: Option<Decides>,
    disabled: Names,
}

impl ApprovalKeys {
    fn read(obj: &Object) -> ApprovalKeys {
        ApprovalKeys {
            enabled: Names::read(obj, "enabledMcpjsonServers"),
            enable_all: Some(flag(obj, "enableAllProjectMcpServers")),
            disabled: Names::read(obj, "disabledMcpjsonServers"),
        }
    }

    fn approves(&self, name: &str) -> Decides {
        let all = self.enable_all.unwrap_or(Decides::No);
        match (self.enabled.names(name), all) {
            (Decides::Yes, _) | (_, Decides::Yes) => Decides::Yes,
            (Decides::Maybe, _) | (_, Decides::Maybe) => Decides::Maybe,
            _ => Decides::No,
        }
    }
}

/// One file that may approve or reject project servers.
#[derive(Debug, Clone)]
struct ApprovalFile {
    path: String,
    /// `None`: the file exists but cannot be used (unreadable, malformed, ...).
    keys: Option<ApprovalKeys>,
    /// Approves only when the project is trusted.
    needs_trust: bool,
}

impl ApprovalFile {
    fn rejects(&self, name: &str) -> Decides {
        match &self.keys {
            None => Decides::Maybe,
            Some(k) => k.disabled.names(name),
        }
    }

    fn approves(&self, name: &str, trust: Decides) -> Decides {
        let approves = match &self.keys {
            None => Decides::Maybe,
            Some(k) => k.approves(name),
        };
        if !self.needs_trust || approves == Decides::No {
            return approves;
        }
        match trust {
            Decides::Yes => approves,
            Decides::No => Decides::No,
            Decides::Maybe => Decides::Maybe,
        }
    }
}

/// A managed deny or allow list: names by `serverName`; any other entry is
/// not read and matches `unknown`.
#[derive(Debug, Clone, Default)]
struct PolicyList {
    names: BTreeSet<String>,
    /// An entry that is not `{"serverName": "<string>"}`, or the key is not an array.
    unmatched: bool,
}

impl PolicyList {
    fn read(obj: &Object, key: &str) -> Option<PolicyList> {
        let value = obj.get(key)?;
        let mut list = PolicyList::default();
        let Some(items) = value.as_array() else {
            list.unmatched = true;
            return Some(list);
        };
        for item in items {
            let name = item.as_object().and_then(|o| match o.0.as_slice() {
                [(k, Value::String(s))] if k == "serverName" => Some(s.to_string()),
                _ => None,
            });
            match name {
                Some(n) => {
                    list.names.insert(n);
                }
                None => list.unmatched = true,
            }
        }
        Some(list)
    }
}

/// Everything read from the approval, trust and policy keys.
#[derive(Debug, Clone)]
pub struct LaunchInputs {
    /// In the order a deciding file is named: managed, user, project, local, `~/.claude.json`.
    files: Vec<ApprovalFile>,
    /// `projects[<realpath root>].hasTrustDialogAccepted`.
    trust: Decides,
    /// `projects[<realpath root>].disabledMcpServers` (any scope).
    disabled_servers: Names,
    /// The managed settings could not be read: policy unknown.
    managed_unusable: bool,
    denied: Option<PolicyList>,
    allowed: Option<PolicyList>,
}

/// What `~/.claude.json` holds under `projects[<realpath root>]`, read in the
/// same pass as its servers.
#[derive(Debug, Clone)]
pub struct ProjectEntry {
    keys: Option<ApprovalKeys>,
    trust: Decides,
    disabled_servers: Names,
}

impl ProjectEntry {
    /// `~/.claude.json` could not be read (or `projects` is not an object):
    /// none of its keys are known.
    pub fn unusable() -> ProjectEntry {
        ProjectEntry {
            keys: None,
            trust: Decides::Maybe,
            // Its own local and user rows are gone with it, and project rows
            // are `unknown` through their approval already.
            disabled_servers: Names::Absent,
        }
    }

    /// The file is missing: no key is set.
    pub fn absent() -> ProjectEntry {
        ProjectEntry {
            keys: Some(ApprovalKeys::default()),
            trust: Decides::No,
            disabled_servers: Names::Absent,
        }
    }

    /// From the top-level object of `~/.claude.json`; only `projects[canonical]`
    /// is looked at.
    pub fn read(top: &Object, canonical: &str) -> ProjectEntry {
        let project = match top.get("projects") {
            None => return ProjectEntry::absent(),
            Some(Value::Object(projects)) => match projects.get(canonical) {
                None => return ProjectEntry::absent(),
                Some(Value::Object(p)) => p,
                Some(_) => return ProjectEntry::unusable(),
            },
            Some(_) => return ProjectEntry::unusable(),
        };
        ProjectEntry {
            keys: Some(ApprovalKeys::read(project)),
            trust: flag(project, "hasTrustDialogAccepted"),
            disabled_servers: Names::read(project, "disabledMcpServers"),
        }
    }
}

/// One settings file as read: its approval keys (`None`: the file exists but
/// cannot be used; a missing file has no key set) and, for the managed
/// settings, its deny and allow lists.
struct Settings {
    path: String,
    keys: Option<ApprovalKeys>,
    denied: Option<PolicyList>,
    allowed: Option<PolicyList>,
}

impl Settings {
    /// `base/rel…` (`base` `None`: HOME unknown, shown as `shown`).
    fn read(base: Option<&Path>, rel: &[&str], shown: &str, policy: bool) -> Settings {
        let Some(base) = base else {
            return Settings {
                path: shown.to_owned(),
                keys: None,
                denied: None,
                allowed: None,
            };
        };
        let path = path_string(&rel.iter().fold(base.to_path_buf(), |p, c| p.join(c)));
        let read = with_object(base, rel, &Options::STRICT, |top| {
            let list = |key| policy.then(|| PolicyList::read(top, key)).flatten();
            (
                ApprovalKeys::read(top),
                list("deniedMcpServers"),
                list("allowedMcpServers"),
            )
        });
        let (keys, denied, allowed) = match read {
            Ok((keys, denied, allowed)) => (Some(keys), denied, allowed),
            Err(u) if u.state == FileState::Missing => (Some(ApprovalKeys::default()), None, None),
            Err(_) => (None, None, None),
        };
        Settings {
            path,
            keys,
            denied,
            allowed,
        }
    }

    fn file(self, needs_trust: bool) -> ApprovalFile {
        ApprovalFile {
            path: self.path,
            keys: self.keys,
            needs_trust,
        }
    }
}

impl LaunchInputs {
    /// Read the settings files; `claude_json` is the path of `~/.claude.json`
    /// and what the profile already read from it.
    pub fn read(
        home: Option<&Path>,
        root: &Path,
        managed_dir: &Path,
        claude_json: (String, ProjectEntry),
    ) -> LaunchInputs {
        let mut managed = Settings::read(Some(managed_dir), &["managed-settings.json"], "", true);
        let managed_unusable = managed.keys.is_none();
        let (denied, allowed) = (managed.denied.take(), managed.allowed.take());
        let user = Settings::read(
            home,
            &[".claude", "settings.json"],
            "~/.claude/settings.json",
            false,
        );
        let project = Settings::read(Some(root), &[".claude", "settings.json"], "", false);
        let local = Settings::read(Some(root), &[".claude", "settings.local.json"], "", false);
        let (path, entry) = claude_json;
        let files = vec![
            managed.file(false),
            user.file(false),
            project.file(true),
            local.file(true),
            ApprovalFile {
                path,
                keys: entry.keys,
                needs_trust: true,
            },
        ];
        LaunchInputs {
            files,
            trust: entry.trust,
            disabled_servers: entry.disabled_servers,
            managed_unusable,
            denied,
            allowed,
        }
    }

    /// The approval of a `.mcp.json` server named `name`: rejection anywhere
    /// wins, then a file that cannot decide makes it unknown, then approval.
    pub fn approval(&self, name: &str) -> Approval {
        let decided = |state, f: &ApprovalFile| Approval {
            state,
            by: Some(f.path.clone()),
        };
        let mut unknown: Option<&ApprovalFile> = None;
        for f in &self.files {
            match f.rejects(name) {
                Decides::Yes => return decided(ApprovalState::Rejected, f),
                Decides::Maybe => unknown = unknown.or(Some(f)),
                Decides::No => {}
            }
        }
        let mut approved: Option<&ApprovalFile> = None;
        for f in &self.files {
            match f.approves(name, self.trust) {
                Decides::Yes => approved = approved.or(Some(f)),
                Decides::Maybe => unknown = unknown.or(Some(f)),
                Decides::No => {}
            }
        }
        match (unknown, approved) {
            (Some(f), _) => decided(ApprovalState::Unknown, f),
            (None, Some(f)) => decided(ApprovalState::Approved, f),
            (None, None) => Approval {
                state: ApprovalState::Pending,
                by: None,
            },
        }
    }
}

/// A row's stand in one mode, before same-name resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stance {
    /// Decided whatever else declares the name.
    Fixed(Prediction),
    /// Takes the name unless a row ranked above it does; then does `Prediction`.
    Contender(Prediction),
    /// May or may not take the name.
    Maybe,
}

/// Per row: (rank and stance in list, rank and stance headless, validated).
struct RowStance {
    list: (u8, Stance),
    headless: (u8, Stance),
    validated: bool,
}

const RANK_LOCAL: u8 = 0;
const RANK_PROJECT: u8 = 1;
const RANK_USER: u8 = 2;
/// A pending project server in `mcp list`: a user server of the same name wins.
const RANK_PROJECT_PENDING: u8 = 3;

/// Fill `approval` (project rows) and `predictedLaunch` (every row).
/// `servers` holds the profile's rows; `not_read_local` says the local rows
/// come from the root's non-realpath spelling; `managed_exists` that
/// managed-mcp.json is in any state but missing.
pub fn predict(
    servers: &[Server],
    inputs: &LaunchInputs,
    not_read_local: bool,
    managed_exists: bool,
) -> Vec<(Option<Approval>, PredictedLaunch)> {
    use Prediction::*;
    use Stance::*;
    let mut approvals = Vec::with_capacity(servers.len());
    let stances: Vec<RowStance> = servers
        .iter()
        .map(|s| {
            let scope = s.scope;
            let approval = (scope == super::claude_code::PROJECT).then(|| inputs.approval(&s.name));
            let transport_observed =
                matches!(s.shape.transport, Transport::Stdio | Transport::Http);
            let mut validated = transport_observed && s.shape.valid;
            let fixed = |p| RowStance {
                list: (0, Fixed(p)),
                headless: (0, Fixed(p)),
                validated: true,
            };
            let stance = if managed_exists && scope != super::claude_code::MANAGED {
                // Whatever the entry says: the client never loads it.
                validated = true;
                fixed(Excluded)
            } else if not_read_local && scope == super::claude_code::LOCAL {
                validated = true;
                fixed(NotRead)
            } else {
                let name = s.name.as_str();
                let denied = inputs.denied.as_ref();
                let allowed = inputs.allowed.as_ref();
                let deny_by_name = denied.is_some_and(|d| d.names.contains(name));
                let allow_misses = allowed.is_some_and(|a| !a.names.contains(name));
                let disabled = if scope == super::claude_code::MANAGED {
                    Decides::No
                } else {
                    inputs.disabled_servers.names(name)
                };
                if deny_by_name {
                    // Observed for a project server only.
                    validated &= scope == super::claude_code::PROJECT;
                    fixed(Excluded)
                } else if inputs.managed_unusable
                    || denied.is_some_and(|d| d.unmatched)
                    || allowed.is_some_and(|a| a.unmatched && !a.names.contains(name))
                {
                    validated = false;
                    fixed(Unknown)
                } else if allow_misses {
                    validated = false;
                    fixed(Excluded)
                } else if disabled == Decides::Yes {
                    // Observed for user and local servers.
                    validated &=
                        matches!(scope, super::claude_code::USER | super::claude_code::LOCAL);
                    fixed(Rejected)
                } else if disabled == Decides::Maybe || !s.shape.valid {
                    validated = false;
                    RowStance {
                        list: (rank(scope), Maybe),
                        headless: (rank(scope), Maybe),
                        validated,
                    }
                } else {
                    match approval.as_ref().map(|a| a.state) {
                        None => RowStance {
                            list: (rank(scope), Contender(Launch)),
                            headless: (rank(scope), Contender(Launch)),
                            validated,
                        },
                        Some(ApprovalState::Approved) => RowStance {
                            list: (RANK_PROJECT, Contender(Launch)),
                            headless: (RANK_PROJECT, Contender(Launch)),
                            validated,
                        },
                        Some(ApprovalState::Pending) => RowStance {
                            list: (RANK_PROJECT_PENDING, Contender(Pending)),
                            headless: (RANK_PROJECT, Contender(Launch)),
                            validated,
                        },
                        Some(ApprovalState::Rejected) => fixed(Rejected),
                        Some(ApprovalState::Unknown) => RowStance {
                            list: (RANK_PROJECT, Maybe),
                            headless: (RANK_PROJECT, Maybe),
                            validated,
                        },
                    }
                }
            };
            approvals.push(approval);
            RowStance {
                validated: stance.validated && validated,
                ..stance
            }
        })
        .collect();

    let resolved = resolve(servers, &stances);
    approvals
        .into_iter()
        .enumerate()
        .map(|(i, approval)| {
            let [(list, list_ok), (headless, headless_ok)] = resolved[i];
            let validated = stances[i].validated && list_ok && headless_ok;
            (
                approval,
                PredictedLaunch {
                    list,
                    headless,
                    validated_against: validated.then_some(VALIDATED_AGAINST),
                },
            )
        })
        .collect()
}

fn rank(scope: &str) -> u8 {
    match scope {
        super::claude_code::LOCAL => RANK_LOCAL,
        super::claude_code::PROJECT => RANK_PROJECT,
        _ => RANK_USER,
    }
}

/// Same-name resolution in both modes: rows of one name (managed apart from
/// the others) walked by rank. Returns per row and mode its prediction and
/// whether no unvalidated row above it decided it.
type Resolved = Vec<[(Prediction, bool); 2]>;

fn resolve(servers: &[Server], stances: &[RowStance]) -> Resolved {
    let managed = |i: usize| servers[i].scope == super::claude_code::MANAGED;
    let key = |i: usize| (managed(i), servers[i].name.as_str());
    // Group by (managed, name) once; indexes only, no name copies. A group
    // holds at most one row per scope.
    let mut order: Vec<usize> = (0..servers.len()).collect();
    order.sort_by(|&a, &b| key(a).cmp(&key(b)));
    let mut out = vec![[(Prediction::Unknown, true); 2]; servers.len()];
    let mut group: Vec<usize> = Vec::with_capacity(4);
    let mut start = 0;
    while start < order.len() {
        let first = key(order[start]);
        let end = start
            + order[start..]
                .iter()
                .take_while(|&&i| key(i) == first)
                .count();
        for (m, mode) in [|r: &RowStance| r.list, |r: &RowStance| r.headless]
            .iter()
            .enumerate()
        {
            group.clear();
            group.extend_from_slice(&order[start..end]);
            group.sort_by_key(|&i| mode(&stances[i]).0);
            let (mut taken, mut maybe, mut all_validated) = (false, false, true);
            for &i in &group {
                let ok_above = all_validated;
                let p = match mode(&stances[i]).1 {
                    Stance::Fixed(p) => p,
                    Stance::Maybe if taken => Prediction::Shadowed,
                    Stance::Maybe => {
                        maybe = true;
                        all_validated &= stances[i].validated;
                        Prediction::Unknown
                    }
                    Stance::Contender(_) if taken => Prediction::Shadowed,
                    Stance::Contender(p) => {
                        taken = true;
                        all_validated &= stances[i].validated;
                        if maybe {
                            Prediction::Unknown
                        } else {
                            p
                        }
                    }
                };
                out[i][m] = (p, ok_above);
            }
        }
        start = end;
    }
    out
}

/// The report lines of a Claude Code row: its approval (project rows) and, in
/// plain words, what `mcp list`/`mcp get` and a headless session would do.
/// `managed_exclusive`: managed-mcp.json exists (the reason a row is excluded,
/// else the managed deny/allow list).
pub fn report(
    approval: Option<&Approval>,
    p: &PredictedLaunch,
    managed_exclusive: bool,
    out: &mut String,
) {
    if let Some(a) = approval {
        let by = a.by.as_deref().map(crate::render_human::sanitize);
        out.push_str("      approval: ");
        match (a.state, by) {
            (ApprovalState::Pending, _) => out.push_str("pending (no file approves or rejects it)"),
            (ApprovalState::Approved, Some(by)) => {
                out.push_str("approved by ");
                out.push_str(&by);
            }
            (ApprovalState::Rejected, Some(by)) => {
                out.push_str("rejected by ");
                out.push_str(&by);
            }
            (ApprovalState::Unknown, Some(by)) => {
                out.push_str("unknown (");
                out.push_str(&by);
                out.push_str(" cannot be read or holds an unexpected value)");
            }
            (state, None) => out.push_str(match state {
                ApprovalState::Approved => "approved",
                ApprovalState::Rejected => "rejected",
                _ => "unknown",
            }),
        }
        out.push('\n');
    }
    let unapproved = approval.is_some_and(|a| a.state == ApprovalState::Pending);
    out.push_str("      launches: ");
    out.push_str(&launch_sentence(
        p.list,
        p.headless,
        unapproved,
        managed_exclusive,
    ));
    if p.validated_against.is_none() {
        out.push_str(" (rule not validated natively)");
    }
    out.push('\n');
}

/// Why a declaration does not run, for a mode-independent sentence.
fn never_runs(p: Prediction, managed_exclusive: bool) -> &'static str {
    match p {
        Prediction::Excluded if managed_exclusive => {
            "not loaded: managed-mcp.json exists, so only managed servers are"
        }
        Prediction::Excluded => "not loaded: the managed deny/allow list drops it",
        Prediction::Pending => "pending approval",
        Prediction::Rejected => "rejected for this project",
        Prediction::Shadowed => "a same-named server of another scope wins",
        Prediction::NotRead => {
            "stored under the root's symlinked spelling, which Claude Code does not read"
        }
        Prediction::Launch | Prediction::Unknown => "",
    }
}

fn launch_sentence(
    list: Prediction,
    headless: Prediction,
    unapproved: bool,
    managed_exclusive: bool,
) -> String {
    let never_runs = |p| never_runs(p, managed_exclusive);
    let without = if unapproved { " without approval" } else { "" };
    if list == headless {
        return match list {
            Prediction::Launch => {
                format!("runs in mcp list/get (health check) and in headless sessions{without}")
            }
            Prediction::Unknown => "cannot tell (depends on a file or entry not read)".to_owned(),
            other => format!("never runs: {}", never_runs(other)),
        };
    }
    let list_part = match list {
        Prediction::Launch => "runs in mcp list/get (health check)".to_owned(),
        Prediction::Pending => {
            "mcp list/get shows it pending approval and does not run it".to_owned()
        }
        Prediction::Unknown => "mcp list/get: cannot tell".to_owned(),
        other => format!("not run by mcp list/get: {}", never_runs(other)),
    };
    let headless_part = match headless {
        Prediction::Launch => format!("runs in headless sessions{without}"),
        Prediction::Unknown => "headless sessions: cannot tell".to_owned(),
        other => format!("not run in headless sessions: {}", never_runs(other)),
    };
    format!("{list_part}; {headless_part}")
}
