//! scopebox-verify.
fn main() {}
