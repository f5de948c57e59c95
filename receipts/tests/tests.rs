//! Integration tests of scopebox-receipts, one binary (ripgrep style). Modules:
//!
//! - `synthetic`: a consistent synthetic bundle of N cases, the specimen that must verify;
//! - `util`: per-test temp dirs, the synthetic specimen, running the `scopebox-verify` binary;
//! - `verify_cli`: the binary's check list, `--json` document and documented exit codes;
//! - `bundle_safety`: symlinks, FIFOs, garbage and missing receipts never panic or pass;
//! - `selftest`: every mutation class is rejected, and digest-consistent ones by semantic checks;
//! - `signing`: keygen, sign, verify with the right and wrong key, envelope edits;
//! - `interop`: an independent DSSE/ed25519 implementation (Python `cryptography`) both ways;
//! - `reference`: the committed bundle from a real run verifies and every mutation is rejected.

mod bundle_archive;
mod bundle_safety;
mod interop;
mod reference;
mod selftest;
mod signing;
pub mod synthetic;
mod util;
mod verify_cli;
