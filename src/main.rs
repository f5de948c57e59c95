//! `scopebox`: the evidence harness's command line. It parses, calls `cli::run`, and lets
//! `exit` turn the outcome into the documented exit code. It must never hold logic of its own.

use std::process::ExitCode;

fn main() -> ExitCode {
    match scopebox::cli::parse() {
        Ok(cli) => {
            let json = cli.wants_json();
            scopebox::exit::finish(scopebox::cli::run(cli), json)
        }
        Err(code) => code,
    }
}
