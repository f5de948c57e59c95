//! The one place outcomes become exit codes, and errors become what a person reads on stderr
//! ("error: failed to …", each cause, then a hint line). Documented codes:
//!
//! | code | meaning |
//! |------|---------|
//! | 0    | success: every case passed, both controls behaved, the boundary was met, cleanup done |
//! | 1    | the run (or a command) failed: a case, control, boundary check, build or engine step (including an engine call that did not answer within 120 s) |
//! | 2    | usage: bad arguments, a non-empty `--out`, a refused candidate (digest mismatch), an invalid matrix — nothing was run; for `native`: a refused pinned input (digest mismatch, missing member, version no longer served, corrupt cache entry, `--offline` miss, invalid lock) |
//! | 3    | the Docker engine is unreachable, or did not answer its first ping within 120 s (the hint names the address tried) |
//! | 4    | a platform named with `--platform` (or by a `--candidate`) cannot run on this engine (no emulator / binfmt handler: exec format error); probed before any image is made (a static build under way is stopped), nothing left behind |
//! | 124  | the deadline passed; the container was killed, its evidence still exported |
//! | 130  | interrupted by Ctrl-C, SIGTERM or SIGHUP; container and volume removed |
//!
//! Every engine call except the container wait (which `--deadline` bounds) has its own 120 s
//! limit (`run::STEP_TIMEOUT`): a hung engine ends the run with "failed to {call}: the Docker
//! engine did not answer within 120 s", and cleanup is still attempted.
//!
//! Nothing else in the crate calls `std::process::exit` or picks a number.
//!
//! A `--json` summary that stdout refuses (a full disk; not a closed pipe, which is a reader
//! that has read enough) is said on stderr, and the exit code stays the command's: it reports
//! what the command did (a key pair written, a run passed), which the lost line does not undo.
//!
//! Library errors of `scopebox-receipts` carry their hint as a last "\nhint: …" line of their
//! text; it is split off (`split_hint`): causes stay one line each and the hint is the error's.

use crate::boundary::BoundaryError;
use crate::engine::{EngineError, EngineErrorKind};
use crate::image::ImageError;
use crate::native::NativeError;
use crate::pack::PackError;
use crate::receipt::ReceiptError;
use crate::toolchain::BuildError;
use std::path::PathBuf;
use std::process::ExitCode;

pub const SUCCESS: u8 = 0;
pub const FAILURE: u8 = 1;
pub const USAGE: u8 = 2;
pub const ENGINE_UNREACHABLE: u8 = 3;
pub const PLATFORM_UNAVAILABLE: u8 = 4;
pub const DEADLINE: u8 = 124;
pub const INTERRUPTED: u8 = 130;

/// How a command that ran to its end came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed,
    TimedOut,
    Interrupted,
}

/// Why a command stopped early. Messages fit "failed to {error}".
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("{0}")]
    Usage(String),
    #[error("reach the Docker engine at {host}")]
    EngineUnreachable {
        host: String,
        #[source]
        source: EngineError,
    },
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Pack(#[from] PackError),
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Image(#[from] ImageError),
    #[error(transparent)]
    Boundary(#[from] BoundaryError),
    #[error(transparent)]
    Receipt(#[from] ReceiptError),
    #[error("read matrix {path}")]
    MatrixRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("parse matrix {path}")]
    MatrixParse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("accept matrix {path}: {}", problems.join("; "))]
    MatrixInvalid {
        path: PathBuf,
        problems: Vec<String>,
    },
    #[error("{what}")]
    Signing {
        what: String,
        /// The key, the bundle or an envelope in the way was refused (exit 2), rather than a
        /// step failing (exit 1).
        refused: bool,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error(transparent)]
    Native(#[from] NativeError),
    #[error("start the async runtime")]
    Runtime(#[source] std::io::Error),
    #[error("run {platform}: {reason}")]
    PlatformUnavailable {
        platform: scopebox_schema::platform::Platform,
        reason: String,
    },
}

impl CommandError {
    /// Engine errors from the very first contact become "unreachable" (exit 3).
    pub fn from_ping(host: &str, e: EngineError) -> CommandError {
        if e.kind == EngineErrorKind::Unreachable {
            CommandError::EngineUnreachable {
                host: host.to_string(),
                source: e,
            }
        } else {
            CommandError::Engine(e)
        }
    }

    pub fn code(&self) -> u8 {
        match self {
            CommandError::Usage(_)
            | CommandError::MatrixRead { .. }
            | CommandError::MatrixParse { .. }
            | CommandError::MatrixInvalid { .. } => USAGE,
            CommandError::Pack(e) if e.is_refusal() => USAGE,
            CommandError::Receipt(e) if e.is_refusal() => USAGE,
            CommandError::Native(e) if e.is_refusal() => USAGE,
            CommandError::Signing { refused: true, .. } => USAGE,
            CommandError::EngineUnreachable { .. } => ENGINE_UNREACHABLE,
            CommandError::PlatformUnavailable { .. } => PLATFORM_UNAVAILABLE,
            CommandError::Engine(e) if e.kind == EngineErrorKind::Unreachable => ENGINE_UNREACHABLE,
            _ => FAILURE,
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            CommandError::EngineUnreachable { host, source } if refused_permission(source) => {
                Some(format!(
                    "this user may not use {host}: add it to the docker group (and log in again), run as a user who may, or set DOCKER_HOST to an engine this user may use"
                ))
            }
            CommandError::EngineUnreachable { host, .. } => Some(format!(
                "is the Docker engine running? tried {host} (set DOCKER_HOST to use another address)"
            )),
            CommandError::Engine(e) if e.kind == EngineErrorKind::Unreachable => Some(
                "is the Docker engine still running? (set DOCKER_HOST to use another address)"
                    .into(),
            ),
            CommandError::Pack(PackError::Mismatch { .. }) => Some(
                "the archive is not the one the digest names; check the digest, or pack again with `scopebox pack`"
                    .into(),
            ),
            CommandError::Receipt(crate::receipt::ReceiptError::NotMakeable { .. }) => Some(
                "pass an --out this user can create (not on a read-only mount, not in another user's directory)"
                    .into(),
            ),
            CommandError::Receipt(e) if e.is_refusal() => {
                Some("pass a new or empty directory to --out; bundles are never overwritten".into())
            }
            CommandError::Build(e) => Some(e.hint().unwrap_or_else(|| {
                "build it yourself to see the compiler's errors: cargo build --profile static --locked -p mcpscope".into()
            })),
            CommandError::PlatformUnavailable { platform, .. } => Some(format!(
                "as root: .ci/setup-emulation (Debian: apt-get install qemu-user-static; mount binfmt_misc; register {} with the F flag), or leave out --platform {platform} to run only what this engine can",
                platform.machine()
            )),
            CommandError::MatrixInvalid { .. } | CommandError::MatrixParse { .. } => Some(
                "check it with: cargo run -p scopebox-harness --bin scopebox-runner -- check-matrix FILE"
                    .into(),
            ),
            CommandError::Native(e) => e.hint(),
            _ => self.embedded_hint(),
        }
    }

    /// The first "\nhint: …" line in this error's text or its causes' (the signing errors of
    /// `scopebox-receipts` carry their hints so).
    fn embedded_hint(&self) -> Option<String> {
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(e) = cause {
            if let (_, Some(hint)) = split_hint(&e.to_string()) {
                return Some(hint.to_string());
            }
            cause = e.source();
        }
        None
    }
}

/// An error text without its "\nhint: …" line, and the hint.
pub fn split_hint(text: &str) -> (&str, Option<&str>) {
    match text.split_once("\nhint: ") {
        Some((message, hint)) => (message, Some(hint)),
        None => (text, None),
    }
}

/// The exit code of a finished command.
pub fn code(result: &Result<Outcome, CommandError>) -> u8 {
    match result {
        Ok(Outcome::Passed) => SUCCESS,
        Ok(Outcome::Failed) => FAILURE,
        Ok(Outcome::TimedOut) => DEADLINE,
        Ok(Outcome::Interrupted) => INTERRUPTED,
        Err(e) => e.code(),
    }
}

/// Set once stdout has carried its one JSON object.
static SUMMARY_PRINTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Print the command's one JSON object on stdout; any later call prints nothing, so a command
/// that already answered is never followed by a second object.
pub fn print_summary(summary: &serde_json::Value) {
    if !SUMMARY_PRINTED.swap(true, std::sync::atomic::Ordering::SeqCst) {
        // Never a panic: a closed or full stdout loses the line, not the exit code; a full
        // one (anything but a closed pipe) is said on stderr.
        let mut out = std::io::stdout().lock();
        let written = std::io::Write::write_all(&mut out, summary_line(summary).as_bytes())
            .and_then(|()| std::io::Write::flush(&mut out));
        if let Err(e) = written {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                say!("warning: failed to write the JSON summary to stdout: {e}");
            }
        }
    }
}

/// The summary as one line of JSON that is safe on a terminal too: a problem may quote what
/// the candidate named, and JSON allows bidirectional overrides and other format characters
/// raw, so they are written as `\uXXXX` escapes (a reader gets the same strings back).
pub fn summary_line(summary: &serde_json::Value) -> String {
    scopebox_receipts::verify::report::to_json_line(summary)
        .expect("a JSON value always serializes")
}

/// Print an error (with its causes and hint) on stderr and return the exit code. With `json`,
/// stdout carries one object on every path: the command's own summary when it printed one,
/// else the outcome (and the error's code, message, causes and hint).
pub fn finish(result: Result<Outcome, CommandError>, json: bool) -> ExitCode {
    if let Err(e) = &result {
        // Errors quote paths and bundle text: escaped for the terminal, line breaks kept.
        say!("{}", scopebox_terminal::escape_lines(&render(e)));
    }
    if json {
        print_summary(&result_json(&result));
    }
    ExitCode::from(code(&result))
}

/// The outcome's word in `--json` objects.
pub fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "passed",
        Outcome::Failed => "failed",
        Outcome::TimedOut => "timed-out",
        Outcome::Interrupted => "interrupted",
    }
}

/// Whether the engine's socket refused this user (EACCES somewhere in the chain of causes).
fn refused_permission(error: &EngineError) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::PermissionDenied)
        {
            return true;
        }
        cause = e.source();
    }
    false
}

/// The object `--json` prints when the command printed none of its own.
pub fn result_json(result: &Result<Outcome, CommandError>) -> serde_json::Value {
    match result {
        Ok(outcome) => {
            let mut summary = serde_json::json!({
                "ok": *outcome == Outcome::Passed,
                "outcome": outcome_name(*outcome),
                "exitCode": code(result),
            });
            if *outcome == Outcome::Interrupted {
                summary["message"] =
                    "interrupted (Ctrl-C, SIGTERM or SIGHUP): evidence not exported".into();
            }
            summary
        }
        Err(e) => e.to_json(),
    }
}

impl CommandError {
    /// A stable word for the kind of error, for `--json` readers.
    pub fn kind_name(&self) -> &'static str {
        match self {
            CommandError::Usage(_) => "usage",
            CommandError::EngineUnreachable { .. } => "engine-unreachable",
            CommandError::Engine(e) if e.kind == EngineErrorKind::Unreachable => {
                "engine-unreachable"
            }
            CommandError::Engine(_) => "engine",
            CommandError::Pack(e) if e.is_refusal() => "candidate-refused",
            CommandError::Pack(_) => "pack",
            CommandError::Build(_) => "build",
            CommandError::Image(_) => "image",
            CommandError::Boundary(_) => "policy",
            CommandError::Receipt(e) if e.is_refusal() => "bundle-directory-refused",
            CommandError::Receipt(_) => "bundle",
            CommandError::MatrixRead { .. }
            | CommandError::MatrixParse { .. }
            | CommandError::MatrixInvalid { .. } => "matrix-refused",
            CommandError::Signing { refused: true, .. } => "signing-refused",
            CommandError::Signing { .. } => "signing",
            CommandError::Native(e) if e.is_refusal() => "native-refused",
            CommandError::Native(_) => "native",
            CommandError::Runtime(_) => "runtime",
            CommandError::PlatformUnavailable { .. } => "platform-unavailable",
        }
    }

    /// "failed to X" (a usage error reads as itself).
    pub fn message(&self) -> String {
        match self {
            CommandError::Usage(m) => m.clone(),
            _ => format!("failed to {}", split_hint(&self.to_string()).0),
        }
    }

    /// Each cause once, outermost first: a cause whose text the message (or the previous
    /// cause) already carries is not repeated.
    pub fn causes(&self) -> Vec<String> {
        let mut said = self.to_string();
        let mut causes: Vec<String> = Vec::new();
        let mut source = std::error::Error::source(self);
        while let Some(s) = source {
            let text = split_hint(&s.to_string()).0.to_string();
            if !text.is_empty() && !said.contains(&text) {
                said = text.clone();
                causes.push(text);
            }
            source = s.source();
        }
        causes
    }

    /// The `--json` object of an error.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "ok": false,
            "outcome": "error",
            "exitCode": self.code(),
            "error": {
                "code": self.kind_name(),
                "message": self.message(),
                "causes": self.causes(),
                "hint": self.hint(),
            },
        })
    }
}

/// "error: failed to X\n  caused by: Y\nhint: Z".
pub fn render(e: &CommandError) -> String {
    let mut text = format!("error: {}", e.message());
    for cause in e.causes() {
        text.push_str(&format!("\n  caused by: {cause}"));
    }
    if let Some(hint) = e.hint() {
        text.push_str(&format!("\nhint: {hint}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_one_terminal_safe_line_that_reads_back_exactly() {
        let summary = serde_json::json!({
            "problems": ["fixture /work/\u{1b}]0;pwned\u{7}red\u{202e}txt added"],
            "bundle": "out/runs/\u{200b}x",
        });
        let line = summary_line(&summary);
        assert!(
            line.ends_with('\n') && line.lines().count() == 1,
            "{line:?}"
        );
        assert!(scopebox_terminal::obeyed(&line).is_empty(), "{line:?}");
        assert!(line.contains(r"red\u202etxt"), "{line}");
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back, summary);
    }

    #[test]
    fn each_outcome_has_its_documented_code() {
        assert_eq!(code(&Ok(Outcome::Passed)), 0);
        assert_eq!(code(&Ok(Outcome::Failed)), 1);
        assert_eq!(code(&Ok(Outcome::TimedOut)), 124);
        assert_eq!(code(&Ok(Outcome::Interrupted)), 130);
        assert_eq!(code(&Err(CommandError::Usage("x".into()))), 2);
        let unavailable = CommandError::PlatformUnavailable {
            platform: scopebox_schema::platform::Platform::LinuxArm64,
            reason: "exec format error".into(),
        };
        assert_eq!(code(&Err(unavailable)), 4);
        let unreachable = CommandError::from_ping(
            "unix:///nonexistent.sock",
            EngineError::new("reach", EngineErrorKind::Unreachable),
        );
        assert_eq!(code(&Err(unreachable)), 3);
        let other = CommandError::from_ping("h", EngineError::new("x", EngineErrorKind::Other));
        assert_eq!(code(&Err(other)), 1);
    }

    #[test]
    fn an_unreachable_engine_names_the_address_in_the_hint() {
        let e = CommandError::from_ping(
            "unix:///nonexistent.sock",
            EngineError::new(
                "reach the Docker engine at unix:///nonexistent.sock",
                EngineErrorKind::Unreachable,
            )
            .with_source(std::io::Error::other("no such file")),
        );
        let text = render(&e);
        assert!(
            text.starts_with(
                "error: failed to reach the Docker engine at unix:///nonexistent.sock"
            ),
            "{text}"
        );
        assert!(text.contains("caused by: no such file"), "{text}");
        assert!(
            text.ends_with("hint: is the Docker engine running? tried unix:///nonexistent.sock (set DOCKER_HOST to use another address)"),
            "{text}"
        );
    }

    /// A socket this user may not open gets a hint about permission, not "is it running?".
    #[test]
    fn a_socket_that_refuses_this_user_gets_a_permission_hint() {
        let unreachable = |source: std::io::Error| {
            CommandError::from_ping(
                "unix:///var/run/docker.sock",
                EngineError::new(
                    "reach the Docker engine at unix:///var/run/docker.sock",
                    EngineErrorKind::Unreachable,
                )
                .with_source(source),
            )
        };
        let denied = unreachable(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        assert_eq!(denied.code(), ENGINE_UNREACHABLE);
        assert!(
            denied.hint().unwrap().starts_with(
                "this user may not use unix:///var/run/docker.sock: add it to the docker group"
            ),
            "{:?}",
            denied.hint()
        );
        let absent = unreachable(std::io::Error::from(std::io::ErrorKind::NotFound));
        assert!(absent
            .hint()
            .unwrap()
            .starts_with("is the Docker engine running?"));
    }

    #[test]
    fn a_digest_mismatch_is_a_usage_refusal_with_a_hint() {
        let e = CommandError::Pack(PackError::Mismatch {
            path: "c.tgz".into(),
            expected: "a".repeat(64),
            actual: "b".repeat(64),
        });
        assert_eq!(e.code(), USAGE);
        assert!(render(&e).contains("hint: the archive is not the one"));
    }

    #[test]
    fn a_cause_the_message_already_says_is_not_repeated() {
        // A transparent variant shares its inner error's text: said once.
        let e = CommandError::Engine(
            EngineError::new("inspect image x", EngineErrorKind::Other)
                .with_source(std::io::Error::other("connection reset")),
        );
        assert_eq!(e.causes(), ["connection reset"]);
        assert_eq!(
            render(&e),
            "error: failed to inspect image x\n  caused by: connection reset"
        );
        let v = e.to_json();
        assert_eq!(v["exitCode"], 1);
        assert_eq!(v["error"]["code"], "engine");
        assert_eq!(v["error"]["message"], "failed to inspect image x");
        assert!(v["error"]["hint"].is_null());
    }

    /// A signing error's "\nhint: …" comes out as the hint, not inside a cause.
    #[test]
    fn a_hint_inside_a_library_error_is_the_error_s_hint_not_a_cause() {
        let e = CommandError::Signing {
            what: "write a key pair at k".into(),
            refused: true,
            source: Box::new(scopebox_receipts::dsse::DsseError::KeyExists {
                path: "k.pem".into(),
            }),
        };
        assert_eq!(e.causes(), ["create k.pem: it already exists"]);
        let v = e.to_json();
        assert_eq!(v["error"]["message"], "failed to write a key pair at k");
        assert_eq!(
            v["error"]["hint"],
            "choose another --out prefix, or remove the old key pair first"
        );
        assert_eq!(
            render(&e),
            "error: failed to write a key pair at k\n  caused by: create k.pem: it already exists\nhint: choose another --out prefix, or remove the old key pair first"
        );
    }

    #[test]
    fn an_interrupted_command_says_so_in_json() {
        let v = result_json(&Ok(Outcome::Interrupted));
        assert_eq!(v["exitCode"], 130);
        assert_eq!(v["outcome"], "interrupted");
        assert!(v["message"]
            .as_str()
            .unwrap()
            .contains("evidence not exported"));
    }
}
