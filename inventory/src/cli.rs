//! Command-line arguments (clap derive). Parsing must never touch the
//! filesystem: an unknown flag or client is a usage error before anything
//! is read.

use std::ffi::OsString;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Parser;

use crate::profile::{Client, REGISTRY};
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
}

/// `--client` values: every registered profile id (and its aliases), in
/// registry order. Anything else is a usage error before anything is read.
fn client_parser() -> impl TypedValueParser<Value = Client> {
    let values: Vec<PossibleValue> = REGISTRY
        .iter()
        .map(|p| PossibleValue::new(p.id()).aliases(p.aliases().iter().copied()))
        .collect();
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
        if self.dsh_profile.is_some() && self.client.id() != "dsh" {
            use clap::CommandFactory;
            return Err(Cli::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                "--dsh-profile is only valid with --client dsh",
            ));
        }
        Ok(self)
    }

    pub fn into_request(self) -> Request {
        Request {
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
