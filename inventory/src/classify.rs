//! Static `launch` and `guardForm` classification of one server declaration,
//! from its command and arguments. The table is documented in
//! `inventory/CLASSIFICATION.md`; keep the two in step.
//!
//! The command and arguments are only compared against fixed names here; the
//! result is two enum values. Nothing is resolved on `PATH`, probed, opened
//! or executed, and no input string ever leaves this module. Recognizing a
//! guard wrapper is configuration metadata only: it never authenticates a
//! binary or proves that a guard is loaded or enforcing.

use std::borrow::Cow;

use crate::json::Value;
use crate::model::{GuardForm, Launch, Shape, Transport};

/// Classify a declaration whose shape was already checked.
pub fn classify(entry: &Value, shape: &Shape) -> (Launch, GuardForm) {
    let Some(obj) = entry.as_object() else {
        return (Launch::Unknown, GuardForm::Unknown);
    };
    // The first leading string arguments only (enough for every row of the
    // table); a non-string argument ends them (and makes the shape invalid,
    // hence the guard form unknown).
    let mut args = [""; 16];
    let mut n = 0;
    if let Some(Value::Array(a)) = obj.get("args") {
        for (slot, arg) in args.iter_mut().zip(a.iter().map_while(Value::as_str)) {
            *slot = arg;
            n += 1;
        }
    }
    let command = obj.get("command").and_then(Value::as_str);
    classify_parts(command, &args[..n], shape)
}

/// Classify from a command and its leading string arguments, for entry
/// grammars that spell them differently (a command array, `cmd`, a nested
/// `command.path`).
pub fn classify_parts(command: Option<&str>, args: &[&str], shape: &Shape) -> (Launch, GuardForm) {
    match shape.transport {
        // The endpoint is not examined: it may itself be a proxy or guard.
        Transport::Http | Transport::Sse | Transport::Ws => (Launch::Remote, GuardForm::Unknown),
        Transport::Unknown => (Launch::Unknown, GuardForm::Unknown),
        Transport::Stdio => {
            let Some(command) = command else {
                return (Launch::Unknown, GuardForm::Unknown);
            };
            let launch = launch_of(command, &args[..args.len().min(16)]);
            (launch, guard_form(launch, shape.valid))
        }
    }
}

/// `guardForm` from the launch form (see CLASSIFICATION.md).
pub fn guard_form(launch: Launch, shape_valid: bool) -> GuardForm {
    match launch {
        Launch::GuardWrapper => GuardForm::Guarded,
        Launch::Executable | Launch::PackageRunner | Launch::Container if shape_valid => {
            GuardForm::Direct
        }
        // A script may itself be a wrapper (its identity is not probed); an
        // endpoint may be a proxy; an invalid shape is not interpreted.
        _ => GuardForm::Unknown,
    }
}

/// `launch` from a command string and its leading string arguments.
pub fn launch_of(command: &str, args: &[&str]) -> Launch {
    let name = program_name(command);
    if name.is_empty() {
        return Launch::Unknown;
    }
    let first = args.first().copied();
    let second = args.get(1).copied();
    if name == "mcpm" && first == Some("guard") {
        return Launch::GuardWrapper;
    }
    // Where a package runner's own arguments start (after its subcommand).
    let runner_args: Option<&[&str]> = match name.as_ref() {
        "npx" | "pnpx" | "bunx" | "uvx" => Some(args),
        "pnpm" | "yarn" if first == Some("dlx") => Some(&args[1..]),
        "npm" if matches!(first, Some("exec" | "x")) => Some(&args[1..]),
        "bun" if first == Some("x") => Some(&args[1..]),
        "pipx" if first == Some("run") => Some(&args[1..]),
        "uv" if first == Some("tool") && second == Some("run") => Some(&args[2..]),
        _ => None,
    };
    if let Some(rest) = runner_args {
        return if runs_mcpm_guard(rest) {
            Launch::GuardWrapper
        } else {
            Launch::PackageRunner
        };
    }
    match name.as_ref() {
        "docker" | "podman" | "nerdctl" | "finch"
            if first == Some("run") || (first == Some("container") && second == Some("run")) =>
        {
            return Launch::Container;
        }
        _ => {}
    }
    if is_interpreter(&name) {
        return Launch::InterpreterScript;
    }
    Launch::Executable
}

/// The program's file name: last `/` or `\` component, ASCII-lowercased,
/// without a Windows `.exe`/`.cmd`/`.bat` suffix. Borrows unless it has to
/// lowercase.
fn program_name(command: &str) -> Cow<'_, str> {
    let base = command.rsplit(['/', '\\']).next().unwrap_or("").trim();
    let name: Cow<'_, str> = if base.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(base.to_ascii_lowercase())
    } else {
        Cow::Borrowed(base)
    };
    for suffix in [".exe", ".cmd", ".bat"] {
        if let Some(stripped) = name.strip_suffix(suffix) {
            return Cow::Owned(stripped.to_owned());
        }
    }
    name
}

/// A package runner's arguments name the `mcpm` package followed by `guard`.
fn runs_mcpm_guard(rest: &[&str]) -> bool {
    let mut it = rest.iter().skip_while(|a| a.starts_with('-'));
    let package = it.next().copied().unwrap_or("");
    let is_mcpm = package == "mcpm" || package.starts_with("mcpm@");
    is_mcpm && it.next().copied() == Some("guard")
}

fn is_interpreter(name: &str) -> bool {
    const NAMES: [&str; 21] = [
        "node",
        "nodejs",
        "deno",
        "bun",
        "python",
        "python2",
        "python3",
        "pypy",
        "pypy3",
        "ruby",
        "perl",
        "php",
        "java",
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "fish",
        "pwsh",
        "powershell",
    ];
    if NAMES.contains(&name) || name == "cmd" || name == "uv" {
        return true;
    }
    // python3.12, python3.12t, ...
    name.strip_prefix("python").is_some_and(|v| {
        !v.is_empty()
            && v.chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == 't')
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Options};
    use crate::shape;

    fn launch(cmd: &str, args: &[&str]) -> Launch {
        launch_of(cmd, args)
    }

    #[test]
    fn the_classification_table() {
        use Launch::*;
        let cases: &[(&str, &[&str], Launch)] = &[
            ("/usr/local/bin/server", &[], Executable),
            ("C:\\Tools\\Server.EXE", &["--stdio"], Executable),
            ("npx", &["-y", "@scope/pkg"], PackageRunner),
            ("pnpm", &["dlx", "pkg"], PackageRunner),
            ("pnpm", &["run", "x"], Executable),
            ("yarn", &["dlx", "pkg"], PackageRunner),
            ("npm", &["exec", "pkg"], PackageRunner),
            ("bunx", &["pkg"], PackageRunner),
            ("bun", &["x", "pkg"], PackageRunner),
            ("bun", &["server.ts"], InterpreterScript),
            ("uvx", &["pkg"], PackageRunner),
            ("uv", &["tool", "run", "pkg"], PackageRunner),
            ("uv", &["run", "server.py"], InterpreterScript),
            ("pipx", &["run", "pkg"], PackageRunner),
            ("docker", &["run", "-i", "img"], Container),
            ("podman", &["container", "run", "img"], Container),
            ("docker", &["exec", "c", "srv"], Executable),
            ("node", &["server.js"], InterpreterScript),
            ("/usr/bin/python3.12", &["-m", "srv"], InterpreterScript),
            ("python", &[], InterpreterScript),
            ("bash", &["-c", "x"], InterpreterScript),
            ("mcpm", &["guard", "--", "npx", "pkg"], GuardWrapper),
            ("/opt/bin/mcpm", &["guard"], GuardWrapper),
            ("mcpm", &["list"], Executable),
            (
                "npx",
                &["-y", "mcpm@1.2.3", "guard", "--", "srv"],
                GuardWrapper,
            ),
            ("npx", &["-y", "mcpm", "list"], PackageRunner),
            ("", &[], Unknown),
            ("/usr/bin/", &[], Unknown),
        ];
        for (cmd, args, want) in cases {
            assert_eq!(launch(cmd, args), *want, "{cmd} {args:?}");
        }
    }

    #[test]
    fn guard_forms() {
        assert_eq!(guard_form(Launch::GuardWrapper, true), GuardForm::Guarded);
        assert_eq!(guard_form(Launch::Executable, true), GuardForm::Direct);
        assert_eq!(guard_form(Launch::Executable, false), GuardForm::Unknown);
        assert_eq!(guard_form(Launch::PackageRunner, true), GuardForm::Direct);
        assert_eq!(guard_form(Launch::Container, true), GuardForm::Direct);
        assert_eq!(
            guard_form(Launch::InterpreterScript, true),
            GuardForm::Unknown
        );
        assert_eq!(guard_form(Launch::Remote, true), GuardForm::Unknown);
        assert_eq!(guard_form(Launch::Unknown, true), GuardForm::Unknown);
    }

    #[test]
    fn classify_entries() {
        let c = |s: &str| {
            let v = parse(s.as_bytes(), &Options::STRICT).unwrap();
            classify(&v, &shape::claude_code(&v))
        };
        assert_eq!(
            c(r#"{"type":"http","url":"u"}"#),
            (Launch::Remote, GuardForm::Unknown)
        );
        assert_eq!(
            c(r#"{"command":"srv"}"#),
            (Launch::Executable, GuardForm::Direct)
        );
        assert_eq!(
            c(r#"{"command":"mcpm","args":["guard","--","srv"]}"#),
            (Launch::GuardWrapper, GuardForm::Guarded)
        );
        // Invalid env: the launch is still recognized, the guard form is not.
        assert_eq!(
            c(r#"{"command":"srv","env":{"A":1}}"#),
            (Launch::Executable, GuardForm::Unknown)
        );
        assert_eq!(c(r#"{"command":5}"#), (Launch::Unknown, GuardForm::Unknown));
        assert_eq!(c("[]"), (Launch::Unknown, GuardForm::Unknown));
    }
}
