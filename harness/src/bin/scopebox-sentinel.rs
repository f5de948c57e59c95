//! scopebox-sentinel.
fn main() {}
