//! scopebox-runner: the evidence container's entrypoint (`scopebox-runner`, no arguments), a
//! matrix checker for people and CI (`scopebox-runner check-matrix FILE...`), and a host mode
//! for matrix authors and tests (`scopebox-runner run-rebased BASE MATRIX CANDIDATE SENTINEL`:
//! the same run with every container path moved below BASE — no boundary, so its boundary.json
//! proves nothing). The sequence lives in `scopebox_harness::run`; this file only parses argv
//! and maps outcomes to exit codes:
//! 0 every case passed and both controls behaved; 1 a case failed or a control misbehaved;
//! 2 the matrix is unreadable/malformed/invalid (or bad usage); 3 the harness itself failed.

use scopebox_harness::run::{self, RunStatus};
use scopebox_harness::Layout;
use std::process::ExitCode;

const USAGE: &str = "\
usage: scopebox-runner                      run /scopebox/matrix.json inside the evidence container
       scopebox-runner check-matrix FILE...   validate matrix files (exit 0 valid, 2 invalid)
       scopebox-runner run-rebased BASE MATRIX CANDIDATE SENTINEL
                                            run MATRIX on this host below BASE (no boundary:
                                            for matrix authors and tests, never evidence)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let status = match args.first().map(String::as_str) {
        None => run::run(&Layout::container(), &mut std::io::stderr()),
        Some("check-matrix") if args.len() > 1 => check_matrices(&args[1..]),
        Some("run-rebased") if args.len() == 5 => run_rebased(&args[1..]),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            RunStatus::Passed
        }
        Some(_) => {
            eprintln!("error: unexpected arguments\n{USAGE}");
            RunStatus::MatrixRefused
        }
    };
    ExitCode::from(status.exit_code())
}

fn check_matrices(paths: &[String]) -> RunStatus {
    let mut ok = true;
    for path in paths {
        match run::load_matrix(std::path::Path::new(path)) {
            Ok((matrix, sha)) => println!("{path}: ok, {} cases, sha256 {sha}", matrix.cases.len()),
            Err(e) => {
                ok = false;
                eprintln!("error: {}", e.message);
                for p in &e.problems {
                    eprintln!("  {p}");
                }
            }
        }
    }
    if ok {
        RunStatus::Passed
    } else {
        RunStatus::MatrixRefused
    }
}

fn run_rebased(args: &[String]) -> RunStatus {
    let [base, matrix, candidate, sentinel] = args else {
        unreachable!("argument count checked by the caller")
    };
    // Absolute paths: the candidate runs with each case's cwd.
    let absolute =
        |p: &str| std::fs::canonicalize(p).map_err(|e| format!("failed to resolve {p}: {e}"));
    let layout = std::fs::create_dir_all(base)
        .map_err(|e| format!("failed to create {base}: {e}"))
        .and_then(|()| {
            let base = absolute(base)?;
            let mut l = Layout::rebased(&base, &absolute(candidate)?, &absolute(sentinel)?)
                .map_err(|e| format!("failed to lay out {}: {e}", base.display()))?;
            l.matrix_path = matrix.into();
            Ok(l)
        });
    match layout {
        Ok(l) => run::run(&l, &mut std::io::stderr()),
        Err(message) => {
            eprintln!("error: {message}");
            RunStatus::HarnessFailed
        }
    }
}
