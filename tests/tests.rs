//! End-to-end tests of the `scopebox` binary, against the real Docker engine where one is
//! needed. Under `CI=true` a missing engine fails those tests; elsewhere they are skipped with a
//! note on stderr. Nothing here asserts on timing.

// Running the binary, per-test directories, the engine requirement, engine queries.
mod support;

// Refused input: usage errors, a digest mismatch before any engine call or build, a
// non-empty bundle directory.
mod refusals;

// An unreachable engine: exit 3 and a hint naming the address tried.
mod unreachable;

// `scopebox pack`: identical bytes twice; the packed archive passes `--expect-sha256`.
mod pack;

// `scopebox run`: a full run over a small matrix gives exit 0 and a complete, verifiable
// bundle; the stall fault matrix hits the deadline (124), is killed, exported, and removed.
mod run;

// Ctrl-C (SIGINT) while the container runs: exit 130, the run's container and volume gone.
mod interrupt;

// `scopebox sweep` and the start-of-run sweep: leftovers of dead runs go, live runs stay.
mod sweep;

// `scopebox native fetch` / `native lock` refusals decided from the lock and cache alone
// (an offline miss, a tampered cache entry, an invalid lock, an unknown platform): exit 2
// and one JSON object, no network.
mod native;

// Hostile candidates (`scopebox-hostile`, one attack per packed archive) through `scopebox run
// --candidate`: each attack fails the run, every case and the bundle, for the reason that names
// it; the honest mcpscope over the same matrix passes. Slow: run with the filter `hostile`.
mod hostile;
