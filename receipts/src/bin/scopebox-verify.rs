//! scopebox-verify: check a receipt bundle from its bytes alone, or prove it would catch
//! tampering (`--self-test`). Thin: parse arguments, run, map the outcome to the documented
//! exit code in one place. It never writes into the bundle.

use clap::Parser;
use scopebox_receipts::selftest;
use scopebox_receipts::verify::{self, report, VerifyOptions};
use scopebox_schema::policy::BoundaryPolicy;
use scopebox_terminal::{escape, escape_lines};
use std::path::PathBuf;
use std::process::ExitCode;

const EXIT_CODES: &str = "\
Exit codes:
  0  verified: every check passed (--self-test: every mutation was rejected)
  1  rejected: at least one check failed (--self-test: a mutation was accepted or not applied)
  2  could not read the bundle, or a usage error";

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
    /// SPKI PEM public key (PREFIX.pub.pem); requires a valid receipt.dsse.json.
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
    /// Judge against this boundary policy instead of the built-in images/boundary-policy.json.
    #[arg(long, value_name = "POLICY.json")]
    policy: Option<PathBuf>,
    /// Print the result as a JSON document (schemaVersion 1) instead of a check list.
    #[arg(long)]
    json: bool,
    /// Apply every mutation class to fresh copies of the bundle and require each rejected.
    #[arg(long)]
    self_test: bool,
}

enum Outcome {
    Verified,
    Rejected,
    Unreadable,
}

fn exit_code(outcome: Outcome) -> ExitCode {
    match outcome {
        Outcome::Verified => ExitCode::from(0),
        Outcome::Rejected => ExitCode::from(1),
        Outcome::Unreadable => ExitCode::from(2),
    }
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => {
            // clap echoes the offending argument, after its own processing (it drops ANSI
            // sequences but keeps CR and LF). The error is rendered again from the arguments
            // escaped whole, so an argument's own line breaks cannot start a forged line;
            // then every line is escaped too.
            let escaped_args: Vec<String> = std::env::args_os()
                .map(|a| escape(&a.to_string_lossy()).into_owned())
                .collect();
            let text = match Args::try_parse_from(&escaped_args) {
                Err(again) if again.kind() == e.kind() => again.render().to_string(),
                _ => e.render().to_string(),
            };
            if e.use_stderr() {
                warn(&escape_lines(&text));
                return exit_code(Outcome::Unreadable);
            }
            emit(&text);
            return exit_code(Outcome::Verified);
        }
    };
    exit_code(run(&args))
}

fn run(args: &Args) -> Outcome {
    if args.self_test {
        return self_test(args);
    }
    let mut options = VerifyOptions {
        expect_candidates: args.expect_candidate.clone(),
        expect_images: args.expect_image.clone(),
        ..VerifyOptions::default()
    };
    if let Some(key) = &args.key {
        match std::fs::read_to_string(key) {
            Ok(pem) => options.public_key_pem = Some(pem),
            Err(e) => {
                warn(&format!(
                    "error: failed to read the key {}: {}\n",
                    escape(&key.display().to_string()),
                    escape(&e.to_string())
                ));
                return Outcome::Unreadable;
            }
        }
    }
    if let Some(path) = &args.policy {
        let parsed = std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| BoundaryPolicy::from_json(&bytes).map_err(|e| e.to_string()));
        match parsed {
            Ok(policy) => options.policy = Some(policy),
            Err(e) => {
                warn(&format!(
                    "error: failed to read the policy {}: {}\n",
                    escape(&path.display().to_string()),
                    escape(&e)
                ));
                return Outcome::Unreadable;
            }
        }
    }
    let shown = args.bundle.display().to_string();
    let verified = scopebox_receipts::bundle_file::read_any(&args.bundle)
        .and_then(|bundle| verify::verify_loaded(&bundle, &options));
    match verified {
        Ok(report) => {
            if args.json {
                print_json(&report::JsonReport::from_report(&report));
            } else {
                emit(&report::render_text(&report));
            }
            if report.verified {
                Outcome::Verified
            } else {
                Outcome::Rejected
            }
        }
        Err(error) => {
            if args.json {
                print_json(&report::JsonReport::from_error(&shown, &error));
            }
            warn(&report::render_error(&error));
            Outcome::Unreadable
        }
    }
}

fn self_test(args: &Args) -> Outcome {
    match selftest::run(&args.bundle) {
        Ok(report) => {
            if args.json {
                print_json(&report);
            } else {
                emit(&report.render_text());
            }
            if report.all_rejected() {
                Outcome::Verified
            } else {
                Outcome::Rejected
            }
        }
        Err(error) => {
            match &error {
                selftest::SelfTestError::Unreadable(e) => warn(&report::render_error(e)),
                other => warn(&escape_lines(&format!("error: failed to {other}\n"))),
            }
            match error {
                selftest::SelfTestError::BaseRejected(_) => Outcome::Rejected,
                _ => Outcome::Unreadable,
            }
        }
    }
}

fn print_json<T: serde::Serialize>(value: &T) {
    match report::to_json_text(value) {
        Ok(text) => emit(&text),
        Err(e) => warn(&format!("error: failed to render JSON: {e}\n")),
    }
}

/// Write to stdout; a closed pipe (`| head`) is not an error worth a panic, and the exit code
/// still reports the verdict.
fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Write to stderr (already escaped by the caller).
fn warn(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
