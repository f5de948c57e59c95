//! The raw records of one native-reference run in the box — what the runner writes under
//! `evidence/native/` and what the orchestrator and the verifier read back to re-derive each
//! run's `Observation` and the differential verdict. Formats only: the runner fills them, the
//! parser (`native_observe`) and the judge (`native`) read them.
//!
//! Layout below the evidence directory (`NATIVE_DIR`):
//!
//! ```text
//! native/index.json                                   NativeIndex (written last)
//! native/<scenario>/<mode>/client.json                 ClientRecord
//! native/<scenario>/<mode>/client.stdout|.stderr       the client's raw output (capped)
//! native/<scenario>/<mode>/witness.json                witness::WitnessRecord of the client's tree
//! native/<scenario>/<mode>/sentinel.txt                the sentinel marker's bytes after the run
//! native/<scenario>/<mode>/http.json                   HttpLog of the loopback listeners
//! native/<scenario>/<mode>/inventory/record.json       evidence::CaseRecord of mcpscope on the tree
//! native/<scenario>/<mode>/inventory/stdout|stderr     its raw output
//! native/<scenario>/<mode>/inventory/witness.json      its witness record (candidate rules)
//! ```
//!
//! `<mode>` is `list`, `get` or `headless` (`native::Mode::as_str`); `<scenario>` is the
//! scenario id (`[a-z0-9-]+`, checked by the matrix validation, so it is a safe path segment).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Below the evidence directory.
pub const NATIVE_DIR: &str = "native";
pub const INDEX_FILE: &str = "native/index.json";
pub const CLIENT_RECORD_FILE: &str = "client.json";
pub const CLIENT_STDOUT_FILE: &str = "client.stdout";
pub const CLIENT_STDERR_FILE: &str = "client.stderr";
pub const CLIENT_WITNESS_FILE: &str = "witness.json";
pub const SENTINEL_FILE: &str = "sentinel.txt";
pub const HTTP_LOG_FILE: &str = "http.json";
/// The inventory's case directory (`record.json`, `stdout`, `stderr`, `witness.json` as for a
/// candidate case).
pub const INVENTORY_DIR: &str = "inventory";
/// The native matrix exactly as run, in the image.
pub const NATIVE_MATRIX_IN_IMAGE: &str = "/scopebox/native-matrix.json";
/// Most bytes of the client's stdout or stderr kept per run; more are counted, not kept.
pub const CLIENT_OUTPUT_LIMIT: usize = 1024 * 1024;
/// Most requests kept per listener and run; more are only counted.
pub const HTTP_REQUEST_LIMIT: usize = 256;

/// One run of the native client (`client.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClientRecord {
    pub scenario: String,
    /// `list`, `get`, `headless`.
    pub mode: String,
    /// Full argv, the client's image path first.
    pub argv: Vec<String>,
    pub cwd: String,
    /// The complete environment the client got, sorted `NAME=value`.
    pub env: Vec<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// The per-run deadline passed and the client's process group was killed.
    pub timed_out: bool,
    pub duration_micros: u64,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
}

/// One captured stream: the kept bytes are the file next to the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CapturedOutput {
    /// `client.stdout` or `client.stderr`.
    pub file: String,
    /// sha256 of the kept bytes (the file).
    pub sha256: String,
    /// Bytes the client wrote in all (kept + dropped).
    pub total_bytes: u64,
    /// Whether more than `CLIENT_OUTPUT_LIMIT` bytes came (only the first are kept).
    pub truncated: bool,
}

/// What the loopback listeners saw during one run (`http.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HttpLog {
    /// The model-API stand-in (`modelApi.port`): every request, answered with `modelApi.status`.
    pub model_api: ListenerLog,
    /// Each MCP listener port of the matrix (`listeners`), as a decimal string key.
    pub listeners: BTreeMap<String, ListenerLog>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListenerLog {
    pub port: u16,
    /// In arrival order (at most `HTTP_REQUEST_LIMIT`).
    pub requests: Vec<HttpRequest>,
    /// Requests beyond the limit (only counted).
    pub requests_dropped: u64,
}

/// One request as it arrived (never its headers or body bytes: only the method, the path and
/// the body's length).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HttpRequest {
    /// Arrival order over all listeners of the run, from 0.
    pub order: u32,
    pub method: String,
    /// The request target as sent (lossy UTF-8, at most 1024 bytes).
    pub path: String,
    pub body_bytes: u64,
}

/// The run index (`native/index.json`), written after every run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NativeIndex {
    /// The native matrix's `name` and the sha256 of its bytes as run.
    pub matrix: String,
    pub matrix_sha256: String,
    /// `client.id` and `client.version` of the matrix.
    pub client: String,
    pub client_version: String,
    /// The client binary's path in the image and the sha256 the runner measured of its bytes.
    pub client_path: String,
    pub client_sha256: String,
    /// `uname -m` as the runner saw it.
    pub machine: String,
    /// Every run in matrix order: scenario, mode and its directory below `native/`.
    pub runs: Vec<NativeRunEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NativeRunEntry {
    pub scenario: String,
    pub mode: String,
    /// `get` runs: the name asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `<scenario>/<mode>`.
    pub dir: String,
    /// Whether the runner could complete the run (laid out, both programs started and reaped);
    /// `false` with `error` naming what went wrong — the judge then fails it.
    pub completed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
