//! `scopebox`: the evidence harness's command line. Parses, calls `run`, maps outcomes to exit codes.
fn main() {}
