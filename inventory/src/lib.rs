//! mcpscope: the read-only MCP inventory library.
//!
//! Module map (what each owns):
//! - [`read`]: bounded, symlink-safe file access (the only config reader);
//! - [`json`]: the strict/JSONC parser; [`json_out`]: writing `--json`;
//! - [`model`]: the v1 output types and closed vocabularies;
//! - [`shape`], [`classify`]: entry shape checks, launch/guard classification;
//! - [`instructions`]: instruction-file metadata probing;
//! - [`profile`]: one module per client (`--client`);
//! - [`root`], [`host`]: root selection and the injected host environment;
//! - [`render_human`]: the terminal report and sanitization; [`cli`]: flags;
//! - [`refusal`]: what `--json` prints when nothing could be inventoried;
//! - [`bound`]: the document's bound on server rows (`too-many-servers`).
//!
//! [`run`] is the whole program minus process I/O: it never prints, exits,
//! executes or writes. [`Status::exit_code`] is the one place exit codes are
//! decided; [`gate`] decides which conditions (`--fail-on`) set them.

pub mod bound;
pub mod classify;
pub mod cli;
pub mod gate;
pub mod host;
pub mod instructions;
pub mod json;
pub mod json_out;
pub mod model;
pub mod profile;
pub mod read;
pub mod refusal;
pub mod render_human;
pub mod root;
pub mod shape;
pub mod toml_config;

use std::ffi::OsString;

pub use host::{Host, Os};
pub use profile::{Client, Profile};

use model::{Document, Tool, SCHEMA_VERSION};
use render_human::sanitize;
use root::SelectedRoot;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
}

/// One invocation, already parsed.
#[derive(Debug, Clone)]
pub struct Request {
    pub root: OsString,
    pub client: Client,
    pub format: Format,
    /// `--dsh-profile NAME` (dsh only; validated by the CLI).
    pub dsh_profile: Option<String>,
    /// `--fail-on` conditions; `None`: the default gate (`incomplete`).
    pub fail_on: Option<Vec<gate::Condition>>,
}

/// How an invocation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every fixed source was present or missing.
    Complete,
    /// Some fixed source was unreadable, malformed, symlink-skipped,
    /// not a file or too large.
    Incomplete,
    /// The root argument was empty, missing or not a directory.
    InvalidRoot,
    /// Unknown flag, unknown client, missing argument.
    Usage,
    /// A `--fail-on` condition other than `incomplete` held.
    ConditionMet,
    /// The report could not be written (stdout full or failing; a reader that
    /// went away, a closed pipe, is not this).
    OutputLost,
}

impl Status {
    /// The documented exit codes: 0 nothing to report; 1 invalid root, an
    /// incomplete inventory (when `incomplete` is gated, the default) or a
    /// report that could not be written; 2 usage error; 3 another `--fail-on`
    /// condition held.
    pub fn exit_code(self) -> u8 {
        match self {
            Status::Complete => 0,
            Status::Incomplete | Status::InvalidRoot | Status::OutputLost => 1,
            Status::Usage => 2,
            Status::ConditionMet => 3,
        }
    }
}

/// What to print and how to exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    pub status: Status,
}

/// Select the root, inventory it with the requested profile and render.
pub fn run(req: &Request, host: &Host) -> Outcome {
    let mut stdout = Vec::new();
    let (status, stderr) = run_to(req, host, &mut stdout);
    Outcome {
        stdout: String::from_utf8(stdout).expect("output is UTF-8"),
        stderr,
        status,
    }
}

/// [`run`], writing stdout as it is produced (the binary passes a buffered
/// stdout: a 15,000-server JSON document is never held in memory whole).
/// Returns the status and what belongs on stderr. A failed write (a closed
/// pipe) is not an inventory outcome and is ignored here.
pub fn run_to(req: &Request, host: &Host, stdout: &mut dyn std::io::Write) -> (Status, String) {
    let root = match root::select(&req.root, host.cwd.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            if req.format == Format::Json {
                let _ = refusal::Refusal::invalid_root(e, &req.root).write_to(stdout);
            }
            let shown = req.root.to_string_lossy();
            let msg = format!("mcpscope: error: {}\n", e.message(&sanitize(&shown)));
            return (Status::InvalidRoot, msg);
        }
    };
    let mut doc = document_with(req.client, &root, host, req.dsh_profile.as_deref());
    let conditions = gate::in_force(req.fail_on.as_deref());
    let met = gate::met(&conditions, &doc);
    let undecided = gate::undecided(&conditions, &met, &doc);
    if req.fail_on.is_some() {
        doc.fail_on = Some(model::FailOnReport {
            conditions: conditions.iter().map(|c| c.id()).collect(),
            met: met.iter().map(|(c, _)| c.id()).collect(),
            undecided: undecided.iter().map(|(c, _)| c.id()).collect(),
        });
    }
    let _ = match req.format {
        Format::Json => json_out::pretty_to(stdout, &doc),
        Format::Human => stdout.write_all(render_human::render(&doc, req.client).as_bytes()),
    };
    let mut stderr = String::new();
    if !doc.inventory_complete {
        let bad: Vec<String> = doc
            .sources
            .iter()
            .filter(|s| !s.state.is_complete())
            .map(|s| {
                let scope = match s.client {
                    Some(c) => format!("{c} {}", s.scope),
                    None => s.scope.to_owned(),
                };
                match s.reason {
                    Some(r) => format!("{scope} source {} ({})", s.state.as_str(), r.as_str()),
                    None => format!("{scope} source {}", s.state.as_str()),
                }
            })
            .collect();
        stderr.push_str(&format!(
            "mcpscope: inventory incomplete: {}\n",
            bad.join("; ")
        ));
    }
    let others: Vec<String> = met
        .iter()
        .filter(|(c, _)| *c != gate::Condition::Incomplete)
        .map(|(c, n)| {
            let what = match c {
                gate::Condition::InvalidEntry => {
                    render_human::plural(*n, "invalid entry", "invalid entries")
                }
                _ => render_human::plural(*n, "server", "servers"),
            };
            format!("{} ({what})", c.id())
        })
        .collect();
    if !others.is_empty() {
        stderr.push_str(&format!("mcpscope: --fail-on met: {}\n", others.join(", ")));
    }
    if !undecided.is_empty() {
        let open: Vec<String> = undecided
            .iter()
            .map(|(c, n)| {
                let what = render_human::plural(*n, "source", "sources");
                format!("{} ({what} could not be inventoried)", c.id())
            })
            .collect();
        stderr.push_str(&format!(
            "mcpscope: --fail-on cannot rule out: {}\n",
            open.join(", ")
        ));
    }
    let status =
        if met.iter().any(|(c, _)| *c == gate::Condition::Incomplete) || !undecided.is_empty() {
            Status::Incomplete
        } else if !met.is_empty() {
            Status::ConditionMet
        } else {
            Status::Complete
        };
    (status, stderr)
}

/// The v1 document for a selected root.
pub fn document(client: Client, root: &SelectedRoot, host: &Host) -> Document {
    document_with(client, root, host, None)
}

/// [`document`] with the dsh profile name (`--dsh-profile`).
pub fn document_with(
    client: Client,
    root: &SelectedRoot,
    host: &Host,
    dsh_profile: Option<&str>,
) -> Document {
    let ctx = profile::Context {
        root,
        host,
        dsh_profile,
    };
    // The one place the document's row bound is applied, each profile's
    // inventory in document order (readers build no rows past it either).
    let mut admission = bound::Admission::new();
    let (inv, clients) = bound::guarded(|| match client {
        Client::One(p) => {
            let mut inv = p.inventory(&ctx);
            admission.admit(&mut inv);
            (inv, None)
        }
        Client::All => {
            let (inv, summaries) = every_profile(&ctx, &mut admission);
            (inv, Some(summaries))
        }
    });
    Document {
        schema_version: SCHEMA_VERSION,
        tool: Tool::this(),
        client: client.id(),
        root: root.to_model(),
        inventory_complete: Document::complete(&inv.sources),
        sources: inv.sources,
        servers: inv.servers,
        instructions: inv.instructions,
        coverage: inv.coverage,
        clients,
        fail_on: None,
    }
}

/// `--client all`: every profile in registry order, each row tagged with its
/// profile; coverage is the union of every profile's (first-seen order), and
/// each profile's own is in its summary. The row bound is applied to each
/// profile before its summary is taken, so the summaries count what is listed.
fn every_profile(
    ctx: &profile::Context,
    admission: &mut bound::Admission,
) -> (profile::Inventory, Vec<model::ClientSummary>) {
    let mut all = profile::Inventory {
        sources: Vec::new(),
        servers: Vec::new(),
        instructions: Vec::new(),
        coverage: model::Coverage {
            not_examined: Vec::new(),
            unknown: Vec::new(),
        },
    };
    let mut summaries = Vec::with_capacity(profile::REGISTRY.len());
    for &p in profile::REGISTRY.iter() {
        let id = p.id();
        let mut inv = p.inventory(ctx);
        admission.admit(&mut inv);
        summaries.push(model::ClientSummary {
            client: id,
            title: p.title(),
            inventory_complete: Document::complete(&inv.sources),
            server_count: inv.servers.len(),
            broken_sources: inv
                .sources
                .iter()
                .filter(|s| !s.state.is_complete())
                .count(),
            coverage: inv.coverage.clone(),
        });
        inv.sources.iter_mut().for_each(|s| s.client = Some(id));
        inv.servers.iter_mut().for_each(|s| s.client = Some(id));
        inv.instructions
            .iter_mut()
            .for_each(|i| i.client = Some(id));
        all.sources.append(&mut inv.sources);
        all.servers.append(&mut inv.servers);
        all.instructions.append(&mut inv.instructions);
        for c in inv.coverage.not_examined {
            if !all.coverage.not_examined.contains(&c) {
                all.coverage.not_examined.push(c);
            }
        }
        for c in inv.coverage.unknown {
            if !all.coverage.unknown.contains(&c) {
                all.coverage.unknown.push(c);
            }
        }
    }
    (all, summaries)
}

/// The document as pretty JSON (two-space indent) with a final newline.
pub fn to_json(doc: &Document) -> String {
    // About 700 bytes per server row.
    json_out::pretty(doc, 8192 + 700 * doc.servers.len())
}
