//! Command-line arguments (clap derive). Parsing must never touch the
//! filesystem: an unknown flag or client is a usage error before anything
//! is read.

use std::ffi::OsString;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Parser;

use crate::gate::Condition;
use crate::profile::{Client, ALL, REGISTRY};
use crate::{Format, Request};

/// Read-only inventory of the MCP servers and agent instruction files
/// configured for one project root. Never runs, writes or prints a command,
/// argument, URL, env/header value or instruction body.
#[derive(Debug, Parser)]
#[command(name = "mcpscope", version)]
pub struct Cli {
    /// Project root to inventory (`.` for the current directory)
    pub root: OsString,

    /// Print the version-1 JSON document (and nothing else) on stdout
    #[arg(long)]
    pub json: bool,

    /// Client profile
    #[arg(long, value_parser = client_parser(), default_value = "claude-code", value_name = "CLIENT")]
    pub client: Client,

    /// dsh: also read ~/.dsh/profiles/NAME/mcp.json (the dsh-profile-user layer)
    #[arg(long, value_name = "NAME", value_parser = dsh_profile_name)]
    pub dsh_profile: Option<String>,

    /// Exit non-zero when a condition holds (comma-separated or repeated):
    /// incomplete (exit 1; the default), invalid-entry, any-server,
    /// project-server (exit 3), none
    #[arg(long, value_name = "CONDITION", value_delimiter = ',', value_parser = fail_on_parser())]
    pub fail_on: Vec<Condition>,
}

/// `--fail-on` values.
fn fail_on_parser() -> impl TypedValueParser<Value = Condition> {
    PossibleValuesParser::new(Condition::ALL.map(|c| PossibleValue::new(c.id())))
        .map(|id| Condition::parse(&id).expect("a listed condition"))
}

/// `text` with every line escaped for a terminal (the line breaks kept): how
/// a usage error that echoes an argument is printed.
pub fn escape_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        out.push_str(&crate::render_human::sanitize(body));
        out.push_str(newline);
    }
    out
}

/// `--client` values: every registered profile id (and its aliases), in
/// registry order. Anything else is a usage error before anything is read.
fn client_parser() -> impl TypedValueParser<Value = Client> {
    let mut values: Vec<PossibleValue> = REGISTRY
        .iter()
        .map(|p| PossibleValue::new(p.id()).aliases(p.aliases().iter().copied()))
        .collect();
    values.push(PossibleValue::new(ALL).help("every client, one document"));
    PossibleValuesParser::new(values)
        .map(|id| Client::parse(&id).expect("a registered id or alias"))
}

/// `--dsh-profile` values: a plain directory name, refused (exit 2) before
/// anything is read.
fn dsh_profile_name(s: &str) -> Result<String, String> {
    if crate::profile::dsh::valid_profile_name(s) {
        Ok(s.to_owned())
    } else {
        Err(
            "expected a profile name: 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit"
                .into(),
        )
    }
}

impl Cli {
    /// Checks between flags that clap cannot express: `--dsh-profile` needs
    /// `--client dsh`. A usage error, like any parse error.
    pub fn validated(self) -> Result<Cli, clap::Error> {
        if self.dsh_profile.is_some() && !matches!(self.client.id(), "dsh" | ALL) {
            use clap::CommandFactory;
            return Err(Cli::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                "--dsh-profile is only valid with --client dsh or --client all",
            ));
        }
        Ok(self)
    }

    pub fn into_request(self) -> Request {
        Request {
            fail_on: (!self.fail_on.is_empty()).then_some(self.fail_on),
            dsh_profile: self.dsh_profile,
            root: self.root,
            client: self.client,
            format: if self.json {
                Format::Json
            } else {
                Format::Human
            },
        }
    }
}
