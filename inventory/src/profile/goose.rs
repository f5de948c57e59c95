//! The goose profile (`--client goose`): one user file,
//! `~/.config/goose/config.yaml` (Linux, macOS) or
//! `%APPDATA%\Block\goose\config\config.yaml` (Windows; read below the home
//! directory as `AppData/Roaming/Block/goose/config`). Extensions (goose's MCP
//! servers) under `extensions`, keyed by id; `enabled: false` switches one
//! off. There is no project file. YAML, through the bounded reader.
//!
//! Entries by `type`: `stdio` (`cmd`, `args`, `envs`, `env_keys`), `sse` and
//! `streamable_http` (`uri`, `headers`), `builtin`/`platform`/`frontend`
//! (goose's own code: no configured command, launch `unknown`) and
//! `inline_python` (code run by an interpreter).
//!
//! This profile must never run anything, read the keyring or `secrets.yaml`,
//! or report a field's value.

use crate::host::Os;
use crate::json::Value;
use crate::model::{Launch, Shape, Transport};
use crate::profile::grammar::{leading_args, switch, Switch};
use crate::profile::layers::{self, Checked, Container, Layer, Precedence, Syntax};
use crate::profile::{coverage, Candidate, Context, Inventory, Profile, Shadowing};
use crate::shape::{is_string, map_value, string_array_value};

pub const USER: &str = "user";

const FIELDS: [&str; 15] = [
    "args",
    "available_tools",
    "bundled",
    "cmd",
    "code",
    "description",
    "display_name",
    "enabled",
    "env_keys",
    "envs",
    "headers",
    "name",
    "timeout",
    "type",
    "uri",
];

pub const NOT_EXAMINED: [&str; 7] = [
    "recipes",
    "goose-env-overrides",
    "keyring-secrets",
    "session-extensions",
    "goosehints",
    "xdg-config-home-override",
    "instructions",
];

pub fn config_path(os: Os) -> &'static str {
    match os {
        Os::Windows => "AppData/Roaming/Block/goose/config/config.yaml",
        Os::Linux | Os::MacOs => ".config/goose/config.yaml",
    }
}

pub struct Goose;

/// An `extensions` entry.
pub fn entry(e: &Value) -> Checked {
    let Some(obj) = e.as_object() else {
        return Checked::new(Shape::not_object("entry-not-object"), None, &[], None);
    };
    let mut problems = Vec::new();
    let ty = obj.get("type");
    let transport = match ty.and_then(Value::as_str) {
        Some("stdio") | Some("inline_python") => Transport::Stdio,
        Some("sse") => Transport::Sse,
        Some("streamable_http") => Transport::Http,
        Some("builtin") | Some("platform") | Some("frontend") => Transport::Unknown,
        Some(_) => {
            problems.push("unsupported-type");
            Transport::Unknown
        }
        None if ty.is_some() => {
            problems.push("type-not-string");
            Transport::Unknown
        }
        None => {
            problems.push("missing-type");
            Transport::Unknown
        }
    };
    let inline = ty.and_then(Value::as_str) == Some("inline_python");
    match transport {
        Transport::Stdio if !inline => match obj.get("cmd") {
            None => problems.push("missing-command"),
            Some(Value::String(s)) if !s.is_empty() => {}
            Some(_) => problems.push("invalid-cmd"),
        },
        Transport::Sse | Transport::Http => match obj.get("uri") {
            None => problems.push("missing-url"),
            Some(Value::String(s)) if !s.is_empty() => {}
            Some(_) => problems.push("invalid-uri"),
        },
        _ => {}
    }
    let (arg_count, _) = string_array_value(
        obj.get("args"),
        "invalid-args",
        "invalid-args",
        &mut problems,
    );
    let env_count = map_value(
        obj.get("envs"),
        "invalid-envs",
        "invalid-envs",
        is_string,
        &mut problems,
    );
    string_array_value(
        obj.get("env_keys"),
        "invalid-env-keys",
        "invalid-env-keys",
        &mut problems,
    );
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
    let enabled = switch(obj, Switch::Enabled("enabled"));
    if inline {
        // The code runs under goose's Python runner: an interpreter script,
        // whose identity nothing here can vouch for.
        let valid = shape.valid;
        let mut c = Checked::new(shape, None, &[], enabled);
        c.launch = Launch::InterpreterScript;
        c.guard_form = crate::classify::guard_form(Launch::InterpreterScript, valid);
        return c;
    }
    let args = leading_args(obj.get("args"));
    Checked::new(
        shape,
        obj.get("cmd").and_then(Value::as_str),
        &args,
        enabled,
    )
}

impl Profile for Goose {
    fn id(&self) -> &'static str {
        "goose"
    }

    fn title(&self) -> &'static str {
        "goose"
    }

    fn candidates(&self, os: Os) -> Vec<Candidate> {
        vec![Candidate::new(
            USER,
            format!("~/{}", config_path(os)),
            "yaml",
            "extensions",
        )]
    }

    fn shadowing(&self) -> Shadowing {
        Shadowing::Duplicates
    }

    fn inventory(&self, ctx: &Context) -> Inventory {
        let c = Container::Map(&["extensions"]);
        let layers = [Layer::home(
            ctx,
            USER,
            config_path(ctx.host.os),
            Syntax::Yaml,
            c,
            0,
        )];
        Inventory {
            coverage: coverage(&NOT_EXAMINED),
            ..layers::inventory(&layers, entry, Precedence::Duplicates)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(yaml: &str) -> Checked {
        entry(&crate::profile::dsh::yaml::parse_block(yaml).unwrap())
    }

    #[test]
    fn goose_extension_types() {
        let got = c("type: stdio\ncmd: uvx\nargs: [pkg]\nenvs: {A: b}\nenabled: true\n");
        assert!(got.shape.valid, "{:?}", got.shape.problems);
        assert_eq!(
            (got.launch, got.shape.env_count),
            (Launch::PackageRunner, 1)
        );
        let remote = c("type: streamable_http\nuri: https://x\nenabled: false\n");
        assert_eq!(
            (remote.launch, remote.enabled),
            (Launch::Remote, Some(false))
        );
        let builtin = c("type: builtin\nname: developer\n");
        assert!(builtin.shape.valid);
        assert_eq!(builtin.launch, Launch::Unknown);
        assert_eq!(
            c("type: inline_python\ncode: x\n").launch,
            Launch::InterpreterScript
        );
        assert_eq!(c("type: stdio\n").shape.problems, ["missing-command"]);
        assert_eq!(c("cmd: x\n").shape.problems, ["missing-type"]);
    }
}
