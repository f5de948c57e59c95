//! The `--json` document of a refused invocation: a usage error (exit 2) or an invalid root
//! (exit 1) still answers on stdout, with `error` in place of an inventory, so a pipeline that
//! asked for JSON never has to tell "refused" from "printed nothing".
//!
//! The human message goes to stderr as before; the document carries the same text, the root as
//! given (JSON preserves paths; `json_out` escapes what a terminal would obey) and a closed code.

use std::ffi::OsStr;
use std::io::Write;

use serde::Serialize;

use crate::model::{Tool, SCHEMA_VERSION};
use crate::root::RootError;

/// What `--json` prints instead of an inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Refusal {
    pub schema_version: u32,
    pub tool: Tool,
    pub error: Refused,
}

/// Why nothing was inventoried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Refused {
    /// `usage` (exit 2) or `invalid-root` (exit 1).
    pub code: &'static str,
    /// For `invalid-root`: `empty`, `cwd-unavailable`, `not-found`, `not-directory`,
    /// `permission-denied` or `io-error`; `null` for a usage error.
    pub reason: Option<&'static str>,
    /// For `invalid-root`: the root argument as given; `null` for a usage error.
    pub root: Option<String>,
    /// What stderr says, without its `mcpscope: error:` prefix or its hint.
    pub message: String,
    /// What to do about it, when there is something to say.
    pub hint: Option<String>,
}

impl Refusal {
    /// A root that cannot be inventoried (`root` as given).
    pub fn invalid_root(error: RootError, root: &OsStr) -> Refusal {
        let given = root.to_string_lossy();
        let (message, hint) = split_hint(&error.message(&given));
        Refusal::of(Refused {
            code: "invalid-root",
            reason: Some(error.code()),
            root: Some(given.into_owned()),
            message,
            hint,
        })
    }

    /// A usage error, from the text clap rendered for it (`error: …`, then usage lines).
    pub fn usage(rendered: &str) -> Refusal {
        let text = rendered.trim_end();
        let text = text.strip_prefix("error: ").unwrap_or(text);
        Refusal::of(Refused {
            code: "usage",
            reason: None,
            root: None,
            message: text.to_owned(),
            hint: None,
        })
    }

    fn of(error: Refused) -> Refusal {
        Refusal {
            schema_version: SCHEMA_VERSION,
            tool: Tool::this(),
            error,
        }
    }

    /// Writes the document as `--json` writes an inventory (pretty, newline-terminated).
    pub fn write_to<W: Write + ?Sized>(&self, out: &mut W) -> std::io::Result<()> {
        crate::json_out::pretty_to(out, self)
    }
}

/// `message` split at its `hint:` line.
fn split_hint(message: &str) -> (String, Option<String>) {
    match message.split_once("\nhint: ") {
        Some((said, hint)) => (said.to_owned(), Some(hint.to_owned())),
        None => (message.to_owned(), None),
    }
}

/// Whether `args` (the arguments after the program name) ask for `--json`: the flag itself,
/// before any `--` that ends the options. Read from the raw arguments, since a usage error
/// means they did not parse.
pub fn asks_for_json<I, S>(args: I) -> bool
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    args.into_iter()
        .map_while(|a| (a.as_ref() != "--").then_some(a))
        .any(|a| a.as_ref() == "--json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_counts_only_as_itself_and_before_the_end_of_options() {
        assert!(asks_for_json(["/p", "--json"]));
        assert!(asks_for_json(["--json"]));
        assert!(!asks_for_json(["/p", "--", "--json"]));
        assert!(!asks_for_json(["/p", "--json=true"]));
        assert!(!asks_for_json(["/p", "--jsonx", "-json"]));
        assert!(!asks_for_json(Vec::<&str>::new()));
    }

    #[test]
    fn a_root_refusal_carries_its_reason_the_root_as_given_and_the_hint_apart() {
        let r = Refusal::invalid_root(RootError::Empty, OsStr::new(""));
        assert_eq!(r.error.code, "invalid-root");
        assert_eq!(r.error.reason, Some("empty"));
        assert_eq!(r.error.root.as_deref(), Some(""));
        assert_eq!(r.error.message, "the root argument is empty");
        assert_eq!(
            r.error.hint.as_deref(),
            Some("use . to select the current directory")
        );
        let r = Refusal::invalid_root(RootError::NotFound, OsStr::new("/w/\u{1b}[2Jx"));
        assert_eq!(r.error.reason, Some("not-found"));
        assert_eq!(r.error.root.as_deref(), Some("/w/\u{1b}[2Jx"));
        assert_eq!(r.error.message, "root does not exist: /w/\u{1b}[2Jx");
        assert_eq!(r.error.hint, None);
        // On the wire the escape is escaped: a terminal shows it, a reader gets it back.
        let mut out = Vec::new();
        r.write_to(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains('\u{1b}'), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["error"]["root"], "/w/\u{1b}[2Jx");
        assert_eq!(back["schemaVersion"], SCHEMA_VERSION);
        assert_eq!(back["tool"]["name"], "mcpscope");
    }

    #[test]
    fn a_usage_refusal_keeps_clap_s_text_without_its_prefix() {
        let r = Refusal::usage("error: unexpected argument '--x' found\n\nUsage: mcpscope\n");
        assert_eq!(r.error.code, "usage");
        assert_eq!(r.error.reason, None);
        assert_eq!(
            r.error.message,
            "unexpected argument '--x' found\n\nUsage: mcpscope"
        );
    }
}
