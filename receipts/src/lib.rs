//! scopebox-receipts: the shared schema of the evidence loop (fixture matrix, inner evidence
//! records, boundary policy, receipt index), the digests that bind them, and independent
//! verification (`scopebox-verify`). It must never depend on Docker, tokio, the orchestrator or
//! the harness: an auditor builds it alone.

pub mod attestation;
pub mod digest;
pub mod dsse;
pub mod evidence;
pub mod judge;
pub mod matrix;
pub mod policy;
pub mod receipt;
pub mod selftest;
pub mod synthetic;
pub mod verify;

/// Paths inside the evidence container, shared by the image builder, the runner and the verifier.
pub mod layout {
    /// Where the candidate archive is unpacked in the image (its `bin/mcpscope` lands below).
    pub const CANDIDATE_DIR: &str = "/scopebox/candidate";
    /// The candidate binary the runner executes.
    pub const CANDIDATE_BIN: &str = "/scopebox/candidate/bin/mcpscope";
    pub const RUNNER_BIN: &str = "/scopebox/bin/scopebox-runner";
    pub const SENTINEL_BIN: &str = "/scopebox/bin/scopebox-sentinel";
    /// The matrix exactly as run.
    pub const MATRIX_PATH: &str = "/scopebox/matrix.json";
    /// The named volume the runner writes all evidence to.
    pub const EVIDENCE_DIR: &str = "/evidence";
    /// The sentinel writes this file (and nothing else) whenever it is executed.
    pub const SENTINEL_MARKER: &str = "/tmp/scopebox-sentinel/fired";
    /// tmpfs trees where fixtures are laid out; cleared between cases, walked before and after.
    pub const FIXTURE_ROOTS: [&str; 3] = ["/work", "/home/node", "/etc/claude-code"];
    /// HOME for every candidate invocation.
    pub const HOME: &str = "/home/node";
}
