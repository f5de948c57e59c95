//! Snapshots of what the `scopebox` binary prints where no engine is involved (insta, reviewed
//! like code): its help, `scopebox run --help`, and a usage error as text and as `--json`. The
//! help is the CLI's contract with its users; a change to a flag, a default or an exit code
//! shows up as a diff to review.

use crate::support::{scopebox, Outcome};

/// The exit code and both streams.
fn transcript(out: &Outcome) -> String {
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        out.code, out.stdout, out.stderr
    )
}

pub fn the_help() {
    insta::assert_snapshot!(transcript(&scopebox(&["--help"], &[])));
}

pub fn the_run_help() {
    insta::assert_snapshot!(transcript(&scopebox(&["run", "--help"], &[])));
}

pub fn an_unknown_platform() {
    insta::assert_snapshot!(transcript(&scopebox(
        &["run", "--platform", "linux/mips"],
        &[]
    )));
}

pub fn an_unknown_platform_as_json() {
    insta::assert_snapshot!(transcript(&scopebox(
        &["run", "--platform", "linux/mips", "--json"],
        &[]
    )));
}
