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
                // `--json` answers here too: the refusal's document on stdout.
                if mcpscope::refusal::asks_for_json(std::env::args_os().skip(1)) {
                    let _ = mcpscope::refusal::Refusal::usage(&text)
                        .write_to(&mut std::io::stdout().lock());
                }
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
    let mut stdout = BufWriter::with_capacity(1 << 16, Watched::new(std::io::stdout().lock()));
    let (status, mut stderr) =
        mcpscope::run_to(&cli.into_request(), &Host::from_env(), &mut stdout);
    let _ = stdout.flush();
    let lost = stdout.get_ref().lost();
    let status = match lost {
        Some(e) => {
            stderr.push_str(&format!(
                "mcpscope: error: the report could not be written to stdout ({})\n",
                mcpscope::cli::escape_lines(&e.to_string()).trim_end()
            ));
            Status::OutputLost
        }
        None => status,
    };
    let _ = std::io::stderr().lock().write_all(stderr.as_bytes());
    ExitCode::from(status.exit_code())
}

/// stdout, remembering its first write error. A closed pipe (the reader went
/// away: `| head`) is not a failure and ends the writing quietly; any other
/// error (a full disk) means the report was lost, which the exit code says.
struct Watched<W> {
    inner: W,
    failed: Option<std::io::Error>,
}

impl<W: Write> Watched<W> {
    fn new(inner: W) -> Watched<W> {
        Watched {
            inner,
            failed: None,
        }
    }

    /// The error that lost the report, if one did (never a closed pipe).
    fn lost(&self) -> Option<&std::io::Error> {
        self.failed
            .as_ref()
            .filter(|e| e.kind() != std::io::ErrorKind::BrokenPipe)
    }

    fn check(&mut self, result: std::io::Result<usize>) -> std::io::Result<usize> {
        if let Err(e) = &result {
            if self.failed.is_none() {
                self.failed = Some(std::io::Error::new(e.kind(), e.to_string()));
            }
        }
        result
    }
}

impl<W: Write> Write for Watched<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Once failed, nothing more is written (nor computed into the pipe).
        if let Some(e) = &self.failed {
            return Err(std::io::Error::new(e.kind(), "stdout failed earlier"));
        }
        let result = self.inner.write(buf);
        self.check(result)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let result = self.inner.flush().map(|()| 0);
        self.check(result).map(|_| ())
    }
}
