//! Integration tests of scopebox-harness: one binary, modules by subject. They run the real
//! runner logic on this host with a rebased `Layout` (no container: the boundary is the
//! orchestrator's tests' job), against the real `mcpscope` and the real sentinel.

// Shared helpers: temp layouts, built binaries, the shipped matrices, canary and sentinel
// checks, host-stable cases, a host run whose every verdict is replayed.
mod support;
// The shipped matrix files as data: valid, big enough, canaries and sentinels everywhere.
mod matrix_data;
// The host-stable part of the shipped matrix against the real mcpscope; verdict replay.
mod host_run;
// Candidates that misbehave (execute the sentinel, leak a canary, write a fixture, hang)
// are caught by the same judge.
mod detection;
// The scopebox-runner binary: check-matrix, refusal exit codes, the stall fault.
mod binary;
// The kernel witness under run-rebased: honest windows, adversarial controls, hostile scripts,
// refusal without a filter.
mod witness;
// The vscode matrix as data, and its host-stable cases against the real mcpscope.
mod vscode_matrix;
// The DSH matrix as data, and every case against the real mcpscope on this host (rebased).
mod dsh_matrix;
// The clients matrix as data: standard cases per new client, canaries, ids, the manifest.
mod clients_matrix;
