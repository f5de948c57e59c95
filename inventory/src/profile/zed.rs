//! The Zed profile (`--client zed`): `<root>/.zed/settings.json` (project)
//! and the user settings file, `~/.config/zed/settings.json` on Linux and
//! macOS, `%APPDATA%\Zed\settings.json` on Windows (read below the home
//! directory as `AppData/Roaming/Zed`). Servers under `context_servers`;
//! project settings override user settings, entry by entry
//! (`possibleShadowedBy`). Zed's settings parser is lenient JSON: comments and
//! trailing commas.
//!
//! Entries: a custom server (`command` string with `args` and `env`, or the
//! older `command: {path, args, env}` object), a remote one (`url`,
//! `headers`), or one an extension provides (`source: "extension"`, started
//! by extension code: launch `unknown`). `enabled: false` switches one off.
//!
//! This profile must never run anything, load an extension, or report a
//! field's value.

use crate::host::Os;
use crate::json::{Object, Value};
use crate::model::{Shape, Transport};
use crate::profile::grammar::{leading_args, switch, Switch};
use crate::profile::layers::{self, Checked, Container, Layer, Precedence, Syntax};
use crate::profile::{coverage, Candidate, Context, Inventory, Profile, Shadowing};
use crate::shape::{is_string, map_value, string_array_value};

pub const PROJECT: &str = "project";
pub const USER: &str = "user";

const SHADOW_ORDER: [&str; 2] = [PROJECT, USER];

const FIELDS: [&str; 8] = [
    "args", "command", "enabled", "env", "headers", "settings", "source", "url",
];

pub const NOT_EXAMINED: [&str; 7] = [
    "extension-provided-commands",
    "settings-profiles",
    "release-channel-overrides",
    "remote-projects",
    "external-agents",
    "rules",
    "instructions",
];

/// The user settings file below the home directory on `os`.
pub fn user_path(os: Os) -> &'static str {
    match os {
        Os::Windows => "AppData/Roaming/Zed/settings.json",
        Os::Linux | Os::MacOs => ".config/zed/settings.json",
    }
}

pub struct Zed;

/// A `context_servers` entry.
pub fn entry(e: &Value) -> Checked {
    let Some(obj) = e.as_object() else {
        return Checked::new(Shape::not_object("entry-not-object"), None, &[], None);
    };
    let mut problems = Vec::new();
    let extension = matches!(obj.get("source"), Some(Value::String(s)) if s == "extension");
    // The older form nests the command: {"command": {"path", "args", "env"}}.
    let nested: Option<&Object> = obj.get("command").and_then(Value::as_object);
    let (command, args, env) = match nested {
        Some(n) => (n.get("path"), n.get("args"), n.get("env")),
        None => (obj.get("command"), obj.get("args"), obj.get("env")),
    };
    let transport = if command.is_some() {
        Transport::Stdio
    } else if obj.get("url").is_some() {
        Transport::Http
    } else if extension {
        Transport::Unknown
    } else {
        problems.push("missing-command");
        Transport::Unknown
    };
    match command {
        Some(Value::String(s)) if !s.is_empty() => {}
        Some(_) => problems.push("invalid-command"),
        None => {}
    }
    if let Some(u) = obj.get("url") {
        if !matches!(u, Value::String(s) if !s.is_empty()) {
            problems.push("invalid-url");
        }
    }
    let (arg_count, _) = string_array_value(args, "invalid-args", "invalid-args", &mut problems);
    let env_count = map_value(env, "invalid-env", "invalid-env", is_string, &mut problems);
    let header_count = map_value(
        obj.get("headers"),
        "invalid-headers",
        "invalid-headers",
        is_string,
        &mut problems,
    );
    if obj
        .get("enabled")
        .is_some_and(|v| !matches!(v, Value::Bool(_)))
    {
        problems.push("invalid-enabled");
    }
    if obj
        .get("source")
        .is_some_and(|v| !matches!(v, Value::String(s) if s == "custom" || s == "extension"))
    {
        problems.push("invalid-source");
    }
    let fields = FIELDS
        .iter()
        .copied()
        .filter(|f| obj.get(f).is_some())
        .collect();
    let shape = Shape {
        arg_count,
        env_count,
        header_count,
        ..Shape::new(problems, transport, fields)
    };
    let args = leading_args(args);
    Checked::new(
        shape,
        command.and_then(Value::as_str),
        &args,
        switch(obj, Switch::Enabled("enabled")),
    )
}

impl Profile for Zed {
    fn id(&self) -> &'static str {
        "zed"
    }

    fn title(&self) -> &'static str {
        "Zed"
    }

    fn candidates(&self, os: Os) -> Vec<Candidate> {
        vec![
            Candidate::new(
                PROJECT,
                "<root>/.zed/settings.json",
                "jsonc",
                "context_servers",
            ),
            Candidate::new(
                USER,
                format!("~/{}", user_path(os)),
                "jsonc",
                "context_servers",
            ),
        ]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::ScopeOrder(&SHADOW_ORDER)
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        let c = Container::Map(&["context_servers"]);
        let layers = [
            Layer::root(ctx, PROJECT, ".zed/settings.json", Syntax::JSONC, c, 0),
            Layer::home(ctx, USER, user_path(ctx.host.os), Syntax::JSONC, c, 1),
        ];
        Inventory {
            coverage: coverage(&NOT_EXAMINED),
            ..layers::inventory(&layers, entry, Precedence::Rank)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Options};
    use crate::model::Launch;

    fn c(s: &str) -> Checked {
        entry(&parse(s.as_bytes(), &Options::JSONC).unwrap())
    }

    #[test]
    fn both_command_forms_and_remote_and_extension_entries() {
        let flat = c(r#"{"command":"npx","args":["-y","p"],"env":{"A":"b"}}"#);
        let nested =
            c(r#"{"source":"custom","command":{"path":"npx","args":["-y","p"],"env":{"A":"b"}}}"#);
        for got in [&flat, &nested] {
            assert!(got.shape.valid, "{:?}", got.shape.problems);
            assert_eq!((got.shape.arg_count, got.shape.env_count), (2, 1));
            assert_eq!(got.launch, Launch::PackageRunner);
        }
        let remote = c(r#"{"url":"u","headers":{"h":"v"}}"#);
        assert_eq!(
            (remote.launch, remote.shape.header_count),
            (Launch::Remote, 1)
        );
        let ext = c(r#"{"source":"extension","enabled":false,"settings":{}}"#);
        assert!(ext.shape.valid);
        assert_eq!((ext.launch, ext.enabled), (Launch::Unknown, Some(false)));
        assert_eq!(c("{}").shape.problems, ["missing-command"]);
    }
}
