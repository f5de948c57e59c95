//! What Codex would launch: each Codex row's `predictedLaunch` for `codex mcp list`, `codex mcp
//! get NAME` and a headless `codex exec`, from what the Codex profile already read (layer,
//! trust, file state, shape, `enabled`, field names) — no other value of any file. The rules are
//! the observations of the pinned native reference, Codex [`VALIDATED_AGAINST`]
//! (`docs/native-codex.md`), not the documentation:
//!
//! - `mcp list` and `mcp get` start no stdio server; `mcp list` contacts every enabled http
//!   server without `bearer_token_env_var` (a GET of its URL and its OAuth discovery paths):
//!   `launch` — but not one with a static `Authorization` header, and one with
//!   `env_http_headers` only when that variable is unset: with either header table, whose
//!   names and variables mcpscope never reads, `unknown`; `mcp get` contacts nothing: `listed`.
//! - `exec` starts every enabled server of every loaded layer: `launch`; an http server whose
//!   `bearer_token_env_var` is set is connected only if that variable is set — mcpscope reads no
//!   environment: `unknown`.
//! - `enabled = false` (the highest layer that sets it, the tables merge): `disabled` in every
//!   mode.
//! - A project or ancestor file of an untrusted project is never loaded: `not-read`.
//! - Codex refuses to start in every mode when a loaded file is malformed (syntax, a duplicate
//!   key or table) or holds a server Codex refuses (command beside url, an inline bearer
//!   token, neither command nor url when no other layer gives one): `refused` for every row.
//! - The same name in several loaded layers: the tables merge, the highest layer's row is the
//!   one whose args fire; the others are `shadowed`.
//!
//! A row whose fate depends on something not read (trust `unknown`, an unreadable loaded file)
//! is `unknown`, with `validatedAgainst: null`.

use std::collections::HashMap;

use serde::Serialize;

use crate::model::{FileState, Server, Source, Transport, Tri};
use crate::profile::layers::LayeredRow;

/// The native Codex version whose runs confirmed these rules.
pub const VALIDATED_AGAINST: &str = "0.163.0";

/// What one mode would do with a Codex declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Prediction {
    /// Started (stdio) or contacted (http).
    Launch,
    /// Shown by the mode, not started or contacted.
    Listed,
    /// Switched off (`enabled = false`): shown disabled, never started.
    Disabled,
    /// A higher loaded layer declares the same name: its table wins.
    Shadowed,
    /// In a file Codex does not load (an untrusted project).
    NotRead,
    /// Codex refuses to start: a loaded file is malformed or holds a refused server.
    Refused,
    /// Depends on something mcpscope does not read.
    Unknown,
}

/// `predictedLaunch` of a Codex row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PredictedLaunch {
    /// `codex mcp list`.
    pub list: Prediction,
    /// `codex mcp get NAME` (unlike Claude Code's, it launches nothing list would).
    pub get: Prediction,
    /// A headless `codex exec`.
    pub headless: Prediction,
    pub validated_against: Option<&'static str>,
}

impl PredictedLaunch {
    fn all(p: Prediction) -> PredictedLaunch {
        PredictedLaunch {
            list: p,
            get: p,
            headless: p,
            validated_against: (p != Prediction::Unknown).then_some(VALIDATED_AGAINST),
        }
    }
}

/// A Codex row: the layered fields, then `predictedLaunch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodexRow {
    #[serde(flatten)]
    pub layered: LayeredRow,
    pub predicted_launch: PredictedLaunch,
}

impl crate::model::ServerExtension for CodexRow {
    fn report(&self, server: &Server, out: &mut String) {
        crate::model::ServerExtension::report(&self.layered, server, out);
        let p = &self.predicted_launch;
        let line = match (p.list, p.headless) {
            (_, Prediction::Refused) => {
                "Codex refuses to start with this configuration (a loaded file is malformed or holds a server it refuses)"
            }
            (_, Prediction::NotRead) => "not loaded: the project is not trusted",
            (_, Prediction::Disabled) => "switched off: never started",
            (_, Prediction::Shadowed) => "a higher layer's table of this name wins",
            (Prediction::Launch, Prediction::Launch) => {
                "contacted by `codex mcp list` (OAuth discovery) and connected by `codex exec`"
            }
            (_, Prediction::Launch) => "runs in every `codex exec` session (no approval step)",
            (_, Prediction::Unknown) => "whether `codex exec` starts it depends on what mcpscope does not read",
            _ => "listed, not started",
        };
        out.push_str("      predicted: ");
        out.push_str(line);
        if p.validated_against.is_some() {
            out.push_str(" (as observed with Codex ");
            out.push_str(VALIDATED_AGAINST);
            out.push(')');
        }
        out.push('\n');
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn clone_box(&self) -> Box<dyn crate::model::ServerExtension> {
        Box::new(self.clone())
    }
}

/// Whether Codex loads a source: `Some(true)` loaded, `Some(false)` never (untrusted
/// project), `None` unknown.
fn loaded(source: &Source) -> Option<bool> {
    match source.trusted {
        None | Some(Tri::Known(true)) => Some(true),
        Some(Tri::Known(false)) => Some(false),
        Some(Tri::Unknown) => None,
    }
}

/// Give every row its `predictedLaunch`. `layer_of[i]` is row i's index in `sources` (which are
/// in precedence order, highest first, as the rows' layers).
pub fn annotate(sources: &[Source], servers: &mut [Server], layer_of: &[usize]) {
    // Does Codex start at all? A malformed loaded file or a refused server stops it.
    let mut unknown_everywhere = false;
    let mut refused = false;
    for s in sources {
        match (loaded(s), s.state) {
            (Some(false), _) => {}
            (_, FileState::Malformed) if loaded(s) == Some(true) => refused = true,
            (_, FileState::Present | FileState::Missing) => {}
            _ => unknown_everywhere = true,
        }
    }
    // name -> row indexes in loaded layers, highest precedence first.
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut order: Vec<usize> = (0..servers.len()).collect();
    order.sort_by_key(|&i| layer_of[i]);
    for &i in &order {
        if loaded(&sources[layer_of[i]]) != Some(false) {
            by_name.entry(servers[i].name.as_str()).or_default().push(i);
        }
    }
    for rows in by_name.values() {
        let merged = rows.len() > 1;
        for &i in rows {
            let s = &servers[i];
            let refused_here = s
                .shape
                .problems
                .iter()
                .any(|p| !(merged && *p == "missing-command"));
            if !s.shape.valid && refused_here {
                refused = true;
            }
        }
    }
    let mut out: Vec<Option<PredictedLaunch>> = vec![None; servers.len()];
    for rows in by_name.values() {
        let winner = rows[0];
        // The tables merge: the highest layer that sets a field decides it.
        let sets = |field: &str| {
            rows.iter()
                .copied()
                .find(|&i| servers[i].shape.fields.contains(&field))
        };
        let enabled = sets("enabled").is_none_or(|i| layered(&servers[i]).enabled != Some(false));
        let transport = rows
            .iter()
            .map(|&i| servers[i].shape.transport)
            .find(|t| *t != Transport::Unknown)
            .unwrap_or(Transport::Unknown);
        let bearer = sets("bearer_token_env_var").is_some();
        // Header names are never read: a static `Authorization` header stops list's OAuth
        // probe (observed), an env header depends on the environment.
        let headers = sets("http_headers").is_some() || sets("env_http_headers").is_some();
        let trust_unknown = rows
            .iter()
            .any(|&i| loaded(&sources[layer_of[i]]).is_none());
        for &i in rows {
            let p = if i != winner {
                PredictedLaunch::all(Prediction::Shadowed)
            } else if !enabled {
                PredictedLaunch::all(Prediction::Disabled)
            } else {
                let http = transport == Transport::Http;
                PredictedLaunch {
                    list: match (http, bearer, headers) {
                        (true, false, false) => Prediction::Launch,
                        (true, false, true) => Prediction::Unknown,
                        _ => Prediction::Listed,
                    },
                    get: Prediction::Listed,
                    headless: if http && bearer {
                        Prediction::Unknown
                    } else {
                        Prediction::Launch
                    },
                    validated_against: Some(VALIDATED_AGAINST),
                }
            };
            out[i] = Some(if trust_unknown {
                PredictedLaunch::all(Prediction::Unknown)
            } else {
                p
            });
        }
    }
    for (i, s) in servers.iter_mut().enumerate() {
        let p = if loaded(&sources[layer_of[i]]) == Some(false) {
            PredictedLaunch::all(Prediction::NotRead)
        } else if unknown_everywhere {
            PredictedLaunch::all(Prediction::Unknown)
        } else if refused {
            PredictedLaunch::all(Prediction::Refused)
        } else {
            out[i].expect("every loaded row has a prediction")
        };
        let layered = layered(s).clone();
        s.ext = crate::model::Extension::new(CodexRow {
            layered,
            predicted_launch: p,
        });
    }
}

fn layered(s: &Server) -> &LayeredRow {
    s.ext
        .0
        .as_any()
        .downcast_ref::<LayeredRow>()
        .expect("Codex rows carry a LayeredRow before annotation")
}
