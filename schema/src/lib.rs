//! scopebox-schema: the formats of the evidence loop — the fixture matrix, the records the
//! runner writes inside the container, the boundary policy, the receipt index — the digests that
//! bind them, and the one judge that turns raw captures into verdicts. It is what the static
//! runner and the orchestrator need, and nothing more: no signing, no argument parsing, no I/O
//! beyond what a record needs. Verification, signing and `scopebox-verify` live in
//! `scopebox-receipts`, which depends on this crate.

pub mod canary;
pub mod digest;
pub mod engine;
pub mod evidence;
pub mod judge;
pub mod matrix;
pub mod native;
pub mod native_capture;
pub mod native_observe;
pub mod native_receipt;
#[cfg(any(test, feature = "native-sample"))]
pub mod native_sample;
pub mod platform;
pub mod policy;
pub mod receipt;
pub mod shipped;
pub mod strict_json;
pub mod witness;

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
    pub const FIXTURE_ROOTS: [&str; 5] = [
        "/work",
        "/home/node",
        "/etc/claude-code",
        "/etc/codex",
        "/etc/gemini-cli",
    ];
    /// HOME for every candidate invocation.
    pub const HOME: &str = "/home/node";
    /// Where the kernel witness binaries sit, one per machine the engine may run natively:
    /// `<WITNESS_DIR>/<uname machine>/scopebox-witness` (x86_64 and aarch64). An image carries
    /// both, so it does not depend on the host; which one runs is the container's business.
    pub const WITNESS_DIR: &str = "/scopebox/witness";
    /// The witness binary's file name below `WITNESS_DIR/<machine>/`.
    pub const WITNESS_NAME: &str = "scopebox-witness";
    /// Container environment (set at create time, never baked into the image) naming the
    /// engine's own machine (`uname -m` spelling, e.g. `x86_64`): the runner starts
    /// `WITNESS_DIR/<it>/scopebox-witness`, which runs natively beside an emulated platform.
    /// The verifier checks the inspection's value against the receipt's engine architecture.
    pub const ENGINE_MACHINE_ENV: &str = "SCOPEBOX_ENGINE_MACHINE";

    /// The witness binary for `machine` (`x86_64`, `aarch64`).
    pub fn witness_bin(machine: &str) -> String {
        format!("{WITNESS_DIR}/{machine}/{WITNESS_NAME}")
    }
}
