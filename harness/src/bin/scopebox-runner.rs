//! scopebox-runner: the evidence container's entrypoint (`scopebox-runner`, no arguments), a
//! matrix checker for people and CI (`scopebox-runner check-matrix FILE...`), a host mode
//! for matrix authors and tests (`scopebox-runner run-rebased BASE MATRIX CANDIDATE SENTINEL`:
//! the same run with every container path moved below BASE — no boundary, so its boundary.json
//! proves nothing — in private user, mount and network namespaces so that the sentinel's fixed
//! marker directory and socket are its own), and the adversarial controls' stand-ins
//! (`scopebox-runner hostile NAME SENTINEL`, run only by the runner itself). The native
//! reference's container runs `scopebox-runner native MATRIX CLIENT [--shard=I/N]`
//! (`scopebox_harness::native`): the same witness, another sequence.
//!
//! A run always happens under the kernel witness: started bare, the runner execs
//! `scopebox-witness` (in the container `/scopebox/witness/$SCOPEBOX_ENGINE_MACHINE/…`, on a
//! host the one beside this binary), which re-executes it under its filter; if the witness
//! cannot start or install its filter the run is refused (error.json, exit 3). The sequence
//! lives in `scopebox_harness::run`; this file only parses argv and maps outcomes to exit codes:
//! 0 every case passed and every control behaved; 1 a case failed or a control misbehaved;
//! 2 the matrix is unreadable/malformed/invalid (or bad usage); 3 the harness itself failed.

use scopebox_harness::native::{self, Shard as NativeShard};
use scopebox_harness::run::{self, RunStatus};
use scopebox_harness::unforked::RunnerAllocator;
use scopebox_harness::watch::{self, Entry, Watch};
use scopebox_harness::Layout;
use scopebox_schema::evidence::{Shard, SHARD_ENV};
use scopebox_schema::layout;
use std::path::PathBuf;
use std::process::ExitCode;

/// What the matrix and the canary search are built in stays out of every fork (`unforked`).
#[global_allocator]
static ALLOCATOR: RunnerAllocator = RunnerAllocator;

const USAGE: &str = "\
usage: scopebox-runner                      run /scopebox/matrix.json inside the evidence container
       scopebox-runner check-matrix FILE...   validate matrix files (exit 0 valid, 2 invalid)
       scopebox-runner run-rebased BASE MATRIX CANDIDATE SENTINEL
                                            run MATRIX on this host below BASE (no boundary:
                                            for matrix authors and tests, never evidence)
       scopebox-runner hostile NAME SENTINEL  an adversarial control's stand-in (the runner's own)
       scopebox-runner native MATRIX CLIENT [--shard=I/N]
                                            run a native matrix against the real CLIENT inside
                                            the native container (scenarios I, I+N, ... only)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let status = match args.first().map(String::as_str) {
        None => watched(&Layout::container(), &args, Host::Container, &Job::Matrix),
        Some("native") if (3..=4).contains(&args.len()) => match native_job(&args) {
            Ok((layout, job)) => watched(&layout, &args, Host::Container, &job),
            Err(message) => {
                eprintln!("error: {message}\n{USAGE}");
                RunStatus::MatrixRefused
            }
        },
        Some("check-matrix") if args.len() > 1 => check_matrices(&args[1..]),
        Some("run-rebased") if args.len() == 5 => run_rebased(&args),
        Some("hostile") if args.len() == 3 => {
            return ExitCode::from(scopebox_harness::hostile::main(&args[1], &args[2]))
        }
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

/// Where the run happens: which witness to exec, and how to isolate a host run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Host {
    Container,
    Rebased,
}

/// What the runner does once under the witness.
enum Job {
    /// The candidate matrix (`scopebox_harness::run`).
    Matrix,
    /// A native matrix against the real client (`scopebox_harness::native`).
    Native { client: PathBuf, shard: NativeShard },
}

/// Environment naming the shard when no `--shard` is given (the orchestrator sets it at create
/// time: the image's command is fixed).
const NATIVE_SHARD_ENV: &str = "SCOPEBOX_NATIVE_SHARD";

/// `native MATRIX CLIENT [--shard=I/N]`: the container layout with the native matrix.
fn native_job(args: &[String]) -> Result<(Layout, Job), String> {
    let from_env = std::env::var(NATIVE_SHARD_ENV)
        .ok()
        .map(|v| format!("--shard={v}"));
    let shard = match args.get(3).or(from_env.as_ref()) {
        None => NativeShard::ALL,
        Some(a) => a
            .strip_prefix("--shard=")
            .and_then(NativeShard::parse)
            .ok_or_else(|| format!("{a:?} is not --shard=I/N with I < N"))?,
    };
    let mut layout = Layout::container();
    layout.matrix_path = PathBuf::from(&args[1]);
    Ok((
        layout,
        Job::Native {
            client: PathBuf::from(&args[2]),
            shard,
        },
    ))
}

/// Runs `job` on `layout` under the kernel witness, getting under it first if need be (`args`
/// are this process's arguments, given again to the re-executed runner).
fn watched(layout: &Layout, args: &[String], host: Host, job: &Job) -> RunStatus {
    let mut progress = std::io::stderr();
    match watch::entry() {
        Err(e) => run::refuse(
            layout,
            "witness",
            &format!("failed to take over the kernel witness's control socket: {e}"),
            &mut progress,
        ),
        Ok(Entry::Refused(reason)) => run::refuse(layout, "witness", &reason, &mut progress),
        Ok(Entry::Supervised(kernel)) => {
            if host == Host::Container {
                // The working directory every fixture call returns to (`inside`): the evidence
                // volume rather than the image's `/`, which on a FUSE root filesystem costs a
                // round trip to the FUSE daemon each time it is entered. Nothing resolves a
                // relative path against it: every path the runner names is absolute, and each
                // program it starts gets its own working directory.
                let _ = std::env::set_current_dir(&layout.evidence_dir);
            }
            supervised(layout, job, kernel, &mut progress)
        }
        Ok(Entry::Bare) => {
            let witness = match witness_path(host) {
                Ok(w) => w,
                Err(message) => return run::refuse(layout, "witness", &message, &mut progress),
            };
            if host == Host::Rebased {
                if let Err(e) = watch::isolate_host_run() {
                    return run::refuse(
                        layout,
                        "witness",
                        &format!("failed to isolate the host run (user, mount and network namespaces): {e}"),
                        &mut progress,
                    );
                }
            }
            let err = watch::exec_under(&witness, &layout.runner_bin, args);
            run::refuse(
                layout,
                "witness",
                &format!(
                    "failed to start the kernel witness {}: {err}",
                    witness.display()
                ),
                &mut progress,
            )
        }
    }
}

/// The job itself, under the witness.
fn supervised(
    layout: &Layout,
    job: &Job,
    kernel: watch::KernelWatch,
    progress: &mut std::io::Stderr,
) -> RunStatus {
    match job {
        Job::Matrix => match shard() {
            Ok(shard) => run::run(layout, shard, &mut Watch::Kernel(kernel), progress),
            Err(message) => run::refuse(layout, "shard", &message, progress),
        },
        Job::Native { client, shard } => {
            native::run(layout, client, *shard, &mut Watch::Kernel(kernel), progress)
        }
    }
}

/// This container's share of the matrix: `SHARD_ENV` (`<index>/<count>`, set by the
/// orchestrator when it splits a platform's matrix across containers), else every case.
fn shard() -> Result<Shard, String> {
    match std::env::var(SHARD_ENV) {
        Err(std::env::VarError::NotPresent) => Ok(Shard::WHOLE),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(format!("failed to read {SHARD_ENV}: not UTF-8"))
        }
        Ok(text) => Shard::parse(&text).map_err(|e| format!("failed to pick the shard: {e}")),
    }
}

/// The witness binary: in the container the one for the engine's machine (told as
/// environment at create time); on a host the one beside this binary.
fn witness_path(host: Host) -> Result<PathBuf, String> {
    match host {
        Host::Container => {
            let machine = std::env::var(layout::ENGINE_MACHINE_ENV).map_err(|_| {
                format!(
                    "failed to pick the kernel witness: {} is not set (the orchestrator sets it to the engine's machine)",
                    layout::ENGINE_MACHINE_ENV
                )
            })?;
            if machine.is_empty()
                || !machine
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            {
                return Err(format!(
                    "failed to pick the kernel witness: {} is {machine:?}, not a machine name",
                    layout::ENGINE_MACHINE_ENV
                ));
            }
            Ok(PathBuf::from(layout::witness_bin(&machine)))
        }
        Host::Rebased => std::env::current_exe()
            .map(|exe| exe.with_file_name(layout::WITNESS_NAME))
            .map_err(|e| format!("failed to find the kernel witness beside this binary: {e}")),
    }
}

fn run_rebased(all: &[String]) -> RunStatus {
    let [_, base, matrix, candidate, sentinel] = all else {
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
            // The real sentinel writes its fixed marker, in the private mount of this run.
            l.sentinel_marker = layout::SENTINEL_MARKER.into();
            Ok(l)
        });
    match layout {
        Ok(l) => watched(&l, all, Host::Rebased, &Job::Matrix),
        Err(message) => {
            eprintln!("error: {message}");
            RunStatus::HarnessFailed
        }
    }
}
