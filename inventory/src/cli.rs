//! Command-line arguments (clap derive). Parsing must never touch the
//! filesystem: an unknown flag or client is a usage error before anything
//! is read.

use std::ffi::OsString;

use clap::Parser;

use crate::profile::Client;
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
    #[arg(long, value_enum, default_value = "claude-code", value_name = "CLIENT")]
    pub client: Client,
}

impl Cli {
    pub fn into_request(self) -> Request {
        Request {
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
