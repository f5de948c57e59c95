//! scopebox-runner.
fn main() {}
