//! End-to-end tests of the `scopebox` binary, against the real Docker engine where one is
//! needed. The harness is libtest-mimic (`harness = false`): every test is listed in `main`
//! with what it needs, and one that needs the engine is reported as *ignored* in the summary
//! when none answers ("N ignored"), never as a pass; under `CI=true` it runs and fails instead.
//! `cargo test -p scopebox --test tests -- FILTER` filters as libtest does. Nothing here
//! asserts on timing.

// Running the binary, per-test directories, the engine requirement, engine queries.
mod support;

// Refused input: usage errors, a digest mismatch before any engine call or build, a
// non-empty bundle directory.
mod refusals;

// What the binary prints without an engine (help, usage errors), as reviewed snapshots.
mod cli_snapshots;

// An unreachable engine: exit 3 and a hint naming the address tried.
mod unreachable;

// `scopebox pack`: identical bytes twice; the packed archive passes `--expect-sha256`.
mod pack;

// `scopebox run`: a full run over a small matrix gives exit 0 and a complete, verifiable
// bundle; the stall fault matrix hits the deadline (124), is killed, exported, and removed.
mod run;

// Ctrl-C (SIGINT) while the container runs: exit 130, the run's container and volume gone;
// SIGKILL: the run's reaper removes them, and nothing of another run.
mod interrupt;

// `scopebox sweep` and the start-of-run sweep: leftovers of dead runs go, live runs stay.
mod sweep;

// `scopebox native fetch` / `native lock` refusals decided from the lock and cache alone
// (an offline miss, a tampered cache entry, an invalid lock, an unknown platform or client):
// exit 2 and one JSON object, no network; both native matrices are what their generators write.
mod native;

// `scopebox native` with the real pinned client in the box (a few scenarios): every run
// recorded, the bundle complete, nothing left behind. Only with SCOPEBOX_NATIVE_SUITE=1.
mod native_run;

// Hostile candidates (`scopebox-hostile`, one attack per packed archive) through `scopebox run
// --candidate`: each attack fails the run, every case and the bundle, for the reason that names
// it; the honest mcpscope over the same matrix passes. Slow: run with the filter `hostile`.
mod hostile;

use support::Needs::{Engine, NativeReference, Nothing};

/// `needs module::function, …` → one trial each, named `module::function`.
macro_rules! trials {
    ($engine:expr; $($needs:ident $module:ident :: $test:ident),* $(,)?) => {
        vec![$(support::trial(
            concat!(stringify!($module), "::", stringify!($test)),
            $needs,
            $module::$test,
            $engine,
        )),*]
    };
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let engine = support::engine_answers();
    if !engine && !support::under_ci() {
        eprintln!(
            "note: no Docker engine at {}: the tests that need it are reported as ignored (CI=true makes them fail)",
            scopebox::engine::docker::DockerEngine::host_from_env()
        );
    }
    let mut trials = trials![engine;
        Nothing cli_snapshots::the_help,
        Nothing cli_snapshots::the_run_help,
        Nothing cli_snapshots::an_unknown_platform,
        Nothing cli_snapshots::an_unknown_platform_as_json,
        Nothing refusals::a_candidate_digest_mismatch_is_refused_before_any_engine_call,
        Nothing refusals::pack_refuses_a_mismatching_candidate_too,
        Nothing refusals::a_candidate_without_its_digest_is_a_usage_error,
        Nothing refusals::a_zero_deadline_is_a_usage_error,
        Nothing refusals::a_non_empty_bundle_directory_is_refused,
        Nothing refusals::an_invalid_matrix_is_refused,
        Nothing refusals::with_json_every_refusal_answers_with_one_object_and_creates_nothing,
        Nothing refusals::an_unwritable_stderr_changes_neither_the_exit_code_nor_the_json_answer,
        Nothing unreachable::an_unreachable_engine_exits_3_naming_the_socket,
        Nothing unreachable::with_json_an_unreachable_engine_answers_with_the_code_message_and_hint,
        Nothing unreachable::sweep_also_exits_3_without_an_engine,
        Nothing pack::packing_twice_gives_identical_bytes_per_platform_and_the_digest_is_recorded,
        Engine run::a_full_run_passes_on_every_platform_and_writes_one_complete_verifiable_bundle,
        Engine run::the_stall_fault_hits_the_deadline_is_killed_exported_and_removed,
        Engine run::a_failing_case_fails_the_run_with_exit_1_and_still_cleans_up,
        Engine run::a_named_platform_the_engine_cannot_run_is_refused_before_anything_with_exit_4,
        Engine run::the_default_set_runs_what_the_engine_can_and_says_plainly_what_it_did_not_cover,
        Engine run::a_build_that_fails_answers_json_and_leaves_no_bundle_directory,
        Engine run::a_warm_run_goes_ahead_while_cargo_checks_and_keeps_its_bundle_when_nothing_changed,
        Engine run::a_run_writes_junit_and_one_archive_that_verifies_on_its_own,
        Engine run::a_signed_run_carries_provenance_that_the_verifier_ties_to_the_receipt,
        Engine interrupt::ctrl_c_while_the_container_runs_exits_130_and_leaves_nothing_behind,
        Engine interrupt::sigterm_while_the_container_runs_is_taken_for_ctrl_c,
        Engine interrupt::ctrl_c_during_the_static_build_exits_130_stops_cargo_and_writes_nothing,
        Engine interrupt::sigkill_while_the_container_runs_leaves_the_reaper_to_remove_it_and_nothing_else,
        Engine sweep::leftovers_of_dead_runs_are_swept_and_live_ones_stay,
        Engine sweep::keep_on_failure_keeps_the_objects_until_scopebox_sweep,
        Nothing native::offline_with_an_empty_cache_is_refused_naming_the_first_missing_file,
        Nothing native::a_tampered_cache_entry_is_refused_with_both_digests,
        Nothing native::a_lock_with_an_unknown_field_is_refused_before_anything_else,
        Nothing native::an_unknown_platform_and_a_bad_version_bump_are_refused,
        Nothing native::the_native_matrix_is_generated_and_consistent,
        NativeReference native_run::the_real_client_runs_in_the_box_and_every_run_is_recorded,
        Engine hostile::executing_every_configured_command_then_deleting_the_marker_is_caught_by_the_witness,
        Engine hostile::executing_with_a_redirected_marker_environment_is_caught_by_the_witness,
        Engine hostile::a_double_forked_daemon_that_executes_later_is_caught,
        Engine hostile::executing_through_memfd_create_and_execveat_is_caught,
        Engine hostile::a_canary_leaked_base64_encoded_in_an_extra_json_field_is_caught,
        Engine hostile::a_canary_written_to_a_file_in_tmp_and_deleted_is_caught_by_the_witness,
        Engine hostile::a_file_named_with_terminal_escapes_is_caught_and_never_printed_raw,
        Engine hostile::a_flood_of_files_is_caught_and_reported_within_bounds,
        Engine hostile::a_candidate_that_empties_and_moves_the_journal_fails_the_run_closed,
        Engine hostile::a_fifo_planted_where_the_runner_writes_its_summary_fails_the_run_closed_at_once,
        Engine hostile::evidence_past_the_journal_budget_stops_the_runner_and_keeps_the_cases_before,
        Engine hostile::a_candidate_that_kills_the_runner_fails_the_run_closed,
        Engine hostile::a_tree_deeper_than_a_path_can_name_is_caught_and_cleared,
        Engine hostile::fixture_roots_locked_by_the_candidate_are_caught_and_given_back,
        Engine hostile::entries_left_in_tmp_without_an_open_are_caught_and_cleared,
        Engine hostile::times_and_extended_attributes_changed_without_an_open_are_caught,
        Engine hostile::a_candidate_that_kills_the_witness_fails_the_run_closed,
        Engine hostile::the_honest_candidate_passes_the_same_matrix_and_its_bundle_verifies,
    ];
    trials.push(libtest_mimic::Trial::test(
        "harness::every_test_is_listed_in_main",
        || every_test_is_listed_in_main().map_err(Into::into),
    ));
    libtest_mimic::run(&args, trials).exit();
}

/// Under `harness = false` a `#[test]` function is compiled out and never runs: refuse any in
/// tests/, so a test added the libtest way fails here instead of silently not running.
fn every_test_is_listed_in_main() -> Result<(), String> {
    let dir = support::workspace().join("tests");
    let mut stray = Vec::new();
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("read {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("read {}: {e}", path.display()))?;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_start();
            if line.starts_with("#[test]") || line.starts_with("#[tokio::test") {
                stray.push(format!("{}:{}", path.display(), n + 1));
            }
        }
    }
    if stray.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "tests/ uses the libtest-mimic harness: make these `pub fn` and list them in tests/tests.rs main: {}",
            stray.join(", ")
        ))
    }
}
