//! scopebox-verify: check a receipt bundle from its bytes alone, or prove it would catch
//! tampering (`--self-test`). Thin: parse arguments, run, map the outcome to the documented
//! exit code in one place. It never writes into the bundle.
//!
//! With `--json`, stdout carries exactly one JSON object on every exit path (`--help` and
//! `--version` aside, which print their text): the report, the self-test table, or on an error
//! the report's shape with `result` "usage", "unreadable" or "rejected", `error` (one line) and
//! `hint`. A report that cannot be written to stdout (a full disk) is exit 3, said on stderr;
//! a closed pipe (`| head`) is not an error.

use clap::Parser;
use scopebox_receipts::verify::{self, report, BundleError, VerifyOptions};
use scopebox_receipts::{dsse, input, selftest};
use scopebox_schema::policy::BoundaryPolicy;
use scopebox_terminal::{escape, escape_lines};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const EXIT_CODES: &str = "\
Exit codes:
  0  verified: every check passed (--self-test: every mutation was rejected)
  1  rejected: at least one check failed (--self-test: a mutation was accepted or not applied,
     or the unmodified bundle was itself rejected)
  2  could not read the bundle, or a usage error (a bad argument; a --key or --policy that is
     missing, not a regular file, over its size limit (64 KiB, 1 MiB) or not a key or policy)
  3  the report could not be written to stdout (e.g. a full disk; a closed pipe is no error)

With --json, stdout holds one JSON object on every exit (the error shape on exits 1 and 2 that
have no report: result \"usage\", \"unreadable\" or \"rejected\", error, hint).";

/// Verify a scopebox receipt bundle: recompute every digest, regenerate every platform's image
/// layer and config from the bundled bytes, re-derive every case verdict from the raw
/// captures, check the boundary (policy, inspection, inner observations), the machine of every
/// binary, the candidate, both controls, the execution and cleanup, and the signature.
#[derive(Parser, Debug)]
#[command(name = "scopebox-verify", version, after_help = EXIT_CODES)]
struct Args {
    /// The bundle directory (the one holding receipt.json), or a bundle archive
    /// (`scopebox run --archive FILE.tar.gz`), read in memory under the same bounds.
    bundle: PathBuf,
    /// SPKI PEM public key (PREFIX.pub.pem, a regular file of at most 64 KiB); requires a
    /// valid receipt.dsse.json.
    #[arg(long, value_name = "PUB.pem")]
    key: Option<PathBuf>,
    /// Require this candidate archive sha256 among the bundle's platforms (repeatable).
    #[arg(long, value_name = "SHA256")]
    expect_candidate: Vec<String>,
    // (Angle brackets in clap's help text, not HTML.)
    #[allow(rustdoc::invalid_html_tags)]
    /// Require this image ID (sha256:<hex>) among the bundle's platforms (repeatable).
    #[arg(long, value_name = "ID")]
    expect_image: Vec<String>,
    /// Judge against this boundary policy (a regular file of at most 1 MiB) instead of the
    /// built-in images/boundary-policy.json.
    #[arg(long, value_name = "POLICY.json")]
    policy: Option<PathBuf>,
    /// Print the result as a JSON document (schemaVersion 1) instead of a check list.
    #[arg(long)]
    json: bool,
    /// Apply every mutation class to fresh copies of the bundle and require each rejected.
    #[arg(long)]
    self_test: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Verified,
    Rejected,
    Unreadable,
    /// stdout refused the report (not a closed pipe): whatever the verdict, nobody got it.
    Unwritten,
}

fn exit_code(outcome: Outcome) -> ExitCode {
    match outcome {
        Outcome::Verified => ExitCode::from(0),
        Outcome::Rejected => ExitCode::from(1),
        Outcome::Unreadable => ExitCode::from(2),
        Outcome::Unwritten => ExitCode::from(3),
    }
}

/// Why the verifier stopped without a report: what stderr and `--json` say.
struct Failure {
    /// The JSON `result`: "usage", "unreadable" or "rejected".
    result: &'static str,
    /// "failed to …", one line, without its hint.
    message: String,
    hint: Option<String>,
    outcome: Outcome,
    /// What stderr shows instead of "error: {message}" + "hint: {hint}", already escaped.
    rendered: Option<String>,
}

impl Failure {
    fn usage(message: String, hint: Option<String>) -> Failure {
        Failure {
            result: "usage",
            message,
            hint,
            outcome: Outcome::Unreadable,
            rendered: None,
        }
    }

    fn unreadable(bundle: &str, error: &BundleError) -> Failure {
        let doc = report::JsonReport::from_error(bundle, error);
        Failure {
            result: "unreadable",
            message: doc.error.unwrap_or_default(),
            hint: doc.hint,
            outcome: Outcome::Unreadable,
            rendered: Some(report::render_error(error)),
        }
    }
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => return exit_code(usage_error(&e)),
    };
    exit_code(run(&args))
}

/// clap could not parse the arguments (or was asked for help or the version).
fn usage_error(e: &clap::Error) -> Outcome {
    // clap echoes the offending argument, after its own processing (it drops ANSI sequences
    // but keeps CR and LF). The error is rendered again from the arguments escaped whole, so
    // an argument's own line breaks cannot start a forged line; then every line is escaped too.
    let escaped_args: Vec<String> = std::env::args_os()
        .map(|a| escape(&a.to_string_lossy()).into_owned())
        .collect();
    let text = match Args::try_parse_from(&escaped_args) {
        Err(again) if again.kind() == e.kind() => again.render().to_string(),
        _ => e.render().to_string(),
    };
    if !e.use_stderr() {
        // --help, --version: asked for, printed as text.
        return deliver(&text, Outcome::Verified);
    }
    // The arguments did not parse, so `--json` is looked for by hand (before any `--`).
    let json = std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    // clap's first paragraph ("error: …" and any lines it continues on) as one line.
    let message = text
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.trim().trim_start_matches("error: "))
        .collect::<Vec<_>>()
        .join(" ");
    let hint = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("tip: ").map(str::to_string))
        .unwrap_or_else(|| "see scopebox-verify --help".into());
    fail(
        json,
        "",
        Failure {
            rendered: Some(escape_lines(&text)),
            ..Failure::usage(message, Some(hint))
        },
    )
}

fn run(args: &Args) -> Outcome {
    let shown = args.bundle.display().to_string();
    if args.self_test {
        return self_test(args, &shown);
    }
    let mut options = VerifyOptions {
        expect_candidates: args.expect_candidate.clone(),
        expect_images: args.expect_image.clone(),
        ..VerifyOptions::default()
    };
    if let Some(key) = &args.key {
        match read_key(key) {
            Ok(pem) => options.public_key_pem = Some(pem),
            Err(failure) => return fail(args.json, &shown, failure),
        }
    }
    if let Some(path) = &args.policy {
        match read_policy(path) {
            Ok(policy) => options.policy = Some(policy),
            Err(failure) => return fail(args.json, &shown, failure),
        }
    }
    let verified = scopebox_receipts::bundle_file::read_any(&args.bundle)
        .and_then(|bundle| verify::verify_loaded(&bundle, &options));
    match verified {
        Ok(report) => {
            let outcome = if report.verified {
                Outcome::Verified
            } else {
                Outcome::Rejected
            };
            if args.json {
                print_json(&report::JsonReport::from_report(&report), outcome)
            } else {
                deliver(&report::render_text(&report), outcome)
            }
        }
        Err(error) => fail(args.json, &shown, Failure::unreadable(&shown, &error)),
    }
}

/// The `--key` file: a regular file within `input::KEY_LIMIT` holding an SPKI public key PEM.
/// Anything else is a usage error naming the file (exit 2), never a failed check.
fn read_key(path: &Path) -> Result<String, Failure> {
    let pem = input::read_text(path, "the key", input::KEY_LIMIT)
        .map_err(|e| Failure::usage(format!("failed to {e}"), None))?;
    if let Err(e) = dsse::verifying_key_from_pem(&pem) {
        let text = e.to_string();
        return Err(Failure::usage(
            format!(
                "failed to read the key {}: it is not an SPKI ed25519 public key PEM",
                path.display()
            ),
            text.split_once("\nhint: ")
                .map(|(_, hint)| hint.to_string()),
        ));
    }
    Ok(pem)
}

/// The `--policy` file: a regular file within `input::POLICY_LIMIT` holding a boundary policy.
fn read_policy(path: &Path) -> Result<BoundaryPolicy, Failure> {
    let bytes = input::read_bounded(path, "the policy", input::POLICY_LIMIT)
        .map_err(|e| Failure::usage(format!("failed to {e}"), None))?;
    BoundaryPolicy::from_json(&bytes).map_err(|e| {
        Failure::usage(
            format!(
                "failed to read the policy {}: it is not a boundary policy: {e}",
                path.display()
            ),
            Some("start from the project's images/boundary-policy.json".into()),
        )
    })
}

fn self_test(args: &Args, shown: &str) -> Outcome {
    match selftest::run(&args.bundle) {
        Ok(report) => {
            let outcome = if report.all_rejected() {
                Outcome::Verified
            } else {
                Outcome::Rejected
            };
            if args.json {
                print_json(&report, outcome)
            } else {
                deliver(&report.render_text(), outcome)
            }
        }
        Err(selftest::SelfTestError::Unreadable(e)) => {
            fail(args.json, shown, Failure::unreadable(shown, &e))
        }
        Err(error) => {
            let text = format!("failed to {error}");
            let (message, hint) = match text.split_once("\nhint: ") {
                Some((message, hint)) => (message.to_string(), Some(hint.to_string())),
                None => (text, None),
            };
            // The bundle (or its copy signed with a fresh key) does not verify: the mutation
            // classes could not be applied, exit 1 as the help says; anything else, exit 2.
            let rejected = matches!(
                error,
                selftest::SelfTestError::BaseRejected(_)
                    | selftest::SelfTestError::SignedBaseRejected(_)
            );
            fail(
                args.json,
                shown,
                Failure {
                    result: if rejected { "rejected" } else { "unreadable" },
                    message,
                    hint,
                    outcome: if rejected {
                        Outcome::Rejected
                    } else {
                        Outcome::Unreadable
                    },
                    rendered: None,
                },
            )
        }
    }
}

/// Say why on stderr and, with `--json`, print the error object on stdout (the report's shape,
/// no checks). Returns the failure's outcome, or `Unwritten` when stdout refused the object.
fn fail(json: bool, bundle: &str, failure: Failure) -> Outcome {
    let said = failure.rendered.clone().unwrap_or_else(|| {
        let mut text = format!("error: {}\n", escape(&failure.message));
        if let Some(hint) = &failure.hint {
            text.push_str(&format!("hint: {}\n", escape(hint)));
        }
        text
    });
    warn(&said);
    if !json {
        return failure.outcome;
    }
    let doc = report::JsonReport {
        schema_version: 1,
        result: failure.result.into(),
        bundle: bundle.to_string(),
        error: Some(failure.message),
        hint: failure.hint,
        subject: None,
        checks: Vec::new(),
        not_checked: Vec::new(),
        notes: Vec::new(),
    };
    print_json(&doc, failure.outcome)
}

fn print_json<T: serde::Serialize>(value: &T, outcome: Outcome) -> Outcome {
    match report::to_json_text(value) {
        Ok(text) => deliver(&text, outcome),
        Err(e) => {
            warn(&format!(
                "error: failed to render the JSON document: {}\n",
                escape(&e.to_string())
            ));
            Outcome::Unwritten
        }
    }
}

/// Write `text` to stdout and return `outcome`, or `Unwritten` (exit 3, said on stderr) when
/// stdout refused it. A closed pipe (`| head`) is a reader that has read enough: the outcome
/// stands, and nothing is said.
fn deliver(text: &str, outcome: Outcome) -> Outcome {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => outcome,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => outcome,
        Err(e) => {
            warn(&format!(
                "error: failed to write the report to stdout: {}\n",
                escape(&e.to_string())
            ));
            Outcome::Unwritten
        }
    }
}

/// Write to stderr (already escaped by the caller).
fn warn(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
