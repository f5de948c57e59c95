//! `mcpscope` command line: parse, call [`mcpscope::run`], print, exit.
//! Exit codes are decided only by [`mcpscope::Status::exit_code`].
//! This file must never read configuration itself.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use clap::Parser;
use mcpscope::cli::Cli;
use mcpscope::{Host, Status};

fn main() -> ExitCode {
    // The plain lists skip clap (see `Cli::parse_plain`); clap parses the rest.
    let parsed = match Cli::parse_plain(std::env::args_os().skip(1)) {
        Some(cli) => Ok(cli),
        None => Cli::try_parse(),
    };
    let cli = match parsed.and_then(Cli::validated) {
        Ok(cli) => cli,
        Err(e) => {
            // --help/--version print to stdout and succeed; everything else is
            // a usage error, reported before any file is read. clap echoes the
            // offending argument: every line is escaped for the terminal.
            let text = e.render().to_string();
            let status = if e.use_stderr() {
                let _ = std::io::stderr()
                    .lock()
                    .write_all(mcpscope::cli::escape_lines(&text).as_bytes());
                Status::Usage
            } else {
                let _ = std::io::stdout().lock().write_all(text.as_bytes());
                Status::Complete
            };
            return ExitCode::from(status.exit_code());
        }
    };
    let mut stdout = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let (status, stderr) = mcpscope::run_to(&cli.into_request(), &Host::from_env(), &mut stdout);
    // A closed pipe is not worth a panic; the exit code still tells.
    let _ = stdout.flush();
    let _ = std::io::stderr().lock().write_all(stderr.as_bytes());
    ExitCode::from(status.exit_code())
}
