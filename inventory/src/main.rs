//! `mcpscope` command line.
fn main() {}
